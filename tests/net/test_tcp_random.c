/* tests/tcp/test_tcp_random.c — two lfe_tcp stacks, a client (active opens)
 * and a server (listening), joined by two lfe_impair stages that drop,
 * duplicate and reorder segments. Each session: the client sends a request
 * of random size, the server answers with a transformed copy, the client
 * checks every byte and closes. All sessions of every seed must complete,
 * within a bounded simulated time, and both tables must drain.
 */
#include "net/impair.h"
#include "net/tcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CADDR 0x0a000001u
#define SADDR 0x0a000002u
#define SPORT 389
#define SESSIONS 500
#define CONCURRENT 32
#define MAX_REQ 6000
#define STEP_US 200
#define SIM_LIMIT_US (900ull * 1000000)

struct item {
	struct lfe_tcp_seg seg;
	uint8_t data[];
};

struct queue {
	struct item *v[4096];
	uint32_t n;
	uint64_t overflow;
};

struct sess {          /* client side, one per session */
	uint32_t id, req_len, got;
	bool verified;
	uint8_t req[MAX_REQ];
	uint8_t rsp[MAX_REQ];
};

struct srv {           /* server side, one per connection */
	uint32_t need, have;
	bool replied;
	uint8_t buf[MAX_REQ + 4];
};

struct world {
	struct lfe_tcp *cli, *srv;
	struct queue c2s, s2c;
	uint64_t rng;
	struct sess *sess;
	uint32_t started, completed, failed, srv_open, srv_closed;
	uint64_t now;
};

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void push(struct queue *q, const struct lfe_tcp_seg *s)
{
	if (q->n == sizeof(q->v) / sizeof(q->v[0])) {
		q->overflow++;
		return;
	}
	struct item *it = malloc(sizeof(*it) + s->len);
	if (!it)
		abort();
	it->seg = *s;
	if (s->len)
		memcpy(it->data, s->payload, s->len);
	q->v[q->n++] = it;
}

static void *it_clone(void *ctx, void *p)
{
	(void)ctx;
	struct item *a = p;
	struct item *b = malloc(sizeof(*b) + a->seg.len);
	if (!b)
		return NULL;
	memcpy(b, a, sizeof(*b) + a->seg.len);
	return b;
}

static void it_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static int cli_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	push(&((struct world *)ctx)->c2s, s);
	return 0;
}

static int srv_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	push(&((struct world *)ctx)->s2c, s);
	return 0;
}

static uint8_t xform(uint8_t b) { return (uint8_t)(b ^ 0xa5) + 1; }

/* ---- client app ---- */

static int cli_open(void *ctx, struct lfe_tcp_conn *c)
{
	(void)ctx;
	struct sess *s = lfe_tcp_conn_app(c);
	uint8_t hdr[4] = {(uint8_t)(s->req_len >> 24), (uint8_t)(s->req_len >> 16), (uint8_t)(s->req_len >> 8),
			  (uint8_t)s->req_len};
	if (lfe_tcp_send(c, hdr, 4) != 4 || lfe_tcp_send(c, s->req, s->req_len) != s->req_len)
		return -ENOBUFS;
	return 0;
}

static size_t cli_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	struct world *w = ctx;
	struct sess *s = lfe_tcp_conn_app(c);
	if (s->got + len > s->req_len) {
		fprintf(stderr, "session %u: reply too long\n", s->id);
		w->failed++;
		lfe_tcp_abort(c);
		return len;
	}
	memcpy(s->rsp + s->got, d, len);
	s->got += (uint32_t)len;
	if (s->got == s->req_len) {
		bool ok = true;
		for (uint32_t i = 0; i < s->req_len && ok; i++)
			ok = s->rsp[i] == xform(s->req[i]);
		if (!ok) {
			fprintf(stderr, "session %u: reply bytes differ\n", s->id);
			w->failed++;
		}
		s->verified = ok;
		lfe_tcp_close(c);
	}
	return len;
}

