/* gen/tlsc.c — see tlsc.h. */
#include "gen/tlsc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "tls/tlsrec.h"
#include "ldap/client.h"

/* Plaintext of one record at most per SSL_read (tlsrec: the inner
 * plaintext's type byte too). */
#define PLAIN_MAX (LFE_TLSREC_PLAIN_MAX + 256u)
/* A PDU split across records is held up to this: the generator's frame
 * limit (64 KiB) plus one record. */
#define CARRY_MAX (65536u + PLAIN_MAX)
/* The StartTLS response is an LDAPResult with an OID: a diagnostic message
 * longer than this is not worth waiting for. */
#define STARTTLS_RESP_MAX 512u
/* After the handover: records sealed and not yet taken by lfe_tlsc_out are
 * held up to this (one request outstanding needs a few hundred bytes). */
#define OUT_MAX (256u * 1024u)

/* ExtendedRequest, message id 1, requestName 1.3.6.1.4.1.1466.20037. */
static const uint8_t starttls_req[] = {
	0x30, 0x1d, 0x02, 0x01, 0x01, 0x77, 0x18, 0x80, 0x16,
	'1', '.', '3', '.', '6', '.', '1', '.', '4', '.', '1', '.', '1', '4', '6', '6', '.',
	'2', '0', '0', '3', '7',
};

struct lfe_tlsc {
	SSL_CTX *ctx;
	enum lfe_tlsc_resume resume;
	uint32_t slots;
	bool starttls;
	bool handover;                 /* TLS 1.3 records by tlsrec (tlsc.h) */
	SSL_SESSION **sess;            /* [slots] (SLOT) or [1] (SHARED) or NULL */
	struct lfe_tlsc_stats st;
	char first_error[160];
	char last_proto[16];
	uint8_t plain[PLAIN_MAX];      /* decrypted record, handed to the caller */
};

struct lfe_tlsc_conn {
	struct lfe_tlsc *t;
	SSL *ssl;                      /* NULL after the handover */
	BIO *rbio, *wbio;              /* owned by ssl */
	uint32_t slot;
	bool up, failed, peer_closed, offered;
	bool clear;                    /* StartTLS: waiting for its response */
	uint8_t *carry;                /* NULL until a PDU is split across records */
	uint32_t carry_len;
	/* ldapfe's records (t->handover): the secrets until the handover, then
	 * the record layer, the records it sealed (out[out_off..out_len)) and,
	 * only while a record is split across inputs, its start (in). */
	struct lfe_tlsrec_secrets sec;
	struct lfe_tlsrec *rec;
	uint8_t *out, *in;
	uint32_t out_off, out_len, out_cap;
	uint32_t in_len, in_need;
	uint64_t tickets;              /* lfe_tlsrec_tickets already counted */
};

static SSL_SESSION **slot_of(struct lfe_tlsc *t, uint32_t slot)
{
	if (t->resume == LFE_TLSC_RESUME_SHARED)
		return &t->sess[0];
	if (t->resume == LFE_TLSC_RESUME_SLOT && slot < t->slots)
		return &t->sess[slot];
	return NULL;
}

/* OpenSSL hands every session the server gives (TLS 1.2 at the end of the
 * handshake, each TLS 1.3 ticket as it arrives): keep the newest per slot. */
static int on_new_session(SSL *ssl, SSL_SESSION *s)
{
	struct lfe_tlsc_conn *c = SSL_get_app_data(ssl);
	SSL_SESSION **p = c ? slot_of(c->t, c->slot) : NULL;

	if (p == NULL || !SSL_SESSION_is_resumable(s))
		return 0;   /* not kept: OpenSSL frees it */
	SSL_SESSION_free(*p);
	*p = s;
	c->t->st.sessions_saved++;
	return 1;           /* the reference is ours now */
}

/* Nothing to verify (no CA): OpenSSL would still build and check a chain
 * under SSL_VERIFY_NONE, only to ignore the result (~2 % of a client's
 * full handshake): accept the certificate as it is. */
static int accept_unverified(X509_STORE_CTX *x, void *arg)
{
	(void)x;
	(void)arg;
	return 1;
}

static void set_err(char *err, size_t errlen, const char *what)
{
	unsigned long e = ERR_peek_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	snprintf(err, errlen, "%s%s%s", what, r ? ": " : "", r ? r : "");
	ERR_clear_error();
}

