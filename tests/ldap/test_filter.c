/* test_filter.c — filter validation, evaluation, string form, index helper.
 *
 * Filters written as RFC 4515 strings are encoded by libldap (a real
 * client's encoder, via ldap_create_assertion_control_value: the assertion
 * control's value is exactly a Filter), so the tables stay readable and the
 * BER under test is what OpenLDAP clients send. Malformed filters are
 * hand-written hex. */
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldap/attr.h"
#include "ldap/ber.h"
#include "ldap/filter.h"
#include "tests/check.h"

static LDAP *ld;

/* Encode an RFC 4515 filter with libldap into buf; returns its length. */
static size_t enc(const char *s, uint8_t *buf, size_t cap)
{
	struct berval bv = { 0, NULL };
	int rc = ldap_create_assertion_control_value(ld, (char *)s, &bv);

	if (rc != LDAP_SUCCESS || bv.bv_len > cap) {
		fprintf(stderr, "libldap cannot encode %s (%d)\n", s, rc);
		exit(2);
	}
	memcpy(buf, bv.bv_val, bv.bv_len);
	size_t n = bv.bv_len;
	ber_memfree(bv.bv_val);
	return n;
}

static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; *h; h++) {
		if (*h == ' ')
			continue;
		unsigned v;
		if (sscanf(h, "%2x", &v) != 1 || n == cap)
			abort();
		out[n++] = (uint8_t)v;
		h++;
	}
	return n;
}

/* ---- string form round trip -------------------------------------------- */

struct rt {
	const char *in;
	const char *out;   /* NULL: same as in */
};

static const struct rt rts[] = {
	{ "(uid=alice)", NULL },
	{ "(&(objectClass=person)(uid=alice))", NULL },
	{ "(|(uid=a)(uid=b)(uid=c))", NULL },
	{ "(!(mail=*))", NULL },
	{ "(cn=*)", NULL },
	{ "(cn=al*)", NULL },
	{ "(cn=*ice)", NULL },
	{ "(cn=*li*)", NULL },
	{ "(cn=a*b*c*d)", NULL },
	{ "(cn=*b*c*)", NULL },
	{ "(uidNumber>=1000)", NULL },
	{ "(uidNumber<=1000)", NULL },
	{ "(sn~=smyth)", NULL },
	{ "(cn:dn:caseExactMatch:=Foo)", NULL },
	{ "(cn:=Foo)", NULL },
	{ "(:2.5.13.5:=bar)", NULL },
	{ "(:dn:2.5.13.5:=bar)", NULL },
	{ "(cn=a\\2ab\\28c\\29d\\5ce\\00f)", NULL },
	{ "(cn=J\\c3\\bcrgen)", NULL },
	{ "(cn=J\xc3\xbcrgen)", "(cn=J\\c3\\bcrgen)" },
	{ "(cn=\\41BC)", "(cn=ABC)" },
	{ "(description=tab\\09end)", NULL },
	{ "(&)", NULL },
	{ "(|)", NULL },
	{ "(cn;lang-de=x)", NULL },
	{ "(2.5.4.3=x)", NULL },
	{ "(&(|(a=1)(!(b=2)))(c=3*)(d>=4)(e~=5)(f:=6))", NULL },
};

static void test_roundtrip(void)
{
	uint8_t f[1024];
	char s[1024];

	for (size_t i = 0; i < sizeof rts / sizeof rts[0]; i++) {
		const char *want = rts[i].out ? rts[i].out : rts[i].in;
		size_t n = enc(rts[i].in, f, sizeof f);
		CHECK(lfe_filter_validate(f, n) == 0, "%s: validate", rts[i].in);
		ssize_t l = lfe_filter_to_string(f, n, s, sizeof s);
		CHECK(l == (ssize_t)strlen(want) && strcmp(s, want) == 0, "%s: got %s", rts[i].in, s);
		/* Every too-small buffer: -ENOSPC and an empty string. */
		for (size_t cap = 0; l > 0 && cap <= (size_t)l; cap++) {
			char small[1024];
			small[0] = 'x';
			ssize_t r = lfe_filter_to_string(f, n, small, cap);
			CHECK(r == -ENOSPC && (cap == 0 || small[0] == '\0'), "%s: cap %zu: %zd",
			      rts[i].in, cap, r);
		}
	}
}

