/* tests/backend/test_search.c — lfe_store_search over a real store: index
 * candidate choice, scopes, size limit, and the per-request budget
 * (candidates visited, and a deadline on the caller's clock, here a counter
 * so the test does not depend on speed). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/search.h"
#include "backend/store.h"
#include "berbuild.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
	fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); } } while (0)
#define CHECK_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { failures++; fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", \
	__FILE__, __LINE__, #a, a_, b_); } } while (0)

#define N_USERS 300u
#define SUFFIX "dc=example,dc=com"

static char root[] = "/tmp/lfe-test-search.XXXXXX";

static struct lfe_bytes S(const char *s)
{
	return (struct lfe_bytes){ (const uint8_t *)s, strlen(s) };
}

/* ---- BER filters, built by hand ---- */

static uint8_t fbuf[1u << 20];
/* ---- the search ---- */

struct result {
	uint32_t n;
	char last_dn[256];
	int stop_after;          /* emit fails after this many (0: never) */
};

static int emit(void *ctx, struct lfe_bytes dn, const struct lfe_ldap_attr *attrs, uint32_t n)
{
	struct result *r = ctx;
	bool has_uid = false;
	for (uint32_t i = 0; i < n; i++)
		has_uid |= attrs[i].type.len == 3 && memcmp(attrs[i].type.p, "uid", 3) == 0 &&
			   attrs[i].n_vals == 1;
	CHECK(has_uid);
	snprintf(r->last_dn, sizeof(r->last_dn), "%.*s", (int)dn.len, (const char *)dn.p);
	if (r->stop_after && r->n == (uint32_t)r->stop_after)
		return -ENOSPC;
	r->n++;
	return 0;
}

/* A clock that ticks once per reading. */
static uint64_t ticks(void *ctx)
{
	return ++*(uint64_t *)ctx;
}

struct q {
	const char *base;
	enum lfe_ldap_scope scope;
	int32_t size_limit;
	uint32_t max_candidates;
	uint64_t deadline;       /* 0: no clock */
	uint64_t max_work;       /* 0: the default */
};

static struct lfe_ldap_attr attrs[64];
static struct lfe_bytes vals[512];

static int search(struct lfe_store_reader *rd, const struct q *q, const struct bb *f,
		  struct result *res, struct lfe_search_stats *st, uint64_t *clock)
{
	struct lfe_search_req req = { .scope = q->scope, .size_limit = q->size_limit,
				      .filter = { f->b, f->n } };
	struct lfe_search_params p = {
		.base_ndn = q->base, .base_ndn_len = strlen(q->base),
		.suffix = SUFFIX, .suffix_len = strlen(SUFFIX),
		.req = &req, .max_candidates = q->max_candidates, .max_work = q->max_work,
		.clock = q->deadline ? ticks : NULL, .clock_ctx = clock, .deadline = q->deadline,
		.attrs = attrs, .attr_cap = 64, .vals = vals, .val_cap = 512,
	};
	return lfe_store_search(rd, &p, emit, res, st);
}

static int put(struct lfe_store *st, const char *dn, const char *uid, const char *oc)
{
	struct lfe_bytes ocv[2] = { S("top"), S(oc) }, u = S(uid), cn = S(uid);
	struct lfe_ldap_attr a[3] = {
		{ .type = S("objectClass"), .vals = ocv, .n_vals = 2 },
		{ .type = S("uid"), .vals = &u, .n_vals = 1 },
		{ .type = S("cn"), .vals = &cn, .n_vals = 1 },
	};
	return lfe_store_put(st, S(dn), a, 3, false);
}

