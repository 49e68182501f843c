"""tests/integration/lfe_ber.py — raw-BER LDAP (RFC 4511) for the tests.

The integration tests that need bytes a library client would not send
(a PDU split or pipelined on purpose, a search read slowly, a StartTLS
followed by cleartext) build them here, byte for byte, and read answers one
LDAPMessage at a time. Decoding is bounded: every length is checked against
what is there (BerError, never an index past the end), a message over
MAX_MSG is refused before it is read, and a closed connection is EOFError.

lib.sh puts this folder on PYTHONPATH, so a test's inline Python (lfe_py,
a heredoc) imports it as it is; the scripts beside it import it from their
own folder.
"""

MAX_MSG = 1 << 24


class BerError(ValueError):
    """Input that is not the BER asked for (or runs past its bounds)."""


# ---- encoding --------------------------------------------------------------

def ber_len(n):
    """A definite length: short form under 128, else long form, minimal."""
    if n < 0x80:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


def tlv(tag, body):
    return bytes([tag]) + ber_len(len(body)) + body


def _b(x):
    return x.encode() if isinstance(x, str) else bytes(x)


def integer(n, tag=0x02):
    """INTEGER (or ENUMERATED, tag 0x0A), minimal two's complement."""
    return tlv(tag, n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True))


def message(msgid, op, controls=b""):
    """LDAPMessage: messageID, the protocolOp TLV, controls ([0]) if any."""
    return tlv(0x30, integer(msgid) + op + (tlv(0xA0, controls) if controls else b""))


def bind_req(msgid, dn, pw):
    """A simple BindRequest, LDAPv3 (dn, pw: str or bytes)."""
    return message(msgid, tlv(0x60, integer(3) + tlv(0x04, _b(dn)) + tlv(0x80, _b(pw))))


def unbind_req(msgid):
    return message(msgid, b"\x42\x00")


def extended_req(msgid, oid, value=None):
    """An ExtendedRequest: requestName [0], requestValue [1] if given."""
    op = tlv(0x80, _b(oid)) + (tlv(0x81, _b(value)) if value is not None else b"")
    return message(msgid, tlv(0x77, op))


# Filters (RFC 4511 4.5.1): each returns the filter's TLV.
def f_and(*fs):
    return tlv(0xA0, b"".join(fs))


def f_or(*fs):
    return tlv(0xA1, b"".join(fs))


def f_eq(attr, value):
    return tlv(0xA3, tlv(0x04, _b(attr)) + tlv(0x04, _b(value)))


def f_present(attr):
    return tlv(0x87, _b(attr))


def f_sub(attr, initial=None, any=(), final=None):
    """SubstringFilter: [0] initial, [1] any (each), [2] final."""
    parts = (tlv(0x80, _b(initial)) if initial is not None else b"") + \
        b"".join(tlv(0x81, _b(a)) for a in any) + \
        (tlv(0x82, _b(final)) if final is not None else b"")
    return tlv(0xA4, tlv(0x04, _b(attr)) + tlv(0x30, parts))


BASE, ONE, SUB = 0, 1, 2


def search_req(msgid, base, flt, scope=SUB, deref=0, size=0, time=0, types_only=False,
               attrs=()):
    """A SearchRequest; flt is a filter TLV (f_eq ...)."""
    op = tlv(0x04, _b(base)) + integer(scope, 0x0A) + integer(deref, 0x0A) + \
        integer(size) + integer(time) + tlv(0x01, b"\xff" if types_only else b"\x00") + \
        flt + tlv(0x30, b"".join(tlv(0x04, _b(a)) for a in attrs))
    return message(msgid, tlv(0x63, op))


# ---- decoding --------------------------------------------------------------

