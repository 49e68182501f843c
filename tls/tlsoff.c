/* tls/tlsoff.c — handshake steps on crypto threads (tlsoff.h).
 *
 * Each worker has a request queue (it alone produces; the threads consume)
 * and a completion queue (the threads produce; it alone consumes), both
 * Vyukov bounded array queues: a sequence number per cell, one CAS per
 * operation, no lock. Both hold at least `queue` jobs and a worker never
 * has more outstanding (counted from submit until its poll takes the job
 * back), so neither push can fail within the bound.
 *
 * Per-worker bookkeeping (worker thread only): the outstanding count and
 * the client addresses with jobs outstanding, as a small array scanned
 * linearly (at most `queue` entries, and a handshake costs far more than
 * the scan).
 *
 * Threads visit the workers' request queues round-robin, one job each in
 * turn; idle, they back off from 20 µs to 200 µs to 1 ms sleeps, so an idle
 * daemon's crypto threads cost nothing and a busy one's wait little.
 */
#include "tls/tlsoff.h"
#include "net/share.h"

#include <errno.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

/* ---- bounded MPMC array queue (Dmitry Vyukov's) ---- */

struct vq_cell {
	atomic_size_t seq;
	void *p;
};

struct vq {
	struct vq_cell *cell;
	size_t mask;
	alignas(64) atomic_size_t head;   /* next to pop */
	alignas(64) atomic_size_t tail;   /* next to push */
};

static int vq_init(struct vq *q, size_t min_cap)
{
	size_t n = 2;
	while (n < min_cap)
		n <<= 1;
	q->cell = calloc(n, sizeof *q->cell);
	if (q->cell == NULL)
		return -ENOMEM;
	q->mask = n - 1;
	for (size_t i = 0; i < n; i++)
		atomic_init(&q->cell[i].seq, i);
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	return 0;
}

static bool vq_push(struct vq *q, void *p)
{
	size_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
	for (;;) {
		struct vq_cell *c = &q->cell[pos & q->mask];
		size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		intptr_t dif = (intptr_t)seq - (intptr_t)pos;
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&q->tail, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				c->p = p;
				atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
				return true;
			}
		} else if (dif < 0) {
			return false;   /* full */
		} else {
			pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
		}
	}
}

static void *vq_pop(struct vq *q)
{
	size_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
	for (;;) {
		struct vq_cell *c = &q->cell[pos & q->mask];
		size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		intptr_t dif = (intptr_t)seq - (intptr_t)(pos + 1);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				void *p = c->p;
				atomic_store_explicit(&c->seq, pos + q->mask + 1, memory_order_release);
				return p;
			}
		} else if (dif < 0) {
			return NULL;   /* empty */
		} else {
			pos = atomic_load_explicit(&q->head, memory_order_relaxed);
		}
	}
}

/* ---- the module ---- */

struct src_count {
	uint32_t addr, n;
};

struct tworker {
	struct vq req, done;
	uint32_t outstanding;
	uint64_t cancelled;
	uint32_t handshakes;            /* admitted, not yet left */
	uint32_t n_src;
	struct src_count *src;          /* handshakes per source: ≤ queue entries */
};

struct lfe_tlsoff {
	struct lfe_tlsoff_cfg cfg;
	struct lfe_share share;         /* handshakes per source (share.h) */
	atomic_int stop;
	uint32_t n_started;
	pthread_t th[LFE_TLSOFF_MAX_THREADS];
	struct tworker w[];
};

static void *crypto_thread(void *arg)
{
	struct lfe_tlsoff *o = arg;
	uint32_t n = o->cfg.workers, next = 0;
	unsigned idle = 0;

	while (!atomic_load_explicit(&o->stop, memory_order_relaxed)) {
		struct lfe_tlsoff_job *j = NULL;
		for (uint32_t k = 0; k < n && j == NULL; k++) {
			uint32_t i = (next + k) % n;
			j = vq_pop(&o->w[i].req);
			if (j)
				next = i + 1;
		}
		if (j == NULL) {
			struct timespec ts = { 0, idle < 100 ? 20000 : idle < 2000 ? 200000 : 1000000 };
			idle += idle < 2000;
			nanosleep(&ts, NULL);
			continue;
		}
		idle = 0;
		if (atomic_load_explicit(&j->cancelled, memory_order_relaxed)) {
			j->rc = -1;   /* its connection is gone: no crypto for nobody */
			j->ssl_err = SSL_ERROR_SSL;
		} else {
			ERR_clear_error();
			j->rc = SSL_do_handshake(j->ssl);
			j->ssl_err = j->rc == 1 ? SSL_ERROR_NONE : SSL_get_error(j->ssl, j->rc);
			ERR_clear_error();
		}
		/* Cannot fail: the queue holds the worker's whole bound. */
		while (!vq_push(&o->w[j->worker].done, j))
			sched_yield();
	}
	return NULL;
}

static int spawn_pthread(pthread_t *th, const char *name, void *(*fn)(void *), void *arg)
{
	(void)name;
	return pthread_create(th, NULL, fn, arg);
}

