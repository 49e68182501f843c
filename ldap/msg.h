/* ldap/msg.h — LDAPv3 (RFC 4511) message framing, decoding and encoding.
 *
 * libc only: no DPDK, no LMDB. Everything works on (pointer, length) buffers.
 *
 * Zero copy: a decoded message holds struct lfe_bytes slices that point into
 * the PDU buffer passed to lfe_ldap_decode(); they are valid exactly as long
 * as that buffer is. Nothing here allocates.
 *
 * Errors: 0 or a positive length on success, a negative errno otherwise:
 *   -EAGAIN    need more bytes (framing only)
 *   -EMSGSIZE  the PDU declares a length above the configured maximum
 *   -EBADMSG   malformed BER or an LDAP grammar violation
 *   -E2BIG     a bounded element count (controls, attributes, filter nodes,
 *              nesting depth) was exceeded
 *   -ENOSPC    (encoders) the output buffer is too small; nothing useful was
 *              written and the caller may retry with more room
 *   -EINVAL    (encoders) msgid outside 0..2^31-1, a resp_op that is not an
 *              LDAPResult-shaped response, or n_vals > 0 with vals NULL
 */
#ifndef LFE_LDAP_MSG_H
#define LFE_LDAP_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ldap/bytes.h"
#include "ldap/filter.h"   /* the filter limits */

#define LFE_LDAP_DEFAULT_MAX_PDU  65536u
#define LFE_LDAP_MAX_CONTROLS     16u
#define LFE_LDAP_MAX_ATTRS        64u   /* attributes listed in a SearchRequest */


/* protocolOp application tag numbers (RFC 4511 §4.2 ff.). */
enum lfe_ldap_op {
	LFE_OP_BIND_REQ = 0,
	LFE_OP_BIND_RESP = 1,
	LFE_OP_UNBIND_REQ = 2,
	LFE_OP_SEARCH_REQ = 3,
	LFE_OP_SEARCH_ENTRY = 4,
	LFE_OP_SEARCH_DONE = 5,
	LFE_OP_MODIFY_REQ = 6,
	LFE_OP_MODIFY_RESP = 7,
	LFE_OP_ADD_REQ = 8,
	LFE_OP_ADD_RESP = 9,
	LFE_OP_DEL_REQ = 10,
	LFE_OP_DEL_RESP = 11,
	LFE_OP_MODDN_REQ = 12,
	LFE_OP_MODDN_RESP = 13,
	LFE_OP_COMPARE_REQ = 14,
	LFE_OP_COMPARE_RESP = 15,
	LFE_OP_ABANDON_REQ = 16,
	LFE_OP_SEARCH_REF = 19,
	LFE_OP_EXT_REQ = 23,
	LFE_OP_EXT_RESP = 24,
	LFE_OP_INTERMEDIATE = 25,
};

/* resultCode values used by ldapfe (RFC 4511 §4.1.9). */
enum lfe_ldap_rc {
	LFE_RC_SUCCESS = 0,
	LFE_RC_OPERATIONS_ERROR = 1,
	LFE_RC_PROTOCOL_ERROR = 2,
	LFE_RC_TIME_LIMIT_EXCEEDED = 3,
	LFE_RC_SIZE_LIMIT_EXCEEDED = 4,
	LFE_RC_AUTH_METHOD_NOT_SUPPORTED = 7,
	LFE_RC_ADMIN_LIMIT_EXCEEDED = 11,
	LFE_RC_UNAVAILABLE_CRITICAL_EXTENSION = 12,
	LFE_RC_CONFIDENTIALITY_REQUIRED = 13,
	LFE_RC_NO_SUCH_OBJECT = 32,
	LFE_RC_INVALID_DN_SYNTAX = 34,
	LFE_RC_INVALID_CREDENTIALS = 49,
	LFE_RC_INSUFFICIENT_ACCESS_RIGHTS = 50,
	LFE_RC_BUSY = 51,
	LFE_RC_UNAVAILABLE = 52,
	LFE_RC_UNWILLING_TO_PERFORM = 53,
	LFE_RC_OTHER = 80,
};

enum lfe_ldap_scope { LFE_SCOPE_BASE = 0, LFE_SCOPE_ONE = 1, LFE_SCOPE_SUB = 2 };

