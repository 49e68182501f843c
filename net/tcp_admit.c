/* net/tcp_admit.c — SYN admission while SYN cookies are out (see
 * tcp.h, struct lfe_tcp_cfg syn_rate): two token buckets and the table of
 * validated sources.
 *
 * A cookie SYN,ACK costs the core a connection-table miss, a per-source
 * count, a keyed hash and a frame out (~0.5 µs here); a flood at a
 * generator's line rate would take the whole core and starve the
 * connections it already has. So once cookies may be out (half-open
 * connections at the pressure level of their budget, share.h: past it a
 * source over its share gets a cookie), a SYN
 * must hold a token before any of that work; without one it is dropped
 * where it stands (the caller counts drop_syn_budget).
 *
 * Sources that completed a handshake with this core (a real address: it
 * received our SYN,ACK) are remembered for LFE_TCP_VALIDATED_TTL_S in a
 * direct-mapped table indexed by a keyed hash of the address, so an
 * attacker who does not know the key cannot aim addresses at a chosen
 * slot. Their SYNs draw on their own bucket first, then on the shared
 * one: a spoofed flood from unknown addresses cannot crowd out clients the
 * core already knows; a flood spoofing a known address gets at most its
 * bucket (the reflection it causes is one SYN,ACK per SYN, no larger).
 *
 * Token arithmetic: a bucket holds tokens × 10^6 and gains `rate` per µs,
 * so any rate up to 2^32 per second is exact; it holds at most a 1/64 s
 * burst (at least LFE_TCP_ADMIT_MIN_BURST SYNs).
 */
#include "net/tcp_int.h"

#include <errno.h>
#include <stdlib.h>

#define ONE 1000000ull                 /* one token */
#define LFE_TCP_ADMIT_MIN_BURST 16u
#define TTL_UNITS ((uint32_t)(LFE_TCP_VALIDATED_TTL_S * 1000000ull >> 20))   /* 2^20 µs units */

static void bucket_init(struct lfe_tcp_bucket *b, uint32_t rate, uint64_t now)
{
	uint64_t burst = rate / 64u;
	if (burst < LFE_TCP_ADMIT_MIN_BURST)
		burst = LFE_TCP_ADMIT_MIN_BURST;
	b->rate = rate;
	b->cap = burst * ONE;
	b->tok = b->cap;
	b->last = now;
}

static void bucket_refill(struct lfe_tcp_bucket *b, uint64_t now)
{
	if (now > b->last) {
		uint64_t dt = now - b->last;
		if (dt > 1000000000ull)   /* 1000 s refills any bucket; no overflow below */
			dt = 1000000000ull;
		uint64_t tok = b->tok + dt * b->rate;
		b->tok = tok < b->cap ? tok : b->cap;
		b->last = now;
	}
}

static bool bucket_take(struct lfe_tcp_bucket *b, uint64_t now)
{
	if (!b->rate)
		return true;
	bucket_refill(b, now);
	if (b->tok < ONE)
		return false;
	b->tok -= ONE;
	return true;
}

static inline uint32_t vslot(const struct lfe_tcp_admit *a, uint32_t addr)
{
	uint64_t h = ((uint64_t)addr ^ a->vkey) * a->vmul;
	return (uint32_t)(h >> 32) & a->vmask;
}

int lfe_tcp_admit_init(struct lfe_tcp *t, uint64_t key0, uint64_t key1)
{
	struct lfe_tcp_admit *a = &t->adm;
	bucket_init(&a->any, t->cfg.syn_rate, 0);
	bucket_init(&a->known, t->cfg.syn_rate_validated, 0);
	a->vkey = key0;
	a->vmul = key1 | 1;
	if (!t->cfg.validated_sources)
		return 0;
	uint32_t n = 1;
	while (n < t->cfg.validated_sources)
		n <<= 1;
	a->vsrc = calloc(n, sizeof(*a->vsrc));
	if (!a->vsrc)
		return -ENOMEM;
	a->vmask = n - 1;
	return 0;
}

void lfe_tcp_admit_fini(struct lfe_tcp *t)
{
	free(t->adm.vsrc);
	t->adm.vsrc = NULL;
}

static bool validated(const struct lfe_tcp_admit *a, uint32_t addr, uint64_t now)
{
	if (!a->vsrc)
		return false;
	uint64_t e = a->vsrc[vslot(a, addr)];
	/* An empty slot is (0, 0): "until 0" is never in the future. */
	return (uint32_t)(e >> 32) == addr && (int32_t)((uint32_t)e - (uint32_t)(now >> 20)) > 0;
}

void lfe_tcp_admit_validated(struct lfe_tcp *t, uint32_t addr, uint64_t now)
{
	struct lfe_tcp_admit *a = &t->adm;
	if (!a->vsrc)
		return;
	uint64_t *e = &a->vsrc[vslot(a, addr)];
	uint32_t now_u = (uint32_t)(now >> 20);
	/* Write only when the entry is another address or past half its
	 * life: a busy client's every connection costs a read, not a store. */
	if ((uint32_t)(*e >> 32) == addr && (int32_t)((uint32_t)*e - now_u) > (int32_t)(TTL_UNITS / 2))
		return;
	*e = (uint64_t)addr << 32 | (uint32_t)(now_u + TTL_UNITS);
}

static bool bucket_has(struct lfe_tcp_bucket *b, uint64_t now)
{
	if (!b->rate)
		return true;
	bucket_refill(b, now);
	return b->tok >= ONE;
}

bool lfe_tcp_syn_shed(struct lfe_tcp *t, uint32_t addr, uint64_t now)
{
	struct lfe_tcp_admit *a = &t->adm;
	if (t->st.half_open < t->ho_share.pressure || bucket_has(&a->any, now) ||
	    (validated(a, addr, now) && bucket_has(&a->known, now)))
		return false;
	t->st.drop_syn_budget++;
	return true;
}

bool lfe_tcp_admit_syn(struct lfe_tcp *t, uint32_t addr, uint64_t now)
{
	struct lfe_tcp_admit *a = &t->adm;
	if (t->st.half_open < t->ho_share.pressure || (validated(a, addr, now) && bucket_take(&a->known, now)) ||
	    bucket_take(&a->any, now))
		return true;
	t->st.drop_syn_budget++;
	return false;
}
