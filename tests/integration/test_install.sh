#!/usr/bin/env bash
# meson install into a scratch DESTDIR: the three binaries, the config under
# <sysconfdir>/ldapfe (dropping to [daemon] user = ldapfe), the systemd
# units (systemd-analyze verify passes on both, ExecStart/ExecReload pointed
# at the installed binaries; the hardening directives are there and
# `systemd-analyze security --offline=yes` rates ldapfe.service at most 5.0
# and ldapfe-sync.service at most 3.0; no StateDirectory= in either), the
# per-port-type drop-ins, and the man pages (man renders each without
# warnings).
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
sunit=$dest$prefix/lib/systemd/system/ldapfe-sync.service
[[ -f $sunit ]] || fail "ldapfe-sync.service not installed"
grep -q "^ExecStart=$prefix/bin/ldapfectl --store" "$sunit" || fail "sync ExecStart: $(grep Exec "$sunit")"
grep -q "^EnvironmentFile=$sysconf/ldapfe/sync.env$" "$sunit" || fail "sync EnvironmentFile"
for d in af_xdp pci tap; do
	[[ -f $dest$prefix/share/ldapfe/systemd/$d.conf ]] || fail "drop-in $d.conf not installed"
done
grep -qx "user = ldapfe" "$dest$sysconf/ldapfe/ldapfe.conf" || fail "ldapfe.conf does not set [daemon] user = ldapfe"
echo "ok: installed files"

# The privilege design (docs/ARCHITECTURE.md "Running unprivileged"): each
# directive checked by itself, so a change that keeps the score but drops
# one is seen.
want() {   # want UNIT LINE...
	local u=$1 l; shift
	for l in "$@"; do grep -qxF -- "$l" "$u" || fail "$(basename "$u") lacks: $l"; done
}
common=(NoNewPrivileges=yes ProtectHome=yes PrivateTmp=yes PrivateIPC=yes ProtectClock=yes
	ProtectHostname=yes ProtectKernelTunables=yes ProtectKernelModules=yes ProtectKernelLogs=yes
	ProtectControlGroups=yes RestrictNamespaces=yes RestrictRealtime=yes RestrictSUIDSGID=yes
	LockPersonality=yes MemoryDenyWriteExecute=yes SystemCallArchitectures=native
	SystemCallFilter=@system-service DevicePolicy=closed UMask=0027 AmbientCapabilities=)
want "$unit" "${common[@]}" SupplementaryGroups=ldapfe \
	"CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN CAP_IPC_LOCK CAP_SETUID CAP_SETGID CAP_CHOWN"
want "$sunit" "${common[@]}" User=ldapfe-sync Group=ldapfe CapabilityBoundingSet= ProtectSystem=strict \
	ReadWritePaths=/var/lib/ldapfe PrivateDevices=yes "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX"
for u in "$unit" "$sunit"; do
	grep -Eq "^(StateDirectory|DynamicUser)=" "$u" && fail "$(basename "$u"): $(grep -E "^(StateDirectory|DynamicUser)=" "$u")"
done
grep -E "^(CapabilityBoundingSet|AmbientCapabilities)=" "$unit" | grep -Eq "CAP_(SYS_ADMIN|SYS_RAWIO|DAC_|FOWNER)" &&
	fail "ldapfe.service keeps: $(grep "^CapabilityBoundingSet=" "$unit")"
echo "ok: unit directives"
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$dest/verify"
	sed "s|$prefix/bin/|$dest$prefix/bin/|g" "$unit" > "$dest/verify/ldapfe.service"
	# Documentation= man pages are looked up: point man at the installed ones.
	out=$(MANPATH=$dest$prefix/share/man systemd-analyze verify "$dest/verify/ldapfe.service" 2>&1) || fail "systemd-analyze verify: $out"
	grep -i "ldapfe.service" <<<"$out" && fail "systemd-analyze verify warns: $out"
	sed "s|$prefix/bin/|$dest$prefix/bin/|g" "$sunit" > "$dest/verify/ldapfe-sync.service"
	out=$(MANPATH=$dest$prefix/share/man systemd-analyze verify "$dest/verify/ldapfe-sync.service" 2>&1) || fail "systemd-analyze verify (sync): $out"
	grep -i "ldapfe-sync.service" <<<"$out" && fail "systemd-analyze verify warns (sync): $out"
	# A drop-in beside the unit is read with it.
	mkdir -p "$dest/verify/ldapfe.service.d"
	for d in af_xdp pci tap; do
		cp "$dest$prefix/share/ldapfe/systemd/$d.conf" "$dest/verify/ldapfe.service.d/"
	done
	out=$(cd "$dest/verify" && MANPATH=$dest$prefix/share/man systemd-analyze verify ldapfe.service 2>&1) || fail "systemd-analyze verify with the drop-ins: $out"
	grep -i "ldapfe.service" <<<"$out" && fail "systemd-analyze verify warns with the drop-ins: $out"
	rm -r "$dest/verify/ldapfe.service.d"
	echo "ok: systemd-analyze verify (both units, the drop-ins)"
	# Exposure (systemd 252 on Debian 12: 7.8 and 6.5 before the hardening).
	for pair in ldapfe.service:5.0 ldapfe-sync.service:3.0; do
		u=${pair%%:*} max=${pair#*:}
		line=$(cd "$dest/verify" && systemd-analyze security --offline=yes "$u" 2>&1 | grep "Overall exposure level") ||
			fail "systemd-analyze security $u: no verdict"
		score=$(grep -Eo "[0-9]+\.[0-9]+" <<<"$line" | head -1)
		awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }' || fail "$u exposure $score > $max"
		echo "ok: $u exposure $score (at most $max)"
	done
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
