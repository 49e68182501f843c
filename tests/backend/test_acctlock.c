/* tests/backend/test_acctlock.c — locked and expired accounts: a table of
 * records (attribute, value, lockout duration, clock) and the verdict. */
#include <stdio.h>
#include <string.h>

#include "backend/acctlock.h"
#include "backend/record.h"
#include "tests/check.h"

#define B(s) ((struct lfe_bytes){ (const uint8_t *)(s), sizeof(s) - 1 })

/* 2026-12-01T12:00:00Z */
#define NOW 1796126400LL
#define DAY 86400LL

struct lock_case {
	const char *name;
	const char *type;           /* NULL: no lock attribute at all */
	const char *value;
	int64_t lockout_s;
	int64_t now;
	bool locked;
};

static const struct lock_case cases[] = {
	{ "plain account", NULL, NULL, 0, NOW, false },
	{ "ppolicy forever", "pwdAccountLockedTime", "000001010000Z", 0, NOW, true },
	{ "ppolicy forever, duration set", "pwdAccountLockedTime", "000001010000Z", 600, NOW, true },
	{ "ppolicy past, no duration", "pwdAccountLockedTime", "20261201110000Z", 0, NOW, true },
	{ "ppolicy past, inside duration", "pwdAccountLockedTime", "20261201115500Z", 600, NOW, true },
	{ "ppolicy past, duration over", "pwdAccountLockedTime", "20261201110000Z", 600, NOW, false },
	{ "ppolicy future", "pwdAccountLockedTime", "20271201110000Z", 600, NOW, true },
	{ "ppolicy fraction", "pwdAccountLockedTime", "20261201115959.123Z", 600, NOW, true },
	{ "ppolicy garbage", "pwdAccountLockedTime", "yesterday", 600, NOW, true },
	{ "ppolicy type case", "PWDACCOUNTLOCKEDTIME", "000001010000Z", 0, NOW, true },
	{ "389 lock true", "nsAccountLock", "true", 0, NOW, true },
	{ "389 lock TRUE", "nsAccountLock", "TRUE", 0, NOW, true },
	{ "389 lock false", "nsAccountLock", "false", 0, NOW, false },
	{ "pwdEndTime past", "pwdEndTime", "20261130000000Z", 0, NOW, true },
	{ "pwdEndTime exactly now", "pwdEndTime", "20261201120000Z", 0, NOW, true },
	{ "pwdEndTime future", "pwdEndTime", "20261202000000Z", 0, NOW, false },
	{ "pwdEndTime offset", "pwdEndTime", "20261201130000+0200", 0, NOW, true },
	{ "pwdEndTime offset future", "pwdEndTime", "20261201130000-0200", 0, NOW, false },
	{ "pwdEndTime local time", "pwdEndTime", "20261202000000", 0, NOW, true },
	{ "shadowExpire past", "shadowExpire", "20000", 0, NOW, true },
	{ "shadowExpire today", "shadowExpire", "20788", 0, NOW, true },
	{ "shadowExpire tomorrow", "shadowExpire", "20789", 0, NOW, false },
	{ "shadowExpire never", "shadowExpire", "-1", 0, NOW, false },
	{ "shadowExpire garbage", "shadowExpire", "soon", 0, NOW, true },
	{ "shadowExpire -5", "shadowExpire", "-5", 0, NOW, true },
	/* Malformed and boundary values of every attribute (issue 32): each
	 * malformed one locks (fail closed); boundaries one second each side. */
	{ "ppolicy empty", "pwdAccountLockedTime", "", 600, NOW, true },
	{ "ppolicy -", "pwdAccountLockedTime", "-", 600, NOW, true },
	{ "ppolicy too many digits", "pwdAccountLockedTime", "202612011100000Z", 600, NOW, true },
	{ "ppolicy negative", "pwdAccountLockedTime", "-20261201110000Z", 600, NOW, true },
	{ "ppolicy negative duration", "pwdAccountLockedTime", "20261201110000Z", -1, NOW, true },
	{ "ppolicy lock + duration 1 s ahead", "pwdAccountLockedTime", "20261201115001Z", 600, NOW,
	  true },
	{ "ppolicy lock + duration = now", "pwdAccountLockedTime", "20261201115000Z", 600, NOW, false },
	{ "ppolicy lock + duration 1 s ago", "pwdAccountLockedTime", "20261201114959Z", 600, NOW,
	  false },
	{ "ppolicy lock = now", "pwdAccountLockedTime", "20261201120000Z", 600, NOW, true },
	{ "389 lock empty", "nsAccountLock", "", 0, NOW, true },
	{ "389 lock -", "nsAccountLock", "-", 0, NOW, true },
	{ "389 lock 1", "nsAccountLock", "1", 0, NOW, true },
	{ "389 lock yes", "nsAccountLock", "yes", 0, NOW, true },
	{ "389 lock truee", "nsAccountLock", "truee", 0, NOW, true },
	{ "389 lock FALSE", "nsAccountLock", "FALSE", 0, NOW, false },
	{ "pwdEndTime empty", "pwdEndTime", "", 0, NOW, true },
	{ "pwdEndTime -", "pwdEndTime", "-", 0, NOW, true },
	{ "pwdEndTime too many digits", "pwdEndTime", "202612020000000Z", 0, NOW, true },
	{ "pwdEndTime negative", "pwdEndTime", "-20261202000000Z", 0, NOW, true },
	{ "pwdEndTime 1 s ago", "pwdEndTime", "20261201115959Z", 0, NOW, true },
	{ "pwdEndTime in 1 s", "pwdEndTime", "20261201120001Z", 0, NOW, false },
	{ "shadowExpire empty", "shadowExpire", "", 0, NOW, true },
	{ "shadowExpire -", "shadowExpire", "-", 0, NOW, true },
	{ "shadowExpire -0", "shadowExpire", "-0", 0, NOW, true },
	{ "shadowExpire -2", "shadowExpire", "-2", 0, NOW, true },
	{ "shadowExpire --1", "shadowExpire", "--1", 0, NOW, true },
	{ "shadowExpire +20789", "shadowExpire", "+20789", 0, NOW, true },
	{ "shadowExpire 12 digits", "shadowExpire", "999999999999", 0, NOW, false },
	{ "shadowExpire 13 digits", "shadowExpire", "1000000000000", 0, NOW, true },
	{ "shadowExpire 19 digits", "shadowExpire", "9223372036854775807", 0, NOW, true },
	{ "shadowExpire -1 then digits", "shadowExpire", "-10", 0, NOW, true },
	{ "shadowExpire tomorrow, 1 s before", "shadowExpire", "20789", 0, 20789 * DAY - 1, false },
	{ "shadowExpire tomorrow, at midnight", "shadowExpire", "20789", 0, 20789 * DAY, true },
	{ "shadowExpire tomorrow, 1 s after", "shadowExpire", "20789", 0, 20789 * DAY + 1, true },
	{ "unrelated p attribute", "postalCode", "12345", 0, NOW, false },
	{ "unrelated s attribute", "shadowLastChange", "1", 0, NOW, false },
};

