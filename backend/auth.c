/* backend/auth.c — the bind policy of one worker; see auth.h. */
#include <errno.h>
#include <string.h>

#include "backend/auth.h"

void lfe_auth_init(struct lfe_auth *a, struct lfe_store_reader *rd, struct lfe_throttle *thr,
		   struct lfe_credcache *cc, struct lfe_pp_grace *grace, unsigned pw_flags,
		   const struct lfe_auth_hooks *hooks, struct lfe_auth_stats *st)
{
	memset(a, 0, sizeof(*a));
	a->rd = rd;
	a->thr = thr;
	a->cc = cc;
	a->grace = grace;
	a->pw_flags = pw_flags;
	if (hooks)
		a->hooks = *hooks;
	a->st = st;
	a->pp = (struct lfe_pp_verdict){ LFE_PP_OK, -1, -1, 0 };
}

/* ---- brute-force throttle (backend/throttle.h) ----
 * Checked before any lookup or verification, so a throttled unknown DN and
 * a throttled existing DN take the same path; recorded after every
 * invalidCredentials verdict, inline or from the offload. */

/* Check before verify: true when the bind must be answered 49 unverified.
 * Fills *k for throttle_record. */
static bool throttle_check(struct lfe_auth *a, const struct lfe_auth_req *r,
			   struct lfe_throttle_key *k)
{
	if (a->thr == NULL)
		return false;
	lfe_throttle_key(a->thr, r->ndn, r->ndn_len, r->src, k);
	unsigned hit = lfe_throttle_check(a->thr, k, r->now_us);
	if (hit == 0)
		return false;
	a->st->binds_throttled++;
	a->st->throttled_src += (hit & LFE_THR_BIT(LFE_THR_SRC)) != 0;
	a->st->throttled_dn += (hit & LFE_THR_BIT(LFE_THR_PAIR)) != 0;
	a->st->throttled_dn_global += (hit & LFE_THR_BIT(LFE_THR_DN)) != 0;
	return true;
}

/* Record after a failed verdict. */
static void throttle_record(struct lfe_auth *a, const struct lfe_throttle_key *k, uint64_t now_us,
			    unsigned *events)
{
	if (a->thr && lfe_throttle_fail(a->thr, k, now_us)) {
		a->st->throttle_penalties++;
		*events |= LFE_AUTH_EV_PENALTY;
	}
}

static inline void verified(const struct lfe_auth *a, enum lfe_auth_path path)
{
	if (a->hooks.verified)
		a->hooks.verified(a->hooks.ctx, path);
}

static enum lfe_be_verdict failed(struct lfe_auth *a, const struct lfe_throttle_key *tk,
				  uint64_t now_us, unsigned *events)
{
	a->st->binds_failed++;
	throttle_record(a, tk, now_us, events);   /* record after a failed verdict */
	return LFE_BE_INVALID;
}

enum lfe_be_verdict lfe_auth_bind(struct lfe_auth *a, const struct lfe_auth_req *r,
				  unsigned *events)
{
	struct lfe_throttle_key tk;

	*events = 0;
	if (throttle_check(a, r, &tk))   /* check before verify */
		return LFE_BE_INVALID;
	struct lfe_credcache_key ck;
	uint64_t txn = 0;
	if (a->cc) {
		/* The same tag and probe for every bind: a miss for an unknown DN
		 * costs what a miss for a known one costs. The tag is of the DN
		 * as sent (credcache.h), made already if the frame was peeked. */
		if (r->peeked) {
			ck = *r->peeked;
			a->st->bind_cache_peeked++;
		} else
			lfe_credcache_key(a->cc, (const char *)r->dn, r->dn_len, r->pw, r->pw_len,
					  a->pw_flags, &ck);
		int hc = lfe_credcache_check(a->cc, a->rd, &ck, r->ndn, r->ndn_len, r->now_s);
		if (hc == 0) {
			a->pp = (struct lfe_pp_verdict){ LFE_PP_OK, -1, -1, 0 };
			verified(a, LFE_AUTH_PATH_CACHE);
			a->st->bind_cache_hits++;
			a->st->binds_ok++;
			return LFE_BE_OK;
		}
		a->st->bind_cache_misses++;
		a->st->bind_cache_invalidated += hc == -ESTALE;
		txn = lfe_store_reader_txnid(a->rd);
	}
	struct lfe_bind_job job;
	int rc = lfe_store_verify_bind(a->rd, r->ndn, r->ndn_len, r->pw, r->pw_len, a->pw_flags, &job);
	if (rc != -EAGAIN)   /* verified here */
		verified(a, LFE_AUTH_PATH_INLINE);

	a->pp = *lfe_store_reader_ppolicy(a->rd, &a->pp_timed);
	if (rc == 0 && a->pp.state == LFE_PP_GRACE &&
	    lfe_pp_grace_spend(a->grace, r->ndn, r->ndn_len, &a->pp) < 0)
		rc = -EACCES;   /* no grace login left here: expired (49) */
	if (rc == 0) {
		/* Only a plain success is cached: a policy's answer changes
		 * with each login or with the clock. */
		if (a->cc && a->pp.state == LFE_PP_OK && !a->pp_timed)
			lfe_credcache_insert(a->cc, a->rd, &ck, r->ndn, r->ndn_len, txn, r->now_s);
		a->st->binds_ok++;
		return LFE_BE_OK;
	}
	if (rc != -EAGAIN || r->conn == NULL || a->hooks.submit == NULL) {
		if (rc == -EAGAIN)
			lfe_bind_job_wipe(&job);
		return failed(a, &tk, r->now_us, events);
	}
	rc = a->hooks.submit(a->hooks.ctx, r, &job);
	lfe_bind_job_wipe(&job);
	if (rc == -E2BIG)
		return failed(a, &tk, r->now_us, events);
	if (rc < 0) {
		a->st->binds_busy++;
		*events |= LFE_AUTH_EV_BUSY;
		return LFE_BE_BUSY;
	}
	a->st->binds_offloaded++;
	if (a->thr)
		r->conn->thr_key = tk;   /* for lfe_auth_done's record */
	if (a->cc) {
		r->conn->cc_key = ck;    /* for lfe_auth_done_bound's insert */
		r->conn->cc_txn = txn;
	}
	r->conn->ok = false;
	return LFE_BE_PENDING;
}

