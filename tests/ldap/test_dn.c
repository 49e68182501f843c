/* tests/ldap/test_dn.c — table-driven tests of ldap/dn.c. */
#include "ldap/dn.h"
#include "tests/check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* dn.c's full parser and its two fast paths, which lfe_dn_normalize tries
 * first (not in dn.h). */
ssize_t lfe_dn_normalize_full(const uint8_t *dn, size_t len, char *out, size_t cap);
ssize_t lfe_dn_normalize_vec(const uint8_t *dn, size_t len, char *out, size_t cap);
ssize_t lfe_dn_normalize_plain(const uint8_t *dn, size_t len, char *out, size_t cap);

/* in -> expected normalized form; NULL expected means -EINVAL. */
static const struct {
	const char *in, *out;
} norm_cases[] = {
	{ "", "" },
	{ "uid=user123456,ou=People,dc=example,dc=com",
	  "uid=user123456,ou=people,dc=example,dc=com" },
	{ "UID=JDoe,OU=People,DC=Example,DC=COM", "uid=jdoe,ou=people,dc=example,dc=com" },
	{ " uid = jdoe , ou = People ; dc = com ", "uid=jdoe,ou=people,dc=com" },
	{ "0.9.2342.19200300.100.1.1=JDoe,2.5.4.11=X", "uid=jdoe,ou=x" },
	{ "commonName=A,domainComponent=B,userid=C", "cn=a,dc=b,uid=c" },
	{ "GIVENNAME=Jo", "givenname=jo" },
	{ "2.5.4.42=Jo", "givenname=jo" },
	{ "1.3.6.1.1.1.1.0=1000", "uidnumber=1000" },
	{ "1.2.840.113556.1.4.1=X", "1.2.840.113556.1.4.1=X" },
	{ "X-Custom=Mixed Case", "x-custom=Mixed Case" },
	{ "userPassword=Mixed  Case", "userpassword=Mixed  Case" },
	/* insignificant spaces */
	{ "cn=  John    Smith  ", "cn=john smith" },
	{ "cn=\\20John\\20\\20Smith\\20", "cn=john smith" },
	{ "cn=\\20\\20", "cn=\\20" },
	{ "cn=", "cn=" },
	{ "userPassword=\\20a\\20", "userpassword=\\20a\\20" },
	{ "userPassword=\\20\\20a", "userpassword=\\20 a" },
	{ "userPassword=a \\20 ", "userpassword=a \\20" },
	/* escapes re-emitted one way */
	{ "cn=Smith\\, John", "cn=smith\\2C john" },
	{ "cn=Smith\\2c John", "cn=smith\\2C john" },
	{ "cn=a\\+b\\;c\\\"d\\\\e\\<f\\>g\\=h", "cn=a\\2Bb\\3Bc\\22d\\5Ce\\3Cf\\3Eg\\3Dh" },
	{ "cn=a=b", "cn=a\\3Db" },
	{ "cn=\\#1", "cn=\\231" },
	{ "cn=a#1", "cn=a#1" },
	{ "cn=\\41\\42", "cn=ab" },
	{ "cn=a\\00b", "cn=a\\00b" },
	{ "cn=(x*)", "cn=(x*)" },
	/* UTF-8: escaped as hex, raw or escaped input alike; not folded */
	{ "cn=\xc3\xa9t\xc3\xa9", "cn=\\C3\\A9t\\C3\\A9" },
	{ "cn=\\c3\\a9T\\C3\\A9", "cn=\\C3\\A9t\\C3\\A9" },
	{ "cn=\xc3\x89T\xc3\x89", "cn=\\C3\\89t\\C3\\89" },
	{ "cn=\xf0\x9f\x98\x80", "cn=\\F0\\9F\\98\\80" },
	/* BER values: kept, hex upper-cased, not folded */
	{ "cn=#04024869", "cn=#04024869" },
	{ "cn=#0c0aAbCd ,dc=X", "cn=#0C0AABCD,dc=x" },
	/* multi-valued RDNs: one order whatever the input order */
	{ "sn=Doe+cn=John+uid=JD,dc=x", "cn=john+sn=doe+uid=jd,dc=x" },
	{ "uid=JD+sn=Doe+cn=John,dc=x", "cn=john+sn=doe+uid=jd,dc=x" },
	{ "cn=John + uid=JD , dc=x", "cn=john+uid=jd,dc=x" },
	{ "ou=x+o=y", "o=y+ou=x" },
	{ "cn=b+cn=a", "cn=a+cn=b" },
	{ "cn=a\\+b+sn=c", "cn=a\\2Bb+sn=c" },
	/* RFC 1779 quoting */
	{ "cn=\"Smith, John\",dc=x", "cn=smith\\2C john,dc=x" },
	{ "cn=\" a \"", "cn=a" },
	{ "userPassword=\" a \"", "userpassword=\\20a\\20" },
	{ "cn=\"a\\\"b\"", "cn=a\\22b" },
	/* invalid */
	{ " ", NULL },
	{ ",", NULL },
	{ "cn", NULL },
	{ "=a", NULL },
	{ "cn=a,", NULL },
	{ ",cn=a", NULL },
	{ "cn=a,,dc=b", NULL },
	{ "cn=a+", NULL },
	{ "cn=a++sn=b", NULL },
	{ "cn a=b", NULL },
	{ "1cn=x", NULL },
	{ "-cn=x", NULL },
	{ "c_n=x", NULL },
	{ "cn;lang-en=x", NULL },
	{ "1=x", NULL },
	{ "2.5.04.3=x", NULL },
	{ "2.5.4.=x", NULL },
	{ "OID.2.5.4.3=x", NULL },
	{ "cn=a\\", NULL },
	{ "cn=a\\2", NULL },
	{ "cn=a\\zz", NULL },
	{ "cn=a\\*", NULL },
	{ "cn=a\"b", NULL },
	{ "cn=a<b", NULL },
	{ "cn=a>b", NULL },
	{ "cn=##04", NULL },
	{ "cn=#", NULL },
	{ "cn=#0", NULL },
	{ "cn=#0g", NULL },
	{ "cn=#04x", NULL },
	{ "cn=#04 x", NULL },
	{ "cn=\"a", NULL },
	{ "cn=\"a\"b", NULL },
	{ "cn=\\ff", NULL },
	{ "cn=\xff", NULL },
	{ "cn=\xc3", NULL },
	{ "cn=\\c0\\80", NULL },
	{ "cn=\\ed\\a0\\80", NULL },
	{ "cn=\\f4\\90\\80\\80", NULL },
	{ "cn=a+cn=a", NULL },
	{ "uid=a.b_c-d@x,OU=P,dc=e", "uid=a.b_c-d@x,ou=p,dc=e" },
	{ "uidNumber=12AB,homeDirectory=Home", "uidnumber=12AB,homedirectory=Home" },
	{ "X-Unknown=MiXed,dc=a", "x-unknown=MiXed,dc=a" },
	{ "uid=a,", NULL },
	{ "uid=,dc=a", "uid=,dc=a" },
	{ "uid=a,,dc=b", NULL },
	{ "cn=a+CN=\\41", NULL },
	/* spaces after ',' (the scalar fast path skips them), and elsewhere */
	{ "UID=JDoe, OU=People,  DC=Example", "uid=jdoe,ou=people,dc=example" },
	{ "uid=a ,dc=b", "uid=a,dc=b" },
	{ "uid=a, ", NULL },
	{ "uid=a,  ,dc=b", NULL },
	/* '/' and other bytes a value keeps as they are */
	{ "uid=A/B,dc=x", "uid=a/b,dc=x" },
	{ "userPassword=A/B", "userpassword=A/B" },
	{ "cn/x=a", NULL },
};

