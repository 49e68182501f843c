/* gen/pdu.h — pre-encoded simple-bind requests for ldapfe-gen.
 *
 * The generator binds as user number u of a population whose DN and
 * password come from printf-like formats with exactly one unsigned
 * conversion (opts.h: lfe_gen_fmt_check). Formatting and BER-encoding each
 * request costs more than the rest of the client side; instead, at start,
 * one template per (DN digit count, password digit count, wrong password)
 * is encoded with ldap/client.c's own encoder, and a request is then a
 * header (SEQUENCE, message id), a memcpy of the template's BindRequest and
 * the user's digits written in place. The bytes are those that
 * lfe_ldap_enc_bind_req would produce for the formatted strings (the unit
 * test compares them).
 *
 * Pure C, no DPDK, no allocation after lfe_gen_bindtab_new. A table is
 * read-only once built: any number of lcores may use one table.
 */
#ifndef LFE_GEN_PDU_H
#define LFE_GEN_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Largest request a template may hold (formats are < 256 bytes each). */
#define LFE_GEN_PDU_MAX 640u

/* A checked format split around its conversion: pre, the number right-
 * aligned in at least `width` characters padded with `pad`, post. */
struct lfe_gen_fmt {
	char pre[256], post[256];   /* "%%" already unescaped */
	size_t pre_len, post_len;
	unsigned width;
	char pad;                   /* '0' or ' ' */
};

/* Split fmt (which must pass lfe_gen_fmt_check). 0 or -EINVAL. */
int lfe_gen_fmt_parse(const char *fmt, struct lfe_gen_fmt *f);

/* Write f applied to v into out (no NUL); returns the length, or -ENOSPC
 * when it would not fit in cap. Equal to snprintf(fmt, v)'s output. */
ssize_t lfe_gen_fmt_render(const struct lfe_gen_fmt *f, uint32_t v, char *out, size_t cap);

struct lfe_gen_bindtab;

/* Build the templates for user_fmt/pw_fmt (each checked by
 * lfe_gen_fmt_check). NULL with *err = -EINVAL or -ENOMEM. */
struct lfe_gen_bindtab *lfe_gen_bindtab_new(const char *user_fmt, const char *pw_fmt, int *err);
void lfe_gen_bindtab_free(struct lfe_gen_bindtab *t);   /* NULL is a no-op */

/* The bind request with message id msgid (1..2^31-1) for DN number dn_u and
 * password number pw_u, the password followed by "!" when wrong. Returns
 * its length, or -ENOSPC when it does not fit in cap or in
 * LFE_GEN_PDU_MAX, -EINVAL for a bad msgid. O(1): no formatting, no BER
 * encoding beyond the message header. */
ssize_t lfe_gen_bind_pdu(const struct lfe_gen_bindtab *t, uint8_t *out, size_t cap, int32_t msgid,
			 uint32_t dn_u, uint32_t pw_u, bool wrong);

/* The UnbindRequest with message id msgid (1..2^31-1), the bytes
 * lfe_ldap_enc_unbind_req writes (the unit test compares them): its
 * length, -ENOSPC when it does not fit in cap, -EINVAL for a bad msgid. */
ssize_t lfe_gen_unbind_pdu(uint8_t *out, size_t cap, int32_t msgid);

/* The bytes of a positive message id's minimal BER INTEGER content: 1..4. */
static inline size_t lfe_gen_id_len(uint32_t id)
{
	return id < 0x80u ? 1u : id < 0x8000u ? 2u : id < 0x800000u ? 3u : 4u;
}

/* The expected answer, byte for byte: a BindResponse to msgid with
 * resultCode code (0..127), empty matchedDN and diagnosticMessage, no
 * controls, in minimal BER (what ldapfe sends):
 *   30 L 02 n <msgid, n bytes> 61 07 0a 01 <code> 04 00 04 00
 * Returns its length when (p, len) starts with exactly those bytes, else 0.
 * A match is what lfe_ldap_decode_resp would decode as msgid, BindResponse,
 * code, not a Notice of Disconnection; anything else (another code, a
 * diagnostic, another message, a partial PDU) is 0 and must be framed and
 * decoded in full. O(1), no decoding, inline: the generator checks each
 * answer this way first (the unit test holds it to the decoder). */
static inline size_t lfe_gen_bind_resp_match(const uint8_t *p, size_t len, int32_t msgid, int32_t code)
{
	if (msgid < 1 || code < 0 || code > 0x7f)
		return 0;
	uint32_t id = (uint32_t)msgid, got = 0;
	size_t il = lfe_gen_id_len(id);
	size_t total = 4u + il + 9u;
	if (len < total || p[0] != 0x30 || p[1] != total - 2u || p[2] != 0x02 || p[3] != il)
		return 0;
	for (size_t i = 0; i < il; i++)
		got = got << 8 | p[4 + i];
	const uint8_t *q = p + 4 + il;
	/* Constant-size compares: each one load and compare, no call. */
	return got == id && __builtin_memcmp(q, "\x61\x07\x0a\x01", 4) == 0 && q[4] == (uint8_t)code &&
	       __builtin_memcmp(q + 5, "\x04\x00\x04\x00", 4) == 0 ? total : 0;
}

#endif
