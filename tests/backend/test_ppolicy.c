/* tests/backend/test_ppolicy.c — password policy at bind (ppolicy.h): a
 * table of accounts (pwdChangedTime, pwdReset, grace uses) under policies
 * and clocks, with slapd's verdicts at the boundaries (exactly at expiry,
 * one second each side), malformed values failing closed; the response
 * control against byte vectors laid out as slapd's create_passcontrol
 * writes them, and read back by libldap's own parser. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ldap.h>
#include <lmdb.h>

#include "backend/bindjob.h"
#include "backend/ppolicy.h"
#include "backend/pwscheme.h"
#include "backend/record.h"
#include "backend/store.h"
#include "tests/check.h"

#define B(s) ((struct lfe_bytes){ (const uint8_t *)(s), sizeof(s) - 1 })

/* 2026-12-01T12:00:00Z; pwdChangedTime CHANGED is 30 days before. */
#define NOW 1796126400LL
#define DAY 86400LL
#define CHANGED "20261101120000Z"
#define AGE (30 * DAY)

static const struct lfe_pp_policy P_NONE = { 0 };
static const struct lfe_pp_policy P_AGE = { .max_age = AGE, .expire_warning = 7 * DAY };
static const struct lfe_pp_policy P_GRACE = { .max_age = AGE, .grace_limit = 3 };
static const struct lfe_pp_policy P_GRACE_EXP = { .max_age = AGE, .grace_limit = 3,
						  .grace_expiry = DAY };
static const struct lfe_pp_policy P_MUST = { .max_age = AGE, .must_change = true };

struct pp_case {
	const char *name;
	const char *changed;        /* pwdChangedTime, NULL: absent */
	const char *reset;          /* pwdReset, NULL: absent */
	uint32_t grace_vals;        /* pwdGraceUseTime values in the record */
	uint32_t extra;             /* grace logins counted by ldapfe */
	const struct lfe_pp_policy *pol;
	int64_t now;
	enum lfe_pp_state state;
	int32_t seconds, grace;
};

