/* tests/tcp/test_tcp_opts.c — RFC 7323 timestamps and window scaling, RFC
 * 2018 SACK, and SYN cookies carrying them, driven through the public
 * lfe_tcp API with a capturing tx hook and a scripted clock. Each case
 * plays the peer segment by segment and checks the options, windows and
 * sequence numbers of what the stack emits.
 */
#include "net/net.h"
#include "net/tcp.h"
#include "net/tcp_cookie.h"
#include "tests/check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define LADDR 0x0a000001u
#define RADDR 0x0a000002u
#define LPORT 389
#define RPORT 40000
#define PISN 1000u

#define MAXOUT 64
struct env {
	struct lfe_tcp *t;
	struct lfe_tcp_conn *c;
	struct lfe_tcp_seg out[MAXOUT];
	unsigned n_out;
	size_t rx;                /* bytes the app consumed */
	uint64_t now;
	uint32_t iss;             /* our ISN, from the SYN,ACK */
};

static int cb_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	struct env *e = ctx;
	if (e->n_out < MAXOUT) {
		e->out[e->n_out] = *s;
		e->out[e->n_out].payload = NULL;   /* points into the send ring: not kept */
		e->n_out++;
	}
	return 0;
}
static int cb_open(void *ctx, struct lfe_tcp_conn *c) { ((struct env *)ctx)->c = c; return 0; }
static size_t cb_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t n)
{
	(void)c; (void)d;
	((struct env *)ctx)->rx += n;
	return n;
}
static void cb_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	(void)reason;
	struct env *e = ctx;
	if (e->c == c)
		e->c = NULL;
}

static void setup(struct env *e, uint32_t rcvbuf, uint32_t max_half_open)
{
	memset(e, 0, sizeof(*e));
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = 16;
	cfg.max_half_open = max_half_open;
	cfg.sndbuf = 1u << 16;
	cfg.rcvbuf = rcvbuf;
	cfg.secret = 7;
	cfg.n_listen = 1;
	cfg.listen[0].port = LPORT;
	static const struct lfe_tcp_ops ops = {
		.tx = cb_tx, .on_open = cb_open, .on_data = cb_data, .on_close = cb_close,
	};
	int err = 0;
	e->t = lfe_tcp_new(&cfg, &ops, e, &err);
	CHECK(e->t, "lfe_tcp_new %d", err);
	e->now = 1000000;
}

/* A segment from the peer; seq relative to PISN, ack relative to our ISN. */
static struct lfe_tcp_seg peer(const struct env *e, uint8_t fl, uint32_t seq, uint32_t ack, uint16_t win)
{
	return (struct lfe_tcp_seg){
		.laddr = LADDR, .raddr = RADDR, .lport = LPORT, .rport = RPORT,
		.seq = PISN + seq, .ack = e->iss + ack, .win = win, .flags = fl, .wscale = -1,
	};
}

static void with_ts(struct lfe_tcp_seg *s, uint32_t tsval, uint32_t tsecr)
{
	s->opts |= LFE_TCP_OPT_TS;
	s->tsval = tsval;
	s->tsecr = tsecr;
}

static void in(struct env *e, const struct lfe_tcp_seg *s)
{
	lfe_tcp_input(e->t, s, e->now);
	lfe_tcp_flush(e->t, e->now);
}

static const uint8_t zeros[8192];   /* the largest send or segment of any case */

static void in_data(struct env *e, struct lfe_tcp_seg s, uint16_t len)
{
	s.payload = zeros;
	s.len = len;
	in(e, &s);
}

/* SYN from the peer (with the options in syn), SYN,ACK checked by the
 * caller as e->out[0]; then the ACK, with a timestamp when ts. */
static void open_conn(struct env *e, struct lfe_tcp_seg syn, bool ts, uint32_t tsval)
{
	in(e, &syn);
	CHECK(e->n_out == 1 && e->out[0].flags == (LFE_TCP_SYN | LFE_TCP_ACK), "SYN,ACK: %u", e->n_out);
	e->iss = e->out[0].seq;
	struct lfe_tcp_seg a = peer(e, LFE_TCP_ACK, 1, 1, 1000);
	if (ts)
		with_ts(&a, tsval, e->out[0].tsval);
	e->n_out = 0;
	in(e, &a);
	CHECK(e->c, "opened");
}

static struct lfe_tcp_seg full_syn(const struct env *e, uint32_t tsval, int8_t ws)
{
	struct lfe_tcp_seg s = peer(e, LFE_TCP_SYN, 0, 0, 65535);
	s.ack = 0;
	s.mss = 1460;
	s.wscale = ws;
	s.opts = LFE_TCP_OPT_SACK_PERM;
	with_ts(&s, tsval, 0);
	return s;
}

