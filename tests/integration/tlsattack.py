#!/usr/bin/env python3
"""Hostile TLS 1.3 clients for test_tlsattack.sh (issue 28).

A real TLS 1.3 handshake by Python's ssl over ssl.MemoryBIO (so the bytes
on the socket are ours to shape), then raw records:

  partial HOST PORT      a record header announcing 16 KiB, then one byte
                         a second: prints the seconds until the server closed
                         (or "open" after the wait)
  halfhello HOST PORT    half of a real ClientHello, then silence: the same
  kuflood HOST PORT N    N x (KeyUpdate, empty record) sealed by the small
                         TLS 1.3 record layer below from the client's traffic
                         secret (ssl's keylog_filename), then a bind sealed
                         the same way: prints "closed" or "answered"
  kuloop HOST PORT SECS  (KeyUpdate, empty record) pairs streamed for SECS
                         seconds, reconnecting whenever the server closes:
                         prints "connections pairs" sent

The record layer here is the test's own (RFC 8446 §5.2, §7.1-7.3) on the
cryptography package's AEADs: it only seals.
"""
import os
import socket
import ssl
import sys
import tempfile
import time

from lfe_ber import bind_req

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

SUITES = {   # name: (hash, key length, AEAD)
    "TLS_AES_128_GCM_SHA256": (hashes.SHA256, 16, AESGCM),
    "TLS_AES_256_GCM_SHA384": (hashes.SHA384, 32, AESGCM),
    "TLS_CHACHA20_POLY1305_SHA256": (hashes.SHA256, 32, ChaCha20Poly1305),
}


def expand_label(h, secret, label, length):
    lab = b"tls13 " + label
    info = length.to_bytes(2, "big") + bytes([len(lab)]) + lab + b"\x00"
    return HKDFExpand(h(), length, info).derive(secret)


class Sealer:
    """The client's write side: seals TLSInnerPlaintext records."""

    def __init__(self, suite, secret):
        self.h, self.klen, self.aead = SUITES[suite]
        self.set_secret(secret)

    def set_secret(self, secret):
        self.secret = secret
        self.key = self.aead(expand_label(self.h, secret, b"key", self.klen))
        self.iv = expand_label(self.h, secret, b"iv", 12)
        self.seq = 0

    def seal(self, content, ctype):
        inner = content + bytes([ctype])
        n = len(inner) + 16
        hdr = bytes([23, 3, 3, n >> 8, n & 255])
        nonce = bytes(a ^ b for a, b in zip(self.iv, self.seq.to_bytes(12, "big")))
        self.seq += 1
        return hdr + self.key.encrypt(nonce, inner, hdr)

    def key_update(self):
        rec = self.seal(bytes([24, 0, 0, 1, 0]), 22)   # update_not_requested
        h = self.h()
        self.set_secret(expand_label(self.h, self.secret, b"traffic upd", h.digest_size))
        return rec


def handshake(host, port, keylog=None):
    """A finished TLS 1.3 handshake: (socket, SSLObject)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    if keylog:
        ctx.keylog_filename = keylog
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_side=False)
    s = socket.create_connection((host, port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            pass
        if out.pending:
            s.sendall(out.read())
        data = s.recv(65536)
        if not data:
            raise SystemExit("closed during the handshake")
        inc.write(data)
    if out.pending:
        s.sendall(out.read())   # the client's Finished
    return s, obj


def closed_within(s, secs, drip=None):
    """Seconds until the peer closed (EOF or reset), or None; drip: send one
    byte of it each second meanwhile."""
    t0 = time.monotonic()
    s.settimeout(0.2)
    next_drip = t0
    while time.monotonic() - t0 < secs:
        if drip and time.monotonic() >= next_drip:
            try:
                s.send(drip[:1])
            except OSError:
                return time.monotonic() - t0
            drip = drip[1:]
            next_drip += 1.0
        try:
            d = s.recv(65536)
            if not d:
                return time.monotonic() - t0
        except socket.timeout:
            pass
        except OSError:
            return time.monotonic() - t0
    return None


def sealer_for(host, port):
    """A handshake and the client's Sealer from its traffic secret."""
    with tempfile.TemporaryDirectory() as d:
        kl = os.path.join(d, "keylog")
        s, obj = handshake(host, port, kl)
        secret = None
        with open(kl) as f:
            for line in f:
                if line.startswith("CLIENT_TRAFFIC_SECRET_0 "):
                    secret = bytes.fromhex(line.split()[2])
    if secret is None:
        raise SystemExit("no CLIENT_TRAFFIC_SECRET_0 in the keylog")
    return s, Sealer(obj.cipher()[0], secret)


def kuloop(host, port, secs):
    end, conns, pairs = time.monotonic() + secs, 0, 0
    while time.monotonic() < end:
        s, w = sealer_for(host, port)
        conns += 1
        s.settimeout(0.5)
        while time.monotonic() < end:
            buf = bytearray()
            for _ in range(50):
                buf += w.key_update()
                buf += w.seal(b"", 23)
            try:
                s.sendall(buf)
            except OSError:
                break
            pairs += 50
            s.setblocking(False)
            try:
                if s.recv(65536) == b"":
                    break
            except BlockingIOError:
                pass
            except OSError:
                break
            s.settimeout(0.5)
        s.close()
    return conns, pairs


def kuflood(host, port, n):
    s, w = sealer_for(host, port)
    buf = bytearray()
    for _ in range(n):
        buf += w.key_update()
        buf += w.seal(b"", 23)
    buf += w.seal(bind_req(1, b"cn=nobody", b"x"), 23)
    try:
        s.sendall(buf)
    except OSError:
        return s, "closed"
    s.settimeout(3)
    got = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return s, "closed"
            got += d
    except socket.timeout:
        return s, "answered" if got else "silent"
    except OSError:
        return s, "closed"


def main():
    mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "partial":
        s, _ = handshake(host, port)
        s.sendall(bytes([23, 3, 3, 0x40, 0x11]))   # 16,401 bytes announced
        t = closed_within(s, float(os.environ.get("WAIT", "8")), drip=b"\x00" * 64)
        print("open" if t is None else "%.1f" % t)
    elif mode == "halfhello":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
        obj = ctx.wrap_bio(inc, out, server_side=False)
        try:
            obj.do_handshake()
        except ssl.SSLWantReadError:
            pass
        hello = out.read()
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(hello[:len(hello) // 2])
        t = closed_within(s, float(os.environ.get("WAIT", "8")))
        print("open" if t is None else "%.1f" % t)
    elif mode == "kuflood":
        s, res = kuflood(host, port, int(sys.argv[4]))
        print(res)
    elif mode == "kuloop":
        print(*kuloop(host, port, float(sys.argv[4])))


if __name__ == "__main__":
    main()
