/* gen/dist.h — which user of the population a bind picks.
 *
 * uniform: every user equally likely. zipf:S: the user of popularity rank k
 * (1..N) is drawn with probability proportional to 1/k^S — real logins
 * concentrate on active users. Zipf draws use rejection-inversion sampling
 * (W. Hörmann, G. Derflinger, "Rejection-inversion to generate variates
 * from monotone discrete distributions", ACM TOMACS 6(3), 1996): no table,
 * O(1) expected time (fewer than 1.1 tries per draw for every S > 0), any
 * N up to 2^32. Ranks are then spread over the population by a fixed
 * bijection (rank * stride + offset mod N, stride coprime to N), so the
 * popular users are not neighbours in the store's key order, where they
 * would share B-tree pages and flatter the cache.
 *
 * Pure C, no DPDK, no allocation; the caller supplies uniform 64-bit random
 * numbers. One struct lfe_gen_dist is read-only after init: lcores may
 * share it.
 */
#ifndef LFE_GEN_DIST_H
#define LFE_GEN_DIST_H

#include <stdint.h>

enum lfe_gen_dist_kind { LFE_DIST_UNIFORM = 0, LFE_DIST_ZIPF = 1 };

struct lfe_gen_dist {
	enum lfe_gen_dist_kind kind;
	uint32_t n;
	double s;                  /* zipf exponent */
	/* rejection-inversion constants */
	double h_x1, h_n, cut;
	uint64_t stride, offset;   /* rank → user bijection */
};

/* n ≥ 1; s > 0 for zipf (ignored for uniform). 0 or -EINVAL. */
int lfe_gen_dist_init(struct lfe_gen_dist *d, enum lfe_gen_dist_kind kind, uint32_t n, double s);

/* A Zipf rank in 1..n (uniform: 1..n equally likely); `next` returns
 * uniform 64-bit numbers and is called once or, rarely, a few times. */
uint32_t lfe_gen_dist_rank(const struct lfe_gen_dist *d, uint64_t (*next)(void *), void *rng);

/* The uniform rank lfe_gen_dist_rank draws from the random number r (its
 * high 32 bits scaled to n: no division), inline for a caller that has r
 * at hand: the same draw without a call and a callback per bind. */
static inline uint32_t lfe_gen_dist_rank_uniform(const struct lfe_gen_dist *d, uint64_t r)
{
	return 1u + (uint32_t)(((r >> 32) * d->n) >> 32);
}

/* The user index (0..n-1) of a rank (1..n): a bijection. */
static inline uint32_t lfe_gen_dist_user(const struct lfe_gen_dist *d, uint32_t rank)
{
	uint64_t x = (uint64_t)(rank - 1u) * d->stride + d->offset;
	return (uint32_t)(x < d->n ? x : x % d->n);   /* uniform: the identity, no division */
}

#endif
