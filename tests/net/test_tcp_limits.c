/* tests/tcp/test_tcp_limits.c — the connection table's fairness bounds,
 * scripted: per-source cap (RST beyond it), eviction of connections the
 * app marked evictable when the table is full (oldest first), the app
 * deadline (on_deadline keeps or resets), 64-bit idle timeouts, and SYN
 * admission while cookies are out (budgets, validated sources).
 *
 * Each case drives the public API with a capturing tx hook and a scripted
 * clock; peers are (address, port) pairs that open with SYN and complete
 * the handshake with the ISN read back from our SYN,ACK.
 */
#include "net/tcp.h"
#include "tests/check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define LADDR 0x0a000001u
#define SRC_A 0x0a000002u
#define SRC_B 0x0a000003u
#define LPORT 389
#define PISN 5000u
#define MAXC 16

struct env {
	struct lfe_tcp *t;
	uint64_t now;
	struct lfe_tcp_seg out[64];
	unsigned n_out;
	struct lfe_tcp_conn *conn[MAXC];   /* by peer port - 40000 */
	int closes, last_reason;
	uint16_t last_closed;              /* peer port */
	int deadline_calls;
	bool keep_on_deadline;
};

static int cb_tx(void *ctx, const struct lfe_tcp_seg *s)
{
	struct env *e = ctx;
	if (e->n_out < sizeof(e->out) / sizeof(e->out[0]))
		e->out[e->n_out++] = *s;
	return 0;
}

static int cb_open(void *ctx, struct lfe_tcp_conn *c)
{
	struct env *e = ctx;
	uint16_t rport;
	lfe_tcp_conn_addrs(c, NULL, NULL, NULL, &rport);
	e->conn[rport - 40000] = c;
	return 0;
}

static size_t cb_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *d, size_t len)
{
	(void)ctx; (void)c; (void)d;
	return len;
}

static void cb_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct env *e = ctx;
	uint16_t rport;
	lfe_tcp_conn_addrs(c, NULL, NULL, NULL, &rport);
	e->conn[rport - 40000] = NULL;
	e->closes++;
	e->last_reason = reason;
	e->last_closed = rport;
}

static int cb_deadline(void *ctx, struct lfe_tcp_conn *c)
{
	struct env *e = ctx;
	e->deadline_calls++;
	if (!e->keep_on_deadline)
		return -ETIME;
	lfe_tcp_conn_set_deadline(c, e->now + 10000);   /* one more round */
	e->keep_on_deadline = false;
	return 0;
}

static void setup_cfg(struct env *e, struct lfe_tcp_cfg *cfg_in)
{
	memset(e, 0, sizeof(*e));
	e->now = 1000000;
	struct lfe_tcp_cfg cfg = *cfg_in;
	cfg.sndbuf = 4096;
	cfg.rcvbuf = 4096;
	cfg.secret = 42;
	cfg.n_listen = 1;
	cfg.listen[0].port = LPORT;
	static const struct lfe_tcp_ops ops = {
		.tx = cb_tx, .on_open = cb_open, .on_data = cb_data, .on_close = cb_close,
		.on_deadline = cb_deadline,
	};
	int err = 0;
	e->t = lfe_tcp_new(&cfg, &ops, e, &err);
	if (!e->t) {
		printf("FAIL: lfe_tcp_new %d\n", err);
		check_failures++;
	}
}

static void setup(struct env *e, uint32_t max_conns, uint32_t per_source, uint64_t idle_us)
{
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = max_conns;
	cfg.max_half_open = max_conns;
	cfg.idle_timeout_us = idle_us;
	cfg.max_conns_per_source = per_source;
	cfg.share_pressure_pct = 100;   /* shares off: the tests that want them say so */
	setup_cfg(e, &cfg);
}

