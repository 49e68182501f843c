/* test_msg.c — LDAPMessage framing, decoding and encoding.
 * argv[1]: the directory of recorded client PDUs (tests/ldap/vectors). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/ber.h"
#include "ldap/client.h"
#include "ldap/filter.h"
#include "ldap/msg.h"
#include "tests/check.h"

static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; *h && *h != '\n'; h++) {
		if (*h == ' ')
			continue;
		unsigned v;
		if (sscanf(h, "%2x", &v) != 1 || n == cap)
			abort();
		out[n++] = (uint8_t)v;
		h++;
	}
	return n;
}

static bool bytes_is(struct lfe_bytes b, const char *s)
{
	return b.len == strlen(s) && (b.len == 0 || memcmp(b.p, s, b.len) == 0);
}

static bool bytes_is_hex(struct lfe_bytes b, const char *hex)
{
	uint8_t tmp[256];
	size_t n = unhex(hex, tmp, sizeof tmp);

	return b.len == n && (n == 0 || memcmp(b.p, tmp, n) == 0);
}

/* ---- recorded client PDUs --------------------------------------------- */

#define B "dc=example,dc=com"
#define U "uid=alice,ou=people," B
#define WHOAMI "1.3.6.1.4.1.4203.1.11.3"
#define PAGED "1.2.840.113556.1.4.319"

struct vexp {
	const char *file;
	unsigned idx;
	int op;
	int32_t msgid;
	const char *dn;      /* bind name, search base, write DN or ext OID */
	const char *secret;  /* simple password, SASL mechanism, or search filter
	                      * in RFC 4515 form (checked via to_string) */
	int auth;
	const char *sasl_creds;  /* NULL: absent */
	const char *ext_val_hex; /* NULL: absent */
	int scope, deref, size, time;
	bool types_only;
	const char *attrs;   /* space-separated */
	unsigned n_ctl;
	const char *ctl_oid;
	bool ctl_crit;
	const char *ctl_val_hex;
	int abandon;
};

#define BIND(f, i, id, name, pw) { .file = f, .idx = i, .op = LFE_OP_BIND_REQ, .msgid = id, .dn = name, .secret = pw }
#define UNBIND(f, i, id) { .file = f, .idx = i, .op = LFE_OP_UNBIND_REQ, .msgid = id }
#define EXT(f, i, id, oid, val) { .file = f, .idx = i, .op = LFE_OP_EXT_REQ, .msgid = id, .dn = oid, .ext_val_hex = val }

static const struct vexp vexps[] = {
	BIND("whoami_simple", 0, 1, U, "s3cret!"),
	EXT("whoami_simple", 1, 2, WHOAMI, NULL),
	UNBIND("whoami_simple", 2, 3),
	BIND("whoami_anon", 0, 1, "", ""),
	EXT("whoami_anon", 1, 2, WHOAMI, NULL),
	UNBIND("whoami_anon", 2, 3),
	BIND("search_eq", 0, 1, U, "s3cret"),
	{ .file = "search_eq", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2, .dn = "ou=people," B,
	  .secret = "(uid=alice)", .scope = 2, .attrs = "cn mail" },
	UNBIND("search_eq", 2, 3),
	{ .file = "search_complex", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2, .dn = B,
	  .secret = "(&(objectClass=posixAccount)(|(uid=al*ce)(cn=*Smith))(!(mail=*)))",
	  .scope = 2, .attrs = "uid uidNumber" },
	{ .file = "search_options", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2, .dn = "ou=people," B,
	  .secret = "(uidNumber>=1000)", .scope = 1, .deref = 3, .size = 5, .time = 3,
	  .types_only = true, .attrs = "* +" },
	{ .file = "search_base_rootdse", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2, .dn = "",
	  .secret = "(objectClass=*)", .scope = 0, .attrs = "+ namingContexts" },
	{ .file = "search_ext_approx", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2, .dn = B,
	  .secret = "(|(cn:dn:caseExactMatch:=Foo)(sn~=smyth)(:2.5.13.5:=bar)(gidNumber<=500))",
	  .scope = 2, .attrs = "" },
	{ .file = "search_escaped", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2, .dn = B,
	  .secret = "(cn=a\\2ab\\28c\\29d\\5ce\\00f*g)", .scope = 2, .attrs = "" },
	{ .file = "search_critical_ctl", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2, .dn = B,
	  .secret = "(uid=bob)", .scope = 2, .attrs = "dn", .n_ctl = 1, .ctl_oid = "1.2.3.4",
	  .ctl_crit = true },
	{ .file = "search_paged", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2, .dn = B,
	  .secret = "(objectClass=inetOrgPerson)", .scope = 2, .attrs = "cn", .n_ctl = 1,
	  .ctl_oid = PAGED, .ctl_val_hex = "300502010a0400" },
	{ .file = "write_ops_delete", .idx = 1, .op = LFE_OP_DEL_REQ, .msgid = 2, .dn = "cn=gone," B },
	{ .file = "write_ops_compare", .idx = 1, .op = LFE_OP_COMPARE_REQ, .msgid = 2, .dn = U },
	{ .file = "write_ops_modrdn", .idx = 1, .op = LFE_OP_MODDN_REQ, .msgid = 2, .dn = "cn=old," B },
	BIND("exop_passwd", 0, 1, U, "old"),
	EXT("exop_passwd", 1, 2, "1.3.6.1.4.1.4203.1.11.1", "300582036e6577"),
	BIND("ldap3_bind_search", 0, 1, U, "p\xc3\xa4ssword"),
	{ .file = "ldap3_bind_search", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2,
	  .dn = "ou=people," B, .secret = "(&(uid=alice)(objectClass=person))", .scope = 2,
	  .deref = 3, .attrs = "cn mail memberOf" },
	EXT("ldap3_bind_search", 2, 3, WHOAMI, NULL),
	UNBIND("ldap3_bind_search", 3, 4),
	BIND("ldap3_paged_abandon", 0, 1, "", ""),
	{ .file = "ldap3_paged_abandon", .idx = 1, .op = LFE_OP_SEARCH_REQ, .msgid = 2, .dn = B,
	  .secret = "(sn=*mit*)", .scope = 1, .deref = 3, .size = 100, .types_only = true,
	  .attrs = "1.1", .n_ctl = 1, .ctl_oid = PAGED, .ctl_val_hex = "3005020119 0400" },
	{ .file = "ldap3_paged_abandon", .idx = 2, .op = LFE_OP_SEARCH_REQ, .msgid = 3, .dn = B,
	  .secret = "(cn=noreply)", .scope = 2, .deref = 3, .attrs = "1.1" },
	{ .file = "ldap3_paged_abandon", .idx = 3, .op = LFE_OP_ABANDON_REQ, .msgid = 4, .abandon = 3 },
	UNBIND("ldap3_paged_abandon", 4, 5),
	{ .file = "ldap3_sasl_plain", .idx = 0, .op = LFE_OP_BIND_REQ, .msgid = 1, .dn = "",
	  .secret = "PLAIN", .auth = LFE_AUTH_SASL, .sasl_creds = "00616c69636500736563726574" },
	UNBIND("ldap3_sasl_plain", 1, 2),
	{ .file = "ldap3_sasl_external", .idx = 0, .op = LFE_OP_BIND_REQ, .msgid = 1, .dn = "",
	  .secret = "EXTERNAL", .auth = LFE_AUTH_SASL },
	BIND("ldap3_add_modify", 0, 1, "cn=admin," B, "x"),
	{ .file = "ldap3_add_modify", .idx = 1, .op = LFE_OP_ADD_REQ, .msgid = 2, .dn = "uid=new,ou=people," B },
	{ .file = "ldap3_add_modify", .idx = 2, .op = LFE_OP_MODIFY_REQ, .msgid = 3, .dn = U },
	UNBIND("ldap3_add_modify", 3, 4),
};

