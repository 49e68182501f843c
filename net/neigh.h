/* net/neigh.h — neighbours resolved without dropping: frames to a
 * next hop whose MAC is not known wait in a small bounded queue per
 * neighbour (as Linux's unres_qlen) while we ask; they leave when the
 * answer comes, and are dropped and counted when it does not come within
 * LFE_NEIGH_HOLD_US. ARP requests are rate-limited per neighbour (one
 * every LFE_NEIGH_RETRY_US) and overall (a token bucket of
 * LFE_NEIGH_REQ_RATE a second, LFE_NEIGH_REQ_BURST deep), so a burst of
 * new clients is asked at once and a flood of spoofed sources costs at
 * most the bucket. Learning is not here: what teaches a MAC stays
 * lfe_arp_learnable (net.h), as strict as ever.
 *
 * DPDK-free: a held frame is an opaque pointer (the daemon's mbuf); the
 * caller fills in the destination MAC and sends what lfe_neigh_resolved
 * hands back, and frees what lfe_neigh_tick drops. One struct per worker
 * lcore, no locks, no allocation (fixed arrays); unit test
 * tests/net/test_neigh.c.
 */
#ifndef LFE_NET_NEIGH_H
#define LFE_NET_NEIGH_H

#include <stdbool.h>
#include <stdint.h>

#define LFE_NEIGH_PENDING   256u      /* neighbours being resolved at once */
#define LFE_NEIGH_QLEN      4u        /* frames held per neighbour */
#define LFE_NEIGH_RETRY_US  200000u   /* a neighbour is asked again after */
#define LFE_NEIGH_HOLD_US   1000000u  /* unanswered this long: its frames are dropped */
#define LFE_NEIGH_REQ_RATE  2000u     /* ARP requests a second, all neighbours */
#define LFE_NEIGH_REQ_BURST 256u
#define LFE_NEIGH_TICK_US   1000u     /* lfe_neigh_tick looks at most this often */

struct lfe_neigh_pend {
	uint32_t ip;                  /* 0 = free */
	uint16_t port;
	uint8_t n;                    /* frames held */
	uint64_t since_us;            /* first frame held */
	uint64_t asked_us;            /* last request (0: none yet) */
	void *q[LFE_NEIGH_QLEN];
};

struct lfe_neigh_stats {
	uint64_t held;                /* frames that waited for an answer */
	uint64_t released;            /* ... and left when it came */
	uint64_t dropped_timeout;     /* ... dropped: no answer within LFE_NEIGH_HOLD_US */
	uint64_t dropped_full;        /* not held: its queue or the table was full */
	uint64_t requests;            /* ARP requests asked for */
	uint64_t requests_limited;    /* requests the overall bucket deferred */
};

struct lfe_neigh {
	struct lfe_neigh_pend p[LFE_NEIGH_PENDING];
	uint32_t n_pending;
	uint64_t tok, tok_us;         /* overall bucket: tokens × 10^6, last refill */
	uint64_t tick_us;             /* last lfe_neigh_tick that looked */
	struct lfe_neigh_stats st;
};

void lfe_neigh_init(struct lfe_neigh *n);

/* Hold frame for next hop ip (out of port) until it is resolved. Returns
 * 0 (held: the caller owns it no more) or -ENOBUFS (that neighbour's
 * queue or the table is full: the caller drops and frees the frame,
 * counted in dropped_full). *ask: send an ARP request for ip now (the
 * first frame, or the per-neighbour interval passed; within the bucket). */
int lfe_neigh_hold(struct lfe_neigh *n, uint32_t ip, uint16_t port, void *frame, uint64_t now_us,
		   bool *ask);

/* ip's MAC is known now: up to LFE_NEIGH_QLEN held frames, oldest first,
 * into frames (the caller sets their destination and sends them); the
 * entry is freed. Returns how many (0 if nothing was held for ip). */
unsigned lfe_neigh_resolved(struct lfe_neigh *n, uint32_t ip, void *frames[LFE_NEIGH_QLEN],
			    uint16_t *port);

/* Timers: for each entry whose request is due again, ask(ctx, port, ip)
 * (within the bucket); for each entry unanswered for LFE_NEIGH_HOLD_US,
 * drop(ctx, frame) for each frame (counted in dropped_timeout) and free
 * it. O(LFE_NEIGH_PENDING) once per LFE_NEIGH_TICK_US while anything is
 * pending, O(1) otherwise. */
typedef void (*lfe_neigh_ask_fn)(void *ctx, uint16_t port, uint32_t ip);
typedef void (*lfe_neigh_drop_fn)(void *ctx, void *frame);
void lfe_neigh_tick(struct lfe_neigh *n, uint64_t now_us, lfe_neigh_ask_fn ask, lfe_neigh_drop_fn drop,
		    void *ctx);

/* Drop everything held (shutdown): drop(ctx, frame) for each. */
void lfe_neigh_flush(struct lfe_neigh *n, lfe_neigh_drop_fn drop, void *ctx);

#endif
