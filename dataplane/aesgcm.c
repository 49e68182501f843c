/* dataplane/aesgcm.c — AES-GCM on AES-NI and PCLMULQDQ (aesgcm.h).
 *
 * GHASH works on blocks byte-reversed on load (PSHUFB), so that the
 * field's bit-reflected polynomial order maps onto the carry-less
 * multiply's: a 256-bit product from four PCLMULQDQs (schoolbook), shifted
 * left one bit (the reflection's off-by-one), then reduced modulo
 * x^128 + x^7 + x^2 + x + 1 with shifts and XORs (the method of Gueron and
 * Kounavis, "Intel Carry-Less Multiplication Instruction and its Usage for
 * Computing the GCM Mode"). The functions that use the instructions carry
 * a target attribute, so the rest of the build needs no -maes; callers
 * check lfe_aesgcm_available() first.
 */
#include "aesgcm.h"

#include <errno.h>
#include <string.h>

#include <immintrin.h>
#include <openssl/crypto.h>

#define TGT __attribute__((target("aes,pclmul,ssse3")))

bool lfe_aesgcm_available(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("aes") && __builtin_cpu_supports("pclmul") &&
	       __builtin_cpu_supports("ssse3");
}

static TGT inline __m128i bswap128(__m128i x)
{
	const __m128i rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	return _mm_shuffle_epi8(x, rev);
}

/* a * b in GF(2^128), both and the result byte-reversed blocks. */
static TGT inline __m128i gf_mul(__m128i a, __m128i b)
{
	__m128i lo = _mm_clmulepi64_si128(a, b, 0x00);
	__m128i mid = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x10), _mm_clmulepi64_si128(a, b, 0x01));
	__m128i hi = _mm_clmulepi64_si128(a, b, 0x11);

	lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
	hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
	/* The 256-bit product hi:lo, shifted left by one bit. */
	__m128i lo_c = _mm_srli_epi32(lo, 31), hi_c = _mm_srli_epi32(hi, 31);
	lo = _mm_slli_epi32(lo, 1);
	hi = _mm_slli_epi32(hi, 1);
	__m128i carry = _mm_srli_si128(lo_c, 12);
	hi = _mm_or_si128(hi, _mm_or_si128(_mm_slli_si128(hi_c, 4), carry));
	lo = _mm_or_si128(lo, _mm_slli_si128(lo_c, 4));
	/* Reduction, first phase: lo's words times x^63, x^62, x^57. */
	__m128i t = _mm_xor_si128(_mm_xor_si128(_mm_slli_epi32(lo, 31), _mm_slli_epi32(lo, 30)),
				  _mm_slli_epi32(lo, 25));
	__m128i spill = _mm_srli_si128(t, 4);
	lo = _mm_xor_si128(lo, _mm_slli_si128(t, 12));
	/* Second phase: lo + lo/x + lo/x^2 + lo/x^7, folded into hi. */
	__m128i u = _mm_xor_si128(_mm_xor_si128(_mm_srli_epi32(lo, 1), _mm_srli_epi32(lo, 2)),
				  _mm_srli_epi32(lo, 7));
	u = _mm_xor_si128(u, spill);
	lo = _mm_xor_si128(lo, u);
	return _mm_xor_si128(hi, lo);
}

static TGT inline __m128i aes_block(const struct lfe_aesgcm *g, __m128i x)
{
	const __m128i *rk = (const __m128i *)(const void *)g->rk;
	x = _mm_xor_si128(x, _mm_load_si128(&rk[0]));
	for (unsigned r = 1; r < g->rounds; r++)
		x = _mm_aesenc_si128(x, _mm_load_si128(&rk[r]));
	return _mm_aesenclast_si128(x, _mm_load_si128(&rk[g->rounds]));
}

/* One step of the key expansion: k xor its three left word shifts, xor t
 * (the KEYGENASSIST word, broadcast). */
static TGT inline __m128i expand(__m128i k, __m128i t)
{
	k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
	k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
	k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
	return _mm_xor_si128(k, t);
}

#define ASSIST(k, rcon, sel) _mm_shuffle_epi32(_mm_aeskeygenassist_si128((k), (rcon)), (sel))

