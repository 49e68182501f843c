/* tests/backend/test_throttle.c — brute-force throttle: parameters,
 * thresholds per kind, sliding-window decay, penalty expiry, other keys
 * unaffected, one-sided count-min error, keyed hashing, fixed memory and no
 * allocation after setup. Time is a parameter: nothing here sleeps. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/throttle.h"
#include "tests/check.h"

#define MS 1000ull
#define SRC_A 0x0a000001u   /* 10.0.0.1 */
#define SRC_B 0x0a000002u
#define ALICE "uid=alice,ou=people,dc=example,dc=com"
#define BOB   "uid=bob,ou=people,dc=example,dc=com"
#define NOBODY "uid=nobody,ou=people,dc=example,dc=com"

static const uint8_t secret[16] = "0123456789abcdef";

static struct lfe_throttle_params params(uint32_t src, uint32_t pair, uint32_t dn)
{
	struct lfe_throttle_params p = { .window_ms = 1000, .penalty_ms = 500, .secret = secret };
	p.failures[LFE_THR_SRC] = src;
	p.failures[LFE_THR_PAIR] = pair;
	p.failures[LFE_THR_DN] = dn;
	return p;
}

static struct lfe_throttle_key key(const struct lfe_throttle *t, const char *dn, uint32_t src)
{
	struct lfe_throttle_key k;
	lfe_throttle_key(t, dn, strlen(dn), src, &k);
	return k;
}

