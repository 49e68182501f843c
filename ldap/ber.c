/* ldap/ber.c — strict BER reader and back-to-front writer (see ber.h). */
#include "ldap/ber.h"

int lfe_ber_hdr(const uint8_t *p, size_t len, uint8_t *tag, size_t *hdr_len,
		size_t *content_len)
{
	if (len < 1)
		return -EAGAIN;
	/* High-tag-number form: LDAP never needs it, and refusing it keeps the
	 * tag one octet everywhere. */
	if ((p[0] & 0x1f) == 0x1f)
		return -EBADMSG;
	if (len < 2)
		return -EAGAIN;
	uint8_t l0 = p[1];
	if (l0 < 0x80) {
		*tag = p[0];
		*hdr_len = 2;
		*content_len = l0;
		return 0;
	}
	size_t n = l0 & 0x7f;
	/* 0x80 is the indefinite form; more than 4 octets cannot be a PDU we
	 * would accept (and 0xff is reserved). */
	if (n == 0 || n > 4)
		return -EBADMSG;
	if (len < 3)
		return -EAGAIN;
	/* Non-minimal long forms (0x81 0x05, 0x84 0 0 0 5) are accepted: RFC 4511
	 * §5.1 asks only for the definite form, liblber reads them, and some
	 * clients (Windows' wldap32) always send 4 length octets. The bound
	 * checks do not depend on minimality. */
	if (len < 2 + n)
		return -EAGAIN;
	size_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = (v << 8) | p[2 + i];
	*tag = p[0];
	*hdr_len = 2 + n;
	*content_len = v;
	return 0;
}

int lfe_ber_int_value(const uint8_t *p, size_t len, int64_t *v)
{
	if (len < 1 || len > 8)
		return -EBADMSG;
	/* Minimal two's complement: the first 9 bits are not all equal. */
	if (len > 1 && ((p[0] == 0x00 && !(p[1] & 0x80)) ||
			(p[0] == 0xff && (p[1] & 0x80))))
		return -EBADMSG;
	uint64_t u = (p[0] & 0x80) ? UINT64_MAX : 0;
	for (size_t i = 0; i < len; i++)
		u = (u << 8) | p[i];
	*v = (int64_t)u;
	return 0;
}

bool lfe_ber_elem_slow(struct lfe_ber *b, uint8_t *tag, struct lfe_bytes *whole,
		       struct lfe_bytes *contents)
{
	if (*b->err)
		return false;
	size_t left = (size_t)(b->end - b->p);
	uint8_t t;
	size_t hl, cl;
	int rc = lfe_ber_hdr(b->p, left, &t, &hl, &cl);
	/* Inside a complete element, running out of octets is malformed. */
	if (rc)
		return lfe_ber_fail(b, -EBADMSG);
	if (cl > left - hl)
		return lfe_ber_fail(b, -EBADMSG);
	if (tag)
		*tag = t;
	if (whole) {
		whole->p = b->p;
		whole->len = hl + cl;
	}
	if (contents) {
		contents->p = b->p + hl;
		contents->len = cl;
	}
	b->p += hl + cl;
	return true;
}

bool lfe_ber_null(struct lfe_ber *b, uint8_t tag)
{
	struct lfe_bytes c;

	if (!lfe_ber_octets(b, tag, &c))
		return false;
	if (c.len != 0)
		return lfe_ber_fail(b, -EBADMSG);
	return true;
}

void lfe_berw_hdr_slow(struct lfe_berw *w, uint8_t tag, size_t content_len)
{
	uint8_t h[6];
	size_t n;

	if (w->err)
		return;
	if (content_len < 0x80) {
		h[0] = tag;
		h[1] = (uint8_t)content_len;
		n = 2;
	} else if ((uint64_t)content_len > LFE_BER_MAX_LEN) {
		w->err = -EMSGSIZE;
		return;
	} else {
		size_t k = content_len <= 0xff ? 1 : content_len <= 0xffff ? 2
			 : content_len <= 0xffffff ? 3 : 4;
		h[0] = tag;
		h[1] = (uint8_t)(0x80 | k);
		for (size_t i = 0; i < k; i++)
			h[2 + i] = (uint8_t)(content_len >> (8 * (k - 1 - i)));
		n = 2 + k;
	}
	lfe_berw_raw(w, h, n);
}

void lfe_berw_int_slow(struct lfe_berw *w, uint8_t tag, int64_t v)
{
	uint8_t c[8];
	uint64_t u = (uint64_t)v;
	/* Octets needed: sign bit of the top octet must match the value's. */
	size_t n = 1;
	while (n < 8) {
		int64_t lo = -((int64_t)1 << (8 * n - 1)), hi = ((int64_t)1 << (8 * n - 1)) - 1;
		if (v >= lo && v <= hi)
			break;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		c[n - 1 - i] = (uint8_t)(u >> (8 * i));
	lfe_berw_raw(w, c, n);
	lfe_berw_hdr(w, tag, n);
}

ssize_t lfe_berw_finish(struct lfe_berw *w)
{
	if (w->err)
		return w->err;
	size_t n = lfe_berw_mark(w);
	if (w->p != w->start)
		memmove(w->start, w->p, n);
	w->p = w->start;
	w->end = w->start + n;
	return (ssize_t)n;
}
