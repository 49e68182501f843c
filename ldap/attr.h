/* ldap/attr.h — attribute descriptions (RFC 4512 §2.5): the one place that
 * decides whether two attribute types are the same.
 *
 * An attribute description is a type (a descr such as "uid", an alias such
 * as "userid", or a numericoid such as "0.9.2342.19200300.100.1.1") followed
 * by zero or more options (";lang-en", ";x-legacy"). Names compare ASCII
 * case-insensitively; the known aliases and OIDs (the table in dn.c) name
 * the same type as their short name; options compare case-insensitively
 * and in any order (they form a set).
 *
 * Every module that compares attribute types (the session, the filter
 * evaluator, the store and its records, the LDIF reader, ldapfectl) does it
 * through these functions. libc only; nothing allocates; all functions are
 * pure and thread-safe. Inputs are (pointer, length), not NUL-terminated; a
 * NULL pointer or zero length names no attribute (never equal, not secret).
 */
#ifndef LFE_LDAP_ATTR_H
#define LFE_LDAP_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Longest attribute description the session and the policy keep. */
#define LFE_ATTR_NAME_MAX 64u

/* Length of the type part of a description: the bytes before the first ';'. */
size_t lfe_attr_base_len(const uint8_t *t, size_t len);

/* Same type, both without options (the core of the functions below; it
 * lives in dn.c beside the table). */
bool lfe_attr_type_same(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* One description resolved once (its spellings looked up in the table),
 * then compared against many: what a scan over an entry's attributes uses
 * (the bind path looks for userPassword among every stored type). The key
 * points into t and the static table; it lives as long as t. */
struct lfe_attr_key {
	const uint8_t *type, *opts;     /* type part; ";opt;..." part (may be empty) */
	size_t type_len, opts_len;
	const char *name, *alias, *oid; /* known spellings; NULL when unknown */
	uint8_t name_len, alias_len, oid_len;
};
void lfe_attr_key_init(struct lfe_attr_key *k, const uint8_t *t, size_t len);
/* Is t (a type without options) the key's type? */
bool lfe_attr_key_type_is(const struct lfe_attr_key *k, const uint8_t *t, size_t len);
/* lfe_attr_type_eq(key's description, t). */
bool lfe_attr_key_eq(const struct lfe_attr_key *k, const uint8_t *t, size_t len);

/* Same type, options ignored: "userid;x-a" and "UID" are the same type. */
bool lfe_attr_base_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* Same attribute description: same type and the same set of options
 * ("cn;lang-en;x-b" equals "CN;X-B;Lang-EN"; "cn" differs from "cn;lang-en").
 * This is the equality of stored attributes (one attribute per description). */
bool lfe_attr_type_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* have is want or a subtype of it (RFC 4512 §2.5.2): same type and have's
 * options include all of want's. "cn" matches "cn;lang-en"; not conversely. */
bool lfe_attr_desc_matches(const uint8_t *want, size_t wlen, const uint8_t *have, size_t hlen);

/* A secret attribute, with any option and in any spelling: userPassword
 * (2.5.4.35) or authPassword (1.3.6.1.4.1.4203.1.3.4). Never returned by a
 * search, and every filter item on it is Undefined. */
bool lfe_attr_is_secret(const uint8_t *t, size_t len);

/* Is `type` (any case, options ignored) an attribute whose values compare
 * case-insensitively? Accepts names, aliases and the known OIDs. */
bool lfe_attr_is_case_ignore(const uint8_t *type, size_t len);

/* The EQUALITY matching rule of an attribute type (any case, options
 * ignored), which the filter evaluator and the store's indexes both use:
 * integerMatch for uidNumber/gidNumber (canonical integers compare as
 * bytes, so equality is exact), DN normalisation (dn.h) for member,
 * uniqueMember and memberOf, caseIgnore for the types flagged so, exact
 * (caseExactIA5Match: memberUid) for the rest and for unknown types. */
enum lfe_match_rule {
	LFE_MR_CASE_EXACT = 0,
	LFE_MR_CASE_IGNORE,
	LFE_MR_INTEGER,
	LFE_MR_DN,
};
enum lfe_match_rule lfe_attr_rule(const uint8_t *type, size_t len);

/* Canonical lower-case name of an attribute type given by name, alias or
 * known OID ("0.9.2342.19200300.100.1.1" -> "uid"); writes NUL-terminated,
 * returns the length, -EINVAL (not a descr or numericoid: options are
 * refused here) or -ENOSPC. Unknown names and OIDs are kept, lower-cased. */
ssize_t lfe_attr_canon(const uint8_t *type, size_t len, char *out, size_t cap);

#endif