struct lfe_ldap_control {
	struct lfe_bytes oid;
	bool critical;
	bool has_value;
	struct lfe_bytes value;
};

enum lfe_bind_auth { LFE_AUTH_SIMPLE = 0, LFE_AUTH_SASL = 3 };

struct lfe_bind_req {
	int32_t version;             /* 1..127 as sent; only 3 is accepted later */
	struct lfe_bytes name;       /* LDAPDN as sent (not normalized) */
	enum lfe_bind_auth auth;
	struct lfe_bytes simple;     /* simple password (auth == SIMPLE) */
	struct lfe_bytes sasl_mech;  /* auth == SASL */
	bool has_sasl_creds;
	struct lfe_bytes sasl_creds;
};

struct lfe_search_req {
	struct lfe_bytes base;       /* LDAPDN as sent */
	enum lfe_ldap_scope scope;
	uint8_t deref;               /* 0..3 */
	int32_t size_limit;          /* >= 0 */
	int32_t time_limit;          /* >= 0 */
	bool types_only;
	struct lfe_bytes filter;     /* the whole Filter TLV, already validated
	                              * against RFC 4511 §4.5.1; see filter.h */
	uint32_t n_attrs;
	struct lfe_bytes attrs[LFE_LDAP_MAX_ATTRS];
};

struct lfe_ext_req {
	struct lfe_bytes oid;        /* requestName */
	bool has_value;
	struct lfe_bytes value;      /* requestValue */
};

/* Operations ldapfe only recognises in order to refuse them. */
struct lfe_write_req {
	struct lfe_bytes dn;         /* entry/object DN (empty if unavailable) */
};

struct lfe_ldap_msg {
	int32_t msgid;               /* 0..2^31-1 */
	enum lfe_ldap_op op;
	union {
		struct lfe_bind_req bind;
		struct lfe_search_req search;
		struct lfe_ext_req ext;
		int32_t abandon_id;      /* LFE_OP_ABANDON_REQ */
		struct lfe_write_req write; /* MODIFY/ADD/DEL/MODDN/COMPARE */
	} u;
	uint32_t n_controls;
	struct lfe_ldap_control controls[LFE_LDAP_MAX_CONTROLS];
};

/* Framing: look at the start of a byte stream.
 * On 0, *pdu_len is the total length of the first LDAPMessage (tag + length
 * + contents) and all of it is present in buf.
 * -EAGAIN: incomplete; *pdu_len is the total length if the header could be
 *          read already, else 0.
 * -EMSGSIZE: the declared total length exceeds max_pdu (refused before
 *          anything is buffered). -EBADMSG: not an LDAPMessage header
 *          (wrong tag, indefinite or over-long length). */
int lfe_ldap_frame(const uint8_t *buf, size_t len, size_t max_pdu, size_t *pdu_len);

/* A look at the first LDAPMessage of p[0..len) without decoding it: 0 when
 * it is whole within len and is a version-3 simple BindRequest with no
 * controls (the shape of nearly every bind), with *dn and *pw pointing at
 * its name and password octets in p; else -EINVAL. Only element headers
 * are looked at, more loosely than lfe_ber_hdr checks them (a length in
 * more octets than it needs passes) — lfe_ldap_decode stays the judge:
 * a caller may use the slices as a hint about what the decoder will hand
 * out (ldapfe prefetches the credential cache's buckets), never as the
 * request. Reads nothing outside p[0..len). */
int lfe_ldap_peek_bind(const uint8_t *p, size_t len, struct lfe_bytes *dn, struct lfe_bytes *pw);

/* Decode one complete LDAPMessage of exactly len bytes.
 * Returns 0, -EBADMSG or -E2BIG. On error, *m is unspecified except that
 * m->msgid is set to the message id if it could be read, else -1. */
int lfe_ldap_decode(const uint8_t *pdu, size_t len, struct lfe_ldap_msg *m);

/* Encoders. Each writes one complete LDAPMessage at out and returns its
 * length, or -ENOSPC when cap is too small. */

struct lfe_ldap_result {
	enum lfe_ldap_rc code;
	struct lfe_bytes matched_dn;  /* may be {NULL,0} */
	struct lfe_bytes diag;        /* diagnosticMessage, may be {NULL,0} */
};

