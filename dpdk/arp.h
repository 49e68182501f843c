/* dpdk/arp.h — ARP frames in mbufs, for ldapfe and ldapfe-gen: the
 * responder (a request answered in its own mbuf) and the frames either
 * sends of its own accord (requests, gratuitous ARP, announcements).
 * Which addresses are ours, and what is learned from a frame, stay the
 * caller's (the daemon: net/neigh.h's cache; the generator: its next hop).
 * Thread rules: none of its own; the mbufs are the caller's.
 */
#ifndef LFE_DPDK_ARP_H
#define LFE_DPDK_ARP_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "net/net.h"

/* The frame of ARP message a (op, sha/spa, tha/tpa), from a->sha to
 * eth_dst, in a fresh mbuf of pool. 0, -ENOMEM (the pool is dry) or
 * -EMSGSIZE (no room in an mbuf: cannot happen with a default pool). */
int lfe_dpdk_arp_frame(struct rte_mempool *pool, const struct lfe_arp_pkt *a,
		       const uint8_t eth_dst[LFE_ETH_ALEN], struct rte_mbuf **out);

/* The ARP responder: the reply to request req (parsed from m, one of our
 * addresses asked: req->op 1, req->tpa ours) written over m, from mac.
 * 0: m is the reply, to be sent; -1: m is unchanged, still the caller's. */
int lfe_dpdk_arp_answer(struct rte_mbuf *m, const struct lfe_arp_pkt *req, const uint8_t mac[LFE_ETH_ALEN]);

#endif
