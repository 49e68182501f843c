/* net/net.h — Ethernet, ARP, IPv4, ICMP and TCP headers: parse, build,
 * checksum. Pure C, no DPDK: the worker hands it frame bytes, tests and the
 * fuzzer hand it arbitrary buffers.
 *
 * Addresses and ports in the parsed structs are in host byte order (what
 * net/tcp.h expects); MAC addresses are 6 raw bytes.
 *
 * Parsing never trusts a length field: every header length is checked
 * against what the frame holds. A frame we do not handle gets a negative
 * errno and pkt->drop names the reason so the worker can count it.
 * Nothing here allocates or keeps state, except the ARP cache which the
 * caller owns (one per lcore).
 */
#ifndef LFE_NET_NET_H
#define LFE_NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/ctr.h"

#include "net/tcp.h"

#define LFE_ETH_ALEN     6u
#define LFE_ETH_HLEN     14u
#define LFE_IPV4_HLEN    20u
#define LFE_TCP_HLEN     20u
#define LFE_ARP_LEN      28u     /* Ethernet/IPv4 ARP payload */
#define LFE_ETH_MIN_FRAME 60u    /* without FCS: short frames are padded */
#define LFE_ETHERTYPE_IPV4 0x0800u
#define LFE_ETHERTYPE_ARP  0x0806u
#define LFE_IPPROTO_ICMP 1u
#define LFE_IPPROTO_TCP  6u
/* Headers we emit: Ethernet + IPv4 + TCP with options, 40 bytes at most
 * (a SYN's MSS, SACK-permitted, timestamps and window scale take 20; an
 * ACK's timestamps and SACK blocks up to 40). */
#define LFE_TCP_OPT_MAX 40u
#define LFE_NET_TCP_HDR_MAX (LFE_ETH_HLEN + LFE_IPV4_HLEN + LFE_TCP_HLEN + LFE_TCP_OPT_MAX)

/* What a frame is, when it is something we handle. */
enum lfe_net_kind {
	LFE_NET_ARP = 1,
	LFE_NET_ICMP_ECHO = 2,   /* ICMP echo request */
	LFE_NET_TCP = 3,
};

/* Why a frame was dropped (index into the per-lcore drop counters). */
enum lfe_net_drop {
	LFE_DROP_NONE = 0,
	LFE_DROP_SHORT,          /* truncated header */
	LFE_DROP_ETHERTYPE,      /* not IPv4 or ARP (incl. VLAN tags, IPv6) */
	LFE_DROP_ARP,            /* ARP we do not handle (not Ethernet/IPv4) */
	LFE_DROP_IP_VERSION,     /* not version 4 or IHL < 5 */
	LFE_DROP_IP_LEN,         /* total length inconsistent with the frame */
	LFE_DROP_IP_CSUM,
	LFE_DROP_IP_FRAG,        /* fragments (MF set or offset != 0) */
	LFE_DROP_IP_OPTIONS,     /* IPv4 options: we do not handle any */
	LFE_DROP_IP_ADDR,        /* broadcast/multicast/zero source */
	LFE_DROP_PROTO,          /* not ICMP or TCP */
	LFE_DROP_ICMP,           /* ICMP other than echo request, or malformed */
	LFE_DROP_ICMP_CSUM,
	LFE_DROP_TCP_HDR,        /* data offset or options malformed */
	LFE_DROP_TCP_CSUM,
	LFE_DROP_NOT_OURS,       /* addressed to another host */
	LFE_DROP_NO_ARP,         /* tx: no MAC known for the next hop */
	LFE_DROP_NO_MBUF,        /* tx: mbuf pool empty */
	LFE_DROP_TX_FULL,        /* tx: the queue did not take it */
	LFE_DROP_STEER_FULL,     /* software steering ring full */
	LFE_DROP_MULTISEG,       /* rx frame in several mbuf segments */
	LFE_DROP_MAX
};

/* Names of enum lfe_net_drop values, for telemetry and logs. */
extern const char *const lfe_net_drop_names[LFE_DROP_MAX];

/* The drop counters of one core, by reason, and their table (common/ctr.h):
 * one labelled family, ldapfe_drops_total{reason=NAME}, rows named
 * drop_NAME (NAME lfe_net_drop_names'), sparse. */
struct lfe_net_drops {
	uint64_t n[LFE_DROP_MAX];
};
extern const struct lfe_ctr_table lfe_net_drop_ctrs;

