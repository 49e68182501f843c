/* tls/tlsrec.c — ldapfe's TLS 1.3 record layer (tlsrec.h).
 *
 * A record is header (23, 3, 3, length) || AEAD(key, IV xor seq, AAD =
 * header, content || type || zeros). The nonce is the only thing set per
 * record: the contexts keep their key schedule from the handover (or the
 * last KeyUpdate) on.
 */
#include "tls/tlsrec.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>

#define IV_LEN 12u
#define CT_ALERT     21u
#define CT_HANDSHAKE 22u
#define CT_APPDATA   23u
#define HS_NEW_SESSION_TICKET 4u
#define HS_KEY_UPDATE 24u
#define ALERT_ILLEGAL_PARAMETER 47u

struct dir {
	EVP_CIPHER_CTX *ctx;      /* OpenSSL's, keyed once per key */
	uint64_t seq;
	uint8_t iv[IV_LEN];
	uint8_t secret[LFE_TLSREC_SECRET_MAX];   /* current traffic secret: KeyUpdate's input */
};

struct lfe_tlsrec {
	const char *md;           /* the suite's hash, by name (HKDF) */
	size_t key_len, hash_len;
	bool gcm;                 /* AES-GCM: the nonce set as a parameter */
	const EVP_CIPHER *cipher; /* the suite's */
	struct dir rd, wr;
	bool client;              /* lfe_tlsrec_set_client: NewSessionTickets skipped */
	bool ku_owed;             /* a KeyUpdate of ours is due: asked for, or the usage limit */
	bool closed;              /* close_notify read: nothing more is opened */
	uint8_t ku_run;           /* KeyUpdates since the last non-empty data record */
	uint8_t empty_run;        /* empty data records in a row */
	uint8_t alert;            /* owed after a failed read */
	uint32_t ku_tokens;       /* KeyUpdate budget left (LFE_TLSREC_KU_BURST at most) */
	uint64_t ku_last_us;      /* the budget's last refill (lfe_tlsrec_now's clock) */
	uint64_t now_us;          /* lfe_tlsrec_now; 0: never told, no refill */
	uint64_t wr_limit;        /* records under one write key before our KeyUpdate */
	uint64_t tickets;         /* NewSessionTickets skipped (client mode) */
};

/* ------------------------------------------------------------ keylog */

/* OpenSSL's ex_data index is per process by its design: set once. */
static int sec_index = -1;
static pthread_once_t sec_once = PTHREAD_ONCE_INIT;

