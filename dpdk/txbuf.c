/* dpdk/txbuf.c — burst tx buffers (txbuf.h). */
#include <string.h>

#include <rte_ethdev.h>

#include "dpdk/txbuf.h"

void lfe_txbuf_flush(struct lfe_txbuf *b, uint64_t now_us, struct lfe_txbuf_stats *st)
{
	struct rte_mbuf **pk = b->m;
	uint32_t n = b->n;
	void *imp_out[2 * LFE_TXBUF_IMPAIR_CAP + LFE_IMPAIR_MAX_HOLD];

	if (b->imp) {
		n = lfe_impair_apply(b->imp, (void *const *)pk, n, imp_out,
				     (uint32_t)(sizeof(imp_out) / sizeof(imp_out[0])), now_us);
		pk = (struct rte_mbuf **)imp_out;
	}
	b->n = 0;
	uint32_t done = 0;
	while (done < n) {
		uint16_t chunk = (uint16_t)RTE_MIN(n - done, b->cap);
		uint16_t sent;
		if (b->ring) {
			sent = (uint16_t)rte_ring_mp_enqueue_burst(b->ring, (void **)(pk + done), chunk, NULL);
			st->ringed += sent;
		} else {
			sent = rte_eth_tx_burst(b->port_id, b->queue, pk + done, chunk);
		}
		for (uint16_t i = 0; i < sent; i++)
			st->bytes += pk[done + i]->pkt_len;
		st->frames += sent;
		if (sent < chunk) {
			uint16_t rest = (uint16_t)(chunk - sent);
			if (rest <= b->keep && !b->imp) {
				/* Without imp the buffer holds at most cap: this
				 * was its one chunk. Kept, first out next time. */
				memmove(b->m, pk + sent, (size_t)rest * sizeof(b->m[0]));
				b->n = rest;
				return;
			}
			st->dropped += chunk - sent;
			rte_pktmbuf_free_bulk(pk + done + sent, chunk - sent);
		}
		done += chunk;
	}
}