/* ---- malformed filters ------------------------------------------------ */

struct bad {
	const char *name;
	const char *hex;
	int rc;
};

static const struct bad bads[] = {
	{ "eq without value", "a304 04026161", -EBADMSG },
	{ "eq three elements", "a309 040161 040162 040163", -EBADMSG },
	{ "eq value wrong tag", "a306 040161 800162", -EBADMSG },
	{ "eq truncated", "a306 040161 0401", -EBADMSG },
	{ "eq attr has '='", "a306 04013d 040162", -EBADMSG },
	{ "eq attr has space", "a307 04026120 040162", -EBADMSG },
	{ "eq empty attr", "a304 0400 0400", -EBADMSG },
	{ "eq primitive tag", "8306 040161 040162", -EBADMSG },
	{ "sub initial not first", "a409 040161 3006 810162 800163", -EBADMSG },
	{ "sub two initials", "a409 040161 3006 800162 800163", -EBADMSG },
	{ "sub two finals", "a409 040161 3006 820162 820163", -EBADMSG },
	{ "sub final not last", "a409 040161 3006 820162 810163", -EBADMSG },
	{ "sub empty sequence", "a405 040161 3000", -EBADMSG },
	{ "sub bad piece tag", "a408 040161 3003 830162", -EBADMSG },
	{ "sub constructed piece", "a408 040161 3003 a00100", -EBADMSG },
	{ "sub pieces as SET", "a408 040161 3103 800162", -EBADMSG },
	{ "sub trailing element", "a40a 040161 3003 800162 0400", -EBADMSG },
	{ "ext neither rule nor type", "a903 830178", -EBADMSG },
	{ "ext without value", "a904 8202636e", -EBADMSG },
	{ "ext type before rule", "a90c 8202636e 8103312e32 830178", -EBADMSG },
	{ "ext dnAttributes 0x01", "a90a 8202636e 830178 840101", -EBADMSG },
	{ "ext trailing element", "a90c 8202636e 830178 8401ff 0400", -EBADMSG },
	{ "not with two children", "a206 870161 870162", -EBADMSG },
	{ "not empty", "a200", -EBADMSG },
	{ "present empty", "8700", -EBADMSG },
	{ "present bad char", "8702 6120", -EBADMSG },
	{ "present constructed", "a703 040161", -EBADMSG },
	{ "and with non-filter child", "a003 040161", -EBADMSG },
	{ "and as primitive", "8000", -EBADMSG },
	{ "unknown choice [10]", "aa00", -EBADMSG },
	{ "trailing bytes", "870161 00", -EBADMSG },
	{ "empty input", "", -EBADMSG },
	{ "indefinite and", "a080 870161 0000", -EBADMSG },
	{ "ok: ext dnAttributes FALSE explicit", "a90a 8202636e 830178 840100", 0 },
	{ "ok: sub initial any final", "a40e 040161 3009 800162 810163 820164", 0 },
	{ "ok: empty assertion value", "a305 040161 0400", 0 },
};

/* k NOTs around (a=*), or an AND of k presents, built with the writer. */
static size_t build(uint8_t *out, size_t cap, bool nots, unsigned k)
{
	struct lfe_berw w;

	lfe_berw_init(&w, out, cap);
	if (nots) {
		lfe_berw_octets(&w, LFE_BER_CTX(7), "a", 1);
		for (unsigned i = 0; i < k; i++)
			lfe_berw_wrap(&w, LFE_BER_CTX_CONS(2), 0);
	} else {
		for (unsigned i = 0; i < k; i++)
			lfe_berw_octets(&w, LFE_BER_CTX(7), "a", 1);
		lfe_berw_wrap(&w, LFE_BER_CTX_CONS(0), 0);
	}
	ssize_t n = lfe_berw_finish(&w);
	if (n < 0)
		abort();
	return (size_t)n;
}

static uint32_t get_none(void *ctx, struct lfe_bytes t, uint32_t first, struct lfe_bytes *v,
			 uint32_t cap);

