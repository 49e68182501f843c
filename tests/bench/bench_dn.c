/* tests/bench/bench_dn.c — nanoseconds per lfe_dn_normalize.
 *
 * usage: bench_dn [iterations per run [index of the one DN to run]]
 *        (default 2000000 iterations, every DN)
 * Seven runs per DN; prints the median and the spread of ns per call.
 * With an index, callgrind counts one DN's instructions:
 *   valgrind --tool=callgrind --toggle-collect=lfe_dn_normalize bench_dn 1000 0
 * runs lfe_dn_normalize 7 x 1000 times on the first DN.
 */
#include "ldap/dn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 7

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

int main(int argc, char **argv)
{
	static const char *const dns[] = {
		"uid=user123456,ou=People,dc=example,dc=com",
		"UID=User123456, OU=People, DC=Example, DC=COM",
		"cn=Smith\\, John+sn=Smith,ou=People,dc=example,dc=com",
		("0.9.2342.19200300.100.1.1=user123456,2.5.4.11=People,"
		 "0.9.2342.19200300.100.1.25=example,0.9.2342.19200300.100.1.25=com"),
	};
	long iters = argc > 1 ? strtol(argv[1], NULL, 10) : 2000000;
	if (iters <= 0)
		iters = 2000000;
	size_t ndns = sizeof dns / sizeof dns[0], first = 0;
	if (argc > 2) {
		first = (size_t)strtoul(argv[2], NULL, 10);
		if (first >= ndns) {
			fprintf(stderr, "no DN %zu (0..%zu)\n", first, ndns - 1);
			return 2;
		}
		ndns = first + 1;
	}

	for (size_t d = first; d < ndns; d++) {
		const uint8_t *in = (const uint8_t *)dns[d];
		size_t len = strlen(dns[d]);
		char out[LFE_DN_MAX + 1];
		double ns[RUNS];
		volatile ssize_t sink = 0;
		for (int r = 0; r < RUNS; r++) {
			double t0 = now_ns();
			for (long i = 0; i < iters; i++) {
				sink += lfe_dn_normalize(in, len, out, sizeof out);
				/* Keep the compiler from hoisting the call. */
				__asm__ volatile("" : : "r"(out) : "memory");
			}
			ns[r] = (now_ns() - t0) / (double)iters;
		}
		if (sink < 0) {
			fprintf(stderr, "normalize failed on %s\n", dns[d]);
			return 1;
		}
		qsort(ns, RUNS, sizeof ns[0], cmp_double);
		printf("lfe_dn_normalize %-70s median %6.1f ns/op (min %.1f, max %.1f, %d runs x %ld)\n",
		       dns[d], ns[RUNS / 2], ns[0], ns[RUNS - 1], RUNS, iters);
	}
	return 0;
}