static void sec_index_init(void)
{
	sec_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

int lfe_tlsrec_watch(SSL *ssl, struct lfe_tlsrec_secrets *sec)
{
	pthread_once(&sec_once, sec_index_init);
	if (sec)
		memset(sec, 0, sizeof *sec);
	if (sec_index < 0 || SSL_set_ex_data(ssl, sec_index, sec) != 1) {
		ERR_clear_error();
		return -ENOMEM;
	}
	return 0;
}

void lfe_tlsrec_secrets_wipe(struct lfe_tlsrec_secrets *sec)
{
	OPENSSL_cleanse(sec, sizeof *sec);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "LABEL <client random: 64 hex> <secret: hex>": the secret into dst
 * (≤ LFE_TLSREC_SECRET_MAX bytes); its length, or 0 if malformed. */
static uint8_t parse_secret(const char *s, uint8_t *dst)
{
	const char *sp = strchr(s, ' ');
	if (sp == NULL || strlen(sp + 1) < 65 || sp[65] != ' ')
		return 0;
	const char *h = sp + 66;
	size_t hl = strlen(h);
	if (hl == 0 || hl % 2 || hl / 2 > LFE_TLSREC_SECRET_MAX)
		return 0;
	for (size_t i = 0; i < hl / 2; i++) {
		int a = hexval(h[2 * i]), b = hexval(h[2 * i + 1]);
		if (a < 0 || b < 0) {
			OPENSSL_cleanse(dst, LFE_TLSREC_SECRET_MAX);
			return 0;
		}
		dst[i] = (uint8_t)(a << 4 | b);
	}
	return (uint8_t)(hl / 2);
}

void lfe_tlsrec_keylog(const SSL *ssl, const char *line)
{
	static const char cl[] = "CLIENT_TRAFFIC_SECRET_0 ", sv[] = "SERVER_TRAFFIC_SECRET_0 ";

	if (sec_index < 0)
		return;   /* nobody watches (the index is made by the first watch) */
	struct lfe_tlsrec_secrets *sec = SSL_get_ex_data(ssl, sec_index);
	if (sec == NULL)
		return;
	if (strncmp(line, cl, sizeof cl - 1) == 0)
		sec->client_len = parse_secret(line, sec->client);
	else if (strncmp(line, sv, sizeof sv - 1) == 0)
		sec->server_len = parse_secret(line, sec->server);
}

int lfe_tlsrec_count_records(const uint8_t *p, size_t n)
{
	int count = 0;
	size_t off = 0;

	while (off < n) {
		if (n - off < LFE_TLSREC_HDR || p[off] != CT_APPDATA || count == INT32_MAX)
			return -EINVAL;
		size_t len = (size_t)p[off + 3] << 8 | p[off + 4];
		if (len > LFE_TLSREC_CIPHER_MAX || n - off - LFE_TLSREC_HDR < len)
			return -EINVAL;
		off += LFE_TLSREC_HDR + len;
		count++;
	}
	return count;
}

/* ------------------------------------------------- key memory */

/* Record layers (keys, IVs, traffic secrets) live in chunks carved from
 * 64 KiB regions mapped for them: MADV_DONTDUMP (never in a core dump)
 * and mlock'ed while RLIMIT_MEMLOCK allows (never swapped; past the limit
 * only excluded from dumps). Free chunks go on the freeing thread's list
 * (a record layer is allocated and freed on its own thread: no lock); the
 * regions stay mapped, bounded by the most record layers alive at once.
 * The EVP contexts' key schedules are OpenSSL's allocations (not here). */
#define KEY_CHUNK  512u
#define KEY_REGION (64u * 1024u)

struct key_free { struct key_free *next; };
static _Thread_local struct key_free *key_free_list;

int lfe_tlsrec_key_protect(void *p, size_t n)
{
	int rc = madvise(p, n, MADV_DONTDUMP) == 0 ? 0 : -errno;
	if (rc == 0 && mlock(p, n) == 0)
		return 1;
	return rc;   /* mlock: EPERM/ENOMEM past RLIMIT_MEMLOCK, dump-excluded only */
}

static void *key_region(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)lfe_tlsrec_key_protect(p, n);
	return p;
}

void *lfe_tlsrec_key_alloc(size_t n)
{
	if (n > KEY_CHUNK)
		return NULL;
	if (key_free_list == NULL) {
		uint8_t *reg = key_region(KEY_REGION);
		if (reg == NULL)
			return NULL;
		for (size_t off = KEY_REGION; off >= KEY_CHUNK; off -= KEY_CHUNK) {
			struct key_free *f = (struct key_free *)(reg + off - KEY_CHUNK);
			f->next = key_free_list;
			key_free_list = f;
		}
	}
	struct key_free *f = key_free_list;
	key_free_list = f->next;
	memset(f, 0, KEY_CHUNK);
	return f;
}

void lfe_tlsrec_key_free(void *p, size_t n)
{
	(void)n;
	if (p == NULL)
		return;
	OPENSSL_cleanse(p, KEY_CHUNK);
	struct key_free *f = p;
	f->next = key_free_list;
	key_free_list = f;
}

_Static_assert(sizeof(struct lfe_tlsrec) <= KEY_CHUNK, "a record layer fits a key chunk");

/* ------------------------------------------------------------- keys */

/* HKDF-Expand (EVP_KDF "HKDF", expand only) keyed with one secret: the
 * fetch, the digest lookup and the key are set once for the labels of
 * that secret (each derive then takes only its info). */
static EVP_KDF *hkdf;   /* fetched once per process (default library context) */
static pthread_once_t hkdf_once = PTHREAD_ONCE_INIT;

static void hkdf_fetch(void)
{
	hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);   /* kept to the process's end */
	ERR_clear_error();
}

