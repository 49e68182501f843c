/* dataplane/verifier.c — slow password schemes ({CRYPT}, {PBKDF2-*},
 * {ARGON2}) verified off the poll cores (interface and rules in verifier.h):
 * a job kind of the offload engine (common/offload.h), which owns the
 * queues, the threads, the bounds and cancel.
 *
 * A worker takes a request object from its own free list, fills in (the
 * connection handle, session token, client address, the bind job, a
 * password copy) and submits it as a holding job (one per connection, by
 * the key below; its source's share of the worker's jobs) to the engine.
 * An engine thread (an EAL control thread: it blocks and sleeps, which an
 * lcore must not) runs it with lfe_bind_job_run, wipes the secrets and
 * posts it back; the worker delivers the verdict from its loop
 * (lfe_verifier_poll) and returns the object to its free list. A job
 * cancelled before a thread started it is not run; its secrets are wiped
 * by its release, on the worker at that poll (or at lfe_verifier_free).
 *
 * Sizes: a worker has at most verify_queue / n_workers jobs outstanding
 * (the engine's cap and queue); its free list holds one object more, the
 * one a submit fills before the engine may refuse it. Everything is
 * allocated by lfe_verifier_new: no heap after it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "common/offload.h"
#include "dataplane/verifier.h"

#define VERIFY_MAX_THREADS LFE_OFFLOAD_MAX_THREADS
#define LFE_VERIFY_BURST 32u   /* completions taken per poll (a worker burst) */

struct lfe_verifier;

struct vreq {
	struct lfe_offload_job base;    /* first: a job is its vreq */
	struct lfe_verifier *vf;
	struct lfe_tcp_handle h;
	uint64_t token;
	uint64_t submit_us;             /* worker clock: the bind latency histogram */
	uint8_t verdict;
	bool pp_timed;
	bool pp_expired;                /* the password matched, the policy refused */
	uint16_t pw_len;
	uint8_t pw[LFE_VERIFY_PW_MAX];
	struct lfe_bind_job job;
	struct lfe_pp_verdict pp;       /* job.pp, kept past the job's wipe */
};

/* One worker's request objects (its lcore only, and free's thread). */
struct vworker {
	struct vreq *req;               /* per_worker + 1 of them */
	struct vreq **free;             /* a stack */
	uint32_t n_free;
	uint64_t dropped_closed;        /* cancelled jobs back unhashed */
};

struct lfe_verifier {
	struct lfe_offload *eng;
	unsigned pw_flags;
	uint32_t per_worker;
	uint32_t n_workers;
	bool freeing;                   /* releases now are free's, not the worker's */
	struct vworker vw[LFE_OFFLOAD_MAX_WORKERS];
};

/* The engine's per-connection key: the handle's slot and generation
 * (connection slots are table indices, far below 2^32 - 1: never 0). */
static uint64_t conn_key(struct lfe_tcp_handle h)
{
	return ((uint64_t)h.gen << 32) + h.idx + 1;
}

static void wipe(struct vreq *r)
{
	explicit_bzero(r->pw, sizeof(r->pw));
	r->pw_len = 0;
	lfe_bind_job_wipe(&r->job);
}

/* On an engine thread. */
static void vreq_run(struct lfe_offload_job *b)
{
	struct vreq *r = (struct vreq *)b;
	int jr = lfe_bind_job_run(&r->job, r->pw, r->pw_len, r->vf->pw_flags);
	r->verdict = jr == 0 ? LFE_BE_OK : LFE_BE_INVALID;
	r->pp_expired = jr == -EKEYEXPIRED;
	wipe(r);
}

/* Cancelled and back (the worker's lcore), or still queued at free. */
static void vreq_release(struct lfe_offload_job *b)
{
	struct vreq *r = (struct vreq *)b;
	struct vworker *vw = &r->vf->vw[b->worker];
	wipe(r);
	vw->free[vw->n_free++] = r;
	if (!r->vf->freeing)
		vw->dropped_closed++;
}

/* Control threads: EAL runs them on the CPUs that no lcore polls, so a
 * hash never steals cycles from a worker (on a machine where every CPU is
 * an lcore they share the main lcore's CPUs). */
int lfe_ctrl_spawn(pthread_t *th, const char *name, void *(*fn)(void *), void *arg)
{
	int rc = rte_ctrl_thread_create(th, name, NULL, fn, arg);
	return rc < 0 ? -rc : rc;
}

