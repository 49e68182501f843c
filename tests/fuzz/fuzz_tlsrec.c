/* tests/fuzz/fuzz_tlsrec.c — ldapfe's TLS 1.3 record layer
 * (tls/tlsrec.h) against OpenSSL's, records both ways.
 *
 * Per input: a real TLS 1.3 handshake between two OpenSSL objects over
 * memory BIOs (the suite from byte 0), the server handed over to tlsrec
 * as tls/stream.c does it (secrets from the keylog callback, write
 * sequence number = the records of the last step). Then the rest of the
 * input is a list of operations (one byte each, then its arguments):
 *   0 n   OpenSSL's client writes n+1 bytes (one record or more): tlsrec
 *         opens them, fed in pieces of the next byte's size; the
 *         plaintext must be exactly what was written
 *   1 n   tlsrec seals n bytes (0 = an empty record): OpenSSL's client
 *         must read exactly them
 *   2 r   the client sends a KeyUpdate (requested when r is odd)
 *   3 l   tlsrec's usage limit lowered to l+2 records (our KeyUpdates)
 *   4 n   n raw fuzzer bytes to tlsrec as the client's (garbage: must
 *         fail or be whole records; then the input ends)
 *   5 n   n fuzzer bytes sealed by tlsrec as a whole TLSInnerPlaintext
 *         (any content type) to OpenSSL's client, which takes or refuses
 *         them; then the input ends
 * Checks: the plaintext both ways; tlsrec refuses a record OpenSSL made
 * only for a KeyUpdate past its budgets (8 in a row with no data between,
 * 32 with no clock), counted here the same way; no sanitizer report.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "tls/tlsrec.h"

static SSL_CTX *sctx, *cctx;

static void setup(void)
{
	EVP_PKEY *pk = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	sctx = SSL_CTX_new(TLS_server_method());
	cctx = SSL_CTX_new(TLS_client_method());
	if (pk == NULL || x == NULL || sctx == NULL || cctx == NULL)
		abort();
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, pk);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	if (X509_sign(x, pk, EVP_sha256()) == 0 || SSL_CTX_use_certificate(sctx, x) != 1 ||
	    SSL_CTX_use_PrivateKey(sctx, pk) != 1)
		abort();
	SSL_CTX_set_num_tickets(sctx, 1);
	SSL_CTX_set_keylog_callback(sctx, lfe_tlsrec_keylog);
	SSL_CTX_set_ciphersuites(sctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
				       "TLS_CHACHA20_POLY1305_SHA256");
	SSL_CTX_set_min_proto_version(cctx, TLS1_3_VERSION);
	X509_free(x);
	EVP_PKEY_free(pk);
}

static void pipe_bytes(SSL *from, SSL *to)
{
	uint8_t buf[4096];
	int n;
	while ((n = BIO_read(SSL_get_wbio(from), buf, sizeof buf)) > 0)
		BIO_write(SSL_get_rbio(to), buf, n);
}

static size_t bio_data(BIO *b, const uint8_t **p)
{
	char *q = NULL;
	long n = BIO_get_mem_data(b, &q);
	*p = (const uint8_t *)q;
	return n > 0 ? (size_t)n : 0;
}

/* The handshake and the handover: the client SSL and the server's tlsrec. */
static struct lfe_tlsrec *pair(const char *suite, SSL **cli_out)
{
	SSL *srv = SSL_new(sctx), *cli = SSL_new(cctx);
	struct lfe_tlsrec_secrets sec;
	struct lfe_tlsrec *r = NULL;
	uint64_t wseq = 0;
	int done = 0, err;