struct lfe_tlsoff *lfe_tlsoff_new(const struct lfe_tlsoff_cfg *cfg, int *err)
{
	if (cfg->threads < 1 || cfg->threads > LFE_TLSOFF_MAX_THREADS || cfg->workers < 1 ||
	    cfg->workers > LFE_TLSOFF_MAX_WORKERS || cfg->queue < 1 || cfg->per_source < 1) {
		*err = -EINVAL;
		return NULL;
	}
	struct lfe_tlsoff *o = calloc(1, sizeof *o + cfg->workers * sizeof o->w[0]);
	if (o == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	o->cfg = *cfg;
	o->share = lfe_share_make(cfg->queue, cfg->share_pct ? cfg->share_pct : LFE_SHARE_PRESSURE_PCT,
				  cfg->per_source);
	atomic_init(&o->stop, 0);
	for (uint32_t i = 0; i < cfg->workers; i++) {
		struct tworker *tw = &o->w[i];
		/* Steps: one per admitted handshake (≤ queue) plus cancelled
		 * ones not back yet (admission waits while those fill a queue's
		 * worth), so an admitted handshake's step always has room. */
		tw->src = calloc(cfg->queue, sizeof *tw->src);
		if (tw->src == NULL || vq_init(&tw->req, 2 * cfg->queue) < 0 ||
		    vq_init(&tw->done, 2 * cfg->queue) < 0) {
			*err = -ENOMEM;
			lfe_tlsoff_free(o);
			return NULL;
		}
	}
	lfe_tlsoff_spawn_fn spawn = cfg->spawn ? cfg->spawn : spawn_pthread;
	for (uint32_t i = 0; i < cfg->threads; i++) {
		char name[16];
		snprintf(name, sizeof name, "lfe-tls-%u", (unsigned)(uint8_t)i);
		int rc = spawn(&o->th[i], name, crypto_thread, o);
		if (rc != 0) {
			*err = rc < 0 ? rc : -rc;
			lfe_tlsoff_free(o);
			return NULL;
		}
		o->n_started++;
	}
	return o;
}

void lfe_tlsoff_free(struct lfe_tlsoff *o)
{
	if (o == NULL)
		return;
	atomic_store(&o->stop, 1);
	for (uint32_t i = 0; i < o->n_started; i++)
		pthread_join(o->th[i], NULL);
	for (uint32_t i = 0; i < o->cfg.workers; i++) {
		struct tworker *tw = &o->w[i];
		struct lfe_tlsoff_job *j;
		for (struct vq *q = &tw->req; q != NULL; q = q == &tw->req ? &tw->done : NULL) {
			if (q->cell == NULL)
				continue;
			while ((j = vq_pop(q)) != NULL)
				if (atomic_load(&j->cancelled))
					j->release(j);
			free(q->cell);
		}
		free(tw->src);
	}
	free(o);
}

static struct src_count *src_find(struct tworker *tw, uint32_t addr)
{
	for (uint32_t i = 0; i < tw->n_src; i++)
		if (tw->src[i].addr == addr)
			return &tw->src[i];
	return NULL;
}

int lfe_tlsoff_admit(struct lfe_tlsoff *o, unsigned w, uint32_t src)
{
	struct tworker *tw = &o->w[w];
	struct src_count *sc = src_find(tw, src);

	if (tw->handshakes >= o->cfg.queue || tw->outstanding >= o->cfg.queue)
		return -ENOBUFS;
	if (!lfe_share_admit(&o->share, tw->handshakes, sc ? sc->n : 0, tw->n_src))
		return -EDQUOT;
	if (sc == NULL) {      /* n_src ≤ handshakes < queue: room */
		sc = &tw->src[tw->n_src++];
		sc->addr = src;
		sc->n = 0;
	}
	sc->n++;
	tw->handshakes++;
	return 0;
}

void lfe_tlsoff_leave(struct lfe_tlsoff *o, unsigned w, uint32_t src)
{
	struct tworker *tw = &o->w[w];
	struct src_count *sc = src_find(tw, src);
	if (sc == NULL || tw->handshakes == 0)
		return;
	tw->handshakes--;
	if (--sc->n == 0)
		*sc = tw->src[--tw->n_src];
}

int lfe_tlsoff_submit(struct lfe_tlsoff *o, unsigned w, struct lfe_tlsoff_job *job)
{
	struct tworker *tw = &o->w[w];

	if (tw->outstanding >= 2 * o->cfg.queue)
		return -ENOBUFS;
	job->worker = (uint16_t)w;
	job->rc = 0;
	job->ssl_err = SSL_ERROR_NONE;
	atomic_store_explicit(&job->cancelled, false, memory_order_relaxed);
	if (!vq_push(&tw->req, job))
		return -ENOBUFS;   /* cannot happen: the queue holds the bound */
	tw->outstanding++;
	return 0;
}

void lfe_tlsoff_cancel(struct lfe_tlsoff_job *job)
{
	atomic_store_explicit(&job->cancelled, true, memory_order_relaxed);
}

unsigned lfe_tlsoff_poll(struct lfe_tlsoff *o, unsigned w, lfe_tlsoff_done_fn done, void *ctx)
{
	if (o == NULL)
		return 0;
	struct tworker *tw = &o->w[w];
	unsigned n = 0;
	struct lfe_tlsoff_job *j;

	/* At most a queue's worth per call: a completion that arrives while
	 * done runs waits for the next iteration. */
	while (n < o->cfg.queue && (j = vq_pop(&tw->done)) != NULL) {
		n++;
		tw->outstanding--;
		if (atomic_load_explicit(&j->cancelled, memory_order_relaxed)) {
			tw->cancelled++;
			j->release(j);
		} else {
			done(ctx, j);
		}
	}
	return n;
}

uint32_t lfe_tlsoff_outstanding(const struct lfe_tlsoff *o, unsigned w)
{
	return o ? o->w[w].outstanding : 0;
}

uint64_t lfe_tlsoff_cancelled(const struct lfe_tlsoff *o, unsigned w)
{
	return o ? o->w[w].cancelled : 0;
}
