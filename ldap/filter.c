/* ldap/filter.c — RFC 4511 §4.5.1 filters walked in their BER form.
 *
 * Choices beyond the RFC text, all deliberate:
 *   - empty and/or sets are accepted: RFC 4526 absolute TRUE "(&)" and
 *     FALSE "(|)", which libldap and ldap3 both send;
 *   - attribute descriptions (and matching rule ids) must be non-empty and
 *     made of ALPHA / DIGIT / '-' / '.' / ';' (RFC 4512 §2.5) plus '_',
 *     which some deployed schemas use; anything else is -EBADMSG, so
 *     lfe_filter_to_string() can print them without escaping;
 *   - substring pieces and assertion values may be empty (OCTET STRING);
 *   - evaluation has no schema: values compare exactly, or ASCII
 *     case-insensitively for the case-ignore attributes of dn.h; ordering
 *     compares integers numerically when both sides are canonical decimal
 *     integers (uidNumber >= 1000 must not compare "999" above "1000"),
 *     else byte-wise; approxMatch is equality; extensibleMatch is equality
 *     when no matchingRule is named, else UNDEFINED;
 *   - items on secret attributes, and on attributes the provider reports
 *     hidden, are UNDEFINED (filter.h);
 *   - a filter "(cn=x)" tests the values stored under exactly "cn" (or an
 *     alias or OID of it): subtypes such as "cn;lang-en" are not searched.
 */
#include "ldap/attr.h"
#include "ldap/ber.h"
#include "ldap/dn.h"
#include "ldap/filter.h"

enum {
	F_AND = LFE_BER_CTX_CONS(0),
	F_OR = LFE_BER_CTX_CONS(1),
	F_NOT = LFE_BER_CTX_CONS(2),
	F_EQ = LFE_BER_CTX_CONS(3),
	F_SUB = LFE_BER_CTX_CONS(4),
	F_GE = LFE_BER_CTX_CONS(5),
	F_LE = LFE_BER_CTX_CONS(6),
	F_PRESENT = LFE_BER_CTX(7),
	F_APPROX = LFE_BER_CTX_CONS(8),
	F_EXT = LFE_BER_CTX_CONS(9),
	SUB_INITIAL = LFE_BER_CTX(0),
	SUB_ANY = LFE_BER_CTX(1),
	SUB_FINAL = LFE_BER_CTX(2),
	MR_RULE = LFE_BER_CTX(1),
	MR_TYPE = LFE_BER_CTX(2),
	MR_VALUE = LFE_BER_CTX(3),
	MR_DNATTRS = LFE_BER_CTX(4),
};

/* Values fetched per window during evaluation (filter.h: every value is
 * compared, window after window; this only sizes the stack array). */
#define EVAL_WINDOW 32u

static bool desc_ok(struct lfe_bytes d)
{
	if (d.len == 0)
		return false;
	for (size_t i = 0; i < d.len; i++) {
		uint8_t c = d.p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '.' || c == ';' || c == '_'))
			return false;
	}
	return true;
}

static bool read_desc(struct lfe_ber *b, uint8_t tag, struct lfe_bytes *d)
{
	if (!lfe_ber_octets(b, tag, d))
		return false;
	if (!desc_ok(*d))
		return lfe_ber_fail(b, -EBADMSG);
	return true;
}

static bool read_ava(struct lfe_ber *b, uint8_t tag, struct lfe_bytes *attr,
		     struct lfe_bytes *val)
{
	struct lfe_ber s;

	return lfe_ber_enter(b, tag, &s) && read_desc(&s, LFE_BER_OCTETS, attr) &&
	       lfe_ber_octets(&s, LFE_BER_OCTETS, val) && lfe_ber_done(&s);
}

struct mra {
	bool has_rule, has_type, dn_attrs;
	struct lfe_bytes rule, type, value;
};

