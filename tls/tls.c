/* tls/tls.c — the daemon's SSL_CTX and its ticket keys (tls.h).
 *
 * Ticket keys, lock-free: generation g lives in slot[g % TK_SLOTS];
 * tickets are sealed with the current generation and opened with the
 * current or the previous one. A rotation writes generation g + 1 into a
 * slot no reader is using (they read g and g - 1), publishes it, then
 * wipes g - 1. A reader checks the slot's generation before and after
 * copying the key, so a reader stalled across rotations gets "unknown
 * key" (a full handshake), never a mixed key.
 */
#include "tls/tls.h"

#include "tls/tlsrec.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define TK_SLOTS 4u
#define TK_NAME  16u   /* TLSEXT_KEYNAME_LENGTH */

struct tk_slot {
	_Atomic uint64_t gen;        /* 0: empty or being written */
	uint64_t made_s;
	uint8_t aes[32], hmac[32];
};

struct tk_keys {
	atomic_uint refs;
	uint32_t lifetime_s;
	uint8_t prefix[8];           /* key name: prefix || generation (big endian) */
	_Atomic uint64_t cur;        /* current generation, ≥ 1 */
	_Atomic uint64_t rotate_at;  /* monotonic seconds when cur runs out */
	atomic_flag rotating;
	struct tk_slot slot[TK_SLOTS];
};

_Static_assert(sizeof(struct tk_keys) <= 512, "ticket keys fit a key chunk (tlsrec.h)");

struct lfe_tls {
	SSL_CTX *ctx;
	struct tk_keys *keys;        /* NULL: no tickets; the ctx holds its own ref */
};

static uint64_t mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/* ------------------------------------------------------------- keys */

/* Write generation g into its slot and make it current; 0 or -EIO. */
static int tk_install(struct tk_keys *k, uint64_t g, uint64_t now)
{
	struct tk_slot *s = &k->slot[g % TK_SLOTS];
	uint8_t aes[32], hmac[32];

	if (RAND_bytes(aes, sizeof aes) != 1 || RAND_bytes(hmac, sizeof hmac) != 1) {
		ERR_clear_error();
		return -EIO;
	}
	atomic_store_explicit(&s->gen, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(s->aes, aes, sizeof aes);
	memcpy(s->hmac, hmac, sizeof hmac);
	s->made_s = now;
	OPENSSL_cleanse(aes, sizeof aes);
	OPENSSL_cleanse(hmac, sizeof hmac);
	atomic_store_explicit(&s->gen, g, memory_order_release);
	atomic_store_explicit(&k->cur, g, memory_order_release);
	atomic_store_explicit(&k->rotate_at, now + k->lifetime_s, memory_order_release);
	if (g >= 2) {   /* g - 2 is neither current nor previous now */
		struct tk_slot *old = &k->slot[(g - 2) % TK_SLOTS];
		atomic_store_explicit(&old->gen, 0, memory_order_release);
		OPENSSL_cleanse(old->aes, sizeof old->aes);
		OPENSSL_cleanse(old->hmac, sizeof old->hmac);
	}
	return 0;
}

static struct tk_keys *tk_new(uint32_t lifetime_s)
{
	/* never in a core dump, locked where allowed (tlsrec.h) */
	struct tk_keys *k = lfe_tlsrec_key_alloc(sizeof *k);
	if (k == NULL)
		return NULL;
	atomic_init(&k->refs, 1);
	k->lifetime_s = lifetime_s;
	atomic_flag_clear(&k->rotating);
	if (RAND_bytes(k->prefix, sizeof k->prefix) != 1 || tk_install(k, 1, mono_s()) < 0) {
		ERR_clear_error();
		lfe_tlsrec_key_free(k, sizeof *k);
		return NULL;
	}
	return k;
}

static void tk_unref(struct tk_keys *k)
{
	if (k && atomic_fetch_sub_explicit(&k->refs, 1, memory_order_acq_rel) == 1) {
		lfe_tlsrec_key_free(k, sizeof *k);   /* wiped */
	}
}

/* One rotation when the current key ran out (or force); losers of the race
 * go on with the key they saw. */
static void tk_maybe_rotate(struct tk_keys *k, uint64_t now, bool force)
{
	if (!force && now < atomic_load_explicit(&k->rotate_at, memory_order_acquire))
		return;
	if (atomic_flag_test_and_set_explicit(&k->rotating, memory_order_acquire))
		return;
	if (force || now >= atomic_load_explicit(&k->rotate_at, memory_order_acquire))
		tk_install(k, atomic_load_explicit(&k->cur, memory_order_relaxed) + 1, now);
	atomic_flag_clear_explicit(&k->rotating, memory_order_release);
}

/* Copy generation g's keys if it is current or previous and younger than
 * two lifetimes: true, or false (unknown key: a full handshake). */
static bool tk_get(struct tk_keys *k, uint64_t g, uint64_t now, uint8_t aes[32], uint8_t hmac[32])
{
	uint64_t cur = atomic_load_explicit(&k->cur, memory_order_acquire);
	if (g == 0 || (g != cur && g + 1 != cur))
		return false;
	struct tk_slot *s = &k->slot[g % TK_SLOTS];
	if (atomic_load_explicit(&s->gen, memory_order_acquire) != g)
		return false;
	uint64_t made = s->made_s;
	memcpy(aes, s->aes, 32);
	memcpy(hmac, s->hmac, 32);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->gen, memory_order_relaxed) != g ||
	    now >= made + 2u * (uint64_t)k->lifetime_s) {
		OPENSSL_cleanse(aes, 32);
		OPENSSL_cleanse(hmac, 32);
		return false;
	}
	return true;
}