static void check_case(const struct lock_case *c)
{
	static const struct lfe_bytes oc[] = { B("inetOrgPerson") };
	static const struct lfe_bytes pw[] = { B("{SSHA}xxxxxxxxxxxxxxxxxxxxxxxxxxxx") };
	struct lfe_bytes lv = { (const uint8_t *)c->value, c->value ? strlen(c->value) : 0 };
	struct lfe_ldap_attr attrs[3] = {
		{ B("objectClass"), 1, oc }, { B("userPassword"), 1, pw },
		{ { (const uint8_t *)c->type, c->type ? strlen(c->type) : 0 }, 1, &lv },
	};
	uint8_t rec[512];
	ssize_t n = lfe_record_write(rec, sizeof(rec), B("uid=a,dc=x"), attrs, c->type ? 3 : 2);
	bool got;

	CHECK(n > 0);
	if (n <= 0)
		return;
	got = lfe_acct_locked(rec, (size_t)n, c->now, c->lockout_s);
	if (got != c->locked) {
		check_failures++;
		fprintf(stderr, "case \"%s\": locked=%d, want %d\n", c->name, got, c->locked);
	}
	/* Every truncation of the record is corrupt: fail closed. */
	for (ssize_t cut = 0; cut < n; cut++)
		CHECK(lfe_acct_locked(rec, (size_t)cut, c->now, c->lockout_s));
}

static void gentime(void)
{
	int64_t t;

	CHECK(lfe_gentime_parse(B("19700101000000Z").p, 15, &t) == 0 && t == 0);
	CHECK(lfe_gentime_parse(B("2026120112Z").p, 11, &t) == 0 && t == NOW);
	CHECK(lfe_gentime_parse(B("202612011200Z").p, 13, &t) == 0 && t == NOW);
	CHECK(lfe_gentime_parse(B("20261301120000Z").p, 15, &t) < 0);
	CHECK(lfe_gentime_parse(B("20261201120000.Z").p, 16, &t) < 0);
	CHECK(lfe_gentime_parse(B("20261201120000Zx").p, 16, &t) < 0);
	CHECK(lfe_gentime_parse(B("2026").p, 4, &t) < 0);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
	gentime();
	printf("test_acctlock: %zu cases\n", sizeof(cases) / sizeof(cases[0]));
	return check_done();
}
