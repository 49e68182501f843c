/* tests/tcp/test_tcp.c — scripted segment exchanges against lfe_tcp.
 *
 * Each case is a table of steps: segments fed in (sequence numbers relative
 * to the peer's ISN, ACKs relative to ours), segments expected out (flags,
 * relative seq/ack, length, window), timer advances, app actions and
 * checks of what the app saw and of counters. Our ISN is learned from the
 * SYN,ACK (or SYN) the stack emits, per peer port. Peer payload bytes follow
 * a pattern of their stream offset so every delivery is checked byte for
 * byte.
 */
#include "net/tcp.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LADDR 0x0a000001u
#define RADDR 0x0a000002u
#define LPORT 389
#define PISN 1000000u
#define NPORT 16

enum op {
	O_END, O_IN, O_OUT, O_OUTSYN, O_NONE, O_FLUSH, O_ADV, O_SEND, O_CLOSE, O_ABORT, O_KICK,
	O_RX, O_OPENS, O_CLOSES, O_STAT, O_CONSUME, O_HSAVE, O_HLIVE, O_CONNECT, O_ACTIVE, O_SHUTDOWN,
	O_SPACE, O_COMMIT,
};

struct step {
	uint8_t op, flags, p;      /* p: peer port index */
	int64_t seq, ack;          /* relative; O_STAT: seq = value, ack = offset */
	int32_t len, win;          /* win -1: not checked / default */
	uint16_t mss;
};

#define S LFE_TCP_SYN
#define A LFE_TCP_ACK
#define F LFE_TCP_FIN
#define R LFE_TCP_RST
#define P LFE_TCP_PSH

#define IN(fl, sq, ak, ln) {.op = O_IN, .flags = (fl), .seq = (sq), .ack = (ak), .len = (ln), .win = -1}
#define INW(fl, sq, ak, ln, w) {.op = O_IN, .flags = (fl), .seq = (sq), .ack = (ak), .len = (ln), .win = (w)}
#define INP(pt, fl, sq, ak, ln) {.op = O_IN, .p = (pt), .flags = (fl), .seq = (sq), .ack = (ak), .len = (ln), .win = -1}
#define SYN(pt, m) {.op = O_IN, .p = (pt), .flags = S, .seq = 0, .win = -1, .mss = (m)}
#define OUT(fl, sq, ak, ln) {.op = O_OUT, .flags = (fl), .seq = (sq), .ack = (ak), .len = (ln), .win = -1}
#define OUTW(fl, sq, ak, ln, w) {.op = O_OUT, .flags = (fl), .seq = (sq), .ack = (ak), .len = (ln), .win = (w)}
#define OUTP(pt, fl, sq, ak, ln) {.op = O_OUT, .p = (pt), .flags = (fl), .seq = (sq), .ack = (ak), .len = (ln), .win = -1}
#define SYNACK(pt, m) {.op = O_OUTSYN, .p = (pt), .flags = S | A, .mss = (m), .win = -1}
#define NONE {.op = O_NONE}
#define FLUSH {.op = O_FLUSH}
#define ADV(us) {.op = O_ADV, .seq = (us)}
#define SEND(n) {.op = O_SEND, .len = (n)}
#define CLOSE {.op = O_CLOSE}
#define ABORT {.op = O_ABORT}
#define KICK {.op = O_KICK}
#define RX(n) {.op = O_RX, .len = (n)}
#define OPENS(n) {.op = O_OPENS, .len = (n)}
#define CLOSES(n, why) {.op = O_CLOSES, .len = (n), .seq = (why)}
#define STAT(field, v) {.op = O_STAT, .ack = offsetof(struct lfe_tcp_stats, field), .seq = (v)}
#define CONSUME(n) {.op = O_CONSUME, .len = (n)}
#define HSAVE {.op = O_HSAVE}
#define HLIVE(b) {.op = O_HLIVE, .len = (b)}
#define CONNECT(pt) {.op = O_CONNECT, .p = (pt)}
#define ACTIVE(n) {.op = O_ACTIVE, .len = (n)}
#define SHUTDOWN {.op = O_SHUTDOWN}
/* contiguous send space and total free send bytes */
#define SPACE(contig, total) {.op = O_SPACE, .len = (contig), .seq = (total)}
/* write n bytes where lfe_tcp_send_space points (as many as it reports)
 * and commit n; COMMIT_BARE commits n without asking for space first */
#define COMMIT(n) {.op = O_COMMIT, .len = (n)}
#define COMMIT_BARE(n) {.op = O_COMMIT, .len = (n), .seq = 1}
#define END {.op = O_END}

/* peer opens port 0 with MSS 1460 and completes the handshake */
#define HANDSHAKE SYN(0, 1460), SYNACK(0, 1000), IN(A, 1, 1, 0), OPENS(1), NONE

/* APP_ECHO_PUSH: echoes and pushes (lfe_tcp_conn_push) each reply */
enum app { APP_SILENT, APP_ECHO, APP_ECHO_PUSH };