static void test_normalize(void)
{
	for (size_t i = 0; i < sizeof norm_cases / sizeof norm_cases[0]; i++) {
		const char *in = norm_cases[i].in, *want = norm_cases[i].out;
		char out[LFE_DN_MAX + 1];
		memset(out, 'X', sizeof out);
		ssize_t n = lfe_dn_normalize((const uint8_t *)in, strlen(in), out, sizeof out);
		char full[LFE_DN_MAX + 1];
		ssize_t nf = lfe_dn_normalize_full((const uint8_t *)in, strlen(in), full, sizeof full);
		CHECK(nf == n && (n < 0 || memcmp(full, out, (size_t)n + 1) == 0),
		      "[%s]: fast path [%s] differs from full parser [%s]", in,
		      n >= 0 ? out : "", nf >= 0 ? full : "");
		if (!want) {
			CHECK(n == -EINVAL, "[%s]: want -EINVAL, got %zd [%s]", in, n,
			      n >= 0 ? out : "");
			continue;
		}
		CHECK(n >= 0 && (size_t)n == strlen(want) && memcmp(out, want, (size_t)n) == 0 &&
			      out[n] == '\0',
		      "[%s]: want [%s], got %zd [%s]", in, want, n, n >= 0 ? out : "");
		if (n < 0)
			continue;
		/* The normalized form is a fixed point. */
		char again[LFE_DN_MAX + 1];
		ssize_t m = lfe_dn_normalize((const uint8_t *)out, (size_t)n, again, sizeof again);
		CHECK(m == n && memcmp(again, out, (size_t)n) == 0,
		      "[%s]: not idempotent: [%s] -> [%s]", in, out, m >= 0 ? again : "");
	}
}

