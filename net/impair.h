/* net/impair.h — a seeded impairment stage: drop, duplicate and
 * reorder items on a path, because this kernel has no netem.
 *
 * Items are opaque pointers (mbufs in the daemon, segment copies in the TCP
 * tests). The stage owns an item from the moment it is passed in until it is
 * written to `out` (the caller owns it again) or freed through ops->free.
 *
 * Deterministic: the same seed and the same sequence of calls (items and
 * now_us) give the same decisions. No allocation after lfe_impair_new(); one
 * instance per path and thread, nothing locks.
 */
#ifndef LFE_NET_IMPAIR_H
#define LFE_NET_IMPAIR_H

#include <stdint.h>

#define LFE_IMPAIR_MAX_HOLD 64

struct lfe_impair_cfg {
	uint64_t seed;
	uint32_t drop_ppm, dup_ppm, reorder_ppm;   /* parts per million, each ≤ 1e6 */
	uint32_t max_hold;  /* items held back for reordering, ≤ 64 */
	uint32_t hold_us;   /* a held item is released after this long at most */
};

struct lfe_impair_ops {
	void *(*clone)(void *ctx, void *item);  /* NULL → no dup; may return NULL (no dup) */
	void (*free)(void *ctx, void *item);
	void *ctx;
};

/* NULL on a bad cfg (max_hold > 64, a ppm > 1e6, ops->free NULL) or no memory. */
struct lfe_impair *lfe_impair_new(const struct lfe_impair_cfg *cfg, const struct lfe_impair_ops *ops);
/* Frees held items via ops->free. NULL is a no-op. */
void lfe_impair_free(struct lfe_impair *im);

/* Pass n items through: each is dropped (freed), duplicated (clone, the copy
 * right after the original) or held back and released once 1..3 later items
 * have passed, or after hold_us. Items held past hold_us are released first.
 * Call it with n = 0 now and then so held items leave on time. Returns items
 * written to out; cap ≥ 2n + max_hold always suffices (what does not fit is
 * freed and counted as dropped). */
uint32_t lfe_impair_apply(struct lfe_impair *im, void *const *in, uint32_t n, void **out,
			  uint32_t cap, uint64_t now_us);

struct lfe_impair_stats {
	uint64_t in, out, dropped, duplicated, reordered;
};
const struct lfe_impair_stats *lfe_impair_stats(const struct lfe_impair *im);

#endif
