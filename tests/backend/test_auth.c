/* tests/backend/test_auth.c — the bind policy (backend/auth.h) case by
 * case, against a real LMDB store, a real throttle and a real credential
 * cache: throttled, cached, inline success and wrong password, offloaded
 * (the submit hook called; then done with OK or INVALID), a full offload
 * (busy), locked, expired, grace logins, the policy's response control,
 * failures recorded into a penalty, and cache inserts refused after a
 * store write and on a policy state. The offload hook runs the job here
 * (what a verifier thread does: lfe_bind_job_run). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/auth.h"
#include "backend/pwscheme.h"
#include "backend/store.h"
#include "tests/check.h"

static char root[] = "/tmp/lfe-test-auth.XXXXXX";
static const uint8_t cc_secret[LFE_CREDCACHE_SECRET] = "0123456789abcdef0123456789abcdef";
static const uint8_t thr_secret[16] = "fedcba9876543210";

#define SFX ",dc=example,dc=com"
#define SRC 0x0a000002u   /* 10.0.0.2 */
#define FAILS 3u          /* throttle: failures of a (source, DN) pair */

static struct lfe_bytes S(const char *s)
{
	return (struct lfe_bytes){ (const uint8_t *)s, strlen(s) };
}

static void gentime(int64_t t, char *out, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, cap, "%Y%m%d%H%M%SZ", &tm);
}

/* An entry of (type, value) pairs, NULL-terminated; one value each. */
static int put(struct lfe_store *st, const char *dn, const char *const *tv)
{
	struct lfe_ldap_attr a[12];
	struct lfe_bytes v[12];
	size_t n = 0;
	for (; tv[2 * n] && n < 12; n++) {
		v[n] = S(tv[2 * n + 1]);
		a[n] = (struct lfe_ldap_attr){ .type = S(tv[2 * n]), .vals = &v[n], .n_vals = 1 };
	}
	return lfe_store_put(st, S(dn), a, n, true);
}

/* uid=<uid> with password pw hashed in scheme, and up to three more
 * (type, value) pairs. */
static int put_user(struct lfe_store *st, const char *uid, const char *scheme, const char *pw,
		    const char *t1, const char *v1, const char *t2, const char *v2)
{
	char dn[128], h[512];
	ssize_t n = lfe_pw_hash(scheme, (const uint8_t *)pw, strlen(pw), h, sizeof(h));
	if (n <= 0)
		return -EIO;
	snprintf(dn, sizeof(dn), "uid=%s" SFX, uid);
	const char *tv[] = { "objectClass", "person", "uid", uid, "userPassword", h, t1, v1, t2, v2, NULL };
	return put(st, dn, tv);
}

/* ---- the caller the module sees: hooks, counters, one connection ---- */

struct harness {
	struct lfe_auth a;
	struct lfe_auth_stats st;
	struct lfe_store_reader *rd;
	struct lfe_throttle *thr;
	struct lfe_credcache *cc;
	struct lfe_pp_grace grace;
	struct lfe_auth_conn conn;
	uint64_t now_us;
	/* hooks */
	int submit_rc;              /* what submit answers (0: queued) */
	unsigned submits, inline_marks, cache_marks;
	int job_rc;                 /* the submitted job run here */
	struct lfe_pp_verdict job_pp;
	bool job_pp_timed;
	uint64_t token;
};

static int h_submit(void *ctx, const struct lfe_auth_req *r, const struct lfe_bind_job *job)
{
	struct harness *h = ctx;
	h->submits++;
	h->token = r->token;
	if (h->submit_rc < 0)
		return h->submit_rc;
	/* What the verifier does with it, on its thread. */
	h->job_rc = lfe_bind_job_run(job, r->pw, r->pw_len, 0);
	h->job_pp = job->pp;
	h->job_pp_timed = job->pp_timed;
	return 0;
}

static void h_verified(void *ctx, enum lfe_auth_path path)
{
	struct harness *h = ctx;
	if (path == LFE_AUTH_PATH_CACHE)
		h->cache_marks++;
	else
		h->inline_marks++;
}

