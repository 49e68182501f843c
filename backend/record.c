/* backend/record.c — encoder and strict decoder of entry records (format in
 * record.h). The decoder reads from an LMDB map that another process writes,
 * so it trusts nothing: every length is compared with what is left before it
 * is used, and sums are widened before they are compared.
 */
#include "backend/record.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "ldap/attr.h"

static inline uint16_t ld16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint8_t *st16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	return p + 2;
}

static inline uint8_t *st32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, sizeof(v));
	return p + 4;
}

static inline uint8_t *put_bytes(uint8_t *p, const void *src, size_t n)
{
	if (n)
		memcpy(p, src, n);
	return p + n;
}

/* Encoded size of one attribute, or a negative errno. */
static int64_t attr_size(const struct lfe_ldap_attr *a)
{
	uint64_t sz;

	if (a->type.len == 0 || a->type.len > LFE_RECORD_MAX_TYPE)
		return -EINVAL;
	if (a->n_vals && !a->vals)
		return -EINVAL;
	sz = 1 + (uint64_t)a->type.len + 8;
	for (uint32_t i = 0; i < a->n_vals; i++) {
		sz += 4 + (uint64_t)a->vals[i].len;
		if (sz > LFE_RECORD_MAX_LEN)
			return -E2BIG;
	}
	return (int64_t)sz;
}

static uint8_t *write_attr(uint8_t *p, const struct lfe_ldap_attr *a, uint32_t vals_len)
{
	*p++ = (uint8_t)a->type.len;
	p = put_bytes(p, a->type.p, a->type.len);
	p = st32(p, a->n_vals);
	p = st32(p, vals_len);
	for (uint32_t i = 0; i < a->n_vals; i++) {
		p = st32(p, (uint32_t)a->vals[i].len);
		p = put_bytes(p, a->vals[i].p, a->vals[i].len);
	}
	return p;
}

ssize_t lfe_record_size(struct lfe_bytes dn, const struct lfe_ldap_attr *attrs,
			uint32_t n_attrs)
{
	uint64_t sz;

	if (dn.len > LFE_RECORD_MAX_DN)
		return -EINVAL;
	if (n_attrs > LFE_RECORD_MAX_ATTRS)
		return -E2BIG;
	if (n_attrs && !attrs)
		return -EINVAL;
	sz = LFE_RECORD_HDR_LEN + (uint64_t)dn.len;
	for (uint32_t i = 0; i < n_attrs; i++) {
		int64_t a = attr_size(&attrs[i]);

		if (a < 0)
			return (ssize_t)a;
		sz += (uint64_t)a;
		if (sz > LFE_RECORD_MAX_LEN)
			return -E2BIG;
	}
	return (ssize_t)sz;
}

ssize_t lfe_record_write(uint8_t *out, size_t cap, struct lfe_bytes dn,
			 const struct lfe_ldap_attr *attrs, uint32_t n_attrs)
{
	ssize_t sz = lfe_record_size(dn, attrs, n_attrs);
	uint8_t *p = out;

	if (sz < 0)
		return sz;
	if ((size_t)sz > cap)
		return -ENOSPC;
	*p++ = LFE_RECORD_VERSION;
	*p++ = 0;
	p = st16(p, (uint16_t)dn.len);
	p = st16(p, (uint16_t)n_attrs);
	p = put_bytes(p, dn.p, dn.len);
	for (uint32_t i = 0; i < n_attrs; i++) {
		/* attr_size already bounded the whole record, so this fits. */
		uint32_t vl = (uint32_t)(attr_size(&attrs[i]) - 1 - (int64_t)attrs[i].type.len - 8);

		p = write_attr(p, &attrs[i], vl);
	}
	return (ssize_t)(p - out);
}

