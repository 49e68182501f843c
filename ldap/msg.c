/* ldap/msg.c — LDAPMessage framing, decoding and encoding (RFC 4511 §4).
 *
 * Decoding is strict (see ber.h for the BER rules) with two deliberate
 * allowances, both for interoperability and both harmless:
 *   - Control.criticality FALSE sent explicitly (a DEFAULT value that X.690
 *     DER would omit) is accepted;
 *   - an empty Controls sequence is accepted.
 * Operations ldapfe only refuses (Modify, Add, Delete, ModifyDN, Compare)
 * are checked for their DN and for well-formed elements after it, not for
 * their full grammar: the answer is a refusal either way.
 */
#include "ldap/ber.h"
#include "ldap/filter.h"
#include "ldap/msg.h"

#define OID_NOTICE_OF_DISCONNECTION "1.3.6.1.4.1.1466.20036"

int lfe_ldap_frame(const uint8_t *buf, size_t len, size_t max_pdu, size_t *pdu_len)
{
	uint8_t tag;
	size_t hl, cl;

	*pdu_len = 0;
	if (len == 0)
		return -EAGAIN;
	if (buf[0] != LFE_BER_SEQUENCE)
		return -EBADMSG;
	int rc = lfe_ber_hdr(buf, len, &tag, &hl, &cl);
	if (rc)
		return rc;
	/* cl < 2^32 and hl <= 6: no overflow on a 64-bit size_t; widen for
	 * 32-bit targets all the same. */
	uint64_t total = (uint64_t)hl + cl;
	if (total > max_pdu)
		return -EMSGSIZE;
	*pdu_len = (size_t)total;
	return len >= total ? 0 : -EAGAIN;
}

/* One element of tag `tag` at *q, whole before end: its content in *c,
 * *q past it. Definite lengths of up to 3 octets; a non-minimal length is
 * let by (the peek only points, the decoder judges). */
static inline bool peek_elem(const uint8_t **q, const uint8_t *end, uint8_t tag, struct lfe_bytes *c)
{
	const uint8_t *p = *q;
	size_t left = (size_t)(end - p), hl = 2, cl;

	if (left < 2 || p[0] != tag)
		return false;
	cl = p[1];
	if (cl & 0x80) {
		unsigned n = cl & 0x7f;
		if (n == 0 || n > 3 || left < 2 + n)
			return false;
		cl = 0;
		for (unsigned i = 0; i < n; i++)
			cl = cl << 8 | p[2 + i];
		hl += n;
	}
	if (cl > left - hl)
		return false;
	c->p = p + hl;
	c->len = cl;
	*q = p + hl + cl;
	return true;
}

int lfe_ldap_peek_bind(const uint8_t *p, size_t len, struct lfe_bytes *dn, struct lfe_bytes *pw)
{
	struct lfe_bytes msg, id, op, ver;
	const uint8_t *q = p;

	if (p == NULL || !peek_elem(&q, p + len, LFE_BER_SEQUENCE, &msg))
		return -EINVAL;
	q = msg.p;
	const uint8_t *mend = msg.p + msg.len;
	if (!peek_elem(&q, mend, LFE_BER_INTEGER, &id) || !peek_elem(&q, mend, LFE_BER_APP_CONS(LFE_OP_BIND_REQ), &op) ||
	    q != mend)
		return -EINVAL;
	q = op.p;
	const uint8_t *oend = op.p + op.len;
	if (!peek_elem(&q, oend, LFE_BER_INTEGER, &ver) || ver.len != 1 || ver.p[0] != 3 ||
	    !peek_elem(&q, oend, LFE_BER_OCTETS, dn) || !peek_elem(&q, oend, LFE_BER_CTX(0), pw) ||
	    q != oend)
		return -EINVAL;
	return 0;
}

/* <numericoid> of RFC 4512 §1.4: number *( DOT number ), no leading zeros. */
static bool oid_ok(struct lfe_bytes o)
{
	size_t i = 0;

	if (o.len == 0)
		return false;
	for (;;) {
		size_t s = i;
		while (i < o.len && o.p[i] >= '0' && o.p[i] <= '9')
			i++;
		if (i == s || (o.p[s] == '0' && i - s > 1))
			return false;
		if (i == o.len)
			return true;
		if (o.p[i] != '.')
			return false;
		i++;
	}
}