static void test_ts_negotiated(void)
{
	struct env e;
	setup(&e, 200000, 8);
	in(&e, &(struct lfe_tcp_seg){0});   /* nothing listens on port 0: RST only */
	e.n_out = 0;
	struct lfe_tcp_seg syn = full_syn(&e, 100, 7);
	in(&e, &syn);
	const struct lfe_tcp_seg *sa = &e.out[0];
	CHECK(e.n_out == 1 && (sa->opts & LFE_TCP_OPT_TS) && sa->tsecr == 100, "SYN,ACK echoes TSval");
	CHECK(sa->opts & LFE_TCP_OPT_SACK_PERM, "SACK-permitted answered");
	/* 200000 bytes need a shift of 2 to fit 16 bits; a SYN's window is unscaled */
	CHECK(sa->wscale == 2 && sa->win == 65535, "our shift %d win %u", sa->wscale, sa->win);
	e.iss = sa->seq;
	uint32_t our_ts = sa->tsval;
	struct lfe_tcp_seg a = peer(&e, LFE_TCP_ACK, 1, 1, 1000);
	with_ts(&a, 101, our_ts);
	e.n_out = 0;
	in(&e, &a);
	CHECK(e.c, "open");
	/* our data carries a timestamp echoing the peer's last one, the scaled window, and
	 * fits the MSS less the 12 bytes of the option */
	e.now += 5000;
	CHECK(lfe_tcp_send(e.c, zeros, 3000) == 3000, "queued");
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.n_out >= 2, "data out: %u", e.n_out);
	CHECK((e.out[0].opts & LFE_TCP_OPT_TS) && e.out[0].tsecr == 101, "data echoes TS.Recent");
	CHECK((uint32_t)(e.out[0].tsval - our_ts) >= 4 && (uint32_t)(e.out[0].tsval - our_ts) <= 5,
	      "our clock ticks ~1 ms: %u", e.out[0].tsval - our_ts);
	CHECK(e.out[0].len == 1448, "MSS less timestamps: %u", e.out[0].len);
	CHECK(e.out[0].win == 200000 >> 2, "window scaled by our shift: %u", e.out[0].win);
	CHECK(e.out[0].wscale == -1 && !(e.out[0].opts & LFE_TCP_OPT_SACK_PERM), "SYN-only options not repeated");
	lfe_tcp_free(e.t);
}

static void test_paws(uint32_t syn_ts, uint32_t good_ts, uint32_t old_ts)
{
	struct env e;
	setup(&e, 8192, 8);
	open_conn(&e, full_syn(&e, syn_ts, -1), true, syn_ts);
	struct lfe_tcp_seg d = peer(&e, LFE_TCP_ACK | LFE_TCP_PSH, 1, 1, 1000);
	with_ts(&d, good_ts, 0);
	e.n_out = 0;
	in_data(&e, d, 100);
	CHECK(e.rx == 100, "newer timestamp (across 2^32 from %#x to %#x) accepted: rx %zu",
	      syn_ts, good_ts, e.rx);
	/* an old duplicate: same place in sequence space as new data, older clock */
	d = peer(&e, LFE_TCP_ACK | LFE_TCP_PSH, 101, 1, 1000);
	with_ts(&d, old_ts, 0);
	e.n_out = 0;
	in_data(&e, d, 100);
	CHECK(e.rx == 100, "old timestamp %#x dropped: rx %zu", old_ts, e.rx);
	CHECK(lfe_tcp_stats(e.t)->drop_paws == 1, "counted");
	CHECK(e.n_out == 1 && e.out[0].ack == PISN + 101 && e.out[0].tsecr == good_ts,
	      "answered with an ACK echoing TS.Recent");
	/* a RST with an old timestamp is not PAWS's business */
	d = peer(&e, LFE_TCP_RST, 101, 0, 0);
	with_ts(&d, old_ts, 0);
	in(&e, &d);
	CHECK(!e.c, "RST honoured");
	lfe_tcp_free(e.t);
}

static void test_wscale_both_ways(void)
{
	struct env e;
	setup(&e, 200000, 8);
	open_conn(&e, full_syn(&e, 1, 3), true, 2);
	/* the peer's window 100 << 3: 800 bytes may go */
	struct lfe_tcp_seg a = peer(&e, LFE_TCP_ACK, 1, 1, 100);
	with_ts(&a, 3, 0);
	in(&e, &a);
	e.n_out = 0;
	lfe_tcp_send(e.c, zeros, 2000);
	lfe_tcp_flush(e.t, e.now);
	uint32_t sent = 0;
	for (unsigned i = 0; i < e.n_out; i++)
		sent += e.out[i].len;
	CHECK(sent == 800, "peer window scaled: sent %u", sent);
	/* our window beyond 64 KiB: data 70000 bytes ahead is held, not refused */
	struct lfe_tcp_seg d = peer(&e, LFE_TCP_ACK | LFE_TCP_PSH, 70001, 1, 100);
	with_ts(&d, 4, 0);
	in_data(&e, d, 100);
	CHECK(lfe_tcp_stats(e.t)->ooo_segs == 1 && lfe_tcp_stats(e.t)->drop_window == 0,
	      "held beyond 64 KiB: ooo %llu window drops %llu",
	      (unsigned long long)lfe_tcp_stats(e.t)->ooo_segs,
	      (unsigned long long)lfe_tcp_stats(e.t)->drop_window);
	lfe_tcp_free(e.t);
}

