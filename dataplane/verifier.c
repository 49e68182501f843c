/* dataplane/verifier.c — slow password schemes ({CRYPT}, {PBKDF2-*},
 * {ARGON2}) verified off the poll cores (interface and rules in verifier.h).
 *
 * A worker takes a request object from the shared pool, fills in (worker,
 * connection handle, session token, client address, the bind job, a
 * password copy) and puts it on its own request ring (SP/MC). Verifier
 * threads (plain pthreads: they block and sleep, which an lcore must not)
 * visit the workers' rings round-robin and take one job from each in turn,
 * run it unless its connection cancelled it, wipe the secrets and put the
 * object on the worker's completion ring (MP/SC). The worker delivers the
 * verdict from its loop (lfe_verifier_poll) and returns the object to the
 * pool.
 *
 * Sizes: a worker has at most verify_queue / n_workers jobs outstanding
 * (checked before it takes an object), the pool holds n_workers times that
 * and a completion ring 2 × verify_queue: neither a pool get nor a ring
 * enqueue can fail within the bound.
 *
 * Per-worker bookkeeping (worker lcore only): two small open-addressing
 * tables, connection index → its outstanding job and client address →
 * number of outstanding jobs, each at most verify_queue keys in 2×–4× the
 * slots (linear probing, backward-shift deletion, so no tombstones pile up).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "net/share.h"
#include "dataplane/verifier.h"
#include "dataplane/worker.h"

#define VERIFY_MAX_THREADS 64u
#define VERDICT_DROPPED    0xffu

struct vreq {
	struct lfe_tcp_handle h;
	uint64_t token;
	uint64_t submit_us;             /* worker clock: the bind latency histogram */
	uint32_t src;
	uint16_t worker;
	uint8_t verdict;
	atomic_bool cancelled;          /* set by the worker, read by a thread */
	uint16_t pw_len;
	uint8_t pw[LFE_VERIFY_PW_MAX];
	struct lfe_bind_job job;
	struct lfe_pp_verdict pp;       /* job.pp, kept past the job's wipe */
	bool pp_timed;
	bool pp_expired;                /* the password matched, the policy refused */
};

/* uint32 key (never 0) → uintptr_t value. */
struct ktab {
	uint32_t *key;
	uintptr_t *val;
	uint32_t mask;
};

/* One worker's part: its request ring and outstanding jobs. */
struct vworker {
	struct rte_ring *req;
	uint32_t outstanding;
	struct ktab conns;              /* h.idx + 1 → struct vreq * */
	struct ktab srcs;               /* client address → jobs outstanding */
	uint32_t n_srcs;                /* keys in srcs */
} __rte_cache_aligned;

struct lfe_verifier {
	struct lfe_daemon *d;
	struct rte_mempool *pool;
	uint32_t per_worker;
	struct lfe_share share;         /* per source: share.h's rule on per_worker */
	atomic_int stop;
	uint32_t n_threads;
	pthread_t th[VERIFY_MAX_THREADS];
	bool started[VERIFY_MAX_THREADS];
	struct vworker vw[LFE_MAX_WORKERS];
};

/* ---- the small tables ---- */

static uint32_t kt_home(const struct ktab *t, uint32_t k)
{
	return (k * 2654435761u) >> 7 & t->mask;   /* Knuth's multiplicative hash */
}

static int kt_init(struct ktab *t, uint32_t keys, int socket)
{
	uint32_t n = rte_align32pow2(keys * 2u);
	t->mask = n - 1;
	t->key = rte_zmalloc_socket("lfe_vkey", sizeof(*t->key) * n, 0, socket);
	t->val = rte_zmalloc_socket("lfe_vval", sizeof(*t->val) * n, 0, socket);
	return t->key && t->val ? 0 : -ENOMEM;
}

static void kt_free(struct ktab *t)
{
	rte_free(t->key);
	rte_free(t->val);
}

/* Slot of k, or of the empty slot where it would go. */
static uint32_t kt_find(const struct ktab *t, uint32_t k)
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

/* ---- threads ---- */

