#!/usr/bin/env bash
# tests/bench/sync-bench.sh — figures for ldapfectl sync (root; not CI):
#   1. initial refresh rate: a provider (slapd, syncprov) with
#      LFE_SYNC_USERS users (default 200000) into an empty store, median of
#      LFE_SYNC_RUNS (3) fresh stores; consumer peak RSS (VmHWM);
#   2. delay from a password change on the provider (ldap3 modify, response
#      received) to the first successful bind with the new password through
#      ldapfe (af_packet, namespaces), polling binds back to back: median,
#      p99, max over LFE_SYNC_CHANGES (default 200) changes; consumer RSS
#      in the persist phase.
# usage: LFE_BUILD=build bash tests/bench/sync-bench.sh
source "$(dirname "$0")/../integration/lib.sh"
lfe_init syncbench 81
source "$(dirname "$0")/../integration/sync_provider.sh"

USERS=${LFE_SYNC_USERS:-200000}
RUNS=${LFE_SYNC_RUNS:-3}
CHANGES=${LFE_SYNC_CHANGES:-200}
PURL="ldap://127.0.0.1:3890"

prov_conf
lfe_log "provider: $USERS users (generate + slapadd)"
prov_users "$USERS" > "$LFE_WORK/users.ldif"
prov_load "$LFE_WORK/users.ldif"
rm -f "$LFE_WORK/users.ldif"
prov_start "$LFE_CLI" "$PURL"

rates=()
for ((r = 0; r < RUNS; r++)); do
	rm -rf "$LFE_STORE"; mkdir -p "$LFE_STORE"
	lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null
	ip netns exec "$LFE_CLI" "$LFE_CTL" --store "$LFE_STORE" sync -H "$PURL" --insecure -D "$PROV_ADMIN" \
		-y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" > "$LFE_WORK/sync.log" 2>&1 &
	pid=$!
	for ((i = 0; i < 6000; i++)); do grep -q "refresh done" "$LFE_WORK/sync.log" && break; sleep 0.1; done
	rss=$(awk '/VmHWM/ {h=$2} /RssAnon/ {a=$2} END {print h " kB peak, " a " kB anonymous"}' "/proc/$pid/status")
	kill -TERM "$pid"; wait "$pid" || true
	line=$(grep "refresh done" "$LFE_WORK/sync.log") || { cat "$LFE_WORK/sync.log"; lfe_fail "no refresh"; }
	rate=$(sed -E 's/.*\(([0-9]+) entries\/s\).*/\1/' <<<"$line")
	rates+=("$rate")
	lfe_log "run $r: $line; consumer RSS ${rss}"
done
med=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "initial refresh, $USERS users: median ${med} entries/s over $RUNS runs (${rates[*]}); consumer RSS ${rss} (peak includes the store pages LMDB maps)"

# ---- change-to-bind delay ----
ip netns exec "$LFE_CLI" "$LFE_CTL" --store "$LFE_STORE" sync -H "$PURL" --insecure -D "$PROV_ADMIN" \
	-y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" > "$LFE_WORK/sync.log" 2>&1 &
SYNC=$!
LFE_EXTRA_PIDS="$LFE_EXTRA_PIDS $SYNC"
for ((i = 0; i < 600; i++)); do grep -q "refresh done" "$LFE_WORK/sync.log" && break; sleep 0.1; done
lfe_start "$(lfe_conf)" 0
lfe_py '
import base64, hashlib, os, sys, time
from ldap3 import Server, Connection, MODIFY_REPLACE
prov, fe, admin, pwfile, n, suffix = sys.argv[1:7]
n = int(n)
p = Connection(Server(prov), user=admin, password=open(pwfile).read(), auto_bind=True)
fes = Server(fe)
delays = []
for i in range(n):
    dn = "uid=user%d,ou=people,%s" % (i, suffix)
    pw = "changed-%d-%d" % (i, time.time_ns() % 1000000)
    salt = os.urandom(8)
    h = "{SSHA}" + base64.b64encode(hashlib.sha1(pw.encode() + salt).digest() + salt).decode()
    t0 = time.perf_counter()
    if not p.modify(dn, {"userPassword": [(MODIFY_REPLACE, [h])]}):
        sys.exit("modify failed: %s" % p.result)
    while True:
        c = Connection(fes, user=dn, password=pw)
        ok = c.bind()
        c.unbind()
        if ok:
            break
        if time.perf_counter() - t0 > 5:
            sys.exit("no bind within 5 s for " + dn)
    delays.append((time.perf_counter() - t0) * 1000)
delays.sort()
q = lambda f: delays[min(len(delays) - 1, int(f * len(delays)))]
print("password change -> first bind through ldapfe, %d changes: median %.1f ms, p99 %.1f ms, max %.1f ms"
      % (n, q(0.5), q(0.99), delays[-1]))
' "$PURL" "ldap://$LFE_SADDR" "$PROV_ADMIN" "$PROV_DIR/admin.pw" "$CHANGES" "$LFE_SUFFIX"
echo "consumer in the persist phase: $(awk '/VmRSS|RssAnon|RssFile|VmHWM/ {printf "%s %s kB  ", $1, $2}' "/proc/$SYNC/status")"
lfe_ctl sync --status
kill -TERM "$SYNC"; wait "$SYNC" || true
lfe_stop
prov_stop
