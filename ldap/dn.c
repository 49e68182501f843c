/* ldap/dn.c — RFC 4514 DN parsing and normalization.
 *
 * Accepted input is what slapd accepts (it parses with libldap's
 * LDAP_DN_FORMAT_LDAP): RFC 4514 strings, plus the RFC 2253 / RFC 1779
 * leftovers still seen in old configurations — ';' between RDNs and
 * "quoted" values. We are stricter than libldap in a few places, listed in
 * tests/ldap/DN-DIFFERENCES.md: numericoids need two arcs and no leading
 * zeros, attribute options ("cn;lang-en") are refused, junk after a #hex
 * value is refused, and decoded values must be valid UTF-8 (no surrogates,
 * nothing above U+10FFFF).
 *
 * The normalized form is libldap's LDAP_DN_FORMAT_LDAPV3 output (hex-escaped
 * specials, NUL and non-ASCII bytes; other bytes raw), with the schema work
 * slapd adds on top, restricted to the attributes in attr_defs[]:
 *   - types lower-cased; known OIDs and aliases become the short name;
 *   - case-ignore values: ASCII letters lower-cased, leading and trailing
 *     spaces (escaped or not) dropped, internal runs of spaces collapsed to
 *     one, an all-space value becomes a single space (slapd's
 *     UTF8StringNormalize does the same). Non-ASCII characters are kept as
 *     they are: folding them needs Unicode tables (slapd folds them), so
 *     "cn=É" and "cn=é" stay different here;
 *   - other values keep every byte; only unescaped leading and trailing
 *     spaces go, as in libldap;
 *   - #hexstring values are not decoded (no string-vs-BER equivalence); they
 *     come out as '#' and upper-case hex;
 *   - the AVAs of a multi-valued RDN are sorted by memcmp of their normalized
 *     "type=value" text; two identical AVAs make the DN invalid (slapd
 *     refuses them too).
 * A DN whose normalized form would exceed LFE_DN_MAX bytes is -EINVAL, so a
 * buffer of LFE_DN_MAX + 1 bytes never gets -ENOSPC.
 */
#include "ldap/dn.h"

#include <errno.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

struct attr_def {
	const char *name;   /* canonical, lower case */
	const char *oid;
	const char *alias;  /* lower case; "" for none */
	uint8_t name_len, oid_len, alias_len;
	bool case_ignore;
	uint8_t rule;       /* enum lfe_match_rule of its EQUALITY */
};

#define ATTR_R(name, oid, alias, ci, rule) \
	{ name, oid, alias, sizeof(name) - 1, sizeof(oid) - 1, sizeof(alias) - 1, ci, rule }
#define ATTR(name, oid, alias, ci) \
	ATTR_R(name, oid, alias, ci, (ci) ? LFE_MR_CASE_IGNORE : LFE_MR_CASE_EXACT)

/* Names and OIDs from RFC 4519, RFC 2798 (inetOrgPerson) and RFC 2307 (nis).
 * case_ignore follows each attribute's EQUALITY rule in OpenLDAP's schema
 * (caseIgnoreMatch, caseIgnoreIA5Match). */
static const struct attr_def attr_defs[] = {
	ATTR("uid", "0.9.2342.19200300.100.1.1", "userid", true),
	ATTR("cn", "2.5.4.3", "commonname", true),
	ATTR("ou", "2.5.4.11", "organizationalunitname", true),
	ATTR("o", "2.5.4.10", "organizationname", true),
	ATTR("c", "2.5.4.6", "countryname", true),
	ATTR("l", "2.5.4.7", "localityname", true),
	ATTR("st", "2.5.4.8", "stateorprovincename", true),
	ATTR("dc", "0.9.2342.19200300.100.1.25", "domaincomponent", true),
	ATTR("mail", "0.9.2342.19200300.100.1.3", "rfc822mailbox", true),
	ATTR("sn", "2.5.4.4", "surname", true),
	ATTR("givenname", "2.5.4.42", "gn", true),
	ATTR("street", "2.5.4.9", "streetaddress", true),
	ATTR("title", "2.5.4.12", "", true),
	ATTR("description", "2.5.4.13", "", true),
	ATTR("serialnumber", "2.5.4.5", "", true),
	ATTR("initials", "2.5.4.43", "", true),
	ATTR("displayname", "2.16.840.1.113730.3.1.241", "", true),
	ATTR("employeenumber", "2.16.840.1.113730.3.1.3", "", true),
	ATTR("postalcode", "2.5.4.17", "", true),
	ATTR("objectclass", "2.5.4.0", "", true), /* objectIdentifierMatch: descr names ignore case */
	ATTR("userpassword", "2.5.4.35", "", false),
	ATTR("authpassword", "1.3.6.1.4.1.4203.1.3.4", "", false),  /* RFC 3112 */
	ATTR_R("member", "2.5.4.31", "", false, LFE_MR_DN),
	ATTR_R("uniquemember", "2.5.4.50", "", false, LFE_MR_DN),
	ATTR_R("memberof", "1.2.840.113556.1.2.102", "", false, LFE_MR_DN),
	ATTR_R("uidnumber", "1.3.6.1.1.1.1.0", "", false, LFE_MR_INTEGER),
	ATTR_R("gidnumber", "1.3.6.1.1.1.1.1", "", false, LFE_MR_INTEGER),
	ATTR("entryuuid", "1.3.6.1.1.16.4", "", true),   /* UUIDMatch: hex digits ignore case */
	ATTR("gecos", "1.3.6.1.1.1.1.2", "", true),
	ATTR("homedirectory", "1.3.6.1.1.1.1.3", "", false),
	ATTR("loginshell", "1.3.6.1.1.1.1.4", "", false),
	ATTR("memberuid", "1.3.6.1.1.1.1.12", "", false),
};

