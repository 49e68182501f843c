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
#include <stddef.h>
#include <stdint.h>

#include "backend/bindjob.h"
#include "ldap/session.h"
#include "net/tcp.h"

struct lfe_daemon;
struct lfe_worker;
struct lfe_verifier;

#define LFE_VERIFY_PW_MAX 512u   /* longer passwords are refused (invalid) */

/* Called once per completed job, on the submitting worker's lcore. Jobs
 * dropped because their connection closed are not reported. */
typedef void (*lfe_verify_done_fn)(struct lfe_worker *w, struct lfe_tcp_handle h,
				   uint64_t token, enum lfe_be_verdict v);

/* An EAL control thread (on CPUs no lcore polls), as the offload engine's
 * spawn hook wants it: 0 or a positive errno. The verifier's threads and
 * the TLS handshake threads are started by it. */
int lfe_ctrl_spawn(pthread_t *th, const char *name, void *(*fn)(void *), void *arg);

/* Reads d->cfg (verifier_threads, verify_queue, verify_per_source),
 * d->n_workers and d->w[i] (idx, st, now_us, bind_lat, pp), d->pw_flags. */
struct lfe_verifier *lfe_verifier_new(struct lfe_daemon *d, char *err, size_t errlen);
/* Stop and join the threads, wiping what is queued. NULL is a no-op. */
void lfe_verifier_free(struct lfe_verifier *v);

/* Queue job (copied, with pw) for connection h of worker w, whose client
 * address is src (IPv4, host order). Returns 0, or
 *   -EBUSY    this connection already has a job outstanding;
 *   -EDQUOT   src holds its fair share of this worker's jobs under pressure;
 *   -ENOBUFS  this worker's share of verify_queue is taken;
 *   -E2BIG    pw longer than LFE_VERIFY_PW_MAX.
 * The caller keeps (and wipes) its own job and pw. Busy refusals are
 * counted in w->st (verify_busy_conn, verify_busy_source, binds_busy is
 * the caller's). */
int lfe_verifier_submit(struct lfe_verifier *v, struct lfe_worker *w, struct lfe_tcp_handle h,
			uint32_t src, uint64_t token, const struct lfe_bind_job *job,
			const uint8_t *pw, size_t pw_len);

/* Connection h of worker w closed: a job of it not yet picked up by a
 * thread is dropped unhashed (counted in w->st.verify_dropped_closed when
 * it comes back). No-op when it has none. */
void lfe_verifier_cancel(struct lfe_verifier *v, struct lfe_worker *w, struct lfe_tcp_handle h);

/* Deliver completions queued for w to done (from w's loop). Returns how
 * many came back (delivered or dropped). */
unsigned lfe_verifier_poll(struct lfe_verifier *v, struct lfe_worker *w, lfe_verify_done_fn done);

#endif