static bool read_mra(struct lfe_ber *b, struct mra *m)
{
	struct lfe_ber s;

	m->has_rule = m->has_type = m->dn_attrs = false;
	if (!lfe_ber_enter(b, F_EXT, &s))
		return false;
	if (lfe_ber_peek(&s) == MR_RULE) {
		if (!read_desc(&s, MR_RULE, &m->rule))
			return false;
		m->has_rule = true;
	}
	if (lfe_ber_peek(&s) == MR_TYPE) {
		if (!read_desc(&s, MR_TYPE, &m->type))
			return false;
		m->has_type = true;
	}
	if (!lfe_ber_octets(&s, MR_VALUE, &m->value))
		return false;
	if (lfe_ber_peek(&s) == MR_DNATTRS && !lfe_ber_bool(&s, MR_DNATTRS, &m->dn_attrs))
		return false;
	/* RFC 4511 §4.5.1.7.7: without a matchingRule the type is required. */
	if (!m->has_rule && !m->has_type)
		return lfe_ber_fail(&s, -EBADMSG);
	return lfe_ber_done(&s);
}

/* What validation counts against the caps of filter.h. */
struct vcount {
	unsigned nodes, pieces;
};

/* SubstringFilter's `substrings`: initial first and at most once, final
 * last and at most once, at least one piece; the piece caps. */
static bool check_subs(struct lfe_ber *subs, struct vcount *vc)
{
	struct lfe_ber s = *subs;
	unsigned n = 0;
	bool seen_final = false;
	uint8_t tag;
	struct lfe_bytes v;

	while (lfe_ber_more(&s)) {
		if (!lfe_ber_elem(&s, &tag, NULL, &v))
			return false;
		if (seen_final)
			return lfe_ber_fail(&s, -EBADMSG);
		if (n == LFE_LDAP_MAX_SUB_PIECES || ++vc->pieces > LFE_LDAP_MAX_FILTER_PIECES)
			return lfe_ber_fail(&s, -E2BIG);
		if (tag == SUB_INITIAL) {
			if (n != 0)
				return lfe_ber_fail(&s, -EBADMSG);
		} else if (tag == SUB_FINAL) {
			seen_final = true;
		} else if (tag != SUB_ANY) {
			return lfe_ber_fail(&s, -EBADMSG);
		}
		n++;
	}
	if (n == 0)
		return lfe_ber_fail(&s, -EBADMSG);
	return lfe_ber_done(&s);
}

/* vc == NULL: the pieces are not checked (evaluation; sub_match reads
 * them through the cursor as they come). */
static bool read_sub(struct lfe_ber *b, struct lfe_bytes *attr, struct lfe_ber *subs,
		     struct vcount *vc)
{
	struct lfe_ber s;

	return lfe_ber_enter(b, F_SUB, &s) && read_desc(&s, LFE_BER_OCTETS, attr) &&
	       lfe_ber_enter(&s, LFE_BER_SEQUENCE, subs) && (!vc || check_subs(subs, vc)) &&
	       lfe_ber_done(&s);
}

static bool validate_node(struct lfe_ber *b, unsigned depth, struct vcount *vc)
{
	struct lfe_ber s;
	struct lfe_bytes a, v;
	struct mra m;

	if (++vc->nodes > LFE_LDAP_MAX_FILTER_NODES || depth > LFE_LDAP_MAX_FILTER_DEPTH)
		return lfe_ber_fail(b, -E2BIG);
	int tag = lfe_ber_peek(b);
	switch (tag) {
	case F_AND:
	case F_OR:
		if (!lfe_ber_enter(b, (uint8_t)tag, &s))
			return false;
		while (lfe_ber_more(&s))
			if (!validate_node(&s, depth + 1, vc))
				return false;
		return lfe_ber_done(&s);
	case F_NOT:
		return lfe_ber_enter(b, F_NOT, &s) && validate_node(&s, depth + 1, vc) &&
		       lfe_ber_done(&s);
	case F_EQ:
	case F_GE:
	case F_LE:
	case F_APPROX:
		return read_ava(b, (uint8_t)tag, &a, &v);
	case F_SUB:
		return read_sub(b, &a, &s, vc);
	case F_PRESENT:
		return read_desc(b, F_PRESENT, &a);
	case F_EXT:
		return read_mra(b, &m);
	default:
		return lfe_ber_fail(b, -EBADMSG);
	}
}

int lfe_filter_validate(const uint8_t *f, size_t len)
{
	struct lfe_ber b;
	struct vcount vc = { 0, 0 };

	lfe_ber_init(&b, f, len);
	if (validate_node(&b, 1, &vc))
		lfe_ber_done(&b);
	return lfe_ber_error(&b);
}