struct lfe_tlsc *lfe_tlsc_new(const struct lfe_tlsc_cfg *cfg, char *err, size_t errlen)
{
	struct lfe_tlsc *t = calloc(1, sizeof(*t));

	if (t == NULL) {
		snprintf(err, errlen, "TLS client: out of memory");
		return NULL;
	}
	ERR_clear_error();
	t->resume = cfg->resume;
	t->slots = cfg->slots;
	t->starttls = cfg->starttls;
	t->handover = cfg->records == LFE_TLSC_RECORDS_LDAPFE && cfg->resume == LFE_TLSC_RESUME_OFF;
	if (cfg->resume != LFE_TLSC_RESUME_OFF) {
		size_t n = cfg->resume == LFE_TLSC_RESUME_SHARED ? 1 : cfg->slots;
		t->sess = calloc(n ? n : 1, sizeof(*t->sess));
		if (t->sess == NULL) {
			snprintf(err, errlen, "TLS client: out of memory for %zu sessions", n);
			goto fail;
		}
	}
	t->ctx = SSL_CTX_new(TLS_client_method());
	if (t->ctx == NULL) {
		set_err(err, errlen, "TLS client: cannot create a context");
		goto fail;
	}
	int lo = cfg->version == 13 ? TLS1_3_VERSION : TLS1_2_VERSION;
	int hi = cfg->version == 12 ? TLS1_2_VERSION : TLS1_3_VERSION;
	SSL_CTX_set_min_proto_version(t->ctx, lo);
	SSL_CTX_set_max_proto_version(t->ctx, hi);
	SSL_CTX_set_options(t->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	/* Thousands of idle connections should not each hold 34 KiB of
	 * record buffers. */
	SSL_CTX_set_mode(t->ctx, SSL_MODE_RELEASE_BUFFERS);
	if (t->handover)
		SSL_CTX_set_keylog_callback(t->ctx, lfe_tlsrec_keylog);   /* the traffic secrets */
	if (cfg->resume != LFE_TLSC_RESUME_OFF) {
		SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_CLIENT |
						       SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_CTX_sess_set_new_cb(t->ctx, on_new_session);
	} else {
		SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_OFF);
		/* No ticket asked for, none to be made by the server. */
		SSL_CTX_set_options(t->ctx, SSL_OP_NO_TICKET);
	}
	if (cfg->ca_file && cfg->ca_file[0]) {
		if (SSL_CTX_load_verify_locations(t->ctx, cfg->ca_file, NULL) != 1) {
			char what[600];
			snprintf(what, sizeof(what), "--tls-ca %s: cannot load", cfg->ca_file);
			set_err(err, errlen, what);
			goto fail;
		}
		SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
		if (cfg->verify_ip && cfg->verify_ip[0] &&
		    X509_VERIFY_PARAM_set1_ip_asc(SSL_CTX_get0_param(t->ctx), cfg->verify_ip) != 1) {
			set_err(err, errlen, "TLS client: bad address to verify");
			goto fail;
		}
	} else {
		SSL_CTX_set_verify(t->ctx, SSL_VERIFY_NONE, NULL);
		SSL_CTX_set_cert_verify_callback(t->ctx, accept_unverified, NULL);
	}
	return t;
fail:
	lfe_tlsc_free(t);
	return NULL;
}

void lfe_tlsc_free(struct lfe_tlsc *t)
{
	if (t == NULL)
		return;
	if (t->sess) {
		size_t n = t->resume == LFE_TLSC_RESUME_SHARED ? 1 : t->slots;
		for (size_t i = 0; i < n; i++)
			SSL_SESSION_free(t->sess[i]);
		free(t->sess);
	}
	SSL_CTX_free(t->ctx);
	OPENSSL_cleanse(t->plain, sizeof(t->plain));
	free(t);
}

const struct lfe_tlsc_stats *lfe_tlsc_stats(const struct lfe_tlsc *t)
{
	return &t->st;
}

const char *lfe_tlsc_first_error(const struct lfe_tlsc *t)
{
	return t->first_error;
}

const char *lfe_tlsc_last_protocol(const struct lfe_tlsc *t)
{
	return t->last_proto;
}