#define N_ATTR_DEFS (sizeof attr_defs / sizeof attr_defs[0])

static inline bool is_alpha(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

static inline uint8_t lower(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c | 0x20) : c;
}

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static const char hexdig[] = "0123456789ABCDEF";

/* ASCII bytes a value scanner must look at (CH_STR) and bytes the output
 * escapes wherever they stand (CH_ESC); non-ASCII is escaped too. */
enum { CH_STR = 1, CH_ESC = 2 };
static const uint8_t ch_class[128] = {
	[0] = CH_STR | CH_ESC,   [' '] = CH_STR,          ['"'] = CH_STR | CH_ESC,
	['#'] = CH_STR,          ['+'] = CH_STR | CH_ESC, [','] = CH_STR | CH_ESC,
	[';'] = CH_STR | CH_ESC, ['<'] = CH_STR | CH_ESC, ['='] = CH_ESC,
	['>'] = CH_STR | CH_ESC, ['\\'] = CH_STR | CH_ESC,
};

/* descr (keystring) or numericoid. Numericoids need two arcs and no leading
 * zeros (RFC 4512 §1.4): "2.5.04.3" would otherwise be a second spelling of
 * cn that no table maps. */
static bool type_valid(const uint8_t *t, size_t n)
{
	if (n == 0)
		return false;
	if (is_alpha(t[0])) {
		for (size_t i = 1; i < n; i++)
			if (!is_alpha(t[i]) && !is_digit(t[i]) && t[i] != '-')
				return false;
		return true;
	}
	size_t arcs = 0;
	size_t i = 0;
	while (i < n) {
		size_t start = i;
		while (i < n && is_digit(t[i]))
			i++;
		if (i == start || (t[start] == '0' && i - start > 1))
			return false;
		arcs++;
		if (i < n) {
			if (t[i] != '.' || i + 1 == n)
				return false;
			i++;
		}
	}
	return arcs >= 2;
}

/* s is lower case and n bytes long. */
static bool eq_nocase(const uint8_t *t, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lower(t[i]) != (uint8_t)s[i])
			return false;
	return true;
}

/* The entry of a valid type, or NULL when we know nothing about it. */
static const struct attr_def *attr_lookup(const uint8_t *t, size_t n)
{
	bool oid = is_digit(t[0]);
	for (size_t i = 0; i < N_ATTR_DEFS; i++) {
		const struct attr_def *d = &attr_defs[i];
		if (oid) {
			if (d->oid_len == n && memcmp(d->oid, t, n) == 0)
				return d;
		} else if ((d->name_len == n && lower(t[0]) == (uint8_t)d->name[0] &&
			    eq_nocase(t, d->name, n)) ||
			   (d->alias_len == n && eq_nocase(t, d->alias, n))) {
			return d;
		}
	}
	return NULL;
}

void lfe_attr_key_init(struct lfe_attr_key *k, const uint8_t *t, size_t len)
{
	size_t bl = lfe_attr_base_len(t, len);
	const struct attr_def *d = bl && type_valid(t, bl) ? attr_lookup(t, bl) : NULL;

	k->type = t;
	k->type_len = bl;
	k->opts = t ? t + bl : NULL;
	k->opts_len = t ? len - bl : 0;
	k->name = k->alias = k->oid = NULL;
	k->name_len = k->alias_len = k->oid_len = 0;
	if (d) {
		k->name = d->name, k->name_len = d->name_len;
		k->alias = d->alias, k->alias_len = d->alias_len;
		k->oid = d->oid, k->oid_len = d->oid_len;
	}
}

/* Is n (any case) the descr s (lower case) of length sl? */
static bool is_descr(const uint8_t *n, size_t nl, const char *s, size_t sl)
{
	return nl == sl && sl && lower(n[0]) == (uint8_t)s[0] && eq_nocase(n, s, nl);
}

bool lfe_attr_key_type_is(const struct lfe_attr_key *k, const uint8_t *t, size_t len)
{
	if (!t || len == 0 || k->type_len == 0)
		return false;
	if (len == k->type_len) {
		size_t i = 0;
		while (i < len && lower(t[i]) == lower(k->type[i]))
			i++;
		if (i == len)
			return true;
	}
	if (!k->name)
		return false;   /* an unknown type has one spelling */
	if (is_digit(t[0]))
		return len == k->oid_len && memcmp(t, k->oid, len) == 0;
	return is_descr(t, len, k->name, k->name_len) || is_descr(t, len, k->alias, k->alias_len);
}