static bool dec_oid(struct lfe_ber *b, uint8_t tag, struct lfe_bytes *out)
{
	if (!lfe_ber_octets(b, tag, out))
		return false;
	if (!oid_ok(*out))
		return lfe_ber_fail(b, -EBADMSG);
	return true;
}

static bool dec_bind(struct lfe_ber *b, struct lfe_bind_req *r)
{
	struct lfe_ber s, sasl;
	int64_t v;

	if (!lfe_ber_enter(b, LFE_BER_APP_CONS(LFE_OP_BIND_REQ), &s) ||
	    !lfe_ber_int(&s, LFE_BER_INTEGER, 1, 127, &v) ||
	    !lfe_ber_octets(&s, LFE_BER_OCTETS, &r->name))
		return false;
	r->version = (int32_t)v;
	r->has_sasl_creds = false;
	r->simple = (struct lfe_bytes){ NULL, 0 };
	r->sasl_mech = (struct lfe_bytes){ NULL, 0 };
	r->sasl_creds = (struct lfe_bytes){ NULL, 0 };
	switch (lfe_ber_peek(&s)) {
	case LFE_BER_CTX(0):
		r->auth = LFE_AUTH_SIMPLE;
		if (!lfe_ber_octets(&s, LFE_BER_CTX(0), &r->simple))
			return false;
		break;
	case LFE_BER_CTX_CONS(3):
		r->auth = LFE_AUTH_SASL;
		if (!lfe_ber_enter(&s, LFE_BER_CTX_CONS(3), &sasl) ||
		    !lfe_ber_octets(&sasl, LFE_BER_OCTETS, &r->sasl_mech))
			return false;
		if (lfe_ber_more(&sasl)) {
			if (!lfe_ber_octets(&sasl, LFE_BER_OCTETS, &r->sasl_creds))
				return false;
			r->has_sasl_creds = true;
		}
		if (!lfe_ber_done(&sasl))
			return false;
		break;
	default:
		/* [1]/[2] are reserved (RFC 4511 §4.2); anything else is not a
		 * BindRequest. */
		return lfe_ber_fail(&s, -EBADMSG);
	}
	return lfe_ber_done(&s);
}

static bool dec_search(struct lfe_ber *b, struct lfe_search_req *r)
{
	struct lfe_ber s, attrs;
	int64_t scope, deref, szl, tml;
	uint8_t tag;

	if (!lfe_ber_enter(b, LFE_BER_APP_CONS(LFE_OP_SEARCH_REQ), &s) ||
	    !lfe_ber_octets(&s, LFE_BER_OCTETS, &r->base) ||
	    !lfe_ber_int(&s, LFE_BER_ENUMERATED, 0, 2, &scope) ||
	    !lfe_ber_int(&s, LFE_BER_ENUMERATED, 0, 3, &deref) ||
	    !lfe_ber_int(&s, LFE_BER_INTEGER, 0, INT32_MAX, &szl) ||
	    !lfe_ber_int(&s, LFE_BER_INTEGER, 0, INT32_MAX, &tml) ||
	    !lfe_ber_bool(&s, LFE_BER_BOOLEAN, &r->types_only) ||
	    !lfe_ber_elem(&s, &tag, &r->filter, NULL))
		return false;
	r->scope = (enum lfe_ldap_scope)scope;
	r->deref = (uint8_t)deref;
	r->size_limit = (int32_t)szl;
	r->time_limit = (int32_t)tml;
	int rc = lfe_filter_validate(r->filter.p, r->filter.len);
	if (rc)
		return lfe_ber_fail(&s, rc);
	if (!lfe_ber_enter(&s, LFE_BER_SEQUENCE, &attrs))
		return false;
	r->n_attrs = 0;
	while (lfe_ber_more(&attrs)) {
		if (r->n_attrs == LFE_LDAP_MAX_ATTRS)
			return lfe_ber_fail(&attrs, -E2BIG);
		if (!lfe_ber_octets(&attrs, LFE_BER_OCTETS, &r->attrs[r->n_attrs]))
			return false;
		r->n_attrs++;
	}
	return lfe_ber_done(&attrs) && lfe_ber_done(&s);
}

