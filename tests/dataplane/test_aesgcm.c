/* tests/dataplane/test_aesgcm.c — dataplane/aesgcm.h against OpenSSL.
 *
 * OpenSSL's EVP AES-GCM is the reference: published vectors (McGrew and
 * Viega's GCM test cases 2, 4 and 14, checked against EVP first), then
 * thousands of random keys, nonces, AAD and lengths (0 to 300 bytes, and
 * around 2^14), each sealed by both and compared byte for byte; every
 * ciphertext opens to its plaintext, in place and out of place; a flipped
 * bit anywhere in AAD, ciphertext or tag fails with nothing written.
 * Skipped (77) on a CPU without AES-NI and PCLMULQDQ.
 */
#include "dataplane/aesgcm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

static int failures;
#define CHECK(c, ...)                                                                  \
	do {                                                                           \
		if (!(c)) {                                                            \
			failures++;                                                    \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
		}                                                                      \
	} while (0)

static uint64_t rnd_state = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)rnd_state;
}

static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/* OpenSSL's seal: ciphertext to out, tag to tag. */
static void evp_seal(const uint8_t *key, size_t klen, const uint8_t *nonce, const uint8_t *aad,
		     size_t alen, const uint8_t *in, size_t n, uint8_t *out, uint8_t *tag)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l = 0;
	if (x == NULL ||
	    EVP_EncryptInit_ex(x, klen == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm(), NULL, key,
			       nonce) != 1 ||
	    (alen && EVP_EncryptUpdate(x, NULL, &l, aad, (int)alen) != 1) ||
	    (n && EVP_EncryptUpdate(x, out, &l, in, (int)n) != 1) ||
	    EVP_EncryptFinal_ex(x, out + n, &l) != 1 ||
	    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1) {
		fprintf(stderr, "EVP seal failed\n");
		exit(2);
	}
	EVP_CIPHER_CTX_free(x);
}

static int unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			exit(2);
		out[i] = (uint8_t)v;
	}
	return (int)n;
}

/* A published case: EVP must agree with it, then aesgcm with both. */
static void vector(const char *name, const char *key, const char *iv, const char *pt,
		   const char *aad, const char *ct, const char *tag)
{
	uint8_t k[32], n[12], p[64], a[32], c[64], t[16], out[64], ot[16], ec[64], et[16];
	int kl = unhex(key, k), pl = unhex(pt, p), al = unhex(aad, a);
	unhex(iv, n);
	unhex(ct, c);
	unhex(tag, t);
	evp_seal(k, (size_t)kl, n, a, (size_t)al, p, (size_t)pl, ec, et);
	CHECK(memcmp(ec, c, (size_t)pl) == 0 && memcmp(et, t, 16) == 0, "%s: EVP disagrees", name);
	struct lfe_aesgcm g;
	CHECK(lfe_aesgcm_init(&g, k, (size_t)kl) == 0, "%s: init", name);
	lfe_aesgcm_seal(&g, n, a, (size_t)al, p, (size_t)pl, out, ot);
	CHECK(memcmp(out, c, (size_t)pl) == 0, "%s: ciphertext", name);
	CHECK(memcmp(ot, t, 16) == 0, "%s: tag", name);
	memset(out, 0, sizeof out);
	CHECK(lfe_aesgcm_open(&g, n, a, (size_t)al, c, (size_t)pl, t, out) == 0 &&
		      memcmp(out, p, (size_t)pl) == 0,
	      "%s: open", name);
	lfe_aesgcm_wipe(&g);
}

#define MAXN (16384u + 300u)
static uint8_t pt[MAXN], ct[MAXN], ref[MAXN + 16], buf[MAXN];