static const struct pp_case cases[] = {
	{ "no policy attributes", NULL, NULL, 0, 0, &P_AGE, NOW, LFE_PP_OK, -1, -1 },
	{ "no policy", CHANGED, NULL, 0, 0, NULL, NOW + DAY, LFE_PP_OK, -1, -1 },
	{ "policy without max age", CHANGED, NULL, 0, 0, &P_NONE, NOW + DAY, LFE_PP_OK, -1, -1 },
	{ "young password", CHANGED, NULL, 0, 0, &P_AGE, NOW - 10 * DAY, LFE_PP_OK, -1, -1 },
	{ "warning starts (max - age < warn)", CHANGED, NULL, 0, 0, &P_AGE, NOW - 7 * DAY + 1,
	  LFE_PP_WARN, (int32_t)(7 * DAY - 1), -1 },
	{ "max - age == warn: no warning", CHANGED, NULL, 0, 0, &P_AGE, NOW - 7 * DAY, LFE_PP_OK,
	  -1, -1 },
	{ "one second before expiry", CHANGED, NULL, 0, 0, &P_AGE, NOW - 1, LFE_PP_WARN, 1, -1 },
	{ "exactly at expiry (age == max)", CHANGED, NULL, 0, 0, &P_AGE, NOW, LFE_PP_WARN, 0, -1 },
	{ "one second after expiry", CHANGED, NULL, 0, 0, &P_AGE, NOW + 1, LFE_PP_EXPIRED, -1,
	  -1 },
	{ "no pwdChangedTime never expires", NULL, NULL, 0, 0, &P_AGE, NOW + 400 * DAY, LFE_PP_OK,
	  -1, -1 },
	{ "grace: 3 left, this one spends one", CHANGED, NULL, 0, 0, &P_GRACE, NOW + 1,
	  LFE_PP_GRACE, -1, 2 },
	{ "grace: record has 1 use", CHANGED, NULL, 1, 0, &P_GRACE, NOW + 1, LFE_PP_GRACE, -1,
	  1 },
	{ "grace: 1 recorded + 1 counted: last one", CHANGED, NULL, 1, 1, &P_GRACE, NOW + 1,
	  LFE_PP_GRACE, -1, 0 },
	{ "grace: all used", CHANGED, NULL, 2, 1, &P_GRACE, NOW + 1, LFE_PP_EXPIRED, -1, -1 },
	{ "grace: more used than allowed", CHANGED, NULL, 9, 0, &P_GRACE, NOW + 1,
	  LFE_PP_EXPIRED, -1, -1 },
	{ "grace expiry: inside", CHANGED, NULL, 0, 0, &P_GRACE_EXP, NOW + DAY, LFE_PP_GRACE, -1,
	  2 },
	{ "grace expiry: 1 s past", CHANGED, NULL, 0, 0, &P_GRACE_EXP, NOW + DAY + 1,
	  LFE_PP_EXPIRED, -1, -1 },
	{ "reset + mustChange", CHANGED, "TRUE", 0, 0, &P_MUST, NOW - DAY, LFE_PP_MUST_CHANGE, -1,
	  -1 },
	{ "reset + mustChange beats expiry", CHANGED, "TRUE", 0, 0, &P_MUST, NOW + DAY,
	  LFE_PP_MUST_CHANGE, -1, -1 },
	{ "reset FALSE", CHANGED, "FALSE", 0, 0, &P_MUST, NOW - DAY, LFE_PP_OK, -1, -1 },
	{ "reset without mustChange", CHANGED, "TRUE", 0, 0, &P_AGE, NOW - 10 * DAY, LFE_PP_OK,
	  -1, -1 },
	{ "reset lower case", CHANGED, "true", 0, 0, &P_MUST, NOW - DAY, LFE_PP_MUST_CHANGE, -1,
	  -1 },
	/* Malformed values fail closed, whatever the clock. */
	{ "changed: garbage", "yesterday", NULL, 0, 0, &P_AGE, NOW - 10 * DAY, LFE_PP_EXPIRED, -1,
	  -1 },
	{ "changed: empty", "", NULL, 0, 0, &P_AGE, NOW - 10 * DAY, LFE_PP_EXPIRED, -1, -1 },
	{ "changed: local time", "20261101120000", NULL, 0, 0, &P_AGE, NOW - 10 * DAY,
	  LFE_PP_EXPIRED, -1, -1 },
	{ "changed: month 13", "20261301120000Z", NULL, 0, 0, &P_AGE, NOW - 10 * DAY,
	  LFE_PP_EXPIRED, -1, -1 },
	{ "changed: trailing byte", "20261101120000Zx", NULL, 0, 0, &P_AGE, NOW - 10 * DAY,
	  LFE_PP_EXPIRED, -1, -1 },
	{ "changed: malformed, no policy", "yesterday", NULL, 0, 0, NULL, NOW, LFE_PP_EXPIRED, -1,
	  -1 },
	{ "reset: not a boolean", CHANGED, "yes", 0, 0, &P_MUST, NOW - DAY, LFE_PP_EXPIRED, -1,
	  -1 },
	{ "changed: offset", "20261101140000+0200", NULL, 0, 0, &P_AGE, NOW + 1, LFE_PP_EXPIRED,
	  -1, -1 },
	{ "changed: offset, at expiry", "20261101140000+0200", NULL, 0, 0, &P_AGE, NOW,
	  LFE_PP_WARN, 0, -1 },
};

