/* ldap/ber.h — the strict BER subset of RFC 4511 §5.1: a reader cursor and a
 * back-to-front writer.
 *
 * What the reader accepts (anything else is -EBADMSG):
 *   - low-tag-number form only (tag number < 31: all LDAP tags are);
 *   - definite lengths only, at most 4 length octets (0x80 indefinite and
 *     0xFF are refused; non-minimal long forms such as 0x81 0x05 are read,
 *     as liblber does, because Windows clients send them);
 *   - every element inside its parent, nothing left over where a parent ends;
 *   - INTEGER/ENUMERATED: 1..8 content octets, minimal two's complement;
 *   - BOOLEAN: exactly one octet, 0x00 or 0xFF. RFC 4511 §5.1 requires TRUE to
 *     be 0xFF, and every client we recorded sends that; any other non-zero
 *     octet is refused rather than read as TRUE;
 *   - primitive/constructed is part of the tag octet the caller expects, so a
 *     constructed OCTET STRING (0x24, forbidden by §5.1) never matches 0x04;
 *   - nesting deeper than LFE_BER_MAX_DEPTH is -E2BIG.
 *
 * "Need more bytes" (-EAGAIN) exists only in lfe_ber_hdr(), which framing
 * uses on a stream prefix. A cursor always covers a complete element, so a
 * length running past its end is malformed (-EBADMSG), never -EAGAIN.
 *
 * Errors are sticky: the first failure is stored in the error slot that a
 * cursor shares with all the children entered from it; every later call is a
 * no-op returning false, so a parser checks once at the end. Children point
 * at their root's slot, so a child must not outlive the cursor it came from.
 *
 * The writer fills the caller's buffer from its end backwards, so each
 * constructed element's length is known when its header is written; the
 * finished encoding is then moved to the start of the buffer. Fields are
 * therefore written in reverse order. A short buffer makes the writer
 * sticky -ENOSPC.
 *
 * libc only; nothing allocates; no state beyond the structs below.
 */
#ifndef LFE_LDAP_BER_H
#define LFE_LDAP_BER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "ldap/bytes.h"

#define LFE_BER_MAX_DEPTH 64u
#define LFE_BER_MAX_LEN   0xffffffffu  /* what 4 length octets can say */

/* Universal tags (X.680) and the class/constructed bits LDAP uses. */
#define LFE_BER_BOOLEAN     0x01u
#define LFE_BER_INTEGER     0x02u
#define LFE_BER_OCTETS      0x04u
#define LFE_BER_NULL        0x05u
#define LFE_BER_ENUMERATED  0x0au
#define LFE_BER_SEQUENCE    0x30u
#define LFE_BER_SET         0x31u
#define LFE_BER_CONS        0x20u
#define LFE_BER_APP(n)      (0x40u | (n))
#define LFE_BER_APP_CONS(n) (0x60u | (n))
#define LFE_BER_CTX(n)      (0x80u | (n))
#define LFE_BER_CTX_CONS(n) (0xa0u | (n))

/* Parse one element header at the start of p[0..len).
 * 0: *tag, *hdr_len (tag + length octets) and *content_len are set; the
 *    content may extend beyond len (the caller checks).
 * -EAGAIN: len ends inside the header (checks that can already fail on the
 *    octets present are made first, so a bad header is -EBADMSG as early as
 *    possible). -EBADMSG: a form refused above. */
int lfe_ber_hdr(const uint8_t *p, size_t len, uint8_t *tag, size_t *hdr_len,
		size_t *content_len);

/* Decode the content octets of an INTEGER/ENUMERATED. 0 or -EBADMSG. */
int lfe_ber_int_value(const uint8_t *p, size_t len, int64_t *v);

struct lfe_ber {
	const uint8_t *p;    /* next unread octet */
	const uint8_t *end;  /* one past the last octet of this element */
	int *err;            /* shared with children; 0 while all is well */
	uint32_t depth;
	int err_root;        /* the slot itself, used by a root cursor */
};

