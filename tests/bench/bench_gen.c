/* tests/bench/bench_gen.c — what ldapfe-gen spends to build one bind
 * request, before and after pre-encoding, and to draw a user.
 *
 *   bench_gen [N_USERS]      (default 1000000)
 *
 * "formatted": what the generator did per bind until pre-encoding — two
 * snprintf (DN, password) and lfe_ldap_enc_bind_req. "pre-encoded":
 * lfe_gen_bind_pdu from templates (gen/pdu.h). Draws: uniform and
 * zipf:1.0 (gen/dist.h). ns per operation in thread CPU time, the median of
 * 5 runs of 2,000,000 operations each. Figures, not a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen/dist.h"
#include "gen/pdu.h"
#include "ldap/client.h"

#define OPS 2000000u
#define RUNS 5

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void *p)
{
	(void)p;
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static volatile uint64_t sink;

enum what { W_FORMATTED, W_PREENC, W_UNIFORM, W_ZIPF };

static double run_once(enum what w, const struct lfe_gen_bindtab *t, const struct lfe_gen_dist *un,
		       const struct lfe_gen_dist *zf, uint32_t users)
{
	static const char ufmt[] = "uid=user%07u,ou=people,dc=example,dc=com", pfmt[] = "pw%07u";
	uint8_t pdu[LFE_GEN_PDU_MAX];
	uint64_t acc = 0, t0 = cpu_ns();

	for (uint32_t i = 0; i < OPS; i++) {
		uint32_t u = (uint32_t)(i * 2654435761u) % users;
		int32_t id = (int32_t)(i % 1000000u) + 1;
		switch (w) {
		case W_FORMATTED: {
			char dn[300], pw[300];
			int dl = snprintf(dn, sizeof(dn), ufmt, u);
			int pl = snprintf(pw, sizeof(pw), pfmt, u);
			acc += (uint64_t)lfe_ldap_enc_bind_req(pdu, sizeof(pdu), id, dn, (size_t)dl, pw, (size_t)pl);
			break;
		}
		case W_PREENC:
			acc += (uint64_t)lfe_gen_bind_pdu(t, pdu, sizeof(pdu), id, u, u, false);
			break;
		case W_UNIFORM:
			acc += lfe_gen_dist_user(un, lfe_gen_dist_rank(un, rng, NULL));
			break;
		case W_ZIPF:
			acc += lfe_gen_dist_user(zf, lfe_gen_dist_rank(zf, rng, NULL));
			break;
		}
		acc += pdu[i % 16u];
	}
	sink = acc;
	return (double)(cpu_ns() - t0) / OPS;
}

int main(int argc, char **argv)
{
	uint32_t users = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
	int err = 0;
	struct lfe_gen_bindtab *t = lfe_gen_bindtab_new("uid=user%07u,ou=people,dc=example,dc=com", "pw%07u", &err);
	struct lfe_gen_dist un, zf;

	if (!t || users == 0 || lfe_gen_dist_init(&un, LFE_DIST_UNIFORM, users, 0) < 0 ||
	    lfe_gen_dist_init(&zf, LFE_DIST_ZIPF, users, 1.0) < 0) {
		fprintf(stderr, "bench_gen: setup failed\n");
		return 1;
	}
	static const char *const names[] = { "bind request, formatted (2 snprintf + encode)",
					     "bind request, pre-encoded (gen/pdu.h)", "user draw, uniform",
					     "user draw, zipf:1.0" };
	printf("bench_gen: %u users, %u ops per run, median of %d runs\n", users, OPS, RUNS);
	for (int w = W_FORMATTED; w <= W_ZIPF; w++) {
		double r[RUNS];
		for (int k = 0; k < RUNS; k++)
			r[k] = run_once((enum what)w, t, &un, &zf, users);
		qsort(r, RUNS, sizeof(r[0]), cmp_d);
		printf("  %-48s %7.1f ns\n", names[w], r[RUNS / 2]);
	}
	lfe_gen_bindtab_free(t);
	return 0;
}
