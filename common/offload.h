/* common/offload.h — the one engine that runs work off the poll cores:
 * slow password hashes (dataplane/verifier.c), TLS handshake steps
 * (tls/tlsoff.c), and whatever job kind comes next.
 *
 * A job (struct lfe_offload_job) is embedded in the caller's object, which
 * sets its run and release functions; a worker submits it to its own
 * request queue, an engine thread runs it (run, off the worker) and puts it
 * on the worker's completion queue, and the worker's poll hands it back:
 * to the done hook, or to job->release if the worker cancelled it meanwhile.
 * Each job kind has an engine instance of its own (the verifier's threads
 * and queues, the TLS offload's): their bounds and thread counts are
 * configured apart ([workers] verify_*, [tls] handshake_*), and a flood of
 * one kind does not hold up the other behind it.
 *
 * Fairness. Each worker has its own request queue; a thread takes one job
 * from each worker's queue in turn (round-robin, starting after the worker
 * it served last), so a worker flooded with jobs delays another worker's
 * job by at most one job per thread, never by its whole queue.
 *
 * Bounds, per worker (each worker's bookkeeping is its own):
 *   - holdings: at most `cap` at a time, and per client address share.h's
 *     rule on them (no per-source bound below share_pct of `cap`, then the
 *     fair share, at least per_source). A holding is either a job itself
 *     (job->hold: counted from submit until the poll takes it back, the
 *     verifier's jobs) or something longer the caller admits and leaves
 *     (lfe_offload_admit/leave: a TLS handshake, which takes several jobs);
 *   - jobs out (submitted, not yet taken back by the poll, cancelled ones
 *     included): at most `queue`, the size of the worker's two queues, so
 *     no push can fail within the bound; lfe_offload_admit also waits while
 *     `cap` jobs are out (cancelled ones on their way back);
 *   - per connection: a job with a key (job->key ≠ 0) is refused while a
 *     job of the same key is out on that worker and not cancelled (the
 *     verifier keys a job by connection handle, index and generation:
 *     one bind at a time per connection). The engine checks it, so the
 *     caller can cancel by key (lfe_offload_cancel_key) without keeping a
 *     table of its own.
 * Refusals are checked in this order: key (-EBUSY), the worker's bound
 * (-ENOBUFS), the source's share (-EDQUOT). Nothing is queued on error.
 *
 * Ownership. From submit until the worker's poll hands it back, a job
 * belongs to the engine and a thread: the caller must not touch it nor
 * what run uses. A connection that closes while its job is out cancels it
 * (lfe_offload_cancel, or _cancel_key): ownership passes to the engine for
 * good; a thread that has not started the job skips run; the poll (or
 * lfe_offload_free, if it is still queued then) calls job->release on the
 * worker's thread, exactly once, whether run ran or not. The done hook and
 * release are the only ways a job comes back; the engine never frees one.
 *
 * DPDK-free, no globals: the queues are bounded lock-free rings (Vyukov's
 * MPMC array queue, one CAS per operation); threads start through
 * cfg->spawn, so the daemon can place them where no lcore polls
 * (rte_ctrl_thread_create); idle threads back off from 20 µs to 1 ms sleeps.
 * Every table is allocated by lfe_offload_new: no heap after it.
 *
 * Thread rules: submit, admit, leave, cancel and poll of worker w run on
 * worker w's thread only (its bookkeeping is unshared); run on an engine
 * thread; new and free on one thread while no worker runs.
 */
#ifndef LFE_COMMON_OFFLOAD_H
#define LFE_COMMON_OFFLOAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LFE_OFFLOAD_MAX_THREADS 64u
#define LFE_OFFLOAD_MAX_WORKERS 64u

struct lfe_offload;
struct lfe_offload_job;

/* The work, on an engine thread (may block, sleep, take milliseconds). */
typedef void (*lfe_offload_run_fn)(struct lfe_offload_job *job);
/* A cancelled job is back, or lfe_offload_free found a job still queued
 * (lfe_offload_job_cancelled says which): free or recycle what the job is
 * embedded in. On the worker's thread (at free: free's thread). */
typedef void (*lfe_offload_release_fn)(struct lfe_offload_job *job);

/* The caller sets run, release, key, src and hold before submit; the rest
 * is the engine's. */
struct lfe_offload_job {
	lfe_offload_run_fn run;
	lfe_offload_release_fn release;
	uint64_t key;                   /* per-connection bound; 0: none */
	uint32_t src;                   /* client address (IPv4, host order), when hold */
	bool hold;                      /* the job is a holding itself (see above) */
	/* the engine's */
	uint16_t worker;
	atomic_bool cancelled;          /* set by the worker, read by a thread */
	struct lfe_offload *o;
};