static struct lfe_tcp_seg seg(uint32_t raddr, int p, uint8_t flags, uint32_t ack)
{
	return (struct lfe_tcp_seg){
		.laddr = LADDR, .raddr = raddr, .lport = LPORT, .rport = (uint16_t)(40000 + p),
		.seq = PISN + (flags & LFE_TCP_SYN ? 0 : 1), .ack = ack, .win = 65535, .flags = flags,
		.mss = flags & LFE_TCP_SYN ? 1460 : 0, .wscale = -1,
	};
}

/* Feed a SYN; returns the flags of what came back (0: nothing). */
static uint8_t syn(struct env *e, uint32_t raddr, int p)
{
	e->n_out = 0;
	struct lfe_tcp_seg s = seg(raddr, p, LFE_TCP_SYN, 0);
	lfe_tcp_input(e->t, &s, e->now);
	lfe_tcp_flush(e->t, e->now);
	for (unsigned i = 0; i < e->n_out; i++)
		if (e->out[i].rport == 40000 + p)
			return e->out[i].flags;
	return 0;
}

/* SYN, SYN,ACK, ACK: true if the connection is ESTABLISHED. */
static bool open_conn(struct env *e, uint32_t raddr, int p)
{
	if (syn(e, raddr, p) != (LFE_TCP_SYN | LFE_TCP_ACK))
		return false;
	uint32_t iss = 0;
	for (unsigned i = 0; i < e->n_out; i++)
		if (e->out[i].rport == 40000 + p && (e->out[i].flags & LFE_TCP_SYN))
			iss = e->out[i].seq;
	struct lfe_tcp_seg s = seg(raddr, p, LFE_TCP_ACK, iss + 1);
	lfe_tcp_input(e->t, &s, e->now);
	return e->conn[p] != NULL;
}

static void advance(struct env *e, uint64_t us)
{
	e->n_out = 0;
	e->now += us;
	lfe_tcp_timers(e->t, e->now);
	lfe_tcp_flush(e->t, e->now);
}

static bool sent_rst_to(const struct env *e, int p)
{
	for (unsigned i = 0; i < e->n_out; i++)
		if (e->out[i].rport == 40000 + p && (e->out[i].flags & LFE_TCP_RST))
			return true;
	return false;
}

/* share.h's rule on established connections: no bound below the
 * pressure level (75 % of 8 = 6), the fair share above it. */
static void test_per_source_share(void)
{
	struct env e;
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = cfg.max_half_open = 8;
	cfg.max_conns_per_source = 2;
	setup_cfg(&e, &cfg);
	for (int p = 0; p < 6; p++)
		CHECK(open_conn(&e, SRC_A, p), "A opens %d below the pressure level (floor 2)", p);
	CHECK(lfe_tcp_stats(e.t)->drop_src_cap == 0, "no bound below the level");
	/* At the level a second source: A's share is 8 / 3 = 2 (A, B and a
	 * newcomer), it holds 6. */
	CHECK(open_conn(&e, SRC_B, 6), "B opens at the level");
	CHECK(syn(&e, SRC_A, 7) == (LFE_TCP_RST | LFE_TCP_ACK), "A over its share gets RST");
	CHECK(lfe_tcp_stats(e.t)->drop_src_cap == 1, "counted: %llu",
	      (unsigned long long)lfe_tcp_stats(e.t)->drop_src_cap);
	CHECK(lfe_tcp_stats(e.t)->conns_active == 7, "no slot taken");
	CHECK(open_conn(&e, SRC_B, 8), "B, under its share, opens");
	/* A closes three: below its share (and the level) it opens again. */
	for (int p = 0; p < 3; p++) {
		struct lfe_tcp_seg r = seg(SRC_A, p, LFE_TCP_RST, 0);
		r.seq = PISN + 1;
		lfe_tcp_input(e.t, &r, e.now);
	}
	CHECK(open_conn(&e, SRC_A, 9), "A opens again under its share");
	lfe_tcp_free(e.t);
}

/* Half-open connections never count as established, and past the
 * half-open budget (or a source's share of it) every SYN gets a cookie,
 * a spoofed source's included: a flood with A's address never makes A's
 * own connections fail. */