static EVP_KDF_CTX *hkdf_new(const char *md, const uint8_t *secret, size_t slen)
{
	pthread_once(&hkdf_once, hkdf_fetch);
	EVP_KDF_CTX *kc = hkdf ? EVP_KDF_CTX_new(hkdf) : NULL;
	int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md, 0),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, slen),
		OSSL_PARAM_construct_end(),
	};
	if (kc && EVP_KDF_CTX_set_params(kc, p) != 1) {
		EVP_KDF_CTX_free(kc);   /* cleanses the key it holds */
		kc = NULL;
	}
	if (kc == NULL)
		ERR_clear_error();
	return kc;
}

/* HKDF-Expand-Label(secret, label, "", olen) (RFC 8446 §7.1). */
static int expand_label(EVP_KDF_CTX *kc, const char *label, uint8_t *out, size_t olen)
{
	uint8_t info[2 + 1 + 6 + 12 + 1];
	size_t ll = strlen(label);
	if (ll > 12)
		return -EINVAL;
	info[0] = (uint8_t)(olen >> 8);
	info[1] = (uint8_t)olen;
	info[2] = (uint8_t)(6 + ll);
	memcpy(info + 3, "tls13 ", 6);
	memcpy(info + 9, label, ll);
	info[9 + ll] = 0;   /* empty context */
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, 10 + ll),
		OSSL_PARAM_construct_end(),
	};
	if (EVP_KDF_derive(kc, out, olen, p) != 1) {
		ERR_clear_error();
		return -EIO;
	}
	return 0;
}

/* Key and IV of d from its secret (the sequence number restarts), d->ctx
 * keyed. */
static int dir_key(struct lfe_tlsrec *r, struct dir *d, int enc)
{
	uint8_t key[32];
	EVP_KDF_CTX *kc = hkdf_new(r->md, d->secret, r->hash_len);
	int rc = kc ? expand_label(kc, "key", key, r->key_len) : -EIO;
	if (rc == 0)
		rc = expand_label(kc, "iv", d->iv, IV_LEN);
	EVP_KDF_CTX_free(kc);
	if (rc == 0 && EVP_CipherInit_ex(d->ctx, r->cipher, NULL, key, NULL, enc) != 1)
		rc = -EIO;
	OPENSSL_cleanse(key, sizeof key);
	if (rc < 0)
		ERR_clear_error();
	d->seq = 0;
	return rc;
}

/* application_traffic_secret_N+1 (§7.2), then its key and IV. */
static int dir_update(struct lfe_tlsrec *r, struct dir *d, int enc)
{
	uint8_t next[LFE_TLSREC_SECRET_MAX];
	EVP_KDF_CTX *kc = hkdf_new(r->md, d->secret, r->hash_len);
	int rc = kc ? expand_label(kc, "traffic upd", next, r->hash_len) : -EIO;
	EVP_KDF_CTX_free(kc);
	if (rc == 0)
		memcpy(d->secret, next, r->hash_len);
	OPENSSL_cleanse(next, sizeof next);
	return rc < 0 ? rc : dir_key(r, d, enc);
}

/* The handover of either side: the peer's secret opens, ours seals. */
static struct lfe_tlsrec *from_ssl(const SSL *ssl, struct lfe_tlsrec_secrets *sec, uint64_t wseq,
				   bool client, int *err)
{
	const SSL_CIPHER *c = SSL_version(ssl) == TLS1_3_VERSION ? SSL_get_current_cipher(ssl) : NULL;
	struct lfe_tlsrec *r = NULL;

	*err = -ENOTSUP;
	if (c && sec->client_len && sec->client_len == sec->server_len)
		r = lfe_tlsrec_new_keys(SSL_CIPHER_get_protocol_id(c),
					client ? sec->server : sec->client,
					client ? sec->client : sec->server, sec->client_len, wseq, err);
	lfe_tlsrec_secrets_wipe(sec);
	if (r)
		r->client = client;
	return r;
}

struct lfe_tlsrec *lfe_tlsrec_new(const SSL *ssl, struct lfe_tlsrec_secrets *sec, uint64_t wseq,
				  int *err)
{
	return from_ssl(ssl, sec, wseq, false, err);
}

struct lfe_tlsrec *lfe_tlsrec_new_client(const SSL *ssl, struct lfe_tlsrec_secrets *sec,
					 uint64_t wseq, int *err)
{
	return from_ssl(ssl, sec, wseq, true, err);
}