#define MAX_PDUS 16
struct session_file {
	size_t n;
	size_t len[MAX_PDUS];
	uint8_t pdu[MAX_PDUS][512];
};

static bool load(const char *dir, const char *name, struct session_file *sf)
{
	char path[512], line[2048];
	snprintf(path, sizeof path, "%s/%s.hex", dir, name);
	FILE *f = fopen(path, "r");

	sf->n = 0;
	if (!f)
		return false;
	while (sf->n < MAX_PDUS && fgets(line, sizeof line, f)) {
		sf->len[sf->n] = unhex(line, sf->pdu[sf->n], sizeof sf->pdu[0]);
		sf->n++;
	}
	fclose(f);
	return sf->n > 0;
}

static void join_attrs(const struct lfe_search_req *s, char *out, size_t cap)
{
	size_t o = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < s->n_attrs; i++)
		o += (size_t)snprintf(out + o, cap - o, "%s%.*s", i ? " " : "",
				      (int)s->attrs[i].len, (const char *)s->attrs[i].p);
}

/* The response ldapfe would send, checked against a template written out
 * by hand (msgid < 128): 30 0c 02 01 ID TAG 07 0a 01 RC 04 00 04 00. */
static void check_reencode(const char *what, int32_t msgid, enum lfe_ldap_op op, int code)
{
	uint8_t out[64];
	uint8_t want[14] = { 0x30, 0x0c, 0x02, 0x01, (uint8_t)msgid,
			     (uint8_t)(0x60 | op), 0x07, 0x0a, 0x01, (uint8_t)code,
			     0x04, 0x00, 0x04, 0x00 };
	struct lfe_ldap_result r = { .code = (enum lfe_ldap_rc)code };
	ssize_t n = op == LFE_OP_EXT_RESP
		? lfe_ldap_enc_ext_resp(out, sizeof out, msgid, &r, NULL, NULL)
		: lfe_ldap_enc_result(out, sizeof out, msgid, op, &r);

	CHECK(n == 14 && memcmp(out, want, 14) == 0, "%s: re-encoded response", what);
}

/* Results without matched DN or message (every bind answer) at msgids on
 * each side of a length step: the bytes X.690 gives (INTEGER in the fewest
 * two's complement octets), and -ENOSPC at every room short of them. */
static void test_plain_results(void)
{
	static const int32_t ids[] = { 0, 1, 127, 128, 255, 256, 32767, 32768, 8388607, 8388608,
				       INT32_MAX };
	static const enum lfe_ldap_op ops[] = { LFE_OP_BIND_RESP, LFE_OP_SEARCH_DONE, LFE_OP_DEL_RESP };
	static const int codes[] = { 0, 49, 127 };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		uint8_t id[5];
		size_t n = 0;
		uint32_t v = (uint32_t)ids[i];
		/* big-endian, then drop leading octets while the next keeps the sign */
		for (int k = 3; k >= 0; k--)
			id[n++] = (uint8_t)(v >> (8 * k));
		size_t skip = 0;
		while (skip < 3 && id[skip] == 0 && !(id[skip + 1] & 0x80))
			skip++;
		for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
			for (size_t c = 0; c < sizeof codes / sizeof codes[0]; c++) {
				uint8_t want[32], out[32];
				size_t w = 0, idn = n - skip;
				want[w++] = 0x30;
				want[w++] = (uint8_t)(2 + idn + 9);
				want[w++] = 0x02;
				want[w++] = (uint8_t)idn;
				memcpy(want + w, id + skip, idn);
				w += idn;
				const uint8_t rest[] = { (uint8_t)(0x60 | ops[o]), 0x07, 0x0a, 0x01,
							 (uint8_t)codes[c], 0x04, 0x00, 0x04, 0x00 };
				memcpy(want + w, rest, sizeof rest);
				w += sizeof rest;
				struct lfe_ldap_result r = { .code = (enum lfe_ldap_rc)codes[c] };
				ssize_t got = lfe_ldap_enc_result(out, sizeof out, ids[i], ops[o], &r);
				CHECK(got == (ssize_t)w && memcmp(out, want, w) == 0, "plain result msgid %d",
				      (int)ids[i]);
				for (size_t cap = 0; cap < w; cap++)
					CHECK(lfe_ldap_enc_result(out, cap, ids[i], ops[o], &r) == -ENOSPC,
					      "plain result, room %zu", cap);
			}
		}
	}
}