/* The SSL_CTX's reference to its keys, dropped when OpenSSL frees the
 * context (after its last SSL). An ex_data index is per process by
 * OpenSSL's design: the only static state here, set once. */
static int tk_index = -1;
static pthread_once_t tk_once = PTHREAD_ONCE_INIT;

static void tk_exfree(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
	(void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
	tk_unref(ptr);
}

static void tk_index_init(void)
{
	tk_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, tk_exfree);
}

/* OpenSSL's ticket callback: enc 1 seals (fills name and iv), enc 0 opens
 * (1: ok, 2: ok and renew, 0: unknown key, -1: error).
 *
 * Renew: a ticket sealed with the previous key, and every TLS 1.3 ticket.
 * OpenSSL's server sends a NewSessionTicket after a resumed TLS 1.3
 * handshake only when this returns 2 (SSL_TICKET_SUCCESS_RENEW sets
 * ticket_expected), and TLS 1.3 clients with a session cache (libldap,
 * s_client, ldapfe-gen) use a ticket once: without a fresh one, every
 * other connection would be a full handshake. A TLS 1.2 ticket under the
 * current key is reused as it is (RFC 5077). */
static int tk_cb(SSL *ssl, unsigned char name[TK_NAME], unsigned char *iv, EVP_CIPHER_CTX *cctx,
		 EVP_MAC_CTX *hctx, int enc)
{
	struct tk_keys *k = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), tk_index);
	uint8_t aes[32], hmac[32];
	uint64_t now = mono_s(), g;
	int rc = -1;

	if (k == NULL)
		return enc ? -1 : 0;
	tk_maybe_rotate(k, now, false);
	if (enc) {
		g = atomic_load_explicit(&k->cur, memory_order_acquire);
		if (!tk_get(k, g, now, aes, hmac) ||
		    RAND_bytes(iv, EVP_CIPHER_get_iv_length(EVP_aes_256_cbc())) != 1)
			return -1;
		memcpy(name, k->prefix, sizeof k->prefix);
		for (unsigned i = 0; i < 8; i++)
			name[8 + i] = (uint8_t)(g >> (56 - 8 * i));
	} else {
		if (memcmp(name, k->prefix, sizeof k->prefix) != 0)
			return 0;
		g = 0;
		for (unsigned i = 0; i < 8; i++)
			g = g << 8 | name[8 + i];
		if (!tk_get(k, g, now, aes, hmac))
			return 0;
	}
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, hmac, sizeof hmac),
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	if (EVP_MAC_CTX_set_params(hctx, p) == 1 &&
	    (enc ? EVP_EncryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, aes, iv)
		 : EVP_DecryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, aes, iv)) == 1)
		rc = enc || (g == atomic_load_explicit(&k->cur, memory_order_acquire) &&
			     SSL_version(ssl) < TLS1_3_VERSION) ? 1 : 2;
	OPENSSL_cleanse(aes, sizeof aes);
	OPENSSL_cleanse(hmac, sizeof hmac);
	return rc;
}

