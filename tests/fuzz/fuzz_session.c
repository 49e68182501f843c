/* tests/fuzz/fuzz_session.c — arbitrary bytes through an LDAP session with
 * the in-memory test backend.
 *
 * Input: byte 0 picks where the stream is split in two deliveries, byte 1
 * the options (pending verdicts, busy backend, anonymous, a small max_pdu,
 * the output room), byte 2 after how many allocations the allocator fails
 * (low nibble, 0: never) and where DNs are kept (0x30: malloc, else a DN
 * pool of two pages, 0x10: taken full before the run); the rest is the
 * client's byte stream.
 * Checks: no crash or leak (sanitizers), in_used/out_len within bounds, every
 * output frames as whole LDAPMessages, and with 64 KiB of room a session
 * that is not waiting for a verdict always makes progress; every DN chunk
 * the session took is back in the pool after lfe_session_fini.
 */
#include <stdlib.h>
#include <string.h>

#include "ldap/dnpool.h"
#include "ldap/session.h"
#include "tests/ldap/testbackend.c"   /* the test backend is not a library */

#define BIG_OUT 65536u

struct fz_alloc {
	unsigned fail_after;   /* 0: never fail */
	unsigned gets;
	bool tight;            /* spare says no: buffers under pressure */
};

static bool fz_spare(void *ctx)
{
	const struct fz_alloc *a = ctx;
	return !a->tight;
}

static void *fz_get(void *ctx, size_t n)
{
	struct fz_alloc *a = ctx;
	if (a->fail_after && ++a->gets >= a->fail_after)
		return NULL;
	return malloc(n);
}

static void fz_put(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

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
	tb = lfe_tb_new();
	if (!tb || lfe_tb_add(tb, "dc=example,dc=com", NULL, dom, 2) ||
	    lfe_tb_add(tb, "ou=people,dc=example,dc=com", NULL, ou, 2) ||
	    lfe_tb_add(tb, "uid=alice,ou=people,dc=example,dc=com", "secret", alice, 6) ||
	    lfe_tb_add(tb, "uid=bob,ou=people,dc=example,dc=com", "b0b", bob, 3))
		abort();
	return tb;
}

static void check_out(const struct lfe_session_io *io)
{
	if (io->out_len > io->out_cap || io->in_used > io->in_len)
		__builtin_trap();
	size_t off = 0;
	while (off < io->out_len) {
		size_t pl;
		if (lfe_ldap_frame(io->out + off, io->out_len - off, 1u << 20, &pl) != 0)
			__builtin_trap();
		off += pl;
	}
}

static uint8_t out[BIG_OUT];

/* Deliver the outstanding verdict; a wrong generation must be refused. */
static void settle(struct lfe_session *s, struct lfe_tb *tb)
{
	uint64_t tok;
	enum lfe_be_verdict v;
	if (!lfe_tb_take_pending(tb, &tok, &v))
		__builtin_trap();   /* PENDING without a bind outstanding */
	struct lfe_session_io io = { .out = out, .out_cap = BIG_OUT };
	if (lfe_session_bind_done(s, tok + (1ull << 32), v, &io) != -ESTALE)
		__builtin_trap();
	if (lfe_session_bind_done(s, tok, v, &io) != 0)
		__builtin_trap();
	check_out(&io);
}

/* Returns false once the session closed or aborted. */
static bool feed(struct lfe_session *s, struct lfe_tb *tb, const uint8_t *p, size_t n,
		 size_t cap)
{
	for (unsigned turns = 0; turns < 100000; turns++) {
		struct lfe_session_io io = { .in = p, .in_len = n, .out = out, .out_cap = cap };
		if (lfe_session_process(s, &io) < 0)
			return false;
		check_out(&io);
		if (io.flags & (LFE_SESS_CLOSE | LFE_SESS_ABORT))
			return false;
		p += io.in_used;
		n -= io.in_used;
		if (io.flags & LFE_SESS_PENDING) {
			settle(s, tb);
			continue;
		}
		if (n == 0)
			return true;
		if (io.in_used == 0 && io.out_len == 0) {
			if (cap == BIG_OUT)
				__builtin_trap();   /* no progress with ample room */
			cap = BIG_OUT;
		}
	}
	__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = { 32, 160, 200, 300, 600, 1500, 4096, BIG_OUT };
	if (size < 3)
		return 0;
	uint8_t split_b = data[0], opt = data[1], fail = data[2];
	data += 3;
	size -= 3;
	size_t split = size * split_b / 256;

	struct lfe_tb *tb = backend();
	lfe_tb_set_mode(tb, (opt & 1) ? LFE_TB_PENDING : (opt & 2) ? LFE_TB_BUSY : LFE_TB_VERIFY);
	struct fz_alloc fa = { .fail_after = fail & 0x0f, .tight = fail & 0x40 };
	struct lfe_session_cfg cfg = {
		.max_pdu = (opt & 4) ? 256 : 0,
		.allow_anonymous = opt & 8,
		.be = &lfe_tb_ops,
		.be_ctx = tb,
		.alloc = { .get = fz_get, .put = fz_put, .spare = fz_spare, .ctx = &fa },
		.naming_context = "dc=example,dc=com",
	};
	static struct lfe_dnpool *dnp;
	void *hog[4];
	unsigned nh = 0;
	if ((fail & 0x30) != 0x30) {
		if (!dnp && !(dnp = lfe_dnpool_new(2 * LFE_DNPOOL_PAGE)))
			abort();
		cfg.dns = dnp;
		while ((fail & 0x10) && nh < 4 && (hog[nh] = lfe_dnpool_get(dnp, LFE_DNPOOL_CHUNK_MAX)))
			nh++;
	}
	size_t cap = caps[opt >> 5];
	static _Alignas(64) uint8_t mem[16384];
	if (lfe_session_size() > sizeof mem)
		abort();
	struct lfe_session *s = lfe_session_init(mem, &cfg);
	lfe_session_set_generation(s, fail);

	if (feed(s, tb, data, split, cap) && feed(s, tb, data + split, size - split, cap)) {
		/* A complete PDU may still sit in the gather buffer waiting for room. */
		struct lfe_session_io io = { .out = out, .out_cap = BIG_OUT };
		if (lfe_session_process(s, &io) == 0) {
			check_out(&io);
			if (io.flags & LFE_SESS_PENDING)
				settle(s, tb);
		}
	}
	lfe_session_fini(s);
	if (cfg.dns) {
		struct lfe_dnpool_stats ds;
		lfe_dnpool_stats(dnp, &ds);
		if (ds.chunks != nh)
			__builtin_trap();   /* a DN chunk kept after fini */
		while (nh)
			lfe_dnpool_put(dnp, hog[--nh]);
	}
	uint64_t tok;
	enum lfe_be_verdict v;
	lfe_tb_take_pending(tb, &tok, &v);
	return 0;
}
