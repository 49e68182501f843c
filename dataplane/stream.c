/* dataplane/stream.c — the byte stream between a session and TCP (stream.h).
 *
 * Why the session's contract makes this loop short: a call of
 * lfe_session_process either writes at least one response, or consumes
 * input without writing (a partial PDU gathered), or stops because the
 * room cannot take the next answer. In the first case the session may have
 * stopped before a request that needs an empty output (a search, or a
 * request gathered from split input), so it is called again with the
 * scratch emptied; in the other cases there is nothing more to do until
 * more bytes or more room arrive. The room offered is never more than what
 * the stream can queue, so every response written is queued whole.
 *
 * TLS: one response is one SSL_write of at most one record's plaintext,
 * so the room offered is the TCP room less one record's overhead; OpenSSL
 * writes the record into the write BIO and tls_flush moves it to TCP at
 * once (the room was there). Bytes that find no room (handshake flights)
 * wait in the write BIO for on_writable, and the stream offers no room
 * while any wait, so responses never overtake them.
 */
#include "stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define TLS_RECORD_MAX  16384u   /* plaintext of one record */
#define TLS_OVERHEAD    256u     /* header, IV, MAC or tag, padding of one record */

struct lfe_stream_tls {
	SSL *ssl;
	BIO *rbio, *wbio;        /* owned by ssl */
	bool failed;             /* alert sent, connection closing */
	uint32_t plain_len;      /* decrypted, not yet taken by the session */
	uint8_t plain[TLS_RECORD_MAX];
};

void lfe_stream_init(struct lfe_stream *st, struct lfe_tcp_conn *c)
{
	st->c = c;
	st->tls = NULL;
}

int lfe_stream_init_tls(struct lfe_stream *st, struct lfe_tcp_conn *c, SSL_CTX *ctx)
{
	lfe_stream_init(st, c);
	struct lfe_stream_tls *t = malloc(sizeof *t);
	if (t == NULL)
		return -ENOMEM;
	t->ssl = SSL_new(ctx);
	t->rbio = BIO_new(BIO_s_mem());
	t->wbio = BIO_new(BIO_s_mem());
	if (t->ssl == NULL || t->rbio == NULL || t->wbio == NULL) {
		BIO_free(t->rbio);
		BIO_free(t->wbio);
		SSL_free(t->ssl);
		free(t);
		ERR_clear_error();
		return -ENOMEM;
	}
	SSL_set_bio(t->ssl, t->rbio, t->wbio);
	SSL_set_accept_state(t->ssl);
	t->failed = false;
	t->plain_len = 0;
	st->tls = t;
	return 0;
}

void lfe_stream_fini(struct lfe_stream *st)
{
	if (st->tls == NULL)
		return;
	SSL_free(st->tls->ssl);
	OPENSSL_cleanse(st->tls->plain, st->tls->plain_len);
	free(st->tls);
	st->tls = NULL;
}

bool lfe_stream_tls_failed(const struct lfe_stream *st)
{
	return st->tls && st->tls->failed;
}

bool lfe_stream_holding(const struct lfe_stream *st)
{
	return st->tls && (st->tls->plain_len || BIO_ctrl_pending(st->tls->rbio));
}

/* Move what OpenSSL wrote to TCP, as far as the send ring has room. */
static void tls_flush(struct lfe_stream *st)
{
	struct lfe_stream_tls *t = st->tls;
	uint8_t tmp[4096];

	for (;;) {
		size_t pend = BIO_ctrl_pending(t->wbio);
		size_t room = lfe_tcp_send_free(st->c);
		size_t n = pend < room ? pend : room;
		if (n > sizeof tmp)
			n = sizeof tmp;
		if (n == 0)
			return;
		int r = BIO_read(t->wbio, tmp, (int)n);
		if (r <= 0)
			return;
		lfe_tcp_send(st->c, tmp, (size_t)r);
	}
}

