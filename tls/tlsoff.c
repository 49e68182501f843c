/* tls/tlsoff.c — handshake steps on crypto threads (tlsoff.h): a job kind
 * of the offload engine (common/offload.h), which owns the queues, the
 * threads, the bounds and cancel.
 *
 * A handshake is a holding of the engine (lfe_offload_admit .. _leave:
 * `queue` per worker and share.h's rule per source); a step is a job
 * without hold (the engine's queue is twice `queue`: the admitted
 * handshakes' steps and cancelled ones on their way back). The job's run
 * is SSL_do_handshake on the crypto thread; its release hands a cancelled
 * step to the connection's own release (the stream's TLS state).
 */
#include "tls/tlsoff.h"
#include "common/share.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

struct lfe_tlsoff {
	struct lfe_offload *eng;
	uint32_t queue;                 /* handshakes per worker: the most a poll hands back */
};

static struct lfe_tlsoff_job *job_of(struct lfe_offload_job *b)
{
	return (struct lfe_tlsoff_job *)((char *)b - offsetof(struct lfe_tlsoff_job, base));
}

/* On a crypto thread. */
static void step_run(struct lfe_offload_job *b)
{
	struct lfe_tlsoff_job *j = job_of(b);
	ERR_clear_error();
	j->rc = SSL_do_handshake(j->ssl);
	j->ssl_err = j->rc == 1 ? SSL_ERROR_NONE : SSL_get_error(j->ssl, j->rc);
	ERR_clear_error();
}

/* A cancelled step came back (or lfe_tlsoff_free found one still queued):
 * the connection's state goes. A step still queued at free whose
 * connection did not cancel it stays its connection's. */
static void step_release(struct lfe_offload_job *b)
{
	struct lfe_tlsoff_job *j = job_of(b);
	if (lfe_offload_job_cancelled(b))
		j->release(j);
}

struct lfe_tlsoff *lfe_tlsoff_new(const struct lfe_tlsoff_cfg *cfg, int *err)
{
	if (cfg->queue < 1 || cfg->queue > UINT32_MAX / 2) {
		*err = -EINVAL;
		return NULL;
	}
	struct lfe_tlsoff *o = calloc(1, sizeof *o);
	if (o == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	struct lfe_offload_cfg ec = {
		.name = "lfe-tls", .threads = cfg->threads, .workers = cfg->workers,
		.cap = cfg->queue, .queue = 2 * cfg->queue, .per_source = cfg->per_source,
		.share_pct = cfg->share_pct ? cfg->share_pct : LFE_SHARE_PRESSURE_PCT,
		.spawn = cfg->spawn,
	};
	o->queue = cfg->queue;
	o->eng = lfe_offload_new(&ec, err);
	if (o->eng == NULL) {
		free(o);
		return NULL;
	}
	return o;
}

void lfe_tlsoff_free(struct lfe_tlsoff *o)
{
	if (o == NULL)
		return;
	lfe_offload_free(o->eng);
	free(o);
}

int lfe_tlsoff_admit(struct lfe_tlsoff *o, unsigned w, uint32_t src)
{
	return lfe_offload_admit(o->eng, w, src);
}

void lfe_tlsoff_leave(struct lfe_tlsoff *o, unsigned w, uint32_t src)
{
	lfe_offload_leave(o->eng, w, src);
}

int lfe_tlsoff_submit(struct lfe_tlsoff *o, unsigned w, struct lfe_tlsoff_job *job)
{
	job->base = (struct lfe_offload_job){ .run = step_run, .release = step_release };
	job->rc = 0;
	job->ssl_err = SSL_ERROR_NONE;
	return lfe_offload_submit(o->eng, w, &job->base);
}

void lfe_tlsoff_cancel(struct lfe_tlsoff_job *job)
{
	lfe_offload_cancel(&job->base);
}

struct poll_ctx {
	lfe_tlsoff_done_fn done;
	void *ctx;
};

static void step_done(void *arg, struct lfe_offload_job *b)
{
	struct poll_ctx *pc = arg;
	pc->done(pc->ctx, job_of(b));
}

unsigned lfe_tlsoff_poll(struct lfe_tlsoff *o, unsigned w, lfe_tlsoff_done_fn done, void *ctx)
{
	if (o == NULL)
		return 0;
	struct poll_ctx pc = { done, ctx };
	return lfe_offload_poll(o->eng, w, o->queue, step_done, &pc);
}

uint32_t lfe_tlsoff_outstanding(const struct lfe_tlsoff *o, unsigned w)
{
	return o ? lfe_offload_outstanding(o->eng, w) : 0;
}

uint64_t lfe_tlsoff_cancelled(const struct lfe_tlsoff *o, unsigned w)
{
	return o ? lfe_offload_cancelled(o->eng, w) : 0;
}

void lfe_tlsoff_stats(const struct lfe_tlsoff *o, unsigned w, struct lfe_tlsoff_stats *st)
{
	st->cancelled = lfe_tlsoff_cancelled(o, w);
	st->queue_depth = lfe_tlsoff_outstanding(o, w);
}

#define T struct lfe_tlsoff_stats
static const struct lfe_ctr tlsoff_rows[] = {
	LFE_CTR_ROW(T, cancelled, "tls_cancelled", LFE_CTR_C, "TLS offload jobs cancelled: their connection closed."),
	LFE_CTR_ROW(T, queue_depth, "tls_queue_depth", LFE_CTR_G, "TLS offload jobs outstanding now."),
};
#undef T
const struct lfe_ctr_table lfe_tlsoff_ctrs = LFE_CTR_TABLE("tlsoff", struct lfe_tlsoff_stats, tlsoff_rows);
