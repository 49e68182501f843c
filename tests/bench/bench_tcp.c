/* tests/bench/bench_tcp.c — nanoseconds per short connection through
 * lfe_tcp (SYN, ACK carrying a 64-byte request, the app's deadline and
 * evictable marks set as the glue does, a 32-byte reply, RST), with the
 * per-source cap off and on, and with the table kept full of evictable
 * idle connections so that every SYN evicts one.
 *
 * usage: bench_tcp [connections per run]   (default 200000)
 * Seven runs per mode; prints the median and the spread of ns per connection.
 *
 * usage: bench_tcp hold N [exchanges]   (default 100000, 200000)
 * Holds N connections (daemon buffer sizes: 16 KiB send, 8 KiB receive):
 * resident bytes per idle connection after the handshakes and per
 * bound-but-quiet connection after one bind-like exchange on each (64-byte
 * request, 32-byte reply, the peer's ACK), then persistent exchanges on
 * random held connections: TSC cycles and ns per exchange and per input
 * segment, median of 3 runs. Build with -DBENCH_OLD_API against a tree
 * without lfe_tcp_mem for a before figure.
 *
 * usage: bench_tcp syn [SYNs]   (default 1000000)
 * A spoofed SYN flood into a table of 1M slots whose half-open budget is
 * spent: ns per SYN answered with a cookie (syn_rate 0, no limit) and per
 * SYN dropped over the budget (syn_rate 1: every SYN after the first 16),
 * sources spread over 65,536 addresses and every port; median of 7 runs.
 * The stack's part only: the daemon adds the frame's parse and the
 * SYN,ACK's build and send.
 */
#include "net/tcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define RUNS 7
#define TABLE 4096u

struct env {
	uint32_t last_iss;
	uint64_t now;
	bool evictable_idle;    /* mark fresh connections evictable (the glue does at open) */
	struct lfe_tcp_conn *last;
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int tx(void *ctx, const struct lfe_tcp_seg *s)
{
	struct env *e = ctx;
	if (s->flags & LFE_TCP_SYN)
		e->last_iss = s->seq;
	return 0;
}

static int on_open(void *ctx, struct lfe_tcp_conn *c)
{
	struct env *e = ctx;
	e->last = c;
	lfe_tcp_conn_set_deadline(c, e->now + 10000000);
	lfe_tcp_conn_set_evictable(c, e->evictable_idle);
	return 0;
}

static size_t on_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	struct env *e = ctx;
	static const uint8_t reply[32];
	(void)d;
	lfe_tcp_send(c, reply, sizeof(reply));
	lfe_tcp_conn_set_deadline(c, 0);
	lfe_tcp_conn_set_evictable(c, false);
	(void)e;
	return len;
}

static void on_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	(void)ctx; (void)c; (void)reason;
}

static int tx_count(void *ctx, const struct lfe_tcp_seg *s)
{
	(*(long *)ctx) += (s->flags & LFE_TCP_SYN) != 0;
	return 0;
}

/* ns per spoofed SYN with the half-open budget spent; syn_rate as given. */
static double syn_run(uint32_t syn_rate, long n, long *answered)
{
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = 1u << 20;
	cfg.max_half_open = 0;   /* cookies from the first SYN, as deep in a flood */
	cfg.syn_rate = syn_rate;
	cfg.n_listen = 1;
	cfg.listen[0].port = 389;
	cfg.secret = 1;
	static const struct lfe_tcp_ops ops = { .tx = tx_count, .on_open = on_open, .on_data = on_data,
						.on_close = on_close };
	*answered = 0;
	struct lfe_tcp *t = lfe_tcp_new(&cfg, &ops, answered, NULL);
	if (!t)
		exit(1);
	uint64_t now = 1000000;
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		uint32_t x = (uint32_t)i * 2654435761u;
		struct lfe_tcp_seg s = { .laddr = 1, .raddr = 0x0a000000u + (x >> 16), .lport = 389,
					 .rport = (uint16_t)(1024 + x % 60000), .seq = x, .win = 65535,
					 .flags = LFE_TCP_SYN, .mss = 1460, .wscale = 7,
					 .tsval = x, .opts = LFE_TCP_OPT_TS | LFE_TCP_OPT_SACK_PERM };
		lfe_tcp_input(t, &s, now);
		if ((i & 31) == 31)
			lfe_tcp_flush(t, now);
	}
	lfe_tcp_flush(t, now);
	double ns = (now_ns() - t0) / (double)n;
	lfe_tcp_free(t);
	return ns;
}