static void test_half_open_cookies(void)
{
	struct env e;
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = 16;
	cfg.max_half_open = 8;
	cfg.max_conns_per_source = 1;
	setup_cfg(&e, &cfg);
	/* A "flood" with A's address: SYNs never completed. */
	for (int p = 0; p < 12; p++)
		CHECK(syn(&e, SRC_A, p) == (LFE_TCP_SYN | LFE_TCP_ACK), "spoofed SYN %d answered", p);
	CHECK(lfe_tcp_stats(e.t)->half_open == 6, "lone source: up to the level (%llu)",
	      (unsigned long long)lfe_tcp_stats(e.t)->half_open);
	CHECK(lfe_tcp_stats(e.t)->syncookies_sent == 6, "then cookies: %llu",
	      (unsigned long long)lfe_tcp_stats(e.t)->syncookies_sent);
	CHECK(lfe_tcp_stats(e.t)->drop_src_cap == 0, "never RST: %llu",
	      (unsigned long long)lfe_tcp_stats(e.t)->drop_src_cap);
	/* A's own connections, through cookies, while its half-open are held. */
	for (int p = 12; p < 15; p++)
		CHECK(open_conn(&e, SRC_A, p), "A's real connection %d opens", p);
	CHECK(lfe_tcp_stats(e.t)->syncookies_ok == 3, "through cookies");
	lfe_tcp_free(e.t);

	/* Share of the half-open budget: A holds 6 of 8 (the level), B's SYN
	 * takes a slot, A's next gets a cookie (its share is 8 / 3). */
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = 16;
	cfg.max_half_open = 8;
	setup_cfg(&e, &cfg);
	for (int p = 0; p < 6; p++)
		syn(&e, SRC_A, p);
	CHECK(lfe_tcp_stats(e.t)->half_open == 6 && lfe_tcp_stats(e.t)->syncookies_sent == 0, "6 slots");
	syn(&e, SRC_B, 6);
	CHECK(lfe_tcp_stats(e.t)->half_open == 7, "B's SYN took a slot");
	CHECK(syn(&e, SRC_A, 7) == (LFE_TCP_SYN | LFE_TCP_ACK), "A answered");
	CHECK(lfe_tcp_stats(e.t)->half_open == 7 && lfe_tcp_stats(e.t)->syncookies_sent == 1,
	      "with a cookie: A is over its share");
	lfe_tcp_free(e.t);
}

static void test_cap_many_sources(void)
{
	/* Table of 16 (hash of 32): sources come and go, counts stay exact. */
	struct env e;
	setup(&e, 16, 1, 0);
	for (int round = 0; round < 3; round++) {
		for (int p = 0; p < MAXC; p++)
			CHECK(open_conn(&e, SRC_A + (uint32_t)p * 7919u, p), "round %d source %d opens", round, p);
		for (int p = 0; p < MAXC; p++) {
			struct lfe_tcp_seg r = seg(SRC_A + (uint32_t)p * 7919u, p, LFE_TCP_RST, 0);
			lfe_tcp_input(e.t, &r, e.now);
		}
		CHECK(lfe_tcp_stats(e.t)->conns_active == 0, "all gone");
	}
	CHECK(lfe_tcp_stats(e.t)->drop_src_cap == 0, "never capped");
	lfe_tcp_free(e.t);
}

