/* dataplane/tls.h — the daemon's TLS configuration: one OpenSSL SSL_CTX
 * from the [tls] section, shared read-only by every worker's connections
 * (OpenSSL 3 makes SSL_new on a shared SSL_CTX thread-safe).
 *
 * Policy: TLS 1.2 and 1.3 only, the server's cipher preference, no
 * renegotiation, no compression, SSL_MODE_RELEASE_BUFFERS (an idle TLS
 * connection holds no record buffers). The certificate (PEM, chain
 * allowed), its key, and an optional CA file are checked at start: an
 * unreadable file, a key that does not match, or an expired certificate is
 * refused with the key's name and the reason.
 */
#ifndef LFE_DATAPLANE_TLS_H
#define LFE_DATAPLANE_TLS_H

#include <stddef.h>

struct lfe_tls;
typedef struct ssl_ctx_st SSL_CTX;

/* A new context, or NULL with err set ("[tls] key: ..."). ca may be NULL
 * or "". */
struct lfe_tls *lfe_tls_new(const char *cert, const char *key, const char *ca, char *err,
			    size_t errlen);
void lfe_tls_free(struct lfe_tls *t);   /* NULL is a no-op */
SSL_CTX *lfe_tls_ctx(const struct lfe_tls *t);

#endif