static void check_vector(const struct vexp *e, const uint8_t *pdu, size_t len)
{
	struct lfe_ldap_msg m;
	char what[64], buf[512];
	size_t pl = 0;

	snprintf(what, sizeof what, "%s[%u]", e->file, e->idx);
	CHECK(lfe_ldap_frame(pdu, len, LFE_LDAP_DEFAULT_MAX_PDU, &pl) == 0 && pl == len,
	      "%s: frame", what);
	int rc = lfe_ldap_decode(pdu, len, &m);
	CHECK(rc == 0, "%s: decode rc %d", what, rc);
	if (rc)
		return;
	CHECK((int)m.op == e->op, "%s: op %d", what, m.op);
	CHECK(m.msgid == e->msgid, "%s: msgid %d", what, m.msgid);
	CHECK(m.n_controls == e->n_ctl, "%s: %u controls", what, m.n_controls);
	if (e->n_ctl) {
		CHECK(bytes_is(m.controls[0].oid, e->ctl_oid), "%s: control oid", what);
		CHECK(m.controls[0].critical == e->ctl_crit, "%s: criticality", what);
		CHECK(m.controls[0].has_value == (e->ctl_val_hex != NULL), "%s: ctl value", what);
		if (e->ctl_val_hex)
			CHECK(bytes_is_hex(m.controls[0].value, e->ctl_val_hex), "%s: ctl value", what);
	}
	switch (m.op) {
	case LFE_OP_BIND_REQ: {
		const struct lfe_bind_req *b = &m.u.bind;
		CHECK(b->version == 3, "%s: version", what);
		CHECK(bytes_is(b->name, e->dn), "%s: name", what);
		CHECK((int)b->auth == e->auth, "%s: auth", what);
		if (b->auth == LFE_AUTH_SIMPLE) {
			CHECK(bytes_is(b->simple, e->secret), "%s: password", what);
		} else {
			CHECK(bytes_is(b->sasl_mech, e->secret), "%s: mechanism", what);
			CHECK(b->has_sasl_creds == (e->sasl_creds != NULL), "%s: creds", what);
			if (e->sasl_creds)
				CHECK(bytes_is_hex(b->sasl_creds, e->sasl_creds), "%s: creds", what);
		}
		check_reencode(what, m.msgid, LFE_OP_BIND_RESP, LFE_RC_SUCCESS);
		break;
	}
	case LFE_OP_SEARCH_REQ: {
		const struct lfe_search_req *s = &m.u.search;
		CHECK(bytes_is(s->base, e->dn), "%s: base", what);
		CHECK((int)s->scope == e->scope && s->deref == e->deref, "%s: scope/deref", what);
		CHECK(s->size_limit == e->size && s->time_limit == e->time, "%s: limits", what);
		CHECK(s->types_only == e->types_only, "%s: typesOnly", what);
		ssize_t n = lfe_filter_to_string(s->filter.p, s->filter.len, buf, sizeof buf);
		CHECK(n > 0 && strcmp(buf, e->secret) == 0, "%s: filter %s", what, buf);
		join_attrs(s, buf, sizeof buf);
		CHECK(strcmp(buf, e->attrs) == 0, "%s: attrs '%s'", what, buf);
		check_reencode(what, m.msgid, LFE_OP_SEARCH_DONE, LFE_RC_SUCCESS);
		break;
	}
	case LFE_OP_EXT_REQ:
		CHECK(bytes_is(m.u.ext.oid, e->dn), "%s: ext oid", what);
		CHECK(m.u.ext.has_value == (e->ext_val_hex != NULL), "%s: ext value", what);
		if (e->ext_val_hex)
			CHECK(bytes_is_hex(m.u.ext.value, e->ext_val_hex), "%s: ext value", what);
		check_reencode(what, m.msgid, LFE_OP_EXT_RESP, LFE_RC_UNWILLING_TO_PERFORM);
		break;
	case LFE_OP_ABANDON_REQ:
		CHECK(m.u.abandon_id == e->abandon, "%s: abandon id", what);
		break;
	case LFE_OP_DEL_REQ:
	case LFE_OP_MODIFY_REQ:
	case LFE_OP_ADD_REQ:
	case LFE_OP_MODDN_REQ:
	case LFE_OP_COMPARE_REQ:
		CHECK(bytes_is(m.u.write.dn, e->dn), "%s: dn", what);
		check_reencode(what, m.msgid, (enum lfe_ldap_op)(m.op + 1), LFE_RC_UNWILLING_TO_PERFORM);
		break;
	default:
		break;
	}
}

/* Framing over a whole recorded session: all PDUs back to back in one
 * buffer, then the stream cut at every offset. Every strict prefix of a
 * PDU fails to decode. */
static void check_stream(const char *name, const struct session_file *sf)
{
	uint8_t stream[4096];
	size_t total = 0;
	struct lfe_ldap_msg m;

	for (size_t i = 0; i < sf->n; i++) {
		memcpy(stream + total, sf->pdu[i], sf->len[i]);
		total += sf->len[i];
	}
	size_t off = 0;
	for (size_t i = 0; i < sf->n; i++) {
		size_t pl = 0;
		int rc = lfe_ldap_frame(stream + off, total - off, LFE_LDAP_DEFAULT_MAX_PDU, &pl);
		CHECK(rc == 0 && pl == sf->len[i], "%s: pdu %zu framed in stream", name, i);
		CHECK(lfe_ldap_decode(stream + off, pl, &m) == 0, "%s: pdu %zu decodes", name, i);
		off += pl;
	}
	CHECK(off == total, "%s: stream consumed", name);
	for (size_t i = 0; i < sf->n; i++) {
		const uint8_t *p = sf->pdu[i];
		size_t len = sf->len[i];
		size_t hdr = p[1] < 0x80 ? 2 : 2 + (p[1] & 0x7f);
		for (size_t cut = 0; cut < len; cut++) {
			size_t pl = 99;
			int rc = lfe_ldap_frame(p, cut, LFE_LDAP_DEFAULT_MAX_PDU, &pl);
			CHECK(rc == -EAGAIN && pl == (cut >= hdr ? len : 0),
			      "%s: pdu %zu cut %zu: rc %d pl %zu", name, i, cut, rc, pl);
			rc = lfe_ldap_decode(p, cut, &m);
			CHECK(rc == -EBADMSG, "%s: pdu %zu prefix %zu decodes: %d", name, i, cut, rc);
		}
		/* Too small a limit is refused as soon as the header is read. */
		size_t pl;
		CHECK(lfe_ldap_frame(p, hdr, len - 1, &pl) == -EMSGSIZE, "%s: limit", name);
	}
}

