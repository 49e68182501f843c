#!/usr/bin/env bash
# ldapfectl sync against a real OpenLDAP provider (syncprov + ppolicy,
# back-mdb) in the client namespace, the daemon serving the same store
# through af_packet, real clients (ldapwhoami, ldapmodify, ldappasswd):
#   initial refresh equals the provider (slapcat vs export, kept attributes);
#   password change / delete / rename / ppolicy lock and unlock reach binds
#   through ldapfe within 1 s; kill -9 during the initial refresh and during
#   a burst of changes, restart: store equals provider; provider restart:
#   later changes arrive; wrong provider password and unreachable provider:
#   exit 1 with the reason.
source "$(dirname "$0")/lib.sh"
lfe_init sync 80
source "$(dirname "$0")/sync_provider.sh"
for t in slapd slapadd slapcat ldapwhoami ldapmodify ldappasswd; do
	command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }
done

N_USERS=20000
PURL="ldap://127.0.0.1:3890/"
# The consumer's connection: StartTLS with the provider's test CA (ldap://
# alone is refused without --insecure).
TLSOPT=(-Z --cacert "$LFE_WORK/provider/ca.crt")
SYNC_PID=
SYNC_LOG=$LFE_WORK/sync.log

sync_start() {   # sync_start [ARGS...]: consumer in the client namespace
	# ip netns exec execs: $! is the consumer itself, for kill -9
	ip netns exec "$LFE_CLI" "$LFE_CTL" --store "$LFE_STORE" sync -H "$PURL" "${TLSOPT[@]}" -D "$PROV_ADMIN" \
		-y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" --max-backoff 2 "$@" >>"$SYNC_LOG" 2>&1 &
	SYNC_PID=$!
	LFE_EXTRA_PIDS="$LFE_EXTRA_PIDS $SYNC_PID"
}
sync_kill9() { kill -KILL "$SYNC_PID"; wait "$SYNC_PID" 2>/dev/null || true; SYNC_PID=; }
# wait_log PATTERN COUNT SECONDS: until PATTERN occurs COUNT times in the log
wait_log() {
	local i
	for ((i = 0; i < $3 * 100; i++)); do
		(($(grep -c -- "$1" "$SYNC_LOG" || true) >= $2)) && return 0
		sleep 0.01
	done
	cat "$SYNC_LOG" >&2
	lfe_fail "no \"$1\" (x$2) in the consumer's log within $3 s"
}

# Kept attributes, normalized: {dn: {type: sorted values}}, both sides.
norm() {
	"$PY" - "$1" <<'PYEOF'
import base64, sys
keep = {"objectclass", "uid", "mail", "cn", "userpassword", "entryuuid",
        "pwdaccountlockedtime", "nsaccountlock", "pwdendtime", "shadowexpire"}
lines, cur = [], None
for raw in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    raw = raw.rstrip("\n")
    if raw.startswith(" ") and lines:
        lines[-1] += raw[1:]
    else:
        lines.append(raw)
entries, e = {}, None
for l in lines + [""]:
    if not l:
        if e is not None:
            entries[e[0]] = {k: sorted(v) for k, v in e[1].items()}
        e = None
        continue
    if l.startswith("#"):
        continue
    t, _, v = l.partition(":")
    if v.startswith(":"):
        v = base64.b64decode(v[1:].strip()).decode("utf-8", "surrogateescape")
    else:
        v = v.strip()
    if t.lower() == "dn":
        e = (",".join(p.strip() for p in v.lower().split(",")), {})
    elif e is not None and t.lower() in keep:
        e[1].setdefault(t.lower(), []).append(v)
for dn in sorted(entries):
    print(dn, sorted(entries[dn].items()))
PYEOF
}
# same_as_provider: slapcat and export agree (kept attributes)
same_as_provider() {
	slapcat -f "$PROV_DIR/slapd.conf" -l "$LFE_WORK/prov.ldif" 2>/dev/null
	lfe_ctl export -o "$LFE_WORK/store.ldif" >/dev/null
	norm "$LFE_WORK/prov.ldif" > "$LFE_WORK/prov.norm"
	norm "$LFE_WORK/store.ldif" > "$LFE_WORK/store.norm"
	cmp -s "$LFE_WORK/prov.norm" "$LFE_WORK/store.norm"
}
# wait_equal SECONDS WHAT
wait_equal() {
	local end=$((SECONDS + $1))
	while ((SECONDS < end)); do
		same_as_provider && { lfe_log "ok: $2 ($(wc -l < "$LFE_WORK/store.norm") entries)"; return 0; }
		sleep 0.25
	done
	diff "$LFE_WORK/prov.norm" "$LFE_WORK/store.norm" | head -20 >&2
	lfe_fail "$2: store differs from the provider"
}

