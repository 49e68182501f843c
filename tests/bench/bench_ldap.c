/* bench_ldap.c — cost of the codec on the bind path.
 * Prints the median over 7 runs of ns per (lfe_ldap_decode of a simple
 * BindRequest + lfe_ldap_enc_result of its BindResponse), and of ns per
 * lfe_ldap_frame. Usage: bench_ldap [iterations per run, default 2000000].
 * Wall time (CLOCK_MONOTONIC) is the figure; this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) is printed beside it because on a shared,
 * overcommitted VM the wall clock also counts time spent descheduled. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ldap/msg.h"

#define RUNS 7

/* ldapwhoami -x -D uid=alice,ou=people,dc=example,dc=com -w 's3cret!'
 * (tests/ldap/vectors/whoami_simple.hex, first PDU). */
static const uint8_t bind_pdu[] = {
	0x30, 0x38, 0x02, 0x01, 0x01, 0x60, 0x33, 0x02, 0x01, 0x03, 0x04, 0x25,
	'u', 'i', 'd', '=', 'a', 'l', 'i', 'c', 'e', ',', 'o', 'u', '=', 'p',
	'e', 'o', 'p', 'l', 'e', ',', 'd', 'c', '=', 'e', 'x', 'a', 'm', 'p',
	'l', 'e', ',', 'd', 'c', '=', 'c', 'o', 'm', 0x80, 0x07,
	's', '3', 'c', 'r', 'e', 't', '!',
};

static double now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The compiler must not drop the loop: results feed this sink. */
static volatile uint64_t sink;

static double run_bind(unsigned long iters, clockid_t clk)
{
	struct lfe_ldap_msg m;
	uint8_t out[64];
	struct lfe_ldap_result r = { .code = LFE_RC_SUCCESS };
	uint64_t acc = 0;
	double t0 = now_ns(clk);

	for (unsigned long i = 0; i < iters; i++) {
		if (lfe_ldap_decode(bind_pdu, sizeof bind_pdu, &m) != 0)
			abort();
		acc += m.u.bind.simple.len;
		ssize_t n = lfe_ldap_enc_result(out, sizeof out, m.msgid, LFE_OP_BIND_RESP, &r);
		acc += (uint64_t)n + out[n - 1];
	}
	double t = now_ns(clk) - t0;
	sink += acc;
	return t / (double)iters;
}

static double run_frame(unsigned long iters, clockid_t clk)
{
	size_t pl, acc = 0;
	double t0 = now_ns(clk);

	for (unsigned long i = 0; i < iters; i++) {
		/* A varying length defeats hoisting the call out of the loop. */
		size_t len = sizeof bind_pdu - (i & 1);
		acc += (size_t)lfe_ldap_frame(bind_pdu, len, LFE_LDAP_DEFAULT_MAX_PDU, &pl) + pl;
	}
	double t = now_ns(clk) - t0;
	sink += acc;
	return t / (double)iters;
}

int main(int argc, char **argv)
{
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000ul;
	static const struct {
		clockid_t clk;
		const char *name;
	} clocks[] = { { CLOCK_MONOTONIC, "wall" }, { CLOCK_THREAD_CPUTIME_ID, "cpu" } };

	if (iters < 1000000ul)
		iters = 1000000ul;
	for (size_t c = 0; c < 2; c++) {
		double b[RUNS], f[RUNS];
		for (int r = 0; r < RUNS; r++) {
			b[r] = run_bind(iters, clocks[c].clk);
			f[r] = run_frame(iters, clocks[c].clk);
		}
		qsort(b, RUNS, sizeof b[0], cmp_d);
		qsort(f, RUNS, sizeof f[0], cmp_d);
		printf("%-4s bind decode+encode: %6.1f ns median (min %.1f, max %.1f), %d runs of %lu\n",
		       clocks[c].name, b[RUNS / 2], b[0], b[RUNS - 1], RUNS, iters);
		printf("%-4s lfe_ldap_frame:     %6.1f ns median (min %.1f, max %.1f), %d runs of %lu\n",
		       clocks[c].name, f[RUNS / 2], f[0], f[RUNS - 1], RUNS, iters);
	}
	return 0;
}
