/* tests/backend/berbuild.h — building BER by hand for tests and benchmarks
 * (filters and requests the client library does not encode): append the
 * content, then wrap it in its tag and definite length. Bounds: the caller
 * sizes the buffer; nothing here checks (test code only). */
#ifndef LFE_TESTS_BERBUILD_H
#define LFE_TESTS_BERBUILD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct bb {
	uint8_t *b;
	size_t n;
};

/* Wrap b[from..n) in a TLV of tag (the content moves up by the header). */
static inline void bb_wrap(struct bb *f, size_t from, uint8_t tag)
{
	size_t len = f->n - from, hl = 0;
	uint8_t h[6];
	h[hl++] = tag;
	if (len >= 128) {
		size_t k = len < 256 ? 1 : len < 65536 ? 2 : 3;
		h[hl++] = (uint8_t)(0x80 | k);
		while (k--)
			h[hl++] = (uint8_t)(len >> (8 * k));
	}
	if (len < 128)
		h[hl++] = (uint8_t)len;
	memmove(f->b + from + hl, f->b + from, len);
	memcpy(f->b + from, h, hl);
	f->n += hl;
}

static inline void bb_raw(struct bb *f, const void *p, size_t n)
{
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static inline void bb_octets(struct bb *f, uint8_t tag, const char *s)
{
	size_t at = f->n;
	bb_raw(f, s, strlen(s));
	bb_wrap(f, at, tag);
}

/* (attr=val) */
static inline void bb_eq(struct bb *f, const char *attr, const char *val)
{
	size_t at = f->n;
	bb_octets(f, 0x04, attr);
	bb_octets(f, 0x04, val);
	bb_wrap(f, at, 0xa3);
}

/* (attr=*piece*piece*...*) with n "any" pieces. */
static inline void bb_substr(struct bb *f, const char *attr, const char *piece, unsigned n)
{
	size_t at = f->n;
	bb_octets(f, 0x04, attr);
	size_t seq = f->n;
	for (unsigned i = 0; i < n; i++)
		bb_octets(f, 0x81, piece);
	bb_wrap(f, seq, 0x30);
	bb_wrap(f, at, 0xa4);
}

#endif
