/* tests/gen/test_gen_unit.c — ldap/client.c (request encoders checked byte
 * for byte and through the server's own decoder; response decoder against
 * the server's encoders and hand-made vectors, malformed ones included),
 * gen/hist.c (bucket bounds, quantiles), gen/opts.c (every option's
 * acceptance and refusal), gen/pdu.c (pre-encoded binds byte for byte
 * against the encoder), gen/dist.c (the Zipf sampler's shape) and
 * gen/tuples.c (source tuples spread evenly over the addresses), gen/rxcsum.c
 * (which received frames are checksummed: bad ones found, patterns caught). Table-driven; exits non-zero on any failure. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/dist.h"
#include "gen/hist.h"
#include "gen/opts.h"
#include "gen/pdu.h"
#include "gen/rxcsum.h"
#include "gen/tuples.h"
#include "ldap/client.h"
#include "ldap/msg.h"
#include "tests/check.h"

static bool bytes_eq(struct lfe_bytes b, const char *s)
{
	return b.len == strlen(s) && memcmp(b.p, s, b.len) == 0;
}

/* ---- requests ---- */

struct bind_vec {
	int32_t msgid;
	const char *dn, *pw;
	size_t n;
	uint8_t want[24];
};

static void test_bind_vectors(void)
{
	static const struct bind_vec v[] = {
		/* what ldapwhoami -x -D cn=a -w b sends */
		{ 1, "cn=a", "b", 19,
		  { 0x30, 0x11, 0x02, 0x01, 0x01, 0x60, 0x0c, 0x02, 0x01, 0x03, 0x04, 0x04, 'c', 'n',
		    '=', 'a', 0x80, 0x01, 'b' } },
		/* msgid 128 needs a leading zero octet; empty DN and password */
		{ 128, "", "", 15,
		  { 0x30, 0x0d, 0x02, 0x02, 0x00, 0x80, 0x60, 0x07, 0x02, 0x01, 0x03, 0x04, 0x00, 0x80,
		    0x00 } },
		/* msgid 300 */
		{ 300, "x", "y", 17,
		  { 0x30, 0x0f, 0x02, 0x02, 0x01, 0x2c, 0x60, 0x09, 0x02, 0x01, 0x03, 0x04, 0x01, 'x',
		    0x80, 0x01, 'y' } },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t out[64];
		ssize_t n = lfe_ldap_enc_bind_req(out, sizeof(out), v[i].msgid, v[i].dn, strlen(v[i].dn),
						  v[i].pw, strlen(v[i].pw));
		CHECK(n == (ssize_t)v[i].n, "bind vec %zu: length %zd want %zu", i, n, v[i].n);
		if (n == (ssize_t)v[i].n)
			CHECK(memcmp(out, v[i].want, v[i].n) == 0, "bind vec %zu: bytes differ", i);
	}
}

static void test_bind_roundtrip(void)
{
	static const struct { int32_t msgid; size_t dn_len, pw_len; } cases[] = {
		{ 1, 20, 8 }, { 127, 0, 0 }, { 65535, 126, 1 }, { 2147483647, 300, 200 }, { 7, 40000, 5 },
	};
	static uint8_t dn[40000], pw[256], out[41000];
	for (size_t i = 0; i < sizeof(dn); i++)
		dn[i] = (uint8_t)('a' + i % 26);
	for (size_t i = 0; i < sizeof(pw); i++)
		pw[i] = (uint8_t)i;   /* passwords are octets, NUL included */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lfe_ldap_msg m;
		ssize_t n = lfe_ldap_enc_bind_req(out, sizeof(out), cases[i].msgid, dn, cases[i].dn_len,
						  pw, cases[i].pw_len);
		CHECK(n > 0, "roundtrip %zu: encode %zd", i, n);
		if (n <= 0)
			continue;
		size_t pl;
		CHECK(lfe_ldap_frame(out, (size_t)n, 1u << 20, &pl) == 0 && pl == (size_t)n,
		      "roundtrip %zu: framing", i);
		int rc = lfe_ldap_decode(out, (size_t)n, &m);
		CHECK(rc == 0, "roundtrip %zu: server decode %d", i, rc);
		if (rc)
			continue;
		CHECK(m.msgid == cases[i].msgid && m.op == LFE_OP_BIND_REQ && m.u.bind.version == 3 &&
		      !m.u.bind.has_sasl_creds, "roundtrip %zu: fields", i);
		CHECK(m.u.bind.name.len == cases[i].dn_len &&
		      memcmp(m.u.bind.name.p, dn, cases[i].dn_len) == 0, "roundtrip %zu: dn", i);
		CHECK(m.u.bind.simple.len == cases[i].pw_len &&
		      memcmp(m.u.bind.simple.p, pw, cases[i].pw_len) == 0, "roundtrip %zu: password", i);
		/* Every shorter buffer is refused, never truncated. */
		for (size_t cap = 0; cap < (size_t)n && cap < 400; cap += 7)
			CHECK(lfe_ldap_enc_bind_req(out, cap, cases[i].msgid, dn, cases[i].dn_len, pw,
						    cases[i].pw_len) == -ENOSPC, "roundtrip %zu: cap %zu", i, cap);
	}
	CHECK(lfe_ldap_enc_bind_req(out, sizeof(out), 0, "a", 1, "b", 1) == -EINVAL, "msgid 0");
	CHECK(lfe_ldap_enc_bind_req(out, sizeof(out), -5, "a", 1, "b", 1) == -EINVAL, "msgid < 0");
	CHECK(lfe_ldap_enc_bind_req(out, sizeof(out), 1, NULL, 1, "b", 1) == -EINVAL, "NULL dn");
}

static void test_unbind(void)
{
	static const uint8_t want[] = { 0x30, 0x05, 0x02, 0x01, 0x02, 0x42, 0x00 };
	uint8_t out[16];
	struct lfe_ldap_msg m;

	ssize_t n = lfe_ldap_enc_unbind_req(out, sizeof(out), 2);
	CHECK(n == 7 && memcmp(out, want, 7) == 0, "unbind bytes (n=%zd)", n);
	CHECK(lfe_ldap_decode(out, 7, &m) == 0 && m.op == LFE_OP_UNBIND_REQ && m.msgid == 2,
	      "unbind through the server decoder");
	CHECK(lfe_ldap_enc_unbind_req(out, 6, 2) == -ENOSPC, "unbind short buffer");
	CHECK(lfe_ldap_enc_unbind_req(out, sizeof(out), 0) == -EINVAL, "unbind msgid 0");
	/* gen/pdu.c's own unbind: the encoder's bytes for every id length */
	static const int32_t ids[] = { 1, 2, 127, 128, 255, 256, 32767, 32768, 65535, 8388607, 8388608,
				       16777216, 2147483646, 2147483647 };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		uint8_t g[16];
		ssize_t wn = lfe_ldap_enc_unbind_req(out, sizeof(out), ids[i]);
		ssize_t gn = lfe_gen_unbind_pdu(g, sizeof(g), ids[i]);
		CHECK(wn > 0 && gn == wn && memcmp(out, g, (size_t)wn) == 0, "gen unbind id %d: %zd vs %zd",
		      ids[i], gn, wn);
		CHECK(lfe_gen_unbind_pdu(g, (size_t)wn - 1, ids[i]) == -ENOSPC, "gen unbind id %d: short", ids[i]);
	}
	CHECK(lfe_gen_unbind_pdu(out, sizeof(out), 0) == -EINVAL && lfe_gen_unbind_pdu(out, sizeof(out), -3) == -EINVAL,
	      "gen unbind: bad msgid");
}

/* ---- responses ---- */

static void test_resp_from_server_encoders(void)
{
	static const struct { enum lfe_ldap_op op; int32_t msgid; enum lfe_ldap_rc code; const char *diag; } c[] = {
		{ LFE_OP_BIND_RESP, 1, LFE_RC_SUCCESS, "" },
		{ LFE_OP_BIND_RESP, 77, LFE_RC_INVALID_CREDENTIALS, "" },
		{ LFE_OP_BIND_RESP, 1000000, LFE_RC_UNWILLING_TO_PERFORM, "unauthenticated bind" },
		{ LFE_OP_SEARCH_DONE, 3, LFE_RC_SUCCESS, "" },
		{ LFE_OP_MODIFY_RESP, 4, LFE_RC_UNWILLING_TO_PERFORM, "read-only" },
	};
	uint8_t out[256];
	struct lfe_ldap_resp r;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct lfe_ldap_result res = {
			.code = c[i].code,
			.matched_dn = { NULL, 0 },
			.diag = { (const uint8_t *)c[i].diag, strlen(c[i].diag) },
		};
		ssize_t n = lfe_ldap_enc_result(out, sizeof(out), c[i].msgid, c[i].op, &res);
		CHECK(n > 0, "enc_result %zu", i);
		if (n <= 0)
			continue;
		int rc = lfe_ldap_decode_resp(out, (size_t)n, &r);
		CHECK(rc == 0 && r.msgid == c[i].msgid && r.op == c[i].op && r.code == (int32_t)c[i].code &&
		      bytes_eq(r.diag, c[i].diag) && r.matched_dn.len == 0 && !lfe_ldap_resp_is_notice(&r),
		      "resp %zu: rc %d fields", i, rc);
		/* Every strict prefix is malformed (a cursor covers whole elements). */
		for (size_t k = 0; k < (size_t)n; k++)
			CHECK(lfe_ldap_decode_resp(out, k, &r) == -EBADMSG, "resp %zu prefix %zu", i, k);
	}

	ssize_t n = lfe_ldap_enc_notice_of_disconnection(out, sizeof(out), LFE_RC_PROTOCOL_ERROR, "bad PDU");
	CHECK(n > 0 && lfe_ldap_decode_resp(out, (size_t)n, &r) == 0 && lfe_ldap_resp_is_notice(&r) &&
	      r.code == LFE_RC_PROTOCOL_ERROR && r.msgid == 0 && bytes_eq(r.diag, "bad PDU"),
	      "notice of disconnection");

	struct lfe_bytes oid = { (const uint8_t *)"1.3.6.1.4.1.4203.1.11.3", 23 };
	struct lfe_bytes val = { (const uint8_t *)"dn:x", 4 };
	struct lfe_ldap_result ok = { .code = LFE_RC_SUCCESS };
	n = lfe_ldap_enc_ext_resp(out, sizeof(out), 9, &ok, &oid, &val);
	CHECK(n > 0 && lfe_ldap_decode_resp(out, (size_t)n, &r) == 0 && r.op == LFE_OP_EXT_RESP &&
	      r.has_oid && r.has_value && bytes_eq(r.value, "dn:x") && !lfe_ldap_resp_is_notice(&r),
	      "extended response with name and value");
}

