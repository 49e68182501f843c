/* tests/ldap/test_session.c — the LDAP session through lfe_session_process:
 * request bytes in, responses decoded by an independent minimal BER reader
 * (below) and checked field by field. Requests are built by an independent
 * minimal BER writer, so the session's codec is not tested against itself.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ldap.h>

#include "ldap/attr.h"
#include "ldap/dnpool.h"
#include "ldap/session.h"
#include "tests/ldap/testbackend.h"
#include "tests/check.h"

#define SUFFIX "dc=example,dc=com"
#define ALICE "uid=alice,ou=people,dc=example,dc=com"
#define BOB "uid=bob,ou=people,dc=example,dc=com"
#define OID_WHOAMI "1.3.6.1.4.1.4203.1.11.3"
#define OID_NOTICE "1.3.6.1.4.1.1466.20036"
#define READ_ONLY "the directory is read-only here; use ldapfectl"

/* ------------------------------------------------------ request builder */

struct pdu {
	uint8_t b[8192];
	size_t n;
};

static void put(struct pdu *p, const void *d, size_t n)
{
	if (p->n + n > sizeof p->b)
		abort();
	memcpy(p->b + p->n, d, n);
	p->n += n;
}

static void put_len(struct pdu *p, size_t len)
{
	uint8_t h[5];
	if (len < 128) {
		h[0] = (uint8_t)len;
		put(p, h, 1);
	} else if (len < 256) {
		h[0] = 0x81, h[1] = (uint8_t)len;
		put(p, h, 2);
	} else {
		h[0] = 0x82, h[1] = (uint8_t)(len >> 8), h[2] = (uint8_t)len;
		put(p, h, 3);
	}
}

static void tlv(struct pdu *p, uint8_t tag, const void *c, size_t len)
{
	put(p, &tag, 1);
	put_len(p, len);
	put(p, c, len);
}

static void tlv_str(struct pdu *p, uint8_t tag, const char *s)
{
	tlv(p, tag, s, strlen(s));
}

static void tlv_pdu(struct pdu *p, uint8_t tag, const struct pdu *c)
{
	tlv(p, tag, c->b, c->n);
}

static void tlv_int(struct pdu *p, uint8_t tag, int32_t v)
{
	uint8_t b[5];
	size_t n = 0;
	uint32_t u = (uint32_t)v;
	/* minimal two's complement */
	int bytes = 4;
	while (bytes > 1) {
		uint32_t top9 = (u >> (8 * bytes - 9)) & 0x1ff;
		if (top9 != 0 && top9 != 0x1ff)
			break;
		bytes--;
	}
	for (int i = bytes - 1; i >= 0; i--)
		b[n++] = (uint8_t)(u >> (8 * i));
	tlv(p, tag, b, n);
}

/* Control: oid, criticality. */
struct ctl {
	const char *oid;
	int critical;
};

static void message(struct pdu *out, int32_t msgid, uint8_t op_tag, const struct pdu *op,
		    const struct ctl *ctls, size_t n_ctls)
{
	struct pdu body = { .n = 0 }, cs = { .n = 0 };
	tlv_int(&body, 0x02, msgid);
	tlv_pdu(&body, op_tag, op);
	for (size_t i = 0; i < n_ctls; i++) {
		struct pdu c = { .n = 0 };
		tlv_str(&c, 0x04, ctls[i].oid);
		if (ctls[i].critical)
			tlv(&c, 0x01, "\xff", 1);
		tlv_pdu(&cs, 0x30, &c);
	}
	if (n_ctls)
		tlv_pdu(&body, 0xa0, &cs);
	tlv_pdu(out, 0x30, &body);
}

static void bind_ctl(struct pdu *out, int32_t msgid, int version, const char *dn,
		     const char *pw, const struct ctl *ctls, size_t n)
{
	struct pdu op = { .n = 0 };
	tlv_int(&op, 0x02, version);
	tlv_str(&op, 0x04, dn);
	tlv_str(&op, 0x80, pw);
	message(out, msgid, 0x60, &op, ctls, n);
}

static void bind_req(struct pdu *out, int32_t msgid, const char *dn, const char *pw)
{
	bind_ctl(out, msgid, 3, dn, pw, NULL, 0);
}

static void sasl_bind(struct pdu *out, int32_t msgid, const char *mech)
{
	struct pdu op = { .n = 0 }, sasl = { .n = 0 };
	tlv_int(&op, 0x02, 3);
	tlv_str(&op, 0x04, "");
	tlv_str(&sasl, 0x04, mech);
	tlv_pdu(&op, 0xa3, &sasl);
	message(out, msgid, 0x60, &op, NULL, 0);
}

static void ext_req(struct pdu *out, int32_t msgid, const char *oid, const char *value,
		    const struct ctl *ctls, size_t n)
{
	struct pdu op = { .n = 0 };
	tlv_str(&op, 0x80, oid);
	if (value)
		tlv_str(&op, 0x81, value);
	message(out, msgid, 0x77, &op, ctls, n);
}

static void whoami(struct pdu *out, int32_t msgid)
{
	ext_req(out, msgid, OID_WHOAMI, NULL, NULL, 0);
}

/* Filters as BER. */
static void f_present(struct pdu *f, const char *attr)
{
	tlv_str(f, 0x87, attr);
}

static void f_eq(struct pdu *f, const char *attr, const char *val)
{
	struct pdu a = { .n = 0 };
	tlv_str(&a, 0x04, attr);
	tlv_str(&a, 0x04, val);
	tlv_pdu(f, 0xa3, &a);
}

struct sreq {
	const char *base;
	int scope;
	int size_limit;
	int types_only;
	const struct pdu *filter;
	const char *attrs[8];       /* NULL-terminated */
};

static void search_ctl(struct pdu *out, int32_t msgid, const struct sreq *r,
		       const struct ctl *ctls, size_t n)
{
	struct pdu op = { .n = 0 }, al = { .n = 0 };
	tlv_str(&op, 0x04, r->base);
	tlv_int(&op, 0x0a, r->scope);
	tlv_int(&op, 0x0a, 0);
	tlv_int(&op, 0x02, r->size_limit);
	tlv_int(&op, 0x02, 0);
	tlv(&op, 0x01, r->types_only ? "\xff" : "\x00", 1);
	put(&op, r->filter->b, r->filter->n);
	for (size_t i = 0; r->attrs[i]; i++)
		tlv_str(&al, 0x04, r->attrs[i]);
	tlv_pdu(&op, 0x30, &al);
	message(out, msgid, 0x63, &op, ctls, n);
}

static void search_req(struct pdu *out, int32_t msgid, const struct sreq *r)
{
	search_ctl(out, msgid, r, NULL, 0);
}

static void unbind_req(struct pdu *out, int32_t msgid)
{
	struct pdu op = { .n = 0 };
	message(out, msgid, 0x42, &op, NULL, 0);
}

static void abandon_req(struct pdu *out, int32_t msgid, int32_t id)
{
	struct pdu body = { .n = 0 };
	tlv_int(&body, 0x02, msgid);
	tlv_int(&body, 0x50, id);
	tlv_pdu(out, 0x30, &body);
}

/* Write operations, minimal but well-formed. */
static void write_req(struct pdu *out, int32_t msgid, int op, const struct ctl *ctls, size_t n)
{
	struct pdu o = { .n = 0 }, inner = { .n = 0 }, inner2 = { .n = 0 };
	switch (op) {
	case 10: /* del */
		put(&o, BOB, strlen(BOB));
		message(out, msgid, 0x4a, &o, ctls, n);
		return;
	case 6: /* modify: dn, SEQ OF change{ op, {type, SET{vals}} } */
		tlv_str(&o, 0x04, BOB);
		tlv_str(&inner2, 0x04, "x");
		{
			struct pdu pa = { .n = 0 }, set = { .n = 0 }, ch = { .n = 0 };
			tlv_str(&pa, 0x04, "description");
			tlv_pdu(&set, 0x31, &inner2);
			put(&pa, set.b, set.n);
			tlv_int(&ch, 0x0a, 2);
			tlv_pdu(&ch, 0x30, &pa);
			tlv_pdu(&inner, 0x30, &ch);
		}
		tlv_pdu(&o, 0x30, &inner);
		message(out, msgid, 0x66, &o, ctls, n);
		return;
	case 8: /* add: dn, SEQ OF {type, SET{vals}} */
		tlv_str(&o, 0x04, "uid=carol,ou=people,dc=example,dc=com");
		{
			struct pdu a = { .n = 0 }, set = { .n = 0 };
			tlv_str(&set, 0x04, "carol");
			tlv_str(&a, 0x04, "uid");
			tlv_pdu(&a, 0x31, &set);
			tlv_pdu(&inner, 0x30, &a);
		}
		tlv_pdu(&o, 0x30, &inner);
		message(out, msgid, 0x68, &o, ctls, n);
		return;
	case 12: /* moddn */
		tlv_str(&o, 0x04, BOB);
		tlv_str(&o, 0x04, "uid=robert");
		tlv(&o, 0x01, "\xff", 1);
		message(out, msgid, 0x6c, &o, ctls, n);
		return;
	case 14: /* compare: dn, AVA */
		tlv_str(&o, 0x04, BOB);
		tlv_str(&inner, 0x04, "uid");
		tlv_str(&inner, 0x04, "bob");
		tlv_pdu(&o, 0x30, &inner);
		message(out, msgid, 0x6e, &o, ctls, n);
		return;
	}
	abort();
}

/* ------------------------------------------------------ response reader */

#define MAX_VALS 12
#define MAX_ATTRS 16
struct rattr {
	char type[64];
	int n_vals;
	char vals[MAX_VALS][160];
};

struct resp {
	int32_t msgid;
	int op;
	int code;
	char matched[256];
	char diag[256];
	int has_name, has_value;
	char name[64];
	char value[1200];
	size_t value_len;
	uint8_t ctrls[128];           /* the message's controls [0], contents */
	size_t ctrls_len;
	char dn[1100];
	int n_attrs;
	struct rattr attrs[MAX_ATTRS];
};

struct rd {
	const uint8_t *p;
	size_t n;
	int bad;
};

static int rd_tlv(struct rd *r, uint8_t *tag, struct rd *inner)
{
	if (r->bad || r->n < 2)
		return r->bad = 1, 0;
	*tag = r->p[0];
	size_t len, hl;
	if (r->p[1] < 0x80) {
		len = r->p[1];
		hl = 2;
	} else {
		size_t k = r->p[1] & 0x7f;
		if (k == 0 || k > 3 || r->n < 2 + k)
			return r->bad = 1, 0;
		len = 0;
		for (size_t i = 0; i < k; i++)
			len = len << 8 | r->p[2 + i];
		hl = 2 + k;
	}
	if (r->n - hl < len)
		return r->bad = 1, 0;
	inner->p = r->p + hl;
	inner->n = len;
	inner->bad = 0;
	r->p += hl + len;
	r->n -= hl + len;
	return 1;
}

static int rd_expect(struct rd *r, uint8_t want, struct rd *inner)
{
	uint8_t t;
	if (!rd_tlv(r, &t, inner))
		return 0;
	if (t != want)
		return r->bad = 1, 0;
	return 1;
}

static long rd_int(const struct rd *v)
{
	long x = (v->n && (v->p[0] & 0x80)) ? -1 : 0;
	for (size_t i = 0; i < v->n; i++)
		x = x << 8 | v->p[i];
	return x;
}

static void rd_str(const struct rd *v, char *out, size_t cap)
{
	size_t n = v->n < cap - 1 ? v->n : cap - 1;
	memcpy(out, v->p, n);
	out[n] = '\0';
}

/* Parse one LDAPMessage of exactly len bytes. 0 or -1. */
static int parse_resp(const uint8_t *b, size_t len, struct resp *o)
{
	struct rd top = { b, len, 0 }, msg, v, op;
	uint8_t tag;
	memset(o, 0, sizeof *o);
	if (!rd_expect(&top, 0x30, &msg) || top.n != 0)
		return -1;
	if (!rd_expect(&msg, 0x02, &v))
		return -1;
	o->msgid = (int32_t)rd_int(&v);
	if (!rd_tlv(&msg, &tag, &op) || (tag & 0xe0) != 0x60)
		return -1;
	o->op = tag & 0x1f;
	if (msg.n) {
		struct rd c;
		if (!rd_expect(&msg, 0xa0, &c) || msg.n || c.n > sizeof o->ctrls)
			return -1;
		memcpy(o->ctrls, c.p, c.n);
		o->ctrls_len = c.n;
	}
	if (o->op == 4) {
		struct rd attrs, a, t, set;
		if (!rd_expect(&op, 0x04, &v))
			return -1;
		rd_str(&v, o->dn, sizeof o->dn);
		if (!rd_expect(&op, 0x30, &attrs) || op.n)
			return -1;
		while (attrs.n) {
			if (o->n_attrs == MAX_ATTRS || !rd_expect(&attrs, 0x30, &a) ||
			    !rd_expect(&a, 0x04, &t) || !rd_expect(&a, 0x31, &set) || a.n)
				return -1;
			struct rattr *ra = &o->attrs[o->n_attrs++];
			rd_str(&t, ra->type, sizeof ra->type);
			while (set.n) {
				if (ra->n_vals == MAX_VALS || !rd_expect(&set, 0x04, &v))
					return -1;
				rd_str(&v, ra->vals[ra->n_vals++], sizeof ra->vals[0]);
			}
		}
		return 0;
	}
	if (!rd_expect(&op, 0x0a, &v))
		return -1;
	o->code = (int)rd_int(&v);
	if (!rd_expect(&op, 0x04, &v))
		return -1;
	rd_str(&v, o->matched, sizeof o->matched);
	if (!rd_expect(&op, 0x04, &v))
		return -1;
	rd_str(&v, o->diag, sizeof o->diag);
	while (op.n) {
		if (!rd_tlv(&op, &tag, &v))
			return -1;
		if (tag == 0x8a) {
			o->has_name = 1;
			rd_str(&v, o->name, sizeof o->name);
		} else if (tag == 0x8b) {
			o->has_value = 1;
			o->value_len = v.n;
			rd_str(&v, o->value, sizeof o->value);
		} else {
			return -1;
		}
	}
	return 0;
}

/* Split an output stream into responses; each must frame with
 * lfe_ldap_frame and parse. Returns the count or -1. */
static int parse_all(const uint8_t *b, size_t len, struct resp *r, int cap)
{
	int n = 0;
	size_t off = 0;
	while (off < len) {
		size_t pl;
		if (n == cap || lfe_ldap_frame(b + off, len - off, 1u << 20, &pl) != 0)
			return -1;
		if (parse_resp(b + off, pl, &r[n]) != 0)
			return -1;
		n++;
		off += pl;
	}
	return n;
}

static const struct rattr *attr(const struct resp *r, const char *type)
{
	for (int i = 0; i < r->n_attrs; i++)
		if (strcasecmp(r->attrs[i].type, type) == 0)
			return &r->attrs[i];
	return NULL;
}

