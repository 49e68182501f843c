#!/usr/bin/env bash
# meson install into a scratch DESTDIR: the three binaries, the config under
# <sysconfdir>/ldapfe, the systemd unit (systemd-analyze verify passes on it,
# its ExecStart/ExecReload pointed at the installed binaries) and the man
# pages (man renders each without warnings).
# Usage: test_install.sh BUILD_DIR
set -euo pipefail
build=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
dest=$(mktemp -d /tmp/lfe-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null 2>&1 || \
	meson install -C "$build" --destdir "$dest" --no-rebuild
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
sysconf=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="sysconfdir"][0])')
[[ $sysconf == /* ]] || sysconf=$prefix/$sysconf
for b in ldapfe ldapfectl ldapfe-gen; do
	[[ -x $dest$prefix/bin/$b ]] || fail "$b not installed"
done
[[ -f $dest$sysconf/ldapfe/ldapfe.conf ]] || fail "ldapfe.conf not installed under $sysconf/ldapfe"
unit=$dest$prefix/lib/systemd/system/ldapfe.service
[[ -f $unit ]] || fail "ldapfe.service not installed"
grep -q "^ExecReload=$prefix/bin/ldapfectl --prefix ldapfe reload$" "$unit" || fail "ExecReload: $(grep Exec "$unit")"
grep -q -- "--config $sysconf/ldapfe/ldapfe.conf" "$unit" || fail "ExecStart config path"
echo "ok: installed files"
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$dest/verify"
	sed "s|$prefix/bin/|$dest$prefix/bin/|g" "$unit" > "$dest/verify/ldapfe.service"
	# Documentation= man pages are looked up: point man at the installed ones.
	out=$(MANPATH=$dest$prefix/share/man systemd-analyze verify "$dest/verify/ldapfe.service" 2>&1) || fail "systemd-analyze verify: $out"
	grep -i "ldapfe.service" <<<"$out" && fail "systemd-analyze verify warns: $out"
	echo "ok: systemd-analyze verify"
fi
for m in man8/ldapfe.8 man8/ldapfectl.8 man1/ldapfe-gen.1 man5/ldapfe.conf.5; do
	f=$(ls "$dest$prefix"/share/man/$m* 2>/dev/null | head -1)
	[[ -n $f ]] || fail "man page $m not installed"
	if command -v man >/dev/null; then
		w=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null || true)
		[[ -z $w ]] || fail "man $m warns: $w"
	fi
done
echo "ok: man pages"
