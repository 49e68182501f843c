/* test_ber.c — table-driven tests of the strict BER reader and the writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/ber.h"
#include "tests/check.h"

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

/* Reading modes a case exercises. */
enum kind {
	K_HDR,    /* lfe_ber_hdr on the whole input: rc, tag, hdr_len, content_len */
	K_INT,    /* one INTEGER filling the input, full int64 range */
	K_ENUM02, /* one ENUMERATED in 0..2 (the SearchRequest scope rule) */
	K_BOOL,   /* one BOOLEAN */
	K_NULL,   /* one NULL */
	K_OCTETS, /* one primitive OCTET STRING (0x04) */
	K_WALK,   /* walk every element, entering constructed ones, to the end */
};

struct tcase {
	const char *name;
	enum kind kind;
	const char *hex;
	int rc;
	int64_t val;   /* K_HDR: content length; K_INT/K_BOOL/K_ENUM02: value;
	                * K_OCTETS: content length; K_WALK: elements seen */
	size_t hdr_len; /* K_HDR only */
};

static const struct tcase cases[] = {
	/* Lengths: short, long, minimality, limits. */
	{ "short len 0", K_HDR, "0400", 0, 0, 2 },
	{ "short len 127", K_HDR, "047f", 0, 127, 2 },
	{ "long 1 octet 128", K_HDR, "048180", 0, 128, 3 },
	{ "long 1 octet 255", K_HDR, "0481ff", 0, 255, 3 },
	{ "long 2 octets 256", K_HDR, "04820100", 0, 256, 4 },
	{ "long 3 octets", K_HDR, "0483010000", 0, 65536, 5 },
	{ "long 4 octets max", K_HDR, "0484ffffffff", 0, 0xffffffffll, 6 },
	{ "indefinite length", K_HDR, "3080", -EBADMSG, 0, 0 },
	{ "5 length octets", K_HDR, "04850100000000", -EBADMSG, 0, 0 },
	{ "reserved 0xff length", K_HDR, "04ff", -EBADMSG, 0, 0 },
	{ "non-minimal 81 05 read", K_HDR, "048105", 0, 5, 3 },
	{ "non-minimal 81 7f read", K_HDR, "04817f", 0, 127, 3 },
	{ "non-minimal 82 00 80 read", K_HDR, "04820080", 0, 128, 4 },
	{ "non-minimal 84 00000005 read", K_HDR, "048400000005", 0, 5, 6 },
	{ "high tag number form", K_HDR, "1f0100", -EBADMSG, 0, 0 },
	{ "empty input", K_HDR, "", -EAGAIN, 0, 0 },
	{ "tag only", K_HDR, "30", -EAGAIN, 0, 0 },
	{ "long len cut after 82", K_HDR, "3082", -EAGAIN, 0, 0 },
	{ "long len cut after 82 01", K_HDR, "308201", -EAGAIN, 0, 0 },
	{ "long len cut after 82 00", K_HDR, "308200", -EAGAIN, 0, 0 },
	/* INTEGER. */
	{ "int 0", K_INT, "020100", 0, 0, 0 },
	{ "int 127", K_INT, "02017f", 0, 127, 0 },
	{ "int 128", K_INT, "02020080", 0, 128, 0 },
	{ "int -1", K_INT, "0201ff", 0, -1, 0 },
	{ "int -128", K_INT, "020180", 0, -128, 0 },
	{ "int -129", K_INT, "0202ff7f", 0, -129, 0 },
	{ "int 2^31-1", K_INT, "02047fffffff", 0, 2147483647, 0 },
	{ "int int64 max", K_INT, "02087fffffffffffffff", 0, INT64_MAX, 0 },
	{ "int int64 min", K_INT, "02088000000000000000", 0, INT64_MIN, 0 },
	{ "int empty", K_INT, "0200", -EBADMSG, 0, 0 },
	{ "int 9 octets", K_INT, "0209008000000000000000", -EBADMSG, 0, 0 },
	{ "int non-minimal 00 01", K_INT, "02020001", -EBADMSG, 0, 0 },
	{ "int non-minimal ff ff", K_INT, "0202ffff", -EBADMSG, 0, 0 },
	{ "int non-minimal 00 7f", K_INT, "0202007f", -EBADMSG, 0, 0 },
	{ "int wrong tag enum", K_INT, "0a0100", -EBADMSG, 0, 0 },
	{ "int constructed tag", K_INT, "2203020100", -EBADMSG, 0, 0 },
	{ "int length overruns", K_INT, "020201", -EBADMSG, 0, 0 },
	{ "int trailing octet", K_INT, "02010000", -EBADMSG, 0, 0 },
	{ "enum 2 ok", K_ENUM02, "0a0102", 0, 2, 0 },
	{ "enum 3 out of range", K_ENUM02, "0a0103", -EBADMSG, 0, 0 },
	{ "enum -1 out of range", K_ENUM02, "0a01ff", -EBADMSG, 0, 0 },
	/* BOOLEAN (RFC 4511 §5.1: TRUE is 0xFF). */
	{ "bool false", K_BOOL, "010100", 0, 0, 0 },
	{ "bool true ff", K_BOOL, "0101ff", 0, 1, 0 },
	{ "bool true 01 refused", K_BOOL, "010101", -EBADMSG, 0, 0 },
	{ "bool 2 octets", K_BOOL, "010200ff", -EBADMSG, 0, 0 },
	{ "bool empty", K_BOOL, "0100", -EBADMSG, 0, 0 },
	/* NULL. */
	{ "null ok", K_NULL, "0500", 0, 0, 0 },
	{ "null with content", K_NULL, "050100", -EBADMSG, 0, 0 },
	/* OCTET STRING. */
	{ "octets empty", K_OCTETS, "0400", 0, 0, 0 },
	{ "octets 3", K_OCTETS, "0403616263", 0, 3, 0 },
	{ "octets long form 128", K_OCTETS,
	  "048180"
	  "00000000000000000000000000000000000000000000000000000000000000000"
	  "00000000000000000000000000000000000000000000000000000000000000000"
	  "00000000000000000000000000000000000000000000000000000000000000000"
	  "0000000000000000000000000000000000000000000000000000000000000", 0, 128, 0 },
	{ "octets constructed refused", K_OCTETS, "24050403616263", -EBADMSG, 0, 0 },
	{ "octets truncated content", K_OCTETS, "040561626364", -EBADMSG, 0, 0 },
	{ "octets indefinite", K_OCTETS, "0480616263 0000", -EBADMSG, 0, 0 },
	/* Structure. */
	{ "walk flat seq", K_WALK, "3006020101040161", 0, 3, 0 },
	{ "walk nested", K_WALK, "3009 3007 3005 020100 0400", 0, 5, 0 },
	{ "walk empty seq", K_WALK, "3000", 0, 1, 0 },
	{ "walk child overruns parent", K_WALK, "30040204000000000000", -EBADMSG, 0, 0 },
	{ "walk child header overruns", K_WALK, "3001020100", -EBADMSG, 0, 0 },
	{ "walk child long len cut", K_WALK, "30020482", -EBADMSG, 0, 0 },
	{ "walk parent shorter than child", K_WALK, "300302030102 03", -EBADMSG, 0, 0 },
	{ "walk two top-level", K_WALK, "30000400", 0, 2, 0 },
	{ "walk indefinite child", K_WALK, "3004308000 00", -EBADMSG, 0, 0 },
	{ "walk non-minimal child len", K_WALK, "30040481 0161", 0, 2, 0 },
	{ "walk trailing garbage", K_WALK, "300002", -EBADMSG, 0, 0 },
};

