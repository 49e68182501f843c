/* tests/bench/bench_tls.c — the server's TLS costs, step by step, on one
 * thread with no network: the daemon's SSL_CTX (lfe_tls_new_opts) and the
 * OpenSSL calls tls/stream.c makes (memory BIOs, handshake steps,
 * flushes in 4 KiB pieces, one record in and one record out per bind),
 * against an in-process OpenSSL client whose time is not counted.
 *
 * usage: bench_tls [iterations [ec|rsa|resumed|resumed12|record|tlsrec|resumed-tlsrec]]
 *        (default 2000 handshakes and 100 times as many records, all rows)
 *
 * Rows, each the median of 5 runs, nanoseconds of the server's calls
 * (thread CPU time: time preempted is not counted, but a loaded machine's
 * shared caches still slow them; compare with `openssl speed` run then):
 *   setup     SSL_new + two memory BIOs (lfe_stream_init_tls)
 *   flight1   the step answering ClientHello (ServerHello .. Finished:
 *             key share, signature, certificate)
 *   flight2   the step taking the client's Finished (ticket issued)
 *   free      SSL_free
 *   record    one bind-sized record in (62 B) and one response out (14 B)
 *             as stream.c's input and output paths do them with OpenSSL
 *             ([tls] record_layer = openssl)
 *   tlsrec    the same with ldapfe's record layer (tls/tlsrec.h:
 *             record_layer = ldapfe, the default; the cipher by OpenSSL's
 *             EVP, one context per direction, only the nonce per record)
 *   resumed-tlsrec  resumption, then the handover to tlsrec (secrets from
 *             the keylog, records counted, keys derived, SSL freed: in
 *             "free")
 * for ECDSA P-256 and RSA-2048 full handshakes and TLS 1.3 resumption.
 * BENCH_TLS_SUITES: the server's [tls] ciphersuites (unset: the default).
 * BENCH_TLS_KEEP_BUFFERS=1: without SSL_MODE_RELEASE_BUFFERS.
 * BENCH_TLS_NO_KEYLOG=1: the server's context without tlsrec's keylog
 * callback (what [tls] record_layer = openssl builds): OpenSSL then formats
 * no keylog line per handshake.
 * BENCH_TLS_CLEAR_ALWAYS=1: ERR_clear_error() after each record's
 * WANT_READ even when nothing is queued (stream.c before clear_errors).
 * For the function breakdown, a count a shared machine does not disturb:
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=server_step \
 *            bench_tls 4 ec          (or --toggle-collect='record*' ... record)
 * (valgrind hides SHA-NI from OpenSSL: SHA-256's gain shows in CPU time only).
 */
#include "tls/stream.h"
#include "tls/tls.h"
#include "tls/tlsrec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tests/tls/testpki.h"

#define RUNS 5

/* This thread's CPU time: on a shared machine, time the thread spent
 * preempted is not counted (wall-clock figures there are several times
 * too high). Each reading costs a system call, calibrated away below. */
static double clock_cost;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns since t0, less one reading's cost */
static double since(double t0)
{
	return now_ns() - t0 - clock_cost;
}