bool lfe_attr_type_same(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	struct lfe_attr_key k;

	lfe_attr_key_init(&k, a, an);
	return k.opts_len == 0 && lfe_attr_base_len(b, bn) == bn && lfe_attr_key_type_is(&k, b, bn);
}

bool lfe_attr_is_case_ignore(const uint8_t *type, size_t len)
{
	len = lfe_attr_base_len(type, len);
	if (!type || !type_valid(type, len))
		return false;
	const struct attr_def *d = attr_lookup(type, len);
	return d && d->case_ignore;
}

enum lfe_match_rule lfe_attr_rule(const uint8_t *type, size_t len)
{
	len = lfe_attr_base_len(type, len);
	if (!type || !type_valid(type, len))
		return LFE_MR_CASE_EXACT;
	const struct attr_def *d = attr_lookup(type, len);
	return d ? (enum lfe_match_rule)d->rule : LFE_MR_CASE_EXACT;
}

ssize_t lfe_attr_canon(const uint8_t *type, size_t len, char *out, size_t cap)
{
	if (!type || !type_valid(type, len))
		return -EINVAL;
	const struct attr_def *d = attr_lookup(type, len);
	size_t n = d ? d->name_len : len;
	if (!out || n + 1 > cap)
		return -ENOSPC;
	if (d) {
		memcpy(out, d->name, n);
	} else {
		for (size_t i = 0; i < n; i++)
			out[i] = (char)lower(type[i]);
	}
	out[n] = '\0';
	return (ssize_t)n;
}

/* Strict UTF-8 (RFC 3629): no overlongs, surrogates or code points above
 * U+10FFFF, so one character has exactly one byte form. */
static bool utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t k;
		uint32_t cp, min;
		if (c >= 0xc2 && c <= 0xdf) {
			k = 1; cp = c & 0x1f; min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 2; cp = c & 0x0f; min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3; cp = c & 0x07; min = 0x10000;
		} else {
			return false;
		}
		if (n - i <= k)
			return false;
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

/* Output under construction. len keeps counting past LFE_DN_MAX so the
 * caller can tell "too long" once, at the end of an AVA. */
struct wbuf {
	char *p;    /* LFE_DN_MAX bytes */
	size_t len;
};

static inline void put(struct wbuf *w, char c)
{
	if (w->len < LFE_DN_MAX)
		w->p[w->len] = c;
	w->len++;
}

static inline void put_hex(struct wbuf *w, uint8_t c)
{
	put(w, '\\');
	put(w, hexdig[c >> 4]);
	put(w, hexdig[c & 15]);
}

struct cursor {
	const uint8_t *p;
	size_t n;
	size_t i;
};

static inline void skip_spaces(struct cursor *c)
{
	while (c->i < c->n && c->p[c->i] == ' ')
		c->i++;
}

static inline bool at_value_end(const struct cursor *c)
{
	if (c->i == c->n)
		return true;
	uint8_t ch = c->p[c->i];
	return ch == ',' || ch == ';' || ch == '+';
}

static bool is_escapable(uint8_t c)
{
	return c == ' ' || c == '"' || c == '#' || c == '+' || c == ',' ||
	       c == ';' || c == '<' || c == '=' || c == '>' || c == '\\';
}

/* Reads "\X" or "\XX" at c->i (which holds the backslash) into *out. */
static int read_escape(struct cursor *c, uint8_t *out)
{
	if (c->n - c->i < 2)
		return -EINVAL;
	uint8_t a = c->p[c->i + 1];
	if (is_escapable(a)) {
		*out = a;
		c->i += 2;
		return 0;
	}
	int hi = hexval(a);
	if (hi < 0 || c->n - c->i < 3)
		return -EINVAL;
	int lo = hexval(c->p[c->i + 2]);
	if (lo < 0)
		return -EINVAL;
	*out = (uint8_t)(hi << 4 | lo);
	c->i += 3;
	return 0;
}

/* Decodes a string value (plain or quoted) into v; leading unescaped spaces
 * are already skipped. Returns its length with trailing unescaped spaces
 * dropped, or a negative errno. With collapse (case-ignore values), runs of
 * spaces are stored as one, so padding cannot exhaust vcap for a value whose
 * normalized form is short. */
static ssize_t read_string(struct cursor *c, uint8_t *v, size_t vcap,
			   bool collapse)
{
	size_t vlen = 0, keep = 0;
	bool quoted = c->i < c->n && c->p[c->i] == '"';

	if (quoted) {
		c->i++;
		for (;;) {
			if (c->i == c->n)
				return -EINVAL;
			uint8_t ch = c->p[c->i];
			if (ch == '"')
				break;
			if (ch == '\\') {
				/* RFC 1779 quoted pairs: the next byte as is. */
				if (c->n - c->i < 2)
					return -EINVAL;
				ch = c->p[c->i + 1];
				c->i++;
			}
			c->i++;
			if (collapse && ch == ' ' && vlen && v[vlen - 1] == ' ')
				continue;
			if (ch == '\0' || vlen == vcap)
				return -EINVAL;
			v[vlen++] = ch;
		}
		c->i++;
		skip_spaces(c);
		if (!at_value_end(c))
			return -EINVAL;
		return (ssize_t)vlen;
	}

	while (c->i < c->n) {
		uint8_t ch = c->p[c->i];
		bool significant = true; /* survives trailing-space trimming */
		if (ch >= 0x80 || !(ch_class[ch] & CH_STR)) {
			c->i++;
		} else if (ch == ',' || ch == ';' || ch == '+') {
			break;
		} else if (ch == '\\') {
			int rc = read_escape(c, &ch);
			if (rc)
				return rc;
		} else if (ch == ' ' || (ch == '#' && vlen > 0)) {
			significant = ch != ' ';
			c->i++;
		} else {
			return -EINVAL; /* NUL " < > and a leading # */
		}
		if (collapse && ch == ' ' && vlen && v[vlen - 1] == ' ')
			continue;
		if (vlen == vcap)
			return -EINVAL;
		v[vlen++] = ch;
		if (significant)
			keep = vlen;
	}
	return (ssize_t)keep;
}