/* gen/pdu.h's matcher of the expected answer: it matches exactly the
 * server's encoding of a plain BindResponse with that msgid and code, and
 * whatever it matches the decoder reads as that msgid, BindResponse, code. */
static void test_bind_resp_match(void)
{
	static const int32_t ids[] = { 1, 2, 127, 128, 255, 256, 32767, 32768, 0x7fffff, 0x800000, INT32_MAX };
	static const int32_t codes[] = { LFE_RC_SUCCESS, LFE_RC_INVALID_CREDENTIALS };
	uint8_t out[64], mut[64];
	struct lfe_ldap_resp r;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		for (size_t j = 0; j < 2; j++) {
			struct lfe_ldap_result res = { .code = (enum lfe_ldap_rc)codes[j] };
			ssize_t n = lfe_ldap_enc_result(out, sizeof(out) - 8, ids[i], LFE_OP_BIND_RESP, &res);
			CHECK(n > 0, "enc_result %d", ids[i]);
			if (n <= 0)
				continue;
			size_t len = (size_t)n;
			CHECK(lfe_gen_bind_resp_match(out, len, ids[i], codes[j]) == len, "match id %d code %d",
			      ids[i], codes[j]);
			/* Followed by the start of the next PDU: still the first one's length. */
			memcpy(out + len, "\x30\x0c\x02\x01\x05", 5);
			CHECK(lfe_gen_bind_resp_match(out, len + 5, ids[i], codes[j]) == len, "match id %d, more bytes",
			      ids[i]);
			CHECK(lfe_gen_bind_resp_match(out, len, ids[i], codes[1 - j]) == 0, "other code %d", ids[i]);
			CHECK(lfe_gen_bind_resp_match(out, len, ids[i] == 1 ? 2 : ids[i] - 1, codes[j]) == 0,
			      "other msgid %d", ids[i]);
			for (size_t k = 0; k < len; k++)
				CHECK(lfe_gen_bind_resp_match(out, k, ids[i], codes[j]) == 0, "prefix %zu of %d", k,
				      ids[i]);
			/* Every byte changed to every value: a match must decode as the answer. */
			for (size_t k = 0; k < len; k++) {
				for (unsigned v = 0; v < 256; v++) {
					memcpy(mut, out, len);
					if (mut[k] == v)
						continue;
					mut[k] = (uint8_t)v;
					size_t m = lfe_gen_bind_resp_match(mut, len, ids[i], codes[j]);
					if (m == 0)
						continue;
					int rc = lfe_ldap_decode_resp(mut, m, &r);
					CHECK(rc == 0 && r.msgid == ids[i] && r.op == LFE_OP_BIND_RESP &&
					      r.code == codes[j] && r.n_controls == 0 && !lfe_ldap_resp_is_notice(&r),
					      "mutation %zu=%u of %d matched but decodes otherwise", k, v, ids[i]);
				}
			}
		}
	}
	/* A diagnostic message, a matched DN, another operation: no match. */
	struct lfe_ldap_result d = { .code = LFE_RC_SUCCESS, .diag = { (const uint8_t *)"x", 1 } };
	ssize_t n = lfe_ldap_enc_result(out, sizeof(out), 5, LFE_OP_BIND_RESP, &d);
	CHECK(n > 0 && lfe_gen_bind_resp_match(out, (size_t)n, 5, 0) == 0, "diagnostic");
	struct lfe_ldap_result md = { .code = LFE_RC_SUCCESS, .matched_dn = { (const uint8_t *)"o=x", 3 } };
	n = lfe_ldap_enc_result(out, sizeof(out), 5, LFE_OP_BIND_RESP, &md);
	CHECK(n > 0 && lfe_gen_bind_resp_match(out, (size_t)n, 5, 0) == 0, "matched DN");
	struct lfe_ldap_result ok = { .code = LFE_RC_SUCCESS };
	n = lfe_ldap_enc_result(out, sizeof(out), 5, LFE_OP_MODIFY_RESP, &ok);
	CHECK(n > 0 && lfe_gen_bind_resp_match(out, (size_t)n, 5, 0) == 0, "modify response");
	n = lfe_ldap_enc_notice_of_disconnection(out, sizeof(out), LFE_RC_SUCCESS, "");
	CHECK(n > 0 && lfe_gen_bind_resp_match(out, (size_t)n, 0, 0) == 0, "notice (msgid 0)");
	/* Out-of-range arguments never match. */
	n = lfe_ldap_enc_result(out, sizeof(out), 5, LFE_OP_BIND_RESP, &ok);
	CHECK(n > 0 && lfe_gen_bind_resp_match(out, (size_t)n, 5, 0) == (size_t)n, "plain");
	CHECK(lfe_gen_bind_resp_match(out, (size_t)n, -5, 0) == 0, "negative msgid");
	CHECK(lfe_gen_bind_resp_match(out, (size_t)n, 5, 256) == 0, "code > 127");
	CHECK(lfe_gen_bind_resp_match(out, (size_t)n, 5, -1) == 0, "negative code");
	CHECK(lfe_gen_bind_resp_match(NULL, 0, 5, 0) == 0, "empty");
}

struct resp_vec {
	const char *name;
	int want;             /* return value */
	int32_t msgid;        /* expected msgid (-1: unreadable) */
	size_t n;
	uint8_t b[48];
};