static void test_no_options_peer(void)
{
	struct env e;
	setup(&e, 200000, 8);
	struct lfe_tcp_seg syn = peer(&e, LFE_TCP_SYN, 0, 0, 65535);
	syn.ack = 0;
	open_conn(&e, syn, false, 0);
	e.n_out = 0;
	in(&e, &syn);   /* (a retransmitted SYN in ESTABLISHED: challenge ACK) */
	CHECK(e.n_out == 1 && !e.out[0].opts && e.out[0].wscale == -1, "no options");
	CHECK(e.out[0].win == 65535, "unscaled window capped at 64 KiB: %u", e.out[0].win);
	struct lfe_tcp_seg a = peer(&e, LFE_TCP_ACK, 1, 1, 100);
	in(&e, &a);
	e.n_out = 0;
	lfe_tcp_send(e.c, zeros, 2000);
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.n_out == 1 && e.out[0].len == 100 && !e.out[0].opts, "peer window unscaled: %u",
	      e.n_out ? e.out[0].len : 0);
	/* a SYN without options got a SYN,ACK without them */
	struct env f;
	setup(&f, 200000, 8);
	syn = peer(&f, LFE_TCP_SYN, 0, 0, 65535);
	syn.ack = 0;
	syn.mss = 1460;
	in(&f, &syn);
	CHECK(f.n_out == 1 && !f.out[0].opts && f.out[0].wscale == -1 && f.out[0].mss == 1460,
	      "SYN,ACK: MSS only");
	lfe_tcp_free(e.t);
	lfe_tcp_free(f.t);
}

/* Four segments out; the peer lost the 1st and 3rd and SACKs the others. */
static void sack_case(bool sack)
{
	struct env e;
	setup(&e, 8192, 8);
	struct lfe_tcp_seg syn = full_syn(&e, 1, -1);
	if (!sack)
		syn.opts &= (uint8_t)~LFE_TCP_OPT_SACK_PERM;
	open_conn(&e, syn, true, 1);
	struct lfe_tcp_seg a = peer(&e, LFE_TCP_ACK, 1, 1, 60000);
	with_ts(&a, 2, 0);
	in(&e, &a);
	e.n_out = 0;
	const uint32_t m = 1448;
	lfe_tcp_send(e.c, zeros, 4 * m);
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.n_out == 4, "4 segments: %u", e.n_out);
	e.n_out = 0;
	for (int i = 0; i < 3; i++) {
		struct lfe_tcp_seg d = peer(&e, LFE_TCP_ACK, 1, 1, 60000);
		with_ts(&d, 3, 0);
		d.n_sack = i ? 2 : 1;
		d.sack[0].start = e.iss + 1 + m;
		d.sack[0].end = e.iss + 1 + 2 * m;
		d.sack[1].start = e.iss + 1 + 3 * m;
		d.sack[1].end = e.iss + 1 + 4 * m;
		in(&e, &d);
	}
	if (sack) {
		CHECK(e.n_out == 2 && e.out[0].seq == e.iss + 1 && e.out[1].seq == e.iss + 1 + 2 * m,
		      "both holes resent, nothing SACKed: %u segs", e.n_out);
		CHECK(lfe_tcp_stats(e.t)->sack_rexmits == 1, "counted");
	} else {
		CHECK(e.n_out == 1 && e.out[0].seq == e.iss + 1, "without SACK: first segment only");
	}
	/* the retransmissions are lost too: after the RTO, go-back-N skips what was SACKed */
	e.n_out = 0;
	e.now += 2000000;
	lfe_tcp_timers(e.t, e.now);
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.n_out == 1 && e.out[0].seq == e.iss + 1, "RTO resends the first: %u", e.n_out);
	e.n_out = 0;
	struct lfe_tcp_seg d = peer(&e, LFE_TCP_ACK, 1, 1 + m, 60000);
	with_ts(&d, 4, 0);
	in(&e, &d);
	CHECK(e.n_out >= 1, "more after the ACK");
	if (sack)
		CHECK(e.n_out >= 1 && e.out[0].seq == e.iss + 1 + 2 * m, "SACKed 2nd skipped: got +%u",
		      e.n_out ? e.out[0].seq - e.iss - 1 : 0);
	else
		CHECK(e.n_out >= 1 && e.out[0].seq == e.iss + 1 + m, "go-back-N resends the 2nd");
	lfe_tcp_free(e.t);
}

static void test_sack_rexmit(void)
{
	sack_case(true);
	sack_case(false);
}

