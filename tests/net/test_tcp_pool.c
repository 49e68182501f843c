/* tests/tcp/test_tcp_pool.c — memory per connection: the per-core buffer
 * pools (tcp_buf.c), connections borrowing and returning send rings and
 * receive buffers, a dry pool (zero window, then recovery; send
 * back-pressure, then on_writable), the timer wheel (retransmit, TIME_WAIT
 * expiry, idle eviction, buffer stall) and 100,000 held connections
 * (memory per idle connection from the table accounting and from the
 * process's resident pages, a bind-like exchange on a random subset).
 *
 * Scripted as the other tests/tcp cases: the public API with a capturing
 * tx hook and a scripted clock; peers are (address, port) pairs.
 */
#include "net/tcp.h"
#include "net/tcp_buf.h"
#include "tests/check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LADDR 0x0a000001u
#define RBASE 0x0b000000u
#define LPORT 389
#define PISN 5000u
#define PORTS 60000u

struct peer {
	struct lfe_tcp_conn *c;
	uint32_t iss;          /* our ISN as the peer read it */
	uint32_t sent;         /* bytes the peer sent */
	uint32_t got;          /* payload bytes we sent to it (first copies) */
	uint32_t ack, win;     /* of our last segment to it */
	uint8_t flags;         /* of our last segment to it */
	int writable;          /* on_writable calls */
	int closed, reason;
};

struct env {
	struct lfe_tcp *t;
	uint64_t now;
	struct peer *p;
	uint32_t n;
	bool take;             /* on_data consumes everything (else nothing) */
	uint32_t reply;        /* bytes to answer each on_data call with */
	uint32_t segs_out, data_out;
};

static uint32_t peer_of(uint32_t raddr, uint16_t rport)
{
	return (raddr - RBASE) * PORTS + (uint32_t)(rport - 1024);
}

static struct peer *peer_c(struct env *e, struct lfe_tcp_conn *c)
{
	uint32_t ra;
	uint16_t rp;
	lfe_tcp_conn_addrs(c, NULL, NULL, &ra, &rp);
	return &e->p[peer_of(ra, rp)];
}

static int cb_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	struct env *e = ctx;
	struct peer *q = &e->p[peer_of(s->raddr, s->rport)];
	if (s->flags & LFE_TCP_SYN)
		q->iss = s->seq;
	if (s->len && s->seq == q->iss + 1 + q->got)
		q->got += s->len;
	q->ack = s->ack;
	q->win = s->win;
	q->flags = s->flags;
	e->segs_out++;
	e->data_out += s->len;
	return 0;
}

static int cb_open(void *ctx, struct lfe_tcp_conn *c)
{
	peer_c(ctx, c)->c = c;
	return 0;
}

static size_t cb_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	struct env *e = ctx;
	(void)d;
	if (e->reply) {
		uint8_t r[256];
		memset(r, 0x30, sizeof r);
		CHECK(lfe_tcp_send(c, r, e->reply) == e->reply, "reply queued");
	}
	return e->take ? len : 0;
}

static void cb_writable(void *ctx, struct lfe_tcp_conn *c)
{
	peer_c(ctx, c)->writable++;
}

static void cb_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct peer *q = peer_c(ctx, c);
	q->c = NULL;
	q->closed++;
	q->reason = reason;
}

static void setup(struct env *e, uint32_t npeers, uint32_t max_conns, uint32_t pool, uint64_t idle_us)
{
	memset(e, 0, sizeof(*e));
	e->now = 1000000;
	e->n = npeers;
	e->take = true;
	e->p = calloc(npeers, sizeof(*e->p));
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = max_conns;
	cfg.max_half_open = max_conns;
	cfg.buf_pool = pool;
	cfg.idle_timeout_us = idle_us;
	cfg.secret = 7;
	cfg.n_listen = 1;
	cfg.listen[0].port = LPORT;
	static const struct lfe_tcp_ops ops = {
		.tx = cb_tx, .on_open = cb_open, .on_data = cb_data, .on_close = cb_close,
		.on_writable = cb_writable,
	};
	int err = 0;
	e->t = e->p ? lfe_tcp_new(&cfg, &ops, e, &err) : NULL;
	if (!e->t) {
		printf("FAIL: lfe_tcp_new %d\n", err);
		exit(1);
	}
}

static void teardown(struct env *e)
{
	lfe_tcp_free(e->t);
	free(e->p);
}

