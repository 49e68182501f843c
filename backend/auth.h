/* backend/auth.h — the bind policy of one worker: throttle, credential
 * cache, store, offload, verdict, failure record, cache insert, grace
 * logins and the password policy's verdict, in that order. DPDK-free: the
 * daemon's glue (dataplane/glue.c) is a thin caller, tests/backend/test_auth
 * drives it case by case against a real store.
 *
 * One simple bind (lfe_auth_bind):
 *   1. throttle check (backend/throttle.h) before any lookup: a throttled
 *      bind is answered INVALID unverified (binds_throttled, not
 *      binds_failed), whether or not the DN exists;
 *   2. credential cache (backend/credcache.h): a hit answers OK at once
 *      (no hash, no job); the tag is of the DN as sent, or the one the
 *      caller peeked from these very octets;
 *   3. the store's first phase (lfe_store_verify_bind) in the caller's
 *      read transaction: fast schemes are verified here;
 *   4. a slow scheme's job goes to the offload through hooks.submit; the
 *      keys the verdict needs later (throttle key, cache key, snapshot)
 *      are kept in the connection's struct lfe_auth_conn and the bind is
 *      PENDING until lfe_auth_done;
 *   5. verdict: a GRACE success spends one of this instance's grace logins
 *      (none left: INVALID); an INVALID verdict is recorded in the
 *      throttle; a plain success (policy OK, not timed) is inserted into
 *      the cache, which refuses it when the reader moved on since the
 *      check (a write was committed).
 * The password policy's verdict of the bind just answered is kept for
 * the response control (lfe_auth_controls).
 *
 * Clocks are passed in: now_us (the throttle's, any monotonic µs) and
 * now_s (seconds since the epoch: lock state, the cache). No clock is read
 * here; hooks.verified marks the moment a verdict is reached on the core
 * (the caller's latency histogram).
 *
 * Counters: struct lfe_auth_stats, memory of the caller (the worker's
 * struct lfe_wstats overlays it, dataplane/wstats.h); names are the
 * counters' names in `ldapfectl stats` and /metrics.
 *
 * Thread rules: one struct lfe_auth per worker core, touched by that core
 * only, like the reader, throttle and cache it points to. grace is shared
 * (lock-free, ppolicy.h).
 */
#ifndef LFE_BACKEND_AUTH_H
#define LFE_BACKEND_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/bindjob.h"
#include "backend/credcache.h"
#include "backend/ppolicy.h"
#include "backend/store.h"
#include "backend/throttle.h"
#include "common/ctr.h"
#include "ldap/session.h"

/* The counters, in this order (the worker's struct lfe_wstats overlays
 * them with the same list), all counters: X(name, help). binds_throttled
 * are answered 49 unverified by the brute-force throttle (not in
 * binds_failed), by the key kind that held them (a bind held by two kinds
 * counts in both); bind_cache_* are the verified-credential cache's
 * (backend/credcache.h): hits are also in binds_ok. */
#define LFE_AUTH_COUNTERS(X)                                                                          \
	X(binds_ok, "Binds answered success (cache hits included).")                                  \
	X(binds_failed, "Binds answered invalidCredentials after a verification.")                    \
	X(binds_offloaded, "Binds verified on the verifier threads (slow schemes).")                  \
	X(binds_busy, "Binds answered busy.")                                                         \
	X(binds_throttled, "Binds answered 49 unverified by the brute-force throttle.")               \
	X(throttled_src, "Throttled binds held by the source address key.")                           \
	X(throttled_dn, "Throttled binds held by the (source, DN) key.")                              \
	X(throttled_dn_global, "Throttled binds held by the DN key over all sources.")                \
	X(throttle_penalties, "Throttle penalties started.")                                          \
	X(bind_cache_hits, "Binds answered from the verified-credential cache.")                      \
	X(bind_cache_misses, "Binds that went the full path past the credential cache.")              \
	X(bind_cache_invalidated, "Credential cache entries evicted: their re-check failed.")         \
	X(bind_cache_peeked, "Binds whose cache key the bind peek had made.")
#define LFE_AUTH_FIELD(n, h) uint64_t n;
struct lfe_auth_stats {
	LFE_AUTH_COUNTERS(LFE_AUTH_FIELD)
};
/* Their table (common/ctr.h), and binds by result as one labelled family
 * over the same fields (ldapfe_binds_total{result=ok|failed|busy|throttled}). */
extern const struct lfe_ctr_table lfe_auth_ctrs, lfe_auth_bind_results;

/* A bind at the offload: kept in the connection's slot from submit to
 * lfe_auth_done (plain data, no secret in clear). */
struct lfe_auth_conn {
	struct lfe_throttle_key thr_key;
	struct lfe_credcache_key cc_key;
	uint64_t cc_txn;        /* the store snapshot the bind was read in */
	bool ok;                /* lfe_auth_done's verdict may be cached */
};

