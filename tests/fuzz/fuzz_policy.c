/* tests/fuzz/fuzz_policy.c — the search access policy under random PDUs.
 *
 * Input: byte 0 picks the policy (bits 0-1 access, bits 2-3 widest scope,
 * bit 4 allow_anonymous, bits 5-6 the base, bit 7 an attribute list),
 * byte 1 the backend (bit 0: one that ignores the filter and returns every
 * entry in scope, as a careless backend would) and the output room; the
 * rest is the client's byte stream. The directory holds entries with every
 * kind of secret (userPassword, with options, authPassword by OID).
 *
 * Oracle, on every response the session writes (read in order, so the
 * identity after each BindResponse is known):
 *   - no SearchResultEntry carries a secret attribute (any spelling, any
 *     option) or a secret value under another name;
 *   - with an attribute list, no entry carries another attribute;
 *   - no entry lies outside the policy base, and no entry but the root DSE
 *     reaches a client the policy refuses (access none; anonymous when
 *     anonymous searching is off).
 * Plus everything fuzz_session checks about framing and progress.
 */
#include <stdlib.h>
#include <string.h>

#include "ldap/attr.h"
#include "ldap/ber.h"
#include "ldap/dn.h"
#include "ldap/session.h"
#include "tests/ldap/testbackend.c"   /* the test backend is not a library */

#define BIG_OUT 65536u
#define SUFFIX "dc=example,dc=com"
#define PEOPLE "ou=people,dc=example,dc=com"
#define CAROL "uid=carol,ou=people,dc=example,dc=com"

static const char *const secret_vals[] = { "s3cret", "secret", "b0b", "{CRYPT}legacyhash",
					   "SHA1$c2FsdA$aGFzaA", "MD5$Zm9v$YmFy" };

static struct lfe_tb *backend(void)
{
	static struct lfe_tb *tb;
	if (tb)
		return tb;
	static const char *const dom[] = { "objectClass=top", "dc=example" };
	static const char *const ou[] = { "objectClass=top", "ou=people" };
	static const char *const alice[] = { "objectClass=person", "uid=alice", "cn=Alice",
					     "sn=L", "mail=alice@example.com",
					     "createTimestamp=20260101000000Z" };
	static const char *const bob[] = { "objectClass=person", "uid=bob", "cn=Bob" };
	static const char *const carol[] = { "objectClass=person", "uid=carol", "cn=Carol",
					     "mail=carol@example.com",
					     "userPassword;x-legacy={CRYPT}legacyhash",
					     "1.3.6.1.4.1.4203.1.3.4=SHA1$c2FsdA$aGFzaA",
					     "authPassword;foo=MD5$Zm9v$YmFy" };
	tb = lfe_tb_new();
	if (!tb || lfe_tb_add(tb, SUFFIX, NULL, dom, 2) || lfe_tb_add(tb, PEOPLE, NULL, ou, 2) ||
	    lfe_tb_add(tb, "uid=alice," PEOPLE, "secret", alice, 6) ||
	    lfe_tb_add(tb, "uid=bob," PEOPLE, "b0b", bob, 3) ||
	    lfe_tb_add(tb, CAROL, "s3cret", carol, 7))
		abort();
	return tb;
}

static int leaky_search(void *ctx, const struct lfe_be_search *s, lfe_be_emit_fn emit,
			void *emit_ctx)
{
	static const uint8_t all[] = { 0xa0, 0x00 };   /* (&) */
	struct lfe_search_req req = *s->req;
	struct lfe_be_search x = *s;
	req.filter = (struct lfe_bytes){ all, sizeof all };
	x.req = &req;
	return lfe_tb_ops.search(ctx, &x, emit, emit_ctx);
}

struct oracle {
	const struct lfe_session_cfg *cfg;
	bool bound;
	char base[LFE_DN_MAX + 1];
	size_t base_len;
};

static bool may_search(const struct oracle *o)
{
	const struct lfe_session_cfg *c = o->cfg;
	enum lfe_search_access a = c->search.access;
	if (a == LFE_SEARCH_ACCESS_DEFAULT)
		a = c->allow_anonymous ? LFE_SEARCH_ACCESS_ANONYMOUS : LFE_SEARCH_ACCESS_BOUND;
	if (a == LFE_SEARCH_ACCESS_NONE)
		return false;
	return o->bound || (a == LFE_SEARCH_ACCESS_ANONYMOUS && c->allow_anonymous);
}

