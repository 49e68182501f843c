/* tests/dataplane/test_tls.c — the daemon's TLS context (tls/tls.h)
 * against an OpenSSL client over memory BIOs, with certificates made
 * in-process (testpki.h): resumption by ticket on TLS 1.2 and 1.3, key
 * rotation (the previous key still opens, two rotations later not), no
 * tickets with lifetime 0, chained TLS 1.3 resumptions (a fresh ticket
 * each time), tickets surviving a new context made with prev
 * (reload), client certificates (none, optional, require; another CA),
 * protocol_min and TLS 1.1, and every bad value refused with its key.
 */
#include "tls/tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tests/tls/testpki.h"
#include "tests/check.h"

static char dir[64];
static char f_ca[128], f_srv[128], f_srvkey[128], f_cli[128], f_clikey[128], f_other[128],
	f_otherkey[128], f_expired[128], f_nofile[128];

static void path(char *p, const char *name)
{
	snprintf(p, 128, "%s/%s", dir, name);
}

static void make_pki(void)
{
	snprintf(dir, sizeof dir, "/tmp/lfe-test-tls.XXXXXX");
	if (mkdtemp(dir) == NULL)
		exit(2);
	EVP_PKEY *cak = tp_key(), *sk = tp_key(), *ck = tp_key(), *ok = tp_key();
	X509 *ca = tp_cert(cak, "test CA", NULL, NULL, 1, -60, 86400, true);
	X509 *srv = tp_cert(sk, "server", ca, cak, 0x1234, -60, 86400, false);
	X509 *cli = tp_cert(ck, "client", ca, cak, 7, -60, 86400, false);
	X509 *other = tp_cert(ok, "other", NULL, NULL, 9, -60, 86400, false);   /* another CA */
	X509 *expired = tp_cert(sk, "server", ca, cak, 10, -7200, -3600, false);
	path(f_ca, "ca.crt");
	path(f_srv, "srv.crt");
	path(f_srvkey, "srv.key");
	path(f_cli, "cli.crt");
	path(f_clikey, "cli.key");
	path(f_other, "other.crt");
	path(f_otherkey, "other.key");
	path(f_expired, "expired.crt");
	path(f_nofile, "nonexistent.key");
	if (!ca || !srv || !cli || !other || !expired || tp_write(dir, "ca.crt", ca, NULL) ||
	    tp_write(dir, "srv.crt", srv, NULL) || tp_write(dir, "srv.key", NULL, sk) ||
	    tp_write(dir, "cli.crt", cli, NULL) || tp_write(dir, "cli.key", NULL, ck) ||
	    tp_write(dir, "other.crt", other, NULL) || tp_write(dir, "other.key", NULL, ok) ||
	    tp_write(dir, "expired.crt", expired, NULL)) {
		fprintf(stderr, "test PKI setup failed\n");
		exit(2);
	}
	X509_free(ca), X509_free(srv), X509_free(cli), X509_free(other), X509_free(expired);
	EVP_PKEY_free(cak), EVP_PKEY_free(sk), EVP_PKEY_free(ck), EVP_PKEY_free(ok);
}

static void rm_pki(void)
{
	const char *const f[] = { f_ca, f_srv, f_srvkey, f_cli, f_clikey, f_other, f_otherkey, f_expired };
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		unlink(f[i]);
	rmdir(dir);
}

static struct lfe_tls_opts base(void)
{
	return (struct lfe_tls_opts){ .cert = f_srv, .key = f_srvkey, .ca = f_ca,
				      .ticket_lifetime = 3600 };
}

/* The client: trusts the test CA; version maxv (0: any), a certificate
 * (NULL: none). */
static SSL_CTX *client_ctx(int minv, int maxv, const char *cert, const char *key)
{
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());
	SSL_CTX_load_verify_locations(c, f_ca, NULL);
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
	if (minv)
		SSL_CTX_set_min_proto_version(c, minv);
	if (maxv)
		SSL_CTX_set_max_proto_version(c, maxv);
	if (minv && minv < TLS1_2_VERSION) {
		SSL_CTX_set_security_level(c, 0);
		SSL_CTX_set_cipher_list(c, "DEFAULT:@SECLEVEL=0");
	}
	if (cert) {
		SSL_CTX_use_certificate_file(c, cert, SSL_FILETYPE_PEM);
		SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM);
	}
	return c;
}

