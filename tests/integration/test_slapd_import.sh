#!/usr/bin/env bash
# OpenLDAP slapd -> slapcat -> ldapfectl import: for every user and for a
# right and a wrong password, `ldapfectl verify` must agree with slapd's
# own simple bind (ldapwhoami -x). Then the other way: ldapfectl export ->
# slapadd into a fresh database -> a second slapd binds every user,
# including one whose hash ldapfectl made.
#
# Then a hand-written LDIF, with no operational attributes, through slapadd
# and through ldapfectl import: both give each entry the same ones.
#
# Our own slapd only: a generated slapd.conf in a temp dir, back-mdb,
# listening only on a unix socket (ldapi://) in that dir; stopped by PID.
# usage: test_slapd_import.sh PATH/TO/ldapfectl
set -uo pipefail
CTL=${1:?ldapfectl binary}
for t in slapd slapcat slapadd slappasswd ldapwhoami ldapadd; do
	if ! command -v "$t" >/dev/null && [[ ! -x /usr/sbin/$t ]]; then
		echo "test_slapd_import: $t missing (scripts/deps.sh installs slapd and ldap-utils)" >&2
		exit 77
	fi
done
PATH=$PATH:/usr/sbin
tmp=$(mktemp -d /tmp/lfe-slapd.XXXXXX)
pids=()
cleanup() {
	local p i
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || continue
		for ((i = 0; i < 50; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

passed=0 failed=0
ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

SUF=dc=example,dc=com
ADMIN=cn=admin,$SUF
ADMINPW=admin-secret-1

# write_conf NAME: slapd.conf for database directory $tmp/NAME-db
write_conf() {
	mkdir -p "$tmp/$1-db"
	cat >"$tmp/$1.conf" <<EOF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload pw-sha2
moduleload argon2
pidfile $tmp/$1.pid
database mdb
maxsize 67108864
suffix "$SUF"
rootdn "$ADMIN"
rootpw $ADMINPW
directory $tmp/$1-db
access to attrs=userPassword by anonymous auth by * none
access to * by * read
EOF
}

# start_slapd NAME: serve $tmp/NAME.conf on ldapi://$tmp/NAME.sock; sets
# $url. Not to be called in a subshell: the PID must reach the trap.
start_slapd() {
	local sock=$tmp/$1.sock i
	url="ldapi://$(printf '%s' "$sock" | sed 's|/|%2F|g')"
	slapd -f "$tmp/$1.conf" -h "$url" -d 0 >"$tmp/$1.log" 2>&1 &
	pids+=($!)
	for ((i = 0; i < 100; i++)); do
		if ldapwhoami -x -H "$url" -D "$ADMIN" -w "$ADMINPW" >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "test_slapd_import: slapd $1 did not come up:" >&2
	cat "$tmp/$1.log" >&2
	return 1
}

bind_rc() {   # bind_rc URL DN PASSWORD -> ldapwhoami's exit status (0 ok, 49 invalid)
	printf '%s' "$3" >"$tmp/pw"
	timeout 20 ldapwhoami -x -H "$1" -D "$2" -y "$tmp/pw" >/dev/null 2>&1
	echo $?
}

verify() {    # verify STORE DN PASSWORD -> "RC OUTPUT" of ldapfectl verify
	local out rc
	out=$(printf '%s\n' "$3" | timeout 20 "$CTL" --store "$1" verify "$2" 2>/dev/null)
	rc=$?
	echo "$rc $out"
}

hash() {      # hash SCHEME PASSWORD [crypt salt format]
	local mod=pw-sha2   # slappasswd takes one module-load
	[[ $1 == '{ARGON2}' ]] && mod=argon2
	if [[ -n ${3:-} ]]; then
		slappasswd -o module-path=/usr/lib/ldap -o module-load=$mod -h "$1" -c "$3" -s "$2"
	else
		slappasswd -o module-path=/usr/lib/ldap -o module-load=$mod -h "$1" -s "$2"
	fi
}

# uid|password|expected scheme|slappasswd scheme|crypt salt format
users=$(cat <<'EOF'
ssha|ssha pass|{SSHA}|{SSHA}|
sha|sha pass|{SHA}|{SHA}|
ssha256|sha-2 pässwörd|{SSHA256}|{SSHA256}|
ssha512|Sha512 #1|{SSHA512}|{SSHA512}|
sha512|plain sha512|{SHA512}|{SHA512}|
crypt6|crypt six|{CRYPT}|{CRYPT}|$6$%.16s
crypt5|crypt five|{CRYPT}|{CRYPT}|$5$%.16s
crypt1|crypt one|{CRYPT}|{CRYPT}|$1$%.8s
argon2|argon two|{ARGON2}|{ARGON2}|
EOF
)

write_conf src
start_slapd src || exit 1

{
	printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n' "$SUF"
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$SUF"
	while IFS='|' read -r uid pw _ scheme salt; do
		h=$(hash "$scheme" "$pw" "$salt") || { echo "slappasswd $scheme failed" >&2; exit 1; }
		printf 'dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\nuserPassword: %s\n\n' \
			"$uid" "$SUF" "$uid" "$uid" "$uid" "$h"
	done <<<"$users"
	# Two hashes on one entry: either password binds.
	printf 'dn: uid=multi,ou=people,%s\nobjectClass: inetOrgPerson\nuid: multi\ncn: multi\nsn: multi\nuserPassword: %s\nuserPassword: %s\n\n' \
		"$SUF" "$(hash '{SSHA}' 'first one')" "$(hash '{CRYPT}' 'second one' '$6$%.16s')"
} >"$tmp/users.ldif" || exit 1
if ldapadd -x -H "$url" -D "$ADMIN" -w "$ADMINPW" -f "$tmp/users.ldif" >"$tmp/ldapadd.log" 2>&1; then ok; else
	bad "ldapadd into slapd"; cat "$tmp/ldapadd.log" >&2; exit 1
fi

if slapcat -f "$tmp/src.conf" -l "$tmp/slapcat.ldif" 2>"$tmp/slapcat.err"; then ok; else
	bad "slapcat"; cat "$tmp/slapcat.err" >&2; exit 1
fi
if "$CTL" --store "$tmp/store" init --suffix "$SUF" >/dev/null &&
   "$CTL" --store "$tmp/store" import "$tmp/slapcat.ldif" >"$tmp/import.out" 2>&1; then ok; else
	bad "ldapfectl import of slapcat output"; cat "$tmp/import.out" >&2; exit 1
fi
n=$("$CTL" --store "$tmp/store" info | sed -n 's/^entries: //p')
want=$(grep -c '^dn:' "$tmp/slapcat.ldif")
[[ $n == "$want" ]] && ok || bad "store holds $n entries, slapcat wrote $want"

# check DN PASSWORD EXPECTED_SCHEME: slapd and ldapfectl agree.
check() {
	local dn=$1 pw=$2 scheme=$3 s v
	s=$(bind_rc "$url" "$dn" "$pw")
	v=$(verify "$tmp/store" "$dn" "$pw")
	case "$s" in
	0)  [[ $v == "0 ok $scheme" ]] && ok || bad "$dn '$pw': slapd binds, ldapfectl says '$v' (want '0 ok $scheme')" ;;
	49) [[ $v == "1 invalid" ]] && ok || bad "$dn '$pw': slapd refuses (49), ldapfectl says '$v'" ;;
	*)  bad "$dn '$pw': ldapwhoami exit $s" ;;
	esac
	last_s=$s
}
n_ok=0 n_bad=0
while IFS='|' read -r uid pw scheme _ _; do
	dn="uid=$uid,ou=people,$SUF"
	check "$dn" "$pw" "$scheme"
	[[ $last_s == 0 ]] && n_ok=$((n_ok + 1)) || bad "slapd refused the right password of $uid"
	for wrong in "$pw " "${pw%?}" "x$pw" "$(tr 'a-z' 'A-Z' <<<"$pw")"; do
		check "$dn" "$wrong" "$scheme"
		[[ $last_s == 49 ]] && n_bad=$((n_bad + 1)) || bad "slapd accepted a wrong password of $uid"
	done