static struct lfe_tcp_seg seg(const struct env *e, uint32_t i, uint8_t flags)
{
	const struct peer *q = &e->p[i];
	return (struct lfe_tcp_seg){
		.laddr = LADDR, .raddr = RBASE + i / PORTS, .lport = LPORT,
		.rport = (uint16_t)(1024 + i % PORTS),
		.seq = PISN + (flags & LFE_TCP_SYN ? 0 : 1 + q->sent),
		.ack = (flags & LFE_TCP_ACK) ? q->iss + 1 + q->got : 0,
		.win = 65535, .flags = flags, .mss = flags & LFE_TCP_SYN ? 1460 : 0, .wscale = -1,
	};
}

static void in(struct env *e, const struct lfe_tcp_seg *s)
{
	lfe_tcp_input(e->t, s, e->now);
	lfe_tcp_flush(e->t, e->now);
}

static bool open_peer(struct env *e, uint32_t i)
{
	struct lfe_tcp_seg s = seg(e, i, LFE_TCP_SYN);
	in(e, &s);
	s = seg(e, i, LFE_TCP_ACK);
	in(e, &s);
	return e->p[i].c != NULL;
}

/* The peer sends len bytes (at its next sequence number, or off bytes
 * beyond it: out of order) and, if it went in, counts them as sent. */
static void send_bytes(struct env *e, uint32_t i, uint32_t len, uint32_t off)
{
	static const uint8_t data[4096];
	struct lfe_tcp_seg s = seg(e, i, LFE_TCP_ACK | LFE_TCP_PSH);
	s.seq += off;
	s.payload = data;
	s.len = (uint16_t)len;
	in(e, &s);
}

/* The peer acknowledges everything it got. */
static void ack_all(struct env *e, uint32_t i)
{
	struct lfe_tcp_seg s = seg(e, i, LFE_TCP_ACK);
	in(e, &s);
}

static void advance(struct env *e, uint64_t us)
{
	e->now += us;
	lfe_tcp_timers(e->t, e->now);
	lfe_tcp_flush(e->t, e->now);
}

static struct lfe_tcp_mem mem(const struct env *e)
{
	struct lfe_tcp_mem m;
	lfe_tcp_mem(e->t, &m);
	return m;
}

/* ---- the pool on its own ---- */

static void test_pool(void)
{
	struct lfe_tcp_pool p;
	CHECK(lfe_tcp_pool_init(&p, 3, 1000) == 0, "init");
	uint32_t a = lfe_tcp_pool_get(&p), b = lfe_tcp_pool_get(&p), c = lfe_tcp_pool_get(&p);
	CHECK(a != b && b != c && a != c && a < 3 && b < 3 && c < 3, "three distinct: %u %u %u", a, b, c);
	CHECK(lfe_tcp_pool_get(&p) == LFE_TCP_BUF_NONE, "a fourth: none");
	CHECK(lfe_tcp_pool_avail(&p) == 0 && lfe_tcp_pool_used(&p) == 3 && p.peak == 3, "accounting");
	memset(lfe_tcp_pool_ptr(&p, c), 0xab, 1000);   /* whole buffer writable, no overlap */
	CHECK(lfe_tcp_pool_ptr(&p, b)[999] != 0xab || b > c, "buffers do not overlap");
	lfe_tcp_pool_put(&p, b);
	CHECK(lfe_tcp_pool_avail(&p) == 1, "one back");
	CHECK(lfe_tcp_pool_get(&p) == b, "last returned is handed out first (hot)");
	lfe_tcp_pool_put(&p, a);
	lfe_tcp_pool_put(&p, b);
	lfe_tcp_pool_put(&p, c);
	CHECK(lfe_tcp_pool_used(&p) == 0 && p.peak == 3, "all back, peak kept");
	lfe_tcp_pool_fini(&p);
	lfe_tcp_pool_fini(&p);   /* twice is safe */
	CHECK(lfe_tcp_pool_init(&p, 0, 1000) == 0 && lfe_tcp_pool_get(&p) == LFE_TCP_BUF_NONE, "empty pool");
	lfe_tcp_pool_fini(&p);
	CHECK(lfe_tcp_pool_init(&p, 4, 0) == -EINVAL, "size 0 refused");
	CHECK(lfe_tcp_pool_init(&p, UINT32_MAX, UINT32_MAX) < 0 || (lfe_tcp_pool_fini(&p), 0), "huge refused or lazy");
}