static void test_vectors(const char *dir)
{
	struct session_file sf;
	const char *loaded = "";
	size_t files = 0;

	for (size_t i = 0; i < sizeof vexps / sizeof vexps[0]; i++) {
		const struct vexp *e = &vexps[i];
		if (strcmp(loaded, e->file) != 0) {
			CHECK(load(dir, e->file, &sf), "cannot load %s", e->file);
			loaded = e->file;
			check_stream(e->file, &sf);
			files++;
		}
		CHECK(e->idx < sf.n, "%s: no PDU %u", e->file, e->idx);
		if (e->idx < sf.n)
			check_vector(e, sf.pdu[e->idx], sf.len[e->idx]);
	}
	printf("test_msg: %zu recorded PDUs checked from %zu sessions\n",
	       sizeof vexps / sizeof vexps[0], files);
}

/* ---- hand-made valid and invalid messages ----------------------------- */

struct mcase {
	const char *name;
	const char *hex;
	int rc;
	int32_t msgid;   /* expected m.msgid, also on error */
};

static const struct mcase mcases[] = {
	{ "bind ok", "300c020101 6007 020103 0400 8000", 0, 1 },
	{ "bind version 0", "300c020101 6007 020100 0400 8000", -EBADMSG, 1 },
	{ "bind version 128", "300d020101 6008 02020080 0400 8000", -EBADMSG, 1 },
	{ "bind auth [1] reserved", "300c020101 6007 020103 0400 8100", -EBADMSG, 1 },
	{ "bind trailing element", "300e020101 6009 020103 0400 8000 0400", -EBADMSG, 1 },
	{ "bind constructed name", "300c020101 6007 020103 2400 8000", -EBADMSG, 1 },
	{ "bind no auth", "300a020101 6005 020103 0400", -EBADMSG, 1 },
	{ "sasl extra element", "3013020101 600e 020103 0400 a307 040158 0400 0400", -EBADMSG, 1 },
	{ "sasl mech wrong tag", "300f020101 600a 020103 0400 a303 800158", -EBADMSG, 1 },
	{ "bind primitive 0x40", "300c020101 4007 020103 0400 8000", -EBADMSG, 1 },
	{ "unbind with content", "3006020101 420100", -EBADMSG, 1 },
	{ "unbind constructed", "3005020101 6200", -EBADMSG, 1 },
	{ "msgid -1", "30050201ff 4200", -EBADMSG, -1 },
	{ "msgid 2^31", "3009 02050080000000 4200", -EBADMSG, -1 },
	{ "msgid non-minimal", "3006 02020001 4200", -EBADMSG, -1 },
	{ "msgid 2^31-1", "3008 02047fffffff 4200", 0, 2147483647 },
	{ "msgid 0", "3005 020100 4200", 0, 0 },
	{ "msgid as enumerated", "3005 0a0101 4200", -EBADMSG, -1 },
	{ "response from client", "300c020101 6107 0a0100 0400 0400", -EBADMSG, 1 },
	{ "search entry from client", "3009020101 6404 0400 3000", -EBADMSG, 1 },
	{ "intermediate from client", "3005020101 7900", -EBADMSG, 1 },
	{ "bytes after message", "3005020101 4200 00", -EBADMSG, -1 },
	{ "element after op", "3007020101 4200 0400", -EBADMSG, 1 },
	{ "controls [1]", "3007020101 4200 a100", -EBADMSG, 1 },
	{ "controls empty", "3007020101 4200 a000", 0, 1 },
	{ "controls primitive [0]", "3007020101 4200 8000", -EBADMSG, 1 },
	{ "control explicit FALSE", "3013020101 4200 a00c 300a 0405312e322e33 010100", 0, 1 },
	{ "control bool 0x01", "3013020101 4200 a00c 300a 0405312e322e33 010101", -EBADMSG, 1 },
	{ "control oid not numeric", "300e020101 4200 a007 3005 0403616263", -EBADMSG, 1 },
	{ "control oid leading zero", "300f020101 4200 a008 3006 0404312e3032", -EBADMSG, 1 },
	{ "control oid trailing dot", "300f020101 4200 a008 3006 0404312e322e", -EBADMSG, 1 },
	{ "control value then bool", "3011020101 4200 a00a 3008 040131 0400 0101ff", -EBADMSG, 1 },
	{ "control empty seq", "3009020101 4200 a002 3000", -EBADMSG, 1 },
	{ "controls then more", "3009020101 4200 a000 0400", -EBADMSG, 1 },
	{ "search ok", "301b020102 6316 0400 0a0102 0a0100 020100 020100 010100 870161 3000", 0, 2 },
	{ "search scope 3", "301b020102 6316 0400 0a0103 0a0100 020100 020100 010100 870161 3000", -EBADMSG, 2 },
	{ "search deref 4", "301b020102 6316 0400 0a0102 0a0104 020100 020100 010100 870161 3000", -EBADMSG, 2 },
	{ "search scope as int", "301b020102 6316 0400 020102 0a0100 020100 020100 010100 870161 3000", -EBADMSG, 2 },
	{ "search sizelimit -1", "301b020102 6316 0400 0a0102 0a0100 0201ff 020100 010100 870161 3000", -EBADMSG, 2 },
	{ "search timelimit -1", "301b020102 6316 0400 0a0102 0a0100 020100 0201ff 010100 870161 3000", -EBADMSG, 2 },
	{ "search typesOnly 0x01", "301b020102 6316 0400 0a0102 0a0100 020100 020100 010101 870161 3000", -EBADMSG, 2 },
	{ "search filter bad tag", "301b020102 6316 0400 0a0102 0a0100 020100 020100 010100 8a0161 3000", -EBADMSG, 2 },
	{ "search filter empty desc", "301a020102 6315 0400 0a0102 0a0100 020100 020100 010100 8700 3000", -EBADMSG, 2 },
	{ "search filter (&) RFC 4526", "301a020102 6315 0400 0a0102 0a0100 020100 020100 010100 a000 3000", 0, 2 },
	{ "search attrs as SET", "301b020102 6316 0400 0a0102 0a0100 020100 020100 010100 870161 3100", -EBADMSG, 2 },
	{ "search attrs missing", "3019020102 6314 0400 0a0102 0a0100 020100 020100 010100 870161", -EBADMSG, 2 },
	{ "search attr wrong tag", "301d020102 6318 0400 0a0102 0a0100 020100 020100 010100 870161 3002 0500", -EBADMSG, 2 },
	{ "search extra element", "301d020102 6318 0400 0a0102 0a0100 020100 020100 010100 870161 3000 0400", -EBADMSG, 2 },
	{ "ext ok", "300c020101 7707 8005312e332e36", 0, 1 },
	{ "ext with value", "300e020101 7709 8005312e332e36 8100", 0, 1 },
	{ "ext oid as 0x04", "300c020101 7707 0405312e332e36", -EBADMSG, 1 },
	{ "ext empty oid", "3007020101 7702 8000", -EBADMSG, 1 },
	{ "ext value wrong tag", "300e020101 7709 8005312e332e36 8200", -EBADMSG, 1 },
	{ "ext two values", "3010020101 770b 8005312e332e36 8100 8100", -EBADMSG, 1 },
	{ "abandon ok", "3006020101 500105", 0, 1 },
	{ "abandon negative", "3006020101 5001ff", -EBADMSG, 1 },
	{ "abandon empty", "3005020101 5000", -EBADMSG, 1 },
	{ "abandon constructed", "3008020101 7003 020105", -EBADMSG, 1 },
	{ "delete ok", "3007020101 4a02 6161", 0, 1 },
	{ "delete constructed", "3009020101 6a04 04026161", -EBADMSG, 1 },
	{ "modify DN only", "3009020101 6604 04026161", -EBADMSG, 1 },
	{ "modify child overruns", "300b020101 6606 04026161 3002", -EBADMSG, 1 },
	{ "modify ok shape", "300b020101 6606 04026161 3000", 0, 1 },
	{ "compare DN not octets", "300a020101 6e05 020161 3000", -EBADMSG, 1 },
	{ "not a SEQUENCE", "3105020101 4200", -EBADMSG, -1 },
	{ "empty SEQUENCE", "3000", -EBADMSG, -1 },
	{ "msgid only", "3003020101", -EBADMSG, 1 },
	{ "indefinite message", "3080020101 4200 0000", -EBADMSG, -1 },
	{ "non-minimal message length read", "308105020101 4200", 0, 1 },
	{ "4-octet message length read", "30840000 0005 020101 4200", 0, 1 },
};

