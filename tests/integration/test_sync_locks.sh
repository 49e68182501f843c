#!/usr/bin/env bash
# Account locks and expiry that arrive by sync, through the daemon: a real
# OpenLDAP provider (nis.schema's shadowAccount, and 389-ds's nsAccountLock
# defined for the test), `ldapfectl sync` in refreshAndPersist, binds with
# ldapwhoami through ldapfe. shadowExpire in the past, far past (13
# digits: garbage), -1 and in the future; nsAccountLock true, TRUE, yes
# (not a boolean: locked), false. Then changes while the consumer runs:
# expire, unexpire, lock, unlock, each reaching binds within 1 s.
source "$(dirname "$0")/lib.sh"
lfe_init synclk 140
source "$(dirname "$0")/sync_provider.sh"
for t in slapd slapadd ldapwhoami ldapmodify; do
	command -v $t >/dev/null || { echo "SKIP: $t missing"; exit 77; }
done
PURL="ldap://127.0.0.1:3892/"
SYNC_LOG=$LFE_WORK/sync.log

prov_conf
# nsAccountLock as 389-ds spells it (a user attribute here: OpenLDAP keeps
# operational types for its own), on an auxiliary class.
cat > "$PROV_DIR/ns.schema" <<'S'
attributetype ( 2.16.840.1.113730.3.1.610 NAME 'nsAccountLock'
	EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.99999.32.1 NAME 'lfeTestLockable' AUXILIARY MAY nsAccountLock )
S
sed -i "s|^include /etc/ldap/schema/nis.schema|&\ninclude $PROV_DIR/ns.schema|" "$PROV_DIR/slapd.conf"

today=$(($(date +%s) / 86400))
{
	prov_users 2
	user() {   # user NAME PASSWORD-HASH EXTRA-LDIF-LINES
		printf 'dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nobjectClass: shadowAccount\n' \
			"$1" "$LFE_SUFFIX"
		printf 'objectClass: lfeTestLockable\nuid: %s\ncn: %s\nsn: %s\nuserPassword: %s\n' \
			"$1" "$1" "$1" "$2"
		[[ -z $3 ]] || printf '%s\n' "$3"
		echo
	}
	h=$(slappasswd -h '{SSHA}' -s lk-pw)
	user exppast "$h" "shadowExpire: $((today - 1))"
	user exptoday "$h" "shadowExpire: $today"
	user expfar "$h" "shadowExpire: 1000000000000"
	user expnever "$h" "shadowExpire: -1"
	user expfuture "$h" "shadowExpire: $((today + 30))"
	user locktrue "$h" "nsAccountLock: true"
	user lockupper "$h" "nsAccountLock: TRUE"
	user lockyes "$h" "nsAccountLock: yes"
	user lockfalse "$h" "nsAccountLock: false"
	user plain "$h" ""
} > "$LFE_WORK/users.ldif"
prov_load "$LFE_WORK/users.ldif" || lfe_fail "slapadd"
prov_start "$LFE_CLI" "$PURL"
mkdir -p "$LFE_STORE"
lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null

ip netns exec "$LFE_CLI" "$LFE_CTL" --store "$LFE_STORE" sync -H "$PURL" -D "$PROV_ADMIN" \
	-y "$PROV_DIR/admin.pw" -b "$LFE_SUFFIX" --max-backoff 2 >>"$SYNC_LOG" 2>&1 &
SYNC_PID=$!
LFE_EXTRA_PIDS="$LFE_EXTRA_PIDS $SYNC_PID"
for ((i = 0; i < 300; i++)); do grep -q "refresh done" "$SYNC_LOG" && break; sleep 0.1; done
grep -q "refresh done" "$SYNC_LOG" || { cat "$SYNC_LOG" >&2; lfe_fail "no refresh"; }
lfe_ctl show "$(lfe_dn expfar)" | grep -q "^shadowExpire: 1000000000000" ||
	lfe_fail "shadowExpire not synced: $(lfe_ctl show "$(lfe_dn expfar)")"
lfe_ctl show "$(lfe_dn lockyes)" | grep -qi "^nsAccountLock: yes" ||
	lfe_fail "nsAccountLock not synced: $(lfe_ctl show "$(lfe_dn lockyes)")"

lfe_start "$(lfe_conf)" 0
bind() {   # bind UID PASSWORD -> ldapwhoami's exit status through ldapfe
	local rc=0
	lfe_cli timeout 5 ldapwhoami -x -H "ldap://$LFE_SADDR/" -D "$(lfe_dn "$1")" -w "$2" \
		>/dev/null 2>&1 || rc=$?
	echo $rc
}
wait_bind() {   # wait_bind UID WANT WHAT: WANT within 1 s
	local t0 rc
	t0=$(date +%s%N)
	while :; do
		rc=$(bind "$1" lk-pw)
		[[ $rc == "$2" ]] && break
		(($(date +%s%N) - t0 > 1000000000)) && break
		sleep 0.02
	done
	lfe_eq "$3" "$rc" "$2"
}
lfe_eq "user0 binds (the daemon serves the synced store)" "$(bind user0 pw-0)" 0
lfe_eq "plain user binds" "$(bind plain lk-pw)" 0
lfe_eq "shadowExpire yesterday: refused" "$(bind exppast lk-pw)" 49
lfe_eq "shadowExpire today: refused" "$(bind exptoday lk-pw)" 49
lfe_eq "shadowExpire of 13 digits (garbage): refused" "$(bind expfar lk-pw)" 49
lfe_eq "shadowExpire -1 (never): binds" "$(bind expnever lk-pw)" 0
lfe_eq "shadowExpire in 30 days: binds" "$(bind expfuture lk-pw)" 0
lfe_eq "nsAccountLock true: refused" "$(bind locktrue lk-pw)" 49
lfe_eq "nsAccountLock TRUE: refused" "$(bind lockupper lk-pw)" 49
lfe_eq "nsAccountLock yes (not a boolean): refused" "$(bind lockyes lk-pw)" 49
lfe_eq "nsAccountLock false: binds" "$(bind lockfalse lk-pw)" 0
lfe_eq "expired account, wrong password: the same answer" "$(bind exppast wrong)" 49

# changes while the consumer runs
mod() { printf 'dn: %s\nchangetype: modify\n%s\n' "$(lfe_dn "$1")" "$2" | pmod >/dev/null ||
	lfe_fail "ldapmodify $1"; }
mod plain "replace: shadowExpire
shadowExpire: $((today - 1))"
wait_bind plain 49 "shadowExpire set to yesterday: refused"
mod plain "replace: shadowExpire
shadowExpire: -1"
wait_bind plain 0 "shadowExpire set to -1: binds again"
mod lockfalse "replace: nsAccountLock
nsAccountLock: true"
wait_bind lockfalse 49 "nsAccountLock set to true: refused"
mod lockfalse "delete: nsAccountLock"
wait_bind lockfalse 0 "nsAccountLock removed: binds again"
mod exppast "delete: shadowExpire"
wait_bind exppast 0 "shadowExpire removed: binds again"

kill -TERM "$SYNC_PID"; rc=0; wait "$SYNC_PID" || rc=$?
lfe_eq "consumer exits 0 on SIGTERM" "$rc" 0
lfe_stop
lfe_log "PASS"