/* One bind request. */
struct lfe_auth_req {
	const char *ndn;        /* normalized DN */
	size_t ndn_len;
	const uint8_t *dn;      /* the DN as sent (the cache's tag) */
	size_t dn_len;
	const uint8_t *pw;
	size_t pw_len;
	uint32_t src;           /* client IPv4 address, host order (the
	                         * throttle's source key); 0 unknown */
	uint64_t token;         /* the session's, for the offload */
	uint64_t now_us;        /* throttle clock */
	int64_t now_s;          /* seconds since the epoch */
	/* The cache key of exactly these DN and password octets, made before
	 * (the bind peek), or NULL. */
	const struct lfe_credcache_key *peeked;
	/* Where the offload's keys are kept; NULL: no connection to answer
	 * later, a slow bind is answered INVALID here. */
	struct lfe_auth_conn *conn;
};

/* Where a verdict reached on the core came from (hooks.verified). */
enum lfe_auth_path { LFE_AUTH_PATH_INLINE, LFE_AUTH_PATH_CACHE };

struct lfe_auth_hooks {
	/* Submit job with r->pw for verification elsewhere (the caller's
	 * offload); the caller keeps and wipes job. 0: queued (the verdict
	 * comes back through lfe_auth_done); -E2BIG: the password is too long
	 * (INVALID); any other negative errno: no room (BUSY). Required when a
	 * store may hold slow schemes. */
	int (*submit)(void *ctx, const struct lfe_auth_req *r, const struct lfe_bind_job *job);
	/* A verdict was reached on the core (a cache hit, or the store's
	 * inline verification); optional. */
	void (*verified)(void *ctx, enum lfe_auth_path path);
	void *ctx;
};

/* Events the caller may log (lfe_auth_bind/_done's *events). */
#define LFE_AUTH_EV_PENALTY 1u   /* a throttle penalty started */
#define LFE_AUTH_EV_BUSY    2u   /* the offload had no room */

struct lfe_auth {
	struct lfe_store_reader *rd;    /* the core's reader */
	struct lfe_throttle *thr;       /* NULL: no throttle */
	struct lfe_credcache *cc;       /* NULL: no cache */
	struct lfe_pp_grace *grace;     /* grace logins this instance counted */
	unsigned pw_flags;              /* LFE_PW_* (pwscheme.h) */
	struct lfe_auth_hooks hooks;
	struct lfe_auth_stats *st;      /* the caller's counters */
	/* The password policy's verdict of the bind answered last (for its
	 * response control); pp_timed: it can change with the clock alone. */
	struct lfe_pp_verdict pp;
	bool pp_timed;
};

/* Fill a (no allocation); thr, cc may be NULL. */
void lfe_auth_init(struct lfe_auth *a, struct lfe_store_reader *rd, struct lfe_throttle *thr,
		   struct lfe_credcache *cc, struct lfe_pp_grace *grace, unsigned pw_flags,
		   const struct lfe_auth_hooks *hooks, struct lfe_auth_stats *st);

/* The bind r: LFE_BE_OK, LFE_BE_INVALID, LFE_BE_BUSY, or LFE_BE_PENDING
 * (submitted: r->conn holds the keys until lfe_auth_done). *events: the
 * LFE_AUTH_EV_* bits of this call. */
enum lfe_be_verdict lfe_auth_bind(struct lfe_auth *a, const struct lfe_auth_req *r,
				  unsigned *events);

/* An offloaded bind's verdict v came back, with the job's policy verdict
 * pp/pp_timed (for a password that matched). conn: its keys, or NULL when
 * the connection went away (counted, nothing recorded). pending_ndn: the
 * session's DN of the bind (lfe_session_pending_dn; NULL when none left).
 * Returns the verdict to deliver (a GRACE success with no grace login
 * left becomes INVALID); an INVALID one is recorded in the throttle. Then,
 * once the session took an OK verdict, lfe_auth_done_bound. */
enum lfe_be_verdict lfe_auth_done(struct lfe_auth *a, struct lfe_auth_conn *conn,
				  enum lfe_be_verdict v, const struct lfe_pp_verdict *pp,
				  bool pp_timed, const char *pending_ndn, size_t ndn_len,
				  uint64_t now_us, unsigned *events);

/* The session is bound to ndn by the verdict lfe_auth_done returned OK
 * for conn: a plain success is cached (refused after a store write since
 * the bind was read, or on a policy state). */
void lfe_auth_done_bound(struct lfe_auth *a, const struct lfe_auth_conn *conn, const char *ndn,
			 size_t ndn_len, int64_t now_s);

/* The Password Policy response control of the bind answered last
 * (session.h's bind_controls). */
static inline ssize_t lfe_auth_controls(const struct lfe_auth *a, bool want, uint8_t *out, size_t cap,
					bool *must_change)
{
	*must_change = a->pp.state == LFE_PP_MUST_CHANGE;
	return want ? lfe_pp_enc_verdict(out, cap, &a->pp) : 0;
}

#endif
