/* tls/stream.h — the byte stream between one LDAP session and its TCP
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
 * records are decrypted with SSL_peek into the core's plaintext buffer
 * (struct lfe_stream_core, one per worker) and only the bytes the session
 * took are then read: what it left stays in OpenSSL's record buffer and is
 * offered again by lfe_stream_resume(). So an idle TLS connection holds no
 * plaintext buffer (and, with SSL_MODE_RELEASE_BUFFERS, no record buffers).
 * Responses become one record each; handshake and alert bytes flow without
 * the session. A TLS failure (garbage, a bad record, a refused
 * renegotiation) sends OpenSSL's alert and closes with FIN; the session
 * never sees those bytes.
 *
 * ldapfe's record layer (tlsrec.h): when the SSL_CTX carries
 * lfe_tlsrec_keylog ([tls] record_layer = ldapfe) and a TLS 1.3 handshake
 * with a suite tlsrec does finishes with OpenSSL holding no application
 * record, the connection is handed over: the write sequence number is the
 * count of records OpenSSL wrote in the step that finished the handshake
 * (its NewSessionTickets, all under the application key), the read one 0;
 * the bytes left in the read BIO become the stream's own; the SSL object
 * is freed. From then on records are opened straight from TCP's bytes
 * into the core's buffer; the plaintext the session leaves of a record
 * (room short, a bind pending) is kept in a buffer of its size, and a
 * record split across input (or left over at the handover) is gathered
 * in one of a record's size: each allocated then and freed once taken
 * (as OpenSSL's record buffers were), so an idle connection holds
 * neither. No ciphertext is taken while plaintext waits. Any
 * record-layer failure sends its alert if there is room and closes
 * (counted as TLS failures, as OpenSSL's are); close_notify closes
 * cleanly.
 *
 * Handshakes off the core: with core->off set, every handshake step runs on
 * a crypto thread (tlsoff.h). While a step is out the stream takes no
 * input (TCP keeps it unconsumed), offers no room and touches neither the
 * SSL object nor its BIOs; the worker's tlsoff poll brings the step back
 * and the caller finishes it with lfe_stream_handshake_done(), then kicks
 * TCP for the bytes that waited. A step the offload refuses (the worker's
 * queue or the client's share is full) resets the connection: counted in
 * busy. lfe_stream_fini() on a connection whose step is out cancels it
 * and leaves the TLS state to the offload, which frees it when it comes
 * back (lfe_tlsoff_cancelled counts them). Without core->off the steps
 * run inline (the comparison mode), and each pushes its connection
 * (lfe_tcp_conn_push): its flight leaves at the end of the segment that
 * caused it, not after the rest of the burst's handshakes.
 *
 * DPDK-free (part of lfe_dpcore): unit-tested over the TCP test harness.
 * Thread rules: a stream belongs to its connection's lcore.
 */
#ifndef LFE_TLS_STREAM_H
#define LFE_TLS_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ctr.h"
#include "ldap/session.h"
#include "net/tcp.h"

/* One per connection, embedded in the connection's app state. Fields are
 * the module's. */
struct lfe_stream_tls;
struct lfe_tlsoff;
struct lfe_tlsoff_job;
typedef struct ssl_ctx_st SSL_CTX;

#define LFE_STREAM_TLS_RECORD 16384u   /* plaintext of one TLS record */

/* TLS counters of one core (the caller publishes them). */
struct lfe_stream_stats {
	uint64_t handshakes;         /* completed, full or resumed */
	uint64_t resumed;            /* of those, resumed (ticket or PSK) */
	uint64_t handshake_failed;   /* alert sent or garbage: closed */
	uint64_t offloaded;          /* handshake steps run on a crypto thread */
	uint64_t busy;               /* handshakes refused: offload queue full */
	uint64_t handover;           /* moved to ldapfe's record layer (tlsrec.h) */
	uint64_t handshake_expired;  /* closed: handshake past [tls] handshake_timeout_ms (glue) */
	uint64_t record_expired;     /* closed: a started record past pdu_timeout_ms (glue) */
	uint64_t record_pool_empty;  /* reset: a started record found no buffer in the pool */
};
/* Their table (common/ctr.h): every field, in order. */
extern const struct lfe_ctr_table lfe_stream_ctrs;

/* One buffer of the per-core pool holds an unfinished record. */
#define LFE_STREAM_REC_BUF 16645u   /* LFE_TLSREC_MAX: header + 2^14 + 256 */

