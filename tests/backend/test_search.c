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
#include "tests/backend/berbuild.h"
#include "tests/check.h"

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
	bool any;                /* entries without a uid too (groups) */
	bool full_every;         /* emit says "no room" for every other entry */
	bool full_now;
	uint32_t seen[N_USERS + 2];   /* how often each userN came (N_USERS: other) */
};

static int emit(void *ctx, const struct lfe_ldap_entry *e)
{
	struct result *r = ctx;
	bool has_uid = false;
	struct lfe_bytes type, list;
	uint32_t n_vals;
	size_t cur = 0;
	while (e->next_attr(e, &cur, &type, &n_vals, &list) == 1)
		has_uid |= type.len == 3 && memcmp(type.p, "uid", 3) == 0 && n_vals == 1;
	CHECK(has_uid || r->any);
	struct lfe_bytes dn = e->dn;
	if (r->full_every && (r->full_now = !r->full_now))
		return -EAGAIN;   /* no room now: the same entry must come again */
	snprintf(r->last_dn, sizeof(r->last_dn), "%.*s", (int)dn.len, (const char *)dn.p);
	unsigned k;
	if (sscanf(r->last_dn, "uid=user%u,", &k) == 1 && k < N_USERS)
		r->seen[k]++;
	else
		r->seen[N_USERS]++;
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
	uint64_t time_limit;
	struct lfe_search_cursor *cursor;
};


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
		.time_limit = q->time_limit, .cursor = q->cursor,
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

/* A posixGroup with n memberUid values user0..user{n-1}. */
static int put_group(struct lfe_store *st, const char *dn, unsigned n)
{
	static char names[1000][12];
	static struct lfe_bytes mv[1000];
	struct lfe_bytes ocv[2] = { S("top"), S("posixGroup") }, cn = S("big"), gid = S("20020");
	for (unsigned i = 0; i < n; i++) {
		snprintf(names[i], sizeof names[i], "user%u", i);
		mv[i] = S(names[i]);
	}
	struct lfe_ldap_attr a[4] = {
		{ .type = S("objectClass"), .vals = ocv, .n_vals = 2 },
		{ .type = S("cn"), .vals = &cn, .n_vals = 1 },
		{ .type = S("gidNumber"), .vals = &gid, .n_vals = 1 },
		{ .type = S("memberUid"), .vals = mv, .n_vals = n },
	};
	return lfe_store_put(st, S(dn), a, 4, false);
}

/* (&(objectClass=posixGroup)(memberUid=U)): SSSD's initgroups, short. */
static void group_filter(struct bb *f, const char *uid)
{
	f->n = 0;
	bb_eq(f, "objectClass", "posixGroup");
	bb_eq(f, "memberUid", uid);
	bb_wrap(f, 0, 0xa0);
}

/* Issue 25: every value compared (the 1000th member too), a search that
 * streams across calls returns every entry exactly once, and each limit
 * is said with its own code. */