/* ------------------------------------------------------------ context */

/* "[tls] KEY: FILE: reason" with OpenSSL's first queued reason. */
static void fail(char *err, size_t errlen, const char *key, const char *file, const char *what)
{
	unsigned long e = ERR_peek_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	snprintf(err, errlen, "[tls] %s: %s: %s%s%s", key, file, what, r ? ": " : "", r ? r : "");
	ERR_clear_error();
}

/* A file we cannot open gets errno's reason, not OpenSSL's "system lib". */
static bool readable(const char *key, const char *file, char *err, size_t errlen)
{
	FILE *f = fopen(file, "r");
	if (f == NULL) {
		snprintf(err, errlen, "[tls] %s: %s: cannot read: %s", key, file, strerror(errno));
		return false;
	}
	fclose(f);
	return true;
}

/* An encrypted key must not make OpenSSL prompt on a terminal. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return 0;
}

static bool set(const char *s)
{
	return s && s[0];
}

static int load_files(struct lfe_tls *t, const struct lfe_tls_opts *o, char *err, size_t errlen)
{
	SSL_CTX *ctx = t->ctx;

	if (!set(o->cert) || !set(o->key)) {
		snprintf(err, errlen, "[tls] certificate and key: required for LDAPS");
		return -EINVAL;
	}
	if (!readable("certificate", o->cert, err, errlen) || !readable("key", o->key, err, errlen))
		return -EINVAL;
	if (SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1) {
		fail(err, errlen, "certificate", o->cert, "cannot load");
		return -EINVAL;
	}
	X509 *x = SSL_CTX_get0_certificate(ctx);
	if (x == NULL || X509_cmp_current_time(X509_get0_notAfter(x)) <= 0) {
		fail(err, errlen, "certificate", o->cert, "expired");
		return -EINVAL;
	}
	if (X509_cmp_current_time(X509_get0_notBefore(x)) >= 0) {
		fail(err, errlen, "certificate", o->cert, "not valid yet");
		return -EINVAL;
	}
	SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
	if (SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) != 1) {
		bool mismatch = ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH;
		fail(err, errlen, "key", o->key, mismatch ? "does not match the certificate"
			: "cannot load (not a PEM private key, or encrypted)");
		return -EINVAL;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		fail(err, errlen, "key", o->key, "does not match the certificate");
		return -EINVAL;
	}
	if (set(o->ca)) {
		if (!readable("ca", o->ca, err, errlen))
			return -EINVAL;
		if (SSL_CTX_load_verify_locations(ctx, o->ca, NULL) != 1) {
			fail(err, errlen, "ca", o->ca, "cannot load");
			return -EINVAL;
		}
	}
	return 0;
}

/* SHA-256 of "ldapfe", the verification mode and the CA file. */
static int sid_context(const struct lfe_tls_opts *o, uint8_t sid[32])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint8_t mode = (uint8_t)o->verify_client, buf[4096];
	int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
		 EVP_DigestUpdate(md, "ldapfe", 6) == 1 && EVP_DigestUpdate(md, &mode, 1) == 1;
	if (ok && o->verify_client != LFE_TLS_VERIFY_NONE && set(o->ca)) {
		FILE *f = fopen(o->ca, "rb");
		size_t n;
		ok = f != NULL;
		while (ok && (n = fread(buf, 1, sizeof buf, f)) > 0)
			ok = EVP_DigestUpdate(md, buf, n) == 1;
		if (f && ferror(f))
			ok = 0;
		if (f)
			fclose(f);
	}
	unsigned len = 0;
	ok = ok && EVP_DigestFinal_ex(md, sid, &len) == 1 && len == 32;
	EVP_MD_CTX_free(md);
	return ok ? 0 : -EIO;
}

