/* tls/tlsoff.h — TLS handshake steps run off the poll cores.
 *
 * A full handshake costs the server a private-key operation (an RSA-2048
 * signature ~0.27 ms, ECDSA P-256 ~19 µs, an X25519 exchange ~31 µs): run
 * on a worker, it stops every other connection of that core meanwhile. So
 * while a connection's handshake is not finished, the worker hands its SSL
 * object (memory BIOs holding the client's bytes) to a crypto thread, which
 * runs SSL_do_handshake on it and returns it on the worker's completion
 * queue; the worker then sends what the step wrote (stream.c). Records after
 * the handshake are symmetric crypto and stay on the worker.
 *
 * Why threads and not OpenSSL's ASYNC jobs: ASYNC only pauses inside an
 * engine or provider that offloads (a hardware accelerator); with the
 * default provider the private-key operation still runs on the thread that
 * called SSL_do_handshake, so it would not leave the core. Handing the
 * whole SSL object over is what the verifier does for slow hashes, and an
 * SSL object may move between threads as long as one uses it at a time.
 *
 * Ownership: a job (struct lfe_tlsoff_job) is embedded in the caller's
 * per-connection state. From submit until the worker's poll hands it back,
 * the job and its SSL object belong to this module and a crypto thread;
 * the caller must not touch the SSL object (nor its BIOs) meanwhile. A
 * connection that closes while its job is out calls lfe_tlsoff_cancel():
 * ownership of the job passes to the module for good, the thread skips the
 * step if it has not started it, and the poll (or lfe_tlsoff_free) calls
 * job->release, which frees the connection's TLS state. Whoever holds the
 * SSL object last frees it; nobody frees it twice.
 *
 * Bounds (per worker, like the verifier's) count handshakes, not steps:
 * a handshake is admitted once (lfe_tlsoff_admit, before its first step)
 * and counted until it leaves (finished, failed or closed), at most
 * `queue` per worker, and per client address share.h's rule (no bound
 * below share_pct of `queue`, then the fair share, at least per_source).
 * A refused handshake is refused before the client sent anything but its
 * hello (busy); the steps of an admitted one are never refused for a
 * bound (the step queue holds twice `queue`: the admitted handshakes'
 * steps and cancelled ones on their way back), so a client that finished
 * its part is never reset for one; nothing queues unboundedly. Each
 * worker has its own request queue; the threads take one job from each
 * worker in turn, so a flood on one core does not delay another's.
 *
 * A thin adapter: the queues, threads, bounds and cancel are the offload
 * engine's (common/offload.h), an instance of its own (its threads apart
 * from the verifier's); a handshake is a holding (lfe_offload_admit), a
 * step a job without hold whose run is SSL_do_handshake. DPDK-free; the
 * threads are started through cfg->spawn so the daemon can place them on
 * CPUs no lcore polls (rte_ctrl_thread_create).
 *
 * Thread rules: submit, cancel and poll of worker i run on worker i's
 * thread only; new/free on one thread while no worker runs.
 */
#ifndef LFE_TLS_TLSOFF_H
#define LFE_TLS_TLSOFF_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ctr.h"
#include "common/offload.h"

typedef struct ssl_st SSL;

#define LFE_TLSOFF_MAX_THREADS LFE_OFFLOAD_MAX_THREADS
#define LFE_TLSOFF_MAX_WORKERS LFE_OFFLOAD_MAX_WORKERS

struct lfe_tlsoff;
struct lfe_tlsoff_job;

/* Frees the connection state the job is embedded in (SSL object included)
 * and nothing else (by lfe_tlsoff_free, the worker may be gone). Called on
 * the submitting worker's thread for a cancelled job, or by
 * lfe_tlsoff_free. */
typedef void (*lfe_tlsoff_release_fn)(struct lfe_tlsoff_job *job);

/* One handshake step. The caller sets ssl, src and release before submit;
 * the module sets the rest. rc and ssl_err are valid in the done hook. */