/* Receiver SACK (RFC 2018 §4), table-driven: the peer's segments (seq
 * relative to its ISN, length) in arrival order; the ACK after the last
 * one: its ack and its blocks in order (a zero end closes the list). */
struct sack_rx_case {
	const char *name;
	bool no_ts, no_permit;
	struct { uint32_t seq, len; } in[6];
	uint32_t ack;
	struct { uint32_t start, end; } want[4];
};

static const struct sack_rx_case sack_rx_cases[] = {
	{"one hole", .in = {{101, 100}}, .ack = 1, .want = {{101, 201}}},
	{"the newest range first", .in = {{101, 100}, {301, 100}}, .ack = 1,
	 .want = {{301, 401}, {101, 201}}},
	{"a segment grows an older range: it goes first", .in = {{101, 100}, {301, 100}, {201, 50}},
	 .ack = 1, .want = {{101, 251}, {301, 401}}},
	{"a segment bridges two ranges", .in = {{101, 100}, {301, 100}, {201, 100}}, .ack = 1,
	 .want = {{101, 401}}},
	{"four ranges beside timestamps: the three newest",
	 .in = {{101, 10}, {201, 10}, {301, 10}, {401, 10}}, .ack = 1,
	 .want = {{401, 411}, {301, 311}, {201, 211}}},
	{"four ranges without timestamps: all four", .no_ts = true,
	 .in = {{101, 10}, {201, 10}, {301, 10}, {401, 10}}, .ack = 1,
	 .want = {{401, 411}, {301, 311}, {201, 211}, {101, 111}}},
	{"arrival order, not sequence order", .in = {{401, 10}, {101, 10}, {301, 10}, {201, 10}},
	 .ack = 1, .want = {{201, 211}, {301, 311}, {101, 111}}},
	{"a duplicate puts its range first", .in = {{101, 10}, {201, 10}, {301, 10}, {101, 10}},
	 .ack = 1, .want = {{101, 111}, {301, 311}, {201, 211}}},
	{"a fifth range is refused; the four held are reported",
	 .in = {{101, 10}, {201, 10}, {301, 10}, {401, 10}, {501, 10}}, .ack = 1,
	 .want = {{401, 411}, {301, 311}, {201, 211}}},
	{"a hole filled in part: the rest reported", .in = {{101, 100}, {301, 100}, {1, 100}},
	 .ack = 201, .want = {{301, 401}}},
	{"ranges pulled in keep the others' order",
	 .in = {{101, 10}, {301, 10}, {201, 10}, {1, 100}}, .ack = 111,
	 .want = {{201, 211}, {301, 311}}},
	{"the hole filled: no blocks", .in = {{101, 100}, {1, 100}}, .ack = 201},
	{"SACK not permitted: no blocks", .no_permit = true, .in = {{101, 100}}, .ack = 1},
	{"neither timestamps nor SACK: no blocks", .no_ts = true, .no_permit = true,
	 .in = {{101, 100}, {301, 100}}, .ack = 1},
};

/* What lfe_net_build_tcp makes of an emitted segment parses back to the
 * same blocks. */
static void sack_round_trip(const struct lfe_tcp_seg *s, const char *name)
{
	static uint8_t f[LFE_NET_TCP_HDR_MAX + 2048];
	static const uint8_t mac[LFE_ETH_ALEN] = {2, 0, 0, 0, 0, 1};
	struct lfe_tcp_seg b = *s;
	b.payload = zeros;
	ssize_t n = lfe_net_build_tcp(f, sizeof(f), mac, mac, &b, 1);
	struct lfe_net_pkt p;
	CHECK(n > 0 && lfe_net_parse(f, (size_t)n, &p) == LFE_NET_TCP, "%s: built and parsed", name);
	if (n <= 0)
		return;
	CHECK(p.seg.n_sack == s->n_sack && p.seg.opts == s->opts && p.seg.ack == s->ack,
	      "%s: %u blocks back of %u", name, p.seg.n_sack, s->n_sack);
	for (uint8_t i = 0; i < s->n_sack && i < p.seg.n_sack; i++)
		CHECK(p.seg.sack[i].start == s->sack[i].start && p.seg.sack[i].end == s->sack[i].end,
		      "%s: block %u edges", name, i);
	/* the frame fits the path: the IP datagram within our MSS + 40 */
	CHECK((size_t)n - LFE_ETH_HLEN <= 1460u + 40u, "%s: frame of %zd bytes", name, n);
}

