/* tests/dataplane/test_tlsrec.c — ldapfe's TLS 1.3 record layer
 * (tls/tlsrec.h) against a real OpenSSL client.
 *
 * For each suite: OpenSSL runs the server's handshake over memory BIOs
 * (the keylog callback catches the secrets), the server side is handed
 * over as tls/stream.c does (write sequence number = the records of
 * the step that finished the handshake), then thousands of records flow
 * both ways between the OpenSSL client and tlsrec: every size, client
 * KeyUpdates with and without update_requested, close_notify. Bad input
 * is made by a peer record layer holding the client's keys
 * (lfe_tlsrec_new_keys with the secrets swapped): a flipped bit in
 * header, ciphertext or tag, a truncated record, lengths over the
 * limits, an inner plaintext of zeros, a change_cipher_spec, plaintext
 * records, a client NewSessionTicket, a fatal alert. Client mode (the
 * generator's side): the client handed over when its handshake completes,
 * a real OpenSSL server's NewSessionTickets skipped and counted; crafted
 * ticket records (several in one, cut, malformed, mixed with a KeyUpdate)
 * and a ticket in server mode refused. Budgets: KeyUpdates between empty
 * records, empty records in a row, the KeyUpdate budget over time, our
 * KeyUpdate at the (lowered) usage limit, nothing opened after
 * close_notify. The split-input and
 * garbage-after-handover cases through the stream are in tests/tcp/
 * test_stream.c.
 */
#include "tls/tlsrec.h"
#include "tests/check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)rnd_state;
}

static SSL_CTX *server_ctx(int tickets)
{
	EVP_PKEY *pk = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (pk == NULL || x == NULL || ctx == NULL)
		exit(2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, pk);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	if (X509_sign(x, pk, EVP_sha256()) == 0 || SSL_CTX_use_certificate(ctx, x) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, pk) != 1)
		exit(2);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_num_tickets(ctx, (size_t)tickets);
	SSL_CTX_set_keylog_callback(ctx, lfe_tlsrec_keylog);
	X509_free(x);
	EVP_PKEY_free(pk);
	return ctx;
}

/* Move what one side wrote to the other. */
static void pipe_bytes(SSL *from, SSL *to)
{
	uint8_t buf[4096];
	int n;
	while ((n = BIO_read(SSL_get_wbio(from), buf, sizeof buf)) > 0)
		BIO_write(SSL_get_rbio(to), buf, n);
}

/* Pending bytes of a memory BIO, as a pointer. */
static size_t bio_data(BIO *b, const uint8_t **p)
{
	char *q = NULL;
	long n = BIO_get_mem_data(b, &q);
	*p = (const uint8_t *)q;
	return n > 0 ? (size_t)n : 0;
}

/* A server and a client SSL over memory BIOs; suite: the client's (NULL:
 * its default). */
