/* backend/search.h — which entries a search visits, under a work budget.
 *
 * lfe_store_search() runs one LDAP search over a store reader: base scope
 * reads the one entry; one/sub scope needs an equality assertion on an
 * indexed attribute (uid, mail, cn, objectClass) at the top level of the
 * filter and visits only that index's candidates, in scope, evaluating the
 * whole filter on each. A search that no index can serve is refused
 * (unwillingToPerform): a full scan would stall the worker.
 *
 * Budget and streaming. A search may be run in several calls (turns): with
 * a cursor (struct lfe_search_cursor, the caller's, zeroed before the first
 * call) it stops when the caller's clock passes `deadline`, when its filter
 * work for this call (max_work, per call: other connections are served in
 * between) runs out, or when emit has no room for an entry now (-EAGAIN),
 * and returns LFE_SEARCH_YIELD; the next call goes on after the last
 * candidate it finished, so an answer of any length leaves as it is
 * produced. Over all calls it may visit at most max_candidates index
 * candidates (past them adminLimitExceeded, 11), return size_limit entries
 * (a further match: sizeLimitExceeded, 4) and run time_limit clock units
 * from its first call (timeLimitExceeded, 3). One candidate that a whole
 * call's budget cannot pay for ends it with adminLimitExceeded. Without a
 * cursor (one call) any of the per-call bounds ends it with
 * adminLimitExceeded, keeping the entries already returned. The clock is
 * the caller's (the daemon reads the TSC, a test a counter), so the backend
 * stays free of DPDK and of syscalls; it is read once per candidate, and a
 * candidate is begun only if the costliest one so far would still end
 * before the deadline (the first of a call always runs, so every call makes
 * progress).
 *
 * Thread rules: runs on the reader's thread; emitted slices point into the
 * LMDB map and die with the reader's transaction (emit must encode them at
 * once). Nothing here allocates.
 */
#ifndef LFE_BACKEND_SEARCH_H
#define LFE_BACKEND_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include <errno.h>

#include "ldap/dn.h"    /* LFE_DN_MAX */
#include "ldap/msg.h"   /* struct lfe_search_req, struct lfe_ldap_entry, LFE_RC_* */
#include "backend/store.h"

#define LFE_SEARCH_DEFAULT_CANDIDATES 10000u
/* Filter work units (ldap/filter.h, lfe_filter_eval_budget) one request may
 * spend over all its candidates: a clock-free backstop to the time slice,
 * about 1.5 ms of evaluation here (about 6 ns a unit). */
#define LFE_SEARCH_DEFAULT_WORK (1ull << 18)

/* Called once per matching entry, with the whole entry as a source (the
 * caller selects and withholds, nothing is counted before). 0 to go on;
 * -EAGAIN: no room for it now (with a cursor the search yields and
 * resumes with this entry; without one, adminLimitExceeded); another
 * negative errno stops the search with adminLimitExceeded. Same shape as
 * ldap/session.h's lfe_be_emit_fn. */
typedef int (*lfe_search_emit_fn)(void *ctx, const struct lfe_ldap_entry *e);

/* Returned by lfe_store_search when a search with a cursor yields. */
#define LFE_SEARCH_YIELD (-EAGAIN)

/* Where a search stands between its calls (the caller's memory; all zero
 * before the first call). */
struct lfe_search_cursor {
	uint64_t started;               /* clock at the first call */
	uint32_t visited, emitted;      /* over all calls */
	uint8_t begun;
	uint16_t after_len;             /* go on after this candidate (0: none yet) */
	char after[LFE_DN_MAX];         /* normalized DN */
};

struct lfe_search_params {
	const char *base_ndn;           /* normalized */
	size_t base_ndn_len;
	/* The naming context: a search based at it is valid even when the
	 * store has no entry for it (normalized, may be empty). */
	const char *suffix;
	size_t suffix_len;
	const struct lfe_search_req *req;   /* scope, validated filter, size limit */
	uint32_t max_candidates;        /* 0 → LFE_SEARCH_DEFAULT_CANDIDATES */
	uint64_t max_work;              /* per call; 0 → LFE_SEARCH_DEFAULT_WORK */
	uint64_t (*clock)(void *ctx);   /* NULL: no time budget */
	void *clock_ctx;
	uint64_t deadline;              /* this call's, in the clock's units */
	uint64_t time_limit;            /* the client's, clock units from the
	                                 * first call; 0: none (needs a clock) */
	struct lfe_search_cursor *cursor;   /* NULL: one call, no yield */
};

/* What one search did, for counters and tests. */
struct lfe_search_stats {
	uint32_t visited;               /* index candidates (or the base entry) */
	uint32_t emitted;
	uint8_t limited;                /* 1: ended by a budget (11) */
	uint8_t yielded;                /* 1: yielded (LFE_SEARCH_YIELD) */
	uint8_t unindexed;              /* 1: refused, no index serves the filter */
	uint64_t planned_count;         /* entries the chosen index listed */
};

/* Run the search (or its next part, with a cursor); returns the LDAP result
 * code of SearchResultDone (LFE_RC_SUCCESS, NO_SUCH_OBJECT,
 * SIZE_LIMIT_EXCEEDED, TIME_LIMIT_EXCEEDED, ADMIN_LIMIT_EXCEEDED,
 * UNWILLING_TO_PERFORM, PROTOCOL_ERROR for a malformed filter, OTHER for a
 * store error), or LFE_SEARCH_YIELD (cursor only: call again later).
 * stats (this call's) may be NULL. */
int lfe_store_search(struct lfe_store_reader *r, const struct lfe_search_params *p,
		     lfe_search_emit_fn emit, void *emit_ctx, struct lfe_search_stats *stats);

#endif