def read_tlv(b, i=0, end=None):
    """(tag, value, index past it) of the TLV at b[i:end]; one-byte tags,
    definite lengths of at most 4 bytes; BerError if it runs past end."""
    end = len(b) if end is None else end
    if i + 2 > end:
        raise BerError("truncated TLV header at %d" % i)
    tag, n = b[i], b[i + 1]
    i += 2
    if n & 0x80:
        k = n & 0x7F
        if k == 0 or k > 4:
            raise BerError("length form 0x%02x" % n)
        if i + k > end:
            raise BerError("truncated length at %d" % i)
        n = int.from_bytes(b[i:i + k], "big")
        i += k
    if n > end - i:
        raise BerError("value of %d bytes past the end (%d left)" % (n, end - i))
    return tag, bytes(b[i:i + n]), i + n


def msg_size(buf, limit=MAX_MSG):
    """The whole size of the LDAPMessage buf starts with, or None while its
    header is incomplete; BerError if it is no SEQUENCE or over limit."""
    if len(buf) < 2:
        return None
    if buf[0] != 0x30:
        raise BerError("not an LDAPMessage: tag 0x%02x" % buf[0])
    n, h = buf[1], 2
    if n & 0x80:
        k = n & 0x7F
        if k == 0 or k > 4:
            raise BerError("length form 0x%02x" % n)
        if len(buf) < 2 + k:
            return None
        n, h = int.from_bytes(buf[2:2 + k], "big"), 2 + k
    if n > limit:
        raise BerError("LDAPMessage of %d bytes, over %d" % (n, limit))
    return h + n


def split_msg(buf, limit=MAX_MSG):
    """(message, rest) when buf begins with a whole LDAPMessage, else None."""
    size = msg_size(buf, limit)
    if size is None or len(buf) < size:
        return None
    return bytes(buf[:size]), buf[size:]


def read_msg(s, buf=None, limit=MAX_MSG):
    """The next whole LDAPMessage (its raw bytes) from socket s.

    Without buf it reads no byte past the message (a StartTLS answer, then
    the handshake on the same socket); with buf (a bytearray kept between
    calls) it reads ahead and keeps the rest there. EOFError when the peer
    closes first."""
    exact = buf is None
    if exact:
        buf = bytearray()
    while True:
        size = msg_size(buf, limit)
        if size is not None and len(buf) >= size:
            m = bytes(buf[:size])
            del buf[:size]
            return m
        if not exact:
            want = 65536
        elif size is not None:
            want = size - len(buf)
        elif len(buf) < 2:
            want = 2 - len(buf)
        else:
            want = 2 + (buf[1] & 0x7F) - len(buf)
        d = s.recv(want)
        if not d:
            raise EOFError("connection closed")
        buf += d


def decode(m):
    """(messageID, protocolOp tag, its value, controls value or None) of one
    whole raw LDAPMessage."""
    tag, body, end = read_tlv(m)
    if tag != 0x30 or end != len(m):
        raise BerError("not one LDAPMessage")
    t, mid, i = read_tlv(body)
    if t != 0x02 or not mid:
        raise BerError("messageID tag 0x%02x" % t)
    op_tag, op, i = read_tlv(body, i)
    ctl = None
    if i < len(body):
        t, ctl, i = read_tlv(body, i)
        if t != 0xA0 or i != len(body):
            raise BerError("trailing bytes after the protocolOp")
    return int.from_bytes(mid, "big", signed=True), op_tag, op, ctl


def result_code(m):
    """(protocolOp tag, resultCode) of a response shaped as an LDAPResult
    (BindResponse, SearchResultDone, ExtendedResponse ...); BerError for
    another shape."""
    _, op_tag, op, _ = decode(m)
    t, code, _ = read_tlv(op)
    if t != 0x0A or not code:
        raise BerError("op 0x%02x has no resultCode" % op_tag)
    return op_tag, int.from_bytes(code, "big")


def bind_code(m):
    """resultCode of a BindResponse; BerError for any other message."""
    op, code = result_code(m)
    if op != 0x61:
        raise BerError("op 0x%02x, not a BindResponse" % op)
    return code
