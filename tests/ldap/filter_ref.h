/* tests/ldap/filter_ref.h — a brute-force reference for ldap/filter.c,
 * shared by the property test (test_filter_ref.c) and its fuzz target
 * (tests/fuzz/fuzz_filter_ref.c).
 *
 * A generator draws an entry (a few attributes, 0..5,000 values each) and a
 * filter tree from a byte source; the tree is encoded to BER here (no
 * libldap: the fuzz build links none) and evaluated twice: by
 * lfe_filter_eval through a provider that hands out values in windows as
 * the store does, and by ref_eval below, written from RFC 4511 §4.5.1 with
 * nothing shared with filter.c but the schema's case-ignore table:
 * substrings by backtracking (not filter.c's leftmost scan), every value of
 * every attribute looked at, absent attributes FALSE, secrets Undefined.
 *
 * Header-only (static functions) so each test is one file; not thread-safe
 * (one generator state at a time).
 */
#ifndef LFE_TESTS_FILTER_REF_H
#define LFE_TESTS_FILTER_REF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/attr.h"
#include "ldap/filter.h"

#define REF_MAX_VALS 5000u
#define REF_VAL_LEN 12u
#define REF_NODES 48u
#define REF_PIECES 4u

/* ---- byte source: a fuzz input, or a seeded PRNG's stream ---- */

struct ref_src {
	const uint8_t *p;   /* NULL: PRNG */
	size_t n, off;
	uint64_t x;         /* xorshift64* state */
};

static uint32_t ref_u32(struct ref_src *s)
{
	if (s->p) {
		uint32_t v = 0;
		for (int i = 0; i < 4; i++)
			v = v << 8 | (s->off < s->n ? s->p[s->off++] : 0);
		return v;
	}
	s->x ^= s->x >> 12;
	s->x ^= s->x << 25;
	s->x ^= s->x >> 27;
	return (uint32_t)((s->x * 2685821657736338717ull) >> 32);
}

static uint32_t ref_below(struct ref_src *s, uint32_t n)
{
	return n ? ref_u32(s) % n : 0;
}

/* ---- the entry ---- */

/* Types the generator uses; "nosuch" never has values, the secret never
 * answers. Case-ignore-ness comes from the schema (attr.h). */
static const char *const ref_types[] = {
	"memberUid", "cn", "gidNumber", "description", "nosuch", "userPassword",
};
#define REF_NTYPES (sizeof ref_types / sizeof ref_types[0])
#define REF_STORED 4u   /* the first four may hold values */

struct ref_val {
	uint8_t len;
	char b[REF_VAL_LEN];
};

struct ref_entry {
	uint32_t n[REF_NTYPES];
	struct ref_val *v[REF_NTYPES];   /* REF_MAX_VALS each, caller-allocated */
};

/* A value from a small space, so that filters hit: "user<k>", a decimal
 * integer (negative, zero, leading zeros: non-canonical), letters in
 * mixed case, or empty. */
static void ref_gen_val(struct ref_src *s, struct ref_val *v, uint32_t spread)
{
	static const char letters[] = "aAbBxX*(";
	uint32_t k = ref_below(s, spread ? spread : 1);
	int n;

	switch (ref_below(s, 6)) {
	case 0:
	case 1:
		n = snprintf(v->b, sizeof v->b, "%s%u", ref_below(s, 4) ? "user" : "USER", k);
		break;
	case 2:
		n = snprintf(v->b, sizeof v->b, "%d", (int)k - (int)(spread / 2));
		break;
	case 3:
		n = snprintf(v->b, sizeof v->b, "0%u", k % 100);
		break;
	case 4:
		n = (int)ref_below(s, 5);
		for (int i = 0; i < n; i++)
			v->b[i] = letters[ref_below(s, sizeof letters - 1)];
		break;
	default:
		n = 0;
		break;
	}
	v->len = (uint8_t)(n < 0 ? 0 : n >= (int)sizeof v->b ? (int)sizeof v->b - 1 : n);
}

/* Counts: mostly small, sometimes in the thousands, up to REF_MAX_VALS. */
static void ref_gen_entry(struct ref_src *s, struct ref_entry *e, uint32_t spread)
{
	for (uint32_t t = 0; t < REF_NTYPES; t++) {
		uint32_t n = 0;
		if (t < REF_STORED || t == REF_NTYPES - 1) {
			switch (ref_below(s, 4)) {
			case 0: n = 0; break;
			case 1: n = 1 + ref_below(s, 40); break;
			case 2: n = ref_below(s, 700); break;
			default: n = ref_below(s, REF_MAX_VALS + 1); break;
			}
		}
		e->n[t] = n;
		for (uint32_t i = 0; i < n; i++)
			ref_gen_val(s, &e->v[t][i], spread);
	}
}