static void *verifier_thread(void *arg)
{
	struct lfe_verifier *vf = arg;
	struct lfe_daemon *d = vf->d;
	uint32_t n = d->n_workers, next = 0;
	unsigned idle = 0;

	while (!atomic_load(&vf->stop)) {
		struct vreq *r = NULL;
		/* One job per worker ring in turn: fair across cores. */
		for (uint32_t k = 0; k < n && r == NULL; k++) {
			uint32_t i = (next + k) % n;
			if (rte_ring_mc_dequeue(vf->vw[i].req, (void **)&r) == 0)
				next = i + 1;
			else
				r = NULL;
		}
		if (r == NULL) {
			/* Back off to 200 µs, and to 1 ms once idle for a while: a
			 * verification costs milliseconds anyway, and an idle
			 * verifier should cost nothing. */
			struct timespec ts = { 0, idle < 100 ? 20000 : idle < 2000 ? 200000 : 1000000 };
			idle += idle < 2000;
			nanosleep(&ts, NULL);
			continue;
		}
		idle = 0;
		if (atomic_load_explicit(&r->cancelled, memory_order_relaxed))
			r->verdict = VERDICT_DROPPED;   /* its connection is gone: no hash */
		else {
			int jr = lfe_bind_job_run(&r->job, r->pw, r->pw_len, d->pw_flags);
			r->verdict = jr == 0 ? LFE_BE_OK : LFE_BE_INVALID;
			r->pp_expired = jr == -EKEYEXPIRED;
		}
		explicit_bzero(r->pw, sizeof(r->pw));
		r->pw_len = 0;
		lfe_bind_job_wipe(&r->job);
		/* Cannot fail: the ring holds more than the worker's bound. */
		while (rte_ring_mp_enqueue(d->w[r->worker]->done_ring, r) != 0) {
			if (atomic_load(&vf->stop)) {
				rte_mempool_put(vf->pool, r);
				break;
			}
			sched_yield();
		}
	}
	return NULL;
}

struct lfe_verifier *lfe_verifier_new(struct lfe_daemon *d, char *err, size_t errlen)
{
	struct lfe_verifier *vf = rte_zmalloc("lfe_verifier", sizeof(*vf), RTE_CACHE_LINE_SIZE);

	if (vf == NULL) {
		snprintf(err, errlen, "verifier: out of memory");
		return NULL;
	}
	vf->d = d;
	/* verify_queue is the daemon's total, shared equally: a core's share
	 * cannot be taken by another core's flood. */
	uint32_t nw = d->n_workers ? d->n_workers : 1;
	vf->per_worker = RTE_MAX(d->cfg.verify_queue / nw, 1u);
	vf->share = lfe_share_make(vf->per_worker, d->cfg.share_pressure_pct,
				   d->cfg.verify_per_source ? d->cfg.verify_per_source : 1);
	vf->pool = rte_mempool_create("lfe_vreq", nw * vf->per_worker, sizeof(struct vreq), 0, 0,
				      NULL, NULL, NULL, NULL, SOCKET_ID_ANY, 0);
	if (vf->pool == NULL) {
		snprintf(err, errlen, "verifier: pool of %u: %s", nw * vf->per_worker,
			 rte_strerror(rte_errno));
		lfe_verifier_free(vf);
		return NULL;
	}
	for (uint32_t i = 0; i < d->n_workers; i++) {
		char name[RTE_RING_NAMESIZE];
		struct vworker *vw = &vf->vw[i];
		int socket = d->w[i]->socket;
		snprintf(name, sizeof(name), "lfe_vreq_%u", i);
		vw->req = rte_ring_create(name, rte_align32pow2(vf->per_worker + 1), socket,
					  RING_F_SP_ENQ);
		if (vw->req == NULL || kt_init(&vw->conns, vf->per_worker, socket) < 0 ||
		    kt_init(&vw->srcs, vf->per_worker, socket) < 0) {
			snprintf(err, errlen, "verifier: worker %u queue of %u: %s", i, vf->per_worker,
				 vw->req ? "out of memory" : rte_strerror(rte_errno));
			lfe_verifier_free(vf);
			return NULL;
		}
	}
	vf->n_threads = RTE_MIN(d->cfg.verifier_threads, VERIFY_MAX_THREADS);
	/* Control threads: EAL runs them on the CPUs that no lcore polls, so
	 * a hash never steals cycles from a worker (on a machine where every
	 * CPU is an lcore they share the main lcore's CPUs). */
	for (uint32_t i = 0; i < vf->n_threads; i++) {
		char name[16];
		snprintf(name, sizeof(name), "lfe-verify-%u", (unsigned)(uint8_t)i);
		int rc = rte_ctrl_thread_create(&vf->th[i], name, NULL, verifier_thread, vf);
		if (rc != 0) {
			snprintf(err, errlen, "verifier: thread %u: %s", i, strerror(rc < 0 ? -rc : rc));
			lfe_verifier_free(vf);
			return NULL;
		}
		vf->started[i] = true;
	}
	return vf;
}

void lfe_verifier_free(struct lfe_verifier *vf)
{
	if (vf == NULL)
		return;
	atomic_store(&vf->stop, 1);
	for (uint32_t i = 0; i < vf->n_threads; i++)
		if (vf->started[i])
			pthread_join(vf->th[i], NULL);
	for (uint32_t i = 0; i < LFE_MAX_WORKERS; i++) {
		struct vworker *vw = &vf->vw[i];
		struct vreq *r;
		while (vw->req && rte_ring_dequeue(vw->req, (void **)&r) == 0) {
			explicit_bzero(r->pw, sizeof(r->pw));
			lfe_bind_job_wipe(&r->job);
			rte_mempool_put(vf->pool, r);
		}
		rte_ring_free(vw->req);
		kt_free(&vw->conns);
		kt_free(&vw->srcs);
	}
	rte_mempool_free(vf->pool);
	rte_free(vf);
}