static int has_val(const struct resp *r, const char *type, const char *val)
{
	const struct rattr *a = attr(r, type);
	if (!a)
		return 0;
	for (int i = 0; i < a->n_vals; i++)
		if (strcmp(a->vals[i], val) == 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------- fixture */

struct talloc {
	int fail;              /* fail every get while set */
	int tight;             /* spare says no while set (buffers under pressure) */
	int gets, puts;
	int not_wiped;         /* puts that found non-zero bytes */
	void *bufs[8];
	size_t sizes[8];
};

static void *ta_get(void *ctx, size_t n)
{
	struct talloc *a = ctx;
	if (a->fail)
		return NULL;
	for (int i = 0; i < 8; i++) {
		if (!a->bufs[i]) {
			a->bufs[i] = malloc(n);
			a->sizes[i] = n;
			if (a->bufs[i])
				a->gets++;
			return a->bufs[i];
		}
	}
	return NULL;
}

static bool ta_spare(void *ctx)
{
	const struct talloc *a = ctx;
	return !a->tight;
}

static void ta_put(void *ctx, void *buf)
{
	struct talloc *a = ctx;
	for (int i = 0; i < 8; i++) {
		if (a->bufs[i] == buf) {
			const uint8_t *p = buf;
			for (size_t k = 0; k < a->sizes[i]; k++)
				if (p[k]) {
					a->not_wiped++;
					break;
				}
			free(buf);
			a->bufs[i] = NULL;
			a->puts++;
			return;
		}
	}
	abort();   /* put of a buffer never handed out */
}

struct fx {
	struct lfe_tb *tb;
	struct talloc ta;
	struct lfe_dnpool *dns;   /* every session keeps its DNs here: fx_fini
	                           * checks that all came back */
	struct lfe_session_cfg cfg;
	struct lfe_backend_ops ops;
	void *mem;
	struct lfe_session *s;
	uint8_t out[65536];
	struct resp r[32];
	int nr;
	struct lfe_session_io io;
};

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof *f);
	f->tb = lfe_tb_new();
	static const char *const top[] = { "objectClass=top", "objectClass=domain", "dc=example" };
	static const char *const ou[] = { "objectClass=top", "objectClass=organizationalUnit",
					  "ou=people" };
	static const char *const alice[] = { "objectClass=top", "objectClass=person",
					     "objectClass=inetOrgPerson", "uid=alice",
					     "cn=Alice Liddell", "sn=Liddell",
					     "mail=alice@example.com",
					     "createTimestamp=20260101000000Z" };
	static const char *const bob[] = { "objectClass=top", "objectClass=person", "uid=bob",
					   "cn=Bob", "sn=Builder" };
	if (!f->tb || lfe_tb_add(f->tb, SUFFIX, NULL, top, 3) ||
	    lfe_tb_add(f->tb, "ou=people," SUFFIX, NULL, ou, 3) ||
	    lfe_tb_add(f->tb, ALICE, "secret", alice, 8) ||
	    lfe_tb_add(f->tb, BOB, "b0b", bob, 5)) {
		fprintf(stderr, "fixture setup failed\n");
		exit(2);
	}
	f->ops = lfe_tb_ops;
	f->dns = lfe_dnpool_new(64 * LFE_DNPOOL_PAGE);
	if (!f->dns)
		exit(2);
	f->cfg = (struct lfe_session_cfg){
		.allow_anonymous = true,
		.be = &f->ops,
		.be_ctx = f->tb,
		.alloc = { .get = ta_get, .put = ta_put, .spare = ta_spare, .ctx = &f->ta },
		.dns = f->dns,
		.naming_context = SUFFIX,
		.vendor_version = "0.1.0",
	};
	f->mem = aligned_alloc(64, (lfe_session_size() + 63) & ~(size_t)63);
	f->s = lfe_session_init(f->mem, &f->cfg);
}

static void fx_fini(struct fx *f)
{
	lfe_session_fini(f->s);
	CHECK(f->ta.gets == f->ta.puts, "allocator: %d gets, %d puts", f->ta.gets, f->ta.puts);
	CHECK(f->ta.not_wiped == 0, "%d buffers returned unwiped", f->ta.not_wiped);
	struct lfe_dnpool_stats ds;
	lfe_dnpool_stats(f->dns, &ds);
	CHECK(ds.chunks == 0 && ds.pages == 0, "DN pool: %llu chunks kept after fini",
	      (unsigned long long)ds.chunks);
	lfe_dnpool_free(f->dns);
	free(f->mem);
	lfe_tb_free(f->tb);
}

/* One process() call with up to `cap` bytes of output room. */
static int fx_call(struct fx *f, const uint8_t *in, size_t len, size_t cap)
{
	f->io = (struct lfe_session_io){ .in = in, .in_len = len, .out = f->out,
					 .out_cap = cap };
	return lfe_session_process(f->s, &f->io);
}

/* Feed all of in with a full output buffer; parse what came back. */
static int fx_run(struct fx *f, const struct pdu *in)
{
	int rc = fx_call(f, in->b, in->n, sizeof f->out);
	CHECK(rc == 0, "process rc %d", rc);
	f->nr = parse_all(f->out, f->io.out_len, f->r, 32);
	CHECK(f->nr >= 0, "output does not parse");
	return f->nr;
}

static void check_result(const struct resp *r, int msgid, int op, int code, const char *diag)
{
	CHECK(r->msgid == msgid, "msgid %d want %d", r->msgid, msgid);
	CHECK(r->op == op, "op %d want %d (msgid %d)", r->op, op, msgid);
	CHECK(r->code == code, "code %d want %d (msgid %d, diag '%s')", r->code, code, msgid,
	      r->diag);
	if (diag)
		CHECK(strcmp(r->diag, diag) == 0, "diag '%s' want '%s'", r->diag, diag);
}

static const char *bound(const struct fx *f)
{
	size_t l;
	return lfe_session_bound_dn(f->s, &l);
}

/* ---------------------------------------------------------------- tests */

#define OID_STARTTLS "1.3.6.1.4.1.1466.20037"

static void starttls_req(struct pdu *out, int32_t msgid)
{
	ext_req(out, msgid, OID_STARTTLS, NULL, NULL, 0);
}

/* StartTLS (RFC 4511 §4.14): success, then nothing read behind it; refused
 * when TLS is active, unavailable when not configured; advertised. */
static void test_starttls(void)
{
	struct fx f;
	fx_init(&f);
	f.cfg.starttls = true;
	struct pdu in = { .n = 0 }, tail = { .n = 0 };
	whoami(&in, 1);
	starttls_req(&in, 2);
	size_t head = in.n;
	whoami(&tail, 3);           /* pipelined: the client's handshake from here */
	put(&in, tail.b, tail.n);
	CHECK(fx_call(&f, in.b, in.n, sizeof f.out) == 0, "process");
	f.nr = parse_all(f.out, f.io.out_len, f.r, 32);
	CHECK(f.nr == 2, "starttls: %d responses", f.nr);
	if (f.nr == 2) {
		check_result(&f.r[0], 1, 24, 0, "");
		check_result(&f.r[1], 2, 24, 0, "");
		CHECK(f.r[1].has_name && strcmp(f.r[1].name, OID_STARTTLS) == 0,
		      "starttls response name '%s'", f.r[1].name);
	}
	CHECK(f.io.flags == LFE_SESS_STARTTLS, "flags %#x", f.io.flags);
	CHECK(f.io.in_used == head, "read past StartTLS: used %zu of %zu", f.io.in_used, head);

	/* Under TLS now: a second StartTLS is an operations error, a value a
	 * protocol error; other requests go on. */
	struct pdu again = { .n = 0 };
	starttls_req(&again, 4);
	ext_req(&again, 5, OID_STARTTLS, "x", NULL, 0);
	whoami(&again, 6);
	if (fx_run(&f, &again) == 3) {
		check_result(&f.r[0], 4, 24, 1, "TLS is already active");
		check_result(&f.r[1], 5, 24, 2, NULL);
		check_result(&f.r[2], 6, 24, 0, NULL);
		CHECK(f.io.flags == 0, "flags %#x after refusals", f.io.flags);
	} else {
		CHECK(0, "starttls again: %d responses", f.nr);
	}
	fx_fini(&f);

	/* LDAPS from the first byte. */
	fx_init(&f);
	f.cfg.starttls = true;
	lfe_session_set_tls(f.s);
	struct pdu one = { .n = 0 };
	starttls_req(&one, 1);
	if (fx_run(&f, &one) == 1)
		check_result(&f.r[0], 1, 24, 1, NULL);
	CHECK(f.io.flags == 0, "ldaps starttls flags %#x", f.io.flags);
	fx_fini(&f);

	/* No [tls]: unavailable, not advertised. */
	fx_init(&f);
	if (fx_run(&f, &one) == 1)
		check_result(&f.r[0], 1, 24, 52, "TLS is not configured");
	CHECK(f.io.flags == 0, "unconfigured starttls flags %#x", f.io.flags);
	struct pdu any = { .n = 0 }, dse = { .n = 0 };
	f_present(&any, "objectClass");
	search_req(&dse, 2, &(struct sreq){ "", 0, 0, 0, &any, { NULL } });
	if (fx_run(&f, &dse) == 2)
		CHECK(!has_val(&f.r[0], "supportedExtension", OID_STARTTLS), "advertised without TLS");
	f.cfg.starttls = true;
	if (fx_run(&f, &dse) == 2)
		CHECK(has_val(&f.r[0], "supportedExtension", OID_STARTTLS), "not advertised");
	fx_fini(&f);
}

static void test_bind(void)
{
	static const struct {
		const char *name;
		int anon_ok;
		int version;
		const char *dn, *pw;
		int sasl;
		int code;
		const char *bound;
	} cases[] = {
		{ "ok", 1, 3, ALICE, "secret", 0, 0, ALICE },
		{ "ok, DN normalized", 1, 3, "UID=Alice, ou=People,DC=Example,dc=COM", "secret", 0,
		  0, ALICE },
		{ "wrong password", 1, 3, ALICE, "Secret", 0, 49, "" },
		{ "unknown DN", 1, 3, "uid=nobody,ou=people,dc=example,dc=com", "secret", 0, 49, "" },
		{ "entry without password", 1, 3, SUFFIX, "x", 0, 49, "" },
		{ "invalid DN", 1, 3, "this is not a DN", "secret", 0, 49, "" },
		{ "DN, empty password", 1, 3, ALICE, "", 0, 53, "" },
		{ "anonymous allowed", 1, 3, "", "", 0, 0, "" },
		{ "anonymous refused", 0, 3, "", "", 0, 53, "" },
		{ "empty DN with password", 1, 3, "", "secret", 0, 49, "" },
		{ "LDAPv2", 1, 2, ALICE, "secret", 0, 2, "" },
		{ "SASL", 1, 3, "", "", 1, 7, "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fx f;
		fx_init(&f);
		f.cfg.allow_anonymous = cases[i].anon_ok;
		struct pdu in = { .n = 0 };
		/* Bind as bob first: every case must replace that identity. */
		bind_req(&in, 1, BOB, "b0b");
		if (cases[i].sasl)
			sasl_bind(&in, 2, "EXTERNAL");
		else
			bind_ctl(&in, 2, cases[i].version, cases[i].dn, cases[i].pw, NULL, 0);
		whoami(&in, 3);
		if (fx_run(&f, &in) != 3) {
			CHECK(0, "%s: %d responses", cases[i].name, f.nr);
			fx_fini(&f);
			continue;
		}
		check_result(&f.r[0], 1, 1, 0, "");
		check_result(&f.r[1], 2, 1, cases[i].code, NULL);
		CHECK(strcmp(bound(&f), cases[i].bound) == 0, "%s: bound '%s' want '%s'",
		      cases[i].name, bound(&f), cases[i].bound);
		char want[1100] = "";
		if (cases[i].bound[0])
			snprintf(want, sizeof want, "dn:%s", cases[i].bound);
		check_result(&f.r[2], 3, 24, 0, "");
		CHECK(strcmp(f.r[2].value, want) == 0 && f.r[2].has_value,
		      "%s: whoami '%s' want '%s'", cases[i].name, f.r[2].value, want);
		CHECK(f.io.in_used == in.n && f.io.flags == 0, "%s: used %zu/%zu flags %u",
		      cases[i].name, f.io.in_used, in.n, f.io.flags);
		const struct lfe_session_stats *st = lfe_session_stats(f.s);
		uint64_t ok = 1 + (cases[i].code == 0), inv = cases[i].code == 49,
			 oth = cases[i].code != 0 && cases[i].code != 49;
		CHECK(st->binds_ok == ok && st->binds_invalid == inv && st->binds_other == oth,
		      "%s: stats ok %llu inv %llu other %llu", cases[i].name,
		      (unsigned long long)st->binds_ok, (unsigned long long)st->binds_invalid,
		      (unsigned long long)st->binds_other);
		fx_fini(&f);
	}
}

static void test_bind_backend_verdicts(void)
{
	/* BUSY */
	struct fx f;
	fx_init(&f);
	lfe_tb_set_mode(f.tb, LFE_TB_BUSY);
	struct pdu in = { .n = 0 };
	bind_req(&in, 5, ALICE, "secret");
	if (fx_run(&f, &in) == 1)
		check_result(&f.r[0], 5, 1, 51, NULL);
	else
		CHECK(0, "busy: %d responses", f.nr);
	CHECK(bound(&f)[0] == '\0', "busy bind left identity '%s'", bound(&f));
	CHECK(strcmp(lfe_tb_counts(f.tb)->last_bind_ndn, ALICE) == 0, "backend got '%s'",
	      lfe_tb_counts(f.tb)->last_bind_ndn);
	fx_fini(&f);

	/* No backend bind at all. */
	fx_init(&f);
	f.ops.bind = NULL;
	in.n = 0;
	bind_req(&in, 6, ALICE, "secret");
	if (fx_run(&f, &in) == 1)
		check_result(&f.r[0], 6, 1, 53, NULL);
	else
		CHECK(0, "no backend: %d responses", f.nr);
	fx_fini(&f);
}

static void test_pending(void)
{
	static const struct {
		const char *pw;
		int code;
	} cases[] = { { "secret", 0 }, { "wrong", 49 } };
	for (size_t i = 0; i < 2; i++) {
		struct fx f;
		fx_init(&f);
		lfe_tb_set_mode(f.tb, LFE_TB_PENDING);
		lfe_session_set_generation(f.s, 7);
		struct pdu in = { .n = 0 }, b = { .n = 0 };
		/* A messageID of two octets, not 1: the deferred answer must
		 * carry the request's own. */
		bind_req(&b, 0x1234, ALICE, cases[i].pw);
		put(&in, b.b, b.n);
		whoami(&in, 2);

		CHECK(fx_call(&f, in.b, in.n, sizeof f.out) == 0, "process");
		CHECK(f.io.out_len == 0, "pending bind answered early");
		CHECK(f.io.flags == LFE_SESS_PENDING, "flags %u", f.io.flags);
		CHECK(f.io.in_used == b.n, "used %zu want %zu (stop after the bind)",
		      f.io.in_used, b.n);
		size_t rest = in.n - f.io.in_used;
		const uint8_t *rp = in.b + f.io.in_used;

		/* While pending, nothing more is consumed. */
		CHECK(fx_call(&f, rp, rest, sizeof f.out) == 0 && f.io.in_used == 0 &&
		      f.io.out_len == 0 && f.io.flags == LFE_SESS_PENDING, "pending call 2");

		uint64_t tok;
		enum lfe_be_verdict v;
		CHECK(lfe_tb_take_pending(f.tb, &tok, &v), "no pending token");
		CHECK(tok >> 32 == 7, "token generation %llu", (unsigned long long)(tok >> 32));

		struct lfe_session_io io = { .out = f.out, .out_cap = sizeof f.out };
		CHECK(lfe_session_bind_done(f.s, tok ^ (1ull << 32), v, &io) == -ESTALE,
		      "stale generation accepted");
		CHECK(lfe_session_bind_done(f.s, tok + 1, v, &io) == -ESTALE,
		      "stale sequence accepted");
		CHECK(io.out_len == 0, "stale verdict wrote output");
		io.out_cap = 8;
		CHECK(lfe_session_bind_done(f.s, tok, v, &io) == -ENOSPC, "tiny out accepted");
		io.out_cap = sizeof f.out;
		CHECK(lfe_session_bind_done(f.s, tok, v, &io) == 0, "bind_done");
		f.nr = parse_all(f.out, io.out_len, f.r, 32);
		if (f.nr == 1)
			check_result(&f.r[0], 0x1234, 1, cases[i].code, NULL);
		else
			CHECK(0, "bind_done wrote %d responses", f.nr);
		CHECK(lfe_session_bind_done(f.s, tok, v, &io) == -ESTALE, "verdict delivered twice");

		CHECK(fx_call(&f, rp, rest, sizeof f.out) == 0 && f.io.in_used == rest &&
		      f.io.flags == 0, "resume");
		f.nr = parse_all(f.out, f.io.out_len, f.r, 32);
		if (f.nr == 1) {
			check_result(&f.r[0], 2, 24, 0, NULL);
			CHECK(strcmp(f.r[0].value, cases[i].code ? "" : "dn:" ALICE) == 0,
			      "whoami after pending '%s'", f.r[0].value);
		} else {
			CHECK(0, "resume wrote %d responses", f.nr);
		}

		/* A reused slot refuses a late verdict for its previous life. */
		b.n = 0;
		bind_req(&b, 3, ALICE, "secret");
		CHECK(fx_call(&f, b.b, b.n, sizeof f.out) == 0 && f.io.flags == LFE_SESS_PENDING,
		      "second pending");
		CHECK(lfe_tb_take_pending(f.tb, &tok, &v), "second token");
		lfe_session_fini(f.s);
		f.s = lfe_session_init(f.mem, &f.cfg);
		lfe_session_set_generation(f.s, 8);
		CHECK(lfe_session_bind_done(f.s, tok, v, &io) == -ESTALE, "late verdict reached reused slot");
		fx_fini(&f);
	}
}

/* The DN pool (cfg.dns) from the session's side: an idle or anonymous
 * session keeps no chunk; a bound one exactly one, of its DN's class; a
 * rebind, a failed bind, a pending bind's failure and the close give it
 * back; a bind that finds the pool dry is answered busy (51) without being
 * verified, and the next one after room came back succeeds. */
static uint64_t dn_chunks(const struct fx *f)
{
	struct lfe_dnpool_stats ds;
	lfe_dnpool_stats(f->dns, &ds);
	return ds.chunks;
}

static int bind_code(struct fx *f, int32_t msgid, const char *dn, const char *pw)
{
	struct pdu in = { .n = 0 };
	bind_req(&in, msgid, dn, pw);
	if (fx_run(f, &in) != 1)
		return -1;
	return f->r[0].code;
}

static void test_dn_chunks(void)
{
	/* What every connection pays stays small: the DNs are not in it. */
	CHECK(lfe_session_size() <= 128, "session %zu bytes", lfe_session_size());

	struct fx f;
	fx_init(&f);
	CHECK(dn_chunks(&f) == 0, "idle session holds a chunk");
	CHECK(bind_code(&f, 1, "", "") == 0 && dn_chunks(&f) == 0, "anonymous bind holds a chunk");
	CHECK(bind_code(&f, 2, ALICE, "secret") == 0 && dn_chunks(&f) == 1, "bound: %llu chunks",
	      (unsigned long long)dn_chunks(&f));
	struct lfe_dnpool_stats ds;
	lfe_dnpool_stats(f.dns, &ds);
	CHECK(ds.bytes == lfe_dnpool_chunk_size(sizeof ALICE), "bound DN takes %llu bytes",
	      (unsigned long long)ds.bytes);
	CHECK(strcmp(bound(&f), ALICE) == 0, "bound '%s'", bound(&f));
	CHECK(bind_code(&f, 3, BOB, "b0b") == 0 && dn_chunks(&f) == 1 && strcmp(bound(&f), BOB) == 0,
	      "rebind: %llu chunks, bound '%s'", (unsigned long long)dn_chunks(&f), bound(&f));
	CHECK(bind_code(&f, 4, ALICE, "wrong") == 49 && dn_chunks(&f) == 0 && bound(&f)[0] == '\0',
	      "failed rebind: %llu chunks", (unsigned long long)dn_chunks(&f));
	CHECK(bind_code(&f, 5, "uid=nobody,ou=people," SUFFIX, "x") == 49 && dn_chunks(&f) == 0,
	      "unknown DN kept a chunk");
	CHECK(bind_code(&f, 6, ALICE, "secret") == 0 && dn_chunks(&f) == 1, "bound again");
	CHECK(bind_code(&f, 7, ALICE, "") == 53 && dn_chunks(&f) == 0, "refused bind kept the identity");

	/* Dry: take every page (2 KiB chunks) so no class has room. */
	void *hog[256];
	unsigned nh = 0;
	while (nh < 256 && (hog[nh] = lfe_dnpool_get(f.dns, LFE_DNPOOL_CHUNK_MAX)) != NULL)
		nh++;
	uint64_t verified = lfe_tb_counts(f.tb)->binds;
	CHECK(bind_code(&f, 9, BOB, "b0b") == 51, "dry pool: code %d", f.r[0].code);
	CHECK(strstr(f.r[0].diag, "retry") != NULL, "dry pool diag '%s'", f.r[0].diag);
	CHECK(lfe_tb_counts(f.tb)->binds == verified, "dry pool: the bind was verified");
	CHECK(bound(&f)[0] == '\0' && dn_chunks(&f) == nh, "dry pool: bound '%s', %llu chunks", bound(&f),
	      (unsigned long long)dn_chunks(&f));
	CHECK(lfe_session_stats(f.s)->binds_other == 2, "busy binds counted as other: %llu",
	      (unsigned long long)lfe_session_stats(f.s)->binds_other);
	{
		struct pdu in = { .n = 0 };
		whoami(&in, 10);
		CHECK(fx_run(&f, &in) == 1 && strcmp(f.r[0].value, "") == 0, "whoami after dry: '%s'",
		      f.r[0].value);
	}
	/* Pending binds need room too, and are refused unverified. */
	lfe_tb_set_mode(f.tb, LFE_TB_PENDING);
	CHECK(bind_code(&f, 11, BOB, "b0b") == 51, "dry pool, pending mode");
	uint64_t tok;
	enum lfe_be_verdict v;
	CHECK(!lfe_tb_take_pending(f.tb, &tok, &v), "dry pool: a job went out");
	while (nh)
		lfe_dnpool_put(f.dns, hog[--nh]);
	lfe_tb_set_mode(f.tb, LFE_TB_VERIFY);
	CHECK(bind_code(&f, 12, BOB, "b0b") == 0 && strcmp(bound(&f), BOB) == 0, "room again");
	fx_fini(&f);

	/* Pending: the DN is held while the verdict is out; kept on success,
	 * returned on failure, and by the close of a connection whose
	 * verification is still running. */
	static const struct {
		const char *pw;
		int close_first;
		uint64_t chunks_after;
	} pc[] = { { "b0b", 0, 1 }, { "wrong", 0, 0 }, { "b0b", 1, 0 } };
	for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
		fx_init(&f);
		CHECK(bind_code(&f, 1, ALICE, "secret") == 0 && dn_chunks(&f) == 1, "pending %zu: bound", i);
		lfe_tb_set_mode(f.tb, LFE_TB_PENDING);
		struct pdu in = { .n = 0 };
		bind_req(&in, 2, BOB, pc[i].pw);
		CHECK(fx_call(&f, in.b, in.n, sizeof f.out) == 0 && f.io.flags == LFE_SESS_PENDING,
		      "pending %zu: flags %u", i, f.io.flags);
		CHECK(dn_chunks(&f) == 1 && bound(&f)[0] == '\0', "pending %zu: %llu chunks, bound '%s'", i,
		      (unsigned long long)dn_chunks(&f), bound(&f));
		CHECK(lfe_tb_take_pending(f.tb, &tok, &v), "pending %zu: token", i);
		if (pc[i].close_first) {
			lfe_session_fini(f.s);
			CHECK(dn_chunks(&f) == 0, "closed while pending: %llu chunks",
			      (unsigned long long)dn_chunks(&f));
			struct lfe_session_io io = { .out = f.out, .out_cap = sizeof f.out };
			CHECK(lfe_session_bind_done(f.s, tok, v, &io) == -ESTALE, "verdict after close");
		} else {
			struct lfe_session_io io = { .out = f.out, .out_cap = sizeof f.out };
			CHECK(lfe_session_bind_done(f.s, tok, v, &io) == 0, "pending %zu: bind_done", i);
			CHECK(dn_chunks(&f) == pc[i].chunks_after, "pending %zu: %llu chunks after the verdict",
			      i, (unsigned long long)dn_chunks(&f));
			CHECK(strcmp(bound(&f), pc[i].chunks_after ? BOB : "") == 0, "pending %zu: bound '%s'", i,
			      bound(&f));
		}
		fx_fini(&f);
	}

	/* Unbind: the identity goes with the session's close. */
	fx_init(&f);
	struct pdu in = { .n = 0 };
	bind_req(&in, 1, ALICE, "secret");
	unbind_req(&in, 2);
	CHECK(fx_run(&f, &in) == 1 && f.io.flags == LFE_SESS_CLOSE, "bind + unbind");
	lfe_session_fini(f.s);
	CHECK(dn_chunks(&f) == 0, "after unbind and close: %llu chunks", (unsigned long long)dn_chunks(&f));
	fx_fini(&f);
}

