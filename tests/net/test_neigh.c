/* tests/dataplane/test_neigh.c — net/neigh.c (frames held for an
 * unresolved neighbour: asked at once, released in order when it answers,
 * per-neighbour queue bound, the table bound, asked again after the
 * retry interval, dropped and counted after the hold time, the overall
 * request bucket under a burst of new neighbours) and net.c's
 * lfe_arp_cache_use (refresh asked in the last quarter of an entry's
 * life, once a second; expired entries absent). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "net/neigh.h"
#include "net/net.h"
#include "tests/check.h"

static struct lfe_neigh nb;
static int frames[4096];
static unsigned n_asked, n_dropped;
static uint32_t last_asked;

static void ask(void *ctx, uint16_t port, uint32_t ip)
{
	(void)ctx;
	(void)port;
	n_asked++;
	last_asked = ip;
}

static void drop(void *ctx, void *frame)
{
	(void)ctx;
	(void)frame;
	n_dropped++;
}

static void test_hold_release(void)
{
	lfe_neigh_init(&nb);
	bool a;
	uint64_t t = 1000;
	CHECK(lfe_neigh_hold(&nb, 0x0a000002, 1, &frames[0], t, &a) == 0 && a, "first frame: held, asked");
	CHECK(lfe_neigh_hold(&nb, 0x0a000002, 1, &frames[1], t + 10, &a) == 0 && !a, "second: not asked again");
	for (unsigned i = 2; i < LFE_NEIGH_QLEN; i++)
		CHECK(lfe_neigh_hold(&nb, 0x0a000002, 1, &frames[i], t + 20, &a) == 0, "held %u", i);
	CHECK(lfe_neigh_hold(&nb, 0x0a000002, 1, &frames[9], t + 30, &a) == -ENOBUFS, "queue bound");
	CHECK(nb.st.dropped_full == 1 && nb.st.held == LFE_NEIGH_QLEN, "counted");
	void *out[LFE_NEIGH_QLEN];
	uint16_t port = 0;
	CHECK(lfe_neigh_resolved(&nb, 0x0a000003, out, &port) == 0, "another neighbour: nothing");
	unsigned k = lfe_neigh_resolved(&nb, 0x0a000002, out, &port);
	CHECK(k == LFE_NEIGH_QLEN && port == 1, "released %u on port %u", k, port);
	for (unsigned i = 0; i < k; i++)
		CHECK(out[i] == &frames[i], "in order: %u", i);
	CHECK(nb.n_pending == 0 && lfe_neigh_resolved(&nb, 0x0a000002, out, &port) == 0, "entry freed");
	CHECK(lfe_neigh_hold(&nb, 0, 0, &frames[0], t, &a) == -ENOBUFS, "no next hop");
}

static void test_retry_timeout(void)
{
	lfe_neigh_init(&nb);
	n_asked = n_dropped = 0;
	bool a;
	uint64_t t = 5000000;
	CHECK(lfe_neigh_hold(&nb, 0x0a000007, 0, &frames[0], t, &a) == 0 && a, "asked");
	lfe_neigh_tick(&nb, t + LFE_NEIGH_RETRY_US - LFE_NEIGH_TICK_US, ask, drop, NULL);
	CHECK(n_asked == 0, "not before the interval");
	lfe_neigh_tick(&nb, t + LFE_NEIGH_RETRY_US, ask, drop, NULL);
	CHECK(n_asked == 1 && last_asked == 0x0a000007, "asked again (%u)", n_asked);
	CHECK(lfe_neigh_hold(&nb, 0x0a000007, 0, &frames[1], t + LFE_NEIGH_RETRY_US + 5, &a) == 0 && !a,
	      "a frame right after: no extra request");
	lfe_neigh_tick(&nb, t + LFE_NEIGH_HOLD_US - LFE_NEIGH_TICK_US, ask, drop, NULL);
	CHECK(n_dropped == 0 && nb.n_pending == 1, "still waiting");
	lfe_neigh_tick(&nb, t + LFE_NEIGH_HOLD_US, ask, drop, NULL);
	CHECK(n_dropped == 2 && nb.st.dropped_timeout == 2 && nb.n_pending == 0, "dropped after the hold time");
}

static void test_table_and_bucket(void)
{
	lfe_neigh_init(&nb);
	bool a;
	unsigned asked = 0;
	uint64_t t = 1000;
	/* A burst of new neighbours, all at once: the bucket's burst asks
	 * every one of them (100 clients at once). */
	for (uint32_t i = 0; i < LFE_NEIGH_PENDING; i++) {
		CHECK(lfe_neigh_hold(&nb, 0x0b000000 + i, 0, &frames[i], t, &a) == 0, "held %u", i);
		asked += a;
	}
	CHECK(asked == LFE_NEIGH_REQ_BURST, "asked %u", asked);
	CHECK(lfe_neigh_hold(&nb, 0x0c000000, 0, &frames[999], t, &a) == -ENOBUFS, "table bound");
	/* A flood of spoofed next hops: past the burst, the rate. */
	void *out[LFE_NEIGH_QLEN];
	uint16_t port;
	for (uint32_t i = 0; i < LFE_NEIGH_PENDING; i++)
		lfe_neigh_resolved(&nb, 0x0b000000 + i, out, &port);
	asked = 0;
	for (uint32_t i = 0; i < 1000; i++) {
		CHECK(lfe_neigh_hold(&nb, 0x0d000000 + i % LFE_NEIGH_PENDING, 0, &frames[i], t + 1000 * i, &a) == 0 ||
		      nb.n_pending == LFE_NEIGH_PENDING, "flood %u", i);
		asked += a;
	}
	/* 1 s at LFE_NEIGH_REQ_RATE: the bucket refilled by at most ~2000
	 * (plus what was left), the per-neighbour interval allowing ~5 each. */
	CHECK(asked <= LFE_NEIGH_REQ_RATE + LFE_NEIGH_REQ_BURST, "flood asked %u", asked);
	CHECK(nb.st.requests_limited + nb.st.requests >= asked, "counted");
}

static void test_refresh(void)
{
	static struct lfe_arp_cache c;
	const uint8_t mac[LFE_ETH_ALEN] = { 2, 0, 0, 0, 0, 7 };
	lfe_arp_cache_init(&c, 300000000u);
	uint64_t t = 10000000;
	lfe_arp_cache_put(&c, 0x0a000002, mac, t);
	bool r = false;
	CHECK(lfe_arp_cache_use(&c, 0x0a000002, t + 200000000, &r) != NULL && !r, "young: no refresh");
	CHECK(lfe_arp_cache_use(&c, 0x0a000002, t + 226000000, &r) != NULL && r, "last quarter: refresh");
	r = false;
	CHECK(lfe_arp_cache_use(&c, 0x0a000002, t + 226500000, &r) != NULL && !r, "once a second");
	CHECK(lfe_arp_cache_use(&c, 0x0a000002, t + 227000000, &r) != NULL && r, "again a second later");
	lfe_arp_cache_put(&c, 0x0a000002, mac, t + 227000100);   /* the answer */
	r = false;
	CHECK(lfe_arp_cache_use(&c, 0x0a000002, t + 228000000, &r) != NULL && !r, "renewed");
	CHECK(lfe_arp_cache_use(&c, 0x0a000002, t + 227000100 + 300000001, &r) == NULL, "expired: absent");
	CHECK(lfe_arp_cache_use(&c, 0x0a000009, t, &r) == NULL, "unknown: absent");
}

int main(void)
{
	test_hold_release();
	test_retry_timeout();
	test_table_and_bucket();
	test_refresh();
	return check_done();
}