/* Embedded NULs cannot be written in the table's C strings. */
static void test_nul_and_null(void)
{
	static const uint8_t raw_nul[] = { 'c', 'n', '=', 'a', 0, 'b' };
	char out[64];
	CHECK(lfe_dn_normalize(raw_nul, sizeof raw_nul, out, sizeof out) == -EINVAL,
	      "raw NUL in a value must be refused");
	static const uint8_t nul_type[] = { 'c', 0, '=', 'a' };
	CHECK(lfe_dn_normalize(nul_type, sizeof nul_type, out, sizeof out) == -EINVAL,
	      "raw NUL in a type must be refused");
	CHECK(lfe_dn_normalize(NULL, 0, out, sizeof out) == 0 && out[0] == '\0',
	      "NULL with length 0 is the empty DN");
	CHECK(lfe_dn_normalize(NULL, 3, out, sizeof out) == -EINVAL, "NULL with a length");
}

static void test_space(void)
{
	static const char *dn = "uid=jdoe,dc=com"; /* 15 bytes */
	char out[32];
	const uint8_t *p = (const uint8_t *)dn;
	CHECK(lfe_dn_normalize(p, 15, out, 16) == 15 && strcmp(out, dn) == 0, "exact fit");
	CHECK(lfe_dn_normalize(p, 15, out, 15) == -ENOSPC, "no room for the NUL");
	CHECK(lfe_dn_normalize(p, 15, out, 0) == -ENOSPC, "cap 0");
	CHECK(lfe_dn_normalize(p, 15, NULL, 0) == -ENOSPC, "NULL out");
	CHECK(lfe_dn_normalize((const uint8_t *)"", 0, out, 0) == -ENOSPC, "empty DN, cap 0");
	/* A malformed DN is -EINVAL whatever the buffer. */
	CHECK(lfe_dn_normalize((const uint8_t *)"cn", 2, out, 1) == -EINVAL, "invalid beats space");
	/* Every room, from none to more than enough, on DNs the fast path
	 * takes (the room is checked per value there): the same answer as the
	 * full parser, and nothing written past the room. */
	static const char *plain[] = {
		"UID=JDoe,OU=People,DC=Example,DC=com", "uid=a,dc=b", "cn=x-y.z@w,o=Org", "sn=A",
	};
	for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++) {
		const uint8_t *q = (const uint8_t *)plain[k];
		size_t n = strlen(plain[k]);
		for (size_t cap = 1; cap <= n + 2; cap++) {
			char a[64], b[64];
			memset(a, 'X', sizeof a);
			ssize_t ra = lfe_dn_normalize(q, n, a, cap);
			ssize_t rb = lfe_dn_normalize_full(q, n, b, cap);
			CHECK(ra == rb && (ra < 0 || strcmp(a, b) == 0), "fast = full at every room");
			CHECK(a[cap] == 'X', "nothing past the room");
		}
	}
}

