#!/usr/bin/env bash
# ldapfe-gen --tls against ldapfe's LDAPS port (ldaps_ports = 636, a P-256
# certificate for 10.99.32.1 from a throwaway CA made here with the openssl
# CLI), over af_packet between the test's namespaces; each run short and at
# a fixed rate:
#   persistent over TLS 1.3, the server verified against the CA and its
#     address: every answer right, one full handshake per connection, each
#     connection's records handed over to ldapfe's record layer after its
#     handshake (gen/tlsc.h "Records"; the server's tickets skipped); the
#     same with --tls-records openssl: nothing handed over;
#   session with --tls-resume (a session per connection slot): every answer
#     right, resumed handshakes after the first of each slot, none refused;
#   session without resumption: full handshakes only, each handed over;
#   session over TLS 1.2 with one shared session: resumed, TLSv1.2;
#   mix over TLS, with resumption (OpenSSL's records) and without (ldapfe's):
#     the shares of wrong and unknown answers (49 for each, else a mismatch);
#   StartTLS on port 389 (--starttls), verified and resumed;
#   a CA that did not sign the server: every handshake fails, counted with
#     the reason, exit 1; --tls against the cleartext port: failures, exit 1.
source "$(dirname "$0")/lib.sh"
lfe_init gentls 32
command -v openssl >/dev/null || { echo "SKIP: no openssl CLI"; exit 77; }
GEN=${LFE_GEN:-$LFE_BUILD/gen/ldapfe-gen}   # LFE_GEN: another build of it (ASan)
[[ -x $GEN ]] || { echo "SKIP: $GEN not built"; exit 77; }
USERS=50
lfe_make_store
lfe_make_users "$USERS"

# ---- certificates ----
P=$LFE_WORK/pki
mkdir -p "$P"
ossl() { openssl "$@" >/dev/null 2>&1 || lfe_fail "openssl $1 failed"; }
for ca in ca other; do
	ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/$ca.key" \
		-out "$P/$ca.crt" -days 2 -subj "/CN=ldapfe test $ca"
done
ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/srv.key" \
	-out "$P/srv.csr" -subj "/CN=$LFE_SADDR"
printf 'subjectAltName = IP:%s\nextendedKeyUsage = serverAuth\n' "$LFE_SADDR" > "$P/ext"
ossl x509 -req -in "$P/srv.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
	-out "$P/srv.crt" -days 2 -extfile "$P/ext"

conf=$(lfe_conf 1)
sed -i 's/^port = 389$/port = 389\nldaps_ports = 636/' "$conf"
printf '[tls]\ncertificate = %s\nkey = %s\n' "$P/srv.crt" "$P/srv.key" >> "$conf"
lfe_start "$conf" 0
grep -q "LDAPS port(s) 636" "$LFE_LOG" || lfe_fail "LDAPS port not announced"
# The generator owns the client end from here: the kernel must not answer
# (RST) the segments meant for it.
lfe_cli ip addr flush dev veth0

# gen NAME ARGS...: ldapfe-gen in the client namespace on lcore 1, bounded;
# JSON in WORK/NAME.json, output in WORK/NAME.log, exit status in GEN_RC.
# Generous ARP/connect waits: the daemon's core is shared at load 10-20.
gen() {
	local name=$1; shift
	GEN_RC=0
	lfe_cli timeout 60 "$GEN" -l 1 --no-pci --no-huge -m 256 --file-prefix "$LFE_PREFIX-gen" \
		--log-level=lib.eal:error --vdev "net_af_packet1,iface=veth0,qpairs=1" -- \
		--port net_af_packet1 --src-ip "$LFE_CADDR/24" --dst-ip "$LFE_SADDR" --users "$USERS" \
		--user-fmt "uid=user%u,ou=people,$LFE_SUFFIX" --password-fmt 'pw-%u' --quiet \
		--arp-timeout-ms 10000 --connect-timeout-ms 10000 \
		--json "$LFE_WORK/$name.json" "$@" > "$LFE_WORK/$name.log" 2>&1 || GEN_RC=$?
	rm -rf "/var/run/dpdk/$LFE_PREFIX-gen"   # lib.sh's trap knows only the daemon's prefix
}
# jget NAME EXPR: a Python expression over the JSON report j.
jget() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$LFE_WORK/$1.json" "$2"; }
# check NAME EXPR: the run exited 0 with no mismatch, and EXPR holds.
check() {
	local name=$1 expr=$2
	((GEN_RC == 0)) || lfe_fail "$name: ldapfe-gen exit $GEN_RC: $(tail -n 6 "$LFE_WORK/$name.log")"
	[[ $(jget "$name" 'j["errors"]["total"] == 0 and j["binds"] == j["binds_ok"] + j["binds_invalid"]') == True ]] ||
		lfe_fail "$name: mismatches: $(jget "$name" 'j["errors"]')"
	[[ $(jget "$name" "($expr)") == True ]] || lfe_fail "$name: not ($expr): $(jget "$name" 'j["tls"]'), binds $(jget "$name" 'j["binds"]'), sessions $(jget "$name" 'j["sessions"]')"
	lfe_log "ok: $name: $(grep -h 'ldapfe-gen: tls\|ldapfe-gen: done' "$LFE_WORK/$name.log" | sed 's/ldapfe-gen: //' | tr '\n' ' ')"
}

# Persistent, verified: 4 connections, 300 binds/s for 2 s.
gen persistent --tls --tls-version 1.3 --tls-ca "$P/ca.crt" --workload persistent --conns 4 \
	--rate 300 --duration 2
