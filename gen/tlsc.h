/* gen/tlsc.h — the load generator's TLS client: OpenSSL over memory BIOs,
 * so the handshake and the records ride on the generator's own user-space
 * TCP (or on anything else that carries bytes: the unit test joins it to an
 * in-memory OpenSSL server).
 *
 * One struct lfe_tlsc per generator: the client SSL_CTX (TLS 1.2 and/or
 * 1.3, certificate verification against a CA file or none at all, as a
 * benchmark usually wants), the saved sessions for resumption and the
 * counters. One struct lfe_tlsc_conn per TCP connection: its SSL object,
 * its two memory BIOs and, only while a PDU is split across records, a
 * carry buffer.
 *
 * Bytes in: lfe_tlsc_input() takes the ciphertext TCP delivered, drives the
 * handshake, decrypts, and hands the plaintext to the caller's function,
 * which says how much it consumed (whole PDUs); the rest is kept and
 * offered again, joined with what the next record brings.
 * Bytes out: lfe_tlsc_write() makes records of a PDU, the handshake makes
 * its own messages; both wait in the connection until the caller moves them
 * to TCP with lfe_tlsc_out() (lfe_tlsc_out_pending() says how many).
 *
 * StartTLS (cfg.starttls): the connection first sends the StartTLS
 * extended request (RFC 4511 §4.14, message id 1) in clear and waits for
 * its response; success starts the handshake, anything else is a handshake
 * failure ("StartTLS refused: resultCode N").
 *
 * Resumption: with LFE_TLSC_RESUME_SLOT every connection slot (the caller's
 * index, stable across reconnects) keeps the last session the server gave
 * it (TLS 1.2 session or TLS 1.3 ticket) and offers it on its next
 * connection; LFE_TLSC_RESUME_SHARED keeps one for all slots. Handshakes
 * are counted full or resumed (SSL_session_reused), and a resumption
 * offered but refused by the server is counted apart.
 *
 * Records (cfg.records): with LFE_TLSC_RECORDS_LDAPFE (the default), a
 * TLS 1.3 connection leaves OpenSSL once its handshake completes: the
 * traffic secrets (caught by the keylog callback) key ldapfe's own record
 * layer (tls/tlsrec.h, in client mode: the server's
 * NewSessionTickets are skipped), the SSL object is freed, and each record
 * costs a nonce and one AEAD pass instead of OpenSSL's per-record work
 * (~7 µs a bind's two records on OpenSSL; the generator should not be
 * the limit of a TLS benchmark). Handed over only when OpenSSL holds no
 * application data (SSL_pending, SSL_has_pending) and the suite is one
 * tlsrec does (AES-GCM, ChaCha20-Poly1305), else the connection stays on
 * OpenSSL (counted: handover_declined); TLS 1.2 stays on OpenSSL. With
 * resumption OpenSSL keeps every connection: it must read the tickets.
 * LFE_TLSC_RECORDS_OPENSSL keeps OpenSSL throughout (the comparison).
 *
 * Thread rules: everything belongs to the one thread that drives the
 * generator's connections; nothing locks. Errors: 0 or a negative errno.
 */
#ifndef LFE_GEN_TLSC_H
#define LFE_GEN_TLSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum lfe_tlsc_resume {
	LFE_TLSC_RESUME_OFF = 0,
	LFE_TLSC_RESUME_SLOT = 1,     /* one saved session per connection slot */
	LFE_TLSC_RESUME_SHARED = 2,   /* one saved session for every slot */
};

enum lfe_tlsc_records {
	LFE_TLSC_RECORDS_LDAPFE = 0,  /* TLS 1.3 records by tls/tlsrec.c */
	LFE_TLSC_RECORDS_OPENSSL = 1, /* OpenSSL's throughout */
};

struct lfe_tlsc_cfg {
	int version;                  /* 0: 1.2 or 1.3; 12: 1.2 only; 13: 1.3 only */
	const char *ca_file;          /* PEM; NULL or "": the server is not verified */
	const char *verify_ip;        /* with ca_file: the address the certificate
				       * must name (subjectAltName IP); NULL: any */
	enum lfe_tlsc_resume resume;
	uint32_t slots;               /* slot numbers 0..slots-1 (RESUME_SLOT) */
	bool starttls;                /* StartTLS in clear first (see above) */
	enum lfe_tlsc_records records; /* ignored with resume: OpenSSL's */
};