static TGT void schedule_128(__m128i *rk, const uint8_t *key)
{
	rk[0] = _mm_loadu_si128((const __m128i *)(const void *)key);
#define R128(i, rcon) rk[i] = expand(rk[(i) - 1], ASSIST(rk[(i) - 1], rcon, 0xff))
	R128(1, 0x01); R128(2, 0x02); R128(3, 0x04); R128(4, 0x08); R128(5, 0x10);
	R128(6, 0x20); R128(7, 0x40); R128(8, 0x80); R128(9, 0x1b); R128(10, 0x36);
#undef R128
}

static TGT void schedule_256(__m128i *rk, const uint8_t *key)
{
	rk[0] = _mm_loadu_si128((const __m128i *)(const void *)key);
	rk[1] = _mm_loadu_si128((const __m128i *)(const void *)(key + 16));
	/* Even keys: the previous odd one through SubWord(RotWord) and rcon;
	 * odd keys: the previous even one through SubWord alone. */
#define R256(i, rcon)                                                          \
	do {                                                                   \
		rk[i] = expand(rk[(i) - 2], ASSIST(rk[(i) - 1], rcon, 0xff));  \
		if ((i) < 14)                                                  \
			rk[(i) + 1] = expand(rk[(i) - 1], ASSIST(rk[i], 0x00, 0xaa)); \
	} while (0)
	R256(2, 0x01); R256(4, 0x02); R256(6, 0x04); R256(8, 0x08);
	R256(10, 0x10); R256(12, 0x20); R256(14, 0x40);
#undef R256
}

static TGT void hash_key(struct lfe_aesgcm *g)
{
	__m128i h = aes_block(g, _mm_setzero_si128());
	_mm_store_si128((__m128i *)(void *)g->h, bswap128(h));
}

int lfe_aesgcm_init(struct lfe_aesgcm *g, const uint8_t *key, size_t key_len)
{
	if (key_len == 16) {
		g->rounds = 10;
		schedule_128((__m128i *)(void *)g->rk, key);
	} else if (key_len == 32) {
		g->rounds = 14;
		schedule_256((__m128i *)(void *)g->rk, key);
	} else {
		return -EINVAL;
	}
	hash_key(g);
	return 0;
}

void lfe_aesgcm_wipe(struct lfe_aesgcm *g)
{
	OPENSSL_cleanse(g, sizeof *g);
}

/* GHASH of n bytes (the last block zero-padded) on top of y. */
static TGT __m128i ghash(__m128i y, __m128i h, const uint8_t *p, size_t n)
{
	for (; n >= 16; p += 16, n -= 16)
		y = gf_mul(_mm_xor_si128(y, bswap128(_mm_loadu_si128((const __m128i *)(const void *)p))), h);
	if (n) {
		uint8_t b[16] = { 0 };
		memcpy(b, p, n);
		y = gf_mul(_mm_xor_si128(y, bswap128(_mm_loadu_si128((const __m128i *)(void *)b))), h);
	}
	return y;
}

/* The tag: GHASH(aad, c) with the length block, xor E_K(J0). */
static TGT void make_tag(const struct lfe_aesgcm *g, const uint8_t nonce[LFE_AESGCM_NONCE],
			 const uint8_t *aad, size_t aad_len, const uint8_t *c, size_t n,
			 uint8_t tag[LFE_AESGCM_TAG])
{
	__m128i h = _mm_load_si128((const __m128i *)(const void *)g->h);
	__m128i y = ghash(_mm_setzero_si128(), h, aad, aad_len);
	y = ghash(y, h, c, n);
	uint8_t len[16];
	uint64_t abits = (uint64_t)aad_len * 8, cbits = (uint64_t)n * 8;
	for (unsigned i = 0; i < 8; i++) {
		len[i] = (uint8_t)(abits >> (56 - 8 * i));
		len[8 + i] = (uint8_t)(cbits >> (56 - 8 * i));
	}
	y = gf_mul(_mm_xor_si128(y, bswap128(_mm_loadu_si128((const __m128i *)(void *)len))), h);
	uint8_t j0[16];
	memcpy(j0, nonce, LFE_AESGCM_NONCE);
	j0[12] = j0[13] = j0[14] = 0;
	j0[15] = 1;
	__m128i s = _mm_xor_si128(bswap128(y), aes_block(g, _mm_loadu_si128((const __m128i *)(void *)j0)));
	_mm_storeu_si128((__m128i *)(void *)tag, s);
}

/* Four blocks through AES at once: the rounds of independent blocks
 * overlap in the pipeline, where one block's ten or fourteen rounds are a
 * chain of dependent AESENCs. */
