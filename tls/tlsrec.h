/* tls/tlsrec.h — ldapfe's own TLS 1.3 record layer (RFC 8446 §5),
 * used on a connection once OpenSSL has finished its handshake.
 *
 * Why: OpenSSL 3.0 spends ~17.5k instructions on one bind's two records
 * (per-record cipher re-init through the provider, parameter lookups,
 * buffer alloc/free, error-queue work); AES-GCM itself is ~1k. Like a kTLS
 * offload, OpenSSL keeps the handshake and hands the traffic keys over:
 * one EVP_CIPHER_CTX per direction keyed once, per record only the nonce
 * (IV xor the 64-bit sequence number) is set, AAD is the 5-byte header.
 * The cipher is always OpenSSL's EVP (never a primitive of ours): a
 * bind's record pair takes about a third of the time it takes through
 * OpenSSL's records (docs/BENCHMARKS.md). The HKDF is fetched once per
 * process.
 * Suites: TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384,
 * TLS_CHACHA20_POLY1305_SHA256 (CCM suites stay on OpenSSL).
 *
 * Secrets: lfe_tlsrec_keylog is the SSL_CTX's keylog callback
 * (tls/tls.c installs it when [tls] record_layer = ldapfe). It
 * copies CLIENT_TRAFFIC_SECRET_0 and SERVER_TRAFFIC_SECRET_0 of an SSL
 * into the struct lfe_tlsrec_secrets attached to it with
 * lfe_tlsrec_watch (SSL ex_data); other lines and SSLs without one are
 * ignored. lfe_tlsrec_new derives the keys and wipes the copies. The
 * current application traffic secret of each direction stays in the
 * record layer (KeyUpdate derives the next one from it, §7.2) and is
 * wiped when replaced and at lfe_tlsrec_free.
 *
 * Inbound (lfe_tlsrec_read), one record per call: application data is
 * returned; KeyUpdate (§4.6.3) updates the read key and, when
 * update_requested, owes our own KeyUpdate, sent before the next record
 * we seal; close_notify is -EPIPE; any other alert -ECONNRESET (close,
 * send nothing); any other handshake message (NewSessionTicket from a
 * client, post-handshake auth; tickets from a server: client mode
 * below), a change_cipher_spec or plaintext record, a length over the
 * limits (ciphertext 2^14 + 256, plaintext 2^14), an inner plaintext of
 * zeros, a bad tag, is -EBADMSG with the alert to send in
 * lfe_tlsrec_alert_due(). A KeyUpdate must sit alone in one record;
 * more than LFE_TLSREC_KEY_UPDATES_MAX of them with no non-empty
 * application data record between, or beyond the budget over time
 * (LFE_TLSREC_KU_BURST below), is a flood (each costs three HKDF
 * derivations on the worker: ~60k instructions for a 27-byte record) and
 * fails with unexpected_message; so do more than LFE_TLSREC_EMPTY_MAX
 * empty application data records in a row (an empty record resets
 * neither run). After close_notify nothing more is opened: every later
 * read is -EPIPE. A sequence number never wraps: the record after
 * 2^64 - 1 fails (-ERANGE). Outbound, our own KeyUpdate
 * (update_not_requested) goes before the record that would pass
 * LFE_TLSREC_WRITE_LIMIT records under one key (RFC 8446 §5.5).
 *
 * Key material (the struct: keys' secrets, IVs) is in memory from
 * lfe_tlsrec_key_alloc: excluded from core dumps, locked where allowed.
 *
 * Client mode (lfe_tlsrec_set_client; lfe_tlsrec_new_client sets it): the
 * same, but a TLS 1.3 server sends NewSessionTickets whenever it likes
 * after the handshake (§4.6.1), and a client that does not resume has no
 * use for them: a handshake record holding only whole NewSessionTicket
 * messages (one or more, each's framing checked to the last extension)
 * is skipped like a KeyUpdate (*plen 0) and counted (lfe_tlsrec_tickets).
 * A ticket message cut at the record's end (we do not reassemble
 * messages across records), or mixed with another message, is
 * -EBADMSG with unexpected_message; a malformed ticket body
 * decode_error. ldapfe-gen (gen/tlsc.c) uses it.
 *
 * DPDK-free, no globals but OpenSSL's per-process ex_data index (set once).
 * Thread rules: a record layer belongs to one thread; lfe_tlsrec_keylog
 * runs on whatever thread drives the SSL's handshake.
 */
#ifndef LFE_TLS_TLSREC_H
#define LFE_TLS_TLSREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ssl_st SSL;
struct lfe_tlsrec;

