/* tls/stream.c — the byte stream between a session and TCP (stream.h).
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
 *
 * Input: SSL_peek decrypts one record into the core's buffer, the session
 * runs over it, and SSL_read then consumes just the bytes the session took
 * (copying them again over themselves: cheaper than holding 16 KiB per
 * connection). SSL_pending() > 0 is "plaintext waits for the session".
 *
 * Handshake steps (tlsoff.h): while t->out, the SSL object is a crypto
 * thread's; every entry point checks t->out before touching it.
 */
#include "tls/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tls/tlsoff.h"
#include "tls/tlsrec.h"

#define TLS_RECORD_MAX  LFE_STREAM_TLS_RECORD
#define TLS_OVERHEAD    256u     /* header, IV, MAC or tag, padding of one record */

_Static_assert(TLS_OVERHEAD >= LFE_TLSREC_WRITE_OVERHEAD, "room for tlsrec's records");
_Static_assert(sizeof(((struct lfe_stream_core *)0)->sealed) >=
	       TLS_RECORD_MAX + LFE_TLSREC_WRITE_OVERHEAD, "a sealed record fits");
_Static_assert(sizeof(((struct lfe_stream_core *)0)->plain) > LFE_TLSREC_PLAIN_MAX + 1,
	       "an opened record fits");
_Static_assert(LFE_STREAM_REC_BUF == LFE_TLSREC_MAX, "a pool buffer holds one record");

struct lfe_stream_tls {
	struct lfe_tlsoff_job job;   /* job.ssl: the connection's SSL object */
	BIO *rbio, *wbio;            /* owned by the SSL object */
	struct lfe_stream *st;       /* owner (NULL once cancelled) */
	struct lfe_stream_core *core;
	bool failed;                 /* alert sent, connection closing */
	bool out;                    /* a handshake step is at a crypto thread */
	bool closed;                 /* close_notify read and answered: input ignored */
	uint64_t hs_since;           /* lfe_stream_init_tls's time: the handshake deadline */
	uint64_t gath_since;         /* the first byte of the record in gath */
	bool admitted;               /* counted by adm until it leaves (tlsoff.h) */
	struct lfe_tlsoff *adm;
	size_t wmark;                /* write BIO bytes before the current step */
	/* The keylog's copies, until the handover: in key memory (tlsrec.h,
	 * never in a core dump); NULL once wiped and detached. */
	struct lfe_tlsrec_secrets *sec;
	/* After the handover (job.ssl, rbio and wbio NULL): */
	struct lfe_tlsrec *rec;
	uint8_t *gath;               /* ciphertext taken but not opened: a pool buffer */
	uint32_t gath_len;
	uint8_t *hold;               /* plaintext the session left of a record (heap) */
	uint32_t hold_off, hold_len, hold_size;
};

/* Empty this thread's OpenSSL error queue. ERR_clear_error() wipes all
 * sixteen slots whether or not any is used (about 800 instructions, 5% of
 * a bind's record exchange), and the common case here, a WANT_READ, queues
 * nothing: so look first. */
static void clear_errors(void)
{
	if (ERR_peek_error() != 0)
		ERR_clear_error();
}

void lfe_stream_init(struct lfe_stream *st, struct lfe_tcp_conn *c)
{
	st->c = c;
	st->tls = NULL;
	st->be_ctx = NULL;
}

/* ---- the core's pool of record buffers ---- */