static int syn_main(long n)
{
	static const char *const names[] = { "SYN answered with a cookie", "SYN dropped over syn_rate" };
	for (int mode = 0; mode < 2; mode++) {
		double r[RUNS];
		long answered = 0;
		for (int k = 0; k < RUNS; k++)
			r[k] = syn_run(mode ? 1 : 0, n, &answered);
		qsort(r, RUNS, sizeof(r[0]), cmp_double);
		printf("%-28s %7.1f ns/SYN (median of %d, min %.1f max %.1f; %ld of %ld answered)\n", names[mode],
		       r[RUNS / 2], RUNS, r[0], r[RUNS - 1], answered, n);
	}
	return 0;
}

/* mode 0: no cap; 1: cap 64 per source (sources rotate over 1024);
 * 2: table full of idle evictable connections, every SYN evicts. */
static double run(int mode, long n)
{
	static struct env e;
	memset(&e, 0, sizeof(e));
	e.now = 1000000;
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = TABLE;
	cfg.max_half_open = TABLE;
	cfg.sndbuf = 4096;
	cfg.rcvbuf = 4096;
	cfg.max_conns_per_source = mode == 1 ? 64 : 0;
	cfg.n_listen = 1;
	cfg.listen[0].port = 389;
	cfg.secret = 1;
	static const struct lfe_tcp_ops ops = { .tx = tx, .on_open = on_open, .on_data = on_data,
						.on_close = on_close };
	struct lfe_tcp *t = lfe_tcp_new(&cfg, &ops, &e, NULL);
	if (!t)
		exit(1);
	static uint8_t req[64];
	e.evictable_idle = true;
	if (mode == 2) {
		/* Fill the table with idle connections that never send. */
		for (uint32_t i = 0; i < TABLE; i++) {
			struct lfe_tcp_seg s = { .laddr = 1, .raddr = 0x0b000000u + i, .lport = 389, .rport = 1000,
						 .seq = 1, .win = 65535, .flags = LFE_TCP_SYN, .mss = 1460, .wscale = -1 };
			lfe_tcp_input(t, &s, e.now);
			s.flags = LFE_TCP_ACK;
			s.seq = 2;
			s.ack = e.last_iss + 1;
			lfe_tcp_input(t, &s, e.now);
		}
	}
	double t0 = now_ns();
	for (long i = 0; i < n; i++) {
		uint32_t src = 0x0a000000u + (uint32_t)(i % 1024);
		uint16_t port = (uint16_t)(1024 + (i / 1024) % 60000);
		struct lfe_tcp_seg s = { .laddr = 1, .raddr = src, .lport = 389, .rport = port, .seq = 100,
					 .win = 65535, .flags = LFE_TCP_SYN, .mss = 1460, .wscale = -1 };
		lfe_tcp_input(t, &s, e.now);
		s.flags = LFE_TCP_ACK | LFE_TCP_PSH;
		s.seq = 101;
		s.ack = e.last_iss + 1;
		s.payload = req;
		s.len = sizeof(req);
		lfe_tcp_input(t, &s, e.now);
		lfe_tcp_flush(t, e.now);
		/* Keep the table as it was: mode 2 leaves the new (busy)
		 * connection and lets the next SYN evict another idle one, so
		 * turn it idle-evictable again; others reset it. */
		if (mode == 2) {
			lfe_tcp_conn_set_evictable(e.last, true);
		} else {
			s.flags = LFE_TCP_RST;
			s.seq = 101 + sizeof(req);
			s.len = 0;
			lfe_tcp_input(t, &s, e.now);
		}
		e.now += 3;
		if ((i & 1023) == 0)
			lfe_tcp_timers(t, e.now);
	}
	double ns = (now_ns() - t0) / (double)n;
	if (lfe_tcp_stats(t)->conns_opened < (uint64_t)n)
		fprintf(stderr, "bench_tcp: mode %d opened %llu of %ld\n", mode,
			(unsigned long long)lfe_tcp_stats(t)->conns_opened, n);
	lfe_tcp_free(t);
	return ns;
}

/* ---- hold N ---- */

#define HPORTS 60000u
#define HBASE 0x0b000000u

struct hold {
	uint32_t *iss, *got, *sent;
	uint32_t last;         /* peer index of the last segment out */
};

static uint32_t hidx(uint32_t raddr, uint16_t rport)
{
	return (raddr - HBASE) * HPORTS + (uint32_t)(rport - 1024);
}

static int h_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	struct hold *h = ctx;
	uint32_t i = hidx(s->raddr, s->rport);
	if (s->flags & LFE_TCP_SYN)
		h->iss[i] = s->seq;
	h->got[i] += s->len;
	return 0;
}

static int h_open(void *ctx, struct lfe_tcp_conn *c)
{
	(void)ctx; (void)c;
	return 0;
}

