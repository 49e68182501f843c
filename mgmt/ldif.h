/* mgmt/ldif.h — strict LDIF (RFC 2849) content records: reader and writer.
 *
 * The reader works on the whole input held in memory (pointer, length) and
 * hands out one content record at a time. It accepts what slapcat and
 * 389-ds db2ldif write: an optional "version: 1", comments (and their
 * continuation lines), folded lines, "::" base64 values, CRLF or LF line
 * ends, raw UTF-8 in plain values. It refuses, with the line number and a
 * reason: ":<" URL values (they would make an import read arbitrary files),
 * change records (changetype:/control: right after dn:), bad base64, NUL or
 * stray CR bytes, a record that does not start with dn:, over-long lines and
 * records with too many values.
 *
 * Errors: 0 / 1 or a negative errno: -EBADMSG malformed input, -ENOTSUP a
 * valid LDIF feature we refuse, -E2BIG a limit exceeded, -ENOMEM. On error
 * the lfe_ldif_err names the line and the reason.
 *
 * Nothing here is shared between threads; a reader and an entry belong to
 * their caller.
 */
#ifndef LFE_MGMT_LDIF_H
#define LFE_MGMT_LDIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ldap/msg.h"   /* struct lfe_bytes */

#define LFE_LDIF_MAX_LINE   (16u << 20)  /* longest unfolded line (bytes) */
#define LFE_LDIF_MAX_VALUES 1000000u     /* attribute values in one record */
#define LFE_LDIF_FOLD       76u          /* columns the writer folds at */

struct lfe_ldif_err {
	unsigned line;          /* 1-based line the error is about */
	char msg[256];
};

/* One attribute value of a record, in file order. */
struct lfe_ldif_av {
	struct lfe_bytes type;  /* attribute description as written (with options) */
	struct lfe_bytes val;   /* decoded value */
	unsigned line;          /* line where the value starts */
	size_t t_off, t_len, v_off, v_len;   /* private: offsets into buf */
};

/* A content record. Slices point into buf and stay valid until the next
 * lfe_ldif_next() on this entry or lfe_ldif_entry_free(). */
struct lfe_ldif_entry {
	struct lfe_bytes dn;    /* decoded DN, as written */
	unsigned line;          /* line of the dn: */
	uint32_t n;
	struct lfe_ldif_av *av;
	/* private */
	uint8_t *buf;
	size_t buf_len, buf_cap;
	uint32_t av_cap;
	size_t dn_off;
};

struct lfe_ldif_reader {
	const uint8_t *p;
	size_t len, off;
	unsigned line;          /* physical lines consumed */
	bool started;           /* past the optional version: line */
	uint8_t *scratch;       /* one unfolded logical line */
	size_t scratch_cap;
};

/* The reader keeps pointers into p; p must outlive it. */
void lfe_ldif_reader_init(struct lfe_ldif_reader *r, const uint8_t *p, size_t len);
void lfe_ldif_reader_free(struct lfe_ldif_reader *r);   /* frees scratch only */

/* Read the next content record into e (zero-initialise e before the first
 * call). Returns 1 with a record, 0 at the end of input, or a negative
 * errno with err filled. */
int lfe_ldif_next(struct lfe_ldif_reader *r, struct lfe_ldif_entry *e,
		  struct lfe_ldif_err *err);
void lfe_ldif_entry_free(struct lfe_ldif_entry *e);   /* NULL is a no-op */

/* RFC 2849 §4: does this value have to be written base64 ("::")? True when
 * it starts with SPACE, ':' or '<', ends with SPACE, or holds a byte that
 * is not a SAFE-CHAR (NUL, CR, LF, anything above 0x7f). */
bool lfe_ldif_needs_b64(const uint8_t *v, size_t len);

/* Write "type: value" (or "type:: base64" when needed or forced), folded at
 * LFE_LDIF_FOLD columns. Returns 0 or -EIO. */
int lfe_ldif_put(FILE *f, const char *type, const uint8_t *v, size_t len, bool force_b64);

/* Strict base64 (RFC 4648, with padding, no whitespace, zero pad bits).
 * Decodes into out (cap >= len / 4 * 3); returns the length or -EBADMSG. */
ssize_t lfe_b64_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap);

#endif