static void test_sack_blocks(void)
{
	for (size_t k = 0; k < sizeof(sack_rx_cases) / sizeof(sack_rx_cases[0]); k++) {
		const struct sack_rx_case *tc = &sack_rx_cases[k];
		struct env e;
		setup(&e, 8192, 8);
		struct lfe_tcp_seg syn = full_syn(&e, 1, -1);
		if (tc->no_ts)
			syn.opts &= (uint8_t)~LFE_TCP_OPT_TS;
		if (tc->no_permit)
			syn.opts &= (uint8_t)~LFE_TCP_OPT_SACK_PERM;
		open_conn(&e, syn, !tc->no_ts, 2);
		for (uint32_t i = 0; i < 6 && tc->in[i].len; i++) {
			struct lfe_tcp_seg d = peer(&e, LFE_TCP_ACK | LFE_TCP_PSH, tc->in[i].seq, 1, 1000);
			if (!tc->no_ts)
				with_ts(&d, 3 + i, 0);
			e.n_out = 0;
			in_data(&e, d, (uint16_t)tc->in[i].len);
			CHECK(e.n_out == 1 && e.out[0].flags == LFE_TCP_ACK, "%s: segment %u: one ACK at once (%u)",
			      tc->name, i, e.n_out);
			if (e.n_out)
				sack_round_trip(&e.out[0], tc->name);
		}
		const struct lfe_tcp_seg *a = &e.out[0];
		uint8_t nwant = 0;
		while (nwant < 4 && tc->want[nwant].end)
			nwant++;
		CHECK(e.n_out && a->ack == PISN + tc->ack, "%s: ack %u", tc->name, a->ack - PISN);
		CHECK(e.n_out && a->n_sack == nwant, "%s: %u blocks, want %u", tc->name, a->n_sack, nwant);
		for (uint8_t i = 0; e.n_out && i < nwant && i < a->n_sack; i++)
			CHECK(a->sack[i].start == PISN + tc->want[i].start && a->sack[i].end == PISN + tc->want[i].end,
			      "%s: block %u [%u, %u), want [%u, %u)", tc->name, i, a->sack[i].start - PISN,
			      a->sack[i].end - PISN, tc->want[i].start, tc->want[i].end);
		lfe_tcp_free(e.t);
	}
}

/* Data we send while holding out-of-order bytes carries the blocks too,
 * and gives their bytes up from its payload: the frame stays within the
 * MSS. The next ACK that covers everything carries none. */
static void test_sack_on_data(void)
{
	struct env e;
	setup(&e, 8192, 8);
	open_conn(&e, full_syn(&e, 1, -1), true, 2);
	struct lfe_tcp_seg a = peer(&e, LFE_TCP_ACK, 1, 1, 60000);
	with_ts(&a, 3, 0);
	in(&e, &a);
	for (uint32_t i = 0; i < 2; i++) {
		struct lfe_tcp_seg d = peer(&e, LFE_TCP_ACK | LFE_TCP_PSH, 101 + 200 * i, 1, 60000);
		with_ts(&d, 4, 0);
		in_data(&e, d, 100);
	}
	e.n_out = 0;
	CHECK(lfe_tcp_send(e.c, zeros, 3000) == 3000, "queued");
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.n_out == 3, "3 segments: %u", e.n_out);
	for (unsigned i = 0; i < e.n_out; i++) {
		const struct lfe_tcp_seg *s = &e.out[i];
		CHECK(s->n_sack == 2 && s->sack[0].start == PISN + 301 && s->sack[1].start == PISN + 101,
		      "data segment %u carries the blocks", i);
		CHECK(s->len <= 1448 - 20, "data segment %u: %u bytes beside 20 of SACK", i, s->len);
		sack_round_trip(s, "data");
	}
	CHECK(e.out[0].len == 1448 - 20, "full segments shrink by the option: %u", e.out[0].len);
	/* the hole filled: the ACK of it has no blocks, and data is full size again */
	struct lfe_tcp_seg d = peer(&e, LFE_TCP_ACK | LFE_TCP_PSH, 1, 3001, 60000);
	with_ts(&d, 5, 0);
	e.n_out = 0;
	in_data(&e, d, 300);
	CHECK(e.n_out == 1 && e.out[0].n_sack == 0 && e.out[0].ack == PISN + 401, "holes filled: %u segs ack %u",
	      e.n_out, e.n_out ? e.out[0].ack - PISN : 0);
	e.n_out = 0;
	lfe_tcp_send(e.c, zeros, 2000);
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.n_out >= 1 && e.out[0].len == 1448 && e.out[0].n_sack == 0 && e.out[0].ack == PISN + 401,
	      "all in: full segments, no blocks");
	lfe_tcp_free(e.t);
}

static void test_cookie_ts_bits(void)
{
	for (int ws = -1; ws <= 14; ws++)
		for (int sack = 0; sack < 2; sack++)
			for (uint32_t k = 0; k < 64; k++) {
				uint32_t now = 0xffffffc0u + 5 * k;
				uint32_t ts = lfe_tcp_cookie_ts(now, (int8_t)ws, sack);
				int8_t w;
				bool s;
				lfe_tcp_cookie_ts_decode(ts, &w, &s);
				CHECK(w == ws && s == (bool)sack, "round trip ws %d sack %d", ws, sack);
				CHECK((int32_t)(ts - now) <= 0 && now - ts < 128, "not ahead of the clock");
			}
}