int lfe_stream_core_pool(struct lfe_stream_core *core, uint32_t n)
{
	core->pool = n ? calloc(n, LFE_STREAM_REC_BUF) : NULL;   /* backed as first used */
	core->pool_free = n ? calloc(n, sizeof *core->pool_free) : NULL;
	if (n && (core->pool == NULL || core->pool_free == NULL)) {
		lfe_stream_core_pool_free(core);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		core->pool_free[i] = core->pool + (size_t)i * LFE_STREAM_REC_BUF;
	core->pool_n = core->pool_top = n;
	return 0;
}

void lfe_stream_core_pool_free(struct lfe_stream_core *core)
{
	free(core->pool);
	free(core->pool_free);
	core->pool = NULL;
	core->pool_free = NULL;
	core->pool_n = core->pool_top = 0;
}

static uint8_t *rec_buf_get(struct lfe_stream_core *core)
{
	if (core->pool == NULL)
		return malloc(LFE_STREAM_REC_BUF);
	if (core->pool_top == 0) {
		core->st.record_pool_empty++;
		return NULL;
	}
	return core->pool_free[--core->pool_top];
}

/* Ciphertext only: nothing to wipe. */
static void rec_buf_put(struct lfe_stream_core *core, uint8_t *b)
{
	if (core->pool == NULL)
		free(b);
	else
		core->pool_free[core->pool_top++] = b;
}

static void tls_free(struct lfe_stream_tls *t)
{
	SSL_free(t->job.ssl);
	lfe_tlsrec_free(t->rec);
	if (t->gath)
		rec_buf_put(t->core, t->gath);
	if (t->hold)
		OPENSSL_clear_free(t->hold, t->hold_size);
	lfe_tlsrec_key_free(t->sec, sizeof *t->sec);   /* after SSL_free: no keylog call left */
	free(t);
}

/* tlsoff's release hook: a cancelled step came back. */
static void tls_release(struct lfe_tlsoff_job *job)
{
	tls_free((struct lfe_stream_tls *)job);
}

int lfe_stream_init_tls(struct lfe_stream *st, struct lfe_tcp_conn *c, SSL_CTX *ctx,
			struct lfe_stream_core *core)
{
	lfe_stream_init(st, c);
	struct lfe_stream_tls *t = calloc(1, sizeof *t);
	if (t == NULL)
		return -ENOMEM;
	SSL *ssl = SSL_new(ctx);
	t->rbio = BIO_new(BIO_s_mem());
	t->wbio = BIO_new(BIO_s_mem());
	if (ssl == NULL || t->rbio == NULL || t->wbio == NULL) {
		BIO_free(t->rbio);
		BIO_free(t->wbio);
		SSL_free(ssl);
		free(t);
		ERR_clear_error();
		return -ENOMEM;
	}
	SSL_set_bio(ssl, t->rbio, t->wbio);
	SSL_set_accept_state(ssl);
	if (SSL_CTX_get_keylog_callback(ctx) == lfe_tlsrec_keylog &&
	    ((t->sec = lfe_tlsrec_key_alloc(sizeof *t->sec)) == NULL ||
	     lfe_tlsrec_watch(ssl, t->sec) < 0)) {
		SSL_free(ssl);
		lfe_tlsrec_key_free(t->sec, sizeof *t->sec);
		free(t);
		return -ENOMEM;
	}
	uint32_t la, ra;
	uint16_t lp, rp;
	lfe_tcp_conn_addrs(c, &la, &lp, &ra, &rp);
	t->job.ssl = ssl;
	t->job.src = ra;
	t->job.release = tls_release;
	t->st = st;
	t->core = core;
	t->hs_since = core->now_us ? core->now_us : 1;
	st->tls = t;
	return 0;
}

uint64_t lfe_stream_handshake_since(const struct lfe_stream *st)
{
	const struct lfe_stream_tls *t = st->tls;
	if (t == NULL || t->rec || t->failed)
		return 0;
	if (!t->out && SSL_is_init_finished(t->job.ssl))
		return 0;
	return t->hs_since;
}

uint64_t lfe_stream_record_since(const struct lfe_stream *st)
{
	const struct lfe_stream_tls *t = st->tls;
	if (t == NULL || t->rec == NULL || t->gath_len == 0 || t->hold_len || t->closed)
		return 0;
	if (t->gath_len >= LFE_TLSREC_HDR &&
	    t->gath_len >= LFE_TLSREC_HDR + ((size_t)t->gath[3] << 8 | t->gath[4]))
		return 0;   /* a whole record waits (the session stopped): not unfinished */
	return t->gath_since;
}

/* The handshake's admission ends (finished, failed, or the connection
 * closed): its place in the bounds is free. */
static void hs_leave(struct lfe_stream_tls *t)
{
	if (!t->admitted)
		return;
	t->admitted = false;
	lfe_tlsoff_leave(t->adm, t->core->worker, t->job.src);
}

void lfe_stream_fini(struct lfe_stream *st)
{
	struct lfe_stream_tls *t = st->tls;
	if (t == NULL)
		return;
	hs_leave(t);
	st->tls = NULL;
	if (t->out) {   /* the crypto thread's now: freed when it comes back */
		t->st = NULL;
		lfe_tlsoff_cancel(&t->job);
		return;
	}
	tls_free(t);
}

struct lfe_stream *lfe_stream_of_job(struct lfe_tlsoff_job *job)
{
	return ((struct lfe_stream_tls *)job)->st;
}

bool lfe_stream_tls_failed(const struct lfe_stream *st)
{
	return st->tls && st->tls->failed;
}

bool lfe_stream_holding(const struct lfe_stream *st)
{
	const struct lfe_stream_tls *t = st->tls;
	if (t && t->rec)
		return t->gath_len > 0 || t->hold_len > 0;
	return t && (t->out || SSL_pending(t->job.ssl) > 0 || BIO_ctrl_pending(t->rbio));
}

/* Move what OpenSSL wrote to TCP, as far as the send ring has room. */
static void tls_flush(struct lfe_stream *st)
{
	struct lfe_stream_tls *t = st->tls;
	uint8_t tmp[4096];

	if (t->rec)
		return;   /* records go to TCP as they are sealed */
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
		if ((size_t)r == pend)
			return;   /* all out: no second look at an empty BIO */
	}
}