#define LFE_TLSREC_HDR        5u
#define LFE_TLSREC_TAG        16u
#define LFE_TLSREC_PLAIN_MAX  16384u                    /* 2^14 */
#define LFE_TLSREC_CIPHER_MAX (LFE_TLSREC_PLAIN_MAX + 256u)
#define LFE_TLSREC_MAX        (LFE_TLSREC_HDR + LFE_TLSREC_CIPHER_MAX)
/* Most bytes one lfe_tlsrec_write adds to n: an owed KeyUpdate record and
 * this record's header, content type and tag. */
#define LFE_TLSREC_WRITE_OVERHEAD (2u * (LFE_TLSREC_HDR + 1u + LFE_TLSREC_TAG) + 5u)

#define LFE_TLSREC_SECRET_MAX 48u
#define LFE_TLSREC_KEY_UPDATES_MAX 8u   /* in a row, no non-empty data record between */
#define LFE_TLSREC_EMPTY_MAX       32u  /* empty data records in a row (as OpenSSL) */
/* The KeyUpdate budget over time: LFE_TLSREC_KU_BURST at first, one more
 * each LFE_TLSREC_KU_REFILL_US of lfe_tlsrec_now's clock, never above the
 * burst. Why: each KeyUpdate costs the worker three HKDF derivations
 * (~3 µs) against ~80 ns for a data record, and the runs above only
 * bound floods between data; a peer needs a new key only near its usage
 * limit (2^24.5 AES-GCM records, RFC 8446 §5.5) or to answer ours, so a
 * legitimate connection never sees the bound: one KeyUpdate per 10 s
 * costs a core at most 0.3 µs/s per connection. Without a clock (never
 * told the time) the burst is the connection's lifetime budget. */
#define LFE_TLSREC_KU_BURST        32u
#define LFE_TLSREC_KU_REFILL_US    10000000u
/* Records sealed under one write key before our own KeyUpdate (RFC 8446
 * §5.5: AES-GCM's limit is 2^24.5 full-size records; 2^24 for every
 * suite). lfe_tlsrec_set_write_limit lowers it (tests). */
#define LFE_TLSREC_WRITE_LIMIT     (1ull << 24)

/* Captured by the keylog callback during the handshake; the caller owns
 * it (embedded in its per-connection state) and keeps it alive while the
 * SSL it watches may run a handshake step. */
struct lfe_tlsrec_secrets {
	uint8_t client[LFE_TLSREC_SECRET_MAX], server[LFE_TLSREC_SECRET_MAX];
	uint8_t client_len, server_len;   /* 0: not seen */
};

/* The keylog callback (SSL_CTX_set_keylog_callback). */
void lfe_tlsrec_keylog(const SSL *ssl, const char *line);

/* Have lfe_tlsrec_keylog fill sec for ssl (sec zeroed here): 0 or -ENOMEM.
 * sec NULL detaches (the caller may then free what it watched). */
int lfe_tlsrec_watch(SSL *ssl, struct lfe_tlsrec_secrets *sec);

/* OPENSSL_cleanse sec (and detach nothing: the SSL may already be gone). */
void lfe_tlsrec_secrets_wipe(struct lfe_tlsrec_secrets *sec);

/* Records in the n bytes OpenSSL wrote (whole records): how many there
 * are, all of type application_data (23) as every TLS 1.3 record under a
 * traffic key is; -EINVAL if the bytes are not that. The server's write
 * sequence number at the handover is the count of the records OpenSSL
 * wrote under the application key: those of the step that finished the
 * handshake (the NewSessionTickets after the client's Finished). */
int lfe_tlsrec_count_records(const uint8_t *p, size_t n);

/* Take over ssl's connection after its TLS 1.3 server handshake: keys
 * from sec (wiped here, whatever the result), write sequence number
 * wseq, read sequence number 0. The caller must have made sure OpenSSL
 * read no application record (SSL_pending and SSL_has_pending 0; the
 * bytes left in its read BIO are the peer's next records). Returns the
 * record layer, or NULL with *err: -ENOTSUP (not TLS 1.3 or a suite we do
 * not do, or a secret missing: stay on OpenSSL), -ENOMEM, -EIO. */
struct lfe_tlsrec *lfe_tlsrec_new(const SSL *ssl, struct lfe_tlsrec_secrets *sec, uint64_t wseq,
				  int *err);

/* The same from the secrets themselves (RFC 8446 cipher suite number:
 * 0x1301..0x1303; each secret secret_len bytes: the suite's hash length):
 * rd_secret opens, wr_secret seals. Tests and fuzzing make a peer with the
 * two swapped. The caller wipes its copies. */
struct lfe_tlsrec *lfe_tlsrec_new_keys(uint16_t suite, const uint8_t *rd_secret,
				       const uint8_t *wr_secret, size_t secret_len, uint64_t wseq,
				       int *err);

/* The client's side of the handover (gen/tlsc.c), after its TLS 1.3
 * handshake completed: reads with the server's secret, writes with the
 * client's, client mode set; wseq as above (0 unless OpenSSL wrote
 * application data records: the client's last handshake step writes its
 * Finished under the handshake key, nothing under the application key).
 * The same conditions, results and wiping of sec as lfe_tlsrec_new. */
