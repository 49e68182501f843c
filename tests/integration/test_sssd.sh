#!/usr/bin/env bash
# SSSD itself as the client (issues 25 and 26): Debian's sssd 2.8 (id and
# auth providers ldap, StartTLS with the test CA, enumerate off, a fresh
# cache per run) looks users and groups up through ldapfe, and the same LDIF
# loaded into a real slapd gives the same answers. 1,000 posixAccounts and
# groups of 40, 600 and 1,000 members, in both layouts: rfc2307 (posixGroup
# memberUid, ou=groups) and rfc2307bis (posixGroup with member DNs,
# ou=bisgroups). Through SSSD's own NSS and PAM modules:
#  - getent -s sss passwd by uid number (the LAST user: SSSD's
#    (&(uidNumber=N)(objectclass=posixAccount)...) filter) and by name;
#  - getent -s sss initgroups for users in the 40, 600 and 1,000 groups
#    (user39 and user599 past the 32nd value: on the code before issue 25
#    they were in none), in the 600 and 1,000 ones, in the 1,000 one only;
#  - getent -s sss group of each group, every member (before issue 25 the
#    1,000-member group showed 508 members with rfc2307, none with bis);
#  - pamtester through pam_sss: the right password authenticates, a wrong
#    one fails.
# Each answer is compared with what the LDIF says, for ldapfe and for slapd.
# LFE_SSSD_USERS=N (manual runs) makes N users: past search_max_candidates
# (10,000 by default) SSSD's lookup by uid number, unindexed, ends with
# adminLimitExceeded and SSSD says the user does not exist (issue 26).
#
# The host's NSS and PAM are never used nor changed: sssd and every query
# run in a mount namespace of their own (inside the client network
# namespace) with /etc/sssd, /var/lib/sss (cache, pipes), /var/log/sssd,
# /etc/pam.d, /etc/nsswitch.conf and /run (sssd.pid) bind-mounted from the
# work dir; the queries enter it with nsenter. sssd is stopped by PID.
source "$(dirname "$0")/lib.sh"
PATH=$PATH:/usr/sbin
for t in sssd slapd slapadd pamtester nsenter unshare getent; do
	command -v "$t" >/dev/null || { echo "SKIP: $t missing (scripts/deps.sh)"; exit 77; }
done
multi=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
[[ -e /usr/lib/$multi/libnss_sss.so.2 ]] || { echo "SKIP: libnss-sss missing (scripts/deps.sh)"; exit 77; }
ls /usr/lib/"$multi"/security/pam_sss.so /lib/"$multi"/security/pam_sss.so >/dev/null 2>&1 ||
	{ echo "SKIP: libpam-sss missing (scripts/deps.sh)"; exit 77; }
lfe_init sssd 170
# LFE_SSSD_USERS (default 1,000, at least 1,000): more users for a manual
# run at scale; the groups stay 40, 600 and 1,000.
NU=${LFE_SSSD_USERS:-1000}
((NU >= 1000)) || lfe_fail "LFE_SSSD_USERS below 1000"
LAST=user$((NU - 1))
LASTNUM=$((10000 + NU - 1))
t_start=$(date +%s)

# The directory, and what each lookup must answer (from the LDIF alone).
ldif=$LFE_WORK/dir.ldif
"$PY" - "$LFE_SUFFIX" "$LFE_WORK" "$NU" >"$ldif" <<'EOF'
import base64, hashlib, sys
suf, work = sys.argv[1], sys.argv[2]
NU = int(sys.argv[3])
def ssha(pw, salt):
    return "{SSHA}" + base64.b64encode(hashlib.sha1(pw + salt).digest() + salt).decode()
print("dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: example\ndc: example\n" % suf)
for ou in ("people", "groups", "bisgroups"):
    print("dn: ou=%s,%s\nobjectClass: organizationalUnit\nou: %s\n" % (ou, suf, ou))