static inline void lfe_ber_init(struct lfe_ber *b, const uint8_t *p, size_t len)
{
	b->p = p;
	b->end = p + len;
	b->err_root = 0;
	b->err = &b->err_root;
	b->depth = 0;
}

static inline int lfe_ber_error(const struct lfe_ber *b) { return *b->err; }

/* Record err unless an earlier error is already recorded; returns false so
 * callers can `return lfe_ber_fail(...)`. */
static inline bool lfe_ber_fail(struct lfe_ber *b, int err)
{
	if (*b->err == 0)
		*b->err = err;
	return false;
}

/* True when no error is recorded and octets remain in this element. */
static inline bool lfe_ber_more(const struct lfe_ber *b)
{
	return *b->err == 0 && b->p < b->end;
}

/* Tag octet of the next element, or -1 at the end or after an error. */
static inline int lfe_ber_peek(const struct lfe_ber *b)
{
	return lfe_ber_more(b) ? b->p[0] : -1;
}

/* Long-form half of lfe_ber_elem(); not for direct use. */
bool lfe_ber_elem_slow(struct lfe_ber *b, uint8_t *tag, struct lfe_bytes *whole,
		       struct lfe_bytes *contents);

/* Read any next element: its tag, the whole TLV and its contents (either
 * pointer may be NULL). The one function through which every element is
 * read. Inline because short-form elements are nearly all of LDAP's and the
 * bind path reads a dozen of them. */
static inline bool lfe_ber_elem(struct lfe_ber *b, uint8_t *tag, struct lfe_bytes *whole,
				struct lfe_bytes *contents)
{
	if (*b->err)
		return false;
	size_t left = (size_t)(b->end - b->p);
	if (left < 2 || b->p[1] >= 0x80 || (b->p[0] & 0x1f) == 0x1f)
		return lfe_ber_elem_slow(b, tag, whole, contents);
	size_t cl = b->p[1];
	if (cl > left - 2)
		return lfe_ber_fail(b, -EBADMSG);
	if (tag)
		*tag = b->p[0];
	if (whole) {
		whole->p = b->p;
		whole->len = 2 + cl;
	}
	if (contents) {
		contents->p = b->p + 2;
		contents->len = cl;
	}
	b->p += 2 + cl;
	return true;
}

/* Read the next element, which must carry `tag`, and return its contents. */
static inline bool lfe_ber_octets(struct lfe_ber *b, uint8_t tag, struct lfe_bytes *out)
{
	if (lfe_ber_peek(b) != tag)
		return lfe_ber_fail(b, -EBADMSG);
	return lfe_ber_elem(b, NULL, NULL, out);
}

/* Enter the next element (tag `tag`): child covers its contents and shares
 * b's error slot. -E2BIG past LFE_BER_MAX_DEPTH. */
static inline bool lfe_ber_enter(struct lfe_ber *b, uint8_t tag, struct lfe_ber *child)
{
	struct lfe_bytes c;

	if (b->depth + 1 > LFE_BER_MAX_DEPTH)
		return lfe_ber_fail(b, -E2BIG);
	if (!lfe_ber_octets(b, tag, &c))
		return false;
	child->p = c.p;
	child->end = c.p + c.len;
	child->err = b->err;
	child->depth = b->depth + 1;
	child->err_root = 0;
	return true;
}

/* INTEGER or ENUMERATED (by tag) within [min, max]; out of range is
 * -EBADMSG. */
static inline bool lfe_ber_int(struct lfe_ber *b, uint8_t tag, int64_t min, int64_t max,
			       int64_t *v)
{
	struct lfe_bytes c;
	int64_t x;

	if (!lfe_ber_octets(b, tag, &c))
		return false;
	if (c.len == 1)
		x = (int8_t)c.p[0];
	else if (lfe_ber_int_value(c.p, c.len, &x))
		return lfe_ber_fail(b, -EBADMSG);
	if (x < min || x > max)
		return lfe_ber_fail(b, -EBADMSG);
	*v = x;
	return true;
}