static bool dec_ext(struct lfe_ber *b, struct lfe_ext_req *r)
{
	struct lfe_ber s;

	if (!lfe_ber_enter(b, LFE_BER_APP_CONS(LFE_OP_EXT_REQ), &s) ||
	    !dec_oid(&s, LFE_BER_CTX(0), &r->oid))
		return false;
	r->has_value = false;
	r->value = (struct lfe_bytes){ NULL, 0 };
	if (lfe_ber_more(&s)) {
		if (!lfe_ber_octets(&s, LFE_BER_CTX(1), &r->value))
			return false;
		r->has_value = true;
	}
	return lfe_ber_done(&s);
}

/* Modify/Add/ModifyDN/Compare: SEQUENCE { LDAPDN, ... }. */
static bool dec_write(struct lfe_ber *b, uint8_t tag, struct lfe_write_req *r)
{
	struct lfe_ber s;

	if (!lfe_ber_enter(b, tag, &s) ||
	    !lfe_ber_octets(&s, LFE_BER_OCTETS, &r->dn))
		return false;
	if (!lfe_ber_more(&s))
		return lfe_ber_fail(&s, -EBADMSG);
	while (lfe_ber_more(&s))
		if (!lfe_ber_skip(&s))
			return false;
	return lfe_ber_done(&s);
}

static bool dec_controls(struct lfe_ber *b, struct lfe_ldap_msg *m)
{
	struct lfe_ber cs, c;

	if (!lfe_ber_enter(b, LFE_BER_CTX_CONS(0), &cs))
		return false;
	while (lfe_ber_more(&cs)) {
		if (m->n_controls == LFE_LDAP_MAX_CONTROLS)
			return lfe_ber_fail(&cs, -E2BIG);
		struct lfe_ldap_control *ctl = &m->controls[m->n_controls];
		if (!lfe_ber_enter(&cs, LFE_BER_SEQUENCE, &c) ||
		    !dec_oid(&c, LFE_BER_OCTETS, &ctl->oid))
			return false;
		ctl->critical = false;
		ctl->has_value = false;
		ctl->value = (struct lfe_bytes){ NULL, 0 };
		if (lfe_ber_peek(&c) == LFE_BER_BOOLEAN &&
		    !lfe_ber_bool(&c, LFE_BER_BOOLEAN, &ctl->critical))
			return false;
		if (lfe_ber_more(&c)) {
			if (!lfe_ber_octets(&c, LFE_BER_OCTETS, &ctl->value))
				return false;
			ctl->has_value = true;
		}
		if (!lfe_ber_done(&c))
			return false;
		m->n_controls++;
	}
	return lfe_ber_done(&cs);
}