struct tcase {
	const char *name;
	enum app app;
	bool no_fin_cb;      /* ops->on_peer_fin NULL: stack closes by itself */
	bool fin_cb_closes;  /* on_peer_fin calls lfe_tcp_close */
	uint32_t max_conns, max_half_open, idle_us;
	struct step steps[64];
};

struct cap {
	struct lfe_tcp_seg seg;
	uint8_t data[2048];
};

struct env {
	const struct tcase *tc;
	struct lfe_tcp *t;
	uint64_t now;
	struct cap out[512];
	unsigned n_out, rd;
	uint32_t iss[NPORT];
	struct lfe_tcp_conn *conn;
	struct lfe_tcp_handle h;
	size_t consume_max;
	uint8_t rx[65536];
	size_t rx_len;
	uint32_t tx_off;
	int opens, closes, last_reason;
};

static uint8_t pat(uint32_t off) { return (uint8_t)('a' + off % 26); }

static int cb_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	struct env *e = ctx;
	if (e->n_out == sizeof(e->out) / sizeof(e->out[0]) || s->len > sizeof(e->out[0].data))
		return -ENOBUFS;
	struct cap *c = &e->out[e->n_out++];
	c->seg = *s;
	if (s->len)
		memcpy(c->data, s->payload, s->len);
	c->seg.payload = c->data;
	return 0;
}

static int cb_open(void *ctx, struct lfe_tcp_conn *c)
{
	struct env *e = ctx;
	e->opens++;
	if (!e->conn)
		e->conn = c;
	return 0;
}

static size_t cb_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	struct env *e = ctx;
	size_t n = len < e->consume_max ? len : e->consume_max;
	if (e->rx_len + n > sizeof(e->rx))
		n = sizeof(e->rx) - e->rx_len;
	memcpy(e->rx + e->rx_len, d, n);
	e->rx_len += n;
	if (e->tc->app != APP_SILENT && n) {
		uint8_t up[4096];
		size_t m = n < sizeof(up) ? n : sizeof(up);
		for (size_t i = 0; i < m; i++)
			up[i] = (uint8_t)(d[i] - 'a' + 'A');
		lfe_tcp_send(c, up, m);
		if (e->tc->app == APP_ECHO_PUSH)
			lfe_tcp_conn_push(c);
	}
	return n;
}

static void cb_fin(void *ctx, struct lfe_tcp_conn *c)
{
	struct env *e = ctx;
	if (e->tc->fin_cb_closes)
		lfe_tcp_close(c);
}

static void cb_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct env *e = ctx;
	e->closes++;
	e->last_reason = reason;
	if (c == e->conn)
		e->conn = NULL;
}

static const char *fl_str(uint8_t f, char *b)
{
	snprintf(b, 16, "%s%s%s%s%s", f & S ? "S" : "", f & A ? "A" : "", f & F ? "F" : "",
		 f & R ? "R" : "", f & P ? "P" : "");
	return b;
}