static void mem_pair(SSL_CTX *sctx, SSL_CTX *cctx, const char *suite, SSL **srv, SSL **cli)
{
	*srv = SSL_new(sctx);
	*cli = SSL_new(cctx);
	if (*srv == NULL || *cli == NULL)
		exit(2);
	SSL_set_bio(*srv, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
	SSL_set_bio(*cli, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
	SSL_set_accept_state(*srv);
	SSL_set_connect_state(*cli);
	if (suite)
		SSL_set_ciphersuites(*cli, suite);
}

struct pair {
	SSL *cli;
	struct lfe_tlsrec *srv;   /* the server after the handover */
	struct lfe_tlsrec *peer;  /* the client's keys, for crafted records */
	uint64_t tickets;         /* records OpenSSL wrote in the last step */
};

/* Handshake suite (NULL: the client's default) with OpenSSL on both
 * sides, then hand the server over. */
static int pair_new(struct pair *pp, SSL_CTX *sctx, SSL_CTX *cctx, const char *suite)
{
	struct lfe_tlsrec_secrets sec;
	SSL *srv, *cli;
	memset(pp, 0, sizeof *pp);
	mem_pair(sctx, cctx, suite, &srv, &cli);
	if (lfe_tlsrec_watch(srv, &sec) < 0)
		return -1;
	int done = 0;
	for (int i = 0; i < 10 && !done; i++) {
		SSL_do_handshake(cli);
		pipe_bytes(cli, srv);
		const uint8_t *p;
		size_t mark = bio_data(SSL_get_wbio(srv), &p);
		done = SSL_do_handshake(srv) == 1;
		if (done) {
			size_t n = bio_data(SSL_get_wbio(srv), &p);
			int c = lfe_tlsrec_count_records(p + mark, n - mark);
			CHECK(c >= 0 || SSL_version(srv) != TLS1_3_VERSION, "records of the last step: %d",
			      c);
			pp->tickets = (uint64_t)c;
		}
		pipe_bytes(srv, cli);
	}
	ERR_clear_error();
	CHECK(done && SSL_pending(srv) == 0 && !SSL_has_pending(srv), "handshake");
	uint8_t csec[LFE_TLSREC_SECRET_MAX], ssec[LFE_TLSREC_SECRET_MAX];
	size_t len = sec.client_len;
	memcpy(csec, sec.client, sizeof csec);
	memcpy(ssec, sec.server, sizeof ssec);
	uint16_t id = SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(srv));
	int err = 0;
	pp->srv = lfe_tlsrec_new(srv, &sec, pp->tickets, &err);
	CHECK(sec.client_len == 0 && sec.server_len == 0, "secrets not wiped");
	/* The peer: reads what the server seals, seals as the client. */
	pp->peer = lfe_tlsrec_new_keys(id, ssec, csec, len, 0, &err);
	OPENSSL_cleanse(csec, sizeof csec);
	OPENSSL_cleanse(ssec, sizeof ssec);
	SSL_free(srv);
	pp->cli = cli;
	return pp->srv && pp->peer ? 0 : -1;
}

static void pair_free(struct pair *pp)
{
	SSL_free(pp->cli);
	lfe_tlsrec_free(pp->srv);
	lfe_tlsrec_free(pp->peer);
}

static uint8_t plain[LFE_TLSREC_PLAIN_MAX + 256];
static uint8_t rec[2 * LFE_TLSREC_MAX];

/* Every record the client wrote, opened by the server: the plaintext
 * appended to got; the last read's result. */
static int server_reads(struct pair *pp, uint8_t *got, size_t *got_len, unsigned *controls)
{
	const uint8_t *p;
	size_t n = bio_data(SSL_get_wbio(pp->cli), &p), off = 0;
	int rc = 0;
	while (off < n) {
		size_t m, need;
		rc = lfe_tlsrec_read(pp->srv, p + off, n - off, plain, sizeof plain, &m, &need);
		if (rc <= 0)
			break;
		if (m == 0 && controls)
			(*controls)++;
		memcpy(got + *got_len, plain, m);
		*got_len += m;
		off += (size_t)rc;
	}
	(void)BIO_reset(SSL_get_wbio(pp->cli));
	return rc;
}

/* Sizes that hit the edges: 1, a block less or more, the limit. */
static size_t pick_size(unsigned i)
{
	static const size_t edge[] = { 1, 15, 16, 17, 255, 256, 1400, 16383, 16384 };
	return i < sizeof edge / sizeof edge[0] ? edge[i]
	       : 1 + (rnd() % 3 == 0 ? rnd() % 16384 : rnd() % 300);
}

/* n records each way, with a KeyUpdate from the client every ku records
 * (requested every other time). */
static void traffic(struct pair *pp, const char *name, unsigned n, unsigned ku)
{
	static uint8_t msg[LFE_TLSREC_PLAIN_MAX], got[2 * LFE_TLSREC_PLAIN_MAX];
	unsigned kus = 0;

	for (unsigned i = 0; i < n; i++) {
		size_t len = pick_size(i), got_len = 0, w = 0;
		for (size_t j = 0; j < len; j++)
			msg[j] = (uint8_t)rnd();
		/* client → server */
		unsigned controls = 0;
		bool requested = false;
		/* time passes: the KeyUpdate budget refills (one per 10 s) */
		lfe_tlsrec_now(pp->srv, (uint64_t)(i + 1) * LFE_TLSREC_KU_REFILL_US);
		if (ku && i % ku == ku - 1) {
			requested = kus++ % 2 == 1;
			CHECK(SSL_key_update(pp->cli, requested ? SSL_KEY_UPDATE_REQUESTED
						       : SSL_KEY_UPDATE_NOT_REQUESTED) == 1, "key update");
		}
		CHECK(SSL_write_ex(pp->cli, msg, len, &w) == 1 && w == len, "%s: client write", name);
		int rc = server_reads(pp, got, &got_len, &controls);
		CHECK(rc > 0 && got_len == len && memcmp(got, msg, len) == 0,
		      "%s: record %u (%zu bytes) c->s: rc %d, got %zu", name, i, len, rc, got_len);
		CHECK(controls == (ku && i % ku == ku - 1), "%s: %u control records", name, controls);
		/* server → client (after a requested update: our KeyUpdate first) */
		int k = lfe_tlsrec_write(pp->srv, msg, len, rec, sizeof rec);
		CHECK(k == (int)(len + 22 + (requested ? 27 : 0)), "%s: sealed %d for %zu", name, k, len);
		if (k <= 0)
			return;
		BIO_write(SSL_get_rbio(pp->cli), rec, k);
		size_t r = 0, total = 0;
		while (total < len && SSL_read_ex(pp->cli, got + total, len - total, &r) == 1)
			total += r;
		CHECK(total == len && memcmp(got, msg, len) == 0, "%s: record %u s->c: %zu of %zu", name,
		      i, total, len);
		ERR_clear_error();
	}
	/* An empty record, then one byte: the client reads the byte. */
	int k = lfe_tlsrec_write(pp->srv, NULL, 0, rec, sizeof rec);
	int k2 = lfe_tlsrec_write(pp->srv, (const uint8_t *)"z", 1, rec + k, sizeof rec - (size_t)k);
	size_t r = 0;
	BIO_write(SSL_get_rbio(pp->cli), rec, k + k2);
	CHECK(k == 22 && SSL_read_ex(pp->cli, got, 1, &r) == 1 && r == 1 && got[0] == 'z',
	      "%s: empty record", name);
	printf("%s: %u records each way, %u client KeyUpdates\n", name, n, kus);
}

/* A crafted client record (sealed by the peer) read by the server: the
 * result and the alert owed. */
static int crafted(struct pair *pp, const uint8_t *inner, size_t m, uint8_t *alert)
{
	size_t pl, need;
	int k = lfe_tlsrec_seal_inner(pp->peer, inner, m, rec, sizeof rec);
	if (k <= 0)
		return -1000;
	int rc = lfe_tlsrec_read(pp->srv, rec, (size_t)k, plain, sizeof plain, &pl, &need);
	*alert = lfe_tlsrec_alert_due(pp->srv);
	return rc;
}

static void test_suite(SSL_CTX *sctx, SSL_CTX *cctx, const char *suite, int tickets)
{
	struct pair pp;
	char name[80];
	snprintf(name, sizeof name, "%s, %d ticket(s)", suite, tickets);
	if (pair_new(&pp, sctx, cctx, suite) < 0) {
		CHECK(0, "%s: no handover", name);
		pair_free(&pp);
		return;
	}
	CHECK(pp.tickets == (uint64_t)tickets, "%s: %llu records in the last step", name,
	      (unsigned long long)pp.tickets);
	traffic(&pp, name, 400, 7);

	/* close_notify from the client */
	SSL_shutdown(pp.cli);
	uint8_t got[64];
	size_t got_len = 0;
	CHECK(server_reads(&pp, got, &got_len, NULL) == -EPIPE, "%s: close_notify", name);
	pair_free(&pp);
}

/* Every bad record: closed with the right alert. */
static void test_bad(SSL_CTX *sctx, SSL_CTX *cctx)
{
	struct pair pp;
	uint8_t alert = 0;
	size_t pl, need;
	struct { const char *what; uint8_t inner[8]; size_t m; int rc; uint8_t alert; } cases[] = {
		{ "padded", { 'h', 'i', 23, 0, 0, 0 }, 6, 1, 0 },   /* fine: rc > 0 */
		{ "zeros", { 0, 0, 0 }, 3, -EBADMSG, LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "ccs inside", { 1, 20 }, 2, -EBADMSG, LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "NewSessionTicket", { 4, 0, 0, 0, 22 }, 5, -EBADMSG, LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "cert request", { 13, 0, 0, 0, 22 }, 5, -EBADMSG, LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "KeyUpdate cut", { 24, 0, 0, 1, 22 }, 5, -EBADMSG, LFE_TLS_ALERT_DECODE_ERROR },
		{ "KeyUpdate 2", { 24, 0, 0, 1, 2, 22 }, 6, -EBADMSG, 47 },
		{ "two KeyUpdates", { 24, 0, 0, 1, 0, 24, 0, 22 }, 8, -EBADMSG, LFE_TLS_ALERT_DECODE_ERROR },
		{ "alert long", { 2, 40, 0, 21 }, 4, -EBADMSG, LFE_TLS_ALERT_DECODE_ERROR },
		{ "fatal alert", { 2, 40, 21 }, 3, -ECONNRESET, 0 },
		{ "heartbeat", { 1, 24 }, 2, -EBADMSG, LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") == 0) {
			int rc = crafted(&pp, cases[i].inner, cases[i].m, &alert);
			if (cases[i].rc == 1 && rc > 0)
				rc = 1;
			CHECK(rc == cases[i].rc && (rc == -ECONNRESET || alert == cases[i].alert),
			      "%s: rc %d alert %u", cases[i].what, rc, alert);
		}
		pair_free(&pp);
	}

	/* Bit flips anywhere in a record: header (AAD), ciphertext, tag. */
	if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
		exit(2);
	static const uint8_t msg[] = { 'a', 'b', 'c', 23 };
	int k = lfe_tlsrec_seal_inner(pp.peer, msg, sizeof msg, rec, sizeof rec);
	for (int bit = 0; bit < k * 8; bit++) {
		if (bit >= 24 && bit < 40)
			continue;   /* the length field: another length, below */
		uint8_t bad[64];
		memcpy(bad, rec, (size_t)k);
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		int rc = lfe_tlsrec_read(pp.srv, bad, (size_t)k, plain, sizeof plain, &pl, &need);
		alert = lfe_tlsrec_alert_due(pp.srv);
		CHECK(rc == -EBADMSG && (bit >= 8 || alert == LFE_TLS_ALERT_UNEXPECTED_MESSAGE) &&
		      (bit < 8 || bit >= 16 || alert == LFE_TLS_ALERT_DECODE_ERROR) &&
		      (bit < 16 || alert == LFE_TLS_ALERT_BAD_RECORD_MAC), "bit %d: rc %d alert %u", bit,
		      rc, alert);
	}
	/* A KeyUpdate flood from the client: LFE_TLSREC_KEY_UPDATES_MAX in a
	 * row pass, the next fails; data between resets the run (traffic()
	 * sends many with data between). */
	{
		struct pair q;
		if (pair_new(&q, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
			exit(2);
		int rc = 0;
		unsigned n = 0, ctl = 0;
		uint8_t got[16];
		size_t got_len = 0;
		for (unsigned i = 0; i <= LFE_TLSREC_KEY_UPDATES_MAX; i++) {
			SSL_key_update(q.cli, SSL_KEY_UPDATE_NOT_REQUESTED);
			SSL_do_handshake(q.cli);   /* sends it */
			if ((rc = server_reads(&q, got, &got_len, &ctl)) <= 0)
				break;
			n++;
		}
		CHECK(n == LFE_TLSREC_KEY_UPDATES_MAX && rc == -EBADMSG &&
		      lfe_tlsrec_alert_due(q.srv) == LFE_TLS_ALERT_UNEXPECTED_MESSAGE,
		      "KeyUpdate flood: %u passed, rc %d", n, rc);
		pair_free(&q);
	}
	/* Nothing was consumed by the failures: the record still reads. */
	int rc = lfe_tlsrec_read(pp.srv, rec, (size_t)k, plain, sizeof plain, &pl, &need);
	CHECK(rc == k && pl == 3 && memcmp(plain, "abc", 3) == 0, "intact record after flips: %d", rc);
	/* Truncated: every prefix wants more, and says how much. */
	k = lfe_tlsrec_seal_inner(pp.peer, msg, sizeof msg, rec, sizeof rec);
	for (int cut = 0; cut < k; cut++) {
		rc = lfe_tlsrec_read(pp.srv, rec, (size_t)cut, plain, sizeof plain, &pl, &need);
		CHECK(rc == 0 && need == (cut < 5 ? 5u : (size_t)k), "cut %d: rc %d need %zu", cut, rc,
		      need);
	}
	rc = lfe_tlsrec_read(pp.srv, rec, (size_t)k, plain, sizeof plain, &pl, &need);
	CHECK(rc == k && pl == 3, "whole after cuts: %d", rc);
	/* Lengths: over 2^14 + 256 refused from the header alone; under
	 * type + tag malformed; a record that opens to over 2^14 + 1. */
	uint8_t hdr[5] = { 23, 3, 3, (uint8_t)((LFE_TLSREC_CIPHER_MAX + 1) >> 8),
			   (uint8_t)(LFE_TLSREC_CIPHER_MAX + 1) };
	rc = lfe_tlsrec_read(pp.srv, hdr, 5, plain, sizeof plain, &pl, &need);
	CHECK(rc == -EBADMSG && lfe_tlsrec_alert_due(pp.srv) == LFE_TLS_ALERT_RECORD_OVERFLOW,
	      "oversize header: %d", rc);
	hdr[3] = 0, hdr[4] = 16;
	rc = lfe_tlsrec_read(pp.srv, hdr, 5, plain, sizeof plain, &pl, &need);
	CHECK(rc == -EBADMSG && lfe_tlsrec_alert_due(pp.srv) == LFE_TLS_ALERT_DECODE_ERROR,
	      "short record: %d", rc);
	/* Plaintext records after the handshake: CCS, alert, handshake. */
	static const uint8_t ccs[] = { 20, 3, 3, 0, 1, 1 }, palert[] = { 21, 3, 3, 0, 2, 1, 0 };
	rc = lfe_tlsrec_read(pp.srv, ccs, sizeof ccs, plain, sizeof plain, &pl, &need);
	CHECK(rc == -EBADMSG, "plaintext CCS: %d", rc);
	rc = lfe_tlsrec_read(pp.srv, palert, sizeof palert, plain, sizeof plain, &pl, &need);
	CHECK(rc == -EBADMSG, "plaintext alert: %d", rc);
	/* A record with the wrong sequence number (replayed): bad MAC. */
	k = lfe_tlsrec_seal_inner(pp.peer, msg, sizeof msg, rec, sizeof rec);
	rc = lfe_tlsrec_read(pp.srv, rec, (size_t)k, plain, sizeof plain, &pl, &need);
	CHECK(rc == k, "fresh record: %d", rc);
	rc = lfe_tlsrec_read(pp.srv, rec, (size_t)k, plain, sizeof plain, &pl, &need);
	CHECK(rc == -EBADMSG && lfe_tlsrec_alert_due(pp.srv) == LFE_TLS_ALERT_BAD_RECORD_MAC,
	      "replay: %d", rc);
	pair_free(&pp);
	if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
		exit(2);
	static uint8_t big[LFE_TLSREC_PLAIN_MAX + 2];
	memset(big, 'x', sizeof big);
	big[sizeof big - 1] = 23;   /* 2^14 + 1 content bytes: one too many */
	rc = crafted(&pp, big, sizeof big, &alert);
	CHECK(rc == -EBADMSG && alert == LFE_TLS_ALERT_RECORD_OVERFLOW, "oversize plaintext: %d", rc);
	pair_free(&pp);
	printf("bad records: %zu crafted kinds, every bit flipped, every cut, lengths, plaintext "
	       "records, replay\n", sizeof cases / sizeof cases[0]);
}

/* The record length limits exactly at and one over (issue 32): a header
 * of 2^14 + 256 ciphertext bytes is waited for, one more is refused from
 * the header alone; an inner plaintext of 2^14 + 1 bytes (content and
 * type, or padded to it with zeros) opens, one more is record_overflow;
 * 1 + tag bytes is the shortest record that gets to the MAC. */
static void test_record_limits(SSL_CTX *sctx, SSL_CTX *cctx)
{
	struct pair pp;
	uint8_t alert = 0;
	size_t pl = 0, need = 0;
	static uint8_t big[LFE_TLSREC_PLAIN_MAX + 2];

	if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
		exit(2);
	uint8_t hdr[5] = { 23, 3, 3, (uint8_t)(LFE_TLSREC_CIPHER_MAX >> 8),
			   (uint8_t)LFE_TLSREC_CIPHER_MAX };
	int rc = lfe_tlsrec_read(pp.srv, hdr, 5, plain, sizeof plain, &pl, &need);
	CHECK(rc == 0 && need == LFE_TLSREC_HDR + LFE_TLSREC_CIPHER_MAX &&
	      lfe_tlsrec_alert_due(pp.srv) == 0,
	      "header at 2^14 + 256: rc %d need %zu alert %u (want 0, %u, 0)", rc, need,
	      lfe_tlsrec_alert_due(pp.srv), LFE_TLSREC_HDR + LFE_TLSREC_CIPHER_MAX);
	/* whole, it opens to over 2^14 + 1: refused before the MAC */
	memset(rec, 0, LFE_TLSREC_MAX);
	memcpy(rec, hdr, 5);
	rc = lfe_tlsrec_read(pp.srv, rec, LFE_TLSREC_MAX, plain, sizeof plain, &pl, &need);
	CHECK(rc == -EBADMSG && lfe_tlsrec_alert_due(pp.srv) == LFE_TLS_ALERT_RECORD_OVERFLOW,
	      "record of 2^14 + 256: rc %d alert %u", rc, lfe_tlsrec_alert_due(pp.srv));
	pair_free(&pp);
	if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
		exit(2);
	hdr[3] = (uint8_t)((LFE_TLSREC_CIPHER_MAX + 1) >> 8);
	hdr[4] = (uint8_t)(LFE_TLSREC_CIPHER_MAX + 1);
	rc = lfe_tlsrec_read(pp.srv, hdr, 5, plain, sizeof plain, &pl, &need);
	CHECK(rc == -EBADMSG && lfe_tlsrec_alert_due(pp.srv) == LFE_TLS_ALERT_RECORD_OVERFLOW,
	      "header at 2^14 + 257: rc %d", rc);
	pair_free(&pp);
	/* 1 + tag: the shortest that gets to the MAC (bad MAC, not decode_error) */
	if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
		exit(2);
	uint8_t shortest[5 + 1 + LFE_TLSREC_TAG] = { 23, 3, 3, 0, 1 + LFE_TLSREC_TAG };
	rc = lfe_tlsrec_read(pp.srv, shortest, sizeof shortest, plain, sizeof plain, &pl, &need);
	CHECK(rc == -EBADMSG && lfe_tlsrec_alert_due(pp.srv) == LFE_TLS_ALERT_BAD_RECORD_MAC,
	      "1 + tag bytes: rc %d alert %u", rc, lfe_tlsrec_alert_due(pp.srv));
	pair_free(&pp);
	/* inner plaintext: 2^14 content + type; 2^14 - 1 + type + one zero;
	 * then one more byte of each */
	for (int k = 0; k < 4; k++) {
		bool over = k >= 2, padded = k % 2;
		size_t m = LFE_TLSREC_PLAIN_MAX + 1 + over;
		size_t content = m - 1 - padded;
		if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
			exit(2);
		memset(big, 'x', content);
		big[content] = 23;
		if (padded)
			big[m - 1] = 0;
		rc = crafted(&pp, big, m, &alert);
		if (!over)
			CHECK(rc > 0 && alert == 0, "inner plaintext of 2^14 + 1 (%s): rc %d alert %u",
			      padded ? "padded" : "content", rc, alert);
		else
			CHECK(rc == -EBADMSG && alert == LFE_TLS_ALERT_RECORD_OVERFLOW,
			      "inner plaintext of 2^14 + 2 (%s): rc %d alert %u",
			      padded ? "padded" : "content", rc, alert);
		pair_free(&pp);
	}
	printf("record limits: header at and over 2^14 + 256, 1 + tag, inner 2^14 + 1 and + 2\n");
}

/* ---- client mode: the handover on the client's side (ldapfe-gen) ---- */

struct cpair {
	SSL *srv;                 /* OpenSSL's server, still on OpenSSL */
	struct lfe_tlsrec *cli;   /* the client after the handover */
	struct lfe_tlsrec *peer;  /* the server's keys, for crafted records */
};

/* Handshake with OpenSSL on both sides; hand the client over the moment
 * its handshake completes (its Finished still to be sent), as
 * gen/tlsc.c does; then let the server finish (it writes its tickets). */
static int cpair_new(struct cpair *cp, SSL_CTX *sctx, SSL_CTX *cctx, const char *suite)
{
	struct lfe_tlsrec_secrets sec;
	SSL *srv, *cli;
	memset(cp, 0, sizeof *cp);
	mem_pair(sctx, cctx, suite, &srv, &cli);
	cp->srv = srv;
	if (lfe_tlsrec_watch(cli, &sec) < 0) {
		SSL_free(cli);
		return -1;
	}
	int done = 0;
	for (int i = 0; i < 10 && !done; i++) {
		done = SSL_do_handshake(cli) == 1;
		pipe_bytes(cli, srv);   /* the last time: the client's Finished */
		if (!done) {
			SSL_do_handshake(srv);
			pipe_bytes(srv, cli);
		}
	}
	ERR_clear_error();
	CHECK(done && SSL_pending(cli) == 0 && !SSL_has_pending(cli), "client handshake");
	uint8_t csec[LFE_TLSREC_SECRET_MAX], ssec[LFE_TLSREC_SECRET_MAX];
	size_t len = sec.client_len;
	memcpy(csec, sec.client, sizeof csec);
	memcpy(ssec, sec.server, sizeof ssec);
	uint16_t id = SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(cli));
	int err = 0;
	cp->cli = lfe_tlsrec_new_client(cli, &sec, 0, &err);
	CHECK(sec.client_len == 0 && sec.server_len == 0, "client secrets not wiped");
	SSL_free(cli);
	/* The peer seals as the server, opens what the client seals. */
	cp->peer = lfe_tlsrec_new_keys(id, csec, ssec, len, 0, &err);
	OPENSSL_cleanse(csec, sizeof csec);
	OPENSSL_cleanse(ssec, sizeof ssec);
	CHECK(SSL_do_handshake(srv) == 1, "server handshake");
	return cp->cli && cp->peer ? 0 : -1;
}

static void cpair_free(struct cpair *cp)
{
	SSL_free(cp->srv);
	lfe_tlsrec_free(cp->cli);
	lfe_tlsrec_free(cp->peer);
}

/* Every record the server wrote, opened by the client: plaintext
 * appended to got, control records (tickets, KeyUpdates) counted; the
 * last read's result. */
static int client_reads(struct cpair *cp, uint8_t *got, size_t *got_len, unsigned *controls)
{
	const uint8_t *p;
	size_t n = bio_data(SSL_get_wbio(cp->srv), &p), off = 0;
	int rc = 0;
	while (off < n) {
		size_t m, need;
		rc = lfe_tlsrec_read(cp->cli, p + off, n - off, plain, sizeof plain, &m, &need);
		if (rc <= 0)
			break;
		*controls += m == 0;
		memcpy(got + *got_len, plain, m);
		*got_len += m;
		off += (size_t)rc;
	}
	(void)BIO_reset(SSL_get_wbio(cp->srv));
	return rc;
}

/* The client handed over against a real OpenSSL server that sends
 * `tickets` NewSessionTickets after the handshake: they are skipped and
 * counted; data both ways; a server KeyUpdate with update_requested
 * answered; close_notify. */
static void test_client_real(SSL_CTX *sctx, SSL_CTX *cctx, const char *suite, unsigned tickets)
{
	struct cpair cp;
	uint8_t got[4096];
	size_t got_len = 0, r = 0, w = 0;
	unsigned ctl = 0;
	if (cpair_new(&cp, sctx, cctx, suite) < 0) {
		CHECK(0, "client %s: no handover", suite);
		cpair_free(&cp);
		return;
	}
	CHECK(SSL_write_ex(cp.srv, "response", 8, &w) == 1, "server write");
	int rc = client_reads(&cp, got, &got_len, &ctl);
	CHECK(rc > 0 && ctl == tickets && lfe_tlsrec_tickets(cp.cli) == tickets && got_len == 8 &&
	      memcmp(got, "response", 8) == 0, "client %s: %u tickets skipped (%llu), %zu bytes",
	      suite, ctl, (unsigned long long)lfe_tlsrec_tickets(cp.cli), got_len);
	for (unsigned i = 0; i < 50; i++) {
		size_t len = 1 + rnd() % 2000;
		uint8_t msg[2000];
		for (size_t j = 0; j < len; j++)
			msg[j] = (uint8_t)rnd();
		int k = lfe_tlsrec_write(cp.cli, msg, len, rec, sizeof rec);
		BIO_write(SSL_get_rbio(cp.srv), rec, k);
		size_t total = 0;
		while (total < len && SSL_read_ex(cp.srv, got + total, len - total, &r) == 1)
			total += r;
		CHECK(k > 0 && total == len && memcmp(got, msg, len) == 0, "client %s: c->s %u", suite, i);
		if (i == 20)
			CHECK(SSL_key_update(cp.srv, SSL_KEY_UPDATE_REQUESTED) == 1, "server KeyUpdate");
		CHECK(SSL_write_ex(cp.srv, msg, len, &w) == 1, "server write");
		got_len = 0, ctl = 0;
		rc = client_reads(&cp, got, &got_len, &ctl);
		CHECK(rc > 0 && got_len == len && memcmp(got, msg, len) == 0 && ctl == (i == 20),
		      "client %s: s->c %u: rc %d, %zu bytes, %u controls", suite, i, rc, got_len, ctl);
		ERR_clear_error();
	}
	SSL_shutdown(cp.srv);
	got_len = 0;
	CHECK(client_reads(&cp, got, &got_len, &ctl) == -EPIPE, "client %s: close_notify", suite);
	printf("client mode, %s: %u ticket(s) skipped, 50 records each way, a requested KeyUpdate\n",
	       suite, tickets);
	cpair_free(&cp);
}

/* A crafted server record (sealed by the peer) read by the client. */
static int crafted_c(struct cpair *cp, const uint8_t *inner, size_t m, uint8_t *alert)
{
	size_t pl, need;
	int k = lfe_tlsrec_seal_inner(cp->peer, inner, m, rec, sizeof rec);
	if (k <= 0)
		return -1000;
	int rc = lfe_tlsrec_read(cp->cli, rec, (size_t)k, plain, sizeof plain, &pl, &need);
	*alert = lfe_tlsrec_alert_due(cp->cli);
	return rc > 0 && pl == 0 ? 1 : rc;
}

/* NewSessionTicket messages (RFC 8446 §4.6.1): type 4, 24-bit length,
 * lifetime, age_add, nonce<0..255>, ticket<1..2^16-1>, extensions. */
#define NST(blen) 4, 0, 0, blen
#define NST_BODY 0, 0, 0x1c, 0x20, 1, 2, 3, 4, 1, 0, 0, 3, 't', 'k', 't'   /* 15 bytes */

static void test_client_bad(SSL_CTX *sctx, SSL_CTX *cctx)
{
	static const struct {
		const char *what;
		uint8_t inner[64];
		size_t m;
		int rc;               /* 1: skipped */
		uint64_t tickets;     /* counted after it */
		uint8_t alert;
	} cases[] = {
		{ "one ticket", { NST(17), NST_BODY, 0, 0, 22 }, 22, 1, 1, 0 },
		{ "two in one record", { NST(17), NST_BODY, 0, 0, NST(17), NST_BODY, 0, 0, 22 }, 43, 1,
		  2, 0 },
		{ "with early_data", { NST(25), NST_BODY, 0, 8, 0, 0x2a, 0, 4, 0, 0, 0x40, 0, 22 }, 30, 1,
		  1, 0 },
		{ "padded", { NST(17), NST_BODY, 0, 0, 22, 0, 0, 0 }, 25, 1, 1, 0 },
		{ "cut: goes on in the next record", { NST(18), NST_BODY, 0, 0, 22 }, 22, -EBADMSG, 0,
		  LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "cut after one", { NST(17), NST_BODY, 0, 0, NST(17), NST_BODY, 22 }, 41, -EBADMSG, 0,
		  LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "header cut", { NST(17), NST_BODY, 0, 0, 4, 0, 0, 22 }, 25, -EBADMSG, 0,
		  LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "short body", { NST(16), NST_BODY, 0, 22 }, 21, -EBADMSG, 0, LFE_TLS_ALERT_DECODE_ERROR },
		{ "trailing byte", { NST(18), NST_BODY, 0, 0, 9, 22 }, 23, -EBADMSG, 0,
		  LFE_TLS_ALERT_DECODE_ERROR },
		{ "nonce overruns", { NST(9), 0, 0, 0, 1, 0, 0, 0, 1, 200, 22 }, 14, -EBADMSG, 0,
		  LFE_TLS_ALERT_DECODE_ERROR },
		{ "empty ticket", { NST(13), 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 22 }, 18, -EBADMSG, 0,
		  LFE_TLS_ALERT_DECODE_ERROR },
		{ "extension overruns", { NST(21), NST_BODY, 0, 4, 0, 0x2a, 0, 5, 22 }, 26, -EBADMSG, 0,
		  LFE_TLS_ALERT_DECODE_ERROR },
		{ "ticket then KeyUpdate", { NST(17), NST_BODY, 0, 0, 24, 0, 0, 1, 0, 22 }, 27, -EBADMSG,
		  0, LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "KeyUpdate then ticket", { 24, 0, 0, 1, 0, NST(17), NST_BODY, 0, 0, 22 }, 27,
		  -EBADMSG, 0, LFE_TLS_ALERT_DECODE_ERROR },
		{ "empty handshake", { 22 }, 1, -EBADMSG, 0, LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "cert request", { 13, 0, 0, 0, 22 }, 5, -EBADMSG, 0, LFE_TLS_ALERT_UNEXPECTED_MESSAGE },
		{ "KeyUpdate alone", { 24, 0, 0, 1, 0, 22 }, 6, 1, 0, 0 },
	};
	struct cpair cp;
	uint8_t alert;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (cpair_new(&cp, sctx, cctx, "TLS_AES_128_GCM_SHA256") == 0) {
			alert = 0;
			int rc = crafted_c(&cp, cases[i].inner, cases[i].m, &alert);
			CHECK(rc == cases[i].rc && (rc > 0 || alert == cases[i].alert) &&
			      lfe_tlsrec_tickets(cp.cli) == cases[i].tickets,
			      "client mode, %s: rc %d alert %u tickets %llu", cases[i].what, rc, alert,
			      (unsigned long long)lfe_tlsrec_tickets(cp.cli));
		} else {
			CHECK(0, "client mode: no handover");
		}
		cpair_free(&cp);
	}
	/* Server mode (the default; tls/stream.c): a well-formed ticket
	 * from the client is still refused. */
	struct pair pp;
	if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") == 0) {
		int rc = crafted(&pp, cases[0].inner, cases[0].m, &alert);
		CHECK(rc == -EBADMSG && alert == LFE_TLS_ALERT_UNEXPECTED_MESSAGE &&
		      lfe_tlsrec_tickets(pp.srv) == 0, "server mode: a ticket: rc %d alert %u", rc, alert);
	}
	pair_free(&pp);
	printf("client mode: %zu crafted ticket records; a ticket in server mode refused\n",
	       sizeof cases / sizeof cases[0]);
}