/* The provider lfe_filter_eval sees: windows of values, by type. */
static uint32_t ref_get(void *ctx, struct lfe_bytes type, uint32_t first, struct lfe_bytes *vals,
			uint32_t cap)
{
	const struct ref_entry *e = ctx;

	if (lfe_attr_is_secret(type.p, type.len))
		abort();   /* the evaluator must never ask for a secret */
	for (uint32_t t = 0; t < REF_NTYPES; t++) {
		if (!lfe_attr_type_eq((const uint8_t *)ref_types[t], strlen(ref_types[t]), type.p,
				      type.len))
			continue;
		for (uint32_t i = 0; first + i < e->n[t] && i < cap; i++)
			vals[i] = (struct lfe_bytes){ (const uint8_t *)e->v[t][first + i].b,
						      e->v[t][first + i].len };
		return e->n[t];
	}
	return 0;
}

/* ---- the filter tree ---- */

enum ref_kind { R_AND, R_OR, R_NOT, R_EQ, R_GE, R_LE, R_SUB, R_PRESENT, R_APPROX };

struct ref_node {
	enum ref_kind k;
	uint32_t type;              /* index in ref_types */
	bool upper;                 /* spell the type upper-case */
	struct ref_val val;
	/* substrings: initial? anys final? */
	bool has_init, has_final;
	uint32_t n_any;
	struct ref_val init, any[REF_PIECES], fin;
	uint32_t n_kids;
	uint32_t kid[4];
};

struct ref_filter {
	struct ref_node n[REF_NODES];
	uint32_t used;
};

static uint32_t ref_gen_node(struct ref_src *s, struct ref_filter *f, unsigned depth,
			     uint32_t spread)
{
	if (f->used == REF_NODES)
		return UINT32_MAX;
	uint32_t id = f->used++;
	struct ref_node *x = &f->n[id];
	memset(x, 0, sizeof *x);
	uint32_t pick = ref_below(s, depth >= 4 || f->used > REF_NODES - 8 ? 6 : 9);
	static const enum ref_kind leaf[] = { R_EQ, R_EQ, R_GE, R_LE, R_SUB, R_PRESENT };
	static const enum ref_kind inner[] = { R_AND, R_OR, R_NOT };
	x->k = pick < 6 ? leaf[pick] : inner[pick - 6];
	if (pick == 0 && ref_below(s, 4) == 0)
		x->k = R_APPROX;
	x->type = ref_below(s, REF_NTYPES);
	x->upper = ref_below(s, 3) == 0;
	ref_gen_val(s, &x->val, spread);
	if (x->k == R_SUB) {
		x->has_init = ref_below(s, 2);
		x->has_final = ref_below(s, 2);
		x->n_any = ref_below(s, REF_PIECES + 1);
		if (!x->has_init && !x->has_final && x->n_any == 0)
			x->n_any = 1;
		/* Pieces are short cuts of generated values, so they occur. */
		struct ref_val *pc[REF_PIECES + 2] = { &x->init, &x->fin };
		for (uint32_t i = 0; i < x->n_any; i++)
			pc[2 + i] = &x->any[i];
		for (uint32_t i = 0; i < 2 + x->n_any; i++) {
			struct ref_val w;
			ref_gen_val(s, &w, spread);
			uint32_t a = ref_below(s, (uint32_t)w.len + 1);
			uint32_t b = a + ref_below(s, (uint32_t)w.len - a + 1);
			pc[i]->len = (uint8_t)(b - a);
			memcpy(pc[i]->b, w.b + a, b - a);
		}
	}
	if (x->k == R_AND || x->k == R_OR || x->k == R_NOT) {
		uint32_t want = x->k == R_NOT ? 1 : ref_below(s, 5);   /* (&) and (|) too */
		for (uint32_t i = 0; i < want; i++) {
			uint32_t c = ref_gen_node(s, f, depth + 1, spread);
			if (c == UINT32_MAX)
				break;
			f->n[id].kid[f->n[id].n_kids++] = c;
		}
		if (x->k == R_NOT && f->n[id].n_kids == 0)
			f->n[id].k = R_PRESENT;   /* NOT needs its child */
	}
	return id;
}

/* ---- BER of the tree ---- */

struct ref_ber {
	uint8_t b[16384];
	size_t n;
	bool over;
};

