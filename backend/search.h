/* backend/search.h — which entries a search visits, under a work budget.
 *
 * lfe_store_search() runs one LDAP search over a store reader: base scope
 * reads the one entry; one/sub scope needs an equality assertion on an
 * indexed attribute (uid, mail, cn, objectClass) at the top level of the
 * filter and visits only that index's candidates, in scope, evaluating the
 * whole filter on each. A search that no index can serve is refused
 * (unwillingToPerform): a full scan would stall the worker.
 *
 * Budget. Every search may visit at most max_candidates index candidates,
 * spend at most max_work units of filter evaluation (counted by
 * lfe_filter_eval_budget, so the bound holds without any clock) and run
 * until the caller's clock passes `deadline`; past any of them it ends
 * with adminLimitExceeded (11), keeping the entries already returned. The
 * clock is the caller's (the daemon reads the TSC, a test a counter), so the
 * backend stays free of DPDK and of syscalls; it is read once per candidate,
 * and a candidate is begun only if the costliest one so far would still
 * end before the deadline (the first always runs, so every search makes
 * progress). The cost of one candidate is the filter's: bounding it is the
 * filter caps' job (ldap/filter.h).
 *
 * Thread rules: runs on the reader's thread; emitted slices point into the
 * LMDB map and die with the reader's transaction (emit must encode them at
 * once). Nothing here allocates.
 */
#ifndef LFE_BACKEND_SEARCH_H
#define LFE_BACKEND_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "../ldap/msg.h"   /* struct lfe_search_req, struct lfe_ldap_attr, LFE_RC_* */
#include "store.h"

#define LFE_SEARCH_DEFAULT_CANDIDATES 10000u
/* Filter work units (ldap/filter.h, lfe_filter_eval_budget) one request may
 * spend over all its candidates: a clock-free backstop to the time slice,
 * about 1.5 ms of evaluation here (about 6 ns a unit). */
#define LFE_SEARCH_DEFAULT_WORK (1ull << 18)

/* Called once per matching entry, with all its attributes (the caller
 * selects and withholds). 0 to go on; a negative errno stops the search
 * with adminLimitExceeded. Same shape as ldap/session.h's lfe_be_emit_fn. */
typedef int (*lfe_search_emit_fn)(void *ctx, struct lfe_bytes dn,
				  const struct lfe_ldap_attr *attrs, uint32_t n_attrs);

struct lfe_search_params {
	const char *base_ndn;           /* normalized */
	size_t base_ndn_len;
	/* The naming context: a search based at it is valid even when the
	 * store has no entry for it (normalized, may be empty). */
	const char *suffix;
	size_t suffix_len;
	const struct lfe_search_req *req;   /* scope, validated filter, size limit */
	uint32_t max_candidates;        /* 0 → LFE_SEARCH_DEFAULT_CANDIDATES */
	uint64_t max_work;              /* 0 → LFE_SEARCH_DEFAULT_WORK */
	uint64_t (*clock)(void *ctx);   /* NULL: no time budget */
	void *clock_ctx;
	uint64_t deadline;              /* in the clock's units */
	/* Scratch for one entry's attributes, the caller's (per worker). */
	struct lfe_ldap_attr *attrs;
	uint32_t attr_cap;
	struct lfe_bytes *vals;
	uint32_t val_cap;
};

/* What one search did, for counters and tests. */
struct lfe_search_stats {
	uint32_t visited;               /* index candidates (or the base entry) */
	uint32_t emitted;
	uint8_t limited;                /* 1: ended by the budget */
	uint8_t unindexed;              /* 1: refused, no index serves the filter */
};

/* Run the search; returns the LDAP result code of SearchResultDone
 * (LFE_RC_SUCCESS, NO_SUCH_OBJECT, SIZE_LIMIT_EXCEEDED, ADMIN_LIMIT_EXCEEDED,
 * UNWILLING_TO_PERFORM, PROTOCOL_ERROR for a malformed filter, OTHER for a
 * store error). stats may be NULL. */
int lfe_store_search(struct lfe_store_reader *r, const struct lfe_search_params *p,
		     lfe_search_emit_fn emit, void *emit_ctx, struct lfe_search_stats *stats);

#endif
