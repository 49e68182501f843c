/* tests/fuzz/fuzz_dn.c — lfe_dn_normalize on arbitrary bytes.
 *
 * Checks what a store key needs: the normalized form is NUL-terminated, never
 * longer than LFE_DN_MAX, a fixed point (normalizing it again gives the same
 * bytes), every prefix of a buffer is refused or fits, and is_under agrees
 * with the DN itself and with its parent.
 */
#include "ldap/dn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* dn.c's full parser and the fast paths lfe_dn_normalize tries first
 * (-EAGAIN: left to the next): they must agree with it. */
ssize_t lfe_dn_normalize_full(const uint8_t *dn, size_t len, char *out, size_t cap);
ssize_t lfe_dn_normalize_vec(const uint8_t *dn, size_t len, char *out, size_t cap);
ssize_t lfe_dn_normalize_plain(const uint8_t *dn, size_t len, char *out, size_t cap);

/* A fast path with room cap: the full parser's answer or -EAGAIN, and
 * nothing written at or past out[cap]. */
static void check_path(ssize_t (*fn)(const uint8_t *, size_t, char *, size_t),
		       const uint8_t *data, size_t size, size_t cap)
{
	char got[LFE_DN_MAX + 1 + 16], full[LFE_DN_MAX + 1];
	memset(got, 0x5a, sizeof got);
	ssize_t n = fn(data, size, got, cap);
	for (size_t i = cap; i < sizeof got; i++)
		if (got[i] != 0x5a)
			abort();
	if (n == -EAGAIN)
		return;
	ssize_t nf = lfe_dn_normalize_full(data, size, full, cap);
	if (n != nf || (n >= 0 && memcmp(got, full, (size_t)n + 1) != 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[LFE_DN_MAX + 1], again[LFE_DN_MAX + 1];
	ssize_t n = lfe_dn_normalize(data, size, out, sizeof out);
	ssize_t nf = lfe_dn_normalize_full(data, size, again, sizeof again);
	if (nf != n || (n >= 0 && memcmp(out, again, (size_t)n + 1) != 0))
		abort();
	for (int p = 0; p < 2; p++) {
		ssize_t (*fn)(const uint8_t *, size_t, char *, size_t) =
			p ? lfe_dn_normalize_plain : lfe_dn_normalize_vec;
		check_path(fn, data, size, sizeof out);
		if (n >= 0) {
			check_path(fn, data, size, (size_t)n + 1);
			check_path(fn, data, size, (size_t)n);
		}
	}
	if (n < 0) {
		if (n != -EINVAL)
			abort(); /* a buffer of LFE_DN_MAX + 1 never gets -ENOSPC */
		return 0;
	}
	if ((size_t)n > LFE_DN_MAX || out[n] != '\0' || memchr(out, '\0', (size_t)n))
		abort();

	ssize_t m = lfe_dn_normalize((const uint8_t *)out, (size_t)n, again, sizeof again);
	if (m != n || memcmp(out, again, (size_t)n) != 0)
		abort();

	/* Exactly n + 1 bytes suffice; n do not. */
	if (lfe_dn_normalize(data, size, again, (size_t)n + 1) != n ||
	    lfe_dn_normalize(data, size, again, (size_t)n) != -ENOSPC)
		abort();

	if (!lfe_dn_is_under(out, (size_t)n, out, (size_t)n) ||
	    !lfe_dn_is_under(out, (size_t)n, "", 0))
		abort();
	/* The part after the first RDN separator is the parent: a valid DN that
	 * the child lies under (a raw ',' in normalized output only separates). */
	const char *comma = memchr(out, ',', (size_t)n);
	if (comma) {
		size_t plen = (size_t)n - (size_t)(comma + 1 - out);
		ssize_t p = lfe_dn_normalize((const uint8_t *)comma + 1, plen, again, sizeof again);
		if (p != (ssize_t)plen || memcmp(again, comma + 1, plen) != 0)
			abort();
		if (!lfe_dn_is_under(out, (size_t)n, comma + 1, plen) ||
		    lfe_dn_is_under(comma + 1, plen, out, (size_t)n))
			abort();
	}
	return 0;
}