/* ---- a connection borrows and returns ---- */

static void test_return_on_ack(void)
{
	struct env e;
	setup(&e, 4, 16, 4, 0);
	CHECK(open_peer(&e, 0), "open");
	CHECK(mem(&e).sndbufs_used == 0 && mem(&e).rcvbufs_used == 0, "an open idle connection holds nothing");
	e.reply = 100;
	send_bytes(&e, 0, 50, 0);
	e.p[0].sent += 50;
	CHECK(e.p[0].got == 100, "reply sent: %u", e.p[0].got);
	CHECK(mem(&e).sndbufs_used == 1, "a send ring while the reply is unacked");
	CHECK(mem(&e).rcvbufs_used == 0, "request consumed from the frame: no receive buffer");
	ack_all(&e, 0);
	CHECK(mem(&e).sndbufs_used == 0, "ring back once acked");
	/* The app asked for room but wrote nothing (a bind at the verifier):
	 * the room stays its own until it writes, or buf_stall_us (60 s). */
	CHECK(lfe_tcp_send_free(e.p[0].c) == 16384, "room");
	advance(&e, 1000000);
	CHECK(mem(&e).sndbufs_used == 1, "reserved ring kept");
	CHECK(lfe_tcp_send(e.p[0].c, "verdict", 7) == 7, "written later");
	lfe_tcp_flush(e.t, e.now);
	e.p[0].got = 107;
	ack_all(&e, 0);
	CHECK(mem(&e).sndbufs_used == 0, "back once the late write is acked");
	CHECK(lfe_tcp_send_free(e.p[0].c) == 16384, "room again");
	for (int i = 0; i < 62; i++)
		advance(&e, 1000000);
	CHECK(mem(&e).sndbufs_used == 0, "an unused reservation goes back after buf_stall_us");
	CHECK(e.p[0].closed == 0 && lfe_tcp_stats(e.t)->buf_stall_closed == 0, "without a reset");
	teardown(&e);
}

static void test_return_on_consume(void)
{
	struct env e;
	setup(&e, 4, 16, 4, 0);
	CHECK(open_peer(&e, 0), "open");
	e.take = false;
	send_bytes(&e, 0, 40, 0);
	e.p[0].sent += 40;
	advance(&e, 50000);   /* the delayed ACK */
	CHECK(e.p[0].ack == PISN + 1 + 40, "held bytes acknowledged: %u", e.p[0].ack - PISN - 1);
	CHECK(mem(&e).rcvbufs_used == 1, "a receive buffer holds them");
	e.take = true;
	lfe_tcp_conn_kick(e.t, e.p[0].c, e.now);
	CHECK(mem(&e).rcvbufs_used == 0, "back once consumed");
	/* Out of order: held in a buffer, back when the hole is filled and consumed. */
	send_bytes(&e, 0, 30, 30);
	CHECK(mem(&e).rcvbufs_used == 1 && e.p[0].ack == PISN + 1 + 40, "ooo held, not acked");
	send_bytes(&e, 0, 30, 0);
	e.p[0].sent += 60;
	CHECK(e.p[0].ack == PISN + 1 + 100, "hole filled: %u", e.p[0].ack - PISN - 1);
	CHECK(mem(&e).rcvbufs_used == 0, "back after delivery");
	/* Closing returns everything. */
	e.take = false;
	send_bytes(&e, 0, 10, 0);
	CHECK(mem(&e).rcvbufs_used == 1, "held again");
	lfe_tcp_abort(e.p[0].c);
	lfe_tcp_flush(e.t, e.now);
	CHECK(mem(&e).rcvbufs_used == 0 && mem(&e).sndbufs_used == 0, "abort returns it");
	teardown(&e);
}

/* ---- a dry pool ---- */