static int set_policy(struct lfe_tls *t, const struct lfe_tls_opts *o, char *err, size_t errlen)
{
	SSL_CTX *ctx = t->ctx;
	int min = o->protocol_min == 3 ? TLS1_3_VERSION : TLS1_2_VERSION;

	if (o->protocol_min > 3 || o->protocol_min == 1 || !SSL_CTX_set_min_proto_version(ctx, min)) {
		snprintf(err, errlen, "[tls] protocol_min: 1.2 or 1.3");
		return -EINVAL;
	}
	const char *ciphers = set(o->ciphers) ? o->ciphers : LFE_TLS_CIPHERS_DEFAULT;
	if (SSL_CTX_set_cipher_list(ctx, ciphers) != 1) {
		fail(err, errlen, "ciphers", ciphers, "no TLS 1.2 cipher in the list");
		return -EINVAL;
	}
	if (SSL_CTX_set_ciphersuites(ctx, set(o->ciphersuites) ? o->ciphersuites
				     : LFE_TLS_CIPHERSUITES_DEFAULT) != 1) {
		fail(err, errlen, "ciphersuites", o->ciphersuites, "not a TLS 1.3 ciphersuite list");
		return -EINVAL;
	}
	if (o->verify_client != LFE_TLS_VERIFY_NONE) {
		if (!set(o->ca)) {
			snprintf(err, errlen, "[tls] verify_client: needs [tls] ca");
			return -EINVAL;
		}
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(o->ca);
		if (names == NULL) {
			fail(err, errlen, "ca", o->ca, "no CA certificate in the file");
			return -EINVAL;
		}
		SSL_CTX_set_client_CA_list(ctx, names);
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (o->verify_client == LFE_TLS_VERIFY_REQUIRE ?
				   SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), NULL);
	}
	/* A resumed session must have been made under the same verification:
	 * the mode and the CA file's bytes (a CA removed at a reload no longer
	 * lets its clients resume). */
	uint8_t sid[32];
	if (sid_context(o, sid) < 0) {
		fail(err, errlen, "ca", o->ca, "cannot read");
		return -EINVAL;
	}
	SSL_CTX_set_session_id_context(ctx, sid, sizeof sid);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (o->ticket_lifetime == 0) {
		SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
		SSL_CTX_set_num_tickets(ctx, 0);
		return 0;
	}
	if (o->ticket_lifetime > LFE_TLS_TICKET_LIFETIME_MAX) {
		snprintf(err, errlen, "[tls] ticket_lifetime: at most %u s", LFE_TLS_TICKET_LIFETIME_MAX);
		return -EINVAL;
	}
	SSL_CTX_set_timeout(ctx, (long)o->ticket_lifetime);
	SSL_CTX_set_num_tickets(ctx, 1);
	if (SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, tk_cb) != 1) {
		fail(err, errlen, "ticket_lifetime", "-", "cannot set the ticket callback");
		return -EINVAL;
	}
	return 0;
}