int lfe_ldap_decode(const uint8_t *pdu, size_t len, struct lfe_ldap_msg *m)
{
	struct lfe_ber top, s;
	int64_t v;

	m->msgid = -1;
	m->n_controls = 0;
	lfe_ber_init(&top, pdu, len);
	if (!lfe_ber_enter(&top, LFE_BER_SEQUENCE, &s) || !lfe_ber_done(&top) ||
	    !lfe_ber_int(&s, LFE_BER_INTEGER, 0, INT32_MAX, &v))
		return lfe_ber_error(&top);
	m->msgid = (int32_t)v;

	int tag = lfe_ber_peek(&s);
	/* Every protocolOp is APPLICATION class; the number is the op. */
	m->op = (enum lfe_ldap_op)(tag & 0x1f);
	switch (tag) {
	case LFE_BER_APP_CONS(LFE_OP_BIND_REQ):
		dec_bind(&s, &m->u.bind);
		break;
	case LFE_BER_APP(LFE_OP_UNBIND_REQ):
		lfe_ber_null(&s, (uint8_t)tag);
		break;
	case LFE_BER_APP_CONS(LFE_OP_SEARCH_REQ):
		dec_search(&s, &m->u.search);
		break;
	case LFE_BER_APP_CONS(LFE_OP_EXT_REQ):
		dec_ext(&s, &m->u.ext);
		break;
	case LFE_BER_APP(LFE_OP_ABANDON_REQ):
		if (lfe_ber_int(&s, (uint8_t)tag, 0, INT32_MAX, &v))
			m->u.abandon_id = (int32_t)v;
		break;
	case LFE_BER_APP(LFE_OP_DEL_REQ):
		/* DelRequest ::= [APPLICATION 10] LDAPDN: primitive. */
		lfe_ber_octets(&s, (uint8_t)tag, &m->u.write.dn);
		break;
	case LFE_BER_APP_CONS(LFE_OP_MODIFY_REQ):
	case LFE_BER_APP_CONS(LFE_OP_ADD_REQ):
	case LFE_BER_APP_CONS(LFE_OP_MODDN_REQ):
	case LFE_BER_APP_CONS(LFE_OP_COMPARE_REQ):
		dec_write(&s, (uint8_t)tag, &m->u.write);
		break;
	default:
		/* Responses, intermediate responses and unknown tags are not
		 * something a client may send. */
		lfe_ber_fail(&s, -EBADMSG);
		break;
	}
	if (lfe_ber_peek(&s) == LFE_BER_CTX_CONS(0))
		dec_controls(&s, m);
	lfe_ber_done(&s);
	return lfe_ber_error(&top);
}

/* ---- encoders ---------------------------------------------------------- */

static bool msgid_ok(int32_t msgid) { return msgid >= 0; }

static void put_result_fields(struct lfe_berw *w, const struct lfe_ldap_result *r)
{
	lfe_berw_octets(w, LFE_BER_OCTETS, r->diag.p, r->diag.len);
	lfe_berw_octets(w, LFE_BER_OCTETS, r->matched_dn.p, r->matched_dn.len);
	lfe_berw_int(w, LFE_BER_ENUMERATED, r->code);
}

static ssize_t finish_msg(struct lfe_berw *w, int32_t msgid, uint8_t op_tag, size_t m0)
{
	lfe_berw_wrap(w, op_tag, m0);
	lfe_berw_int(w, LFE_BER_INTEGER, msgid);
	lfe_berw_wrap(w, LFE_BER_SEQUENCE, 0);
	return lfe_berw_finish(w);
}

/* The answer to nearly every bind: an LDAPResult with no matched DN, no
 * message, a one-byte code. Written straight out, byte for byte what the
 * writer below produces: 30 L 02 n ID.. TAG 07 0a 01 RC 04 00 04 00, ID in
 * the fewest two's complement bytes (msgid >= 0). */
static ssize_t enc_plain_result(uint8_t *out, size_t cap, int32_t msgid, uint8_t tag, uint8_t code)
{
	uint32_t id = (uint32_t)msgid;
	size_t n = id < 0x80u ? 1 : id < 0x8000u ? 2 : id < 0x800000u ? 3 : 4;
	size_t total = 13 + n;
	if (cap < total)
		return -ENOSPC;
	uint8_t *p = out;
	*p++ = LFE_BER_SEQUENCE;
	*p++ = (uint8_t)(11 + n);
	*p++ = LFE_BER_INTEGER;
	*p++ = (uint8_t)n;
	for (size_t i = n; i-- > 0;)
		*p++ = (uint8_t)(id >> (8 * i));
	static const uint8_t tail[] = { 0x07, LFE_BER_ENUMERATED, 0x01, 0, LFE_BER_OCTETS, 0x00,
					LFE_BER_OCTETS, 0x00 };
	*p++ = tag;
	memcpy(p, tail, sizeof tail);
	p[3] = code;
	return (ssize_t)total;
}

ssize_t lfe_ldap_enc_result(uint8_t *out, size_t cap, int32_t msgid,
			    enum lfe_ldap_op resp_op, const struct lfe_ldap_result *r)
{
	struct lfe_berw w;