/* Bounds: 64 RDNs, 16 AVAs, LFE_DN_MAX output bytes. */
static void test_limits(void)
{
	char in[8192], out[LFE_DN_MAX + 1];
	static const struct {
		size_t count;
		char sep;
		ssize_t want_err; /* 0: accepted */
	} cases[] = {
		{ LFE_DN_MAX_RDNS, ',', 0 },
		{ LFE_DN_MAX_RDNS + 1, ',', -EINVAL },
		{ LFE_DN_MAX_AVAS, '+', 0 },
		{ LFE_DN_MAX_AVAS + 1, '+', -EINVAL },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t o = 0;
		for (size_t i = 0; i < cases[c].count; i++)
			o += (size_t)snprintf(in + o, sizeof in - o, "%scn=v%02zu",
					      i ? (cases[c].sep == ',' ? "," : "+") : "", i);
		ssize_t n = lfe_dn_normalize((const uint8_t *)in, o, out, sizeof out);
		if (cases[c].want_err)
			CHECK(n == cases[c].want_err, "%zu x '%c': want %zd, got %zd",
			      cases[c].count, cases[c].sep, cases[c].want_err, n);
		else
			CHECK(n == (ssize_t)o && memcmp(out, in, o) == 0,
			      "%zu x '%c': want it unchanged, got %zd", cases[c].count,
			      cases[c].sep, n);
	}

	/* "cn=" + k bytes: fits exactly at LFE_DN_MAX. */
	for (size_t k = LFE_DN_MAX - 4; k <= LFE_DN_MAX - 2; k++) {
		memcpy(in, "cn=", 3);
		memset(in + 3, 'a', k);
		ssize_t n = lfe_dn_normalize((const uint8_t *)in, 3 + k, out, sizeof out);
		if (3 + k <= LFE_DN_MAX)
			CHECK(n == (ssize_t)(3 + k), "len %zu: got %zd", 3 + k, n);
		else
			CHECK(n == -EINVAL, "len %zu: want -EINVAL, got %zd", 3 + k, n);
	}

	/* Padding in a case-ignore value does not count against the bound. */
	size_t o = (size_t)snprintf(in, sizeof in, "cn=A");
	memset(in + o, ' ', 4000);
	o += 4000;
	in[o++] = 'B';
	ssize_t n = lfe_dn_normalize((const uint8_t *)in, o, out, sizeof out);
	CHECK(n == 6 && strcmp(out, "cn=a b") == 0, "padded value: got %zd", n);

	/* In a case-exact value the spaces are data: too long. */
	memcpy(in, "xx", 2);
	n = lfe_dn_normalize((const uint8_t *)in, o, out, sizeof out);
	CHECK(n == -EINVAL, "padded case-exact value: got %zd", n);
}

