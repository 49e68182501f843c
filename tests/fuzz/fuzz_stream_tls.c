/* tests/fuzz/fuzz_stream_tls.c — the byte-stream layer with TLS on
 * (tls/stream.h, an SSL_CTX from tls/tls.h) over the
 * user-space TCP, as the daemon runs it, with a real LDAP session on the
 * in-memory test backend.
 *
 * The server's certificate and key are made in-process at the first call
 * (EC P-256, self-signed: tests/dataplane/testpki.h; no committed key).
 *
 * Input: byte 0 the mode, byte 1 the segment sizes' seed; the rest are
 * the fuzzer's bytes, sent to the server in TCP segments of 1..N bytes:
 *   mode % 3 == 0: as the client's ciphertext from the first byte (a
 *                  ClientHello, or garbage);
 *   mode % 3 == 1: after a real TLS handshake (OpenSSL client, TLS 1.2 or
 *                  1.3 by mode bit 2), as raw records (bad records,
 *                  alerts, renegotiation attempts);
 *   mode % 3 == 2: after the handshake, sealed by the client as
 *                  application data (LDAP requests under TLS).
 * The server's context is [tls]'s default, record_layer = ldapfe: after a
 * TLS 1.3 handshake the records reach tls/tlsrec.c's parser. With
 * mode bit 3 (and 1.3, mode % 3 == 1) the bytes are instead chunks (2-byte
 * length, then that many bytes) each sealed with the client's keys as a
 * whole TLSInnerPlaintext (lfe_tlsrec_seal_inner; the last byte is the
 * inner content type): alerts, KeyUpdates, other handshake messages,
 * zeros, oversized plaintexts, all with valid tags. Mode bits 4-5 pick the
 * TLS 1.3 suite (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305).
 * Then the client acknowledges everything and sends FIN.
 * Checks: no crash, leak or sanitizer report; the connection is closed or
 * still consistent (every callback pairs), and what the server sends
 * stays within what the TCP layer allows.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls/stream.h"
#include "tls/tls.h"
#include "tls/tlsrec.h"
#include "tests/tls/testpki.h"
#include "tests/ldap/testbackend.c"   /* the test backend is not a library */

#define LADDR 0x0a000001u
#define RADDR 0x0a000002u
#define PISN  7000u

struct fz {
	struct lfe_tcp *t;
	struct lfe_session_cfg scfg;
	void *smem;
	struct lfe_session *s;
	struct lfe_stream st;
	struct lfe_tcp_conn *c;
	int opens, closes;
	uint32_t iss;
	uint8_t *rx;                /* server bytes, in order */
	size_t rx_len, rx_cap, rx_taken;
	uint32_t sent;              /* client bytes sent */
	uint8_t scratch[16384];
	struct lfe_stream_core core;   /* no offload: handshake steps inline */
};

static SSL_CTX *server_ctx, *client_ctx;
static struct lfe_tb *tb;

static void setup(void)
{
	char dir[] = "/tmp/lfe-fuzz-tls.XXXXXX", c[64], k[64], err[256];
	if (mkdtemp(dir) == NULL)
		abort();
	EVP_PKEY *key = tp_key();
	X509 *x = key ? tp_cert(key, "fuzz", NULL, NULL, 1, -60, 86400 * 30, false) : NULL;
	if (x == NULL || tp_write(dir, "c.pem", x, NULL) || tp_write(dir, "k.pem", NULL, key))
		abort();
	snprintf(c, sizeof c, "%s/c.pem", dir);
	snprintf(k, sizeof k, "%s/k.pem", dir);
	struct lfe_tls_opts o = { .cert = c, .key = k, .ticket_lifetime = 3600 };
	struct lfe_tls *t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	unlink(c);
	unlink(k);
	rmdir(dir);
	if (t == NULL)
		abort();
	server_ctx = lfe_tls_ctx(t);
	SSL_CTX_up_ref(server_ctx);   /* kept for the process; t itself is done */
	lfe_tls_free(t);
	X509_free(x);
	EVP_PKEY_free(key);
	client_ctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_verify(client_ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_keylog_callback(client_ctx, lfe_tlsrec_keylog);   /* the client's keys */
	static const char *const dom[] = { "objectClass=top", "dc=example" };
	static const char *const alice[] = { "objectClass=person", "uid=alice", "cn=Alice" };
	tb = lfe_tb_new();
	if (!client_ctx || !tb || lfe_tb_add(tb, "dc=example,dc=com", NULL, dom, 2) ||
	    lfe_tb_add(tb, "uid=alice,dc=example,dc=com", "secret", alice, 3))
		abort();
}

static int cb_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	struct fz *f = ctx;
	if (s->flags & LFE_TCP_SYN)
		f->iss = s->seq;
	if (s->len) {
		uint32_t off = s->seq - f->iss - 1;
		if (off <= f->rx_len && off + s->len > f->rx_len) {
			size_t n = off + s->len - f->rx_len;
			if (f->rx_len + n > f->rx_cap) {
				f->rx_cap = (f->rx_len + n) * 2;
				f->rx = realloc(f->rx, f->rx_cap);
				if (f->rx == NULL)
					abort();
			}
			memcpy(f->rx + f->rx_len, s->payload + (f->rx_len - off), n);
			f->rx_len += n;
		}
	}
	return 0;
}