static void check_entry(const struct oracle *o, struct lfe_ber *op)
{
	const struct lfe_search_policy *p = &o->cfg->search;
	struct lfe_bytes dn, type, v;
	struct lfe_ber attrs, a, vals;
	char ndn[LFE_DN_MAX + 1];

	if (!lfe_ber_octets(op, LFE_BER_OCTETS, &dn) || !lfe_ber_enter(op, LFE_BER_SEQUENCE, &attrs))
		__builtin_trap();
	if (dn.len == 0)
		return;   /* the root DSE: readable by all, holds no secret */
	if (!may_search(o))
		__builtin_trap();
	ssize_t nl = lfe_dn_normalize(dn.p, dn.len, ndn, sizeof ndn);
	if (nl < 0 || (p->base && !lfe_dn_is_under(ndn, (size_t)nl, p->base, p->base_len)))
		__builtin_trap();
	while (lfe_ber_more(&attrs)) {
		if (!lfe_ber_enter(&attrs, LFE_BER_SEQUENCE, &a) ||
		    !lfe_ber_octets(&a, LFE_BER_OCTETS, &type) || !lfe_ber_enter(&a, LFE_BER_SET, &vals))
			__builtin_trap();
		if (lfe_attr_is_secret(type.p, type.len))
			__builtin_trap();
		if (p->n_attrs) {
			bool ok = false;
			for (uint32_t i = 0; i < p->n_attrs; i++)
				ok |= lfe_attr_desc_matches((const uint8_t *)p->attrs[i],
							    strlen(p->attrs[i]), type.p, type.len);
			if (!ok)
				__builtin_trap();
		}
		while (lfe_ber_more(&vals)) {
			if (!lfe_ber_octets(&vals, LFE_BER_OCTETS, &v))
				__builtin_trap();
			for (size_t i = 0; i < sizeof secret_vals / sizeof secret_vals[0]; i++)
				if (v.len == strlen(secret_vals[i]) && !memcmp(v.p, secret_vals[i], v.len))
					__builtin_trap();
		}
	}
}

/* Walk the responses of one call in order. */
static void check_out(struct oracle *o, const struct lfe_session_io *io)
{
	if (io->out_len > io->out_cap || io->in_used > io->in_len)
		__builtin_trap();
	size_t off = 0;
	while (off < io->out_len) {
		size_t pl;
		if (lfe_ldap_frame(io->out + off, io->out_len - off, 1u << 20, &pl) != 0)
			__builtin_trap();
		struct lfe_ber b, m, op;
		int64_t id, code;
		lfe_ber_init(&b, io->out + off, pl);
		if (!lfe_ber_enter(&b, LFE_BER_SEQUENCE, &m) ||
		    !lfe_ber_int(&m, LFE_BER_INTEGER, 0, INT32_MAX, &id))
			__builtin_trap();
		int tag = lfe_ber_peek(&m);
		if (tag == LFE_BER_APP_CONS(LFE_OP_SEARCH_ENTRY)) {
			if (!lfe_ber_enter(&m, (uint8_t)tag, &op))
				__builtin_trap();
			check_entry(o, &op);
		} else if (tag == LFE_BER_APP_CONS(LFE_OP_BIND_RESP)) {
			if (!lfe_ber_enter(&m, (uint8_t)tag, &op) ||
			    !lfe_ber_int(&op, LFE_BER_ENUMERATED, 0, 127, &code))
				__builtin_trap();
			/* Any bind drops the identity; a success sets one (an
			 * anonymous one leaves it empty: the oracle errs on the
			 * permissive side there). */
			o->bound = code == 0;
		}
		off += pl;
	}
}

static uint8_t out[BIG_OUT];

static bool feed(struct oracle *o, struct lfe_session *s, const uint8_t *p, size_t n, size_t cap)
{
	for (unsigned turns = 0; turns < 100000; turns++) {
		struct lfe_session_io io = { .in = p, .in_len = n, .out = out, .out_cap = cap };
		if (lfe_session_process(s, &io) < 0)
			return false;
		check_out(o, &io);
		/* The session's own view of the identity after this call. */
		size_t bl;
		lfe_session_bound_dn(s, &bl);
		o->bound = bl > 0;
		if (io.flags & (LFE_SESS_CLOSE | LFE_SESS_ABORT))
			return false;
		p += io.in_used;
		n -= io.in_used;
		if (n == 0)
			return true;
		if (io.in_used == 0 && io.out_len == 0) {
			if (cap == BIG_OUT)
				__builtin_trap();
			cap = BIG_OUT;
		}
	}
	__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = { 200, 600, 4096, BIG_OUT };
	static const char *const bases[] = { NULL, SUFFIX, PEOPLE, CAROL };
	static const char *const lists[] = { "uid, cn", "mail,objectClass" };
	if (size < 2)
		return 0;
	uint8_t pol = data[0], opt = data[1];
	data += 2;
	size -= 2;

	struct lfe_tb *tb = backend();
	lfe_tb_set_mode(tb, LFE_TB_VERIFY);
	struct lfe_backend_ops ops = lfe_tb_ops;
	if (opt & 1)
		ops.search = leaky_search;
	struct lfe_session_cfg cfg = {
		.allow_anonymous = pol & 0x10,
		.be = &ops,
		.be_ctx = tb,
		.naming_context = SUFFIX,
	};
	cfg.search.access = (enum lfe_search_access)(pol & 3);
	cfg.search.max_scope = (enum lfe_search_scope_max)((pol >> 2) & 3) % 3;
	const char *base = bases[(pol >> 5) & 3];
	if (base) {
		cfg.search.base = base;
		cfg.search.base_len = strlen(base);
	}
	const char *why;
	if ((pol & 0x80) && lfe_search_attrs_parse(&cfg.search, lists[opt >> 7], &why) != 0)
		abort();
	struct oracle o = { .cfg = &cfg };
	static _Alignas(64) uint8_t mem[16384];
	if (lfe_session_size() > sizeof mem)
		abort();
	struct lfe_session *s = lfe_session_init(mem, &cfg);
	feed(&o, s, data, size, caps[(opt >> 1) & 3]);
	lfe_session_fini(s);
	return 0;
}