static void test_rx_exhaustion(void)
{
	struct env e;
	setup(&e, 4, 16, 1, 0);
	CHECK(open_peer(&e, 0) && open_peer(&e, 1) && open_peer(&e, 2), "open three");
	e.take = false;
	send_bytes(&e, 0, 40, 0);
	e.p[0].sent += 40;
	CHECK(mem(&e).rcvbufs_used == 1, "peer 0 holds the only buffer");
	send_bytes(&e, 1, 40, 0);
	CHECK(e.p[1].ack == PISN + 1, "peer 1's bytes not acknowledged: %u", e.p[1].ack - PISN - 1);
	CHECK(e.p[1].win == 0, "zero window to peer 1: %u", e.p[1].win);
	CHECK(lfe_tcp_stats(e.t)->rcvbuf_pool_empty == 1, "counted");
	send_bytes(&e, 1, 40, 0);   /* the peer tries again (a probe): still shut */
	CHECK(e.p[1].ack == PISN + 1 && e.p[1].win == 0, "still zero window");
	CHECK(lfe_tcp_stats(e.t)->rcvbuf_pool_empty == 1, "one wait, counted once");
	/* Peer 0's app consumes: the buffer comes back, peer 1 hears the window. */
	e.take = true;
	e.p[1].flags = 0;
	lfe_tcp_conn_kick(e.t, e.p[0].c, e.now);
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.p[1].win > 0 && (e.p[1].flags & LFE_TCP_ACK), "window update to peer 1: %u", e.p[1].win);
	CHECK(mem(&e).rcvbufs_used == 1, "the buffer kept for peer 1's resend");
	e.take = false;
	send_bytes(&e, 2, 40, 0);   /* a third peer cannot take it meanwhile */
	advance(&e, 50000);
	CHECK(e.p[2].ack == PISN + 1 && e.p[2].win == 0, "peer 2 finds the pool dry");
	e.take = false;
	send_bytes(&e, 1, 40, 0);
	e.p[1].sent += 40;
	advance(&e, 50000);
	CHECK(e.p[1].ack == PISN + 1 + 40, "peer 1's resend taken: %u", e.p[1].ack - PISN - 1);
	CHECK(mem(&e).rcvbufs_used == 1, "and held");
	/* The fast path needs no buffer: a consuming app is never starved. */
	e.take = true;
	send_bytes(&e, 0, 40, 0);
	e.p[0].sent += 40;
	advance(&e, 50000);
	CHECK(e.p[0].ack == PISN + 1 + 80, "peer 0 served from the frame with the pool dry");
	teardown(&e);
}

/* A connection the dry pool turned away, whose resend is then taken whole
 * from the frame, is owed nothing: the buffer that came back is not
 * reserved for it at the flush (it would sit unused until the stall
 * bound). In one burst: peer 0's app consumes (its buffer goes back),
 * then peer 1's resend arrives and is taken whole, then the flush. */
static void test_rx_wait_resolved(void)
{
	struct env e;
	setup(&e, 4, 16, 1, 0);
	CHECK(open_peer(&e, 0) && open_peer(&e, 1), "open two");
	e.take = false;
	send_bytes(&e, 0, 40, 0);
	e.p[0].sent += 40;
	send_bytes(&e, 1, 40, 0);
	CHECK(e.p[1].win == 0 && lfe_tcp_stats(e.t)->rcvbuf_pool_empty == 1, "peer 1 turned away");
	e.take = true;
	lfe_tcp_conn_kick(e.t, e.p[0].c, e.now);   /* the buffer is back, no flush yet */
	CHECK(mem(&e).rcvbufs_used == 0, "peer 0's buffer returned");
	static const uint8_t data[40];
	struct lfe_tcp_seg s = seg(&e, 1, LFE_TCP_ACK | LFE_TCP_PSH);
	s.payload = data;
	s.len = sizeof(data);
	lfe_tcp_input(e.t, &s, e.now);   /* peer 1's resend, taken whole from the frame */
	e.p[1].sent += 40;
	lfe_tcp_flush(e.t, e.now);
	CHECK(mem(&e).rcvbufs_used == 0, "no buffer reserved for peer 1: %u used", mem(&e).rcvbufs_used);
	advance(&e, 50000);   /* the delayed ACK */
	CHECK(e.p[1].ack == PISN + 1 + 40 && e.p[1].win > 0, "peer 1's resend taken: %u, window %u",
	      e.p[1].ack - PISN - 1, e.p[1].win);
	teardown(&e);
}