/* Case-ignore string matching (RFC 4518 insignificant space handling, as
 * slapd applies it): fold ASCII, trim, collapse runs of spaces. */
static size_t fold_case_ignore(uint8_t *v, size_t n)
{
	size_t o = 0;
	bool space = false;
	for (size_t i = 0; i < n; i++) {
		if (v[i] == ' ') {
			space = o > 0;
			continue;
		}
		if (space) {
			v[o++] = ' ';
			space = false;
		}
		v[o++] = lower(v[i]);
	}
	if (o == 0 && n > 0)
		v[o++] = ' ';
	return o;
}

static void put_value(struct wbuf *w, const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = v[i];
		bool esc = ch >= 0x80 || (ch_class[ch] & CH_ESC) ||
			   (i == 0 && (ch == '#' || ch == ' ')) ||
			   (i + 1 == n && ch == ' ');
		if (esc)
			put_hex(w, ch);
		else
			put(w, (char)ch);
	}
}

/* Parses one AVA at c->i and appends its normalized "type=value". */
static int put_ava(struct cursor *c, struct wbuf *w)
{
	skip_spaces(c);
	size_t ts = c->i;
	while (c->i < c->n && (is_alpha(c->p[c->i]) || is_digit(c->p[c->i]) ||
			       c->p[c->i] == '-' || c->p[c->i] == '.'))
		c->i++;
	const uint8_t *type = c->p + ts;
	size_t tlen = c->i - ts;
	if (!type_valid(type, tlen))
		return -EINVAL;
	skip_spaces(c);
	if (c->i == c->n || c->p[c->i] != '=')
		return -EINVAL;
	c->i++;
	skip_spaces(c);

	const struct attr_def *d = attr_lookup(type, tlen);
	if (d) {
		for (size_t i = 0; i < d->name_len; i++)
			put(w, d->name[i]);
	} else {
		for (size_t i = 0; i < tlen; i++)
			put(w, (char)lower(type[i]));
	}
	put(w, '=');

	if (c->i < c->n && c->p[c->i] == '#') {
		c->i++;
		size_t hs = c->i;
		while (c->i < c->n && hexval(c->p[c->i]) >= 0)
			c->i++;
		size_t hn = c->i - hs;
		if (hn == 0 || hn % 2)
			return -EINVAL;
		skip_spaces(c);
		if (!at_value_end(c))
			return -EINVAL;
		put(w, '#');
		for (size_t i = 0; i < hn; i++) {
			uint8_t h = c->p[hs + i];
			put(w, (char)((h >= 'a' && h <= 'f') ? h - 0x20 : h));
		}
		return 0;
	}

	/* A value longer than LFE_DN_MAX cannot fit the output either. */
	uint8_t v[LFE_DN_MAX];
	bool ci = d && d->case_ignore;
	ssize_t vn = read_string(c, v, sizeof v, ci);
	if (vn < 0)
		return (int)vn;
	if (!utf8_valid(v, (size_t)vn))
		return -EINVAL;
	size_t n = (size_t)vn;
	if (ci)
		n = fold_case_ignore(v, n);
	put_value(w, v, n);
	return 0;
}

static int seg_cmp(const char *base, const size_t *a, const size_t *b)
{
	size_t la = a[1] - a[0], lb = b[1] - b[0];
	int r = memcmp(base + a[0], base + b[0], la < lb ? la : lb);
	if (r)
		return r;
	return la < lb ? -1 : la > lb;
}

/* The AVAs of one RDN sit at w->p[seg[i][0] .. seg[i][1]), joined by '+'.
 * Rewrites them in sorted order; identical AVAs are an error. */