/* A record the peer seals (inner: content || type) read by the server. */
static int peer_rec(struct pair *pp, const uint8_t *inner, size_t m)
{
	uint8_t a;
	return crafted(pp, inner, m, &a);
}

static const uint8_t empty_inner[] = { 23 };                 /* empty application data */
static const uint8_t data_inner[] = { 'x', 23 };

/* Two record layers on the same secrets, each other's peer. */
static void keys_pair(struct lfe_tlsrec **a, struct lfe_tlsrec **b)
{
	uint8_t s1[32], s2[32];
	int err;
	for (unsigned i = 0; i < 32; i++)
		s1[i] = (uint8_t)rnd(), s2[i] = (uint8_t)rnd();
	*a = lfe_tlsrec_new_keys(0x1301, s1, s2, 32, 0, &err);
	*b = lfe_tlsrec_new_keys(0x1301, s2, s1, 32, 0, &err);
	if (*a == NULL || *b == NULL)
		exit(2);
}

static void test_budgets(SSL_CTX *sctx, SSL_CTX *cctx)
{
	struct pair pp;
	int rc = 0;
	unsigned n = 0;

	/* KeyUpdates between empty records: the empty ones reset nothing,
	 * the ninth KeyUpdate fails (the bug: each empty record reset it).
	 * The peer sends KeyUpdate + empty record on each write (its usage
	 * limit at 1 record). */
	struct lfe_tlsrec *a, *b;
	keys_pair(&a, &b);
	lfe_tlsrec_set_write_limit(b, 1);
	size_t pl, need;
	unsigned kus = 0;
	for (n = 0; n < 40; n++) {
		int k = lfe_tlsrec_write(b, NULL, 0, rec, sizeof rec);
		CHECK(k == 22 + 27, "KeyUpdate + empty record: %d", k);
		if ((rc = lfe_tlsrec_read(a, rec, (size_t)k, plain, sizeof plain, &pl, &need)) <= 0)
			break;
		kus++;
		if ((rc = lfe_tlsrec_read(a, rec + rc, (size_t)k - (size_t)rc, plain, sizeof plain, &pl,
					  &need)) <= 0)
			break;
	}
	CHECK(kus == LFE_TLSREC_KEY_UPDATES_MAX && rc == -EBADMSG &&
	      lfe_tlsrec_alert_due(a) == LFE_TLS_ALERT_UNEXPECTED_MESSAGE,
	      "KeyUpdates between empty records: %u read, rc %d", kus, rc);
	lfe_tlsrec_free(a);
	lfe_tlsrec_free(b);

	/* Empty records in a row: LFE_TLSREC_EMPTY_MAX pass, the next fails;
	 * a data record between resets the run. */
	if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
		exit(2);
	for (n = 0; n < LFE_TLSREC_EMPTY_MAX; n++)
		CHECK(peer_rec(&pp, empty_inner, 1) > 0, "empty record %u", n);
	CHECK(peer_rec(&pp, data_inner, 2) > 0, "data after %u empty records", n);
	for (n = 0; n < 100; n++)
		if ((rc = peer_rec(&pp, empty_inner, 1)) <= 0)
			break;
	CHECK(n == LFE_TLSREC_EMPTY_MAX && rc == -EBADMSG &&
	      lfe_tlsrec_alert_due(pp.srv) == LFE_TLS_ALERT_UNEXPECTED_MESSAGE,
	      "empty records in a row: %u passed, rc %d", n, rc);
	pair_free(&pp);

	/* The budget over time: with data between every KeyUpdate, the burst
	 * passes and then one per LFE_TLSREC_KU_REFILL_US of the clock. */
	if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
		exit(2);
	uint64_t now = 1000000;
	lfe_tlsrec_now(pp.srv, now);
	unsigned passed = 0;
	for (n = 0; n < 200; n++) {
		SSL_key_update(pp.cli, SSL_KEY_UPDATE_NOT_REQUESTED);
		CHECK(SSL_write_ex(pp.cli, "x", 1, &(size_t){ 0 }) == 1, "data write");
		uint8_t got[16];
		size_t got_len = 0;
		if ((rc = server_reads(&pp, got, &got_len, NULL)) <= 0)
			break;
		passed++;
	}
	CHECK(passed == LFE_TLSREC_KU_BURST && rc == -EBADMSG,
	      "KeyUpdates with data between, no time passing: %u passed, rc %d", passed, rc);
	pair_free(&pp);
	if (pair_new(&pp, sctx, cctx, "TLS_AES_128_GCM_SHA256") < 0)
		exit(2);
	lfe_tlsrec_now(pp.srv, now);
	passed = 0;
	for (n = 0; n < 100; n++) {
		if (n >= LFE_TLSREC_KU_BURST)
			now += LFE_TLSREC_KU_REFILL_US;   /* one earned each time */
		lfe_tlsrec_now(pp.srv, now);
		SSL_key_update(pp.cli, SSL_KEY_UPDATE_NOT_REQUESTED);
		CHECK(SSL_write_ex(pp.cli, "x", 1, &(size_t){ 0 }) == 1, "data write");
		uint8_t got[16];
		size_t got_len = 0;
		if ((rc = server_reads(&pp, got, &got_len, NULL)) <= 0)
			break;
		passed++;
	}
	CHECK(passed == 100, "KeyUpdates within the budget over time: %u passed, rc %d", passed, rc);
	pair_free(&pp);

	/* Our KeyUpdate at the usage limit (lowered to 5 records): OpenSSL's
	 * client reads every record across the key changes. */
	if (pair_new(&pp, sctx, cctx, "TLS_AES_256_GCM_SHA384") < 0)
		exit(2);
	lfe_tlsrec_set_write_limit(pp.srv, 5);
	kus = 0;
	for (n = 0; n < 23; n++) {
		char msg[8];
		int ml = snprintf(msg, sizeof msg, "m%u", n);
		int k = lfe_tlsrec_write(pp.srv, (const uint8_t *)msg, (size_t)ml, rec, sizeof rec);
		kus += k > ml + 22;
		BIO_write(SSL_get_rbio(pp.cli), rec, k);
		char got[16];
		size_t r = 0;
		CHECK(SSL_read_ex(pp.cli, got, sizeof got, &r) == 1 && r == (size_t)ml &&
		      memcmp(got, msg, r) == 0, "record %u after our KeyUpdates", n);
	}
	/* The ticket record and 3 data records under the first key, then its
	 * 5th record the KeyUpdate; 4 data records and a KeyUpdate a key on. */
	CHECK(kus == 5, "our KeyUpdates at a limit of 5 records: %u", kus);
	ERR_clear_error();

	/* close_notify, then a record: not opened, -EPIPE again. */
	SSL_shutdown(pp.cli);
	uint8_t got[64];
	size_t got_len = 0;
	CHECK(server_reads(&pp, got, &got_len, NULL) == -EPIPE, "close_notify");
	int k = lfe_tlsrec_seal_inner(pp.peer, data_inner, 2, rec, sizeof rec);
	rc = lfe_tlsrec_read(pp.srv, rec, (size_t)k, plain, sizeof plain, &pl, &need);
	CHECK(rc == -EPIPE && pl == 0, "a record after close_notify: %d, %zu bytes", rc, pl);
	pair_free(&pp);
	printf("budgets: KeyUpdates between empty records, %u empty records in a row, the budget "
	       "over time, our KeyUpdate at the usage limit, close_notify\n", LFE_TLSREC_EMPTY_MAX);
}

