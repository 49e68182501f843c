#!/usr/bin/env bash
# ldapfectl sync cannot be fooled by an impostor provider
# (tests/integration/fake_provider.py, which records whether the sync
# account's password reached it), on loopback in a namespace of its own:
#   - ldap:// without StartTLS: refused before any connection (exit 2);
#     with --insecure it goes (the recorder sees the password: the check
#     below can fail);
#   - ldap:// + StartTLS and ldaps:// to a self-signed certificate, under
#     LDAPTLS_REQCERT=never and under "TLS_REQCERT allow" in an ldaprc: the
#     handshake fails, exit 1, no bind, no password;
#   - the impostor's diagnosticMessage (terminal escapes, a newline) reaches
#     the log escaped, on one line.
source "$(dirname "$0")/lib.sh"
lfe_init syncsafe 131
command -v openssl >/dev/null || { echo "SKIP: openssl missing"; exit 77; }

PW="sync-secret-$RANDOM$RANDOM"
printf '%s' "$PW" > "$LFE_WORK/sync.pw"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$LFE_WORK/fake.key" -out "$LFE_WORK/fake.crt" \
	>/dev/null 2>&1 || lfe_fail "openssl"
mkdir -p "$LFE_STORE"
lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null

FAKE_PID=
fake_start() {   # fake_start MODE PORT: a fresh record
	REC=$LFE_WORK/rec.$1.$2
	: > "$REC"
	ip netns exec "$LFE_CLI" "$PY" "$LFE_ROOT/tests/integration/fake_provider.py" "$1" "$2" "$PW" "$REC" \
		"$LFE_WORK/fake.crt" "$LFE_WORK/fake.key" 2>>"$LFE_WORK/fake.err" &
	FAKE_PID=$!
	LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $FAKE_PID"
	for ((i = 0; i < 50; i++)); do grep -q listening "$REC" && return 0; sleep 0.1; done
	lfe_fail "fake provider ($1) did not start"
}
fake_stop() { kill -TERM "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null || true; FAKE_PID=; }
# sync_to ENV... -- ARGS: one consumer run (--once), cwd $LFE_WORK/cwd
mkdir -p "$LFE_WORK/cwd" "$LFE_WORK/home"
sync_to() {
	local envs=()
	while [[ $1 != -- ]]; do envs+=("$1"); shift; done
	shift
	SRC=0
	SOUT=$(cd "$LFE_WORK/cwd" && ip netns exec "$LFE_CLI" env HOME="$LFE_WORK/home" "${envs[@]}" \
		timeout 20 "$LFE_CTL" --store "$LFE_STORE" sync -D "cn=sync,$LFE_SUFFIX" -y "$LFE_WORK/sync.pw" \
		-b "$LFE_SUFFIX" --once --max-backoff 1 "$@" 2>&1) || SRC=$?
}
got() { grep -c "^$1\$" "$REC" || true; }

# ldap:// without StartTLS
fake_start plain 3901
sync_to -- -H ldap://127.0.0.1:3901/
lfe_eq "ldap:// without -Z: exit" "$SRC" 2
[[ $SOUT == *"without StartTLS"* ]] || lfe_fail "ldap:// without -Z: $SOUT"
lfe_eq "ldap:// without -Z: connections to the impostor" "$(got conn)" 0
sync_to -- -H "ldapi://%2Fnonexistent ldap://127.0.0.1:3901/"
lfe_eq "a list with a cleartext ldap://: exit" "$SRC" 2
sync_to -- -H ldap://127.0.0.1:3901/ --insecure
lfe_eq "--insecure: the impostor got the password (the recorder works)" "$(got password)" 1
# the impostor's diagnosticMessage in the log: escaped, one line
[[ $SOUT != *$'\x1b'* ]] || lfe_fail "raw escape character in the log: $(cat -v <<<"$SOUT")"
grep -q '^ldapfectl sync: FAKE LINE' <<<"$SOUT" && lfe_fail "the provider's newline started a log line: $SOUT"
[[ $SOUT == *'\x1b[2J\x1b[31mplanted\x0aldapfectl sync: FAKE LINE'* ]] ||
	lfe_fail "diagnosticMessage not shown escaped: $(cat -v <<<"$SOUT")"
lfe_log "ok: provider bytes escaped in the log"
fake_stop

# StartTLS and ldaps:// to a self-signed certificate, the environment or an
# ldaprc asking not to check it
printf 'TLS_REQCERT allow\n' > "$LFE_WORK/cwd/ldaprc"
for m in "starttls 3902 ldap://127.0.0.1:3902/ -Z" "ldaps 3903 ldaps://127.0.0.1:3903/"; do
	read -r mode port uri z <<<"$m"
	fake_start "$mode" "$port"
	for how in env ldaprc; do
		if [[ $how == env ]]; then
			mv "$LFE_WORK/cwd/ldaprc" "$LFE_WORK/ldaprc.off"
			sync_to LDAPTLS_REQCERT=never -- -H "$uri" $z
			mv "$LFE_WORK/ldaprc.off" "$LFE_WORK/cwd/ldaprc"
		else
			sync_to -- -H "$uri" $z
		fi
		lfe_eq "$mode, $how says do not check: exit" "$SRC" 1
		lfe_eq "$mode, $how: binds at the impostor" "$(got bind)" 0
		lfe_eq "$mode, $how: password at the impostor" "$(got password)" 0
	done
	(($(got conn) >= 2)) || lfe_fail "$mode: the consumer never connected ($(tr '\n' ' ' < "$REC"))"
	fake_stop
done
echo "PASS test_syncsafe"