static int sort_rdn(struct wbuf *w, size_t (*seg)[2], size_t navas)
{
	size_t idx[LFE_DN_MAX_AVAS];
	for (size_t i = 0; i < navas; i++) {
		size_t j = i;
		while (j > 0 && seg_cmp(w->p, seg[idx[j - 1]], seg[i]) > 0) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
	for (size_t i = 1; i < navas; i++)
		if (seg_cmp(w->p, seg[idx[i - 1]], seg[idx[i]]) == 0)
			return -EINVAL;

	size_t start = seg[0][0], end = seg[navas - 1][1];
	char tmp[LFE_DN_MAX];
	memcpy(tmp, w->p + start, end - start);
	size_t o = start;
	for (size_t i = 0; i < navas; i++) {
		const size_t *s = seg[idx[i]];
		if (i)
			w->p[o++] = '+';
		memcpy(w->p + o, tmp + (s[0] - start), s[1] - s[0]);
		o += s[1] - s[0];
	}
	return 0;
}

/* Byte classes of the fast path's attribute types, one table lookup per
 * input byte (values: value_map below). */
enum { PL_TSTART = 1, PL_TYPE = 2 };
static const uint8_t plain_class[256] = {
#define R3(a) [a] = PL_TYPE
	['-'] = PL_TYPE,
	R3('0'), R3('1'), R3('2'), R3('3'), R3('4'), R3('5'), R3('6'), R3('7'), R3('8'), R3('9'),
#define A2(c) [c] = PL_TSTART | PL_TYPE, [c + 32] = PL_TSTART | PL_TYPE
	A2('A'), A2('B'), A2('C'), A2('D'), A2('E'), A2('F'), A2('G'), A2('H'), A2('I'),
	A2('J'), A2('K'), A2('L'), A2('M'), A2('N'), A2('O'), A2('P'), A2('Q'), A2('R'),
	A2('S'), A2('T'), A2('U'), A2('V'), A2('W'), A2('X'), A2('Y'), A2('Z'),
#undef A2
#undef R3
};

/* The fast path's value bytes mapped to what it writes: [0] as they are,
 * [1] case-folded (case-ignore types); 0 for every byte that ends a value
 * or sends the DN to the full parser. One load per byte tests and maps. */
static const uint8_t value_map[2][256] = {
#define V(c) [c] = c
#define KEEP(c) [c] = c, [c + 32] = c + 32
#define FOLD(c) [c] = c + 32, [c + 32] = c + 32
#define COMMON V('-'), V('.'), V('_'), V('@'), V('0'), V('1'), V('2'), V('3'), V('4'), \
	V('5'), V('6'), V('7'), V('8'), V('9')
#define LETTERS(M) M('A'), M('B'), M('C'), M('D'), M('E'), M('F'), M('G'), M('H'), M('I'), \
	M('J'), M('K'), M('L'), M('M'), M('N'), M('O'), M('P'), M('Q'), M('R'), M('S'), \
	M('T'), M('U'), M('V'), M('W'), M('X'), M('Y'), M('Z')
	{ COMMON, LETTERS(KEEP) },
	{ COMMON, LETTERS(FOLD) },
#undef LETTERS
#undef COMMON
#undef FOLD
#undef KEEP
#undef V
};

/* The types of nearly every bind DN, found without scanning attr_defs. */
static const struct attr_def *attr_lookup_common(const uint8_t *t, size_t n)
{
	uint32_t k = 0;
	if (n > 4)
		return attr_lookup(t, n);
	for (size_t i = 0; i < n; i++)
		k = k << 8 | lower(t[i]);
	switch (k) {
	case 'u' << 16 | 'i' << 8 | 'd': return &attr_defs[0];
	case 'c' << 8 | 'n': return &attr_defs[1];
	case 'o' << 8 | 'u': return &attr_defs[2];
	case 'd' << 8 | 'c': return &attr_defs[7];
	default: return attr_lookup(t, n);
	}
}

/* The common shape of a bind DN, "uid=jdoe,ou=People,dc=example,dc=com":
 * descr types, values of letters, digits and "-._@", ',' separators, no
 * spaces but after a ',' ("uid=jdoe, ou=People"). One pass; -EAGAIN sends anything else to the full parser, whose
 * output this matches byte for byte (the unit tests compare the two on every
 * case, the fuzzer on every input). */
static ssize_t dn_normalize_plain(const uint8_t *dn, size_t len, char *out, size_t cap)
{
	size_t i = 0, o = 0, nrdns = 0;
	size_t lim = cap - 1 < LFE_DN_MAX ? cap - 1 : LFE_DN_MAX;   /* cap > 0 */
	while (i < len) {
		if (++nrdns > LFE_DN_MAX_RDNS || !(plain_class[dn[i]] & PL_TSTART))
			return -EAGAIN;
		size_t ts = i++;
		while (i < len && (plain_class[dn[i]] & PL_TYPE))
			i++;
		if (i == len || dn[i] != '=')
			return -EAGAIN;
		size_t tn = i - ts;
		const struct attr_def *d = attr_lookup_common(dn + ts, tn);
		if (d)
			tn = d->name_len;
		size_t sep = o ? 1 : 0;
		if ((uint64_t)o + sep + tn + 1 > lim)
			return -EAGAIN;
		if (sep)
			out[o++] = ',';
		if (d) {
			memcpy(out + o, d->name, tn);
		} else {
			for (size_t k = 0; k < tn; k++)
				out[o + k] = (char)lower(dn[ts + k]);
		}
		o += tn;
		out[o++] = '=';
		/* Copy the value, mapped (case-folded when the attribute
		 * ignores case), up to the room left; a value byte beyond the
		 * room sends the DN to the full parser, which says -ENOSPC. */
		const uint8_t *map = value_map[d && d->case_ignore];
		size_t vs = ++i;
		size_t end = len - i > lim - o ? i + (lim - o) : len;   /* o <= lim: checked above */
		while (i < end) {
			uint8_t m = map[dn[i]];
			if (m == 0)
				break;
			out[o++] = (char)m;
			i++;
		}
		if (i == end && i < len && map[dn[i]] != 0)
			return -EAGAIN;
		if (i == vs || (i < len && dn[i] != ','))
			return -EAGAIN;
		if (i < len) {
			/* Past the ',' and the spaces after it, which the full
			 * parser skips before a type; something must follow. */
			do
				i++;
			while (i < len && dn[i] == ' ');
			if (i == len)
				return -EAGAIN;
		}
	}
	out[o] = '\0';
	return (ssize_t)o;
}

/* The full RFC 4514 parser. Not in dn.h: tests compare it with the fast
 * path. */
ssize_t lfe_dn_normalize_full(const uint8_t *dn, size_t len, char *out, size_t cap);

/* The vector path below classifies 16 input bytes at once: it writes them
 * with 'A'..'Z' lower-cased to out[0..16), returns the mask of bytes outside
 * its alphabet (bit i for in[i]) and sets the masks of its ',' and '='
 * bytes. The alphabet: letters, digits, "-./@_", ',' and '=' — bytes that
 * come out of the full parser as they are (lower-cased in case-ignore
 * values) wherever they stand in a value; '/' is no type byte, vec_type
 * refuses it there. */
#if defined(__SSE2__)
/* 0xff where v's byte lies in lo .. lo + n - 1 (unsigned, n <= 128). */
static inline __m128i in_range(__m128i v, uint8_t lo, uint8_t n)
{
	__m128i x = _mm_add_epi8(v, _mm_set1_epi8((char)(uint8_t)(0x80u - lo)));
	return _mm_cmplt_epi8(x, _mm_set1_epi8((char)(uint8_t)(0x80u + n)));
}

static inline unsigned chunk_scan(const uint8_t *in, uint8_t *out, unsigned *commas,
				  unsigned *eqs)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)in);
	__m128i lo = _mm_or_si128(v, _mm_and_si128(in_range(v, 'A', 26), _mm_set1_epi8(0x20)));
	_mm_storeu_si128((__m128i *)(void *)out, lo);
	__m128i eq = _mm_cmpeq_epi8(v, _mm_set1_epi8('='));
	/* ',' .. '9' is ",-./" and the digits */
	__m128i ok = _mm_or_si128(in_range(lo, 'a', 26), _mm_or_si128(in_range(v, ',', 14), eq));
	*commas = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')));
	*eqs = (unsigned)_mm_movemask_epi8(eq);
	unsigned bad = ~(unsigned)_mm_movemask_epi8(ok) & 0xffffu;
	if (bad) {   /* '@' and '_' are rarer: looked for only when needed */
		ok = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('@')),
				  _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
		bad &= ~(unsigned)_mm_movemask_epi8(ok);
	}
	return bad;
}
#else
static inline unsigned chunk_scan(const uint8_t *in, uint8_t *out, unsigned *commas,
				  unsigned *eqs)
{
	unsigned bad = 0, cm = 0, em = 0;
	for (unsigned i = 0; i < 16; i++) {
		uint8_t c = in[i];
		out[i] = lower(c);
		bad |= (unsigned)(value_map[0][c] == 0 && c != ',' && c != '=' && c != '/') << i;
		cm |= (unsigned)(c == ',') << i;
		em |= (unsigned)(c == '=') << i;
	}
	*commas = cm;
	*eqs = em;
	return bad;
}
#endif

