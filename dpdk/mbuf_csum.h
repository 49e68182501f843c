/* dpdk/mbuf_csum.h — a received mbuf's checksum verdicts (the port's
 * RTE_MBUF_F_RX_IP_CKSUM_* and RTE_MBUF_F_RX_L4_CKSUM_* flags) as the
 * LFE_NET_RX_* bits lfe_net_parse_rx takes (net.h). For ports asked for
 * receive checksum offload only: without it the flags mean nothing, and
 * the caller passes 0 (everything summed in software). Shared by the
 * daemon's worker and ldapfe-gen. */
#ifndef LFE_DPDK_MBUF_CSUM_H
#define LFE_DPDK_MBUF_CSUM_H

#include <rte_mbuf.h>

#include "net/net.h"

static inline unsigned lfe_mbuf_rx_csum(const struct rte_mbuf *m)
{
	uint64_t ip = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK, l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	return (ip == RTE_MBUF_F_RX_IP_CKSUM_GOOD ? LFE_NET_RX_IP_GOOD : 0u) |
	       (ip == RTE_MBUF_F_RX_IP_CKSUM_BAD ? LFE_NET_RX_IP_BAD : 0u) |
	       (l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD ? LFE_NET_RX_L4_GOOD : 0u) |
	       (l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD ? LFE_NET_RX_L4_BAD : 0u);
}

#endif
