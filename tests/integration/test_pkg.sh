#!/usr/bin/env bash
# The Debian package: dpkg-buildpackage -us -uc -b in a copy of the tree
# (build directories left in the tree are not copied and not needed), then
# dpkg -i: the binaries, the unit, the man pages and the config (a conffile)
# in place, `ldapfe --version` and `ldapfectl --version` run from /usr/bin,
# the service user exists, the unit is installed but not enabled; dpkg -r
# removes the programs and keeps the conffile, dpkg -P removes that too.
# Usage: test_pkg.sh SOURCE_ROOT VERSION   (root; about 3 minutes: one build)
set -euo pipefail
src=$1 version=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
log() { echo "[$(date +%T)] $*"; }
[[ $EUID -eq 0 ]] || { echo "SKIP: needs root (dpkg -i)"; exit 77; }
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
	fail "dpkg-dev/debhelper missing (scripts/deps.sh installs them)"
if dpkg-query -W -f='${Status}' ldapfe 2>/dev/null | grep -q "ok installed"; then
	echo "SKIP: a package named ldapfe is installed on this machine; not touching it"
	exit 77
fi
# The package's version follows the project's (debian/changelog, native).
chv=$(cd "$src" && dpkg-parsechangelog -S Version)
[[ $chv == "$version" ]] || fail "debian/changelog says $chv, meson.build $version"
work=$(mktemp -d /tmp/lfe-pkg.XXXXXX)
installed=0
cleanup() {
	((installed)) && dpkg -P ldapfe >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/ldapfe"
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./obj-*' --exclude='./debian/.debhelper' \
	--exclude='./debian/ldapfe' -cf - . | tar -C "$work/ldapfe" -xf -
log "building the package in $work/ldapfe"
(cd "$work/ldapfe" && DEB_BUILD_OPTIONS="nocheck parallel=2" timeout 600 dpkg-buildpackage -us -uc -b) \
	> "$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; fail "dpkg-buildpackage"; }
deb=$work/ldapfe_${version}_amd64.deb
[[ -f $deb ]] || deb=$(ls "$work"/ldapfe_*.deb | grep -v dbgsym | head -1)
[[ -f $deb ]] || fail "no .deb built: $(ls "$work")"
log "built $(basename "$deb")"
dpkg-deb -I "$deb" conffiles | grep -qx "/etc/ldapfe/ldapfe.conf" || fail "ldapfe.conf is not a conffile"
dpkg-deb -f "$deb" Depends | grep -q "librte-eal" || fail "Depends lacks the DPDK libraries: $(dpkg-deb -f "$deb" Depends)"

installed=1
DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" > "$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; fail "dpkg -i"; }
for f in /usr/bin/ldapfe /usr/bin/ldapfectl /usr/bin/ldapfe-gen; do
	[[ -x $f ]] || fail "$f not installed"
done
for f in /etc/ldapfe/ldapfe.conf /usr/lib/systemd/system/ldapfe.service /usr/share/doc/ldapfe/copyright \
	/usr/share/man/man8/ldapfe.8.gz /usr/share/man/man8/ldapfectl.8.gz /usr/share/man/man5/ldapfe.conf.5.gz \
	/usr/share/man/man1/ldapfe-gen.1.gz; do
	[[ -f $f ]] || fail "$f not installed"
done
grep -q "^License: BSD-2-Clause" /usr/share/doc/ldapfe/copyright || fail "copyright: license"
lfe_ver=$(/usr/bin/ldapfe --version)
[[ $lfe_ver == "ldapfe $version" ]] || fail "ldapfe --version: $lfe_ver"
[[ $(/usr/bin/ldapfectl --version) == "ldapfectl $version" ]] || fail "ldapfectl --version"
grep -q "^ExecStart=/usr/bin/ldapfe .*--config /etc/ldapfe/ldapfe.conf" /usr/lib/systemd/system/ldapfe.service ||
	fail "unit ExecStart: $(grep ExecStart /usr/lib/systemd/system/ldapfe.service)"
getent passwd ldapfe >/dev/null || fail "service user ldapfe not created"
[[ $(stat -c %U:%G /var/lib/ldapfe) == root:ldapfe ]] || fail "/var/lib/ldapfe: $(stat -c %U:%G /var/lib/ldapfe)"
[[ -e /etc/systemd/system/multi-user.target.wants/ldapfe.service ]] && fail "the unit was enabled"
log "ok: dpkg -i: files, --version, user, unit not enabled"

# A conffile survives removal; purge takes it.
echo "# local change" >> /etc/ldapfe/ldapfe.conf
dpkg -r ldapfe > "$work/remove.log" 2>&1 || { cat "$work/remove.log" >&2; fail "dpkg -r"; }
[[ -e /usr/bin/ldapfe || -e /usr/bin/ldapfectl || -e /usr/lib/systemd/system/ldapfe.service ]] &&
	fail "files left after dpkg -r"
grep -q "# local change" /etc/ldapfe/ldapfe.conf || fail "dpkg -r removed the changed conffile"
dpkg -P ldapfe > "$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "dpkg -P"; }
installed=0
[[ -e /etc/ldapfe/ldapfe.conf ]] && fail "conffile left after purge"
log "ok: dpkg -r, dpkg -P"
echo "PASS test_pkg"
