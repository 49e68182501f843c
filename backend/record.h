/* backend/record.h — the versioned entry record stored under "entries".
 *
 * Format version 1, byte by byte. Multi-byte integers are fixed-width
 * little-endian: decoding is one unaligned load per field (memcpy), no
 * varint loops, and an attribute can be skipped in O(1) through vals_len.
 *
 *   off  size      field
 *   0    1         version, = LFE_RECORD_VERSION (1)
 *   1    1         flags, must be 0 (reserved for later versions)
 *   2    2         dn_len: length of the original DN (as imported)
 *   4    2         n_attrs: number of attributes, 0..65535
 *   6    dn_len    original DN bytes (not NUL-terminated)
 *   then n_attrs attributes, each:
 *        1         type_len, 1..255
 *        type_len  attribute type as imported (known OIDs become names)
 *        4         n_vals: number of values
 *        4         vals_len: bytes of the value list that follows
 *        vals_len  n_vals × { 4-byte value length, value bytes }
 *   The record ends exactly after the last attribute; any byte left over,
 *   any length that runs past the end, a vals_len that does not equal the
 *   sum of its values, a zero type_len, a non-zero flags byte or another
 *   version is corruption (-EBADMSG).
 *
 * Records keep every attribute of the imported entry, including objectClass
 * and userPassword (in its {SCHEME} form). Values are opaque bytes.
 *
 * Nothing here allocates; decoders return slices into the record.
 * Every function is reentrant.
 */
#ifndef LFE_BACKEND_RECORD_H
#define LFE_BACKEND_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ldap/msg.h"      /* struct lfe_bytes, struct lfe_ldap_attr */

#define LFE_RECORD_VERSION   1u
#define LFE_RECORD_HDR_LEN   6u
#define LFE_RECORD_MAX_DN    65535u
#define LFE_RECORD_MAX_ATTRS 65535u
#define LFE_RECORD_MAX_TYPE  255u
/* Records live in one LMDB value; stay well below what a 32-bit length
 * field and a sane map can hold. */
#define LFE_RECORD_MAX_LEN   (64u << 20)

/* Exact encoded size of an entry, or -EINVAL (empty or over-long type, DN
 * too long) / -E2BIG (too many attributes, record over LFE_RECORD_MAX_LEN). */
ssize_t lfe_record_size(struct lfe_bytes dn, const struct lfe_ldap_attr *attrs,
			uint32_t n_attrs);

/* Encode into out, which must hold lfe_record_size() bytes (cap is checked:
 * -ENOSPC). Returns the length written or the errors of lfe_record_size. */
ssize_t lfe_record_write(uint8_t *out, size_t cap, struct lfe_bytes dn,
			 const struct lfe_ldap_attr *attrs, uint32_t n_attrs);

/* Check the header only: fills the original DN, the attribute count and the
 * offset of the first attribute. 0 or -EBADMSG. */
int lfe_record_header(const uint8_t *rec, size_t len, struct lfe_bytes *dn,
		      uint32_t *n_attrs, size_t *body_off);

/* Walk the whole record and check every length. 0 or -EBADMSG. */
int lfe_record_validate(const uint8_t *rec, size_t len);

/* Step over one attribute starting at *off (initially body_off). Returns 1
 * with the type, the value count and the packed value list, 0 when *off is
 * at the end of the record, -EBADMSG on a length that does not fit. The
 * packed list is walked with lfe_record_next_val. */
int lfe_record_next_attr(const uint8_t *rec, size_t len, size_t *off,
			 struct lfe_bytes *type, uint32_t *n_vals,
			 struct lfe_bytes *vals);

/* Find the first attribute whose type equals `type` (ASCII
 * case-insensitive) by hopping over the others by their lengths, each hop
 * bounds-checked (the bind path's userPassword lookup: no full validation).
 * 1 with its value count and packed value list, 0 when absent, -EBADMSG. */
int lfe_record_find_attr(const uint8_t *rec, size_t len, const char *type, size_t type_len,
			 uint32_t *n_vals, struct lfe_bytes *vals);

/* Take the next value off a packed value list (list shrinks). 1, 0 when the
 * list is empty, -EBADMSG. */
int lfe_record_next_val(struct lfe_bytes *list, struct lfe_bytes *val);

/* Size of rec (a valid record) with, for each of the n attributes of
 * repl, every attribute whose type equals its type (ASCII
 * case-insensitive) replaced by it: LDAP's modify/replace. One with no
 * values removes the type (and adds nothing). Two replacements of one
 * type: -EINVAL. Else -EBADMSG, -EINVAL, -E2BIG. */
ssize_t lfe_record_replace_size(const uint8_t *rec, size_t len,
				const struct lfe_ldap_attr *repl, size_t n);
/* Write that record into out (cap >= lfe_record_replace_size()). The
 * replacement attributes go last, in repl's order. rec and out must not
 * overlap. */
ssize_t lfe_record_replace_write(const uint8_t *rec, size_t len,
				 const struct lfe_ldap_attr *repl, size_t n,
				 uint8_t *out, size_t cap);

#endif