static void test_mcases(void)
{
	uint8_t buf[512];
	struct lfe_ldap_msg m;
	size_t n_cases = sizeof mcases / sizeof mcases[0];

	for (size_t i = 0; i < n_cases; i++) {
		const struct mcase *c = &mcases[i];
		size_t n = unhex(c->hex, buf, sizeof buf);
		int rc = lfe_ldap_decode(buf, n, &m);
		CHECK(rc == c->rc, "%s: rc %d want %d", c->name, rc, c->rc);
		CHECK(m.msgid == c->msgid, "%s: msgid %d want %d", c->name, m.msgid, c->msgid);
	}
	printf("test_msg: %zu hand-made message cases\n", n_cases);
}

/* Element-count limits, built with the writer: exactly at the bound
 * decodes, one past it is -E2BIG. */
static ssize_t build_search_attrs(uint8_t *out, size_t cap, unsigned n_attrs, unsigned n_ctl)
{
	struct lfe_berw w;

	lfe_berw_init(&w, out, cap);
	if (n_ctl) {
		size_t mc = lfe_berw_mark(&w);
		for (unsigned i = 0; i < n_ctl; i++) {
			size_t m1 = lfe_berw_mark(&w);
			lfe_berw_octets(&w, LFE_BER_OCTETS, "1.2.3", 5);
			lfe_berw_wrap(&w, LFE_BER_SEQUENCE, m1);
		}
		lfe_berw_wrap(&w, LFE_BER_CTX_CONS(0), mc);
	}
	size_t mo = lfe_berw_mark(&w);
	size_t ma = lfe_berw_mark(&w);
	for (unsigned i = 0; i < n_attrs; i++)
		lfe_berw_octets(&w, LFE_BER_OCTETS, "cn", 2);
	lfe_berw_wrap(&w, LFE_BER_SEQUENCE, ma);
	lfe_berw_octets(&w, LFE_BER_CTX(7), "cn", 2);
	lfe_berw_bool(&w, LFE_BER_BOOLEAN, false);
	lfe_berw_int(&w, LFE_BER_INTEGER, 0);
	lfe_berw_int(&w, LFE_BER_INTEGER, 0);
	lfe_berw_int(&w, LFE_BER_ENUMERATED, 0);
	lfe_berw_int(&w, LFE_BER_ENUMERATED, 2);
	lfe_berw_octets(&w, LFE_BER_OCTETS, "", 0);
	lfe_berw_wrap(&w, LFE_BER_APP_CONS(LFE_OP_SEARCH_REQ), mo);
	lfe_berw_int(&w, LFE_BER_INTEGER, 9);
	lfe_berw_wrap(&w, LFE_BER_SEQUENCE, 0);
	return lfe_berw_finish(&w);
}