static inline bool lfe_ber_bool(struct lfe_ber *b, uint8_t tag, bool *v)
{
	struct lfe_bytes c;

	if (!lfe_ber_octets(b, tag, &c))
		return false;
	if (c.len != 1 || (c.p[0] != 0x00 && c.p[0] != 0xff))
		return lfe_ber_fail(b, -EBADMSG);
	*v = c.p[0] != 0;
	return true;
}

/* An element of this tag with empty contents (NULL, UnbindRequest). */
bool lfe_ber_null(struct lfe_ber *b, uint8_t tag);

/* Skip one well-formed element of any tag. */
static inline bool lfe_ber_skip(struct lfe_ber *b)
{
	return lfe_ber_elem(b, NULL, NULL, NULL);
}

/* This element must be fully read: leftover octets are -EBADMSG. */
static inline bool lfe_ber_done(struct lfe_ber *b)
{
	if (*b->err)
		return false;
	if (b->p != b->end)
		return lfe_ber_fail(b, -EBADMSG);
	return true;
}

struct lfe_berw {
	uint8_t *start;
	uint8_t *p;      /* first written octet; writing moves it down */
	uint8_t *end;
	int err;
};

static inline void lfe_berw_init(struct lfe_berw *w, uint8_t *buf, size_t cap)
{
	w->start = buf;
	w->p = buf + cap;
	w->end = buf + cap;
	w->err = 0;
}

/* Octets written so far; pass to lfe_berw_wrap() to enclose what follows. */
static inline size_t lfe_berw_mark(const struct lfe_berw *w)
{
	return (size_t)(w->end - w->p);
}

static inline void lfe_berw_raw(struct lfe_berw *w, const void *src, size_t n)
{
	if (w->err)
		return;
	if ((size_t)(w->p - w->start) < n) {
		w->err = -ENOSPC;
		return;
	}
	w->p -= n;
	if (n)
		memcpy(w->p, src, n);
}

/* Long-form halves of lfe_berw_hdr() and lfe_berw_int(). */
void lfe_berw_hdr_slow(struct lfe_berw *w, uint8_t tag, size_t content_len);
void lfe_berw_int_slow(struct lfe_berw *w, uint8_t tag, int64_t v);

/* Write a header for content_len octets already written after it. */
static inline void lfe_berw_hdr(struct lfe_berw *w, uint8_t tag, size_t content_len)
{
	if (content_len >= 0x80 || w->p - w->start < 2) {
		lfe_berw_hdr_slow(w, tag, content_len);
		return;
	}
	if (w->err)
		return;
	w->p -= 2;
	w->p[0] = tag;
	w->p[1] = (uint8_t)content_len;
}

static inline void lfe_berw_octets(struct lfe_berw *w, uint8_t tag, const void *src, size_t n)
{
	lfe_berw_raw(w, src, n);
	lfe_berw_hdr(w, tag, n);
}

static inline void lfe_berw_int(struct lfe_berw *w, uint8_t tag, int64_t v)
{
	/* Message ids, result codes and enumerations are nearly always 0..127. */
	if (v < 0 || v >= 0x80 || w->p - w->start < 3 || w->err) {
		lfe_berw_int_slow(w, tag, v);
		return;
	}
	w->p -= 3;
	w->p[0] = tag;
	w->p[1] = 1;
	w->p[2] = (uint8_t)v;
}

static inline void lfe_berw_bool(struct lfe_berw *w, uint8_t tag, bool v)
{
	uint8_t o = v ? 0xff : 0x00;

	lfe_berw_octets(w, tag, &o, 1);
}

/* Enclose everything written since `mark` in an element of tag `tag`. */
static inline void lfe_berw_wrap(struct lfe_berw *w, uint8_t tag, size_t mark)
{
	lfe_berw_hdr(w, tag, lfe_berw_mark(w) - mark);
}

/* Move the encoding to the start of the buffer. Returns its length or the
 * sticky error (-ENOSPC, or -EMSGSIZE for an element over 4 GiB). */
ssize_t lfe_berw_finish(struct lfe_berw *w);

#endif
