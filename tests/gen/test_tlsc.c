/* tests/gen/test_tlsc.c — gen/tlsc.c (the generator's TLS client) against
 * an OpenSSL server over memory BIOs, certificates made here with the
 * OpenSSL API (nothing on disk but a throwaway CA file):
 *   TLS 1.2 and 1.3 handshakes, PDUs both ways, responses split across
 *   records and several in one record; resumption per slot and shared,
 *   off, and refused by a server with other ticket keys; verification
 *   against a CA and the server's address, and its failures with their
 *   reason; a version mismatch; garbage; a server gone mid-handshake;
 *   close_notify; write before the handshake; a PDU larger than the carry
 *   buffer; StartTLS accepted, refused, and answered with something else.
 * Exits non-zero on any failure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "gen/tlsc.h"
#include "tests/check.h"

/* ---- a certificate and a server ---- */

static X509 *mkcert(EVP_PKEY *k, const char *cn, const char *ip)
{
	static long serial = 1;
	X509 *x = X509_new();
	X509V3_CTX v;
	char san[64];

	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
	X509_gmtime_adj(X509_getm_notBefore(x), -60);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, k);
	X509_NAME *n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, n);
	X509V3_set_ctx_nodb(&v);
	X509V3_set_ctx(&v, x, x, NULL, NULL, 0);
	snprintf(san, sizeof(san), "IP:%s", ip);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v, NID_subject_alt_name, san);
	X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	X509_sign(x, k, EVP_sha256());
	return x;
}

/* A server context: a P-256 (or RSA-2048) self-signed certificate naming
 * 127.0.0.1; TLS versions lo..hi; tickets on (OpenSSL's default). */
static SSL_CTX *mkserver(X509 **cert_out, int lo, int hi, bool rsa)
{
	EVP_PKEY *k = rsa ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256");
	X509 *x = mkcert(k, "server", "127.0.0.1");
	SSL_CTX *s = SSL_CTX_new(TLS_server_method());

	SSL_CTX_set_min_proto_version(s, lo);
	SSL_CTX_set_max_proto_version(s, hi);
	if (SSL_CTX_use_certificate(s, x) != 1 || SSL_CTX_use_PrivateKey(s, k) != 1)
		CHECK(0, "server certificate");
	EVP_PKEY_free(k);
	if (cert_out)
		*cert_out = x;
	else
		X509_free(x);
	return s;
}