static int run_case(const struct tcase *tc)
{
	static struct env e;
	memset(&e, 0, sizeof(e));
	e.tc = tc;
	e.consume_max = SIZE_MAX;
	e.now = 1000000;
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = tc->max_conns ? tc->max_conns : 8;
	cfg.max_half_open = tc->max_half_open ? tc->max_half_open : 4;
	cfg.share_pressure_pct = 100;   /* no per-source shares: test_tcp_limits' subject */
	cfg.sndbuf = 4096;
	cfg.rcvbuf = 4096;
	cfg.mss = 1000;
	cfg.rto_min_us = 200000;
	cfg.rto_init_us = 1000000;
	cfg.rto_max_us = 8000000;
	cfg.max_retries = 3;
	cfg.delack_us = 40000;
	cfg.idle_timeout_us = tc->idle_us;
	cfg.time_wait_us = 2000000;
	cfg.secret = 0x1234567890abcdefull;
	cfg.n_listen = 1;
	cfg.listen[0].addr = 0;
	cfg.listen[0].port = LPORT;
	struct lfe_tcp_ops ops = {
		.tx = cb_tx, .on_open = cb_open, .on_data = cb_data,
		.on_peer_fin = tc->no_fin_cb ? NULL : cb_fin, .on_close = cb_close,
	};
	int err = 0;
	e.t = lfe_tcp_new(&cfg, &ops, &e, &err);
	if (!e.t) {
		printf("FAIL %s: new %d\n", tc->name, err);
		return 1;
	}
	uint8_t buf[4096];
	char f1[16], f2[16];
	int fails = 0;
	for (unsigned i = 0; i < 64 && tc->steps[i].op != O_END && !fails; i++) {
		const struct step *st = &tc->steps[i];
		switch (st->op) {
		case O_IN: {
			for (int32_t k = 0; k < st->len; k++)
				buf[k] = pat((uint32_t)(st->seq + k - 1));
			struct lfe_tcp_seg s = {
				.laddr = LADDR, .raddr = RADDR, .lport = LPORT, .rport = (uint16_t)(40000 + st->p),
				.seq = PISN + (uint32_t)st->seq, .ack = (st->flags & A) ? e.iss[st->p] + (uint32_t)st->ack : 0,
				.win = (uint16_t)(st->win < 0 ? 65535 : st->win), .flags = st->flags,
				.mss = st->mss, .wscale = -1, .payload = buf, .len = (uint16_t)st->len,
			};
			lfe_tcp_input(e.t, &s, e.now);
			break;
		}
		case O_OUT:
		case O_OUTSYN: {
			if (e.rd >= e.n_out) {
				printf("FAIL %s step %u: expected %s seg, none\n", tc->name, i, fl_str(st->flags, f1));
				fails++;
				break;
			}
			const struct lfe_tcp_seg *s = &e.out[e.rd++].seg;
			if (st->op == O_OUTSYN)
				e.iss[st->p] = s->seq;
			int64_t rseq = (int64_t)(uint32_t)(s->seq - e.iss[st->p]);
			int64_t rack = (s->flags & A) ? (int64_t)(uint32_t)(s->ack - PISN) : 0;
			bool ok = s->flags == st->flags && s->rport == 40000 + st->p;
			if (st->op == O_OUT)
				ok = ok && rseq == st->seq && rack == st->ack && s->len == st->len;
			else
				ok = ok && s->mss == st->mss && (!(s->flags & A) || rack == 1);
			if (st->win >= 0)
				ok = ok && s->win == st->win;
			for (uint16_t k = 0; ok && k < s->len; k++)
				ok = s->payload[k] == (pat((uint32_t)rseq - 1 + k) ^ 0x20);
			if (!ok) {
				printf("FAIL %s step %u: got %s seq %lld ack %lld len %u win %u mss %u, want %s seq %lld ack %lld len %d win %d\n",
				       tc->name, i, fl_str(s->flags, f1), (long long)rseq, (long long)rack, s->len,
				       s->win, s->mss, fl_str(st->flags, f2), (long long)st->seq, (long long)st->ack,
				       st->len, st->win);
				fails++;
			}
			break;
		}
		case O_NONE:
			if (e.rd != e.n_out) {
				const struct lfe_tcp_seg *s = &e.out[e.rd].seg;
				printf("FAIL %s step %u: unexpected %s seq %u len %u\n", tc->name, i,
				       fl_str(s->flags, f1), s->seq - e.iss[0], s->len);
				fails++;
			}
			break;
		case O_FLUSH:
			lfe_tcp_flush(e.t, e.now);
			break;
		case O_ADV:
			e.now += (uint64_t)st->seq;
			lfe_tcp_timers(e.t, e.now);
			break;
		case O_SEND: {
			if (!e.conn) {
				printf("FAIL %s step %u: no connection to send on\n", tc->name, i);
				fails++;
				break;
			}
			/* our bytes: the upper-case pattern of their stream offset */
			uint8_t d[4096];
			for (int32_t k = 0; k < st->len; k++)
				d[k] = (uint8_t)(pat(e.tx_off + (uint32_t)k) ^ 0x20);
			size_t n = lfe_tcp_send(e.conn, d, (size_t)st->len);
			e.tx_off += (uint32_t)n;
			if (n != (size_t)st->len) {
				printf("FAIL %s step %u: send queued %zu of %d\n", tc->name, i, n, st->len);
				fails++;
			}
			break;
		}
		case O_COMMIT: {
			uint8_t *sp = NULL;
			size_t room = st->seq ? 0 : lfe_tcp_send_space(e.conn, &sp);
			size_t k = room < (size_t)st->len ? room : (size_t)st->len;
			for (size_t j = 0; j < k; j++)
				sp[j] = (uint8_t)(pat(e.tx_off + (uint32_t)j) ^ 0x20);
			lfe_tcp_send_commit(e.conn, (size_t)st->len);
			e.tx_off += (uint32_t)k;
			break;
		}
		case O_SPACE: {
			uint8_t *sp;
			size_t contig = lfe_tcp_send_space(e.conn, &sp);
			size_t total = lfe_tcp_send_free(e.conn);
			if (contig != (size_t)st->len || total != (size_t)st->seq) {
				printf("FAIL %s step %u: send space %zu free %zu, want %d and %lld\n",
				       tc->name, i, contig, total, st->len, (long long)st->seq);
				fails++;
			}
			break;
		}
		case O_CLOSE:
			lfe_tcp_close(e.conn);
			break;
		case O_ABORT:
			lfe_tcp_abort(e.conn);
			break;
		case O_KICK:
			lfe_tcp_conn_kick(e.t, e.conn, e.now);
			break;
		case O_RX: {
			bool ok = e.rx_len == (size_t)st->len;
			for (size_t k = 0; ok && k < e.rx_len; k++)
				ok = e.rx[k] == pat((uint32_t)k);
			if (!ok) {
				printf("FAIL %s step %u: app got %zu bytes, want %d (pattern %s)\n", tc->name, i,
				       e.rx_len, st->len, e.rx_len == (size_t)st->len ? "wrong" : "-");
				fails++;
			}
			break;
		}
		case O_OPENS:
			if (e.opens != st->len) {
				printf("FAIL %s step %u: opens %d want %d\n", tc->name, i, e.opens, st->len);
				fails++;
			}
			break;
		case O_CLOSES:
			if (e.closes != st->len || (st->len && e.last_reason != st->seq)) {
				printf("FAIL %s step %u: closes %d (reason %d) want %d (%d)\n", tc->name, i, e.closes,
				       e.last_reason, st->len, (int)st->seq);
				fails++;
			}
			break;
		case O_STAT: {
			uint64_t v;
			memcpy(&v, (const uint8_t *)lfe_tcp_stats(e.t) + st->ack, sizeof(v));
			if (v != (uint64_t)st->seq) {
				printf("FAIL %s step %u: stat @%lld = %llu want %lld\n", tc->name, i, (long long)st->ack,
				       (unsigned long long)v, (long long)st->seq);
				fails++;
			}
			break;
		}
		case O_CONSUME:
			e.consume_max = (size_t)st->len;
			break;
		case O_HSAVE:
			e.h = lfe_tcp_conn_handle(e.conn);
			break;
		case O_HLIVE: {
			bool live = lfe_tcp_conn_get(e.t, e.h) != NULL;
			if (live != (bool)st->len) {
				printf("FAIL %s step %u: handle live %d want %d\n", tc->name, i, live, st->len);
				fails++;
			}
			break;
		}
		case O_CONNECT: {
			int cerr = 0;
			e.conn = lfe_tcp_connect(e.t, LADDR, LPORT, RADDR, (uint16_t)(40000 + st->p), e.now, &cerr);
			if (!e.conn) {
				printf("FAIL %s step %u: connect %d\n", tc->name, i, cerr);
				fails++;
			}
			break;
		}
		case O_SHUTDOWN:
			lfe_tcp_shutdown(e.t, e.now);
			break;
		case O_ACTIVE:
			if (lfe_tcp_stats(e.t)->conns_active != (uint64_t)st->len) {
				printf("FAIL %s step %u: active %llu want %d\n", tc->name, i,
				       (unsigned long long)lfe_tcp_stats(e.t)->conns_active, st->len);
				fails++;
			}
			break;
		}
	}
	lfe_tcp_free(e.t);
	printf("%s %s\n", fails ? "FAIL" : "ok  ", tc->name);
	return fails ? 1 : 0;
}