static void h_init(struct harness *h, struct lfe_store *st, bool throttle, bool cache)
{
	memset(h, 0, sizeof(*h));
	h->rd = lfe_store_reader_new(st);
	CHECK(h->rd != NULL);
	if (throttle) {
		struct lfe_throttle_params tp = { .failures = { [LFE_THR_SRC] = 0, [LFE_THR_PAIR] = FAILS,
								[LFE_THR_DN] = 0 },
						  .window_ms = 60000, .penalty_ms = 1000, .secret = thr_secret };
		int rc = 0;
		h->thr = lfe_throttle_new(&tp, &rc);
		CHECK(h->thr != NULL, "throttle: %d", rc);
	}
	if (cache) {
		int rc = 0;
		h->cc = lfe_credcache_new(1024, cc_secret, &rc);
		CHECK(h->cc != NULL, "credcache: %d", rc);
	}
	CHECK_EQ(lfe_pp_grace_init(&h->grace, 64), 0);
	const struct lfe_auth_hooks hooks = { .submit = h_submit, .verified = h_verified, .ctx = h };
	lfe_auth_init(&h->a, h->rd, h->thr, h->cc, &h->grace, 0, &hooks, &h->st);
	h->now_us = 1000000;
}

static void h_fini(struct harness *h)
{
	lfe_pp_grace_fini(&h->grace);
	lfe_credcache_free(h->cc);
	lfe_throttle_free(h->thr);
	lfe_store_reader_free(h->rd);
}

/* One bind of uid with pw from SRC, with the connection's slot. */
static enum lfe_be_verdict bind(struct harness *h, const char *uid, const char *pw, unsigned *ev)
{
	char dn[128];
	snprintf(dn, sizeof(dn), "uid=%s" SFX, uid);
	const struct lfe_auth_req r = {
		.ndn = dn, .ndn_len = strlen(dn), .dn = (const uint8_t *)dn, .dn_len = strlen(dn),
		.pw = (const uint8_t *)pw, .pw_len = strlen(pw), .src = SRC, .token = 42,
		.now_us = h->now_us, .now_s = time(NULL), .conn = &h->conn,
	};
	unsigned e;
	return lfe_auth_bind(&h->a, &r, ev ? ev : &e);
}

/* The offloaded bind's verdict back (what lfe_glue_bind_done does):
 * the job's verdict, then the session bound (OK). */
static enum lfe_be_verdict done(struct harness *h, const char *uid, enum lfe_be_verdict v, unsigned *ev)
{
	char dn[128];
	unsigned e;
	snprintf(dn, sizeof(dn), "uid=%s" SFX, uid);
	/* The verifier passes a refused password's policy verdict as OK. */
	struct lfe_pp_verdict pp = h->job_pp;
	if (v != LFE_BE_OK && h->job_rc != -EKEYEXPIRED)
		pp = (struct lfe_pp_verdict){ LFE_PP_OK, -1, -1, 0 };
	v = lfe_auth_done(&h->a, &h->conn, v, &pp, h->job_pp_timed, dn, strlen(dn), h->now_us, ev ? ev : &e);
	if (v == LFE_BE_OK)
		lfe_auth_done_bound(&h->a, &h->conn, dn, strlen(dn), time(NULL));
	return v;
}

static uint64_t records_read(const struct harness *h)
{
	return lfe_store_reader_stats(h->rd)->records_read;
}

/* ---- cases ---- */