static void cli_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct world *w = ctx;
	struct sess *s = lfe_tcp_conn_app(c);
	if (s && s->verified && reason == 0)
		w->completed++;
	else {
		fprintf(stderr, "session %u closed: reason %d, %u/%u bytes\n", s ? s->id : 0, reason,
			s ? s->got : 0, s ? s->req_len : 0);
		w->failed++;
	}
}

/* ---- server app ---- */

static int srv_open(void *ctx, struct lfe_tcp_conn *c)
{
	struct world *w = ctx;
	struct srv *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	lfe_tcp_conn_set_app(c, s);
	w->srv_open++;
	return 0;
}

static size_t srv_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	struct world *w = ctx;
	struct srv *s = lfe_tcp_conn_app(c);
	size_t room = sizeof(s->buf) - s->have;
	if (s->replied || len > room) {
		fprintf(stderr, "server: unexpected bytes\n");
		w->failed++;
		lfe_tcp_abort(c);
		return len;
	}
	memcpy(s->buf + s->have, d, len);
	s->have += (uint32_t)len;
	if (s->have >= 4 && !s->need)
		s->need = 4 + ((uint32_t)s->buf[0] << 24 | (uint32_t)s->buf[1] << 16 | (uint32_t)s->buf[2] << 8 | s->buf[3]);
	if (s->need && s->have >= s->need) {
		uint8_t out[MAX_REQ];
		for (uint32_t i = 4; i < s->need; i++)
			out[i - 4] = xform(s->buf[i]);
		if (lfe_tcp_send(c, out, s->need - 4) != s->need - 4) {
			fprintf(stderr, "server: send buffer full\n");
			w->failed++;
		}
		s->replied = true;
	}
	return len;
}

static void srv_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct world *w = ctx;
	struct srv *s = lfe_tcp_conn_app(c);
	if (!s || !s->replied || reason != 0) {
		fprintf(stderr, "server conn closed: reason %d replied %d\n", reason, s ? s->replied : -1);
		w->failed++;
	}
	free(s);
	w->srv_closed++;
}

/* Push a queue through an impairment stage into the other stack. */
static void carry(struct world *w, struct queue *q, struct lfe_impair *im, struct lfe_tcp *dst)
{
	static void *out[2 * 4096 + LFE_IMPAIR_MAX_HOLD];
	uint32_t n = lfe_impair_apply(im, (void *const *)q->v, q->n, out, sizeof(out) / sizeof(out[0]), w->now);
	q->n = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct item *it = out[i];
		struct lfe_tcp_seg s = it->seg;
		s.laddr = it->seg.raddr;
		s.raddr = it->seg.laddr;
		s.lport = it->seg.rport;
		s.rport = it->seg.lport;
		s.payload = it->data;
		lfe_tcp_input(dst, &s, w->now);
		free(it);
	}
	lfe_tcp_flush(dst, w->now);
}