static int cb_open(void *ctx, struct lfe_tcp_conn *c)
{
	struct fz *f = ctx;
	f->c = c;
	f->opens++;
	if (lfe_stream_init_tls(&f->st, c, server_ctx, &f->core) < 0)
		return -ENOBUFS;
	f->s = lfe_session_init(f->smem, &f->scfg);
	lfe_session_set_tls(f->s);
	return 0;
}

static size_t cb_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	struct fz *f = ctx;
	unsigned flags;
	(void)c;
	size_t used = lfe_stream_deliver(&f->st, f->s, d, len, f->scratch, sizeof f->scratch, &flags);
	if (used > len)
		__builtin_trap();
	return used;
}

static void cb_writable(void *ctx, struct lfe_tcp_conn *c)
{
	struct fz *f = ctx;
	unsigned flags;
	(void)c;
	lfe_stream_on_writable(&f->st, f->s, f->t, 0, f->scratch, sizeof f->scratch, &flags);
}

static void cb_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct fz *f = ctx;
	(void)c, (void)reason;
	lfe_stream_fini(&f->st);
	lfe_session_fini(f->s);
	f->s = NULL;
	f->c = NULL;
	f->closes++;
}

static const struct lfe_tcp_ops ops = {
	.tx = cb_tx, .on_open = cb_open, .on_data = cb_data, .on_writable = cb_writable,
	.on_close = cb_close,
};

/* One client segment (acknowledging all the server sent), then flush. */
static void seg(struct fz *f, uint8_t flags, const uint8_t *p, uint16_t len, uint64_t now)
{
	struct lfe_tcp_seg s = {
		.laddr = LADDR, .raddr = RADDR, .lport = 636, .rport = 40000,
		.seq = PISN + 1 + f->sent, .ack = f->iss + 1 + (uint32_t)f->rx_len,
		.win = 65535, .flags = flags, .wscale = -1, .payload = p, .len = len,
	};
	if (flags & LFE_TCP_SYN)
		s.seq = PISN, s.ack = 0;
	lfe_tcp_input(f->t, &s, now);
	lfe_tcp_flush(f->t, now);
	f->sent += len;
}

/* Send n bytes in segments of 1..max (sizes from a small LCG on seed). */
static void send_bytes(struct fz *f, const uint8_t *p, size_t n, uint32_t *seed, uint64_t *now)
{
	while (n && f->c) {
		*seed = *seed * 1103515245u + 12345u;
		size_t k = 1 + (*seed >> 16) % 1400;
		if (k > n)
			k = n;
		seg(f, LFE_TCP_ACK | LFE_TCP_PSH, p, (uint16_t)k, *now += 100);
		p += k;
		n -= k;
	}
}

/* Move what the client SSL wrote to the server. */
static void client_out(struct fz *f, BIO *wb, uint32_t *seed, uint64_t *now)
{
	uint8_t buf[4096];
	int n;
	while ((n = BIO_read(wb, buf, sizeof buf)) > 0)
		send_bytes(f, buf, (size_t)n, seed, now);
}