/* One connection: 1 handshake done (and *sess, when asked, the session
 * the client may resume, after reading TLS 1.3's ticket), 0 failed.
 * *reused: the server resumed. */
static int handshake(SSL_CTX *sctx, SSL_CTX *cctx, SSL_SESSION *resume, SSL_SESSION **sess,
		     int *reused)
{
	SSL *s = SSL_new(sctx), *c = SSL_new(cctx);
	BIO *s_in = BIO_new(BIO_s_mem()), *s_out = BIO_new(BIO_s_mem());
	BIO *c_in = BIO_new(BIO_s_mem()), *c_out = BIO_new(BIO_s_mem());
	SSL_set_bio(s, s_in, s_out);
	SSL_set_bio(c, c_in, c_out);
	SSL_set_accept_state(s);
	SSL_set_connect_state(c);
	if (resume)
		SSL_set_session(c, resume);
	uint8_t buf[16384];
	int sdone = 0, cdone = 0, bad = 0;
	for (int i = 0; i < 50 && !bad && !(sdone && cdone); i++) {
		if (!cdone) {
			int r = SSL_do_handshake(c);
			cdone = r == 1;
			if (r <= 0 && SSL_get_error(c, r) != SSL_ERROR_WANT_READ)
				bad = 1;
		}
		for (int n; (n = BIO_read(c_out, buf, sizeof buf)) > 0;)
			BIO_write(s_in, buf, n);
		if (!sdone) {
			int r = SSL_do_handshake(s);
			sdone = r == 1;
			if (r <= 0 && SSL_get_error(s, r) != SSL_ERROR_WANT_READ)
				bad = 1;
		}
		for (int n; (n = BIO_read(s_out, buf, sizeof buf)) > 0;)
			BIO_write(c_in, buf, n);
	}
	int ok = !bad && sdone && cdone;
	if (ok) {
		size_t n;
		SSL_read_ex(c, buf, sizeof buf, &n);   /* TLS 1.3: the NewSessionTicket */
		*reused = SSL_session_reused(s);
		if (sess)
			*sess = SSL_get1_session(c);
	}
	ERR_clear_error();
	/* Freed without a shutdown, a session is marked not resumable. */
	SSL_set_shutdown(c, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(s);
	SSL_free(c);
	return ok;
}

/* Full handshake then a resumption attempt on sctx2: the second's reuse. */
static int resumes(SSL_CTX *sctx, SSL_CTX *sctx2, int version, struct lfe_tls *rot, int rotations)
{
	SSL_CTX *cc = client_ctx(version, version, NULL, NULL);
	SSL_SESSION *sess = NULL;
	int reused = -1, r2 = -1;
	if (!handshake(sctx, cc, NULL, &sess, &reused) || reused) {
		SSL_CTX_free(cc);
		SSL_SESSION_free(sess);
		return -1;
	}
	for (int i = 0; i < rotations; i++)
		lfe_tls_rotate_keys(rot);
	if (!handshake(sctx2, cc, sess, NULL, &r2))
		r2 = -2;
	SSL_SESSION_free(sess);
	SSL_CTX_free(cc);
	return r2;
}

static void test_resumption(void)
{
	char err[256];
	struct lfe_tls_opts o = base();
	struct lfe_tls *t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	CHECK(t != NULL, "%s", err);
	if (t == NULL)
		return;
	SSL_CTX *x = lfe_tls_ctx(t);
	for (int v = TLS1_2_VERSION; v <= TLS1_3_VERSION; v++) {
		CHECK(resumes(x, x, v, t, 0) == 1, "v %x: resumed", v);
		CHECK(resumes(x, x, v, t, 1) == 1, "v %x: the previous key still opens", v);
		CHECK(resumes(x, x, v, t, 2) == 0, "v %x: two rotations later, a full handshake", v);
	}
	/* A reload: the new context takes the keys of the old one. */
	struct lfe_tls *t2 = lfe_tls_new_opts(&o, t, err, sizeof err);
	struct lfe_tls *t3 = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	CHECK(t2 && t3, "%s", err);
	for (int v = TLS1_2_VERSION; t2 && t3 && v <= TLS1_3_VERSION; v++) {
		CHECK(resumes(x, lfe_tls_ctx(t2), v, t, 0) == 1, "v %x: resumed after reload", v);
		CHECK(resumes(x, lfe_tls_ctx(t3), v, t, 0) == 0, "v %x: other keys: full handshake", v);
	}
	/* The old context outlives its struct while an SSL holds it. */
	SSL_CTX_up_ref(x);
	lfe_tls_free(t);
	for (int v = TLS1_2_VERSION; t2 && v <= TLS1_3_VERSION; v++)
		CHECK(resumes(x, lfe_tls_ctx(t2), v, t2, 0) == 1, "v %x: old ctx after free", v);
	SSL_CTX_free(x);
	lfe_tls_free(t2);
	lfe_tls_free(t3);

	o.ticket_lifetime = 0;
	t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	CHECK(t != NULL, "%s", err);
	for (int v = TLS1_2_VERSION; t && v <= TLS1_3_VERSION; v++)
		CHECK(resumes(lfe_tls_ctx(t), lfe_tls_ctx(t), v, t, 0) == 0, "v %x: lifetime 0", v);
	lfe_tls_free(t);
}

/* TLS 1.3 tickets are single use for a client with a session cache
 * (OpenSSL marks a session not resumable once it resumed, as libldap and
 * s_client see it): each resumed handshake must hand the client a fresh
 * ticket, so resumptions chain. TLS 1.2 reuses its ticket. */
static void test_resume_chain(void)
{
	char err[256];
	struct lfe_tls_opts o = base();
	struct lfe_tls *t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	CHECK(t != NULL, "%s", err);
	for (int v = TLS1_2_VERSION; t && v <= TLS1_3_VERSION; v++) {
		SSL_CTX *cc = client_ctx(v, v, NULL, NULL);
		SSL_CTX_set_session_cache_mode(cc, SSL_SESS_CACHE_CLIENT |
						   SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_SESSION *sess = NULL, *next = NULL;
		int reused = -1;
		CHECK(handshake(lfe_tls_ctx(t), cc, NULL, &sess, &reused) && sess && !reused,
		      "v %x: full", v);
		for (int i = 0; sess && i < 3; i++) {
			reused = -1;
			next = NULL;
			CHECK(handshake(lfe_tls_ctx(t), cc, sess, &next, &reused) && reused == 1,
			      "v %x: resumption %d in the chain", v, i + 1);
			CHECK(next && SSL_SESSION_is_resumable(next),
			      "v %x: resumption %d leaves a resumable session", v, i + 1);
			if (v == TLS1_3_VERSION)
				CHECK(next != sess, "v %x: resumption %d gave a new ticket", v, i + 1);
			SSL_SESSION_free(sess);
			sess = next;
		}
		SSL_SESSION_free(sess);
		SSL_CTX_free(cc);
	}
	lfe_tls_free(t);
}

static void test_client_certs(void)
{
	static const struct {
		enum lfe_tls_verify mode;
		int cert;      /* 0 none, 1 signed by the CA, 2 another CA */
		int ok;
	} cases[] = {
		{ LFE_TLS_VERIFY_NONE, 0, 1 },     { LFE_TLS_VERIFY_NONE, 2, 1 },
		{ LFE_TLS_VERIFY_OPTIONAL, 0, 1 }, { LFE_TLS_VERIFY_OPTIONAL, 1, 1 },
		{ LFE_TLS_VERIFY_OPTIONAL, 2, 0 }, { LFE_TLS_VERIFY_REQUIRE, 0, 0 },
		{ LFE_TLS_VERIFY_REQUIRE, 1, 1 },  { LFE_TLS_VERIFY_REQUIRE, 2, 0 },
	};
	char err[256];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct lfe_tls_opts o = base();
		o.verify_client = cases[i].mode;
		struct lfe_tls *t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
		CHECK(t != NULL, "%s", err);
		if (t == NULL)
			continue;
		for (int v = TLS1_2_VERSION; v <= TLS1_3_VERSION; v++) {
			const char *c = cases[i].cert == 1 ? f_cli : cases[i].cert == 2 ? f_other : NULL;
			const char *k = cases[i].cert == 1 ? f_clikey : f_otherkey;
			SSL_CTX *cc = client_ctx(v, v, c, k);
			int reused;
			/* TLS 1.3: the client finishes before the server checked
			 * its certificate; the server's verdict is what counts. */
			int ok = handshake(lfe_tls_ctx(t), cc, NULL, NULL, &reused);
			CHECK(ok == cases[i].ok, "case %zu v %x: got %d", i, v, ok);
			SSL_CTX_free(cc);
		}
		lfe_tls_free(t);
	}
}

/* A session verified against one CA does not resume under another (the
 * session id context covers the mode and the CA file), nor without
 * verification; with the same settings it does. */
static void test_resume_needs_same_verification(void)
{
	char err[256];
	struct lfe_tls_opts o = base();
	o.verify_client = LFE_TLS_VERIFY_OPTIONAL;
	struct lfe_tls *t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	struct lfe_tls *same = t ? lfe_tls_new_opts(&o, t, err, sizeof err) : NULL;
	o.ca = f_other;
	struct lfe_tls *other_ca = t ? lfe_tls_new_opts(&o, t, err, sizeof err) : NULL;
	o = base();
	struct lfe_tls *none = t ? lfe_tls_new_opts(&o, t, err, sizeof err) : NULL;
	CHECK(t && same && other_ca && none, "%s", err);
	for (int v = TLS1_2_VERSION; t && same && other_ca && none && v <= TLS1_3_VERSION; v++) {
		SSL_CTX *cc = client_ctx(v, v, f_cli, f_clikey);
		SSL_SESSION *sess = NULL;
		int reused = -1;
		CHECK(handshake(lfe_tls_ctx(t), cc, NULL, &sess, &reused) && sess, "v %x: full", v);
		CHECK(handshake(lfe_tls_ctx(same), cc, sess, NULL, &reused) && reused == 1,
		      "v %x: same CA resumes", v);
		reused = -1;
		handshake(lfe_tls_ctx(other_ca), cc, sess, NULL, &reused);
		CHECK(reused != 1, "v %x: another CA file must not resume", v);
		reused = -1;
		handshake(lfe_tls_ctx(none), cc, sess, NULL, &reused);
		CHECK(reused != 1, "v %x: verify_client none must not resume", v);
		SSL_SESSION_free(sess);
		SSL_CTX_free(cc);
	}
	lfe_tls_free(t);
	lfe_tls_free(same);
	lfe_tls_free(other_ca);
	lfe_tls_free(none);
}

static void test_protocols(void)
{
	char err[256];
	struct lfe_tls_opts o = base();
	struct lfe_tls *t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	int reused;
	SSL_CTX *cc = client_ctx(TLS1_1_VERSION, TLS1_1_VERSION, NULL, NULL);
	CHECK(t && !handshake(lfe_tls_ctx(t), cc, NULL, NULL, &reused), "TLS 1.1 refused");
	SSL_CTX_free(cc);
	lfe_tls_free(t);
	o.protocol_min = 3;
	t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	cc = client_ctx(TLS1_2_VERSION, TLS1_2_VERSION, NULL, NULL);
	CHECK(t && !handshake(lfe_tls_ctx(t), cc, NULL, NULL, &reused), "1.2 refused with min 1.3");
	SSL_CTX_free(cc);
	cc = client_ctx(TLS1_3_VERSION, TLS1_3_VERSION, NULL, NULL);
	CHECK(t && handshake(lfe_tls_ctx(t), cc, NULL, NULL, &reused), "1.3 with min 1.3");
	SSL_CTX_free(cc);
	lfe_tls_free(t);
	/* The server's cipher choice, from its own list. */
	o = base();
	o.ciphers = "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256";
	o.ciphersuites = "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";
	t = lfe_tls_new_opts(&o, NULL, err, sizeof err);
	CHECK(t != NULL, "%s", err);
	for (int v = TLS1_2_VERSION; t && v <= TLS1_3_VERSION; v++) {
		cc = client_ctx(v, v, NULL, NULL);
		SSL_CTX_set_cipher_list(cc, "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305");
		SSL_CTX_set_ciphersuites(cc, "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256");
		SSL_SESSION *sess = NULL;
		CHECK(handshake(lfe_tls_ctx(t), cc, NULL, &sess, &reused), "v %x cipher handshake", v);
		const char *name = sess ? SSL_CIPHER_get_name(SSL_SESSION_get0_cipher(sess)) : "";
		CHECK(strstr(name, "CHACHA20") != NULL, "v %x: server preference: %s", v, name);
		SSL_SESSION_free(sess);
		SSL_CTX_free(cc);
	}
	/* Unset ciphersuites: a client offering OpenSSL's default order
	 * (AES-256-GCM-SHA384 first) gets AES-128-GCM-SHA256, the server's
	 * first (LFE_TLS_CIPHERSUITES_DEFAULT); its own choice otherwise. */
	struct lfe_tls_opts od = base();
	struct lfe_tls *td = lfe_tls_new_opts(&od, NULL, err, sizeof err);
	CHECK(td != NULL, "%s", err);
	const char *offers[] = { NULL, "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384" };
	const char *wants[] = { "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384" };
	for (size_t i = 0; td && i < 2; i++) {
		cc = client_ctx(TLS1_3_VERSION, TLS1_3_VERSION, NULL, NULL);
		if (offers[i])
			SSL_CTX_set_ciphersuites(cc, offers[i]);
		SSL_SESSION *sess = NULL;
		CHECK(handshake(lfe_tls_ctx(td), cc, NULL, &sess, &reused), "default suites handshake");
		const char *name = sess ? SSL_CIPHER_get_name(SSL_SESSION_get0_cipher(sess)) : "";
		CHECK(strcmp(name, wants[i]) == 0, "default suites, offer %s: got %s, want %s",
		      offers[i] ? offers[i] : "OpenSSL's", name, wants[i]);
		SSL_SESSION_free(sess);
		SSL_CTX_free(cc);
	}
	lfe_tls_free(td);
	char d[512];
	lfe_tls_describe(t, d, sizeof d);
	CHECK(strstr(d, "CN=server") && strstr(d, "serial 1234"), "describe: %s", d);
	lfe_tls_free(t);
}

static void test_refused(void)
{
	struct refusal {
		const char *what;
		struct lfe_tls_opts o;
		const char *msg;
	} cases[] = {
		{ "unreadable key", { .cert = f_srv, .key = f_nofile }, "[tls] key: " },
		{ "key of another cert", { .cert = f_srv, .key = f_otherkey }, "does not match the certificate" },
		{ "expired", { .cert = f_expired, .key = f_srvkey }, "[tls] certificate: " },
		{ "a cert as key", { .cert = f_srv, .key = f_srv }, "[tls] key: " },
		{ "no ciphers", { .cert = f_srv, .key = f_srvkey, .ciphers = "NOPE:NADA" }, "[tls] ciphers: " },
		{ "bad suites", { .cert = f_srv, .key = f_srvkey, .ciphersuites = "TLS_NOPE" },
		  "[tls] ciphersuites: " },
		{ "protocol 1.1", { .cert = f_srv, .key = f_srvkey, .protocol_min = 1 }, "[tls] protocol_min" },
		{ "verify without ca", { .cert = f_srv, .key = f_srvkey,
					 .verify_client = LFE_TLS_VERIFY_REQUIRE }, "[tls] verify_client" },
		{ "unreadable ca", { .cert = f_srv, .key = f_srvkey, .ca = f_nofile }, "[tls] ca: " },
		{ "no cert", { .key = f_srvkey }, "[tls] certificate and key" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char err[256] = "";
		struct lfe_tls *t = lfe_tls_new_opts(&cases[i].o, NULL, err, sizeof err);
		CHECK(t == NULL && strstr(err, cases[i].msg), "%s: got '%s'", cases[i].what, err);
		lfe_tls_free(t);
	}
	char err[256] = "";
	struct lfe_tls_opts o = base();
	o.key = f_nofile;
	lfe_tls_new_opts(&o, NULL, err, sizeof err);
	CHECK(strstr(err, "No such file"), "the reason: %s", err);
	o = base();
	o.cert = f_expired;
	lfe_tls_new_opts(&o, NULL, err, sizeof err);
	CHECK(strstr(err, "expired"), "expired: %s", err);
}

int main(void)
{
	make_pki();
	test_resumption();
	test_resume_chain();
	test_client_certs();
	test_resume_needs_same_verification();
	test_protocols();
	test_refused();
	rm_pki();
	return check_done();
}