static int walk(struct lfe_ber *b, int64_t *count)
{
	while (lfe_ber_more(b)) {
		int tag = lfe_ber_peek(b);
		(*count)++;
		if (tag & LFE_BER_CONS) {
			struct lfe_ber c;
			if (!lfe_ber_enter(b, (uint8_t)tag, &c))
				break;
			walk(&c, count);
		} else if (!lfe_ber_skip(b)) {
			break;
		}
	}
	lfe_ber_done(b);
	return lfe_ber_error(b);
}

static void run_case(const struct tcase *t)
{
	uint8_t buf[512];
	size_t n = unhex(t->hex, buf, sizeof buf);
	struct lfe_ber b;
	struct lfe_bytes o = { NULL, 0 };
	int64_t v = -12345;
	bool bv = false;
	int rc;

	lfe_ber_init(&b, buf, n);
	switch (t->kind) {
	case K_HDR: {
		uint8_t tag = 0;
		size_t hl = 0, cl = 0;
		rc = lfe_ber_hdr(buf, n, &tag, &hl, &cl);
		CHECK(rc == t->rc, "%s: rc %d want %d", t->name, rc, t->rc);
		if (rc == 0) {
			CHECK(tag == buf[0], "%s: tag", t->name);
			CHECK(hl == t->hdr_len, "%s: hdr_len %zu", t->name, hl);
			CHECK((int64_t)cl == t->val, "%s: content_len %zu", t->name, cl);
		}
		return;
	}
	case K_INT:
		lfe_ber_int(&b, LFE_BER_INTEGER, INT64_MIN, INT64_MAX, &v);
		break;
	case K_ENUM02:
		lfe_ber_int(&b, LFE_BER_ENUMERATED, 0, 2, &v);
		break;
	case K_BOOL:
		lfe_ber_bool(&b, LFE_BER_BOOLEAN, &bv);
		v = bv;
		break;
	case K_NULL:
		lfe_ber_null(&b, LFE_BER_NULL);
		v = 0;
		break;
	case K_OCTETS:
		lfe_ber_octets(&b, LFE_BER_OCTETS, &o);
		v = (int64_t)o.len;
		break;
	case K_WALK:
		v = 0;
		rc = walk(&b, &v);
		CHECK(rc == t->rc, "%s: rc %d want %d", t->name, rc, t->rc);
		if (rc == 0)
			CHECK(v == t->val, "%s: %lld elements", t->name, (long long)v);
		return;
	}
	lfe_ber_done(&b);
	rc = lfe_ber_error(&b);
	CHECK(rc == t->rc, "%s: rc %d want %d", t->name, rc, t->rc);
	if (rc == 0)
		CHECK(v == t->val, "%s: value %lld want %lld", t->name, (long long)v,
		      (long long)t->val);
}