static void test_limits(void)
{
	uint8_t buf[2048];
	struct lfe_ldap_msg m;
	static const struct {
		unsigned attrs, ctls;
		int rc;
	} t[] = {
		{ LFE_LDAP_MAX_ATTRS, 0, 0 },
		{ LFE_LDAP_MAX_ATTRS + 1, 0, -E2BIG },
		{ 1, LFE_LDAP_MAX_CONTROLS, 0 },
		{ 1, LFE_LDAP_MAX_CONTROLS + 1, -E2BIG },
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		ssize_t n = build_search_attrs(buf, sizeof buf, t[i].attrs, t[i].ctls);
		CHECK(n > 0, "build %zu", i);
		int rc = lfe_ldap_decode(buf, (size_t)n, &m);
		CHECK(rc == t[i].rc, "limits %u attrs %u ctls: rc %d", t[i].attrs, t[i].ctls, rc);
		if (rc == 0)
			CHECK(m.u.search.n_attrs == t[i].attrs && m.n_controls == t[i].ctls,
			      "limits %zu counts", i);
		CHECK(m.msgid == 9, "limits msgid");
	}
	/* A declared length over the limit is refused from the header alone. */
	static const uint8_t big[] = { 0x30, 0x83, 0x01, 0x00, 0x00 };
	size_t pl = 0;
	CHECK(lfe_ldap_frame(big, sizeof big, LFE_LDAP_DEFAULT_MAX_PDU, &pl) == -EMSGSIZE, "oversize");
	CHECK(lfe_ldap_frame(big, 2, LFE_LDAP_DEFAULT_MAX_PDU, &pl) == -EAGAIN && pl == 0, "oversize partial hdr");
	static const uint8_t nonmin[] = { 0x30, 0x83, 0x00, 0xff, 0xfc };
	CHECK(lfe_ldap_frame(nonmin, sizeof nonmin, LFE_LDAP_DEFAULT_MAX_PDU, &pl) == -EMSGSIZE,
	      "non-minimal 3-octet length over the limit");
	static const uint8_t lim[] = { 0x30, 0x82, 0xff, 0xfc };  /* 4 + 65532 = 65536 */
	CHECK(lfe_ldap_frame(lim, sizeof lim, LFE_LDAP_DEFAULT_MAX_PDU, &pl) == -EAGAIN &&
	      pl == 65536, "exactly max_pdu is accepted");
	static const uint8_t over[] = { 0x30, 0x82, 0xff, 0xfd };
	CHECK(lfe_ldap_frame(over, sizeof over, LFE_LDAP_DEFAULT_MAX_PDU, &pl) == -EMSGSIZE,
	      "max_pdu + 1 refused");
	static const uint8_t notseq[] = { 0x04, 0x00 };
	CHECK(lfe_ldap_frame(notseq, 2, LFE_LDAP_DEFAULT_MAX_PDU, &pl) == -EBADMSG, "frame tag");
	static const uint8_t indef[] = { 0x30, 0x80 };
	CHECK(lfe_ldap_frame(indef, 2, LFE_LDAP_DEFAULT_MAX_PDU, &pl) == -EBADMSG, "frame indef");
	CHECK(lfe_ldap_frame(indef, 0, LFE_LDAP_DEFAULT_MAX_PDU, &pl) == -EAGAIN, "frame empty");
}

/* ---- encoders ------------------------------------------------------------ */

struct ecase {
	const char *name;
	const char *want;
	ssize_t (*enc)(uint8_t *out, size_t cap);
};

static ssize_t e_bind_ok(uint8_t *o, size_t c)
{
	struct lfe_ldap_result r = { .code = LFE_RC_SUCCESS };
	return lfe_ldap_enc_result(o, c, 1, LFE_OP_BIND_RESP, &r);
}

static ssize_t e_search_done(uint8_t *o, size_t c)
{
	struct lfe_ldap_result r = { .code = LFE_RC_NO_SUCH_OBJECT,
				     .matched_dn = { (const uint8_t *)"dc=x", 4 },
				     .diag = { (const uint8_t *)"no", 2 } };
	return lfe_ldap_enc_result(o, c, 2, LFE_OP_SEARCH_DONE, &r);
}

static ssize_t e_notice(uint8_t *o, size_t c)
{
	return lfe_ldap_enc_notice_of_disconnection(o, c, LFE_RC_PROTOCOL_ERROR, "bad");
}

static ssize_t e_whoami(uint8_t *o, size_t c)
{
	struct lfe_ldap_result r = { .code = LFE_RC_SUCCESS };
	struct lfe_bytes v = { (const uint8_t *)"dn:uid=a", 8 };
	return lfe_ldap_enc_ext_resp(o, c, 3, &r, NULL, &v);
}

static ssize_t e_ext_oid(uint8_t *o, size_t c)
{
	struct lfe_ldap_result r = { .code = LFE_RC_UNWILLING_TO_PERFORM,
				     .diag = { (const uint8_t *)"x", 1 } };
	struct lfe_bytes oid = { (const uint8_t *)"1.2.3", 5 }, v = { NULL, 0 };
	return lfe_ldap_enc_ext_resp(o, c, 128, &r, &oid, &v);
}

static ssize_t e_entry(uint8_t *o, size_t c)
{
	static const struct lfe_bytes cn[] = { { (const uint8_t *)"A", 1 }, { (const uint8_t *)"B", 1 } };
	const struct lfe_ldap_attr a[] = {
		{ { (const uint8_t *)"cn", 2 }, 2, cn },
		{ { (const uint8_t *)"mail", 4 }, 0, NULL },
	};
	return lfe_ldap_enc_search_entry(o, c, 2, (struct lfe_bytes){ (const uint8_t *)"uid=a,dc=x", 10 },
					 a, 2);
}

static ssize_t e_entry_empty(uint8_t *o, size_t c)
{
	return lfe_ldap_enc_search_entry(o, c, 5, (struct lfe_bytes){ NULL, 0 }, NULL, 0);
}

static ssize_t e_long_diag(uint8_t *o, size_t c)
{
	static uint8_t d[200];
	memset(d, 'd', sizeof d);
	struct lfe_ldap_result r = { .code = LFE_RC_UNWILLING_TO_PERFORM, .diag = { d, sizeof d } };
	return lfe_ldap_enc_result(o, c, INT32_MAX, LFE_OP_DEL_RESP, &r);
}

static const struct ecase ecases[] = {
	{ "bind success", "300c02010161070a010004000400", e_bind_ok },
	{ "search done", "3012020102650d0a0120040464633d7804026e6f", e_search_done },
	{ "notice of disconnection",
	  "302702010078220a0102040004036261648a16312e332e362e312e342e312e313436362e3230303336", e_notice },
	{ "whoami response", "301602010378110a0100040004008b08646e3a7569643d61", e_whoami },
	{ "ext oid, empty value, msgid 128", "30170202008078110a013504000401788a05312e322e338b00", e_ext_oid },
	{ "search entry", "302b0201026426040a7569643d612c64633d783018300c0402636e3106040141040142"
			  "300804046d61696c3100", e_entry },
	{ "search entry no attrs", "3009020105640404003000", e_entry_empty },
	{ "long diag, max msgid", "3081d902047fffffff6b81d00a013504000481c8", e_long_diag },
};