for i in range(NU):
    print("dn: uid=user%d,ou=people,%s\nobjectClass: inetOrgPerson\nobjectClass: posixAccount\n"
          "uid: user%d\ncn: User %d\nsn: user%d\nuidNumber: %d\ngidNumber: 20000\n"
          "homeDirectory: /home/user%d\nloginShell: /bin/sh\nuserPassword: %s\n"
          % (i, suf, i, i, i, 10000 + i, i, ssha(b"pw-%d" % i, b"s%07d" % i)))
groups = [("users", 0), ("small40", 40), ("mid600", 600), ("big1000", 1000)]
gids = {"rfc2307": {"users": 20000, "small40": 20040, "mid600": 20600, "big1000": 21000},
        "rfc2307bis": {"users": 20000, "small40": 30040, "mid600": 30600, "big1000": 31000}}
for name, n in groups:
    print("dn: cn=%s,ou=groups,%s\nobjectClass: posixGroup\ncn: %s\ngidNumber: %d"
          % (name, suf, name, gids["rfc2307"][name]))
    for i in range(n):
        print("memberUid: user%d" % i)
    print()
    # rfc2307bis: posixGroup with member DNs (extensibleObject lets slapd's
    # nis.schema hold both; ldapfe stores what it is given).
    print("dn: cn=%s,ou=bisgroups,%s\nobjectClass: posixGroup\nobjectClass: extensibleObject\n"
          "cn: %s\ngidNumber: %d" % (name, suf, name, gids["rfc2307bis"][name]))
    for i in range(n):
        print("member: uid=user%d,ou=people,%s" % (i, suf))
    print()
last = NU - 1
for schema in ("rfc2307", "rfc2307bis"):
    g = gids[schema]
    with open("%s/expect.%s" % (work, schema), "w") as f:
        def pw(i):
            return "user%d:*:%d:20000:User %d:/home/user%d:/bin/sh" % (i, 10000 + i, i, i)
        f.write("passwd %d: %s\n" % (10000 + last, pw(last)))
        f.write("passwd user0: %s\n" % pw(0))
        f.write("passwd user%d: %s\n" % (last, pw(last)))
        # getent initgroups lists the groups naming the user (not the
        # primary gid of its passwd entry)
        for u in (39, 599, 600, last):
            f.write("initgroups user%d: %s\n" % (u, " ".join(str(x) for x in sorted(
                {g[name] for name, n in groups if u < n}))))
        for name, n in groups[1:]:
            f.write("group %s: %s:*:%d: %d members: %s\n" % (name, name, g[name], n,
                    ",".join(sorted("user%d" % i for i in range(n)))))
        f.write("pam user%d right password: 0\n" % (NU - 2))
        f.write("pam user%d wrong password: 1\n" % (NU - 2))
EOF

# slapd from the same LDIF, StartTLS with the test CA, on the client
# namespace's loopback.
lfe_pki
lfe_pki_cert slapd 127.0.0.1 0x1002 serverAuth
lfe_slapd_start "$ldif" "ldap://127.0.0.1:3389/" "$LFE_CLI" "TLSCACertificateFile $LFE_PKI/ca.crt
TLSCertificateFile $LFE_PKI/slapd.crt
TLSCertificateKeyFile $LFE_PKI/slapd.key" "index objectClass,cn,uid,memberUid,member,uidNumber,gidNumber eq
access to attrs=userPassword by anonymous auth by * none
access to * by * read"

# ldapfe from the same LDIF, StartTLS with the test CA.
mkdir -p "$LFE_STORE"
lfe_ctl init --suffix "$LFE_SUFFIX" >/dev/null
lfe_ctl import "$ldif" >/dev/null
conf=$(lfe_conf 1)
printf '[tls]\ncertificate = %s\nkey = %s\n' "$LFE_PKI/srv.crt" "$LFE_PKI/srv.key" >>"$conf"
lfe_start "$conf" 0
lfe_slapd_wait
lfe_log "stores ready ($(($(date +%s) - t_start)) s)"

