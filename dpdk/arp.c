/* dpdk/arp.c — ARP frames in mbufs (arp.h). */
#include <errno.h>
#include <string.h>

#include "dpdk/arp.h"

int lfe_dpdk_arp_frame(struct rte_mempool *pool, const struct lfe_arp_pkt *a,
		       const uint8_t eth_dst[LFE_ETH_ALEN], struct rte_mbuf **out)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		return -ENOMEM;
	ssize_t n = lfe_net_build_arp(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), eth_dst, a->sha, a);
	if (n < 0) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	m->data_len = (uint16_t)n;
	m->pkt_len = (uint32_t)n;
	*out = m;
	return 0;
}

int lfe_dpdk_arp_answer(struct rte_mbuf *m, const struct lfe_arp_pkt *req, const uint8_t mac[LFE_ETH_ALEN])
{
	/* The reply is made from a copy: the request's frame is written over. */
	struct lfe_arp_pkt r = { .op = 2, .spa = req->tpa, .tpa = req->spa };
	memcpy(r.sha, mac, LFE_ETH_ALEN);
	memcpy(r.tha, req->sha, LFE_ETH_ALEN);
	ssize_t n = lfe_net_build_arp(rte_pktmbuf_mtod(m, uint8_t *), (size_t)m->buf_len - m->data_off, r.tha,
				      mac, &r);
	if (n < 0)
		return -1;
	m->data_len = (uint16_t)n;
	m->pkt_len = (uint32_t)n;
	return 0;
}