static void test_bad(void)
{
	uint8_t f[4096];
	char s[4096];
	struct lfe_bytes v;

	for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
		size_t n = unhex(bads[i].hex, f, sizeof f);
		int rc = lfe_filter_validate(f, n);
		CHECK(rc == bads[i].rc, "%s: rc %d", bads[i].name, rc);
		if (bads[i].rc == 0)
			continue;
		/* to_string validates; eval and find_eq run on filters validated
		 * at decode and do not check the grammar again, but stay
		 * memory-safe (ASan) and never report TRUE or a hit on them. */
		CHECK(lfe_filter_to_string(f, n, s, sizeof s) == bads[i].rc, "%s: to_string", bads[i].name);
		int fe = lfe_filter_find_eq(f, n, "a", &v);
		CHECK(fe <= 0, "%s: find_eq %d", bads[i].name, fe);
		int ev = lfe_filter_eval(f, n, get_none, NULL);
		CHECK(ev < 0 || ev == LFE_FILTER_FALSE || ev == LFE_FILTER_UNDEFINED, "%s: eval %d",
		      bads[i].name, ev);
	}
	static const struct {
		bool nots;
		unsigned k;
		int rc;
	} lim[] = {
		{ true, LFE_LDAP_MAX_FILTER_DEPTH - 1, 0 },       /* depth 32 */
		{ true, LFE_LDAP_MAX_FILTER_DEPTH, -E2BIG },     /* depth 33 */
		{ false, LFE_LDAP_MAX_FILTER_NODES - 1, 0 },     /* 256 nodes */
		{ false, LFE_LDAP_MAX_FILTER_NODES, -E2BIG },    /* 257 nodes */
	};
	for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
		size_t n = build(f, sizeof f, lim[i].nots, lim[i].k);
		CHECK(lfe_filter_validate(f, n) == lim[i].rc, "limit %zu", i);
	}
	/* Every strict prefix of a valid filter is malformed. */
	size_t n = enc("(&(uid=al*ce)(|(cn:dn:1.2:=x)(!(sn~=y))))", f, sizeof f);
	for (size_t cut = 0; cut < n; cut++)
		CHECK(lfe_filter_validate(f, cut) == -EBADMSG, "prefix %zu", cut);
}

/* ---- evaluation ------------------------------------------------------- */

struct fattr {
	const char *type;
	const char *vals[48];
};

static struct fattr entry[] = {
	{ "uid", { "alice" } },
	{ "cn", { "Alice Smith", "Al" } },
	{ "objectClass", { "top", "person", "posixAccount" } },
	{ "uidNumber", { "1001" } },
	{ "description", { "Hello World" } },
	{ "homeDirectory", { "/home/Alice" } },
	{ "many", { NULL } },   /* filled in main: v0..v39 */
};

static char many_buf[40][8];

static uint32_t get_none(void *ctx, struct lfe_bytes t, uint32_t first, struct lfe_bytes *v,
			 uint32_t cap)
{
	(void)ctx, (void)t, (void)first, (void)v, (void)cap;
	return 0;
}

static uint32_t get_attr(void *ctx, struct lfe_bytes type, uint32_t first, struct lfe_bytes *vals,
			 uint32_t cap)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof entry / sizeof entry[0]; i++) {
		const struct fattr *a = &entry[i];
		if (strlen(a->type) != type.len || strncasecmp(a->type, (const char *)type.p, type.len))
			continue;
		uint32_t n = 0;
		while (n < 48 && a->vals[n]) {
			if (n >= first && n - first < cap)
				vals[n - first] = (struct lfe_bytes){ (const uint8_t *)a->vals[n],
								      strlen(a->vals[n]) };
			n++;
		}
		return n;
	}
	return 0;
}

enum { F = LFE_FILTER_FALSE, T = LFE_FILTER_TRUE, U = LFE_FILTER_UNDEFINED };

