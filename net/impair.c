/* net/impair.c — see impair.h. */
#include "net/impair.h"

#include <stdbool.h>
#include <stdlib.h>

struct held {
	void *item;
	uint64_t since_us;
	uint32_t wait;   /* later items still to pass before release */
};

struct lfe_impair {
	struct lfe_impair_cfg cfg;
	struct lfe_impair_ops ops;
	uint64_t rng;
	uint32_t n_held;
	struct held held[LFE_IMPAIR_MAX_HOLD];   /* FIFO, oldest first */
	struct lfe_impair_stats st;
};

/* splitmix64: reproducible from the seed, and every seed (0 included) gives
 * a full-period stream. */
static uint64_t rnd(struct lfe_impair *im)
{
	uint64_t z = (im->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool roll(struct lfe_impair *im, uint32_t ppm)
{
	if (ppm == 0)
		return false;
	/* Scale 32 random bits onto [0, 1e6) without the bias of a modulo. */
	return (uint32_t)(((rnd(im) >> 32) * 1000000ull) >> 32) < ppm;
}

struct lfe_impair *lfe_impair_new(const struct lfe_impair_cfg *cfg, const struct lfe_impair_ops *ops)
{
	if (!cfg || !ops || !ops->free || cfg->max_hold > LFE_IMPAIR_MAX_HOLD ||
	    cfg->drop_ppm > 1000000 || cfg->dup_ppm > 1000000 || cfg->reorder_ppm > 1000000)
		return NULL;
	struct lfe_impair *im = calloc(1, sizeof(*im));
	if (!im)
		return NULL;
	im->cfg = *cfg;
	im->ops = *ops;
	im->rng = cfg->seed;
	return im;
}

void lfe_impair_free(struct lfe_impair *im)
{
	if (!im)
		return;
	for (uint32_t i = 0; i < im->n_held; i++)
		im->ops.free(im->ops.ctx, im->held[i].item);
	free(im);
}

static void put(struct lfe_impair *im, void *item, void **out, uint32_t cap, uint32_t *k)
{
	if (*k < cap) {
		out[(*k)++] = item;
		im->st.out++;
	} else {
		im->ops.free(im->ops.ctx, item);
		im->st.dropped++;
	}
}

/* Release held items: those whose wait reached zero (a later item has
 * overtaken them) or, when `by_age`, those older than hold_us. Order among
 * the released stays FIFO. */
static void release(struct lfe_impair *im, void **out, uint32_t cap, uint32_t *k,
		    uint64_t now_us, bool by_age)
{
	uint32_t j = 0;
	for (uint32_t i = 0; i < im->n_held; i++) {
		struct held *h = &im->held[i];
		bool old = by_age && now_us - h->since_us >= im->cfg.hold_us;
		if (h->wait == 0 || old)
			put(im, h->item, out, cap, k);
		else
			im->held[j++] = *h;
	}
	im->n_held = j;
}

uint32_t lfe_impair_apply(struct lfe_impair *im, void *const *in, uint32_t n, void **out,
			  uint32_t cap, uint64_t now_us)
{
	uint32_t k = 0;
	release(im, out, cap, &k, now_us, true);
	for (uint32_t i = 0; i < n; i++) {
		void *item = in[i];
		im->st.in++;
		if (roll(im, im->cfg.drop_ppm)) {
			im->ops.free(im->ops.ctx, item);
			im->st.dropped++;
			continue;
		}
		if (im->n_held < im->cfg.max_hold && roll(im, im->cfg.reorder_ppm)) {
			im->held[im->n_held++] = (struct held){
				.item = item, .since_us = now_us, .wait = 1 + (uint32_t)(rnd(im) % 3),
			};
			im->st.reordered++;
			continue;
		}
		put(im, item, out, cap, &k);
		if (im->ops.clone && roll(im, im->cfg.dup_ppm)) {
			void *copy = im->ops.clone(im->ops.ctx, item);
			if (copy) {
				im->st.duplicated++;
				put(im, copy, out, cap, &k);
			}
		}
		/* This item overtook everything held: count it against their waits. */
		for (uint32_t h = 0; h < im->n_held; h++)
			im->held[h].wait--;
		release(im, out, cap, &k, now_us, false);
	}
	return k;
}

const struct lfe_impair_stats *lfe_impair_stats(const struct lfe_impair *im)
{
	return &im->st;
}
