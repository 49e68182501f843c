/* backend/acctlock.h — is an account locked or expired by the directory of
 * record?
 *
 * The bind path asks this after the password check, so a locked account
 * costs what a wrong password costs and answers the same (-EACCES, 49).
 * The attributes come from the provider through `ldapfectl sync` (or an
 * import of a slapcat LDIF, which keeps operational attributes):
 *
 *   pwdAccountLockedTime  OpenLDAP ppolicy. "000001010000Z": locked until an
 *                         administrator unlocks. Any other time T follows
 *                         ppolicy's account_locked(): locked when the
 *                         lockout duration D is 0 (the ppolicy default: only
 *                         an administrator unlocks), or while now < T + D —
 *                         so a T in the future is locked too. The store does
 *                         not know the provider's D and passes 0: locked
 *                         while the attribute is present (the provider
 *                         removes it on unlock; with D > 0 it removes it at
 *                         the next successful bind on the provider).
 *   nsAccountLock         389-ds: "true" (any case) is locked, "false" is
 *                         not; any other value (not a boolean) locks.
 *   pwdEndTime            ppolicy (draft-behera): no bind at or after T.
 *   shadowExpire          RFC 2307, days since 1970-01-01: expired once
 *                         today >= shadowExpire, -1 never (pam_unix's rule).
 *
 * A value that does not parse locks the account (fail closed). A record
 * without any of these attributes costs one hop per attribute type and one
 * byte compare each: no allocation, no time parsing.
 *
 * Pure and reentrant: no globals, nothing allocated, rec is only read.
 */
#ifndef LFE_BACKEND_ACCTLOCK_H
#define LFE_BACKEND_ACCTLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* true when the account of the entry record rec (record.h) is locked or
 * expired at `now` (seconds since the epoch, UTC); lockout_s is ppolicy's
 * pwdLockoutDuration (0: until an administrator unlocks). A corrupt record
 * counts as locked. */
bool lfe_acct_locked(const uint8_t *rec, size_t len, int64_t now, int64_t lockout_s);

/* true when an attribute of this type (ASCII case-insensitive) can lock
 * the account in lfe_acct_locked: a record that keeps these attributes and
 * userPassword answers every bind question the full record does (the
 * store's bind index, store_bind.c). */
bool lfe_acct_attr_type(const uint8_t *type, size_t len);

/* Parse an LDAP GeneralizedTime ("YYYYMMDDHH[MM[SS]][.frac](Z|±HH[MM])")
 * into seconds since the epoch. 0 or -EINVAL. Exposed for the tests. */
int lfe_gentime_parse(const uint8_t *s, size_t len, int64_t *out);

#endif
