/* common/offload.c — jobs on engine threads (interface and rules in
 * offload.h).
 *
 * Each worker has a request queue (it alone produces; the threads consume)
 * and a completion queue (the threads produce; it alone consumes), both
 * Vyukov bounded array queues: a sequence number per cell, one CAS per
 * operation, no lock. Both hold at least `queue` jobs and a worker never
 * has more out (counted from submit until its poll takes the job back), so
 * neither push can fail within the bound.
 *
 * Per-worker bookkeeping (worker thread only): the counts, and two small
 * open-addressing tables, key → its job and client address → holdings,
 * at most `queue` and `cap` keys in 2×–4× the slots (linear probing,
 * backward-shift deletion, so no tombstones pile up).
 */
#include "common/offload.h"
#include "common/share.h"

#include <errno.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- a small table: uint64 key (never 0) → uintptr_t value ---- */

struct ktab {
	uint64_t *key;
	uintptr_t *val;
	uint32_t mask;
	unsigned shift;
};

static int kt_init(struct ktab *t, uint32_t keys)
{
	uint32_t n = 4;
	unsigned bits = 2;
	while (n < 2u * keys) {
		n <<= 1;
		bits++;
	}
	t->mask = n - 1;
	t->shift = 64 - bits;
	t->key = calloc(n, sizeof *t->key);
	t->val = calloc(n, sizeof *t->val);
	return t->key && t->val ? 0 : -ENOMEM;
}

static uint32_t kt_home(const struct ktab *t, uint64_t k)
{
	return (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> t->shift);   /* Fibonacci hashing */
}

/* Slot of k, or of the empty slot where it would go. */
static uint32_t kt_find(const struct ktab *t, uint64_t k)
{
	uint32_t i = kt_home(t, k);
	while (t->key[i] != 0 && t->key[i] != k)
		i = (i + 1) & t->mask;
	return i;
}

static void kt_del_at(struct ktab *t, uint32_t i)
{
	uint32_t j = i;
	for (;;) {
		j = (j + 1) & t->mask;
		if (t->key[j] == 0)
			break;
		uint32_t h = kt_home(t, t->key[j]);
		/* Move j back into the hole at i unless its home lies in (i, j]. */
		bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
		if (!stays) {
			t->key[i] = t->key[j];
			t->val[i] = t->val[j];
			i = j;
		}
	}
	t->key[i] = 0;
	t->val[i] = 0;
}

/* ---- the engine ---- */

struct oworker {
	struct vq req, done;
	uint32_t out;                   /* jobs submitted, not yet polled back */
	uint32_t held;                  /* holdings */
	uint32_t n_src;                 /* keys in srcs */
	uint64_t cancelled;
	struct ktab keys;               /* job->key → the job (out, not cancelled) */
	struct ktab srcs;               /* client address + 1 → holdings */
};

struct lfe_offload {
	struct lfe_offload_cfg cfg;
	char name[12];
	struct lfe_share share;         /* holdings per source (share.h) */
	atomic_int stop;
	uint32_t n_started;
	pthread_t th[LFE_OFFLOAD_MAX_THREADS];
	struct oworker w[];
};