/* Any response that is a plain LDAPResult: BindResponse (without
 * serverSaslCreds), SearchResultDone, Modify/Add/Del/ModDN/CompareResponse. */
ssize_t lfe_ldap_enc_result(uint8_t *out, size_t cap, int32_t msgid,
			    enum lfe_ldap_op resp_op, const struct lfe_ldap_result *r);

/* The same with response controls: ctrls holds ctrls_len bytes of whole
 * Control TLVs, sent as the message's controls [0] (ctrls_len 0: none,
 * as lfe_ldap_enc_result). BindResponse and SearchResultDone only. */
ssize_t lfe_ldap_enc_result_ctrls(uint8_t *out, size_t cap, int32_t msgid,
				  enum lfe_ldap_op resp_op, const struct lfe_ldap_result *r,
				  const uint8_t *ctrls, size_t ctrls_len);

/* ExtendedResponse. oid and value may be NULL (absent). */
ssize_t lfe_ldap_enc_ext_resp(uint8_t *out, size_t cap, int32_t msgid,
			      const struct lfe_ldap_result *r,
			      const struct lfe_bytes *oid, const struct lfe_bytes *value);

/* Notice of Disconnection (RFC 4511 §4.4.1): msgid 0, responseName
 * 1.3.6.1.4.1.1466.20036. */
ssize_t lfe_ldap_enc_notice_of_disconnection(uint8_t *out, size_t cap,
					     enum lfe_ldap_rc code, const char *diag);

struct lfe_ldap_attr {
	struct lfe_bytes type;
	uint32_t n_vals;             /* 0 is allowed (typesOnly) */
	const struct lfe_bytes *vals;
};

/* One directory entry as a source of attributes, walked in place (the
 * store's record, a table in memory): no array of attributes or values is
 * ever built, so an entry of any size can be selected, tested and encoded.
 * next_attr: *cursor starts at 0; 1 with the attribute's type, value count
 * and an opaque list to walk with next_val, 0 at the end, negative errno
 * for a corrupt source. next_val: 1 with the next value (advancing *list),
 * 0 at its end, negative errno. Slices die with the source. */
struct lfe_ldap_entry {
	struct lfe_bytes dn;
	const void *ctx;
	uint32_t n;                     /* the source's own (an array's length) */
	int (*next_attr)(const struct lfe_ldap_entry *e, size_t *cursor, struct lfe_bytes *type,
			 uint32_t *n_vals, struct lfe_bytes *list);
	int (*next_val)(const struct lfe_ldap_entry *e, struct lfe_bytes *list,
			struct lfe_bytes *val);
};

/* An entry over an array of attributes (ctx = attrs; the array and its
 * values must outlive e). */
void lfe_ldap_entry_of_attrs(struct lfe_ldap_entry *e, struct lfe_bytes dn,
			     const struct lfe_ldap_attr *attrs, uint32_t n_attrs);

/* Which attributes a SearchResultEntry carries: wants(ctx, type) true to
 * return it; types_only: without values. */
struct lfe_ldap_entry_sel {
	bool (*wants)(const void *ctx, struct lfe_bytes type);
	const void *ctx;
	bool types_only;
};

/* SearchResultEntry of e with the attributes sel selects, written in one
 * forward pass into out: the bytes [skip, skip + cap) of the message (so a
 * message larger than one buffer can be written in parts), of *total bytes
 * in all. Returns the bytes written (min(cap, total - skip)), -EBADMSG for
 * a corrupt source, -EMSGSIZE past LFE_BER_MAX_LEN, -EINVAL. cap 0: only
 * *total. Selection happens before anything is counted. sum (may be NULL;
 * cap > 0): a 64-bit FNV-1a of the whole message, whatever the window, so
 * the parts of one message written in several calls can be proved to come
 * from the same entry. */
ssize_t lfe_ldap_enc_entry(uint8_t *out, size_t cap, uint64_t skip, int32_t msgid,
			   const struct lfe_ldap_entry *e, const struct lfe_ldap_entry_sel *sel,
			   uint64_t *total, uint64_t *sum);

/* SearchResultEntry. */
ssize_t lfe_ldap_enc_search_entry(uint8_t *out, size_t cap, int32_t msgid,
				  struct lfe_bytes dn,
				  const struct lfe_ldap_attr *attrs, uint32_t n_attrs);

#endif