int lfe_record_header(const uint8_t *rec, size_t len, struct lfe_bytes *dn,
		      uint32_t *n_attrs, size_t *body_off)
{
	size_t dn_len;

	if (!rec || len < LFE_RECORD_HDR_LEN)
		return -EBADMSG;
	if (rec[0] != LFE_RECORD_VERSION || rec[1] != 0)
		return -EBADMSG;
	dn_len = ld16(rec + 2);
	if (dn_len > len - LFE_RECORD_HDR_LEN)
		return -EBADMSG;
	dn->p = rec + LFE_RECORD_HDR_LEN;
	dn->len = dn_len;
	*n_attrs = ld16(rec + 4);
	*body_off = LFE_RECORD_HDR_LEN + dn_len;
	return 0;
}

int lfe_record_next_attr(const uint8_t *rec, size_t len, size_t *off,
			 struct lfe_bytes *type, uint32_t *n_vals,
			 struct lfe_bytes *vals)
{
	size_t o = *off, left, tl, vl;

	if (o == len)
		return 0;
	if (o > len)
		return -EBADMSG;
	left = len - o;
	tl = rec[o];
	if (tl == 0 || left < 1 + tl + 8)
		return -EBADMSG;
	type->p = rec + o + 1;
	type->len = tl;
	o += 1 + tl;
	*n_vals = ld32(rec + o);
	vl = ld32(rec + o + 4);
	o += 8;
	left = len - o;
	if (vl > left)
		return -EBADMSG;
	/* Each value costs at least its 4-byte length: a count that cannot fit
	 * is corrupt, and rejecting it here bounds every later walk. */
	if (*n_vals > vl / 4)
		return -EBADMSG;
	vals->p = rec + o;
	vals->len = vl;
	*off = o + vl;
	return 1;
}

int lfe_record_next_val(struct lfe_bytes *list, struct lfe_bytes *val)
{
	size_t vl;

	if (list->len == 0)
		return 0;
	if (list->len < 4)
		return -EBADMSG;
	vl = ld32(list->p);
	if (vl > list->len - 4)
		return -EBADMSG;
	val->p = list->p + 4;
	val->len = vl;
	list->p += 4 + vl;
	list->len -= 4 + vl;
	return 1;
}

int lfe_record_find_attr(const uint8_t *rec, size_t len, const char *type, size_t type_len,
			 uint32_t *n_vals, struct lfe_bytes *vals)
{
	struct lfe_bytes dn;
	uint32_t n_attrs;
	size_t o;

	if (lfe_record_header(rec, len, &dn, &n_attrs, &o) < 0)
		return -EBADMSG;
	/* The writer stores each type in the schema's spelling (lfe_store_put
	 * canonicalizes), so the caller's spelling usually matches byte for
	 * byte, and an identical type without options is always equal: that
	 * needs no schema lookup. Anything else (case, alias, OID, options)
	 * takes the full comparison, set up on first need. */
	bool plain = type_len > 0 && memchr(type, ';', type_len) == NULL;
	bool key_ready = false;
	struct lfe_attr_key key;
	while (o < len) {
		size_t tl = rec[o];
		if (tl == 0 || len - o < 1 + tl + 8)
			return -EBADMSG;
		const uint8_t *t = rec + o + 1;
		size_t vo = o + 1 + tl + 8;
		size_t vl = ld32(rec + o + 1 + tl + 4);
		if (vl > len - vo)
			return -EBADMSG;
		bool same = plain && tl == type_len && memcmp(t, type, tl) == 0;
		if (!same && !key_ready) {
			lfe_attr_key_init(&key, (const uint8_t *)type, type_len);
			key_ready = true;
		}
		if (same || lfe_attr_key_eq(&key, t, tl)) {
			uint32_t n = ld32(rec + o + 1 + tl);
			if (n > vl / 4)
				return -EBADMSG;
			*n_vals = n;
			vals->p = rec + vo;
			vals->len = vl;
			return 1;
		}
		o = vo + vl;
	}
	return 0;
}