static void test_tx_exhaustion(void)
{
	struct env e;
	setup(&e, 4, 16, 1, 0);
	CHECK(open_peer(&e, 0) && open_peer(&e, 1), "open two");
	CHECK(lfe_tcp_send(e.p[0].c, "abcdefgh", 8) == 8, "peer 0 takes the only ring");
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.p[0].got == 8, "sent");
	CHECK(lfe_tcp_send_free(e.p[1].c) == 0, "no room for peer 1");
	CHECK(lfe_tcp_send(e.p[1].c, "xyz", 3) == 0, "nothing queued");
	CHECK(lfe_tcp_stats(e.t)->sndbuf_pool_empty == 1, "counted once: %llu",
	      (unsigned long long)lfe_tcp_stats(e.t)->sndbuf_pool_empty);
	ack_all(&e, 0);   /* peer 0's ring comes back; the flush wakes peer 1 */
	CHECK(e.p[1].writable == 1, "peer 1 told it may write: %d", e.p[1].writable);
	CHECK(lfe_tcp_send(e.p[1].c, "xyz", 3) == 3, "and it can");
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.p[1].got == 3, "sent: %u", e.p[1].got);
	CHECK(e.p[0].closed == 0 && e.p[1].closed == 0, "nobody reset");
	teardown(&e);
}

/* ---- timers through the wheel ---- */

static void test_wheel_rexmit_timewait(void)
{
	struct env e;
	setup(&e, 4, 16, 4, 0);
	CHECK(open_peer(&e, 0), "open");
	CHECK(lfe_tcp_send(e.p[0].c, "hello", 5) == 5, "queued");
	lfe_tcp_flush(e.t, e.now);
	uint64_t rexmit0 = lfe_tcp_stats(e.t)->retransmits;
	advance(&e, 900000);
	CHECK(lfe_tcp_stats(e.t)->retransmits == rexmit0, "not before the RTO (1 s)");
	advance(&e, 200000);
	CHECK(lfe_tcp_stats(e.t)->retransmits == rexmit0 + 1, "retransmitted after it");
	ack_all(&e, 0);
	/* We close, the peer acks our FIN and sends its own: TIME_WAIT. */
	lfe_tcp_close(e.p[0].c);
	lfe_tcp_flush(e.t, e.now);
	e.p[0].got++;   /* our FIN */
	struct lfe_tcp_seg s = seg(&e, 0, LFE_TCP_ACK | LFE_TCP_FIN);
	in(&e, &s);
	CHECK(e.p[0].closed == 1, "app told at TIME_WAIT");
	CHECK(lfe_tcp_stats(e.t)->conns_active == 1, "TIME_WAIT holds the slot");
	for (int i = 0; i < 19; i++)
		advance(&e, 100000);
	CHECK(lfe_tcp_stats(e.t)->conns_active == 1, "still at 1.9 s");
	advance(&e, 200000);
	CHECK(lfe_tcp_stats(e.t)->conns_active == 0, "freed after time_wait_us (2 s)");
	teardown(&e);
}

static void test_wheel_idle(void)
{
	/* 300 s idle: beyond one level-1 revolution (4.2 s), so the entry rides
	 * level 2 and must come down in time, with the clock in 1 s steps. */
	struct env e;
	setup(&e, 4, 16, 4, 300000000);
	CHECK(open_peer(&e, 0), "open");
	for (int i = 0; i < 298; i++)
		advance(&e, 1000000);
	CHECK(e.p[0].closed == 0, "alive at 298 s");
	send_bytes(&e, 0, 10, 0);   /* activity moves the deadline later */
	e.p[0].sent += 10;
	for (int i = 0; i < 298; i++)
		advance(&e, 1000000);
	CHECK(e.p[0].closed == 0, "alive 298 s after the activity");
	for (int i = 0; i < 3; i++)
		advance(&e, 1000000);
	CHECK(e.p[0].closed == 1 && e.p[0].reason == -ETIMEDOUT, "idle reset: %d", e.p[0].reason);
	CHECK(lfe_tcp_stats(e.t)->idle_closed == 1, "counted");
	/* A clock jump of an hour (a stall) still fires what is due. */
	CHECK(open_peer(&e, 1), "open another");
	advance(&e, 3600ull * 1000000);
	CHECK(e.p[1].closed == 1, "fired after the jump");
	teardown(&e);
}

