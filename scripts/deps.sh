#!/usr/bin/env bash
# Install every build and test dependency of ldapfe on Debian 12 (as root).
# Idempotent: when everything is present it only checks and returns.
# Usage: scripts/deps.sh [--bench]   (--bench adds ldclt from 389-ds-base)
set -euo pipefail

pkgs=(
  # build
  build-essential meson ninja-build pkg-config clang libclang-rt-14-dev
  libdpdk-dev dpdk liblmdb-dev lmdb-utils libssl-dev libnuma-dev
  libldap2-dev libargon2-dev libcrypt-dev libmicrohttpd-dev
  # real clients and peers the tests use
  ldap-utils slapd python3 python3-ldap3 python3-cryptography argon2 whois
  prometheus  # the metrics test scrapes with a real Prometheus server (and promtool)
  openssl curl systemd man-db  # TLS test certificates, /metrics GETs, unit and man page checks
  dpkg-dev debhelper  # the package test (dpkg-buildpackage, dh with meson)
  bsdutils  # script(1): a pty for the progress test of ldapfectl import
  # namespaces, veth, offload switches
  iproute2 ethtool procps iputils-ping arping tcpdump
  # profiling
  valgrind
)
if [[ "${1:-}" == "--bench" ]]; then
  pkgs+=(389-ds-base python3-matplotlib)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [[ $EUID -ne 0 ]]; then
  echo "deps.sh: missing packages (${missing[*]}); run as root" >&2
  exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# slapd's postinst must not start a system slapd on the host: tests start
# their own in namespaces.
policy_added=0
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  policy_added=1
fi
trap 'if [[ $policy_added == 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi' EXIT
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
