/* tests/ldap/test_attr.c — ldap/attr.h: the one attribute-type equality
 * (names, aliases, OIDs, options as a set), subtypes, and secrets. */
#include <stdio.h>
#include <string.h>

#include "ldap/attr.h"
#include "tests/check.h"

#define B(s) (const uint8_t *)(s), strlen(s)

static void test_eq(void)
{
	static const struct { const char *a, *b; bool eq, base, matches; } cases[] = {
		/* a, b, type_eq, base_eq, desc_matches(want=a, have=b) */
		{ "uid", "uid", true, true, true },
		{ "uid", "UID", true, true, true },
		{ "uid", "userid", true, true, true },
		{ "UserID", "0.9.2342.19200300.100.1.1", true, true, true },
		{ "0.9.2342.19200300.100.1.1", "uid", true, true, true },
		{ "cn", "commonName", true, true, true },
		{ "mail", "rfc822Mailbox", true, true, true },
		{ "givenName", "gn", true, true, true },
		{ "userPassword", "2.5.4.35", true, true, true },
		{ "authPassword", "1.3.6.1.4.1.4203.1.3.4", true, true, true },
		{ "uid", "cn", false, false, false },
		{ "uid", "uidNumber", false, false, false },
		{ "objectClass", "userPassword", false, false, false },
		{ "2.5.4.3", "2.5.4.4", false, false, false },
		{ "2.5.4.3", "2.5.4.03", false, false, false },
		{ "1.2.3.4", "1.2.3.4", true, true, true },      /* unknown OID: itself */
		{ "x-custom", "X-CUSTOM", true, true, true },    /* unknown name: any case */
		{ "x-custom", "x-custom2", false, false, false },
		{ "cn;lang-en", "cn;lang-en", true, true, true },
		{ "cn;lang-en", "CN;LANG-EN", true, true, true },
		{ "cn;lang-en;x-a", "commonName;x-a;lang-en", true, true, true },  /* a set */
		{ "cn", "cn;lang-en", false, true, true },       /* subtype */
		{ "cn;lang-en", "cn", false, true, false },
		{ "cn;lang-en", "cn;lang-de", false, true, false },
		{ "userPassword", "userPassword;x-legacy", false, true, true },
		{ "2.5.4.35;x-legacy", "userPassword;X-LEGACY", true, true, true },
		{ "", "", false, false, false },
		{ "uid", "", false, false, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *a = cases[i].a, *b = cases[i].b;
		CHECK(lfe_attr_type_eq(B(a), B(b)) == cases[i].eq, "type_eq(%s, %s)", a, b);
		CHECK(lfe_attr_type_eq(B(b), B(a)) == cases[i].eq, "type_eq(%s, %s)", b, a);
		CHECK(lfe_attr_base_eq(B(a), B(b)) == cases[i].base, "base_eq(%s, %s)", a, b);
		CHECK(lfe_attr_desc_matches(B(a), B(b)) == cases[i].matches, "matches(%s, %s)", a, b);
		struct lfe_attr_key k;
		lfe_attr_key_init(&k, B(a));
		CHECK(lfe_attr_key_eq(&k, B(b)) == cases[i].eq, "key_eq(%s, %s)", a, b);
	}
}

static void test_secret(void)
{
	static const struct { const char *t; bool secret; } cases[] = {
		{ "userPassword", true }, { "USERPASSWORD", true }, { "2.5.4.35", true },
		{ "userPassword;x-legacy", true }, { "2.5.4.35;binary", true },
		{ "authPassword", true }, { "authpassword;foo", true },
		{ "1.3.6.1.4.1.4203.1.3.4", true }, { "1.3.6.1.4.1.4203.1.3.4;x", true },
		{ "userPassword;", true },
		{ "userPasswords", false }, { "password", false }, { "2.5.4.36", false },
		{ "2.5.4.035", false }, { "cn", false }, { "", false }, { ";userPassword", false },
		{ "x-userPassword", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK(lfe_attr_is_secret(B(cases[i].t)) == cases[i].secret, "is_secret(%s)", cases[i].t);
	CHECK(!lfe_attr_is_secret(NULL, 0), "NULL");
}

static void test_misc(void)
{
	CHECK(lfe_attr_base_len(B("cn;lang-en")) == 2, "base_len");
	CHECK(lfe_attr_base_len(B("cn")) == 2, "base_len no options");
	CHECK(lfe_attr_base_len(NULL, 0) == 0, "base_len NULL");
	CHECK(lfe_attr_is_case_ignore(B("cn;lang-en")), "case_ignore with options");
	CHECK(!lfe_attr_is_case_ignore(B("userPassword;x")), "userPassword exact");
}

int main(void)
{
	test_eq();
	test_secret();
	test_misc();
	return check_done();
}