static void check_case(const struct pp_case *c)
{
	static const struct lfe_bytes oc[] = { B("inetOrgPerson") };
	static const struct lfe_bytes pw[] = { B("{SSHA}xxxxxxxxxxxxxxxxxxxxxxxxxxxx") };
	static const struct lfe_bytes gut[] = { B("20261201000000Z"), B("20261201000001Z"),
						B("20261201000002Z"), B("20261201000003Z"),
						B("20261201000004Z"), B("20261201000005Z"),
						B("20261201000006Z"), B("20261201000007Z"),
						B("20261201000008Z") };
	struct lfe_bytes cv = { (const uint8_t *)c->changed, c->changed ? strlen(c->changed) : 0 };
	struct lfe_bytes rv = { (const uint8_t *)c->reset, c->reset ? strlen(c->reset) : 0 };
	struct lfe_ldap_attr attrs[5] = { { B("objectClass"), 1, oc }, { B("userPassword"), 1, pw } };
	uint32_t n = 2;
	uint8_t rec[1024];
	struct lfe_pp_acct a;
	struct lfe_pp_verdict v;

	if (c->changed)
		attrs[n++] = (struct lfe_ldap_attr){ B("pwdChangedTime"), 1, &cv };
	if (c->reset)
		attrs[n++] = (struct lfe_ldap_attr){ B("pwdReset"), 1, &rv };
	if (c->grace_vals)
		attrs[n++] = (struct lfe_ldap_attr){ B("pwdGraceUseTime"), c->grace_vals, gut };
	ssize_t len = lfe_record_write(rec, sizeof(rec), B("uid=a,dc=x"), attrs, n);

	CHECK(len > 0);
	if (len <= 0)
		return;
	(void)lfe_pp_acct_read(rec, (size_t)len, &a);
	v = lfe_pp_check(&a, c->pol, c->extra, c->now);
	if (v.state != c->state || (c->state == LFE_PP_WARN && v.seconds != c->seconds) ||
	    (c->state == LFE_PP_GRACE && v.grace != c->grace)) {
		check_failures++;
		fprintf(stderr, "case \"%s\": state %d seconds %d grace %d, want %d %d %d\n",
			c->name, v.state, v.seconds, v.grace, c->state, c->seconds, c->grace);
	}
	/* Every truncation of the record is corrupt: fail closed. */
	for (ssize_t cut = 0; cut < len; cut++) {
		CHECK(lfe_pp_acct_read(rec, (size_t)cut, &a) < 0);
		CHECK(lfe_pp_check(&a, c->pol, 0, c->now).state == LFE_PP_EXPIRED);
	}
}

static void acct_fields(void)
{
	static const struct lfe_bytes sub[] = { B("cn=strict,ou=policies,dc=x") };
	struct lfe_ldap_attr attrs[] = { { B("PWDPOLICYSUBENTRY"), 1, sub } };
	uint8_t rec[256];
	struct lfe_pp_acct a;
	ssize_t len = lfe_record_write(rec, sizeof(rec), B("uid=a,dc=x"), attrs, 1);

	CHECK(len > 0 && lfe_pp_acct_read(rec, (size_t)len, &a) == 0);
	CHECK(a.any && !a.bad && a.subentry.len == sub[0].len &&
	      memcmp(a.subentry.p, sub[0].p, sub[0].len) == 0);
	CHECK(lfe_pp_attr_type(B("pwdChangedTime").p, 14));
	CHECK(lfe_pp_attr_type(B("pwdgraceusetime").p, 15));
	CHECK(!lfe_pp_attr_type(B("pwdMaxAge").p, 9));
	CHECK(!lfe_pp_attr_type(B("pwdAccountLockedTime").p, 20));
}

struct pol_case {
	const char *name;
	const char *type, *value;
	int rc;
	struct lfe_pp_policy want;
};

static const struct pol_case pol_cases[] = {
	{ "max age", "pwdMaxAge", "2592000", 0, { .max_age = 2592000 } },
	{ "warning", "pwdExpireWarning", "3600", 0, { .expire_warning = 3600 } },
	{ "grace", "pwdGraceAuthNLimit", "3", 0, { .grace_limit = 3 } },
	{ "grace expiry", "pwdGraceExpiry", "86400", 0, { .grace_expiry = 86400 } },
	{ "must change", "pwdMustChange", "TRUE", 0, { .must_change = true } },
	{ "must change FALSE", "pwdMustChange", "FALSE", 0, { 0 } },
	{ "type case", "PWDMAXAGE", "10", 0, { .max_age = 10 } },
	{ "int max", "pwdMaxAge", "2147483647", 0, { .max_age = 2147483647 } },
	{ "over int", "pwdMaxAge", "2147483648", -1, { 0 } },
	{ "negative", "pwdMaxAge", "-1", -1, { 0 } },
	{ "empty", "pwdMaxAge", "", -1, { 0 } },
	{ "letters", "pwdGraceAuthNLimit", "three", -1, { 0 } },
	{ "11 digits", "pwdMaxAge", "00000000001", -1, { 0 } },
	{ "bad boolean", "pwdMustChange", "1", -1, { 0 } },
	{ "unrelated", "pwdMinLength", "8", 0, { 0 } },
};

