/* backend/pwscheme.h — userPassword schemes as OpenLDAP and 389-ds store them.
 *
 * Values keep their "{SCHEME}" prefix. Verification is constant-time in the
 * comparison of the derived hash, and wipes the derived secret afterwards.
 * Thread rules: every function is reentrant (crypt_rn, per-call contexts);
 * nothing here keeps state between calls.
 */
#ifndef LFE_BACKEND_PWSCHEME_H
#define LFE_BACKEND_PWSCHEME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* fast: cheap enough to verify inline on a poll-mode core (well under a
 * microsecond). slow: deliberately expensive (crypt, PBKDF2, Argon2) and
 * must be handed to a verifier thread. */
enum lfe_pw_class { LFE_PW_FAST = 0, LFE_PW_SLOW = 1 };

enum {
	LFE_PW_ALLOW_CLEARTEXT = 1u << 0, /* {CLEARTEXT} and unprefixed values */
};

/* Verify password pw against the stored userPassword value.
 * Returns 0 on match, -EACCES on mismatch, -EINVAL if the stored value is
 * malformed, -ENOTSUP for an unknown or disallowed scheme. */
int lfe_pw_verify(const char *stored, size_t stored_len,
		  const uint8_t *pw, size_t pw_len, unsigned flags);

/* Class of the stored value's scheme (unknown schemes count as fast: they
 * fail at once). */
enum lfe_pw_class lfe_pw_class_of(const char *stored, size_t stored_len);

/* Spend the same work as verifying a password against a value of `scheme`
 * (e.g. "{SSHA512}") and fail: used for unknown DNs. Always returns -EACCES. */
int lfe_pw_dummy_verify(const char *scheme, const uint8_t *pw, size_t pw_len);

/* Hash pw with scheme (e.g. "{SSHA512}", "{CRYPT}" (means $6$), "{ARGON2}",
 * "{PBKDF2-SHA512}") and a fresh random salt. Writes a NUL-terminated
 * userPassword value; returns its length, -ENOSPC, -ENOTSUP or -EIO. */
ssize_t lfe_pw_hash(const char *scheme, const uint8_t *pw, size_t pw_len,
		    char *out, size_t cap);

/* Scheme name of a stored value including braces ("{SSHA}"), for display.
 * Returns length written (NUL-terminated) or -ENOSPC; unprefixed values
 * give "{CLEARTEXT}". */
ssize_t lfe_pw_scheme_name(const char *stored, size_t stored_len, char *out, size_t cap);

/* Constant-time equality of two equal-length byte strings. */
bool lfe_ct_equal(const void *a, const void *b, size_t len);

#endif
