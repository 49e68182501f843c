/* tests/fuzz/fuzz_tcp.c — arbitrary segment sequences into a listening
 * lfe_tcp with a scripted clock.
 *
 * Input: a sequence of 16-byte records, each one segment or a clock step:
 *   [0] op: bits 0-1 select seq/ack base (absolute, near the last ISN we
 *       sent, near the peer ISN, near the connection's last ACK), bit 2..3
 *       clock advance class, bit 4 flush, bit 5 app sends, bit 6 app closes,
 *       bit 7 app aborts / kicks
 *   [1] flags  [2] peer port index (0..7)  [3] payload length / 8
 *   [4..7] seq  [8..11] ack  [12..13] window  [14..15] mss
 * [2] bit 6 picks a second source address (per-source cap 3); [14] bit 0
 * marks the port's connection evictable (bit 1) or not, [15] bit 0 sets its
 * app deadline [15] >> 1 ms ahead (on_deadline keeps it when consume is odd).
 * Options: [1] bit 6 adds a timestamp (TSval near the port's last one, up
 * or down by [12]; TSecr the last TSval we sent, or [5] for a cookie ACK's
 * bits), [1] bit 7 SACK-permitted and [13] & 3 SACK blocks around what we
 * sent, [15] bit 7 a window shift of [14] >> 4 (15 must clamp to 14).
 * The listener's rcvbuf needs a shift (70000 bytes) so scaled windows run.
 * Invariants: no crash or sanitizer report, conns_active ≤ max_conns,
 * half_open ≤ max_half_open (with a buffer pool of 2: dry pools, and every
 * buffer back at the end), every on_open matched by at most one on_close
 * and the app's count of live connections equals opened - closed; once
 * everything has ended, the per-source counts are back to zero (a source
 * may open its full share again). Per-source shares always apply
 * (share_pressure_pct 0: a source's share of the 6 connections is
 * max(6 / (sources + 1), 3), of the 3 half-open ones 3 / (sources + 1)).
 */
#include "net/tcp.h"

#include <stdlib.h>
#include <string.h>

#define MAXC 8

struct fz {
	struct lfe_tcp *t;
	uint32_t last_seq[8], last_ack[8];
	uint32_t last_tsval[8], peer_ts[8];
	long live;
	struct lfe_tcp_conn *conns[MAXC];
	uint8_t consume;
};

static int fz_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	struct fz *f = ctx;
	volatile uint8_t sink = 0;
	for (uint16_t i = 0; i < s->len; i++)
		sink ^= s->payload[i];   /* the payload must be readable */
	(void)sink;
	if (s->rport >= 40000 && s->rport < 40008) {
		f->last_seq[s->rport - 40000] = s->seq;
		f->last_ack[s->rport - 40000] = s->ack;
		if (s->opts & LFE_TCP_OPT_TS)
			f->last_tsval[s->rport - 40000] = s->tsval;
	}
	return 0;
}

static int fz_open(void *ctx, struct lfe_tcp_conn *c)
{
	struct fz *f = ctx;
	for (int i = 0; i < MAXC; i++)
		if (!f->conns[i]) {
			f->conns[i] = c;
			break;
		}
	f->live++;
	return 0;
}

static size_t fz_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	struct fz *f = ctx;
	volatile uint8_t sink = 0;
	for (size_t i = 0; i < len; i++)
		sink ^= d[i];
	(void)sink;
	if (len && d[0] == 'E')
		lfe_tcp_send(c, d, len);
	size_t k = f->consume % 4 == 0 ? len / 2 : len;
	return k;
}

static int fz_deadline(void *ctx, struct lfe_tcp_conn *c)
{
	struct fz *f = ctx;
	(void)c;
	return (f->consume & 1) ? 0 : -1;
}

