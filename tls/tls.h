/* tls/tls.h — the daemon's TLS configuration: one OpenSSL SSL_CTX
 * from the [tls] section, shared read-only by every worker's connections
 * (OpenSSL 3 makes SSL_new on a shared SSL_CTX thread-safe).
 *
 * Policy: TLS 1.2 (or 1.3, protocol_min) and up, the server's cipher
 * preference, no renegotiation, no compression, SSL_MODE_RELEASE_BUFFERS
 * (an idle TLS connection holds no record buffers), no server-side session
 * cache (a shared cache would be locked by every worker). The certificate
 * (PEM, chain allowed), its key, the optional CA file and the cipher lists
 * are checked when the context is made: an unreadable file, a key that
 * does not match, an expired certificate, a cipher list OpenSSL rejects,
 * client verification without a CA, are refused with the key's name and
 * the reason.
 *
 * Resumption: stateless tickets (TLS 1.2 RFC 5077, TLS 1.3 PSK) sealed
 * with a current key and opened with the current or the previous one
 * (AES-256-CBC + HMAC-SHA256, OpenSSL's ticket format). Keys come from
 * RAND_bytes, live in memory only, and rotate every ticket lifetime on the
 * first handshake after it ran out: a ticket stays usable for one to two
 * lifetimes, and a key is gone two lifetimes after it was made. A ticket
 * opened with the previous key is renewed, and so is every TLS 1.3 one:
 * a resumed TLS 1.3 handshake hands the client a fresh ticket, as TLS 1.3
 * clients use a ticket once. ticket_lifetime 0: no tickets and so no
 * resumption (there is no session cache).
 *
 * Reload: lfe_tls_new(o, prev, ...) takes the ticket keys of prev (same
 * ticket lifetime), so tickets issued before a reload still resume. Each
 * SSL_CTX holds its own reference to the keys, so connections made on an
 * older context (SSL_new took a reference to it) finish their handshake
 * safely after the struct lfe_tls that made it was freed.
 *
 * Thread rules: lfe_tls_new/free on one thread (main, control); the
 * context and the ticket keys may be used from any number of threads at
 * once (rotation is lock-free: one thread wins it, the others go on with
 * the key they saw).
 */
#ifndef LFE_TLS_TLS_H
#define LFE_TLS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lfe_tls;
typedef struct ssl_ctx_st SSL_CTX;

enum lfe_tls_verify {
	LFE_TLS_VERIFY_NONE = 0,   /* no certificate asked */
	LFE_TLS_VERIFY_OPTIONAL,   /* asked; one presented must verify against ca */
	LFE_TLS_VERIFY_REQUIRE,    /* a certificate that verifies against ca, or no handshake */
};

#define LFE_TLS_TICKET_LIFETIME_DEFAULT 7200u   /* seconds */

/* Who seals and opens the records of an established TLS 1.3 connection
 * ([tls] record_layer): ldapfe's own record layer (tls/tlsrec.h;
 * the context then carries its keylog callback, and tls/stream.c
 * hands connections over after the handshake), or OpenSSL throughout. */
enum lfe_tls_record {
	LFE_TLS_RECORD_LDAPFE = 0,
	LFE_TLS_RECORD_OPENSSL,
};

/* TLS 1.3 suites when [tls] ciphersuites is unset: OpenSSL's three, with
 * AES-128-GCM-SHA256 (RFC 8446 §9.1's mandatory suite) first instead of
 * AES-256-GCM-SHA384. With server preference that is what clients get:
 * the handshake's transcript hash and key schedule run on SHA-256, which
 * CPUs with SHA extensions compute in hardware (SHA-384 never is), so a
 * handshake costs the worker less (bench_tls); 128-bit keys match the
 * security of the X25519 / P-256 exchange and the P-256 certificate. */
#define LFE_TLS_CIPHERSUITES_DEFAULT \
	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
/* TLS 1.2 ciphers when [tls] ciphers is unset: forward-secret (ECDHE)
 * AEAD suites only, AES-128-GCM first for the reason above (the PRF and
 * the Finished MACs on SHA-256: a resumed TLS 1.2 handshake cost the
 * worker 10 % less than with SHA-384, bench_tls resumed12), as Mozilla's
 * "intermediate" profile orders them. OpenSSL's own DEFAULT would also
 * take CBC suites and RSA key transport (no forward secrecy). */
#define LFE_TLS_CIPHERS_DEFAULT \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:" \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:" \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
#define LFE_TLS_TICKET_LIFETIME_MAX     604800u /* 7 days: RFC 8446 §4.6.1's cap */

/* What a context is made of; strings may be NULL or "" (unset). */
struct lfe_tls_opts {
	const char *cert, *key, *ca;
	enum lfe_tls_verify verify_client;
	unsigned protocol_min;       /* 2: TLS 1.2, 3: TLS 1.3; 0 = 2 */
	const char *ciphers;         /* TLS 1.2 list (OpenSSL syntax); unset = LFE_TLS_CIPHERS_DEFAULT */
	const char *ciphersuites;    /* TLS 1.3 list; unset = LFE_TLS_CIPHERSUITES_DEFAULT */
	uint32_t ticket_lifetime;    /* seconds, ≤ LFE_TLS_TICKET_LIFETIME_MAX; 0 = no tickets */
	enum lfe_tls_record record_layer;   /* LDAPFE (0) by default */
};

/* A new context, or NULL with err set ("[tls] key: FILE: reason"). prev
 * (may be NULL) lends its ticket keys when the lifetime is the same. */
struct lfe_tls *lfe_tls_new_opts(const struct lfe_tls_opts *o, const struct lfe_tls *prev,
				 char *err, size_t errlen);

/* The defaults with cert, key and ca (older callers). */
struct lfe_tls *lfe_tls_new(const char *cert, const char *key, const char *ca, char *err,
			    size_t errlen);
void lfe_tls_free(struct lfe_tls *t);   /* NULL is a no-op */

/* The shared SSL_CTX (the context's own; SSL_new takes its reference). */
SSL_CTX *lfe_tls_ctx(const struct lfe_tls *t);

/* The served certificate: subject (RFC 2253), serial (hex), notAfter
 * (ISO 8601 UTC and Unix seconds). known is false when t is NULL or the
 * fields could not be read. */
struct lfe_tls_cert {
	char subject[256], serial[80], not_after[32];
	int64_t expiry;
	bool known;
};
void lfe_tls_cert_info(const struct lfe_tls *t, struct lfe_tls_cert *ci);

/* "subject S serial HEX not after DATE" of the certificate (from
 * lfe_tls_cert_info), for status lines and logs; always NUL-terminated. */
void lfe_tls_describe(const struct lfe_tls *t, char *buf, size_t len);

/* Test hook: rotate the ticket keys now, as if a lifetime had passed. */
void lfe_tls_rotate_keys(struct lfe_tls *t);

#endif