/* An element that overruns its parent by exactly one octet, the parent
 * followed in the buffer by that octet (so an overread stays inside memory
 * and no sanitizer sees it). The reader's OWN result is asserted: the call
 * returns false, records -EBADMSG itself (not lfe_ber_done afterwards),
 * leaves the cursor where it was and writes no output. Each reader, short
 * and long length forms (the inline fast path and lfe_ber_elem_slow). */
enum okind { O_ELEM, O_SKIP, O_OCTETS, O_INT, O_ENUM, O_BOOL, O_NULL, O_ENTER };

static const struct ocase {
	const char *name;
	enum okind kind;
	const char *hex;   /* outer SEQUENCE, then the one octet it lacks */
} overrun_cases[] = {
	{ "elem short", O_ELEM, "3003 0402 61 62" },
	{ "elem long", O_ELEM, "3004 048102 61 62" },
	{ "elem long 2 octets", O_ELEM, "3005 04820002 61 62" },
	{ "skip short", O_SKIP, "3003 0402 61 62" },
	{ "skip long", O_SKIP, "3004 048102 61 62" },
	{ "octets short", O_OCTETS, "3004 0403 6162 63" },
	{ "octets long", O_OCTETS, "3005 048103 6162 63" },
	{ "int short", O_INT, "3003 0202 01 02" },
	{ "int long", O_INT, "3004 028102 01 02" },
	{ "enum short", O_ENUM, "3002 0a01 01" },
	{ "bool short", O_BOOL, "3002 0101 ff" },
	{ "null short", O_NULL, "3002 0501 00" },
	{ "enter short", O_ENTER, "3004 3003 0401 61 00" },
	{ "enter long", O_ENTER, "3005 308103 0401 61 00" },
};

