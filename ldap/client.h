/* ldap/client.h — the client side of LDAPv3 (RFC 4511) that a bind load
 * generator needs: encode BindRequest (simple) and UnbindRequest, decode
 * the responses a server sends back (BindResponse, ExtendedResponse such as
 * a Notice of Disconnection, and any other plain-LDAPResult response).
 *
 * Built on ldap/ber.h, so the same strict BER rules apply to what a server
 * answers as to what a client sends ldapfe: a response that ldapfe's own
 * reader would refuse is -EBADMSG here too.
 *
 * libc only; nothing allocates. Decoded slices point into the PDU buffer and
 * live exactly as long as it does. Thread rules: none (no state).
 */
#ifndef LFE_LDAP_CLIENT_H
#define LFE_LDAP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ldap/msg.h"

/* Encode an LDAPv3 simple BindRequest with message id msgid (1..2^31-1).
 * dn and pw are raw octets (pw may be empty for an anonymous/unauthenticated
 * bind; the server decides what that means). Returns the PDU length,
 * -ENOSPC if cap is too small, -EINVAL for a bad msgid or a NULL pointer
 * with a non-zero length. */
ssize_t lfe_ldap_enc_bind_req(uint8_t *out, size_t cap, int32_t msgid,
			      const void *dn, size_t dn_len, const void *pw, size_t pw_len);

/* Encode an UnbindRequest. Returns the PDU length (7 for msgid < 128),
 * -ENOSPC or -EINVAL as above. */
ssize_t lfe_ldap_enc_unbind_req(uint8_t *out, size_t cap, int32_t msgid);

/* A decoded response. Fields not carried by the operation are empty. */
struct lfe_ldap_resp {
	int32_t msgid;               /* 0 for an unsolicited notification */
	enum lfe_ldap_op op;         /* LFE_OP_BIND_RESP, LFE_OP_EXT_RESP, ... */
	int32_t code;                /* resultCode as sent (0..2^31-1) */
	struct lfe_bytes matched_dn;
	struct lfe_bytes diag;
	bool has_referral;
	bool has_sasl_creds;         /* BindResponse serverSaslCreds [7] */
	struct lfe_bytes sasl_creds;
	bool has_oid;                /* ExtendedResponse responseName [10] */
	struct lfe_bytes oid;
	bool has_value;              /* ExtendedResponse responseValue [11] */
	struct lfe_bytes value;
	uint32_t n_controls;         /* response controls: counted, not kept */
};

/* Decode one complete LDAPMessage of exactly len bytes (frame it first with
 * lfe_ldap_frame()) that carries an LDAPResult-shaped response: BindResponse,
 * ExtendedResponse, SearchResultDone, Modify/Add/Del/ModDN/CompareResponse.
 * Returns 0; -EBADMSG for malformed BER or grammar; -EPROTONOSUPPORT for a
 * well-formed message of another operation (a request, a search entry...),
 * with r->msgid and r->op set; -E2BIG for more than LFE_LDAP_MAX_CONTROLS
 * controls. On any error r->msgid is the message id if it could be read,
 * else -1. */
int lfe_ldap_decode_resp(const uint8_t *pdu, size_t len, struct lfe_ldap_resp *r);

/* True if r is a Notice of Disconnection (RFC 4511 §4.4.1). */
bool lfe_ldap_resp_is_notice(const struct lfe_ldap_resp *r);

#endif