void lfe_tlsrec_set_client(struct lfe_tlsrec *r)
{
	r->client = true;
}

uint64_t lfe_tlsrec_tickets(const struct lfe_tlsrec *r)
{
	return r->tickets;
}

struct lfe_tlsrec *lfe_tlsrec_new_keys(uint16_t suite, const uint8_t *rd_secret,
				       const uint8_t *wr_secret, size_t secret_len, uint64_t wseq,
				       int *err)
{
	const EVP_CIPHER *cipher = NULL;
	struct lfe_tlsrec *r = NULL;
	size_t key_len = 0, hash_len = 32;
	const char *md = "SHA256";
	bool gcm = false;

	*err = -ENOTSUP;
	switch (suite) {
	case 0x1301:
		cipher = EVP_aes_128_gcm(), key_len = 16, gcm = true;
		break;
	case 0x1302:
		cipher = EVP_aes_256_gcm(), key_len = 32, hash_len = 48, md = "SHA384", gcm = true;
		break;
	case 0x1303:
		cipher = EVP_chacha20_poly1305(), key_len = 32;
		break;
	default:
		goto out;
	}
	if (secret_len != hash_len)
		goto out;
	*err = -ENOMEM;
	r = lfe_tlsrec_key_alloc(sizeof *r);
	if (r == NULL)
		goto out;
	r->md = md;
	r->gcm = gcm;
	r->cipher = cipher;
	r->key_len = key_len;
	r->hash_len = hash_len;
	r->ku_tokens = LFE_TLSREC_KU_BURST;
	r->wr_limit = LFE_TLSREC_WRITE_LIMIT;
	r->rd.ctx = EVP_CIPHER_CTX_new();
	r->wr.ctx = EVP_CIPHER_CTX_new();
	if (r->rd.ctx == NULL || r->wr.ctx == NULL)
		goto fail;
	memcpy(r->rd.secret, rd_secret, hash_len);
	memcpy(r->wr.secret, wr_secret, hash_len);
	*err = -EIO;
	if (dir_key(r, &r->rd, 0) < 0 || dir_key(r, &r->wr, 1) < 0)
		goto fail;
	r->wr.seq = wseq;
	*err = 0;
	goto out;
fail:
	lfe_tlsrec_free(r);
	r = NULL;
out:
	return r;
}

void lfe_tlsrec_free(struct lfe_tlsrec *r)
{
	if (r == NULL)
		return;
	EVP_CIPHER_CTX_free(r->rd.ctx);   /* cleanses its key schedule */
	EVP_CIPHER_CTX_free(r->wr.ctx);
	lfe_tlsrec_key_free(r, sizeof *r);   /* wiped */
}

void lfe_tlsrec_now(struct lfe_tlsrec *r, uint64_t now_us)
{
	r->now_us = now_us;
}

void lfe_tlsrec_set_write_limit(struct lfe_tlsrec *r, uint64_t records)
{
	r->wr_limit = records;
}

/* ------------------------------------------------------------ records */

static void nonce(const struct dir *d, uint8_t n[IV_LEN])
{
	memcpy(n, d->iv, IV_LEN);
	for (unsigned i = 0; i < 8; i++)
		n[IV_LEN - 1 - i] ^= (uint8_t)(d->seq >> (8 * i));
}

/* The record's nonce into d's context. EVP_CipherInit_ex would do it, but
 * in OpenSSL 3.0 it asks the provider for the IV length through a
 * parameter lookup each time (~1,400 instructions a record); AES-GCM
 * takes the whole nonce as its "fixed IV" of length -1 instead
 * (EVP_CTRL_GCM_SET_IV_FIXED's documented whole-IV form, as a parameter),
 * which leaves the IV state "set, not used": a record sealed or opened
 * without a new nonce fails instead of reusing one. */
static int set_nonce(const struct lfe_tlsrec *r, const struct dir *d, int enc)
{
	uint8_t nc[IV_LEN];
	nonce(d, nc);
	if (r->gcm) {
		OSSL_PARAM p[] = {
			OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, nc,
							  (size_t)-1),
			OSSL_PARAM_construct_end(),
		};
		return EVP_CIPHER_CTX_set_params(d->ctx, p);
	}
	return EVP_CipherInit_ex(d->ctx, NULL, NULL, NULL, nc, enc);
}