static void test_eviction(void)
{
	struct env e;
	setup(&e, 4, 0, 0);
	for (int p = 0; p < 4; p++)
		CHECK(open_conn(&e, SRC_A, p), "conn %d opens", p);
	/* 1 and 2 are evictable; 2 was marked first, 1 re-marked later. */
	lfe_tcp_conn_set_evictable(e.conn[1], true);
	lfe_tcp_conn_set_evictable(e.conn[2], true);
	lfe_tcp_conn_set_evictable(e.conn[1], true);
	CHECK(open_conn(&e, SRC_B, 8), "a new client gets in on a full table");
	CHECK(e.last_closed == 40002 && e.last_reason == -ENOSPC, "oldest evictable (2) went: %u %d",
	      e.last_closed, e.last_reason);
	CHECK(sent_rst_to(&e, 2), "evicted peer got RST");
	CHECK(lfe_tcp_stats(e.t)->evicted == 1, "counted");
	/* Unmarking protects a connection. */
	lfe_tcp_conn_set_evictable(e.conn[1], false);
	CHECK(syn(&e, SRC_B, 9) == 0, "nothing evictable: SYN dropped");
	CHECK(lfe_tcp_stats(e.t)->drop_table_full == 1, "drop counted");
	CHECK(e.conn[1] && e.conn[0] && e.conn[3], "unmarked connections kept");
	lfe_tcp_conn_set_evictable(e.conn[3], true);
	CHECK(open_conn(&e, SRC_B, 10), "after marking 3, a new client gets in");
	CHECK(e.conn[3] == NULL && lfe_tcp_stats(e.t)->evicted == 2, "3 evicted");
	lfe_tcp_free(e.t);

	/* The heaviest source's idle connections go first: B's is the oldest
	 * mark, but A holds three. */
	setup(&e, 4, 0, 0);
	for (int p = 0; p < 3; p++)
		CHECK(open_conn(&e, SRC_A, p), "A %d opens", p);
	CHECK(open_conn(&e, SRC_B, 3), "B opens");
	lfe_tcp_conn_set_evictable(e.conn[3], true);
	lfe_tcp_conn_set_evictable(e.conn[1], true);
	lfe_tcp_conn_set_evictable(e.conn[0], true);
	CHECK(open_conn(&e, SRC_A + 7, 4), "C gets in on a full table");
	CHECK(e.last_closed == 40001 && e.last_reason == -ENOSPC, "A's oldest evictable (1) went: %u",
	      e.last_closed);
	CHECK(e.conn[3] != NULL, "B's kept");
	lfe_tcp_free(e.t);
}

static void test_deadline(void)
{
	struct env e;
	setup(&e, 4, 0, 0);
	CHECK(open_conn(&e, SRC_A, 0) && open_conn(&e, SRC_A, 1), "open");
	lfe_tcp_conn_set_deadline(e.conn[0], e.now + 50000);
	lfe_tcp_conn_set_deadline(e.conn[1], e.now + 50000);
	lfe_tcp_conn_set_deadline(e.conn[1], 0);   /* cleared */
	advance(&e, 40000);
	CHECK(e.conn[0] && e.deadline_calls == 0, "not before the deadline");
	advance(&e, 12000);
	CHECK(e.conn[0] == NULL && e.last_reason == -ETIME && sent_rst_to(&e, 0), "reset at the deadline");
	CHECK(lfe_tcp_stats(e.t)->deadline_closed == 1 && e.deadline_calls == 1, "counted once");
	CHECK(e.conn[1] != NULL, "cleared deadline never fires");
	/* on_deadline may keep the connection and set another one. */
	lfe_tcp_conn_set_deadline(e.conn[1], e.now + 5000);
	e.keep_on_deadline = true;
	advance(&e, 6000);
	CHECK(e.conn[1] && e.deadline_calls == 2, "kept by the app");
	advance(&e, 11000);
	CHECK(e.conn[1] == NULL && e.deadline_calls == 3, "second deadline resets");
	/* A deadline moved later does not fire early. */
	CHECK(open_conn(&e, SRC_A, 2), "open 2");
	lfe_tcp_conn_set_deadline(e.conn[2], e.now + 5000);
	lfe_tcp_conn_set_deadline(e.conn[2], e.now + 9000000);
	advance(&e, 8000000);
	CHECK(e.conn[2] != NULL, "moved deadline respected");
	advance(&e, 1100000);
	CHECK(e.conn[2] == NULL, "fires at the moved deadline");
	lfe_tcp_free(e.t);
}

