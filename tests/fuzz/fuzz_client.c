/* tests/fuzz/fuzz_client.c — ldap/client.c: the response decoder on
 * arbitrary bytes (slices must lie inside the input; framing and decoding
 * must agree), and the bind encoder on arbitrary DN/password halves, whose
 * output the server's own decoder must read back unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/client.h"
#include "ldap/msg.h"

static void in_buf(struct lfe_bytes b, const uint8_t *p, size_t n)
{
	if (b.len && (b.p < p || b.p + b.len > p + n))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lfe_ldap_resp r;
	size_t pl;

	if (lfe_ldap_decode_resp(data, size, &r) == 0) {
		in_buf(r.matched_dn, data, size);
		in_buf(r.diag, data, size);
		in_buf(r.sasl_creds, data, size);
		in_buf(r.oid, data, size);
		in_buf(r.value, data, size);
		if (r.msgid < 0 || r.n_controls > LFE_LDAP_MAX_CONTROLS)
			abort();
		/* A message that decodes is exactly one framed PDU. */
		if (lfe_ldap_frame(data, size, 1u << 24, &pl) != 0 || pl != size)
			abort();
	}

	/* Encoder round trip: first byte picks the split and the msgid. */
	if (size >= 1) {
		static uint8_t out[70000];
		struct lfe_ldap_msg m;
		size_t split = size > 1 ? data[0] % size : 0;
		int32_t id = 1 + (int32_t)(data[0] * 977u);
		ssize_t n = lfe_ldap_enc_bind_req(out, sizeof(out), id, data + 1, split ? split - 1 : 0,
						  data + split, size - split);
		if (n < 0)
			abort();
		if (lfe_ldap_decode(out, (size_t)n, &m) != 0 || m.msgid != id || m.op != LFE_OP_BIND_REQ ||
		    m.u.bind.simple.len != size - split || m.u.bind.name.len != (split ? split - 1 : 0) ||
		    memcmp(m.u.bind.simple.p, data + split, size - split) != 0)
			abort();
	}
	return 0;
}
