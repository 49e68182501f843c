/* gen/hist.c — see hist.h. */
#include "gen/hist.h"

#include <string.h>

void lfe_hist_reset(struct lfe_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void lfe_hist_merge(struct lfe_hist *dst, const struct lfe_hist *src)
{
	for (unsigned i = 0; i < LFE_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t lfe_hist_bucket_lo(unsigned i)
{
	if (i < LFE_HIST_SUB)
		return i;
	unsigned e = i / LFE_HIST_SUB - 1u + LFE_HIST_SUB_BITS;
	uint64_t m = i % LFE_HIST_SUB;
	return (LFE_HIST_SUB + m) << (e - LFE_HIST_SUB_BITS);
}

uint64_t lfe_hist_bucket_hi(unsigned i)
{
	if (i < LFE_HIST_SUB)
		return i;
	unsigned e = i / LFE_HIST_SUB - 1u + LFE_HIST_SUB_BITS;
	/* The last bucket ends at 2^64 - 1; the shift below would overflow. */
	if (i == LFE_HIST_BUCKETS - 1u)
		return UINT64_MAX;
	return lfe_hist_bucket_lo(i) + (1ull << (e - LFE_HIST_SUB_BITS)) - 1u;
}

uint64_t lfe_hist_quantile(const struct lfe_hist *h, double q)
{
	if (h->count == 0)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	uint64_t rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < LFE_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t hi = lfe_hist_bucket_hi(i);
			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}