	if (srv == NULL || cli == NULL)
		abort();
	SSL_set_bio(srv, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
	SSL_set_bio(cli, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
	SSL_set_accept_state(srv);
	SSL_set_connect_state(cli);
	SSL_set_ciphersuites(cli, suite);
	if (lfe_tlsrec_watch(srv, &sec) < 0)
		abort();
	for (int i = 0; i < 10 && !done; i++) {
		SSL_do_handshake(cli);
		pipe_bytes(cli, srv);
		const uint8_t *p;
		size_t mark = bio_data(SSL_get_wbio(srv), &p);
		done = SSL_do_handshake(srv) == 1;
		if (done) {
			size_t n = bio_data(SSL_get_wbio(srv), &p);
			int c = lfe_tlsrec_count_records(p + mark, n - mark);
			if (c < 0)
				abort();
			wseq = (uint64_t)c;
		}
		pipe_bytes(srv, cli);
	}
	if (!done || SSL_pending(srv) || SSL_has_pending(srv))
		abort();
	r = lfe_tlsrec_new(srv, &sec, wseq, &err);
	SSL_free(srv);
	ERR_clear_error();
	if (r == NULL)
		abort();
	*cli_out = cli;
	return r;
}

static uint8_t plain[LFE_TLSREC_PLAIN_MAX + 256], rec[2 * LFE_TLSREC_MAX + 64];
static uint8_t msg[2 * LFE_TLSREC_PLAIN_MAX], got[4 * LFE_TLSREC_PLAIN_MAX];   /* msg: up to 17,086 bytes (op 0) */

/* The client's budget model (tlsrec.h): KeyUpdates since the last
 * non-empty data record, and in all (no clock: the burst is the budget). */
static unsigned ku_run, ku_all;

/* tlsrec opens everything the client wrote, in pieces of `piece` bytes
 * (0: whole). Returns false once tlsrec refused (allowed only past the
 * budgets: abort otherwise); the plaintext goes to got. */
static bool server_reads(struct lfe_tlsrec *r, SSL *cli, size_t piece, size_t *got_len)
{
	const uint8_t *p;
	size_t n = bio_data(SSL_get_wbio(cli), &p), off = 0, avail = 0;
	bool ok = true;

	while (off < n) {
		size_t m, need;
		avail = piece ? (avail + piece < n - off ? avail + piece : n - off) : n - off;
		int rc = lfe_tlsrec_read(r, p + off, avail, plain, sizeof plain, &m, &need);
		if (rc < 0) {
			/* only a KeyUpdate past a budget may be refused */
			if (rc != -EBADMSG || lfe_tlsrec_alert_due(r) != LFE_TLS_ALERT_UNEXPECTED_MESSAGE ||
			    (ku_run <= LFE_TLSREC_KEY_UPDATES_MAX && ku_all <= LFE_TLSREC_KU_BURST))
				abort();
			ok = false;
			break;
		}
		if (rc == 0) {
			if (avail == n - off)
				abort();   /* OpenSSL writes whole records */
			continue;
		}
		memcpy(got + *got_len, plain, m);
		*got_len += m;
		off += (size_t)rc;
		avail -= (size_t)rc;
	}
	(void)BIO_reset(SSL_get_wbio(cli));
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const suites[] = { "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
					      "TLS_CHACHA20_POLY1305_SHA256" };
	if (sctx == NULL)
		setup();
	if (size < 1)
		return 0;
	SSL *cli;
	struct lfe_tlsrec *r = pair(suites[data[0] % 3], &cli);
	size_t off = 1;
	uint8_t fill = 0;
	bool live = true;

	ku_run = ku_all = 0;
	while (live && off + 2 <= size) {
		uint8_t op = data[off] % 6, a = data[off + 1];
		off += 2;
		size_t got_len = 0, w = 0;
		switch (op) {
		case 0: {
			size_t n = (size_t)a * 67 + 1;   /* 1 .. 17,086: over one record too */
			for (size_t i = 0; i < n; i++)
				msg[i] = fill++;
			if (SSL_write_ex(cli, msg, n, &w) != 1 || w != n)
				abort();
			size_t piece = off < size ? data[off++] : 0;
			live = server_reads(r, cli, piece, &got_len);
			if (live && (got_len != n || memcmp(got, msg, n) != 0))
				abort();
			if (live)
				ku_run = 0;
			break;
		}
		case 1: {
			size_t n = (size_t)a * 64;   /* 0 .. 16,320 */
			for (size_t i = 0; i < n; i++)
				msg[i] = fill++;
			int k = lfe_tlsrec_write(r, msg, n, rec, sizeof rec);
			if (k <= 0)
				abort();
			BIO_write(SSL_get_rbio(cli), rec, k);
			size_t total = 0, g = 0;
			while (total < n && SSL_read_ex(cli, got + total, n - total, &g) == 1)
				total += g;
			if (total != n || memcmp(got, msg, n) != 0)
				abort();
			if (n == 0)   /* OpenSSL still processes a KeyUpdate before it */
				(void)SSL_read_ex(cli, got, 1, &g);
			ERR_clear_error();
			break;
		}
		case 2:
			if (SSL_key_update(cli, a & 1 ? SSL_KEY_UPDATE_REQUESTED
						   : SSL_KEY_UPDATE_NOT_REQUESTED) != 1 ||
			    SSL_do_handshake(cli) != 1)
				abort();
			ku_run++;
			ku_all++;
			live = server_reads(r, cli, 0, &got_len);
			break;
		case 3:
			lfe_tlsrec_set_write_limit(r, (uint64_t)a + 2);
			break;
		case 4: {
			size_t n = a < size - off ? a : size - off, m, need;
			(void)lfe_tlsrec_read(r, data + off, n, plain, sizeof plain, &m, &need);
			live = false;
			break;
		}
		case 5: {
			size_t n = a < size - off ? a : size - off;
			if (n) {
				int k = lfe_tlsrec_seal_inner(r, data + off, n, rec, sizeof rec);
				if (k > 0) {
					BIO_write(SSL_get_rbio(cli), rec, k);
					size_t g = 0;
					(void)SSL_read_ex(cli, got, sizeof got, &g);
				}
			}
			live = false;
			break;
		}
		}
	}
	ERR_clear_error();
	SSL_free(cli);
	lfe_tlsrec_free(r);
	return 0;
}