static void test_idle_64bit(void)
{
	/* 4294968 ms: its µs do not fit 32 bits (they wrapped to 704 µs). */
	struct env e;
	setup(&e, 4, 0, 4294968ull * 1000u);
	CHECK(open_conn(&e, SRC_A, 0), "open");
	advance(&e, 1000000);
	CHECK(e.conn[0] != NULL, "alive after 1 s");
	advance(&e, 4293ull * 1000000u);
	CHECK(e.conn[0] != NULL, "alive after 4294 s");
	advance(&e, 2000000);
	CHECK(e.conn[0] == NULL && e.last_reason == -ETIMEDOUT, "idle timeout after 4294.968 s");
	lfe_tcp_free(e.t);

	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.idle_timeout_us = 1ull << 50;
	static const struct lfe_tcp_ops ops = { .tx = cb_tx, .on_open = cb_open, .on_data = cb_data,
						.on_close = cb_close };
	int err = 0;
	CHECK(lfe_tcp_new(&cfg, &ops, NULL, &err) == NULL && err == -EINVAL, "absurd idle refused");
}

/* SYN admission. Unknown sources: 10.1.0.0 + i, port 40100 (never opens). */
#define FLOOD(i) (0x0a010000u + (uint32_t)(i))
static unsigned flood(struct env *e, unsigned n, unsigned from)
{
	unsigned answered = 0;
	for (unsigned i = 0; i < n; i++)
		answered += syn(e, FLOOD(from + i), 100) == (LFE_TCP_SYN | LFE_TCP_ACK);
	return answered;
}

static void setup_admit(struct env *e, uint32_t half_open, uint32_t rate, uint32_t vrate, uint32_t vsrc)
{
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = 4096;
	cfg.max_half_open = half_open;
	cfg.max_conns_per_source = 0;
	cfg.syn_rate = rate;
	cfg.syn_rate_validated = vrate;
	cfg.validated_sources = vsrc;
	cfg.share_pressure_pct = 100;   /* tokens past the budget itself */
	setup_cfg(e, &cfg);
}

