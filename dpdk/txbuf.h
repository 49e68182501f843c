/* dpdk/txbuf.h — a burst tx buffer: the frames one lcore makes for one
 * queue, gathered and sent in one rte_eth_tx_burst (l3fwd's pattern), for
 * the daemon's workers and ldapfe-gen's lcores alike.
 *
 * What a burst refuses is dropped (counted), or with `keep` held for the
 * next flush, first out. Optional, for the daemon: `ring` (software
 * steering: the lcore that owns the port's one queue sends them) and `imp`
 * (net/impair.h's drop/duplicate/reorder stage, before the burst).
 *
 * Thread rules: a buffer belongs to one lcore. Counts are added to the
 * caller's lfe_txbuf_stats, not kept here.
 */
#ifndef LFE_DPDK_TXBUF_H
#define LFE_DPDK_TXBUF_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "net/impair.h"

/* With an impairment stage, a buffer holds at most this many frames. */
#define LFE_TXBUF_IMPAIR_CAP 64u

struct lfe_txbuf_stats {
	uint64_t frames, bytes;   /* sent (to the port or the ring) */
	uint64_t ringed;          /* of them, to the ring */
	uint64_t dropped;         /* refused and freed */
};

struct lfe_txbuf {
	struct rte_mbuf **m;      /* cap slots, the owner's memory */
	uint16_t n, cap;
	uint16_t port_id, queue;
	/* After a short burst, up to this many refused frames stay for the
	 * next flush; more are dropped. 0: always dropped. Not with imp. */
	uint16_t keep;
	struct rte_ring *ring;    /* not NULL: frames go here instead of the port */
	struct lfe_impair *imp;   /* not NULL: frames pass it first (cap ≤ LFE_TXBUF_IMPAIR_CAP) */
};

static inline void lfe_txbuf_init(struct lfe_txbuf *b, struct rte_mbuf **slots, uint16_t cap,
				  uint16_t port_id, uint16_t queue)
{
	*b = (struct lfe_txbuf){ .m = slots, .cap = cap, .port_id = port_id, .queue = queue };
}

/* Send what the buffer holds (with imp: also what the stage releases by
 * now_us; call it with nothing held now and then). */
void lfe_txbuf_flush(struct lfe_txbuf *b, uint64_t now_us, struct lfe_txbuf_stats *st);

/* Queue m (the buffer owns it from here); a full buffer is flushed first. */
static inline void lfe_txbuf_push(struct lfe_txbuf *b, struct rte_mbuf *m, uint64_t now_us,
				  struct lfe_txbuf_stats *st)
{
	if (b->n == b->cap)
		lfe_txbuf_flush(b, now_us, st);
	b->m[b->n++] = m;
}

/* Free what the buffer holds, unsent (teardown). */
static inline void lfe_txbuf_discard(struct lfe_txbuf *b)
{
	if (b->n)
		rte_pktmbuf_free_bulk(b->m, b->n);
	b->n = 0;
}

#endif