struct lfe_arp_pkt {
	uint16_t op;                     /* 1 request, 2 reply */
	uint8_t sha[LFE_ETH_ALEN];
	uint32_t spa;
	uint8_t tha[LFE_ETH_ALEN];
	uint32_t tpa;
};

struct lfe_net_pkt {
	enum lfe_net_drop drop;          /* set when parse fails */
	const uint8_t *eth_dst, *eth_src;
	uint16_t ethertype;
	/* IPv4 */
	uint32_t saddr, daddr;
	uint8_t ttl, proto;
	uint16_t ip_id;
	size_t l3_off, l4_off, l4_len;   /* offsets into the frame; l4_len from IP total length */
	struct lfe_arp_pkt arp;          /* LFE_NET_ARP */
	struct lfe_tcp_seg seg;          /* LFE_NET_TCP (laddr = daddr, raddr = saddr) */
};

/* Parse a frame. Returns an enum lfe_net_kind, or a negative errno with
 * pkt->drop set: -EBADMSG (malformed), -EPROTONOSUPPORT (valid but not
 * handled), -EINVAL (checksum). Verifies the IPv4 header checksum, the ICMP
 * checksum and the TCP checksum (pseudo-header included). */
int lfe_net_parse(const uint8_t *frame, size_t len, struct lfe_net_pkt *pkt);

/* A port's receive checksum verdicts for one frame (the worker maps the
 * mbuf's RTE_MBUF_F_RX_IP_CKSUM_* and RTE_MBUF_F_RX_L4_CKSUM_* to these).
 * GOOD: the port verified that checksum, the parse skips it. BAD: the
 * frame is dropped with the reason a software mismatch gives (ip_csum,
 * tcp_csum). Neither (the port's UNKNOWN or NONE, or no offload): verified
 * in software. The L4 verdicts apply to TCP only; ICMP is always summed
 * here. Every length check runs whatever the verdict. */
enum lfe_net_rx_csum {
	LFE_NET_RX_IP_GOOD = 1u << 0,
	LFE_NET_RX_IP_BAD = 1u << 1,
	LFE_NET_RX_L4_GOOD = 1u << 2,
	LFE_NET_RX_L4_BAD = 1u << 3,
};

/* lfe_net_parse with the port's verdicts: rx_csum is an OR of enum
 * lfe_net_rx_csum (0: lfe_net_parse exactly). */
int lfe_net_parse_rx(const uint8_t *frame, size_t len, unsigned rx_csum, struct lfe_net_pkt *pkt);

/* Internet checksum helpers (RFC 1071). Sums are 32-bit accumulators in
 * network order words; fold gives the final complemented 16-bit value in
 * host order (store it with htons). */
uint32_t lfe_csum_add(uint32_t sum, const void *data, size_t len);
uint16_t lfe_csum_fold(uint32_t sum);
/* Checksum of a TCP segment (hdr + payload, len bytes, checksum field as it
 * is) over the IPv4 pseudo-header; addresses in host order. 0 when valid. */
uint16_t lfe_tcp_csum(uint32_t saddr, uint32_t daddr, const void *tcp, size_t len);
/* The IPv4 pseudo-header sum of a TCP segment of len bytes (header +
 * payload), folded and NOT complemented, host order: what transmit
 * checksum offload wants in the TCP checksum field (rte_ipv4_phdr_cksum's
 * value). Summing the segment with this in the field and complementing
 * gives the full checksum. */
uint16_t lfe_tcp_pseudo_csum(uint32_t saddr, uint32_t daddr, size_t len);

/* Build an ARP frame (Ethernet + ARP, padded to 60 bytes). eth_dst is the
 * frame destination (broadcast for requests and gratuitous ARP). Returns
 * the frame length or -ENOSPC. */
ssize_t lfe_net_build_arp(uint8_t *out, size_t cap, const uint8_t eth_dst[LFE_ETH_ALEN],
			  const uint8_t eth_src[LFE_ETH_ALEN], const struct lfe_arp_pkt *arp);

/* Turn a parsed ICMP echo request in place into the echo reply from us
 * (our_mac) back to the sender: swaps addresses, TTL 64, fixes both
 * checksums. Returns the reply frame length (the IP datagram may be shorter
 * than the received frame, e.g. padding). */
size_t lfe_net_icmp_echo_reply(uint8_t *frame, const struct lfe_net_pkt *pkt,
			       const uint8_t our_mac[LFE_ETH_ALEN]);