static void policies(void)
{
	for (size_t i = 0; i < sizeof(pol_cases) / sizeof(pol_cases[0]); i++) {
		const struct pol_case *c = &pol_cases[i];
		static const struct lfe_bytes oc[] = { B("pwdPolicy") };
		struct lfe_bytes v = { (const uint8_t *)c->value, strlen(c->value) };
		struct lfe_ldap_attr attrs[] = {
			{ B("objectClass"), 1, oc },
			{ { (const uint8_t *)c->type, strlen(c->type) }, 1, &v },
		};
		uint8_t rec[256];
		struct lfe_pp_policy p;
		ssize_t len = lfe_record_write(rec, sizeof(rec), B("cn=p,dc=x"), attrs, 2);
		int rc = len > 0 ? lfe_pp_policy_read(rec, (size_t)len, &p) : -99;

		if ((rc < 0) != (c->rc < 0) ||
		    (rc == 0 && memcmp(&p, &c->want, sizeof(p)) != 0)) {
			check_failures++;
			fprintf(stderr, "policy case \"%s\": rc %d\n", c->name, rc);
		}
		for (ssize_t cut = 0; len > 0 && cut < len; cut++)
			CHECK(lfe_pp_policy_read(rec, (size_t)cut, &p) < 0);
	}
}

/* The control value of each shape, as slapd's create_passcontrol lays it
 * out (ber_printf "{" then "tO" of a flattened "ti", then "te", "N}"). */
struct enc_case {
	const char *name;
	int32_t warn, grace;
	enum lfe_pp_error err;
	const char *value;          /* hex */
};

static const struct enc_case enc_cases[] = {
	{ "nothing to say", -1, -1, LFE_PP_ERR_NONE, "3000" },
	{ "timeBeforeExpiration 3600", 3600, -1, LFE_PP_ERR_NONE, "3006a00480020e10" },
	{ "timeBeforeExpiration 0", 0, -1, LFE_PP_ERR_NONE, "3005a0038001" "00" },
	{ "timeBeforeExpiration 128", 128, -1, LFE_PP_ERR_NONE, "3006a00480020080" },
	{ "timeBeforeExpiration 604799", 604799, -1, LFE_PP_ERR_NONE, "3007a005800309" "3a7f" },
	{ "timeBeforeExpiration INT_MAX", 2147483647, -1, LFE_PP_ERR_NONE,
	  "3008a00680047fffffff" },
	{ "graceAuthNsRemaining 2", -1, 2, LFE_PP_ERR_NONE, "3005a003810102" },
	{ "graceAuthNsRemaining 0", -1, 0, LFE_PP_ERR_NONE, "3005a003810100" },
	{ "passwordExpired", -1, -1, LFE_PP_ERR_EXPIRED, "3003810100" },
	{ "accountLocked", -1, -1, LFE_PP_ERR_LOCKED, "3003810101" },
	{ "changeAfterReset", -1, -1, LFE_PP_ERR_CHANGE_AFTER_RESET, "3003810102" },
	{ "warning wins over grace", 5, 1, LFE_PP_ERR_NONE, "3005a003800105" },
	{ "grace and error", -1, 1, LFE_PP_ERR_EXPIRED, "3008a003810101810100" },
};

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;

	for (; h[0] && h[1]; h += 2) {
		unsigned b;

		sscanf(h, "%2x", &b);
		out[n++] = (uint8_t)b;
	}
	return n;
}

