/* tests/tcp/test_stream.c — the byte-stream layer (dataplane/stream.h)
 * between a real LDAP session (on the test store) and the user-space TCP,
 * driven by a scripted peer through a capturing tx hook.
 *
 * The peer pipelines thousands of requests (binds, WhoAmI, root DSE
 * searches) in segments of varying size, so requests split across
 * segments and are gathered; it acknowledges the responses only now and
 * then, so the small send ring (2 KiB) fills, wraps many times, and
 * requests wait unconsumed for room. It checks that every request is
 * answered exactly once and in order, byte-identical to the answers of an
 * unhindered session, that each bind was verified once, and that
 * backpressure did happen. Variants: binds verified inline, and binds
 * whose verdict comes later (as from a verifier thread), delivered with
 * lfe_stream_bind_done.
 */
#include "dataplane/stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/msg.h"
#include "tests/backend/berbuild.h"
#include "tests/ldap/testbackend.h"

#define LADDR 0x0a000001u
#define RADDR 0x0a000002u
#define PISN 5000u
#define SNDBUF 2048u
#define ALICE "uid=alice,ou=people," LFE_TB_SUFFIX

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; \
	fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #c); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

struct env {
	struct lfe_tcp *t;
	struct lfe_tb *tb;
	struct lfe_session_cfg scfg;
	void *smem;
	struct lfe_session *s;
	struct lfe_stream st;
	struct lfe_tcp_conn *c;
	uint8_t scratch[16384];
	bool pending_mode;
	/* the peer */
	uint32_t iss;               /* our ISN (from the SYN,ACK) */
	bool got_synack;
	uint8_t *rx;                /* response stream received, in order */
	size_t rx_len, rx_cap;
	size_t ack_rx;              /* response bytes the peer acknowledges */
	uint32_t srv_acked;         /* peer bytes the server acknowledged */
	uint32_t srv_win;
	unsigned short_takes;       /* on_data calls that left bytes for later */
	int closes;
};

static int cb_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	struct env *e = ctx;
	if (s->flags & LFE_TCP_SYN) {
		e->iss = s->seq;
		e->got_synack = true;
	}
	if (s->flags & LFE_TCP_ACK) {
		uint32_t a = s->ack - PISN - 1;
		if ((int32_t)(a - e->srv_acked) > 0)
			e->srv_acked = a;
		e->srv_win = s->win;
	}
	if (s->len) {
		uint32_t off = s->seq - e->iss - 1;
		/* in order only; a retransmission of what we have is dropped */
		if (off <= e->rx_len && off + s->len > e->rx_len) {
			size_t k = off + s->len - e->rx_len;
			if (e->rx_len + k > e->rx_cap) {
				e->rx_cap = (e->rx_len + k) * 2;
				e->rx = realloc(e->rx, e->rx_cap);
			}
			memcpy(e->rx + e->rx_len, s->payload + (e->rx_len - off), k);
			e->rx_len += k;
		}
	}
	return 0;
}

static int cb_open(void *ctx, struct lfe_tcp_conn *c)
{
	struct env *e = ctx;
	e->c = c;
	e->s = lfe_session_init(e->smem, &e->scfg);
	lfe_stream_init(&e->st, c);
	return 0;
}

static size_t cb_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	struct env *e = ctx;
	unsigned flags;
	(void)c;
	size_t used = lfe_stream_deliver(&e->st, e->s, d, len, e->scratch, sizeof e->scratch, &flags);
	CHECK((flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE)) == 0, "flags %u", flags);
	if (used < len && !(flags & LFE_SESS_PENDING))
		e->short_takes++;
	return used;
}

static void cb_writable(void *ctx, struct lfe_tcp_conn *c)
{
	struct env *e = ctx;
	(void)c;
	unsigned flags;
	lfe_stream_on_writable(&e->st, e->s, e->t, 0, e->scratch, sizeof e->scratch, &flags);
}

