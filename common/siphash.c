/* common/siphash.c — SipHash-2-4 (interface in siphash.h), after the
 * reference implementation; checked against its test vectors. */
#include "common/siphash.h"

#include <string.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

/* The state travels in locals (registers) through the rounds: through the
 * struct pointer the compiler would store and reload it around every byte
 * read (a uint8_t may alias it). */
#define SIPROUND(v0, v1, v2, v3) do { \
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
} while (0)

static inline void round2(struct lfe_siphash *s)
{
	uint64_t v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	s->v0 = v0; s->v1 = v1; s->v2 = v2; s->v3 = v3;
}

static inline void compress(struct lfe_siphash *s, uint64_t m)
{
	s->v3 ^= m;
	round2(s);
	s->v0 ^= m;
}

static inline uint64_t load64(const uint8_t *p)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
#else
	uint64_t v = 0;
	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
#endif
}

uint64_t lfe_siphash_load64(const uint8_t *p)
{
	return load64(p);
}

/* Compress the whole words of p[0..len) into v (locals: registers);
 * returns the bytes taken. */
static inline size_t absorb_words(uint64_t v[4], const uint8_t *p, size_t len)
{
	uint64_t v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t m = load64(p + i);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	v[0] = v0; v[1] = v1; v[2] = v2; v[3] = v3;
	return i;
}

/* The initial state under key k; wide: the 128-bit variant. */
static inline void state_init(uint64_t v[4], const uint64_t k[2], int wide)
{
	v[0] = k[0] ^ 0x736f6d6570736575ull;
	v[1] = k[1] ^ 0x646f72616e646f6dull ^ (wide ? 0xee : 0);
	v[2] = k[0] ^ 0x6c7967656e657261ull;
	v[3] = k[1] ^ 0x7465646279746573ull;
}

/* The last block m (its length byte included) and the finalization rounds
 * with v2 ^= xor2 (0xff: 64-bit, 0xee: 128-bit); returns the first output
 * word, v left ready for the 128-bit variant's second. */
static inline uint64_t state_last(uint64_t v[4], uint64_t m, uint64_t xor2)
{
	uint64_t v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
	v3 ^= m;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	v2 ^= xor2;
	for (unsigned r = 0; r < 4; r++)
		SIPROUND(v0, v1, v2, v3);
	v[0] = v0; v[1] = v1; v[2] = v2; v[3] = v3;
	return v0 ^ v1 ^ v2 ^ v3;
}

void lfe_siphash_init(struct lfe_siphash *s, const uint64_t k[2], int wide)
{
	uint64_t v[4];
	state_init(v, k, wide);
	s->v0 = v[0]; s->v1 = v[1]; s->v2 = v[2]; s->v3 = v[3];
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
		uint64_t t = s->tail;
		for (; i < len && have < 8; i++, have++)
			t |= (uint64_t)b[i] << (8 * have);
		if (have < 8) {
			s->tail = t;
			return;
		}
		compress(s, t);
	}
	uint64_t v[4] = { s->v0, s->v1, s->v2, s->v3 };
	i += absorb_words(v, b + i, len - i);
	s->v0 = v[0]; s->v1 = v[1]; s->v2 = v[2]; s->v3 = v[3];
	uint64_t t = 0;
	for (unsigned k = 0; i < len; i++, k++)
		t |= (uint64_t)b[i] << (8 * k);
	s->tail = t;   /* have == 0 here: the tail was empty or just compressed */
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

void lfe_siphash24_128(const uint64_t k[2], const void *p, size_t len, uint64_t out[2])
{
	const uint8_t *b = p;
	uint64_t v[4];
	state_init(v, k, 1);
	size_t i = absorb_words(v, b, len);
	uint64_t m = (uint64_t)(len & 0xff) << 56;
	/* The last 0..7 bytes: from the last whole word when there is one
	 * (one load, shifted), else byte by byte. */
	size_t rem = len - i;
	if (rem && len >= 8)
		m |= load64(b + len - 8) >> (8 * (8 - rem));
	else
		for (size_t j = 0; j < rem; j++)
			m |= (uint64_t)b[i + j] << (8 * j);
	out[0] = state_last(v, m, 0xee);
	uint64_t v0 = v[0], v1 = v[1] ^ 0xdd, v2 = v[2], v3 = v[3];
	for (unsigned r = 0; r < 4; r++)
		SIPROUND(v0, v1, v2, v3);
	out[1] = v0 ^ v1 ^ v2 ^ v3;
}

uint64_t lfe_siphash24_words(const uint64_t k[2], const uint64_t *m, size_t n)
{
	uint64_t v[4];
	state_init(v, k, 0);
	uint64_t v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
	for (size_t i = 0; i < n; i++) {
		v3 ^= m[i];
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m[i];
	}
	v[0] = v0; v[1] = v1; v[2] = v2; v[3] = v3;
	return state_last(v, (uint64_t)(n * 8) << 56, 0xff);
}
