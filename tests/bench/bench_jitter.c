/* tests/bench/bench_jitter.c — how much of a CPU the machine itself takes
 * from a busy-polling thread: the floor under any latency figure a poll
 * core reports on this machine.
 *
 * usage: bench_jitter [seconds [cpu ...]]   (default 2 s on CPUs 0 and 1)
 *
 * One thread per CPU given, pinned, spins reading the TSC; a gap between
 * two consecutive reads longer than 5 µs is time the thread did not run
 * (an interrupt, the guest's timer tick, the hypervisor running something
 * else: steal). Per CPU it prints the gaps per second by length, the share
 * of the time lost (all of it, and in gaps of 50 µs or more) and the
 * longest gap, and beside them the CPU's steal
 * and irq/softirq time from /proc/stat over the same window.
 *
 * Why: a poll-mode core's tail latency cannot be lower than the gaps of its
 * CPU (and of the generator's): a bind in flight when its core stops for
 * 80 µs waits 80 µs, so the share of the time in gaps of 50 µs or more is
 * about the least share of binds slower than 50 µs, at any load. run-bench.sh prints this beside its latency rows.
 * The threads run concurrently, so run it on an otherwise idle machine.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define MAX_CPUS 64
#define NB 6
static const double bound_us[NB] = { 5, 20, 50, 100, 200, 1000 };   /* lower bounds */

struct probe {
	int cpu;
	double secs, tsc_per_us;
	uint64_t n[NB], lost, lost50, max;
	int err;
	pthread_t th;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* TSC ticks per µs over 100 ms of CLOCK_MONOTONIC. */
static double tsc_rate(void)
{
	double a = now_s(), b;
	uint64_t t0 = __rdtsc();
	do
		b = now_s();
	while (b - a < 0.1);
	return (double)(__rdtsc() - t0) / ((b - a) * 1e6);
}

static void *spin(void *arg)
{
	struct probe *p = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	p->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (p->err)
		return NULL;
	uint64_t min_gap = (uint64_t)(bound_us[0] * p->tsc_per_us);
	uint64_t last = __rdtsc(), end = last + (uint64_t)(p->secs * 1e6 * p->tsc_per_us);
	for (;;) {
		uint64_t t = __rdtsc(), d = t - last;
		last = t;
		if (t >= end)
			break;
		if (d < min_gap)
			continue;
		double us = (double)d / p->tsc_per_us;
		int b = NB - 1;
		while (b > 0 && us < bound_us[b])
			b--;
		p->n[b]++;
		p->lost += d;
		if (b >= 2)
			p->lost50 += d;
		if (d > p->max)
			p->max = d;
	}
	return NULL;
}

/* /proc/stat's steal, irq and softirq ticks of one CPU (USER_HZ). */
static int cpu_ticks(int cpu, unsigned long long *steal, unsigned long long *irq)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512], name[16];
	int rc = -ENOENT;

	if (f == NULL)
		return -errno;
	snprintf(name, sizeof name, "cpu%d ", cpu);
	while (fgets(line, sizeof line, f)) {
		unsigned long long v[8];
		if (strncmp(line, name, strlen(name)) != 0)
			continue;
		if (sscanf(line + strlen(name), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
			*irq = v[5] + v[6];
			*steal = v[7];
			rc = 0;
		}
		break;
	}
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	struct probe p[MAX_CPUS];
	int n = 0;
	unsigned long long st0[MAX_CPUS], ir0[MAX_CPUS];

	if (secs <= 0 || secs > 600) {
		fprintf(stderr, "usage: bench_jitter [seconds (0-600] [cpu ...]]\n");
		return 2;
	}
	memset(p, 0, sizeof p);
	for (int i = 2; i < argc && n < MAX_CPUS; i++)
		p[n++].cpu = atoi(argv[i]);
	if (n == 0) {
		p[0].cpu = 0;
		p[1].cpu = 1;
		n = 2;
	}
	double rate = tsc_rate();
	for (int i = 0; i < n; i++) {
		p[i].secs = secs;
		p[i].tsc_per_us = rate;
		if (cpu_ticks(p[i].cpu, &st0[i], &ir0[i]) < 0)
			st0[i] = ir0[i] = 0;
	}
	for (int i = 0; i < n; i++)
		if ((errno = pthread_create(&p[i].th, NULL, spin, &p[i])) != 0) {
			perror("bench_jitter: pthread_create");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(p[i].th, NULL);
	double hz = (double)sysconf(_SC_CLK_TCK);
	printf("bench_jitter: %.1f s per CPU, gaps in a TSC spin loop per second by length (us)\n", secs);
	printf("cpu %8s %8s %8s %8s %8s %8s %7s %7s %8s %7s %6s\n", "5-20", "20-50", "50-100",
	       "100-200", "200-1000", ">=1000", "lost%", ">=50us%", "max us", "steal%", "irq%");
	int bad = 0;
	for (int i = 0; i < n; i++) {
		unsigned long long st, ir;
		if (p[i].err) {
			fprintf(stderr, "bench_jitter: cpu %d: %s\n", p[i].cpu, strerror(p[i].err));
			bad = 1;
			continue;
		}
		if (cpu_ticks(p[i].cpu, &st, &ir) < 0)
			st = st0[i], ir = ir0[i];
		printf("%3d", p[i].cpu);
		for (int b = 0; b < NB; b++)
			printf(" %8.1f", (double)p[i].n[b] / secs);
		printf(" %7.2f %7.2f %8.0f %7.2f %6.2f\n", 100.0 * (double)p[i].lost / (secs * 1e6 * rate),
		       100.0 * (double)p[i].lost50 / (secs * 1e6 * rate),
		       (double)p[i].max / rate, 100.0 * (double)(st - st0[i]) / hz / secs,
		       100.0 * (double)(ir - ir0[i]) / hz / secs);
	}
	return bad;
}