/* The short canonical names of attr_defs, all case-ignore, as
 * little-endian keys (first byte lowest) in a table indexed by a
 * multiplicative hash; two names in one slot would be a duplicate
 * initializer, which -Wextra (-Woverride-init) makes an error. mask[n]
 * keeps the first n bytes of a key. One struct: one base address. */
#define TKEY_SLOT(k) ((uint32_t)((k) * 0x6ec9d287u) >> 28)
#define TK1(a) ((uint32_t)(a))
#define TK2(a, b) (TK1(a) | (uint32_t)(b) << 8)
#define TK3(a, b, c) (TK2(a, b) | (uint32_t)(c) << 16)
#define TK4(a, b, c, d) (TK3(a, b, c) | (uint32_t)(d) << 24)
#define TK(k) [TKEY_SLOT(k)] = (k)
static const struct {
	uint32_t mask[5];
	uint32_t key[16];
} short_ci_types = {
	.mask = { 0, 0xff, 0xffff, 0xffffff, 0xffffffff },
	.key = {
		TK(TK3('u', 'i', 'd')), TK(TK2('c', 'n')), TK(TK2('o', 'u')), TK(TK2('d', 'c')),
		TK(TK1('o')), TK(TK1('c')), TK(TK1('l')), TK(TK2('s', 't')), TK(TK2('s', 'n')),
		TK(TK4('m', 'a', 'i', 'l')),
	},
};
#undef TK

static inline uint32_t load_le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