int main(void)
{
	char path[300], dn[128], uid[32];
	struct bb f = { fbuf, 0 };
	struct result res;
	struct lfe_search_stats st;
	uint64_t clock = 0;

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/s", root);
	struct lfe_store *s = lfe_store_open(path, 0, 64u << 20, NULL, NULL);
	CHECK(s != NULL);
	if (!s)
		return 1;
	CHECK_EQ(lfe_store_init(s, SUFFIX), 0);
	/* ou=people holds the users; ou=people has a sub-OU with one more. No
	 * entry for the suffix itself: a search based there is still valid. */
	struct lfe_bytes ouv[2] = { S("top"), S("organizationalUnit") };
	struct lfe_ldap_attr oua = { .type = S("objectClass"), .vals = ouv, .n_vals = 2 };
	CHECK_EQ(lfe_store_put(s, S("ou=people," SUFFIX), &oua, 1, false), 0);
	CHECK_EQ(lfe_store_put(s, S("ou=sub,ou=people," SUFFIX), &oua, 1, false), 0);
	CHECK_EQ(lfe_store_batch_begin(s), 0);
	for (unsigned i = 0; i < N_USERS; i++) {
		snprintf(uid, sizeof(uid), "user%u", i);
		snprintf(dn, sizeof(dn), "uid=%s,ou=people," SUFFIX, uid);
		CHECK_EQ(put(s, dn, uid, "inetOrgPerson"), 0);
	}
	CHECK_EQ(put(s, "uid=deep,ou=sub,ou=people," SUFFIX, "deep", "inetOrgPerson"), 0);
	CHECK_EQ(lfe_store_batch_commit(s), 0);
	struct lfe_store_reader *rd = lfe_store_reader_new(s);
	CHECK(rd != NULL);
	if (!rd)
		return 1;

	/* One user by uid: the uid index gives one candidate. */
	f.n = 0;
	bb_eq(&f, "uid", "user7");
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB }, &f, &res, &st, &clock),
		 LFE_RC_SUCCESS);
	CHECK_EQ(res.n, 1);
	CHECK_EQ(st.visited, 1);
	CHECK(strcmp(res.last_dn, "uid=user7,ou=people," SUFFIX) == 0);
	/* Not under the base; base that does not exist. */
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = "ou=sub,ou=people," SUFFIX, .scope = LFE_SCOPE_SUB }, &f, &res, &st,
			&clock), LFE_RC_SUCCESS);
	CHECK_EQ(res.n, 0);
	CHECK_EQ(search(rd, &(struct q){ .base = "ou=none," SUFFIX, .scope = LFE_SCOPE_SUB }, &f, &res, &st, &clock),
		 LFE_RC_NO_SUCH_OBJECT);
	/* Scopes over the objectClass index (every user is a candidate). */
	f.n = 0;
	bb_eq(&f, "objectClass", "inetOrgPerson");
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = "ou=people," SUFFIX, .scope = LFE_SCOPE_ONE }, &f, &res, &st, &clock),
		 LFE_RC_SUCCESS);
	CHECK_EQ(res.n, N_USERS);                /* not uid=deep: a grandchild */
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = "ou=people," SUFFIX, .scope = LFE_SCOPE_SUB }, &f, &res, &st, &clock),
		 LFE_RC_SUCCESS);
	CHECK_EQ(res.n, N_USERS + 1);
	CHECK_EQ(st.visited, N_USERS + 1);
	CHECK_EQ(st.limited, 0);
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = "uid=user3,ou=people," SUFFIX, .scope = LFE_SCOPE_BASE }, &f, &res,
			&st, &clock), LFE_RC_SUCCESS);
	CHECK_EQ(res.n, 1);
	/* Size limit. */
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .size_limit = 5 }, &f, &res, &st, &clock),
		 LFE_RC_SIZE_LIMIT_EXCEEDED);
	CHECK_EQ(res.n, 5);
	/* The emitter stops the search (output full). */
	res = (struct result){ .stop_after = 3 };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB }, &f, &res, &st, &clock),
		 LFE_RC_ADMIN_LIMIT_EXCEEDED);
	CHECK_EQ(res.n, 3);

	/* Budget: candidates. */
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .max_candidates = 50 }, &f, &res, &st, &clock),
		 LFE_RC_ADMIN_LIMIT_EXCEEDED);
	CHECK_EQ(st.visited, 50);
	CHECK_EQ(res.n, 50);
	CHECK_EQ(st.limited, 1);
	/* Budget: the caller's clock passes the deadline after 20 readings. */
	clock = 0;
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .deadline = 20 }, &f, &res, &st, &clock),
		 LFE_RC_ADMIN_LIMIT_EXCEEDED);
	CHECK_EQ(st.limited, 1);
	CHECK(st.visited >= 1 && st.visited <= 21);
	CHECK_EQ(res.n, st.visited);
	/* A deadline already past still lets the first candidate through
	 * (every request makes progress), then stops. */
	clock = 1000;
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .deadline = 1 }, &f, &res, &st, &clock),
		 LFE_RC_ADMIN_LIMIT_EXCEEDED);
	CHECK_EQ(st.visited, 1);
	/* Budget: filter work, with no clock at all. One candidate costs a
	 * node and a value compare or so: 40 units end the search early. */
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .max_work = 40 }, &f, &res, &st, &clock),
		 LFE_RC_ADMIN_LIMIT_EXCEEDED);
	CHECK(st.visited >= 1 && st.visited < 40);
	CHECK_EQ(res.n + 1, st.visited);
	/* The default candidate cap applies when none is given. */
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB }, &f, &res, &st, &clock),
		 LFE_RC_SUCCESS);

	/* The costly search of the stall test: an indexed candidate set and a
	 * substring filter of many pieces that no entry matches. It must end
	 * on its budget, having visited only what the budget allows. */
	f.n = 0;
	size_t and_at = f.n;
	bb_eq(&f, "objectClass", "inetOrgPerson");
	bb_substr(&f, "cn", "zz", 2000);
	bb_wrap(&f, and_at, 0xa0);
	clock = 0;
	res = (struct result){ 0 };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .deadline = 10 }, &f, &res, &st, &clock),
		 LFE_RC_ADMIN_LIMIT_EXCEEDED);
	CHECK(st.visited <= 11 && res.n == 0);

	/* No index serves the filter: refused, nothing visited. */
	f.n = 0;
	bb_eq(&f, "sn", "x");
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB }, &f, &res, &st, &clock),
		 LFE_RC_UNWILLING_TO_PERFORM);
	CHECK_EQ(st.unindexed, 1);
	CHECK_EQ(st.visited, 0);

	/* Secrets at the store's search, without the session's re-check
	 * (issue 32): items on userPassword/authPassword are Undefined, so
	 * (userPassword=*) finds nothing though the entry has one, NOT does
	 * not turn it TRUE, and an OR still finds the entry by its uid. */
	{
		struct lfe_bytes ocv[2] = { S("top"), S("inetOrgPerson") }, u = S("keeper"),
				 pw = S("{SSHA}aGFzaGhhc2hoYXNoaGFzaA=="), apw = S("MD5$Zm9v$YmFy");
		struct lfe_ldap_attr a[4] = {
			{ .type = S("objectClass"), .vals = ocv, .n_vals = 2 },
			{ .type = S("uid"), .vals = &u, .n_vals = 1 },
			{ .type = S("userPassword"), .vals = &pw, .n_vals = 1 },
			{ .type = S("authPassword"), .vals = &apw, .n_vals = 1 },
		};
		CHECK_EQ(lfe_store_put(s, S("uid=keeper,ou=people," SUFFIX), a, 4, false), 0);
		CHECK_EQ(lfe_store_reader_renew(rd), 0);
		static const struct { const char *attr, *val; uint8_t op; uint32_t want; } sec[] = {
			{ "userPassword", NULL, 0xa0, 0 },                  /* (&(uid=)(x=*)) */
			{ "userPassword", "{SSHA}aGFzaGhhc2hoYXNoaGFzaA==", 0xa0, 0 },
			{ "USERPASSWORD;x-opt", NULL, 0xa0, 0 },
			{ "2.5.4.35", NULL, 0xa0, 0 },
			{ "authPassword", NULL, 0xa0, 0 },
			{ "userPassword", "nomatch", 0xa2, 0 },             /* (&(uid=)(!(x=v))) */
			{ "userPassword", NULL, 0xa1, 1 },          /* (&(uid=)(|(uid=)(x=*))) */
		};
		for (size_t i = 0; i < sizeof sec / sizeof sec[0]; i++) {
			size_t at;
			f.n = 0;
			at = f.n;
			bb_eq(&f, "uid", "keeper");
			size_t item = f.n;
			if (sec[i].op == 0xa1)
				bb_eq(&f, "uid", "keeper");
			if (sec[i].val)
				bb_eq(&f, sec[i].attr, sec[i].val);
			else
				bb_octets(&f, 0x87, sec[i].attr);
			if (sec[i].op != 0xa0)
				bb_wrap(&f, item, sec[i].op);
			bb_wrap(&f, at, 0xa0);
			res = (struct result){ 0 };
			CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB }, &f, &res,
					&st, &clock), LFE_RC_SUCCESS);
			if (res.n != sec[i].want) {
				failures++;
				fprintf(stderr, "secret case %zu (%s): %u entries, want %u\n", i,
					sec[i].attr, res.n, sec[i].want);
			}
		}
	}

	lfe_store_reader_free(rd);
	lfe_store_close(s);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