/* ---- ldapfe's record layer (after the handover) ---- */

/* Seal n bytes as one record (after an owed KeyUpdate) and queue it:
 * 0, or -ENOBUFS (no room: nothing queued), -ERANGE, -EIO. */
static int rec_send(struct lfe_stream *st, const void *p, size_t n)
{
	uint8_t *out = st->tls->core->sealed;
	size_t cap = sizeof st->tls->core->sealed, room = lfe_tcp_send_free(st->c);
	if (room < n + LFE_TLSREC_WRITE_OVERHEAD)
		return -ENOBUFS;
	int k = lfe_tlsrec_write(st->tls->rec, p, n, out, cap);
	if (k < 0)
		return k;
	return lfe_tcp_send(st->c, out, (size_t)k) == (size_t)k ? 0 : -ENOBUFS;
}

/* Send an alert record if the ring has room for it (closing anyway). */
static void rec_alert(struct lfe_stream *st, uint8_t desc)
{
	uint8_t a[LFE_TLSREC_HDR + 3 + LFE_TLSREC_TAG];
	int k = lfe_tlsrec_alert(st->tls->rec, desc, a, sizeof a);
	if (k > 0 && lfe_tcp_send_free(st->c) >= (size_t)k)
		lfe_tcp_send(st->c, a, (size_t)k);
}