/* [ldap] require_tls: bind (passwords only under TLS) and all (only
 * StartTLS, the root DSE and unbind in clear). */
static void test_require_tls(void)
{
	struct fx f;
	fx_init(&f);
	f.cfg.starttls = true;
	f.cfg.require_tls = LFE_REQUIRE_TLS_BIND;
	struct pdu in = { .n = 0 };
	bind_req(&in, 1, ALICE, "secret");
	bind_req(&in, 2, "", "");
	whoami(&in, 3);
	starttls_req(&in, 4);
	if (fx_run(&f, &in) == 4) {
		check_result(&f.r[0], 1, 1, 13, NULL);
		check_result(&f.r[1], 2, 1, 0, NULL);
		check_result(&f.r[2], 3, 24, 0, NULL);
		check_result(&f.r[3], 4, 24, 0, NULL);
	} else {
		CHECK(0, "require bind: %d responses", f.nr);
	}
	CHECK(f.io.flags == LFE_SESS_STARTTLS, "flags %#x", f.io.flags);
	struct pdu tls = { .n = 0 };
	bind_req(&tls, 5, ALICE, "secret");
	if (fx_run(&f, &tls) == 1)
		check_result(&f.r[0], 5, 1, 0, NULL);
	CHECK(strcmp(bound(&f), ALICE) == 0, "bound '%s' after StartTLS", bound(&f));
	fx_fini(&f);

	fx_init(&f);
	f.cfg.starttls = true;
	f.cfg.require_tls = LFE_REQUIRE_TLS_ALL;
	struct pdu any = { .n = 0 }, all = { .n = 0 };
	f_present(&any, "objectClass");
	whoami(&all, 1);
	search_req(&all, 2, &(struct sreq){ SUFFIX, 2, 0, 0, &any, { NULL } });
	bind_req(&all, 3, "", "");
	search_req(&all, 4, &(struct sreq){ "", 0, 0, 0, &any, { NULL } });
	starttls_req(&all, 5);
	if (fx_run(&f, &all) == 6) {
		check_result(&f.r[0], 1, 24, 13, NULL);
		check_result(&f.r[1], 2, 5, 13, NULL);
		check_result(&f.r[2], 3, 1, 13, NULL);
		CHECK(f.r[3].op == 4, "root DSE entry op %d", f.r[3].op);
		check_result(&f.r[4], 4, 5, 0, NULL);
		check_result(&f.r[5], 5, 24, 0, NULL);
	} else {
		CHECK(0, "require all: %d responses", f.nr);
	}
	struct pdu after = { .n = 0 };
	whoami(&after, 6);
	if (fx_run(&f, &after) == 1)
		check_result(&f.r[0], 6, 24, 0, NULL);
	fx_fini(&f);

	const char *why = NULL;
	enum lfe_require_tls r;
	CHECK(lfe_require_tls_parse("all", &r, &why) == 0 && r == LFE_REQUIRE_TLS_ALL, "parse all");
	CHECK(lfe_require_tls_parse("yes", &r, &why) == -EINVAL && why, "parse yes");
}

static void test_extended(void)
{
	struct fx f;
	fx_init(&f);
	static const struct ctl crit[] = { { "1.2.3.4.5", 1 } };
	struct pdu in = { .n = 0 };
	whoami(&in, 1);
	ext_req(&in, 2, "1.2.3.4", NULL, NULL, 0);  /* unknown */
	ext_req(&in, 3, OID_WHOAMI, "x", NULL, 0);
	ext_req(&in, 4, OID_WHOAMI, NULL, crit, 1);
	if (fx_run(&f, &in) == 4) {
		check_result(&f.r[0], 1, 24, 0, "");
		CHECK(f.r[0].has_value && f.r[0].value_len == 0 && !f.r[0].has_name,
		      "anonymous whoami: value %d len %zu name %d", f.r[0].has_value,
		      f.r[0].value_len, f.r[0].has_name);
		check_result(&f.r[1], 2, 24, 2, "unsupported extended operation");
		CHECK(!f.r[1].has_name && !f.r[1].has_value, "unknown ext carries name/value");
		check_result(&f.r[2], 3, 24, 2, NULL);
		check_result(&f.r[3], 4, 24, 12, NULL);
	} else {
		CHECK(0, "extended: %d responses", f.nr);
	}
	CHECK(lfe_session_stats(f.s)->extended == 4, "extended stat %llu",
	      (unsigned long long)lfe_session_stats(f.s)->extended);
	fx_fini(&f);
}