/* Feed the server's new bytes to the client SSL. */
static void client_in(struct fz *f, BIO *rb)
{
	if (f->rx_len > f->rx_taken) {
		BIO_write(rb, f->rx + f->rx_taken, (int)(f->rx_len - f->rx_taken));
		f->rx_taken = f->rx_len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (server_ctx == NULL)
		setup();
	if (size < 2)
		return 0;
	unsigned mode = data[0];
	uint32_t seed = data[1];
	data += 2;
	size -= 2;

	static struct fz f;
	memset(&f, 0, sizeof f);
	f.scfg = (struct lfe_session_cfg){ .allow_anonymous = true, .be = &lfe_tb_ops, .be_ctx = tb,
					   .naming_context = "dc=example,dc=com", .starttls = true };
	f.smem = aligned_alloc(64, (lfe_session_size() + 63) & ~(size_t)63);
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.sndbuf = 4096;
	cfg.rcvbuf = 8192;
	cfg.max_conns = 2;
	cfg.max_half_open = 2;
	cfg.n_listen = 1;
	cfg.listen[0].addr = LADDR;
	cfg.listen[0].port = 636;
	int err = 0;
	f.t = lfe_tcp_new(&cfg, &ops, &f, &err);
	if (f.t == NULL || f.smem == NULL)
		abort();
	uint64_t now = 1000;
	seg(&f, LFE_TCP_SYN, NULL, 0, now);
	f.sent = 0;
	seg(&f, LFE_TCP_ACK, NULL, 0, now += 10);

	SSL *cl = NULL;
	BIO *rb = NULL, *wb = NULL;
	struct lfe_tlsrec_secrets csec;
	static const char *const suites[] = { "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
					      "TLS_CHACHA20_POLY1305_SHA256" };
	if (mode % 3 != 0 && f.c) {
		cl = SSL_new(client_ctx);
		rb = BIO_new(BIO_s_mem());
		wb = BIO_new(BIO_s_mem());
		if (!cl || !rb || !wb)
			abort();
		SSL_set_bio(cl, rb, wb);
		SSL_set_connect_state(cl);
		int v = mode & 4 ? TLS1_3_VERSION : TLS1_2_VERSION;
		SSL_set_min_proto_version(cl, v);
		SSL_set_max_proto_version(cl, v);
		SSL_set_ciphersuites(cl, suites[(mode >> 4 & 3) % 3]);
		if (lfe_tlsrec_watch(cl, &csec) < 0)
			abort();
		for (int i = 0; i < 20 && f.c; i++) {
			int r = SSL_do_handshake(cl);
			client_out(&f, wb, &seed, &now);
			client_in(&f, rb);
			if (r == 1)
				break;
		}
	}
	struct lfe_tlsrec *peer = NULL;
	int err2 = 0;
	if (mode % 3 == 1 && (mode & 8) && cl && SSL_is_init_finished(cl) &&
	    SSL_version(cl) == TLS1_3_VERSION)
		peer = lfe_tlsrec_new_keys(SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(cl)),
					   csec.server, csec.client, csec.client_len, 0, &err2);
	if (cl)
		lfe_tlsrec_secrets_wipe(&csec);
	if (peer) {
		static uint8_t rec[LFE_TLSREC_MAX + 64];
		for (size_t off = 0; off + 2 <= size && f.c;) {
			size_t m = ((size_t)data[off] << 8 | data[off + 1]) % 17000;
			off += 2;
			if (m > size - off)
				m = size - off;
			int k = m ? lfe_tlsrec_seal_inner(peer, data + off, m, rec, sizeof rec) : -1;
			if (k > 0)
				send_bytes(&f, rec, (size_t)k, &seed, &now);
			off += m;
		}
		lfe_tlsrec_free(peer);
	} else if (mode % 3 == 2 && cl && SSL_is_init_finished(cl)) {
		size_t w;
		for (size_t off = 0; off < size && f.c; off += 16384) {
			size_t n = size - off < 16384 ? size - off : 16384;
			if (SSL_write_ex(cl, data + off, n, &w) != 1)
				break;
			client_out(&f, wb, &seed, &now);
			client_in(&f, rb);
		}
	} else {
		send_bytes(&f, data, size, &seed, &now);
	}
	/* Let the server drain: acknowledge everything, then FIN. */
	for (int i = 0; i < 8 && f.c; i++)
		seg(&f, LFE_TCP_ACK, NULL, 0, now += 100);
	if (f.c)
		seg(&f, LFE_TCP_ACK | LFE_TCP_FIN, NULL, 0, now += 100);
	if (f.closes > f.opens)
		__builtin_trap();
	SSL_free(cl);
	ERR_clear_error();
	lfe_tcp_free(f.t);   /* no callbacks: release what an open connection holds */
	if (f.s) {
		lfe_stream_fini(&f.st);
		lfe_session_fini(f.s);
	}
	free(f.smem);
	free(f.rx);
	return 0;
}
