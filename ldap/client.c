/* ldap/client.c — client-side LDAP encoding and response decoding; see
 * client.h. Every byte is read through the ber.h cursor, so the rules that
 * protect the server from its clients also protect the load generator from
 * a misbehaving server (whose results it must never guess at).
 */
#include "ldap/client.h"

#include "ldap/ber.h"

#define OID_NOTICE "1.3.6.1.4.1.1466.20036"

/* Enclose the protocolOp written so far in LDAPMessage { messageID, op }. */
static ssize_t finish_msg(struct lfe_berw *w, int32_t msgid)
{
	lfe_berw_int(w, LFE_BER_INTEGER, msgid);
	lfe_berw_wrap(w, LFE_BER_SEQUENCE, 0);
	return lfe_berw_finish(w);
}

ssize_t lfe_ldap_enc_bind_req(uint8_t *out, size_t cap, int32_t msgid,
			      const void *dn, size_t dn_len, const void *pw, size_t pw_len)
{
	struct lfe_berw w;

	/* Message id 0 is reserved for unsolicited notifications (§4.1.1.1). */
	if (msgid <= 0 || (dn_len && !dn) || (pw_len && !pw) || !out)
		return -EINVAL;
	lfe_berw_init(&w, out, cap);
	lfe_berw_octets(&w, LFE_BER_CTX(0), pw, pw_len);
	lfe_berw_octets(&w, LFE_BER_OCTETS, dn, dn_len);
	lfe_berw_int(&w, LFE_BER_INTEGER, 3);
	lfe_berw_wrap(&w, LFE_BER_APP_CONS(LFE_OP_BIND_REQ), 0);
	return finish_msg(&w, msgid);
}

ssize_t lfe_ldap_enc_unbind_req(uint8_t *out, size_t cap, int32_t msgid)
{
	struct lfe_berw w;

	if (msgid <= 0 || !out)
		return -EINVAL;
	lfe_berw_init(&w, out, cap);
	lfe_berw_hdr(&w, LFE_BER_APP(LFE_OP_UNBIND_REQ), 0);
	return finish_msg(&w, msgid);
}

/* Responses whose body is COMPONENTS OF LDAPResult plus optional trailers. */
static bool is_result_op(unsigned op)
{
	switch (op) {
	case LFE_OP_BIND_RESP:
	case LFE_OP_SEARCH_DONE:
	case LFE_OP_MODIFY_RESP:
	case LFE_OP_ADD_RESP:
	case LFE_OP_DEL_RESP:
	case LFE_OP_MODDN_RESP:
	case LFE_OP_COMPARE_RESP:
	case LFE_OP_EXT_RESP:
		return true;
	default:
		return false;
	}
}

static bool dec_result(struct lfe_ber *b, struct lfe_ldap_resp *r)
{
	int64_t code;

	if (!lfe_ber_int(b, LFE_BER_ENUMERATED, 0, INT32_MAX, &code) ||
	    !lfe_ber_octets(b, LFE_BER_OCTETS, &r->matched_dn) ||
	    !lfe_ber_octets(b, LFE_BER_OCTETS, &r->diag))
		return false;
	r->code = (int32_t)code;
	if (lfe_ber_peek(b) == LFE_BER_CTX_CONS(3)) {
		/* Referral ::= SEQUENCE SIZE (1..MAX) OF uri URI */
		struct lfe_ber ref;
		struct lfe_bytes uri;
		if (!lfe_ber_enter(b, LFE_BER_CTX_CONS(3), &ref))
			return false;
		if (!lfe_ber_more(&ref))
			return lfe_ber_fail(b, -EBADMSG);
		while (lfe_ber_more(&ref))
			lfe_ber_octets(&ref, LFE_BER_OCTETS, &uri);
		r->has_referral = true;
	}
	return true;
}