static void test_whole(struct lfe_store_reader *rd)
{
	static uint8_t gb[4096];
	struct bb f = { gb, 0 };
	struct lfe_search_stats st;
	static struct result res;
	uint64_t clock = 0;
	static const struct { const char *uid; uint32_t want; } members[] = {
		{ "user0", 1 }, { "user5", 1 }, { "user33", 1 }, { "user511", 1 },
		{ "user512", 1 }, { "user999", 1 }, { "user1000", 0 }, { "nobody", 0 },
	};
	for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
		group_filter(&f, members[i].uid);
		res = (struct result){ .any = true };
		CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB }, &f, &res, &st,
				&clock), LFE_RC_SUCCESS);
		if (res.n != members[i].want)
			fprintf(stderr, "member %s\n", members[i].uid);
		CHECK_EQ(res.n, members[i].want);
	}
	/* A work budget too small for the group's 1000 values: said (11),
	 * never a success without the group. */
	group_filter(&f, "user999");
	res = (struct result){ .any = true };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .max_work = 500 }, &f,
			&res, &st, &clock), LFE_RC_ADMIN_LIMIT_EXCEEDED);
	CHECK_EQ(res.n, 0);

	/* Streaming: every user through a cursor, with a slice of ~3
	 * candidates a call and no room for every other entry. */
	f.n = 0;
	bb_eq(&f, "objectClass", "inetOrgPerson");
	static struct lfe_search_cursor cur;
	memset(&cur, 0, sizeof cur);
	res = (struct result){ .full_every = true };
	unsigned calls = 0;
	int rc;
	do {
		clock = 0;
		rc = search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .deadline = 4,
					     .cursor = &cur }, &f, &res, &st, &clock);
		calls++;
	} while (rc == LFE_SEARCH_YIELD && calls < 10000);
	CHECK_EQ(rc, LFE_RC_SUCCESS);
	CHECK_EQ(res.n, N_USERS + 1);
	CHECK(calls > N_USERS / 3);
	unsigned twice = 0, missing = 0;
	for (unsigned i = 0; i < N_USERS; i++) {
		twice += res.seen[i] > 1;
		missing += res.seen[i] == 0;
	}
	CHECK_EQ(twice, 0);
	CHECK_EQ(missing, 0);
	CHECK_EQ(res.seen[N_USERS], 1);   /* uid=deep */

	/* The size limit counts over all the calls: 4 with 150 entries. */
	memset(&cur, 0, sizeof cur);
	res = (struct result){ 0 };
	calls = 0;
	do {
		clock = 0;
		rc = search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .deadline = 4,
					     .size_limit = 150, .cursor = &cur }, &f, &res, &st, &clock);
	} while (rc == LFE_SEARCH_YIELD && ++calls < 10000);
	CHECK_EQ(rc, LFE_RC_SIZE_LIMIT_EXCEEDED);
	CHECK_EQ(res.n, 150);
	/* The candidate cap too: 11 after 100, over all the calls. */
	memset(&cur, 0, sizeof cur);
	res = (struct result){ 0 };
	calls = 0;
	do {
		clock = 0;
		rc = search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .deadline = 4,
					     .max_candidates = 100, .cursor = &cur }, &f, &res, &st,
			    &clock);
	} while (rc == LFE_SEARCH_YIELD && ++calls < 10000);
	CHECK_EQ(rc, LFE_RC_ADMIN_LIMIT_EXCEEDED);
	CHECK_EQ(res.n, 100);
	/* The client's time limit, from the first call: 3. */
	memset(&cur, 0, sizeof cur);
	res = (struct result){ 0 };
	clock = 0;
	calls = 0;
	do {
		rc = search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB,
					     .deadline = clock + 4, .time_limit = 50, .cursor = &cur },
			    &f, &res, &st, &clock);
	} while (rc == LFE_SEARCH_YIELD && ++calls < 10000);
	CHECK_EQ(rc, LFE_RC_TIME_LIMIT_EXCEEDED);
	CHECK(res.n > 0 && res.n < N_USERS);
	/* One candidate a whole call's work cannot pay for: 11, not a loop. */
	group_filter(&f, "user999");
	memset(&cur, 0, sizeof cur);
	res = (struct result){ .any = true };
	CHECK_EQ(search(rd, &(struct q){ .base = SUFFIX, .scope = LFE_SCOPE_SUB, .max_work = 500,
					 .cursor = &cur }, &f, &res, &st, &clock),
		 LFE_RC_ADMIN_LIMIT_EXCEEDED);
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
	CHECK_EQ(put_group(s, "cn=big," SUFFIX, 1000), 0);
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
	CHECK_EQ(res.n, st.visited);   /* visited: candidates finished */
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

	test_whole(rd);   /* before the secret case adds its entry: it counts them all */
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
				check_failures++;
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
	return check_done();
}