/* Build Ethernet + IPv4 + TCP (options from seg->mss, seg->wscale and
 * seg->opts: SACK-permitted, timestamps; SACK blocks are never sent) + payload
 * with both checksums. seg->laddr/lport is the source. Returns the frame
 * length or -ENOSPC. */
ssize_t lfe_net_build_tcp(uint8_t *out, size_t cap, const uint8_t eth_dst[LFE_ETH_ALEN],
			  const uint8_t eth_src[LFE_ETH_ALEN], const struct lfe_tcp_seg *seg,
			  uint16_t ip_id);
/* The same frame for a port that computes checksums on transmit: the IPv4
 * checksum field is 0 and the TCP one holds lfe_tcp_pseudo_csum. The
 * caller must ask the port to finish both (DPDK: RTE_MBUF_F_TX_IPV4 |
 * RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM, l2_len LFE_ETH_HLEN,
 * l3_len LFE_IPV4_HLEN): as it leaves here the frame is invalid on the
 * wire. Runt padding is zeros, which leave the sum unchanged. */
ssize_t lfe_net_build_tcp_offload(uint8_t *out, size_t cap, const uint8_t eth_dst[LFE_ETH_ALEN],
				  const uint8_t eth_src[LFE_ETH_ALEN], const struct lfe_tcp_seg *seg,
				  uint16_t ip_id);

/* Symmetric hash of a TCP flow: both directions give the same value, so a
 * software steerer and an RSS-less port agree on which core owns a flow. */
uint32_t lfe_net_flow_hash(uint32_t a1, uint16_t p1, uint32_t a2, uint16_t p2);

/* Parse "a.b.c.d" (strict: four decimal octets, no leading junk) to host
 * order. 0 or -EINVAL. */
int lfe_net_parse_ipv4(const char *s, uint32_t *addr);
/* Format host-order addr into out (at least 16 bytes). */
void lfe_net_fmt_ipv4(uint32_t addr, char out[16]);

/* ---- ARP cache (per lcore, fixed size, no allocation) ---- */

#define LFE_ARP_CACHE_SETS 64u
#define LFE_ARP_CACHE_WAYS 4u

struct lfe_arp_entry {
	uint32_t ip;                 /* 0 = empty */
	uint8_t mac[LFE_ETH_ALEN];
	uint64_t seen_us;
	uint64_t asked_us;           /* last refresh asked (lfe_arp_cache_use) */
};

/* An entry in use is asked again once it is this far into its life
 * (three quarters), at most once per LFE_ARP_REFRESH_RETRY_US, so a
 * neighbour that answers never ages out while traffic flows to it. */
#define LFE_ARP_REFRESH_RETRY_US 1000000u

/* Set-associative: a peer's entry lives in set hash(ip); inserting into a
 * full set replaces the least recently seen way. Entries older than
 * max_age_us are treated as absent. */
struct lfe_arp_cache {
	uint64_t max_age_us;
	uint64_t refresh_us;          /* an entry this old in use is asked again */
	struct lfe_arp_entry e[LFE_ARP_CACHE_SETS][LFE_ARP_CACHE_WAYS];
};

/* Whether a received ARP packet may teach us its sender's MAC. Only ARP
 * teaches (never the source MAC of an IPv4 frame: one forged frame would
 * redirect a peer's replies), and only a request for our address or a
 * reply to it, from a sender inside our subnet (addr/mask) that is not us
 * or 0 — so the gateway is learned only from its own ARP for itself. A
 * gratuitous announcement (target = sender) does not teach. */
bool lfe_arp_learnable(const struct lfe_arp_pkt *a, uint32_t our_addr, uint32_t mask);

void lfe_arp_cache_init(struct lfe_arp_cache *c, uint64_t max_age_us);
/* Learn or refresh ip → mac. Ignores 0 and broadcast/multicast MACs. */
void lfe_arp_cache_put(struct lfe_arp_cache *c, uint32_t ip, const uint8_t mac[LFE_ETH_ALEN],
		       uint64_t now_us);
/* The MAC for ip, or NULL. */
const uint8_t *lfe_arp_cache_get(const struct lfe_arp_cache *c, uint32_t ip, uint64_t now_us);
/* The same for a frame about to go to ip; *refresh (else untouched) when
 * the entry is in the last quarter of its life and was not asked for
 * within LFE_ARP_REFRESH_RETRY_US: the caller sends a unicast request,
 * whose answer (lfe_arp_learnable) renews it. */
const uint8_t *lfe_arp_cache_use(struct lfe_arp_cache *c, uint32_t ip, uint64_t now_us, bool *refresh);

#endif