static int run(uint64_t seed, bool impaired)
{
	struct world *w = calloc(1, sizeof(*w));
	if (!w)
		return 1;
	w->sess = calloc(SESSIONS, sizeof(*w->sess));
	w->rng = seed;
	w->now = 5000000;
	struct lfe_tcp_cfg cc, sc;
	lfe_tcp_cfg_default(&cc);
	cc.max_conns = 1024;
	cc.max_half_open = 64;
	cc.sndbuf = 8192;
	cc.rcvbuf = 4096;
	cc.rto_min_us = 20000;
	cc.rto_init_us = 100000;
	cc.max_retries = 12;
	cc.secret = seed * 3 + 1;
	sc = cc;
	sc.secret = seed * 7 + 2;
	sc.max_conns = 256;
	sc.max_half_open = 16;
	sc.mss = 1200;
	sc.n_listen = 1;
	sc.listen[0].addr = SADDR;
	sc.listen[0].port = SPORT;
	struct lfe_tcp_ops co = {.tx = cli_tx, .on_open = cli_open, .on_data = cli_data, .on_close = cli_close};
	struct lfe_tcp_ops so = {.tx = srv_tx, .on_open = srv_open, .on_data = srv_data, .on_close = srv_close};
	int err = 0;
	w->cli = lfe_tcp_new(&cc, &co, w, &err);
	w->srv = lfe_tcp_new(&sc, &so, w, &err);
	struct lfe_impair_cfg ic = {
		.drop_ppm = 50000, .dup_ppm = 50000, .reorder_ppm = 50000, .max_hold = 8, .hold_us = 3000,
	};
	if (!impaired)
		ic.drop_ppm = ic.dup_ppm = ic.reorder_ppm = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct lfe_impair_ops io = {.clone = it_clone, .free = it_free};
	ic.seed = seed;
	struct lfe_impair *a = lfe_impair_new(&ic, &io);
	ic.seed = ~seed;
	struct lfe_impair *b = lfe_impair_new(&ic, &io);
	if (!w->sess || !w->cli || !w->srv || !a || !b) {
		printf("FAIL seed %llu: setup (%d)\n", (unsigned long long)seed, err);
		return 1;
	}
	uint64_t start = w->now, done_at = 0;
	while (w->now - start < SIM_LIMIT_US) {
		uint32_t live = w->started - w->completed - w->failed;
		while (w->started < SESSIONS && live < CONCURRENT) {
			struct sess *s = &w->sess[w->started];
			s->id = w->started;
			s->req_len = 1 + (uint32_t)(rnd(&w->rng) % MAX_REQ);
			for (uint32_t i = 0; i < s->req_len; i++)
				s->req[i] = (uint8_t)rnd(&w->rng);
			/* The request is sent from on_open, which needs the session:
			 * attach it right after connect, before any segment returns. */
			struct lfe_tcp_conn *c = lfe_tcp_connect(w->cli, CADDR, (uint16_t)(10000 + s->id), SADDR, SPORT,
								 w->now, &err);
			if (!c) {
				printf("FAIL seed %llu: connect %d\n", (unsigned long long)seed, err);
				return 1;
			}
			lfe_tcp_conn_set_app(c, s);
			w->started++;
			live++;
		}
		carry(w, &w->c2s, a, w->srv);
		carry(w, &w->s2c, b, w->cli);
		lfe_tcp_timers(w->cli, w->now);
		lfe_tcp_timers(w->srv, w->now);
		lfe_tcp_flush(w->cli, w->now);
		lfe_tcp_flush(w->srv, w->now);
		w->now += STEP_US;
		if (w->completed + w->failed == SESSIONS && !done_at)
			done_at = w->now;
		/* after the last session: let TIME_WAIT and LAST_ACK drain */
		if (done_at && w->now - done_at > 5000000 && !lfe_tcp_stats(w->srv)->conns_active &&
		    !lfe_tcp_stats(w->cli)->conns_active)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	const struct lfe_tcp_stats *cs = lfe_tcp_stats(w->cli), *ss = lfe_tcp_stats(w->srv);
	const struct lfe_impair_stats *ia = lfe_impair_stats(a), *ib = lfe_impair_stats(b);
	int fail = w->completed != SESSIONS || w->failed || !done_at || cs->conns_active || ss->conns_active ||
		   w->srv_open != w->srv_closed || w->c2s.overflow || w->s2c.overflow ||
		   (impaired && (!ia->dropped || !ia->duplicated || !ia->reordered || !ib->dropped ||
				 !ib->duplicated || !ib->reordered));
	printf("%s seed %llu%s: %u/%u sessions in %.2f s simulated (%.1f ms wall, both stacks and the harness); active cli %llu srv %llu\n",
	       fail ? "FAIL" : "ok  ", (unsigned long long)seed, impaired ? "" : " (clean path)", w->completed, SESSIONS,
	       (double)((done_at ? done_at : w->now) - start) / 1e6, wall * 1e3, (unsigned long long)cs->conns_active,
	       (unsigned long long)ss->conns_active);
	printf("     c->s: in %llu drop %llu dup %llu reorder %llu | s->c: in %llu drop %llu dup %llu reorder %llu\n",
	       (unsigned long long)ia->in, (unsigned long long)ia->dropped, (unsigned long long)ia->duplicated,
	       (unsigned long long)ia->reordered, (unsigned long long)ib->in, (unsigned long long)ib->dropped,
	       (unsigned long long)ib->duplicated, (unsigned long long)ib->reordered);
	printf("     srv: segs in %llu out %llu retrans %llu rto %llu dupacks %llu ooo %llu dupsegs %llu chal %llu | cli: retrans %llu rto %llu ooo %llu\n",
	       (unsigned long long)ss->segs_in, (unsigned long long)ss->segs_out, (unsigned long long)ss->retransmits,
	       (unsigned long long)ss->rto_timeouts, (unsigned long long)ss->dup_acks, (unsigned long long)ss->ooo_segs,
	       (unsigned long long)ss->dup_segs, (unsigned long long)ss->challenge_acks,
	       (unsigned long long)cs->retransmits, (unsigned long long)cs->rto_timeouts,
	       (unsigned long long)cs->ooo_segs);
	lfe_impair_free(a);
	lfe_impair_free(b);
	for (uint32_t i = 0; i < w->c2s.n; i++)
		free(w->c2s.v[i]);
	for (uint32_t i = 0; i < w->s2c.n; i++)
		free(w->s2c.v[i]);
	lfe_tcp_free(w->cli);
	lfe_tcp_free(w->srv);
	free(w->sess);
	free(w);
	return fail;
}

/* The impairment stage alone: deterministic per seed, conserves items. */
static int impair_unit(void)
{
	struct lfe_impair_ops io = {.clone = it_clone, .free = it_free};
	struct lfe_impair_cfg ic = {.seed = 42, .drop_ppm = 100000, .dup_ppm = 100000, .reorder_ppm = 100000,
				    .max_hold = 4, .hold_us = 1000};
	int fail = 0;
	uint32_t trace[2][2000];
	uint32_t tn[2] = {0, 0};
	for (int r = 0; r < 2; r++) {
		struct lfe_impair *im = lfe_impair_new(&ic, &io);
		for (uint32_t i = 0; i < 1000; i++) {
			struct item *it = calloc(1, sizeof(*it));
			if (!it)
				abort();
			it->seg.seq = i;
			void *in[1] = {it}, *out[2 + 4];
			uint32_t n = lfe_impair_apply(im, in, 1, out, 6, i * 100);
			for (uint32_t k = 0; k < n; k++) {
				if (tn[r] < 2000)
					trace[r][tn[r]++] = ((struct item *)out[k])->seg.seq;
				free(out[k]);
			}
		}
		void *out[8];
		uint32_t n = lfe_impair_apply(im, NULL, 0, out, 8, 1000 * 100 + 5000);
		for (uint32_t k = 0; k < n; k++)
			free(out[k]);
		const struct lfe_impair_stats *st = lfe_impair_stats(im);
		if (st->in != 1000 || st->in + st->duplicated != st->out + st->dropped || !st->reordered)
			fail = 1;
		lfe_impair_free(im);
	}
	bool reordered = false;
	for (uint32_t k = 1; k < tn[0]; k++)
		reordered |= trace[0][k] < trace[0][k - 1];
	if (tn[0] != tn[1] || memcmp(trace[0], trace[1], tn[0] * sizeof(uint32_t)) || !reordered)
		fail = 1;
	ic.max_hold = 65;
	if (lfe_impair_new(&ic, &io))
		fail = 1;
	printf("%s impair: deterministic, conserving, reorders\n", fail ? "FAIL" : "ok  ");
	return fail;
}

int main(void)
{
	int fails = impair_unit();
	static const uint64_t seeds[] = {1, 2, 3, 0xdecafbad};
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		fails += run(seeds[i], true);
	fails += run(9, false);
	printf("%d failed\n", fails);
	return fails ? 1 : 0;
}