static void test_encoders(void)
{
	uint8_t out[512], want[512];

	for (size_t i = 0; i < sizeof ecases / sizeof ecases[0]; i++) {
		const struct ecase *e = &ecases[i];
		size_t wn = unhex(e->want, want, sizeof want);
		ssize_t n = e->enc(out, sizeof out);
		/* The last case lists only its prefix: 200 'd's follow. */
		bool prefix_only = n > (ssize_t)wn && i == sizeof ecases / sizeof ecases[0] - 1;
		CHECK(n > 0 && (n == (ssize_t)wn || prefix_only) && memcmp(out, want, wn) == 0,
		      "%s: %zd bytes", e->name, n);
		if (n <= 0)
			continue;
		if (prefix_only)
			CHECK(n == (ssize_t)wn + 200 && out[n - 1] == 'd', "%s: tail", e->name);
		/* Every shorter capacity is -ENOSPC. */
		for (size_t cap = 0; cap < (size_t)n; cap++)
			CHECK(e->enc(out, cap) == -ENOSPC, "%s: cap %zu", e->name, cap);
	}
	struct lfe_ldap_result r = { .code = LFE_RC_SUCCESS };
	CHECK(lfe_ldap_enc_result(out, sizeof out, -1, LFE_OP_BIND_RESP, &r) == -EINVAL, "msgid -1");
	CHECK(lfe_ldap_enc_result(out, sizeof out, 1, LFE_OP_BIND_REQ, &r) == -EINVAL, "request op");
	CHECK(lfe_ldap_enc_result(out, sizeof out, 1, LFE_OP_EXT_RESP, &r) == -EINVAL, "ext via result");
}

/* lfe_ldap_peek_bind against the decoder: every slice it gives is the
 * decoder's, and it never reads outside the buffer (ASan). */
static void peek_vs_decode(const uint8_t *p, size_t len, bool want_ok)
{
	struct lfe_bytes dn, pw;
	int rc = lfe_ldap_peek_bind(p, len, &dn, &pw);
	if (want_ok)
		CHECK(rc == 0, "peek of a plain bind (%zu bytes)", len);
	if (rc != 0)
		return;
	CHECK(dn.p >= p && dn.p + dn.len <= p + len && pw.p >= p && pw.p + pw.len <= p + len,
	      "peek slices inside the buffer");
	size_t total = 0;
	struct lfe_ldap_msg m;
	if (lfe_ldap_frame(p, len, SIZE_MAX, &total) != 0 || lfe_ldap_decode(p, total, &m) != 0)
		return;   /* the decoder refuses what the peek let by: a hint never used */
	CHECK(m.op == LFE_OP_BIND_REQ && m.u.bind.version == 3 && m.u.bind.auth == LFE_AUTH_SIMPLE &&
	      m.n_controls == 0 && m.u.bind.name.p == dn.p && m.u.bind.name.len == dn.len &&
	      m.u.bind.simple.p == pw.p && m.u.bind.simple.len == pw.len,
	      "peek and decoder differ (%zu bytes)", len);
}

static void test_peek_bind(void)
{
	static uint8_t buf[80000], dn[70000], pw[400];
	static const size_t dls[] = { 0, 1, 44, 116, 117, 127, 128, 255, 256, 1000, 65535, 65536, 69000 };
	static const size_t pls[] = { 0, 1, 9, 127, 128, 300 };
	static const int32_t ids[] = { 1, 127, 128, 65536, INT32_MAX };

	for (size_t i = 0; i < sizeof dn; i++)
		dn[i] = (uint8_t)('a' + i % 26);
	for (size_t i = 0; i < sizeof pw; i++)
		pw[i] = (uint8_t)(i * 31);
	for (size_t a = 0; a < sizeof dls / sizeof dls[0]; a++)
		for (size_t b = 0; b < sizeof pls / sizeof pls[0]; b++)
			for (size_t c = 0; c < sizeof ids / sizeof ids[0]; c++) {
				ssize_t n = lfe_ldap_enc_bind_req(buf, sizeof buf, ids[c], dn, dls[a], pw, pls[b]);
				CHECK(n > 0, "encode");
				if (n <= 0)
					continue;
				peek_vs_decode(buf, (size_t)n, true);
				struct lfe_bytes d, q;
				CHECK(lfe_ldap_peek_bind(buf, (size_t)n, &d, &q) == 0 && d.len == dls[a] &&
				      q.len == pls[b] && memcmp(d.p, dn, d.len) == 0 && memcmp(q.p, pw, q.len) == 0,
				      "peek slices %zu/%zu", dls[a], pls[b]);
				/* Another PDU behind it: the first is looked at. */
				buf[n] = 0x30;
				peek_vs_decode(buf, (size_t)n + 1, true);
				/* Cut anywhere: not whole, declined. */
				if (n < 400)
					for (ssize_t k = 0; k < n; k++)
						CHECK(lfe_ldap_peek_bind(buf, (size_t)k, &d, &q) != 0, "cut at %zd", k);
			}
	/* Every byte of a typical bind set to every value: in bounds, and the
	 * decoder's slices whenever both accept. */
	uint8_t one[128];
	ssize_t n = lfe_ldap_enc_bind_req(one, sizeof one, 7, "uid=user0012345,ou=people,dc=example,dc=com", 43,
					  "pw0012345", 9);
	CHECK(n > 0, "encode");
	for (ssize_t i = 0; n > 0 && i < n; i++)
		for (unsigned v = 0; v < 256; v++) {
			memcpy(buf, one, (size_t)n);
			buf[i] = (uint8_t)v;
			peek_vs_decode(buf, (size_t)n, false);
		}
	/* Declined: version 2, SASL, controls, another operation. */
	memcpy(buf, one, (size_t)n);
	buf[9] = 2;   /* 30 L 02 01 07 60 L 02 01 [03] */
	struct lfe_bytes d, q;
	CHECK(buf[7] == 0x02 && lfe_ldap_peek_bind(buf, (size_t)n, &d, &q) != 0, "version 2");
	memcpy(buf, one, (size_t)n);
	buf[n - 11] = 0xa3;   /* the password's tag: SASL credentials */
	CHECK(lfe_ldap_peek_bind(buf, (size_t)n, &d, &q) != 0, "sasl");
	uint8_t ctl[160];
	memcpy(ctl, one, (size_t)n);
	static const uint8_t controls[] = { 0xa0, 0x05, 0x30, 0x03, 0x04, 0x01, 0x31 };
	memcpy(ctl + n, controls, sizeof controls);
	ctl[1] = (uint8_t)(ctl[1] + sizeof controls);
	CHECK(lfe_ldap_peek_bind(ctl, (size_t)n + sizeof controls, &d, &q) != 0, "controls");
	ssize_t u = lfe_ldap_enc_unbind_req(buf, sizeof buf, 3);
	CHECK(u > 0 && lfe_ldap_peek_bind(buf, (size_t)u, &d, &q) != 0, "unbind");
	CHECK(lfe_ldap_peek_bind(NULL, 0, &d, &q) != 0, "NULL");
}