static void test_resp_vectors(void)
{
	static const struct resp_vec v[] = {
		{ "bind ok", 0, 1, 14,
		  { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 } },
		{ "bind with serverSaslCreds", 0, 2, 18,
		  { 0x30, 0x10, 0x02, 0x01, 0x02, 0x61, 0x0b, 0x0a, 0x01, 0x0e, 0x04, 0x00, 0x04, 0x00,
		    0x87, 0x02, 'h', 'i' } },
		{ "bind with referral", 0, 3, 24,
		  { 0x30, 0x16, 0x02, 0x01, 0x03, 0x61, 0x11, 0x0a, 0x01, 0x0a, 0x04, 0x00, 0x04, 0x00,
		    0xa3, 0x08, 0x04, 0x06, 'l', 'd', 'a', 'p', ':', '/' } },
		{ "bind with a control", 0, 4, 26,
		  { 0x30, 0x18, 0x02, 0x01, 0x04, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00,
		    0xa0, 0x0a, 0x30, 0x08, 0x04, 0x03, '1', '.', '2', 0x01, 0x01, 0xff } },
		{ "empty referral", -EBADMSG, 3, 16,
		  { 0x30, 0x0e, 0x02, 0x01, 0x03, 0x61, 0x09, 0x0a, 0x01, 0x0a, 0x04, 0x00, 0x04, 0x00,
		    0xa3, 0x00 } },
		{ "resultCode missing", -EBADMSG, 1, 11,
		  { 0x30, 0x09, 0x02, 0x01, 0x01, 0x61, 0x04, 0x04, 0x00, 0x04, 0x00 } },
		{ "resultCode INTEGER not ENUMERATED", -EBADMSG, 1, 14,
		  { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x02, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 } },
		{ "negative resultCode", -EBADMSG, 1, 14,
		  { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0xff, 0x04, 0x00, 0x04, 0x00 } },
		{ "extra element in BindResponse", -EBADMSG, 1, 16,
		  { 0x30, 0x0e, 0x02, 0x01, 0x01, 0x61, 0x09, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00,
		    0x04, 0x00 } },
		{ "trailing octet after the message", -EBADMSG, -1, 15,
		  { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00,
		    0x00 } },
		{ "indefinite length", -EBADMSG, -1, 16,
		  { 0x30, 0x80, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00,
		    0x00, 0x00 } },
		{ "length past the end", -EBADMSG, -1, 13,
		  { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04 } },
		{ "negative msgid", -EBADMSG, -1, 14,
		  { 0x30, 0x0c, 0x02, 0x01, 0xff, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 } },
		{ "primitive BindResponse tag", -EBADMSG, 1, 14,
		  { 0x30, 0x0c, 0x02, 0x01, 0x01, 0x41, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 } },
		{ "a BindRequest (not a response)", -EPROTONOSUPPORT, 5, 14,
		  { 0x30, 0x0c, 0x02, 0x01, 0x05, 0x60, 0x07, 0x02, 0x01, 0x03, 0x04, 0x00, 0x80, 0x00 } },
		{ "an UnbindRequest", -EPROTONOSUPPORT, 2, 7, { 0x30, 0x05, 0x02, 0x01, 0x02, 0x42, 0x00 } },
		{ "protocolOp missing", -EBADMSG, 1, 5, { 0x30, 0x03, 0x02, 0x01, 0x01 } },
		{ "context tag as protocolOp", -EBADMSG, 1, 7, { 0x30, 0x05, 0x02, 0x01, 0x01, 0x80, 0x00 } },
		{ "control without type", -EBADMSG, 4, 20,
		  { 0x30, 0x12, 0x02, 0x01, 0x04, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00,
		    0xa0, 0x04, 0x30, 0x02, 0x04, 0x00 } },
		{ "control with bad criticality", -EBADMSG, 4, 26,
		  { 0x30, 0x18, 0x02, 0x01, 0x04, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00,
		    0xa0, 0x0a, 0x30, 0x08, 0x04, 0x03, '1', '.', '2', 0x01, 0x01, 0x01 } },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct lfe_ldap_resp r;
		int rc = lfe_ldap_decode_resp(v[i].b, v[i].n, &r);
		CHECK(rc == v[i].want, "%s: rc %d want %d", v[i].name, rc, v[i].want);
		CHECK(r.msgid == v[i].msgid, "%s: msgid %d want %d", v[i].name, r.msgid, v[i].msgid);
	}
	struct lfe_ldap_resp r;
	lfe_ldap_decode_resp(v[1].b, v[1].n, &r);
	CHECK(r.code == 14 && r.has_sasl_creds && bytes_eq(r.sasl_creds, "hi"), "sasl creds fields");
	lfe_ldap_decode_resp(v[2].b, v[2].n, &r);
	CHECK(r.code == 10 && r.has_referral, "referral fields");
	lfe_ldap_decode_resp(v[3].b, v[3].n, &r);
	CHECK(r.n_controls == 1, "control counted");
	CHECK(lfe_ldap_decode_resp(NULL, 0, &r) == -EBADMSG, "NULL");

	/* More controls than the bound. */
	uint8_t big[256];
	size_t nc = LFE_LDAP_MAX_CONTROLS + 1, cl = nc * 5;
	size_t k = 0;
	big[k++] = 0x30;
	big[k++] = (uint8_t)(12 + 2 + cl);
	const uint8_t head[] = { 0x02, 0x01, 0x01, 0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00 };
	memcpy(big + k, head, sizeof(head));
	k += sizeof(head);
	big[k++] = 0xa0;
	big[k++] = (uint8_t)cl;
	for (size_t j = 0; j < nc; j++) {
		const uint8_t ctl[] = { 0x30, 0x03, 0x04, 0x01, '1' };
		memcpy(big + k, ctl, sizeof(ctl));
		k += sizeof(ctl);
	}
	CHECK(lfe_ldap_decode_resp(big, k, &r) == -E2BIG, "too many controls");
	big[1] -= 5;
	big[15] -= 5;
	CHECK(lfe_ldap_decode_resp(big, k - 5, &r) == 0 && r.n_controls == LFE_LDAP_MAX_CONTROLS,
	      "controls at the bound");
}

/* ---- histogram ---- */

static void test_hist(void)
{
	static struct lfe_hist h;
	static const uint64_t probes[] = {
		0, 1, 31, 32, 33, 63, 64, 65, 100, 1000, 4095, 4096, 123456789, 1ull << 40,
		(1ull << 40) + 12345, UINT64_MAX - 1, UINT64_MAX,
	};
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint64_t x = probes[i];
		unsigned b = lfe_hist_index(x);
		CHECK(b < LFE_HIST_BUCKETS, "index of %llu out of range", (unsigned long long)x);
		CHECK(lfe_hist_bucket_lo(b) <= x && x <= lfe_hist_bucket_hi(b), "bounds of %llu",
		      (unsigned long long)x);
		/* width ≤ 1/32 of the value */
		CHECK(lfe_hist_bucket_hi(b) - lfe_hist_bucket_lo(b) <= (x >> LFE_HIST_SUB_BITS),
		      "width at %llu", (unsigned long long)x);
	}
	for (unsigned b = 0; b + 1 < LFE_HIST_BUCKETS; b++)
		CHECK(lfe_hist_bucket_hi(b) + 1 == lfe_hist_bucket_lo(b + 1), "buckets %u/%u not adjacent", b,
		      b + 1);

	lfe_hist_reset(&h);
	CHECK(lfe_hist_quantile(&h, 0.5) == 0, "empty histogram");
	for (uint64_t x = 1; x <= 10000; x++)
		lfe_hist_add(&h, x * 100);
	static const struct { double q; uint64_t exact; } qs[] = {
		{ 0.5, 500000 }, { 0.99, 990000 }, { 0.999, 999000 }, { 1.0, 1000000 }, { 0.0, 100 },
	};
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t got = lfe_hist_quantile(&h, qs[i].q);
		CHECK(got >= qs[i].exact && got <= qs[i].exact + qs[i].exact / 32 + 1,
		      "quantile %.3f: %llu, exact %llu", qs[i].q, (unsigned long long)got,
		      (unsigned long long)qs[i].exact);
	}
	CHECK(h.max == 1000000 && h.count == 10000, "max/count");
	static struct lfe_hist h2;
	lfe_hist_reset(&h2);
	lfe_hist_add(&h2, 5000000);
	lfe_hist_merge(&h2, &h);
	CHECK(h2.count == 10001 && h2.max == 5000000 && lfe_hist_quantile(&h2, 1.0) == 5000000, "merge");
}


/* ---- pre-encoded binds ---- */

static void test_pdu(void)
{
	static const char *const fmts[][2] = {
		{ "uid=user%07u,ou=people,dc=example,dc=com", "pw%07u" },
		{ "uid=u%u,dc=x", "p%%%08u" },
		{ "cn=%5u", "%u" },
		{ "%u", "%%%u%%" },
		/* long: the outer length takes two octets for most numbers */
		{ "uid=a-rather-long-user-name-prefix-to-cross-the-one-octet-length-boundary-%06u,"
		  "ou=people,dc=example,dc=com", "a-long-password-%u-with-more-text-after-it" },
	};
	static const uint32_t us[] = { 0, 7, 9, 10, 99, 100, 101, 999, 1000, 1009, 9999, 10000, 10001,
				       12345, 99999, 100000, 999999, 1000000, 1000001, 9999999, 10000000,
				       123456789, 999999999, 1000000000, 4294967295u };
	static const int32_t ids[] = { 1, 127, 128, 255, 32767, 32768, 8388607, 8388608, 2147483647 };
	for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
		int err = 0;
		struct lfe_gen_bindtab *t = lfe_gen_bindtab_new(fmts[f][0], fmts[f][1], &err);
		CHECK(t != NULL, "bindtab %zu: %d", f, err);
		if (!t)
			continue;
		struct lfe_gen_fmt pf;
		CHECK(lfe_gen_fmt_parse(fmts[f][0], &pf) == 0, "fmt parse %zu", f);
		for (size_t a = 0; a < sizeof(us) / sizeof(us[0]); a++) {
			char want_s[600], got_s[600];
			int wl = snprintf(want_s, sizeof(want_s), fmts[f][0], us[a]);
			ssize_t gl = lfe_gen_fmt_render(&pf, us[a], got_s, sizeof(got_s));
			CHECK(gl == wl && memcmp(want_s, got_s, (size_t)wl) == 0, "render %zu %u", f, us[a]);
			for (size_t b = 0; b < sizeof(us) / sizeof(us[0]); b += 3) {
				for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
					for (int wrong = 0; wrong < 2; wrong++) {
						char dn[600], pw[600];
						uint8_t want[LFE_GEN_PDU_MAX + 64], got[LFE_GEN_PDU_MAX];
						int dl = snprintf(dn, sizeof(dn), fmts[f][0], us[a]);
						int pl = snprintf(pw, sizeof(pw) - 1, fmts[f][1], us[b]);
						if (wrong)
							pw[pl++] = '!';
						ssize_t wn = lfe_ldap_enc_bind_req(want, sizeof(want), ids[k], dn,
										   (size_t)dl, pw, (size_t)pl);
						ssize_t gn = lfe_gen_bind_pdu(t, got, sizeof(got), ids[k], us[a],
									      us[b], wrong);
						CHECK(wn > 0 && gn == wn && memcmp(want, got, (size_t)wn) == 0,
						      "pdu fmt %zu u %u/%u id %d wrong %d: %zd vs %zd", f, us[a],
						      us[b], ids[k], wrong, gn, wn);
					}
				}
			}
		}
		/* Room for exactly the request, or a little more: the same bytes,
		 * nothing written past cap. */
		for (size_t extra = 0; extra <= 17; extra++) {
			uint8_t want[LFE_GEN_PDU_MAX + 64], got[LFE_GEN_PDU_MAX + 64];
			ssize_t wn = lfe_gen_bind_pdu(t, want, sizeof(want), 300, us[1], us[1], false);
			if (wn <= 0)
				continue;
			memset(got, 0xa5, sizeof(got));
			size_t cap = (size_t)wn + extra;
			ssize_t gn = lfe_gen_bind_pdu(t, got, cap, 300, us[1], us[1], false);
			bool clean = true;
			for (size_t k = cap; k < sizeof(got); k++)
				clean = clean && got[k] == 0xa5;
			CHECK(gn == wn && memcmp(want, got, (size_t)wn) == 0 && clean,
			      "pdu fmt %zu: cap = length + %zu: %zd, past cap %s", f, extra, gn,
			      clean ? "untouched" : "written");
			CHECK(lfe_gen_bind_pdu(t, got, (size_t)wn - 1, 300, us[1], us[1], false) == -ENOSPC,
			      "pdu fmt %zu: one byte short", f);
		}
		uint8_t small[8];
		CHECK(lfe_gen_bind_pdu(t, small, sizeof(small), 1, 1, 1, false) == -ENOSPC, "pdu: no room");
		CHECK(lfe_gen_bind_pdu(t, small, sizeof(small), 0, 1, 1, false) == -EINVAL, "pdu: msgid 0");
		lfe_gen_bindtab_free(t);
	}
	lfe_gen_bindtab_free(NULL);
	struct lfe_gen_fmt pf;
	CHECK(lfe_gen_fmt_parse("x%s", &pf) == -EINVAL && lfe_gen_fmt_parse("none", &pf) == -EINVAL &&
	      lfe_gen_fmt_parse("%u%u", &pf) == -EINVAL, "fmt parse refusals");
}