static void encoding(LDAP *ld)
{
	static const char oid[] = "1.3.6.1.4.1.42.2.27.8.5.1";

	for (size_t i = 0; i < sizeof(enc_cases) / sizeof(enc_cases[0]); i++) {
		const struct enc_case *c = &enc_cases[i];
		uint8_t want[32], got[64];
		size_t wl = unhex(c->value, want);
		ssize_t n = lfe_pp_enc_control(got, sizeof(got), c->warn, c->grace, c->err);
		const size_t ol = sizeof(oid) - 1;

		/* Control ::= SEQUENCE { controlType, controlValue } */
		if (n != (ssize_t)(2 + 2 + ol + 2 + wl) || got[0] != 0x30 ||
		    got[1] != (uint8_t)(n - 2) || got[2] != 0x04 || got[3] != ol ||
		    memcmp(got + 4, oid, ol) != 0 || got[4 + ol] != 0x04 || got[5 + ol] != wl ||
		    memcmp(got + 6 + ol, want, wl) != 0) {
			check_failures++;
			fprintf(stderr, "encoding \"%s\": got %zd bytes\n", c->name, n);
			continue;
		}
		/* libldap's own reader agrees. */
		LDAPControl lc = { (char *)oid, { wl, (char *)got + 6 + ol }, 0 };
		ber_int_t exp = -2, grace = -2;
		LDAPPasswordPolicyError err = PP_noError;

		CHECK(ldap_parse_passwordpolicy_control(ld, &lc, &exp, &grace, &err) == LDAP_SUCCESS);
		CHECK(exp == (c->warn >= 0 ? c->warn : -1));
		CHECK(grace == (c->warn < 0 && c->grace >= 0 ? c->grace : -1));
		CHECK((int)err == (c->err >= 0 ? (int)c->err : (int)PP_noError));
		/* Short buffers: -ENOSPC, never a write past cap. */
		for (size_t cap = 0; cap < (size_t)n; cap++)
			CHECK(lfe_pp_enc_control(got, cap, c->warn, c->grace, c->err) == -ENOSPC);
	}
	struct lfe_pp_verdict v = { LFE_PP_GRACE, -1, 1, 0 };
	uint8_t out[64];
	ssize_t n = lfe_pp_enc_verdict(out, sizeof(out), &v);
	CHECK(n > 7 && out[n - 5] == 0xa0 && out[n - 3] == 0x81 && out[n - 1] == 1);
	v = (struct lfe_pp_verdict){ LFE_PP_EXPIRED, -1, -1, 0 };
	n = lfe_pp_enc_verdict(out, sizeof(out), &v);
	CHECK(n > 5 && out[n - 5] == 0x30 && out[n - 3] == 0x81 && out[n - 1] == 0);
}

/* Grace logins counted here: each spend lowers what is left; the last
 * one leaves 0, the next is refused; a new pwdChangedTime starts over;
 * another account has its own count. */
static void grace_table(void)
{
	struct lfe_pp_grace g;
	struct lfe_pp_verdict v;

	CHECK(lfe_pp_grace_init(&g, 0) == 0);
	for (int i = 2; i >= 0; i--) {
		v = (struct lfe_pp_verdict){ LFE_PP_GRACE, -1, 2, 100 };
		CHECK(lfe_pp_grace_spend(&g, "uid=a", 5, &v) == 0 && v.grace == i);
	}
	v = (struct lfe_pp_verdict){ LFE_PP_GRACE, -1, 2, 100 };
	CHECK(lfe_pp_grace_spend(&g, "uid=a", 5, &v) == -EACCES && v.state == LFE_PP_EXPIRED);
	v = (struct lfe_pp_verdict){ LFE_PP_GRACE, -1, 2, 200 };
	CHECK(lfe_pp_grace_spend(&g, "uid=a", 5, &v) == 0 && v.grace == 2);
	v = (struct lfe_pp_verdict){ LFE_PP_GRACE, -1, 0, 100 };
	CHECK(lfe_pp_grace_spend(&g, "uid=b", 5, &v) == 0 && v.grace == 0);
	/* A full table refuses (fail closed) and says so. */
	int refused = 0;
	for (int i = 0; i < 1000; i++) {
		char dn[32];
		int n = snprintf(dn, sizeof(dn), "uid=u%d", i);

		v = (struct lfe_pp_verdict){ LFE_PP_GRACE, -1, 5, 1 };
		refused += lfe_pp_grace_spend(&g, dn, (size_t)n, &v) < 0;
	}
	CHECK(refused > 0 && g.full == (uint64_t)refused);
	lfe_pp_grace_fini(&g);
}