check persistent 'j["binds_ok"] >= 200 and j["binds_invalid"] == 0 and j["tls"]["protocol"] == "TLSv1.3"
	and j["tls"]["handshakes_full"] == 4 and j["tls"]["handshakes_resumed"] == 0
	and j["tls"]["handshake_failures"] == 0 and j["tls"]["record_errors"] == 0
	and j["tls"]["records"] == "ldapfe" and j["tls"]["handovers"] == 4
	and j["tls"]["handover_declined"] == 0 and j["tls"]["tickets_skipped"] >= 4'

# The same on OpenSSL's records throughout: nothing handed over.
gen persistent_ossl --tls --tls-version 1.3 --tls-records openssl --workload persistent --conns 4 \
	--rate 300 --duration 2
check persistent_ossl 'j["binds_ok"] >= 200 and j["tls"]["records"] == "openssl"
	and j["tls"]["handovers"] == 0 and j["tls"]["tickets_skipped"] == 0
	and j["tls"]["handshakes_full"] == 4 and j["tls"]["record_errors"] == 0'

# Session with a saved session per slot: after the first handshake of
# each of the 4 slots, the rest resume (TLS 1.3 tickets from ldapfe).
gen resume --tls --tls-resume --workload session --conns 4 --rate 100 --duration 3
check resume 'j["sessions"] >= 90 and j["tls"]["handshakes_full"] <= 8
	and j["tls"]["handshakes_resumed"] >= j["sessions"] - 8 and j["tls"]["resume_refused"] == 0
	and j["tls"]["records"] == "openssl" and j["tls"]["handovers"] == 0'

# Session without resumption: full handshakes only.
gen full --tls --workload session --conns 4 --rate 100 --duration 2
check full 'j["sessions"] >= 60 and j["tls"]["handshakes_resumed"] == 0
	and j["tls"]["handshakes_full"] >= j["sessions"]
	and j["tls"]["handovers"] == j["tls"]["handshakes_full"] and j["tls"]["record_errors"] == 0'

# TLS 1.2, one session shared by every slot.
gen shared12 --tls --tls-version 1.2 --tls-resume=shared --workload session --conns 4 --rate 100 \
	--duration 2
check shared12 'j["sessions"] >= 60 and j["tls"]["protocol"] == "TLSv1.2"
	and j["tls"]["handshakes_resumed"] >= j["sessions"] - 8 and j["tls"]["resume_refused"] == 0'

# Mix over TLS: 20 % wrong passwords, 30 % unknown DNs.
gen mix --tls --tls-resume --workload mix --conns 8 --rate 400 --duration 2 --wrong-pct 20 \
	--unknown-pct 30 --seed 7
check mix 'abs(j["binds_invalid"] / j["binds"] - 0.5) < 0.07 and j["binds"] >= 300 and j["sessions"] >= 30'
gen mixho --tls --workload mix --conns 8 --rate 400 --duration 2 --wrong-pct 20 --unknown-pct 30 \
	--seed 7
check mixho 'abs(j["binds_invalid"] / j["binds"] - 0.5) < 0.07 and j["binds"] >= 300
	and j["sessions"] >= 30 and j["tls"]["handovers"] >= j["sessions"]'

# StartTLS on the LDAP port (389), verified, sessions resumed.
gen starttls --starttls --tls-ca "$P/ca.crt" --tls-resume --workload session --conns 4 --rate 100 \
	--duration 2
check starttls 'j["sessions"] >= 60 and j["tls"]["handshake_failures"] == 0
	and j["tls"]["handshakes_resumed"] >= j["sessions"] - 8'

# A CA that did not sign the server's certificate: every handshake fails,
# with the reason; no bind is made; exit 1. The errors count the failures
# whose connections closed inside the measured window; the handshake count
# covers the whole run (connections fail while they are being opened too).
gen wrongca --tls --tls-ca "$P/other.crt" --workload persistent --conns 2 --rate 50 --duration 1
((GEN_RC == 1)) || lfe_fail "wrongca: exit $GEN_RC, want 1"
[[ $(jget wrongca '(j["tls"]["handshake_failures"] >= 2 and j["tls"]["handshakes_full"] == 0
	and j["binds"] == 0 and 1 <= j["errors"]["tls"] <= j["tls"]["handshake_failures"]
	and "certificate" in j["tls"]["first_failure"])') == True ]] ||
	lfe_fail "wrongca: $(jget wrongca 'j["tls"], j["errors"]')"
lfe_log "ok: wrong CA: $(jget wrongca 'j["tls"]["handshake_failures"]') handshakes refused: $(jget wrongca 'j["tls"]["first_failure"]')"

# TLS against the cleartext port: the server takes the ClientHello for a
# bad LDAP PDU and closes; counted as handshake failures, exit 1.
gen plain389 --tls --dport 389 --workload persistent --conns 2 --rate 50 --duration 1
((GEN_RC == 1)) || lfe_fail "plain389: exit $GEN_RC, want 1"
[[ $(jget plain389 'j["tls"]["handshake_failures"] >= 2 and j["binds"] == 0') == True ]] ||
	lfe_fail "plain389: $(jget plain389 'j["tls"], j["errors"]')"
lfe_log "ok: TLS to the cleartext port fails the handshake"

lfe_stop
lfe_eq "SIGTERM exit status" "$LFE_STOP_RC" 0
echo "PASS test_gen_tls"