struct lfe_tls *lfe_tls_new_opts(const struct lfe_tls_opts *o, const struct lfe_tls *prev,
				 char *err, size_t errlen)
{
	struct lfe_tls *t = calloc(1, sizeof *t);
	if (t == NULL) {
		snprintf(err, errlen, "[tls]: out of memory");
		return NULL;
	}
	pthread_once(&tk_once, tk_index_init);
	ERR_clear_error();
	t->ctx = SSL_CTX_new(TLS_server_method());
	if (t->ctx == NULL || tk_index < 0) {
		fail(err, errlen, "certificate", "-", "cannot create a TLS context");
		goto out;
	}
	SSL_CTX_set_options(t->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
				    SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_mode(t->ctx, SSL_MODE_RELEASE_BUFFERS);
	if (o->record_layer == LFE_TLS_RECORD_LDAPFE)
		SSL_CTX_set_keylog_callback(t->ctx, lfe_tlsrec_keylog);
	if (load_files(t, o, err, errlen) < 0 || set_policy(t, o, err, errlen) < 0)
		goto out;
	if (o->ticket_lifetime) {
		if (prev && prev->keys && prev->keys->lifetime_s == o->ticket_lifetime) {
			t->keys = prev->keys;
			atomic_fetch_add_explicit(&t->keys->refs, 1, memory_order_relaxed);
		} else if ((t->keys = tk_new(o->ticket_lifetime)) == NULL) {
			snprintf(err, errlen, "[tls] ticket_lifetime: cannot make ticket keys");
			goto out;
		}
		atomic_fetch_add_explicit(&t->keys->refs, 1, memory_order_relaxed);
		if (SSL_CTX_set_ex_data(t->ctx, tk_index, t->keys) != 1) {
			tk_unref(t->keys);   /* the ctx's reference, not taken */
			fail(err, errlen, "ticket_lifetime", "-", "cannot attach the ticket keys");
			goto out;
		}
	}
	return t;
out:
	lfe_tls_free(t);
	return NULL;
}

struct lfe_tls *lfe_tls_new(const char *cert, const char *key, const char *ca, char *err,
			    size_t errlen)
{
	struct lfe_tls_opts o = { .cert = cert, .key = key, .ca = ca,
				  .ticket_lifetime = LFE_TLS_TICKET_LIFETIME_DEFAULT };
	return lfe_tls_new_opts(&o, NULL, err, errlen);
}

void lfe_tls_free(struct lfe_tls *t)
{
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);   /* the ctx's key reference goes with the ctx itself */
	tk_unref(t->keys);
	free(t);
}

SSL_CTX *lfe_tls_ctx(const struct lfe_tls *t)
{
	return t->ctx;
}

void lfe_tls_cert_info(const struct lfe_tls *t, struct lfe_tls_cert *ci)
{
	X509 *x = t ? SSL_CTX_get0_certificate(t->ctx) : NULL;
	struct tm tm;

	memset(ci, 0, sizeof(*ci));
	if (x == NULL)
		return;
	BIO *b = BIO_new(BIO_s_mem());
	if (b && X509_NAME_print_ex(b, X509_get_subject_name(x), 0, XN_FLAG_RFC2253) >= 0) {
		int n = BIO_read(b, ci->subject, (int)sizeof(ci->subject) - 1);
		ci->subject[n > 0 ? n : 0] = '\0';
	}
	BIO_free(b);
	BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	char *hex = bn ? BN_bn2hex(bn) : NULL;
	snprintf(ci->serial, sizeof(ci->serial), "%s", hex ? hex : "?");
	OPENSSL_free(hex);
	BN_free(bn);
	if (ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1) {
		ci->expiry = (int64_t)timegm(&tm);
		strftime(ci->not_after, sizeof(ci->not_after), "%Y-%m-%dT%H:%M:%SZ", &tm);
		ci->known = true;
	}
	ERR_clear_error();
}

void lfe_tls_describe(const struct lfe_tls *t, char *buf, size_t len)
{
	struct lfe_tls_cert ci;

	if (len == 0)
		return;
	lfe_tls_cert_info(t, &ci);
	if (!ci.known)
		snprintf(buf, len, "not configured");
	else
		snprintf(buf, len, "subject %s serial %s not after %s", ci.subject, ci.serial, ci.not_after);
}

void lfe_tls_rotate_keys(struct lfe_tls *t)
{
	if (t && t->keys)
		tk_maybe_rotate(t->keys, mono_s(), true);
}