/* Through a real store: the policy entry (pwdPolicySubentry's, else the
 * default one) read at bind, after the password; an expired password
 * fails as a wrong one; the bind index keeps the policy attributes; a
 * format 2 store binds through "entries" until reindexed. */
static char tmpl[] = "/tmp/lfe-ppolicy-XXXXXX";

static int put(struct lfe_store *st, const char *dn, const struct lfe_ldap_attr *a, uint32_t n)
{
	return lfe_store_put(st, (struct lfe_bytes){ (const uint8_t *)dn, strlen(dn) }, a, n, true);
}

static int user(struct lfe_store *st, const char *uid, const char *hash, const char *changed,
		const char *reset, const char *sub)
{
	char dn[128];
	struct lfe_bytes oc = B("person"), pw = { (const uint8_t *)hash, strlen(hash) };
	struct lfe_bytes cv = { (const uint8_t *)changed, changed ? strlen(changed) : 0 };
	struct lfe_bytes rv = { (const uint8_t *)reset, reset ? strlen(reset) : 0 };
	struct lfe_bytes sv = { (const uint8_t *)sub, sub ? strlen(sub) : 0 };
	struct lfe_ldap_attr a[5] = { { B("objectClass"), 1, &oc }, { B("userPassword"), 1, &pw } };
	uint32_t n = 2;

	if (changed)
		a[n++] = (struct lfe_ldap_attr){ B("pwdChangedTime"), 1, &cv };
	if (reset)
		a[n++] = (struct lfe_ldap_attr){ B("pwdReset"), 1, &rv };
	if (sub)
		a[n++] = (struct lfe_ldap_attr){ B("pwdPolicySubentry"), 1, &sv };
	snprintf(dn, sizeof(dn), "uid=%s,dc=example,dc=com", uid);
	return put(st, dn, a, n);
}

static int policy(struct lfe_store *st, const char *cn, const char *max_age, const char *warn,
		  const char *grace, const char *must)
{
	char dn[128];
	struct lfe_bytes oc = B("pwdPolicy");
	struct lfe_bytes v[4] = { { (const uint8_t *)max_age, strlen(max_age) },
				  { (const uint8_t *)warn, strlen(warn) },
				  { (const uint8_t *)grace, strlen(grace) },
				  { (const uint8_t *)must, strlen(must) } };
	struct lfe_ldap_attr a[] = {
		{ B("objectClass"), 1, &oc }, { B("pwdMaxAge"), 1, &v[0] },
		{ B("pwdExpireWarning"), 1, &v[1] }, { B("pwdGraceAuthNLimit"), 1, &v[2] },
		{ B("pwdMustChange"), 1, &v[3] },
	};
	snprintf(dn, sizeof(dn), "cn=%s,dc=example,dc=com", cn);
	return put(st, dn, a, 5);
}

static void gentime(time_t t, char *out, size_t cap)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, cap, "%Y%m%d%H%M%SZ", &tm);
}

static int bind_pp(struct lfe_store *st, const char *uid, const char *pw,
		   struct lfe_pp_verdict *v)
{
	char dn[128];
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	int rc;

	snprintf(dn, sizeof(dn), "uid=%s,dc=example,dc=com", uid);
	rc = lfe_store_verify_bind(r, dn, strlen(dn), (const uint8_t *)pw, strlen(pw), 0, NULL);
	*v = *lfe_store_reader_ppolicy(r, NULL);
	lfe_store_reader_free(r);
	return rc;
}

