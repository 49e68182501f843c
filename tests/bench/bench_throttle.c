/* tests/bench/bench_throttle.c — what the brute-force throttle adds to a bind.
 *
 * usage: bench_throttle [iterations per run]   (default 1000000)
 * Seven runs per case; prints the median and the spread of ns per call:
 *   key hot       hash one bind's keys (SipHash-2-4 over the DN, then two over
 *                 12 and 4 bytes), the DN in L1 as it is after parsing
 *   key           the same over 65536 DNs (3 MiB of input: their cache misses
 *                 count, which the daemon does not pay)
 *   check hot     the check for one key (its cells in L1)
 *   check cold    the check for keys spread over the whole sketch (the cells
 *                 of a random address and DN: cache misses, the realistic
 *                 case under a flood)
 *   key+check     what every bind pays before verification, cold
 *   fail cold     recording a failed verdict, cold
 * Default width (4096 cells per row, 768 KiB), all three kinds on.
 * Times are this thread's CPU time, so other processes on a shared machine
 * do not count (cache and frequency effects of sharing still do).
 */
#include "backend/throttle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS  7
#define NKEYS 65536u

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

enum bcase { B_KEY_HOT, B_KEY, B_CHECK_HOT, B_CHECK_COLD, B_KEY_CHECK, B_FAIL_COLD, B_N };
static const char *const names[B_N] = { "key hot", "key", "check hot", "check cold", "key+check", "fail cold" };

static char dns[NKEYS][48];
static size_t dn_len[NKEYS];
static uint32_t addrs[NKEYS];
static struct lfe_throttle_key keys[NKEYS];

int main(int argc, char **argv)
{
	long iters = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	if (iters <= 0)
		iters = 1000000;
	struct lfe_throttle_params p = { .failures = { 100, 5, 1000 }, .window_ms = 60000,
					 .penalty_ms = 60000 };
	int err = 0;
	struct lfe_throttle *t = lfe_throttle_new(&p, &err);
	if (t == NULL) {
		fprintf(stderr, "lfe_throttle_new: %d\n", err);
		return 1;
	}
	uint64_t x = 88172645463325252ull;
	for (uint32_t i = 0; i < NKEYS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		dn_len[i] = (size_t)snprintf(dns[i], sizeof(dns[i]), "uid=user%u,ou=people,dc=example,dc=com",
					     (unsigned)(x % 1000000u));
		addrs[i] = (uint32_t)(x >> 32);
		lfe_throttle_key(t, dns[i], dn_len[i], addrs[i], &keys[i]);
		/* Some history in the sketch, under the thresholds. */
		if (i % 4 == 0)
			lfe_throttle_fail(t, &keys[i], 1000);
	}
	printf("throttle: %zu bytes per worker, %ld calls per run, %d runs\n",
	       lfe_throttle_mem_size(&p), iters, RUNS);
	uint64_t now = 2000;
	for (int c = 0; c < B_N; c++) {
		double ns[RUNS];
		volatile unsigned sink = 0;
		for (int r = 0; r < RUNS; r++) {
			double t0 = now_ns();
			for (long i = 0; i < iters; i++) {
				uint32_t k = (uint32_t)(i * 40503u) & (NKEYS - 1);
				struct lfe_throttle_key kk;
				switch (c) {
				case B_KEY_HOT:
					lfe_throttle_key(t, dns[0], dn_len[0], addrs[k], &kk);
					sink += (unsigned)kk.h[0];
					break;
				case B_KEY:
					lfe_throttle_key(t, dns[k], dn_len[k], addrs[k], &kk);
					sink += (unsigned)kk.h[0];
					break;
				case B_CHECK_HOT:
					sink += lfe_throttle_check(t, &keys[0], now);
					break;
				case B_CHECK_COLD:
					sink += lfe_throttle_check(t, &keys[k], now);
					break;
				case B_KEY_CHECK:
					lfe_throttle_key(t, dns[k], dn_len[k], addrs[k], &kk);
					sink += lfe_throttle_check(t, &kk, now);
					break;
				case B_FAIL_COLD:
					/* Each run in a fresh window (keys do reach their
					 * thresholds: that path is timed too). */
					sink += lfe_throttle_fail(t, &keys[k], now + (uint64_t)r * 1000000000000ull);
					break;
				}
				__asm__ volatile("" : : : "memory");
			}
			ns[r] = (now_ns() - t0) / (double)iters;
		}
		qsort(ns, RUNS, sizeof ns[0], cmp_double);
		printf("%-12s %7.1f ns/op (min %.1f, max %.1f)\n", names[c], ns[RUNS / 2], ns[0],
		       ns[RUNS - 1]);
		(void)sink;
	}
	lfe_throttle_free(t);
	return 0;
}
