/* dataplane/verifier.h — slow password schemes verified off the poll cores.
 *
 * A worker whose first bind phase (lfe_store_verify_bind) returned a job
 * submits it here with a copy of the password; verifier threads (EAL
 * control threads, never on a worker's CPU) run it with lfe_bind_job_run —
 * no store, no lookup — and post each verdict on the submitting worker's
 * completion ring. The worker collects verdicts with lfe_verifier_poll(),
 * which hands each to the completion hook the worker gives it: the verifier
 * knows nothing of connections or sessions beyond their handles.
 *
 * Fairness and bounds. Each worker has its own request ring; the threads
 * serve the rings round-robin, one job at a time, so a core flooded with
 * slow binds cannot delay the jobs of another core behind its own. Per
 * worker: at most verify_queue / n_workers jobs outstanding (its equal
 * share of the daemon's queue), at most one per connection
 * (the session serialises binds; this enforces it), and per client
 * address share.h's rule: no bound while fewer than share_pressure_pct
 * of the worker's jobs are outstanding, then its fair share (jobs /
 * sources, at least verify_per_source). Beyond any bound submit fails
 * and the caller answers busy (51). A connection that closes cancels its
 * job: if no thread has picked it up yet it is dropped unhashed.
 *
 * A thin adapter: the queues, threads, bounds and cancel are the offload
 * engine's (common/offload.h), an instance of its own (its threads apart
 * from the TLS handshakes'); a job is a holding keyed by the connection's
 * handle. Where a submit breaks the worker's and the source's bound at
 * once, the source's (-EDQUOT, verify_busy_source) is reported. Request
 * objects are a per-worker array with a free list, made by
 * lfe_verifier_new. A job cancelled before a thread took it has its
 * password copy wiped by the worker at the next poll.
 *
 * Thread rules: submit, cancel and poll run on the worker's lcore (each
 * worker's part is touched by that lcore only); new/free on the main lcore
 * while no worker runs.
 */
#ifndef LFE_DATAPLANE_VERIFIER_H
#define LFE_DATAPLANE_VERIFIER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/bindjob.h"
#include "backend/ppolicy.h"
#include "ldap/session.h"
#include "net/tcp.h"

struct lfe_verifier;

#define LFE_VERIFY_PW_MAX 512u   /* longer passwords are refused (invalid) */

/* What a completed job brings back to its worker. */
struct lfe_verify_result {
	struct lfe_tcp_handle h;
	uint64_t token;
	enum lfe_be_verdict v;
	/* The password policy's verdict (ppolicy.h), for a password that
	 * matched (or matched but has expired); a refused one says nothing
	 * about the account: LFE_PP_OK. pp_timed: it can change with the
	 * clock alone. */
	struct lfe_pp_verdict pp;
	bool pp_timed;
	uint64_t submit_us;   /* the clock given to submit: the latency histogram */
};

/* Called once per completed job, on the submitting worker's thread, with
 * the arg given to poll. Jobs dropped because their connection closed are
 * not reported (lfe_verifier_dropped_closed counts them). */
typedef void (*lfe_verify_done_fn)(void *arg, const struct lfe_verify_result *r);

/* An EAL control thread (on CPUs no lcore polls), as the offload engine's
 * spawn hook wants it: 0 or a positive errno. The verifier's threads and
 * the TLS handshake threads are started by it. */
int lfe_ctrl_spawn(pthread_t *th, const char *name, void *(*fn)(void *), void *arg);

struct lfe_verifier_cfg {
	uint32_t workers;      /* workers 0 .. workers - 1 submit and poll */
	uint32_t queue;        /* jobs outstanding, the daemon's total ([workers] verify_queue) */
	uint32_t threads;      /* verifier_threads (clamped to 1 .. LFE_OFFLOAD_MAX_THREADS) */
	uint32_t per_source;   /* verify_per_source */
	uint32_t share_pct;    /* share_pressure_pct */
	unsigned pw_flags;     /* lfe_bind_job_run's (pwscheme.h) */
};

struct lfe_verifier *lfe_verifier_new(const struct lfe_verifier_cfg *cfg, char *err, size_t errlen);
/* Stop and join the threads, wiping what is queued. NULL is a no-op. */
void lfe_verifier_free(struct lfe_verifier *v);

/* Queue job (copied, with pw) for connection h of worker `worker`, whose
 * client address is src (IPv4, host order); now_us is the worker's clock
 * (handed back in the result). Returns 0, or
 *   -EBUSY    this connection already has a job outstanding;
 *   -EDQUOT   src holds its fair share of this worker's jobs under pressure;
 *   -ENOBUFS  this worker's share of verify_queue is taken;
 *   -E2BIG    pw longer than LFE_VERIFY_PW_MAX.
 * The caller keeps (and wipes) its own job and pw, and counts the busy
 * refusals. */
int lfe_verifier_submit(struct lfe_verifier *v, unsigned worker, uint64_t now_us,
			struct lfe_tcp_handle h, uint32_t src, uint64_t token,
			const struct lfe_bind_job *job, const uint8_t *pw, size_t pw_len);

/* Connection h of the worker closed: a job of it not yet picked up by a
 * thread is dropped unhashed (counted when it comes back). No-op when it
 * has none. */
void lfe_verifier_cancel(struct lfe_verifier *v, unsigned worker, struct lfe_tcp_handle h);

/* Deliver the worker's completions to done(arg, result). Returns how many
 * came back (delivered or dropped). */
unsigned lfe_verifier_poll(struct lfe_verifier *v, unsigned worker, lfe_verify_done_fn done, void *arg);

/* Jobs of the worker dropped unhashed because their connection closed,
 * since new (read on the worker's thread: publish). */
uint64_t lfe_verifier_dropped_closed(const struct lfe_verifier *v, unsigned worker);

#endif