int lfe_record_validate(const uint8_t *rec, size_t len)
{
	struct lfe_bytes dn, type, vals, v;
	uint32_t n_attrs, n_vals, seen = 0;
	size_t off = 0;
	int rc;

	if (len > LFE_RECORD_MAX_LEN)
		return -EBADMSG;
	rc = lfe_record_header(rec, len, &dn, &n_attrs, &off);
	if (rc < 0)
		return rc;
	while ((rc = lfe_record_next_attr(rec, len, &off, &type, &n_vals, &vals)) == 1) {
		uint32_t n = 0;

		if (++seen > n_attrs)
			return -EBADMSG;
		while ((rc = lfe_record_next_val(&vals, &v)) == 1)
			n++;
		if (rc < 0 || n != n_vals)
			return -EBADMSG;
	}
	if (rc < 0 || seen != n_attrs)
		return -EBADMSG;
	return 0;
}

static bool type_eq(struct lfe_bytes a, struct lfe_bytes b)
{
	return lfe_attr_type_eq(a.p, a.len, b.p, b.len);
}

/* Whether type is one of the n replacements'. */
static bool replaced(struct lfe_bytes type, const struct lfe_ldap_attr *repl, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (type_eq(type, repl[i].type))
			return true;
	return false;
}

ssize_t lfe_record_replace_size(const uint8_t *rec, size_t len,
				const struct lfe_ldap_attr *repl, size_t n)
{
	struct lfe_bytes dn, type, vals;
	uint32_t n_attrs, n_vals, kept = 0;
	size_t off = 0;
	uint64_t sz;
	int rc;

	rc = lfe_record_validate(rec, len);
	if (rc < 0)
		return rc;
	if (n > LFE_RECORD_MAX_ATTRS || (n && !repl))
		return -EINVAL;
	lfe_record_header(rec, len, &dn, &n_attrs, &off);
	sz = off;
	for (size_t i = 0; i < n; i++) {
		int64_t rs = attr_size(&repl[i]);
		if (rs < 0)
			return (ssize_t)rs;
		if (replaced(repl[i].type, repl, i))
			return -EINVAL;
		if (repl[i].n_vals) {
			sz += (uint64_t)rs;
			kept++;
		}
	}
	while (lfe_record_next_attr(rec, len, &off, &type, &n_vals, &vals) == 1) {
		if (replaced(type, repl, n))
			continue;
		kept++;
		sz += 1 + type.len + 8 + vals.len;
	}
	if (kept > LFE_RECORD_MAX_ATTRS || sz > LFE_RECORD_MAX_LEN)
		return -E2BIG;
	return (ssize_t)sz;
}

ssize_t lfe_record_replace_write(const uint8_t *rec, size_t len,
				 const struct lfe_ldap_attr *repl, size_t n,
				 uint8_t *out, size_t cap)
{
	ssize_t sz = lfe_record_replace_size(rec, len, repl, n);
	struct lfe_bytes dn, type, vals;
	uint32_t n_attrs, n_vals, kept = 0;
	size_t off = 0, start;
	uint8_t *p;

	if (sz < 0)
		return sz;
	if ((size_t)sz > cap)
		return -ENOSPC;
	lfe_record_header(rec, len, &dn, &n_attrs, &off);
	p = put_bytes(out, rec, off);
	start = off;
	while (lfe_record_next_attr(rec, len, &off, &type, &n_vals, &vals) == 1) {
		if (!replaced(type, repl, n)) {
			p = put_bytes(p, rec + start, off - start);
			kept++;
		}
		start = off;
	}
	for (size_t i = 0; i < n; i++) {
		const struct lfe_ldap_attr *a = &repl[i];
		if (a->n_vals == 0)
			continue;
		p = write_attr(p, a, (uint32_t)(attr_size(a) - 1 - (int64_t)a->type.len - 8));
		kept++;
	}
	st16(out + 4, (uint16_t)kept);
	return (ssize_t)(p - out);
}