static void one(size_t klen, size_t alen, size_t n)
{
	uint8_t key[32], nonce[12], aad[64], tag[16], rtag[16];
	fill(key, klen);
	fill(nonce, sizeof nonce);
	fill(aad, alen);
	fill(pt, n);
	struct lfe_aesgcm g;
	if (lfe_aesgcm_init(&g, key, klen) < 0) {
		CHECK(0, "init %zu", klen);
		return;
	}
	lfe_aesgcm_seal(&g, nonce, aad, alen, pt, n, ct, tag);
	evp_seal(key, klen, nonce, aad, alen, pt, n, ref, rtag);
	CHECK(memcmp(ct, ref, n) == 0, "key %zu aad %zu n %zu: ciphertext differs from EVP", klen,
	      alen, n);
	CHECK(memcmp(tag, rtag, 16) == 0, "key %zu aad %zu n %zu: tag differs from EVP", klen, alen,
	      n);
	/* open, out of place and in place */
	memset(buf, 0xa5, n);
	CHECK(lfe_aesgcm_open(&g, nonce, aad, alen, ct, n, tag, buf) == 0 && memcmp(buf, pt, n) == 0,
	      "key %zu aad %zu n %zu: open", klen, alen, n);
	memcpy(buf, ct, n);
	CHECK(lfe_aesgcm_open(&g, nonce, aad, alen, buf, n, tag, buf) == 0 && memcmp(buf, pt, n) == 0,
	      "key %zu aad %zu n %zu: open in place", klen, alen, n);
	memcpy(buf, pt, n);
	uint8_t t2[16];
	lfe_aesgcm_seal(&g, nonce, aad, alen, buf, n, buf, t2);
	CHECK(memcmp(buf, ct, n) == 0 && memcmp(t2, tag, 16) == 0, "key %zu aad %zu n %zu: seal in place",
	      klen, alen, n);
	/* one flipped bit: in AAD, ciphertext or tag */
	size_t span = alen + n + 16, at = rnd() % span;
	uint8_t bit = (uint8_t)(1u << (rnd() % 8));
	uint8_t a2[64], t3[16];
	memcpy(a2, aad, alen);
	memcpy(t3, tag, 16);
	memcpy(buf, ct, n);
	if (at < alen)
		a2[at] ^= bit;
	else if (at < alen + n)
		buf[at - alen] ^= bit;
	else
		t3[at - alen - n] ^= bit;
	uint8_t *out = ref;   /* must stay untouched */
	memset(out, 0x5a, n);
	CHECK(lfe_aesgcm_open(&g, nonce, a2, alen, buf, n, t3, out) == -EBADMSG,
	      "key %zu aad %zu n %zu: a flipped bit at %zu opened", klen, alen, n, at);
	size_t touched = 0;
	for (size_t i = 0; i < n; i++)
		touched += out[i] != 0x5a;
	CHECK(touched == 0, "key %zu n %zu: a failed open wrote %zu bytes", klen, n, touched);
	lfe_aesgcm_wipe(&g);
	static const uint8_t zero[sizeof g] = { 0 };
	CHECK(memcmp(&g, zero, sizeof g) == 0, "wipe left key material");
}

int main(void)
{
	if (!lfe_aesgcm_available()) {
		printf("SKIP: no AES-NI/PCLMULQDQ on this CPU\n");
		return 77;
	}
	uint8_t k[32] = { 0 };
	struct lfe_aesgcm g;
	CHECK(lfe_aesgcm_init(&g, k, 24) == -EINVAL, "AES-192 keys are not taken");

	vector("case 2", "00000000000000000000000000000000", "000000000000000000000000",
	       "00000000000000000000000000000000", "", "0388dace60b6a392f328c2b971b2fe78",
	       "ab6e47d42cec13bdf53a67b21257bddf");
	vector("case 4", "feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
	       "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	       "feedfacedeadbeeffeedfacedeadbeefabaddad2",
	       "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
	       "5bc94fbc3221a5db94fae95ae7121a47");
	vector("case 14", "0000000000000000000000000000000000000000000000000000000000000000",
	       "000000000000000000000000", "00000000000000000000000000000000", "",
	       "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919");

	for (unsigned i = 0; i < 3000; i++) {
		size_t klen = (i & 1) ? 32 : 16;
		size_t alen = i % 7 == 0 ? 5 : rnd() % 41;   /* TLS 1.3's AAD is the 5-byte header */
		one(klen, alen, rnd() % 301);
	}
	static const size_t big[] = { 16383, 16384, 16385, 16384 + 255 };
	for (unsigned i = 0; i < sizeof big / sizeof big[0]; i++) {
		one(16, 5, big[i]);
		one(32, 5, big[i]);
	}
	if (failures) {
		fprintf(stderr, "test_aesgcm: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_aesgcm: ok\n");
	return 0;
}
