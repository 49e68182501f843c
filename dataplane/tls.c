/* dataplane/tls.c — the daemon's SSL_CTX (tls.h). */
#include "tls.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

struct lfe_tls {
	SSL_CTX *ctx;
};

/* "[tls] KEY: FILE: reason" with OpenSSL's first queued reason. */
static void fail(char *err, size_t errlen, const char *key, const char *file, const char *what)
{
	unsigned long e = ERR_peek_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	snprintf(err, errlen, "[tls] %s: %s: %s%s%s", key, file, what, r ? ": " : "", r ? r : "");
	ERR_clear_error();
}

struct lfe_tls *lfe_tls_new(const char *cert, const char *key, const char *ca, char *err,
			    size_t errlen)
{
	struct lfe_tls *t = calloc(1, sizeof *t);
	if (t == NULL) {
		snprintf(err, errlen, "[tls]: out of memory");
		return NULL;
	}
	ERR_clear_error();
	t->ctx = SSL_CTX_new(TLS_server_method());
	if (t->ctx == NULL) {
		fail(err, errlen, "certificate", "-", "cannot create a TLS context");
		goto out;
	}
	SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(t->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
				    SSL_OP_NO_COMPRESSION);
	SSL_CTX_set_mode(t->ctx, SSL_MODE_RELEASE_BUFFERS);
	if (cert == NULL || cert[0] == '\0' || key == NULL || key[0] == '\0') {
		snprintf(err, errlen, "[tls] certificate and key: required for LDAPS");
		goto out;
	}
	if (SSL_CTX_use_certificate_chain_file(t->ctx, cert) != 1) {
		fail(err, errlen, "certificate", cert, "cannot load");
		goto out;
	}
	X509 *x = SSL_CTX_get0_certificate(t->ctx);
	if (x == NULL || X509_cmp_current_time(X509_get0_notAfter(x)) <= 0) {
		fail(err, errlen, "certificate", cert, "expired");
		goto out;
	}
	if (X509_cmp_current_time(X509_get0_notBefore(x)) >= 0) {
		fail(err, errlen, "certificate", cert, "not valid yet");
		goto out;
	}
	if (SSL_CTX_use_PrivateKey_file(t->ctx, key, SSL_FILETYPE_PEM) != 1) {
		bool mismatch = ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH;
		fail(err, errlen, "key", key, mismatch ? "does not match the certificate" : "cannot load");
		goto out;
	}
	if (SSL_CTX_check_private_key(t->ctx) != 1) {
		fail(err, errlen, "key", key, "does not match the certificate");
		goto out;
	}
	if (ca && ca[0] && SSL_CTX_load_verify_locations(t->ctx, ca, NULL) != 1) {
		fail(err, errlen, "ca", ca, "cannot load");
		goto out;
	}
	return t;
out:
	lfe_tls_free(t);
	return NULL;
}

void lfe_tls_free(struct lfe_tls *t)
{
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}

SSL_CTX *lfe_tls_ctx(const struct lfe_tls *t)
{
	return t->ctx;
}