static void test_is_under(void)
{
	static const struct {
		const char *dn, *suffix;
		bool want;
	} cases[] = {
		{ "uid=a,ou=people,dc=example,dc=com", "dc=example,dc=com", true },
		{ "uid=a,ou=people,dc=example,dc=com", "ou=people,dc=example,dc=com", true },
		{ "dc=example,dc=com", "dc=example,dc=com", true },
		{ "dc=example,dc=com", "", true },
		{ "", "", true },
		{ "", "dc=com", false },
		{ "dc=com", "dc=example,dc=com", false },
		{ "uid=a,dc=myexample,dc=com", "dc=example,dc=com", false },
		{ "uid=a,dc=example,dc=com", "example,dc=com", false },
		{ "uid=a,dc=example,dc=org", "dc=example,dc=com", false },
		{ "cn=x\\2Cdc=example,dc=com", "dc=example,dc=com", false },
		{ "cn=x\\2Cdc=example,dc=com", "dc=com", true },
		{ "cn=x\\2Cdc=example", "dc=example", false },
		{ "cn=a+dc=example", "dc=example", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool got = lfe_dn_is_under(cases[i].dn, strlen(cases[i].dn), cases[i].suffix,
					   strlen(cases[i].suffix));
		CHECK(got == cases[i].want, "is_under(%s, %s): want %d", cases[i].dn,
		      cases[i].suffix, cases[i].want);
	}
}

static void test_attr(void)
{
	static const struct {
		const char *type;
		bool ci;
		const char *canon; /* NULL: -EINVAL */
	} cases[] = {
		{ "uid", true, "uid" },
		{ "UID", true, "uid" },
		{ "0.9.2342.19200300.100.1.1", true, "uid" },
		{ "userid", true, "uid" },
		{ "CN", true, "cn" },
		{ "2.5.4.3", true, "cn" },
		{ "commonName", true, "cn" },
		{ "ou", true, "ou" },
		{ "2.5.4.11", true, "ou" },
		{ "o", true, "o" },
		{ "2.5.4.10", true, "o" },
		{ "c", true, "c" },
		{ "2.5.4.6", true, "c" },
		{ "l", true, "l" },
		{ "2.5.4.7", true, "l" },
		{ "st", true, "st" },
		{ "2.5.4.8", true, "st" },
		{ "dc", true, "dc" },
		{ "0.9.2342.19200300.100.1.25", true, "dc" },
		{ "mail", true, "mail" },
		{ "0.9.2342.19200300.100.1.3", true, "mail" },
		{ "sn", true, "sn" },
		{ "2.5.4.4", true, "sn" },
		{ "givenName", true, "givenname" },
		{ "2.5.4.42", true, "givenname" },
		{ "objectClass", true, "objectclass" },
		{ "2.5.4.0", true, "objectclass" },
		{ "uidNumber", false, "uidnumber" },
		{ "1.3.6.1.1.1.1.0", false, "uidnumber" },
		{ "gidNumber", false, "gidnumber" },
		{ "1.3.6.1.1.1.1.1", false, "gidnumber" },
		{ "userPassword", false, "userpassword" },
		{ "X-Unknown", false, "x-unknown" },
		{ "1.2.3.4", false, "1.2.3.4" },
		{ "2.5.4.03", false, NULL },
		{ "", false, NULL },
		{ "cn;x", true, NULL },      /* options: the type's rule; no canon */
		{ "c n", false, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const uint8_t *t = (const uint8_t *)cases[i].type;
		size_t len = strlen(cases[i].type);
		CHECK(lfe_attr_is_case_ignore(t, len) == cases[i].ci, "case_ignore(%s)",
		      cases[i].type);
		char out[64];
		ssize_t n = lfe_attr_canon(t, len, out, sizeof out);
		if (!cases[i].canon) {
			CHECK(n == -EINVAL, "canon(%s): want -EINVAL, got %zd", cases[i].type, n);
			continue;
		}
		CHECK(n == (ssize_t)strlen(cases[i].canon) && strcmp(out, cases[i].canon) == 0,
		      "canon(%s): want %s, got %zd", cases[i].type, cases[i].canon, n);
		CHECK(lfe_attr_canon(t, len, out, strlen(cases[i].canon)) == -ENOSPC,
		      "canon(%s) without room for the NUL", cases[i].type);
	}
	char out[64];
	CHECK(lfe_attr_canon((const uint8_t *)"uid\0", 4, out, sizeof out) == -EINVAL,
	      "NUL inside a type");
	CHECK(!lfe_attr_is_case_ignore((const uint8_t *)"uid\0", 4), "NUL inside a type");
	CHECK(!lfe_attr_is_case_ignore(NULL, 0), "NULL type");
}

/* ---- The fast paths against the full parser ----------------------------
 * lfe_dn_normalize tries a 16-bytes-at-a-time path, then a one-pass scalar
 * path, then the full parser; each fast path answers only the DNs it takes
 * (-EAGAIN otherwise). On generated DNs and on every byte at every position
 * of a few DNs, each path that answers must answer what the full parser
 * does, at every room, and write nothing at or past out[cap]. */

#define CANARY 0xa5
#define SHOW_MAX 20 /* failures printed in full; the rest are counted */

static int shown;

/* dn as C-escaped text for a failure message (static buffer). */
static const char *show(const uint8_t *dn, size_t len)
{
	static char buf[4 * LFE_DN_MAX + 64];
	size_t o = 0;
	for (size_t i = 0; i < len && o + 8 < sizeof buf; i++) {
		if (dn[i] >= 0x20 && dn[i] < 0x7f && dn[i] != '\\')
			buf[o++] = (char)dn[i];
		else
			o += (size_t)snprintf(buf + o, sizeof buf - o, "\\x%02x", dn[i]);
	}
	buf[o] = '\0';
	return buf;
}

static const struct {
	const char *name;
	ssize_t (*fn)(const uint8_t *, size_t, char *, size_t);
	bool may_decline; /* -EAGAIN: left to the next path */
} paths[] = {
	{ "vector", lfe_dn_normalize_vec, true },
	{ "plain", lfe_dn_normalize_plain, true },
	{ "lfe_dn_normalize", lfe_dn_normalize, false },
};

/* Every path on dn with room cap (<= LFE_DN_MAX + 1). Returns the vector
 * path's answer. */
static ssize_t check_paths(const uint8_t *dn, size_t len, size_t cap)
{
	char full[LFE_DN_MAX + 1], got[LFE_DN_MAX + 1 + 16];
	ssize_t nf = lfe_dn_normalize_full(dn, len, full, cap);
	ssize_t vec = -EAGAIN;
	for (size_t t = 0; t < sizeof paths / sizeof paths[0]; t++) {
		memset(got, CANARY, sizeof got);
		ssize_t n = paths[t].fn(dn, len, got, cap);
		if (t == 0)
			vec = n;
		bool past = false;
		for (size_t i = cap; i < sizeof got; i++)
			past |= (uint8_t)got[i] != CANARY;
		bool bad = past || (!(paths[t].may_decline && n == -EAGAIN) &&
				    (n != nf || (n >= 0 && memcmp(got, full, (size_t)n + 1) != 0)));
		if (bad && shown++ < SHOW_MAX)
			fprintf(stderr, "[%s] cap %zu: %s gives %zd [%.*s]%s, full parser %zd [%.*s]\n",
				show(dn, len), cap, paths[t].name, n, n > 0 ? (int)n : 0, got,
				past ? " and writes past the room" : "", nf, nf > 0 ? (int)nf : 0,
				full);
		check_failures += bad;
	}
	return vec;
}

/* Every room from none to more than enough. */
static void check_all_rooms(const uint8_t *dn, size_t len)
{
	size_t top = len + 2 < LFE_DN_MAX + 1 ? len + 2 : LFE_DN_MAX + 1;
	for (size_t cap = 0; cap <= top; cap++)
		check_paths(dn, len, cap);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 32) % n;
}

/* Types by what the vector path must do with them. */
static const char *const short_ci[] = { "uid", "cn", "ou", "dc", "o", "c", "l", "st", "sn", "mail" };
static const char *const long_names[] = {
	"givenName", "street", "title", "description", "serialNumber", "initials",
	"displayName", "employeeNumber", "postalCode", "objectClass", "gecos",
	"userPassword", "authPassword", "member", "uniqueMember", "uidNumber", "gidNumber",
	"homeDirectory", "loginShell", "memberUid",
};
static const char *const unknown_types[] = { "x-Custom", "a1", "ab-", "uidx", "ui", "u", "mai",
					     "dcx", "cnn", "mailx", "b", "q-1-2" };
/* Left to the slower paths: other spellings of known types, OIDs, bad types. */
static const char *const other_types[] = {
	"userid", "commonName", "organizationalUnitName", "organizationName", "countryName",
	"localityName", "stateOrProvinceName", "domainComponent", "rfc822Mailbox", "surname",
	"gn", "streetAddress", "0.9.2342.19200300.100.1.1", "2.5.4.3", "2.5.4.11",
	"0.9.2342.19200300.100.1.25", "1.3.6.1.1.1.1.0", "1.2.3.4", "1a", "-x", "a_b", "a/b",
	"a.b", "a@b", "", "u d", "uid;x", "uid ", " cn",
};
static const char clean_value[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
static const char clean_extra[] = "-._@/";
static const uint8_t specials[] = { ' ', '=', ',', '+', ';', '\\', '"', '#', '<', '>', 0,
				    0x7f, 0x80, 0xc3, 0xa9, '*', '(', ':', '\t', 0x01, 0xff };

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct gen {
	uint8_t b[LFE_DN_MAX + 64];
	size_t len;
	bool vec_takes; /* the vector path must answer it */
};

static void gen_put(struct gen *g, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++) {
		if (g->len == sizeof g->b) {
			g->vec_takes = false;
			return;
		}
		g->b[g->len++] = b[i];
	}
}

static void gen_type(struct gen *g)
{
	const char *t;
	uint32_t r = rnd(100);
	if (r < 60) {
		t = short_ci[rnd(N(short_ci))];
	} else if (r < 75) {
		t = long_names[rnd(N(long_names))];
	} else if (r < 85) {
		t = unknown_types[rnd(N(unknown_types))];
	} else {
		t = other_types[rnd(N(other_types))];
		g->vec_takes = false;
	}
	for (size_t i = 0; t[i]; i++) {
		uint8_t c = (uint8_t)t[i];
		if (rnd(2) && c >= 'a' && c <= 'z')
			c = (uint8_t)(c - 32);
		else if (rnd(2) && c >= 'A' && c <= 'Z')
			c = (uint8_t)(c + 32);
		gen_put(g, &c, 1);
	}
}

static void gen_value(struct gen *g, size_t n, bool dirty)
{
	if (n == 0)
		g->vec_takes = false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c;
		uint32_t r = rnd(100);
		if (dirty && r < 8) {
			c = specials[rnd(N(specials))];
			g->vec_takes = false;
		} else if (r < 90) {
			c = (uint8_t)clean_value[rnd(sizeof clean_value - 1)];
		} else {
			c = (uint8_t)clean_extra[rnd(sizeof clean_extra - 1)];
		}
		gen_put(g, &c, 1);
	}
}