static void cb_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct env *e = ctx;
	(void)c;
	(void)reason;
	lfe_stream_fini(&e->st);
	lfe_session_fini(e->s);
	e->closes++;
}

static const struct lfe_tcp_ops ops = {
	.tx = cb_tx, .on_open = cb_open, .on_data = cb_data, .on_writable = cb_writable,
	.on_close = cb_close,
};

/* ---- requests ---- */

static void msg_begin(struct bb *b, size_t *at, int32_t id)
{
	*at = b->n;
	size_t i = b->n;
	uint8_t v[4] = { (uint8_t)(id >> 24), (uint8_t)(id >> 16), (uint8_t)(id >> 8), (uint8_t)id };
	unsigned k = 0;
	while (k < 3 && v[k] == 0 && !(v[k + 1] & 0x80))
		k++;
	bb_raw(b, v + k, 4 - k);
	bb_wrap(b, i, 0x02);
}

static void req_bind(struct bb *b, int32_t id)
{
	size_t at, op;
	msg_begin(b, &at, id);
	op = b->n;
	bb_raw(b, "\x02\x01\x03", 3);
	bb_octets(b, 0x04, ALICE);
	bb_octets(b, 0x80, "secret");
	bb_wrap(b, op, 0x60);
	bb_wrap(b, at, 0x30);
}

static void req_whoami(struct bb *b, int32_t id)
{
	size_t at, op;
	msg_begin(b, &at, id);
	op = b->n;
	bb_octets(b, 0x80, "1.3.6.1.4.1.4203.1.11.3");
	bb_wrap(b, op, 0x77);
	bb_wrap(b, at, 0x30);
}

static void req_rootdse(struct bb *b, int32_t id)
{
	size_t at, op;
	msg_begin(b, &at, id);
	op = b->n;
	bb_octets(b, 0x04, "");
	bb_raw(b, "\x0a\x01\x00\x0a\x01\x00\x02\x01\x00\x02\x01\x00\x01\x01\x00", 15);
	bb_octets(b, 0x87, "objectClass");
	bb_raw(b, "\x30\x00", 2);
	bb_wrap(b, op, 0x63);
	bb_wrap(b, at, 0x30);
}

/* ---- one run ---- */

static uint64_t rnd_state = 88172645463325252ull;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)rnd_state;
}

static void env_init(struct env *e)
{
	memset(e, 0, sizeof *e);
	e->tb = lfe_tb_new();
	static const char *const top[] = { "objectClass=top", "objectClass=domain", "dc=example" };
	static const char *const ou[] = { "objectClass=top", "objectClass=organizationalUnit",
					  "ou=people" };
	static const char *const al[] = { "objectClass=top", "objectClass=person", "uid=alice",
					  "cn=Alice", "sn=A" };
	if (!e->tb || lfe_tb_add(e->tb, LFE_TB_SUFFIX, NULL, top, 3) ||
	    lfe_tb_add(e->tb, "ou=people," LFE_TB_SUFFIX, NULL, ou, 3) ||
	    lfe_tb_add(e->tb, ALICE, "secret", al, 5)) {
		fprintf(stderr, "store setup failed\n");
		exit(2);
	}
	e->scfg = (struct lfe_session_cfg){ .allow_anonymous = true, .be = &lfe_tb_ops,
					    .be_ctx = e->tb, .naming_context = LFE_TB_SUFFIX };
	e->smem = aligned_alloc(64, (lfe_session_size() + 63) & ~(size_t)63);
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.sndbuf = SNDBUF;
	cfg.rcvbuf = 8192;
	cfg.max_conns = 4;
	cfg.max_half_open = 4;
	cfg.n_listen = 1;
	cfg.listen[0].addr = LADDR;
	cfg.listen[0].port = 389;
	int err = 0;
	e->t = lfe_tcp_new(&cfg, &ops, e, &err);
	if (!e->t) {
		fprintf(stderr, "lfe_tcp_new: %d\n", err);
		exit(2);
	}
}