static const struct {
	const char *f;
	int want;
} evals[] = {
	{ "(uid=alice)", T },
	{ "(uid=ALICE)", T },                 /* uid is case-ignore */
	{ "(UID=alice)", T },                 /* type names compare without case */
	{ "(uid=alic)", F },
	{ "(uid=bob)", F },
	{ "(description=hello world)", T },   /* case-ignore per dn.h */
	{ "(homeDirectory=/home/Alice)", T },
	{ "(homeDirectory=/home/alice)", F }, /* case-exact attribute */
	{ "(mail=x)", F },                    /* absent attribute */
	{ "(mail=*)", F },
	{ "(cn=*)", T },
	{ "(cn=al)", T },                     /* second value */
	{ "(cn=al*)", T },
	{ "(cn=*SMITH)", T },
	{ "(cn=a*e*h)", T },
	{ "(cn=*ice*mi*)", T },
	{ "(cn=*mi*ice*)", F },
	{ "(cn=al*al)", F },                  /* initial and final may not overlap */
	{ "(cn=alice smith*)", T },
	{ "(cn=*alice smith)", T },
	{ "(cn=*alice smithx*)", F },
	{ "(cn=a*s*s*)", F },                 /* two s pieces need two s after a */
	{ "(homeDirectory=*/*/*)", T },
	{ "(homeDirectory=*/*/*/*)", F },
	{ "(homeDirectory=*ALICE)", F },
	{ "(uidNumber>=1000)", T },
	{ "(uidNumber>=999)", T },            /* numeric, not "1001" < "999" */
	{ "(uidNumber<=1000)", F },
	{ "(uidNumber>=1001)", T },
	{ "(uidNumber<=1001)", T },
	{ "(uidNumber>=-5)", T },
	{ "(uid>=alicf)", F },
	{ "(uid<=B)", T },                    /* case-ignore: "alice" <= "b" */
	{ "(homeDirectory<=/home/a)", T },    /* exact: 'A' < 'a' */
	{ "(homeDirectory>=/home/a)", F },
	{ "(uid~=ALICE)", T },                /* approx is equality */
	{ "(uid:=alice)", T },
	{ "(uid:caseExactMatch:=alice)", U },
	{ "(:caseExactMatch:=alice)", U },
	{ "(uid:dn:=bob)", U },               /* DN values unseen: FALSE is unsure */
	{ "(uid:dn:=alice)", T },
	{ "(!(uid=alice))", F },
	{ "(!(uid=bob))", T },
	{ "(!(uid:2.5.13.2:=x))", U },
	{ "(&(uid=alice)(uid:1.2:=x))", U },
	{ "(&(uid=bob)(uid:1.2:=x))", F },
	{ "(|(uid=bob)(uid:1.2:=x))", U },
	{ "(|(uid=alice)(uid:1.2:=x))", T },
	{ "(&)", T },
	{ "(|)", F },
	{ "(!(&))", F },
	{ "(&(objectClass=person)(|(uid=alice)(uid=bob))(!(mail=*)))", T },
	{ "(many=v3)", T },
	{ "(many=v35)", T },                  /* every value is compared (issue 25) */
	{ "(many=v39)", T },
	{ "(many=zzz)", F },
	{ "(many=*)", T },
};

static void test_eval(void)
{
	uint8_t f[1024];

	for (size_t i = 0; i < sizeof evals / sizeof evals[0]; i++) {
		size_t n = enc(evals[i].f, f, sizeof f);
		int r = lfe_filter_eval(f, n, get_attr, NULL);
		CHECK(r == evals[i].want, "%s: %d want %d", evals[i].f, r, evals[i].want);
	}
}


/* ---- secrets ---------------------------------------------------------- */

/* An entry holding every kind of secret. The provider matches types the
 * way the store does (lfe_attr_type_eq) and records whether the evaluator
 * ever asked it for a secret. */
#define PW_MAIN "{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g"
#define PW_LEGACY "{CRYPT}legacyhash"
#define AUTH_MAIN "SHA1$c2FsdA$aGFzaA"
#define AUTH_FOO "MD5$Zm9v$YmFy"

static const struct fattr secret_entry[] = {
	{ "uid", { "alice" } },
	{ "objectClass", { "person" } },
	{ "userPassword", { PW_MAIN } },
	{ "userPassword;x-legacy", { PW_LEGACY } },
	{ "authPassword", { AUTH_MAIN } },
	{ "authPassword;foo", { AUTH_FOO } },
};

static int asked_secret;