/* Starts a thread: 0 or a positive errno (pthread_create's contract). */
typedef int (*lfe_offload_spawn_fn)(pthread_t *th, const char *name, void *(*fn)(void *),
				    void *arg);

struct lfe_offload_cfg {
	const char *name;       /* thread name prefix, "NAME-i" (≤ 11 chars); NULL: "lfe-off" */
	uint32_t threads;       /* 1..LFE_OFFLOAD_MAX_THREADS */
	uint32_t workers;       /* 1..LFE_OFFLOAD_MAX_WORKERS */
	uint32_t cap;           /* holdings per worker, ≥ 1 */
	uint32_t queue;         /* jobs out per worker, ≥ cap */
	uint32_t per_source;    /* the least share of a client address, ≥ 1 */
	uint32_t share_pct;     /* share.h pressure level, % of cap (0: always under pressure) */
	lfe_offload_spawn_fn spawn;   /* NULL: pthread_create */
};

/* The threads and queues, or NULL with *err (-EINVAL for a bad cfg,
 * -ENOMEM, or the spawn error negated). */
struct lfe_offload *lfe_offload_new(const struct lfe_offload_cfg *cfg, int *err);

/* Stop and join the threads, then release every job still in a queue
 * (cancelled or not: release can tell). Jobs the poll already handed back
 * are not the engine's. NULL is a no-op. */
void lfe_offload_free(struct lfe_offload *o);

/* A holding for client address src on worker w, for work that takes
 * several jobs (submitted without hold). Returns 0 (counted until
 * lfe_offload_leave), or
 *   -ENOBUFS  worker w holds `cap`, or has `cap` jobs out;
 *   -EDQUOT   src holds its share of worker w's holdings (share.h). */
int lfe_offload_admit(struct lfe_offload *o, unsigned w, uint32_t src);
/* Whether src holds its share of worker w's holdings now (share.h's rule
 * as admit and submit apply it, the worker's own bound aside): for a
 * caller that reports a source over its share even when the worker is
 * full too (the verifier's busy counters). */
bool lfe_offload_over_share(const struct lfe_offload *o, unsigned w, uint32_t src);
/* A holding of src on worker w ended. A leave for an address that holds
 * none changes nothing. */
void lfe_offload_leave(struct lfe_offload *o, unsigned w, uint32_t src);

/* Queue job for worker w. Returns 0, or
 *   -EBUSY    job->key ≠ 0 and a job of that key is out, not cancelled;
 *   -ENOBUFS  `queue` jobs out (with hold: `cap` holdings or jobs out);
 *   -EDQUOT   hold, and job->src holds its share of w's holdings.
 * Nothing is queued on error. */
int lfe_offload_submit(struct lfe_offload *o, unsigned w, struct lfe_offload_job *job);

/* The connection of a submitted job closed: the job becomes the engine's
 * (see Ownership); its key is free at once. On the submitting worker's
 * thread, only for a job that is out. */
void lfe_offload_cancel(struct lfe_offload_job *job);
/* The same for worker w's job of key (≠ 0), if one is out and not
 * cancelled; otherwise nothing. */
void lfe_offload_cancel_key(struct lfe_offload *o, unsigned w, uint64_t key);

/* Whether job was cancelled (in release: came back cancelled, or free found
 * it queued uncancelled). */
static inline bool lfe_offload_job_cancelled(const struct lfe_offload_job *job)
{
	return atomic_load_explicit(&job->cancelled, memory_order_relaxed);
}

/* Called once per completed, not cancelled job, on the worker's thread;
 * the job is the caller's again. */
typedef void (*lfe_offload_done_fn)(void *ctx, struct lfe_offload_job *job);

/* Take back at most max of worker w's completed jobs: cancelled ones to
 * their release, the others to done. Returns how many came back. */
unsigned lfe_offload_poll(struct lfe_offload *o, unsigned w, unsigned max, lfe_offload_done_fn done,
			  void *ctx);

/* Worker w's jobs out, its holdings, and the cancelled jobs that came back
 * to it (worker w's thread). */
uint32_t lfe_offload_outstanding(const struct lfe_offload *o, unsigned w);
uint32_t lfe_offload_held(const struct lfe_offload *o, unsigned w);
uint64_t lfe_offload_cancelled(const struct lfe_offload *o, unsigned w);

#endif