size_t lfe_stream_room(const struct lfe_stream *st)
{
	size_t free_bytes = lfe_tcp_send_free(st->c);
	if (st->tls == NULL)
		return free_bytes;
	if (st->tls->failed || BIO_ctrl_pending(st->tls->wbio) || free_bytes <= TLS_OVERHEAD)
		return 0;
	free_bytes -= TLS_OVERHEAD;
	return free_bytes < TLS_RECORD_MAX ? free_bytes : TLS_RECORD_MAX;
}

int lfe_stream_write(struct lfe_stream *st, const void *p, size_t n)
{
	if (n > lfe_stream_room(st))
		return -ENOBUFS;
	if (st->tls == NULL)
		return lfe_tcp_send(st->c, p, n) == n ? 0 : -ENOBUFS;
	size_t w = 0;
	if (n && SSL_write_ex(st->tls->ssl, p, n, &w) != 1) {
		ERR_clear_error();
		return -EIO;
	}
	tls_flush(st);
	return 0;
}

static size_t out_cap(const struct lfe_stream *st, size_t cap)
{
	size_t room = lfe_stream_room(st);
	return room < cap ? room : cap;
}

/* The session asked to close (unbind, protocol error): close_notify first
 * under TLS, then FIN after the queued bytes. */
static void stream_close(struct lfe_stream *st)
{
	if (st->tls && !st->tls->failed && SSL_is_init_finished(st->tls->ssl)) {
		SSL_shutdown(st->tls->ssl);
		ERR_clear_error();
		tls_flush(st);
	}
	lfe_tcp_close(st->c);
}

static size_t run_session(struct lfe_stream *st, struct lfe_session *s, const uint8_t *data,
			  size_t len, uint8_t *scratch, size_t cap, unsigned *flags)
{
	size_t used = 0;

	for (;;) {
		struct lfe_session_io io = { .in = data + used, .in_len = len - used,
					     .out = scratch, .out_cap = out_cap(st, cap) };
		int rc = lfe_session_process(s, &io);
		used += io.in_used;
		if (rc == 0 && io.out_len > 0 && lfe_stream_write(st, scratch, io.out_len) < 0)
			rc = -ENOBUFS;   /* cannot happen: out_cap was the room */
		if (rc < 0 || (io.flags & LFE_SESS_ABORT)) {
			*flags |= LFE_SESS_ABORT;
			lfe_tcp_abort(st->c);
			return len;
		}
		if (io.flags & LFE_SESS_CLOSE) {
			*flags |= LFE_SESS_CLOSE;
			stream_close(st);
			return len;   /* nothing after an unbind or a protocol error counts */
		}
		if (io.flags & LFE_SESS_STARTTLS) {
			*flags |= LFE_SESS_STARTTLS;
			return used;   /* the rest is the caller's: handshake bytes */
		}
		if (io.flags & LFE_SESS_PENDING) {
			*flags |= LFE_SESS_PENDING;
			return used;
		}
		/* A call that took all input has answered every complete request
		 * (a gathered one is answered in the call that completes it). */
		if (io.out_len == 0 || used == len)
			return used;   /* all taken, or the rest waits for room */
	}
}

/* A TLS failure: OpenSSL's alert (if any) goes out, then FIN. */
static void tls_fail(struct lfe_stream *st)
{
	ERR_clear_error();
	tls_flush(st);
	st->tls->failed = true;
	lfe_tcp_close(st->c);
}

/* Offer held plaintext; false when the session did not take all of it (or
 * the connection ends): stop decrypting. */
static bool tls_offer(struct lfe_stream *st, struct lfe_session *s, uint8_t *scratch, size_t cap,
		      unsigned *flags)
{
	struct lfe_stream_tls *t = st->tls;
	size_t u = run_session(st, s, t->plain, t->plain_len, scratch, cap, flags);
	if (*flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE)) {
		t->plain_len = 0;
		return false;
	}
	memmove(t->plain, t->plain + u, t->plain_len - u);
	t->plain_len -= (uint32_t)u;
	return t->plain_len == 0 && !(*flags & LFE_SESS_PENDING);
}