struct lfe_verifier *lfe_verifier_new(const struct lfe_verifier_cfg *cfg, char *err, size_t errlen)
{
	if (cfg->workers > LFE_OFFLOAD_MAX_WORKERS) {
		snprintf(err, errlen, "verifier: %u workers, at most %u", cfg->workers,
			 LFE_OFFLOAD_MAX_WORKERS);
		return NULL;
	}
	struct lfe_verifier *vf = calloc(1, sizeof(*vf));
	if (vf == NULL) {
		snprintf(err, errlen, "verifier: out of memory");
		return NULL;
	}
	vf->pw_flags = cfg->pw_flags;
	/* verify_queue is the daemon's total, shared equally: a core's share
	 * cannot be taken by another core's flood. */
	uint32_t nw = cfg->workers ? cfg->workers : 1;
	vf->n_workers = nw;
	vf->per_worker = cfg->queue / nw ? cfg->queue / nw : 1;
	for (uint32_t i = 0; i < nw; i++) {
		struct vworker *vw = &vf->vw[i];
		uint32_t n = vf->per_worker + 1;
		vw->req = calloc(n, sizeof(*vw->req));
		vw->free = calloc(n, sizeof(*vw->free));
		if (vw->req == NULL || vw->free == NULL) {
			snprintf(err, errlen, "verifier: worker %u queue of %u: out of memory", i,
				 vf->per_worker);
			lfe_verifier_free(vf);
			return NULL;
		}
		for (uint32_t k = 0; k < n; k++) {
			vw->req[k].vf = vf;
			vw->free[vw->n_free++] = &vw->req[n - 1 - k];
		}
	}
	uint32_t threads = cfg->threads;
	struct lfe_offload_cfg ec = {
		.name = "lfe-verify",
		.threads = threads < 1 ? 1 : threads > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : threads,
		.workers = nw, .cap = vf->per_worker, .queue = vf->per_worker,
		.per_source = cfg->per_source ? cfg->per_source : 1,
		.share_pct = cfg->share_pct > 100 ? 100 : cfg->share_pct,
		.spawn = lfe_ctrl_spawn,
	};
	int rc = 0;
	vf->eng = lfe_offload_new(&ec, &rc);
	if (vf->eng == NULL) {
		snprintf(err, errlen, "verifier: %u threads, %u workers: %s", ec.threads, nw,
			 strerror(-rc));
		lfe_verifier_free(vf);
		return NULL;
	}
	return vf;
}

void lfe_verifier_free(struct lfe_verifier *vf)
{
	if (vf == NULL)
		return;
	vf->freeing = true;
	lfe_offload_free(vf->eng);   /* joins, then releases (wipes) what is queued */
	for (uint32_t i = 0; i < vf->n_workers; i++) {
		struct vworker *vw = &vf->vw[i];
		for (uint32_t k = 0; vw->req && k <= vf->per_worker; k++)
			wipe(&vw->req[k]);
		free(vw->req);
		free(vw->free);
	}
	free(vf);
}

int lfe_verifier_submit(struct lfe_verifier *vf, unsigned worker, uint64_t now_us,
			struct lfe_tcp_handle h, uint32_t src, uint64_t token,
			const struct lfe_bind_job *job, const uint8_t *pw, size_t pw_len)
{
	if (vf == NULL)
		return -ENOBUFS;
	if (pw_len > LFE_VERIFY_PW_MAX)
		return -E2BIG;
	struct vworker *vw = &vf->vw[worker];
	if (vw->n_free == 0)
		return -ENOBUFS;   /* cannot happen: one more than the bound */
	struct vreq *r = vw->free[vw->n_free - 1];
	r->base = (struct lfe_offload_job){ .run = vreq_run, .release = vreq_release,
					    .key = conn_key(h), .src = src ? src : 1, .hold = true };
	r->h = h;
	r->token = token;
	r->submit_us = now_us;
	r->job = *job;
	r->pp = job->pp;
	r->pp_timed = job->pp_timed;
	r->pp_expired = false;
	r->pw_len = (uint16_t)pw_len;
	memcpy(r->pw, pw, pw_len);
	int rc = lfe_offload_submit(vf->eng, worker, &r->base);
	/* A source over its share is told so (and counted) even when the
	 * worker is full too. */
	if (rc == -ENOBUFS && lfe_offload_over_share(vf->eng, worker, r->base.src))
		rc = -EDQUOT;
	if (rc < 0) {
		wipe(r);
		return rc;
	}
	vw->n_free--;
	return 0;
}

void lfe_verifier_cancel(struct lfe_verifier *vf, unsigned worker, struct lfe_tcp_handle h)
{
	if (vf == NULL)
		return;
	lfe_offload_cancel_key(vf->eng, worker, conn_key(h));
}

struct poll_ctx {
	struct vworker *vw;
	lfe_verify_done_fn done;
	void *arg;
};

static void vreq_done(void *arg, struct lfe_offload_job *b)
{
	const struct poll_ctx *pc = arg;
	struct vreq *r = (struct vreq *)b;
	struct lfe_verify_result res = {
		.h = r->h, .token = r->token, .v = (enum lfe_be_verdict)r->verdict,
		.pp = r->pp, .pp_timed = r->pp_timed, .submit_us = r->submit_us,
	};
	/* The policy's verdict, for a password that matched only (a refused
	 * one says nothing about the account). */
	if (res.v != LFE_BE_OK && !r->pp_expired)
		res.pp = (struct lfe_pp_verdict){ LFE_PP_OK, -1, -1, 0 };
	/* Back on the free list before done, which may submit the next bind. */
	pc->vw->free[pc->vw->n_free++] = r;
	pc->done(pc->arg, &res);
}

unsigned lfe_verifier_poll(struct lfe_verifier *vf, unsigned worker, lfe_verify_done_fn done, void *arg)
{
	if (vf == NULL || vf->vw[worker].n_free > vf->per_worker)
		return 0;   /* every object on the free list: nothing out, nothing to take */
	struct poll_ctx pc = { &vf->vw[worker], done, arg };
	return lfe_offload_poll(vf->eng, worker, LFE_VERIFY_BURST, vreq_done, &pc);
}

uint64_t lfe_verifier_dropped_closed(const struct lfe_verifier *vf, unsigned worker)
{
	return vf ? vf->vw[worker].dropped_closed : 0;
}
