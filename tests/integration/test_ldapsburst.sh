#!/usr/bin/env bash
# LDAPS bursts from one address succeed with the shipped defaults
# (handshake_queue, handshake_per_source, share_pressure_pct), for an
# RSA-2048 and an ECDSA P-256 certificate: 50, 100 and 200 simultaneous
# LDAPS connections from one address (python3 ssl, kernel sockets), each
# a full handshake and a bind, all bind; admission counts handshakes (at
# the client's hello), not steps, so no handshake is reset after the
# client finished its part. Then a handshake flood from one address (400
# at once, twice) while another address binds over LDAPS: the other
# address's binds all succeed (its p50/p99 printed).
# Fails on the code before: handshake_per_source = 16 outstanding steps
# refused most of each burst (RSA-2048: 16-20 of 50 bound).
source "$(dirname "$0")/lib.sh"
lfe_init ldapsburst 113
BURST=$LFE_ROOT/tests/integration/ldapburst.py
command -v openssl >/dev/null || { echo "SKIP: no openssl CLI"; exit 77; }
lfe_make_store
DN=$(lfe_dn alice)
P=$LFE_WORK/pki
mkdir -p "$P"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/rsa.key" -out "$P/rsa.crt" -days 2 \
	-subj "/CN=$LFE_SADDR" -addext "subjectAltName = IP:$LFE_SADDR" >/dev/null 2>&1 || lfe_fail "openssl rsa"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/ec.key" -out "$P/ec.crt" \
	-days 2 -subj "/CN=$LFE_SADDR" -addext "subjectAltName = IP:$LFE_SADDR" >/dev/null 2>&1 ||
	lfe_fail "openssl ec"
tstat() {
	lfe_telemetry /ldapfe/stats |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["/ldapfe/stats"]["total"].get(sys.argv[1], 0))' "$1"
}
burst() { lfe_cli bash -c 'ulimit -n 16384; exec "$@"' _ timeout 60 "$PY" "$BURST" "$@"; }
jv() { "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())[sys.argv[1]])' "$1"; }
B=10.99.$LFE_NET.3
lfe_cli ip addr add "$B/24" dev veth0
first=1
for key in rsa ec; do
	conf=$(lfe_conf 1)
	sed -i '/^max_conns_per_core/d' "$conf"
	sed -i 's/^port = 389$/port = 389\nldaps_ports = 636/' "$conf"
	printf '[tls]\ncertificate = %s\nkey = %s\n' "$P/$key.crt" "$P/$key.key" >> "$conf"
	((first)) || lfe_stop_restart
	first=0
	lfe_start "$conf" 0
	# B resolved and its TLS path warm before the bursts.
	r=$(burst seq "$LFE_SADDR" 636 "$DN" alice-pw 1 --src "$B" --tls "$P/$key.crt" --timeout 10)
	lfe_eq "$key: LDAPS bind from the second address" "$(jv ok <<< "$r")" 1
	for n in 50 100 200; do
		r=$(burst conns "$LFE_SADDR" 636 "$DN" alice-pw "$n" --src "$LFE_CADDR" --tls "$P/$key.crt" \
			--hold --timeout 30)
		lfe_log "$key: $n LDAPS at once from one address: $r"
		lfe_eq "$key: $n simultaneous LDAPS binds from one address" "$(jv ok <<< "$r")" "$n"
	done
	lfe_eq "$key: no handshake refused" "$(tstat tls_busy)" 0
done
# The flood: 400 full handshakes at once from one address, twice, while
# the second address binds over LDAPS 20 times.
( for i in 1 2; do burst conns "$LFE_SADDR" 636 "$DN" alice-pw 400 --src "$LFE_CADDR" --tls "$P/ec.crt" \
	--timeout 30; done ) > "$LFE_WORK/flood.json" &
FPID=$!
LFE_EXTRA_PIDS=$FPID
sleep 0.2
r=$(burst seq "$LFE_SADDR" 636 "$DN" alice-pw 20 --src "$B" --tls "$P/ec.crt" --timeout 10)
wait "$FPID" || true
LFE_EXTRA_PIDS=
lfe_log "flood from one address: $(tr '\n' ' ' < "$LFE_WORK/flood.json")"
lfe_log "the other address meanwhile: $r"
lfe_eq "the other address binds over LDAPS during the flood" "$(jv ok <<< "$r")" 20
lfe_stop
lfe_eq "clean stop" "$LFE_STOP_RC" 0
echo "PASS test_ldapsburst"