	switch (resp_op) {
	case LFE_OP_BIND_RESP:
	case LFE_OP_SEARCH_DONE:
	case LFE_OP_MODIFY_RESP:
	case LFE_OP_ADD_RESP:
	case LFE_OP_DEL_RESP:
	case LFE_OP_MODDN_RESP:
	case LFE_OP_COMPARE_RESP:
		break;
	default:
		return -EINVAL;
	}
	if (!msgid_ok(msgid) || (int)r->code < 0)
		return -EINVAL;
	if (r->matched_dn.len == 0 && r->diag.len == 0 && (int)r->code < 128)
		return enc_plain_result(out, cap, msgid, (uint8_t)LFE_BER_APP_CONS(resp_op),
					(uint8_t)r->code);
	lfe_berw_init(&w, out, cap);
	put_result_fields(&w, r);
	return finish_msg(&w, msgid, (uint8_t)LFE_BER_APP_CONS(resp_op), 0);
}

ssize_t lfe_ldap_enc_result_ctrls(uint8_t *out, size_t cap, int32_t msgid,
				  enum lfe_ldap_op resp_op, const struct lfe_ldap_result *r,
				  const uint8_t *ctrls, size_t ctrls_len)
{
	struct lfe_berw w;
	size_t m0;

	if (ctrls_len == 0)
		return lfe_ldap_enc_result(out, cap, msgid, resp_op, r);
	if (resp_op != LFE_OP_BIND_RESP && resp_op != LFE_OP_SEARCH_DONE)
		return -EINVAL;
	if (!msgid_ok(msgid) || (int)r->code < 0)
		return -EINVAL;
	lfe_berw_init(&w, out, cap);
	/* controls [0] Controls, after the protocolOp (written backwards) */
	lfe_berw_raw(&w, ctrls, ctrls_len);
	lfe_berw_wrap(&w, LFE_BER_CTX_CONS(0), 0);
	m0 = lfe_berw_mark(&w);
	put_result_fields(&w, r);
	return finish_msg(&w, msgid, (uint8_t)LFE_BER_APP_CONS(resp_op), m0);
}

ssize_t lfe_ldap_enc_ext_resp(uint8_t *out, size_t cap, int32_t msgid,
			      const struct lfe_ldap_result *r,
			      const struct lfe_bytes *oid, const struct lfe_bytes *value)
{
	struct lfe_berw w;

	if (!msgid_ok(msgid) || (int)r->code < 0)
		return -EINVAL;
	lfe_berw_init(&w, out, cap);
	if (value)
		lfe_berw_octets(&w, LFE_BER_CTX(11), value->p, value->len);
	if (oid)
		lfe_berw_octets(&w, LFE_BER_CTX(10), oid->p, oid->len);
	put_result_fields(&w, r);
	return finish_msg(&w, msgid, LFE_BER_APP_CONS(LFE_OP_EXT_RESP), 0);
}

ssize_t lfe_ldap_enc_notice_of_disconnection(uint8_t *out, size_t cap,
					     enum lfe_ldap_rc code, const char *diag)
{
	static const struct lfe_bytes oid = {
		(const uint8_t *)OID_NOTICE_OF_DISCONNECTION,
		sizeof(OID_NOTICE_OF_DISCONNECTION) - 1,
	};
	struct lfe_ldap_result r = {
		.code = code,
		.diag = { (const uint8_t *)diag, diag ? strlen(diag) : 0 },
	};

	return lfe_ldap_enc_ext_resp(out, cap, 0, &r, &oid, NULL);
}

/* ---- SearchResultEntry from an entry source, forward ---- */

static int arr_next_attr(const struct lfe_ldap_entry *e, size_t *cursor, struct lfe_bytes *type,
			 uint32_t *n_vals, struct lfe_bytes *list)
{
	const struct lfe_ldap_attr *a = e->ctx;
	size_t i = *cursor;

	if (i >= e->n)
		return 0;
	*type = a[i].type;
	*n_vals = a[i].n_vals;
	/* The list walks the attribute's value array: p the next value, len
	 * the values left. */
	*list = (struct lfe_bytes){ (const uint8_t *)a[i].vals, a[i].n_vals };
	*cursor = i + 1;
	return 1;
}

