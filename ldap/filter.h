/* ldap/filter.h — LDAP search filters (RFC 4511 §4.5.1), kept as BER.
 *
 * A decoded SearchRequest carries its Filter as the raw, validated TLV
 * (struct lfe_search_req.filter). These functions walk that TLV directly:
 * no tree is built, nothing is allocated. Nesting depth is bounded by
 * LFE_LDAP_MAX_FILTER_DEPTH and the number of nodes by
 * LFE_LDAP_MAX_FILTER_NODES.
 */
#ifndef LFE_LDAP_FILTER_H
#define LFE_LDAP_FILTER_H

#include "msg.h"

/* Check a complete Filter TLV of exactly len bytes against the full grammar
 * (and, or, not, equalityMatch, substrings, greaterOrEqual, lessOrEqual,
 * present, approxMatch, extensibleMatch). 0, -EBADMSG or -E2BIG. */
int lfe_filter_validate(const uint8_t *f, size_t len);

/* Values of one attribute of the candidate entry. Write up to cap values to
 * vals and return how many the entry has (may exceed cap; the caller then
 * sees only the first cap). Return 0 when the entry lacks the attribute.
 * type is compared case-insensitively by the provider. */
typedef uint32_t (*lfe_filter_attr_fn)(void *ctx, struct lfe_bytes type,
				       struct lfe_bytes *vals, uint32_t cap);

enum lfe_filter_result { LFE_FILTER_FALSE = 0, LFE_FILTER_TRUE = 1, LFE_FILTER_UNDEFINED = 2 };

/* Evaluate a validated filter against one entry (three-valued logic of
 * RFC 4511 §4.5.1.7). Matching is case-insensitive for the case-ignore
 * attributes listed in dn.h and exact otherwise. Returns an
 * enum lfe_filter_result, or a negative errno if f is malformed. */
int lfe_filter_eval(const uint8_t *f, size_t len, lfe_filter_attr_fn get, void *ctx);

/* RFC 4515 string form, NUL-terminated. Returns the string length or
 * -ENOSPC / -EBADMSG. Used by tests, logs and ldapfectl. */
ssize_t lfe_filter_to_string(const uint8_t *f, size_t len, char *out, size_t cap);

/* Index helper: if f is an equalityMatch on attribute `attr`
 * (case-insensitive), or an AND that contains one at its top level, return 1
 * and the asserted value; else 0. Negative errno if f is malformed. */
int lfe_filter_find_eq(const uint8_t *f, size_t len, const char *attr,
		       struct lfe_bytes *value);

#endif