static void ref_put(struct ref_ber *o, const void *p, size_t n)
{
	if (o->over || n > sizeof o->b - o->n) {
		o->over = true;
		return;
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

/* Tag and a minimal definite length for content that follows. */
static void ref_hdr(struct ref_ber *o, uint8_t tag, size_t len)
{
	uint8_t h[4] = { tag };
	if (len < 128) {
		h[1] = (uint8_t)len;
		ref_put(o, h, 2);
	} else if (len < 256) {
		h[1] = 0x81;
		h[2] = (uint8_t)len;
		ref_put(o, h, 3);
	} else {
		h[1] = 0x82;
		h[2] = (uint8_t)(len >> 8);
		h[3] = (uint8_t)len;
		ref_put(o, h, 4);
	}
}

static void ref_octets(struct ref_ber *o, uint8_t tag, const void *p, size_t n)
{
	ref_hdr(o, tag, n);
	ref_put(o, p, n);
}

static void ref_type(struct ref_ber *o, uint8_t tag, const struct ref_node *x)
{
	char t[32];
	size_t n = strlen(ref_types[x->type]);
	for (size_t i = 0; i < n; i++) {
		char c = ref_types[x->type][i];
		t[i] = x->upper && c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
	}
	ref_octets(o, tag, t, n);
}

static void ref_enc(const struct ref_filter *f, uint32_t id, struct ref_ber *o)
{
	const struct ref_node *x = &f->n[id];
	struct ref_ber *in = calloc(1, sizeof *in);

	if (!in)
		abort();
	switch (x->k) {
	case R_AND:
	case R_OR:
	case R_NOT:
		for (uint32_t i = 0; i < x->n_kids; i++)
			ref_enc(f, x->kid[i], in);
		ref_hdr(o, x->k == R_AND ? 0xa0 : x->k == R_OR ? 0xa1 : 0xa2, in->n);
		break;
	case R_EQ:
	case R_GE:
	case R_LE:
	case R_APPROX:
		ref_type(in, 0x04, x);
		ref_octets(in, 0x04, x->val.b, x->val.len);
		ref_hdr(o, x->k == R_EQ ? 0xa3 : x->k == R_GE ? 0xa5 : x->k == R_LE ? 0xa6 : 0xa8,
			in->n);
		break;
	case R_SUB: {
		struct ref_ber *p = calloc(1, sizeof *p);
		if (!p)
			abort();
		if (x->has_init)
			ref_octets(p, 0x80, x->init.b, x->init.len);
		for (uint32_t i = 0; i < x->n_any; i++)
			ref_octets(p, 0x81, x->any[i].b, x->any[i].len);
		if (x->has_final)
			ref_octets(p, 0x82, x->fin.b, x->fin.len);
		ref_type(in, 0x04, x);
		ref_hdr(in, 0x30, p->n);
		ref_put(in, p->b, p->n);
		in->over |= p->over;
		free(p);
		ref_hdr(o, 0xa4, in->n);
		break;
	}
	case R_PRESENT:
		ref_type(o, 0x87, x);
		free(in);
		return;
	}
	ref_put(o, in->b, in->n);
	o->over |= in->over;
	free(in);
}

/* ---- the reference evaluator ---- */

enum { RF = LFE_FILTER_FALSE, RT = LFE_FILTER_TRUE, RU = LFE_FILTER_UNDEFINED };

static uint8_t ref_fold(uint8_t c, bool ci)
{
	return ci && c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

static bool ref_same(const char *a, const char *b, size_t n, bool ci)
{
	for (size_t i = 0; i < n; i++)
		if (ref_fold((uint8_t)a[i], ci) != ref_fold((uint8_t)b[i], ci))
			return false;
	return true;
}

/* A canonical decimal integer (no leading zero, no "-0", no '+'). */
static bool ref_int(const struct ref_val *v, long long *out)
{
	char t[REF_VAL_LEN + 1];
	if (v->len == 0)
		return false;
	memcpy(t, v->b, v->len);
	t[v->len] = 0;
	const char *d = t[0] == '-' ? t + 1 : t;
	if (*d == 0 || (*d == '0' && (d[1] || d != t)))
		return false;
	for (const char *c = d; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	*out = strtoll(t, NULL, 10);
	return true;
}

static int ref_cmp(const struct ref_val *a, const struct ref_val *b, bool ci)
{
	long long x, y;
	if (ref_int(a, &x) && ref_int(b, &y))
		return x < y ? -1 : x > y;
	for (size_t i = 0; i < a->len && i < b->len; i++) {
		uint8_t p = ref_fold((uint8_t)a->b[i], ci), q = ref_fold((uint8_t)b->b[i], ci);
		if (p != q)
			return p < q ? -1 : 1;
	}
	return a->len < b->len ? -1 : a->len > b->len;
}

/* Do any[k..] then final fit in v from pos on? Tries every position. */
static bool ref_sub_rest(const struct ref_node *x, const struct ref_val *v, size_t pos, uint32_t k,
			 size_t end, bool ci)
{
	/* k < REF_PIECES too: gcc -O3 cannot see n_any <= REF_PIECES through
	 * the recursion (-Warray-bounds). */
	if (k >= x->n_any || k >= REF_PIECES)
		return pos <= end;
	const struct ref_val *p = &x->any[k];
	for (size_t i = pos; i + p->len <= end; i++)
		if (ref_same(v->b + i, p->b, p->len, ci) &&
		    ref_sub_rest(x, v, i + p->len, k + 1, end, ci))
			return true;
	return false;
}

static bool ref_sub(const struct ref_node *x, const struct ref_val *v, bool ci)
{
	size_t pos = 0, end = v->len;
	if (x->has_init) {
		if (x->init.len > v->len || !ref_same(v->b, x->init.b, x->init.len, ci))
			return false;
		pos = x->init.len;
	}
	if (x->has_final) {
		if (x->fin.len > v->len - pos ||
		    !ref_same(v->b + v->len - x->fin.len, x->fin.b, x->fin.len, ci))
			return false;
		end = v->len - x->fin.len;
	}
	return ref_sub_rest(x, v, pos, 0, end, ci);
}

static int ref_eval(const struct ref_filter *f, uint32_t id, const struct ref_entry *e)
{
	const struct ref_node *x = &f->n[id];
	const char *t = ref_types[x->type];
	bool secret = lfe_attr_is_secret((const uint8_t *)t, strlen(t));
	bool ci = lfe_attr_is_case_ignore((const uint8_t *)t, strlen(t));
	int acc;

	switch (x->k) {
	case R_AND:
	case R_OR:
		acc = x->k == R_AND ? RT : RF;
		for (uint32_t i = 0; i < x->n_kids; i++) {
			int r = ref_eval(f, x->kid[i], e);
			if (r == (x->k == R_AND ? RF : RT))
				return r;
			if (r == RU)
				acc = RU;
		}
		return acc;
	case R_NOT: {
		int r = ref_eval(f, x->kid[0], e);
		return r == RU ? RU : r == RT ? RF : RT;
	}
	default:
		break;
	}
	if (secret)
		return RU;
	uint32_t n = e->n[x->type];
	if (x->k == R_PRESENT)
		return n > 0 ? RT : RF;
	for (uint32_t i = 0; i < n; i++) {
		const struct ref_val *v = &e->v[x->type][i];
		bool hit;
		switch (x->k) {
		case R_EQ:
		case R_APPROX:
			hit = v->len == x->val.len && ref_same(v->b, x->val.b, v->len, ci);
			break;
		case R_GE:
			hit = ref_cmp(v, &x->val, ci) >= 0;
			break;
		case R_LE:
			hit = ref_cmp(v, &x->val, ci) <= 0;
			break;
		default:
			hit = ref_sub(x, v, ci);
			break;
		}
		if (hit)
			return RT;
	}
	return RF;
}

/* Entry storage for ref_gen_entry (free with ref_entry_free). */
static inline struct ref_entry *ref_entry_new(void)
{
	struct ref_entry *e = calloc(1, sizeof *e);
	if (!e)
		abort();
	for (uint32_t t = 0; t < REF_NTYPES; t++)
		if (!(e->v[t] = calloc(REF_MAX_VALS, sizeof(struct ref_val))))
			abort();
	return e;
}

static inline void ref_entry_free(struct ref_entry *e)
{
	for (uint32_t t = 0; e && t < REF_NTYPES; t++)
		free(e->v[t]);
	free(e);
}

/* One trial: draw an entry and a filter from s, evaluate both ways.
 * Returns 0 when they agree (and a budgeted evaluation either agrees or
 * stops with -ETIME at an empty budget), else prints and returns 1. */
static int ref_trial(struct ref_src *s, struct ref_entry *e, struct ref_filter *f)
{
	uint32_t spread = 1 + ref_below(s, 6000);
	ref_gen_entry(s, e, spread);
	f->used = 0;
	ref_gen_node(s, f, 1, spread);
	struct ref_ber *o = calloc(1, sizeof *o);
	if (!o)
		abort();
	ref_enc(f, 0, o);
	int rc = 0;
	if (o->over || lfe_filter_validate(o->b, o->n) != 0)
		goto out;   /* a draw past the filter caps: not this test's subject */
	int want = ref_eval(f, 0, e);
	int got = lfe_filter_eval(o->b, o->n, ref_get, e);
	uint64_t work = ref_below(s, 1u << 16);
	int gb = lfe_filter_eval_budget(o->b, o->n, ref_get, e, &work);
	if (got != want || (gb != want && !(gb == -ETIME && work == 0))) {
		char str[8192];
		lfe_filter_to_string(o->b, o->n, str, sizeof str);
		fprintf(stderr, "filter %s: ldapfe %d (budgeted %d), reference %d; counts",
			str, got, gb, want);
		for (uint32_t t = 0; t < REF_NTYPES; t++)
			fprintf(stderr, " %s=%u", ref_types[t], e->n[t]);
		fprintf(stderr, "\n");
		rc = 1;
	}
out:
	free(o);
	return rc;
}

#endif