/* ---- evaluation -------------------------------------------------------- */

static inline uint8_t fold(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}

static bool eq_at(const uint8_t *a, const uint8_t *b, size_t n, bool ci)
{
	if (!ci)
		return memcmp(a, b, n) == 0;
	for (size_t i = 0; i < n; i++)
		if (fold(a[i]) != fold(b[i]))
			return false;
	return true;
}

static bool bytes_eq(struct lfe_bytes a, struct lfe_bytes b, bool ci)
{
	return a.len == b.len && (a.len == 0 || eq_at(a.p, b.p, a.len, ci));
}

static bool is_int(struct lfe_bytes v)
{
	size_t i = (v.len > 0 && v.p[0] == '-') ? 1 : 0;

	if (i == v.len || (v.p[i] == '0' && (v.len - i > 1 || i == 1)))
		return false;
	for (; i < v.len; i++)
		if (v.p[i] < '0' || v.p[i] > '9')
			return false;
	return true;
}

static int cmp_int(struct lfe_bytes a, struct lfe_bytes b)
{
	bool na = a.p[0] == '-', nb = b.p[0] == '-';

	if (na != nb)
		return na ? -1 : 1;
	int sign = na ? -1 : 1;
	if (a.len != b.len)
		return a.len < b.len ? -sign : sign;
	int c = memcmp(a.p, b.p, a.len);
	return c < 0 ? -sign : c > 0 ? sign : 0;
}