const char *lfe_tlsc_records(const struct lfe_tlsc *t)
{
	return t->handover ? "ldapfe" : "openssl";
}

void lfe_tlsc_report(const struct lfe_tlsc *t, FILE *f, bool json)
{
	if (t == NULL) {
		if (json)
			fprintf(f, "  \"tls\": null,\n");
		return;
	}
	const struct lfe_tlsc_stats *st = &t->st;
	const char *res = t->resume == LFE_TLSC_RESUME_SHARED ? "shared" :
			  t->resume == LFE_TLSC_RESUME_SLOT ? "slot" : "off";
	if (!json) {
		fprintf(f, "ldapfe-gen: tls %s%s resume %s: handshakes full %llu resumed %llu"
			   " resume_refused %llu failures %llu record_errors %llu; records %s: handovers"
			   " %llu declined %llu tickets_skipped %llu%s%s\n",
			t->last_proto, t->starttls ? " (StartTLS)" : "", res,
			(unsigned long long)st->handshakes_full, (unsigned long long)st->handshakes_resumed,
			(unsigned long long)st->resume_refused, (unsigned long long)st->handshake_failures,
			(unsigned long long)st->record_errors, lfe_tlsc_records(t),
			(unsigned long long)st->handovers, (unsigned long long)st->handover_declined,
			(unsigned long long)st->tickets_skipped, t->first_error[0] ? ", first failure: " : "",
			t->first_error);
		return;
	}
	fprintf(f, "  \"tls\": {\"protocol\": \"%s\", \"starttls\": %s, \"resume\": \"%s\", "
		   "\"handshakes_full\": %llu, \"handshakes_resumed\": %llu, \"resume_refused\": %llu, "
		   "\"handshake_failures\": %llu, \"record_errors\": %llu, \"sessions_saved\": %llu, "
		   "\"records\": \"%s\", \"handovers\": %llu, \"handover_declined\": %llu, "
		   "\"tickets_skipped\": %llu, \"first_failure\": \"",
		t->last_proto, t->starttls ? "true" : "false", res,
		(unsigned long long)st->handshakes_full, (unsigned long long)st->handshakes_resumed,
		(unsigned long long)st->resume_refused, (unsigned long long)st->handshake_failures,
		(unsigned long long)st->record_errors, (unsigned long long)st->sessions_saved,
		lfe_tlsc_records(t), (unsigned long long)st->handovers,
		(unsigned long long)st->handover_declined, (unsigned long long)st->tickets_skipped);
	/* OpenSSL's reasons are plain text; keep the JSON string valid anyway. */
	for (const char *p = t->first_error; *p; p++)
		fputc(*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 ? '?' : *p, f);
	fprintf(f, "\"},\n");
}

struct lfe_tlsc_conn *lfe_tlsc_conn_new(struct lfe_tlsc *t, uint32_t slot)
{
	struct lfe_tlsc_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->t = t;
	c->slot = slot;
	c->ssl = SSL_new(t->ctx);
	c->rbio = BIO_new(BIO_s_mem());
	c->wbio = BIO_new(BIO_s_mem());
	if (c->ssl == NULL || c->rbio == NULL || c->wbio == NULL) {
		BIO_free(c->rbio);
		BIO_free(c->wbio);
		SSL_free(c->ssl);
		free(c);
		ERR_clear_error();
		return NULL;
	}
	/* An empty memory BIO reads as "retry", not as end of file. */
	BIO_set_mem_eof_return(c->rbio, -1);
	SSL_set_bio(c->ssl, c->rbio, c->wbio);
	SSL_set_app_data(c->ssl, c);
	SSL_set_connect_state(c->ssl);
	if (t->handover && lfe_tlsrec_watch(c->ssl, &c->sec) < 0) {
		lfe_tlsc_conn_free(c);
		return NULL;
	}
	SSL_SESSION **p = slot_of(t, slot);
	if (p && *p && SSL_set_session(c->ssl, *p) == 1)
		c->offered = true;
	if (t->starttls) {
		/* The request goes out in clear through the same queue. */
		c->clear = true;
		if (BIO_write(c->wbio, starttls_req, sizeof(starttls_req)) != sizeof(starttls_req)) {
			lfe_tlsc_conn_free(c);
			return NULL;
		}
		return c;
	}
	/* The ClientHello: written to wbio, then "want read". */
	SSL_do_handshake(c->ssl);
	ERR_clear_error();
	return c;
}