static bool dec_body(struct lfe_ber *op, struct lfe_ldap_resp *r)
{
	if (!dec_result(op, r))
		return false;
	if (r->op == LFE_OP_BIND_RESP && lfe_ber_peek(op) == LFE_BER_CTX(7)) {
		r->has_sasl_creds = lfe_ber_octets(op, LFE_BER_CTX(7), &r->sasl_creds);
	} else if (r->op == LFE_OP_EXT_RESP) {
		if (lfe_ber_peek(op) == LFE_BER_CTX(10))
			r->has_oid = lfe_ber_octets(op, LFE_BER_CTX(10), &r->oid);
		if (lfe_ber_peek(op) == LFE_BER_CTX(11))
			r->has_value = lfe_ber_octets(op, LFE_BER_CTX(11), &r->value);
	}
	return lfe_ber_done(op);
}

static bool dec_controls(struct lfe_ber *msg, struct lfe_ldap_resp *r)
{
	struct lfe_ber cs, c;
	struct lfe_bytes type, val;
	bool crit;

	if (!lfe_ber_enter(msg, LFE_BER_CTX_CONS(0), &cs))
		return false;
	while (lfe_ber_more(&cs)) {
		if (r->n_controls == LFE_LDAP_MAX_CONTROLS)
			return lfe_ber_fail(&cs, -E2BIG);
		if (!lfe_ber_enter(&cs, LFE_BER_SEQUENCE, &c) ||
		    !lfe_ber_octets(&c, LFE_BER_OCTETS, &type))
			return false;
		if (type.len == 0)
			return lfe_ber_fail(&cs, -EBADMSG);
		if (lfe_ber_peek(&c) == LFE_BER_BOOLEAN)
			lfe_ber_bool(&c, LFE_BER_BOOLEAN, &crit);
		if (lfe_ber_peek(&c) == LFE_BER_OCTETS)
			lfe_ber_octets(&c, LFE_BER_OCTETS, &val);
		if (!lfe_ber_done(&c))
			return false;
		r->n_controls++;
	}
	return lfe_ber_error(&cs) == 0;
}

int lfe_ldap_decode_resp(const uint8_t *pdu, size_t len, struct lfe_ldap_resp *r)
{
	struct lfe_ber top, msg, op;
	int64_t id;

	memset(r, 0, sizeof(*r));
	r->msgid = -1;
	if (!pdu)
		return -EBADMSG;
	lfe_ber_init(&top, pdu, len);
	if (!lfe_ber_enter(&top, LFE_BER_SEQUENCE, &msg) || !lfe_ber_done(&top))
		return -EBADMSG;
	if (!lfe_ber_int(&msg, LFE_BER_INTEGER, 0, INT32_MAX, &id))
		return -EBADMSG;
	r->msgid = (int32_t)id;
	int tag = lfe_ber_peek(&msg);
	if (tag < 0)
		return -EBADMSG;
	unsigned opn = (unsigned)tag & 0x1fu;
	if (((unsigned)tag & 0xe0u) != 0x60u || !is_result_op(opn)) {
		/* Not a response we decode: report what it is, if well-formed. */
		if (((unsigned)tag & 0xc0u) != 0x40u || is_result_op(opn) || !lfe_ber_skip(&msg))
			return -EBADMSG;
		r->op = (enum lfe_ldap_op)opn;
		if (lfe_ber_peek(&msg) == LFE_BER_CTX_CONS(0))
			lfe_ber_skip(&msg);
		return lfe_ber_done(&msg) ? -EPROTONOSUPPORT : -EBADMSG;
	}
	r->op = (enum lfe_ldap_op)opn;
	if (!lfe_ber_enter(&msg, (uint8_t)tag, &op) || !dec_body(&op, r))
		return lfe_ber_error(&msg) ? lfe_ber_error(&msg) : -EBADMSG;
	if (lfe_ber_peek(&msg) == LFE_BER_CTX_CONS(0) && !dec_controls(&msg, r))
		return lfe_ber_error(&msg);
	if (!lfe_ber_done(&msg))
		return lfe_ber_error(&msg);
	return 0;
}

bool lfe_ldap_resp_is_notice(const struct lfe_ldap_resp *r)
{
	return r->op == LFE_OP_EXT_RESP && r->msgid == 0 && r->has_oid &&
	       r->oid.len == sizeof(OID_NOTICE) - 1 &&
	       memcmp(r->oid.p, OID_NOTICE, sizeof(OID_NOTICE) - 1) == 0;
}
