/* gen/pdu.c — see pdu.h. */
#include "gen/pdu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/client.h"

/* Decimal digits of a 32-bit number: 1..10. */
#define NDIG 10u

struct tmpl {
	uint16_t len;              /* 0: does not fit */
	uint16_t dn_off, pw_off;   /* offsets of the last digit + 1 in body */
	uint8_t body[LFE_GEN_PDU_MAX];   /* the BindRequest TLV ([APPLICATION 0]) */
};

struct lfe_gen_bindtab {
	struct lfe_gen_fmt dn, pw;
	struct tmpl t[2][NDIG][NDIG];   /* [wrong][dn digits - 1][pw digits - 1] */
};

int lfe_gen_fmt_parse(const char *fmt, struct lfe_gen_fmt *f)
{
	bool seen = false;
	char *dst = f->pre;
	size_t *dlen = &f->pre_len;

	memset(f, 0, sizeof(*f));
	f->pad = ' ';
	for (const char *p = fmt; *p; p++) {
		if (*dlen + 1 >= sizeof(f->pre))
			return -EINVAL;
		if (*p != '%') {
			dst[(*dlen)++] = *p;
			continue;
		}
		p++;
		if (*p == '%') {
			dst[(*dlen)++] = '%';
			continue;
		}
		if (seen)
			return -EINVAL;
		if (*p == '0') {
			f->pad = '0';
			p++;
		}
		unsigned w = 0, digits = 0;
		while (*p >= '0' && *p <= '9') {
			w = w * 10u + (unsigned)(*p - '0');
			if (++digits > 2)
				return -EINVAL;
			p++;
		}
		if (*p != 'u' || w > 20)
			return -EINVAL;
		f->width = w;
		seen = true;
		dst = f->post;
		dlen = &f->post_len;
	}
	return seen ? 0 : -EINVAL;
}

/* Decimal digits of v (1..10), without divisions: the bit length times
 * log10(2) (1233/4096) is the digit count or one more, and one compare
 * decides. v | 1 has as many digits as v and is never 0. */
static unsigned ndigits(uint32_t v)
{
	static const uint32_t p10[10] = { 1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u,
					  100000000u, 1000000000u };
	uint32_t w = v | 1u;
	unsigned t = ((32u - (unsigned)__builtin_clz(w)) * 1233u) >> 12;
	return t + 1u - (w < p10[t]);
}

ssize_t lfe_gen_fmt_render(const struct lfe_gen_fmt *f, uint32_t v, char *out, size_t cap)
{
	unsigned nd = ndigits(v), fw = nd > f->width ? nd : f->width;
	size_t n = f->pre_len + fw + f->post_len;

	if (n > cap)
		return -ENOSPC;
	memcpy(out, f->pre, f->pre_len);
	memset(out + f->pre_len, f->pad, fw - nd);
	char *d = out + f->pre_len + fw;
	do {
		*--d = (char)('0' + v % 10u);
		v /= 10u;
	} while (v);
	memcpy(out + f->pre_len + fw, f->post, f->post_len);
	return (ssize_t)n;
}

/* Bytes a BER length of n takes (n < 2^24). */
static size_t ber_len_size(size_t n)
{
	return n < 0x80 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 4;
}

/* The smallest number with nd digits. */
static uint32_t first_with(unsigned nd)
{
	uint32_t v = nd == 1 ? 0 : 1;
	for (unsigned i = 1; i < nd; i++)
		v *= 10u;
	return v;
}

static void build(struct lfe_gen_bindtab *t, struct tmpl *m, unsigned dnd, unsigned pwd, bool wrong)
{
	char dn[300], pw[300];
	uint8_t pdu[LFE_GEN_PDU_MAX + 16];
	ssize_t dl = lfe_gen_fmt_render(&t->dn, first_with(dnd), dn, sizeof(dn));
	ssize_t pl = lfe_gen_fmt_render(&t->pw, first_with(pwd), pw, sizeof(pw) - 1);

	m->len = 0;
	if (dl < 0 || pl < 0)
		return;
	if (wrong)
		pw[pl++] = '!';
	ssize_t n = lfe_ldap_enc_bind_req(pdu, sizeof(pdu), 1, dn, (size_t)dl, pw, (size_t)pl);
	if (n < 0)
		return;
	/* SEQUENCE header, then INTEGER 1 (02 01 01), then the BindRequest. */
	size_t hdr = pdu[1] < 0x80 ? 2u : 2u + (pdu[1] & 0x7fu);
	size_t off = hdr + 3u, blen = (size_t)n - off;
	if (blen > LFE_GEN_PDU_MAX - 8u || pdu[hdr] != 0x02 || pdu[hdr + 1] != 0x01)
		return;
	/* The body ends with 80 len password; the DN's 04 len dn comes just before. */
	size_t pw_start = blen - (size_t)pl;
	size_t dn_start = pw_start - 1u - ber_len_size((size_t)pl) - (size_t)dl;
	if (memcmp(pdu + off + dn_start, dn, (size_t)dl) != 0 || memcmp(pdu + off + pw_start, pw, (size_t)pl) != 0)
		return;   /* not the layout expected: leave this template out */
	memcpy(m->body, pdu + off, blen);
	m->dn_off = (uint16_t)(dn_start + t->dn.pre_len + (dnd > t->dn.width ? dnd : t->dn.width));
	m->pw_off = (uint16_t)(pw_start + t->pw.pre_len + (pwd > t->pw.width ? pwd : t->pw.width));
	m->len = (uint16_t)blen;
}