/* A DN of nrdns RDNs; dirty ones get special bytes and odd separators. */
static void gen_dn(struct gen *g, size_t nrdns, size_t vmax, bool dirty)
{
	g->len = 0;
	g->vec_takes = nrdns >= 1 && nrdns <= LFE_DN_MAX_RDNS;
	if (dirty && rnd(20) == 0) {
		gen_put(g, ",", 1);
		g->vec_takes = false;
	}
	for (size_t i = 0; i < nrdns; i++) {
		if (i) {
			static const char *const odd[] = { ";", "+", ", ", ",,", " ,", "=", "" };
			if (dirty && rnd(20) == 0) {
				const char *s = odd[rnd(N(odd))];
				gen_put(g, s, strlen(s));
				g->vec_takes = false;
			} else {
				gen_put(g, ",", 1);
			}
		}
		gen_type(g);
		gen_put(g, "=", 1);
		gen_value(g, rnd((uint32_t)vmax + 1), dirty);
	}
	if (dirty && rnd(20) == 0) {
		gen_put(g, ",", 1);
		g->vec_takes = false;
	}
	if (g->len > LFE_DN_MAX)
		g->vec_takes = false;
}

static void test_fast_paths_generated(void)
{
	struct gen g;
	size_t total = 0;
	for (int i = 0; i < 30000; i++) {
		uint32_t r = rnd(100);
		size_t nrdns = r < 90 ? 1 + rnd(6) : r < 97 ? 1 + rnd(30) : 60 + rnd(10);
		size_t vmax = rnd(4) == 0 ? 200 : 16;
		gen_dn(&g, nrdns, vmax, rnd(3) == 0);
		ssize_t v = check_paths(g.b, g.len, LFE_DN_MAX + 1);
		if (g.vec_takes) {
			total++;
			if (v < 0 && shown++ < SHOW_MAX)
				fprintf(stderr, "[%s]: the vector path declines it (%zd)\n",
					show(g.b, g.len), v);
			check_failures += v < 0;
		}
		if (i % 16 == 0 && g.len <= 160)
			check_all_rooms(g.b, g.len);
		else
			check_paths(g.b, g.len, 1 + rnd((uint32_t)g.len + 2));
	}
	CHECK(total > 10000, "only %zu generated DNs for the vector path", total);
}

