/* ldap/attr.c — attribute description equality; see attr.h.
 *
 * The table of known types, aliases and OIDs stays in dn.c, where DN
 * normalization needs it on its fast path; lfe_attr_type_same() and
 * lfe_attr_canon() are its doors.
 */
#include "ldap/attr.h"

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

/* Types only (no options): lfe_attr_type_same() in dn.c, next to the
 * table of names, aliases and OIDs. */
static bool type_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return lfe_attr_type_same(a, alen, b, blen);
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

bool lfe_attr_key_eq(const struct lfe_attr_key *k, const uint8_t *t, size_t len)
{
	size_t tb = lfe_attr_base_len(t, len);

	if (!lfe_attr_key_type_is(k, t, tb))
		return false;
	return (k->opts_len == 0 && tb == len) ||
	       (opts_subset(k->opts, k->opts_len, t + tb, len - tb) &&
		opts_subset(t + tb, len - tb, k->opts, k->opts_len));
}

bool lfe_attr_type_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	struct lfe_attr_key k;

	lfe_attr_key_init(&k, a, alen);
	return lfe_attr_key_eq(&k, b, blen);
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