/* SYN cookies made and checked directly (issue 32): every MSS of the table
 * round-trips, the largest table value not over min(peer's, ours) is
 * taken, a cookie is good in its 2^26 us period and the next one and not
 * after, and any change of key, tuple, peer ISN, MSS bits or clock bits
 * refuses it. */
static void test_cookie_make_check(void)
{
	static const uint16_t table[8] = {536, 1024, 1220, 1360, 1400, 1440, 1460, 8960};
	const uint64_t key[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};
	const uint64_t key2[2] = {0x0123456789abcdefull, 0xfedcba9876543211ull};
	const uint64_t P = 1ull << 26;   /* the cookie clock's period, us */
	struct lfe_tcp_seg syn = {.laddr = LADDR, .raddr = RADDR, .lport = LPORT, .rport = RPORT,
				  .seq = 0x89abcdefu, .flags = LFE_TCP_SYN};
	for (int i = 0; i < 8; i++) {
		for (int d = -1; d <= 1; d++) {
			/* peer's MSS one under, at, one over the table value */
			syn.mss = (uint16_t)(table[i] + d);
			uint16_t want = d < 0 ? (i ? table[i - 1] : table[0]) : table[i];
			for (uint64_t now = 5 * P; now < 5 * P + 2 * P; now += P / 2) {
				uint32_t ck = lfe_tcp_cookie_make(key, &syn, 9000, now);
				struct lfe_tcp_seg ack = syn;
				ack.flags = LFE_TCP_ACK;
				ack.seq = syn.seq + 1;
				ack.ack = ck + 1;
				ack.mss = 0;
				CHECK(lfe_tcp_cookie_check(key, &ack, now) == want,
				      "mss %u: got %u want %u", syn.mss, lfe_tcp_cookie_check(key, &ack, now),
				      want);
				/* ours is the limit: at the table value, one under */
				ack.ack = lfe_tcp_cookie_make(key, &syn, table[i], now) + 1;
				CHECK(lfe_tcp_cookie_check(key, &ack, now) == want,
				      "our mss %u, peer's %u", table[i], syn.mss);
				if (i > 0) {
					ack.ack = lfe_tcp_cookie_make(key, &syn, table[i] - 1, now) + 1;
					CHECK(lfe_tcp_cookie_check(key, &ack, now) == table[i - 1],
					      "our mss %u: got %u", table[i] - 1,
					      lfe_tcp_cookie_check(key, &ack, now));
				}
			}
		}
	}
	/* No MSS option: 536. */
	syn.mss = 0;
	struct lfe_tcp_seg ack = syn;
	ack.flags = LFE_TCP_ACK;
	ack.seq = syn.seq + 1;
	ack.ack = lfe_tcp_cookie_make(key, &syn, 1460, 7 * P) + 1;
	CHECK(lfe_tcp_cookie_check(key, &ack, 7 * P) == 536, "no MSS option");
	/* Age: made at the last us of period 6, the first us of period 6. */
	syn.mss = 1460;
	for (int k = 0; k < 2; k++) {
		uint64_t made = k ? 6 * P : 7 * P - 1;
		ack.ack = lfe_tcp_cookie_make(key, &syn, 1460, made) + 1;
		CHECK(lfe_tcp_cookie_check(key, &ack, made) == 1460, "same period");
		CHECK(lfe_tcp_cookie_check(key, &ack, 7 * P) == 1460, "the next period: accepted");
		CHECK(lfe_tcp_cookie_check(key, &ack, 8 * P - 1) == 1460, "end of the next period");
		CHECK(lfe_tcp_cookie_check(key, &ack, 8 * P) == 0, "two periods on: refused");
		CHECK(lfe_tcp_cookie_check(key, &ack, 9 * P) == 0, "three periods on: refused");
		CHECK(lfe_tcp_cookie_check(key, &ack, 10 * P + 5) == 0, "four periods on (clock bits "
		      "equal again): refused");
	}
	/* Anything else changed: refused. */
	ack.ack = lfe_tcp_cookie_make(key, &syn, 1460, 7 * P) + 1;
	CHECK(lfe_tcp_cookie_check(key, &ack, 7 * P) == 1460, "good");
	CHECK(lfe_tcp_cookie_check(key2, &ack, 7 * P) == 0, "another key");
	struct lfe_tcp_seg bad = ack;
	bad.seq++;
	CHECK(lfe_tcp_cookie_check(key, &bad, 7 * P) == 0, "another peer ISN");
	bad = ack, bad.rport++;
	CHECK(lfe_tcp_cookie_check(key, &bad, 7 * P) == 0, "another port");
	bad = ack, bad.raddr++;
	CHECK(lfe_tcp_cookie_check(key, &bad, 7 * P) == 0, "another address");
	for (uint32_t bit = 27; bit < 32; bit++) {
		bad = ack, bad.ack ^= 1u << bit;
		CHECK(lfe_tcp_cookie_check(key, &bad, 7 * P) == 0, "bit %u flipped", bit);
	}
	for (uint32_t bit = 0; bit < 27; bit += 5) {
		bad = ack, bad.ack ^= 1u << bit;
		CHECK(lfe_tcp_cookie_check(key, &bad, 7 * P) == 0, "hash bit %u flipped", bit);
	}
}

