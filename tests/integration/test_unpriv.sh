#!/usr/bin/env bash
# The unprivileged layout of the package (docs/ARCHITECTURE.md "Running
# unprivileged"), without systemd as PID 1: the store is written by its own
# user (ldapfe-sync's role: a spare uid here) with the directory's group;
# the daemon starts as root holding only ldapfe.service's bounding set
# (no CAP_DAC_OVERRIDE: it reads the store through that group, as the unit's
# SupplementaryGroups= gives it) and drops to [daemon] user (nobody here).
# Checks: the files' owners and modes (lock.mdb 0660, data.mdb 0640), the
# daemon serves binds and sees the writer's password change, runs with no
# capability as that user; a lock file whose txnid was wound back (what the
# group could do to lock.mdb) makes the writer refuse instead of committing
# on an old snapshot.
source "$(dirname "$0")/lib.sh"
lfe_init unpriv 130
command -v setpriv >/dev/null || { echo "SKIP: setpriv missing"; exit 77; }

GID=65534 DUSER=nobody DGROUP=nogroup
SUID=
for u in 64029 64031 64037 64041; do
	getent passwd "$u" >/dev/null || { SUID=$u; break; }
done
[[ -n $SUID ]] || lfe_fail "no free uid for the writer"
chmod 0711 "$LFE_WORK"
install -d -m 0750 -o "$SUID" -g "$GID" "$LFE_WORK/lib"
LFE_STORE=$LFE_WORK/lib/store
# The writer as ldapfe-sync.service runs it: its uid, group = the store's,
# no supplementary groups, UMask=0027.
as_sync() { setpriv --reuid="$SUID" --regid="$GID" --clear-groups -- bash -c 'umask 027; "$@"' _ "$@"; }
sctl() { as_sync "$LFE_CTL" --store "$LFE_STORE" "$@"; }
sctl init --suffix "$LFE_SUFFIX" >/dev/null
sctl user add "ou=people,$LFE_SUFFIX" --attr objectClass=organizationalUnit >/dev/null
echo alice-pw | sctl --scheme '{SSHA}' user add "$(lfe_dn alice)" --password-stdin >/dev/null
lfe_eq "store dir" "$(stat -c '%u:%g %a' "$LFE_STORE")" "$SUID:$GID 750"
lfe_eq "data.mdb" "$(stat -c '%u:%g %a' "$LFE_STORE/data.mdb")" "$SUID:$GID 640"
lfe_eq "lock.mdb" "$(stat -c '%u:%g %a' "$LFE_STORE/lock.mdb")" "$SUID:$GID 660"

conf=$(lfe_conf 1 0)
printf '[daemon]\nuser = %s\ngroup = %s\n' "$DUSER" "$DGROUP" >> "$conf"
# ldapfe.service's CapabilityBoundingSet= and SupplementaryGroups=.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$LFE_ROOT/dist/ldapfe.service.in")
[[ -n $caps ]] || lfe_fail "no CapabilityBoundingSet in ldapfe.service.in"
bset=-all
for c in $caps; do bset+=",+$(tr 'A-Z' 'a-z' <<<"${c#CAP_}")"; done
LFE_WRAP="setpriv --bounding-set=$bset --inh-caps=-all --groups=$GID --"
lfe_start "$conf" 0
grep -q "running as $DUSER" "$LFE_LOG" || lfe_fail "no privilege drop: $(cat "$LFE_LOG")"
lfe_eq "daemon uid" "$(awk '/^Uid:/ { print $2 }' /proc/$LFE_PID/status)" "65534"
lfe_eq "daemon CapEff" "$(awk '/^CapEff:/ { print $2 }' /proc/$LFE_PID/status)" "0000000000000000"
lfe_eq "daemon NoNewPrivs" "$(awk '/^NoNewPrivs:/ { print $2 }' /proc/$LFE_PID/status)" "1"

H=ldap://$LFE_SADDR
rc_of() { local rc=0; lfe_cli timeout 10 ldapwhoami -x -H "$H" -D "$(lfe_dn alice)" -w "$1" >/dev/null 2>&1 || rc=$?; echo $rc; }
lfe_eq "bind through the group" "$(rc_of alice-pw)" 0
echo alice-new | sctl passwd "$(lfe_dn alice)" >/dev/null
ok=
for ((i = 0; i < 50; i++)); do
	[[ $(rc_of alice-new) == 0 ]] && { ok=1; break; }
	sleep 0.1
done
[[ -n $ok ]] || lfe_fail "the daemon does not see the writer's change"
lfe_eq "old password after the change" "$(rc_of alice-pw)" 49

# Wind lock.mdb's txnid back by one, as a process of the group could:
# the next write must fail, not build on the older meta page.
lockoff=48   # MDB_txninfo: magic, format (4+4), robust pthread mutex (40), txnid
txn=$("$PY" -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(48); print(struct.unpack("<Q", f.read(8))[0])' "$LFE_STORE/lock.mdb")
((txn > 3 && txn < 100)) || lfe_fail "lock.mdb txnid at $lockoff looks wrong: $txn"
setwind() { setpriv --reuid=65534 --regid="$GID" --clear-groups -- "$PY" -c 'import struct,sys
f=open(sys.argv[1],"r+b"); f.seek(48); f.write(struct.pack("<Q", int(sys.argv[2])))' "$LFE_STORE/lock.mdb" "$1"; }
setwind $((txn - 1))
rc=0
echo alice-old | sctl passwd "$(lfe_dn alice)" > "$LFE_WORK/wind.out" 2>&1 || rc=$?
((rc != 0)) || lfe_fail "a write on a wound-back lock file succeeded"
lfe_log "ok: the writer refuses a wound-back lock file ($(tr '\n' ' ' < "$LFE_WORK/wind.out"))"
setwind "$txn"
echo alice-3 | sctl passwd "$(lfe_dn alice)" >/dev/null || lfe_fail "write after restoring the txnid"
lfe_stop
echo "PASS test_unpriv"