static int cmp_bytes(struct lfe_bytes a, struct lfe_bytes b, bool ci)
{
	if (is_int(a) && is_int(b))
		return cmp_int(a, b);
	size_t n = a.len < b.len ? a.len : b.len;
	for (size_t i = 0; i < n; i++) {
		uint8_t x = ci ? fold(a.p[i]) : a.p[i];
		uint8_t y = ci ? fold(b.p[i]) : b.p[i];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return a.len < b.len ? -1 : a.len > b.len ? 1 : 0;
}

/* Leftmost occurrence of piece in v at or after *pos; advances *pos past it. */
static bool find_piece(struct lfe_bytes v, size_t *pos, struct lfe_bytes piece, bool ci)
{
	if (piece.len > v.len - *pos)
		return false;
	for (size_t i = *pos; i + piece.len <= v.len; i++) {
		if (piece.len == 0 || eq_at(v.p + i, piece.p, piece.len, ci)) {
			*pos = i + piece.len;
			return true;
		}
	}
	return false;
}

/* Leftmost-first matching of the `any` pieces is optimal: it leaves the
 * most room for the later pieces and for `final`. */
static bool sub_match(struct lfe_bytes v, const struct lfe_ber *subs, bool ci)
{
	struct lfe_ber s = *subs;
	size_t pos = 0;
	uint8_t tag;
	struct lfe_bytes piece;

	while (lfe_ber_more(&s) && lfe_ber_elem(&s, &tag, NULL, &piece)) {
		if (tag == SUB_INITIAL) {
			if (piece.len > v.len || !eq_at(v.p, piece.p, piece.len, ci))
				return false;
			pos = piece.len;
		} else if (tag == SUB_ANY) {
			if (!find_piece(v, &pos, piece, ci))
				return false;
		} else {
			if (piece.len > v.len - pos ||
			    !eq_at(v.p + v.len - piece.len, piece.p, piece.len, ci))
				return false;
		}
	}
	return true;
}

enum cmp_kind { CMP_EQ, CMP_GE, CMP_LE, CMP_SUB };

struct evalc {
	lfe_filter_attr_fn get;
	void *ctx;
	uint64_t *work;     /* NULL: unbounded */
	bool out;           /* the budget ran out */
};

/* Charge n units; false (and e->out) when the budget cannot pay. */
static bool charge(struct evalc *e, uint64_t n)
{
	if (!e->work)
		return true;
	if (*e->work < n) {
		*e->work = 0;
		e->out = true;
		return false;
	}
	*e->work -= n;
	return true;
}

/* Bytes a comparison of v examines at most (substrings: per piece). */
static uint64_t cmp_cost(enum cmp_kind k, struct lfe_bytes v, const struct lfe_ber *subs)
{
	uint64_t pieces = 1;

	if (k == CMP_SUB) {
		struct lfe_ber s = *subs;
		for (pieces = 0; lfe_ber_more(&s) && lfe_ber_skip(&s); pieces++)
			;
	}
	return pieces * (1 + (uint64_t)v.len);
}

/* Values of attr, or LFE_FILTER_HIDDEN for a secret or hidden one. */
static uint32_t item_vals(const struct evalc *e, struct lfe_bytes attr, uint32_t first,
			  struct lfe_bytes *vals, uint32_t cap)
{
	if (attr.len == 0 || lfe_attr_is_secret(attr.p, attr.len))
		return LFE_FILTER_HIDDEN;
	return e->get(e->ctx, attr, first, vals, cap);
}

static bool cmp_one(enum cmp_kind k, struct lfe_bytes have, struct lfe_bytes val,
		    const struct lfe_ber *subs, bool ci)
{
	switch (k) {
	case CMP_EQ:
		return bytes_eq(have, val, ci);
	case CMP_GE:
		return cmp_bytes(have, val, ci) >= 0;
	case CMP_LE:
		return cmp_bytes(have, val, ci) <= 0;
	default:
		return sub_match(have, subs, ci);
	}
}

/* Compare every value of attr, a window at a time. */
static int eval_item(struct evalc *e, enum cmp_kind k, struct lfe_bytes attr,
		     struct lfe_bytes val, const struct lfe_ber *subs)
{
	struct lfe_bytes vals[EVAL_WINDOW];
	uint32_t n = item_vals(e, attr, 0, vals, EVAL_WINDOW);
	if (n == LFE_FILTER_HIDDEN)
		return LFE_FILTER_UNDEFINED;
	bool ci = lfe_attr_is_case_ignore(attr.p, attr.len);
	/* DN-valued types (lfe_attr_rule): equality of the normalized forms
	 * when both sides normalize, else of the bytes (the store's index key
	 * follows the same rule, so index and scan agree). */
	char na[LFE_DN_MAX + 1], nv[LFE_DN_MAX + 1];
	ssize_t nal = -1;
	if (k == CMP_EQ && lfe_attr_rule(attr.p, attr.len) == LFE_MR_DN)
		nal = lfe_dn_normalize(val.p, val.len, na, sizeof(na));

	for (uint32_t first = 0; first < n; first += EVAL_WINDOW) {
		if (first > 0) {
			/* The same entry answers the same count; one that does
			 * not is ended where its values end. */
			uint32_t again = item_vals(e, attr, first, vals, EVAL_WINDOW);
			if (again == LFE_FILTER_HIDDEN)
				return LFE_FILTER_UNDEFINED;
			if (again < n)
				n = again;
		}
		uint32_t m = n - first < EVAL_WINDOW ? n - first : EVAL_WINDOW;
		for (uint32_t i = 0; i < m; i++) {
			if (!charge(e, cmp_cost(k, vals[i], subs)))
				return LFE_FILTER_UNDEFINED;
			if (nal >= 0) {
				ssize_t nvl = lfe_dn_normalize(vals[i].p, vals[i].len, nv, sizeof(nv));
				if (nvl >= 0) {
					if (nvl == nal && memcmp(nv, na, (size_t)nal) == 0)
						return LFE_FILTER_TRUE;
					continue;
				}
			}
			if (cmp_one(k, vals[i], val, subs, ci))
				return LFE_FILTER_TRUE;
		}
	}
	return LFE_FILTER_FALSE;
}

/* Walks a filter validate_node() accepted at decode, without checking the
 * grammar again; the cursor still guards every read, nesting is bounded
 * here too, and any failure surfaces through the cursor's sticky error. */
static int eval_node(struct lfe_ber *b, struct evalc *e, unsigned depth)
{
	struct lfe_ber s;
	struct lfe_bytes a, v;
	struct mra m;
	int r;
	int tag = lfe_ber_peek(b);

	if (depth > LFE_LDAP_MAX_FILTER_DEPTH) {
		lfe_ber_fail(b, -E2BIG);
		return LFE_FILTER_UNDEFINED;
	}
	if (!charge(e, 1))
		return LFE_FILTER_UNDEFINED;
	switch (tag) {
	case F_AND:
	case F_OR: {
		bool is_and = tag == F_AND;
		int acc = is_and ? LFE_FILTER_TRUE : LFE_FILTER_FALSE;
		if (!lfe_ber_enter(b, (uint8_t)tag, &s))
			return LFE_FILTER_UNDEFINED;
		while (lfe_ber_more(&s) && !e->out) {
			r = eval_node(&s, e, depth + 1);
			if (r == (is_and ? LFE_FILTER_FALSE : LFE_FILTER_TRUE))
				return r;
			if (r == LFE_FILTER_UNDEFINED)
				acc = LFE_FILTER_UNDEFINED;
		}
		return acc;
	}
	case F_NOT:
		if (!lfe_ber_enter(b, F_NOT, &s))
			return LFE_FILTER_UNDEFINED;
		r = eval_node(&s, e, depth + 1);
		if (!lfe_ber_done(&s))
			return LFE_FILTER_UNDEFINED;
		return r == LFE_FILTER_UNDEFINED ? r : !r;
	case F_EQ:
	case F_APPROX:
		if (!read_ava(b, (uint8_t)tag, &a, &v))
			return LFE_FILTER_UNDEFINED;
		return eval_item(e, CMP_EQ, a, v, NULL);
	case F_GE:
	case F_LE:
		if (!read_ava(b, (uint8_t)tag, &a, &v))
			return LFE_FILTER_UNDEFINED;
		return eval_item(e, tag == F_GE ? CMP_GE : CMP_LE, a, v, NULL);
	case F_SUB:
		if (!read_sub(b, &a, &s, NULL))
			return LFE_FILTER_UNDEFINED;
		return eval_item(e, CMP_SUB, a, (struct lfe_bytes){ NULL, 0 }, &s);
	case F_PRESENT: {
		struct lfe_bytes none[1];
		if (!read_desc(b, F_PRESENT, &a))
			return LFE_FILTER_UNDEFINED;
		uint32_t n = item_vals(e, a, 0, none, 0);
		if (n == LFE_FILTER_HIDDEN)
			return LFE_FILTER_UNDEFINED;
		return n > 0 ? LFE_FILTER_TRUE : LFE_FILTER_FALSE;
	}
	case F_EXT:
		/* No matching rule is implemented, and a rule without a type
		 * would match every attribute, secrets included: both are
		 * UNDEFINED without looking at a value. */
		if (!read_mra(b, &m) || m.has_rule || !m.has_type)
			return LFE_FILTER_UNDEFINED;
		r = eval_item(e, CMP_EQ, m.type, m.value, NULL);
		/* dnAttributes would also match the entry's DN values, which
		 * this interface cannot see: only a TRUE is certain. */
		if (m.dn_attrs && r == LFE_FILTER_FALSE)
			return LFE_FILTER_UNDEFINED;
		return r;
	default:
		lfe_ber_fail(b, -EBADMSG);
		return LFE_FILTER_UNDEFINED;
	}
}

int lfe_filter_eval_budget(const uint8_t *f, size_t len, lfe_filter_attr_fn get, void *ctx,
			   uint64_t *work)
{
	struct lfe_ber b;
	struct evalc e = { get, ctx, work, false };

	lfe_ber_init(&b, f, len);
	int r = eval_node(&b, &e, 1);
	if (e.out)
		return -ETIME;
	lfe_ber_done(&b);
	int rc = lfe_ber_error(&b);
	return rc ? rc : r;
}

int lfe_filter_eval(const uint8_t *f, size_t len, lfe_filter_attr_fn get, void *ctx)
{
	return lfe_filter_eval_budget(f, len, get, ctx, NULL);
}

/* ---- RFC 4515 string form ---------------------------------------------- */

struct sbuf {
	char *out;
	size_t cap, len;
	int err;
};

static void sb_put(struct sbuf *sb, const void *p, size_t n)
{
	if (sb->err)
		return;
	/* Keep room for the terminating NUL. */
	if (n >= sb->cap - sb->len) {
		sb->err = -ENOSPC;
		return;
	}
	memcpy(sb->out + sb->len, p, n);
	sb->len += n;
}

static void sb_str(struct sbuf *sb, const char *s) { sb_put(sb, s, strlen(s)); }

static void sb_bytes(struct sbuf *sb, struct lfe_bytes b) { sb_put(sb, b.p, b.len); }

/* RFC 4515 §3 requires escaping * ( ) \ NUL; control octets and non-ASCII
 * are escaped as well, so the result is printable ASCII whatever the value
 * holds (it ends up in logs). */
static void sb_value(struct sbuf *sb, struct lfe_bytes v)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < v.len; i++) {
		uint8_t c = v.p[i];
		if (c == '*' || c == '(' || c == ')' || c == '\\' || c < 0x20 || c >= 0x7f) {
			char e[3] = { '\\', hex[c >> 4], hex[c & 15] };
			sb_put(sb, e, 3);
		} else {
			sb_put(sb, &c, 1);
		}
	}
}

