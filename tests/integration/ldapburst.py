#!/usr/bin/env python3
"""tests/integration/ldapburst.py — kernel-socket LDAP clients for the
admission tests (test_srcshare, test_spoof, test_neigh, test_ldapsburst):
many connections at once, from one or many local addresses, cleartext or
LDAPS, each doing one simple bind; and a spoofed SYN flood from a raw
socket. Standard library only.

  ldapburst.py conns HOST PORT DN PW N [--src A[,B...]] [--tls CAFILE]
               [--hold] [--after S [--until FILE]] [--timeout S]
      N connections opened at once (round-robin over the sources), then a
      bind on each. Prints one JSON line: ok, refused, failed, seconds,
      lat_ms (p50, p99, max of connect-to-bind-result). --hold keeps all
      N open until every bind is answered (concurrent, not sequential);
      --after S holds them S seconds longer (others bind meanwhile), or
      until FILE exists (the caller is done with them), at most S seconds.
  ldapburst.py seq HOST PORT DN PW N [--src A] [--tls CAFILE]
      N connection-per-bind sessions one after the other; same JSON.
  ldapburst.py flood SRC DST PORT COUNT SPORT_LO SPORT_HI [RATE]
      COUNT bare SYNs from SRC (spoofed: nothing answers their SYN,ACKs)
      with source ports cycling SPORT_LO..SPORT_HI, RATE a second (0 or
      absent: as fast as a raw socket sends). Prints count and seconds.
"""
import json
import os
import random
import selectors
import socket
import ssl
import struct
import sys
import time

from lfe_ber import bind_code, bind_req, split_msg, BerError


def bind_rc(buf):
    """resultCode of a complete BindResponse in buf, or None if incomplete."""
    try:
        m = split_msg(buf)
        return None if m is None else bind_code(m[0])
    except BerError:
        return -1


def pct(v, p):
    if not v:
        return None
    v = sorted(v)
    return round(v[min(len(v) - 1, int(len(v) * p / 100))], 2)


class Conn:
    def __init__(self, src):
        self.src = src
        self.s = None
        self.state = "connect"
        self.t0 = 0.0
        self.buf = b""
        self.out = b""


def run_conns(host, port, dn, pw, n, srcs, cafile, timeout, hold, after=0.0, until=None):
    sel = selectors.DefaultSelector()
    ctx = None
    if cafile:
        ctx = ssl.create_default_context(cafile=cafile)
        ctx.check_hostname = False
    req = bind_req(1, dn, pw)
    conns = []
    res = {"ok": 0, "refused": 0, "failed": 0, "errors": {}}
    lat = []
    t_start = time.monotonic()
    for i in range(n):
        c = Conn(srcs[i % len(srcs)] if srcs else None)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        if c.src:
            s.bind((c.src, 0))
        c.s = s
        c.t0 = time.monotonic()
        try:
            s.connect((host, port))
        except BlockingIOError:
            pass
        except OSError as e:
            done(c, "failed", str(e), res, sel)
            continue
        sel.register(s, selectors.EVENT_WRITE, c)
        conns.append(c)
    pending = len(conns)
    answered = []
    deadline = time.monotonic() + timeout

    def finish(c, kind, why=None):
        nonlocal pending
        done(c, kind, why, res, sel)
        pending -= 1

    while pending and time.monotonic() < deadline:
        for key, ev in sel.select(0.2):
            c = key.data
            try:
                step(c, ev, ctx, host, req, sel)
            except ConnectionRefusedError:
                finish(c, "refused", "refused")
                continue
            except (OSError, ssl.SSLError) as e:
                finish(c, "failed", type(e).__name__ + ": " + str(e)[:60])
                continue
            if c.state == "done":
                rc = bind_rc(c.buf)
                lat.append((time.monotonic() - c.t0) * 1000)
                if rc == 0:
                    res["ok"] += 1
                else:
                    res["failed"] += 1
                    res["errors"]["rc=%s" % rc] = res["errors"].get("rc=%s" % rc, 0) + 1
                pending -= 1
                sel.unregister(c.s)
                if hold:
                    answered.append(c)
                else:
                    c.s.close()
    for key in list(sel.get_map().values()):
        done(key.data, "failed", "timeout", res, sel)
    res["seconds"] = round(time.monotonic() - t_start, 3)
    if after:
        sys.stdout.write(json.dumps({"held": len(answered)}) + "\n")
        sys.stdout.flush()
        t_end = time.monotonic() + after
        while time.monotonic() < t_end and not (until and os.path.exists(until)):
            time.sleep(0.05)
    for c in answered:
        c.s.close()
    res["lat_ms"] = [pct(lat, 50), pct(lat, 99), round(max(lat), 2) if lat else None]
    return res


