/* dataplane/stream.h — the byte stream between one LDAP session and its TCP
 * connection.
 *
 * The session produces whole responses; the stream queues each one whole on
 * the connection (today as cleartext; TLS records will be made here), and
 * TCP carries bytes. No layer ever holds half a response: the stream offers
 * the session only as much output room as it can queue whole, and the
 * session starts a request only when the room can take its answer
 * (LFE_SESSION_ROOM_MIN, session.h). When room is short, the request's
 * bytes stay unconsumed in TCP's receive buffer (they are acknowledged and
 * shrink the window) and are offered again when an ACK frees send space:
 * lfe_stream_on_writable(). There is no owed-answer state anywhere.
 *
 * Output is encoded into a caller-provided scratch buffer (one per core:
 * responses of one call never outlive the call) and copied into the send
 * ring, which wraps; so a connection with a wrapped ring is served like any
 * other (Knot's XDP-TCP "queue n bytes" contract).
 *
 * TLS (LDAPS): lfe_stream_init_tls() puts an OpenSSL object with memory
 * BIOs on the connection. Ciphertext from TCP goes into its read BIO;
 * decrypted bytes the session has not taken are held here (at most one
 * record, 16 KiB, allocated with the TLS state) and offered again by
 * lfe_stream_resume(); responses become one record each; handshake and
 * alert bytes flow without the session. A TLS failure (garbage, a bad
 * record, a refused renegotiation) sends OpenSSL's alert and closes with
 * FIN; the session never sees those bytes.
 *
 * DPDK-free (part of lfe_dpcore): unit-tested over the TCP test harness.
 * Thread rules: a stream belongs to its connection's lcore.
 */
#ifndef LFE_DATAPLANE_STREAM_H
#define LFE_DATAPLANE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldap/session.h"
#include "tcp.h"

/* One per connection, embedded in the connection's app state. Fields are
 * the module's. */
struct lfe_stream_tls;
typedef struct ssl_ctx_st SSL_CTX;

struct lfe_stream {
	struct lfe_tcp_conn *c;
	struct lfe_stream_tls *tls;   /* NULL: cleartext */
};

/* Attach st to connection c (from on_open). Allocates nothing. */
void lfe_stream_init(struct lfe_stream *st, struct lfe_tcp_conn *c);

/* Attach st to c with TLS from ctx (server side): 0, or -ENOMEM. The
 * state is freed by lfe_stream_fini. Also StartTLS: on a cleartext stream
 * whose deliver returned LFE_SESS_STARTTLS (the success response is queued
 * in clear), call it, then deliver the bytes past the consumed ones: they
 * are the client's handshake. */
int lfe_stream_init_tls(struct lfe_stream *st, struct lfe_tcp_conn *c, SSL_CTX *ctx);

/* Release what the stream holds (TLS state). Safe on a cleartext stream and
 * twice. Call from on_close. */
void lfe_stream_fini(struct lfe_stream *st);

/* True once a TLS failure closed the stream (garbage, a bad or oversized
 * record, a fatal alert, a failed handshake): the caller counts it. */
bool lfe_stream_tls_failed(const struct lfe_stream *st);

/* True while the stream holds input the session has not taken (TLS:
 * decrypted or undecrypted bytes); lfe_stream_resume() offers it. */
bool lfe_stream_holding(const struct lfe_stream *st);

/* Bytes lfe_stream_write() accepts whole now (0 once the connection is
 * closing). */
size_t lfe_stream_room(const struct lfe_stream *st);

/* Queue n bytes whole: 0, or -ENOBUFS when n > lfe_stream_room() (nothing
 * is queued then). */
int lfe_stream_write(struct lfe_stream *st, const void *p, size_t n);

/* Run session s over in-order bytes received (TCP's on_data), answering
 * every complete request whose answer can be queued now, into scratch
 * (cap bytes, at least LFE_SESSION_ROOM_MIN) then the connection.
 * Returns the bytes consumed; the rest wait for room (offer them again
 * after lfe_stream_on_writable) or for a pending bind verdict.
 * *flags gets the session's LFE_SESS_CLOSE (FIN queued after the
 * responses), LFE_SESS_ABORT (the connection was reset: on_close may
 * already have run), LFE_SESS_PENDING (a bind verdict is awaited) and
 * LFE_SESS_STARTTLS (StartTLS answered: the bytes past the returned count
 * were not read; start TLS, lfe_stream_init_tls, and deliver them again). */
size_t lfe_stream_deliver(struct lfe_stream *st, struct lfe_session *s, const uint8_t *data,
			  size_t len, uint8_t *scratch, size_t cap, unsigned *flags);

/* Deliver a bind verdict (lfe_session_bind_done) and queue its response.
 * 0; -ESTALE for a token the session no longer expects (nothing written);
 * another negative errno after which the connection was reset. The room
 * for the response was reserved when the bind was dispatched. */
int lfe_stream_bind_done(struct lfe_stream *st, struct lfe_session *s, uint64_t token,
			 enum lfe_be_verdict v, uint8_t *scratch, size_t cap);

/* Offer input the stream holds (TLS) to the session again, as
 * lfe_stream_deliver with no new bytes: after send room was freed, or a
 * bind verdict arrived. No-op on a cleartext stream. */
void lfe_stream_resume(struct lfe_stream *st, struct lfe_session *s, uint8_t *scratch,
		       size_t cap, unsigned *flags);

/* Send space was freed (TCP's on_writable): move TLS bytes waiting for room
 * to TCP, then offer held input again (lfe_stream_resume for TLS; TCP's
 * unconsumed bytes through lfe_tcp_conn_kick). */
void lfe_stream_on_writable(struct lfe_stream *st, struct lfe_session *s, struct lfe_tcp *t,
			    uint64_t now_us, uint8_t *scratch, size_t cap, unsigned *flags);

#endif
