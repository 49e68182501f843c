/* common/share.h — the one admission rule for every per-source bound:
 * connections and half-open connections (tcp.c), TLS handshakes in
 * progress and verifier jobs (both held in offload.c).
 *
 * Many users reach a directory through one NAT gateway, load balancer or
 * application server, so a per-source bound must not bite a busy
 * legitimate client while the shared resource has room. The rule:
 *
 *   - below the pressure level of the resource (`pressure`, by default
 *     LFE_SHARE_PRESSURE_PCT of its capacity) no per-source bound applies;
 *   - at or above it, a source may hold at most its fair share:
 *     capacity / (sources holding some, counting the asking one, plus one
 *     for a source yet to come), and never less than the floor (the old
 *     fixed per-source value, so a configuration that named one keeps
 *     that much under pressure). Counting a newcomer keeps what lies
 *     above the pressure level for sources below their share: one
 *     address alone can take the resource up to the level, never past
 *     it, so a second address always finds room (for the TCP table also
 *     through eviction of the heaviest source's idle connections).
 *
 * The owner of the resource keeps the counts (used, the source's own, the
 * number of sources) and decides what a refusal means (RST, a SYN cookie,
 * a busy result); where it evicts at capacity, it takes idle holdings
 * of the heaviest source first (tcp.c). No state here: plain arithmetic,
 * inline, O(1).
 *
 * Sources: struct lfe_src is an IPv4 address today (host order); an IPv6
 * source will be its /64 prefix in the same 128 bits (v4 is stored
 * v4-mapped, ::ffff:a.b.c.d), so the tables keyed by it need no change.
 *
 * DPDK-free, no globals; unit test tests/net/test_share.c.
 */
#ifndef LFE_COMMON_SHARE_H
#define LFE_COMMON_SHARE_H

#include <stdbool.h>
#include <stdint.h>

/* Default pressure level, percent of capacity. 75: with the shipped
 * max_conns_per_core (4096), 3,000 connections from one address are
 * below it; a second source then pushes the first to its fair share. */
#define LFE_SHARE_PRESSURE_PCT 75u

struct lfe_src {
	uint64_t hi, lo;
};

static inline struct lfe_src lfe_src_v4(uint32_t addr)
{
	return (struct lfe_src){ .hi = 0, .lo = 0xffffull << 32 | addr };
}

static inline bool lfe_src_eq(struct lfe_src a, struct lfe_src b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

/* One shared resource's rule. */
struct lfe_share {
	uint32_t cap;        /* capacity of the resource */
	uint32_t pressure;   /* below this many in use: no per-source bound */
	uint32_t floor;      /* the fair share is never below this */
};

/* cap ≥ 0 (0: nothing to share, the rule never refuses); pct 0..100 of cap (0 = always under pressure: the fair share
 * always applies; 100 = never: no per-source bound, the capacity alone);
 * floor 0 = none. */
static inline struct lfe_share lfe_share_make(uint32_t cap, uint32_t pct, uint32_t floor)
{
	if (pct > 100)
		pct = 100;
	return (struct lfe_share){ .cap = cap, .pressure = (uint32_t)((uint64_t)cap * pct / 100),
				   .floor = floor };
}

/* The most one source may hold under pressure when `sources` distinct
 * sources share the resource (lfe_share_admit counts a newcomer in). */
static inline uint32_t lfe_share_fair(const struct lfe_share *s, uint32_t sources)
{
	uint32_t fair = s->cap / (sources ? sources : 1);
	if (fair < s->floor)
		fair = s->floor;
	return fair ? fair : 1;
}

/* May a source that holds `mine` take one more, with `used` in use and
 * `sources` distinct sources holding some (the asking one included only
 * if mine > 0: it is added here when mine == 0)? The capacity itself is
 * the owner's to enforce (with eviction where it has one). */
static inline bool lfe_share_admit(const struct lfe_share *s, uint32_t used, uint32_t mine,
				   uint32_t sources)
{
	if (used < s->pressure || s->pressure >= s->cap)
		return true;
	return mine < lfe_share_fair(s, sources + (mine == 0) + 1);
}

#endif