def done(c, kind, why, res, sel):
    res[kind] += 1
    if why:
        res["errors"][why] = res["errors"].get(why, 0) + 1
    try:
        sel.unregister(c.s)
    except (KeyError, ValueError):
        pass
    c.s.close()


def step(c, ev, ctx, host, req, sel):
    if c.state == "connect":
        err = c.s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            raise OSError(err, "connect") if err != 111 else ConnectionRefusedError()
        if ctx:
            c.s = ctx.wrap_socket(c.s, server_hostname=host, do_handshake_on_connect=False)
            sel.modify(c.s, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
            c.state = "handshake"
        else:
            c.state = "send"
            c.out = req
    if c.state == "handshake":
        try:
            c.s.do_handshake()
        except ssl.SSLWantReadError:
            sel.modify(c.s, selectors.EVENT_READ, c)
            return
        except ssl.SSLWantWriteError:
            sel.modify(c.s, selectors.EVENT_WRITE, c)
            return
        c.state = "send"
        c.out = req
    if c.state == "send":
        try:
            k = c.s.send(c.out)
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            sel.modify(c.s, selectors.EVENT_WRITE, c)
            return
        c.out = c.out[k:]
        if c.out:
            sel.modify(c.s, selectors.EVENT_WRITE, c)
            return
        c.state = "recv"
        sel.modify(c.s, selectors.EVENT_READ, c)
        return
    if c.state == "recv":
        while True:
            try:
                d = c.s.recv(4096)
            except (BlockingIOError, ssl.SSLWantReadError):
                return
            if not d:
                raise OSError("closed before the bind result")
            c.buf += d
            if bind_rc(c.buf) is not None:
                c.state = "done"
                return


def run_seq(host, port, dn, pw, n, srcs, cafile, timeout):
    res = {"ok": 0, "refused": 0, "failed": 0, "errors": {}}
    lat = []
    t_start = time.monotonic()
    for i in range(n):
        r = run_conns(host, port, dn, pw, 1, srcs, cafile, timeout, False)
        for k in ("ok", "refused", "failed"):
            res[k] += r[k]
        for k, v in r["errors"].items():
            res["errors"][k] = res["errors"].get(k, 0) + v
        if r["lat_ms"][0] is not None:
            lat.append(r["lat_ms"][0])
    res["seconds"] = round(time.monotonic() - t_start, 3)
    res["lat_ms"] = [pct(lat, 50), pct(lat, 99), round(max(lat), 2) if lat else None]
    return res


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def flood(src, dst, port, count, lo, hi, rate=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    sa, da = socket.inet_aton(src), socket.inet_aton(dst)
    t0 = time.monotonic()
    sport = lo
    sent = 0
    for i in range(count):
        seq = random.getrandbits(32)
        # MSS 1460 and SACK-permitted, as a kernel's SYN (no timestamps)
        opts = b"\x02\x04\x05\xb4\x04\x02\x01\x01"
        tcp = struct.pack("!HHIIBBHHH", sport, port, seq, 0, (5 + 2) << 4, 0x02, 64240, 0, 0) + opts
        ph = sa + da + struct.pack("!BBH", 0, 6, len(tcp))
        tcp = tcp[:16] + struct.pack("!H", csum(ph + tcp)) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), i & 0xFFFF, 0, 64, 6, 0, sa, da)
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        try:
            s.sendto(ip + tcp, (dst, 0))
            sent += 1
        except OSError:
            time.sleep(0.0005)   # the veth's queue is full: let it drain
        sport = lo if sport >= hi else sport + 1
        if rate and i % 100 == 99:
            ahead = t0 + (i + 1) / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    print(json.dumps({"syns": sent, "seconds": round(time.monotonic() - t0, 3)}))


def main(argv):
    mode = argv[1]
    if mode == "flood":
        flood(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]), int(argv[7]),
              float(argv[8]) if len(argv) > 8 else 0)
        return 0
    host, port, dn, pw, n = argv[2], int(argv[3]), argv[4], argv[5], int(argv[6])
    srcs, cafile, timeout, hold, after, until = [], None, 20.0, False, 0.0, None
    i = 7
    while i < len(argv):
        if argv[i] == "--src":
            srcs = argv[i + 1].split(",")
            i += 2
        elif argv[i] == "--tls":
            cafile = argv[i + 1]
            i += 2
        elif argv[i] == "--timeout":
            timeout = float(argv[i + 1])
            i += 2
        elif argv[i] == "--after":
            after = float(argv[i + 1])
            i += 2
        elif argv[i] == "--until":
            until = argv[i + 1]
            i += 2
        elif argv[i] == "--hold":
            hold = True
            i += 1
        else:
            raise SystemExit("unknown option " + argv[i])
    if mode == "conns":
        r = run_conns(host, port, dn, pw, n, srcs, cafile, timeout, hold, after, until)
    else:
        r = run_seq(host, port, dn, pw, n, srcs, cafile, timeout)
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