static size_t h_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	static const uint8_t reply[32];
	(void)ctx; (void)d;
	lfe_tcp_send(c, reply, sizeof(reply));
	return len;
}

static long rss_bytes(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * sysconf(_SC_PAGESIZE);
}

static struct lfe_tcp_seg hseg(const struct hold *h, uint32_t i, uint8_t flags)
{
	return (struct lfe_tcp_seg){
		.laddr = 1, .raddr = HBASE + i / HPORTS, .lport = 389, .rport = (uint16_t)(1024 + i % HPORTS),
		.seq = (flags & LFE_TCP_SYN) ? 100 : 101 + h->sent[i],
		.ack = (flags & LFE_TCP_ACK) ? h->iss[i] + 1 + h->got[i] : 0,
		.win = 65535, .flags = flags, .mss = 1460, .wscale = -1,
	};
}

/* Request in, reply out at the flush, the peer's ACK in. */
static void exchange(struct lfe_tcp *t, struct hold *h, uint32_t i, uint64_t now)
{
	static const uint8_t req[64];
	struct lfe_tcp_seg s = hseg(h, i, LFE_TCP_ACK | LFE_TCP_PSH);
	s.payload = req;
	s.len = sizeof(req);
	h->sent[i] += sizeof(req);
	lfe_tcp_input(t, &s, now);
	lfe_tcp_flush(t, now);
	s = hseg(h, i, LFE_TCP_ACK);
	lfe_tcp_input(t, &s, now);
}

/* The same for a burst of b random connections, as a worker's rx burst
 * feeds them: every request, one flush, every ACK; with pf, the burst
 * prefetch (tcp.h) before each of the two passes. */
#define HBURST 16
static void burst_exchange(struct lfe_tcp *t, struct hold *h, const uint32_t *ix, uint64_t now, bool pf)
{
	static const uint8_t req[64];
	struct lfe_tcp_seg s[HBURST];
	for (int k = 0; k < HBURST; k++) {
		s[k] = hseg(h, ix[k], LFE_TCP_ACK | LFE_TCP_PSH);
		s[k].payload = req;
		s[k].len = sizeof(req);
		h->sent[ix[k]] += sizeof(req);
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pf) {
			for (int k = 0; k < HBURST; k++)
				lfe_tcp_prefetch_hash(t, &s[k]);
			for (int k = 0; k < HBURST; k++)
				lfe_tcp_prefetch_conn(t, &s[k]);
		}
		for (int k = 0; k < HBURST; k++)
			lfe_tcp_input(t, &s[k], now);
		lfe_tcp_flush(t, now);
		for (int k = 0; k < HBURST; k++)
			s[k] = hseg(h, ix[k], LFE_TCP_ACK);
	}
}

static int hold_main(long n, long m)
{
	struct hold h = {
		.iss = calloc((size_t)n, 4), .got = calloc((size_t)n, 4), .sent = calloc((size_t)n, 4),
	};
	if (!h.iss || !h.got || !h.sent)
		return 1;
	memset(h.iss, 1, (size_t)n * 4);   /* touch our own arrays before measuring */
	memset(h.got, 0, (size_t)n * 4);
	memset(h.sent, 0, (size_t)n * 4);
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = (uint32_t)n;
	cfg.max_half_open = (uint32_t)n;
	cfg.n_listen = 1;
	cfg.listen[0].port = 389;
	cfg.secret = 1;
	static const struct lfe_tcp_ops ops = { .tx = h_tx, .on_open = h_open, .on_data = h_data,
						.on_close = on_close };
	long rss0 = rss_bytes();
	double t0 = now_ns();
	struct lfe_tcp *t = lfe_tcp_new(&cfg, &ops, &h, NULL);
	if (!t) {
		fprintf(stderr, "bench_tcp: lfe_tcp_new failed for %ld connections\n", n);
		return 1;
	}
	double t_new = now_ns() - t0;
	long rss_new = rss_bytes();
	uint64_t now = 1000000;
	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		struct lfe_tcp_seg s = hseg(&h, i, LFE_TCP_SYN);
		lfe_tcp_input(t, &s, now);
		s = hseg(&h, i, LFE_TCP_ACK);
		lfe_tcp_input(t, &s, now);
	}
	lfe_tcp_flush(t, now);
	long rss_idle = rss_bytes();
	for (uint32_t i = 0; i < (uint32_t)n; i++)
		exchange(t, &h, i, now);
	long rss_bound = rss_bytes();
	uint64_t held = lfe_tcp_stats(t)->conns_active;
	printf("hold %ld: lfe_tcp_new %.1f ms, +%.1f MiB resident\n", n, t_new / 1e6,
	       (double)(rss_new - rss0) / (1 << 20));
	printf("hold %ld: %llu held, resident %.0f B/connection idle, %.0f B/connection after one exchange each"
	       " (process RSS %.1f MiB)\n", n, (unsigned long long)held,
	       (double)(rss_idle - rss_new) / (double)n, (double)(rss_bound - rss_new) / (double)n,
	       (double)rss_bound / (1 << 20));