void lfe_tlsc_conn_free(struct lfe_tlsc_conn *c)
{
	if (c == NULL)
		return;
	SSL_free(c->ssl);
	lfe_tlsrec_secrets_wipe(&c->sec);
	lfe_tlsrec_free(c->rec);
	free(c->out);
	free(c->in);
	if (c->carry) {
		OPENSSL_cleanse(c->carry, c->carry_len);
		free(c->carry);
	}
	free(c);
}

bool lfe_tlsc_up(const struct lfe_tlsc_conn *c)
{
	return c->up && !c->failed;
}

bool lfe_tlsc_failed(const struct lfe_tlsc_conn *c)
{
	return c->failed;
}

bool lfe_tlsc_peer_closed(const struct lfe_tlsc_conn *c)
{
	return c->peer_closed;
}

/* A failure: counted once per connection, the first reason kept (why, or
 * the verification result, or OpenSSL's queued reason). */
static int fail(struct lfe_tlsc_conn *c, const char *why)
{
	struct lfe_tlsc *t = c->t;

	if (!c->failed) {
		c->failed = true;
		if (c->up)
			t->st.record_errors++;
		else
			t->st.handshake_failures++;
		if (!t->first_error[0]) {
			long v = c->ssl && !c->up ? SSL_get_verify_result(c->ssl) : X509_V_OK;
			unsigned long e = ERR_peek_error();
			const char *r = why ? why : v != X509_V_OK ? X509_verify_cert_error_string(v) :
					e ? ERR_reason_error_string(e) : NULL;
			snprintf(t->first_error, sizeof(t->first_error), "%s%s%s",
				 c->up ? "after the handshake" : "handshake",
				 r ? ": " : "", r ? r : "");
		}
	}
	ERR_clear_error();
	return -EPROTO;
}

void lfe_tlsc_peer_gone(struct lfe_tlsc_conn *c)
{
	if (c->up || c->failed)
		return;
	fail(c, "connection closed");
}

/* Append (p, n) to the connection's carry buffer (allocated on first use). */
static int keep(struct lfe_tlsc_conn *c, const uint8_t *p, size_t n)
{
	if (n > CARRY_MAX - c->carry_len)
		return -EMSGSIZE;
	if (c->carry == NULL && (c->carry = malloc(CARRY_MAX)) == NULL)
		return -ENOMEM;
	memcpy(c->carry + c->carry_len, p, n);
	c->carry_len += (uint32_t)n;
	return 0;
}

/* Hand plaintext to fn; keep what it leaves (the start of a PDU). */
static int deliver(struct lfe_tlsc_conn *c, const uint8_t *p, size_t n, lfe_tlsc_plain_fn fn,
		   void *arg)
{
	if (c->carry_len == 0) {
		size_t u = fn(arg, p, n);
		return u >= n ? 0 : keep(c, p + u, n - u);   /* fn has seen the rest */
	}
	int rc = keep(c, p, n);
	if (rc < 0)
		return rc;
	size_t u = fn(arg, c->carry, c->carry_len);
	if (u >= c->carry_len) {
		OPENSSL_cleanse(c->carry, c->carry_len);
		free(c->carry);
		c->carry = NULL;
		c->carry_len = 0;
	} else {
		memmove(c->carry, c->carry + u, c->carry_len - u);
		c->carry_len -= (uint32_t)u;
	}
	return 0;
}

/* deliver, for a connection up: a failure to keep is counted and fails
 * the connection; fn may have failed it too (a write): -EPROTO. */
static int deliver_up(struct lfe_tlsc_conn *c, const uint8_t *p, size_t n, lfe_tlsc_plain_fn fn,
		      void *arg)
{
	int rc = deliver(c, p, n, fn, arg);
	if (rc < 0) {
		c->failed = true;
		c->t->st.record_errors++;
		return rc;
	}
	return c->failed ? -EPROTO : 0;   /* fn wrote after a failure: nothing more to read */
}

/* StartTLS: the response, whole in this input or gathered in the carry
 * buffer across inputs; on success the handshake starts with whatever
 * followed it. 1: go on with TLS, 0: wait for more, <0: failed. */