static void test_rootdse(void)
{
	struct pdu any = { .n = 0 }, top = { .n = 0 }, ver = { .n = 0 }, cn = { .n = 0 };
	f_present(&any, "objectClass");
	f_eq(&top, "objectclass", "top");
	f_eq(&ver, "supportedLDAPVersion", "3");
	f_eq(&cn, "cn", "x");
	static const char *const all[] = { "objectClass", "namingContexts", "supportedLDAPVersion",
					   "supportedExtension", "vendorName", "vendorVersion",
					   "supportedFeatures", "supportedControl", NULL };
	const struct {
		const char *name;
		struct sreq req;
		int entry;             /* an entry expected */
		const char *const *want; /* attrs that must be there */
		int n_want;            /* exact attr count, -1 = all */
	} cases[] = {
		{ "no attrs", { "", 0, 0, 0, &any, { NULL } }, 1, all, -1 },
		{ "star", { "", 0, 0, 0, &any, { "*" } }, 1, all, -1 },
		{ "plus", { "", 0, 0, 0, &any, { "+" } }, 1, all, -1 },
		{ "named", { "", 0, 0, 0, &any, { "namingcontexts", "supportedExtension" } }, 1,
		  (const char *const[]){ "namingContexts", "supportedExtension", NULL }, 2 },
		{ "named, unknown", { "", 0, 0, 0, &any, { "supportedSASLMechanisms" } }, 1,
		  (const char *const[]){ NULL }, 0 },
		{ "named supportedControl", { "", 0, 0, 0, &any, { "supportedControl" } }, 1,
		  (const char *const[]){ "supportedControl", NULL }, 1 },
		{ "1.1", { "", 0, 0, 0, &any, { "1.1" } }, 1, (const char *const[]){ NULL }, 0 },
		{ "eq objectClass", { "", 0, 0, 0, &top, { NULL } }, 1, all, -1 },
		{ "eq version", { "", 0, 0, 0, &ver, { "vendorName" } }, 1,
		  (const char *const[]){ "vendorName", NULL }, 1 },
		{ "filter false", { "", 0, 0, 0, &cn, { NULL } }, 0, NULL, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fx f;
		fx_init(&f);
		struct pdu in = { .n = 0 };
		search_req(&in, 9, &cases[i].req);
		int n = fx_run(&f, &in);
		CHECK(n == 1 + cases[i].entry, "%s: %d responses", cases[i].name, n);
		if (n != 1 + cases[i].entry) {
			fx_fini(&f);
			continue;
		}
		check_result(&f.r[n - 1], 9, 5, 0, NULL);
		if (cases[i].entry) {
			const struct resp *e = &f.r[0];
			CHECK(e->op == 4 && e->dn[0] == '\0', "%s: op %d dn '%s'", cases[i].name,
			      e->op, e->dn);
			int nw = 0;
			for (; cases[i].want[nw]; nw++)
				CHECK(attr(e, cases[i].want[nw]), "%s: %s missing", cases[i].name,
				      cases[i].want[nw]);
			if (cases[i].n_want >= 0)
				CHECK(e->n_attrs == cases[i].n_want, "%s: %d attrs want %d",
				      cases[i].name, e->n_attrs, cases[i].n_want);
			else
				CHECK(e->n_attrs == nw, "%s: %d attrs want %d", cases[i].name,
				      e->n_attrs, nw);
			if (cases[i].n_want < 0) {
				CHECK(has_val(e, "namingContexts", SUFFIX), "namingContexts value");
				CHECK(has_val(e, "supportedLDAPVersion", "3"), "version value");
				CHECK(has_val(e, "supportedExtension", OID_WHOAMI), "whoami oid");
				CHECK(has_val(e, "vendorName", "ldapfe"), "vendorName");
				CHECK(has_val(e, "vendorVersion", "0.1.0"), "vendorVersion");
				/* supportedControl: the session's control table,
				 * what it honours (paged results, RFC 2696). */
				CHECK(has_val(e, "supportedControl", "1.2.840.113556.1.4.319"),
				      "paged results listed");
				CHECK(!attr(e, "supportedSASLMechanisms"), "empty lists must be omitted");
			}
		}
		CHECK(lfe_tb_counts(f.tb)->searches == 0, "%s: root DSE reached the backend",
		      cases[i].name);
		fx_fini(&f);
	}
}

static void test_search(void)
{
	struct pdu any = { .n = 0 }, alice = { .n = 0 }, none = { .n = 0 };
	/* Every fixture entry has objectClass top; an indexed assertion, as
	 * the store's search wants for one-level and subtree scope. */
	f_eq(&any, "objectClass", "top");
	struct pdu present = { .n = 0 };
	f_present(&present, "objectClass");
	f_eq(&alice, "uid", "alice");
	f_eq(&none, "uid", "zed");
	static const char *const user[] = { "objectClass", "uid", "cn", "sn", "mail", NULL };
	const struct {
		const char *name;
		struct sreq req;
		int backend;            /* backend must be called */
		int entries;            /* SearchResultEntry count */
		int code;
		const char *const *want;  /* attrs of the first entry, exact set */
		int types_only;
	} cases[] = {
		{ "sub eq", { SUFFIX, 2, 0, 0, &alice, { NULL } }, 1, 1, 0, user, 0 },
		{ "star", { SUFFIX, 2, 0, 0, &alice, { "*" } }, 1, 1, 0, user, 0 },
		{ "named", { SUFFIX, 2, 0, 0, &alice, { "CN", "0.9.2342.19200300.100.1.1" } }, 1, 1, 0,
		  (const char *const[]){ "cn", "uid", NULL }, 0 },
		{ "password never", { SUFFIX, 2, 0, 0, &alice, { "userPassword", "cn" } }, 1, 1, 0,
		  (const char *const[]){ "cn", NULL }, 0 },
		{ "plus", { SUFFIX, 2, 0, 0, &alice, { "+" } }, 1, 1, 0,
		  (const char *const[]){ "createTimestamp", NULL }, 0 },
		{ "star plus", { SUFFIX, 2, 0, 0, &alice, { "*", "+" } }, 1, 1, 0,
		  (const char *const[]){ "objectClass", "uid", "cn", "sn", "mail", "createTimestamp",
					 NULL }, 0 },
		{ "1.1", { SUFFIX, 2, 0, 0, &alice, { "1.1" } }, 1, 1, 0,
		  (const char *const[]){ NULL }, 0 },
		{ "1.1 beside cn", { SUFFIX, 2, 0, 0, &alice, { "1.1", "cn" } }, 1, 1, 0,
		  (const char *const[]){ "cn", NULL }, 0 },
		{ "typesOnly", { SUFFIX, 2, 0, 1, &alice, { "cn", "sn" } }, 1, 1, 0,
		  (const char *const[]){ "cn", "sn", NULL }, 1 },
		{ "no match", { SUFFIX, 2, 0, 0, &none, { NULL } }, 1, 0, 0, NULL, 0 },
		{ "base not normalized", { "DC=Example, DC=COM", 0, 0, 0, &any, { "dc" } }, 1, 1, 0,
		  (const char *const[]){ "dc", NULL }, 0 },
		{ "one level", { "ou=people," SUFFIX, 1, 0, 0, &any, { "1.1" } }, 1, 2, 0, NULL, 0 },
		{ "size limit hit", { SUFFIX, 2, 2, 0, &any, { "1.1" } }, 1, 2, 4, NULL, 0 },
		{ "size limit exact", { "ou=people," SUFFIX, 1, 2, 0, &any, { "1.1" } }, 1, 2, 0,
		  NULL, 0 },
		{ "no size limit", { SUFFIX, 2, 0, 0, &any, { "1.1" } }, 1, 4, 0, NULL, 0 },
		{ "no such base", { "ou=nowhere," SUFFIX, 2, 0, 0, &any, { NULL } }, 1, 0, 32, NULL, 0 },
		{ "invalid base", { "not a dn", 2, 0, 0, &any, { NULL } }, 0, 0, 34, NULL, 0 },
		/* The store holds one naming context: nothing lies under "". */
		{ "empty base, subtree", { "", 2, 0, 0, &alice, { "uid" } }, 1, 0, 32, NULL, 0 },
		{ "unindexed filter", { SUFFIX, 2, 0, 0, &present, { NULL } }, 1, 0, 53, NULL, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fx f;
		fx_init(&f);
		struct pdu in = { .n = 0 };
		search_req(&in, 4, &cases[i].req);
		int n = fx_run(&f, &in);
		CHECK(n == cases[i].entries + 1, "%s: %d responses", cases[i].name, n);
		CHECK((int)lfe_tb_counts(f.tb)->searches == cases[i].backend, "%s: backend calls",
		      cases[i].name);
		if (n == cases[i].entries + 1) {
			check_result(&f.r[n - 1], 4, 5, cases[i].code, NULL);
			for (int k = 0; k < n - 1; k++) {
				CHECK(f.r[k].op == 4 && f.r[k].msgid == 4, "%s: entry %d", cases[i].name, k);
				CHECK(!attr(&f.r[k], "userPassword"), "%s: password disclosed",
				      cases[i].name);
			}
		}
		if (n >= 2 && cases[i].want) {
			const struct resp *e = &f.r[0];
			int nw = 0;
			for (; cases[i].want[nw]; nw++) {
				const struct rattr *a = attr(e, cases[i].want[nw]);
				CHECK(a, "%s: %s missing", cases[i].name, cases[i].want[nw]);
				if (a)
					CHECK(cases[i].types_only ? a->n_vals == 0 : a->n_vals > 0,
					      "%s: %s has %d values", cases[i].name, a->type, a->n_vals);
			}
			CHECK(e->n_attrs == nw, "%s: %d attrs want %d", cases[i].name, e->n_attrs, nw);
		}
		if (cases[i].backend && i == 10)
			CHECK(strcmp(lfe_tb_counts(f.tb)->last_search_base, SUFFIX) == 0,
			      "base given to backend '%s'", lfe_tb_counts(f.tb)->last_search_base);
		CHECK(lfe_session_stats(f.s)->searches == 1, "%s: searches stat", cases[i].name);
		fx_fini(&f);
	}

	/* No backend search: unwillingToPerform, the root DSE still works. */
	struct fx f;
	fx_init(&f);
	f.ops.search = NULL;
	struct pdu in = { .n = 0 };
	search_req(&in, 1, &(struct sreq){ SUFFIX, 2, 0, 0, &any, { NULL } });
	search_req(&in, 2, &(struct sreq){ "", 0, 0, 0, &any, { NULL } });
	if (fx_run(&f, &in) == 3) {
		check_result(&f.r[0], 1, 5, 53, NULL);
		CHECK(f.r[1].op == 4, "root DSE entry without backend search");
		check_result(&f.r[2], 2, 5, 0, NULL);
	} else {
		CHECK(0, "no search backend: %d responses", f.nr);
	}
	fx_fini(&f);
}

static void test_write_ops(void)
{
	static const struct {
		int req, resp;
	} ops[] = { { 10, 11 }, { 6, 7 }, { 8, 9 }, { 12, 13 }, { 14, 15 } };
	static const struct ctl crit[] = { { "1.3.6.1.4.1.4203.1.10.1", 1 } };
	static const struct ctl soft[] = { { "1.3.6.1.4.1.4203.1.10.1", 0 } };
	for (size_t i = 0; i < 5; i++) {
		struct fx f;
		fx_init(&f);
		struct pdu in = { .n = 0 };
		write_req(&in, 10, ops[i].req, NULL, 0);
		write_req(&in, 11, ops[i].req, crit, 1);
		write_req(&in, 12, ops[i].req, soft, 1);
		if (fx_run(&f, &in) == 3) {
			check_result(&f.r[0], 10, ops[i].resp, 53, READ_ONLY);
			check_result(&f.r[1], 11, ops[i].resp, 12, NULL);
			check_result(&f.r[2], 12, ops[i].resp, 53, READ_ONLY);
		} else {
			CHECK(0, "op %d: %d responses", ops[i].req, f.nr);
		}
		CHECK(f.io.flags == 0 && f.io.in_used == in.n, "op %d: flags/used", ops[i].req);
		fx_fini(&f);
	}
}

static void test_controls(void)
{
	static const struct ctl crit[] = { { "1.2.840.113556.1.4.319", 0 },
					   { "2.16.840.1.113730.3.4.2", 1 } };
	static const struct ctl soft[] = { { "1.2.840.113556.1.4.319", 0 } };
	struct pdu any = { .n = 0 };
	f_present(&any, "objectClass");
	struct fx f;
	fx_init(&f);
	struct pdu in = { .n = 0 };
	bind_ctl(&in, 1, 3, ALICE, "secret", crit, 2);
	bind_ctl(&in, 2, 3, BOB, "b0b", soft, 1);
	search_ctl(&in, 3, &(struct sreq){ "", 0, 0, 0, &any, { "1.1" } }, crit, 2);
	search_ctl(&in, 4, &(struct sreq){ "", 0, 0, 0, &any, { "1.1" } }, soft, 1);
	if (fx_run(&f, &in) == 5) {
		check_result(&f.r[0], 1, 1, 12, NULL);
		check_result(&f.r[1], 2, 1, 0, NULL);
		check_result(&f.r[2], 3, 5, 12, NULL);
		CHECK(f.r[3].op == 4, "non-critical control blocked the search");
		check_result(&f.r[4], 4, 5, 0, NULL);
	} else {
		CHECK(0, "controls: %d responses", f.nr);
	}
	CHECK(strcmp(bound(&f), BOB) == 0, "bound '%s'", bound(&f));
	fx_fini(&f);

	/* The control table names the operations: paged results marked
	 * critical on a bind is refused (12); on a search without a value
	 * (RFC 2696 requires one) it is a protocol error (2). */
	static const struct ctl pcrit[] = { { "1.2.840.113556.1.4.319", 1 } };
	fx_init(&f);
	in.n = 0;
	bind_ctl(&in, 1, 3, BOB, "b0b", pcrit, 1);
	search_ctl(&in, 2, &(struct sreq){ SUFFIX, 2, 0, 0, &any, { "1.1" } }, pcrit, 1);
	if (fx_run(&f, &in) == 2) {
		check_result(&f.r[0], 1, 1, 12, NULL);
		check_result(&f.r[1], 2, 5, 2, NULL);
	} else {
		CHECK(0, "paged controls: %d responses", f.nr);
	}
	fx_fini(&f);
}

/* The Password Policy control (session.h, ops->bind_controls): read on
 * binds, critical or not; the backend's response control sent back only
 * to a bind that asked; after a must-change bind searches get 50 (the
 * root DSE's aside) until the next bind; the root DSE lists the control.
 * Without bind_controls a critical one is still refused (12). */
static bool pp_must_change;
static int pp_calls, pp_want;
static const uint8_t PP_CTRL[] = { 0x30, 0x22, 0x04, 0x19, '1', '.', '3', '.', '6', '.', '1', '.',
				   '4', '.', '1', '.', '4', '2', '.', '2', '.', '2', '7', '.',
				   '8', '.', '5', '.', '1', 0x04, 0x05, 0x30, 0x03, 0x81, 0x01,
				   0x02 };

static ssize_t pp_controls(void *ctx, bool want, uint8_t *out, size_t cap, bool *must_change)
{
	(void)ctx;
	pp_calls++;
	pp_want += want;
	*must_change = pp_must_change && want;   /* the first bind's only */
	if (!want)
		return 0;
	if (cap < sizeof PP_CTRL)
		return -ENOSPC;
	memcpy(out, PP_CTRL, sizeof PP_CTRL);
	return sizeof PP_CTRL;
}

static void test_ppolicy_control(void)
{
	static const struct ctl pp[] = { { LFE_OID_PPOLICY, 0 } };
	static const struct ctl ppc[] = { { LFE_OID_PPOLICY, 1 } };
	struct pdu any = { .n = 0 };
	f_present(&any, "objectClass");
	for (int mc = 0; mc <= 1; mc++) {
		struct fx f;
		fx_init(&f);
		f.ops.bind_controls = pp_controls;
		pp_must_change = mc;
		pp_calls = pp_want = 0;
		struct pdu in = { .n = 0 };
		bind_ctl(&in, 1, 3, ALICE, "secret", pp, 1);
		search_req(&in, 2, &(struct sreq){ SUFFIX, 0, 0, 0, &any, { "1.1" } });
		search_req(&in, 3, &(struct sreq){ "", 0, 0, 0, &any, { "supportedControl" } });
		bind_ctl(&in, 4, 3, ALICE, "wrong", ppc, 1);
		bind_ctl(&in, 5, 3, BOB, "b0b", NULL, 0);
		search_req(&in, 6, &(struct sreq){ SUFFIX, 0, 0, 0, &any, { "1.1" } });
		if (fx_run(&f, &in) != 9 - mc) {
			CHECK(0, "ppolicy: %d responses", f.nr);
			fx_fini(&f);
			continue;
		}
		check_result(&f.r[0], 1, 1, 0, NULL);
		CHECK(f.r[0].ctrls_len == sizeof PP_CTRL &&
		      memcmp(f.r[0].ctrls, PP_CTRL, sizeof PP_CTRL) == 0, "bind: control not sent");
		if (mc) {
			check_result(&f.r[1], 2, 5, 50, NULL);
			CHECK(strstr(f.r[1].diag, "restricted") != NULL, "diag '%s'", f.r[1].diag);
		} else {
			CHECK(f.r[1].op == 4, "search after a plain bind: op %d", f.r[1].op);
		}
		int k = mc ? 2 : 3;   /* the root DSE, readable either way */
		CHECK(f.r[k].op == 4 && has_val(&f.r[k], "supportedControl", LFE_OID_PPOLICY),
		      "root DSE lacks the control");
		check_result(&f.r[k + 1], 3, 5, 0, NULL);
		/* critical: answered, not 12 */
		check_result(&f.r[k + 2], 4, 1, 49, NULL);
		CHECK(f.r[k + 2].ctrls_len == sizeof PP_CTRL, "critical ppolicy: no control");
		/* no control asked: none sent; the restriction ends with the bind */
		check_result(&f.r[k + 3], 5, 1, 0, NULL);
		CHECK(f.r[k + 3].ctrls_len == 0, "unasked control sent");
		CHECK(pp_calls == 3 && pp_want == 2, "bind_controls calls %d want %d", pp_calls,
		      pp_want);
		fx_fini(&f);
	}
	/* No bind_controls: a critical ppolicy control is refused, and the
	 * root DSE does not list it. */
	struct fx f;
	fx_init(&f);
	struct pdu in = { .n = 0 };
	bind_ctl(&in, 1, 3, ALICE, "secret", ppc, 1);
	search_req(&in, 2, &(struct sreq){ "", 0, 0, 0, &any, { "supportedControl" } });
	if (fx_run(&f, &in) == 3) {
		check_result(&f.r[0], 1, 1, 12, NULL);
		CHECK(f.r[1].op == 4 && attr(&f.r[1], "supportedControl") &&
		      !has_val(&f.r[1], "supportedControl", LFE_OID_PPOLICY), "root DSE");
	} else {
		CHECK(0, "ppolicy without backend: %d responses", f.nr);
	}
	fx_fini(&f);
}

/* The backend ops get the call's context (lfe_session_io.be_ctx: the
 * daemon passes the connection's) when it names one, else the
 * configuration's: bind, search, and bind_controls both inline and after
 * a pending verdict (lfe_session_bind_done). */
static void *ctx_seen[4];   /* bind, search, bind_controls, bind_controls at bind_done */
static int ctx_done;
static struct lfe_tb *ctx_tb;

static enum lfe_be_verdict ctx_bind(void *ctx, uint64_t token, const char *ndn, size_t ndn_len,
				    const uint8_t *dn, size_t dn_len, const uint8_t *pw, size_t pw_len)
{
	ctx_seen[0] = ctx;
	return lfe_tb_ops.bind(ctx_tb, token, ndn, ndn_len, dn, dn_len, pw, pw_len);
}

static int ctx_search(void *ctx, const struct lfe_be_search *s, lfe_be_emit_fn emit, void *ec)
{
	ctx_seen[1] = ctx;
	return lfe_tb_ops.search(ctx_tb, s, emit, ec);
}

static ssize_t ctx_controls(void *ctx, bool want, uint8_t *out, size_t cap, bool *must_change)
{
	(void)want, (void)out, (void)cap;
	ctx_seen[2 + ctx_done] = ctx;
	*must_change = false;
	return 0;
}

static void test_conn_ctx(void)
{
	struct pdu any = { .n = 0 };
	int conn;   /* a connection's context */
	f_present(&any, "objectClass");
	for (int with = 0; with <= 1; with++) {
		struct fx f;
		fx_init(&f);
		ctx_tb = f.tb;
		f.ops.bind = ctx_bind;
		f.ops.search = ctx_search;
		f.ops.bind_controls = ctx_controls;
		memset(ctx_seen, 0, sizeof ctx_seen);
		ctx_done = 0;
		void *want = with ? (void *)&conn : (void *)f.tb;
		struct pdu in = { .n = 0 };
		bind_req(&in, 1, ALICE, "secret");
		search_req(&in, 2, &(struct sreq){ SUFFIX, 0, 0, 0, &any, { "1.1" } });
		f.io = (struct lfe_session_io){ .in = in.b, .in_len = in.n, .out = f.out,
						.out_cap = sizeof f.out, .be_ctx = with ? &conn : NULL };
		CHECK_EQ(lfe_session_process(f.s, &f.io), 0);
		CHECK_EQ(f.io.in_used, in.n);
		CHECK(ctx_seen[0] == want && ctx_seen[1] == want && ctx_seen[2] == want,
		      "with %d: bind %p search %p controls %p want %p", with, ctx_seen[0], ctx_seen[1],
		      ctx_seen[2], want);
		/* A pending bind: its controls are asked at bind_done, with the
		 * context of that call. */
		lfe_tb_set_mode(f.tb, LFE_TB_PENDING);
		struct pdu b = { .n = 0 };
		bind_req(&b, 3, ALICE, "secret");
		f.io = (struct lfe_session_io){ .in = b.b, .in_len = b.n, .out = f.out,
						.out_cap = sizeof f.out, .be_ctx = with ? &conn : NULL };
		CHECK_EQ(lfe_session_process(f.s, &f.io), 0);
		CHECK_EQ(f.io.flags, LFE_SESS_PENDING);
		uint64_t token;
		enum lfe_be_verdict v;
		CHECK(lfe_tb_take_pending(f.tb, &token, &v));
		ctx_done = 1;
		f.io = (struct lfe_session_io){ .out = f.out, .out_cap = sizeof f.out,
						.be_ctx = with ? &conn : NULL };
		CHECK_EQ(lfe_session_bind_done(f.s, token, v, &f.io), 0);
		CHECK(ctx_seen[3] == want, "with %d: controls at bind_done %p want %p", with,
		      ctx_seen[3], want);
		fx_fini(&f);
	}
}

static void test_unbind_abandon(void)
{
	struct fx f;
	fx_init(&f);
	struct pdu in = { .n = 0 };
	abandon_req(&in, 1, 7);
	whoami(&in, 2);
	unbind_req(&in, 3);
	whoami(&in, 4);     /* after unbind: never answered */
	if (fx_run(&f, &in) == 1)
		check_result(&f.r[0], 2, 24, 0, NULL);
	else
		CHECK(0, "unbind: %d responses", f.nr);
	CHECK(f.io.flags == LFE_SESS_CLOSE && f.io.in_used == in.n, "unbind flags %u used %zu/%zu",
	      f.io.flags, f.io.in_used, in.n);
	/* A closed session swallows input and keeps saying close. */
	CHECK(fx_call(&f, in.b, in.n, sizeof f.out) == 0 && f.io.out_len == 0 &&
	      f.io.flags == LFE_SESS_CLOSE && f.io.in_used == in.n, "after close");
	fx_fini(&f);
}

static void check_notice(struct fx *f, const char *what)
{
	CHECK(f->nr == 1, "%s: %d responses", what, f->nr);
	if (f->nr == 1) {
		check_result(&f->r[0], 0, 24, 2, NULL);
		CHECK(f->r[0].has_name && strcmp(f->r[0].name, OID_NOTICE) == 0,
		      "%s: notice name '%s'", what, f->r[0].name);
	}
	CHECK(f->io.flags == LFE_SESS_CLOSE, "%s: flags %u", what, f->io.flags);
	CHECK(lfe_session_stats(f->s)->protocol_errors == 1, "%s: protocol_errors %llu", what,
	      (unsigned long long)lfe_session_stats(f->s)->protocol_errors);
}

static void test_malformed(void)
{
	static const struct {
		const char *name;
		const char *hex;
	} cases[] = {
		{ "not a SEQUENCE", "31050201016100" },
		{ "indefinite length", "308002010142000000" },
		{ "empty bind", "300502010160" "00" },
		{ "msgid missing", "3003420100" },
		{ "negative msgid", "30050201ff4200" },
		{ "unbind with content", "3006020101420101" },
		{ "trailing junk in message", "300802010142000401" "00" },
		{ "client sent a response", "300c02010161070a010004000400" },
		{ "unknown op tag", "30050201017f00" },
		{ "bad filter", "301d02010163180400" "0a0100" "0a0100" "020100" "020100" "010100"
				"a303040161" "3000" },
		{ "five length octets", "308500000000050201014200" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fx f;
		fx_init(&f);
		struct pdu in = { .n = 0 };
		const char *h = cases[i].hex;
		for (size_t k = 0; h[k] && h[k + 1]; k += 2) {
			unsigned v;
			sscanf(h + k, "%2x", &v);
			uint8_t b = (uint8_t)v;
			put(&in, &b, 1);
		}
		whoami(&in, 9);       /* must not be answered */
		fx_run(&f, &in);
		check_notice(&f, cases[i].name);
		CHECK(f.io.in_used == in.n, "%s: used %zu/%zu", cases[i].name, f.io.in_used, in.n);
		fx_fini(&f);
	}
}


/* ------------------------------------------------ secrets, policy, limits */

static LDAP *ld;

/* An RFC 4515 filter encoded by libldap (the assertion control's value is
 * exactly a Filter), appended to f. */
static void f_str(struct pdu *f, const char *s)
{
	struct berval bv = { 0, NULL };
	if (ldap_create_assertion_control_value(ld, (char *)s, &bv) != LDAP_SUCCESS) {
		fprintf(stderr, "libldap cannot encode %s\n", s);
		exit(2);
	}
	put(f, bv.bv_val, bv.bv_len);
	ber_memfree(bv.bv_val);
}

#define LEGACY "{CRYPT}legacyhash"
#define AUTHPW "SHA1$c2FsdA$aGFzaA"
#define AUTHFOO "MD5$Zm9v$YmFy"

/* The fixture plus carol, who holds every kind of secret. */
#define CAROL "uid=carol,ou=people,dc=example,dc=com"
static void fx_init_secrets(struct fx *f)
{
	static const char *const carol[] = { "objectClass=top", "objectClass=person", "uid=carol",
					     "cn=Carol", "sn=Secret", "mail=carol@example.com",
					     "userPassword;x-legacy=" LEGACY, "authPassword=" AUTHPW,
					     "authPassword;foo=" AUTHFOO };
	fx_init(f);
	if (lfe_tb_add(f->tb, CAROL, "s3cret", carol, 9)) {
		fprintf(stderr, "carol setup failed\n");
		exit(2);
	}
}

/* A careless backend: every entry under the base matches, whatever the
 * filter. The session's own check must still keep secrets out. */
static int matchall_search(void *ctx, const struct lfe_be_search *s, lfe_be_emit_fn emit,
			   void *emit_ctx)
{
	struct lfe_be_search all = *s;
	struct lfe_search_req req = *s->req;
	/* (objectClass=top): every entry of the fixture, and indexed, so the
	 * real store's search takes it. */
	static const uint8_t every[] = { 0xa3, 0x12, 0x04, 0x0b, 'o', 'b', 'j', 'e', 'c', 't',
					 'C', 'l', 'a', 's', 's', 0x04, 0x03, 't', 'o', 'p' };
	req.filter = (struct lfe_bytes){ every, sizeof every };
	all.req = &req;
	return lfe_tb_ops.search(ctx, &all, emit, emit_ctx);
}

static void test_msgid0(void)
{
	struct pdu ops[4];
	memset(ops, 0, sizeof ops);
	struct pdu any = { .n = 0 };
	f_present(&any, "objectClass");
	bind_req(&ops[0], 0, ALICE, "secret");
	search_req(&ops[1], 0, &(struct sreq){ SUFFIX, 2, 0, 0, &any, { NULL } });
	whoami(&ops[2], 0);
	unbind_req(&ops[3], 0);
	for (int i = 0; i < 4; i++) {
		struct fx f;
		fx_init(&f);
		struct pdu in = { .n = 0 };
		put(&in, ops[i].b, ops[i].n);
		whoami(&in, 9);       /* must not be answered */
		fx_run(&f, &in);
		check_notice(&f, "messageID 0");
		CHECK(lfe_tb_counts(f.tb)->binds == 0 && lfe_tb_counts(f.tb)->searches == 0,
		      "msgid 0 op %d reached the backend", i);
		fx_fini(&f);
	}
}

/* A search over the filter caps is answered adminLimitExceeded and the
 * connection goes on. */
static void test_filter_limits(void)
{
	static const struct { const char *name; unsigned items, pieces; int code; } cases[] = {
		{ "16 pieces", 1, 16, 0 },
		{ "17 pieces in one item", 1, 17, 11 },
		{ "20000 pieces", 1, 20000, 11 },
		{ "65 pieces in all", 5, 13, 11 },
		{ "257 nodes", 256, 0, 11 },
	};
	static char s[200000];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		/* Under an indexed AND, so the one allowed case reaches the store. */
		size_t o = (size_t)snprintf(s, sizeof s, "(&(objectClass=top)(|");
		for (unsigned k = 0; k < cases[i].items; k++) {
			o += (size_t)snprintf(s + o, sizeof s - o, cases[i].pieces ? "(cn=" : "(cn=x)");
			for (unsigned j = 0; j < cases[i].pieces; j++)
				o += (size_t)snprintf(s + o, sizeof s - o, "*a");
			if (cases[i].pieces)
				o += (size_t)snprintf(s + o, sizeof s - o, "*)");
		}
		snprintf(s + o, sizeof s - o, "))");
		struct berval bv = { 0, NULL };
		if (ldap_create_assertion_control_value(ld, s, &bv) != LDAP_SUCCESS)
			abort();
		/* Big filters do not fit the test's PDU builder: frame by hand. */
		static uint8_t in[200000];
		struct pdu head = { .n = 0 }, tail = { .n = 0 }, al = { .n = 0 };
		tlv_str(&head, 0x04, SUFFIX);
		tlv_int(&head, 0x0a, 2);
		tlv_int(&head, 0x0a, 0);
		tlv_int(&head, 0x02, 0);
		tlv_int(&head, 0x02, 0);
		tlv(&head, 0x01, "\x00", 1);
		tlv_pdu(&tail, 0x30, &al);
		size_t oplen = head.n + bv.bv_len + tail.n, n = 0;
		uint8_t mid[] = { 0x02, 0x01, 0x05, 0x63, 0x83, (uint8_t)(oplen >> 16),
				  (uint8_t)(oplen >> 8), (uint8_t)oplen };
		size_t msglen = sizeof mid + oplen;
		in[n++] = 0x30, in[n++] = 0x83;
		in[n++] = (uint8_t)(msglen >> 16), in[n++] = (uint8_t)(msglen >> 8), in[n++] = (uint8_t)msglen;
		memcpy(in + n, mid, sizeof mid), n += sizeof mid;
		memcpy(in + n, head.b, head.n), n += head.n;
		memcpy(in + n, bv.bv_val, bv.bv_len), n += bv.bv_len;
		memcpy(in + n, tail.b, tail.n), n += tail.n;
		ber_memfree(bv.bv_val);
		struct pdu w = { .n = 0 };
		whoami(&w, 6);
		memcpy(in + n, w.b, w.n), n += w.n;

		struct fx f;
		fx_init(&f);
		f.cfg.max_pdu = sizeof in;
		lfe_session_fini(f.s);
		f.s = lfe_session_init(f.mem, &f.cfg);
		CHECK(fx_call(&f, in, n, sizeof f.out) == 0, "%s: process", cases[i].name);
		f.nr = parse_all(f.out, f.io.out_len, f.r, 32);
		CHECK(f.nr == 2 && f.io.in_used == n && f.io.flags == 0, "%s: %d responses, flags %u",
		      cases[i].name, f.nr, f.io.flags);
		if (f.nr == 2) {
			check_result(&f.r[0], 5, 5, cases[i].code, NULL);
			check_result(&f.r[1], 6, 24, 0, NULL);
		}
		CHECK((int)lfe_tb_counts(f.tb)->searches == (cases[i].code == 0),
		      "%s: backend calls", cases[i].name);
		fx_fini(&f);
	}
}

static int has_secret(const struct resp *r)
{
	for (int i = 0; i < r->n_attrs; i++)
		if (lfe_attr_is_secret((const uint8_t *)r->attrs[i].type, strlen(r->attrs[i].type)))
			return 1;
	return 0;
}

/* Secrets with options are never returned, whatever is asked. */
static void test_secret_attrs(void)
{
	static const char *const lists[][4] = {
		{ NULL }, { "*" }, { "+" }, { "*", "+" }, { "userPassword" },
		{ "userPassword;x-legacy" }, { "USERPASSWORD;X-LEGACY" }, { "2.5.4.35" },
		{ "2.5.4.35;x-legacy" }, { "authPassword" }, { "authPassword;foo" },
		{ "1.3.6.1.4.1.4203.1.3.4" }, { "authPassword", "cn" },
	};
	struct pdu carol = { .n = 0 };
	f_eq(&carol, "uid", "carol");
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		struct fx f;
		fx_init_secrets(&f);
		struct pdu in = { .n = 0 };
		struct sreq r = { SUFFIX, 2, 0, 0, &carol, { NULL } };
		for (int k = 0; k < 4 && lists[i][k]; k++)
			r.attrs[k] = lists[i][k];
		search_req(&in, 3, &r);
		int n = fx_run(&f, &in);
		CHECK(n == 2, "attrs %zu: %d responses", i, n);
		if (n == 2) {
			CHECK(strcasecmp(f.r[0].dn, CAROL) == 0, "attrs %zu: entry", i);
			CHECK(!has_secret(&f.r[0]), "attrs %zu (%s): a secret was returned", i,
			      lists[i][0] ? lists[i][0] : "none");
			check_result(&f.r[1], 3, 5, 0, NULL);
		}
		fx_fini(&f);
	}
}

/* Every filter type on every secret spelling, anonymous and bound, with
 * the in-memory backend and with a backend that ignores the filter: the
 * entry never comes back. */
static void test_secret_filters(void)
{
	static const char *const types[] = { "userPassword", "userPassword;x-legacy", "2.5.4.35",
					     "authPassword", "authPassword;foo",
					     "1.3.6.1.4.1.4203.1.3.4" };
	static const char *const vals[] = { "s3cret", LEGACY, "s3cret", AUTHPW, AUTHFOO, AUTHPW };
	static const char *const forms[] = {
		"(&(uid=carol)(%1$s=%2$s))", "(&(uid=carol)(%1$s=*))", "(&(uid=carol)(%1$s=%3$.3s*))",
		"(&(uid=carol)(%1$s=*%3$.2s*))", "(&(uid=carol)(%1$s>=!))", "(&(uid=carol)(%1$s<=~))",
		"(&(uid=carol)(%1$s~=%2$s))", "(&(uid=carol)(%1$s:=%2$s))",
		"(&(uid=carol)(%1$s:dn:=%2$s))", "(&(uid=carol)(!(%1$s=nomatch)))",
		"(&(uid=carol)(!(!(%1$s=*))))", "(&(uid=carol)(:caseExactMatch:=%2$s))",
	};
	for (int leaky = 0; leaky < 2; leaky++) {
		for (int bound_as_bob = 0; bound_as_bob < 2; bound_as_bob++) {
			for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
				for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
					char s[256];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
					snprintf(s, sizeof s, forms[k], types[t], vals[t], vals[t]);
#pragma GCC diagnostic pop
					struct fx f;
					fx_init_secrets(&f);
					if (leaky)
						f.ops.search = matchall_search;
					struct pdu in = { .n = 0 }, filt = { .n = 0 };
					if (bound_as_bob)
						bind_req(&in, 1, BOB, "b0b");
					f_str(&filt, s);
					search_req(&in, 2, &(struct sreq){ SUFFIX, 2, 0, 0, &filt,
									   { "*", "+" } });
					int n = fx_run(&f, &in);
					int want = 1 + bound_as_bob;
					CHECK(n == want, "%s (leaky %d, bound %d): %d responses", s, leaky,
					      bound_as_bob, n);
					if (n == want)
						check_result(&f.r[n - 1], 2, 5, 0, NULL);
					fx_fini(&f);
				}
			}
		}
	}
	/* The careless backend alone would return carol: the session's check
	 * is what stops it. A legitimate filter still finds her. */
	struct fx f;
	fx_init_secrets(&f);
	f.ops.search = matchall_search;
	struct pdu in = { .n = 0 }, filt = { .n = 0 };
	f_str(&filt, "(|(uid=carol)(userPassword=nomatch))");
	search_req(&in, 2, &(struct sreq){ SUFFIX, 2, 0, 0, &filt, { "uid" } });
	int n = fx_run(&f, &in);
	CHECK(n == 2 && strcasecmp(f.r[0].dn, CAROL) == 0, "legitimate filter: %d responses", n);
	fx_fini(&f);
}