static int arr_next_val(const struct lfe_ldap_entry *e, struct lfe_bytes *list,
			struct lfe_bytes *val)
{
	(void)e;
	if (list->len == 0)
		return 0;
	*val = *(const struct lfe_bytes *)(const void *)list->p;
	list->p += sizeof(struct lfe_bytes);
	list->len--;
	return 1;
}

void lfe_ldap_entry_of_attrs(struct lfe_ldap_entry *e, struct lfe_bytes dn,
			     const struct lfe_ldap_attr *attrs, uint32_t n_attrs)
{
	*e = (struct lfe_ldap_entry){ .dn = dn, .ctx = attrs, .n = n_attrs,
				      .next_attr = arr_next_attr, .next_val = arr_next_val };
}

static size_t hdr_len(size_t n)
{
	return n < 0x80 ? 2 : n <= 0xff ? 3 : n <= 0xffff ? 4 : n <= 0xffffff ? 5 : 6;
}

static uint64_t tlv(uint64_t n)
{
	return hdr_len((size_t)n) + n;
}

/* Forward writer of a byte window [skip, skip + cap) of a message. */
struct fwd {
	uint8_t *out;
	size_t cap, n;
	uint64_t pos, skip;
	uint64_t *sum;      /* FNV-1a of every byte of the message, or NULL */
};

static void fwd_put(struct fwd *f, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t end = f->pos + n;

	if (f->sum)
		for (size_t i = 0; i < n; i++)
			*f->sum = (*f->sum ^ b[i]) * 0x100000001b3ull;

	if (end > f->skip && f->n < f->cap) {
		uint64_t from = f->pos < f->skip ? f->skip - f->pos : 0;
		size_t k = n - (size_t)from;
		if (k > f->cap - f->n)
			k = f->cap - f->n;
		memcpy(f->out + f->n, b + from, k);
		f->n += k;
	}
	f->pos = end;
}

static void fwd_hdr(struct fwd *f, uint8_t tag, uint64_t len)
{
	uint8_t h[6] = { tag };
	size_t n = hdr_len((size_t)len);

	if (n == 2) {
		h[1] = (uint8_t)len;
	} else {
		h[1] = (uint8_t)(0x80 | (n - 2));
		for (size_t i = 0; i < n - 2; i++)
			h[2 + i] = (uint8_t)(len >> (8 * (n - 3 - i)));
	}
	fwd_put(f, h, n);
}

/* Content length of one attribute's SET of values (0 with types_only). */
static int vals_len(const struct lfe_ldap_entry *e, struct lfe_bytes list, bool types_only,
		    uint64_t *len)
{
	struct lfe_bytes v;
	int rc;

	*len = 0;
	if (types_only)
		return 0;
	while ((rc = e->next_val(e, &list, &v)) == 1)
		*len += tlv(v.len);
	return rc;
}

/* Walk the selected attributes: with f == NULL sum the PartialAttributeList
 * content into *len, else write it. */
static int enc_attrs(const struct lfe_ldap_entry *e, const struct lfe_ldap_entry_sel *sel,
		     struct fwd *f, uint64_t *len)
{
	struct lfe_bytes type, list, v;
	uint32_t n_vals;
	size_t cur = 0;
	int rc;

	*len = 0;
	while ((rc = e->next_attr(e, &cur, &type, &n_vals, &list)) == 1) {
		if (!sel->wants(sel->ctx, type))
			continue;
		uint64_t vl;
		if ((rc = vals_len(e, list, sel->types_only, &vl)) < 0)
			return rc;
		uint64_t al = tlv(type.len) + tlv(vl);
		*len += tlv(al);
		if (*len > LFE_BER_MAX_LEN)
			return -EMSGSIZE;
		if (!f)
			continue;
		fwd_hdr(f, LFE_BER_SEQUENCE, al);
		fwd_hdr(f, LFE_BER_OCTETS, type.len);
		fwd_put(f, type.p, type.len);
		fwd_hdr(f, LFE_BER_SET, vl);
		if (sel->types_only)
			continue;
		while ((rc = e->next_val(e, &list, &v)) == 1) {
			fwd_hdr(f, LFE_BER_OCTETS, v.len);
			fwd_put(f, v.p, v.len);
		}
		if (rc < 0)
			return rc;
	}
	return rc;
}

