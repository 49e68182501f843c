/* ldap/attr.c — attribute description equality; see attr.h.
 *
 * The table of known types, aliases and OIDs stays in dn.c, where DN
 * normalization needs it on its fast path; lfe_attr_canon() is its door.
 * The common case (both sides spelled alike, as stored types and filter
 * types usually are) is decided by one case-insensitive compare; only a
 * mismatch pays for the two table look-ups.
 */
#include "attr.h"

#include <string.h>

static inline uint8_t lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c | 0x20) : c;
}

static bool eq_nocase(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

size_t lfe_attr_base_len(const uint8_t *t, size_t len)
{
	const uint8_t *semi = t ? memchr(t, ';', len) : NULL;

	return semi ? (size_t)(semi - t) : (t ? len : 0);
}

/* Types only (no options). */
static bool type_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	char ca[LFE_ATTR_NAME_MAX], cb[LFE_ATTR_NAME_MAX];

	if (alen == 0 || blen == 0)
		return false;
	if (eq_nocase(a, alen, b, blen))
		return true;
	ssize_t na = lfe_attr_canon(a, alen, ca, sizeof ca);
	ssize_t nb = na > 0 ? lfe_attr_canon(b, blen, cb, sizeof cb) : -1;
	return nb > 0 && na == nb && memcmp(ca, cb, (size_t)na) == 0;
}

bool lfe_attr_base_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return type_eq(a, lfe_attr_base_len(a, alen), b, lfe_attr_base_len(b, blen));
}

/* Does the option list opts (";x;y", possibly empty) hold option o? */
static bool has_option(const uint8_t *opts, size_t len, const uint8_t *o, size_t olen)
{
	size_t i = 0;

	while (i < len) {
		size_t j = i + 1;        /* opts[i] is ';' */
		while (j < len && opts[j] != ';')
			j++;
		if (eq_nocase(opts + i + 1, j - i - 1, o, olen))
			return true;
		i = j;
	}
	return false;
}

/* Every option of sub is in super. */
static bool opts_subset(const uint8_t *sub, size_t slen, const uint8_t *super, size_t plen)
{
	size_t i = 0;

	while (i < slen) {
		size_t j = i + 1;
		while (j < slen && sub[j] != ';')
			j++;
		if (!has_option(super, plen, sub + i + 1, j - i - 1))
			return false;
		i = j;
	}
	return true;
}

bool lfe_attr_desc_matches(const uint8_t *want, size_t wlen, const uint8_t *have, size_t hlen)
{
	size_t wb = lfe_attr_base_len(want, wlen), hb = lfe_attr_base_len(have, hlen);

	return type_eq(want, wb, have, hb) &&
	       opts_subset(want + wb, wlen - wb, have + hb, hlen - hb);
}

bool lfe_attr_type_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t ab = lfe_attr_base_len(a, alen), bb = lfe_attr_base_len(b, blen);

	if (ab == alen && bb == blen)
		return type_eq(a, alen, b, blen);
	return type_eq(a, ab, b, bb) && opts_subset(a + ab, alen - ab, b + bb, blen - bb) &&
	       opts_subset(b + bb, blen - bb, a + ab, alen - ab);
}

bool lfe_attr_is_secret(const uint8_t *t, size_t len)
{
	char c[LFE_ATTR_NAME_MAX];
	size_t n = lfe_attr_base_len(t, len);
	ssize_t cl = n ? lfe_attr_canon(t, n, c, sizeof c) : -1;

	if (cl <= 0)
		return false;
	return (cl == 12 && memcmp(c, "userpassword", 12) == 0) ||
	       (cl == 12 && memcmp(c, "authpassword", 12) == 0);
}