static uint32_t get_secret_entry(void *ctx, struct lfe_bytes type, uint32_t first,
				 struct lfe_bytes *vals, uint32_t cap)
{
	(void)ctx;
	if (lfe_attr_is_secret(type.p, type.len))
		asked_secret++;
	for (size_t i = 0; i < sizeof secret_entry / sizeof secret_entry[0]; i++) {
		const struct fattr *a = &secret_entry[i];
		if (!lfe_attr_type_eq((const uint8_t *)a->type, strlen(a->type), type.p, type.len))
			continue;
		uint32_t n = 0;
		for (; a->vals[n]; n++)
			if (n >= first && n - first < cap)
				vals[n - first] = (struct lfe_bytes){ (const uint8_t *)a->vals[n],
								      strlen(a->vals[n]) };
		return n;
	}
	return 0;
}

/* Every filter type, on every spelling of every secret, alone and nested,
 * is Undefined; the values used are the stored ones, so each filter would
 * be TRUE if the evaluator looked. */
static void test_secrets(void)
{
	static const struct {
		const char *type, *val, *head, *mid, *tail;
	} types[] = {
		{ "userPassword", PW_MAIN, "{SSHA}", "Mm5", "mj9g" },
		{ "USERPASSWORD", PW_MAIN, "{SSHA}W", "Pz8", "9g" },
		{ "2.5.4.35", PW_MAIN, "{SSHA}W6", "Ggi", "g" },
		{ "userPassword;x-legacy", PW_LEGACY, "{CRYPT}", "acy", "hash" },
		{ "UserPassword;X-Legacy", PW_LEGACY, "{C", "egac", "sh" },
		{ "2.5.4.35;x-legacy", PW_LEGACY, "{CRYPT}l", "y", "h" },
		{ "authPassword", AUTH_MAIN, "SHA1$", "FsdA", "aGFzaA" },
		{ "1.3.6.1.4.1.4203.1.3.4", AUTH_MAIN, "SHA", "$", "A" },
		{ "authPassword;foo", AUTH_FOO, "MD5$", "m9v", "YmFy" },
		{ "AUTHPASSWORD;FOO", AUTH_FOO, "M", "$", "y" },
	};
	/* %1$s type, %2$s value, %3$s head, %4$s mid, %5$s tail */
	static const char *const forms[] = {
		"(%1$s=%2$s)", "(%1$s=*)", "(%1$s=%3$s*)", "(%1$s=*%4$s*)", "(%1$s=*%5$s)",
		"(%1$s=%3$s*%4$s*%5$s)", "(%1$s>=!)", "(%1$s<=~)", "(%1$s>=%2$s)", "(%1$s<=%2$s)",
		"(%1$s~=%2$s)", "(%1$s:=%2$s)", "(%1$s:dn:=%2$s)", "(%1$s:caseExactMatch:=%2$s)",
		"(%1$s:2.5.13.5:=%2$s)", "(!(%1$s=%2$s))", "(!(%1$s=nomatch))", "(!(%1$s=*))",
		"(!(!(%1$s=*)))", "(&(uid=alice)(%1$s=%3$s*))", "(&(uid=alice)(!(%1$s=x)))",
		"(|(uid=bob)(%1$s=%2$s))", "(|(uid=bob)(!(%1$s=%2$s)))",
		"(&(objectClass=person)(|(uid=bob)(%1$s=*%4$s*)))",
	};
	uint8_t f[1024];
	char s[512];
	unsigned n = 0;

	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			snprintf(s, sizeof s, forms[k], types[t].type, types[t].val, types[t].head,
				 types[t].mid, types[t].tail);
#pragma GCC diagnostic pop
			size_t fl = enc(s, f, sizeof f);
			asked_secret = 0;
			int r = lfe_filter_eval(f, fl, get_secret_entry, NULL);
			CHECK(r == U, "%s: %d, want Undefined", s, r);
			CHECK(asked_secret == 0, "%s: provider asked for a secret", s);
			n++;
		}
	}
	/* Extensible match without a type never reaches any value. */
	static const char *const typeless[] = { "(:caseExactMatch:=" PW_MAIN ")",
						"(:dn:2.5.13.5:=" AUTH_MAIN ")" };
	for (size_t i = 0; i < 2; i++) {
		size_t fl = enc(typeless[i], f, sizeof f);
		asked_secret = 0;
		CHECK(lfe_filter_eval(f, fl, get_secret_entry, NULL) == U, "%s", typeless[i]);
		CHECK(asked_secret == 0, "%s: provider asked", typeless[i]);
	}
	/* The rest of the entry still matches as usual. */
	size_t fl = enc("(|(uid=alice)(userPassword=" PW_MAIN "))", f, sizeof f);
	CHECK(lfe_filter_eval(f, fl, get_secret_entry, NULL) == T, "legitimate OR branch");
	fl = enc("(userPassword;x-other=*)", f, sizeof f);
	CHECK(lfe_filter_eval(f, fl, get_secret_entry, NULL) == U, "unknown option");
	CHECK(n == 240, "%u secret filters", n);
}