/* The tag: read after sealing (get), or given before the final check. */
static int tag(const struct dir *d, uint8_t *t, bool get)
{
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, t, LFE_TLSREC_TAG),
		OSSL_PARAM_construct_end(),
	};
	return get ? EVP_CIPHER_CTX_get_params(d->ctx, p) : EVP_CIPHER_CTX_set_params(d->ctx, p);
}

/* One record of inner type `type` with n bytes of p into out. */
static int seal(struct lfe_tlsrec *r, uint8_t type, const uint8_t *p, size_t n, uint8_t *out,
		size_t cap)
{
	struct dir *d = &r->wr;
	size_t clen = n + 1 + LFE_TLSREC_TAG;
	int l = 0;

	if (clen > LFE_TLSREC_CIPHER_MAX || cap < LFE_TLSREC_HDR + clen)
		return -ENOBUFS;
	if (d->seq == UINT64_MAX)
		return -ERANGE;   /* never a nonce twice */
	out[0] = CT_APPDATA;
	out[1] = 3;
	out[2] = 3;
	out[3] = (uint8_t)(clen >> 8);
	out[4] = (uint8_t)clen;
	/* content || type in place, then one pass over it */
	uint8_t *c = out + LFE_TLSREC_HDR;
	if (n)
		memmove(c, p, n);
	c[n] = type;
	if (set_nonce(r, d, 1) != 1 ||
	    EVP_EncryptUpdate(d->ctx, NULL, &l, out, LFE_TLSREC_HDR) != 1 ||
	    EVP_EncryptUpdate(d->ctx, c, &l, c, (int)n + 1) != 1 ||
	    EVP_EncryptFinal_ex(d->ctx, c + n + 1, &l) != 1 || tag(d, c + n + 1, true) != 1) {
		ERR_clear_error();
		return -EIO;
	}
	d->seq++;
	return (int)(LFE_TLSREC_HDR + clen);
}

int lfe_tlsrec_write(struct lfe_tlsrec *r, const uint8_t *p, size_t n, uint8_t *out, size_t cap)
{
	size_t used = 0;

	if (n > LFE_TLSREC_PLAIN_MAX || cap < n + LFE_TLSREC_WRITE_OVERHEAD)
		return -ENOBUFS;
	if (r->wr_limit && r->wr.seq + 1 >= r->wr_limit)
		r->ku_owed = true;   /* §5.5: the KeyUpdate is the key's last record */
	if (r->ku_owed) {
		static const uint8_t ku[] = { HS_KEY_UPDATE, 0, 0, 1, 0 };   /* update_not_requested */
		int k = seal(r, CT_HANDSHAKE, ku, sizeof ku, out, cap);
		if (k < 0)
			return k;
		used = (size_t)k;
		if (dir_update(r, &r->wr, 1) < 0)
			return -EIO;
		r->ku_owed = false;
	}
	int k = seal(r, CT_APPDATA, p, n, out + used, cap - used);
	return k < 0 ? k : (int)(used + (size_t)k);
}

int lfe_tlsrec_seal_inner(struct lfe_tlsrec *r, const uint8_t *inner, size_t m, uint8_t *out,
			  size_t cap)
{
	if (m == 0 || m - 1 > LFE_TLSREC_PLAIN_MAX + 255 - LFE_TLSREC_TAG)
		return -ENOBUFS;
	return seal(r, inner[m - 1], inner, m - 1, out, cap);
}

int lfe_tlsrec_alert(struct lfe_tlsrec *r, uint8_t desc, uint8_t *out, size_t cap)
{
	const uint8_t a[2] = { desc == LFE_TLS_ALERT_CLOSE_NOTIFY ? 1 : 2, desc };
	return seal(r, CT_ALERT, a, sizeof a, out, cap);
}

uint8_t lfe_tlsrec_alert_due(const struct lfe_tlsrec *r)
{
	return r->alert;
}

static int bad(struct lfe_tlsrec *r, uint8_t alert)
{
	r->alert = alert;
	return -EBADMSG;
}

/* One KeyUpdate from the budget (tlsrec.h): refilled by one for each
 * LFE_TLSREC_KU_REFILL_US of lfe_tlsrec_now's clock, up to the burst. */