/* vec_type() for the types outside short_ci_types; n > 0. */
__attribute__((noinline))
static int vec_type_slow(const uint8_t *dn, const uint8_t *lo, size_t ts, size_t n)
{
	const uint8_t *t = dn + ts;
	lo += ts;
	if (!is_alpha(lo[0]))
		return -1;
	for (size_t i = 1; i < n; i++)
		if (!(plain_class[lo[i]] & PL_TYPE))
			return -1;
	const struct attr_def *d = attr_lookup(t, n);
	if (!d)
		return 0;
	if (d->name_len != n || memcmp(d->name, lo, n) != 0)
		return -1;
	return d->case_ignore;
}

/* A type of the vector path, lo[ts .. ts + n), lower-cased (dn: the same
 * bytes as read; lo[ts .. ts + 4) readable; n > 0): 1 for a case-ignore
 * attribute, 0 for a case-exact or unknown one, -1 for one the slower paths
 * take (an OID, an alias whose output is another spelling, a byte no descr
 * has). Types come out as their lower-cased spelling. */
static inline int vec_type(const uint8_t *dn, const uint8_t *lo, size_t ts, size_t n)
{
	if (n <= 4) {
		uint32_t k = load_le32(lo + ts) & short_ci_types.mask[n];
		if (short_ci_types.key[TKEY_SLOT(k)] == k)
			return 1;
	}
	return vec_type_slow(dn, lo, ts, n);
}

/* The common bind DN again, 16 bytes at a time, for DNs whose normalized
 * form is the input with its types (and the values of case-ignore types)
 * lower-cased: same length, byte for byte. One pass classifies and writes
 * every byte and collects masks of the ',' and '=' positions; a walk over
 * the masks checks the RDNs' shape and types and puts back the original
 * bytes of case-exact values. -EAGAIN for anything else (dn_normalize_plain
 * takes aliases and tight rooms, the full parser the rest). Reads
 * dn[0..len) and writes out[0..len] only. Inlined into lfe_dn_normalize:
 * a call would cost the common case a tenth more. */
static inline __attribute__((always_inline))
ssize_t dn_normalize_vec(const uint8_t *dn, size_t len, char *out, size_t cap)
{
	if (len - 1 >= LFE_DN_MAX || len >= cap || !dn || !out)
		return -EAGAIN;   /* also len 0 and cap 0 */
	if (!is_alpha(dn[0]))
		return -EAGAIN;   /* an OID ("2.5.4.3=x"): not worth the scan */
	uint8_t *o = (uint8_t *)out;
	/* Bit p of commas[p / 64] for a ',' at dn[p], and so on; bit len is
	 * set in both, so the walk below needs no bounds. */
	uint64_t commas[LFE_DN_MAX / 64 + 1], eqs[LFE_DN_MAX / 64 + 1], cw = 0, ew = 0;
	unsigned c, e;
	size_t off = 0;
	for (; len - off >= 16; off += 16) {
		if (chunk_scan(dn + off, o + off, &c, &e))
			return -EAGAIN;
		cw |= (uint64_t)c << (off % 64);
		ew |= (uint64_t)e << (off % 64);
		if (off % 64 == 48) {
			commas[off / 64] = cw;
			eqs[off / 64] = ew;
			cw = ew = 0;
		}
	}
	c = e = 1u << (len - off);   /* the bit at len */
	if (off < len) {
		/* The last len - off bytes: again in the chunk that ends at
		 * dn[len - 1], or, for a DN under 16 bytes, in a copy. */
		unsigned bad, cl, el, drop = (unsigned)(16 - (len - off));
		if (len >= 16) {
			bad = chunk_scan(dn + len - 16, o + len - 16, &cl, &el) >> drop;
			cl >>= drop;
			el >>= drop;
		} else {
			uint8_t ib[16] = { 0 }, ob[16];
			memcpy(ib, dn, len);
			bad = chunk_scan(ib, ob, &cl, &el) & ((1u << len) - 1);
			memcpy(o, ob, len);
		}
		if (bad)
			return -EAGAIN;
		c |= cl;
		e |= el;
	}
	commas[len / 64] = cw | (uint64_t)c << (off % 64);
	eqs[len / 64] = ew | (uint64_t)e << (off % 64);

	/* 65 RDNs take 259 bytes ("a=b," 64 times and "a=b"). */
	if (len >= 4 * LFE_DN_MAX_RDNS + 3) {
		size_t n = 0;
		for (size_t w = 0; w <= len / 64; w++)
			for (uint64_t m = eqs[w]; m; m &= m - 1)
				n++;
		if (n > LFE_DN_MAX_RDNS + 1)
			return -EAGAIN;
	}

	/* Each RDN: its type at ts, its '=' at eq, its ',' (or the end) at
	 * end, taking the '=' and the ',' in turn from their masks (both end
	 * with a bit at len): each '=' must come after the RDN's start (a
	 * non-empty type, no second '=' in the RDN before), each ',' after the
	 * '=' and the byte after it (a non-empty value), and the '=' left
	 * after the last RDN must be the one at len. */
	o[len] = '\0';   /* vec_type reads up to 3 bytes past a 1-byte type */
	size_t we = 0, wc = 0, ts = 0, eq, end;   /* we, wc: bit 0 of me, mc */
	uint64_t me = eqs[0], mc = commas[0];
	for (;;) {
		while (me == 0) {
			we += 64;
			me = eqs[we / 64];
		}
		eq = we + (unsigned)__builtin_ctzll(me);
		me &= me - 1;
		while (mc == 0) {
			wc += 64;
			mc = commas[wc / 64];
		}
		end = wc + (unsigned)__builtin_ctzll(mc);
		mc &= mc - 1;
		if (eq <= ts || end <= eq + 1)
			return -EAGAIN;
		int ci = vec_type(dn, o, ts, eq - ts);
		if (ci < 0)
			return -EAGAIN;
		if (!ci)
			memcpy(o + eq + 1, dn + eq + 1, end - eq - 1);
		if (end == len)
			break;
		ts = end + 1;
	}
	while (me == 0) {
		we += 64;
		me = eqs[we / 64];
	}
	if (we + (unsigned)__builtin_ctzll(me) != len)
		return -EAGAIN;   /* '=' in the last value */
	return (ssize_t)len;
}