/* Clean DNs of every length from 1 to past LFE_DN_MAX: one to many RDNs
 * whose last value fills up to the length, so the ends of the 16-byte
 * chunks and of the 64-bit masks fall everywhere. */
static void test_fast_paths_lengths(void)
{
	static const char *const heads[] = { "", "uid=a,", "UID=User0123,OU=People,",
					     "x-Custom=MiXed,uidNumber=12AB,", "c=x,c=y,c=z," };
	static const char *const lasts[] = { "cn=", "DC=", "o=", "userPassword=", "x=" };
	uint8_t dn[LFE_DN_MAX + 8];
	for (size_t h = 0; h < N(heads); h++) {
		for (size_t l = 0; l < N(lasts); l++) {
			size_t hl = strlen(heads[h]), ll = strlen(lasts[l]);
			for (size_t len = 1; len <= LFE_DN_MAX + 2; len++) {
				if (len > 200 && len < LFE_DN_MAX - 70)
					len = LFE_DN_MAX - 70;
				memcpy(dn, heads[h], hl);
				memcpy(dn + hl, lasts[l], ll);
				size_t n = hl + ll;
				if (n > len)
					continue;
				for (size_t i = n; i < len; i++)
					dn[i] = (uint8_t)clean_value[(i * 7 + len) % (sizeof clean_value - 1)];
				ssize_t v = check_paths(dn, len, LFE_DN_MAX + 1);
				bool takes = len > n && len <= LFE_DN_MAX;
				CHECK(!takes || v == (ssize_t)len, "[%s]: the vector path gives %zd",
				      show(dn, len), v);
				if (len <= 70)
					check_all_rooms(dn, len);
			}
		}
	}
}

