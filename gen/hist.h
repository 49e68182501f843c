/* gen/hist.h — a log-linear latency histogram of rdtsc deltas.
 *
 * Values below 2^LFE_HIST_SUB_BITS are counted exactly; above, every power
 * of two is split into 2^LFE_HIST_SUB_BITS equal buckets, so a bucket is at
 * most 1/32 (3.1 %) of its value wide whatever the magnitude, from one cycle
 * to 2^64. Fixed size, no allocation: recording is an index computation and
 * an increment, cheap enough for every response of a load generator's hot
 * path. Not thread-safe: one histogram per lcore, merged for reporting.
 */
#ifndef LFE_GEN_HIST_H
#define LFE_GEN_HIST_H

#include <stdint.h>

#define LFE_HIST_SUB_BITS 5u
#define LFE_HIST_SUB      (1u << LFE_HIST_SUB_BITS)
#define LFE_HIST_BUCKETS  ((64u - LFE_HIST_SUB_BITS + 1u) * LFE_HIST_SUB)

struct lfe_hist {
	uint64_t count;
	uint64_t max;
	uint64_t sum;
	uint64_t b[LFE_HIST_BUCKETS];
};

static inline unsigned lfe_hist_index(uint64_t v)
{
	if (v < LFE_HIST_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);   /* e >= SUB_BITS */
	unsigned m = (unsigned)(v >> (e - LFE_HIST_SUB_BITS)) & (LFE_HIST_SUB - 1u);
	return (e - LFE_HIST_SUB_BITS + 1u) * LFE_HIST_SUB + m;
}

static inline void lfe_hist_add(struct lfe_hist *h, uint64_t v)
{
	h->b[lfe_hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

void lfe_hist_reset(struct lfe_hist *h);
/* Add every count of src to dst. */
void lfe_hist_merge(struct lfe_hist *dst, const struct lfe_hist *src);
/* Smallest and largest value that land in bucket i. */
uint64_t lfe_hist_bucket_lo(unsigned i);
uint64_t lfe_hist_bucket_hi(unsigned i);
/* The value at quantile q (0..1): the upper bound of the bucket holding the
 * ceil(q * count)-th smallest sample, clamped to the exact maximum, so a
 * reported percentile is never below the true one by more than a bucket and
 * never above the largest sample. 0 when empty. */
uint64_t lfe_hist_quantile(const struct lfe_hist *h, double q);

#endif