struct lfe_tlsoff_job {
	struct lfe_offload_job base;    /* the engine's part (the module sets it) */
	SSL *ssl;
	uint32_t src;                   /* client IPv4 address (per-source bound) */
	lfe_tlsoff_release_fn release;
	/* results: SSL_do_handshake's return and SSL_get_error (taken on the
	 * crypto thread, whose OpenSSL error queue it reads; cleared there) */
	int rc, ssl_err;
};

/* Starts a thread: 0 or a positive errno (pthread_create's contract). */
typedef lfe_offload_spawn_fn lfe_tlsoff_spawn_fn;

struct lfe_tlsoff_cfg {
	uint32_t threads;       /* 1..LFE_TLSOFF_MAX_THREADS */
	uint32_t workers;       /* 1..LFE_TLSOFF_MAX_WORKERS */
	uint32_t queue;         /* handshakes in progress per worker, ≥ 1 */
	uint32_t per_source;    /* the least share of a client address, ≥ 1 */
	uint32_t share_pct;     /* share.h pressure level, % of queue (0: LFE_SHARE_PRESSURE_PCT) */
	lfe_tlsoff_spawn_fn spawn;   /* NULL: pthread_create */
};

/* The threads and queues, or NULL with *err (-EINVAL for a bad cfg,
 * -ENOMEM, or the spawn error negated). */
struct lfe_tlsoff *lfe_tlsoff_new(const struct lfe_tlsoff_cfg *cfg, int *err);

/* Stop and join the threads, then release every job still in a queue that
 * was cancelled (call after every connection was finished, so every job
 * out is cancelled). NULL is a no-op. */
void lfe_tlsoff_free(struct lfe_tlsoff *o);

/* A new handshake from client address src on worker w. Returns 0 (counted
 * until lfe_tlsoff_leave), or
 *   -EDQUOT   src holds its share of this worker's handshakes (share.h);
 *   -ENOBUFS  this worker has `queue` handshakes (or steps) outstanding. */
int lfe_tlsoff_admit(struct lfe_tlsoff *o, unsigned w, uint32_t src);
/* An admitted handshake from src ended (done, failed, or its connection
 * closed). */
void lfe_tlsoff_leave(struct lfe_tlsoff *o, unsigned w, uint32_t src);

/* Queue one SSL_do_handshake step of job->ssl for worker w (a handshake
 * admitted by lfe_tlsoff_admit). Returns 0, or -ENOBUFS (twice `queue`
 * steps outstanding: not for an admitted handshake's step). Nothing is
 * queued on error. */
int lfe_tlsoff_submit(struct lfe_tlsoff *o, unsigned w, struct lfe_tlsoff_job *job);

/* The connection of a submitted job closed: the job becomes the module's
 * (see the header comment). */
void lfe_tlsoff_cancel(struct lfe_tlsoff_job *job);

/* Called once per completed, not cancelled job, on the worker's thread. */
typedef void (*lfe_tlsoff_done_fn)(void *ctx, struct lfe_tlsoff_job *job);

/* Hand worker w's completed jobs to done (cancelled ones to their release).
 * Returns how many came back. NULL o: 0. */
unsigned lfe_tlsoff_poll(struct lfe_tlsoff *o, unsigned w, lfe_tlsoff_done_fn done, void *ctx);

/* Jobs outstanding for worker w (queue depth), and cancelled jobs that
 * came back to it (worker w's thread). NULL o: 0. */
uint32_t lfe_tlsoff_outstanding(const struct lfe_tlsoff *o, unsigned w);
uint64_t lfe_tlsoff_cancelled(const struct lfe_tlsoff *o, unsigned w);

/* Both for worker w, as its counter table (common/ctr.h) describes them. */
struct lfe_tlsoff_stats {
	uint64_t cancelled, queue_depth;
};
void lfe_tlsoff_stats(const struct lfe_tlsoff *o, unsigned w, struct lfe_tlsoff_stats *st);
extern const struct lfe_ctr_table lfe_tlsoff_ctrs;

#endif