static void test_overrun_by_one(void)
{
	for (size_t i = 0; i < sizeof overrun_cases / sizeof overrun_cases[0]; i++) {
		const struct ocase *t = &overrun_cases[i];
		uint8_t buf[64];
		size_t n = unhex(t->hex, buf, sizeof buf);
		struct lfe_ber b, c, child = { NULL, NULL, NULL, 0, 0 };
		struct lfe_bytes w = { NULL, 0 }, o = { NULL, 0 };
		uint8_t tag = 0;
		int64_t v = -7;
		bool bv = false, ok = true;

		lfe_ber_init(&b, buf, n);
		CHECK(lfe_ber_enter(&b, LFE_BER_SEQUENCE, &c), "%s: enter parent", t->name);
		CHECK(c.end < buf + n, "%s: the overrun octet lies in the buffer", t->name);
		const uint8_t *at = c.p;
		switch (t->kind) {
		case O_ELEM:   ok = lfe_ber_elem(&c, &tag, &w, &o); break;
		case O_SKIP:   ok = lfe_ber_skip(&c); break;
		case O_OCTETS: ok = lfe_ber_octets(&c, LFE_BER_OCTETS, &o); break;
		case O_INT:    ok = lfe_ber_int(&c, LFE_BER_INTEGER, INT64_MIN, INT64_MAX, &v); break;
		case O_ENUM:   ok = lfe_ber_int(&c, LFE_BER_ENUMERATED, 0, 2, &v); break;
		case O_BOOL:   ok = lfe_ber_bool(&c, LFE_BER_BOOLEAN, &bv); break;
		case O_NULL:   ok = lfe_ber_null(&c, LFE_BER_NULL); break;
		case O_ENTER:  ok = lfe_ber_enter(&c, LFE_BER_SEQUENCE, &child); break;
		}
		CHECK(!ok, "%s: the read itself must fail", t->name);
		CHECK(lfe_ber_error(&c) == -EBADMSG, "%s: error %d right after the read", t->name,
		      lfe_ber_error(&c));
		CHECK(c.p == at, "%s: cursor moved by %td", t->name, c.p - at);
		CHECK(tag == 0 && w.p == NULL && o.p == NULL && v == -7 && !bv && child.p == NULL,
		      "%s: output written", t->name);
		CHECK(!lfe_ber_more(&c) && lfe_ber_peek(&c) == -1, "%s: cursor stops", t->name);
		/* The same bytes with the parent one octet longer read fine. */
		buf[1]++;
		lfe_ber_init(&b, buf, n);
		CHECK(lfe_ber_enter(&b, LFE_BER_SEQUENCE, &c), "%s: enter longer parent", t->name);
		switch (t->kind) {
		case O_ELEM:   ok = lfe_ber_elem(&c, &tag, &w, &o); break;
		case O_SKIP:   ok = lfe_ber_skip(&c); break;
		case O_OCTETS: ok = lfe_ber_octets(&c, LFE_BER_OCTETS, &o); break;
		case O_INT:    ok = lfe_ber_int(&c, LFE_BER_INTEGER, INT64_MIN, INT64_MAX, &v); break;
		case O_ENUM:   ok = lfe_ber_int(&c, LFE_BER_ENUMERATED, 0, 2, &v); break;
		case O_BOOL:   ok = lfe_ber_bool(&c, LFE_BER_BOOLEAN, &bv); break;
		case O_NULL:   ok = lfe_ber_null(&c, LFE_BER_NULL) || lfe_ber_error(&c) == -EBADMSG; break;
		case O_ENTER:  ok = lfe_ber_enter(&c, LFE_BER_SEQUENCE, &child); break;
		}
		CHECK(ok && c.p == c.end && (t->kind == O_NULL || lfe_ber_error(&c) == 0),
		      "%s: in-bounds control case", t->name);
	}
}

/* Every strict prefix of a valid element is refused by a cursor
 * (malformed), and by lfe_ber_hdr as -EAGAIN while inside the header. */
static void test_truncation(void)
{
	uint8_t buf[64];
	size_t n = unhex("3081 8c" "0481 89", buf, sizeof buf);
	/* hdr of a 140-octet SEQUENCE: every header prefix wants more. */
	for (size_t i = 0; i < 3; i++) {
		uint8_t tag;
		size_t hl, cl;
		CHECK(lfe_ber_hdr(buf, i, &tag, &hl, &cl) == -EAGAIN, "hdr prefix %zu", i);
	}
	n = unhex("300c020101 6007 020103 0400 8000", buf, sizeof buf);
	for (size_t i = 0; i < n; i++) {
		struct lfe_ber b;
		int64_t c = 0;
		lfe_ber_init(&b, buf, i);
		int rc = i == 0 ? 0 : walk(&b, &c);
		CHECK(i == 0 || rc == -EBADMSG, "prefix %zu rc %d", i, rc);
	}
}

static void test_depth(void)
{
	uint8_t buf[4 * (LFE_BER_MAX_DEPTH + 2)];

	/* d nested SEQUENCEs, built with the writer (lengths pass 127). */
	for (unsigned d = LFE_BER_MAX_DEPTH; d <= LFE_BER_MAX_DEPTH + 1; d++) {
		struct lfe_berw w;
		struct lfe_ber b;
		int64_t c = 0;
		lfe_berw_init(&w, buf, sizeof buf);
		for (unsigned i = 0; i < d; i++)
			lfe_berw_wrap(&w, LFE_BER_SEQUENCE, 0);
		ssize_t n = lfe_berw_finish(&w);
		CHECK(n > 0, "built %u", d);
		lfe_ber_init(&b, buf, (size_t)n);
		int rc = walk(&b, &c);
		if (d == LFE_BER_MAX_DEPTH)
			CHECK(rc == 0 && c == d, "depth %u rc %d", d, rc);
		else
			CHECK(rc == -E2BIG, "depth bomb %u rc %d", d, rc);
	}
}

