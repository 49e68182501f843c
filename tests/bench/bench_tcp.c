/* tests/bench/bench_tcp.c — nanoseconds per short connection through
 * lfe_tcp (SYN, ACK carrying a 64-byte request, the app's deadline and
 * evictable marks set as the glue does, a 32-byte reply, RST), with the
 * per-source cap off and on, and with the table kept full of evictable
 * idle connections so that every SYN evicts one.
 *
 * usage: bench_tcp [connections per run]   (default 200000)
 * Seven runs per mode; prints the median and the spread of ns per connection.
 */
#include "dataplane/tcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int main(int argc, char **argv)
{
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