static void calibrate(void)
{
	double t0 = now_ns(), t1 = t0;
	for (int i = 0; i < 10000; i++)
		t1 = now_ns();
	clock_cost = (t1 - t0) / 10000;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct side {
	SSL *ssl;
	BIO *rb, *wb;
	struct lfe_tlsrec *rec;      /* the server after a handover */
	struct lfe_tlsrec_secrets sec;
};

static bool handover_mode;     /* tlsrec rows: hand the server over after its handshake */

static void side_new(struct side *s, SSL_CTX *ctx, bool server)
{
	s->ssl = SSL_new(ctx);
	s->rec = NULL;
	if (server && handover_mode && lfe_tlsrec_watch(s->ssl, &s->sec) < 0)
		exit(1);
	s->rb = BIO_new(BIO_s_mem());
	s->wb = BIO_new(BIO_s_mem());
	if (s->ssl == NULL || s->rb == NULL || s->wb == NULL) {
		fprintf(stderr, "bench_tls: SSL_new failed\n");
		exit(1);
	}
	SSL_set_bio(s->ssl, s->rb, s->wb);
	if (server)
		SSL_set_accept_state(s->ssl);
	else
		SSL_set_connect_state(s->ssl);
}

/* stream.c's tls_flush, into the peer's read BIO instead of TCP. */
static void flush_to(struct side *from, struct side *to)
{
	uint8_t tmp[4096];
	int r;
	while (BIO_ctrl_pending(from->wb) > 0 && (r = BIO_read(from->wb, tmp, sizeof tmp)) > 0)
		BIO_write(to->rb, tmp, r);
}

/* stream.c's handshake step: SSL_do_handshake, SSL_get_error, flush.
 * Not inlined: callgrind --toggle-collect=server_step counts just these. */
static int records_written;    /* by the last server step (handover_mode) */

__attribute__((noinline)) static int server_step(struct side *sv, struct side *cl)
{
	size_t mark = BIO_ctrl_pending(sv->wb);
	int r = SSL_do_handshake(sv->ssl);
	int e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(sv->ssl, r);
	ERR_clear_error();
	if (r == 1 && handover_mode) {   /* stream.c's count of the tickets */
		char *p = NULL;
		long n = BIO_get_mem_data(sv->wb, &p);
		records_written = lfe_tlsrec_count_records((const uint8_t *)p + mark, (size_t)n - mark);
	}
	flush_to(sv, cl);
	return r == 1 ? 1 : e == SSL_ERROR_WANT_READ ? 0 : -1;
}

/* stream.c's handover: keys from the keylog's secrets, the SSL freed. */
__attribute__((noinline)) static int server_handover(struct side *sv)
{
	int err;
	if (records_written < 0 || SSL_pending(sv->ssl) || SSL_has_pending(sv->ssl))
		return -1;
	sv->rec = lfe_tlsrec_new(sv->ssl, &sv->sec, (uint64_t)records_written, &err);
	SSL_free(sv->ssl);
	sv->ssl = NULL;
	return sv->rec ? 0 : -1;
}

/* The client's newest session (a bench has one client thread). */
static SSL_SESSION *last_session;
static bool resumed_expected;
static bool clear_always;       /* BENCH_TLS_CLEAR_ALWAYS: ERR_clear_error() per record, as before */   /* a resumption row: a full handshake is an error */

static int on_new_session(SSL *ssl, SSL_SESSION *s)
{
	(void)ssl;
	SSL_SESSION_free(last_session);
	last_session = s;
	return 1;   /* kept */
}

struct hs_cost {
	double setup, f1, f2, fr;
};

/* One handshake; session in/out for resumption (client side). */
static int handshake(SSL_CTX *sctx, SSL_CTX *cctx, SSL_SESSION **sess, struct hs_cost *c,
		     struct side *keep_sv, struct side *keep_cl)
{
	struct side sv, cl;
	double t0 = now_ns();
	side_new(&sv, sctx, true);
	c->setup += since(t0);
	side_new(&cl, cctx, false);
	if (sess && *sess && SSL_set_session(cl.ssl, *sess) != 1)
		return -1;
	SSL_do_handshake(cl.ssl);               /* ClientHello */
	flush_to(&cl, &sv);
	t0 = now_ns();
	int r = server_step(&sv, &cl);
	c->f1 += since(t0);
	if (r != 0)
		return -1;
	r = SSL_do_handshake(cl.ssl);           /* client Finished (TLS 1.2 full: waits for the server's) */
	if (r != 1 && SSL_get_error(cl.ssl, r) != SSL_ERROR_WANT_READ)
		return -1;
	flush_to(&cl, &sv);
	t0 = now_ns();
	r = server_step(&sv, &cl);
	c->f2 += since(t0);
	if (r != 1)
		return -1;
	if (SSL_do_handshake(cl.ssl) != 1)
		return -1;
	uint8_t b[64];
	size_t n;
	SSL_read_ex(cl.ssl, b, sizeof b, &n);   /* takes the ticket */
	ERR_clear_error();
	if (sess) {   /* the ticket, from on_new_session (TLS 1.2: none when not renewed) */
		if (last_session) {
			SSL_SESSION_free(*sess);
			*sess = last_session;
			last_session = NULL;
		}
		if (resumed_expected && !SSL_session_reused(sv.ssl))
			return -1;
		if (*sess == NULL)
			return -1;
	}
	if (handover_mode) {
		t0 = now_ns();
		r = server_handover(&sv);
		c->fr += since(t0);
		if (r < 0)
			return -1;
	}
	if (keep_sv) {
		*keep_sv = sv;
		*keep_cl = cl;
		return 0;
	}
	t0 = now_ns();
	SSL_free(sv.ssl);
	lfe_tlsrec_free(sv.rec);
	c->fr += since(t0);
	/* Freed without a shutdown, a session is marked not resumable. */
	SSL_set_shutdown(cl.ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(cl.ssl);
	return 0;
}

/* One bind-sized record each way, as stream.c's tls_deliver (SSL_peek,
 * the session, SSL_read of what it took, SSL_peek again: WANT_READ) and
 * lfe_stream_write (SSL_write, flush). */
__attribute__((noinline)) static int record(struct side *sv, const uint8_t *rec, int rec_len,
					    uint8_t *plain, double *ns)
{
	static const uint8_t resp[14] = { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07,
					  0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 };
	double t0 = now_ns();
	BIO_write(sv->rb, rec, rec_len);
	size_t n = 0, m = 0, w = 0;
	if (SSL_pending(sv->ssl) > 0 || !SSL_is_init_finished(sv->ssl))
		return -1;
	if (SSL_peek_ex(sv->ssl, plain, LFE_STREAM_TLS_RECORD, &n) != 1)
		return -1;
	if (SSL_read_ex(sv->ssl, plain, n, &m) != 1 || m != n)
		return -1;
	OPENSSL_cleanse(plain, n);
	if (SSL_peek_ex(sv->ssl, plain, LFE_STREAM_TLS_RECORD, &n) == 1)
		return -1;
	SSL_get_error(sv->ssl, 0);
	if (clear_always || ERR_peek_error() != 0)   /* stream.c's clear_errors() */
		ERR_clear_error();
	if (BIO_ctrl_pending(sv->wb) != 0 || SSL_write_ex(sv->ssl, resp, sizeof resp, &w) != 1)
		return -1;
	uint8_t tmp[4096];
	int r = BIO_read(sv->wb, tmp, sizeof tmp);
	*ns += since(t0);
	return r > 0 ? 0 : -1;
}

/* The same with ldapfe's record layer (stream.c's rec_one and rec_send:
 * open into the core's buffer, wipe it, seal the response). */
__attribute__((noinline)) static int record_tlsrec(struct side *sv, const uint8_t *rec, int rec_len,
						   uint8_t *plain, double *ns)
{
	static const uint8_t resp[14] = { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07,
					  0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 };
	uint8_t out[sizeof resp + LFE_TLSREC_WRITE_OVERHEAD];
	size_t m = 0, need;
	double t0 = now_ns();
	int k = lfe_tlsrec_read(sv->rec, rec, (size_t)rec_len, plain, LFE_STREAM_TLS_RECORD + 256, &m,
				&need);
	if (k != rec_len || m == 0)
		return -1;
	OPENSSL_cleanse(plain, m);
	int w = lfe_tlsrec_write(sv->rec, resp, sizeof resp, out, sizeof out);
	*ns += since(t0);
	return w > 0 ? 0 : -1;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return v[n / 2];
}

static void bench_hs(const char *name, SSL_CTX *sctx, SSL_CTX *cctx, bool resume, long iters)
{
	double s[RUNS], a[RUNS], b[RUNS], f[RUNS], tot[RUNS];
	SSL_SESSION *sess = NULL;
	if (resume) {   /* a first full handshake for the ticket */
		struct hs_cost c0 = { 0 };
		handshake(sctx, cctx, &sess, &c0, NULL, NULL);
	}
	resumed_expected = resume;
	for (int r = 0; r < RUNS; r++) {
		struct hs_cost c = { 0 };
		for (long i = 0; i < iters; i++) {
			if (handshake(sctx, cctx, resume ? &sess : NULL, &c, NULL, NULL) < 0) {
				fprintf(stderr, "bench_tls: %s handshake failed\n", name);
				exit(1);
			}
		}
		s[r] = c.setup / iters, a[r] = c.f1 / iters, b[r] = c.f2 / iters, f[r] = c.fr / iters;
		tot[r] = s[r] + a[r] + b[r] + f[r];
	}
	printf("%-22s total %8.0f ns  setup %6.0f  flight1 %8.0f  flight2 %7.0f  free %6.0f\n", name,
	       median(tot, RUNS), median(s, RUNS), median(a, RUNS), median(b, RUNS), median(f, RUNS));
	SSL_SESSION_free(sess);
}

static void bench_rec(SSL_CTX *sctx, SSL_CTX *cctx, long iters)
{
	struct side sv, cl;
	struct hs_cost c = { 0 };
	static uint8_t plain[LFE_STREAM_TLS_RECORD + 256];
	uint8_t req[62], rec[256];
	size_t w;
	memset(req, 0x30, sizeof req);
	if (handshake(sctx, cctx, NULL, &c, &sv, &cl) < 0) {
		fprintf(stderr, "bench_tls: record setup failed\n");
		exit(1);
	}
	double v[RUNS];
	for (int r = 0; r < RUNS; r++) {
		double ns = 0;
		for (long i = 0; i < iters; i++) {
			SSL_write_ex(cl.ssl, req, sizeof req, &w);
			int n = BIO_read(cl.wb, rec, sizeof rec);
			if ((handover_mode ? record_tlsrec(&sv, rec, n, plain, &ns)
					   : record(&sv, rec, n, plain, &ns)) < 0) {
				fprintf(stderr, "bench_tls: record failed\n");
				exit(1);
			}
		}
		v[r] = ns / iters;
	}
	printf("%-22s %8.0f ns (62 B request in, 14 B response out)\n",
	       !handover_mode ? "record (OpenSSL)" : "record (tlsrec)",
	       median(v, RUNS));
	SSL_free(sv.ssl);
	lfe_tlsrec_free(sv.rec);
	SSL_free(cl.ssl);
}

static SSL_CTX *server(const char *dir, const char *kind)
{
	EVP_PKEY *k = strcmp(kind, "rsa") == 0 ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)
					       : tp_key();
	X509 *x = tp_cert(k, "bench", NULL, NULL, 1, -60, 86400, false);
	char cert[64], key[64], path[600], kp[600], err[256];
	snprintf(cert, sizeof cert, "%s.crt", kind);
	snprintf(key, sizeof key, "%s.key", kind);
	if (x == NULL || tp_write(dir, cert, x, NULL) < 0 || tp_write(dir, key, NULL, k) < 0) {
		fprintf(stderr, "bench_tls: cannot make a certificate\n");
		exit(1);
	}
	snprintf(path, sizeof path, "%s/%s", dir, cert);
	snprintf(kp, sizeof kp, "%s/%s", dir, key);
	struct lfe_tls_opts o = { .cert = path, .key = kp,
				  .ciphersuites = getenv("BENCH_TLS_SUITES"),
				  .ticket_lifetime = LFE_TLS_TICKET_LIFETIME_DEFAULT };
	struct lfe_tls *t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	if (t == NULL) {
		fprintf(stderr, "bench_tls: %s\n", err);
		exit(1);
	}
	X509_free(x);
	EVP_PKEY_free(k);
	SSL_CTX *ctx = lfe_tls_ctx(t);
	SSL_CTX_up_ref(ctx);
	if (getenv("BENCH_TLS_KEEP_BUFFERS"))   /* the record buffers' cost */
		SSL_CTX_clear_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	lfe_tls_free(t);   /* the ctx keeps its ticket keys */
	return ctx;
}

int main(int argc, char **argv)
{
	long hs = argc > 1 ? atol(argv[1]) : 2000;
	long recs = hs * 100;
	const char *only = argc > 2 ? argv[2] : "";
	char dir[] = "/tmp/bench_tls.XXXXXX";
	if (hs < 1 || mkdtemp(dir) == NULL)
		return 1;
	calibrate();
	clear_always = getenv("BENCH_TLS_CLEAR_ALWAYS") != NULL;
	SSL_CTX *ec = server(dir, "ec"), *rsa = server(dir, "rsa");
	if (getenv("BENCH_TLS_NO_KEYLOG")) {
		SSL_CTX_set_keylog_callback(ec, NULL);
		SSL_CTX_set_keylog_callback(rsa, NULL);
	}
	SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_min_proto_version(cctx, TLS1_3_VERSION);
	SSL_CTX_set_session_cache_mode(cctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(cctx, on_new_session);
	char rm[600];
	snprintf(rm, sizeof rm, "rm -rf %s", dir);
	if (system(rm) != 0)
		fprintf(stderr, "bench_tls: could not remove %s\n", dir);

	printf("server-side ns per step, TLS 1.3 (median of %d runs of %ld handshakes, %ld records)\n",
	       RUNS, hs, recs);
	if (!only[0] || strcmp(only, "ec") == 0)
		bench_hs("full ECDSA P-256", ec, cctx, false, hs);
	if (!only[0] || strcmp(only, "rsa") == 0)
		bench_hs("full RSA-2048", rsa, cctx, false, hs / 4 + 1);
	if (!only[0] || strcmp(only, "resumed") == 0)
		bench_hs("resumed (ticket)", ec, cctx, true, hs);
	if (!only[0] || strcmp(only, "resumed12") == 0) {
		/* TLS 1.2 ticket resumption: no key exchange at all */
		SSL_CTX *c12 = SSL_CTX_new(TLS_client_method());
		SSL_CTX_set_min_proto_version(c12, TLS1_2_VERSION);
		SSL_CTX_set_max_proto_version(c12, TLS1_2_VERSION);
		SSL_CTX_set_session_cache_mode(c12, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_CTX_sess_set_new_cb(c12, on_new_session);
		bench_hs("resumed TLS 1.2 (ticket)", ec, c12, true, hs);
		SSL_CTX_free(c12);
	}
	if (!only[0] || strcmp(only, "record") == 0)
		bench_rec(ec, cctx, recs);
	handover_mode = true;
	if (!only[0] || strcmp(only, "resumed-tlsrec") == 0)
		bench_hs("resumed + handover", ec, cctx, true, hs);
	if (!only[0] || strcmp(only, "tlsrec") == 0)
		bench_rec(ec, cctx, recs);
	SSL_CTX_free(ec);
	SSL_CTX_free(rsa);
	SSL_CTX_free(cctx);
	return 0;
}