/* The error is sticky and shared with children. */
static void test_sticky(void)
{
	uint8_t buf[16];
	size_t n = unhex("3005 0201ff 0400", buf, sizeof buf);
	struct lfe_ber b, c;
	int64_t v;
	struct lfe_bytes o;

	lfe_ber_init(&b, buf, n);
	CHECK(lfe_ber_enter(&b, LFE_BER_SEQUENCE, &c), "enter");
	CHECK(!lfe_ber_int(&c, LFE_BER_INTEGER, 0, 10, &v), "range");
	CHECK(!lfe_ber_octets(&c, LFE_BER_OCTETS, &o), "sticky child");
	CHECK(lfe_ber_error(&b) == -EBADMSG, "parent sees child error");
	CHECK(!lfe_ber_more(&b) && lfe_ber_peek(&b) == -1, "parent stops");
}

struct wcase {
	int64_t v;
	const char *hex;
};

static void test_writer(void)
{
	static const struct wcase ints[] = {
		{ 0, "020100" }, { 1, "020101" }, { 127, "02017f" }, { 128, "02020080" },
		{ 255, "020200ff" }, { 256, "02020100" }, { -1, "0201ff" },
		{ -128, "020180" }, { -129, "0202ff7f" }, { 2147483647, "02047fffffff" },
		{ INT64_MAX, "02087fffffffffffffff" }, { INT64_MIN, "02088000000000000000" },
	};
	uint8_t out[300], want[300];

	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		struct lfe_berw w;
		lfe_berw_init(&w, out, sizeof out);
		lfe_berw_int(&w, LFE_BER_INTEGER, ints[i].v);
		ssize_t n = lfe_berw_finish(&w);
		size_t wn = unhex(ints[i].hex, want, sizeof want);
		CHECK(n == (ssize_t)wn && memcmp(out, want, wn) == 0, "int %lld", (long long)ints[i].v);
		/* And it reads back. */
		struct lfe_ber b;
		int64_t v = 0;
		lfe_ber_init(&b, out, (size_t)n);
		CHECK(lfe_ber_int(&b, LFE_BER_INTEGER, INT64_MIN, INT64_MAX, &v) && v == ints[i].v,
		      "int roundtrip %lld", (long long)ints[i].v);
	}
	/* Length forms at each boundary, and -ENOSPC at every short capacity. */
	static const size_t lens[] = { 0, 127, 128, 255, 256 };
	static uint8_t payload[256];
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		size_t l = lens[i];
		size_t hl = l < 128 ? 2 : l < 256 ? 3 : 4;
		for (size_t cap = 0; cap <= l + hl; cap++) {
			struct lfe_berw w;
			lfe_berw_init(&w, out, cap);
			size_t m = lfe_berw_mark(&w);
			lfe_berw_raw(&w, payload, l);
			lfe_berw_wrap(&w, LFE_BER_SEQUENCE, m);
			ssize_t n = lfe_berw_finish(&w);
			if (cap < l + hl) {
				CHECK(n == -ENOSPC, "len %zu cap %zu: %zd", l, cap, n);
				continue;
			}
			CHECK(n == (ssize_t)(l + hl), "len %zu: %zd", l, n);
			uint8_t tag;
			size_t h, c;
			CHECK(lfe_ber_hdr(out, (size_t)n, &tag, &h, &c) == 0 && h == hl && c == l,
			      "len %zu reads back", l);
		}
	}
	struct lfe_berw w;
	lfe_berw_init(&w, out, sizeof out);
	lfe_berw_bool(&w, LFE_BER_BOOLEAN, true);
	lfe_berw_bool(&w, LFE_BER_BOOLEAN, false);
	ssize_t n = lfe_berw_finish(&w);
	CHECK(n == 6 && memcmp(out, "\x01\x01\x00\x01\x01\xff", 6) == 0, "bools back to front");
}

int main(void)
{
	size_t n = sizeof cases / sizeof cases[0];

	for (size_t i = 0; i < n; i++)
		run_case(&cases[i]);
	test_overrun_by_one();
	test_truncation();
	test_depth();
	test_sticky();
	test_writer();
	printf("test_ber: %zu table cases\n", n);
	return check_done();
}