static int starttls_input(struct lfe_tlsc_conn *c, const uint8_t **ct, size_t *len)
{
	size_t old = c->carry_len, n = *len, pl;
	const uint8_t *p = *ct;
	int rc;

	if (old) {
		if (keep(c, p, n < STARTTLS_RESP_MAX ? n : STARTTLS_RESP_MAX) < 0)
			return fail(c, "StartTLS: out of memory");
		p = c->carry;
		n = c->carry_len;
	}
	rc = lfe_ldap_frame(p, n, STARTTLS_RESP_MAX, &pl);
	if (rc == -EAGAIN) {
		if (n >= STARTTLS_RESP_MAX)
			return fail(c, "StartTLS: response too long");
		if (!old && keep(c, p, n) < 0)
			return fail(c, "StartTLS: out of memory");
		*len = 0;
		return 0;
	}
	struct lfe_ldap_resp r;
	if (rc < 0 || lfe_ldap_decode_resp(p, pl, &r) < 0 || r.op != LFE_OP_EXT_RESP || r.msgid != 1)
		return fail(c, "StartTLS: not a StartTLS response");
	if (r.code != LFE_RC_SUCCESS) {
		char why[64];
		snprintf(why, sizeof(why), "StartTLS refused: resultCode %d", (int)r.code);
		return fail(c, why);
	}
	/* Bytes past the response were sent after it: TLS from the server,
	 * unusual but not wrong. pl > old: old bytes did not frame. */
	*ct += pl - old;
	*len -= pl - old;
	c->clear = false;
	free(c->carry);
	c->carry = NULL;
	c->carry_len = 0;
	return 1;
}

/* ---- ldapfe's records after the handover (tlsc.h, "Records") ---- */

/* Room for n more bytes at the end of the sealed records waiting. */
static int out_reserve(struct lfe_tlsc_conn *c, size_t n)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_cap - c->out_len >= n)
		return 0;
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
		if (c->out_cap - c->out_len >= n)
			return 0;
	}
	if (n > OUT_MAX - c->out_len)
		return -ENOBUFS;
	size_t cap = c->out_cap ? 2u * c->out_cap : 512u;
	if (cap < c->out_len + n)
		cap = c->out_len + n;
	if (cap > OUT_MAX)
		cap = OUT_MAX;
	uint8_t *q = realloc(c->out, cap);
	if (q == NULL)
		return -ENOMEM;
	c->out = q;
	c->out_cap = (uint32_t)cap;
	return 0;
}

/* A failed tlsrec call, in words (first_failure). */
static const char *rec_why(const struct lfe_tlsc_conn *c, int rc)
{
	if (rc == -ECONNRESET)
		return "alert from the server";
	if (rc == -ERANGE)
		return "record sequence numbers exhausted";
	if (rc == -ENOBUFS)
		return "send backlog over 256 KiB";
	if (rc != -EBADMSG)
		return "record layer failure";
	switch (lfe_tlsrec_alert_due(c->rec)) {
	case LFE_TLS_ALERT_BAD_RECORD_MAC:
		return "bad record mac";
	case LFE_TLS_ALERT_RECORD_OVERFLOW:
		return "record overflow";
	case LFE_TLS_ALERT_DECODE_ERROR:
		return "decode error";
	case LFE_TLS_ALERT_UNEXPECTED_MESSAGE:
		return "unexpected message";
	default:
		return "bad record";
	}
}

/* Seal n bytes (records of up to 2^14) after what waits. */
static int rec_write(struct lfe_tlsc_conn *c, const uint8_t *p, size_t n)
{
	do {
		size_t k = n < LFE_TLSREC_PLAIN_MAX ? n : LFE_TLSREC_PLAIN_MAX;
		int w = out_reserve(c, k + LFE_TLSREC_WRITE_OVERHEAD);
		if (w == 0)
			w = lfe_tlsrec_write(c->rec, p, k, c->out + c->out_len, c->out_cap - c->out_len);
		if (w < 0)
			return fail(c, w == -ENOMEM ? "out of memory" : rec_why(c, w));
		c->out_len += (uint32_t)w;
		p += k;
		n -= k;
	} while (n > 0);
	return 0;
}

/* A record the server must not have sent: tlsrec's alert goes out (as
 * OpenSSL's would), then the connection fails. */
