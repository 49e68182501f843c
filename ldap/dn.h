/* ldap/dn.h — Distinguished Names (RFC 4514): parsing and normalization.
 *
 * The normalized form is one canonical byte string, so two DNs name the same
 * entry exactly when their normalized forms are equal byte for byte (memcmp).
 * It follows libldap's ldap_dn_normalize(LDAP_DN_FORMAT_LDAPV3) output
 * closely; deliberate differences are documented in dn.c.
 *   - attribute types are case-folded to lower case; OID forms of known types
 *     (e.g. 0.9.2342.19200300.100.1.1) become their names (uid);
 *   - values of the case-ignore attributes (uid, cn, ou, dc, o, c, l, st,
 *     mail, sn, givenName) are lower-cased; insignificant spaces removed;
 *   - escapes and hex pairs are decoded and re-escaped in one canonical way;
 *   - the AVAs of a multi-valued RDN are sorted.
 * libc only; nothing allocates.
 */
#ifndef LFE_LDAP_DN_H
#define LFE_LDAP_DN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ldap/attr.h"

#define LFE_DN_MAX      1024u  /* longest normalized DN we keep */
#define LFE_DN_MAX_RDNS 64u
#define LFE_DN_MAX_AVAS 16u    /* AVAs in one multi-valued RDN */

/* Normalize dn (len bytes, not NUL-terminated). Writes the normalized form
 * to out followed by a NUL, and returns its length (without the NUL).
 * The empty DN normalizes to the empty string (returns 0).
 * -EINVAL: not a valid DN; -ENOSPC: out too small. */
ssize_t lfe_dn_normalize(const uint8_t *dn, size_t len, char *out, size_t cap);

/* Both arguments normalized. True when ndn equals suffix or lies below it. */
bool lfe_dn_is_under(const char *ndn, size_t ndn_len,
		     const char *suffix, size_t suffix_len);

/* Parent of a normalized DN: what follows its first RDN separator (an
 * unescaped ','); the empty DN for a one-RDN or empty DN. *parent points
 * into ndn. Returns the parent's length. */
size_t lfe_dn_parent(const char *ndn, size_t ndn_len, const char **parent);

/* lfe_attr_canon() and lfe_attr_is_case_ignore() are declared in attr.h
 * (they live in dn.c, next to the table of known types). */

#endif