/* The certificate as a CA file (PEM), in a temp file the caller unlinks. */
static void write_pem(X509 *x, char *path, size_t cap)
{
	snprintf(path, cap, "/tmp/test_tlsc.XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK(f && PEM_write_X509(f, x) == 1, "write %s", path);
	if (f)
		fclose(f);
}

struct srv {
	SSL *ssl;
	BIO *rbio, *wbio;
	uint8_t got[65536];   /* plaintext the server read */
	size_t got_len;
};

static void srv_open(struct srv *s, SSL_CTX *ctx)
{
	memset(s, 0, sizeof(*s));
	s->ssl = SSL_new(ctx);
	s->rbio = BIO_new(BIO_s_mem());
	s->wbio = BIO_new(BIO_s_mem());
	BIO_set_mem_eof_return(s->rbio, -1);
	SSL_set_bio(s->ssl, s->rbio, s->wbio);
	SSL_set_accept_state(s->ssl);
}

static void srv_close(struct srv *s)
{
	SSL_free(s->ssl);
	ERR_clear_error();
}

/* The app side of the client: "PDUs" are one length byte then that many
 * bytes; whole ones are appended to seen[], the rest left. */
struct app {
	uint8_t seen[200000];
	size_t seen_len;
	unsigned calls;
	bool take_nothing;
};

static size_t take(void *arg, const uint8_t *p, size_t n)
{
	struct app *a = arg;
	size_t used = 0;

	a->calls++;
	if (a->take_nothing)
		return 0;
	while (used < n && n - used > p[used]) {
		size_t l = 1u + p[used];
		memcpy(a->seen + a->seen_len, p + used, l);
		a->seen_len += l;
		used += l;
	}
	return used;
}

/* Move bytes both ways until nothing moves. Returns the first negative
 * lfe_tlsc_input result, else LFE_TLSC_UP if one was seen, else 0. */
static int pump(struct lfe_tlsc_conn *c, struct srv *s, struct app *a)
{
	uint8_t buf[32768];
	int ret = 0;

	for (int round = 0; round < 50; round++) {
		bool moved = false;
		size_t n = lfe_tlsc_out(c, buf, sizeof(buf));
		if (n) {
			BIO_write(s->rbio, buf, (int)n);
			moved = true;
		}
		if (!SSL_is_init_finished(s->ssl)) {
			SSL_do_handshake(s->ssl);
		} else {
			size_t r;
			while (SSL_read_ex(s->ssl, s->got + s->got_len, sizeof(s->got) - s->got_len, &r) == 1)
				s->got_len += r;
		}
		ERR_clear_error();
		int m = BIO_read(s->wbio, buf, sizeof(buf));
		if (m > 0) {
			int rc = lfe_tlsc_input(c, buf, (size_t)m, take, a);
			if (rc < 0 && ret >= 0)
				ret = rc;
			else if (rc == LFE_TLSC_UP && ret == 0)
				ret = rc;
			moved = true;
		}
		if (!moved)
			break;
	}
	return ret;
}

static void srv_write(struct srv *s, const void *p, size_t n)
{
	size_t w;
	CHECK(SSL_write_ex(s->ssl, p, n, &w) == 1 && w == n, "server write");
}

/* ---- cases ---- */

static void test_versions_and_pdus(void)
{
	/* The last: TLS 1.3 with OpenSSL's records throughout. */
	static const int ver[] = { 12, 13, 0, 13 };
	static const char *const want[] = { "TLSv1.2", "TLSv1.3", "TLSv1.3", "TLSv1.3" };
	static const uint64_t handed[] = { 0, 1, 1, 0 };

	for (size_t i = 0; i < 4; i++) {
		SSL_CTX *sc = mkserver(NULL, TLS1_2_VERSION, TLS1_3_VERSION, false);
		struct lfe_tlsc_cfg cfg = { .version = ver[i],
					    .records = i == 3 ? LFE_TLSC_RECORDS_OPENSSL : LFE_TLSC_RECORDS_LDAPFE };
		char err[256];
		struct lfe_tlsc *t = lfe_tlsc_new(&cfg, err, sizeof(err));
		CHECK(t, "new: %s", err);
		struct lfe_tlsc_conn *c = lfe_tlsc_conn_new(t, 0);
		static struct app a;
		memset(&a, 0, sizeof(a));
		struct srv s;
		srv_open(&s, sc);
		CHECK(lfe_tlsc_out_pending(c) > 0, "ClientHello waits to be sent");
		CHECK(!lfe_tlsc_up(c) && lfe_tlsc_write(c, "x", 1) == -EAGAIN, "write before up");
		CHECK(pump(c, &s, &a) == LFE_TLSC_UP && lfe_tlsc_up(c), "v%d: handshake", ver[i]);
		CHECK(strcmp(lfe_tlsc_last_protocol(t), want[i]) == 0, "v%d: protocol %s", ver[i],
		      lfe_tlsc_last_protocol(t));
		CHECK(lfe_tlsc_stats(t)->handshakes_full == 1 && lfe_tlsc_stats(t)->handshakes_resumed == 0,
		      "v%d: one full handshake", ver[i]);

		/* Client to server: one PDU, one record. */
		CHECK(lfe_tlsc_write(c, "\x03" "abc", 4) == 0, "write");
		CHECK(pump(c, &s, &a) == 0 && s.got_len == 4 && memcmp(s.got, "\x03" "abc", 4) == 0,
		      "server got the PDU");
		/* Server to client: a PDU split over two records, then two in one. */
		srv_write(&s, "\x05" "he", 3);
		CHECK(pump(c, &s, &a) == 0 && a.seen_len == 0, "half a PDU is held");
		srv_write(&s, "llo" "\x01" "z" "\x02" "yy", 8);
		CHECK(pump(c, &s, &a) == 0 && a.seen_len == 11 &&
		      memcmp(a.seen, "\x05" "hello" "\x01" "z" "\x02" "yy", 11) == 0,
		      "joined PDU then two more: %zu bytes", a.seen_len);
		/* close_notify from the server: no error, nothing more read. */
		SSL_shutdown(s.ssl);
		CHECK(pump(c, &s, &a) == 0 && lfe_tlsc_peer_closed(c) && !lfe_tlsc_failed(c),
		      "close_notify");
		CHECK(lfe_tlsc_stats(t)->handshake_failures == 0 && lfe_tlsc_stats(t)->record_errors == 0,
		      "no errors");
		/* OpenSSL's server sends two tickets after a TLS 1.3 handshake:
		 * after the handover they are skipped, before it OpenSSL reads
		 * them. */
		const struct lfe_tlsc_stats *st = lfe_tlsc_stats(t);
		CHECK(st->handovers == handed[i] && st->handover_declined == 0 &&
		      st->tickets_skipped == 2 * handed[i] &&
		      strcmp(lfe_tlsc_records(t), i == 3 ? "openssl" : "ldapfe") == 0,
		      "v%d/%zu: handovers %llu tickets %llu", ver[i], i, (unsigned long long)st->handovers,
		      (unsigned long long)st->tickets_skipped);
		lfe_tlsc_conn_free(c);
		srv_close(&s);
		lfe_tlsc_free(t);
		SSL_CTX_free(sc);
	}
}

/* Open, handshake, PDU round trip, close_notify both ways, in slot. */
static bool session_once(struct lfe_tlsc *t, SSL_CTX *sc, uint32_t slot)
{
	static struct app a;
	struct srv s;
	memset(&a, 0, sizeof(a));
	struct lfe_tlsc_conn *c = lfe_tlsc_conn_new(t, slot);
	srv_open(&s, sc);
	bool ok = pump(c, &s, &a) == LFE_TLSC_UP;
	ok = ok && lfe_tlsc_write(c, "\x01" "q", 2) == 0 && pump(c, &s, &a) == 0 && s.got_len == 2;
	srv_write(&s, "\x01" "r", 2);
	ok = ok && pump(c, &s, &a) == 0 && a.seen_len == 2;
	lfe_tlsc_shutdown(c);
	pump(c, &s, &a);
	lfe_tlsc_conn_free(c);
	srv_close(&s);
	return ok;
}

static void test_resume(void)
{
	static const struct {
		enum lfe_tlsc_resume mode;
		int version;
		uint32_t slots[4];        /* the slots of four sessions in turn */
		uint64_t full, resumed;
	} cases[] = {
		{ LFE_TLSC_RESUME_SLOT, 13, { 0, 0, 1, 0 }, 2, 2 },
		{ LFE_TLSC_RESUME_SLOT, 12, { 0, 0, 1, 1 }, 2, 2 },
		{ LFE_TLSC_RESUME_SHARED, 13, { 0, 1, 2, 3 }, 1, 3 },
		{ LFE_TLSC_RESUME_SHARED, 12, { 0, 1, 2, 3 }, 1, 3 },
		{ LFE_TLSC_RESUME_OFF, 0, { 0, 0, 0, 0 }, 4, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		SSL_CTX *sc = mkserver(NULL, TLS1_2_VERSION, TLS1_3_VERSION, false);
		struct lfe_tlsc_cfg cfg = { .version = cases[i].version, .resume = cases[i].mode, .slots = 4 };
		char err[256];
		struct lfe_tlsc *t = lfe_tlsc_new(&cfg, err, sizeof(err));
		for (int k = 0; k < 4; k++)
			CHECK(session_once(t, sc, cases[i].slots[k]), "resume case %zu: session %d", i, k);
		const struct lfe_tlsc_stats *st = lfe_tlsc_stats(t);
		CHECK(st->handshakes_full == cases[i].full && st->handshakes_resumed == cases[i].resumed &&
		      st->resume_refused == 0,
		      "resume case %zu: full %llu resumed %llu refused %llu, want %llu/%llu", i,
		      (unsigned long long)st->handshakes_full, (unsigned long long)st->handshakes_resumed,
		      (unsigned long long)st->resume_refused, (unsigned long long)cases[i].full,
		      (unsigned long long)cases[i].resumed);
		char *rep = NULL, want[160];
		size_t rep_len = 0;
		FILE *mf = open_memstream(&rep, &rep_len);
		lfe_tlsc_report(t, mf, true);
		fclose(mf);
		snprintf(want, sizeof(want), "\"handshakes_full\": %llu, \"handshakes_resumed\": %llu, "
			 "\"resume_refused\": 0, \"handshake_failures\": 0,",
			 (unsigned long long)cases[i].full, (unsigned long long)cases[i].resumed);
		/* Resumption needs the tickets: OpenSSL keeps the records. */
		const char *rec = cases[i].mode == LFE_TLSC_RESUME_OFF
					  ? (cases[i].version == 12 ? "\"records\": \"ldapfe\", \"handovers\": 0,"
								    : "\"records\": \"ldapfe\", \"handovers\": 4,")
					  : "\"records\": \"openssl\", \"handovers\": 0,";
		CHECK(rep && strncmp(rep, "  \"tls\": {\"protocol\": \"TLSv1.", 29) == 0 && strstr(rep, want) &&
		      strstr(rep, rec) && strcmp(rep + rep_len - 4, "\"},\n") == 0,
		      "resume case %zu: JSON %s", i, rep);
		free(rep);
		CHECK(cases[i].mode == LFE_TLSC_RESUME_OFF ? st->sessions_saved == 0 : st->sessions_saved > 0,
		      "resume case %zu: sessions saved %llu", i, (unsigned long long)st->sessions_saved);
		/* A server with other ticket keys (a restart): the offer is
		 * refused, a full handshake follows, and it is counted. */
		if (cases[i].mode != LFE_TLSC_RESUME_OFF) {
			SSL_CTX *other = mkserver(NULL, TLS1_2_VERSION, TLS1_3_VERSION, false);
			CHECK(session_once(t, other, 0), "resume case %zu: other server", i);
			CHECK(st->resume_refused == 1 && st->handshakes_full == cases[i].full + 1,
			      "resume case %zu: refused %llu", i, (unsigned long long)st->resume_refused);
			SSL_CTX_free(other);
		}
		lfe_tlsc_free(t);
		SSL_CTX_free(sc);
	}
}

/* Handshake against sc with cfg: the result of pump, and the stats. */
static int handshake(const struct lfe_tlsc_cfg *cfg, SSL_CTX *sc, char *why, size_t whylen,
		     uint64_t *failures_out)
{
	char err[256];
	struct lfe_tlsc *t = lfe_tlsc_new(cfg, err, sizeof(err));
	static struct app a;
	struct srv s;

	CHECK(t, "new: %s", err);
	if (!t)
		return -1;
	memset(&a, 0, sizeof(a));
	struct lfe_tlsc_conn *c = lfe_tlsc_conn_new(t, 0);
	srv_open(&s, sc);
	int rc = pump(c, &s, &a);
	snprintf(why, whylen, "%s", lfe_tlsc_first_error(t));
	*failures_out = lfe_tlsc_stats(t)->handshake_failures;
	if (rc < 0)
		CHECK(lfe_tlsc_failed(c) && !lfe_tlsc_up(c) && lfe_tlsc_write(c, "x", 1) == -EIO &&
		      lfe_tlsc_input(c, NULL, 0, take, &a) == -EPROTO, "a failed connection stays failed");
	lfe_tlsc_conn_free(c);
	srv_close(&s);
	lfe_tlsc_free(t);
	return rc;
}

static void test_verify(void)
{
	X509 *x, *y;
	char ca[64], other[64], why[256];
	uint64_t nf;
	SSL_CTX *sc = mkserver(&x, TLS1_2_VERSION, TLS1_3_VERSION, false);
	SSL_CTX *sc_rsa = mkserver(&y, TLS1_2_VERSION, TLS1_3_VERSION, true);

	write_pem(x, ca, sizeof(ca));
	write_pem(y, other, sizeof(other));
	struct lfe_tlsc_cfg good = { .ca_file = ca, .verify_ip = "127.0.0.1" };
	CHECK(handshake(&good, sc, why, sizeof(why), &nf) == LFE_TLSC_UP && nf == 0 && !why[0],
	      "verified: %s", why);
	struct lfe_tlsc_cfg good_rsa = { .ca_file = other, .verify_ip = "127.0.0.1", .version = 12 };
	CHECK(handshake(&good_rsa, sc_rsa, why, sizeof(why), &nf) == LFE_TLSC_UP && nf == 0,
	      "RSA, TLS 1.2, verified: %s", why);
	struct lfe_tlsc_cfg wrong_ca = { .ca_file = other, .verify_ip = "127.0.0.1" };
	CHECK(handshake(&wrong_ca, sc, why, sizeof(why), &nf) == -EPROTO && nf == 1 &&
	      strncmp(why, "handshake: ", 11) == 0 && strstr(why, "certificate"),
	      "another CA: refused with a reason: \"%s\"", why);
	struct lfe_tlsc_cfg wrong_ip = { .ca_file = ca, .verify_ip = "127.0.0.2" };
	CHECK(handshake(&wrong_ip, sc, why, sizeof(why), &nf) == -EPROTO && nf == 1 &&
	      strstr(why, "IP address mismatch"), "another address: \"%s\"", why);
	struct lfe_tlsc_cfg none = { .verify_ip = "127.0.0.2" };   /* no CA: nothing checked */
	CHECK(handshake(&none, sc, why, sizeof(why), &nf) == LFE_TLSC_UP, "unverified: %s", why);

	/* A client for 1.2 only against a server for 1.3 only. */
	SSL_CTX *sc13 = mkserver(NULL, TLS1_3_VERSION, TLS1_3_VERSION, false);
	struct lfe_tlsc_cfg v12 = { .version = 12 };
	CHECK(handshake(&v12, sc13, why, sizeof(why), &nf) == -EPROTO && nf == 1 && why[0],
	      "version mismatch: \"%s\"", why);

	char err[256];
	struct lfe_tlsc_cfg missing = { .ca_file = "/nonexistent/ca.pem" };
	CHECK(lfe_tlsc_new(&missing, err, sizeof(err)) == NULL &&
	      strncmp(err, "--tls-ca /nonexistent/ca.pem: cannot load", 41) == 0, "missing CA: %s", err);
	unlink(ca);
	unlink(other);
	X509_free(x);
	X509_free(y);
	SSL_CTX_free(sc);
	SSL_CTX_free(sc_rsa);
	SSL_CTX_free(sc13);
}

/* StartTLS: the request in clear, the response (split in two) decides. */
static void test_starttls(void)
{
	static const uint8_t req[] = "\x30\x1d\x02\x01\x01\x77\x18\x80\x16" "1.3.6.1.4.1.1466.20037";
	static const struct {
		uint8_t resp[16];
		int want;
		const char *why;
	} cases[] = {
		{ { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x78, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 },
		  LFE_TLSC_UP, "" },
		{ { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x78, 0x07, 0x0a, 0x01, 0x01, 0x04, 0x00, 0x04, 0x00 },
		  -EPROTO, "handshake: StartTLS refused: resultCode 1" },
		{ { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 },
		  -EPROTO, "handshake: StartTLS: not a StartTLS response" },
		{ { 0x30, 0x0c, 0x02, 0x01, 0x02, 0x78, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 },
		  -EPROTO, "handshake: StartTLS: not a StartTLS response" },
		{ { 0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00 },
		  -EPROTO, "handshake: StartTLS: not a StartTLS response" },
	};
	SSL_CTX *sc = mkserver(NULL, TLS1_2_VERSION, TLS1_3_VERSION, false);

	for (size_t k = 0; k < 2 * sizeof(cases) / sizeof(cases[0]); k++) {
		size_t i = k / 2;
		bool split = k % 2;
		struct lfe_tlsc_cfg cfg = { .starttls = true };
		char err[256];
		struct lfe_tlsc *t = lfe_tlsc_new(&cfg, err, sizeof(err));
		struct lfe_tlsc_conn *c = lfe_tlsc_conn_new(t, 0);
		static struct app a;
		uint8_t out[64];
		memset(&a, 0, sizeof(a));
		size_t n = lfe_tlsc_out(c, out, sizeof(out));
		CHECK(n == sizeof(req) - 1 && memcmp(out, req, n) == 0, "starttls %zu: the request", i);
		/* Half a response waits (garbage fails at once); or all at once. */
		int rc;
		if (split) {
			rc = lfe_tlsc_input(c, cases[i].resp, 5, take, &a);
			CHECK(rc == (cases[i].resp[0] == 0x30 ? 0 : -EPROTO) && lfe_tlsc_out_pending(c) == 0,
			      "starttls %zu: the first 5 bytes: %d", i, rc);
			if (rc == 0)
				rc = lfe_tlsc_input(c, cases[i].resp + 5, 9, take, &a);
		} else {
			rc = lfe_tlsc_input(c, cases[i].resp, 14, take, &a);
		}
		if (cases[i].want == LFE_TLSC_UP) {
			struct srv s;
			srv_open(&s, sc);
			CHECK(rc == 0 && lfe_tlsc_out_pending(c) > 0, "starttls %zu: ClientHello", i);
			CHECK(pump(c, &s, &a) == LFE_TLSC_UP && lfe_tlsc_write(c, "\x01" "q", 2) == 0 &&
			      pump(c, &s, &a) == 0 && s.got_len == 2, "starttls %zu: TLS after", i);
			srv_close(&s);
		} else {
			CHECK(rc == cases[i].want && lfe_tlsc_stats(t)->handshake_failures == 1 &&
			      strcmp(lfe_tlsc_first_error(t), cases[i].why) == 0,
			      "starttls %zu: rc %d, \"%s\"", i, rc, lfe_tlsc_first_error(t));
		}
		lfe_tlsc_conn_free(c);
		lfe_tlsc_free(t);
	}
	SSL_CTX_free(sc);
}

/* After the handover (ldapfe's records, TLS 1.3): records split across
 * inputs at every size, a PDU over several records, a KeyUpdate the
 * server requests, close_notify to the server, a forged record answered
 * with an alert. */
static void test_handover(void)
{
	SSL_CTX *sc = mkserver(NULL, TLS1_3_VERSION, TLS1_3_VERSION, false);
	struct lfe_tlsc_cfg cfg = { .version = 13 };
	char err[256];
	struct lfe_tlsc *t = lfe_tlsc_new(&cfg, err, sizeof(err));
	const struct lfe_tlsc_stats *st = lfe_tlsc_stats(t);
	static struct app a;
	static uint8_t want[4096], buf[8192];
	struct srv s;

	srv_open(&s, sc);
	struct lfe_tlsc_conn *c = lfe_tlsc_conn_new(t, 0);
	memset(&a, 0, sizeof(a));
	CHECK(pump(c, &s, &a) == LFE_TLSC_UP && st->handovers == 1 && st->tickets_skipped == 2,
	      "handed over: %llu, tickets %llu", (unsigned long long)st->handovers,
	      (unsigned long long)st->tickets_skipped);

	/* Records fed in pieces of 1..13 bytes: PDUs of every length up to
	 * 255, several records in flight, each split somewhere. */
	size_t want_len = 0;
	for (unsigned len = 0; len < 256; len += 17) {
		uint8_t pdu[256];
		pdu[0] = (uint8_t)len;
		for (unsigned j = 1; j <= len; j++)
			pdu[j] = (uint8_t)(j * 7 + len);
		srv_write(&s, pdu, len + 1u);
		memcpy(want + want_len, pdu, len + 1u);
		want_len += len + 1u;
	}
	int n = BIO_read(s.wbio, buf, sizeof(buf)), rc = 0;
	for (int off = 0, step = 1; off < n && rc == 0; off += step, step = step % 13 + 1)
		rc = lfe_tlsc_input(c, buf + off, (size_t)(off + step <= n ? step : n - off), take, &a);
	CHECK(rc == 0 && a.seen_len == want_len && memcmp(a.seen, want, want_len) == 0,
	      "split records: rc %d, %zu of %zu bytes", rc, a.seen_len, want_len);

	/* A PDU of 40,000 bytes: three records to the server. */
	static uint8_t big[40000];
	for (size_t j = 0; j < sizeof(big); j++)
		big[j] = (uint8_t)(j * 13);
	s.got_len = 0;
	CHECK(lfe_tlsc_write(c, big, sizeof(big)) == 0 && pump(c, &s, &a) == 0 &&
	      s.got_len == sizeof(big) && memcmp(s.got, big, sizeof(big)) == 0,
	      "a PDU over three records: %zu bytes", s.got_len);

	/* The server asks for our KeyUpdate: both sides go on with new keys. */
	CHECK(SSL_key_update(s.ssl, SSL_KEY_UPDATE_REQUESTED) == 1, "server KeyUpdate");
	a.seen_len = 0;
	srv_write(&s, "\x01" "k", 2);
	s.got_len = 0;
	CHECK(pump(c, &s, &a) == 0 && a.seen_len == 2 && lfe_tlsc_write(c, "\x01" "u", 2) == 0 &&
	      pump(c, &s, &a) == 0 && s.got_len == 2 && memcmp(s.got, "\x01" "u", 2) == 0,
	      "after a requested KeyUpdate: %zu, %zu", a.seen_len, s.got_len);

	/* close_notify to the server. */
	lfe_tlsc_shutdown(c);
	pump(c, &s, &a);
	CHECK(SSL_get_shutdown(s.ssl) & SSL_RECEIVED_SHUTDOWN, "the server got close_notify");
	CHECK(st->record_errors == 0 && !lfe_tlsc_failed(c), "no errors");
	lfe_tlsc_conn_free(c);
	srv_close(&s);

	/* A forged record: the connection fails with a reason and owes the
	 * server a bad_record_mac alert, which the server reads as one. */
	srv_open(&s, sc);
	c = lfe_tlsc_conn_new(t, 0);
	memset(&a, 0, sizeof(a));
	CHECK(pump(c, &s, &a) == LFE_TLSC_UP && st->handovers == 2, "handshake 2");
	uint8_t rec[5 + 40] = { 0x17, 0x03, 0x03, 0x00, 40 };
	CHECK(lfe_tlsc_input(c, rec, sizeof(rec), take, &a) == -EPROTO && st->record_errors == 1 &&
	      strcmp(lfe_tlsc_first_error(t), "after the handshake: bad record mac") == 0 &&
	      lfe_tlsc_write(c, "x", 1) == -EIO, "forged record: \"%s\"", lfe_tlsc_first_error(t));
	n = (int)lfe_tlsc_out(c, buf, sizeof(buf));
	size_t r;
	BIO_write(s.rbio, buf, n);
	bool refused = n > 0 && SSL_read_ex(s.ssl, buf, sizeof(buf), &r) != 1;
	const char *why = ERR_reason_error_string(ERR_peek_error());
	CHECK(refused && why && strstr(why, "bad record mac"), "the alert: %d bytes, %s", n,
	      why ? why : "no reason");
	lfe_tlsc_conn_free(c);
	srv_close(&s);
	lfe_tlsc_free(t);
	SSL_CTX_free(sc);
}

static void test_bad_input(void)
{
	struct lfe_tlsc_cfg cfg = { 0 };
	char err[256];
	struct lfe_tlsc *t = lfe_tlsc_new(&cfg, err, sizeof(err));
	static struct app a;

	/* Garbage where the ServerHello should be. */
	struct lfe_tlsc_conn *c = lfe_tlsc_conn_new(t, 0);
	uint8_t junk[64];
	memset(junk, 'A', sizeof(junk));
	CHECK(lfe_tlsc_input(c, junk, sizeof(junk), take, &a) == -EPROTO && lfe_tlsc_failed(c),
	      "garbage fails the handshake");
	CHECK(lfe_tlsc_stats(t)->handshake_failures == 1, "counted");
	lfe_tlsc_conn_free(c);

	/* The server closed before answering: a failure, counted once. */
	c = lfe_tlsc_conn_new(t, 0);
	lfe_tlsc_peer_gone(c);
	lfe_tlsc_peer_gone(c);
	CHECK(lfe_tlsc_failed(c) && lfe_tlsc_stats(t)->handshake_failures == 2, "closed mid-handshake");
	lfe_tlsc_conn_free(c);

	/* A PDU that never completes beyond the carry bound: -EMSGSIZE. */
	SSL_CTX *sc = mkserver(NULL, TLS1_2_VERSION, TLS1_3_VERSION, false);
	struct srv s;
	srv_open(&s, sc);
	c = lfe_tlsc_conn_new(t, 0);
	memset(&a, 0, sizeof(a));
	CHECK(pump(c, &s, &a) == LFE_TLSC_UP, "handshake");
	lfe_tlsc_peer_gone(c);   /* up: not a handshake failure */
	CHECK(!lfe_tlsc_failed(c) && lfe_tlsc_stats(t)->handshake_failures == 2, "gone after the handshake");
	a.take_nothing = true;
	static uint8_t big[16000];
	int rc = 0;
	for (int k = 0; k < 8 && rc == 0; k++) {
		srv_write(&s, big, sizeof(big));
		rc = pump(c, &s, &a);
	}
	CHECK(rc == -EMSGSIZE && lfe_tlsc_failed(c) && lfe_tlsc_stats(t)->record_errors == 1,
	      "unconsumed plaintext is bounded: rc %d", rc);
	lfe_tlsc_conn_free(c);
	srv_close(&s);

	/* A record the server garbles after the handshake. */
	srv_open(&s, sc);
	c = lfe_tlsc_conn_new(t, 0);
	memset(&a, 0, sizeof(a));
	CHECK(pump(c, &s, &a) == LFE_TLSC_UP, "handshake 2");
	uint8_t rec[5 + 40] = { 0x17, 0x03, 0x03, 0x00, 40 };
	CHECK(lfe_tlsc_input(c, rec, sizeof(rec), take, &a) == -EPROTO &&
	      lfe_tlsc_stats(t)->record_errors == 2, "a forged record fails the connection");
	lfe_tlsc_conn_free(c);
	srv_close(&s);
	lfe_tlsc_free(t);
	SSL_CTX_free(sc);
	lfe_tlsc_conn_free(NULL);
	lfe_tlsc_free(NULL);
	char *rep = NULL;
	size_t rep_len = 0;
	FILE *mf = open_memstream(&rep, &rep_len);
	lfe_tlsc_report(NULL, mf, true);
	fclose(mf);
	CHECK(rep && strcmp(rep, "  \"tls\": null,\n") == 0, "no TLS: null");
	free(rep);
}

int main(void)
{
	test_versions_and_pdus();
	test_resume();
	test_verify();
	test_starttls();
	test_handover();
	test_bad_input();
	return check_done();
}