/* The two fast paths on their own, for the tests, which compare each with
 * the full parser; -EAGAIN where a path leaves the DN to the next. Not in
 * dn.h. */
ssize_t lfe_dn_normalize_vec(const uint8_t *dn, size_t len, char *out, size_t cap);
ssize_t lfe_dn_normalize_plain(const uint8_t *dn, size_t len, char *out, size_t cap);

ssize_t lfe_dn_normalize_vec(const uint8_t *dn, size_t len, char *out, size_t cap)
{
	return dn_normalize_vec(dn, len, out, cap);
}

ssize_t lfe_dn_normalize_plain(const uint8_t *dn, size_t len, char *out, size_t cap)
{
	if (!dn || !out || len == 0 || cap == 0)
		return -EAGAIN;
	return dn_normalize_plain(dn, len, out, cap);
}

/* What the vector path leaves: the one-pass scalar path, then the full
 * parser. Out of line, so that their registers and stack are not the
 * common case's. */
__attribute__((noinline))
static ssize_t dn_normalize_slow(const uint8_t *dn, size_t len, char *out, size_t cap)
{
	if (dn && out && len > 0 && cap > 0) {
		ssize_t n = dn_normalize_plain(dn, len, out, cap);
		if (n != -EAGAIN)
			return n;
	}
	return lfe_dn_normalize_full(dn, len, out, cap);
}

ssize_t lfe_dn_normalize(const uint8_t *dn, size_t len, char *out, size_t cap)
{
	ssize_t n = dn_normalize_vec(dn, len, out, cap);
	if (n != -EAGAIN)
		return n;
	return dn_normalize_slow(dn, len, out, cap);
}

ssize_t lfe_dn_normalize_full(const uint8_t *dn, size_t len, char *out, size_t cap)
{
	if (!dn && len)
		return -EINVAL;
	char buf[LFE_DN_MAX];
	struct wbuf w = { .p = buf, .len = 0 };
	struct cursor c = { .p = dn, .n = len, .i = 0 };
	size_t nrdns = 0;

	while (len > 0) {
		if (++nrdns > LFE_DN_MAX_RDNS)
			return -EINVAL;
		if (nrdns > 1)
			put(&w, ',');
		size_t seg[LFE_DN_MAX_AVAS][2];
		size_t navas = 0;
		for (;;) {
			if (navas == LFE_DN_MAX_AVAS)
				return -EINVAL;
			if (navas)
				put(&w, '+');
			seg[navas][0] = w.len;
			int rc = put_ava(&c, &w);
			if (rc)
				return rc;
			if (w.len > LFE_DN_MAX)
				return -EINVAL;
			seg[navas][1] = w.len;
			navas++;
			if (c.i == c.n || c.p[c.i] != '+')
				break;
			c.i++;
		}
		if (navas > 1) {
			int rc = sort_rdn(&w, seg, navas);
			if (rc)
				return rc;
		}
		if (c.i == c.n)
			break;
		c.i++; /* ',' or ';': at_value_end let nothing else through */
	}

	if (!out || w.len + 1 > cap)
		return -ENOSPC;
	memcpy(out, buf, w.len);
	out[w.len] = '\0';
	return (ssize_t)w.len;
}

bool lfe_dn_is_under(const char *ndn, size_t ndn_len,
		     const char *suffix, size_t suffix_len)
{
	if (suffix_len == 0)
		return true;
	if (!ndn || !suffix || ndn_len < suffix_len)
		return false;
	if (memcmp(ndn + ndn_len - suffix_len, suffix, suffix_len) != 0)
		return false;
	/* A ',' in a normalized DN always separates RDNs (commas inside values
	 * are escaped as \2C), so this is an RDN boundary. */
	return ndn_len == suffix_len || ndn[ndn_len - suffix_len - 1] == ',';
}

size_t lfe_dn_parent(const char *ndn, size_t ndn_len, const char **parent)
{
	for (size_t i = 0; i < ndn_len; i++) {
		if (ndn[i] == '\\') {
			i++;
			continue;
		}
		if (ndn[i] == ',') {
			*parent = ndn + i + 1;
			return ndn_len - i - 1;
		}
	}
	*parent = ndn + ndn_len;
	return 0;
}
