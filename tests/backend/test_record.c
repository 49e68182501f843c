/* tests/backend/test_record.c — entry record format: round trips, every
 * truncation, hand-made corrupt records, attribute replacement. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/record.h"
#include "tests/check.h"

#define B(s) ((struct lfe_bytes){ (const uint8_t *)(s), sizeof(s) - 1 })

static const struct lfe_bytes v_oc[] = { B("top"), B("person"), B("inetOrgPerson") };
static const struct lfe_bytes v_pw[] = { B("{SSHA}abcdefghijklmnopqrstuvwxyz0123456789") };
static const struct lfe_bytes v_bin[] = { B("\0\1\2\0"), B(""), B("x") };
static const struct lfe_bytes v_cn[] = { B("Ann Example") };

struct rt_case {
	const char *name;
	struct lfe_bytes dn;
	struct lfe_ldap_attr attrs[4];
	uint32_t n_attrs;
};

static char long_type[256];

static const struct rt_case rt_cases[] = {
	{ "no attributes", B("dc=example,dc=com"), { { { NULL, 0 }, 0, NULL } }, 0 },
	{ "empty dn", B(""), { { B("cn"), 1, v_cn } }, 1 },
	{ "typical", B("uid=Ann,ou=People,dc=example,dc=com"),
	  { { B("objectClass"), 3, v_oc }, { B("cn"), 1, v_cn },
	    { B("userPassword"), 1, v_pw } }, 3 },
	{ "zero values and binary", B("cn=x"),
	  { { B("description"), 0, NULL }, { B("jpegPhoto"), 3, v_bin } }, 2 },
};

/* Decode rec and compare it with the source entry, value by value. */
static void check_same(const uint8_t *rec, size_t len, const struct rt_case *c,
		       const struct lfe_ldap_attr *attrs)
{
	struct lfe_bytes dn, type, list, v;
	uint32_t n_attrs, n_vals, i = 0;
	size_t off;

	CHECK(lfe_record_validate(rec, len) == 0);
	CHECK(lfe_record_header(rec, len, &dn, &n_attrs, &off) == 0);
	CHECK(dn.len == c->dn.len && memcmp(dn.p, c->dn.p, dn.len) == 0);
	CHECK(n_attrs == c->n_attrs);
	while (lfe_record_next_attr(rec, len, &off, &type, &n_vals, &list) == 1) {
		uint32_t j = 0;

		CHECK(i < c->n_attrs);
		if (i >= c->n_attrs)
			return;
		CHECK(type.len == attrs[i].type.len &&
		      memcmp(type.p, attrs[i].type.p, type.len) == 0);
		CHECK(n_vals == attrs[i].n_vals);
		while (lfe_record_next_val(&list, &v) == 1) {
			CHECK(j < attrs[i].n_vals);
			if (j >= attrs[i].n_vals)
				break;
			CHECK(v.len == attrs[i].vals[j].len &&
			      (v.len == 0 || memcmp(v.p, attrs[i].vals[j].p, v.len) == 0));
			j++;
		}
		CHECK(j == attrs[i].n_vals);
		i++;
	}
	CHECK(i == c->n_attrs);
	CHECK(off == len);
}

static void test_round_trip(void)
{
	for (size_t t = 0; t < sizeof(rt_cases) / sizeof(rt_cases[0]); t++) {
		const struct rt_case *c = &rt_cases[t];
		ssize_t sz = lfe_record_size(c->dn, c->attrs, c->n_attrs);
		uint8_t *rec, *big;

		CHECK(sz >= (ssize_t)LFE_RECORD_HDR_LEN);
		if (sz < 0)
			continue;
		rec = malloc((size_t)sz);
		big = malloc((size_t)sz + 1);
		CHECK(lfe_record_write(rec, (size_t)sz - 1, c->dn, c->attrs, c->n_attrs) == -ENOSPC);
		CHECK(lfe_record_write(rec, (size_t)sz, c->dn, c->attrs, c->n_attrs) == sz);
		check_same(rec, (size_t)sz, c, c->attrs);
		/* Every proper prefix is corrupt, and so is a trailing byte. */
		for (size_t n = 0; n < (size_t)sz; n++) {
			uint8_t *cut = malloc(n ? n : 1);

			memcpy(cut, rec, n);
			if (lfe_record_validate(cut, n) != -EBADMSG) {
				fprintf(stderr, "case '%s': prefix of %zu accepted\n", c->name, n);
				check_failures++;
			}
			free(cut);
		}
		memcpy(big, rec, (size_t)sz);
		big[sz] = 0;
		CHECK(lfe_record_validate(big, (size_t)sz + 1) == -EBADMSG);
		free(rec);
		free(big);
	}
}