#define AP (A | P)
#define FA (F | A)
#define RA (R | A)
#define SYNOUT(pt, m) {.op = O_OUTSYN, .p = (pt), .flags = S, .mss = (m), .win = -1}
#define SYNACK_IN(m) {.op = O_IN, .flags = S | A, .seq = 0, .ack = 1, .win = -1, .mss = (m)}
#define TO_TIME_WAIT CLOSE, FLUSH, OUT(FA, 1, 1, 0), IN(A, 1, 2, 0), IN(FA, 1, 2, 0), FLUSH, OUT(A, 2, 2, 0)

static const struct tcase cases[] = {
	{"handshake_peer_mss_536", APP_SILENT, .steps = {
		SYN(0, 536), SYNACK(0, 1000), IN(A, 1, 1, 0), OPENS(1), SEND(1500), FLUSH,
		OUT(AP, 1, 1, 536), OUT(AP, 537, 1, 536), OUT(AP, 1073, 1, 428), NONE, END}},
	{"handshake_peer_mss_absent", APP_SILENT, .steps = {
		SYN(0, 0), SYNACK(0, 1000), IN(A, 1, 1, 0), SEND(600), FLUSH,
		OUT(AP, 1, 1, 536), OUT(AP, 537, 1, 64), NONE, END}},
	{"handshake_our_mss_caps", APP_SILENT, .steps = {
		HANDSHAKE, SEND(1500), FLUSH, OUTW(AP, 1, 1, 1000, 4096), OUT(AP, 1001, 1, 500), NONE, END}},
	{"send ring: free space counts the wrap, contiguous space does not", APP_SILENT, .steps = {
		HANDSHAKE, SPACE(4096, 4096), SEND(3000), SPACE(1096, 1096), FLUSH,
		OUT(AP, 1, 1, 1000), OUT(AP, 1001, 1, 1000), OUT(AP, 2001, 1, 1000), NONE,
		IN(A, 1, 3001, 0), SPACE(1096, 4096), SEND(2000), SPACE(2096, 2096), END}},
	{"send ring: a commit is bounded by the contiguous room; none reported, none queued", APP_SILENT, .steps = {
		HANDSHAKE, SEND(3000), FLUSH, OUT(AP, 1, 1, 1000), OUT(AP, 1001, 1, 1000), OUT(AP, 2001, 1, 1000),
		IN(A, 1, 3001, 0), COMMIT(2000), SPACE(3000, 3000), FLUSH, OUT(AP, 3001, 1, 1000),
		OUT(AP, 4001, 1, 96), NONE, IN(A, 1, 4097, 0), COMMIT_BARE(10), FLUSH, NONE,
		SPACE(4096, 4096), COMMIT(5), FLUSH, OUT(AP, 4097, 1, 5), NONE, END}},
	{"data_one_segment_delayed_ack", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 1, 1, 100), FLUSH, NONE, RX(100), ADV(30000), NONE, ADV(15000),
		OUTW(A, 1, 101, 0, 4096), NONE, ADV(100000), NONE, END}},
	{"data_many_segments", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 1, 1, 100), IN(A, 101, 1, 100), IN(A, 201, 1, 100), FLUSH, NONE, RX(300),
		ADV(45000), OUT(A, 1, 301, 0), NONE, END}},
	{"two_full_segments_ack_now", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 1, 1, 1000), IN(A, 1001, 1, 1000), FLUSH, OUT(A, 1, 2001, 0), NONE, RX(2000), END}},
	{"one_byte_segments", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 1, 1, 1), IN(A, 2, 1, 1), IN(A, 3, 1, 1), IN(A, 4, 1, 1), IN(A, 5, 1, 1),
		FLUSH, NONE, RX(5), ADV(45000), OUT(A, 1, 6, 0), NONE, END}},
	{"reply_piggybacks_ack", APP_ECHO, .steps = {
		HANDSHAKE, IN(A, 1, 1, 50), FLUSH, OUTW(AP, 1, 51, 50, 4096), NONE, ADV(45000), NONE, RX(50),
		IN(A, 51, 51, 0), ADV(2000000), NONE, END}},
	{"reply held back by a closed window: the delayed ACK still goes", APP_ECHO, .steps = {
		HANDSHAKE, INW(A, 1, 1, 0, 0), INW(A, 1, 1, 50, 0), FLUSH, NONE, RX(50), ADV(30000), NONE,
		ADV(15000), OUTW(A, 1, 51, 0, 4096), NONE, ADV(1000000), OUT(AP, 1, 51, 1), END}},
	/* A pushed reply leaves at the end of the input that made it, no
	 * flush: after the whole segment, so it acknowledges the FIN too. */
	{"push: the reply leaves with its input", APP_ECHO_PUSH, .steps = {
		HANDSHAKE, STAT(pushes, 0), IN(A, 1, 1, 50), OUTW(AP, 1, 51, 50, 4096), NONE,
		STAT(pushes, 1), IN(A, 51, 51, 0), NONE, STAT(pushes, 1), IN(FA, 51, 51, 10),
		OUT(AP, 51, 62, 10), NONE, STAT(pushes, 2), RX(60), FLUSH, NONE, END}},
	{"pipelined_requests_coalesce", APP_ECHO, .steps = {
		HANDSHAKE, IN(A, 1, 1, 30), IN(A, 31, 1, 40), FLUSH, OUT(AP, 1, 71, 70), NONE,
		IN(A, 71, 71, 20), FLUSH, OUT(AP, 71, 91, 20), NONE, RX(90), END}},
	{"rto_backoff_then_rst", APP_SILENT, .steps = {
		HANDSHAKE, SEND(100), FLUSH, OUT(AP, 1, 1, 100), ADV(999000), NONE, ADV(2000), OUT(AP, 1, 1, 100),
		ADV(1990000), NONE, ADV(20000), OUT(AP, 1, 1, 100), ADV(3980000), NONE, ADV(30000),
		OUT(AP, 1, 1, 100), ADV(8010000), OUTW(RA, 101, 1, 0, 0), CLOSES(1, -ETIMEDOUT),
		STAT(retransmits, 3), STAT(rto_timeouts, 4), ACTIVE(0), NONE, END}},
	{"ack_stops_retransmission", APP_SILENT, .steps = {
		HANDSHAKE, SEND(100), FLUSH, OUT(AP, 1, 1, 100), ADV(50000), IN(A, 1, 101, 0),
		ADV(5000000), NONE, STAT(retransmits, 0), END}},
	{"fast_retransmit_3_dupacks", APP_SILENT, .steps = {
		HANDSHAKE, SEND(3000), FLUSH, OUT(AP, 1, 1, 1000), OUT(AP, 1001, 1, 1000), OUT(AP, 2001, 1, 1000),
		IN(A, 1, 1001, 0), IN(A, 1, 1001, 0), IN(A, 1, 1001, 0), NONE, IN(A, 1, 1001, 0),
		OUT(AP, 1001, 1, 1000), STAT(retransmits, 1), STAT(dup_acks, 3), END}},
	{"duplicate_segment_reacked", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 1, 1, 100), FLUSH, NONE, IN(A, 1, 1, 100), FLUSH, OUT(A, 1, 101, 0), NONE,
		RX(100), STAT(dup_segs, 1), IN(A, 51, 1, 100), FLUSH, OUT(A, 1, 151, 0), RX(150), END}},
	{"out_of_order_held_then_delivered", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 201, 1, 100), FLUSH, OUT(A, 1, 1, 0), IN(A, 101, 1, 100), FLUSH, OUT(A, 1, 1, 0),
		RX(0), STAT(ooo_segs, 2), IN(A, 1, 1, 100), FLUSH, OUT(A, 1, 301, 0), RX(300), NONE, END}},
	{"zero_window_probe_then_resume", APP_SILENT, .steps = {
		HANDSHAKE, INW(A, 1, 1, 0, 0), SEND(100), FLUSH, NONE, ADV(990000), NONE, ADV(20000),
		OUT(AP, 1, 1, 1), INW(A, 1, 1, 0, 0), ADV(2010000), OUT(AP, 1, 1, 1), INW(A, 1, 1, 0, 0),
		ADV(4010000), OUT(AP, 1, 1, 1), INW(A, 1, 1, 0, 0), ADV(8010000), OUT(AP, 1, 1, 1),
		INW(A, 1, 1, 0, 4096), FLUSH, OUT(AP, 2, 1, 99), IN(A, 1, 101, 0), NONE, ACTIVE(1), CLOSES(0, 0), END}},
	{"receive_window_full_then_kick", APP_SILENT, .steps = {
		HANDSHAKE, CONSUME(0), IN(A, 1, 1, 3000), IN(A, 3001, 1, 2000), FLUSH, OUTW(A, 1, 4097, 0, 0),
		IN(A, 4097, 1, 10), FLUSH, OUTW(A, 1, 4097, 0, 0), STAT(drop_window, 1), RX(0),
		CONSUME(100000), KICK, RX(4096), FLUSH, OUTW(A, 1, 4097, 0, 4096), NONE, END}},
	{"partial_consume_then_kick", APP_SILENT, .steps = {
		HANDSHAKE, CONSUME(10), IN(A, 1, 1, 100), FLUSH, NONE, RX(10), ADV(45000),
		OUTW(A, 1, 101, 0, 4006), IN(A, 101, 1, 50), RX(20), CONSUME(100000), KICK, RX(150),
		ADV(45000), OUTW(A, 1, 151, 0, 4096), NONE, END}},
	{"peer_fin_stack_closes", APP_SILENT, .no_fin_cb = true, .steps = {
		HANDSHAKE, IN(FA, 1, 1, 0), FLUSH, OUT(FA, 1, 2, 0), NONE, CLOSES(0, 0), IN(A, 2, 2, 0),
		CLOSES(1, 0), ACTIVE(0), END}},
	{"peer_fin_app_replies_then_closes", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 1, 1, 20), IN(FA, 21, 1, 0), FLUSH, OUT(A, 1, 22, 0), RX(20), SEND(10), CLOSE,
		FLUSH, OUT(F | AP, 1, 22, 10), IN(A, 22, 12, 0), CLOSES(1, 0), ACTIVE(0), END}},
	{"our_close_fin_wait_time_wait", APP_SILENT, .steps = {
		HANDSHAKE, HSAVE, CLOSE, FLUSH, OUT(FA, 1, 1, 0), HLIVE(1), IN(A, 1, 2, 0), NONE, CLOSES(0, 0),
		IN(FA, 1, 2, 0), CLOSES(1, 0), HLIVE(0), FLUSH, OUT(A, 2, 2, 0), ACTIVE(1),
		IN(FA, 1, 2, 0), FLUSH, OUT(A, 2, 2, 0), ADV(2100000), ACTIVE(0), END}},
	{"fin_wait_2_peer_sends_data", APP_SILENT, .steps = {
		HANDSHAKE, CLOSE, FLUSH, OUT(FA, 1, 1, 0), IN(A, 1, 2, 0), IN(A, 1, 2, 30), RX(30),
		IN(FA, 31, 2, 0), FLUSH, OUT(A, 2, 32, 0), CLOSES(1, 0), END}},
	{"simultaneous_close_closing", APP_SILENT, .steps = {
		HANDSHAKE, CLOSE, FLUSH, OUT(FA, 1, 1, 0), IN(FA, 1, 1, 0), FLUSH, OUT(A, 2, 2, 0),
		CLOSES(0, 0), IN(A, 2, 2, 0), CLOSES(1, 0), ACTIVE(1), ADV(2100000), ACTIVE(0), END}},
	{"rst_syn_rcvd", APP_SILENT, .steps = {
		SYN(0, 1460), SYNACK(0, 1000), STAT(half_open, 1), IN(R, 1, 0, 0), ACTIVE(0), STAT(half_open, 0),
		OPENS(0), CLOSES(0, 0), NONE, END}},
	{"rst_established", APP_SILENT, .steps = {
		HANDSHAKE, IN(R, 100000, 0, 0), NONE, STAT(drop_bad_seq, 1), IN(R, 50, 0, 0), OUT(A, 1, 1, 0),
		STAT(challenge_acks, 1), ACTIVE(1), IN(R, 1, 0, 0), CLOSES(1, -ECONNRESET), ACTIVE(0), NONE,
		STAT(conns_reset, 1), END}},
	{"rst_fin_wait_1", APP_SILENT, .steps = {
		HANDSHAKE, CLOSE, FLUSH, OUT(FA, 1, 1, 0), IN(R, 2, 0, 0), OUT(A, 2, 1, 0), IN(R, 1, 0, 0),
		CLOSES(1, -ECONNRESET), ACTIVE(0), END}},
	{"rst_fin_wait_2", APP_SILENT, .steps = {
		HANDSHAKE, CLOSE, FLUSH, OUT(FA, 1, 1, 0), IN(A, 1, 2, 0), IN(R, 9, 0, 0), OUT(A, 2, 1, 0),
		IN(R, 1, 0, 0), CLOSES(1, -ECONNRESET), ACTIVE(0), END}},
	{"rst_close_wait", APP_SILENT, .steps = {
		HANDSHAKE, IN(FA, 1, 1, 0), FLUSH, OUT(A, 1, 2, 0), IN(R, 5, 0, 0), OUT(A, 1, 2, 0),
		IN(R, 1, 0, 0), NONE, ACTIVE(1), IN(R, 2, 0, 0), CLOSES(1, -ECONNRESET), ACTIVE(0), END}},
	{"rst_last_ack", APP_SILENT, .no_fin_cb = true, .steps = {
		HANDSHAKE, IN(FA, 1, 1, 0), FLUSH, OUT(FA, 1, 2, 0), IN(R, 3, 0, 0), OUT(A, 2, 2, 0),
		IN(R, 2, 0, 0), CLOSES(1, -ECONNRESET), ACTIVE(0), END}},
	{"rst_closing", APP_SILENT, .steps = {
		HANDSHAKE, CLOSE, FLUSH, OUT(FA, 1, 1, 0), IN(FA, 1, 1, 0), FLUSH, OUT(A, 2, 2, 0),
		IN(R, 2, 0, 0), CLOSES(1, -ECONNRESET), ACTIVE(0), END}},
	{"rst_time_wait", APP_SILENT, .steps = {
		HANDSHAKE, TO_TIME_WAIT, CLOSES(1, 0), ACTIVE(1), IN(R, 9000, 0, 0), NONE, ACTIVE(1),
		IN(R, 3, 0, 0), OUT(A, 2, 2, 0), IN(R, 2, 0, 0), ACTIVE(0), CLOSES(1, 0), END}},
	{"syn_in_established_challenge", APP_SILENT, .steps = {
		HANDSHAKE, SYN(0, 1460), OUT(A, 1, 1, 0), ACTIVE(1), OPENS(1), STAT(challenge_acks, 1), END}},
	{"bad_ack_challenge", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 1, 5000, 10), OUT(A, 1, 1, 0), RX(0), STAT(drop_bad_ack, 1), END}},
	/* RFC 5961 §5.2 from below: an ACK under snd_una - max window (64 KiB
	 * here) is a blind injection, dropped with a challenge ACK; one inside
	 * [snd_una - max window, snd_una] is old but acceptable. */
	{"old_ack_below_window_challenge", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 1, -200000, 10), OUT(A, 1, 1, 0), RX(0), STAT(drop_bad_ack, 1),
		STAT(challenge_acks, 1), IN(A, 1, 1 - 65536, 10), OUT(A, 1, 1, 0), RX(0),
		STAT(drop_bad_ack, 2), END}},
	{"old_ack_in_window_accepted", APP_SILENT, .steps = {
		HANDSHAKE, IN(A, 1, 1 - 65535, 10), RX(10), STAT(drop_bad_ack, 0),
		STAT(challenge_acks, 0), END}},
	{"challenge_acks_rate_limited", APP_SILENT, .steps = {
		HANDSHAKE, IN(R, 50, 0, 0), IN(R, 50, 0, 0), IN(R, 50, 0, 0), IN(R, 50, 0, 0), IN(R, 50, 0, 0),
		IN(R, 50, 0, 0), IN(R, 50, 0, 0), IN(R, 50, 0, 0), IN(R, 50, 0, 0), IN(R, 50, 0, 0),
		IN(R, 50, 0, 0), IN(R, 50, 0, 0), IN(R, 50, 0, 0), STAT(challenge_acks, 10), ADV(1100000),
		IN(R, 50, 0, 0), STAT(challenge_acks, 11), ACTIVE(1), END}},
	{"syn_flood_cookies", APP_SILENT, .steps = {
		SYN(0, 1460), SYNACK(0, 1000), SYN(1, 1460), SYNACK(1, 1000), SYN(2, 1460), SYNACK(2, 1000),
		SYN(3, 1460), SYNACK(3, 1000), STAT(half_open, 4), STAT(syncookies_sent, 0),
		SYN(4, 1460), SYNACK(4, 1000), STAT(syncookies_sent, 1), ACTIVE(4),
		INP(4, A, 1, 1, 10), OPENS(1), RX(10), ACTIVE(5), STAT(syncookies_ok, 1),
		SYN(5, 1460), SYNACK(5, 1000), INP(5, A, 1, 7, 0), NONE, ACTIVE(5), STAT(drop_no_conn, 1),
		INP(5, A, 2, 1, 10), NONE, ACTIVE(5), STAT(syncookies_ok, 1), STAT(drop_no_conn, 2),
		INP(5, A, 1, 1, 10), ACTIVE(6), STAT(syncookies_ok, 2), OPENS(2), END}},
	{"no_cookies_out_bare_ack_rst", APP_SILENT, .steps = {
		INP(3, A, 1, 1, 0), OUTP(3, R, 1, 0, 0), STAT(drop_no_conn, 1), ACTIVE(0), END}},
	{"table_full_drops_syn", APP_SILENT, .max_conns = 2, .max_half_open = 2, .steps = {
		HANDSHAKE, SYN(1, 1460), SYNACK(1, 1000), INP(1, A, 1, 1, 0), OPENS(2), SYN(2, 1460), NONE,
		STAT(drop_table_full, 1), ACTIVE(2), END}},
	{"table_full_cookie_ack_rst", APP_SILENT, .max_conns = 2, .max_half_open = 1, .steps = {
		SYN(0, 1460), SYNACK(0, 1000), SYN(1, 1460), SYNACK(1, 1000), SYN(2, 1460), SYNACK(2, 1000),
		STAT(syncookies_sent, 2), INP(1, A, 1, 1, 0), OPENS(1), ACTIVE(2), INP(2, A, 1, 1, 0),
		OUTP(2, R, 1, 0, 0), STAT(drop_table_full, 1), ACTIVE(2), OPENS(1), END}},
	{"table_full_recycles_oldest_time_wait", APP_SILENT, .max_conns = 2, .max_half_open = 2, .steps = {
		HANDSHAKE, TO_TIME_WAIT, SYN(1, 1460), SYNACK(1, 1000), SYN(2, 1460), SYNACK(2, 1000), ACTIVE(2),
		STAT(drop_table_full, 0), INP(0, A, 2, 2, 0), OUTP(0, R, 2, 0, 0), END}},
	{"idle_timeout", APP_SILENT, .idle_us = 10000000, .steps = {
		HANDSHAKE, ADV(5000000), IN(A, 1, 1, 10), FLUSH, ADV(45000), OUT(A, 1, 11, 0), ADV(9000000),
		NONE, CLOSES(0, 0), ADV(1000000), OUTW(RA, 1, 11, 0, 0), CLOSES(1, -ETIMEDOUT),
		STAT(idle_closed, 1), ACTIVE(0), END}},
	{"generation_handle", APP_SILENT, .steps = {
		HANDSHAKE, HSAVE, HLIVE(1), IN(R, 1, 0, 0), HLIVE(0), SYN(1, 1460), SYNACK(1, 1000),
		INP(1, A, 1, 1, 0), OPENS(2), ACTIVE(1), HLIVE(0), END}},
	{"abort_sends_rst", APP_SILENT, .steps = {
		HANDSHAKE, SEND(10), ABORT, FLUSH, OUTW(RA, 1, 1, 0, 0), CLOSES(1, -ECONNABORTED), ACTIVE(0),
		NONE, END}},
	{"shutdown_fins_and_refuses", APP_SILENT, .steps = {
		HANDSHAKE, SYN(1, 1460), SYNACK(1, 1000), ACTIVE(2), SHUTDOWN, OUTP(1, RA, 1, 1, 0), OUT(FA, 1, 1, 0),
		NONE, ACTIVE(1), SYN(2, 1460), OUTP(2, RA, 0, 1, 0), ACTIVE(1), IN(A, 1, 2, 0), IN(FA, 1, 2, 0),
		CLOSES(1, 0), END}},
	{"active_open", APP_SILENT, .steps = {
		CONNECT(0), SYNOUT(0, 1000), SYNACK_IN(1400), OPENS(1), FLUSH, OUT(A, 1, 1, 0), SEND(10),
		FLUSH, OUT(AP, 1, 1, 10), IN(A, 1, 11, 5), RX(5), ACTIVE(1), END}},
	{"active_open_syn_retry_then_refused", APP_SILENT, .steps = {
		CONNECT(0), SYNOUT(0, 1000), ADV(1010000), SYNOUT(0, 1000), IN(RA, 0, 1, 0),
		CLOSES(1, -ECONNREFUSED), ACTIVE(0), OPENS(0), END}},
};

int main(void)
{
	int fails = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fails += run_case(&cases[i]);
	printf("%d of %zu cases failed\n", fails, sizeof(cases) / sizeof(cases[0]));
	return fails ? 1 : 0;
}