/* ---- user distribution ---- */

static uint64_t test_rng(void *p)
{
	uint64_t *s = p;
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

/* Chi-square of counts[0..k) (ranks 1..k) and the tail (ranks > k) against
 * Zipf(n, s) expectations for `draws` draws. */
static double zipf_chi2(const uint64_t *counts, uint64_t tail, unsigned k, uint32_t n, double s,
			uint64_t draws)
{
	double hn = 0, head = 0, chi = 0;
	for (uint32_t i = 1; i <= n; i++)
		hn += pow((double)i, -s);
	for (unsigned i = 1; i <= k; i++) {
		double e = (double)draws * pow((double)i, -s) / hn;
		head += e;
		chi += ((double)counts[i - 1] - e) * ((double)counts[i - 1] - e) / e;
	}
	double et = (double)draws - head;
	return chi + ((double)tail - et) * ((double)tail - et) / et;
}

static void test_dist(void)
{
	/* 30 head ranks + tail = 30 degrees of freedom: chi-square's 99.9 %
	 * point is 59.7. Uniform draws must land far above it. */
	enum { K = 30, DRAWS = 300000 };
	static const struct { uint32_t n; double s; } cases[] = {
		{ 1000, 1.0 }, { 100000, 0.8 }, { 1000000, 1.2 }, { 50, 2.5 }, { 100000, 0.3 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct lfe_gen_dist d, un;
		uint64_t rng = 12345 + c, counts[K] = { 0 }, ucounts[K] = { 0 }, tail = 0, utail = 0;
		CHECK(lfe_gen_dist_init(&d, LFE_DIST_ZIPF, cases[c].n, cases[c].s) == 0, "zipf init %zu", c);
		CHECK(lfe_gen_dist_init(&un, LFE_DIST_UNIFORM, cases[c].n, 0) == 0, "uniform init %zu", c);
		for (unsigned i = 0; i < DRAWS; i++) {
			uint32_t r = lfe_gen_dist_rank(&d, test_rng, &rng);
			uint32_t q = lfe_gen_dist_rank(&un, test_rng, &rng);
			CHECK(r >= 1 && r <= cases[c].n && q >= 1 && q <= cases[c].n, "rank out of range");
			if (r <= K)
				counts[r - 1]++;
			else
				tail++;
			if (q <= K)
				ucounts[q - 1]++;
			else
				utail++;
		}
		double chi = zipf_chi2(counts, tail, K, cases[c].n, cases[c].s, DRAWS);
		double uchi = zipf_chi2(ucounts, utail, K, cases[c].n, cases[c].s, DRAWS);
		CHECK(chi < 59.7, "zipf n %u s %.1f: chi-square %.1f", cases[c].n, cases[c].s, chi);
		CHECK(uchi > 3 * 59.7, "uniform passes for zipf n %u s %.1f: chi-square %.1f", cases[c].n,
		      cases[c].s, uchi);
		CHECK(counts[0] > counts[1] && counts[1] > counts[9], "zipf n %u: not decreasing", cases[c].n);
	}
	/* Uniform ranks fill K slices of 1..n by their sizes: chi-square with
	 * 29 degrees of freedom under its 99.9 % point (58.3); n = 1 gives 1. */
	static const uint32_t un_n[] = { 30, 1000, 999983, 4294967295u };
	for (size_t c = 0; c < sizeof(un_n) / sizeof(un_n[0]); c++) {
		struct lfe_gen_dist un;
		uint64_t rng = 777 + c, cnt[K] = { 0 };
		CHECK(lfe_gen_dist_init(&un, LFE_DIST_UNIFORM, un_n[c], 0) == 0, "uniform init n %u", un_n[c]);
		for (unsigned i = 0; i < DRAWS; i++) {
			uint32_t q = lfe_gen_dist_rank(&un, test_rng, &rng);
			CHECK(q >= 1 && q <= un_n[c], "uniform rank %u of %u", q, un_n[c]);
			cnt[(uint64_t)(q - 1) * K / un_n[c]]++;
		}
		double chi = 0;
		for (uint64_t k = 0; k < K; k++) {
			/* slice k: ranks - 1 in [ceil(k n / K), ceil((k + 1) n / K)) */
			uint64_t lo = (k * un_n[c] + K - 1) / K, hi = ((k + 1) * un_n[c] + K - 1) / K;
			double e = (double)DRAWS * (double)(hi - lo) / un_n[c];
			chi += ((double)cnt[k] - e) * ((double)cnt[k] - e) / e;
		}
		CHECK(chi < 58.3, "uniform n %u: chi-square %.1f", un_n[c], chi);
	}
	struct lfe_gen_dist one;
	uint64_t rng1 = 5;
	CHECK(lfe_gen_dist_init(&one, LFE_DIST_UNIFORM, 1, 0) == 0 && lfe_gen_dist_rank(&one, test_rng, &rng1) == 1 &&
	      lfe_gen_dist_user(&one, 1) == 0, "uniform n 1");
	/* Rank → user is a bijection over the population, uniform is identity. */
	static const uint32_t ns[] = { 1, 2, 997, 1000, 1024, 100000 };
	static uint8_t seen[100000];
	for (size_t c = 0; c < sizeof(ns) / sizeof(ns[0]); c++) {
		struct lfe_gen_dist d, un;
		CHECK(lfe_gen_dist_init(&d, LFE_DIST_ZIPF, ns[c], 1.0) == 0 &&
		      lfe_gen_dist_init(&un, LFE_DIST_UNIFORM, ns[c], 0) == 0, "init n %u", ns[c]);
		memset(seen, 0, ns[c]);
		uint32_t dup = 0, ident = 0;
		for (uint32_t r = 1; r <= ns[c]; r++) {
			uint32_t u = lfe_gen_dist_user(&d, r);
			dup += u >= ns[c] || seen[u];
			if (u < ns[c])
				seen[u] = 1;
			ident += lfe_gen_dist_user(&un, r) == r - 1;
		}
		CHECK(dup == 0 && ident == ns[c], "bijection n %u: %u duplicates", ns[c], dup);
		uint32_t gap = (lfe_gen_dist_user(&d, 2) + ns[c] - lfe_gen_dist_user(&d, 1)) % ns[c];
		CHECK(ns[c] < 1000 || (gap > 1 && gap < ns[c] - 1), "n %u: ranks 1 and 2 are neighbours", ns[c]);
	}
	struct lfe_gen_dist d;
	CHECK(lfe_gen_dist_init(&d, LFE_DIST_ZIPF, 10, 0) == -EINVAL &&
	      lfe_gen_dist_init(&d, LFE_DIST_ZIPF, 0, 1) == -EINVAL, "dist refusals");
}

/* ---- options ---- */

struct opt_case {
	const char *args;    /* space-separated */
	int want;
};

static int parse_line(const char *line, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	static char buf[1024];
	char *argv[64];
	int argc = 0;

	/* The lines are short literals; a truncation would fail the test. */
	int n = snprintf(buf, sizeof(buf), "ldapfe-gen %s", line);
	CHECK(n > 0 && (size_t)n < sizeof(buf));
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	lfe_gen_opts_defaults(o);
	return lfe_gen_opts_parse(argc, argv, o, err, errlen);
}

static void test_opts(void)
{
#define BASE "--port net_memif0 --src-ip 10.0.0.2/24 --dst-ip 10.0.0.1 "
	static const struct opt_case c[] = {
		{ BASE, 0 },
		{ BASE "--workload session --conns 64 --rate 50000 --duration 2.5", 0 },
		{ BASE "--workload mix --rate max --json /tmp/x.json --quiet", 0 },
		{ BASE "--user-fmt uid=u%u,dc=x --password-fmt p%%%08u", 0 },
		{ BASE "--sport-range 2000-2003 --conns 4", 0 },
		{ BASE "--binds-per-conn 10000", 0 },
		{ BASE "--binds-per-conn x", -EINVAL },
		{ BASE "--dist uniform", 0 },
		{ BASE "--dist zipf:1.1", 0 },
		{ BASE "--dist zipf:0", -EINVAL },
		{ BASE "--dist zipf:", -EINVAL },
		{ BASE "--dist zipf:x", -EINVAL },
		{ BASE "--dist pareto", -EINVAL },
		{ BASE "--workload hold --conns 20000 --bind-frac 0.05 --syn-rate 5000", 0 },
		/* more connections than one address has ports: a source range */
		{ BASE "--workload hold --conns 100000 --src-ips 10.0.0.100-10.0.0.131", 0 },
		{ BASE "--workload hold --conns 100000", -EINVAL },
		{ BASE "--workload hold --conns 1000000 --src-ips 10.0.0.0/24", -EINVAL },   /* .1 is the server */
		{ "--port p --src-ip 10.0.0.2/16 --dst-ip 10.0.0.1 --workload hold --conns 1000000 --src-ips 10.0.1.0/24", 0 },
		{ BASE "--src-ips 10.0.0.1-10.0.0.9", -EINVAL },      /* holds the server */
		{ BASE "--src-ips 10.0.1.5-10.0.1.9", -EINVAL },      /* off the subnet */
		{ BASE "--src-ips 10.0.0.9-10.0.0.5", -EINVAL },
		{ BASE "--src-ips 10.0.0.5", -EINVAL },
		{ BASE "--bind-frac 0.5", -EINVAL },                  /* hold only */
		{ BASE "--workload hold --bind-frac 1.5", -EINVAL },
		{ BASE "--workload hold --bind-frac -1", -EINVAL },
		{ BASE "--syn-rate 0", -EINVAL },
		{ BASE "--lcores 2 --conns 4", 0 },
		{ BASE "--lcores 0", -EINVAL },
		{ BASE "--lcores 17", -EINVAL },
		{ BASE "--lcores 4 --conns 2", -EINVAL },
		{ BASE "--conns 4194305", -EINVAL },
		{ "--port p --src-ip 10.0.0.2/24 --dst-ip 10.1.0.1 --gateway 10.0.0.254", 0 },
		{ "--src-ip 10.0.0.2/24 --dst-ip 10.0.0.1", -EINVAL },
		{ "--port p --dst-ip 10.0.0.1", -EINVAL },
		{ BASE "--src-ip 10.0.0.1/24", -EINVAL },
		{ "--port p --src-ip 10.0.0.2 --dst-ip 10.0.0.1", -EINVAL },
		{ "--port p --src-ip 10.0.0.2/33 --dst-ip 10.0.0.1", -EINVAL },
		{ "--port p --src-ip 10.0.0.2/24 --dst-ip 10.1.0.1", -EINVAL },
		{ "--port p --src-ip 10.0.0.2/24 --dst-ip 10.1.0.1 --gateway 10.2.0.1", -EINVAL },
		{ BASE "--workload burst", -EINVAL },
		{ BASE "--conns 0", -EINVAL },
		{ BASE "--conns 65537", -EINVAL },
		{ BASE "--rate 0", -EINVAL },
		{ BASE "--rate -5", -EINVAL },
		{ BASE "--rate 10x", -EINVAL },
		{ BASE "--duration 0", -EINVAL },
		{ BASE "--wrong-pct 60 --unknown-pct 50", -EINVAL },
		{ BASE "--wrong-pct 101", -EINVAL },
		{ BASE "--user-fmt uid=%s", -EINVAL },
		{ BASE "--user-fmt uid=%u%u", -EINVAL },
		{ BASE "--password-fmt nothing", -EINVAL },
		{ BASE "--password-fmt %n", -EINVAL },
		{ BASE "--user-fmt %0100u", -EINVAL },
		{ BASE "--sport-range 5-4", -EINVAL },
		{ BASE "--sport-range 2000-2002 --conns 4", -EINVAL },
		{ BASE "--dport 0", -EINVAL },
		{ BASE "--dport 65536", -EINVAL },
		{ BASE "--bogus 1", -EINVAL },
		{ BASE "stray", -EINVAL },
		{ BASE "--users 2000000000 --user-base 1000000000", -EINVAL },
		{ BASE "--tls", 0 },
		{ BASE "--tls --lcores 2 --conns 4", -EINVAL },
		{ BASE "--starttls --lcores 2 --conns 4", -EINVAL },
		{ BASE "--tls --tls-version 1.3 --tls-ca /tmp/ca.pem --tls-resume --workload session", 0 },
		{ BASE "--tls --tls-version any --tls-resume=shared", 0 },
		{ BASE "--tls --tls-resume=slot --tls-version 1.2", 0 },
		{ BASE "--tls --tls-version 1.1", -EINVAL },
		{ BASE "--tls --tls-version", -EINVAL },
		{ BASE "--tls --tls-resume=bogus", -EINVAL },
		{ BASE "--tls --tls-resume shared", -EINVAL },   /* optional value: only with = */
		{ BASE "--tls-resume", -EINVAL },                 /* needs --tls */
		{ BASE "--tls-version 1.3", -EINVAL },
		{ BASE "--tls-ca /tmp/ca.pem", -EINVAL },
		{ BASE "--tls=yes", -EINVAL },
		{ BASE "--starttls --tls-resume --workload session", 0 },
		{ BASE "--starttls=1", -EINVAL },
		{ BASE "--tls --tls-records openssl", 0 },
		{ BASE "--starttls --tls-records ldapfe", 0 },
		{ BASE "--tls --tls-records openssl --tls-resume", 0 },
		{ BASE "--tls --tls-records ldapfe --tls-resume", -EINVAL },   /* the tickets */
		{ BASE "--tls --tls-resume=shared --tls-records ldapfe", -EINVAL },
		{ BASE "--tls --tls-records kernel", -EINVAL },
		{ BASE "--tls --tls-records", -EINVAL },
		{ BASE "--tls-records openssl", -EINVAL },       /* needs --tls */
		{ BASE "--workload synflood --src-ips 10.0.0.64-10.0.0.127", 0 },
		{ BASE "--workload synflood --flood-rate 100000 --flood-reply rst", 0 },
		{ BASE "--workload synflood --syn-rate 100000", -EINVAL },   /* its rate is --flood-rate */
		{ BASE "--workload session --flood-ips 10.0.0.64-10.0.0.127 --flood-rate max", 0 },
		{ BASE "--src-ips 10.0.0.100-10.0.0.131 --flood-ips 10.0.0.64-10.0.0.127", -EINVAL },   /* overlap */
		{ BASE "--flood-ips 10.0.0.2-10.0.0.9", -EINVAL },   /* holds --src-ip */
		{ BASE "--flood-ips 10.0.0.1/24", -EINVAL },          /* holds the server */
		{ BASE "--flood-ips 10.0.1.64-10.0.1.127", -EINVAL }, /* off the subnet */
		{ BASE "--flood-rate 5000", -EINVAL },                /* no flood asked */
		{ BASE "--flood-ips 10.0.0.64/26 --flood-rate 0", -EINVAL },
		{ BASE "--workload synflood --flood-reply none", 0 },
		{ BASE "--workload synflood --flood-reply ack", -EINVAL },
		{ BASE "--flood-reply rst", -EINVAL },            /* synflood only */
		{ BASE "--workload synflood --tls", -EINVAL },
		{ BASE "--rx-csum all", 0 },
		{ BASE "--rx-csum sample", 0 },
		{ BASE "--rx-csum none", -EINVAL },
		{ BASE "--rx-csum", -EINVAL },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct lfe_gen_opts o;
		char err[256] = "";
		int rc = parse_line(c[i].args, &o, err, sizeof(err));
		CHECK(rc == c[i].want, "opts \"%s\": rc %d want %d (%s)", c[i].args, rc, c[i].want, err);
		CHECK(rc == 0 || err[0], "opts \"%s\": refusal without a message", c[i].args);
	}
	struct lfe_gen_opts o;
	char err[256];
	CHECK(parse_line(BASE "--workload mix", &o, err, sizeof(err)) == 0 && o.wrong_pct == 10 &&
	      o.unknown_pct == 10, "mix defaults");
	CHECK(parse_line(BASE "--workload mix --wrong-pct 0", &o, err, sizeof(err)) == 0 &&
	      o.wrong_pct == 0 && o.unknown_pct == 10, "mix with an explicit share");
	CHECK(parse_line(BASE "--workload session --rate 2500.5 --dport 3389", &o, err, sizeof(err)) == 0 &&
	      o.wl == LFE_WL_SESSION && o.rate == 2500.5 && o.dport == 3389 && o.src_ip == 0x0a000002 &&
	      o.prefix_len == 24 && o.dst_ip == 0x0a000001, "fields");
	CHECK(parse_line(BASE "--rate max", &o, err, sizeof(err)) == 0 && o.rate == 0, "rate max");
	CHECK(parse_line(BASE, &o, err, sizeof(err)) == 0 && !o.rx_csum_all, "rx-csum: sample by default");
	CHECK(parse_line(BASE "--rx-csum all", &o, err, sizeof(err)) == 0 && o.rx_csum_all, "rx-csum all");
	CHECK(parse_line(BASE "--rx-csum all --rx-csum sample", &o, err, sizeof(err)) == 0 && !o.rx_csum_all,
	      "rx-csum: the last one");
	CHECK(parse_line(BASE "--dist zipf:0.99", &o, err, sizeof(err)) == 0 && o.dist == LFE_DIST_ZIPF &&
	      o.zipf_s == 0.99, "dist zipf");
	CHECK(parse_line(BASE "--workload hold --src-ips 10.0.0.64/26", &o, err, sizeof(err)) == 0 &&
	      o.wl == LFE_WL_HOLD && o.src_lo == 0x0a000041 && o.src_hi == 0x0a00007e && o.syn_rate == 20000 &&
	      o.bind_frac == 0.1 && o.lcores == 1, "hold defaults, prefix range without network/broadcast");
	CHECK(parse_line(BASE "--workload synflood", &o, err, sizeof(err)) == 0 && o.wl == LFE_WL_SYNFLOOD &&
	      o.flood_rate == 0 && !o.flood_rst && o.flood_lo == 0x0a000002 && o.flood_hi == 0x0a000002,
	      "synflood: unpaced, no reply, from --src-ip by default");
	CHECK(parse_line(BASE "--workload synflood --flood-reply rst --flood-rate 5e4 --src-ips 10.0.0.64/26", &o,
			 err, sizeof(err)) == 0 && o.flood_rst && o.flood_rate == 50000 && o.flood_lo == 0x0a000041 &&
	      o.flood_hi == 0x0a00007e, "synflood fields, sources from --src-ips");
	CHECK(parse_line(BASE "--workload persistent --flood-ips 10.0.0.200-10.0.0.201", &o, err, sizeof(err)) == 0 &&
	      o.wl == LFE_WL_PERSISTENT && o.flood_lo == 0x0a0000c8 && o.flood_hi == 0x0a0000c9 && o.flood_rate == 0,
	      "a flood beside a workload");
	CHECK(parse_line(BASE "--workload persistent", &o, err, sizeof(err)) == 0 && o.syn_rate == 0,
	      "no SYN pacing unless asked outside hold");
	CHECK(parse_line(BASE "--help", &o, err, sizeof(err)) == -EINVAL && strcmp(err, "help") == 0, "help");
	CHECK(parse_line(BASE, &o, err, sizeof(err)) == 0 && !o.tls && o.dport == 389 &&
	      o.tls_resume == LFE_GEN_RESUME_OFF && !o.tls_ca[0], "cleartext by default");
	CHECK(parse_line(BASE "--tls", &o, err, sizeof(err)) == 0 && o.tls && o.dport == 636 &&
	      o.tls_version == 0 && o.tls_resume == LFE_GEN_RESUME_OFF, "--tls: LDAPS port 636");
	CHECK(parse_line(BASE "--dport 1636 --tls", &o, err, sizeof(err)) == 0 && o.dport == 1636,
	      "--tls keeps an explicit --dport");
	CHECK(parse_line(BASE "--tls --tls-version 1.2 --tls-resume --tls-ca /x/ca.pem", &o, err,
			 sizeof(err)) == 0 && o.tls_version == 12 && o.tls_resume == LFE_GEN_RESUME_SLOT &&
	      strcmp(o.tls_ca, "/x/ca.pem") == 0, "tls fields");
	CHECK(parse_line(BASE "--starttls", &o, err, sizeof(err)) == 0 && o.tls && o.starttls &&
	      o.dport == 389, "--starttls: TLS on the LDAP port");
	CHECK(parse_line(BASE "--tls --tls-version 1.3 --tls-resume=shared", &o, err, sizeof(err)) == 0 &&
	      o.tls_version == 13 && o.tls_resume == LFE_GEN_RESUME_SHARED, "tls 1.3, shared");
	CHECK(parse_line(BASE "--tls", &o, err, sizeof(err)) == 0 && !o.tls_records_openssl,
	      "ldapfe's records by default");
	CHECK(parse_line(BASE "--tls --tls-records openssl", &o, err, sizeof(err)) == 0 &&
	      o.tls_records_openssl, "--tls-records openssl");
	CHECK(parse_line(BASE "--tls --tls-records ldapfe --tls-resume", &o, err, sizeof(err)) < 0 &&
	      strstr(err, "--tls-records ldapfe: --tls-resume"), "records vs resume: %s", err);
#undef BASE
}

/* Each option's refusal, message included (the option table's hints and
 * ranges), and the fields of the options test_opts does not read back. */
struct opt_msg_case {
	const char *args;    /* after BASE */
	const char *msg;     /* NULL: accepted; else a substring of the refusal */
};

static void test_opts_messages(void)
{
#define BASE "--port net_memif0 --src-ip 10.0.0.2/24 --dst-ip 10.0.0.1 "
	static const struct opt_msg_case c[] = {
		{ "--port=", "--port: empty or too long" },
		{ "--port " "0123456789012345678901234567890123456789012345678901234567890123456789"
		  "0123456789012345678901234567890123456789012345678901234567890123456789"
		  "0123456789012345678901234567890123456789012345678901234567890123456789"
		  "0123456789012345678901234567890123456789012345678901234567890123456789",
		  "--port: empty or too long" },
		{ "--src-ip 10.0.0.2/0", "--src-ip: \"10.0.0.2/0\": want a.b.c.d/len" },
		{ "--dst-ip 10.0.0", "--dst-ip: \"10.0.0\": want a.b.c.d" },
		{ "--gateway 10.0.0.256", "--gateway: \"10.0.0.256\": want a.b.c.d" },
		{ "--dport 65536", "--dport: \"65536\": 1..65535" },
		{ "--workload burst", "--workload: \"burst\": persistent, session, mix, hold or synflood" },
		{ "--conns 0", "--conns: \"0\": 1..4194304" },
		{ "--users 1073741824", NULL },
		{ "--users 1073741825", "--users: \"1073741825\": 1..2^30" },
		{ "--users 0", "--users: \"0\": 1..2^30" },
		{ "--user-base 1073741824", NULL },
		{ "--user-base 1073741825", "--user-base: \"1073741825\": 0..2^30" },
		{ "--user-base -1", "--user-base: \"-1\": 0..2^30" },
		{ "--user-fmt u%d", "--user-fmt: \"u%d\": want exactly one %u (optionally %0Nu), %% for a percent sign" },
		{ "--password-fmt p", "--password-fmt: \"p\": want exactly one %u" },
		{ "--wrong-pct 100", NULL },
		{ "--unknown-pct 101", "--unknown-pct: \"101\": 0..100" },
		{ "--rate 1e10", "--rate: \"1e10\": binds per second (> 0) or max" },
		{ "--duration 86400", NULL },
		{ "--duration 86401", "--duration: \"86401\": seconds, > 0, ≤ 86400" },
		{ "--binds-per-conn 4294967294", NULL },
		{ "--binds-per-conn 4294967295", "--binds-per-conn: \"4294967295\": 0 (never) or a count" },
		{ "--dist zipf:101", "--dist: \"zipf:101\": uniform or zipf:S (0 < S ≤ 100)" },
		{ "--sport-range 2000", "--sport-range: \"2000\": want LO-HI" },
		{ "--sport-range 0-5", "--sport-range: \"0-5\": 1 ≤ LO ≤ HI ≤ 65535" },
		{ "--seed 18446744073709551615", NULL },
		{ "--seed 18446744073709551616", "--seed: \"18446744073709551616\": a decimal number" },
		{ "--seed -1", "--seed: \"-1\": a decimal number" },
		{ "--arp-timeout-ms 10 --connect-timeout-ms 600000", NULL },
		{ "--arp-timeout-ms 9", "--arp-timeout-ms: \"9\": 10..600000 ms" },
		{ "--connect-timeout-ms 600001", "--connect-timeout-ms: \"600001\": 10..600000 ms" },
		{ "--json", "unknown option or missing value: \"--json\"" },
		{ "--json=", "--json: empty or too long" },
		{ "--quiet=1", "unknown option or missing value" },
		{ "--src-ips 0.0.0.0-10.0.0.5",
		  "--src-ips: \"0.0.0.0-10.0.0.5\": want A-B or A/len (len >= 8), at most 65536 addresses" },
		{ "--src-ips 10.0.0.0/7", "--src-ips: \"10.0.0.0/7\": want A-B" },
		{ "--syn-rate 1e9", NULL },
		{ "--syn-rate 2e9", "--syn-rate: \"2e9\": connections per second (> 0)" },
		{ "--workload hold --bind-frac 0", NULL },
		{ "--workload hold --bind-frac 1.01", "--bind-frac: \"1.01\": 0..1" },
		{ "--lcores 16 --conns 16", NULL },
		{ "--lcores 17", "--lcores: \"17\": 1..16" },
		{ "--tls --tls-version 1.1", "--tls-version: \"1.1\": 1.2, 1.3 or any" },
		{ "--tls --tls-ca=", "--tls-ca: empty or too long" },
		{ "--tls --tls-resume=bogus", "--tls-resume=\"bogus\": slot or shared" },
		{ "--tls --tls-records kernel", "--tls-records: \"kernel\": ldapfe or openssl" },
		{ "--flood-ips 10.0.0.64/26 --flood-rate 0", "--flood-rate: \"0\": SYNs per second (> 0) or max" },
		{ "--flood-ips 10.0.0.64/33", "--flood-ips: \"10.0.0.64/33\": want A-B or A/len" },
		{ "--workload synflood --flood-reply ack", "--flood-reply: \"ack\": none or rst" },
		{ "--rx-csum none", "--rx-csum: \"none\": sample or all" },
		{ "--help=x", "unknown option or missing value" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct lfe_gen_opts o;
		char line[1024], err[256] = "";
		snprintf(line, sizeof(line), BASE "%s", c[i].args);
		int rc = parse_line(line, &o, err, sizeof(err));
		if (!c[i].msg)
			CHECK(rc == 0, "opts \"%s\": refused (%s)", c[i].args, err);
		else
			CHECK(rc == -EINVAL && strstr(err, c[i].msg), "opts \"%s\": rc %d, \"%s\", want \"%s\"",
			      c[i].args, rc, err, c[i].msg);
	}
	struct lfe_gen_opts o;
	char err[256];
	CHECK(parse_line(BASE "--users 500 --user-base 7 --seed 42 --arp-timeout-ms 100 "
			 "--connect-timeout-ms 200 --json /tmp/g.json --quiet --binds-per-conn 3 "
			 "--sport-range 3000-3999 --lcores 2 --gateway 10.0.0.254 --wrong-pct 5 --unknown-pct 6",
			 &o, err, sizeof(err)) == 0 && o.users == 500 && o.user_base == 7 && o.seed == 42 &&
	      o.arp_timeout_ms == 100 && o.connect_timeout_ms == 200 && strcmp(o.json, "/tmp/g.json") == 0 &&
	      o.quiet && o.binds_per_conn == 3 && o.sport_lo == 3000 && o.sport_hi == 3999 && o.lcores == 2 &&
	      o.gateway == 0x0a0000fe && o.wrong_pct == 5 && o.unknown_pct == 6, "fields: %s", err);
	CHECK(parse_line(BASE, &o, err, sizeof(err)) == 0 && o.users == 1000 && o.user_base == 0 && o.seed == 1 &&
	      o.arp_timeout_ms == 2000 && o.connect_timeout_ms == 3000 && !o.json[0] && !o.quiet &&
	      o.sport_lo == 10000 && o.sport_hi == 60999 && o.conns == 16 && o.duration_s == 10 &&
	      o.rate == 0 && o.wl == LFE_WL_PERSISTENT && o.gateway == 0, "defaults");
	CHECK(parse_line(BASE "--user-fmt cn=%05u --password-fmt x%u", &o, err, sizeof(err)) == 0 &&
	      strcmp(o.user_fmt, "cn=%05u") == 0 && strcmp(o.pw_fmt, "x%u") == 0, "formats");
	/* The usage lists every option with its value, then the notes. */
	char *u = NULL;
	size_t ulen = 0;
	FILE *f = open_memstream(&u, &ulen);
	CHECK(f != NULL, "open_memstream");
	if (!f)
		return;
	lfe_gen_usage(f);
	fclose(f);
	static const char *const want[] = {
		"usage: ldapfe-gen [EAL args] -- --port VDEV_OR_PCI --src-ip A/prefix --dst-ip B [options]",
		"--gateway G ", "--dport P ", "--workload persistent|session|mix|hold|synflood\n", "--conns N ",
		"--users N ", "--user-base N ", "--user-fmt FMT ", "--password-fmt FMT ", "--wrong-pct P ",
		"--unknown-pct P ", "--rate R|max ", "--duration S ", "--binds-per-conn N ",
		"--dist uniform|zipf:S ", "--sport-range LO-HI ", "--seed N ", "--arp-timeout-ms MS ",
		"--connect-timeout-ms MS ", "--json FILE ", "--quiet ", "--src-ips A-B|A/len ", "--syn-rate R ",
		"--bind-frac F ", "--lcores N ", "--tls ", "--starttls ", "--tls-version 1.2|1.3|any ",
		"--tls-ca FILE ", "--tls-resume[=slot|shared] ", "--tls-records ldapfe|openssl ",
		"--flood-ips A-B|A/len ", "--flood-rate R|max ", "--flood-reply none|rst ", "--rx-csum sample|all ",
		"--help ", "A SYN flood: SYNs from --flood-ips", "A port with checksum offload does both ways",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(u && strstr(u, want[i]), "usage lacks \"%s\":\n%s", want[i], u ? u : "");
	free(u);
#undef BASE
}

/* ---- gen/tuples.c ---- */

/* Every connection's tuples lie in the ranges, map back to it, are
 * distinct across the run, and the first tuples put at most
 * ceil(conns / n_ips) connections on one address: a server's per-source
 * cap sized for an even share must hold them all (the bench's 1M on 64
 * addresses once put 17,000 on each of 59 and was capped at 15,689). */
static void test_tuples(void)
{
	static const struct {
		uint32_t n_ips;
		uint16_t plo, phi;
		uint32_t conns;
	} cases[] = {
		{ 64, 10000, 60999, 1000000 },   /* run-bench.sh LFE_BENCH_HOLD=1000000 */
		{ 32, 10000, 60999, 100000 },    /* test_hold.sh */
		{ 16, 10000, 60999, 100000 },
		{ 1, 10000, 60999, 16 },
		{ 3, 1000, 1009, 30 },           /* exactly one tuple each */
		{ 2, 1, 65535, 1 },              /* per capped at 65535 */
	};
	static uint32_t per_ip[64];
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct lfe_gen_tuples t;
		uint32_t ip_lo = 0x0a000040u, n = cases[c].conns;
		CHECK(lfe_gen_tuples_init(&t, ip_lo, cases[c].n_ips, cases[c].plo, cases[c].phi, n) == 0,
		      "tuples %zu: init", c);
		uint64_t space = (uint64_t)cases[c].n_ips * ((uint32_t)(cases[c].phi - cases[c].plo) + 1u);
		CHECK(t.per >= 1 && t.per <= 65535 && (uint64_t)t.per * n <= space, "tuples %zu: per %u", c, t.per);
		uint8_t *seen = calloc((size_t)(space / 8 + 1), 1);
		memset(per_ip, 0, sizeof(per_ip));
		uint32_t ks = t.per < 4 ? t.per : 4, bad = 0, dup = 0;
		for (uint32_t i = 0; i < n; i++) {
			for (uint32_t k = 0; k < ks; k++) {
				uint32_t ip;
				uint16_t port;
				lfe_gen_tuple(&t, i, k, &ip, &port);
				if (ip < ip_lo || ip - ip_lo >= cases[c].n_ips || port < cases[c].plo ||
				    port > cases[c].phi || lfe_gen_tuple_conn(&t, ip, port) != i) {
					bad++;
					continue;
				}
				uint64_t at = (uint64_t)(port - cases[c].plo) * cases[c].n_ips + (ip - ip_lo);
				if (seen[at / 8] & (1u << (at % 8)))
					dup++;
				seen[at / 8] |= (uint8_t)(1u << (at % 8));
				if (k == 0)
					per_ip[ip - ip_lo]++;
			}
		}
		free(seen);
		CHECK(bad == 0, "tuples %zu: %u tuples out of range or not mapped back", c, bad);
		CHECK(dup == 0, "tuples %zu: %u tuples shared by two connections", c, dup);
		uint32_t most = 0, even = (n + cases[c].n_ips - 1u) / cases[c].n_ips;
		for (uint32_t a = 0; a < cases[c].n_ips; a++)
			most = per_ip[a] > most ? per_ip[a] : most;
		CHECK(most <= even, "tuples %zu: %u connections on one address, even share %u", c, most, even);
		/* Outside the ranges, or past the tuples in use: no owner. */
		CHECK(lfe_gen_tuple_conn(&t, ip_lo - 1u, cases[c].plo) == -1, "tuples %zu: address below", c);
		CHECK(lfe_gen_tuple_conn(&t, ip_lo + cases[c].n_ips, cases[c].plo) == -1, "tuples %zu: address above", c);
		if (cases[c].phi < 65535)
			CHECK(lfe_gen_tuple_conn(&t, ip_lo, (uint16_t)(cases[c].phi + 1u)) == -1, "tuples %zu: port above", c);
		if ((uint64_t)t.per * n < space) {
			uint64_t at = (uint64_t)t.per * n;
			uint32_t ip = ip_lo + (uint32_t)(at % cases[c].n_ips);
			uint16_t port = (uint16_t)(cases[c].plo + at / cases[c].n_ips);
			CHECK(lfe_gen_tuple_conn(&t, ip, port) == -1, "tuples %zu: unused tuple has an owner", c);
		}
	}
	/* The flood walk covers the whole space, address first, and wraps. */
	struct lfe_gen_tuples t;
	uint32_t ip;
	uint16_t port;
	CHECK(lfe_gen_tuples_init(&t, 100, 4, 50, 59, 1) == 0, "flood init");
	lfe_gen_tuple_at(&t, 5, &ip, &port);
	CHECK(ip == 101 && port == 51, "tuple_at 5: %u:%u", ip, port);
	lfe_gen_tuple_at(&t, 40 + 7, &ip, &port);
	CHECK(ip == 103 && port == 51, "tuple_at wraps: %u:%u", ip, port);
	/* Refusals. */
	CHECK(lfe_gen_tuples_init(&t, 1, 0, 1, 2, 1) == -EINVAL, "no addresses");
	CHECK(lfe_gen_tuples_init(&t, 1, 1, 1, 2, 0) == -EINVAL, "no connections");
	CHECK(lfe_gen_tuples_init(&t, 1, 1, 3, 2, 1) == -EINVAL, "ports reversed");
	CHECK(lfe_gen_tuples_init(&t, 1, 2, 1, 2, 5) == -EINVAL, "fewer tuples than connections");
	CHECK(lfe_gen_tuples_init(&t, 0xfffffffeu, 3, 1, 2, 1) == -EINVAL, "addresses wrap");
}

/* ---- received checksums (gen/rxcsum.h) ---- */

/* A server's answer: a TCP segment with 9 bytes of payload, as
 * lfe_net_build_tcp writes it (both checksums right), number i in its seq. */
static size_t rx_frame(uint8_t *f, size_t cap, uint32_t i)
{
	static const uint8_t mac1[LFE_ETH_ALEN] = { 2, 0, 0, 0, 0, 1 }, mac2[LFE_ETH_ALEN] = { 2, 0, 0, 0, 0, 2 };
	static const uint8_t pay[9] = { 0x30, 0x0c, 0x02, 0x01, 0x05, 0x61, 0x07, 0x0a, 0x01 };
	struct lfe_tcp_seg seg = {
		.laddr = 0x0a000001, .raddr = 0x0a000002, .lport = 389, .rport = (uint16_t)(10000 + i % 64),
		.seq = i, .ack = 7, .flags = LFE_TCP_ACK | LFE_TCP_PSH, .win = 512, .wscale = -1,
		.opts = LFE_TCP_OPT_TS, .tsval = i, .tsecr = 3, .payload = pay, .len = sizeof(pay),
	};
	ssize_t n = lfe_net_build_tcp(f, cap, mac1, mac2, &seg, (uint16_t)i);
	return n > 0 ? (size_t)n : 0;
}

/* Frames n of which those with bad(i) have a corrupted TCP (or, tcp false,
 * IPv4) checksum, through one sampler: how many bad ones it found. Every
 * frame it did not drop must parse as TCP with the right seq. */
static uint64_t rx_run(bool all, uint64_t seed, uint32_t n, bool (*bad)(uint32_t, uint32_t, uint32_t),
		       uint32_t p, uint32_t ph, bool tcp, struct lfe_gen_rxcsum_ct *ct)
{
	struct lfe_gen_rxcsum s;
	uint8_t f[256];

	lfe_gen_rxcsum_init(&s, all, seed);
	memset(ct, 0, sizeof(*ct));
	for (uint32_t i = 0; i < n; i++) {
		size_t len = rx_frame(f, sizeof(f), i);
		bool b = bad(i, p, ph);
		if (b)
			f[tcp ? 14 + 20 + 16 : 14 + 10] ^= 0x40;   /* the checksum field */
		struct lfe_net_pkt pkt;
		int kind = lfe_gen_rxcsum_parse(&s, ct, f, len, 0, &pkt);
		if (kind < 0) {
			CHECK(b && kind == -EINVAL && pkt.drop == (tcp ? LFE_DROP_TCP_CSUM : LFE_DROP_IP_CSUM),
			      "rx %u: dropped (%d, drop %d) but %s", i, kind, (int)pkt.drop, b ? "bad" : "good");
		} else {
			CHECK(kind == LFE_NET_TCP && pkt.seg.seq == i && pkt.seg.len == 9, "rx %u: parse", i);
		}
	}
	return ct->bad;
}

static bool bad_none(uint32_t i, uint32_t p, uint32_t ph) { (void)i; (void)p; (void)ph; return false; }
static bool bad_all(uint32_t i, uint32_t p, uint32_t ph) { (void)i; (void)p; (void)ph; return true; }
static bool bad_periodic(uint32_t i, uint32_t p, uint32_t ph) { return i % p == ph; }
static bool bad_one(uint32_t i, uint32_t p, uint32_t ph) { (void)ph; return i == p; }

static void test_rxcsum(void)
{
	struct lfe_gen_rxcsum_ct ct;
	const uint32_t n = 4000;

	CHECK(rx_frame((uint8_t[256]){ 0 }, 256, 0) > 60, "rx frame built");
	/* all: every frame checked, every bad one found, whatever the kind */
	CHECK(rx_run(true, 1, n, bad_none, 0, 0, true, &ct) == 0 && ct.checked == n && ct.port_good == 0,
	      "all, clean: checked %" PRIu64, ct.checked);
	CHECK(rx_run(true, 1, n, bad_periodic, 3, 1, true, &ct) == (n + 1) / 3 && ct.checked == n,
	      "all, every 3rd TCP sum bad: found %" PRIu64, ct.bad);
	CHECK(rx_run(true, 1, n, bad_periodic, 5, 0, false, &ct) == n / 5, "all, IPv4 sums: found %" PRIu64, ct.bad);
	CHECK(rx_run(true, 1, n, bad_one, 1234, 0, true, &ct) == 1, "all, one bad frame found");

	/* sample: about one in 8 checked, the rest parsed without the sums */
	CHECK(rx_run(false, 1, n, bad_none, 0, 0, true, &ct) == 0 && ct.checked > n / 10 && ct.checked < n / 6,
	      "sample, clean: checked %" PRIu64 " of %u", ct.checked, n);
	/* the first frame is always checked: a server whose every sum is
	 * wrong is caught at once, and every checked frame is found bad */
	CHECK(rx_run(false, 1, 1, bad_all, 0, 0, true, &ct) == 1, "sample: the first frame is checked");
	CHECK(rx_run(false, 7, n, bad_all, 0, 0, true, &ct) == ct.checked && ct.bad > n / 10,
	      "sample, all bad: %" PRIu64 " found of %" PRIu64 " checked", ct.bad, ct.checked);
	/* A bad frame that is checked is dropped and counted; one that is not
	 * passes (rx_run checks both): over seeds, the one bad frame is found
	 * about 1 time in 8. */
	unsigned found = 0;
	for (uint64_t seed = 0; seed < 800; seed++)
		found += rx_run(false, seed, 1300, bad_one, 1234, 0, true, &ct) == 1;
	CHECK(found > 60 && found < 150, "sample: a single bad frame found %u times in 800 runs", found);
	/* Deterministic patterns (period 2..16, every phase; a fixed every-8th
	 * sampler would miss 7 phases of 8 at period 8 or 16) are all caught,
	 * each by a good share of its bad frames (more than 1/32), with any
	 * seed, and all together by about 1/8. */
	uint64_t all_found = 0, all_bad = 0;
	for (uint64_t seed = 1; seed <= 3; seed++)
		for (uint32_t p = 2; p <= 16; p++)
			for (uint32_t ph = 0; ph < p; ph++) {
				uint64_t want = (n + p - 1 - ph) / p;
				uint64_t b = rx_run(false, seed, n, bad_periodic, p, ph, p % 2 == 0, &ct);
				CHECK(b > want / 32 && b < want / 2, "sample: period %u phase %u seed %" PRIu64
				      ": found %" PRIu64 " of %" PRIu64, p, ph, seed, b, want);
				all_found += b;
				all_bad += want;
			}
	CHECK(all_found * 10 > all_bad && all_found * 6 < all_bad, "sample: patterns found %" PRIu64 " of %" PRIu64,
	      all_found, all_bad);
	/* the same seed makes the same choices */
	uint64_t c1, c2;
	rx_run(false, 42, n, bad_periodic, 8, 7, true, &ct);
	c1 = ct.bad;
	rx_run(false, 42, n, bad_periodic, 8, 7, true, &ct);
	c2 = ct.bad;
	CHECK(c1 == c2, "sample: deterministic");

	/* The port's verdicts: GOOD on both is trusted (not summed here, even
	 * with all), BAD drops, partial ones leave the sum to us. */
	struct lfe_gen_rxcsum s;
	struct lfe_net_pkt pkt;
	uint8_t f[256];
	size_t len = rx_frame(f, sizeof(f), 9);
	f[14 + 20 + 16] ^= 0x40;
	lfe_gen_rxcsum_init(&s, true, 1);
	memset(&ct, 0, sizeof(ct));
	CHECK(lfe_gen_rxcsum_parse(&s, &ct, f, len, LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_GOOD, &pkt) == LFE_NET_TCP &&
	      ct.port_good == 1 && ct.checked == 0, "port GOOD trusted");
	CHECK(lfe_gen_rxcsum_parse(&s, &ct, f, len, LFE_NET_RX_IP_GOOD, &pkt) == -EINVAL && ct.checked == 1 &&
	      ct.bad == 1, "port IP GOOD only: TCP summed here");
	f[14 + 20 + 16] ^= 0x40;
	CHECK(lfe_gen_rxcsum_parse(&s, &ct, f, len, LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_BAD, &pkt) == -EINVAL &&
	      pkt.drop == LFE_DROP_TCP_CSUM && ct.bad == 2 && ct.checked == 1, "port L4 BAD drops");
	CHECK(lfe_gen_rxcsum_parse(&s, &ct, f, len, LFE_NET_RX_IP_BAD, &pkt) == -EINVAL &&
	      pkt.drop == LFE_DROP_IP_CSUM && ct.bad == 3, "port IP BAD drops");
	/* lengths are checked whatever is skipped */
	lfe_gen_rxcsum_init(&s, false, 1);
	s.skip = 5;
	CHECK(lfe_gen_rxcsum_parse(&s, &ct, f, 40, 0, &pkt) < 0 && s.skip == 4, "unchecked, short frame dropped");
}

int main(void)
{
	test_bind_vectors();
	test_bind_roundtrip();
	test_unbind();
	test_resp_from_server_encoders();
	test_resp_vectors();
	test_bind_resp_match();
	test_hist();
	test_opts();
	test_opts_messages();
	test_pdu();
	test_dist();
	test_tuples();
	test_rxcsum();
	return check_done();
}