/* The VmFlags of the mapping holding p (/proc/self/smaps), or "". */
static void vmflags(const void *p, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	out[0] = '\0';
	while (f && fgets(line, sizeof line, f)) {
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)p >= a && (uintptr_t)p < b;
		else if (in && strncmp(line, "VmFlags:", 8) == 0)
			snprintf(out, cap, "%s", line + 8);
	}
	if (f)
		fclose(f);
}

/* Key material is never in a core dump: the record layer's memory (and
 * the ticket keys', the same allocator) is MADV_DONTDUMP ("dd"), locked
 * ("lo") where RLIMIT_MEMLOCK allows. */
static void test_key_memory(void)
{
	uint8_t s[32] = { 7 };
	int err;
	struct lfe_tlsrec *r = lfe_tlsrec_new_keys(0x1301, s, s, 32, 0, &err);
	char fl[512];
	CHECK(r != NULL, "new_keys: %d", err);
	vmflags(r, fl, sizeof fl);
	CHECK(strstr(fl, " dd") != NULL, "record layer memory not MADV_DONTDUMP: VmFlags%s", fl);
	printf("key memory: VmFlags%s", fl);
	lfe_tlsrec_free(r);
	void *k = lfe_tlsrec_key_alloc(400);
	CHECK(k != NULL && lfe_tlsrec_key_alloc(513) == NULL, "key_alloc sizes");
	for (unsigned i = 0; k && i < 400; i++)
		CHECK(((uint8_t *)k)[i] == 0, "key_alloc zeroed");
	lfe_tlsrec_key_free(k, 400);
}