static void test_inline(struct lfe_store *st)
{
	struct harness h;
	h_init(&h, st, true, true);
	/* Inline success: verified on the core, inserted into the cache. */
	CHECK_EQ(bind(&h, "alice", "alice-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.st.binds_ok, 1);
	CHECK_EQ(h.st.bind_cache_misses, 1);
	CHECK_EQ(h.inline_marks, 1);
	CHECK_EQ(h.submits, 0);
	CHECK_EQ(lfe_credcache_stats(h.cc)->inserts, 1);
	/* Cached: the same bind again is answered without the store's bind. */
	uint64_t rr = records_read(&h);
	CHECK_EQ(bind(&h, "alice", "alice-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.st.bind_cache_hits, 1);
	CHECK_EQ(h.st.binds_ok, 2);
	CHECK_EQ(h.cache_marks, 1);
	CHECK_EQ(h.inline_marks, 1);
	CHECK_EQ(records_read(&h), rr);
	/* Peeked: the caller's key is taken as is. */
	char dn[] = "uid=alice" SFX;
	struct lfe_credcache_key k;
	lfe_credcache_key(h.cc, dn, strlen(dn), (const uint8_t *)"alice-pw", 8, 0, &k);
	const struct lfe_auth_req r = {
		.ndn = dn, .ndn_len = strlen(dn), .dn = (const uint8_t *)dn, .dn_len = strlen(dn),
		.pw = (const uint8_t *)"alice-pw", .pw_len = 8, .src = SRC, .now_us = h.now_us,
		.now_s = time(NULL), .peeked = &k, .conn = &h.conn,
	};
	unsigned ev;
	CHECK_EQ(lfe_auth_bind(&h.a, &r, &ev), LFE_BE_OK);
	CHECK_EQ(h.st.bind_cache_peeked, 1);
	CHECK_EQ(h.st.bind_cache_hits, 2);
	/* Inline wrong password: INVALID, counted failed, recorded (one
	 * failure of the pair, no penalty yet), never cached. */
	CHECK_EQ(bind(&h, "alice", "wrong", &ev), LFE_BE_INVALID);
	CHECK_EQ(ev, 0);
	CHECK_EQ(h.st.binds_failed, 1);
	struct lfe_throttle_key tk;
	lfe_throttle_key(h.thr, dn, strlen(dn), SRC, &tk);
	CHECK_EQ(lfe_throttle_estimate(h.thr, &tk, LFE_THR_PAIR, h.now_us), 1);
	CHECK_EQ(lfe_credcache_stats(h.cc)->inserts, 1);
	/* An unknown DN: the same answer, on the path of the real entry its
	 * lookup lands on (inline, or a job that fails if that entry's
	 * scheme is slow: the keyed bind index picks it). */
	enum lfe_be_verdict v = bind(&h, "nobody", "alice-pw", NULL);
	if (v == LFE_BE_PENDING) {
		CHECK_EQ(h.job_rc, -EACCES);
		v = done(&h, "nobody", LFE_BE_INVALID, NULL);
	}
	CHECK_EQ(v, LFE_BE_INVALID);
	CHECK_EQ(h.st.binds_failed, 2);
	CHECK_EQ(h.st.binds_throttled, 0);
	h_fini(&h);
}

static void test_throttle(struct lfe_store *st)
{
	struct harness h;
	h_init(&h, st, true, true);
	/* Failures recorded: the FAILS-th starts the pair's penalty. */
	unsigned ev = 0;
	for (unsigned i = 0; i < FAILS; i++) {
		CHECK_EQ(bind(&h, "bob", "wrong", &ev), LFE_BE_INVALID);
		CHECK_EQ(ev, i + 1 == FAILS ? LFE_AUTH_EV_PENALTY : 0u);
	}
	CHECK_EQ(h.st.binds_failed, FAILS);
	CHECK_EQ(h.st.throttle_penalties, 1);
	/* Throttled: even the right password is answered 49 unverified,
	 * before the cache and the store (not counted failed). */
	uint64_t rr = records_read(&h);
	CHECK_EQ(bind(&h, "bob", "bob-pw", NULL), LFE_BE_INVALID);
	CHECK_EQ(h.st.binds_throttled, 1);
	CHECK_EQ(h.st.throttled_dn, 1);
	CHECK_EQ(h.st.throttled_src, 0);
	CHECK_EQ(h.st.binds_failed, FAILS);
	CHECK_EQ(h.st.bind_cache_misses, FAILS);
	CHECK_EQ(records_read(&h), rr);
	CHECK_EQ(h.inline_marks, FAILS);
	/* Another DN from the same source is not held (pair key only). */
	CHECK_EQ(bind(&h, "alice", "alice-pw", NULL), LFE_BE_OK);
	/* A cached credential is throttled too: the throttle comes first. */
	h.now_us += 2000000;   /* past the penalty */
	CHECK_EQ(bind(&h, "bob", "bob-pw", NULL), LFE_BE_OK);
	CHECK_EQ(bind(&h, "bob", "bob-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.st.bind_cache_hits, 1);
	for (unsigned i = 0; i < FAILS; i++)
		bind(&h, "bob", "wrong", NULL);
	CHECK_EQ(h.st.throttle_penalties, 2);
	uint64_t hits = h.st.bind_cache_hits, throttled = h.st.binds_throttled;
	CHECK_EQ(bind(&h, "bob", "bob-pw", NULL), LFE_BE_INVALID);
	CHECK_EQ(h.st.bind_cache_hits, hits);
	CHECK_EQ(h.st.binds_throttled, throttled + 1);
	h_fini(&h);
}

static void test_offload(struct lfe_store *st)
{
	struct harness h;
	h_init(&h, st, true, true);
	/* Offloaded: the hook gets the job; PENDING until done. */
	CHECK_EQ(bind(&h, "slow", "slow-pw", NULL), LFE_BE_PENDING);
	CHECK_EQ(h.submits, 1);
	CHECK_EQ(h.token, 42);
	CHECK_EQ(h.inline_marks, 0);
	CHECK_EQ(h.st.binds_offloaded, 1);
	CHECK_EQ(h.st.binds_ok + h.st.binds_failed, 0);
	CHECK_EQ(h.job_rc, 0);
	CHECK_EQ(done(&h, "slow", LFE_BE_OK, NULL), LFE_BE_OK);
	CHECK_EQ(h.st.binds_ok, 1);
	CHECK_EQ(lfe_credcache_stats(h.cc)->inserts, 1);
	/* ...and the next bind is a cache hit, no hook. */
	CHECK_EQ(bind(&h, "slow", "slow-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.submits, 1);
	CHECK_EQ(h.st.bind_cache_hits, 1);
	/* Done with INVALID: counted failed, recorded in the throttle with
	 * the keys kept at submit; nothing cached. */
	CHECK_EQ(bind(&h, "slow", "wrong", NULL), LFE_BE_PENDING);
	CHECK_EQ(h.job_rc, -EACCES);
	CHECK_EQ(done(&h, "slow", LFE_BE_INVALID, NULL), LFE_BE_INVALID);
	CHECK_EQ(h.st.binds_failed, 1);
	char dn[] = "uid=slow" SFX;
	struct lfe_throttle_key tk;
	lfe_throttle_key(h.thr, dn, strlen(dn), SRC, &tk);
	CHECK_EQ(lfe_throttle_estimate(h.thr, &tk, LFE_THR_PAIR, h.now_us), 1);
	CHECK_EQ(lfe_credcache_stats(h.cc)->inserts, 1);
	/* The connection went away: counted, not recorded. */
	unsigned ev;
	CHECK_EQ(bind(&h, "slow", "wrong", NULL), LFE_BE_PENDING);
	CHECK_EQ(lfe_auth_done(&h.a, NULL, LFE_BE_INVALID, &h.job_pp, false, NULL, 0, h.now_us, &ev),
		 LFE_BE_INVALID);
	CHECK_EQ(h.st.binds_failed, 2);
	CHECK_EQ(lfe_throttle_estimate(h.thr, &tk, LFE_THR_PAIR, h.now_us), 1);
	/* The offload full: busy, an event to log, nothing recorded. */
	h.submit_rc = -ENOBUFS;
	CHECK_EQ(bind(&h, "slow", "x", &ev), LFE_BE_BUSY);
	CHECK_EQ(ev, LFE_AUTH_EV_BUSY);
	CHECK_EQ(h.st.binds_busy, 1);
	CHECK_EQ(lfe_throttle_estimate(h.thr, &tk, LFE_THR_PAIR, h.now_us), 1);
	/* A password too long for the offload: invalid, recorded. */
	h.submit_rc = -E2BIG;
	CHECK_EQ(bind(&h, "slow", "x", NULL), LFE_BE_INVALID);
	CHECK_EQ(h.st.binds_failed, 3);
	CHECK_EQ(lfe_throttle_estimate(h.thr, &tk, LFE_THR_PAIR, h.now_us), 2);
	/* No connection to answer later: invalid here, no hook. */
	h.submit_rc = 0;
	unsigned subs = h.submits;
	const struct lfe_auth_req r = {
		.ndn = dn, .ndn_len = strlen(dn), .dn = (const uint8_t *)dn, .dn_len = strlen(dn),
		.pw = (const uint8_t *)"slow-pw2", .pw_len = 8, .src = SRC, .now_us = h.now_us,
		.now_s = time(NULL), .conn = NULL,
	};
	CHECK_EQ(lfe_auth_bind(&h.a, &r, &ev), LFE_BE_INVALID);
	CHECK_EQ(h.submits, subs);
	h_fini(&h);
}

/* Cache insert refused after a store write: the offloaded bind was read in
 * one snapshot, a write commits before its verdict comes back. */
static void test_insert_after_write(struct lfe_store *st)
{
	struct harness h;
	h_init(&h, st, false, true);
	CHECK_EQ(bind(&h, "slow", "slow-pw", NULL), LFE_BE_PENDING);
	CHECK_EQ(put_user(st, "other", "{SSHA}", "other-pw", NULL, NULL, NULL, NULL), 0);
	CHECK_EQ(lfe_store_reader_renew(h.rd), 0);
	CHECK_EQ(done(&h, "slow", LFE_BE_OK, NULL), LFE_BE_OK);
	CHECK_EQ(h.st.binds_ok, 1);
	CHECK_EQ(lfe_credcache_stats(h.cc)->inserts, 0);
	CHECK_EQ(bind(&h, "slow", "slow-pw", NULL), LFE_BE_PENDING);   /* not cached */
	CHECK_EQ(h.st.bind_cache_hits, 0);
	/* Without a write in between the same verdict is cached. */
	CHECK_EQ(done(&h, "slow", LFE_BE_OK, NULL), LFE_BE_OK);
	CHECK_EQ(lfe_credcache_stats(h.cc)->inserts, 1);
	CHECK_EQ(bind(&h, "slow", "slow-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.st.bind_cache_hits, 1);
	h_fini(&h);
}

/* Locked, expired, grace, warning, must change: the verdicts, the
 * response control, and never a cache entry. */
static void test_policy(struct lfe_store *st)
{
	struct harness h;
	uint8_t ctl[64];
	bool must = false;
	h_init(&h, st, true, true);
	/* Locked (pwdAccountLockedTime): the right password fails. */
	CHECK_EQ(bind(&h, "locked", "locked-pw", NULL), LFE_BE_INVALID);
	CHECK_EQ(h.st.binds_failed, 1);
	/* Expired, no grace: 49 with passwordExpired in the control. */
	CHECK_EQ(bind(&h, "expired", "expired-pw", NULL), LFE_BE_INVALID);
	CHECK_EQ(h.a.pp.state, LFE_PP_EXPIRED);
	CHECK(lfe_auth_controls(&h.a, true, ctl, sizeof(ctl), &must) > 0);
	CHECK_EQ(lfe_auth_controls(&h.a, false, ctl, sizeof(ctl), &must), 0);
	/* Warning: success with timeBeforeExpiration; timed, not cached. */
	CHECK_EQ(bind(&h, "warn", "warn-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.a.pp.state, LFE_PP_WARN);
	CHECK(h.a.pp_timed);
	CHECK(h.a.pp.seconds > 0 && h.a.pp.seconds <= 1200);
	CHECK(lfe_auth_controls(&h.a, true, ctl, sizeof(ctl), &must) > 0);
	CHECK(!must);
	/* Must change: success, changeAfterReset; not cached. */
	CHECK_EQ(bind(&h, "reset", "reset-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.a.pp.state, LFE_PP_MUST_CHANGE);
	CHECK(lfe_auth_controls(&h.a, true, ctl, sizeof(ctl), &must) > 0);
	CHECK(must);
	CHECK_EQ(bind(&h, "reset", "reset-pw", NULL), LFE_BE_OK);   /* not from the cache */
	CHECK_EQ(h.a.pp.state, LFE_PP_MUST_CHANGE);
	CHECK_EQ(h.st.bind_cache_hits, 0);
	/* Grace logins: two, then expired; none cached. */
	CHECK_EQ(bind(&h, "grace", "grace-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.a.pp.state, LFE_PP_GRACE);
	CHECK_EQ(h.a.pp.grace, 1);
	CHECK_EQ(bind(&h, "grace", "grace-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.a.pp.grace, 0);
	CHECK_EQ(bind(&h, "grace", "grace-pw", NULL), LFE_BE_INVALID);
	CHECK_EQ(h.a.pp.state, LFE_PP_EXPIRED);
	CHECK_EQ(lfe_credcache_stats(h.cc)->inserts, 0);
	CHECK_EQ(h.st.bind_cache_hits, 0);
	/* Then a plain bind answers the default control again. */
	CHECK_EQ(bind(&h, "alice", "alice-pw", NULL), LFE_BE_OK);
	CHECK_EQ(h.a.pp.state, LFE_PP_OK);
	CHECK(!h.a.pp_timed);
	CHECK_EQ(lfe_credcache_stats(h.cc)->inserts, 1);
	/* Offloaded grace login: spent at done, not cached; the last one
	 * left turns the verdict INVALID there. */
	CHECK_EQ(bind(&h, "slowgrace", "slowgrace-pw", NULL), LFE_BE_PENDING);
	CHECK_EQ(h.job_pp.state, LFE_PP_GRACE);
	CHECK_EQ(done(&h, "slowgrace", LFE_BE_OK, NULL), LFE_BE_OK);
	CHECK_EQ(h.a.pp.state, LFE_PP_GRACE);
	CHECK_EQ(h.a.pp.grace, 1);
	CHECK_EQ(bind(&h, "slowgrace", "slowgrace-pw", NULL), LFE_BE_PENDING);
	CHECK_EQ(done(&h, "slowgrace", LFE_BE_OK, NULL), LFE_BE_OK);
	CHECK_EQ(h.a.pp.grace, 0);
	CHECK_EQ(lfe_credcache_stats(h.cc)->inserts, 1);
	CHECK_EQ(bind(&h, "slowgrace", "slowgrace-pw", NULL), LFE_BE_PENDING);
	CHECK_EQ(done(&h, "slowgrace", LFE_BE_OK, NULL), LFE_BE_INVALID);
	CHECK_EQ(h.a.pp.state, LFE_PP_EXPIRED);
	h_fini(&h);
}

static void populate(struct lfe_store *st)
{
	char old[32], recent[32];
	int64_t now = (int64_t)time(NULL);
	gentime(now - 7200, old, sizeof(old));       /* past pwdMaxAge 3600 */
	gentime(now - 3000, recent, sizeof(recent)); /* within the 1200 s warning */
	const char *nograce[] = { "objectClass", "pwdPolicy", "cn", "nograce", "pwdMaxAge", "3600",
				  "pwdExpireWarning", "1200", NULL };
	const char *graceful[] = { "objectClass", "pwdPolicy", "cn", "graceful", "pwdMaxAge", "3600",
				   "pwdGraceAuthNLimit", "2", "pwdMustChange", "TRUE", NULL };
	CHECK_EQ(put(st, "cn=nograce" SFX, nograce), 0);
	CHECK_EQ(put(st, "cn=graceful" SFX, graceful), 0);
	CHECK_EQ(put_user(st, "alice", "{SSHA}", "alice-pw", NULL, NULL, NULL, NULL), 0);
	CHECK_EQ(put_user(st, "bob", "{SSHA}", "bob-pw", NULL, NULL, NULL, NULL), 0);
	CHECK_EQ(put_user(st, "slow", "{ARGON2}", "slow-pw", NULL, NULL, NULL, NULL), 0);
	CHECK_EQ(put_user(st, "locked", "{SSHA}", "locked-pw", "pwdAccountLockedTime", "000001010000Z",
			  NULL, NULL), 0);
	CHECK_EQ(put_user(st, "expired", "{SSHA}", "expired-pw", "pwdChangedTime", old,
			  "pwdPolicySubentry", "cn=nograce" SFX), 0);
	CHECK_EQ(put_user(st, "warn", "{SSHA}", "warn-pw", "pwdChangedTime", recent,
			  "pwdPolicySubentry", "cn=nograce" SFX), 0);
	CHECK_EQ(put_user(st, "reset", "{SSHA}", "reset-pw", "pwdReset", "TRUE",
			  "pwdPolicySubentry", "cn=graceful" SFX), 0);
	CHECK_EQ(put_user(st, "grace", "{SSHA}", "grace-pw", "pwdChangedTime", old,
			  "pwdPolicySubentry", "cn=graceful" SFX), 0);
	CHECK_EQ(put_user(st, "slowgrace", "{ARGON2}", "slowgrace-pw", "pwdChangedTime", old,
			  "pwdPolicySubentry", "cn=graceful" SFX), 0);
}

int main(void)
{
	char path[300], cmd[400];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/s", root);
	struct lfe_store *st = lfe_store_open(path, 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return 1;
	CHECK_EQ(lfe_store_init(st, "dc=example,dc=com"), 0);
	populate(st);
	test_inline(st);
	test_throttle(st);
	test_offload(st);
	test_policy(st);
	test_insert_after_write(st);
	lfe_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	return check_done();
}