/* Each byte value at each position of DNs around the chunk and mask ends,
 * and deleting each byte, and inserting each special byte. */
static void test_fast_paths_each_byte(void)
{
	static const char *const bases[] = {
		"uid=user0123456,ou=People,dc=example,dc=com",
		"uid=abcdefghijkl",
		"cn=ABCDEFGHIJKLMNOPQRSTUVWXYZabcd,o=X",
		"UID=User.Name-0123456789@Example_x/y,OU=People,ou=Unit-42,dc=Example,DC=com",
		"x-Custom=MiXed,uidNumber=12AB,dc=Com",
		"c=x,l=y,o=z,st=w,sn=v,cn=u,ou=t,dc=s,mail=r,uid=q,givenName=P",
	};
	uint8_t dn[LFE_DN_MAX];
	for (size_t b = 0; b < N(bases); b++) {
		size_t len = strlen(bases[b]);
		for (size_t p = 0; p < len; p++) {
			for (unsigned c = 0; c < 256; c++) {
				memcpy(dn, bases[b], len);
				dn[p] = (uint8_t)c;
				check_paths(dn, len, LFE_DN_MAX + 1);
			}
			memcpy(dn, bases[b], p);
			memcpy(dn + p, bases[b] + p + 1, len - p - 1);
			check_paths(dn, len - 1, LFE_DN_MAX + 1);
			static const uint8_t ins[] = { ',', '=', ' ', '+', ';', '\\', '"', '#', '/',
						       '@', '_', '.', '-', 'A', '0', 0, 0x80 };
			for (size_t k = 0; k < N(ins); k++) {
				memcpy(dn, bases[b], p);
				dn[p] = ins[k];
				memcpy(dn + p + 1, bases[b] + p, len - p);
				check_paths(dn, len + 1, LFE_DN_MAX + 1);
			}
		}
		memcpy(dn, bases[b], len);
		CHECK(check_paths(dn, len, LFE_DN_MAX + 1) == (ssize_t)len,
		      "[%s]: the vector path must take it", bases[b]);
		check_all_rooms(dn, len);
	}
}

int main(void)
{
	test_normalize();
	test_nul_and_null();
	test_space();
	test_limits();
	test_is_under();
	test_attr();
	test_fast_paths_generated();
	test_fast_paths_lengths();
	test_fast_paths_each_byte();
	return check_done();
}