# sssd_start URI SCHEMA: sssd in its own mount namespace in the client
# network namespace, a fresh cache; waits (bounded) for its NSS and PAM
# pipes. Sets SSSD_PID and SSSD_DIR.
sssd_start() {
	local uri=$1 schema=$2 base
	base=ou=groups
	[[ $schema == rfc2307bis ]] && base=ou=bisgroups
	SSSD_DIR=$LFE_WORK/sssd-$3
	local D=$SSSD_DIR
	mkdir -p "$D/etc/conf.d" "$D/log" "$D/run" "$D/lib/db" "$D/lib/mc" "$D/lib/pipes/private" \
		"$D/lib/pubconf" "$D/lib/gpo_cache" "$D/lib/secrets" "$D/lib/deskprofile"
	chmod 700 "$D/lib/db" "$D/lib/secrets" "$D/lib/pipes/private"
	cat >"$D/etc/sssd.conf" <<EOF
[sssd]
services = nss, pam
domains = test

[nss]
# no memory cache: every getent reaches the responder
memcache_timeout = 0

[pam]

[domain/test]
id_provider = ldap
auth_provider = ldap
ldap_uri = $uri
ldap_schema = $schema
ldap_search_base = $LFE_SUFFIX
ldap_user_search_base = ou=people,$LFE_SUFFIX
ldap_group_search_base = $base,$LFE_SUFFIX
enumerate = false
cache_credentials = false
ldap_id_use_start_tls = true
ldap_tls_reqcert = demand
ldap_tls_cacert = $LFE_PKI/ca.crt
ldap_network_timeout = 5
ldap_opt_timeout = 20
ldap_search_timeout = 20
ldap_enumeration_search_timeout = 20
EOF
	chmod 600 "$D/etc/sssd.conf"
	cp -a /etc/pam.d "$D/pam.d"
	printf 'auth required pam_sss.so\naccount required pam_sss.so\n' >"$D/pam.d/lfe-sssd-test"
	printf 'passwd: files sss\ngroup: files sss\nshadow: files\n' >"$D/nsswitch.conf"
	: >"$D/sssd.out"
	# ip netns exec, unshare and bash exec in turn: $! is sssd's PID.
	ip netns exec "$LFE_CLI" unshare -m --propagation private bash -c '
		D=$1
		mount -t tmpfs -o mode=755 tmpfs /run
		mount --bind "$D/etc" /etc/sssd
		mount --bind "$D/lib" /var/lib/sss
		mount --bind "$D/log" /var/log/sssd
		mount --bind "$D/pam.d" /etc/pam.d
		mount --bind "$D/nsswitch.conf" /etc/nsswitch.conf
		exec sssd -i -c /etc/sssd/sssd.conf --logger=files -d 0x0070' _ "$D" >"$D/sssd.out" 2>&1 &
	SSSD_PID=$!
	LFE_EXTRA_PIDS="${LFE_EXTRA_PIDS:-} $SSSD_PID"
	for ((i = 0; i < 100; i++)); do
		[[ -S $D/lib/pipes/nss && -S $D/lib/pipes/pam ]] && return 0
		kill -0 "$SSSD_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$D/sssd.out" "$D"/log/*.log >&2 2>/dev/null
	lfe_fail "sssd did not start ($schema, $uri)"
}
sssd_stop() {
	kill -TERM "$SSSD_PID" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do kill -0 "$SSSD_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$SSSD_PID" 2>/dev/null || true
	wait "$SSSD_PID" 2>/dev/null || true
}
# in_sssd CMD...: CMD in sssd's mount (and network) namespace, bounded;
# its time (ms) goes to $TIMES, labelled by its last two words.
in_sssd() {
	local t0 rc=0
	t0=$(date +%s%N)
	nsenter -t "$SSSD_PID" -m -n timeout 30 "$@" || rc=$?
	echo "${*: -2:1} ${*: -1} $((($(date +%s%N) - t0) / 1000000))" >>"$TIMES"
	return $rc
}

# lookups OUT: each lookup once, in an order where no answer can come from
# what an earlier one cached (by number first, groups after initgroups:
# SSSD stores the groups initgroups finds as incomplete, expired).
lookups() {
	local out=$1 u rc g
	{
		echo "passwd $LASTNUM: $(in_sssd getent -s sss passwd $LASTNUM)"
		echo "passwd user0: $(in_sssd getent -s sss passwd user0)"
		echo "passwd $LAST: $(in_sssd getent -s sss passwd $LAST)"
		for u in user39 user599 user600 $LAST; do
			echo "initgroups $u: $(in_sssd getent -s sss initgroups "$u" | tr -s ' \t' '\n' | tail -n +2 | sort -n | xargs)"
		done
		for g in small40 mid600 big1000; do
			echo "group $g: $(in_sssd getent -s sss group "$g" | "$PY" -c '
import sys
line = sys.stdin.read().strip()
if line:
    n, p, gid, m = line.split(":", 3)
    m = sorted(x for x in m.split(",") if x)
    print("%s:%s:%s: %d members: %s" % (n, p, gid, len(m), ",".join(m)))')"
		done
		rc=0; echo "pw-$((NU - 2))" | in_sssd pamtester lfe-sssd-test "user$((NU - 2))" authenticate >/dev/null 2>&1 || rc=$?
		echo "pam user$((NU - 2)) right password: $rc"
		rc=0; echo "pw-$((NU - 3))" | in_sssd pamtester lfe-sssd-test "user$((NU - 2))" authenticate >/dev/null 2>&1 || rc=$?
		echo "pam user$((NU - 2)) wrong password: $rc"
	} >"$out"
}

# check WHAT SCHEMA OUT: OUT is what the LDIF says, line by line.
check() {
	local what=$1 schema=$2 out=$3 exp=$LFE_WORK/expect.$2 line
	if ! cmp -s "$exp" "$out"; then
		set +o pipefail
		diff "$exp" "$out" | cut -c1-300 >&2
		grep -hE "\(0x00[1-4]0\)" "$SSSD_DIR"/log/*.log 2>/dev/null | grep -v memcache | tail -20 | cut -c1-300 >&2
		set -o pipefail
		lfe_fail "$what $schema: SSSD's answers differ from the LDIF (above: < wanted, > got)"
	fi
	while read -r line; do lfe_log "ok: $what $schema ${line:0:110}"; done <"$out"
}

n=0
for schema in rfc2307 rfc2307bis; do
	for srv in slapd ldapfe; do
		uri=ldap://127.0.0.1:3389
		[[ $srv == ldapfe ]] && uri=ldap://$LFE_SADDR
		n=$((n + 1))
		t0=$(date +%s%N)
		sssd_start "$uri" "$schema" "$n"
		TIMES=$LFE_WORK/times.$srv.$schema
		: >"$TIMES"
		lookups "$LFE_WORK/got.$srv.$schema"
		sssd_stop
		t1=$(date +%s%N)
		lfe_log "$srv $schema: sssd start, lookups and stop in $(((t1 - t0) / 1000000)) ms"
		lfe_log "$srv $schema: ms per lookup: $(tr ' ' : <"$TIMES" | sed 's/:\([0-9]*\)$/ \1/' | xargs)"
		check "$srv" "$schema" "$LFE_WORK/got.$srv.$schema"
	done
done
# SSSD's lookup by uid number, straight from ldapsearch: the last user
# (issue 26 saw adminLimitExceeded here at 1,000 users before results were
# streamed); its result code, entries and time, for each server.
flt="(&(uidNumber=$LASTNUM)(objectclass=posixAccount)(uid=*)(&(uidNumber=*)(!(uidNumber=0))))"
for url in "ldap://$LFE_SADDR" ldap://127.0.0.1:3389; do
	t0=$(date +%s%N)
	rc=0
	out=$(lfe_cli timeout 30 ldapsearch -x -LLL -H "$url" -b "$LFE_SUFFIX" "$flt" uid) || rc=$?
	t1=$(date +%s%N)
	lfe_eq "by number at $url (ldapsearch, $(((t1 - t0) / 1000000)) ms)" \
		"rc $rc $(grep '^dn:' <<<"$out" || true)" "rc 0 dn: uid=$LAST,ou=people,$LFE_SUFFIX"
done
lfe_log "total $(($(date +%s) - t_start)) s"
echo "PASS"
