#!/usr/bin/env python3
"""tests/integration/fake_provider.py — an impostor LDAP provider for the
sync consumer's tests: it records whether the bind password reached it.

usage: fake_provider.py MODE PORT PASSWORD RECORD [CERT KEY]
  MODE  plain     ldap://, no TLS (answers StartTLS with protocolError)
        starttls  ldap://, answers StartTLS with success and does TLS with CERT/KEY
        ldaps     TLS from the first byte with CERT/KEY
Every byte received in clear or after TLS is searched for PASSWORD; RECORD
gets one line per connection: "conn", then "tls" once a handshake is done,
"bind" for a BindRequest, "password" when PASSWORD arrived. A bind is
answered with success and the first search with operationsError whose
diagnosticMessage holds terminal escapes and a newline (what a provider's
bytes may do to a log). Serves until killed.
"""
import socket
import ssl
import sys
import threading

import lfe_ber
from lfe_ber import tlv

mode, port, password, record = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
cert, key = (sys.argv[5], sys.argv[6]) if len(sys.argv) > 6 else (None, None)
lock = threading.Lock()


def note(what):
    with lock, open(record, "a") as f:
        f.write(what + "\n")


def result(msgid, app_tag, code, diag=b"", extra=b""):
    body = tlv(0x0A, bytes([code])) + tlv(0x04, b"") + tlv(0x04, diag) + extra
    return lfe_ber.message(msgid & 0x7F, tlv(app_tag, body))


def read_msg(s):
    """One LDAPMessage: (msgid, protocolOp tag, raw bytes) or None at EOF."""
    try:
        raw = lfe_ber.read_msg(s)
    except (EOFError, OSError, ssl.SSLError):
        return None
    msgid, op, _, _ = lfe_ber.decode(raw)
    return msgid, op, raw


def serve(c):
    note("conn")
    ctx = None
    if cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
    s = c
    try:
        if mode == "ldaps":
            s = ctx.wrap_socket(c, server_side=True)
            note("tls")
        while True:
            m = read_msg(s)
            if m is None:
                return
            msgid, op, raw = m
            if password in raw:
                note("password")
            if op == 0x77:      # ExtendedRequest: StartTLS
                if mode == "starttls":
                    s.sendall(result(msgid, 0x78, 0, extra=tlv(0x8A, b"1.3.6.1.4.1.1466.20037")))
                    s = ctx.wrap_socket(s, server_side=True)
                    note("tls")
                else:
                    s.sendall(result(msgid, 0x78, 2, b"no StartTLS here"))
            elif op == 0x60:    # BindRequest
                note("bind")
                s.sendall(result(msgid, 0x61, 0))
            elif op == 0x63:    # SearchRequest
                s.sendall(result(msgid, 0x65, 1, b"\x1b[2J\x1b[31mplanted\nldapfectl sync: FAKE LINE"))
            elif op == 0x42:    # UnbindRequest
                return
    except (OSError, ssl.SSLError) as e:
        note("error " + type(e).__name__)
    finally:
        try:
            s.close()
        except OSError:
            pass


srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(8)
note("listening")
while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