struct lfe_tlsc_stats {
	uint64_t handshakes_full;     /* completed without resumption */
	uint64_t handshakes_resumed;  /* completed resuming a saved session */
	uint64_t resume_refused;      /* a session offered, a full handshake done */
	uint64_t handshake_failures;  /* alert, verification failure, garbage */
	uint64_t record_errors;       /* failures after the handshake */
	uint64_t sessions_saved;      /* sessions/tickets received and kept */
	uint64_t handovers;           /* connections moved to ldapfe's records */
	uint64_t handover_declined;   /* TLS 1.3 ones that stayed on OpenSSL */
	uint64_t tickets_skipped;     /* NewSessionTickets read after a handover */
};

struct lfe_tlsc;
struct lfe_tlsc_conn;

/* A client context, or NULL with a reason in err ("--tls-ca FILE: ..."). */
struct lfe_tlsc *lfe_tlsc_new(const struct lfe_tlsc_cfg *cfg, char *err, size_t errlen);
/* Free the context and its saved sessions; every connection must be freed
 * first. NULL is a no-op. */
void lfe_tlsc_free(struct lfe_tlsc *t);

const struct lfe_tlsc_stats *lfe_tlsc_stats(const struct lfe_tlsc *t);
/* The reason of the first handshake failure ("" if none): OpenSSL's reason,
 * or the certificate verification result. Valid until lfe_tlsc_free. */
const char *lfe_tlsc_first_error(const struct lfe_tlsc *t);
/* "TLSv1.3" etc. of the last completed handshake ("" before any). */
const char *lfe_tlsc_last_protocol(const struct lfe_tlsc *t);
/* "ldapfe" when TLS 1.3 connections are handed over, else "openssl". */
const char *lfe_tlsc_records(const struct lfe_tlsc *t);

/* Print the counters (over the whole run, warm-up included): one line
 * "ldapfe-gen: tls ..." or, with json, the member "  \"tls\": {...},\n" of
 * the generator's report ("  \"tls\": null,\n" when t is NULL). */
void lfe_tlsc_report(const struct lfe_tlsc *t, FILE *f, bool json);

/* A connection in slot `slot` (< cfg.slots; any value when resume is not
 * per slot), its ClientHello (or the StartTLS request) already waiting in
 * lfe_tlsc_out(), a saved session offered if there is one. NULL: out of
 * memory. */
struct lfe_tlsc_conn *lfe_tlsc_conn_new(struct lfe_tlsc *t, uint32_t slot);
/* Free a connection (from the TCP close callback). NULL is a no-op. */
void lfe_tlsc_conn_free(struct lfe_tlsc_conn *c);

/* Plaintext for the caller: consume whole PDUs from (p, n), return how many
 * bytes were consumed (0..n); the rest is offered again with more. */
typedef size_t (*lfe_tlsc_plain_fn)(void *arg, const uint8_t *p, size_t n);

enum { LFE_TLSC_UP = 1 };

/* Feed ciphertext (len may be 0 to retry what is held). Returns
 * LFE_TLSC_UP when the handshake completed in this call, 0 otherwise, or
 * -EPROTO when TLS failed (the handshake: counted in handshake_failures;
 * later: record_errors; OpenSSL's alert, if any, waits in lfe_tlsc_out:
 * send it, then close), or -EMSGSIZE when fn left more than 80 KiB
 * unconsumed. A close_notify from the server is not an error: the
 * connection reads nothing more (lfe_tlsc_peer_closed). fn may call
 * lfe_tlsc_write and lfe_tlsc_shutdown on c, never lfe_tlsc_conn_free. */
int lfe_tlsc_input(struct lfe_tlsc_conn *c, const uint8_t *ct, size_t len, lfe_tlsc_plain_fn fn,
		   void *arg);

/* The transport closed before the handshake completed: counted as a
 * handshake failure ("handshake: connection closed") and the connection
 * marked failed. No-op once up or failed. */
void lfe_tlsc_peer_gone(struct lfe_tlsc_conn *c);

bool lfe_tlsc_up(const struct lfe_tlsc_conn *c);          /* handshake done, not failed */
bool lfe_tlsc_failed(const struct lfe_tlsc_conn *c);
bool lfe_tlsc_peer_closed(const struct lfe_tlsc_conn *c);

/* One PDU (or any bytes) as TLS records: 0, -EAGAIN before the handshake
 * completed, -EIO after a failure. The records wait in lfe_tlsc_out(). */
int lfe_tlsc_write(struct lfe_tlsc_conn *c, const void *p, size_t n);
/* Queue a close_notify (when the handshake completed; else nothing). */
void lfe_tlsc_shutdown(struct lfe_tlsc_conn *c);

/* Ciphertext waiting to be sent, and taking up to cap bytes of it. */
size_t lfe_tlsc_out_pending(const struct lfe_tlsc_conn *c);
size_t lfe_tlsc_out(struct lfe_tlsc_conn *c, uint8_t *out, size_t cap);

#endif