int lfe_verifier_submit(struct lfe_verifier *vf, struct lfe_worker *w, struct lfe_tcp_handle h,
			uint32_t src, uint64_t token, const struct lfe_bind_job *job,
			const uint8_t *pw, size_t pw_len)
{
	if (vf == NULL)
		return -ENOBUFS;
	if (pw_len > LFE_VERIFY_PW_MAX)
		return -E2BIG;
	struct vworker *vw = &vf->vw[w->idx];
	uint32_t ci = kt_find(&vw->conns, h.idx + 1);
	if (vw->conns.key[ci] != 0) {
		const struct vreq *old = (const struct vreq *)vw->conns.val[ci];
		if (old->h.gen == h.gen) {
			w->st.verify_busy_conn++;
			return -EBUSY;
		}
		kt_del_at(&vw->conns, ci);   /* an old connection on this slot */
		ci = kt_find(&vw->conns, h.idx + 1);
	}
	uint32_t key = src ? src : 1;
	uint32_t si = kt_find(&vw->srcs, key);
	uint32_t mine = vw->srcs.key[si] != 0 ? (uint32_t)vw->srcs.val[si] : 0;
	if (!lfe_share_admit(&vf->share, vw->outstanding, mine, vw->n_srcs)) {
		w->st.verify_busy_source++;
		return -EDQUOT;
	}
	struct vreq *r;
	if (vw->outstanding >= vf->per_worker || rte_mempool_get(vf->pool, (void **)&r) != 0)
		return -ENOBUFS;
	r->h = h;
	r->token = token;
	r->submit_us = w->now_us;
	r->src = key;
	r->worker = (uint16_t)w->idx;
	atomic_store_explicit(&r->cancelled, false, memory_order_relaxed);
	r->job = *job;
	r->pp = job->pp;
	r->pp_timed = job->pp_timed;
	r->pp_expired = false;
	r->pw_len = (uint16_t)pw_len;
	memcpy(r->pw, pw, pw_len);
	if (rte_ring_sp_enqueue(vw->req, r) != 0) {   /* cannot happen: ring > bound */
		explicit_bzero(r->pw, pw_len);
		lfe_bind_job_wipe(&r->job);
		rte_mempool_put(vf->pool, r);
		return -ENOBUFS;
	}
	vw->outstanding++;
	vw->conns.key[ci] = h.idx + 1;
	vw->conns.val[ci] = (uintptr_t)r;
	vw->n_srcs += vw->srcs.key[si] == 0;
	vw->srcs.key[si] = key;
	vw->srcs.val[si]++;
	return 0;
}

void lfe_verifier_cancel(struct lfe_verifier *vf, struct lfe_worker *w, struct lfe_tcp_handle h)
{
	if (vf == NULL)
		return;
	struct vworker *vw = &vf->vw[w->idx];
	uint32_t ci = kt_find(&vw->conns, h.idx + 1);
	if (vw->conns.key[ci] == 0)
		return;
	struct vreq *r = (struct vreq *)vw->conns.val[ci];
	if (r->h.gen != h.gen)
		return;
	atomic_store_explicit(&r->cancelled, true, memory_order_relaxed);
	kt_del_at(&vw->conns, ci);
}

/* The job is back: release its place in every bound. */
static void settle(struct vworker *vw, struct vreq *r)
{
	vw->outstanding--;
	uint32_t ci = kt_find(&vw->conns, r->h.idx + 1);
	if (vw->conns.key[ci] != 0 && vw->conns.val[ci] == (uintptr_t)r)
		kt_del_at(&vw->conns, ci);
	uint32_t si = kt_find(&vw->srcs, r->src);
	if (vw->srcs.key[si] != 0 && --vw->srcs.val[si] == 0) {
		kt_del_at(&vw->srcs, si);
		vw->n_srcs--;
	}
}

unsigned lfe_verifier_poll(struct lfe_verifier *vf, struct lfe_worker *w, lfe_verify_done_fn done)
{
	struct vreq *rs[LFE_BURST];

	if (vf == NULL)
		return 0;
	unsigned n = rte_ring_sc_dequeue_burst(w->done_ring, (void **)rs, LFE_BURST, NULL);
	for (unsigned i = 0; i < n; i++) {
		struct vreq *r = rs[i];
		settle(&vf->vw[w->idx], r);
		if (r->verdict == VERDICT_DROPPED)
			w->st.verify_dropped_closed++;
		else {
			lfe_lat_hist_add(&w->bind_lat[LFE_LAT_OFFLOAD], (w->now_us - r->submit_us) * 1000u);
			/* The policy's verdict, for a password that matched only
			 * (a refused one says nothing about the account). */
			w->pp = r->pp;
			w->pp_timed = r->pp_timed;
			if (r->verdict != LFE_BE_OK && !r->pp_expired)
				w->pp = (struct lfe_pp_verdict){ LFE_PP_OK, -1, -1, 0 };
			done(w, r->h, r->token, (enum lfe_be_verdict)r->verdict);
		}
		rte_mempool_put(vf->pool, r);
	}
	return n;
}