static void test_size_limits(void)
{
	struct lfe_bytes lt = { (const uint8_t *)long_type, 255 };
	struct lfe_ldap_attr a[2] = { { lt, 1, v_cn }, { B(""), 1, v_cn } };
	static uint8_t dn[LFE_RECORD_MAX_DN + 1];

	CHECK(lfe_record_size(B("cn=x"), a, 1) == 6 + 4 + 1 + 255 + 8 + 4 + 11);
	lt.len = 256;
	a[0].type = lt;
	CHECK(lfe_record_size(B("cn=x"), a, 1) == -EINVAL);
	CHECK(lfe_record_size(B("cn=x"), &a[1], 1) == -EINVAL);
	CHECK(lfe_record_size((struct lfe_bytes){ dn, sizeof(dn) }, NULL, 0) == -EINVAL);
	CHECK(lfe_record_size((struct lfe_bytes){ dn, sizeof(dn) - 1 }, NULL, 0) ==
	      (ssize_t)(6 + LFE_RECORD_MAX_DN));
	CHECK(lfe_record_size(B("cn=x"), a, LFE_RECORD_MAX_ATTRS + 1) == -E2BIG);
}

struct bad_case {
	const char *name;
	const char *bytes;
	size_t len;
};

#define BAD(n, s) { n, s, sizeof(s) - 1 }
static const struct bad_case bad_cases[] = {
	BAD("empty", ""),
	BAD("short header", "\x01\x00\x00\x00\x00"),
	BAD("version 0", "\x00\x00\x00\x00\x00\x00"),
	BAD("version 2", "\x02\x00\x00\x00\x00\x00"),
	BAD("flags set", "\x01\x01\x00\x00\x00\x00"),
	BAD("dn past end", "\x01\x00\x05\x00\x00\x00" "abcd"),
	BAD("attr count above attrs", "\x01\x00\x00\x00\x01\x00"),
	BAD("attr count below attrs",
	    "\x01\x00\x00\x00\x00\x00" "\x02" "cn" "\x00\x00\x00\x00" "\x00\x00\x00\x00"),
	BAD("type length zero",
	    "\x01\x00\x00\x00\x01\x00" "\x00" "\x00\x00\x00\x00" "\x00\x00\x00\x00"),
	BAD("type past end", "\x01\x00\x00\x00\x01\x00" "\x09" "cn"),
	BAD("no counts after type", "\x01\x00\x00\x00\x01\x00" "\x02" "cn" "\x00\x00\x00"),
	BAD("vals_len past end",
	    "\x01\x00\x00\x00\x01\x00" "\x02" "cn" "\x01\x00\x00\x00" "\x08\x00\x00\x00"
	    "\x01\x00\x00\x00" "x"),
	BAD("n_vals above values",
	    "\x01\x00\x00\x00\x01\x00" "\x02" "cn" "\x02\x00\x00\x00" "\x05\x00\x00\x00"
	    "\x01\x00\x00\x00" "x"),
	BAD("n_vals below values",
	    "\x01\x00\x00\x00\x01\x00" "\x02" "cn" "\x00\x00\x00\x00" "\x05\x00\x00\x00"
	    "\x01\x00\x00\x00" "x"),
	BAD("n_vals huge",
	    "\x01\x00\x00\x00\x01\x00" "\x02" "cn" "\xff\xff\xff\xff" "\x05\x00\x00\x00"
	    "\x01\x00\x00\x00" "x"),
	BAD("value length past vals_len",
	    "\x01\x00\x00\x00\x01\x00" "\x02" "cn" "\x01\x00\x00\x00" "\x05\x00\x00\x00"
	    "\x02\x00\x00\x00" "xy"),
	BAD("value length 4 GiB",
	    "\x01\x00\x00\x00\x01\x00" "\x02" "cn" "\x01\x00\x00\x00" "\x05\x00\x00\x00"
	    "\xff\xff\xff\xff" "x"),
	BAD("partial value length",
	    "\x01\x00\x00\x00\x01\x00" "\x02" "cn" "\x01\x00\x00\x00" "\x02\x00\x00\x00"
	    "\x00\x00"),
};

static void test_corrupt(void)
{
	/* The one good record the bad ones are variations of. */
	static const char good[] = "\x01\x00\x00\x00\x01\x00" "\x02" "cn" "\x01\x00\x00\x00"
				   "\x05\x00\x00\x00" "\x01\x00\x00\x00" "x";

	CHECK(lfe_record_validate((const uint8_t *)good, sizeof(good) - 1) == 0);
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		uint8_t *p = malloc(c->len ? c->len : 1);

		memcpy(p, c->bytes, c->len);
		if (lfe_record_validate(p, c->len) != -EBADMSG) {
			fprintf(stderr, "corrupt case '%s' accepted\n", c->name);
			check_failures++;
		}
		free(p);
	}
	CHECK(lfe_record_validate(NULL, 0) == -EBADMSG);
}