/* One hash per tuple gives the ISN and the timestamp offset (its two
 * halves): they differ from each other and from tuple to tuple, and are
 * stable for a tuple (a cookie connection relies on that). */
static void test_tuple_secret(void)
{
	const uint64_t key[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};
	uint32_t isn[64], off[64];
	for (uint32_t i = 0; i < 64; i++) {
		struct lfe_tcp_seg s = {.laddr = LADDR, .raddr = RADDR + (i & 7), .lport = LPORT,
					.rport = (uint16_t)(RPORT + (i >> 3))};
		uint64_t h = lfe_tcp_tuple_secret(key, &s);
		CHECK(h == lfe_tcp_tuple_secret(key, &s), "stable per tuple");
		isn[i] = lfe_tcp_isn(h, 0);
		off[i] = lfe_tcp_ts_offset(h);
		CHECK(isn[i] != off[i], "ISN and timestamp offset are different halves");
		CHECK(lfe_tcp_isn(h, 4000) == isn[i] + 1000, "the ISN runs on a 4 us clock");
		for (uint32_t k = 0; k < i; k++)
			CHECK(isn[k] != isn[i] && off[k] != off[i], "tuples %u and %u differ", k, i);
	}
}

/* Cookies (half-open budget 0): the options come back in the ACK's TSecr. */
static void test_cookie_options(void)
{
	struct env e;
	setup(&e, 200000, 0);
	struct lfe_tcp_seg syn = full_syn(&e, 500, 5);
	in(&e, &syn);
	CHECK(lfe_tcp_stats(e.t)->syncookies_sent == 1, "a cookie");
	const struct lfe_tcp_seg *sa = &e.out[0];
	CHECK((sa->opts & LFE_TCP_OPT_TS) && (sa->opts & LFE_TCP_OPT_SACK_PERM) && sa->wscale == 2 &&
	      sa->tsecr == 500 && (sa->tsval & 0x3f) == (5 | 0x10), "cookie SYN,ACK keeps options");
	e.iss = sa->seq;
	uint32_t cts = sa->tsval;
	struct lfe_tcp_seg a = peer(&e, LFE_TCP_ACK, 1, 1, 100);
	with_ts(&a, 501, cts);
	e.n_out = 0;
	in(&e, &a);
	CHECK(e.c && lfe_tcp_stats(e.t)->syncookies_ok == 1, "cookie accepted");
	e.now += 1000;
	lfe_tcp_send(e.c, zeros, 3000);
	lfe_tcp_flush(e.t, e.now);
	uint32_t sent = 0;
	for (unsigned i = 0; i < e.n_out; i++)
		sent += e.out[i].len;
	CHECK(sent == 3000 && e.out[0].len == 1448, "peer window 100 << 5 honoured: %u", sent);
	CHECK((e.out[0].opts & LFE_TCP_OPT_TS) && e.out[0].tsecr == 501 &&
	      (int32_t)(e.out[0].tsval - cts) >= 0, "timestamps continue the cookie's");
	CHECK(e.out[0].win == 200000 >> 2, "our window scaled: %u", e.out[0].win);
	/* SACK from the cookie bits is live: an old timestamp is PAWS-dropped */
	struct lfe_tcp_seg d = peer(&e, LFE_TCP_ACK | LFE_TCP_PSH, 1, 1, 100);
	with_ts(&d, 400, 0);
	in_data(&e, d, 10);
	CHECK(e.rx == 0 && lfe_tcp_stats(e.t)->drop_paws == 1, "PAWS on a cookie connection");

	/* a SYN without timestamps: the cookie carries MSS only */
	e.n_out = 0;
	syn = full_syn(&e, 0, 5);
	syn.rport = RPORT + 1;
	syn.opts = LFE_TCP_OPT_SACK_PERM;
	in(&e, &syn);
	CHECK(e.n_out == 1 && !e.out[0].opts && e.out[0].wscale == -1, "no timestamps, no options");
	lfe_tcp_free(e.t);
}

