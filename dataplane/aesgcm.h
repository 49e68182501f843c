/* dataplane/aesgcm.h — AES-GCM (NIST SP 800-38D) with 128- and 256-bit
 * keys and 96-bit nonces, on AES-NI and PCLMULQDQ: the AEAD of ldapfe's
 * TLS 1.3 record layer (tlsrec.c) for TLS_AES_128_GCM_SHA256 and
 * TLS_AES_256_GCM_SHA384.
 *
 * Why not OpenSSL's EVP: a bind's two small records cost ~1 µs through
 * EVP, ~40 % of it OpenSSL 3.0's parameter plumbing (the nonce and the tag
 * go through OSSL_PARAM lookups by name); the cipher itself is a few
 * hundred cycles. Here a record is one call with no lookups. OpenSSL stays
 * the reference: the unit test compares every output with EVP's.
 *
 * Constant time: AES rounds (AESENC) and the GHASH multiply (PCLMULQDQ)
 * take no data-dependent branches or table lookups; the tag is compared
 * without early exit, and lfe_aesgcm_open writes nothing when it fails.
 *
 * lfe_aesgcm_available() tells whether this CPU has the instructions; on
 * one without them (or when the caller prefers), use EVP instead. The
 * functions must not be called where it is false.
 *
 * Ownership: the caller owns the state (the key schedule and the hash key:
 * secret); lfe_aesgcm_wipe clears it. One state may be used by one thread
 * at a time (it is only read after init). DPDK-free, no globals.
 */
#ifndef LFE_DATAPLANE_AESGCM_H
#define LFE_DATAPLANE_AESGCM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LFE_AESGCM_NONCE 12u
#define LFE_AESGCM_TAG   16u

struct lfe_aesgcm {
	uint8_t rk[15][16];   /* round keys (10 or 14 rounds) */
	uint8_t h[16];        /* hash key E_K(0), byte-reversed for the multiply */
	unsigned rounds;
} __attribute__((aligned(16)));

/* AES-NI, PCLMULQDQ and SSSE3 on this CPU. */
bool lfe_aesgcm_available(void);

/* Key schedule and hash key from key (key_len 16 or 32): 0, or -EINVAL. */
int lfe_aesgcm_init(struct lfe_aesgcm *g, const uint8_t *key, size_t key_len);

/* Encrypt n bytes of in to out (the same buffer, or not overlapping) and
 * give the tag; aad (aad_len bytes) is authenticated, not encrypted.
 * n < 2^32 - 2 blocks (TLS records are at most 2^14 + 256). */
void lfe_aesgcm_seal(const struct lfe_aesgcm *g, const uint8_t nonce[LFE_AESGCM_NONCE],
		     const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t n, uint8_t *out,
		     uint8_t tag[LFE_AESGCM_TAG]);

/* Check tag over aad and the n bytes of ciphertext in, then decrypt them to
 * out (the same buffer, or not overlapping): 0, or -EBADMSG with nothing
 * written. */
int lfe_aesgcm_open(const struct lfe_aesgcm *g, const uint8_t nonce[LFE_AESGCM_NONCE],
		    const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t n,
		    const uint8_t tag[LFE_AESGCM_TAG], uint8_t *out);

/* Clear the key schedule and the hash key. */
void lfe_aesgcm_wipe(struct lfe_aesgcm *g);

#endif