static void test_syn_budget(void)
{
	struct env e;
	/* Cookies always (half-open budget 0); 6,400 SYN/s: a 100-SYN burst. */
	setup_admit(&e, 0, 6400, 1280, 64);
	const struct lfe_tcp_stats *st = lfe_tcp_stats(e.t);
	CHECK(open_conn(&e, SRC_A, 0), "A completes a cookie handshake (and is validated)");
	CHECK(st->syncookies_ok == 1, "by cookie");
	CHECK(flood(&e, 300, 0) == 99, "the burst less A's SYN is answered");
	CHECK(st->drop_syn_budget == 201, "the rest dropped: %llu", (unsigned long long)st->drop_syn_budget);
	CHECK(st->syncookies_sent == 100, "no cookie made for a dropped SYN: %llu",
	      (unsigned long long)st->syncookies_sent);
	/* A, validated: its own bucket (1,280/s: a burst of 20) while the
	 * shared one is empty; then nothing more. */
	unsigned a = 0;
	for (int p = 1; p <= 25; p++)
		a += syn(&e, SRC_A, p) == (LFE_TCP_SYN | LFE_TCP_ACK);
	CHECK(a == 20, "validated A answered 20 of 25: %u", a);
	CHECK(syn(&e, SRC_B, 1) == 0, "unknown B is not");
	/* 10 ms: 64 tokens shared, 12.8 for A. */
	advance(&e, 10000);
	CHECK(flood(&e, 100, 1000) == 64, "10 ms of budget");
	a = 0;
	for (int p = 1; p <= 15; p++)
		a += syn(&e, SRC_A, p) == (LFE_TCP_SYN | LFE_TCP_ACK);
	CHECK(a == 12, "A's 10 ms: %u", a);
	/* A's budget full again, the shared one empty: A first takes its own. */
	advance(&e, 1000000);
	CHECK(flood(&e, 100, 2000) == 100, "a full burst after a second");
	CHECK(syn(&e, SRC_A, 1) == (LFE_TCP_SYN | LFE_TCP_ACK), "A still answered");
	/* The shed check before a parse (tcp.h) takes no token: the shared
	 * budget is empty (the burst went), A's own is full (20). */
	advance(&e, 1000000);
	CHECK(flood(&e, 100, 4000) == 100, "the burst");
	uint64_t d0 = st->drop_syn_budget;
	CHECK(lfe_tcp_syn_shed(e.t, FLOOD(5000), e.now), "an unknown SYN is shed");
	CHECK(st->drop_syn_budget == d0 + 1, "and counted");
	CHECK(!lfe_tcp_syn_shed(e.t, SRC_A, e.now), "validated A with tokens is not");
	CHECK(!lfe_tcp_syn_shed(e.t, SRC_A, e.now), "twice: no token taken");
	a = 0;
	for (int p = 3; p <= 30; p++)
		a += syn(&e, SRC_A, p) == (LFE_TCP_SYN | LFE_TCP_ACK);
	CHECK(a == 20, "A's burst whole after the checks: %u", a);
	CHECK(lfe_tcp_syn_shed(e.t, SRC_A, e.now), "then A is shed too");
	/* Past the validation's lifetime A is just another source. */
	advance(&e, (LFE_TCP_VALIDATED_TTL_S + 2) * 1000000ull);
	CHECK(flood(&e, 100, 3000) == 100, "the burst");
	CHECK(syn(&e, SRC_A, 2) == 0, "A no longer validated");
	lfe_tcp_free(e.t);

	/* No validated table: A's handshake earns it nothing. */
	setup_admit(&e, 0, 6400, 1280, 0);
	CHECK(open_conn(&e, SRC_A, 0), "A opens");
	CHECK(flood(&e, 100, 0) == 99, "burst");
	CHECK(syn(&e, SRC_A, 1) == 0, "A unknown without a table");
	lfe_tcp_free(e.t);

	/* Rate 0: no limit. */
	setup_admit(&e, 0, 0, 0, 64);
	CHECK(flood(&e, 2000, 0) == 2000, "every SYN answered");
	CHECK(lfe_tcp_stats(e.t)->drop_syn_budget == 0, "none dropped");
	lfe_tcp_free(e.t);

	/* Below the half-open budget SYNs take state and no token. */
	setup_admit(&e, 1000, 64, 64, 64);
	CHECK(flood(&e, 1000, 0) == 1000, "1000 half-open answered");
	CHECK(lfe_tcp_stats(e.t)->syncookies_sent == 0 && lfe_tcp_stats(e.t)->drop_syn_budget == 0,
	      "no cookie, no drop");
	CHECK(flood(&e, 100, 1000) == 16, "then cookies within the budget (16-SYN burst)");
	lfe_tcp_free(e.t);

	/* With per-source shares, cookies may go out from the budget's
	 * pressure level (75 % of 1000) on: tokens are needed from there. */
	struct lfe_tcp_cfg cfg;
	lfe_tcp_cfg_default(&cfg);
	cfg.max_conns = 4096;
	cfg.max_half_open = 1000;
	cfg.syn_rate = cfg.syn_rate_validated = 64;
	cfg.validated_sources = 64;
	setup_cfg(&e, &cfg);
	CHECK(flood(&e, 750, 0) == 750, "750 half-open answered, no token");
	CHECK(lfe_tcp_stats(e.t)->drop_syn_budget == 0, "none dropped");
	CHECK(flood(&e, 100, 1000) == 16, "then within the budget (16-SYN burst)");
	lfe_tcp_free(e.t);
}

int main(void)
{
	test_per_source_share();
	test_half_open_cookies();
	test_cap_many_sources();
	test_eviction();
	test_deadline();
	test_idle_64bit();
	test_syn_budget();
	return check_done();
}