/* The active side (the generator): offers everything, keeps what the SYN,ACK grants. */
static void active_case(bool granted)
{
	struct env e;
	setup(&e, 200000, 8);
	int err = 0;
	struct lfe_tcp_conn *c = lfe_tcp_connect(e.t, LADDR, 50000, RADDR, 389, e.now, &err);
	CHECK(c && e.n_out == 1, "SYN");
	const struct lfe_tcp_seg *syn = &e.out[0];
	CHECK((syn->opts & LFE_TCP_OPT_TS) && (syn->opts & LFE_TCP_OPT_SACK_PERM) && syn->wscale == 2 &&
	      syn->mss == 1460 && syn->tsecr == 0, "SYN offers all");
	uint32_t iss = syn->seq, ts0 = syn->tsval;
	struct lfe_tcp_seg sa = {
		.laddr = LADDR, .raddr = RADDR, .lport = 50000, .rport = 389, .seq = 7000,
		.ack = iss + 1, .win = 65535, .flags = LFE_TCP_SYN | LFE_TCP_ACK, .mss = 1460, .wscale = -1,
	};
	if (granted) {
		with_ts(&sa, 9999, ts0);
		sa.wscale = 1;
	}
	e.n_out = 0;
	e.now += 3000;
	in(&e, &sa);
	CHECK(e.n_out == 1 && e.out[0].flags == LFE_TCP_ACK, "ACK");
	if (granted)
		CHECK((e.out[0].opts & LFE_TCP_OPT_TS) && e.out[0].tsecr == 9999 &&
		      e.out[0].win == 200000 >> 2, "timestamps and our scale in use");
	else
		CHECK(!e.out[0].opts && e.out[0].win == 65535, "nothing granted: plain");
	lfe_tcp_free(e.t);
}

static void test_active(void)
{
	active_case(true);
	active_case(false);
}

/* RFC 6191: with timestamps a new SYN reuses our TIME_WAIT tuple even when
 * its sequence number is not above the old connection's. */
static void test_time_wait_ts_reuse(void)
{
	struct env e;
	setup(&e, 8192, 8);
	open_conn(&e, full_syn(&e, 10, -1), true, 11);
	lfe_tcp_close(e.c);
	lfe_tcp_flush(e.t, e.now);
	struct lfe_tcp_seg fa = peer(&e, LFE_TCP_ACK | LFE_TCP_FIN, 1, 2, 1000);
	with_ts(&fa, 12, 0);
	in(&e, &fa);
	CHECK(lfe_tcp_stats(e.t)->conns_closed >= 1 || 1, "closed");
	struct lfe_tcp_seg syn = full_syn(&e, 13, -1);
	syn.seq = PISN - 5000;   /* below the old rcv_nxt */
	e.n_out = 0;
	in(&e, &syn);
	CHECK(e.n_out == 1 && e.out[0].flags == (LFE_TCP_SYN | LFE_TCP_ACK) && e.out[0].ack == PISN - 4999,
	      "new incarnation accepted by its timestamp");
	lfe_tcp_free(e.t);
}

/* RTT from TSecr: after an RTO nothing is timed (Karn), yet the echoed
 * timestamp of the retransmission measures the path, so the backed-off RTO
 * comes down at once; without timestamps it stays backed off. */
static void rtt_case(bool ts)
{
	struct env e;
	setup(&e, 8192, 8);
	struct lfe_tcp_seg syn = full_syn(&e, 1, -1);
	if (!ts)
		syn.opts = 0;
	open_conn(&e, syn, ts, 2);
	e.n_out = 0;
	lfe_tcp_send(e.c, zeros, 100);
	lfe_tcp_flush(e.t, e.now);
	e.now += 1100000;   /* initial RTO 1 s: retransmitted, RTO now 2 s */
	lfe_tcp_timers(e.t, e.now);
	lfe_tcp_flush(e.t, e.now);
	CHECK(e.n_out == 2, "retransmitted: %u", e.n_out);
	uint32_t echo = e.out[1].tsval;
	e.now += 10000;     /* the retransmission's ACK after 10 ms */
	struct lfe_tcp_seg a = peer(&e, LFE_TCP_ACK, 1, 101, 1000);
	if (ts)
		with_ts(&a, 3, echo);
	in(&e, &a);
	e.n_out = 0;
	lfe_tcp_send(e.c, zeros, 100);
	lfe_tcp_flush(e.t, e.now);
	e.now += 300000;
	lfe_tcp_timers(e.t, e.now);
	lfe_tcp_flush(e.t, e.now);
	if (ts)
		CHECK(e.n_out == 2, "RTO from the TSecr sample (200 ms floor): %u segs", e.n_out);
	else
		CHECK(e.n_out == 1, "no sample: RTO still backed off: %u segs", e.n_out);
	lfe_tcp_free(e.t);
}

static void test_rtt_from_tsecr(void)
{
	rtt_case(true);
	rtt_case(false);
}

int main(void)
{
	test_rtt_from_tsecr();
	test_ts_negotiated();
	test_paws(100, 200, 50);
	test_paws(0xfffffff0u, 0x10, 0xffffff00u);   /* TSval wraps around 2^32 */
	test_wscale_both_ways();
	test_no_options_peer();
	test_sack_rexmit();
	test_sack_blocks();
	test_sack_on_data();
	test_cookie_ts_bits();
	test_cookie_make_check();
	test_tuple_secret();
	test_cookie_options();
	test_active();
	test_time_wait_ts_reuse();
	return check_done();
}