enum lfe_be_verdict lfe_auth_done(struct lfe_auth *a, struct lfe_auth_conn *conn,
				  enum lfe_be_verdict v, const struct lfe_pp_verdict *pp,
				  bool pp_timed, const char *pending_ndn, size_t ndn_len,
				  uint64_t now_us, unsigned *events)
{
	*events = 0;
	a->pp = *pp;
	a->pp_timed = pp_timed;
	if (v == LFE_BE_OK && a->pp.state == LFE_PP_GRACE && conn) {
		if (!pending_ndn || lfe_pp_grace_spend(a->grace, pending_ndn, ndn_len, &a->pp) < 0)
			v = LFE_BE_INVALID;
	}
	if (v == LFE_BE_OK)
		a->st->binds_ok++;
	else
		a->st->binds_failed++;
	if (conn == NULL)
		return v;   /* the connection went away while the hash ran */
	/* Record after a failed verdict, with the keys kept at submit. A
	 * connection that went away is not recorded: its verdict reaches
	 * nobody. */
	if (v == LFE_BE_INVALID)
		throttle_record(a, &conn->thr_key, now_us, events);
	conn->ok = v == LFE_BE_OK && a->pp.state == LFE_PP_OK && !a->pp_timed;
	return v;
}

void lfe_auth_done_bound(struct lfe_auth *a, const struct lfe_auth_conn *conn, const char *ndn,
			 size_t ndn_len, int64_t now_s)
{
	if (a->cc && conn->ok)
		lfe_credcache_insert(a->cc, a->rd, &conn->cc_key, ndn, ndn_len, conn->cc_txn, now_s);
}

/* ---- counters (auth.h, common/ctr.h) ---- */
#define AUTH_ROW(n, h) LFE_CTR_ROW(struct lfe_auth_stats, n, #n, LFE_CTR_C, h),
static const struct lfe_ctr auth_rows[] = { LFE_AUTH_COUNTERS(AUTH_ROW) };
const struct lfe_ctr_table lfe_auth_ctrs = LFE_CTR_TABLE("auth", struct lfe_auth_stats, auth_rows);

#define T struct lfe_auth_stats
static const struct lfe_ctr bind_result_rows[] = {
	LFE_CTR_LABELLED(T, binds_ok, "binds_ok", "ok", "Binds answered success."),
	LFE_CTR_LABELLED(T, binds_failed, "binds_failed", "failed", "Binds answered invalidCredentials."),
	LFE_CTR_LABELLED(T, binds_busy, "binds_busy", "busy", "Binds answered busy."),
	LFE_CTR_LABELLED(T, binds_throttled, "binds_throttled", "throttled", "Binds answered by the throttle."),
};
#undef T
const struct lfe_ctr_table lfe_auth_bind_results = LFE_CTR_TABLE("auth", struct lfe_auth_stats, bind_result_rows,
	.family = "ldapfe_binds_total", .family_label = "result",
	.family_help = "Bind requests answered, by result.");