/* A provider hiding an attribute makes every item on it Undefined. */
static uint32_t get_hide_uid(void *ctx, struct lfe_bytes type, uint32_t first,
			     struct lfe_bytes *vals, uint32_t cap)
{
	if (lfe_attr_base_eq(type.p, type.len, (const uint8_t *)"uid", 3))
		return LFE_FILTER_HIDDEN;
	return get_secret_entry(ctx, type, first, vals, cap);
}

static void test_hidden(void)
{
	static const struct { const char *f; int want; } cases[] = {
		{ "(uid=alice)", U }, { "(uid=*)", U }, { "(!(uid=bob))", U }, { "(userid=al*)", U },
		{ "(uid>=a)", U }, { "(uid:=alice)", U }, { "(objectClass=person)", T },
		{ "(&(objectClass=person)(!(uid=x)))", U }, { "(|(objectClass=person)(uid=x))", T },
	};
	uint8_t f[256];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = enc(cases[i].f, f, sizeof f);
		int r = lfe_filter_eval(f, n, get_hide_uid, NULL);
		CHECK(r == cases[i].want, "hidden %s: %d want %d", cases[i].f, r, cases[i].want);
	}
}

/* ---- work bounds ------------------------------------------------------ */

/* "(cn=*x*x...*)" with k any-pieces per item, `items` items under an AND. */
static size_t pieces_filter(unsigned items, unsigned k, uint8_t *f, size_t cap)
{
	char s[4096];
	size_t o = 0;

	if (items > 1)
		o += (size_t)snprintf(s + o, sizeof s - o, "(&");
	for (unsigned i = 0; i < items; i++) {
		o += (size_t)snprintf(s + o, sizeof s - o, "(cn=");
		for (unsigned j = 0; j < k; j++)
			o += (size_t)snprintf(s + o, sizeof s - o, "*x");
		o += (size_t)snprintf(s + o, sizeof s - o, "*)");
	}
	if (items > 1)
		snprintf(s + o, sizeof s - o, ")");
	return enc(s, f, cap);
}

static void test_caps(void)
{
	static const struct { unsigned items, k; int rc; } cases[] = {
		{ 1, LFE_LDAP_MAX_SUB_PIECES, 0 },
		{ 1, LFE_LDAP_MAX_SUB_PIECES + 1, -E2BIG },
		{ 1, 1000, -E2BIG },
		{ 4, 16, 0 },                      /* 64 pieces in all */
		{ 5, 13, -E2BIG },                 /* 65 */
		{ 64, 1, 0 },
		{ 65, 1, -E2BIG },
	};
	static uint8_t f[65536];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = pieces_filter(cases[i].items, cases[i].k, f, sizeof f);
		int rc = lfe_filter_validate(f, n);
		CHECK(rc == cases[i].rc, "%u items x %u pieces: %d want %d", cases[i].items,
		      cases[i].k, rc, cases[i].rc);
	}
	/* Unvalidated input nested past the depth bound: eval refuses it
	 * instead of recursing (the cursor alone would allow ~32k levels). */
	size_t n = build(f, sizeof f, true, 5000);
	CHECK(lfe_filter_eval(f, n, get_none, NULL) == -E2BIG, "deep eval");
}

