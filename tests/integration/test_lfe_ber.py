#!/usr/bin/env python3
"""tests/integration/test_lfe_ber.py — the tests' raw-BER client (lfe_ber)
against bytes written out by hand from RFC 4511, and its bounds: a
truncated or oversized message is an error, never a read past the end."""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lfe_ber import (BASE, BerError, bind_code, bind_req, decode, extended_req, f_and,  # noqa: E402
                     f_eq, f_present, f_sub, integer, message, msg_size, read_msg, read_tlv,
                     result_code, search_req, split_msg, unbind_req)

fails = 0


def check(what, got, want):
    global fails
    if got != want:
        fails += 1
        print("FAIL %s: got %r, want %r" % (what, got, want))


def raises(what, exc, f, *a):
    global fails
    try:
        r = f(*a)
    except exc:
        return
    fails += 1
    print("FAIL %s: returned %r, want %s" % (what, r, exc.__name__))


H = bytes.fromhex
ENC = [
    ("bind v3", bind_req(1, "cn=a", "pw"),
     H("30 12 02 01 01 60 0d 02 01 03 04 04") + b"cn=a" + H("80 02") + b"pw"),
    ("unbind", unbind_req(5), H("30 05 02 01 05 42 00")),
    ("whoami", extended_req(2, "1.3.6.1.4.1.4203.1.11.3"),
     H("30 1e 02 01 02 77 19 80 17") + b"1.3.6.1.4.1.4203.1.11.3"),
    ("ext with value", extended_req(3, "1.2", b"\x01"), H("30 0d 02 01 03 77 08 80 03") + b"1.2" +
     H("81 01 01")),
    ("root DSE search", search_req(1, "", f_present("objectClass"), scope=BASE),
     H("30 25 02 01 01 63 20 04 00 0a 01 00 0a 01 00 02 01 00 02 01 00 01 01 00 87 0b") +
     b"objectClass" + H("30 00")),
    ("search attrs, limits", search_req(9, "o=x", f_eq("uid", "u"), size=2, time=1,
                                        types_only=True, attrs=["cn"]),
     H("30 29 02 01 09 63 24 04 03") + b"o=x" + H("0a 01 02 0a 01 00 02 01 02 02 01 01 01 01 ff") +
     H("a3 08 04 03") + b"uid" + H("04 01") + b"u" + H("30 04 04 02") + b"cn"),
    ("and, substrings", f_and(f_sub("cn", "a", ["b"], "c")),
     H("a0 11 a4 0f 04 02") + b"cn" + H("30 09 80 01") + b"a" + H("81 01") + b"b" + H("82 01") + b"c"),
    ("msgid 128", integer(128), H("02 02 00 80")),
    ("msgid 0", integer(0), H("02 01 00")),
    ("msgid 65536", integer(65536), H("02 03 01 00 00")),
    ("long form 200", message(1, bytes([0x04, 0x81, 197]) + b"x" * 197)[:6], H("30 81 cb 02 01 01")),
    ("long form 300", message(1, bytes([0x04, 0x82, 1, 41]) + b"x" * 297)[:7],
     H("30 82 01 30 02 01 01")),
]
for what, got, want in ENC:
    check(what, got.hex(), want.hex())

bind_ok = H("30 0c 02 01 07 61 07 0a 01 00 04 00 04 00")
bind_49 = H("30 0c 02 01 07 61 07 0a 01 31 04 00 04 00")
done_ctl = H("30 13 02 02 01 2c 65 07 0a 01 04 04 00 04 00 a0 04 30 02 04 00")
entry = H("30 0c 02 01 02 64 07 04 01") + b"x" + H("30 02 30 00")[:2]
check("decode bind", decode(bind_ok), (7, 0x61, H("0a 01 00 04 00 04 00"), None))
check("bind_code 49", bind_code(bind_49), 49)
check("search done, controls", decode(done_ctl)[0::3], (300, H("30 02 04 00")))
check("result_code done", result_code(done_ctl), (0x65, 4))
raises("bind_code of a SearchResultDone", BerError, bind_code, done_ctl)
raises("result_code of an entry", BerError, result_code, entry)
check("read_tlv", read_tlv(H("04 81 02 61 62 ff")), (4, b"ab", 5))

BAD = [
    ("truncated value", decode, bind_ok[:-1]),
    ("trailing byte", decode, bind_ok + b"\x00"),
    ("indefinite length", read_tlv, H("30 80 00 00")),
    ("5-byte length", read_tlv, H("30 85 00 00 00 00 01 00")),
    ("truncated long length", read_tlv, H("04 82 01")),
    ("length past the end", read_tlv, H("04 05 61")),
    ("no messageID", decode, H("30 03 61 01 00")),
    ("empty messageID", decode, H("30 04 02 00 61 00")),
    ("not a SEQUENCE", msg_size, H("31 00")),
    ("over the limit", msg_size, H("30 84 7f ff ff ff")),
]
for what, f, b in BAD:
    raises(what, BerError, f, b)

check("msg_size: header incomplete", msg_size(H("30 82 01")), None)
check("split_msg: part", split_msg(bind_ok[:9]), None)
check("split_msg: whole + rest", split_msg(bind_ok + b"\x30"), (bind_ok, b"\x30"))

a, b = socket.socketpair()
b.settimeout(5)
a.sendall(bind_ok + bind_49[:3])
check("read_msg exact: one message", read_msg(b), bind_ok)
a.sendall(bind_49[3:] + bind_ok)
check("read_msg exact: left the next one unread", read_msg(b), bind_49)
buf = bytearray()
a.sendall(done_ctl)
check("read_msg buffered", (read_msg(b, buf), read_msg(b, buf), bytes(buf)), (bind_ok, done_ctl, b""))
a.sendall(H("30 84 7f ff ff ff"))
raises("read_msg: 2 GiB length refused before reading", BerError, read_msg, b)
a.sendall(bind_ok[:5])
a.close()
raises("read_msg: peer closed mid-message", EOFError, read_msg, b)
b.close()

print("%d failures" % fails if fails else "ok: lfe_ber encodes, decodes and bounds")
sys.exit(1 if fails else 0)
