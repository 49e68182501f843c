/* fuzz_msg.c — frame and decode arbitrary streams as LDAPMessages; for a
 * decoded message, encode the response ldapfe would send, decode the
 * filter's string form, and check error codes stay in the documented set;
 * lfe_ldap_peek_bind must agree with the decoder on every bind both take. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/filter.h"
#include "ldap/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;
	static uint8_t out[LFE_LDAP_DEFAULT_MAX_PDU + 64];

	for (unsigned guard = 0; guard < 64 && off < size; guard++) {
		size_t pl = 0;
		int rc = lfe_ldap_frame(data + off, size - off, 4096, &pl);
		if (rc == -EAGAIN || rc == -EMSGSIZE || rc == -EBADMSG)
			return 0;
		if (rc != 0 || pl == 0 || pl > size - off)
			abort();
		struct lfe_ldap_msg m;
		/* The bind peek: slices inside what it was given, and the
		 * decoder's own whenever the decoder takes the PDU as well. */
		struct lfe_bytes pdn, ppw;
		int prc = lfe_ldap_peek_bind(data + off, size - off, &pdn, &ppw);
		if (prc == 0 && (pdn.p < data + off || pdn.p + pdn.len > data + off + pl ||
				 ppw.p < data + off || ppw.p + ppw.len > data + off + pl))
			abort();
		rc = lfe_ldap_decode(data + off, pl, &m);
		if (prc == 0 && rc == 0 &&
		    (m.op != LFE_OP_BIND_REQ || m.u.bind.version != 3 || m.u.bind.auth != LFE_AUTH_SIMPLE ||
		     m.n_controls != 0 || m.u.bind.name.p != pdn.p || m.u.bind.name.len != pdn.len ||
		     m.u.bind.simple.p != ppw.p || m.u.bind.simple.len != ppw.len))
			abort();
		if (rc != 0) {
			if (rc != -EBADMSG && rc != -E2BIG)
				abort();
			ssize_t n = lfe_ldap_enc_notice_of_disconnection(out, 128,
									 LFE_RC_PROTOCOL_ERROR, "x");
			if (n <= 0)
				abort();
			return 0;
		}
		if (m.msgid < 0 || m.n_controls > LFE_LDAP_MAX_CONTROLS)
			abort();
		struct lfe_ldap_result r = { .code = LFE_RC_SUCCESS };
		ssize_t n = 0;
		switch (m.op) {
		case LFE_OP_BIND_REQ:
			r.matched_dn = m.u.bind.name;
			n = lfe_ldap_enc_result(out, sizeof out, m.msgid, LFE_OP_BIND_RESP, &r);
			break;
		case LFE_OP_SEARCH_REQ: {
			char s[8192];
			const struct lfe_search_req *q = &m.u.search;
			if (q->scope > LFE_SCOPE_SUB || q->deref > 3 || q->n_attrs > LFE_LDAP_MAX_ATTRS)
				abort();
			if (lfe_filter_to_string(q->filter.p, q->filter.len, s, sizeof s) == -EBADMSG)
				abort();   /* decode validated it */
			struct lfe_ldap_attr a[LFE_LDAP_MAX_ATTRS];
			for (uint32_t i = 0; i < q->n_attrs; i++)
				a[i] = (struct lfe_ldap_attr){ q->attrs[i], 1, &q->base };
			n = lfe_ldap_enc_search_entry(out, sizeof out, m.msgid, q->base, a, q->n_attrs);
			if (n > 0) {
				struct lfe_ldap_msg e;
				/* Responses are not requests: the decoder refuses them. */
				if (lfe_ldap_decode(out, (size_t)n, &e) != -EBADMSG)
					abort();
			}
			break;
		}
		case LFE_OP_EXT_REQ:
			n = lfe_ldap_enc_ext_resp(out, sizeof out, m.msgid, &r, &m.u.ext.oid,
						  m.u.ext.has_value ? &m.u.ext.value : NULL);
			break;
		default:
			break;
		}
		if (n < 0 && n != -ENOSPC)
			abort();
		off += pl;
	}
	return 0;
}