struct lfe_gen_bindtab *lfe_gen_bindtab_new(const char *user_fmt, const char *pw_fmt, int *err)
{
	struct lfe_gen_bindtab *t = calloc(1, sizeof(*t));

	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	if (lfe_gen_fmt_parse(user_fmt, &t->dn) < 0 || lfe_gen_fmt_parse(pw_fmt, &t->pw) < 0) {
		free(t);
		*err = -EINVAL;
		return NULL;
	}
	for (unsigned w = 0; w < 2; w++)
		for (unsigned a = 0; a < NDIG; a++)
			for (unsigned b = 0; b < NDIG; b++)
				build(t, &t->t[w][a][b], a + 1, b + 1, w != 0);
	return t;
}

void lfe_gen_bindtab_free(struct lfe_gen_bindtab *t)
{
	free(t);
}

/* "00" "01" ... "99". */
static const char pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Write v's digits ending just before end (the padding is in the
 * template), two at a time. */
static inline void put_digits(uint8_t *end, uint32_t v)
{
	while (v >= 100u) {
		uint32_t r = v % 100u;
		v /= 100u;
		end -= 2;
		memcpy(end, &pairs[2u * r], 2);
	}
	if (v >= 10u) {
		end -= 2;
		memcpy(end, &pairs[2u * v], 2);
	} else {
		*--end = (uint8_t)('0' + v);
	}
}

/* The LDAPMessage header: SEQUENCE of `content` bytes (< 2^16), then the
 * messageID's INTEGER tag, length il and big-endian bytes. Returns the end. */
static inline uint8_t *put_head(uint8_t *p, size_t content, uint32_t id, size_t il)
{
	*p++ = 0x30;
	if (content >= 0x100) {
		*p++ = 0x82;
		*p++ = (uint8_t)(content >> 8);
	} else if (content >= 0x80) {
		*p++ = 0x81;
	}
	*p++ = (uint8_t)content;
	*p++ = 0x02;
	*p++ = (uint8_t)il;
	switch (il) {
	case 4:
		*p++ = (uint8_t)(id >> 24);
		__attribute__((fallthrough));
	case 3:
		*p++ = (uint8_t)(id >> 16);
		__attribute__((fallthrough));
	case 2:
		*p++ = (uint8_t)(id >> 8);
		__attribute__((fallthrough));
	default:
		*p++ = (uint8_t)id;
	}
	return p;
}

/* Bytes of a SEQUENCE of content bytes (< 2^16), header included. */
static inline size_t seq_size(size_t content)
{
	return 2u + content + (content >= 0x80) + (content >= 0x100);
}

ssize_t lfe_gen_bind_pdu(const struct lfe_gen_bindtab *t, uint8_t *out, size_t cap, int32_t msgid,
			 uint32_t dn_u, uint32_t pw_u, bool wrong)
{
	if (msgid < 1)
		return -EINVAL;
	const struct tmpl *m = &t->t[wrong][ndigits(dn_u) - 1][ndigits(pw_u) - 1];
	if (!m->len)
		return -ENOSPC;
	uint32_t id = (uint32_t)msgid;
	size_t il = lfe_gen_id_len(id);
	size_t total = seq_size(2u + il + m->len);
	if (total > cap)
		return -ENOSPC;
	uint8_t *p = put_head(out, 2u + il + m->len, id, il);
	memcpy(p, m->body, m->len);
	put_digits(p + m->dn_off, dn_u);
	put_digits(p + m->pw_off, pw_u);
	return (ssize_t)total;
}

ssize_t lfe_gen_unbind_pdu(uint8_t *out, size_t cap, int32_t msgid)
{
	if (msgid < 1 || !out)
		return -EINVAL;
	uint32_t id = (uint32_t)msgid;
	size_t il = lfe_gen_id_len(id);
	size_t total = 4u + il + 2u;
	if (total > cap)
		return -ENOSPC;
	uint8_t *p = put_head(out, 2u + il + 2u, id, il);
	p[0] = 0x42;   /* [APPLICATION 2] UnbindRequest, NULL: primitive, empty */
	p[1] = 0x00;
	return (ssize_t)total;
}