static int rec_fail(struct lfe_tlsc_conn *c, int rc)
{
	if (rc == -EBADMSG && out_reserve(c, 32) == 0) {
		int k = lfe_tlsrec_alert(c->rec, lfe_tlsrec_alert_due(c->rec), c->out + c->out_len,
					 c->out_cap - c->out_len);
		if (k > 0)
			c->out_len += (uint32_t)k;
	}
	return fail(c, rec_why(c, rc));
}

/* Ciphertext in after the handover: whole records opened from ct where
 * they lie; one split across inputs gathered in c->in first. */
static int rec_input(struct lfe_tlsc_conn *c, const uint8_t *ct, size_t len, lfe_tlsc_plain_fn fn,
		     void *arg)
{
	struct lfe_tlsc *t = c->t;

	while (!c->peer_closed) {
		const uint8_t *p = ct;
		size_t n = len, plen, need;
		if (c->in_len) {   /* in_len < in_need: complete the record (or its header) */
			size_t k = c->in_need - c->in_len < len ? c->in_need - c->in_len : len;
			memcpy(c->in + c->in_len, ct, k);
			c->in_len += (uint32_t)k;
			ct += k;
			len -= k;
			if (c->in_len < c->in_need)
				return 0;
			p = c->in;
			n = c->in_len;
		} else if (len == 0) {
			return 0;
		}
		int rc = lfe_tlsrec_read(c->rec, p, n, t->plain, sizeof(t->plain), &plen, &need);
		if (rc == 0) {     /* need ≤ LFE_TLSREC_MAX: the header was checked */
			if (p != c->in) {
				if (c->in == NULL && (c->in = malloc(LFE_TLSREC_MAX)) == NULL)
					return fail(c, "out of memory");
				memcpy(c->in, p, n);
				c->in_len = (uint32_t)n;
				len = 0;
			}
			c->in_need = (uint32_t)need;
			continue;
		}
		if (rc == -EPIPE) {
			c->peer_closed = true;   /* close_notify */
			return 0;
		}
		if (rc < 0)
			return rec_fail(c, rc);
		if (p == c->in) {
			free(c->in);
			c->in = NULL;
			c->in_len = c->in_need = 0;
		} else {
			ct += rc;
			len -= (size_t)rc;
		}
		if (plen == 0) {   /* tickets, a KeyUpdate, an empty record */
			uint64_t k = lfe_tlsrec_tickets(c->rec);
			t->st.tickets_skipped += k - c->tickets;
			c->tickets = k;
			continue;
		}
		rc = deliver_up(c, t->plain, plen, fn, arg);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The handshake just completed: a TLS 1.3 connection with nothing read
 * under the application key moves to tlsrec (write sequence number 0:
 * OpenSSL wrote only the Finished, under the handshake key); what OpenSSL
 * wrote goes out first, what the server sent after its Finished is read
 * by tlsrec. 1: handed over (and that input read), 0: stays on OpenSSL,
 * <0: failed. */
static int handover(struct lfe_tlsc_conn *c, lfe_tlsc_plain_fn fn, void *arg)
{
	struct lfe_tlsc *t = c->t;
	int err = -ENOTSUP;

	if (SSL_version(c->ssl) != TLS1_3_VERSION) {
		lfe_tlsrec_secrets_wipe(&c->sec);
		return 0;
	}
	if (SSL_pending(c->ssl) == 0 && !SSL_has_pending(c->ssl))
		c->rec = lfe_tlsrec_new_client(c->ssl, &c->sec, 0, &err);
	lfe_tlsrec_secrets_wipe(&c->sec);
	if (c->rec == NULL) {
		t->st.handover_declined++;
		ERR_clear_error();
		return err == -ENOMEM ? fail(c, "out of memory") : 0;
	}
	size_t wn = BIO_ctrl_pending(c->wbio);
	if (out_reserve(c, wn) < 0)
		return fail(c, "out of memory");
	if (wn && BIO_read(c->wbio, c->out + c->out_len, (int)wn) != (int)wn)
		return fail(c, NULL);
	c->out_len += (uint32_t)wn;
	t->st.handovers++;
	char *rest = NULL;
	long rn = BIO_get_mem_data(c->rbio, &rest);
	int rc = rn > 0 ? rec_input(c, (const uint8_t *)rest, (size_t)rn, fn, arg) : 0;
	SSL_free(c->ssl);   /* its BIOs with it */
	c->ssl = NULL;
	c->rbio = c->wbio = NULL;
	return rc < 0 ? rc : 1;
}

int lfe_tlsc_input(struct lfe_tlsc_conn *c, const uint8_t *ct, size_t len, lfe_tlsc_plain_fn fn,
		   void *arg)
{
	struct lfe_tlsc *t = c->t;
	int ev = 0;

	if (c->failed)
		return -EPROTO;
	if (c->peer_closed)
		return 0;
	if (c->rec)
		return rec_input(c, ct, len, fn, arg);
	if (c->clear) {
		int rc = starttls_input(c, &ct, &len);
		if (rc <= 0)
			return rc;
	}
	if (len > INT32_MAX || (len && BIO_write(c->rbio, ct, (int)len) != (int)len))
		return fail(c, NULL);
	if (!c->up) {
		int r = SSL_do_handshake(c->ssl);
		if (r != 1) {
			if (SSL_get_error(c->ssl, r) == SSL_ERROR_WANT_READ) {
				ERR_clear_error();
				return 0;
			}
			return fail(c, NULL);
		}
		c->up = true;
		ev = LFE_TLSC_UP;
		if (SSL_session_reused(c->ssl)) {
			t->st.handshakes_resumed++;
		} else {
			t->st.handshakes_full++;
			t->st.resume_refused += c->offered;
		}
		snprintf(t->last_proto, sizeof(t->last_proto), "%s", SSL_get_version(c->ssl));
		int h = t->handover ? handover(c, fn, arg) : 0;
		if (h != 0)
			return h < 0 ? h : ev;
	}
	for (;;) {
		size_t n = 0;
		int r = SSL_read_ex(c->ssl, t->plain, sizeof(t->plain), &n);
		if (r != 1) {
			int e = SSL_get_error(c->ssl, r);
			if (e == SSL_ERROR_WANT_READ) {
				ERR_clear_error();
				return ev;
			}
			if (e == SSL_ERROR_ZERO_RETURN) {
				c->peer_closed = true;
				ERR_clear_error();
				return ev;
			}
			return fail(c, NULL);
		}
		int rc = deliver_up(c, t->plain, n, fn, arg);
		if (rc < 0)
			return rc;
	}
}

int lfe_tlsc_write(struct lfe_tlsc_conn *c, const void *p, size_t n)
{
	size_t w = 0;

	if (c->failed)
		return -EIO;
	if (!c->up)
		return -EAGAIN;
	if (n == 0)
		return 0;
	if (c->rec)
		return rec_write(c, p, n) < 0 ? -EIO : 0;
	if (SSL_write_ex(c->ssl, p, n, &w) != 1 || w != n) {
		fail(c, NULL);
		return -EIO;
	}
	return 0;
}

void lfe_tlsc_shutdown(struct lfe_tlsc_conn *c)
{
	if (!c->up || c->failed)
		return;
	if (c->rec == NULL) {
		SSL_shutdown(c->ssl);
		ERR_clear_error();
		return;
	}
	if (out_reserve(c, 32) < 0)
		return;   /* no close_notify: the FIN still closes */
	int k = lfe_tlsrec_alert(c->rec, LFE_TLS_ALERT_CLOSE_NOTIFY, c->out + c->out_len,
				 c->out_cap - c->out_len);
	if (k > 0)
		c->out_len += (uint32_t)k;
}

size_t lfe_tlsc_out_pending(const struct lfe_tlsc_conn *c)
{
	return (c->ssl ? BIO_ctrl_pending(c->wbio) : 0) + (c->out_len - c->out_off);
}

size_t lfe_tlsc_out(struct lfe_tlsc_conn *c, uint8_t *out, size_t cap)
{
	size_t got = 0, k = c->out_len - c->out_off;

	if (c->ssl && cap) {   /* OpenSSL's bytes come first: they were written first */
		int r = BIO_read(c->wbio, out, cap > INT32_MAX ? INT32_MAX : (int)cap);
		got = r > 0 ? (size_t)r : 0;
	}
	if (k > cap - got)
		k = cap - got;
	if (k == 0)
		return got;
	memcpy(out + got, c->out + c->out_off, k);
	c->out_off += (uint32_t)k;
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	return got + k;
}