#ifndef BENCH_OLD_API
	struct lfe_tcp_mem tm;
	lfe_tcp_mem(t, &tm);
	printf("hold %ld: control block %zu B, table %zu B/connection; pool %u x (%u + %u) B, peak %u + %u in use\n",
	       n, tm.conn_size, tm.per_conn, tm.bufs, tm.sndbuf_size, tm.rcvbuf_size, tm.sndbufs_peak,
	       tm.rcvbufs_peak);
#endif
	double cyc[3], ns[3];
	uint64_t x = 88172645463325252ull;
	for (int r = 0; r < 3; r++) {
		uint64_t segs0 = lfe_tcp_stats(t)->segs_in;
		double a = now_ns();
		uint64_t c0 = __rdtsc();
		for (long k = 0; k < m; k++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			exchange(t, &h, (uint32_t)(x % (uint64_t)n), now);
			now += 2;
			if ((k & 255) == 0)
				lfe_tcp_timers(t, now);
		}
		cyc[r] = (double)(__rdtsc() - c0) / (double)m;
		ns[r] = (now_ns() - a) / (double)m;
		(void)segs0;
	}
	qsort(cyc, 3, sizeof(cyc[0]), cmp_double);
	qsort(ns, 3, sizeof(ns[0]), cmp_double);
	printf("hold %ld: persistent exchange on a random held connection: %.0f cycles, %.0f ns "
	       "(%.0f cycles per input segment), median of 3 x %ld\n", n, cyc[1], ns[1], cyc[1] / 2, m);
#ifndef BENCH_OLD_API
	/* Bursts of HBURST, without and with the burst prefetch, taking turns. */
	double bc[2][3];
	for (int r = 0; r < 6; r++) {
		bool pf = r & 1;
		uint64_t c0 = __rdtsc();
		long rounds = m / HBURST;
		for (long k = 0; k < rounds; k++) {
			uint32_t ix[HBURST];
			for (int j = 0; j < HBURST; j++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				ix[j] = (uint32_t)(x % (uint64_t)n);
			}
			burst_exchange(t, &h, ix, now, pf);
			now += 2;
			if ((k & 15) == 0)
				lfe_tcp_timers(t, now);
		}
		bc[pf][r / 2] = (double)(__rdtsc() - c0) / (double)(rounds * HBURST);
	}
	qsort(bc[0], 3, sizeof(double), cmp_double);
	qsort(bc[1], 3, sizeof(double), cmp_double);
	printf("hold %ld: bursts of %d exchanges: %.0f cycles per exchange, %.0f with the burst prefetch "
	       "(%.2fx), medians of 3 x %ld taking turns\n", n, HBURST, bc[0][1], bc[1][1], bc[1][1] / bc[0][1], m);
#endif
	if (lfe_tcp_stats(t)->conns_active != held)
		fprintf(stderr, "bench_tcp: connections lost: %llu of %llu\n",
			(unsigned long long)lfe_tcp_stats(t)->conns_active, (unsigned long long)held);
	lfe_tcp_free(t);
	free(h.iss);
	free(h.got);
	free(h.sent);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "syn") == 0) {
		long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000000;
		if (n <= 0)
			return 2;
		return syn_main(n);
	}
	if (argc > 1 && strcmp(argv[1], "hold") == 0) {
		long n = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;
		long m = argc > 3 ? strtol(argv[3], NULL, 10) : 200000;
		if (n <= 0 || n > (1l << 24) || m <= 0)
			return 2;
		return hold_main(n, m);
	}
	static const char *const names[] = { "no per-source cap", "cap 64/source, 1024 sources",
					     "table full, every SYN evicts" };
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	if (n <= 0)
		n = 200000;
	for (int mode = 0; mode < 3; mode++) {
		double r[RUNS];
		for (int k = 0; k < RUNS; k++)
			r[k] = run(mode, n);
		qsort(r, RUNS, sizeof(r[0]), cmp_double);
		printf("%-32s %7.1f ns/connection (median of %d, min %.1f max %.1f)\n", names[mode], r[RUNS / 2],
		       RUNS, r[0], r[RUNS - 1]);
	}
	return 0;
}