static void test_replace(void)
{
	const struct rt_case *c = &rt_cases[2];
	static const struct lfe_bytes nv[] = { B("{SSHA512}new") };
	struct lfe_ldap_attr repl = { B("USERPASSWORD"), 1, nv };
	struct lfe_ldap_attr want[3] = { c->attrs[0], c->attrs[1], repl };
	struct rt_case wc = *c;
	uint8_t rec[512], out[512], out2[512];
	ssize_t sz, rs, rs2;

	sz = lfe_record_write(rec, sizeof(rec), c->dn, c->attrs, c->n_attrs);
	CHECK(sz > 0);
	rs = lfe_record_replace_size(rec, (size_t)sz, &repl, 1);
	CHECK(rs == lfe_record_size(c->dn, want, 3));
	CHECK(lfe_record_replace_write(rec, (size_t)sz, &repl, 1, out, (size_t)rs - 1) == -ENOSPC);
	CHECK(lfe_record_replace_write(rec, (size_t)sz, &repl, 1, out, sizeof(out)) == rs);
	check_same(out, (size_t)rs, &wc, want);

	/* Replacing an absent attribute adds it. */
	repl.type = B("mail");
	want[2] = repl;
	rs2 = lfe_record_replace_write(out, (size_t)rs, &repl, 1, out2, sizeof(out2));
	wc.n_attrs = 4;
	{
		struct lfe_ldap_attr w4[4] = { c->attrs[0], c->attrs[1],
					       { B("USERPASSWORD"), 1, nv }, repl };
		CHECK(rs2 == lfe_record_size(c->dn, w4, 4));
		check_same(out2, (size_t)rs2, &wc, w4);
	}

	/* Several at once, as a modify: the password replaced, cn removed
	 * (no values), an absent type removed (nothing happens), mail added;
	 * the replacements go last in their order. A type twice: -EINVAL. */
	{
		static const struct lfe_bytes mv[] = { B("a@example.com") };
		const struct lfe_ldap_attr ops[] = {
			{ B("userPassword"), 1, nv }, { B("CN"), 0, NULL }, { B("pwdReset"), 0, NULL },
			{ B("mail"), 1, mv },
		};
		const struct lfe_ldap_attr w3[] = { c->attrs[0], ops[0], ops[3] };
		struct rt_case c3 = *c;
		c3.n_attrs = 3;
		rs = lfe_record_replace_size(rec, (size_t)sz, ops, 4);
		CHECK(rs == lfe_record_size(c->dn, w3, 3));
		CHECK(lfe_record_replace_write(rec, (size_t)sz, ops, 4, out, (size_t)rs - 1) == -ENOSPC);
		CHECK(lfe_record_replace_write(rec, (size_t)sz, ops, 4, out, sizeof(out)) == rs);
		check_same(out, (size_t)rs, &c3, w3);
		const struct lfe_ldap_attr twice[] = { ops[0], { B("USERPASSWORD"), 0, NULL } };
		CHECK(lfe_record_replace_size(rec, (size_t)sz, twice, 2) == -EINVAL);
		/* nothing to replace: the record as it was */
		CHECK(lfe_record_replace_write(rec, (size_t)sz, NULL, 0, out, sizeof(out)) == sz);
		CHECK(memcmp(out, rec, (size_t)sz) == 0);
	}
	rec[0] = 9;
	CHECK(lfe_record_replace_size(rec, (size_t)sz, &repl, 1) == -EBADMSG);
}

/* Flip every bit of a good record: the decoder must never read outside it
 * (ASan), and whatever it accepts must walk to the end consistently. */
static void test_bit_flips(void)
{
	const struct rt_case *c = &rt_cases[2];
	uint8_t rec[512];
	ssize_t sz = lfe_record_write(rec, sizeof(rec), c->dn, c->attrs, c->n_attrs);
	size_t accepted = 0;

	for (size_t i = 0; i < (size_t)sz; i++) {
		for (int b = 0; b < 8; b++) {
			uint8_t *p = malloc((size_t)sz);
			struct lfe_bytes dn, t, l, v;
			uint32_t na, nv;
			size_t off;

			memcpy(p, rec, (size_t)sz);
			p[i] ^= (uint8_t)(1u << b);
			if (lfe_record_validate(p, (size_t)sz) == 0) {
				accepted++;
				CHECK(lfe_record_header(p, (size_t)sz, &dn, &na, &off) == 0);
				while (lfe_record_next_attr(p, (size_t)sz, &off, &t, &nv, &l) == 1)
					while (lfe_record_next_val(&l, &v) == 1)
						;
				CHECK(off == (size_t)sz);
			}
			free(p);
		}
	}
	/* Flips inside DN, type and value bytes stay valid records; flips in
	 * the structure do not. Both kinds exist in this record. */
	CHECK(accepted > 0 && accepted < (size_t)sz * 8);
}

int main(void)
{
	memset(long_type, 'a', sizeof(long_type));
	test_round_trip();
	test_size_limits();
	test_corrupt();
	test_replace();
	test_bit_flips();
	return check_done();
}