/* lfe_ldap_enc_entry (issue 25): the forward, windowed encoder of an entry
 * source writes byte for byte what the array encoder writes, for entries of
 * 0 to 5,000 values and long lengths; any window of it is that window of the
 * whole message; its sum is the same whatever the window and changes with
 * one byte; selection happens before anything is counted. */
static bool want_all(const void *ctx, struct lfe_bytes t)
{
	(void)ctx, (void)t;
	return true;
}

static bool want_not_cn(const void *ctx, struct lfe_bytes t)
{
	(void)ctx;
	return !(t.len == 2 && memcmp(t.p, "cn", 2) == 0);
}

static void test_enc_entry(void)
{
	static struct lfe_bytes vals[5000];
	static char text[5000][24];
	static uint8_t a[300000], b[300000], w[300000];
	static const uint32_t counts[] = { 0, 1, 2, 31, 32, 33, 127, 128, 600, 1000, 5000 };
	for (uint32_t i = 0; i < 5000; i++) {
		int n = snprintf(text[i], sizeof text[i], "uid=user%u,dc=x", i * 7919u);
		vals[i] = (struct lfe_bytes){ (const uint8_t *)text[i], (size_t)n };
	}
	struct lfe_bytes one = { (const uint8_t *)"big", 3 };
	for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
		struct lfe_ldap_attr at[3] = {
			{ { (const uint8_t *)"cn", 2 }, 1, &one },
			{ { (const uint8_t *)"member", 6 }, counts[k], vals },
			{ { (const uint8_t *)"description", 11 }, 0, NULL },
		};
		struct lfe_bytes dn = { (const uint8_t *)"cn=big,dc=x", 11 };
		ssize_t n = lfe_ldap_enc_search_entry(a, sizeof a, 300, dn, at, 3);
		struct lfe_ldap_entry e;
		lfe_ldap_entry_of_attrs(&e, dn, at, 3);
		struct lfe_ldap_entry_sel all = { want_all, NULL, false };
		uint64_t total = 0, sum = 0, s2 = 0;
		ssize_t m = lfe_ldap_enc_entry(b, sizeof b, 0, 300, &e, &all, &total, &sum);
		CHECK(n > 0 && m == n && total == (uint64_t)n && memcmp(a, b, (size_t)n) == 0,
		      "%u values: %zd vs %zd bytes", counts[k], m, n);
		/* Windows of 1, 7 and 4000 bytes rebuild it; same sum each time. */
		static const size_t wins[] = { 1, 7, 4000 };
		for (size_t j = 0; j < 3 && counts[k] <= 128; j++) {
			size_t off = 0;
			bool same = true;
			while (off < (size_t)n) {
				ssize_t r = lfe_ldap_enc_entry(w + off, wins[j], off, 300, &e, &all, &total,
							       &s2);
				if (r <= 0 || s2 != sum) {
					same = false;
					break;
				}
				off += (size_t)r;
			}
			CHECK(same && off == (size_t)n && memcmp(w, a, (size_t)n) == 0,
			      "%u values, window %zu", counts[k], wins[j]);
		}
		if (counts[k] > 0) {
			char keep = text[counts[k] - 1][5];
			text[counts[k] - 1][5] = 'X';
			lfe_ldap_enc_entry(b, sizeof b, 0, 300, &e, &all, &total, &s2);
			CHECK(s2 != sum, "%u values: sum blind to a changed byte", counts[k]);
			text[counts[k] - 1][5] = keep;
		}
		/* Selection first: without cn, the same as the array without it. */
		struct lfe_ldap_entry_sel sel = { want_not_cn, NULL, false };
		n = lfe_ldap_enc_search_entry(a, sizeof a, 300, dn, at + 1, 2);
		m = lfe_ldap_enc_entry(b, sizeof b, 0, 300, &e, &sel, &total, NULL);
		CHECK(m == n && memcmp(a, b, (size_t)n) == 0, "%u values, selected", counts[k]);
		/* typesOnly: no values. */
		struct lfe_ldap_attr none[3] = { { at[0].type, 0, NULL }, { at[1].type, 0, NULL },
						 { at[2].type, 0, NULL } };
		struct lfe_ldap_entry_sel tonly = { want_all, NULL, true };
		n = lfe_ldap_enc_search_entry(a, sizeof a, 300, dn, none, 3);
		m = lfe_ldap_enc_entry(b, sizeof b, 0, 300, &e, &tonly, &total, NULL);
		CHECK(m == n && memcmp(a, b, (size_t)n) == 0, "%u values, types only", counts[k]);
		/* cap 0: the size only. */
		m = lfe_ldap_enc_entry(NULL, 0, 0, 300, &e, &all, &total, NULL);
		CHECK(m == 0 && total > 0, "size only");
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_msg VECTOR_DIR\n");
		return 2;
	}
	test_vectors(argv[1]);
	test_plain_results();
	test_mcases();
	test_limits();
	test_encoders();
	test_peek_bind();
	test_enc_entry();
	return check_done();
}