static void str_node(struct lfe_ber *b, struct sbuf *sb)
{
	struct lfe_ber s;
	struct lfe_bytes a, v;
	struct mra m;
	uint8_t tag;
	int t = lfe_ber_peek(b);

	switch (t) {
	case F_AND:
	case F_OR:
	case F_NOT:
		if (!lfe_ber_enter(b, (uint8_t)t, &s))
			return;
		sb_str(sb, t == F_AND ? "(&" : t == F_OR ? "(|" : "(!");
		while (lfe_ber_more(&s) && !sb->err)
			str_node(&s, sb);
		sb_str(sb, ")");
		return;
	case F_EQ:
	case F_GE:
	case F_LE:
	case F_APPROX:
		if (!read_ava(b, (uint8_t)t, &a, &v))
			return;
		sb_str(sb, "(");
		sb_bytes(sb, a);
		sb_str(sb, t == F_EQ ? "=" : t == F_GE ? ">=" : t == F_LE ? "<=" : "~=");
		sb_value(sb, v);
		sb_str(sb, ")");
		return;
	case F_SUB: {
		bool first = true;
		if (!read_sub(b, &a, &s, NULL))
			return;
		sb_str(sb, "(");
		sb_bytes(sb, a);
		sb_str(sb, "=");
		while (lfe_ber_more(&s) && lfe_ber_elem(&s, &tag, NULL, &v)) {
			if (tag != SUB_INITIAL && first)
				sb_str(sb, "*");
			sb_value(sb, v);
			if (tag != SUB_FINAL)
				sb_str(sb, "*");
			first = false;
		}
		sb_str(sb, ")");
		return;
	}
	case F_PRESENT:
		if (!read_desc(b, F_PRESENT, &a))
			return;
		sb_str(sb, "(");
		sb_bytes(sb, a);
		sb_str(sb, "=*)");
		return;
	case F_EXT:
		if (!read_mra(b, &m))
			return;
		sb_str(sb, "(");
		if (m.has_type)
			sb_bytes(sb, m.type);
		if (m.dn_attrs)
			sb_str(sb, ":dn");
		if (m.has_rule) {
			sb_str(sb, ":");
			sb_bytes(sb, m.rule);
		}
		sb_str(sb, ":=");
		sb_value(sb, m.value);
		sb_str(sb, ")");
		return;
	default:
		lfe_ber_fail(b, -EBADMSG);
		return;
	}
}