size_t lfe_stream_room(const struct lfe_stream *st)
{
	size_t free_bytes = lfe_tcp_send_free(st->c);
	if (st->tls == NULL)
		return free_bytes;
	if (st->tls->out || st->tls->failed || (st->tls->wbio && BIO_ctrl_pending(st->tls->wbio)) ||
	    free_bytes <= TLS_OVERHEAD)
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
	if (st->tls->out)
		return 0;   /* n == 0 (the room is 0): nothing to do, nothing to touch */
	if (st->tls->rec)
		return rec_send(st, p, n);
	size_t w = 0;
	if (n && SSL_write_ex(st->tls->job.ssl, p, n, &w) != 1) {
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

/* The most room ever offered (send ring empty): the scratch, less a
 * record's overhead under TLS (stream.h: the ring is no smaller). */
static size_t out_max(const struct lfe_stream *st, size_t cap)
{
	if (st->tls == NULL)
		return cap;
	size_t m = cap > TLS_OVERHEAD ? cap - TLS_OVERHEAD : 1;
	return m < TLS_RECORD_MAX ? m : TLS_RECORD_MAX;
}

/* The session asked to close (unbind, protocol error): close_notify first
 * under TLS, then FIN after the queued bytes. */
static void stream_close(struct lfe_stream *st)
{
	struct lfe_stream_tls *t = st->tls;
	if (t && t->rec && !t->failed)
		rec_alert(st, LFE_TLS_ALERT_CLOSE_NOTIFY);
	else if (t && !t->out && !t->failed && SSL_is_init_finished(t->job.ssl)) {
		SSL_shutdown(t->job.ssl);
		ERR_clear_error();
		tls_flush(st);
	}
	lfe_tcp_close(st->c);
}

static size_t run_session(struct lfe_stream *st, struct lfe_session *s, const uint8_t *data,
			  size_t len, uint8_t *scratch, size_t cap, unsigned *flags)
{
	size_t used = 0, max = out_max(st, cap);

	for (;;) {
		struct lfe_session_io io = { .in = data + used, .in_len = len - used,
					     .out = scratch, .out_cap = out_cap(st, cap),
					     .out_max = max, .be_ctx = st->be_ctx };
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
		if (io.flags & (LFE_SESS_PENDING | LFE_SESS_MORE)) {
			/* A bind verdict awaited, or a search's slice spent
			 * (it goes on at a later turn). */
			*flags |= io.flags & (LFE_SESS_PENDING | LFE_SESS_MORE);
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

/* A record-layer failure: its alert if there is room, then FIN. */
static void rec_fail(struct lfe_stream *st, int rc)
{
	if (rc != -ECONNRESET)   /* their alert: nothing to send back */
		rec_alert(st, lfe_tlsrec_alert_due(st->tls->rec));
	st->tls->failed = true;
	lfe_tcp_close(st->c);
}

/* The handshake just finished: hand the connection over to tlsrec when
 * the keylog gave us its secrets, the suite is one tlsrec does, OpenSSL
 * read no application record, and every record it wrote is out. Else
 * (TLS 1.2, record_layer = openssl, a CCM suite, no memory) it stays on
 * OpenSSL. The secrets are wiped either way. */
static void handover(struct lfe_stream *st)
{
	struct lfe_stream_tls *t = st->tls;
	SSL *ssl = t->job.ssl;
	char *w = NULL, *r = NULL;
	long wn = BIO_get_mem_data(t->wbio, &w);
	int err, n;

	if (t->sec == NULL || t->sec->server_len == 0 || SSL_version(ssl) != TLS1_3_VERSION || wn < 0 ||
	    (size_t)wn < t->wmark || SSL_pending(ssl) > 0 || SSL_has_pending(ssl))
		goto stay;
	/* The records of the step that finished the handshake: its tickets,
	 * sealed under the server's application key. */
	n = lfe_tlsrec_count_records((const uint8_t *)w + t->wmark, (size_t)wn - t->wmark);
	tls_flush(st);
	if (n < 0 || BIO_ctrl_pending(t->wbio) > 0)
		goto stay;   /* no proof of the sequence number, or bytes still to send */
	long rn = BIO_get_mem_data(t->rbio, &r);
	uint8_t *g = NULL;
	/* The client's records after its Finished: into a pool buffer (more
	 * than one record's worth: stay on OpenSSL, which has them). */
	if (rn < 0 || rn > (long)LFE_STREAM_REC_BUF || (rn > 0 && (g = rec_buf_get(t->core)) == NULL))
		goto stay;
	struct lfe_tlsrec *rec = lfe_tlsrec_new(ssl, t->sec, (uint64_t)n, &err);
	if (rec == NULL) {
		if (g)
			rec_buf_put(t->core, g);
		goto stay;
	}
	if (rn > 0)
		memcpy(g, r, (size_t)rn);   /* the client's records after its Finished */
	SSL_free(ssl);
	lfe_tlsrec_key_free(t->sec, sizeof *t->sec);   /* wiped by lfe_tlsrec_new */
	t->sec = NULL;
	t->job.ssl = NULL;
	t->rbio = t->wbio = NULL;
	t->rec = rec;
	t->gath = g;
	t->gath_len = (uint32_t)rn;
	t->gath_since = t->core->now_us ? t->core->now_us : 1;
	t->core->st.handover++;
	return;
stay:
	ERR_clear_error();
	if (t->sec) {   /* detached first: the SSL lives on */
		(void)lfe_tlsrec_watch(ssl, NULL);
		lfe_tlsrec_key_free(t->sec, sizeof *t->sec);
		t->sec = NULL;
	}
}

/* What a handshake step returned (inline or on a crypto thread): its bytes
 * go out; true when the handshake is finished. */
static bool step_result(struct lfe_stream *st, int r, int err)
{
	struct lfe_stream_tls *t = st->tls;
	if (r == 1 || err != SSL_ERROR_WANT_READ)
		hs_leave(t);
	if (r == 1) {
		t->core->st.handshakes++;
		t->core->st.resumed += SSL_session_reused(t->job.ssl) != 0;
		handover(st);
		tls_flush(st);
		return true;
	}
	tls_flush(st);
	if (err != SSL_ERROR_WANT_READ) {
		t->core->st.handshake_failed++;
		tls_fail(st);
	}
	return false;
}

/* One handshake step, inline or handed to a crypto thread: true when the
 * handshake finished here (records may follow). */
static bool tls_handshake(struct lfe_stream *st, unsigned *flags)
{
	struct lfe_stream_tls *t = st->tls;
	struct lfe_stream_core *core = t->core;

	t->wmark = BIO_ctrl_pending(t->wbio);
	if (core->off == NULL) {
		int r = SSL_do_handshake(t->job.ssl);
		int e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(t->job.ssl, r);
		clear_errors();
		/* The step took tens of µs (a resumption) to ms (a full
		 * handshake): its flight leaves once this segment is done, not
		 * after the rest of the burst, whose handshakes would each add
		 * their time to this client's round trip (tcp.h). */
		lfe_tcp_conn_push(st->c);
		return step_result(st, r, e);
	}
	if (BIO_ctrl_pending(t->rbio) == 0)
		return false;   /* nothing new for the state machine */
	/* Admission counts handshakes: once, at the client's hello; the steps
	 * of an admitted one are never refused for a bound (tlsoff.h). */
	if (!t->admitted) {
		if (lfe_tlsoff_admit(core->off, core->worker, t->job.src) < 0) {
			core->st.busy++;
			*flags |= LFE_SESS_ABORT;
			lfe_tcp_abort(st->c);
			return false;
		}
		t->admitted = true;
		t->adm = core->off;
	}
	if (lfe_tlsoff_submit(core->off, core->worker, &t->job) < 0) {
		/* Busy: refused now rather than queued without bound. */
		core->st.busy++;
		*flags |= LFE_SESS_ABORT;
		lfe_tcp_abort(st->c);
		return false;
	}
	core->st.offloaded++;
	t->out = true;
	return false;
}

/* Offer plaintext to s; what it leaves is kept in t->hold (allocated
 * here, or the rest of t->hold itself). false once the connection is
 * closing; *stop: the session stopped (a bind pending, or plaintext
 * left): take no more input now. */
static bool rec_offer(struct lfe_stream *st, struct lfe_session *s, const uint8_t *p, size_t m,
		      bool *stop, uint8_t *scratch, size_t cap, unsigned *flags)
{
	struct lfe_stream_tls *t = st->tls;
	size_t u = run_session(st, s, p, m, scratch, cap, flags);
	if (*flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE))
		return false;
	*stop = (*flags & LFE_SESS_PENDING) != 0 || u < m;
	if (t->hold) {   /* p was the held plaintext */
		t->hold_off += (uint32_t)u;
		t->hold_len -= (uint32_t)u;
		if (t->hold_len == 0) {
			OPENSSL_clear_free(t->hold, t->hold_size);
			t->hold = NULL;
			t->hold_off = t->hold_size = 0;
		}
		return true;
	}
	if (u == m)
		return true;
	/* The rest waits for room or a verdict, decrypted once, as OpenSSL
	 * kept it in its record buffer: opening the record again at every
	 * offer would let a slow reader make us decrypt 16 KiB per ACK. */
	t->hold = malloc(m - u);
	if (t->hold == NULL) {
		*flags |= LFE_SESS_ABORT;
		lfe_tcp_abort(st->c);
		return false;
	}
	memcpy(t->hold, p + u, m - u);
	t->hold_size = t->hold_len = (uint32_t)(m - u);
	t->hold_off = 0;
	return true;
}

/* Open one record of p (n bytes) and offer its plaintext to s. Returns
 * the record's size (consumed; *stop: take nothing more now), 0 when p
 * holds less than a record (*need: its size), -1 once the connection is
 * closing. */
static int rec_one(struct lfe_stream *st, struct lfe_session *s, const uint8_t *p, size_t n,
		   size_t *need, bool *stop, uint8_t *scratch, size_t cap, unsigned *flags)
{
	struct lfe_stream_tls *t = st->tls;
	uint8_t *plain = t->core->plain;
	size_t m = 0;

	*stop = false;
	lfe_tlsrec_now(t->rec, t->core->now_us);
	int rc = lfe_tlsrec_read(t->rec, p, n, plain, sizeof t->core->plain, &m, need);
	if (rc == -EPIPE) {   /* close_notify: answered once, nothing after it read */
		*flags |= LFE_SESS_CLOSE;
		stream_close(st);
		t->closed = true;
		return -1;
	}
	if (rc < 0) {
		rec_fail(st, rc);
		return -1;
	}
	if (rc == 0 || m == 0)
		return rc;   /* incomplete, or a KeyUpdate / empty record */
	bool ok = rec_offer(st, s, plain, m, stop, scratch, cap, flags);
	OPENSSL_cleanse(plain, m);
	return ok ? rc : -1;
}

/* Records after the handover: what the stream holds first (plaintext,
 * then gathered ciphertext), then data. Returns the bytes of data
 * consumed: none while plaintext waits (TCP's window then closes on a
 * client that sends without reading); a record cut at the end of data is
 * gathered. */
static size_t rec_deliver(struct lfe_stream *st, struct lfe_session *s, const uint8_t *data,
			  size_t len, uint8_t *scratch, size_t cap, unsigned *flags)
{
	struct lfe_stream_tls *t = st->tls;
	size_t used = 0, need;
	bool stop;

	if (t->failed || t->closed)
		return len;
	if (t->hold_len) {
		if (!rec_offer(st, s, t->hold + t->hold_off, t->hold_len, &stop, scratch, cap, flags))
			return len;
		if (stop)
			return 0;
	}
	while (t->gath_len) {
		int rc = rec_one(st, s, t->gath, t->gath_len, &need, &stop, scratch, cap, flags);
		if (rc < 0)
			return len;
		if (rc == 0) {   /* complete the record from data */
			if (used == len)
				return used;
			size_t take = need - t->gath_len < len - used ? need - t->gath_len : len - used;
			memcpy(t->gath + t->gath_len, data + used, take);
			t->gath_len += (uint32_t)take;
			used += take;
			continue;
		}
		memmove(t->gath, t->gath + rc, t->gath_len - (size_t)rc);
		t->gath_len -= (uint32_t)rc;
		t->gath_since = t->core->now_us ? t->core->now_us : 1;   /* the next record's start */
		if (t->gath_len == 0) {
			rec_buf_put(t->core, t->gath);
			t->gath = NULL;
		}
		if (stop)
			return used;
	}
	while (used < len) {
		int rc = rec_one(st, s, data + used, len - used, &need, &stop, scratch, cap, flags);
		if (rc < 0)
			return len;
		if (rc == 0) {   /* cut: gather it (one record's buffer from the pool) */
			t->gath = rec_buf_get(t->core);
			if (t->gath == NULL) {
				*flags |= LFE_SESS_ABORT;
				lfe_tcp_abort(st->c);
				return len;
			}
			memcpy(t->gath, data + used, len - used);
			t->gath_len = (uint32_t)(len - used);
			t->gath_since = t->core->now_us ? t->core->now_us : 1;
			return len;
		}
		used += (size_t)rc;
		if (stop)
			return used;
	}
	return used;
}

/* Feed ciphertext, run the handshake, then decrypt records one at a time
 * and offer each to the session while it takes them whole. */
static void tls_deliver(struct lfe_stream *st, struct lfe_session *s, const uint8_t *data,
			size_t len, uint8_t *scratch, size_t cap, unsigned *flags)
{
	struct lfe_stream_tls *t = st->tls;
	uint8_t *plain = t->core->plain;

	if (t->failed)
		return;
	if (t->rec) {   /* handed over by the step that just came back */
		rec_deliver(st, s, data, len, scratch, cap, flags);
		return;
	}
	if (len && BIO_write(t->rbio, data, (int)len) != (int)len) {
		tls_fail(st);
		return;
	}
	if (!SSL_is_init_finished(t->job.ssl) && !tls_handshake(st, flags))
		return;
	if (t->rec) {
		rec_deliver(st, s, NULL, 0, scratch, cap, flags);
		return;
	}
	for (;;) {
		size_t n = 0, m = 0;
		int r = SSL_peek_ex(t->job.ssl, plain, TLS_RECORD_MAX, &n);
		tls_flush(st);   /* TLS 1.3 tickets, alerts */
		if (r != 1) {
			int e = SSL_get_error(t->job.ssl, 0);
			if (e == SSL_ERROR_ZERO_RETURN) {   /* close_notify */
				*flags |= LFE_SESS_CLOSE;
				stream_close(st);
			} else if (e != SSL_ERROR_WANT_READ) {
				tls_fail(st);
			}
			clear_errors();
			return;
		}
		size_t u = run_session(st, s, plain, n, scratch, cap, flags);
		if (*flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE)) {
			OPENSSL_cleanse(plain, n);
			return;
		}
		/* Consume what the session took; the rest stays in OpenSSL's
		 * record buffer for the next offer. */
		if (u && (SSL_read_ex(t->job.ssl, plain, u, &m) != 1 || m != u)) {
			OPENSSL_cleanse(plain, n);
			tls_fail(st);
			return;
		}
		OPENSSL_cleanse(plain, n);
		if (u < n || (*flags & LFE_SESS_PENDING))
			return;
	}
}

size_t lfe_stream_deliver(struct lfe_stream *st, struct lfe_session *s, const uint8_t *data,
			  size_t len, uint8_t *scratch, size_t cap, unsigned *flags)
{
	*flags = 0;
	struct lfe_stream_tls *t = st->tls;
	if (t == NULL)
		return run_session(st, s, data, len, scratch, cap, flags);
	if (t->out)
		return 0;   /* a handshake step is out: these bytes wait in TCP */
	if (t->rec)
		return rec_deliver(st, s, data, len, scratch, cap, flags);
	/* Ciphertext is taken only while no plaintext waits: TCP's window then
	 * closes on a client that sends without reading. */
	if (!t->failed && SSL_pending(t->job.ssl) > 0) {
		tls_deliver(st, s, NULL, 0, scratch, cap, flags);
		if (*flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE))
			return len;
		if (SSL_pending(t->job.ssl) > 0 || (*flags & LFE_SESS_PENDING))
			return 0;
	}
	tls_deliver(st, s, data, len, scratch, cap, flags);
	return len;
}

void lfe_stream_resume(struct lfe_stream *st, struct lfe_session *s, uint8_t *scratch,
		       size_t cap, unsigned *flags)
{
	*flags = 0;
	if (lfe_session_searching(s)) {
		struct lfe_stream_tls *t = st->tls;
		if (t && (t->out || t->failed))
			return;
		run_session(st, s, NULL, 0, scratch, cap, flags);
		if ((*flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE)) || lfe_session_searching(s))
			return;
	}
	if (st->tls && st->tls->rec)
		rec_deliver(st, s, NULL, 0, scratch, cap, flags);
	else if (st->tls && !st->tls->out)
		tls_deliver(st, s, NULL, 0, scratch, cap, flags);
}

void lfe_stream_handshake_done(struct lfe_stream *st, struct lfe_session *s, uint8_t *scratch,
			       size_t cap, unsigned *flags)
{
	struct lfe_stream_tls *t = st->tls;

	*flags = 0;
	t->out = false;
	if (step_result(st, t->job.rc, t->job.ssl_err))
		tls_deliver(st, s, NULL, 0, scratch, cap, flags);
}

int lfe_stream_bind_done(struct lfe_stream *st, struct lfe_session *s, uint64_t token,
			 enum lfe_be_verdict v, uint8_t *scratch, size_t cap)
{
	struct lfe_session_io io = { .out = scratch, .out_cap = out_cap(st, cap),
				     .be_ctx = st->be_ctx };
	int rc = lfe_session_bind_done(s, token, v, &io);

	if (rc == -ESTALE)
		return rc;
	if (rc == 0 && st->tls == NULL) {
		if (lfe_stream_write(st, scratch, io.out_len) < 0)
			rc = -ENOBUFS;   /* cannot happen: the session reserved the room */
	} else if (rc == 0 && st->tls->rec) {
		/* The room reserved was the TCP room less TLS_OVERHEAD. */
		if (st->tls->failed || rec_send(st, scratch, io.out_len) < 0)
			rc = -EIO;
	} else if (rc == 0) {
		/* Each record costs overhead beyond the room the session counted:
		 * the small record may wait in the write BIO for on_writable. */
		size_t w = 0;
		if (st->tls->failed || st->tls->out ||
		    SSL_write_ex(st->tls->job.ssl, scratch, io.out_len, &w) != 1)
			rc = -EIO;
		clear_errors();
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
	if (st->tls && st->tls->out)
		return;   /* the step's completion kicks TCP */
	if (st->tls) {
		tls_flush(st);
		if (lfe_stream_holding(st))
			lfe_stream_resume(st, s, scratch, cap, flags);
		if (*flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE))
			return;
	}
	lfe_tcp_conn_kick(t, st->c, now_us);
}

/* The exported counters (stream.h, common/ctr.h). */
#define C LFE_CTR_C
#define T struct lfe_stream_stats
static const struct lfe_ctr stream_rows[] = {
	LFE_CTR_ROW(T, handshakes, "tls_handshakes", C, "TLS handshakes completed, full or resumed."),
	LFE_CTR_ROW(T, resumed, "tls_resumed", C, "TLS handshakes resumed (ticket or PSK)."),
	LFE_CTR_ROW(T, handshake_failed, "tls_handshake_failed", C, "TLS handshakes failed (alert or garbage)."),
	LFE_CTR_ROW(T, offloaded, "tls_offloaded", C, "TLS handshake steps run on a crypto thread."),
	LFE_CTR_ROW(T, busy, "tls_busy", C, "TLS handshakes refused: the offload queue was full."),
	LFE_CTR_ROW(T, handover, "tls_handover", C, "TLS 1.3 connections handed to ldapfe's record layer."),
	LFE_CTR_ROW(T, handshake_expired, "tls_handshake_expired", C, "Connections closed: TLS handshake past its deadline."),
	LFE_CTR_ROW(T, record_expired, "tls_record_expired", C, "Connections closed: a TLS record past its deadline."),
	LFE_CTR_ROW(T, record_pool_empty, "tls_record_pool_empty", C, "Connections reset: a TLS record found no pool buffer."),
};
#undef T
#undef C
const struct lfe_ctr_table lfe_stream_ctrs = LFE_CTR_TABLE("tls", struct lfe_stream_stats, stream_rows);