static void tls_deliver(struct lfe_stream *st, struct lfe_session *s, const uint8_t *data,
			size_t len, uint8_t *scratch, size_t cap, unsigned *flags)
{
	struct lfe_stream_tls *t = st->tls;

	if (t->failed)
		return;
	if (len && BIO_write(t->rbio, data, (int)len) != (int)len) {
		tls_fail(st);
		return;
	}
	if (t->plain_len && !tls_offer(st, s, scratch, cap, flags))
		return;
	for (;;) {
		if (!SSL_is_init_finished(t->ssl)) {
			int r = SSL_do_handshake(t->ssl);
			tls_flush(st);
			if (r != 1) {
				if (SSL_get_error(t->ssl, r) != SSL_ERROR_WANT_READ)
					tls_fail(st);
				ERR_clear_error();
				return;
			}
		}
		size_t n = 0;
		int r = SSL_read_ex(t->ssl, t->plain, sizeof t->plain, &n);
		tls_flush(st);   /* TLS 1.3 tickets, alerts */
		if (r != 1) {
			int e = SSL_get_error(t->ssl, 0);
			if (e == SSL_ERROR_ZERO_RETURN) {   /* close_notify */
				*flags |= LFE_SESS_CLOSE;
				stream_close(st);
			} else if (e != SSL_ERROR_WANT_READ) {
				tls_fail(st);
			}
			ERR_clear_error();
			return;
		}
		t->plain_len = (uint32_t)n;
		if (!tls_offer(st, s, scratch, cap, flags))
			return;
	}
}

size_t lfe_stream_deliver(struct lfe_stream *st, struct lfe_session *s, const uint8_t *data,
			  size_t len, uint8_t *scratch, size_t cap, unsigned *flags)
{
	*flags = 0;
	if (st->tls == NULL)
		return run_session(st, s, data, len, scratch, cap, flags);
	/* Ciphertext is taken only while no plaintext waits: TCP's window then
	 * closes on a client that sends without reading. */
	if (st->tls->plain_len && !tls_offer(st, s, scratch, cap, flags))
		return 0;
	tls_deliver(st, s, data, len, scratch, cap, flags);
	return len;
}

void lfe_stream_resume(struct lfe_stream *st, struct lfe_session *s, uint8_t *scratch,
		       size_t cap, unsigned *flags)
{
	*flags = 0;
	if (st->tls)
		tls_deliver(st, s, NULL, 0, scratch, cap, flags);
}

int lfe_stream_bind_done(struct lfe_stream *st, struct lfe_session *s, uint64_t token,
			 enum lfe_be_verdict v, uint8_t *scratch, size_t cap)
{
	struct lfe_session_io io = { .out = scratch, .out_cap = out_cap(st, cap) };
	int rc = lfe_session_bind_done(s, token, v, &io);

	if (rc == -ESTALE)
		return rc;
	if (rc == 0 && st->tls == NULL) {
		if (lfe_stream_write(st, scratch, io.out_len) < 0)
			rc = -ENOBUFS;   /* cannot happen: the session reserved the room */
	} else if (rc == 0) {
		/* Each record costs overhead beyond the room the session counted:
		 * the small record may wait in the write BIO for on_writable. */
		size_t w = 0;
		if (st->tls->failed || SSL_write_ex(st->tls->ssl, scratch, io.out_len, &w) != 1)
			rc = -EIO;
		ERR_clear_error();
		tls_flush(st);
	}
	if (rc < 0)
		lfe_tcp_abort(st->c);
	return rc;
}

void lfe_stream_on_writable(struct lfe_stream *st, struct lfe_session *s, struct lfe_tcp *t,
			    uint64_t now_us, uint8_t *scratch, size_t cap, unsigned *flags)
{
	*flags = 0;
	if (st->tls) {
		tls_flush(st);
		if (lfe_stream_holding(st))
			lfe_stream_resume(st, s, scratch, cap, flags);
		if (*flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE))
			return;
	}
	lfe_tcp_conn_kick(t, st->c, now_us);
}