/* A backend that evaluates secrets like any attribute (issue 32): for a
 * filter that is one presence item on a secret type, or its negation, it
 * emits the entries holding a secret (or holding none), with everything
 * they hold. The session must still treat the item as Undefined: no
 * entry, and never a secret. */
struct evalall {
	lfe_be_emit_fn emit;
	void *ctx;
	int want;                   /* 1: entries with a secret, 0: without */
	int emitted;                /* what the backend handed the session */
};
static int evalall_count;

static int evalall_emit(void *c, const struct lfe_ldap_entry *ent)
{
	struct evalall *e = c;
	int has = 0;
	size_t cur = 0;
	struct lfe_bytes type, list;
	uint32_t nv;
	while (ent->next_attr(ent, &cur, &type, &nv, &list) > 0)
		has |= lfe_attr_is_secret(type.p, type.len);
	if (has != e->want)
		return 0;
	e->emitted++;
	return e->emit(e->ctx, ent);
}

static int evalall_search(void *ctx, const struct lfe_be_search *s, lfe_be_emit_fn emit,
			  void *emit_ctx)
{
	const uint8_t *f = s->req->filter.p;
	size_t n = s->req->filter.len;
	struct evalall e = { emit, emit_ctx, 1, 0 };
	if (n > 2 && f[0] == 0xa2) {             /* (!(x=*)) */
		e.want = 0;
		f += 2, n -= 2;
	}
	if (n < 2 || f[0] != 0x87 || f[1] != n - 2 ||
	    !lfe_attr_is_secret(f + 2, n - 2))
		return matchall_search(ctx, s, emit, emit_ctx);
	int rc = matchall_search(ctx, s, evalall_emit, &e);
	evalall_count += e.emitted;
	return rc;
}