done <<<"$users"
for pw in "first one" "second one"; do
	check "uid=multi,ou=people,$SUF" "$pw" "$([[ $pw == first* ]] && echo '{SSHA}' || echo '{CRYPT}')"
	[[ $last_s == 0 ]] || bad "multi '$pw'"
done
check "uid=multi,ou=people,$SUF" "third one" ""
[[ $last_s == 49 ]] || bad "multi third"
check "uid=nobody,ou=people,$SUF" "ssha pass" ""
[[ $last_s == 49 ]] || bad "unknown DN"

# ---- the other way: ldapfectl export -> slapadd -> slapd binds ----
printf 'hashed by ldapfectl\n' | "$CTL" --store "$tmp/store" --scheme '{SSHA512}' \
	user add "uid=newbie,ou=people,$SUF" --password-stdin 2>"$tmp/err" && ok || { bad "user add"; cat "$tmp/err" >&2; }
printf 'crypt by ldapfectl\n' | "$CTL" --store "$tmp/store" --scheme '{CRYPT}' \
	passwd "uid=ssha,ou=people,$SUF" 2>"$tmp/err" && ok || { bad "passwd"; cat "$tmp/err" >&2; }
"$CTL" --store "$tmp/store" export -o "$tmp/export.ldif" && ok || bad "export"
write_conf dst
if slapadd -f "$tmp/dst.conf" -l "$tmp/export.ldif" >"$tmp/slapadd.log" 2>&1; then ok; else
	bad "slapadd of ldapfectl export"; cat "$tmp/slapadd.log" >&2