static void test_params(void)
{
	static const struct {
		const char *name;
		uint32_t width, window_ms, penalty_ms, failures;
	} bad[] = {
		{ "width not a power of two", 1000, 1000, 1000, 5 },
		{ "width too small", 32, 1000, 1000, 5 },
		{ "width too large", 131072, 1000, 1000, 5 },
		{ "window 0", 0, 0, 1000, 5 },
		{ "window over a day", 0, 86400001, 1000, 5 },
		{ "penalty 0", 0, 1000, 0, 5 },
		{ "threshold over 16 bits", 0, 1000, 1000, 65536 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct lfe_throttle_params p = params(bad[i].failures, 0, 0);
		p.width = bad[i].width;
		p.window_ms = bad[i].window_ms;
		p.penalty_ms = bad[i].penalty_ms;
		int err = 0;
		CHECK(lfe_throttle_mem_size(&p) == 0);
		CHECK(lfe_throttle_new(&p, &err) == NULL && err == -EINVAL);
		if (err != -EINVAL)
			fprintf(stderr, "  case: %s\n", bad[i].name);
	}
	/* Too small or misaligned caller memory. */
	struct lfe_throttle_params p = params(5, 0, 0);
	p.width = 64;
	size_t sz = lfe_throttle_mem_size(&p);
	CHECK(sz > 0);
	uint8_t *mem = aligned_alloc(64, sz + 64);
	int err = 0;
	CHECK(lfe_throttle_init(mem, sz - 1, &p, &err) == NULL && err == -EINVAL);
	CHECK(lfe_throttle_init(mem + 8, sz, &p, &err) == NULL && err == -EINVAL);
	CHECK(lfe_throttle_init(mem, sz, &p, &err) == (void *)mem);
	free(mem);
	/* All kinds off: nothing is ever throttled. */
	struct lfe_throttle_params off = params(0, 0, 0);
	struct lfe_throttle *t = lfe_throttle_new(&off, NULL);
	struct lfe_throttle_key k = key(t, ALICE, SRC_A);
	for (int i = 0; i < 100; i++)
		CHECK(lfe_throttle_fail(t, &k, 0) == 0);
	CHECK(lfe_throttle_check(t, &k, 0) == 0);
	lfe_throttle_free(t);
	lfe_throttle_free(NULL);
}

/* Each kind reaches its own threshold, and only the keys of that kind are
 * throttled. */
static void test_thresholds(void)
{
	struct lfe_throttle_params p = params(5, 3, 0);
	struct lfe_throttle *t = lfe_throttle_new(&p, NULL);
	uint64_t now = 10 * MS;

	/* PAIR: three failures for alice from A. */
	struct lfe_throttle_key aa = key(t, ALICE, SRC_A);
	CHECK(lfe_throttle_fail(t, &aa, now) == 0);
	CHECK(lfe_throttle_fail(t, &aa, now) == 0);
	CHECK(lfe_throttle_check(t, &aa, now) == 0);
	CHECK(lfe_throttle_estimate(t, &aa, LFE_THR_PAIR, now) == 2);
	CHECK(lfe_throttle_fail(t, &aa, now) == LFE_THR_BIT(LFE_THR_PAIR));
	CHECK(lfe_throttle_check(t, &aa, now) == LFE_THR_BIT(LFE_THR_PAIR));
	/* alice from B (the lockout victim's own machine), bob from A: fine. */
	struct lfe_throttle_key ab = key(t, ALICE, SRC_B), ba = key(t, BOB, SRC_A);
	CHECK(lfe_throttle_check(t, &ab, now) == 0);
	CHECK(lfe_throttle_check(t, &ba, now) == 0);
	/* SRC: two more failures from A, for other DNs (unknown ones count
	 * the same as existing ones: the throttle never sees the difference). */
	struct lfe_throttle_key na = key(t, NOBODY, SRC_A);
	CHECK(lfe_throttle_fail(t, &ba, now) == 0);
	CHECK(lfe_throttle_fail(t, &na, now) == LFE_THR_BIT(LFE_THR_SRC));
	CHECK(lfe_throttle_check(t, &ba, now) == LFE_THR_BIT(LFE_THR_SRC));
	CHECK(lfe_throttle_check(t, &na, now) == LFE_THR_BIT(LFE_THR_SRC));
	CHECK(lfe_throttle_check(t, &aa, now) ==
	      (LFE_THR_BIT(LFE_THR_SRC) | LFE_THR_BIT(LFE_THR_PAIR)));
	/* B and every DN from B stay open. */
	struct lfe_throttle_key bb = key(t, BOB, SRC_B);
	CHECK(lfe_throttle_check(t, &ab, now) == 0);
	CHECK(lfe_throttle_check(t, &bb, now) == 0);
	lfe_throttle_free(t);

	/* DN (global): failures for alice from many sources add up. */
	p = params(0, 0, 10);
	t = lfe_throttle_new(&p, NULL);
	for (uint32_t i = 0; i < 9; i++) {
		struct lfe_throttle_key k = key(t, ALICE, 0x0b000000u + i);
		CHECK(lfe_throttle_fail(t, &k, now) == 0);
	}
	struct lfe_throttle_key k = key(t, ALICE, 0x0c000000u);
	CHECK(lfe_throttle_fail(t, &k, now) == LFE_THR_BIT(LFE_THR_DN));
	struct lfe_throttle_key any = key(t, ALICE, 0x0d000000u);
	CHECK(lfe_throttle_check(t, &any, now) == LFE_THR_BIT(LFE_THR_DN));
	struct lfe_throttle_key other = key(t, BOB, 0x0b000000u);
	CHECK(lfe_throttle_check(t, &other, now) == 0);
	lfe_throttle_free(t);
}

/* The penalty ends exactly penalty_ms after the failure that started it. */
static void test_penalty_expiry(void)
{
	struct lfe_throttle_params p = params(3, 0, 0);
	struct lfe_throttle *t = lfe_throttle_new(&p, NULL);
	struct lfe_throttle_key k = key(t, ALICE, SRC_A);
	uint64_t t0 = 5000 * MS + 123;

	for (int i = 0; i < 2; i++)
		CHECK(lfe_throttle_fail(t, &k, t0) == 0);
	CHECK(lfe_throttle_fail(t, &k, t0) == LFE_THR_BIT(LFE_THR_SRC));
	CHECK(lfe_throttle_check(t, &k, t0 + 500 * MS - 1) == LFE_THR_BIT(LFE_THR_SRC));
	CHECK(lfe_throttle_check(t, &k, t0 + 500 * MS) == 0);
	/* Long after: still open, nothing wrapped. */
	CHECK(lfe_throttle_check(t, &k, t0 + 86400000 * MS) == 0);
	lfe_throttle_free(t);
}

/* Failures age out of the sliding window. */
static void test_decay(void)
{
	struct lfe_throttle_params p = params(5, 0, 0);
	struct lfe_throttle *t = lfe_throttle_new(&p, NULL);
	struct lfe_throttle_key k = key(t, ALICE, SRC_A);
	uint64_t t0 = 7000 * MS;   /* the start of an epoch */

	for (int i = 0; i < 4; i++)
		CHECK(lfe_throttle_fail(t, &k, t0) == 0);
	CHECK(lfe_throttle_estimate(t, &k, LFE_THR_SRC, t0) == 4);
	CHECK(lfe_throttle_estimate(t, &k, LFE_THR_SRC, t0 + 999 * MS) == 4);
	/* Half a window into the next epoch: half of the previous one counts. */
	CHECK(lfe_throttle_estimate(t, &k, LFE_THR_SRC, t0 + 1500 * MS) == 2);
	/* Between exact fractions the estimate rounds up, never below the
	 * true count (issue 32): 4 x 0.499999, 4 x 0.249, 4 x 0.001. */
	CHECK(lfe_throttle_estimate(t, &k, LFE_THR_SRC, t0 + 1500 * MS + 1) == 2);
	CHECK(lfe_throttle_estimate(t, &k, LFE_THR_SRC, t0 + 1751 * MS) == 1);
	CHECK(lfe_throttle_estimate(t, &k, LFE_THR_SRC, t0 + 1999 * MS) == 1);
	CHECK(lfe_throttle_estimate(t, &k, LFE_THR_SRC, t0 + 2000 * MS) == 0);
	/* Four more two windows later: still under the threshold. */
	for (int i = 0; i < 4; i++)
		CHECK(lfe_throttle_fail(t, &k, t0 + 2000 * MS) == 0);
	CHECK(lfe_throttle_check(t, &k, t0 + 2000 * MS) == 0);
	/* A steady trickle of one failure per 400 ms stays under 5 per window
	 * (at most 3 fit in any 1000 ms; the two-bucket estimate, rounded up,
	 * sees at most 4). */
	struct lfe_throttle_key slow = key(t, BOB, SRC_B);
	unsigned started = 0;
	for (uint64_t i = 0; i < 40; i++)
		started |= lfe_throttle_fail(t, &slow, t0 + i * 400 * MS);
	CHECK(started == 0);
	/* Twice that rate is throttled within the first window. */
	struct lfe_throttle_key fast = key(t, NOBODY, 0x0e000001u);
	uint64_t i = 0;
	while (i < 40 && lfe_throttle_fail(t, &fast, t0 + i * 150 * MS) == 0)
		i++;
	CHECK(i == 4);
	/* The counters saturate instead of wrapping. */
	struct lfe_throttle_key heavy = key(t, NOBODY, 0x0e000002u);
	for (uint32_t j = 0; j < 70000; j++)
		lfe_throttle_fail(t, &heavy, t0);
	CHECK(lfe_throttle_estimate(t, &heavy, LFE_THR_SRC, t0) == 65535);
	lfe_throttle_free(t);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* Count-min: with a tiny sketch and many keys, every estimate is at least
 * the true count, and collisions make some estimates larger. */
static void test_overestimate_only(void)
{
	enum { N = 3000 };
	static uint32_t truth[N];
	struct lfe_throttle_params p = params(60000, 0, 0);
	p.width = 64;
	struct lfe_throttle *t = lfe_throttle_new(&p, NULL);
	uint64_t now = 42 * MS;
	unsigned over = 0, below = 0;

	for (uint32_t i = 0; i < N; i++) {
		truth[i] = 1 + rnd() % 3;
		struct lfe_throttle_key k = key(t, "", 0x20000000u + i);
		for (uint32_t j = 0; j < truth[i]; j++)
			lfe_throttle_fail(t, &k, now);
	}
	for (uint32_t i = 0; i < N; i++) {
		struct lfe_throttle_key k = key(t, "", 0x20000000u + i);
		uint32_t e = lfe_throttle_estimate(t, &k, LFE_THR_SRC, now);
		below += e < truth[i];
		over += e > truth[i];
	}
	CHECK(below == 0);
	CHECK(over > N / 2);
	lfe_throttle_free(t);
}

/* The cells depend on the secret: another secret, other cells. */
static void test_keyed(void)
{
	static const uint8_t other[16] = "fedcba9876543210";
	struct lfe_throttle_params p = params(5, 5, 5);
	struct lfe_throttle *t1 = lfe_throttle_new(&p, NULL), *t2 = lfe_throttle_new(&p, NULL);
	p.secret = other;
	struct lfe_throttle *t3 = lfe_throttle_new(&p, NULL);
	p.secret = NULL;
	int err = 0;
	struct lfe_throttle *t4 = lfe_throttle_new(&p, &err), *t5 = lfe_throttle_new(&p, &err);
	CHECK(t4 && t5);
	struct lfe_throttle_key k1 = key(t1, ALICE, SRC_A), k2 = key(t2, ALICE, SRC_A);
	struct lfe_throttle_key k3 = key(t3, ALICE, SRC_A), k4 = key(t4, ALICE, SRC_A);
	struct lfe_throttle_key k5 = key(t5, ALICE, SRC_A);
	for (unsigned kind = 0; kind < LFE_THR_KINDS; kind++) {
		CHECK(k1.h[kind] == k2.h[kind]);
		CHECK(k1.h[kind] != k3.h[kind]);
		CHECK(k4.h[kind] != k5.h[kind]);   /* drawn secrets differ */
	}
	/* The kinds are separated: the same bytes give different hashes. */
	CHECK(k1.h[LFE_THR_SRC] != k1.h[LFE_THR_DN] && k1.h[LFE_THR_DN] != k1.h[LFE_THR_PAIR]);
	/* A DN one byte longer is another key. */
	struct lfe_throttle_key kx;
	lfe_throttle_key(t1, ALICE, strlen(ALICE) - 1, SRC_A, &kx);
	CHECK(kx.h[LFE_THR_DN] != k1.h[LFE_THR_DN] && kx.h[LFE_THR_SRC] == k1.h[LFE_THR_SRC]);
	lfe_throttle_free(t1);
	lfe_throttle_free(t2);
	lfe_throttle_free(t3);
	lfe_throttle_free(t4);
	lfe_throttle_free(t5);
}

/* Fixed memory: the throttle lives in the caller's block, never writes past
 * it, and no call after init allocates, whatever the keys. */
static void test_fixed_memory(void)
{
	struct lfe_throttle_params p = params(3, 3, 3);
	p.width = 256;
	size_t sz = lfe_throttle_mem_size(&p);
	size_t cells = (size_t)LFE_THR_KINDS * LFE_THROTTLE_DEPTH * 256 * 16;
	CHECK(sz >= cells && sz <= cells + 256);
	uint8_t *mem = aligned_alloc(64, sz + 4096);
	memset(mem + sz, 0xa5, 4096);
	struct lfe_throttle *t = lfe_throttle_init(mem, sz, &p, NULL);
	CHECK(t != NULL);

	struct mallinfo2 before = mallinfo2();
	char dn[64];
	unsigned throttled = 0;
	for (uint32_t i = 0; i < 200000; i++) {
		int n = snprintf(dn, sizeof(dn), "uid=u%u,dc=example,dc=com", rnd() % 5000);
		struct lfe_throttle_key k;
		lfe_throttle_key(t, dn, (size_t)n, rnd(), &k);
		uint64_t now = (uint64_t)i * 37;
		if (lfe_throttle_check(t, &k, now))
			throttled++;
		else
			lfe_throttle_fail(t, &k, now);
	}
	struct mallinfo2 after = mallinfo2();
	CHECK(after.uordblks == before.uordblks && after.hblkhd == before.hblkhd);
	CHECK(throttled > 0);
	size_t spoiled = 0;
	for (size_t i = 0; i < 4096; i++)
		spoiled += mem[sz + i] != 0xa5;
	CHECK(spoiled == 0);
	free(mem);
}

int main(void)
{
	test_params();
	test_thresholds();
	test_penalty_expiry();
	test_decay();
	test_overestimate_only();
	test_keyed();
	test_fixed_memory();
	return check_done();
}