static void fz_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct fz *f = ctx;
	(void)reason;
	for (int i = 0; i < MAXC; i++)
		if (f->conns[i] == c)
			f->conns[i] = NULL;
	f->live--;
	if (f->live < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t payload[2048];
	struct fz f;
	memset(&f, 0, sizeof(f));
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = 6;
	cfg.max_half_open = 3;
	cfg.sndbuf = 1024;
	cfg.rcvbuf = 70000;
	cfg.mss = 300;
	cfg.max_retries = 3;
	cfg.idle_timeout_us = 5000000;
	cfg.max_conns_per_source = 3;
	cfg.share_pressure_pct = 0;   /* per-source shares (share.h) always apply */
	cfg.buf_pool = 2;   /* fewer buffers than connections: dry pools happen */
	cfg.secret = 7;
	cfg.n_listen = 1;
	cfg.listen[0].port = 389;
	struct lfe_tcp_ops ops = {.tx = fz_tx, .on_open = fz_open, .on_data = fz_data, .on_close = fz_close,
				  .on_deadline = fz_deadline};
	f.t = lfe_tcp_new(&cfg, &ops, &f, NULL);
	if (!f.t)
		abort();
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	uint64_t now = 1000000;
	for (size_t off = 0; off + 16 <= size; off += 16) {
		const uint8_t *r = data + off;
		uint8_t op = r[0];
		uint32_t pi = r[2] & 7;
		uint32_t seq, ack;
		memcpy(&seq, r + 4, 4);
		memcpy(&ack, r + 8, 4);
		switch (op & 3) {
		case 1: /* near what we acknowledged: in-window-ish */
			seq = f.last_ack[pi] + (seq & 0x3ff) - 0x100;
			ack = f.last_seq[pi] + (ack & 0x3ff) - 0x80;
			break;
		case 2:
			seq = f.last_ack[pi] + (seq & 0xf);
			ack = f.last_seq[pi] + (ack & 0xf);
			break;
		default:
			break;
		}
		payload[0] = (r[3] & 1) ? 'E' : 'x';
		struct lfe_tcp_seg s = {
			.laddr = 0x0a000001, .raddr = (r[2] & 0x40) ? 0x0a000003 : 0x0a000002, .lport = (r[2] & 0x80) ? 390 : 389,
			.rport = (uint16_t)(40000 + pi), .seq = seq, .ack = ack,
			.win = (uint16_t)(r[12] | r[13] << 8), .flags = r[1],
			.mss = (uint16_t)(r[14] | r[15] << 8), .wscale = -1,
			.payload = payload, .len = (uint16_t)(r[3] * 8),
		};
		if (r[1] & 0x40) {
			s.opts |= LFE_TCP_OPT_TS;
			f.peer_ts[pi] += (uint32_t)(int8_t)r[12];
			s.tsval = f.peer_ts[pi];
			s.tsecr = (r[0] & 2) ? f.last_tsval[pi] : (f.last_tsval[pi] & ~0x3fu) | (r[5] & 0x3f);
		}
		if (r[1] & 0x80) {
			s.opts |= LFE_TCP_OPT_SACK_PERM;
			s.n_sack = r[13] & 3;
			for (uint8_t b = 0; b < s.n_sack; b++) {
				s.sack[b].start = f.last_seq[pi] - (uint32_t)r[6 + b] * 16u;
				s.sack[b].end = s.sack[b].start + (uint32_t)r[9 + b] * 8u;
			}
		}
		if (r[15] & 0x80)
			s.wscale = (int8_t)(r[14] >> 4);
		s.flags &= 0x3f;
		lfe_tcp_input(f.t, &s, now);
		static const uint32_t steps[4] = {0, 1000, 45000, 900000};
		now += steps[(op >> 2) & 3];
		f.consume = r[13];
		struct lfe_tcp_conn *c = f.conns[pi % MAXC];
		if (c && (op & 0x20))
			lfe_tcp_send(c, payload, r[3]);
		if (c && (op & 0x40))
			lfe_tcp_close(c);
		if (c && (r[14] & 1))
			lfe_tcp_conn_set_evictable(c, r[14] & 2);
		if (c && (r[15] & 1))
			lfe_tcp_conn_set_deadline(c, now + (uint64_t)(r[15] >> 1) * 1000u);
		if (c && (op & 0x80)) {
			if (r[12] & 1)
				lfe_tcp_abort(c);
			else
				lfe_tcp_conn_kick(f.t, c, now);
		}
		lfe_tcp_timers(f.t, now);
		if (op & 0x10)
			lfe_tcp_flush(f.t, now);
		const struct lfe_tcp_stats *st = lfe_tcp_stats(f.t);
		if (st->conns_active > cfg.max_conns || st->half_open > cfg.max_half_open ||
		    st->conns_opened < st->conns_closed || (long)(st->conns_opened - st->conns_closed) != f.live)
			abort();
	}
	lfe_tcp_flush(f.t, now);
	/* Run the clock out: every connection must end (idle, retries, TIME_WAIT). */
	for (int i = 0; i < 120; i++) {
		now += 1000000;
		lfe_tcp_timers(f.t, now);
		lfe_tcp_flush(f.t, now);
	}
	const struct lfe_tcp_stats *st = lfe_tcp_stats(f.t);
	if (st->conns_active || st->half_open || f.live)
		abort();
	struct lfe_tcp_mem m;
	lfe_tcp_mem(f.t, &m);
	if (m.sndbufs_used || m.rcvbufs_used || m.sndbufs_peak > 2 || m.rcvbufs_peak > 2)
		abort();   /* every buffer back once every connection ended */
	uint64_t capped = st->drop_src_cap;
	for (uint16_t p = 0; p < 3; p++) {
		struct lfe_tcp_seg syn = {
			.laddr = 0x0a000001, .raddr = 0x0a000002, .lport = 389, .rport = (uint16_t)(50000 + p),
			.seq = 1, .win = 1000, .flags = LFE_TCP_SYN, .wscale = -1,
		};
		lfe_tcp_input(f.t, &syn, now);
	}
	if (st->drop_src_cap != capped)
		abort();   /* a count leaked */
	lfe_tcp_free(f.t);
	return 0;
}