bind() {   # bind DN PASSWORD -> ldapwhoami's exit status through ldapfe
	local rc=0
	lfe_cli timeout 5 ldapwhoami -x -H "ldap://$LFE_SADDR/" -D "$1" -w "$2" >/dev/null 2>&1 || rc=$?
	echo $rc
}
# wait_bind DN PASSWORD WANT WHAT: WANT within 1 s (bounded), prints the delay
wait_bind() {
	local t0 i rc
	t0=$(date +%s%N)
	for ((i = 0; i < 100; i++)); do
		rc=$(bind "$1" "$2")
		[[ $rc == "$3" ]] && break
		(($(date +%s%N) - t0 > 1000000000)) && break
		sleep 0.02
	done
	[[ $rc == "$3" ]] || lfe_fail "$4: bind gave $rc, want $3 within 1 s"
	lfe_log "ok: $4 ($((($(date +%s%N) - t0) / 1000000)) ms)"
}

# ---- provider with N users, store, consumer, daemon ----
PROV_TLS=1
PROV_LISTEN="$PURL ldaps://127.0.0.1:6360/"
prov_conf
prov_users $N_USERS > "$LFE_WORK/users.ldif"
prov_load "$LFE_WORK/users.ldif"
prov_start "$LFE_CLI" "$PURL"
mkdir -p "$LFE_STORE"
lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null

# wrong provider password, unreachable provider: exit 1 and the reason
printf 'not-the-password' > "$LFE_WORK/wrong.pw"
rc=0; out=$(lfe_cli timeout 20 "$LFE_CTL" --store "$LFE_STORE" sync -H "$PURL" "${TLSOPT[@]}" -D "$PROV_ADMIN" \
	-y "$LFE_WORK/wrong.pw" -b "$LFE_SUFFIX" 2>&1) || rc=$?
