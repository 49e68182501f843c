#!/usr/bin/env bash
# ldapfectl end to end on throwaway stores: every command, its success and
# failure paths, exit codes and messages; import of the sample LDIFs,
# atomicity of a failed import, export -> import round trip, the
# operational attributes import and user add give, passwd/verify,
# show hiding passwords.
# usage: test_ldapfectl.sh PATH/TO/ldapfectl PATH/TO/tests/data
set -uo pipefail
CTL=${1:?ldapfectl binary}
DATA=${2:?tests/data directory}
tmp=$(mktemp -d /tmp/lfe-ctl-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset LDAPFE_STORE LDAPFE_SCHEME
export LDAPFE_STORE=$tmp/store

passed=0 failed=0
ok()  { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# run NAME WANT_RC STDIN ARGS...: runs ldapfectl with STDIN on its stdin;
# stdout in $tmp/out, stderr in $tmp/err.
run() {
	local name=$1 want=$2 in=$3 rc
	shift 3
	printf '%s' "$in" | timeout 60 "$CTL" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [[ $rc == "$want" ]]; then ok; else
		bad "$name: exit $rc, want $want (ldapfectl $*)"; sed 's/^/    err: /' "$tmp/err" >&2
	fi
}
out_has()  { if grep -qF -- "$2" "$tmp/out"; then ok; else bad "$1: stdout lacks '$2'"; sed 's/^/    out: /' "$tmp/out" >&2; fi; }
out_lacks() { if grep -qF -- "$2" "$tmp/out"; then bad "$1: stdout has '$2'"; else ok; fi; }
err_has()  { if grep -qF -- "$2" "$tmp/err"; then ok; else bad "$1: stderr lacks '$2'"; sed 's/^/    err: /' "$tmp/err" >&2; fi; }
same() {   # same NAME FILE1 FILE2
	if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ"; diff "$2" "$3" | head -20 >&2; fi
}
entries() { "$CTL" --store "$1" info | sed -n 's/^entries: //p'; }
want_entries() {   # want_entries NAME STORE N
	local n; n=$(entries "$2")
	if [[ $n == "$3" ]]; then ok; else bad "$1: $2 has '$n' entries, want $3"; fi
}
# export without the comment line that names the store path
export_body() { "$CTL" --store "$1" export | grep -v '^# ldapfe store '; }

SUF=dc=example,dc=com
P=ou=people,$SUF

# ---- help and usage (exit 2) ----
run "help" 0 "" help;                           out_has "help" "import [--replace] [--no-op-attrs] [--progress] FILE.ldif|-"
run "--help" 0 "" --help;                       out_has "--help" "COMMAND"
for c in init import export user passwd del show verify info reindex index upgrade help; do
	run "$c --help" 0 "" "$c" --help;       out_has "$c --help" "usage: ldapfectl"
	run "help $c" 0 "" help "$c";           out_has "help $c" "$c"
done
while IFS='|' read -r name want msg args; do
	# shellcheck disable=SC2086
	run "$name" "$want" "" $args
	err_has "$name" "$msg"
done <<'EOF'
no command|2|missing command|
unknown command|2|unknown command "frob"|frob
unknown global option|2|usage|--frob
help of unknown|2|unknown command "frob"|help frob
init without suffix|2|--suffix DN is required|init
init bad suffix|2|is not a valid DN|init --suffix not-a-dn
init extra arg|2|unexpected argument|init --suffix dc=x extra
init unknown option|2|see: ldapfectl init --help|init --frob
import no file|2|name the LDIF file|import
import two files|2|import takes one file|import a b
show no dn|2|name the entry's DN|show
show bad dn|2|is not a valid DN|show garbage
del two dns|2|del takes one DN|del uid=a,dc=x uid=b,dc=x
user no sub|2|missing sub-command|user
user bad sub|2|unknown sub-command "mod"|user mod uid=a,dc=x
user add bad attr|2|--attr wants TYPE=VALUE|user add uid=a,dc=x --attr mail
user add cleartext pw|2|already hashed value|user add uid=a,dc=x --attr userPassword=secret
user add cleartext pw option|2|already hashed value|user add uid=a,dc=x --attr userPassword;x-legacy=secret
user add plain authPassword|2|takes an RFC 3112 value|user add uid=a,dc=x --attr authPassword;foo=secret
bad scheme syntax|2|invalid password scheme|--scheme {no$pe} info
export extra arg|2|unexpected argument|export extra
EOF
LDAPFE_SCHEME='bad scheme' run "bad LDAPFE_SCHEME" 2 "" info; err_has "bad LDAPFE_SCHEME" "LDAPFE_SCHEME"

# ---- no store / uninitialised store (exit 1) ----
run "info without store" 1 "" info;            err_has "info without store" "no store at $tmp/store"
run "show without store" 1 "" show "uid=a,$P";  err_has "show without store" "init --suffix"
mkdir -p "$tmp/empty"
run "info on empty dir" 1 "" --store "$tmp/empty" info;  err_has "info on empty dir" "not initialised"

# ---- init ----
run "init" 0 "" init --suffix "$SUF";           out_has "init" "suffix $SUF"
run "init twice" 1 "" init --suffix dc=other;   err_has "init twice" "already initialised (suffix $SUF)"
run "info empty" 0 "" info
out_has "info empty" "suffix: $SUF"; out_has "info empty" "entries: 0"; out_has "info empty" "format: 3"; out_has "info empty" "bind index: yes"
out_has "info empty" "size: "

# ---- import the samples ----
run "import slapcat" 0 "" import "$DATA/slapcat-example.ldif"
out_has "import slapcat" "imported 9 entries"
want_entries "after slapcat import" "$tmp/store" 9
run "init 389" 0 "" --store "$tmp/s389" init --suffix "$SUF"
run "import 389ds" 0 "" --store "$tmp/s389" import "$DATA/389ds-example.ldif"
out_has "import 389ds" "imported 5 entries"
want_entries "after 389ds import" "$tmp/s389" 5
run "import 389ds into slapcat store" 1 "" import "$DATA/389ds-example.ldif"
err_has "import 389ds into slapcat store" "389ds-example.ldif:5: entry dc=example,dc=com already exists"
want_entries "failed import leaves count" "$tmp/store" 9

# ---- progress of import/export: on a terminal (a pty from script(1)) or
# with --progress; never when stderr is a file or a pipe ----
"$CTL" --store "$tmp/splain" init --suffix "$SUF" >/dev/null
run "import, not a terminal" 0 "" --store "$tmp/splain" import "$DATA/slapcat-example.ldif"
out_lacks "import summary has no progress" $'\r'
out_has "import reports its time" "imported 9 entries from $DATA/slapcat-example.ldif in "
if grep -q $'\r\|entries (' "$tmp/err"; then bad "progress on a non-terminal stderr"; else ok; fi
"$CTL" --store "$tmp/sprog" init --suffix "$SUF" >/dev/null
if command -v script >/dev/null; then
	timeout 60 script -qec "$CTL --store $tmp/sprog import $DATA/slapcat-example.ldif" /dev/null >"$tmp/pty" 2>&1
	if grep -q "import: 9 entries (100%), [0-9]*/s, done" "$tmp/pty" && grep -q "imported 9 entries" "$tmp/pty"; then ok; else
		bad "no progress line on a terminal"; cat -A "$tmp/pty" | head -5 >&2; fi
	timeout 60 script -qec "$CTL --store $tmp/sprog export -o $tmp/prog.ldif" /dev/null >"$tmp/pty" 2>&1
	if grep -q "export: 9 entries (100%), [0-9]*/s, done" "$tmp/pty"; then ok; else
		bad "no export progress on a terminal"; cat -A "$tmp/pty" | head -5 >&2; fi
	if grep -q "entries (" "$tmp/prog.ldif"; then bad "progress in the exported file"; else ok; fi
else
	bad "script(1) missing (bsdutils)"
fi
run "export --progress" 0 "" --store "$tmp/sprog" export --progress
err_has "export --progress" "export: 9 entries (100%)"
out_lacks "export --progress keeps stdout clean" "entries ("
run "export, not a terminal" 0 "" --store "$tmp/sprog" export
if [[ -s $tmp/err ]]; then bad "export wrote to a non-terminal stderr: $(cat -A "$tmp/err")"; else ok; fi

# ---- verify: every sample user, right and wrong password ----
while IFS='|' read -r store dn pw want out; do
	run "verify $dn '$pw'" "$want" "$pw"$'\n' --store "$tmp/$store" verify "$dn"
	out_has "verify $dn '$pw'" "$out"
done <<EOF
store|uid=alice,$P|alice-secret|0|ok {SSHA}
store|uid=alice,$P|alice-secreT|1|invalid
store|uid=bob,$P|bob pass 2|0|ok {CRYPT}
store|uid=bob,$P|bob pass|1|invalid
store|uid=carol,$P|Carol!|0|ok {SHA}
store|uid=carol,$P|carol!|1|invalid
store|uid=jose,$P|José-pw|0|ok {SSHA512}
store|uid=jose,$P|Jose-pw|1|invalid
store|UID=Alice, OU=People,DC=example,DC=com|alice-secret|0|ok {SSHA}
store|uid=nobody,$P|alice-secret|1|invalid
store|cn=Zoë Ünal,$P|anything|1|invalid
s389|uid=dave,ou=People,$SUF|dave#1|0|ok {SSHA256}
s389|uid=dave,ou=People,$SUF|dave#2|1|invalid
s389|uid=erin,ou=People,$SUF|erin 389|0|ok {SSHA512}
s389|uid=erin,ou=People,$SUF|erin 388|1|invalid
s389|uid=frank,ou=People,$SUF|frank5|0|ok {CRYPT}
s389|uid=frank,ou=People,$SUF|frank6|1|invalid
EOF
run "verify unknown dn says why" 1 "x"$'\n' verify "uid=nobody,$P"; err_has "verify unknown dn says why" "no entry uid=nobody"
run "verify no password value" 1 "x"$'\n' verify "cn=Zoë Ünal,$P"; err_has "verify no password value" "has no userPassword"
run "verify empty password" 1 "" verify "uid=alice,$P"; err_has "verify empty password" "empty password refused"

# ---- show hides passwords ----
run "show alice" 0 "" show "uid=alice,$P"
out_has "show alice" "dn: uid=alice,$P"
out_has "show alice" "userPassword: {SSHA} (hidden)"
out_has "show alice" "mail: alice@example.com"
out_lacks "show alice" "6R8pmnWyv9acyupjhOOxYrIyn"
out_lacks "show alice" "e1NTSEF9NlI4cG1uV3l2OWFjeXVwamhPT3hZckl5bi9VSlZ5YTFtaVg1NUE9PQ"
run "show bob" 0 "" show "uid=bob,$P";          out_has "show bob" "userPassword: {CRYPT} (hidden)"
out_lacks "show bob" "WayqK1T1mAcqhlRK"
run "show utf8 dn" 0 "" show "cn=Zoë Ünal,$P"; out_has "show utf8 dn" "dn:: Y249Wm/DqyDDnG5hbCxvdT1wZW9wbGUsZGM9ZXhhbXBsZSxkYz1jb20="
run "show missing" 1 "" show "uid=nobody,$P";   err_has "show missing" "no entry uid=nobody,$P"

# ---- failed imports change nothing (atomicity) ----
export_body "$tmp/store" >"$tmp/before.ldif"
good='dn: uid=new1,'$P'
objectClass: inetOrgPerson
uid: new1
cn: new1
sn: new1

dn: uid=new2,'$P'
objectClass: inetOrgPerson
uid: new2
cn: new2
sn: new2
'
# name|error expected on stderr|LDIF appended after two good entries
while IFS='|' read -r name msg tail; do
	printf '%s\n%b' "$good" "$tail" >"$tmp/bad.ldif"
	run "import $name" 1 "" import "$tmp/bad.ldif"
	err_has "import $name" "$msg"
	err_has "import $name" "nothing was imported"
	export_body "$tmp/store" >"$tmp/after.ldif"
	same "import $name leaves the store unchanged" "$tmp/before.ldif" "$tmp/after.ldif"
done <<'EOF'
outside suffix|bad.ldif:13: entry uid=x,dc=other is outside the suffix dc=example,dc=com|dn: uid=x,dc=other\nuid: x\n
changetype|bad.ldif:14: changetype records are not supported; import content records|dn: uid=x,ou=people,dc=example,dc=com\nchangetype: add\nuid: x\n
control|bad.ldif:14: changetype records are not supported|dn: uid=x,ou=people,dc=example,dc=com\ncontrol: 1.2.840.113556.1.4.805 true\nchangetype: delete\n
url value|bad.ldif:14: URL values|dn: uid=x,ou=people,dc=example,dc=com\njpegPhoto:< file:///etc/passwd\n
bad base64|bad.ldif:14: invalid base64|dn: uid=x,ou=people,dc=example,dc=com\ncn:: Zm9v!\n
base64 pad bits|bad.ldif:14: invalid base64|dn: uid=x,ou=people,dc=example,dc=com\ncn:: Zm9=\n
base64 after padding|bad.ldif:14: invalid base64 value of "userPassword"|dn: uid=x,ou=people,dc=example,dc=com\nuserPassword:: YQ==YQ==\n
base64 data after one pad|bad.ldif:14: invalid base64 value of "userPassword;x-legacy"|dn: uid=x,ou=people,dc=example,dc=com\nuserPassword;x-legacy:: YQ=A\n
missing colon|bad.ldif:14: missing ':'|dn: uid=x,ou=people,dc=example,dc=com\njust text\n
bad attr name|bad.ldif:14: invalid attribute name|dn: uid=x,ou=people,dc=example,dc=com\nc n: x\n
late version|bad.ldif:13: "version:" is only allowed|version: 1\n
no dn|bad.ldif:13: a record must start with "dn:"|uid: x\n
two dns|bad.ldif:14: second "dn:" in one record|dn: uid=x,ou=people,dc=example,dc=com\ndn: uid=y,ou=people,dc=example,dc=com\n
duplicate dn|bad.ldif:13: entry uid=new1,ou=people,dc=example,dc=com already exists|dn: uid=new1,ou=people,dc=example,dc=com\nuid: new1\n
existing dn|bad.ldif:13: entry uid=alice,ou=people,dc=example,dc=com already exists|dn: uid=alice,ou=people,dc=example,dc=com\nuid: alice\n
invalid dn|bad.ldif:13: invalid DN|dn: this is no dn\nuid: x\n
stray cr|bad.ldif:14: stray carriage return|dn: uid=x,ou=people,dc=example,dc=com\ncn: a\rb\n
EOF
# Failures that need bytes a here-doc cannot carry.
printf '%s\n%s\n\0\n' "$good" "dn: uid=x,$P" >"$tmp/bad.ldif"
run "import NUL" 1 "" import "$tmp/bad.ldif";   err_has "import NUL" "bad.ldif:14: NUL byte"
printf ' continued\ndn: uid=x,%s\n' "$P" >"$tmp/bad.ldif"
run "import leading continuation" 1 "" import "$tmp/bad.ldif"
err_has "import leading continuation" "bad.ldif:1: continuation line"
printf 'version: 2\n\ndn: uid=x,%s\n' "$P" >"$tmp/bad.ldif"
run "import version 2" 1 "" import "$tmp/bad.ldif"; err_has "import version 2" "bad.ldif:1: unsupported LDIF version"
run "import missing file" 1 "" import "$tmp/nope.ldif"; err_has "import missing file" "cannot open $tmp/nope.ldif"
export_body "$tmp/store" >"$tmp/after.ldif"
same "byte-level failures leave the store unchanged" "$tmp/before.ldif" "$tmp/after.ldif"
want_entries "count after failed imports" "$tmp/store" 9

# ---- good imports: stdin, CRLF, version line, --replace ----
run "init s2" 0 "" --store "$tmp/s2" init --suffix "$SUF"
printf 'version: 1\r\n# comment\r\n\r\n%s' "$(printf '%s' "$good" | sed 's/$/\r/')" >"$tmp/crlf.ldif"
run "import CRLF from stdin" 0 "$(cat "$tmp/crlf.ldif")" --store "$tmp/s2" import -
out_has "import CRLF from stdin" "imported 2 entries from <stdin>"
run "show CRLF entry" 0 "" --store "$tmp/s2" show "uid=new2,$P"
out_has "show CRLF entry" "sn: new2"
if grep -q $'\r' "$tmp/out"; then bad "CRLF import kept a carriage return"; else ok; fi
run "import existing without --replace" 1 "" import "$DATA/slapcat-example.ldif"
run "import --replace" 0 "" import --replace "$DATA/slapcat-example.ldif"
want_entries "count after --replace" "$tmp/store" 9
export_body "$tmp/store" >"$tmp/after.ldif"
same "--replace with the same data changes nothing" "$tmp/before.ldif" "$tmp/after.ldif"

# ---- export -> import round trip ----
for s in store s389; do
	run "export $s" 0 "" --store "$tmp/$s" export -o "$tmp/$s.export.ldif"
	run "init rt-$s" 0 "" --store "$tmp/rt-$s" init --suffix "$SUF"
	run "re-import $s" 0 "" --store "$tmp/rt-$s" import "$tmp/$s.export.ldif"
	export_body "$tmp/$s" >"$tmp/a.ldif"
	export_body "$tmp/rt-$s" >"$tmp/b.ldif"
	same "round trip $s" "$tmp/a.ldif" "$tmp/b.ldif"
	want_entries "round trip count $s" "$tmp/rt-$s" "$(entries "$tmp/$s")"
done
grep -q '^userPassword:: ' "$tmp/store.export.ldif" && ok || bad "export does not base64 userPassword"
grep -q '^dn:: ' "$tmp/store.export.ldif" && ok || bad "export does not base64 a UTF-8 DN"
grep -q '^title:: ' "$tmp/store.export.ldif" && ok || bad "export does not base64 a value with a leading space"
# slapadd takes a "version:" line for an entry without a DN.
grep -q '^version:' "$tmp/store.export.ldif" && bad "export has a version line" || ok
# Parents before children: each DN's parent appears earlier in the file.
if awk '/^dn: /{ dn=substr($0,5); p=dn; sub(/^[^,]*,/, "", p); if (p != "dc=com" && dn != "dc=example,dc=com" && !(p in seen)) { print "orphan " dn; bad=1 } seen[dn]=1 } END { exit bad }' "$tmp/store.export.ldif"; then ok; else bad "export lists a child before its parent"; fi
run "verify after round trip" 0 "bob pass 2"$'\n' --store "$tmp/rt-store" verify "uid=bob,$P"
out_has "verify after round trip" "ok {CRYPT}"

# ---- operational attributes (the checks of their form and of slapadd's
# are in test_slapd_import): --no-op-attrs keeps the LDIF as it is;
# --replace keeps entryUUID and createTimestamp, and modifyTimestamp and
# entryCSN of an entry that does not change ----
opv() { grep -i "^$2: " "$1" | cut -d' ' -f2; }   # opv FILE TYPE: the values
printf '%s\n' "$good" >"$tmp/hand.ldif"
run "init s-ops" 0 "" --store "$tmp/s-ops" init --suffix "$SUF"
run "init s-asis" 0 "" --store "$tmp/s-asis" init --suffix "$SUF"
run "import --no-op-attrs" 0 "" --store "$tmp/s-asis" import --no-op-attrs "$tmp/hand.ldif"
run "show --no-op-attrs" 0 "" --store "$tmp/s-asis" show "uid=new1,$P"
out_lacks "show --no-op-attrs" "entryUUID:"; out_lacks "show --no-op-attrs" "Timestamp:"
out_lacks "show --no-op-attrs" "entryCSN:"
run "import op attrs" 0 "" --store "$tmp/s-ops" import "$tmp/hand.ldif"
for u in new1 new2; do
	run "show op attrs $u" 0 "" --store "$tmp/s-ops" show "uid=$u,$P"
	cp "$tmp/out" "$tmp/ops1.$u"
	for t in entryUUID createTimestamp modifyTimestamp entryCSN; do
		[[ $(opv "$tmp/out" $t | wc -l) == 1 ]] && ok || bad "import gave uid=$u $(opv "$tmp/out" $t | wc -l) $t values, want 1"
	done
done
sleep 1.1   # a later second: a new modifyTimestamp would show
printf '%s\n' "$good" | sed 's/^sn: new2$/sn: new2 changed/' >"$tmp/hand2.ldif"
run "import --replace op attrs" 0 "" --store "$tmp/s-ops" import --replace "$tmp/hand2.ldif"
for u in new1 new2; do
	run "show replaced $u" 0 "" --store "$tmp/s-ops" show "uid=$u,$P"
	for t in entryUUID createTimestamp; do
		[[ $(opv "$tmp/out" $t) == "$(opv "$tmp/ops1.$u" $t)" ]] && ok || bad "--replace changed $t of uid=$u"
	done
done
run "show unchanged new1" 0 "" --store "$tmp/s-ops" show "uid=new1,$P"
same "--replace of an unchanged entry keeps it" "$tmp/ops1.new1" "$tmp/out"
run "show replaced new2" 0 "" --store "$tmp/s-ops" show "uid=new2,$P"
out_has "show replaced new2" "sn: new2 changed"
for t in modifyTimestamp entryCSN; do
	[[ $(opv "$tmp/out" $t) > "$(opv "$tmp/ops1.new2" $t)" ]] && ok ||
		bad "--replace of a changed entry: $t '$(opv "$tmp/out" $t)' not after '$(opv "$tmp/ops1.new2" $t)'"
done

# ---- user add ----
run "user add" 0 "pw-new-1"$'\n' user add "uid=newbie,$P" --attr mail=newbie@example.com --attr description=a=b --password-stdin
run "show new user" 0 "" show "uid=newbie,$P"
for want in "objectClass: inetOrgPerson" "objectClass: top" "uid: newbie" "cn: newbie" "sn: newbie" \
	    "mail: newbie@example.com" "description: a=b" "userPassword: {SSHA512} (hidden)"; do
	out_has "show new user" "$want"
done
# the operational attributes import gives (lfe_ctl_opattrs_add)
for t in entryUUID createTimestamp modifyTimestamp entryCSN; do
	[[ $(opv "$tmp/out" $t | wc -l) == 1 ]] && ok || bad "user add gave $(opv "$tmp/out" $t | wc -l) $t values, want 1"
done
[[ $(opv "$tmp/out" entryUUID) =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] && ok ||
	bad "user add's entryUUID '$(opv "$tmp/out" entryUUID)' is not a version 4 UUID"
run "verify new user" 0 "pw-new-1"$'\n' verify "uid=newbie,$P";  out_has "verify new user" "ok {SSHA512}"
run "verify new user wrong" 1 "pw-new-2"$'\n' verify "uid=newbie,$P"
run "user add twice" 1 "x"$'\n' user add "uid=newbie,$P" --password-stdin; err_has "user add twice" "already exists"
run "user add outside suffix" 1 "x"$'\n' user add "uid=x,dc=other" --password-stdin
err_has "user add outside suffix" "outside the suffix"
run "user add --scheme" 0 "pw2"$'\n' --scheme '{SSHA}' user add "uid=u2,$P" --password-stdin
run "verify --scheme user" 0 "pw2"$'\n' verify "uid=u2,$P";   out_has "verify --scheme user" "ok {SSHA}"
LDAPFE_SCHEME=ssha256 run "user add LDAPFE_SCHEME" 0 "pw3"$'\n' user add "uid=u3,$P" --password-stdin
run "verify env-scheme user" 0 "pw3"$'\n' verify "uid=u3,$P";  out_has "verify env-scheme user" "ok {SSHA256}"
run "user add unsupported scheme" 2 "pw"$'\n' --scheme '{NOPE}' user add "uid=u4,$P" --password-stdin
err_has "user add unsupported scheme" "{NOPE} (from --scheme) is not supported"
run "user add empty password" 1 "" user add "uid=u5,$P" --password-stdin
err_has "user add empty password" "empty password refused"
run "user add objectClass given" 0 "" user add "cn=svc,$SUF" --attr objectClass=applicationProcess
run "show given objectClass" 0 "" show "cn=svc,$SUF"
out_has "show given objectClass" "cn: svc"; out_lacks "show given objectClass" "inetOrgPerson"
run "user add prehashed" 0 "" user add "uid=u6,$P" --attr 'userPassword={SHA}ETACQ7ck/OWV+V1QYAPq+gFvjZM='
run "verify prehashed" 0 "Carol!"$'\n' verify "uid=u6,$P"; out_has "verify prehashed" "ok {SHA}"

# ---- passwd: new one works, old one no longer ----
run "passwd alice" 0 "Wonderland 2"$'\n' passwd "uid=alice,$P"
run "verify new alice" 0 "Wonderland 2"$'\n' verify "uid=alice,$P";  out_has "verify new alice" "ok {SSHA512}"
run "verify old alice" 1 "alice-secret"$'\n' verify "uid=alice,$P"; out_has "verify old alice" "invalid"
run "passwd crypt" 0 "crypted"$'\n' --scheme '{CRYPT}' passwd "uid=bob,$P"
run "verify crypt" 0 "crypted"$'\n' verify "uid=bob,$P";  out_has "verify crypt" "ok {CRYPT}"
run "verify old bob" 1 "bob pass 2"$'\n' verify "uid=bob,$P"
run "passwd missing" 1 "x"$'\n' passwd "uid=nobody,$P"; err_has "passwd missing" "no entry uid=nobody"
run "passwd empty" 1 "" passwd "uid=alice,$P";   err_has "passwd empty" "empty password refused"
run "verify alice kept" 0 "Wonderland 2"$'\n' verify "uid=alice,$P"
# reindex rebuilds the bind index (new key); the entries answer as before
# (verify reads the entry itself: the index is tested in test_bindjob/test_bindindex)
run "reindex" 0 "" reindex
run "reindex extra arg" 2 "" reindex x
run "info after reindex" 0 "" info; out_has "info after reindex" "bind index: yes"
run "verify alice after reindex" 0 "Wonderland 2"$'\n' verify "uid=alice,$P"
run "verify old alice after reindex" 1 "alice-secret"$'\n' verify "uid=alice,$P"
run "verify crypt after reindex" 0 "crypted"$'\n' verify "uid=bob,$P"

# ---- passwords typed on a terminal: prompts, no echo, confirmation ----
# ttyrun.py ANSWER... -- CMD...: runs CMD with a pty as stdin and stderr, types
# one answer after each prompt, prints what the terminal showed, exits with
# CMD's status (99 if a typed password was echoed, 98 on a timeout).
cat >"$tmp/ttyrun.py" <<'PY'
import os, pty, select, subprocess, sys, time
sep = sys.argv.index('--')
answers, cmd = sys.argv[1:sep], sys.argv[sep + 1:]
m, s = pty.openpty()
p = subprocess.Popen(cmd, stdin=s, stderr=s, stdout=subprocess.DEVNULL, close_fds=True)
os.close(s)
seen, deadline = b'', time.time() + 20
def more():
    global seen
    r, _, _ = select.select([m], [], [], max(0.0, deadline - time.time()))
    if not r:
        return False
    try:
        chunk = os.read(m, 4096)
    except OSError:
        return False
    seen += chunk
    return bool(chunk)
for a in answers:
    start = len(seen)
    while not seen[start:].rstrip(b' ').endswith(b':'):
        if not more():
            sys.stdout.write(seen.decode(errors='replace')); sys.exit(98)
    os.write(m, a.encode() + b'\n')
try:
    rc = p.wait(timeout=max(1.0, deadline - time.time()))
except subprocess.TimeoutExpired:
    p.kill(); p.wait(); sys.exit(98)
while more():
    pass
sys.stdout.write(seen.decode(errors='replace'))
sys.exit(99 if any(a.encode() in seen for a in answers) else rc)
PY
tty_run() {   # tty_run NAME WANT_RC ANSWER... -- ARGS...
	local name=$1 want=$2 rc
	shift 2
	local answers=()
	while [[ $1 != -- ]]; do answers+=("$1"); shift; done
	shift
	timeout 60 /usr/bin/python3 "$tmp/ttyrun.py" "${answers[@]}" -- "$CTL" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [[ $rc == "$want" ]]; then ok; else bad "$name: exit $rc, want $want"; sed 's/^/    tty: /' "$tmp/out" >&2; fi
}
tty_run "tty passwd" 0 "Typed pw 7" "Typed pw 7" -- passwd "uid=alice,$P"
out_has "tty passwd" "New password:"; out_has "tty passwd" "Retype new password:"
run "verify typed password" 0 "Typed pw 7"$'\n' verify "uid=alice,$P"
tty_run "tty passwd mismatch" 1 "first try" "second try" -- passwd "uid=alice,$P"
out_has "tty passwd mismatch" "do not match"
run "mismatch keeps the password" 0 "Typed pw 7"$'\n' verify "uid=alice,$P"
tty_run "tty verify" 0 "Typed pw 7" -- verify "uid=alice,$P"
out_has "tty verify" "Password:"
tty_run "tty verify wrong" 1 "Typed pw 8" -- verify "uid=alice,$P"

# ---- del ----
n=$(entries "$tmp/store")
run "del carol" 0 "" del "uid=carol,$P"
run "show deleted" 1 "" show "uid=carol,$P"
run "verify deleted" 1 "Carol!"$'\n' verify "uid=carol,$P"
run "del again" 1 "" del "uid=carol,$P";        err_has "del again" "no entry uid=carol"
want_entries "count after del" "$tmp/store" $((n - 1))
run "global options after the command" 0 "" info --store "$tmp/s389"
out_has "global options after the command" "entries: 5"

# ---- index and upgrade ----
run "info lists indexes" 0 "" info
out_has "info lists indexes" "indexes: uid uidnumber gidnumber cn mail memberuid member uniquemember memberof objectclass entryuuid"
run "index list" 0 "" index list
out_has "index list" "uidnumber eq integerMatch keys="
out_has "index list" "member eq distinguishedNameMatch keys="
out_has "index list" "memberuid eq caseExactMatch keys="
run "index add" 0 "" index add loginShell eq
run "index add again" 1 "" index add LOGINSHELL;  err_has "index add again" "already indexed"
run "index add secret" 1 "" index add userPassword; err_has "index add secret" "can be indexed"
run "index add bad kind" 2 "" index add sn approx; err_has "index add bad kind" "not supported"
# Presence and substring kinds: kept with the declaration, built, listed,
# dropped alone (the equality keys of cn stay exactly as they were).
cn_keys() { "$CTL" index list | sed -n 's/^cn eq[a-z,]* caseIgnoreMatch keys=\([0-9]*\) .*/\1/p'; }
cn_before=$(cn_keys)
run "index add pres" 0 "" index add sn pres
run "index add sub" 0 "" index add cn sub
run "index add sub again" 1 "" index add cn sub;  err_has "index add sub again" "already indexed"
run "index add sub integer" 1 "" index add uidNumber sub; err_has "index add sub integer" "no substring form"
run "index add sub dn" 1 "" index add member sub; err_has "index add sub dn" "no substring form"
run "index list kinds" 0 "" index list
out_has "index list kinds" "sn pres caseIgnoreMatch keys="
out_has "index list kinds" "cn eq,sub caseIgnoreMatch keys="
run "info kinds" 0 "" info;                       out_has "info kinds" " cn(eq,sub) "
out_has "info kinds" " sn(pres)"
cn_sub=$(cn_keys)
if [[ -n $cn_before && $cn_sub -gt $cn_before ]]; then ok; else bad "cn sub keys: $cn_before then $cn_sub"; fi
run "index del sub" 0 "" index del cn sub
run "index del sub again" 1 "" index del cn sub;  err_has "index del sub again" "not indexed"
if [[ $(cn_keys) == "$cn_before" ]]; then ok; else bad "cn keys after del sub: $(cn_keys), want $cn_before"; fi
run "index del pres" 0 "" index del sn
run "index list after del" 0 "" index list;       out_lacks "index list after del" "sn pres"
run "index list after add" 0 "" index list;       out_has "index list after add" "loginshell eq caseExactMatch keys="
run "index del" 0 "" index del loginshell
run "index del again" 1 "" index del loginshell;  err_has "index del again" "not indexed"
run "index no verb" 2 "" index
run "upgrade format 3" 0 "" upgrade;              out_has "upgrade format 3" "already format 3"
# A format 2 store written by the build before format 3 (main at 2026-12-05:
# ldapfectl init + import of slapcat-example.ldif), LMDB's data.mdb, xz'd.
mkdir -p "$tmp/f2"
python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' \
	"$DATA/store-format2.mdb.xz" "$tmp/f2/data.mdb"
run "format 2 info" 0 "" --store "$tmp/f2" info;  out_has "format 2 info" "format: 2"
out_has "format 2 info" "indexes: uid mail cn objectclass"
export_body "$tmp/f2" >"$tmp/f2.before"
run "format 2 index add" 1 "" --store "$tmp/f2" index add gecos
err_has "format 2 index add" "run ldapfectl upgrade"
run "upgrade" 0 "" --store "$tmp/f2" upgrade
run "upgraded info" 0 "" --store "$tmp/f2" info;  out_has "upgraded info" "format: 3"
out_has "upgraded info" "indexes: uid uidnumber gidnumber cn mail memberuid member"
run "upgraded index list" 0 "" --store "$tmp/f2" index list
out_has "upgraded index list" "uidnumber eq integerMatch keys=4 "
out_has "upgraded index list" "member eq distinguishedNameMatch keys=3 "
out_has "upgraded index list" "entryuuid eq caseIgnoreMatch keys=9 "
export_body "$tmp/f2" >"$tmp/f2.after"
same "upgrade keeps every entry" "$tmp/f2.before" "$tmp/f2.after"
run "upgraded index add" 0 "" --store "$tmp/f2" index add gecos

echo "test_ldapfectl: $passed passed, $failed failed"
((failed == 0))