static void *engine_thread(void *arg)
{
	struct lfe_offload *o = arg;
	uint32_t n = o->cfg.workers, next = 0;
	unsigned idle = 0;

	while (!atomic_load_explicit(&o->stop, memory_order_relaxed)) {
		struct lfe_offload_job *j = NULL;
		/* One job per worker queue in turn: fair across workers. */
		for (uint32_t k = 0; k < n && j == NULL; k++) {
			uint32_t i = (next + k) % n;
			j = vq_pop(&o->w[i].req);
			if (j)
				next = i + 1;
		}
		if (j == NULL) {
			/* Back off to 200 µs, and to 1 ms once idle for a while: a
			 * job costs tens of µs to milliseconds anyway, and an idle
			 * engine should cost nothing. */
			struct timespec ts = { 0, idle < 100 ? 20000 : idle < 2000 ? 200000 : 1000000 };
			idle += idle < 2000;
			nanosleep(&ts, NULL);
			continue;
		}
		idle = 0;
		if (!atomic_load_explicit(&j->cancelled, memory_order_relaxed))
			j->run(j);   /* else its connection is gone: no work for nobody */
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

struct lfe_offload *lfe_offload_new(const struct lfe_offload_cfg *cfg, int *err)
{
	if (cfg->threads < 1 || cfg->threads > LFE_OFFLOAD_MAX_THREADS || cfg->workers < 1 ||
	    cfg->workers > LFE_OFFLOAD_MAX_WORKERS || cfg->cap < 1 || cfg->queue < cfg->cap ||
	    cfg->per_source < 1 || cfg->share_pct > 100) {
		*err = -EINVAL;
		return NULL;
	}
	struct lfe_offload *o = calloc(1, sizeof *o + cfg->workers * sizeof o->w[0]);
	if (o == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	o->cfg = *cfg;
	snprintf(o->name, sizeof o->name, "%s", cfg->name ? cfg->name : "lfe-off");
	o->share = lfe_share_make(cfg->cap, cfg->share_pct, cfg->per_source);
	atomic_init(&o->stop, 0);
	for (uint32_t i = 0; i < cfg->workers; i++) {
		struct oworker *ow = &o->w[i];
		if (vq_init(&ow->req, cfg->queue) < 0 || vq_init(&ow->done, cfg->queue) < 0 ||
		    kt_init(&ow->keys, cfg->queue) < 0 || kt_init(&ow->srcs, cfg->cap) < 0) {
			*err = -ENOMEM;
			lfe_offload_free(o);
			return NULL;
		}
	}
	lfe_offload_spawn_fn spawn = cfg->spawn ? cfg->spawn : spawn_pthread;
	for (uint32_t i = 0; i < cfg->threads; i++) {
		char name[16];
		snprintf(name, sizeof name, "%s-%u", o->name, (unsigned)(uint8_t)i);
		int rc = spawn(&o->th[i], name, engine_thread, o);
		if (rc != 0) {
			*err = rc < 0 ? rc : -rc;
			lfe_offload_free(o);
			return NULL;
		}
		o->n_started++;
	}
	return o;
}

void lfe_offload_free(struct lfe_offload *o)
{
	if (o == NULL)
		return;
	atomic_store(&o->stop, 1);
	for (uint32_t i = 0; i < o->n_started; i++)
		pthread_join(o->th[i], NULL);
	for (uint32_t i = 0; i < o->cfg.workers; i++) {
		struct oworker *ow = &o->w[i];
		struct lfe_offload_job *j;
		for (struct vq *q = &ow->req; q != NULL; q = q == &ow->req ? &ow->done : NULL) {
			if (q->cell == NULL)
				continue;
			while ((j = vq_pop(q)) != NULL)
				j->release(j);
			free(q->cell);
		}
		free(ow->keys.key);
		free(ow->keys.val);
		free(ow->srcs.key);
		free(ow->srcs.val);
	}
	free(o);
}

/* May src take a holding on ow? 0, -ENOBUFS or -EDQUOT; *si: its slot. */
static int may_hold(const struct lfe_offload *o, const struct oworker *ow, uint32_t src,
		    uint32_t *si)
{
	if (ow->held >= o->cfg.cap || ow->out >= o->cfg.cap)
		return -ENOBUFS;
	*si = kt_find(&ow->srcs, (uint64_t)src + 1);
	uint32_t mine = ow->srcs.key[*si] != 0 ? (uint32_t)ow->srcs.val[*si] : 0;
	return lfe_share_admit(&o->share, ow->held, mine, ow->n_src) ? 0 : -EDQUOT;
}

bool lfe_offload_over_share(const struct lfe_offload *o, unsigned w, uint32_t src)
{
	const struct oworker *ow = &o->w[w];
	uint32_t si = kt_find(&ow->srcs, (uint64_t)src + 1);
	uint32_t mine = ow->srcs.key[si] != 0 ? (uint32_t)ow->srcs.val[si] : 0;
	return !lfe_share_admit(&o->share, ow->held, mine, ow->n_src);
}

static void hold_at(struct oworker *ow, uint32_t si, uint32_t src)
{
	ow->n_src += ow->srcs.key[si] == 0;
	ow->srcs.key[si] = (uint64_t)src + 1;
	ow->srcs.val[si]++;
	ow->held++;
}

int lfe_offload_admit(struct lfe_offload *o, unsigned w, uint32_t src)
{
	struct oworker *ow = &o->w[w];
	uint32_t si;
	int rc = may_hold(o, ow, src, &si);
	if (rc == 0)
		hold_at(ow, si, src);
	return rc;
}

void lfe_offload_leave(struct lfe_offload *o, unsigned w, uint32_t src)
{
	struct oworker *ow = &o->w[w];
	uint32_t si = kt_find(&ow->srcs, (uint64_t)src + 1);
	if (ow->srcs.key[si] == 0 || ow->held == 0)
		return;
	ow->held--;
	if (--ow->srcs.val[si] == 0) {
		kt_del_at(&ow->srcs, si);
		ow->n_src--;
	}
}

int lfe_offload_submit(struct lfe_offload *o, unsigned w, struct lfe_offload_job *job)
{
	struct oworker *ow = &o->w[w];
	uint32_t ki = 0, si = 0;

	if (job->key != 0) {
		ki = kt_find(&ow->keys, job->key);
		if (ow->keys.key[ki] != 0)
			return -EBUSY;
	}
	if (ow->out >= o->cfg.queue)
		return -ENOBUFS;
	if (job->hold) {
		int rc = may_hold(o, ow, job->src, &si);
		if (rc < 0)
			return rc;
	}
	job->worker = (uint16_t)w;
	job->o = o;
	atomic_store_explicit(&job->cancelled, false, memory_order_relaxed);
	if (!vq_push(&ow->req, job))
		return -ENOBUFS;   /* cannot happen: the queue holds the bound */
	ow->out++;
	if (job->hold)
		hold_at(ow, si, job->src);
	if (job->key != 0) {
		ow->keys.key[ki] = job->key;
		ow->keys.val[ki] = (uintptr_t)job;
	}
	return 0;
}

/* Drop job's key from ow's table, if the table still names it. */
static void unkey(struct oworker *ow, const struct lfe_offload_job *job)
{
	if (job->key == 0)
		return;
	uint32_t ki = kt_find(&ow->keys, job->key);
	if (ow->keys.key[ki] != 0 && ow->keys.val[ki] == (uintptr_t)job)
		kt_del_at(&ow->keys, ki);
}

void lfe_offload_cancel(struct lfe_offload_job *job)
{
	if (lfe_offload_job_cancelled(job))
		return;
	unkey(&job->o->w[job->worker], job);
	atomic_store_explicit(&job->cancelled, true, memory_order_relaxed);
}

void lfe_offload_cancel_key(struct lfe_offload *o, unsigned w, uint64_t key)
{
	struct oworker *ow = &o->w[w];
	if (key == 0)
		return;
	uint32_t ki = kt_find(&ow->keys, key);
	if (ow->keys.key[ki] == 0)
		return;
	struct lfe_offload_job *job = (struct lfe_offload_job *)ow->keys.val[ki];
	kt_del_at(&ow->keys, ki);
	atomic_store_explicit(&job->cancelled, true, memory_order_relaxed);
}

unsigned lfe_offload_poll(struct lfe_offload *o, unsigned w, unsigned max, lfe_offload_done_fn done,
			  void *ctx)
{
	struct oworker *ow = &o->w[w];
	unsigned n = 0;
	struct lfe_offload_job *j;

	/* At most max per call: a completion that arrives while done runs
	 * waits for the next iteration. */
	while (n < max && (j = vq_pop(&ow->done)) != NULL) {
		n++;
		ow->out--;
		if (j->hold)
			lfe_offload_leave(o, w, j->src);
		if (lfe_offload_job_cancelled(j)) {
			ow->cancelled++;
			j->release(j);
		} else {
			unkey(ow, j);
			done(ctx, j);
		}
	}
	return n;
}

uint32_t lfe_offload_outstanding(const struct lfe_offload *o, unsigned w)
{
	return o->w[w].out;
}

uint32_t lfe_offload_held(const struct lfe_offload *o, unsigned w)
{
	return o->w[w].held;
}

uint64_t lfe_offload_cancelled(const struct lfe_offload *o, unsigned w)
{
	return o->w[w].cancelled;
}
