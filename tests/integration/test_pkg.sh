#!/usr/bin/env bash
# The Debian package: dpkg-buildpackage -us -uc -b in a copy of the tree
# (build directories left in the tree are not copied and not needed), then
# dpkg -i: the binaries, the unit, the man pages and the config (a conffile)
# in place, `ldapfe --version` and `ldapfectl --version` run from /usr/bin,
# the service users exist (ldapfe, ldapfe-sync), both units and the drop-ins
# are installed but not enabled; the store is owned as designed after a
# simulated start of both units (systemd is not PID 1 in CI: each unit's
# User=/Group=/SupplementaryGroups=/UMask= applied with setpriv): ldapfe-sync
# creates it (ldapfe-sync:ldapfe, data 0640, lock 0660), the daemon's
# identity reads it through the group, a reinstall (what a restart of the
# daemon could do with StateDirectory=) changes no owner, and a store of the
# old layout (root's) is handed to ldapfe-sync by the upgrade; dpkg -r
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
	/usr/lib/systemd/system/ldapfe-sync.service /usr/share/ldapfe/systemd/af_xdp.conf \
	/usr/share/ldapfe/systemd/pci.conf /usr/share/ldapfe/systemd/tap.conf \
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
getent passwd ldapfe-sync >/dev/null || fail "service user ldapfe-sync not created"
[[ $(id -u ldapfe) != "$(id -u ldapfe-sync)" ]] || fail "the daemon and the writer share a uid"
id -nG ldapfe | grep -qw ldapfe-sync && fail "ldapfe is in group ldapfe-sync (the sync password's)"
[[ $(stat -c '%U:%G %a' /var/lib/ldapfe) == "ldapfe-sync:ldapfe 750" ]] ||
	fail "/var/lib/ldapfe: $(stat -c '%U:%G %a' /var/lib/ldapfe)"
for u in ldapfe ldapfe-sync; do
	[[ -e /etc/systemd/system/multi-user.target.wants/$u.service ]] && fail "$u.service was enabled"
done
log "ok: dpkg -i: files, --version, users, units not enabled"

# Simulated starts: each process with its unit's identity.
unitval() { sed -n "s/^$2=//p" "/usr/lib/systemd/system/$1" | tail -1; }
[[ $(unitval ldapfe-sync.service User) == ldapfe-sync && $(unitval ldapfe-sync.service Group) == ldapfe ]] ||
	fail "ldapfe-sync.service identity: $(unitval ldapfe-sync.service User):$(unitval ldapfe-sync.service Group)"
[[ -z $(unitval ldapfe.service StateDirectory) && -z $(unitval ldapfe-sync.service StateDirectory) ]] ||
	fail "a unit has StateDirectory= (systemd would chown the store at each start)"
as_sync() {
	setpriv --reuid=ldapfe-sync --regid=ldapfe \
		--groups="$(getent group "$(unitval ldapfe-sync.service SupplementaryGroups)" | cut -d: -f3)" \
		-- bash -c "umask $(unitval ldapfe-sync.service UMask); \"\$@\"" _ "$@"
}
# ldapfe.service: root, its SupplementaryGroups=, no CAP_DAC_OVERRIDE (the
# unit's bounding set lacks it), then [daemon] user from the config.
as_daemon_root() {
	setpriv --bounding-set=-all --inh-caps=-all \
		--groups="$(getent group "$(unitval ldapfe.service SupplementaryGroups)" | cut -d: -f3)" -- "$@"
}
st=/var/lib/ldapfe/store
as_sync /usr/bin/ldapfectl --store $st init --suffix dc=example,dc=com >/dev/null || fail "ldapfe-sync cannot create the store"
echo pw | as_sync /usr/bin/ldapfectl --store $st user add uid=a,dc=example,dc=com --password-stdin >/dev/null ||
	fail "ldapfe-sync cannot write the store"
check_store() {
	[[ $(stat -c '%U:%G %a' $st) == "ldapfe-sync:ldapfe 750" ]] || fail "$1: $st: $(stat -c '%U:%G %a' $st)"
	[[ $(stat -c '%U:%G %a' $st/data.mdb) == "ldapfe-sync:ldapfe 640" ]] || fail "$1: data.mdb: $(stat -c '%U:%G %a' $st/data.mdb)"
	[[ $(stat -c '%U:%G %a' $st/lock.mdb) == "ldapfe-sync:ldapfe 660" ]] || fail "$1: lock.mdb: $(stat -c '%U:%G %a' $st/lock.mdb)"
	as_daemon_root /usr/bin/ldapfectl --store $st show uid=a,dc=example,dc=com >/dev/null ||
		fail "$1: the daemon's root (group only) cannot read the store"
	setpriv --reuid=ldapfe --regid=ldapfe --clear-groups /usr/bin/ldapfectl --store $st show \
		uid=a,dc=example,dc=com >/dev/null || fail "$1: user ldapfe cannot read the store"
	echo x | setpriv --reuid=ldapfe --regid=ldapfe --clear-groups /usr/bin/ldapfectl --store $st \
		passwd uid=a,dc=example,dc=com >/dev/null 2>&1 && fail "$1: user ldapfe could write the store"
	return 0
}
check_store "sync start"
# Reinstall: the postinst runs again; nothing changes owner.
DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" > "$work/install2.log" 2>&1 ||
	{ cat "$work/install2.log" >&2; fail "dpkg -i (again)"; }
check_store "reinstall"
# A store of the old layout (the daemon ran as root, StateDirectory=):
# the upgrade hands it to ldapfe-sync.
chown -R root:root /var/lib/ldapfe
chmod 0644 $st/lock.mdb
DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" > "$work/install3.log" 2>&1 ||
	{ cat "$work/install3.log" >&2; fail "dpkg -i (upgrade of a root-owned store)"; }
check_store "upgrade of a root-owned store"
rm -rf $st
log "ok: store owned by ldapfe-sync, read by the daemon through group ldapfe, kept across reinstall"

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