struct lfe_tlsrec *lfe_tlsrec_new_client(const SSL *ssl, struct lfe_tlsrec_secrets *sec,
					 uint64_t wseq, int *err);

/* Client mode on (see above; for a record layer made with
 * lfe_tlsrec_new_keys). There is no way back: server mode is the default. */
void lfe_tlsrec_set_client(struct lfe_tlsrec *r);

/* NewSessionTicket messages skipped in client mode so far. */
uint64_t lfe_tlsrec_tickets(const struct lfe_tlsrec *r);

/* Wipe the keys and free (NULL is a no-op). */
void lfe_tlsrec_free(struct lfe_tlsrec *r);

/* The caller's clock (µs, monotonic) for the KeyUpdate budget: call
 * before lfe_tlsrec_read when time has moved (cheap: a store). */
void lfe_tlsrec_now(struct lfe_tlsrec *r, uint64_t now_us);

/* At most records records are sealed under one write key, the last of
 * them our KeyUpdate (default LFE_TLSREC_WRITE_LIMIT; 0: never, and a
 * sequence number runs to its end): a test hook. */
void lfe_tlsrec_set_write_limit(struct lfe_tlsrec *r, uint64_t records);

/* Memory for key material: zeroed, never in a core dump (MADV_DONTDUMP),
 * locked in memory while RLIMIT_MEMLOCK allows; n ≤ 512 (NULL beyond, or
 * with no memory). lfe_tlsrec_key_free wipes it (NULL: no-op). Either may
 * be called on any thread (free lists are per thread). */
void *lfe_tlsrec_key_alloc(size_t n);
void lfe_tlsrec_key_free(void *p, size_t n);

/* The same for n bytes the caller mapped at p (page-aligned, whole pages
 * of its own: madvise and mlock act on pages): 1 excluded from dumps and
 * locked, 0 excluded only (RLIMIT_MEMLOCK), or -errno (neither; e.g.
 * EINVAL for a range that splits a huge page). */
int lfe_tlsrec_key_protect(void *p, size_t n);

/* One record from in (len bytes). Returns the record's size (consumed)
 * with *plen plaintext bytes in out (cap ≥ LFE_TLSREC_PLAIN_MAX + 1; 0
 * for a KeyUpdate, skipped NewSessionTickets (client mode) or an empty
 * data record); 0 when in holds less than a
 * whole record (*need: the bytes the record needs, once its header is
 * in; else LFE_TLSREC_HDR); -EPIPE for close_notify; -ECONNRESET for
 * another alert (close); -EBADMSG or -ERANGE: fatal, send
 * lfe_tlsrec_alert_due() and close. */
int lfe_tlsrec_read(struct lfe_tlsrec *r, const uint8_t *in, size_t len, uint8_t *out, size_t cap,
		    size_t *plen, size_t *need);

/* The alert description a failed read owes the peer (RFC 8446 §6.2). */
uint8_t lfe_tlsrec_alert_due(const struct lfe_tlsrec *r);

/* Seal n ≤ LFE_TLSREC_PLAIN_MAX bytes as one application data record
 * into out (cap ≥ n + LFE_TLSREC_WRITE_OVERHEAD), preceded by an owed
 * KeyUpdate. Returns the bytes written, -ENOBUFS (cap), -ERANGE (sequence
 * numbers exhausted: close without sending), -EIO. */
int lfe_tlsrec_write(struct lfe_tlsrec *r, const uint8_t *p, size_t n, uint8_t *out, size_t cap);

/* Seal any TLSInnerPlaintext (content || type || zeros: m bytes, the last
 * taken as the type, so the whole of inner is sealed as it is; up to
 * 2^14 + 256 - 16) as one record: for tests and fuzzing, which need
 * records no sender should make. Returns as lfe_tlsrec_write. */
int lfe_tlsrec_seal_inner(struct lfe_tlsrec *r, const uint8_t *inner, size_t m, uint8_t *out,
			  size_t cap);

/* Seal an alert record (close_notify: warning; others fatal) into out
 * (cap ≥ 24): its size, or negative as lfe_tlsrec_write. */
int lfe_tlsrec_alert(struct lfe_tlsrec *r, uint8_t desc, uint8_t *out, size_t cap);

/* Alert descriptions used here. */
#define LFE_TLS_ALERT_CLOSE_NOTIFY       0
#define LFE_TLS_ALERT_UNEXPECTED_MESSAGE 10
#define LFE_TLS_ALERT_BAD_RECORD_MAC     20
#define LFE_TLS_ALERT_RECORD_OVERFLOW    22
#define LFE_TLS_ALERT_DECODE_ERROR       50
#define LFE_TLS_ALERT_INTERNAL_ERROR     80

#endif
