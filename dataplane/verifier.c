/* dataplane/verifier.c — slow password schemes ({CRYPT}, {PBKDF2-*},
 * {ARGON2}) verified off the poll cores.
 *
 * A worker whose inline check returned -EAGAIN takes a request object from
 * a shared rte_mempool, fills in (worker, connection handle, session token,
 * normalized DN, password copy) and puts it on the request ring (MP/MC).
 * Verifier threads (plain pthreads: they block and sleep, which an lcore
 * must not) take requests, look the entry up in their own store reader, run
 * lfe_pw_verify on its slow userPassword values, wipe the password copy and
 * put the object on the worker's completion ring (MP/SC). The worker
 * delivers the verdict from its loop (lfe_verifier_poll) and returns the
 * object to the pool. The pool is no larger than the completion rings, so
 * a completion enqueue can never fail.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "backend/acctlock.h"
#include "backend/pwscheme.h"
#include "ldap/dn.h"
#include "verifier.h"
#include "worker.h"

#define VERIFY_PW_MAX  512u
#define VERIFY_MAX_THREADS 64u

struct vreq {
	struct lfe_tcp_handle h;
	uint64_t token;
	uint16_t worker;
	uint8_t verdict;
	uint16_t ndn_len, pw_len;
	char ndn[LFE_DN_MAX + 1];
	uint8_t pw[VERIFY_PW_MAX];
};

struct lfe_verifier {
	struct lfe_daemon *d;
	struct rte_mempool *pool;
	struct rte_ring *req;
	atomic_int stop;
	uint32_t n_threads;
	pthread_t th[VERIFY_MAX_THREADS];
	bool started[VERIFY_MAX_THREADS];
};

static void wipe(void *p, size_t n)
{
	explicit_bzero(p, n);
}

static enum lfe_be_verdict verify_one(struct lfe_store_reader *rd, struct vreq *r, unsigned flags)
{
	struct lfe_entry_view e;
	struct lfe_bytes vals[16];
	enum lfe_be_verdict v = LFE_BE_INVALID;

	if (lfe_store_reader_renew(rd) != 0 || lfe_store_get(rd, r->ndn, r->ndn_len, &e) != 0)
		return LFE_BE_INVALID;
	uint32_t n = lfe_entry_get(&e, "userPassword", 12, vals, 16);
	for (uint32_t i = 0; i < n && i < 16; i++) {
		/* Fast values were already refused inline. */
		if (lfe_pw_class_of((const char *)vals[i].p, vals[i].len) != LFE_PW_SLOW)
			continue;
		if (lfe_pw_verify((const char *)vals[i].p, vals[i].len, r->pw, r->pw_len, flags) == 0) {
			v = lfe_acct_locked(e.rec, e.rec_len, time(NULL), 0) ? LFE_BE_INVALID : LFE_BE_OK;
			break;
		}
	}
	return v;
}

static void *verifier_thread(void *arg)
{
	struct lfe_verifier *vf = arg;
	struct lfe_daemon *d = vf->d;
	struct lfe_store_reader *rd = lfe_store_reader_new(d->store);
	unsigned idle = 0;

	while (!atomic_load(&vf->stop)) {
		struct vreq *r;
		if (rte_ring_mc_dequeue(vf->req, (void **)&r) != 0) {
			/* Back off to 200 µs, and to 1 ms once idle for a while: a
			 * verification costs milliseconds anyway, and an idle
			 * verifier should cost nothing. */
			struct timespec ts = { 0, idle < 100 ? 20000 : idle < 2000 ? 200000 : 1000000 };
			idle += idle < 2000;
			nanosleep(&ts, NULL);
			continue;
		}
		idle = 0;
		r->verdict = (uint8_t)(rd ? verify_one(rd, r, d->pw_flags) : LFE_BE_INVALID);
		wipe(r->pw, sizeof(r->pw));
		r->pw_len = 0;
		while (rte_ring_mp_enqueue(d->w[r->worker]->done_ring, r) != 0) {
			if (atomic_load(&vf->stop)) {
				rte_mempool_put(vf->pool, r);
				break;
			}
			sched_yield();
		}
	}
	lfe_store_reader_free(rd);
	return NULL;
}

struct lfe_verifier *lfe_verifier_new(struct lfe_daemon *d, char *err, size_t errlen)
{
	struct lfe_verifier *vf = rte_zmalloc("lfe_verifier", sizeof(*vf), 0);

	if (vf == NULL) {
		snprintf(err, errlen, "verifier: out of memory");
		return NULL;
	}
	vf->d = d;
	uint32_t q = rte_align32pow2(d->cfg.verify_queue);
	/* Pool ≤ ring sizes: neither the request ring nor a completion ring
	 * (2 × verify_queue) can ever be full when an object is put. */
	vf->pool = rte_mempool_create("lfe_vreq", q - 1, sizeof(struct vreq), 0, 0, NULL, NULL, NULL,
				      NULL, SOCKET_ID_ANY, 0);
	vf->req = rte_ring_create("lfe_vreq_ring", q, SOCKET_ID_ANY, 0);
	if (vf->pool == NULL || vf->req == NULL) {
		snprintf(err, errlen, "verifier: queue of %u: %s", q, rte_strerror(rte_errno));
		lfe_verifier_free(vf);
		return NULL;
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
	if (vf->req) {
		struct vreq *r;
		while (rte_ring_dequeue(vf->req, (void **)&r) == 0) {
			wipe(r->pw, sizeof(r->pw));
			rte_mempool_put(vf->pool, r);
		}
	}
	rte_ring_free(vf->req);
	rte_mempool_free(vf->pool);
	rte_free(vf);
}

int lfe_verifier_submit(struct lfe_verifier *vf, struct lfe_worker *w, struct lfe_tcp_handle h,
			uint64_t token, const char *ndn, size_t ndn_len, const uint8_t *pw, size_t pw_len)
{
	struct vreq *r;

	if (vf == NULL)
		return -ENOBUFS;
	if (pw_len > VERIFY_PW_MAX || ndn_len > LFE_DN_MAX)
		return -E2BIG;
	if (rte_mempool_get(vf->pool, (void **)&r) != 0)
		return -ENOBUFS;
	r->h = h;
	r->token = token;
	r->worker = (uint16_t)w->idx;
	r->ndn_len = (uint16_t)ndn_len;
	memcpy(r->ndn, ndn, ndn_len);
	r->ndn[ndn_len] = '\0';
	r->pw_len = (uint16_t)pw_len;
	memcpy(r->pw, pw, pw_len);
	if (rte_ring_mp_enqueue(vf->req, r) != 0) {
		wipe(r->pw, pw_len);
		rte_mempool_put(vf->pool, r);
		return -ENOBUFS;
	}
	return 0;
}

unsigned lfe_verifier_poll(struct lfe_verifier *vf, struct lfe_worker *w, lfe_verify_done_fn done)
{
	struct vreq *rs[LFE_BURST];

	if (vf == NULL)
		return 0;
	unsigned n = rte_ring_sc_dequeue_burst(w->done_ring, (void **)rs, LFE_BURST, NULL);
	for (unsigned i = 0; i < n; i++) {
		struct vreq *r = rs[i];
		done(w, r->h, r->token, (enum lfe_be_verdict)r->verdict);
		rte_mempool_put(vf->pool, r);
	}
	return n;
}
