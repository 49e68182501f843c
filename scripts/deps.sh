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
  # SSSD itself as a client (test_sssd.sh): its NSS and PAM modules are
  # queried in a mount namespace of the test's own; see the end of this
  # script for what their installation must not change on the host
  sssd-ldap libnss-sss libpam-sss pamtester
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
# Installing libnss-sss adds `sss` to the host's /etc/nsswitch.conf (its
# postinst does so on the first install only) and libpam-sss/libpam-pwquality
# turn on their PAM profiles in /etc/pam.d/common-*: the tests need neither
# (test_sssd.sh runs sssd and its queries in a mount namespace with its own
# files), the host keeps its own name service and logins.
declare -A had_pkg=()
for p in libpam-sss libpam-pwquality; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && had_pkg[$p]=1
done
nss_saved=
for p in "${missing[@]}"; do
  if [[ $p == libnss-sss && -f /etc/nsswitch.conf ]]; then
    nss_saved=$(mktemp /etc/nsswitch.conf.deps.XXXXXX)
    cp -p /etc/nsswitch.conf "$nss_saved"
  fi
done
trap 'if [[ $policy_added == 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
      if [[ -n $nss_saved ]]; then cp -p "$nss_saved" /etc/nsswitch.conf; rm -f "$nss_saved"; fi' EXIT
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# --disable (not --remove): the profiles stay known ("seen"), so a later
# pam-auth-update run by another package does not turn them on again. Only
# for a profile whose package this run installed: a site that had it keeps
# its choice.
if command -v pam-auth-update >/dev/null; then
  profiles=()
  for p in sss:libpam-sss pwquality:libpam-pwquality; do
    if [[ -n ${had_pkg[${p#*:}]:-} ]]; then continue; fi
    [[ -f /usr/share/pam-configs/${p%%:*} ]] && profiles+=("${p%%:*}")
  done
  if ((${#profiles[@]})); then pam-auth-update --package --disable "${profiles[@]}"; fi
fi