static void test_secret_evalall(void)
{
	static const char *const filters[] = {
		"(userPassword=*)", "(!(userPassword=*))", "(authPassword=*)",
		"(!(authPassword=*))", "(userPassword;x-legacy=*)", "(2.5.4.35=*)",
	};
	static const char *const lists[][3] = { { NULL }, { "*", "+" }, { "userPassword", "uid" } };
	for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++) {
		for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
			struct fx f;
			fx_init_secrets(&f);
			f.ops.search = evalall_search;
			struct pdu in = { .n = 0 }, filt = { .n = 0 };
			f_str(&filt, filters[i]);
			struct sreq r = { SUFFIX, 2, 0, 0, &filt, { NULL } };
			for (int k = 0; k < 3 && lists[l][k]; k++)
				r.attrs[k] = lists[l][k];
			search_req(&in, 2, &r);
			evalall_count = 0;
			int n = fx_run(&f, &in);
			/* the backend did match: the session is what refuses */
			CHECK(evalall_count > 0, "%s: the backend matched nothing", filters[i]);
			CHECK(n == 1, "%s (attrs %zu): %d responses, want the result only", filters[i], l,
			      n);
			for (int k = 0; k < n; k++)
				CHECK(!has_secret(&f.r[k]), "%s: a secret returned", filters[i]);
			if (n >= 1)
				check_result(&f.r[n - 1], 2, 5, 0, NULL);
			fx_fini(&f);
		}
	}
}

/* The search access policy: who, where, which attributes. */
static void test_policy(void)
{
	struct pdu carol = { .n = 0 }, mail = { .n = 0 }, notmail = { .n = 0 }, either = { .n = 0 },
		   any = { .n = 0 };
	f_eq(&carol, "uid", "carol");
	f_eq(&mail, "mail", "carol@example.com");
	f_str(&notmail, "(&(uid=carol)(!(mail=x)))");
	/* An OR under an indexed AND: the real store needs an index to search. */
	f_str(&either, "(&(uid=carol)(|(uid=carol)(mail=x)))");
	f_present(&any, "objectClass");
	static const char *const uid_cn[] = { "uid", "cn", NULL };
	static const char *const uid_only[] = { "uid", NULL };
	const struct {
		const char *name;
		bool allow_anon;
		enum lfe_search_access access;
		const char *base;          /* normalized policy base or NULL */
		enum lfe_search_scope_max scope;
		const char *const *attrs;  /* policy attrs or NULL */
		bool bind;                 /* bind as bob first */
		struct sreq req;
		int code, entries;
		const char *const *want;   /* exact attribute set of the first entry */
	} cases[] = {
		{ "default anon", true, 0, NULL, 0, NULL, false,
		  { SUFFIX, 2, 0, 0, &carol, { NULL } }, 0, 1, NULL },
		{ "no anon: anon search", false, 0, NULL, 0, NULL, false,
		  { SUFFIX, 2, 0, 0, &carol, { NULL } }, 50, 0, NULL },
		{ "no anon: bound search", false, 0, NULL, 0, NULL, true,
		  { SUFFIX, 2, 0, 0, &carol, { NULL } }, 0, 1, NULL },
		{ "no anon overrides access=anonymous", false, LFE_SEARCH_ACCESS_ANONYMOUS, NULL, 0,
		  NULL, false, { SUFFIX, 2, 0, 0, &carol, { NULL } }, 50, 0, NULL },
		{ "bound: anon", true, LFE_SEARCH_ACCESS_BOUND, NULL, 0, NULL, false,
		  { SUFFIX, 2, 0, 0, &carol, { NULL } }, 50, 0, NULL },
		{ "bound: bound", true, LFE_SEARCH_ACCESS_BOUND, NULL, 0, NULL, true,
		  { SUFFIX, 2, 0, 0, &carol, { NULL } }, 0, 1, NULL },
		{ "none: bound", true, LFE_SEARCH_ACCESS_NONE, NULL, 0, NULL, true,
		  { SUFFIX, 2, 0, 0, &carol, { NULL } }, 50, 0, NULL },
		{ "none: root DSE readable", true, LFE_SEARCH_ACCESS_NONE, NULL, 0, NULL, false,
		  { "", 0, 0, 0, &any, { NULL } }, 0, 1, NULL },
		{ "no anon: root DSE readable", false, LFE_SEARCH_ACCESS_BOUND, NULL, 0, NULL, false,
		  { "", 0, 0, 0, &any, { NULL } }, 0, 1, NULL },
		{ "base: above", true, 0, "ou=people," SUFFIX, 0, NULL, false,
		  { SUFFIX, 2, 0, 0, &carol, { NULL } }, 50, 0, NULL },
		{ "base: at", true, 0, "ou=people," SUFFIX, 0, NULL, false,
		  { "OU=People," SUFFIX, 2, 0, 0, &carol, { NULL } }, 0, 1, NULL },
		{ "base: below", true, 0, "ou=people," SUFFIX, 0, NULL, false,
		  { CAROL, 0, 0, 0, &any, { NULL } }, 0, 1, NULL },
		{ "base: sibling", true, 0, "ou=people," SUFFIX, 0, NULL, true,
		  { "ou=groups," SUFFIX, 2, 0, 0, &any, { NULL } }, 50, 0, NULL },
		{ "scope one: sub", true, 0, NULL, LFE_SEARCH_SCOPE_ONE, NULL, false,
		  { SUFFIX, 2, 0, 0, &carol, { NULL } }, 50, 0, NULL },
		{ "scope one: one", true, 0, NULL, LFE_SEARCH_SCOPE_ONE, NULL, false,
		  { "ou=people," SUFFIX, 1, 0, 0, &carol, { NULL } }, 0, 1, NULL },
		{ "scope base: one", true, 0, NULL, LFE_SEARCH_SCOPE_BASE, NULL, true,
		  { "ou=people," SUFFIX, 1, 0, 0, &carol, { NULL } }, 50, 0, NULL },
		{ "scope base: base", true, 0, NULL, LFE_SEARCH_SCOPE_BASE, NULL, false,
		  { CAROL, 0, 0, 0, &any, { NULL } }, 0, 1, NULL },
		{ "attrs: returned set", true, 0, NULL, 0, uid_cn, false,
		  { SUFFIX, 2, 0, 0, &carol, { "*", "+", "mail" } }, 0, 1, uid_cn },
		{ "attrs: hidden in filter", true, 0, NULL, 0, uid_cn, false,
		  { SUFFIX, 2, 0, 0, &mail, { NULL } }, 0, 0, NULL },
		{ "attrs: hidden under NOT", true, 0, NULL, 0, uid_cn, false,
		  { SUFFIX, 2, 0, 0, &notmail, { NULL } }, 0, 0, NULL },
		{ "attrs: OR with a visible branch", true, 0, NULL, 0, uid_only, false,
		  { SUFFIX, 2, 0, 0, &either, { NULL } }, 0, 1, uid_only },
		{ "attrs: unrestricted sees mail", true, 0, NULL, 0, NULL, false,
		  { SUFFIX, 2, 0, 0, &mail, { "mail" } }, 0, 1,
		  (const char *const[]){ "mail", NULL } },
	};
	for (int leaky = 0; leaky < 2; leaky++) {
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			struct fx f;
			fx_init_secrets(&f);
			if (leaky)
				f.ops.search = matchall_search;
			f.cfg.allow_anonymous = cases[i].allow_anon;
			f.cfg.search.access = cases[i].access;
			f.cfg.search.max_scope = cases[i].scope;
			if (cases[i].base) {
				f.cfg.search.base = cases[i].base;
				f.cfg.search.base_len = strlen(cases[i].base);
			}
			for (int k = 0; cases[i].attrs && cases[i].attrs[k]; k++)
				snprintf(f.cfg.search.attrs[f.cfg.search.n_attrs++], LFE_ATTR_NAME_MAX, "%s",
					 cases[i].attrs[k]);
			struct pdu in = { .n = 0 };
			if (cases[i].bind)
				bind_req(&in, 1, BOB, "b0b");
			search_req(&in, 2, &cases[i].req);
			int n = fx_run(&f, &in);
			int want = cases[i].bind + cases[i].entries + 1;
			CHECK(n == want, "%s (leaky %d): %d responses want %d", cases[i].name, leaky, n, want);
			if (n != want) {
				fx_fini(&f);
				continue;
			}
			if (cases[i].bind)
				check_result(&f.r[0], 1, 1, 0, NULL);
			check_result(&f.r[n - 1], 2, 5, cases[i].code, NULL);
			if (cases[i].code == 50)
				CHECK(lfe_tb_counts(f.tb)->searches == 0, "%s: refused search ran",
				      cases[i].name);
			if (cases[i].want && cases[i].entries) {
				const struct resp *e = &f.r[cases[i].bind];
				int nw = 0;
				for (; cases[i].want[nw]; nw++)
					CHECK(attr(e, cases[i].want[nw]), "%s: %s missing", cases[i].name,
					      cases[i].want[nw]);
				CHECK(e->n_attrs == nw, "%s: %d attributes want %d", cases[i].name,
				      e->n_attrs, nw);
			}
			fx_fini(&f);
		}
	}
}

static void test_framing(void)
{
	struct pdu any = { .n = 0 }, top = { .n = 0 };
	f_present(&any, "objectClass");
	f_eq(&top, "objectClass", "top");
	struct pdu in = { .n = 0 };
	bind_req(&in, 1, ALICE, "secret");
	whoami(&in, 2);
	search_req(&in, 3, &(struct sreq){ "", 0, 0, 0, &any, { NULL } });
	search_req(&in, 4, &(struct sreq){ SUFFIX, 2, 0, 0, &top, { "cn" } });
	write_req(&in, 5, 10, NULL, 0);
	abandon_req(&in, 6, 4);
	bind_req(&in, 7, BOB, "wrong");
	whoami(&in, 8);

	/* Whole: zero copy, the allocator is never asked. */
	struct fx f;
	fx_init(&f);
	static uint8_t whole[65536];
	int n = fx_run(&f, &in);
	size_t whole_len = f.io.out_len;
	memcpy(whole, f.out, whole_len);
	CHECK(n == 1 + 1 + 2 + 5 + 1 + 1 + 1, "whole: %d responses", n);
	CHECK(f.ta.gets == 0, "whole input used the allocator %d times", f.ta.gets);
	fx_fini(&f);

	/* Fed in chunks of 1, 2, 3, 7 and 100 bytes: identical output. */
	static const size_t chunks[] = { 1, 2, 3, 7, 100 };
	for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
		fx_init(&f);
		static uint8_t acc[65536];
		size_t acc_len = 0, off = 0;
		int calls = 0;
		while (off < in.n && calls < 100000) {
			size_t k = in.n - off < chunks[c] ? in.n - off : chunks[c];
			CHECK(fx_call(&f, in.b + off, k, sizeof f.out) == 0, "chunk call");
			CHECK(f.io.in_used == k, "chunk %zu: used %zu of %zu", chunks[c], f.io.in_used, k);
			memcpy(acc + acc_len, f.out, f.io.out_len);
			acc_len += f.io.out_len;
			off += k;
			calls++;
		}
		CHECK(acc_len == whole_len && memcmp(acc, whole, whole_len) == 0,
		      "chunks of %zu: output differs (%zu vs %zu bytes)", chunks[c], acc_len, whole_len);
		CHECK(f.ta.gets > 0, "chunks of %zu never gathered", chunks[c]);
		fx_fini(&f);
	}

	/* Several PDUs plus a partial one: the complete ones are answered,
	 * the tail is buffered (counted as consumed). */
	fx_init(&f);
	struct pdu two = { .n = 0 }, b = { .n = 0 };
	whoami(&two, 1);
	whoami(&two, 2);
	bind_req(&b, 3, ALICE, "secret");
	put(&two, b.b, b.n - 5);
	CHECK(fx_call(&f, two.b, two.n, sizeof f.out) == 0 && f.io.in_used == two.n, "partial tail");
	CHECK(parse_all(f.out, f.io.out_len, f.r, 32) == 2, "two answered before the tail");
	CHECK(f.ta.gets == 1 && f.ta.puts == 0, "tail gathered once (%d gets)", f.ta.gets);
	CHECK(fx_call(&f, b.b + b.n - 5, 5, sizeof f.out) == 0 && f.io.in_used == 5, "tail rest");
	f.nr = parse_all(f.out, f.io.out_len, f.r, 32);
	if (f.nr == 1)
		check_result(&f.r[0], 3, 1, 0, NULL);
	else
		CHECK(0, "tail: %d responses", f.nr);
	CHECK(f.ta.puts == 1, "gather buffer returned (%d puts)", f.ta.puts);
	fx_fini(&f);   /* checks the buffer holding the password was wiped */

	/* A declared length over max_pdu: notice, close, nothing buffered. */
	fx_init(&f);
	f.cfg.max_pdu = 64;
	lfe_session_init(f.mem, &f.cfg);
	static const uint8_t big[] = { 0x30, 0x82, 0x10, 0x00, 0x02, 0x01, 0x01 };
	CHECK(fx_call(&f, big, sizeof big, sizeof f.out) == 0, "big");
	f.nr = parse_all(f.out, f.io.out_len, f.r, 32);
	check_notice(&f, "over max_pdu");
	CHECK(f.ta.gets == 0, "over-long PDU was buffered");
	fx_fini(&f);

	/* The same refusal when the header arrives one byte at a time. */
	fx_init(&f);
	f.cfg.max_pdu = 64;
	lfe_session_init(f.mem, &f.cfg);
	for (size_t k = 0; k < 3; k++)
		CHECK(fx_call(&f, big + k, 1, sizeof f.out) == 0 && f.io.out_len == 0 &&
		      f.io.flags == 0, "big byte %zu", k);
	CHECK(fx_call(&f, big + 3, 1, sizeof f.out) == 0, "big byte 3");
	f.nr = parse_all(f.out, f.io.out_len, f.r, 32);
	check_notice(&f, "over max_pdu, bytewise");
	CHECK(f.ta.gets == 0, "over-long PDU was buffered");
	fx_fini(&f);

	/* Exactly max_pdu is accepted. */
	fx_init(&f);
	struct pdu w = { .n = 0 };
	whoami(&w, 1);
	f.cfg.max_pdu = w.n;
	lfe_session_init(f.mem, &f.cfg);
	CHECK(fx_run(&f, &w) == 1 && f.r[0].code == 0, "PDU of exactly max_pdu refused");
	fx_fini(&f);

	/* Allocator failure resets the connection. */
	fx_init(&f);
	f.ta.fail = 1;
	CHECK(fx_call(&f, b.b, b.n - 1, sizeof f.out) == 0, "alloc fail call");
	CHECK(f.io.flags == LFE_SESS_ABORT && f.io.out_len == 0, "alloc fail flags %u",
	      f.io.flags);
	fx_fini(&f);

	/* Failure after a header gathered byte by byte. */
	fx_init(&f);
	f.ta.fail = 1;
	CHECK(fx_call(&f, b.b, 1, sizeof f.out) == 0 && f.io.flags == 0, "1 byte, no alloc yet");
	CHECK(fx_call(&f, b.b + 1, 3, sizeof f.out) == 0 && f.io.flags == LFE_SESS_ABORT,
	      "alloc fail after header: flags %u", f.io.flags);
	fx_fini(&f);
}

/* Short output room (the output contract in session.h): no request is lost
 * or answered twice, nothing is owed between calls, and the caller's loop
 * (call again while a call wrote something) always gets the answers out. */