/* Per worker: shared by the TLS streams of one core, one call at a time. */
struct lfe_stream_core {
	struct lfe_tlsoff *off;      /* NULL: handshake steps run inline */
	unsigned worker;             /* this core's queues in off */
	struct lfe_stream_stats st;
	uint64_t now_us;             /* the caller's clock, set before each call (tlsrec's budget,
				      * deadlines' starts) */
	/* Unfinished records' bytes (after the handover): buffers of
	 * LFE_STREAM_REC_BUF from this pool (lfe_stream_core_pool), held by a
	 * connection from a record's first byte to its last; none left: that
	 * connection is reset (record_pool_empty). No pool (unit tests,
	 * benchmarks): malloc. */
	uint8_t *pool;
	uint8_t **pool_free;
	uint32_t pool_n, pool_top;   /* buffers; free ones on pool_free[0..top) */
	uint8_t plain[LFE_STREAM_TLS_RECORD + 256];   /* decrypted record, during a call */
	uint8_t sealed[LFE_STREAM_TLS_RECORD + 256];  /* records being sealed (tlsrec.h) */
};

struct lfe_stream {
	struct lfe_tcp_conn *c;
	struct lfe_stream_tls *tls;   /* NULL: cleartext */
	/* The session's backend context for this connection, handed to every
	 * session call (lfe_session_io.be_ctx); the owner sets it after
	 * lfe_stream_init/_init_tls (which clear it). NULL: the session
	 * config's. */
	void *be_ctx;
};

/* Give core a pool of n buffers for unfinished records (the worker, at
 * start): 0 or -ENOMEM. lfe_stream_core_pool_free releases it (after the
 * last stream of the core is gone). */
int lfe_stream_core_pool(struct lfe_stream_core *core, uint32_t n);
void lfe_stream_core_pool_free(struct lfe_stream_core *core);

/* Deadlines' starts (core->now_us when the state began), 0 when not in
 * it: a TLS handshake not finished (from lfe_stream_init_tls), and, after
 * the handover, a record started and not complete, the stream holding
 * nothing else (its pool buffer is all a reset would lose: the caller
 * may keep such a connection evictable). */
uint64_t lfe_stream_handshake_since(const struct lfe_stream *st);
uint64_t lfe_stream_record_since(const struct lfe_stream *st);

/* Attach st to connection c (from on_open). Allocates nothing. */
void lfe_stream_init(struct lfe_stream *st, struct lfe_tcp_conn *c);

/* Attach st to c with TLS from ctx (server side) on the core's context
 * (which must outlive the connection): 0, or -ENOMEM. The state is freed
 * by lfe_stream_fini. Also StartTLS: on a cleartext stream whose deliver
 * returned LFE_SESS_STARTTLS (the success response is queued in clear),
 * call it, then deliver the bytes past the consumed ones: they are the
 * client's handshake. */
int lfe_stream_init_tls(struct lfe_stream *st, struct lfe_tcp_conn *c, SSL_CTX *ctx,
			struct lfe_stream_core *core);

/* Release what the stream holds (TLS state; cancelled and left to the
 * offload while a handshake step is out). Safe on a cleartext stream and
 * twice. Call from on_close. */
void lfe_stream_fini(struct lfe_stream *st);

/* The stream whose handshake step job is (a job the tlsoff poll handed to
 * its done hook: never a cancelled one, so the stream is live). */
struct lfe_stream *lfe_stream_of_job(struct lfe_tlsoff_job *job);

/* A handshake step came back: send what it wrote, count the handshake,
 * and go on as lfe_stream_resume (records that came with the client's last
 * flight are decrypted and offered to s). Then kick TCP
 * (lfe_tcp_conn_kick) for the bytes that waited while the step was out,
 * unless *flags has LFE_SESS_ABORT or LFE_SESS_CLOSE. */
void lfe_stream_handshake_done(struct lfe_stream *st, struct lfe_session *s, uint8_t *scratch,
			       size_t cap, unsigned *flags);

/* True once a TLS failure closed the stream (garbage, a bad or oversized
 * record, a fatal alert, a failed handshake): the caller counts it. */
bool lfe_stream_tls_failed(const struct lfe_stream *st);

/* True while the stream holds input the session has not taken (TLS:
 * decrypted or undecrypted bytes, or a handshake step is out);
 * lfe_stream_resume() offers it. */
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

/* Go on with a search the session has under way (lfe_session_searching:
 * its next entries, as far as the room takes them), then offer input the
 * stream holds (TLS) to the session again, as lfe_stream_deliver with no
 * new bytes: after send room was freed, a search's slice came round again,
 * or a bind verdict arrived. *flags as lfe_stream_deliver's, and
 * LFE_SESS_MORE: the search spent its slice, resume on a later turn.
 * The scratch must be no larger than TCP's send ring (the search takes an
 * entry larger than the scratch, less a TLS record's overhead, for one that
 * never fits: adminLimitExceeded). */
void lfe_stream_resume(struct lfe_stream *st, struct lfe_session *s, uint8_t *scratch,
		       size_t cap, unsigned *flags);

/* Send space was freed (TCP's on_writable): move TLS bytes waiting for room
 * to TCP, then offer held input again (lfe_stream_resume for TLS; TCP's
 * unconsumed bytes through lfe_tcp_conn_kick). */
void lfe_stream_on_writable(struct lfe_stream *st, struct lfe_session *s, struct lfe_tcp *t,
			    uint64_t now_us, uint8_t *scratch, size_t cap, unsigned *flags);

#endif
