/* gen/rxcsum.c — see rxcsum.h. */
#include "gen/rxcsum.h"

#include <string.h>

void lfe_gen_rxcsum_init(struct lfe_gen_rxcsum *s, bool all, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->all = all;
	/* splitmix64 of the seed: any seed, 0 included, gives a nonzero state. */
	uint64_t z = seed + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	s->rng = z ? z : 1;
}

uint32_t lfe_gen_rxcsum_gap(struct lfe_gen_rxcsum *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	uint32_t r = (uint32_t)((s->rng * 0x2545F4914F6CDD1Dull) >> 32);
	return LFE_GEN_RXCSUM_GAP_MIN + r % (LFE_GEN_RXCSUM_GAP_MAX - LFE_GEN_RXCSUM_GAP_MIN);
}