static void test_backpressure(void)
{
	struct pdu any = { .n = 0 }, top = { .n = 0 };
	f_present(&any, "objectClass");
	f_eq(&top, "objectClass", "top");
	struct pdu in = { .n = 0 };
	bind_req(&in, 1, ALICE, "secret");
	whoami(&in, 2);
	search_req(&in, 3, &(struct sreq){ SUFFIX, 2, 0, 0, &top, { NULL } });
	whoami(&in, 4);
	write_req(&in, 5, 14, NULL, 0);

	struct fx f;
	fx_init(&f);
	static uint8_t whole[65536];
	/* The reference: the whole output, the caller's loop. */
	size_t whole_len = 0, off = 0;
	for (int calls = 0; off < in.n && calls < 10; calls++) {
		CHECK(fx_call(&f, in.b + off, in.n - off, sizeof f.out) == 0, "whole call");
		CHECK(f.io.out_len > 0, "whole: call %d wrote nothing", calls);
		memcpy(whole + whole_len, f.out, f.io.out_len);
		whole_len += f.io.out_len;
		off += f.io.in_used;
	}
	CHECK(off == in.n, "whole: stalled at %zu/%zu", off, in.n);
	fx_fini(&f);

	/* Room from below LFE_SESSION_ROOM_MIN up, the caller's loop of
	 * stream.c: each request answered once, in order; identical output
	 * once the search fits. */
	static const size_t caps[] = { 1000, LFE_SESSION_ROOM_MIN, 1400, 2000, 4000 };
	for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
		fx_init(&f);
		static uint8_t acc[65536];
		size_t acc_len = 0;
		int calls = 0;
		off = 0;
		while (off < in.n && calls < 1000) {
			CHECK(fx_call(&f, in.b + off, in.n - off, caps[c]) == 0, "bp call");
			CHECK(f.io.flags == 0, "bp flags %u", f.io.flags);
			memcpy(acc + acc_len, f.out, f.io.out_len);
			acc_len += f.io.out_len;
			off += f.io.in_used;
			calls++;
			if (f.io.out_len == 0 && f.io.in_used == 0)
				break;   /* waits for room */
		}
		if (caps[c] < LFE_SESSION_ROOM_MIN) {
			/* Nothing taken, nothing verified, nothing owed. */
			CHECK(off == 0 && acc_len == 0 && calls == 1, "cap %zu: took a request", caps[c]);
			CHECK(lfe_tb_counts(f.tb)->binds == 0, "cap %zu: bind verified", caps[c]);
			fx_fini(&f);
			continue;
		}
		CHECK(off == in.n, "cap %zu: stalled at %zu/%zu", caps[c], off, in.n);
		int nr = parse_all(acc, acc_len, f.r, 32);
		CHECK(nr > 0, "cap %zu: output parses", caps[c]);
		int last = 0, dones = 0;
		for (int k = 0; k < nr; k++) {
			CHECK(f.r[k].msgid >= last, "cap %zu: msgid %d after %d", caps[c], f.r[k].msgid,
			      last);
			last = f.r[k].msgid;
			if (f.r[k].op != 4)   /* every response but an entry ends a request */
				dones++;
		}
		CHECK(dones == 5, "cap %zu: %d requests answered, want 5", caps[c], dones);
		CHECK(lfe_tb_counts(f.tb)->binds == 1, "cap %zu: bind verified %u times", caps[c],
		      (unsigned)lfe_tb_counts(f.tb)->binds);
		if (caps[c] >= 2000)
			CHECK(acc_len == whole_len && memcmp(acc, whole, whole_len) == 0,
			      "cap %zu: output differs (%zu vs %zu)", caps[c], acc_len, whole_len);
		fx_fini(&f);
	}

	/* A PDU gathered from split input is not completed while its answer
	 * could not be written: its last bytes wait, so no answer is ever
	 * owed with all input consumed (the daemon once stalled on that). */
	fx_init(&f);
	struct pdu w = { .n = 0 };
	whoami(&w, 1);
	CHECK(fx_call(&f, w.b, 3, 0) == 0 && f.io.in_used == 3, "partial");
	CHECK(fx_call(&f, w.b + 3, w.n - 3, 4) == 0 && f.io.in_used == 0 && f.io.out_len == 0 &&
	      f.io.flags == 0, "complete but no room: used %zu flags %u", f.io.in_used, f.io.flags);
	CHECK(lfe_session_gathering(f.s), "gathered bytes kept");
	CHECK(fx_call(&f, w.b + 3, w.n - 3, sizeof f.out) == 0 && f.io.in_used == w.n - 3 &&
	      f.io.out_len > 0 && f.io.flags == 0, "answered once room is there");
	f.nr = parse_all(f.out, f.io.out_len, f.r, 32);
	CHECK(f.nr == 1 && f.r[0].msgid == 1 && f.r[0].op == 24, "gathered answer");
	fx_fini(&f);

	/* A bind is not verified while its answer could not be sent. */
	fx_init(&f);
	struct pdu b = { .n = 0 };
	bind_req(&b, 1, ALICE, "secret");
	CHECK(fx_call(&f, b.b, b.n, 100) == 0 && f.io.in_used == 0 && f.io.flags == 0,
	      "bind with no room");
	CHECK(lfe_tb_counts(f.tb)->binds == 0, "bind verified without room to answer");
	fx_fini(&f);
}

/* Issue 25: a search streams across calls. An entry larger than the most
 * room the caller ever offers (out_max) goes out in parts, one per call,
 * and arrives whole; the entries of a one-level search come over many
 * small calls, each once; an entry rewritten between two of its parts
 * resets the connection (never a message made of two entries). */
static void test_search_stream(void)
{
	static char vals[40][200];
	const char *attrs[40];
	size_t n = 0;
	attrs[n++] = "objectClass=top";
	attrs[n++] = "cn=big";
	for (int a = 0; a < 3; a++)
		for (int i = 0; i < 12; i++) {
			snprintf(vals[n], sizeof vals[n], "x-%c=%02d:%0140d", 'a' + a, i, 0);
			attrs[n] = vals[n];
			n++;
		}
	static const uint8_t none[1];
	for (int change = 0; change < 2; change++) {
		struct fx f;
		fx_init(&f);
		if (lfe_tb_add(f.tb, "cn=big," SUFFIX, NULL, attrs, n))
			exit(2);
		struct pdu any = { .n = 0 }, in = { .n = 0 };
		f_present(&any, "objectClass");
		search_req(&in, 2, &(struct sreq){ "cn=big," SUFFIX, 0, 0, 0, &any, { NULL } });
		static uint8_t all[65536];
		size_t got = 0;
		int calls = 0, rc = 0;
		unsigned flags = 0;
		do {
			f.io = (struct lfe_session_io){ .in = calls ? none : in.b,
							.in_len = calls ? 0 : in.n, .out = f.out,
							.out_cap = 2048, .out_max = 2048 };
			rc = lfe_session_process(f.s, &f.io);
			flags = f.io.flags;
			memcpy(all + got, f.out, f.io.out_len);
			got += f.io.out_len;
			if (change && calls == 1) {
				snprintf(vals[10], sizeof vals[10], "x-a=08:%0140d", 1);
				if (lfe_tb_replace(f.tb, "cn=big," SUFFIX, NULL, attrs, n))
					exit(2);
			}
			calls++;
		} while (rc == 0 && !(flags & LFE_SESS_ABORT) && lfe_session_searching(f.s) &&
			 calls < 100);
		if (!change) {
			CHECK(rc == 0 && calls >= 3, "parts: rc %d, %d calls", rc, calls);
			struct resp *r = f.r;
			int nr = parse_all(all, got, r, 32);
			CHECK(nr == 2, "parts: %d responses", nr);
			if (nr == 2) {
				CHECK(r[0].op == LFE_OP_SEARCH_ENTRY && r[0].n_attrs == 5,
				      "parts: entry of %d attributes", r[0].n_attrs);
				int vals_seen = 0;
				for (int a = 0; a < r[0].n_attrs; a++)
					vals_seen += r[0].attrs[a].n_vals;
				CHECK(vals_seen == 38, "parts: %d values", vals_seen);
				check_result(&r[1], 2, LFE_OP_SEARCH_DONE, LFE_RC_SUCCESS, NULL);
			}
		} else {
			CHECK(rc < 0 && (flags & LFE_SESS_ABORT), "changed between parts: rc %d flags %u",
			      rc, flags);
			CHECK(!memmem(all, got, "\x65", 1) || got < 2048 * 4,
			      "changed between parts: no result after a broken entry");
		}
		snprintf(vals[10], sizeof vals[10], "x-a=08:%0140d", 0);
		fx_fini(&f);
	}
	/* Many small calls: every entry of a subtree search once. */
	struct fx f;
	fx_init(&f);
	for (int i = 0; i < 20; i++) {
		char dn[64], uid[32];
		snprintf(dn, sizeof dn, "uid=u%02d,ou=people," SUFFIX, i);
		snprintf(uid, sizeof uid, "uid=u%02d", i);
		const char *ua[] = { "objectClass=person", uid, "cn=a user of the fixture" };
		if (lfe_tb_add(f.tb, dn, NULL, ua, 3))
			exit(2);
	}
	struct pdu any = { .n = 0 }, in = { .n = 0 };
	f_eq(&any, "objectClass", "person");   /* indexed: alice, bob and the 20 */
	search_req(&in, 3, &(struct sreq){ SUFFIX, 2, 0, 0, &any, { "cn", NULL } });
	int entries = 0, done = 0, calls = 0, rc;
	do {
		f.io = (struct lfe_session_io){ .in = calls ? none : in.b, .in_len = calls ? 0 : in.n,
						.out = f.out, .out_cap = calls ? 240 : 1300 };
		rc = lfe_session_process(f.s, &f.io);
		int nr = parse_all(f.out, f.io.out_len, f.r, 32);
		for (int i = 0; i < nr; i++) {
			entries += f.r[i].op == LFE_OP_SEARCH_ENTRY;
			done += f.r[i].op == LFE_OP_SEARCH_DONE && f.r[i].code == 0;
		}
		calls++;
	} while (rc == 0 && lfe_session_searching(f.s) && calls < 100);
	CHECK(entries == 22 && done == 1 && calls >= 5, "small calls: %d entries, %d done, %d calls",
	      entries, done, calls);
	fx_fini(&f);
}

/* ---- paged results (RFC 2696): several per connection ---- */

#define OID_PAGED "1.2.840.113556.1.4.319"

/* A SearchRequest with the paged-results control (size, cookie). */
static void search_paged(struct pdu *out, int32_t msgid, const struct sreq *r, int size,
			 const uint8_t *cookie, size_t clen)
{
	struct pdu op = { .n = 0 }, al = { .n = 0 }, body = { .n = 0 }, val = { .n = 0 },
		   seq = { .n = 0 }, c = { .n = 0 }, cs = { .n = 0 };
	tlv_str(&op, 0x04, r->base);
	tlv_int(&op, 0x0a, r->scope);
	tlv_int(&op, 0x0a, 0);
	tlv_int(&op, 0x02, r->size_limit);
	tlv_int(&op, 0x02, 0);
	tlv(&op, 0x01, r->types_only ? "\xff" : "\x00", 1);
	put(&op, r->filter->b, r->filter->n);
	for (size_t i = 0; r->attrs[i]; i++)
		tlv_str(&al, 0x04, r->attrs[i]);
	tlv_pdu(&op, 0x30, &al);
	tlv_int(&body, 0x02, msgid);
	tlv_pdu(&body, 0x63, &op);
	tlv_int(&val, 0x02, size);
	tlv(&val, 0x04, cookie, clen);
	tlv_pdu(&seq, 0x30, &val);
	tlv_str(&c, 0x04, OID_PAGED);
	tlv_pdu(&c, 0x04, &seq);
	tlv_pdu(&cs, 0x30, &c);
	tlv_pdu(&body, 0xa0, &cs);
	tlv_pdu(out, 0x30, &body);
}

/* A paged search as the client sees it: its request, its cookie, the DNs
 * it got (each counted). */
struct pgs {
	const struct sreq *req;
	int size;
	uint8_t ck[64];
	size_t clen;
	bool open;             /* a page with a cookie came: more to ask for */
	char dns[40][64];
	int cnt[40];
	int n, entries;
};

/* The cookie of a SearchResultDone's paged-results control: 0, or -1 when
 * it has none or it does not parse. */
static int resp_cookie(const struct resp *r, uint8_t *ck, size_t *clen)
{
	struct rd c = { r->ctrls, r->ctrls_len, 0 }, ctl, v, val, seq;
	char oid[64];
	if (!rd_expect(&c, 0x30, &ctl) || !rd_expect(&ctl, 0x04, &v))
		return -1;
	rd_str(&v, oid, sizeof oid);
	if (strcmp(oid, OID_PAGED) != 0 || !rd_expect(&ctl, 0x04, &val) ||
	    !rd_expect(&val, 0x30, &seq) || !rd_expect(&seq, 0x02, &v) ||
	    !rd_expect(&seq, 0x04, &v) || v.n > 64)
		return -1;
	memcpy(ck, v.p, v.n);
	*clen = v.n;
	return 0;
}

static void pgs_saw(struct pgs *p, const char *dn)
{
	p->entries++;
	for (int i = 0; i < p->n; i++)
		if (strcmp(p->dns[i], dn) == 0) {
			p->cnt[i]++;
			return;
		}
	if (p->n < 40) {
		snprintf(p->dns[p->n], sizeof p->dns[0], "%s", dn);
		p->cnt[p->n++] = 1;
	}
}

/* Every DN once, want of them. */
static bool pgs_once(const struct pgs *p, int want)
{
	for (int i = 0; i < p->n; i++)
		if (p->cnt[i] != 1)
			return false;
	return p->n == want && p->entries == want;
}

/* Ask for p's next page (its first when it has no cookie) with `size`,
 * over calls of cap bytes of room after the first (the search yields when
 * small): the SearchResultDone's code, or -1 (none, or no parse). */
static int pgs_page(struct fx *f, struct pgs *p, int32_t msgid, int size, size_t cap)
{
	struct pdu in = { .n = 0 };
	static const uint8_t none[1];
	search_paged(&in, msgid, p->req, size, p->ck, p->clen);
	int code = -1, calls = 0;
	do {
		f->io = (struct lfe_session_io){ .in = calls ? none : in.b,
						 .in_len = calls ? 0 : in.n, .out = f->out,
						 .out_cap = calls ? cap : sizeof f->out };
		if (calls && cap == sizeof f->out)
			break;
		if (lfe_session_process(f->s, &f->io) != 0)
			return -1;
		if (!calls && f->io.in_used != in.n)
			return -1;
		int nr = parse_all(f->out, f->io.out_len, f->r, 32);
		if (nr < 0)
			return -1;
		for (int i = 0; i < nr; i++) {
			if (f->r[i].msgid != msgid)
				return -1;
			if (f->r[i].op == LFE_OP_SEARCH_ENTRY) {
				pgs_saw(p, f->r[i].dn);
			} else if (f->r[i].op == LFE_OP_SEARCH_DONE) {
				code = f->r[i].code;
				p->clen = 0;
				if (resp_cookie(&f->r[i], p->ck, &p->clen) < 0)
					return -1;
				p->open = p->clen > 0;
			}
		}
		calls++;
	} while (lfe_session_searching(f->s) && calls < 200);
	return code;
}

/* 20 more people under ou=people: 22 in all with alice and bob. */
static void fx_people(struct fx *f)
{
	for (int i = 0; i < 20; i++) {
		char dn[64], uid[32];
		snprintf(dn, sizeof dn, "uid=u%02d,ou=people," SUFFIX, i);
		snprintf(uid, sizeof uid, "uid=u%02d", i);
		const char *ua[] = { "objectClass=person", uid, "cn=a user of the fixture" };
		if (lfe_tb_add(f->tb, dn, NULL, ua, 3))
			exit(2);
	}
}

/* Buffers the session holds now (parked searches, a run). */
static int held(const struct fx *f)
{
	return f->ta.gets - f->ta.puts;
}

/* Buffers under pressure (alloc.spare says no): one parked paged search
 * per connection, as before several were kept: B's first page takes A's
 * place (A's next page: 53), B goes on to its end; with buffers to spare
 * again, two are kept. Planted: spare ignored, A's page 2 is answered. */
