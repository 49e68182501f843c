#!/usr/bin/env bash
# record-vectors.sh [OUTDIR] — record the exact LDAP PDUs that real clients
# (OpenLDAP's ldapwhoami/ldapsearch/ldap*, python3-ldap3) send, into
# OUTDIR/<name>.hex (default: tests/ldap/vectors next to this script).
#
# A tiny listener on 127.0.0.1 (random port) takes one connection per
# command, writes every client PDU as one lower-case hex line, and answers
# with minimal canned responses (success, empty search) only so that the
# client carries on to its next request. Those replies are not a test
# oracle; the recorded requests are. Nothing leaves loopback.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/vectors}
py=/usr/bin/python3
mkdir -p "$out"
work=$(mktemp -d /tmp/lfe-record.XXXXXX)
rec_pid=
cleanup() {
	if [[ -n $rec_pid ]]; then kill "$rec_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/listener.py" <<'EOF'
import socket, sys
out_path, port_path = sys.argv[1], sys.argv[2]

def tlv(tag, body):
    n = len(body)
    if n < 0x80:
        h = bytes([n])
    else:
        b = n.to_bytes((n.bit_length() + 7) // 8, 'big')
        h = bytes([0x80 | len(b)]) + b
    return bytes([tag]) + h + body

def hdr(buf):
    if len(buf) < 2:
        return None
    l0 = buf[1]
    if l0 < 0x80:
        return 2, l0
    k = l0 & 0x7f
    if len(buf) < 2 + k:
        return None
    return 2 + k, int.from_bytes(buf[2:2 + k], 'big')

def msgid(pdu):
    h, _ = hdr(pdu)
    hl, il = hdr(pdu[h:])
    return pdu[h:h + hl + il]          # the INTEGER TLV, replayed as is

def result(mid, tag, code=0, extra=b'', controls=b''):
    op = tlv(tag, tlv(0x0a, bytes([code])) + tlv(0x04, b'') + tlv(0x04, b'') + extra)
    return tlv(0x30, mid + op + controls)

PAGED = b'1.2.840.113556.1.4.319'
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', 0))
srv.listen(1)
srv.settimeout(20)
open(port_path, 'w').write(str(srv.getsockname()[1]))
c, _ = srv.accept()
c.settimeout(10)
buf = b''
lines = []
done = False
while not done:
    try:
        d = c.recv(65536)
    except socket.timeout:
        break
    if not d:
        break
    buf += d
    while True:
        h = hdr(buf)
        if h is None or len(buf) < h[0] + h[1]:
            break
        pdu, buf = buf[:h[0] + h[1]], buf[h[0] + h[1]:]
        lines.append(pdu.hex())
        mid = msgid(pdu)
        op = pdu[hdr(pdu)[0] + len(mid)]
        rsp = None
        if op == 0x60:
            rsp = result(mid, 0x61)
        elif op == 0x63 and b'noreply' in pdu:
            pass                        # stays outstanding so it can be abandoned
        elif op == 0x63:
            ctl = b''
            if PAGED in pdu:
                val = tlv(0x30, tlv(0x02, b'\x00') + tlv(0x04, b''))
                ctl = tlv(0xa0, tlv(0x30, tlv(0x04, PAGED) + tlv(0x04, val)))
            rsp = result(mid, 0x65, controls=ctl)
        elif op == 0x77:
            rsp = result(mid, 0x78)
        elif op in (0x66, 0x68, 0x4a, 0x6c):
            rsp = result(mid, op + 1 if op != 0x4a else 0x6b)
        elif op == 0x6e:
            rsp = result(mid, 0x6f, code=6)
        elif op == 0x42:
            done = True
        if rsp:
            c.sendall(rsp)
c.close()
open(out_path, 'w').write(''.join(l + '\n' for l in lines))
EOF

# record NAME CMD... — run CMD with @PORT@ replaced by the listener's port.
record() {
	local name=$1
	shift
	rm -f "$work/port"
	"$py" "$work/listener.py" "$out/$name.hex" "$work/port" &
	rec_pid=$!
	for _ in $(seq 1 100); do [[ -s $work/port ]] && break; sleep 0.05; done
	local port
	port=$(cat "$work/port")
	local args=()
	for a in "$@"; do args+=("${a//@PORT@/$port}"); done
	timeout 20 "${args[@]}" >/dev/null 2>&1 || true
	wait "$rec_pid" || { echo "record-vectors: listener failed for $name" >&2; exit 1; }
	rec_pid=
	echo "$name: $(wc -l < "$out/$name.hex") PDUs"
}

H='ldap://127.0.0.1:@PORT@'
B='dc=example,dc=com'
U="uid=alice,ou=people,$B"

record whoami_simple ldapwhoami -x -H "$H" -D "$U" -w 's3cret!'
record whoami_anon ldapwhoami -x -H "$H"
record search_eq ldapsearch -x -H "$H" -D "$U" -w s3cret -b "ou=people,$B" '(uid=alice)' cn mail
record search_complex ldapsearch -x -H "$H" -b "$B" -s sub \
	'(&(objectClass=posixAccount)(|(uid=al*ce)(cn=*Smith))(!(mail=*)))' uid uidNumber
record search_options ldapsearch -x -H "$H" -b "ou=people,$B" -s one -a always -z 5 -l 3 -A \
	'(uidNumber>=1000)' '*' '+'
record search_base_rootdse ldapsearch -x -H "$H" -b '' -s base '(objectClass=*)' + namingContexts
record search_ext_approx ldapsearch -x -H "$H" -b "$B" \
	'(|(cn:dn:caseExactMatch:=Foo)(sn~=smyth)(:2.5.13.5:=bar)(gidNumber<=500))'
record search_escaped ldapsearch -x -H "$H" -b "$B" '(cn=a\2ab\28c\29d\5ce\00f*g)'
record search_critical_ctl ldapsearch -x -H "$H" -b "$B" -e '!1.2.3.4' '(uid=bob)' dn
record search_paged ldapsearch -x -H "$H" -b "$B" -E pr=10/noprompt '(objectClass=inetOrgPerson)' cn
record write_ops_delete ldapdelete -x -H "$H" -D "$U" -w pw "cn=gone,$B"
record write_ops_compare ldapcompare -x -H "$H" "$U" 'uid:alice'
record write_ops_modrdn ldapmodrdn -x -H "$H" "cn=old,$B" cn=new
record exop_passwd ldappasswd -x -H "$H" -D "$U" -w old -s new

record ldap3_bind_search "$py" -c "
import ldap3
s = ldap3.Server('127.0.0.1', port=@PORT@, get_info=ldap3.NONE)
c = ldap3.Connection(s, user='$U', password='pässword', auto_bind=True)
c.search('ou=people,$B', '(&(uid=alice)(objectClass=person))', attributes=['cn', 'mail', 'memberOf'])
c.extend.standard.who_am_i()
c.unbind()
"
record ldap3_paged_abandon "$py" -c "
import ldap3
s = ldap3.Server('127.0.0.1', port=@PORT@, get_info=ldap3.NONE)
c = ldap3.Connection(s, auto_bind=True, client_strategy=ldap3.ASYNC)
m = c.search('$B', '(sn=*mit*)', search_scope=ldap3.LEVEL, paged_size=25, size_limit=100, types_only=True)
c.get_response(m)
m = c.search('$B', '(cn=noreply)', attributes=['1.1'])
c.abandon(m)
c.unbind()
"
record ldap3_sasl_plain "$py" -c "
import ldap3
s = ldap3.Server('127.0.0.1', port=@PORT@, get_info=ldap3.NONE)
c = ldap3.Connection(s, authentication=ldap3.SASL, sasl_mechanism=ldap3.PLAIN, sasl_credentials=(None, 'alice', 'secret'))
c.bind()
c.unbind()
"
record ldap3_sasl_external "$py" -c "
import ldap3
s = ldap3.Server('127.0.0.1', port=@PORT@, get_info=ldap3.NONE)
c = ldap3.Connection(s, authentication=ldap3.SASL, sasl_mechanism=ldap3.EXTERNAL)
c.bind()
c.unbind()
"
record ldap3_add_modify "$py" -c "
import ldap3
s = ldap3.Server('127.0.0.1', port=@PORT@, get_info=ldap3.NONE)
c = ldap3.Connection(s, user='cn=admin,$B', password='x', auto_bind=True)
c.add('uid=new,ou=people,$B', ['inetOrgPerson'], {'cn': 'New', 'sn': 'User'})
c.modify('$U', {'mail': [(ldap3.MODIFY_REPLACE, ['a@example.com'])]})
c.unbind()
"