fi
src_url=$url
start_slapd dst || exit 1
url2=$url
url=$src_url
while IFS='|' read -r uid pw _ _ _; do
	[[ $uid == ssha ]] && continue
	[[ $(bind_rc "$url2" "uid=$uid,ou=people,$SUF" "$pw") == 0 ]] && ok || bad "slapd on the export refuses $uid"
done <<<"$users"
[[ $(bind_rc "$url2" "uid=newbie,ou=people,$SUF" "hashed by ldapfectl") == 0 ]] && ok || bad "slapd refuses ldapfectl's {SSHA512} hash"
[[ $(bind_rc "$url2" "uid=ssha,ou=people,$SUF" "crypt by ldapfectl") == 0 ]] && ok || bad "slapd refuses ldapfectl's {CRYPT} hash"
[[ $(bind_rc "$url2" "uid=ssha,ou=people,$SUF" "ssha pass") == 49 ]] && ok || bad "slapd still takes the replaced password"
[[ $(bind_rc "$url2" "uid=newbie,ou=people,$SUF" "hashed by ldapfectl!") == 49 ]] && ok || bad "slapd takes a wrong password"

# ---- operational attributes: a hand-written LDIF (none) through slapadd
# and through ldapfectl import: each entry gets one entryUUID (RFC 4122;
# ldapfectl's random, version 4; slapadd's time-based, version 1), distinct,
# createTimestamp and modifyTimestamp (GeneralizedTime, within the import)
# and a distinct entryCSN; values the LDIF gives are kept. ----
{
	printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n' "$SUF"
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$SUF"
	for u in h1 h2 h3; do
		printf 'dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\n\n' "$u" "$SUF" "$u" "$u" "$u"
	done
	printf 'dn: uid=given,ou=people,%s\nobjectClass: inetOrgPerson\nuid: given\ncn: given\nsn: given\n' "$SUF"
	printf 'entryUUID: 0a1b2c3d-0000-1000-8000-0000000000aa\ncreateTimestamp: 20200102030405Z\n'
	printf 'modifyTimestamp: 20210102030405Z\nentryCSN: 20210102030405.000001Z#000000#001#000000\n\n'
	printf 'dn: uid=half,ou=people,%s\nobjectClass: inetOrgPerson\nuid: half\ncn: half\nsn: half\n' "$SUF"
	printf 'modifyTimestamp: 20220102030405Z\n\n'
} >"$tmp/hand.ldif"
# ops FILE: "DN UUID CREATE MODIFY CSN COUNT" per entry of an LDIF (plain
# values); COUNT: lines of these four types (4 when one each).
ops() {
	awk 'BEGIN { RS = ""; FS = "\n" }
	     /(^|\n)dn: / { dn = u = c = m = s = "-"; n = 0
		for (i = 1; i <= NF; i++) {
			split($i, kv, ": ")
			if (kv[1] == "dn") dn = kv[2]
			else if (kv[1] == "entryUUID") { u = kv[2]; n++ }
			else if (kv[1] == "createTimestamp") { c = kv[2]; n++ }
			else if (kv[1] == "modifyTimestamp") { m = kv[2]; n++ }
			else if (kv[1] == "entryCSN") { s = kv[2]; n++ }
		}
		print dn, u, c, m, s, n }' "$1"
}
# check_ops WHO LDIF T0 T1 UUID_VERSION: the entries of LDIF (after an
# import of hand.ldif between T0 and T1, YYYYmmddHHMMSS) as above.
check_ops() {
	local who=$1 t0=$3 t1=$4 ver=$5 dn u c m s n seen=0
	ops "$2" >"$tmp/ops.$who"
	while read -r dn u c m s n; do
		seen=$((seen + 1))
		[[ $n == 4 ]] && ok || bad "$who: $dn has $n of the four operational attributes"
		case "$dn" in
		uid=given,*)
			[[ "$u $c $m $s" == "0a1b2c3d-0000-1000-8000-0000000000aa 20200102030405Z 20210102030405Z 20210102030405.000001Z#000000#001#000000" ]] &&
				ok || bad "$who: $dn lost the values it was given: $u $c $m $s"
			continue ;;
		uid=half,*)
			[[ $m == 20220102030405Z ]] && ok || bad "$who: $dn lost its modifyTimestamp: $m"
			m=$c ;;
		esac
		[[ $u =~ ^[0-9a-f]{8}-[0-9a-f]{4}-$ver[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] &&
			ok || bad "$who: $dn entryUUID '$u' is not an RFC 4122 version $ver UUID"
		for ts in "$c" "$m"; do
			[[ $ts =~ ^[0-9]{14}Z$ ]] && ((10#${ts%Z} >= 10#$t0 && 10#${ts%Z} <= 10#$t1)) &&
				ok || bad "$who: $dn timestamp '$ts' is not GeneralizedTime within $t0..$t1"
		done
		[[ $s =~ ^[0-9]{14}\.[0-9]{6}Z#[0-9a-f]{6}#[0-9a-f]{3}#[0-9a-f]{6}$ ]] &&
			ok || bad "$who: $dn entryCSN '$s' is not in OpenLDAP's form"
	done <"$tmp/ops.$who"
	[[ $seen == 7 ]] && ok || bad "$who: $seen entries with a DN, want 7"
	for col in 2 5; do
		[[ -z $(cut -d' ' -f$col "$tmp/ops.$who" | sort | uniq -d) ]] && ok ||
			bad "$who: entries share a value of column $col: $(cut -d' ' -f$col "$tmp/ops.$who" | sort | uniq -d)"
	done
}
write_conf ops
t0=$(date -u +%Y%m%d%H%M%S)
if slapadd -f "$tmp/ops.conf" -l "$tmp/hand.ldif" >"$tmp/slapadd-ops.log" 2>&1 &&
   slapcat -f "$tmp/ops.conf" -l "$tmp/ops-slapcat.ldif" 2>>"$tmp/slapadd-ops.log"; then ok; else
	bad "slapadd/slapcat of a hand-written LDIF"; cat "$tmp/slapadd-ops.log" >&2
fi
t1=$(date -u +%Y%m%d%H%M%S)
check_ops slapadd "$tmp/ops-slapcat.ldif" "$t0" "$t1" 1
t0=$(date -u +%Y%m%d%H%M%S)
if "$CTL" --store "$tmp/ops-store" init --suffix "$SUF" >/dev/null &&
   "$CTL" --store "$tmp/ops-store" import "$tmp/hand.ldif" >"$tmp/import-ops.out" 2>&1 &&
   "$CTL" --store "$tmp/ops-store" export -o "$tmp/ops-export.ldif"; then ok; else
	bad "ldapfectl import of a hand-written LDIF"; cat "$tmp/import-ops.out" >&2
fi
t1=$(date -u +%Y%m%d%H%M%S)
check_ops ldapfectl "$tmp/ops-export.ldif" "$t0" "$t1" 4

# Both servers are ours and stop on SIGTERM; the trap reaps them.
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && ok || bad "slapd $p died early"; done

echo "test_slapd_import: $passed passed, $failed failed ($n_ok right and $n_bad wrong passwords compared)"
((failed == 0))