static void test_stall(void)
{
	/* The peer takes our reply's first bytes, then shuts its window: the
	 * ring is held without progress; buf_stall_us (60 s) resets it. */
	struct env e;
	setup(&e, 4, 16, 4, 0);
	CHECK(open_peer(&e, 0), "open");
	CHECK(lfe_tcp_send(e.p[0].c, "0123456789", 10) == 10, "queued");
	lfe_tcp_flush(e.t, e.now);
	struct lfe_tcp_seg s = seg(&e, 0, LFE_TCP_ACK);
	s.ack = e.p[0].iss + 1;
	s.win = 0;
	in(&e, &s);
	for (int i = 0; i < 58; i++) {
		advance(&e, 1000000);
		struct lfe_tcp_seg z = seg(&e, 0, LFE_TCP_ACK);   /* answers each probe */
		z.ack = e.p[0].iss + 1;
		z.win = 0;
		in(&e, &z);
	}
	CHECK(e.p[0].closed == 0, "alive at 58 s");
	for (int i = 0; i < 4; i++)
		advance(&e, 1000000);
	CHECK(e.p[0].closed == 1, "reset after buf_stall_us");
	CHECK(lfe_tcp_stats(e.t)->buf_stall_closed == 1, "counted");
	CHECK(mem(&e).sndbufs_used == 0, "ring back");
	teardown(&e);
}

/* ---- 100,000 held connections ---- */

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, res = 0;
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static void test_hold_100k(void)
{
	enum { N = 100000, SUBSET = 2000 };
	struct env e;
	setup(&e, N, 131072, 0, 300000000);
	memset(e.p, 0, sizeof(*e.p) * N);   /* the harness's own pages, before measuring */
	long rss0 = rss_kib();
	uint32_t open_n = 0;
	for (uint32_t i = 0; i < N; i++)
		open_n += open_peer(&e, i);
	long rss_idle = rss_kib();
	/* Every connection binds once and goes quiet (request, reply, ack):
	 * bound-but-quiet connections must cost no more than idle ones. */
	e.reply = 14;
	for (uint32_t i = 0; i < N; i++) {
		send_bytes(&e, i, 40, 0);
		e.p[i].sent += 40;
		ack_all(&e, i);
	}
	long rss1 = rss_kib();
	struct lfe_tcp_mem m = mem(&e);
	CHECK(open_n == N && lfe_tcp_stats(e.t)->conns_active == N, "%u open", open_n);
	CHECK(m.per_conn <= 1024, "table bytes per connection %zu", m.per_conn);
	CHECK(m.sndbufs_used == 0 && m.rcvbufs_used == 0, "bound-but-quiet connections hold no buffer");
	long per_idle = rss0 > 0 ? (rss_idle - rss0) * 1024 / N : 0;
	long per = rss0 > 0 ? (rss1 - rss0) * 1024 / N : 0;
	CHECK(per <= 1024, "resident bytes per bound-but-quiet connection %ld", per);
	CHECK(m.sndbufs_peak == 1 && m.rcvbufs_peak == 0, "one ring at a time: %u %u", m.sndbufs_peak,
	      m.rcvbufs_peak);
	printf("100000 held: control block %zu B, table %zu B/connection, resident %ld B/connection idle, "
	       "%ld B bound-but-quiet, pool %u x (%u + %u) B\n",
	       m.conn_size, m.per_conn, per_idle, per, m.bufs, m.sndbuf_size, m.rcvbuf_size);
	/* Again on a random subset: request, reply, ack. */
	uint64_t x = 88172645463325252ull;
	uint32_t ok = 0;
	for (uint32_t k = 0; k < SUBSET; k++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		uint32_t i = (uint32_t)(x % N);
		uint32_t got = e.p[i].got;
		send_bytes(&e, i, 40, 0);
		e.p[i].sent += 40;
		ok += e.p[i].got == got + 14 && e.p[i].ack == PISN + 1 + e.p[i].sent;
		ack_all(&e, i);
	}
	CHECK(ok == SUBSET, "%u of %u exchanges answered", ok, SUBSET);
	m = mem(&e);
	CHECK(m.sndbufs_used == 0 && m.rcvbufs_used == 0, "all buffers back");
	CHECK(m.sndbufs_peak == 1, "one ring at a time: %u", m.sndbufs_peak);
	advance(&e, 1000000);
	CHECK(lfe_tcp_stats(e.t)->conns_active == N, "all still held");
	teardown(&e);
}

int main(void)
{
	test_pool();
	test_return_on_ack();
	test_return_on_consume();
	test_rx_exhaustion();
	test_rx_wait_resolved();
	test_tx_exhaustion();
	test_wheel_rexmit_timewait();
	test_wheel_idle();
	test_stall();
	test_hold_100k();
	return check_done();
}