static void test_paged_tight(void)
{
	struct pdu person = { .n = 0 };
	f_eq(&person, "objectClass", "person");
	const struct sreq ra = { SUFFIX, 2, 0, 0, &person, { "uid", NULL } };
	const struct sreq rb = { "ou=people," SUFFIX, 1, 0, 0, &person, { "cn", NULL } };
	struct fx f;
	struct pgs *a = calloc(2, sizeof *a), *b = a + 1;
	if (!a)
		exit(2);
	fx_init(&f);
	fx_people(&f);
	f.ta.tight = 1;
	a->req = &ra;
	b->req = &rb;
	int32_t id = 1;
	CHECK(pgs_page(&f, a, id++, 5, sizeof f.out) == 0 && a->open, "tight: A page 1");
	CHECK(pgs_page(&f, b, id++, 5, sizeof f.out) == 0 && b->open, "tight: B page 1");
	CHECK(held(&f) == 1, "tight: %d buffers held, want 1", held(&f));
	CHECK(pgs_page(&f, a, id++, 5, sizeof f.out) == LFE_RC_UNWILLING_TO_PERFORM,
	      "tight: A's place was taken by B");
	for (int i = 0; i < 10 && b->open; i++)
		CHECK(pgs_page(&f, b, id++, 5, sizeof f.out) == 0, "tight: B page %d", i + 2);
	CHECK(!b->open && pgs_once(b, 22), "tight: B %d entries, %d DNs", b->entries, b->n);
	/* Buffers to spare again: both kept. */
	f.ta.tight = 0;
	memset(a, 0, 2 * sizeof *a);
	a->req = &ra;
	b->req = &rb;
	CHECK(pgs_page(&f, a, id++, 5, sizeof f.out) == 0 && a->open, "spare: A page 1");
	CHECK(pgs_page(&f, b, id++, 5, sizeof f.out) == 0 && b->open, "spare: B page 1");
	CHECK(held(&f) == 2, "spare: %d buffers held, want 2", held(&f));
	CHECK(pgs_page(&f, a, id++, 5, sizeof f.out) == 0, "spare: A page 2");
	fx_fini(&f);
	free(a);
}

/* Several paged searches per connection (session_search.c): interleaved
 * ones each return all their entries exactly once; a search that yields
 * (paged or not) between pages leaves the parked ones be; PAGED_MAX (4)
 * parked, the least recently used one gives way to a new one (its cookie:
 * 53); a cookie presented with another request: 53, the parked search
 * stays; no buffer to park a page in: 11, the others go on. On the old
 * code (one paged search per connection) every part but the last two
 * failed: the first search's next page got 53. */
static void test_paged_many(void)
{
	struct pdu person = { .n = 0 }, all = { .n = 0 };
	f_eq(&person, "objectClass", "person");   /* alice, bob and the 20 */
	f_present(&all, "objectClass");
	const struct sreq ra = { SUFFIX, 2, 0, 0, &person, { "uid", NULL } };
	const struct sreq rb = { "ou=people," SUFFIX, 1, 0, 0, &person, { "cn", NULL } };
	const struct sreq rc = { SUFFIX, 2, 0, 0, &person, { "cn", "uid", NULL } };
	struct fx f;

	/* Interleaved: A (5 a page) and B (3 a page), page by page. */
	fx_init(&f);
	fx_people(&f);
	struct pgs *a = calloc(6, sizeof *a), *b = a + 1, *c = a + 2;
	if (!a)
		exit(2);
	a->req = &ra;
	b->req = &rb;
	int32_t id = 1, bad = 0, pages = 0;
	CHECK(pgs_page(&f, a, id++, 5, sizeof f.out) == 0 && a->open, "A page 1");
	CHECK(pgs_page(&f, b, id++, 3, sizeof f.out) == 0 && b->open, "B page 1");
	while ((a->open || b->open) && pages < 40) {
		if (a->open && pgs_page(&f, a, id++, 5, sizeof f.out) != 0)
			bad++;
		if (b->open && pgs_page(&f, b, id++, 3, sizeof f.out) != 0)
			bad++;
		pages++;
	}
	CHECK(bad == 0 && !a->open && !b->open, "interleaved: %d pages refused", bad);
	CHECK(pgs_once(a, 22), "interleaved A: %d entries, %d DNs", a->entries, a->n);
	CHECK(pgs_once(b, 22), "interleaved B: %d entries, %d DNs", b->entries, b->n);
	CHECK(held(&f) == 0, "interleaved: %d buffers held after both ended", held(&f));
	fx_fini(&f);

	/* A and B parked; a non-paged search that yields (small calls), then
	 * a paged one C whose pages yield (parked from its run), between
	 * their pages; then all three to their ends. */
	fx_init(&f);
	fx_people(&f);
	memset(a, 0, 3 * sizeof *a);
	a->req = &ra;
	b->req = &rb;
	c->req = &rc;
	id = 1;
	CHECK(pgs_page(&f, a, id++, 5, sizeof f.out) == 0 && a->open, "A page 1");
	CHECK(pgs_page(&f, b, id++, 3, sizeof f.out) == 0 && b->open, "B page 1");
	struct pgs plain = { .req = &ra };
	struct pdu in = { .n = 0 };
	search_req(&in, id, &(struct sreq){ SUFFIX, 2, 0, 0, &person, { "cn", NULL } });
	{
		static const uint8_t none[1];
		int calls = 0, done = -1;
		do {
			f.io = (struct lfe_session_io){ .in = calls ? none : in.b,
							.in_len = calls ? 0 : in.n, .out = f.out,
							.out_cap = calls ? 240 : 1300 };
			CHECK(lfe_session_process(f.s, &f.io) == 0, "plain search call");
			int nr = parse_all(f.out, f.io.out_len, f.r, 32);
			for (int i = 0; i < nr; i++) {
				if (f.r[i].op == LFE_OP_SEARCH_ENTRY)
					pgs_saw(&plain, f.r[i].dn);
				else if (f.r[i].op == LFE_OP_SEARCH_DONE)
					done = f.r[i].code;
			}
			calls++;
		} while (lfe_session_searching(f.s) && calls < 100);
		CHECK(done == 0 && calls >= 5 && pgs_once(&plain, 22),
		      "plain search between pages: done %d, %d calls, %d entries", done, calls,
		      plain.entries);
	}
	id++;
	CHECK(pgs_page(&f, c, id++, 10, 240) == 0 && c->open && c->entries == 10,
	      "C page 1 over small calls: %d entries", c->entries);
	CHECK(held(&f) == 3, "A, B, C parked: %d buffers held", held(&f));
	bad = 0;
	pages = 0;
	while ((a->open || b->open || c->open) && pages < 40) {
		if (a->open && pgs_page(&f, a, id++, 5, sizeof f.out) != 0)
			bad++;
		if (c->open && pgs_page(&f, c, id++, 10, 240) != 0)
			bad++;
		if (b->open && pgs_page(&f, b, id++, 3, sizeof f.out) != 0)
			bad++;
		pages++;
	}
	CHECK(bad == 0, "after a yielding search: %d pages refused", bad);
	CHECK(pgs_once(a, 22) && pgs_once(b, 22) && pgs_once(c, 22),
	      "after a yielding search: A %d, B %d, C %d entries", a->entries, b->entries,
	      c->entries);
	fx_fini(&f);

	/* The bound: four parked (p[0..3]); p[0] asked again (most recent
	 * now); a fifth takes the least recently used one's place (p[1]):
	 * its cookie gets 53; the other four go on to their ends. The
	 * session never holds more than four. */
	fx_init(&f);
	fx_people(&f);
	struct pgs *p = calloc(5, sizeof *p);
	if (!p)
		exit(2);
	id = 1;
	for (int i = 0; i < 5; i++)
		p[i].req = &ra;
	for (int i = 0; i < 4; i++)
		CHECK(pgs_page(&f, &p[i], id++, 2, sizeof f.out) == 0 && p[i].open, "p%d page 1", i);
	CHECK(held(&f) == 4, "four parked: %d buffers", held(&f));
	CHECK(pgs_page(&f, &p[0], id++, 2, sizeof f.out) == 0 && p[0].open, "p0 page 2");
	CHECK(pgs_page(&f, &p[4], id++, 2, sizeof f.out) == 0 && p[4].open, "p4 page 1");
	CHECK(held(&f) == 4, "bound: %d buffers held, want 4", held(&f));
	int e1 = p[1].entries;
	CHECK(pgs_page(&f, &p[1], id++, 2, sizeof f.out) == LFE_RC_UNWILLING_TO_PERFORM &&
	      p[1].entries == e1 && !p[1].open, "evicted p1 answered %d", f.r[0].code);
	if (f.nr > 0)
		check_result(&f.r[f.nr - 1], id - 1, LFE_OP_SEARCH_DONE, LFE_RC_UNWILLING_TO_PERFORM,
			     "paged results cookie is invalid or expired");
	bad = 0;
	for (int i = 0; i < 5; i++) {
		if (i == 1)
			continue;
		for (int k = 0; p[i].open && k < 20; k++)
			if (pgs_page(&f, &p[i], id++, 2, sizeof f.out) != 0)
				bad++;
		CHECK(pgs_once(&p[i], 22), "bound: p%d %d entries", i, p[i].entries);
	}
	CHECK(bad == 0, "bound: %d pages of the kept ones refused", bad);
	CHECK(held(&f) == 0, "bound: %d buffers held after all ended", held(&f));
	fx_fini(&f);

	/* A cookie of another request: 53, and its own search goes on; one
	 * of the wrong length or made up: 53. Left parked at the end: freed
	 * (and wiped) by lfe_session_fini (fx_fini counts). */
	fx_init(&f);
	fx_people(&f);
	memset(a, 0, 3 * sizeof *a);
	a->req = &ra;
	b->req = &rb;
	id = 1;
	CHECK(pgs_page(&f, a, id++, 5, sizeof f.out) == 0 && a->open, "A page 1");
	CHECK(pgs_page(&f, b, id++, 5, sizeof f.out) == 0 && b->open, "B page 1");
	struct pgs x = { .req = &rb };
	memcpy(x.ck, a->ck, a->clen);
	x.clen = a->clen;
	CHECK(pgs_page(&f, &x, id++, 5, sizeof f.out) == LFE_RC_UNWILLING_TO_PERFORM &&
	      x.entries == 0, "A's cookie with B's request");
	x.clen = 7;
	CHECK(pgs_page(&f, &x, id++, 5, sizeof f.out) == LFE_RC_UNWILLING_TO_PERFORM,
	      "7-byte cookie");
	memcpy(x.ck, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	x.clen = 8;
	CHECK(pgs_page(&f, &x, id++, 5, sizeof f.out) == LFE_RC_UNWILLING_TO_PERFORM,
	      "made-up cookie");
	CHECK(pgs_page(&f, a, id++, 5, sizeof f.out) == 0 && a->entries == 10,
	      "A after its cookie was misused: %d entries", a->entries);
	CHECK(pgs_page(&f, b, id++, 5, sizeof f.out) == 0 && b->entries == 10, "B page 2");
	CHECK(held(&f) == 2, "two parked: %d buffers", held(&f));
	fx_fini(&f);

	/* No buffer to park a page in: the page, then 11 without a cookie;
	 * a search parked already goes on (its own buffer parks it again). */
	fx_init(&f);
	fx_people(&f);
	memset(a, 0, 3 * sizeof *a);
	a->req = &ra;
	b->req = &rb;
	id = 1;
	CHECK(pgs_page(&f, a, id++, 5, sizeof f.out) == 0 && a->open, "A page 1");
	f.ta.fail = 1;
	CHECK(pgs_page(&f, b, id++, 5, sizeof f.out) == LFE_RC_ADMIN_LIMIT_EXCEEDED &&
	      !b->open && b->entries == 5, "pool dry: B answered %d, %d entries", f.r[f.nr > 0 ? f.nr - 1 : 0].code,
	      b->entries);
	if (f.nr > 0)
		check_result(&f.r[f.nr - 1], id - 1, LFE_OP_SEARCH_DONE, LFE_RC_ADMIN_LIMIT_EXCEEDED,
			     "no memory to keep the paged search");
	bad = 0;
	while (a->open && bad < 20)
		if (pgs_page(&f, a, id++, 5, sizeof f.out) != 0)
			bad++;
	CHECK(bad == 0 && pgs_once(a, 22), "pool dry: A %d entries, %d refused", a->entries, bad);
	f.ta.fail = 0;
	fx_fini(&f);
	free(a);
	free(p);
}

/* Paged searches at random against a model of the rule (session_search.c):
 * up to six at once on one session, started, continued (in one call or
 * over small calls: their pages yield), ended with size 0, with non-paged
 * searches that yield between; the model keeps the four most recently used
 * and says which cookie must get 53. Every search the model keeps returns
 * all its entries once; the session holds one buffer per parked search. */
static void test_paged_random(void)
{
	struct pdu person = { .n = 0 };
	f_eq(&person, "objectClass", "person");
	static const struct sreq reqs[3] = {
		{ SUFFIX, 2, 0, 0, NULL, { "uid", NULL } },
		{ "ou=people," SUFFIX, 1, 0, 0, NULL, { "cn", NULL } },
		{ SUFFIX, 2, 0, 1, NULL, { "cn", "uid", NULL } },
	};
	struct sreq rq[3];
	for (int i = 0; i < 3; i++) {
		rq[i] = reqs[i];
		rq[i].filter = &person;
	}
	struct fx f;
	fx_init(&f);
	fx_people(&f);
	struct pgs *sl = calloc(6, sizeof *sl);
	if (!sl)
		exit(2);
	int size[6] = { 0 }, order[6], n_open = 0, ended = 0, evicted = 0, bad = 0;
	uint32_t rnd = 12345;
	int32_t id = 1;
	for (int step = 0; step < 600 && !bad; step++) {
		rnd = rnd * 1103515245u + 12345u;
		int k = (int)((rnd >> 8) % 6), op = (int)((rnd >> 16) % 8);
		size_t cap = (rnd >> 24) & 1 ? 240 : sizeof f.out;
		struct pgs *p = &sl[k];
		int pos = -1;
		for (int i = 0; i < n_open; i++)
			if (order[i] == k)
				pos = i;
		if (op == 7) {   /* a search that yields, not paged */
			struct pgs plain = { .req = &rq[0] };
			struct pdu in = { .n = 0 };
			static const uint8_t none[1];
			search_req(&in, id++, &rq[1]);
			int calls = 0;
			do {
				f.io = (struct lfe_session_io){ .in = calls ? none : in.b,
								.in_len = calls ? 0 : in.n,
								.out = f.out, .out_cap = calls ? 240 : 1300 };
				if (lfe_session_process(f.s, &f.io) != 0)
					bad++;
				int nr = parse_all(f.out, f.io.out_len, f.r, 32);
				for (int i = 0; i < nr; i++)
					if (f.r[i].op == LFE_OP_SEARCH_ENTRY)
						pgs_saw(&plain, f.r[i].dn);
				calls++;
			} while (lfe_session_searching(f.s) && calls < 100);
			if (!pgs_once(&plain, 22))
				bad++;
			continue;
		}
		if (pos < 0 && !p->open) {   /* a new one */
			memset(p, 0, sizeof *p);
			p->req = &rq[op % 3];
			size[k] = 1 + (int)((rnd >> 4) % 7);
			if (pgs_page(&f, p, id++, size[k], cap) != 0)
				bad++;
		} else if (pos < 0) {   /* evicted: its cookie is refused */
			if (pgs_page(&f, p, id++, size[k], cap) != LFE_RC_UNWILLING_TO_PERFORM)
				bad++;
			p->open = false;
			continue;
		} else if (op == 6) {   /* the client ends it */
			if (pgs_page(&f, p, id++, 0, cap) != 0 || p->open)
				bad++;
			memmove(order + pos, order + pos + 1, (size_t)(n_open - pos - 1) * sizeof *order);
			n_open--;
			continue;
		} else if (pgs_page(&f, p, id++, size[k], cap) != 0) {
			bad++;
		}
		if (pos >= 0) {
			memmove(order + pos, order + pos + 1, (size_t)(n_open - pos - 1) * sizeof *order);
			n_open--;
		}
		if (p->open) {
			if (n_open == 4) {   /* the model's eviction: the oldest */
				n_open--;
				evicted++;
			}
			memmove(order + 1, order, (size_t)n_open * sizeof *order);
			order[0] = k;
			n_open++;
		} else {
			if (!pgs_once(p, 22))
				bad++;
			ended++;
		}
		if (held(&f) != n_open)
			bad++;
	}
	CHECK(bad == 0 && ended > 10 && evicted > 5, "random: %d wrong, %d ended, %d evicted", bad,
	      ended, evicted);
	CHECK(held(&f) == n_open, "random: %d held, %d open", held(&f), n_open);
	fx_fini(&f);
	free(sl);
}

int main(void)
{
	if (ldap_initialize(&ld, "ldap://127.0.0.1:1") != LDAP_SUCCESS)
		return 2;
	test_search_stream();
	test_paged_many();
	test_paged_tight();
	test_paged_random();
	test_bind();
	test_bind_backend_verdicts();
	test_pending();
	test_dn_chunks();
	test_extended();
	test_starttls();
	test_require_tls();
	test_rootdse();
	test_search();
	test_write_ops();
	test_controls();
	test_ppolicy_control();
	test_conn_ctx();
	test_unbind_abandon();
	test_malformed();
	test_framing();
	test_backpressure();
	test_msgid0();
	test_filter_limits();
	test_secret_attrs();
	test_secret_filters();
	test_secret_evalall();
	test_policy();
	ldap_unbind_ext(ld, NULL, NULL);
	return check_done();
}