ssize_t lfe_filter_to_string(const uint8_t *f, size_t len, char *out, size_t cap)
{
	struct lfe_ber b;
	struct sbuf sb = { out, cap, 0, 0 };
	int rc = lfe_filter_validate(f, len);

	if (rc)
		return rc;
	if (cap == 0)
		return -ENOSPC;
	lfe_ber_init(&b, f, len);
	str_node(&b, &sb);
	rc = lfe_ber_error(&b);
	if (rc == 0)
		rc = sb.err;
	if (rc) {
		out[0] = '\0';
		return rc;
	}
	out[sb.len] = '\0';
	return (ssize_t)sb.len;
}

/* ---- index helper ------------------------------------------------------ */

static bool desc_is(struct lfe_bytes d, const char *attr)
{
	return !lfe_attr_is_secret(d.p, d.len) &&
	       lfe_attr_type_eq(d.p, d.len, (const uint8_t *)attr, strlen(attr));
}

int lfe_filter_find_eq(const uint8_t *f, size_t len, const char *attr,
		       struct lfe_bytes *value)
{
	struct lfe_ber b, s;
	struct lfe_bytes a, v;

	lfe_ber_init(&b, f, len);
	int t = lfe_ber_peek(&b);
	if (t == F_EQ) {
		if (read_ava(&b, F_EQ, &a, &v) && desc_is(a, attr)) {
			*value = v;
			return 1;
		}
		return lfe_ber_error(&b);
	}
	if (t != F_AND || !lfe_ber_enter(&b, F_AND, &s))
		return lfe_ber_error(&b);
	while (lfe_ber_more(&s)) {
		if (lfe_ber_peek(&s) == F_EQ) {
			if (read_ava(&s, F_EQ, &a, &v) && desc_is(a, attr)) {
				*value = v;
				return 1;
			}
		} else {
			lfe_ber_skip(&s);
		}
	}
	return lfe_ber_error(&b);
}