static void env_fini(struct env *e)
{
	lfe_tcp_free(e->t);
	if (e->closes == 0 && e->s)
		lfe_session_fini(e->s);
	lfe_tb_free(e->tb);
	free(e->smem);
	free(e->rx);
}

static void peer_seg(struct env *e, uint8_t flags, uint32_t off, const uint8_t *p, uint16_t len,
		     uint64_t now)
{
	struct lfe_tcp_seg s = {
		.laddr = LADDR, .raddr = RADDR, .lport = 389, .rport = 40000,
		.seq = PISN + 1 + off, .ack = e->iss + 1 + (uint32_t)e->ack_rx,
		.win = 65535, .flags = flags, .wscale = -1, .payload = p, .len = len,
	};
	lfe_tcp_input(e->t, &s, now);
}

/* Responses of an unhindered session for the same request stream. */
static size_t reference(const struct bb *req, uint8_t *out, size_t cap, bool pending)
{
	struct env e;
	env_init(&e);
	if (pending)
		lfe_tb_set_mode(e.tb, LFE_TB_PENDING);
	struct lfe_session *s = lfe_session_init(e.smem, &e.scfg);
	size_t off = 0, n = 0;
	while (off < req->n) {
		struct lfe_session_io io = { .in = req->b + off, .in_len = req->n - off,
					     .out = out + n, .out_cap = cap - n };
		if (lfe_session_process(s, &io) != 0 || io.flags & ~(unsigned)LFE_SESS_PENDING)
			break;
		off += io.in_used;
		n += io.out_len;
		uint64_t tok;
		enum lfe_be_verdict v;
		if ((io.flags & LFE_SESS_PENDING) && lfe_tb_take_pending(e.tb, &tok, &v)) {
			io = (struct lfe_session_io){ .out = out + n, .out_cap = cap - n };
			if (lfe_session_bind_done(s, tok, v, &io) != 0)
				break;
			n += io.out_len;
		} else if (io.in_used == 0 && io.out_len == 0) {
			break;
		}
	}
	CHECK(off == req->n, "reference stalled at %zu/%zu", off, req->n);
	lfe_session_fini(s);
	e.closes = 1;
	env_fini(&e);
	return n;
}