lfe_eq "wrong provider password: exit" "$rc" 1
[[ $out == *"refused the bind"*"Invalid credentials (49)"* ]] || lfe_fail "wrong password reason: $out"
rc=0; out=$(lfe_cli timeout 20 "$LFE_CTL" --store "$LFE_STORE" sync -H "ldap://127.0.0.1:3999/" \
	"${TLSOPT[@]}" -D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" 2>&1) || rc=$?
lfe_eq "unreachable provider: exit" "$rc" 1
[[ $out == *"cannot reach"* ]] || lfe_fail "unreachable reason: $out"

# a provider without syncprov: exit 1 and the reason
mkdir -p "$LFE_WORK/nosync/db"
sed -e '/^overlay syncprov/d; /^syncprov-/d' -e "s|^directory .*|directory $LFE_WORK/nosync/db|" \
	-e "s|^pidfile .*|pidfile $LFE_WORK/nosync/pid|" "$PROV_DIR/slapd.conf" > "$LFE_WORK/nosync/slapd.conf"
ip netns exec "$LFE_CLI" slapd -f "$LFE_WORK/nosync/slapd.conf" -h "ldap://127.0.0.1:3891/" -d 0 \
	>/dev/null 2>&1 &
NOSYNC=$!
LFE_EXTRA_PIDS="$LFE_EXTRA_PIDS $NOSYNC"
for ((i = 0; i < 50; i++)); do
	lfe_cli ldapwhoami -x -H ldap://127.0.0.1:3891/ >/dev/null 2>&1 && break
	sleep 0.1
done
rc=0; out=$(lfe_cli timeout 20 "$LFE_CTL" --store "$LFE_STORE" sync -H "ldap://127.0.0.1:3891/" \
	"${TLSOPT[@]}" -D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" 2>&1) || rc=$?
kill -TERM "$NOSYNC"; wait "$NOSYNC" 2>/dev/null || true
lfe_eq "provider without the sync control: exit" "$rc" 1
[[ $out == *"does not support the Content Synchronization control"* ]] || lfe_fail "no-syncprov reason: $out"

# initial refresh, killed -9 after its first batch, then restarted
sync_start --batch 200
wait_log "committed" 1 20
sync_kill9
n=$(lfe_ctl info | awk '/^entries:/ {print $2}')
((n > 0 && n < N_USERS + 2)) || lfe_fail "kill during the initial refresh missed it ($n entries)"
lfe_log "ok: consumer killed -9 during the initial refresh ($n entries committed)"
sync_start
wait_log "refresh done" 1 30
wait_equal 10 "initial refresh equals the provider after kill -9 and restart"

lfe_start "$(lfe_conf)" 0
U1=$(lfe_dn user1) U2=$(lfe_dn user2) U3=$(lfe_dn user3) U4=$(lfe_dn user4) U5=$(lfe_dn user5)
# The operational attributes clients cache on are kept from the provider
# and returned through ldapfe for "+" (issue 26).
plus=$(lfe_cli timeout 5 ldapsearch -x -LLL -H "ldap://$LFE_SADDR/" -s base -b "$U1" "+" 2>&1) || true
for a in entryUUID entryCSN createTimestamp modifyTimestamp; do
	grep -q "^$a: " <<<"$plus" || { echo "$plus" >&2; lfe_fail "synced entry lacks $a for +"; }
done
lfe_log "ok: entryUUID, entryCSN, createTimestamp, modifyTimestamp kept by sync, returned for +"
# A posix account added on the provider: the attributes login clients
# read arrive without -a, and the uidNumber index answers SSSD's lookup
# by number through ldapfe.
pmod -a >/dev/null <<L || lfe_fail "add posix user"
dn: $(lfe_dn posix1)
objectClass: inetOrgPerson
objectClass: posixAccount
uid: posix1
cn: posix1
sn: posix1
uidNumber: 20001
gidNumber: 20001
homeDirectory: /home/posix1
loginShell: /bin/sh
L
pf="(&(uidNumber=20001)(objectclass=posixAccount)(uid=*)(&(uidNumber=*)(!(uidNumber=0))))"
for ((i = 0; i < 50; i++)); do
	got=$(lfe_cli timeout 5 ldapsearch -x -LLL -H "ldap://$LFE_SADDR/" -b "$LFE_SUFFIX" "$pf" \
		uid homeDirectory loginShell gidNumber 2>&1) || true
	[[ $got == *"loginShell: /bin/sh"* ]] && break
	sleep 0.1
done
for want in "dn: $(lfe_dn posix1)" "homeDirectory: /home/posix1" "loginShell: /bin/sh" "gidNumber: 20001"; do
	grep -qxF "$want" <<<"$got" || { echo "$got" >&2; lfe_fail "synced posix account: no '$want'"; }
done
lfe_log "ok: a synced posix account is found by uid number with its login attributes"
lfe_eq "user1 binds through ldapfe" "$(bind "$U1" pw-1)" 0
lfe_eq "user2 ({SSHA}) binds through ldapfe" "$(bind "$U2" pw-2)" 0

# password changes on the provider
pexec timeout 10 ldappasswd -x -H "$PURL" -D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" -s new-pw-1 "$U1" \
	|| lfe_fail "ldappasswd"
wait_bind "$U1" new-pw-1 0 "ldappasswd: new password binds"
lfe_eq "ldappasswd: old password refused" "$(bind "$U1" pw-1)" 49
pmod >/dev/null <<L || lfe_fail "ldapmodify"
dn: $U2
changetype: modify
replace: userPassword
userPassword: $(slappasswd -h '{SSHA}' -s new-pw-2)
L
wait_bind "$U2" new-pw-2 0 "ldapmodify: new password binds"
lfe_eq "ldapmodify: old password refused" "$(bind "$U2" pw-2)" 49

# delete, rename
printf 'dn: %s\nchangetype: delete\n' "$U3" | pmod >/dev/null || lfe_fail "delete"
wait_bind "$U3" pw-3 49 "deleted user refused (49)"
printf 'dn: %s\nchangetype: modrdn\nnewrdn: uid=user4b\ndeleteoldrdn: 1\n' "$U4" | pmod >/dev/null \
	|| lfe_fail "modrdn"
wait_bind "$(lfe_dn user4b)" pw-4 0 "renamed user binds under the new DN"
lfe_eq "renamed user: old DN refused" "$(bind "$U4" pw-4)" 49

# ppolicy lock and unlock
printf 'dn: %s\nchangetype: modify\nadd: pwdAccountLockedTime\npwdAccountLockedTime: 000001010000Z\n' \
	"$U5" | pmod >/dev/null || lfe_fail "lock"
wait_bind "$U5" pw-5 49 "account locked on the provider refused"
printf 'dn: %s\nchangetype: modify\ndelete: pwdAccountLockedTime\n' "$U5" | pmod >/dev/null \
	|| lfe_fail "unlock"
wait_bind "$U5" pw-5 0 "unlocked account binds again"

# the same for a slow scheme ({CRYPT}: verified off the worker, by the verifier)
pmod -a >/dev/null <<L || lfe_fail "add crypt user"
dn: $(lfe_dn slowuser)
objectClass: inetOrgPerson
uid: slowuser
cn: slow user
sn: slow
userPassword: $(slappasswd -h '{CRYPT}' -c '$6$%.16s' -s slow-pw)
L
wait_bind "$(lfe_dn slowuser)" slow-pw 0 "{CRYPT} user binds"
printf 'dn: %s\nchangetype: modify\nadd: pwdAccountLockedTime\npwdAccountLockedTime: 20200101000000Z\n' \
	"$(lfe_dn slowuser)" | pmod >/dev/null || lfe_fail "lock slowuser"
wait_bind "$(lfe_dn slowuser)" slow-pw 49 "locked {CRYPT} account refused"
lfe_eq "locked {CRYPT} account, wrong password: same answer" "$(bind "$(lfe_dn slowuser)" wrong)" 49

# a burst of changes, the consumer killed -9 in the middle, restarted
{
	for i in $(seq 10 409); do
		printf 'dn: %s\nchangetype: modify\nreplace: mail\nmail: burst-%d@example.com\n\n' \
			"$(lfe_dn user$i)" "$i"
	done
	for i in $(seq 410 449); do printf 'dn: %s\nchangetype: delete\n\n' "$(lfe_dn user$i)"; done
} > "$LFE_WORK/burst.ldif"
c0=$(grep -c "" "$SYNC_LOG")
pmod -f "$LFE_WORK/burst.ldif" >/dev/null 2>&1 &
BURST=$!
for ((i = 0; i < 200; i++)); do
	lfe_ctl show "$(lfe_dn user10)" 2>/dev/null | grep -q burst && break
	sleep 0.01
done
sync_kill9
# The burst ends with deletes: user449 still there means the kill was mid-burst.
lfe_ctl show "$(lfe_dn user449)" >/dev/null 2>&1 || lfe_fail "kill -9 came after the burst"
wait "$BURST" || lfe_fail "burst ldapmodify"
lfe_log "ok: consumer killed -9 during a burst of 440 changes"
sync_start
wait_equal 15 "after the burst and a kill -9: store equals the provider"

# provider restarted while the consumer runs: later changes arrive
prov_stop
prov_start "$LFE_CLI" "$PURL"
pexec timeout 10 ldappasswd -x -H "$PURL" -D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" -s after-restart "$U1" \
	|| lfe_fail "ldappasswd after restart"
for ((i = 0; i < 100; i++)); do [[ $(bind "$U1" after-restart) == 0 ]] && break; sleep 0.1; done
lfe_eq "change after a provider restart arrives" "$(bind "$U1" after-restart)" 0
wait_equal 10 "after the provider restart: store equals the provider"

# an entry the store cannot hold: logged with the DN, skipped, counted; later
# changes still arrive. (A 600-byte uid, past LMDB's key limit, was refused
# too until store format 3; it is now indexed by its keyed hash and stored.)
long=$(printf 'x%.0s' $(seq 600))
pmod -a >/dev/null <<L || lfe_fail "add unstorable entries"
dn: uid=toolong,ou=people,$LFE_SUFFIX
objectClass: inetOrgPerson
uid: toolong
uid: $long
cn: too long
sn: x

dn: uid=badpw,ou=people,$LFE_SUFFIX
objectClass: inetOrgPerson
uid: badpw
cn: bad pw
sn: x
userPassword: {SSHA-no-closing-brace
L
pexec timeout 10 ldappasswd -x -H "$PURL" -D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" -s after-skip "$U1" \
	|| lfe_fail "ldappasswd after skip"
wait_bind "$U1" after-skip 0 "changes after two unstorable entries still arrive"
lfe_ctl show "uid=toolong,ou=people,$LFE_SUFFIX" >/dev/null || lfe_fail "600-byte uid not stored"
grep -q "skipped uid=toolong" "$SYNC_LOG" && lfe_fail "600-byte uid skipped"
grep -q "skipped uid=badpw,ou=people,$LFE_SUFFIX: userPassword" "$SYNC_LOG" || lfe_fail "bad userPassword not logged"
[[ $(lfe_ctl sync --status) == *"skipped:        1"* ]] || lfe_fail "skipped count: $(lfe_ctl sync --status)"
lfe_log "ok: an unstorable entry logged with its DN, skipped and counted; a 600-byte uid stored"
printf 'dn: uid=%s,ou=people,%s\nchangetype: delete\n\n' toolong "$LFE_SUFFIX" badpw "$LFE_SUFFIX" \
	| pmod >/dev/null || lfe_fail "delete the unstorable entries"
# a rename into a DN the store cannot hold (an RDN of 17 AVAs, over
# LFE_DN_MAX_AVAS; back-mdb on the provider keeps RDNs under 512 bytes, so
# not the 1,024-byte case): the old entry goes (before: it kept binding,
# and every later change was skipped)
U6=$(lfe_dn user6)
lfe_eq "user6 binds before its rename" "$(bind "$U6" pw-6)" 0
rdn="uid=user6+cn=c+sn=s+mail=m@x+givenName=g+title=t+l=l+st=st+street=r+postalCode=1+o=o"
rdn+="+telephoneNumber=1+description=d+initials=i+employeeNumber=1+displayName=n+roomNumber=1"
printf 'dn: %s\nchangetype: modrdn\nnewrdn: %s\ndeleteoldrdn: 0\n' "$U6" "$rdn" \
	| pmod > "$LFE_WORK/modrdn.out" 2>&1 || lfe_fail "modrdn into 17 AVAs: $(cat "$LFE_WORK/modrdn.out")"
wait_bind "$U6" pw-6 49 "renamed into an unstorable DN: old DN refused"
lfe_ctl show "$U6" >/dev/null 2>&1 && lfe_fail "renamed into an unstorable DN: old entry still stored"
grep -q "uid=user6,ou=people,$LFE_SUFFIX removed: renamed to a DN the store cannot hold" "$SYNC_LOG" ||
	lfe_fail "the removal is not logged"
printf 'dn: %s,ou=people,%s\nchangetype: delete\n' "$rdn" "$LFE_SUFFIX" | pmod >/dev/null ||
	lfe_fail "delete the renamed entry"

# TLS: StartTLS (-Z) and ldaps:// with the test CA; an untrusted
# certificate is an exit 1 with the reason; ldap:// without -Z is refused
for mode in "-H $PURL -Z" "-H ldaps://127.0.0.1:6360/"; do
	rm -rf "$LFE_WORK/store3"; mkdir -p "$LFE_WORK/store3"
	"$LFE_CTL" --store "$LFE_WORK/store3" init --suffix "$LFE_SUFFIX" >/dev/null
	lfe_cli timeout 60 "$LFE_CTL" --store "$LFE_WORK/store3" sync $mode --cacert "$PROV_DIR/ca.crt" \
		-D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" -f "(uid=user1)" --once \
		2>>"$SYNC_LOG" || lfe_fail "sync over TLS ($mode)"
	"$LFE_CTL" --store "$LFE_WORK/store3" show "$U1" >/dev/null || lfe_fail "TLS ($mode): user1 missing"
	lfe_log "ok: sync over TLS ($mode)"
done
rc=0; out=$(lfe_cli timeout 20 "$LFE_CTL" --store "$LFE_WORK/store3" sync -H "$PURL" -Z \
	-D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" --once 2>&1) || rc=$?
lfe_eq "StartTLS with an untrusted certificate: exit" "$rc" 1
[[ $out == *"StartTLS with $PURL failed"* ]] || lfe_fail "untrusted certificate reason: $out"
rc=0; out=$(lfe_cli timeout 20 "$LFE_CTL" --store "$LFE_WORK/store3" sync -H "$PURL" \
	-D "$PROV_ADMIN" -y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" --once 2>&1) || rc=$?
lfe_eq "ldap:// without StartTLS: exit" "$rc" 2
[[ $out == *"without StartTLS"* ]] || lfe_fail "ldap:// without StartTLS: $out"

# a sync account that cannot read a lock attribute (uid=user8, by the
# provider's ACL): a warning at start, or exit 1 with --require-lock-attrs;
# the admin (reads everything) gets no warning
printf "pw-8" > "$LFE_WORK/u7.pw"
for req in "" --require-lock-attrs; do
	rc=0; out=$(lfe_cli timeout 30 "$LFE_CTL" --store "$LFE_WORK/store3" sync -H "$PURL" "${TLSOPT[@]}" \
		-D "$(lfe_dn user8)" -y "$LFE_WORK/u7.pw" -b "$LFE_SUFFIX" -f "(uid=user1)" --once $req 2>&1) || rc=$?
	[[ $out == *"warning: the sync account cannot read pwdAccountLockedTime"* ]] ||
		lfe_fail "hidden lock attribute ($req): no warning: $out"
	lfe_eq "hidden lock attribute ${req:-(warning only)}: exit" "$rc" "$([[ -n $req ]] && echo 1 || echo 0)"
done
grep -q "cannot read" "$SYNC_LOG" && lfe_fail "a warning for the admin: $(grep "cannot read" "$SYNC_LOG")"
lfe_log "ok: a sync account that cannot read pwdAccountLockedTime is warned about, refused on request"

# scale-out shape: a second consumer (refreshOnly, --once) into a second
# store ends equal to the first
mkdir -p "$LFE_WORK/store2"
"$LFE_CTL" --store "$LFE_WORK/store2" init --suffix "$LFE_SUFFIX" >/dev/null
lfe_cli timeout 60 "$LFE_CTL" --store "$LFE_WORK/store2" sync -H "$PURL" "${TLSOPT[@]}" -D "$PROV_ADMIN" \
	-y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" --once 2>>"$SYNC_LOG" || lfe_fail "sync --once"
lfe_ctl export -o "$LFE_WORK/s1.ldif" >/dev/null
"$LFE_CTL" --store "$LFE_WORK/store2" export -o "$LFE_WORK/s2.ldif" >/dev/null
norm "$LFE_WORK/s1.ldif" > "$LFE_WORK/s1.norm"
norm "$LFE_WORK/s2.ldif" > "$LFE_WORK/s2.norm"
cmp -s "$LFE_WORK/s1.norm" "$LFE_WORK/s2.norm" || lfe_fail "two consumers, two stores differ"
lfe_log "ok: a second consumer (refreshOnly) gives an equal store"

# subtree rename (ou=people -> ou=staff): the provider sends only the
# renamed entry; the consumer follows with a full refresh in one transaction.
# A second consumer whose search base is ou=people sees a delete of its base
# (syncprov: the entry left the scope): everything below goes too, so the
# old passwords stop working there.
mkdir -p "$LFE_WORK/store4"
"$LFE_CTL" --store "$LFE_WORK/store4" init --suffix "$LFE_SUFFIX" >/dev/null
ip netns exec "$LFE_CLI" "$LFE_CTL" --store "$LFE_WORK/store4" sync -H "$PURL" "${TLSOPT[@]}" -D "$PROV_ADMIN" \
	-y "$PROV_DIR/admin.pw" -b "ou=people,$LFE_SUFFIX" > "$LFE_WORK/sync4.log" 2>&1 &
SYNC4=$!
LFE_EXTRA_PIDS="$LFE_EXTRA_PIDS $SYNC4"
for ((i = 0; i < 300; i++)); do grep -q "refresh done" "$LFE_WORK/sync4.log" && break; sleep 0.1; done
grep -q "refresh done" "$LFE_WORK/sync4.log" || lfe_fail "second consumer: no refresh"
printf 'dn: ou=people,%s\nchangetype: modrdn\nnewrdn: ou=staff\ndeleteoldrdn: 1\n' "$LFE_SUFFIX" \
	| pmod >/dev/null || lfe_fail "subtree modrdn"
for ((i = 0; i < 100; i++)); do
	[[ $(bind "uid=user1,ou=staff,$LFE_SUFFIX" after-skip) == 0 ]] && break
	sleep 0.1
done
lfe_eq "subtree rename: user binds under the new parent" "$(bind "uid=user1,ou=staff,$LFE_SUFFIX" after-skip)" 0
lfe_eq "subtree rename: old DN refused" "$(bind "$U1" after-skip)" 49
grep -q "replacing the store at once" "$SYNC_LOG" || lfe_fail "no atomic full refresh in the log"
wait_equal 10 "after a subtree rename: store equals the provider"
for ((i = 0; i < 100; i++)); do grep -q "left the search scope" "$LFE_WORK/sync4.log" && break; sleep 0.1; done
grep -q "ou=people,$LFE_SUFFIX left the search scope" "$LFE_WORK/sync4.log" \
	|| { cat "$LFE_WORK/sync4.log" >&2; lfe_fail "base renamed away: subtree not removed"; }
n=$("$LFE_CTL" --store "$LFE_WORK/store4" info | awk '/^entries:/ {print $2}')
lfe_eq "base renamed away: entries left in the second store" "$n" 0
kill -0 "$SYNC4" || lfe_fail "second consumer exited"
kill -TERM "$SYNC4"; wait "$SYNC4" || true

st=$(lfe_ctl sync --status)
[[ $st == *"provider:       $PURL"* && $st == *"cookie:         rid="* ]] || lfe_fail "sync --status: $st"
lfe_log "ok: sync --status"
kill -TERM "$SYNC_PID"; rc=0; wait "$SYNC_PID" || rc=$?
lfe_eq "consumer exits 0 on SIGTERM" "$rc" 0
SYNC_PID=
lfe_stop
lfe_log "PASS"