/* The nonce never repeats: the write sequence number stops at 2^64 - 1. */
static void test_seq_end(void)
{
	uint8_t s[32] = { 1 };
	int err;
	struct lfe_tlsrec *r = lfe_tlsrec_new_keys(0x1301, s, s, 32, UINT64_MAX - 1, &err);
	CHECK(r != NULL, "new_keys: %d", err);
	lfe_tlsrec_set_write_limit(r, 0);   /* else our KeyUpdate comes long before */
	CHECK(lfe_tlsrec_write(r, (const uint8_t *)"x", 1, rec, sizeof rec) > 0, "last record");
	CHECK(lfe_tlsrec_write(r, (const uint8_t *)"x", 1, rec, sizeof rec) == -ERANGE,
	      "a record past the last sequence number");
	lfe_tlsrec_free(r);
	CHECK(lfe_tlsrec_new_keys(0x1304, s, s, 32, 0, &err) == NULL && err == -ENOTSUP, "CCM");
	CHECK(lfe_tlsrec_new_keys(0x1302, s, s, 32, 0, &err) == NULL && err == -ENOTSUP,
	      "SHA-384 suite with a 32-byte secret");
}

int main(void)
{
	SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX *s1 = server_ctx(1), *s0 = server_ctx(0), *s2 = server_ctx(2);
	if (cctx == NULL)
		return 2;
	SSL_CTX_set_min_proto_version(cctx, TLS1_3_VERSION);
	static const char *const suites[] = { "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
					      "TLS_CHACHA20_POLY1305_SHA256" };
	for (unsigned i = 0; i < 3; i++)
		test_suite(s1, cctx, suites[i], 1);
	test_suite(s0, cctx, suites[0], 0);
	test_suite(s2, cctx, suites[1], 2);
	test_bad(s1, cctx);
	test_budgets(s1, cctx);
	test_record_limits(s1, cctx);
	test_seq_end();
	test_key_memory();

	/* The client's side: a client context whose keylog feeds tlsrec. */
	SSL_CTX *ck = SSL_CTX_new(TLS_client_method());
	if (ck == NULL)
		return 2;
	SSL_CTX_set_min_proto_version(ck, TLS1_3_VERSION);
	SSL_CTX_set_keylog_callback(ck, lfe_tlsrec_keylog);
	for (unsigned i = 0; i < 3; i++)
		test_client_real(s2, ck, suites[i], 2);
	test_client_real(s1, ck, suites[0], 1);
	test_client_real(s0, ck, suites[2], 0);
	test_client_bad(s1, ck);
	SSL_CTX_free(ck);

	/* TLS 1.2 and a CCM suite: no handover. */
	SSL_CTX *c12 = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_max_proto_version(c12, TLS1_2_VERSION);
	struct pair pp;
	CHECK(pair_new(&pp, s1, c12, NULL) < 0, "TLS 1.2 handed over");
	pair_free(&pp);
	SSL_CTX_set_ciphersuites(s1, "TLS_AES_128_CCM_SHA256");
	CHECK(pair_new(&pp, s1, cctx, "TLS_AES_128_CCM_SHA256") < 0, "CCM handed over");
	pair_free(&pp);
	SSL_CTX_free(c12);
	SSL_CTX_free(cctx);
	SSL_CTX_free(s0);
	SSL_CTX_free(s1);
	SSL_CTX_free(s2);
	return check_done();
}