static void test_budget(void)
{
	uint8_t f[256];
	size_t n = enc("(|(cn=*zz*)(uid=alice))", f, sizeof f);
	uint64_t work = UINT64_MAX;

	CHECK(lfe_filter_eval_budget(f, n, get_attr, NULL, &work) == T, "large budget");
	uint64_t used = UINT64_MAX - work;
	/* 3 nodes; "Alice Smith" (11 bytes) and "Al" (2) once per piece;
	 * "alice" (5) once. */
	CHECK(used == 3 + 12 + 3 + 6, "work used %llu", (unsigned long long)used);
	work = used;
	CHECK(lfe_filter_eval_budget(f, n, get_attr, NULL, &work) == T && work == 0, "exact budget");
	work = used - 1;
	CHECK(lfe_filter_eval_budget(f, n, get_attr, NULL, &work) == -ETIME && work == 0,
	      "budget one short");
	work = 0;
	CHECK(lfe_filter_eval_budget(f, n, get_attr, NULL, &work) == -ETIME, "empty budget");
	/* One budget across the candidates of a request runs out. */
	work = 10 * used;
	unsigned calls = 0;
	int r;
	while ((r = lfe_filter_eval_budget(f, n, get_attr, NULL, &work)) == T && calls < 100)
		calls++;
	CHECK(r == -ETIME && calls == 10, "shared budget: %u calls, rc %d", calls, r);
	CHECK(lfe_filter_eval_budget(f, n, get_attr, NULL, NULL) == T, "no budget");
}

/* ---- index helper ----------------------------------------------------- */

static const struct {
	const char *f, *attr;
	int rc;
	const char *val;
} finds[] = {
	{ "(uid=alice)", "uid", 1, "alice" },
	{ "(UID=alice)", "uid", 1, "alice" },
	{ "(uid=alice)", "UID", 1, "alice" },
	{ "(&(objectClass=person)(uid=bob))", "uid", 1, "bob" },
	{ "(&(uid=first)(uid=second))", "uid", 1, "first" },
	{ "(&(objectClass=person)(|(uid=a)(uid=b)))", "uid", 0, NULL },
	{ "(|(uid=a))", "uid", 0, NULL },
	{ "(!(uid=a))", "uid", 0, NULL },
	{ "(uid=*)", "uid", 0, NULL },
	{ "(uid~=a)", "uid", 0, NULL },
	{ "(uid=a*)", "uid", 0, NULL },
	{ "(cn=x)", "uid", 0, NULL },
	{ "(uidNumber=5)", "uid", 0, NULL },
	{ "(&)", "uid", 0, NULL },
	{ "(userid=carol)", "uid", 1, "carol" },           /* alias */
	{ "(0.9.2342.19200300.100.1.1=dan)", "uid", 1, "dan" },
	{ "(uid;x-opt=eve)", "uid", 0, NULL },              /* another description */
	{ "(userPassword=x)", "userPassword", 0, NULL },    /* never for a secret */
};

static void test_find_eq(void)
{
	uint8_t f[1024];

	for (size_t i = 0; i < sizeof finds / sizeof finds[0]; i++) {
		size_t n = enc(finds[i].f, f, sizeof f);
		struct lfe_bytes v = { NULL, 0 };
		int rc = lfe_filter_find_eq(f, n, finds[i].attr, &v);
		CHECK(rc == finds[i].rc, "%s: rc %d", finds[i].f, rc);
		if (rc == 1)
			CHECK(v.len == strlen(finds[i].val) && memcmp(v.p, finds[i].val, v.len) == 0,
			      "%s: value", finds[i].f);
	}
}

int main(void)
{
	if (ldap_initialize(&ld, "ldap://127.0.0.1:1") != LDAP_SUCCESS)
		return 2;
	struct fattr *many = &entry[sizeof entry / sizeof entry[0] - 1];
	for (int i = 0; i < 40; i++) {
		snprintf(many_buf[i], sizeof many_buf[i], "v%d", i);
		many->vals[i] = many_buf[i];
	}
	test_roundtrip();
	test_bad();
	test_eval();
	test_find_eq();
	test_secrets();
	test_hidden();
	test_caps();
	test_budget();
	printf("test_filter: %zu round trips, %zu malformed, %zu evaluations, %zu index lookups\n",
	       sizeof rts / sizeof rts[0], sizeof bads / sizeof bads[0],
	       sizeof evals / sizeof evals[0], sizeof finds / sizeof finds[0]);
	ldap_unbind_ext(ld, NULL, NULL);
	return check_done();
}
