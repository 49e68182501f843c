/* common/siphash.h — SipHash-2-4 (Aumasson & Bernstein), 64- and 128-bit
 * output, one-shot or fed in pieces.
 *
 * A keyed PRF for hash tables, tags and numbers whose inputs an attacker
 * chooses or observes (throttle cells, the verified-credential cache, the
 * store's index keys, TCP's initial sequence numbers and SYN cookies):
 * without the 128-bit key nobody can predict an output or pick inputs that
 * collide. The one SipHash of ldapfe (common/: every layer may use it).
 *
 * Pure and reentrant: the state is the caller's value; nothing allocated.
 * Feeding the same bytes in any split gives the same result as one call.
 */
#ifndef LFE_COMMON_SIPHASH_H
#define LFE_COMMON_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

struct lfe_siphash {
	uint64_t v0, v1, v2, v3;
	uint64_t tail;          /* bytes not yet a whole word, little-endian */
	uint64_t len;           /* bytes fed so far */
};

/* Start a hash under key k (k[0], k[1] as SipHash's k0, k1 words: the key
 * bytes read little-endian). wide: the 128-bit variant (finish with
 * lfe_siphash_final128), else 64-bit (lfe_siphash_final). */
void lfe_siphash_init(struct lfe_siphash *s, const uint64_t k[2], int wide);
void lfe_siphash_update(struct lfe_siphash *s, const void *p, size_t len);
uint64_t lfe_siphash_final(struct lfe_siphash *s);
void lfe_siphash_final128(struct lfe_siphash *s, uint64_t out[2]);

/* One-shot 64-bit SipHash-2-4 of p[0..len). */
uint64_t lfe_siphash24(const uint64_t k[2], const void *p, size_t len);

/* One-shot 128-bit SipHash-2-4 of p[0..len): what init(wide), update and
 * final128 give, with the state in registers throughout. */
void lfe_siphash24_128(const uint64_t k[2], const void *p, size_t len, uint64_t out[2]);

/* One-shot 64-bit SipHash-2-4 of n 64-bit words: lfe_siphash24 of their
 * 8n little-endian bytes, without the byte handling (TCP's tuples). */
uint64_t lfe_siphash24_words(const uint64_t k[2], const uint64_t *m, size_t n);

/* Little-endian load of 8 bytes (a key from bytes). */
uint64_t lfe_siphash_load64(const uint8_t *p);

#endif
