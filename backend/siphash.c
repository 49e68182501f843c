/* backend/siphash.c — SipHash-2-4 (interface in siphash.h), after the
 * reference implementation; checked against its test vectors. */
#include "siphash.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static inline void round2(struct lfe_siphash *s)
{
	for (int i = 0; i < 2; i++) {
		s->v0 += s->v1; s->v1 = ROTL(s->v1, 13); s->v1 ^= s->v0; s->v0 = ROTL(s->v0, 32);
		s->v2 += s->v3; s->v3 = ROTL(s->v3, 16); s->v3 ^= s->v2;
		s->v0 += s->v3; s->v3 = ROTL(s->v3, 21); s->v3 ^= s->v0;
		s->v2 += s->v1; s->v1 = ROTL(s->v1, 17); s->v1 ^= s->v2; s->v2 = ROTL(s->v2, 32);
	}
}

static inline void compress(struct lfe_siphash *s, uint64_t m)
{
	s->v3 ^= m;
	round2(s);
	s->v0 ^= m;
}

uint64_t lfe_siphash_load64(const uint8_t *p)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void lfe_siphash_init(struct lfe_siphash *s, const uint64_t k[2], int wide)
{
	s->v0 = k[0] ^ 0x736f6d6570736575ull;
	s->v1 = k[1] ^ 0x646f72616e646f6dull ^ (wide ? 0xee : 0);
	s->v2 = k[0] ^ 0x6c7967656e657261ull;
	s->v3 = k[1] ^ 0x7465646279746573ull;
	s->tail = 0;
	s->len = 0;
}

void lfe_siphash_update(struct lfe_siphash *s, const void *p, size_t len)
{
	const uint8_t *b = p;
	unsigned have = (unsigned)(s->len & 7);
	size_t i = 0;

	s->len += len;
	if (have) {
		for (; i < len && have < 8; i++, have++)
			s->tail |= (uint64_t)b[i] << (8 * have);
		if (have < 8)
			return;
		compress(s, s->tail);
		s->tail = 0;
	}
	for (; i + 8 <= len; i += 8)
		compress(s, lfe_siphash_load64(b + i));
	for (unsigned k = 0; i < len; i++, k++)
		s->tail |= (uint64_t)b[i] << (8 * k);
}

static void finish(struct lfe_siphash *s, uint64_t xor2)
{
	compress(s, s->tail | (s->len & 0xff) << 56);
	s->v2 ^= xor2;
	round2(s);
	round2(s);
}

uint64_t lfe_siphash_final(struct lfe_siphash *s)
{
	finish(s, 0xff);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

void lfe_siphash_final128(struct lfe_siphash *s, uint64_t out[2])
{
	finish(s, 0xee);
	out[0] = s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
	s->v1 ^= 0xdd;
	round2(s);
	round2(s);
	out[1] = s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t lfe_siphash24(const uint64_t k[2], const void *p, size_t len)
{
	struct lfe_siphash s;

	lfe_siphash_init(&s, k, 0);
	lfe_siphash_update(&s, p, len);
	return lfe_siphash_final(&s);
}