static bool ku_budget(struct lfe_tlsrec *r)
{
	if (r->now_us > r->ku_last_us) {
		uint64_t earned = (r->now_us - r->ku_last_us) / LFE_TLSREC_KU_REFILL_US;
		if (earned) {
			uint64_t t = r->ku_tokens + earned;
			r->ku_tokens = t > LFE_TLSREC_KU_BURST ? LFE_TLSREC_KU_BURST : (uint32_t)t;
			r->ku_last_us += earned * LFE_TLSREC_KU_REFILL_US;
		}
	}
	if (r->ku_last_us == 0 || r->ku_last_us > r->now_us)
		r->ku_last_us = r->now_us;   /* the first reading */
	if (r->ku_tokens == 0)
		return false;
	r->ku_tokens--;
	return true;
}

/* A KeyUpdate, alone in its record (§4.6.3; a handshake message must not
 * span a key change, and we take no other post-handshake message). */
static int key_update(struct lfe_tlsrec *r, const uint8_t *m, size_t n)
{
	if (n == 0 || m[0] != HS_KEY_UPDATE)
		return bad(r, LFE_TLS_ALERT_UNEXPECTED_MESSAGE);
	if (n != 5 || m[1] != 0 || m[2] != 0 || m[3] != 1)
		return bad(r, LFE_TLS_ALERT_DECODE_ERROR);
	if (m[4] > 1)
		return bad(r, ALERT_ILLEGAL_PARAMETER);
	if (++r->ku_run > LFE_TLSREC_KEY_UPDATES_MAX || !ku_budget(r))
		return bad(r, LFE_TLS_ALERT_UNEXPECTED_MESSAGE);   /* a flood: each costs 3 HKDFs */
	if (dir_update(r, &r->rd, 0) < 0)
		return bad(r, LFE_TLS_ALERT_INTERNAL_ERROR);
	r->ku_owed |= m[4] == 1;
	return 0;
}

/* One NewSessionTicket body (§4.6.1): lifetime, age_add, nonce<0..255>,
 * ticket<1..2^16-1>, extensions<0..2^16-2> each type, length, data;
 * nothing after. True if it is exactly that. */
static bool ticket_ok(const uint8_t *b, size_t n)
{
	size_t off = 8;

	if (n < off + 1)
		return false;
	off += 1 + (size_t)b[off];                         /* ticket_nonce */
	if (n < off + 2)
		return false;
	size_t tl = (size_t)b[off] << 8 | b[off + 1];
	if (tl == 0 || n - off - 2 < tl)
		return false;
	off += 2 + tl;                                     /* ticket */
	if (n - off < 2)
		return false;
	size_t el = (size_t)b[off] << 8 | b[off + 1];
	off += 2;
	if (n - off != el)
		return false;
	while (off < n) {                                  /* extensions */
		if (n - off < 4)
			return false;
		size_t xl = (size_t)b[off + 2] << 8 | b[off + 3];
		if (n - off - 4 < xl)
			return false;
		off += 4 + xl;
	}
	return true;
}

/* Client mode: a record of whole NewSessionTickets (one or more, each
 * inside the record: one that would go on in the next record is refused,
 * we do not reassemble), skipped and counted. m[0] is 4. */
static int tickets(struct lfe_tlsrec *r, const uint8_t *m, size_t n)
{
	size_t off = 0, k = 0;

	while (off < n) {
		/* another message (a KeyUpdate sits alone), or one that spans */
		if (n - off < 4 || m[off] != HS_NEW_SESSION_TICKET)
			return bad(r, LFE_TLS_ALERT_UNEXPECTED_MESSAGE);
		size_t bl = (size_t)m[off + 1] << 16 | (size_t)m[off + 2] << 8 | m[off + 3];
		if (n - off - 4 < bl)
			return bad(r, LFE_TLS_ALERT_UNEXPECTED_MESSAGE);
		if (!ticket_ok(m + off + 4, bl))
			return bad(r, LFE_TLS_ALERT_DECODE_ERROR);
		off += 4 + bl;
		k++;
	}
	r->tickets += k;
	return 0;
}