int lfe_filter_eq_items(const uint8_t *f, size_t len, struct lfe_bytes *types,
			struct lfe_bytes *vals, unsigned cap)
{
	struct lfe_ber b, s;
	struct lfe_bytes a, v;
	unsigned n = 0;

	lfe_ber_init(&b, f, len);
	int t = lfe_ber_peek(&b);
	if (t == F_EQ) {
		if (read_ava(&b, F_EQ, &a, &v) && cap > 0 && !lfe_attr_is_secret(a.p, a.len)) {
			types[0] = a;
			vals[0] = v;
			return 1;
		}
		return lfe_ber_error(&b);
	}
	if (t != F_AND || !lfe_ber_enter(&b, F_AND, &s))
		return lfe_ber_error(&b);
	while (lfe_ber_more(&s) && n < cap) {
		if (lfe_ber_peek(&s) == F_EQ) {
			if (read_ava(&s, F_EQ, &a, &v) && !lfe_attr_is_secret(a.p, a.len)) {
				types[n] = a;
				vals[n++] = v;
			}
		} else if (!lfe_ber_skip(&s)) {
			break;
		}
	}
	int rc = lfe_ber_error(&b);
	return rc < 0 ? rc : lfe_ber_error(&s) < 0 ? lfe_ber_error(&s) : (int)n;
}

int lfe_filter_plan_items(const uint8_t *f, size_t len, struct lfe_filter_item *items,
			  unsigned cap)
{
	struct lfe_ber b, s, *in = &b;
	unsigned n = 0;
	bool and;

	lfe_ber_init(&b, f, len);
	and = lfe_ber_peek(&b) == F_AND;
	if (and) {
		if (!lfe_ber_enter(&b, F_AND, &s))
			return lfe_ber_error(&b);
		in = &s;
	}
	while (and ? lfe_ber_more(in) && n < cap : n == 0) {
		struct lfe_filter_item it = { 0 };
		struct lfe_ber subs;
		bool ok = false;
		int t = lfe_ber_peek(in);

		if (t == F_EQ) {
			it.kind = LFE_FITEM_EQ;
			ok = read_ava(in, F_EQ, &it.type, &it.value);
		} else if (t == F_PRESENT) {
			it.kind = LFE_FITEM_PRES;
			ok = read_desc(in, F_PRESENT, &it.type);
		} else if (t == F_SUB) {
			it.kind = LFE_FITEM_SUB;
			ok = read_sub(in, &it.type, &subs, NULL);
			if (ok)
				it.subs = (struct lfe_bytes){ subs.p, (size_t)(subs.end - subs.p) };
		} else if (and && !lfe_ber_skip(in)) {
			break;
		}
		if (ok && n < cap && !lfe_attr_is_secret(it.type.p, it.type.len))
			items[n++] = it;
		if (!and)
			break;
	}
	int rc = lfe_ber_error(&b);
	return rc < 0 ? rc : and && lfe_ber_error(&s) < 0 ? lfe_ber_error(&s) : (int)n;
}

int lfe_filter_sub_next(struct lfe_bytes *subs, int *where, struct lfe_bytes *piece)
{
	struct lfe_ber s;
	uint8_t tag;

	if (subs->len == 0)
		return 0;
	lfe_ber_init(&s, subs->p, subs->len);
	if (!lfe_ber_elem(&s, &tag, NULL, piece))
		return lfe_ber_error(&s) < 0 ? lfe_ber_error(&s) : -EBADMSG;
	*where = tag == SUB_INITIAL ? 0 : tag == SUB_FINAL ? 2 : 1;
	subs->len -= (size_t)(s.p - subs->p);
	subs->p = s.p;
	return 1;
}