ssize_t lfe_ldap_enc_entry(uint8_t *out, size_t cap, uint64_t skip, int32_t msgid,
			   const struct lfe_ldap_entry *e, const struct lfe_ldap_entry_sel *sel,
			   uint64_t *total, uint64_t *sum)
{
	uint64_t al;
	uint8_t id[6];

	if (!msgid_ok(msgid) || !e || !sel || (cap && !out))
		return -EINVAL;
	int rc = enc_attrs(e, sel, NULL, &al);
	if (rc < 0)
		return rc;
	/* messageID: the fewest two's complement bytes of a value >= 0. */
	uint32_t m = (uint32_t)msgid;
	size_t idn = m < 0x80u ? 1 : m < 0x8000u ? 2 : m < 0x800000u ? 3 : 4;
	id[0] = LFE_BER_INTEGER;
	id[1] = (uint8_t)idn;
	for (size_t i = 0; i < idn; i++)
		id[2 + i] = (uint8_t)(m >> (8 * (idn - 1 - i)));
	uint64_t op = tlv(e->dn.len) + tlv(al);
	uint64_t body = 2 + idn + tlv(op);
	if (body > LFE_BER_MAX_LEN)
		return -EMSGSIZE;
	*total = tlv(body);
	if (skip > *total)
		return -EINVAL;
	if (cap == 0)
		return 0;
	struct fwd f = { .out = out, .cap = cap, .skip = skip, .sum = sum };
	if (sum)
		*sum = 0xcbf29ce484222325ull;
	fwd_hdr(&f, LFE_BER_SEQUENCE, body);
	fwd_put(&f, id, 2 + idn);
	fwd_hdr(&f, LFE_BER_APP_CONS(LFE_OP_SEARCH_ENTRY), op);
	fwd_hdr(&f, LFE_BER_OCTETS, e->dn.len);
	fwd_put(&f, e->dn.p, e->dn.len);
	fwd_hdr(&f, LFE_BER_SEQUENCE, al);
	if ((rc = enc_attrs(e, sel, &f, &al)) < 0)
		return rc;
	return (ssize_t)f.n;
}

ssize_t lfe_ldap_enc_search_entry(uint8_t *out, size_t cap, int32_t msgid,
				  struct lfe_bytes dn,
				  const struct lfe_ldap_attr *attrs, uint32_t n_attrs)
{
	struct lfe_berw w;

	if (!msgid_ok(msgid) || (n_attrs && !attrs))
		return -EINVAL;
	lfe_berw_init(&w, out, cap);
	for (uint32_t i = n_attrs; i-- > 0;) {
		const struct lfe_ldap_attr *a = &attrs[i];
		if (a->n_vals && !a->vals)
			return -EINVAL;
		size_t ma = lfe_berw_mark(&w);
		for (uint32_t j = a->n_vals; j-- > 0;)
			lfe_berw_octets(&w, LFE_BER_OCTETS, a->vals[j].p, a->vals[j].len);
		lfe_berw_wrap(&w, LFE_BER_SET, ma);
		lfe_berw_octets(&w, LFE_BER_OCTETS, a->type.p, a->type.len);
		lfe_berw_wrap(&w, LFE_BER_SEQUENCE, ma);
		if (w.err)
			return w.err;
	}
	lfe_berw_wrap(&w, LFE_BER_SEQUENCE, 0);
	lfe_berw_octets(&w, LFE_BER_OCTETS, dn.p, dn.len);
	return finish_msg(&w, msgid, LFE_BER_APP_CONS(LFE_OP_SEARCH_ENTRY), 0);
}