static void store_binds(void)
{
	char path[64], h[256], young[32], old[32], near[32];
	struct lfe_store *st;
	struct lfe_store_info info;
	struct lfe_pp_verdict v;
	time_t now = time(NULL);

	if (!mkdtemp(tmpl)) {
		CHECK(0);
		return;
	}
	snprintf(path, sizeof(path), "%s/s", tmpl);
	st = lfe_store_open(path, 0, 16u << 20, NULL, NULL);
	CHECK(st && lfe_store_init(st, "dc=example,dc=com") == 0);
	if (!st)
		return;
	CHECK(lfe_pw_hash("{SSHA}", (const uint8_t *)"secret", 6, h, sizeof(h)) > 0);
	gentime(now - 100, young, sizeof(young));
	gentime(now - 3600 - 60, old, sizeof(old));          /* max age 3600: expired */
	gentime(now - 3600 + 600, near, sizeof(near));       /* 600 s left, warning 1200 */
	CHECK(policy(st, "strict", "3600", "1200", "0", "TRUE") == 0);
	CHECK(policy(st, "graceful", "3600", "1200", "2", "FALSE") == 0);
	CHECK(user(st, "plain", h, NULL, NULL, NULL) == 0);
	CHECK(user(st, "young", h, young, NULL, "cn=strict,dc=example,dc=com") == 0);
	CHECK(user(st, "expired", h, old, NULL, "CN=Strict, DC=example,dc=com") == 0);
	CHECK(user(st, "near", h, near, NULL, "cn=strict,dc=example,dc=com") == 0);
	CHECK(user(st, "grace", h, old, NULL, "cn=graceful,dc=example,dc=com") == 0);
	CHECK(user(st, "reset", h, young, "TRUE", "cn=strict,dc=example,dc=com") == 0);
	CHECK(user(st, "dflt", h, old, NULL, NULL) == 0);
	CHECK(user(st, "nopol", h, old, NULL, "cn=missing,dc=example,dc=com") == 0);
	char ch[256];   /* a slow scheme: the verdict travels in the job */
	CHECK(lfe_pw_hash("{CRYPT}", (const uint8_t *)"secret", 6, ch, sizeof(ch)) > 0);
	CHECK(user(st, "slowexp", ch, old, NULL, "cn=strict,dc=example,dc=com") == 0);
	CHECK(user(st, "slowgrace", ch, old, NULL, "cn=graceful,dc=example,dc=com") == 0);
	{
		struct lfe_store_reader *r = lfe_store_reader_new(st);
		struct lfe_bind_job job;
		const char *dn = "uid=slowexp,dc=example,dc=com";
		const char *dg = "uid=slowgrace,dc=example,dc=com";

		CHECK(lfe_store_verify_bind(r, dn, strlen(dn), (const uint8_t *)"secret", 6, 0,
					    &job) == -EAGAIN && job.pp.state == LFE_PP_EXPIRED);
		CHECK(lfe_bind_job_run(&job, (const uint8_t *)"secret", 6, 0) == -EKEYEXPIRED);
		CHECK(lfe_bind_job_run(&job, (const uint8_t *)"wrong", 5, 0) == -EACCES);
		lfe_bind_job_wipe(&job);
		CHECK(lfe_store_verify_bind(r, dg, strlen(dg), (const uint8_t *)"secret", 6, 0,
					    &job) == -EAGAIN && job.pp.state == LFE_PP_GRACE &&
		      job.pp.grace == 1 && job.pp_timed);
		CHECK(lfe_bind_job_run(&job, (const uint8_t *)"secret", 6, 0) == 0);
		lfe_bind_job_wipe(&job);
		lfe_store_reader_free(r);
	}

	for (int pass = 0; pass < 2; pass++) {
		CHECK(bind_pp(st, "plain", "secret", &v) == 0 && v.state == LFE_PP_OK);
		CHECK(bind_pp(st, "young", "secret", &v) == 0 && v.state == LFE_PP_OK);
		CHECK(bind_pp(st, "expired", "secret", &v) == -EACCES && v.state == LFE_PP_EXPIRED);
		/* A wrong password says nothing about the policy. */
		CHECK(bind_pp(st, "expired", "wrong", &v) == -EACCES && v.state == LFE_PP_OK);
		CHECK(bind_pp(st, "near", "secret", &v) == 0 && v.state == LFE_PP_WARN &&
		      v.seconds > 500 && v.seconds <= 600);
		CHECK(bind_pp(st, "grace", "secret", &v) == 0 && v.state == LFE_PP_GRACE &&
		      v.grace == 1);
		CHECK(bind_pp(st, "reset", "secret", &v) == 0 && v.state == LFE_PP_MUST_CHANGE);
		/* No default policy: an entry without pwdPolicySubentry, or one
		 * naming a policy that is not there, has none (as slapd). */
		CHECK(bind_pp(st, "dflt", "secret", &v) == 0 && v.state == LFE_PP_OK);
		CHECK(bind_pp(st, "nopol", "secret", &v) == 0 && v.state == LFE_PP_OK);
		/* a slow scheme run here (no job): the same answers */
		CHECK(bind_pp(st, "slowexp", "secret", &v) == -EACCES &&
		      v.state == LFE_PP_EXPIRED);
		CHECK(bind_pp(st, "slowexp", "wrong", &v) == -EACCES && v.state == LFE_PP_OK);
		CHECK(bind_pp(st, "slowgrace", "secret", &v) == 0 && v.state == LFE_PP_GRACE);
		/* Pass 2: as a format 2 store (binds through "entries"). */
		lfe_store_close(st);
		if (pass == 1)
			break;
		{
			MDB_env *env;
			MDB_txn *txn;
			MDB_dbi dbi;
			static const uint8_t two[4] = { 2, 0, 0, 0 };
			MDB_val k = { 6, (void *)"format" }, val = { 4, (void *)two };

			CHECK(mdb_env_create(&env) == 0 && mdb_env_set_maxdbs(env, 16) == 0 &&
			      mdb_env_open(env, path, 0, 0640) == 0);
			CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0 &&
			      mdb_dbi_open(txn, "meta", 0, &dbi) == 0 &&
			      mdb_put(txn, dbi, &k, &val, 0) == 0 && mdb_txn_commit(txn) == 0);
			mdb_env_close(env);
		}
		st = lfe_store_open(path, 0, 16u << 20, NULL, NULL);
		CHECK(st && lfe_store_info(st, &info) == 0 && info.format_version == 2 &&
		      !info.bind_index);
		if (!st)
			return;
	}
	st = lfe_store_open(path, 0, 16u << 20, NULL, NULL);
	CHECK(st && lfe_store_upgrade(st) == 0 && lfe_store_info(st, &info) == 0 &&
	      info.format_version == 3 && info.bind_index);
	/* The default policy (meta), for entries without pwdPolicySubentry. */
	CHECK(lfe_store_set_ppolicy_default(st, "cn=Strict,dc=example,dc=com") == 0);
	CHECK(bind_pp(st, "dflt", "secret", &v) == -EACCES && v.state == LFE_PP_EXPIRED);
	CHECK(bind_pp(st, "plain", "secret", &v) == 0 && v.state == LFE_PP_OK);
	CHECK(lfe_store_set_ppolicy_default(st, "not a dn") == -EINVAL);
	CHECK(lfe_store_set_ppolicy_default(st, "") == 0);
	CHECK(bind_pp(st, "dflt", "secret", &v) == 0 && v.state == LFE_PP_OK);
	lfe_store_close(st);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
		CHECK(system(cmd) == 0);
	}
}

int main(void)
{
	LDAP *ld = NULL;

	grace_table();
	store_binds();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
	acct_fields();
	policies();
	CHECK(ldap_initialize(&ld, "ldap://127.0.0.1:1") == LDAP_SUCCESS);
	if (ld) {
		encoding(ld);
		ldap_unbind_ext_s(ld, NULL, NULL);
	}
	printf("test_ppolicy: %zu cases, %zu policies, %zu encodings\n",
	       sizeof(cases) / sizeof(cases[0]), sizeof(pol_cases) / sizeof(pol_cases[0]),
	       sizeof(enc_cases) / sizeof(enc_cases[0]));
	return check_done();
}