static void run(const char *name, unsigned n_req, bool pending)
{
	struct bb req = { .b = malloc((size_t)n_req * 128 + 64), .n = 0 };
	unsigned n_bind = 0;
	for (unsigned i = 1; i <= n_req; i++) {
		unsigned k = rnd() % 16;
		if (k < 12) {
			req_bind(&req, (int32_t)i);
			n_bind++;
		} else if (k < 15) {
			req_whoami(&req, (int32_t)i);
		} else {
			req_rootdse(&req, (int32_t)i);
		}
	}
	size_t ref_cap = (size_t)n_req * 700 + 4096;
	uint8_t *ref = malloc(ref_cap);
	size_t ref_len = reference(&req, ref, ref_cap, pending);

	struct env e;
	env_init(&e);
	e.pending_mode = pending;
	if (pending)
		lfe_tb_set_mode(e.tb, LFE_TB_PENDING);
	uint64_t now = 1000;
	peer_seg(&e, LFE_TCP_SYN, (uint32_t)-1, NULL, 0, now);
	lfe_tcp_flush(e.t, now);
	CHECK(e.got_synack, "%s: no SYN,ACK", name);
	peer_seg(&e, LFE_TCP_ACK, 0, NULL, 0, now);
	CHECK(e.c != NULL, "%s: not open", name);
	e.ack_rx = 0;

	uint32_t sent = 0;
	unsigned steps = 0, max_held_steps = 0, stuck = 0;
	while ((sent < req.n || e.rx_len < ref_len) && steps < 2000000) {
		steps++;
		now += 50;
		/* send within the server's window, in segments of 1..700 bytes */
		uint32_t win_end = e.srv_acked + e.srv_win;
		if (sent < req.n && (int32_t)(win_end - sent) > 0) {
			uint32_t n = 1 + rnd() % 700;
			if (n > req.n - sent)
				n = (uint32_t)req.n - sent;
			if (n > win_end - sent)
				n = win_end - sent;
			/* ACK what we have only now and then: the ring fills */
			if (rnd() % 8 == 0)
				e.ack_rx = e.rx_len;
			peer_seg(&e, LFE_TCP_ACK | LFE_TCP_PSH, sent, req.b + sent, (uint16_t)n, now);
			sent += n;
		} else {
			/* nothing to send: acknowledge everything */
			e.ack_rx = e.rx_len;
			peer_seg(&e, LFE_TCP_ACK, sent, NULL, 0, now);
		}
		if (pending) {
			uint64_t tok;
			enum lfe_be_verdict v;
			if (lfe_tb_take_pending(e.tb, &tok, &v)) {
				CHECK(lfe_stream_bind_done(&e.st, e.s, tok, v, e.scratch,
							   sizeof e.scratch) == 0,
				      "%s: bind_done", name);
				lfe_tcp_conn_kick(e.t, e.c, now);
			}
		}
		lfe_tcp_timers(e.t, now);
		lfe_tcp_flush(e.t, now);
		if (e.srv_win < 8192)
			max_held_steps++;
		stuck = (sent == req.n) ? stuck + 1 : 0;
		if (stuck > 100000)
			break;
	}
	CHECK(e.closes == 0, "%s: connection closed", name);
	CHECK(e.rx_len == ref_len, "%s: %zu response bytes, want %zu (sent %u/%zu)", name,
	      e.rx_len, ref_len, sent, req.n);
	CHECK(e.rx_len == ref_len && memcmp(e.rx, ref, ref_len) == 0, "%s: responses differ", name);
	CHECK(lfe_tb_counts(e.tb)->binds == n_bind, "%s: %llu binds verified, want %u", name,
	      (unsigned long long)lfe_tb_counts(e.tb)->binds, n_bind);
	CHECK(e.short_takes > 0, "%s: the send room never ran short", name);
	CHECK(e.rx_len > 8 * SNDBUF, "%s: the send ring did not wrap", name);
	CHECK(max_held_steps > 0, "%s: requests never waited in the receive buffer", name);
	const struct lfe_session_stats *ss = lfe_session_stats(e.s);
	CHECK(ss->binds_ok == n_bind, "%s: %llu binds ok, want %u", name,
	      (unsigned long long)ss->binds_ok, n_bind);
	printf("%s: %u requests (%u binds), %zu response bytes, %u short takes, %u steps\n", name,
	       n_req, n_bind, e.rx_len, e.short_takes, steps);
	env_fini(&e);
	free(ref);
	free(req.b);
}

/* The write contract itself: whole or nothing. */
static void test_write(void)
{
	struct env e;
	env_init(&e);
	peer_seg(&e, LFE_TCP_SYN, (uint32_t)-1, NULL, 0, 1);
	lfe_tcp_flush(e.t, 1);
	peer_seg(&e, LFE_TCP_ACK, 0, NULL, 0, 1);
	CHECK(lfe_stream_room(&e.st) == SNDBUF, "room %zu", lfe_stream_room(&e.st));
	static uint8_t big[SNDBUF + 1];
	CHECK(lfe_stream_write(&e.st, big, 1500) == 0, "write 1500");
	CHECK(lfe_stream_write(&e.st, big, SNDBUF - 1499) == -ENOBUFS, "over room accepted");
	CHECK(lfe_stream_room(&e.st) == SNDBUF - 1500, "partial write happened");
	CHECK(lfe_stream_write(&e.st, big, SNDBUF - 1500) == 0, "write to full");
	CHECK(lfe_stream_room(&e.st) == 0, "not full");
	env_fini(&e);
}

int main(void)
{
	test_write();
	run("inline binds", 4000, false);
	run("pending binds", 1500, true);
	/* tests/gen's regression: 16,385 binds on one connection. */
	rnd_state = 1;
	run("16385 requests", 16385, false);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("stream: all checks passed\n");
	return 0;
}