int lfe_tlsrec_read(struct lfe_tlsrec *r, const uint8_t *in, size_t len, uint8_t *out, size_t cap,
		    size_t *plen, size_t *need)
{
	struct dir *d = &r->rd;
	int l = 0;

	*plen = 0;
	*need = LFE_TLSREC_HDR;
	if (r->closed)
		return -EPIPE;   /* after close_notify nothing is opened (§6.1) */
	if (len < LFE_TLSREC_HDR)
		return 0;
	/* After the handshake only protected records: a change_cipher_spec,
	 * a plaintext alert or handshake record, garbage, are unexpected. */
	if (in[0] != CT_APPDATA)
		return bad(r, LFE_TLS_ALERT_UNEXPECTED_MESSAGE);
	if (in[1] != 3)
		return bad(r, LFE_TLS_ALERT_DECODE_ERROR);
	size_t clen = (size_t)in[3] << 8 | in[4];
	if (clen > LFE_TLSREC_CIPHER_MAX)
		return bad(r, LFE_TLS_ALERT_RECORD_OVERFLOW);
	if (clen < 1 + LFE_TLSREC_TAG)
		return bad(r, LFE_TLS_ALERT_DECODE_ERROR);
	*need = LFE_TLSREC_HDR + clen;
	if (len < *need)
		return 0;
	size_t m = clen - LFE_TLSREC_TAG;   /* TLSInnerPlaintext */
	if (m > LFE_TLSREC_PLAIN_MAX + 1)
		return bad(r, LFE_TLS_ALERT_RECORD_OVERFLOW);
	if (cap < m)
		return bad(r, LFE_TLS_ALERT_INTERNAL_ERROR);
	if (d->seq == UINT64_MAX) {
		r->alert = LFE_TLS_ALERT_INTERNAL_ERROR;
		return -ERANGE;
	}
	const uint8_t *c = in + LFE_TLSREC_HDR;
	uint8_t t[LFE_TLSREC_TAG];
	memcpy(t, c + m, sizeof t);
	if (set_nonce(r, d, 0) != 1 || EVP_DecryptUpdate(d->ctx, NULL, &l, in, LFE_TLSREC_HDR) != 1 ||
	    EVP_DecryptUpdate(d->ctx, out, &l, c, (int)m) != 1 || tag(d, t, false) != 1 ||
	    EVP_DecryptFinal_ex(d->ctx, out + m, &l) != 1) {
		ERR_clear_error();
		OPENSSL_cleanse(out, m);
		return bad(r, LFE_TLS_ALERT_BAD_RECORD_MAC);
	}
	d->seq++;
	size_t i = m;
	while (i > 0 && out[i - 1] == 0)
		i--;
	if (i == 0)
		return bad(r, LFE_TLS_ALERT_UNEXPECTED_MESSAGE);   /* no content type */
	uint8_t type = out[i - 1];
	size_t n = i - 1;
	int rc = 0;
	switch (type) {
	case CT_APPDATA:
		if (n == 0) {
			/* Empty records reset nothing (else they would refill the
			 * KeyUpdate run) and are bounded as OpenSSL bounds them. */
			if (++r->empty_run > LFE_TLSREC_EMPTY_MAX)
				rc = bad(r, LFE_TLS_ALERT_UNEXPECTED_MESSAGE);
			break;
		}
		r->ku_run = 0;
		r->empty_run = 0;
		*plen = n;
		return (int)*need;
	case CT_ALERT:
		if (n != 2) {
			rc = bad(r, LFE_TLS_ALERT_DECODE_ERROR);
		} else if (out[1] == LFE_TLS_ALERT_CLOSE_NOTIFY) {
			r->closed = true;
			rc = -EPIPE;
		}
		else {
			rc = -ECONNRESET;   /* their fatal alert: we only close */
		}
		break;
	case CT_HANDSHAKE:
		if (r->client && n > 0 && out[0] == HS_NEW_SESSION_TICKET)
			rc = tickets(r, out, n);
		else
			rc = key_update(r, out, n);
		break;
	default:
		rc = bad(r, LFE_TLS_ALERT_UNEXPECTED_MESSAGE);
		break;
	}
	OPENSSL_cleanse(out, m);
	return rc < 0 ? rc : (int)*need;
}