static TGT inline void aes_block4(const struct lfe_aesgcm *g, __m128i *x)
{
	const __m128i *rk = (const __m128i *)(const void *)g->rk;
	__m128i k = _mm_load_si128(&rk[0]);
	for (unsigned b = 0; b < 4; b++)
		x[b] = _mm_xor_si128(x[b], k);
	for (unsigned r = 1; r < g->rounds; r++) {
		k = _mm_load_si128(&rk[r]);
		for (unsigned b = 0; b < 4; b++)
			x[b] = _mm_aesenc_si128(x[b], k);
	}
	k = _mm_load_si128(&rk[g->rounds]);
	for (unsigned b = 0; b < 4; b++)
		x[b] = _mm_aesenclast_si128(x[b], k);
}

/* The keystream of the next four counter blocks; *rev (the counter
 * block byte-reversed, its big-endian 32-bit counter in lane 0) moves on
 * by four: one PADDD each is GCM's inc32 (mod 2^32). */
static TGT inline void keystream4(const struct lfe_aesgcm *g, __m128i *rev, __m128i ks[4])
{
	const __m128i one = _mm_set_epi32(0, 0, 0, 1);
	for (unsigned b = 0; b < 4; b++) {
		ks[b] = bswap128(*rev);
		*rev = _mm_add_epi32(*rev, one);
	}
	aes_block4(g, ks);
}

/* CTR from J0 + 1 (counter 2 on): out = in xor keystream, four blocks at
 * a time, the last 1 to 63 bytes in one more pass (in-place safe:
 * each block is read before it is written). The counter block lives in a
 * register (keystream4), not in bytes stored and read back as a vector. */
static TGT void ctr(const struct lfe_aesgcm *g, const uint8_t nonce[LFE_AESGCM_NONCE],
		    const uint8_t *in, size_t n, uint8_t *out)
{
	uint8_t cb[16];
	memcpy(cb, nonce, LFE_AESGCM_NONCE);
	cb[12] = cb[13] = cb[14] = 0;
	cb[15] = 2;
	__m128i rev = bswap128(_mm_loadu_si128((const __m128i *)(void *)cb));

	for (; n >= 64; in += 64, out += 64, n -= 64) {
		__m128i ks[4];
		keystream4(g, &rev, ks);
		for (unsigned b = 0; b < 4; b++) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(in + 16 * b));
			_mm_storeu_si128((__m128i *)(void *)(out + 16 * b), _mm_xor_si128(x, ks[b]));
		}
	}
	if (n == 0)
		return;
	/* The last 1 to 63 bytes: one block alone, or one pass of four (the
	 * unused ones cost issue slots, not latency). */
	__m128i ks[4];
	if (n <= 16) {
		ks[0] = aes_block(g, bswap128(rev));
	} else {
		keystream4(g, &rev, ks);
	}
	unsigned b = 0;
	for (; n >= 16; b++, in += 16, out += 16, n -= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)in);
		_mm_storeu_si128((__m128i *)(void *)out, _mm_xor_si128(x, ks[b]));
	}
	if (n) {
		uint8_t k[16];
		_mm_storeu_si128((__m128i *)(void *)k, ks[b]);
		for (size_t j = 0; j < n; j++)
			out[j] = in[j] ^ k[j];
		OPENSSL_cleanse(k, sizeof k);
	}
	OPENSSL_cleanse(ks, sizeof ks);
}

void lfe_aesgcm_seal(const struct lfe_aesgcm *g, const uint8_t nonce[LFE_AESGCM_NONCE],
		     const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t n, uint8_t *out,
		     uint8_t tag[LFE_AESGCM_TAG])
{
	ctr(g, nonce, in, n, out);
	make_tag(g, nonce, aad, aad_len, out, n, tag);
}

int lfe_aesgcm_open(const struct lfe_aesgcm *g, const uint8_t nonce[LFE_AESGCM_NONCE],
		    const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t n,
		    const uint8_t tag[LFE_AESGCM_TAG], uint8_t *out)
{
	uint8_t want[LFE_AESGCM_TAG];

	make_tag(g, nonce, aad, aad_len, in, n, want);
	int bad = CRYPTO_memcmp(want, tag, sizeof want);
	OPENSSL_cleanse(want, sizeof want);
	if (bad)
		return -EBADMSG;
	ctr(g, nonce, in, n, out);
	return 0;
}
