/* net/net.c — header parsing and building; see net.h. */
#include "net/net.h"

#include <errno.h>
#include <string.h>

/* The drop reasons: X(REASON, name, help). */
#define DROPS(X)                                                                        \
	X(NONE, "none", "No reason (never counted).")                                   \
	X(SHORT, "short", "Truncated header.")                                          \
	X(ETHERTYPE, "ethertype", "Not IPv4 or ARP.")                                   \
	X(ARP, "arp", "ARP not Ethernet/IPv4.")                                         \
	X(IP_VERSION, "ip_version", "Not IP version 4, or IHL < 5.")                    \
	X(IP_LEN, "ip_len", "IP total length inconsistent with the frame.")             \
	X(IP_CSUM, "ip_csum", "Bad IP header checksum.")                                \
	X(IP_FRAG, "ip_frag", "IP fragments.")                                          \
	X(IP_OPTIONS, "ip_options", "IPv4 options.")                                    \
	X(IP_ADDR, "ip_addr", "Broadcast, multicast or zero source.")                   \
	X(PROTO, "proto", "Not ICMP or TCP.")                                           \
	X(ICMP, "icmp", "ICMP other than echo request, or malformed.")                  \
	X(ICMP_CSUM, "icmp_csum", "Bad ICMP checksum.")                                 \
	X(TCP_HDR, "tcp_hdr", "TCP data offset or options malformed.")                  \
	X(TCP_CSUM, "tcp_csum", "Bad TCP checksum.")                                    \
	X(NOT_OURS, "not_ours", "Addressed to another host.")                           \
	X(NO_ARP, "no_arp", "Not sent: no MAC known for the next hop.")                 \
	X(NO_MBUF, "no_mbuf", "Not sent: the mbuf pool was empty.")                     \
	X(TX_FULL, "tx_full", "Not sent: the tx queue did not take it.")                \
	X(STEER_FULL, "steer_full", "Software steering ring full.")                     \
	X(MULTISEG, "multiseg", "Received in several mbuf segments.")

#define DROP_NAME(r, lab, h) [LFE_DROP_##r] = lab,
const char *const lfe_net_drop_names[LFE_DROP_MAX] = { DROPS(DROP_NAME) };
#define DROP_ROW(r, lab, h) [LFE_DROP_##r] = LFE_CTR_LABELLED(struct lfe_net_drops, n[LFE_DROP_##r], "drop_" lab, lab, h),
static const struct lfe_ctr drop_rows[] = { DROPS(DROP_ROW) };
_Static_assert(sizeof(drop_rows) / sizeof(drop_rows[0]) == LFE_DROP_MAX, "a row per drop reason");
const struct lfe_ctr_table lfe_net_drop_ctrs = LFE_CTR_TABLE("drops", struct lfe_net_drops, drop_rows,
	.flags = LFE_CTR_SPARSE, .family = "ldapfe_drops_total", .family_label = "reason",
	.family_help = "Frames dropped, by reason.");

/* Frames are byte buffers with no alignment promise: multi-byte fields
 * are read byte by byte (compilers fuse those into one load), and written
 * as one unaligned store of the network-order value (gcc leaves the
 * byte-by-byte form as separate stores: ~80 instructions a frame). */
static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void wr16(uint8_t *p, uint16_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap16(v);
#endif
	memcpy(p, &v, 2);
}
static inline void wr32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}

/* Chunks after the first must start at an even offset of the summed data. */
/* The sum is byte-order independent (RFC 1071 §2(B)): add the data as
 * host-order 32-bit words (8 bytes a step, loaded with memcpy: frames have
 * no alignment promise), fold to 16 bits, then swap to network order on a
 * little-endian host. The result is folded to 16 bits (0 only for an
 * all-zero sum), so a sum taken in chunks equals the sum taken at once. */
static inline uint32_t fold16(uint64_t s)
{
	/* 64 -> 32 with the end-around carry (add, adc): at most 2^32 - 1;
	 * then 32 -> 16 twice: at most 0x1fffe, then 0xffff. */
	uint32_t hi = (uint32_t)(s >> 32), x = (uint32_t)s + hi;
	x += x < hi;
	x = (x & 0xffffu) + (x >> 16);
	return (x & 0xffffu) + (x >> 16);
}

/* A 16-bit sum of host-order words, as the sum of network-order words. */
static inline uint32_t net_order(uint32_t w)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap16((uint16_t)w);
#else
	return w;
#endif
}

/* s += the 8 bytes at p; a carry out counted in c. */
static inline void csum_word(uint64_t *s, uint64_t *c, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	*c += __builtin_add_overflow(*s, v, s);
}

/* lfe_csum_add's body, inlined into the TCP sum of every segment built or
 * verified here (a call to it, and from it to the fold, cost ~20
 * instructions a segment). */
static inline __attribute__((always_inline)) uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t s = 0, c = 0;

	/* 64-bit words with their carries counted apart (add, adc), four a
	 * step; the carries go back in as the ones' complement sum wants.
	 * (Words copied into an array first cost gcc a round trip through
	 * the stack: ~30 instructions a frame more.) */
	for (; len >= 32; p += 32, len -= 32) {
		csum_word(&s, &c, p);
		csum_word(&s, &c, p + 8);
		csum_word(&s, &c, p + 16);
		csum_word(&s, &c, p + 24);
	}
	for (; len >= 8; p += 8, len -= 8)
		csum_word(&s, &c, p);
	/* The last 0..7 bytes as one word: 4, 2 and 1 bytes in separate
	 * 16-bit lanes (a lane's place in the word does not change the sum);
	 * the odd byte is the low byte of its lane, padded with a zero byte
	 * after it. */
	uint64_t t = 0;
	if (len >= 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		t = v;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t v;
		memcpy(&v, p, 2);
		t += (uint64_t)v << 32;
		p += 2;
		len -= 2;
	}
	if (len)
		t += (uint64_t)*p << 48;
	c += __builtin_add_overflow(s, t, &s);
	uint64_t k = __builtin_add_overflow(s, c, &s);   /* c counts at most len / 8 + 1 */
	s += k;   /* no carry again: s wrapped to below c */
	return fold16((uint64_t)sum + net_order(fold16(s)));
}

uint32_t lfe_csum_add(uint32_t sum, const void *data, size_t len)
{
	return csum_add(sum, data, len);
}

static inline uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

/* lfe_csum_fold(lfe_csum_add(0, ip, 20)) for an option-less IPv4 header,
 * in a few instructions: every frame in and out has one. */
static inline uint16_t ipv4_hdr_csum(const uint8_t *ip)
{
	uint32_t w[5];
	memcpy(w, ip, sizeof(w));
	uint64_t s = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	return csum_fold(net_order(fold16(s)));
}

uint16_t lfe_csum_fold(uint32_t sum)
{
	return csum_fold(sum);
}

static uint32_t pseudo_sum(uint32_t saddr, uint32_t daddr, uint8_t proto, size_t len)
{
	uint64_t s = (saddr >> 16) + (saddr & 0xffffu) + (daddr >> 16) + (daddr & 0xffffu)
		     + proto + (uint32_t)len;
	while (s >> 32)
		s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

static inline uint16_t tcp_csum(uint32_t saddr, uint32_t daddr, const void *tcp, size_t len)
{
	return csum_fold(csum_add(pseudo_sum(saddr, daddr, LFE_IPPROTO_TCP, len), tcp, len));
}

uint16_t lfe_tcp_csum(uint32_t saddr, uint32_t daddr, const void *tcp, size_t len)
{
	return tcp_csum(saddr, daddr, tcp, len);
}

uint16_t lfe_tcp_pseudo_csum(uint32_t saddr, uint32_t daddr, size_t len)
{
	return (uint16_t)fold16(pseudo_sum(saddr, daddr, LFE_IPPROTO_TCP, len));
}

static int fail(struct lfe_net_pkt *pkt, enum lfe_net_drop why, int err)
{
	pkt->drop = why;
	return err;
}

static int parse_arp(const uint8_t *f, size_t len, struct lfe_net_pkt *pkt)
{
	const uint8_t *a = f + LFE_ETH_HLEN;

	if (len - LFE_ETH_HLEN < LFE_ARP_LEN)
		return fail(pkt, LFE_DROP_SHORT, -EBADMSG);
	if (rd16(a) != 1 || rd16(a + 2) != LFE_ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4)
		return fail(pkt, LFE_DROP_ARP, -EPROTONOSUPPORT);
	pkt->arp.op = rd16(a + 6);
	if (pkt->arp.op != 1 && pkt->arp.op != 2)
		return fail(pkt, LFE_DROP_ARP, -EPROTONOSUPPORT);
	memcpy(pkt->arp.sha, a + 8, LFE_ETH_ALEN);
	pkt->arp.spa = rd32(a + 14);
	memcpy(pkt->arp.tha, a + 18, LFE_ETH_ALEN);
	pkt->arp.tpa = rd32(a + 24);
	return LFE_NET_ARP;
}

static int parse_tcp_opts(const uint8_t *o, size_t n, struct lfe_tcp_seg *seg)
{
	size_t i = 0;

	/* What every segment of a connection with timestamps carries (Linux's
	 * layout and ours): NOP NOP TS, read at once, as the loop would. */
	if (n == 12 && rd32(o) == 0x0101080au) {
		seg->opts |= LFE_TCP_OPT_TS;
		seg->tsval = rd32(o + 4);
		seg->tsecr = rd32(o + 8);
		return 0;
	}
	while (i < n) {
		uint8_t kind = o[i];
		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (n - i < 2)
			return -EBADMSG;
		uint8_t l = o[i + 1];
		if (l < 2 || l > n - i)
			return -EBADMSG;
		if (kind == 2) {
			if (l != 4)
				return -EBADMSG;
			seg->mss = rd16(o + i + 2);
		} else if (kind == 3) {
			if (l != 3)
				return -EBADMSG;
			/* RFC 7323 §2.3: shifts above 14 are used as 14. */
			seg->wscale = (int8_t)(o[i + 2] > 14 ? 14 : o[i + 2]);
		} else if (kind == 4) {
			if (l != 2)
				return -EBADMSG;
			seg->opts |= LFE_TCP_OPT_SACK_PERM;
		} else if (kind == 5) {
			/* RFC 2018: 1 to 4 blocks of two 32-bit edges. */
			if (l < 10 || (l - 2) % 8 != 0 || l > 34)
				return -EBADMSG;
			seg->n_sack = (uint8_t)((l - 2) / 8);
			for (uint8_t b = 0; b < seg->n_sack; b++) {
				seg->sack[b].start = rd32(o + i + 2 + 8u * b);
				seg->sack[b].end = rd32(o + i + 6 + 8u * b);
			}
		} else if (kind == 8) {
			if (l != 10)
				return -EBADMSG;
			seg->opts |= LFE_TCP_OPT_TS;
			seg->tsval = rd32(o + i + 2);
			seg->tsecr = rd32(o + i + 6);
		}
		i += l;
	}
	return 0;
}

static int parse_tcp(const uint8_t *f, unsigned rx_csum, struct lfe_net_pkt *pkt)
{
	const uint8_t *t = f + pkt->l4_off;
	size_t n = pkt->l4_len;
	struct lfe_tcp_seg *seg = &pkt->seg;

	if (n < LFE_TCP_HLEN)
		return fail(pkt, LFE_DROP_SHORT, -EBADMSG);
	size_t doff = (size_t)(t[12] >> 4) * 4u;
	if (doff < LFE_TCP_HLEN || doff > n)
		return fail(pkt, LFE_DROP_TCP_HDR, -EBADMSG);
	/* The port's verdict when it gave one (net.h), else our own sum. */
	if ((rx_csum & LFE_NET_RX_L4_BAD) ||
	    (!(rx_csum & LFE_NET_RX_L4_GOOD) && tcp_csum(pkt->saddr, pkt->daddr, t, n) != 0))
		return fail(pkt, LFE_DROP_TCP_CSUM, -EINVAL);
	/* Every field but sack[] (read only up to n_sack, which starts at 0):
	 * zeroing all 80 bytes cost more than the fields. */
	seg->mss = 0;
	seg->wscale = -1;
	seg->opts = 0;
	seg->n_sack = 0;
	seg->tsval = seg->tsecr = 0;
	seg->raddr = pkt->saddr;
	seg->laddr = pkt->daddr;
	seg->rport = rd16(t);
	seg->lport = rd16(t + 2);
	seg->seq = rd32(t + 4);
	seg->ack = rd32(t + 8);
	seg->flags = t[13] & 0x3f;
	seg->win = rd16(t + 14);
	if (parse_tcp_opts(t + LFE_TCP_HLEN, doff - LFE_TCP_HLEN, seg) < 0)
		return fail(pkt, LFE_DROP_TCP_HDR, -EBADMSG);
	if (seg->rport == 0 || seg->lport == 0)
		return fail(pkt, LFE_DROP_TCP_HDR, -EBADMSG);
	seg->payload = t + doff;
	seg->len = (uint16_t)(n - doff);
	return LFE_NET_TCP;
}

static int parse_ipv4(const uint8_t *f, size_t len, unsigned rx_csum, struct lfe_net_pkt *pkt)
{
	const uint8_t *ip = f + LFE_ETH_HLEN;
	size_t avail = len - LFE_ETH_HLEN;

	if (avail < LFE_IPV4_HLEN)
		return fail(pkt, LFE_DROP_SHORT, -EBADMSG);
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4u;
	if ((ip[0] >> 4) != 4 || ihl < LFE_IPV4_HLEN)
		return fail(pkt, LFE_DROP_IP_VERSION, -EBADMSG);
	size_t tot = rd16(ip + 2);
	/* The frame may carry Ethernet padding beyond the datagram, never less. */
	if (ihl > avail || tot < ihl || tot > avail)
		return fail(pkt, LFE_DROP_IP_LEN, -EBADMSG);
	if ((rx_csum & LFE_NET_RX_IP_BAD) ||
	    (!(rx_csum & LFE_NET_RX_IP_GOOD) &&
	     (ihl == LFE_IPV4_HLEN ? ipv4_hdr_csum(ip) : lfe_csum_fold(lfe_csum_add(0, ip, ihl))) != 0))
		return fail(pkt, LFE_DROP_IP_CSUM, -EINVAL);
	if (ihl != LFE_IPV4_HLEN)
		return fail(pkt, LFE_DROP_IP_OPTIONS, -EPROTONOSUPPORT);
	if (rd16(ip + 6) & 0x3fffu)
		return fail(pkt, LFE_DROP_IP_FRAG, -EPROTONOSUPPORT);
	pkt->ip_id = rd16(ip + 4);
	pkt->ttl = ip[8];
	pkt->proto = ip[9];
	pkt->saddr = rd32(ip + 12);
	pkt->daddr = rd32(ip + 16);
	if (pkt->saddr == 0 || pkt->saddr == 0xffffffffu || (pkt->saddr >> 28) == 0xe)
		return fail(pkt, LFE_DROP_IP_ADDR, -EBADMSG);
	pkt->l3_off = LFE_ETH_HLEN;
	pkt->l4_off = LFE_ETH_HLEN + ihl;
	pkt->l4_len = tot - ihl;

	if (pkt->proto == LFE_IPPROTO_TCP)
		return parse_tcp(f, rx_csum, pkt);
	if (pkt->proto != LFE_IPPROTO_ICMP)
		return fail(pkt, LFE_DROP_PROTO, -EPROTONOSUPPORT);
	const uint8_t *ic = f + pkt->l4_off;
	if (pkt->l4_len < 8)
		return fail(pkt, LFE_DROP_ICMP, -EBADMSG);
	if (lfe_csum_fold(lfe_csum_add(0, ic, pkt->l4_len)) != 0)
		return fail(pkt, LFE_DROP_ICMP_CSUM, -EINVAL);
	if (ic[0] != 8 || ic[1] != 0)
		return fail(pkt, LFE_DROP_ICMP, -EPROTONOSUPPORT);
	return LFE_NET_ICMP_ECHO;
}

int lfe_net_parse(const uint8_t *frame, size_t len, struct lfe_net_pkt *pkt)
{
	return lfe_net_parse_rx(frame, len, 0, pkt);
}

int lfe_net_parse_rx(const uint8_t *frame, size_t len, unsigned rx_csum, struct lfe_net_pkt *pkt)
{
	pkt->drop = LFE_DROP_NONE;
	if (frame == NULL || len < LFE_ETH_HLEN)
		return fail(pkt, LFE_DROP_SHORT, -EBADMSG);
	pkt->eth_dst = frame;
	pkt->eth_src = frame + LFE_ETH_ALEN;
	pkt->ethertype = rd16(frame + 12);
	if (pkt->ethertype == LFE_ETHERTYPE_ARP)
		return parse_arp(frame, len, pkt);
	if (pkt->ethertype == LFE_ETHERTYPE_IPV4)
		return parse_ipv4(frame, len, rx_csum, pkt);
	return fail(pkt, LFE_DROP_ETHERTYPE, -EPROTONOSUPPORT);
}

static void put_eth(uint8_t *out, const uint8_t dst[LFE_ETH_ALEN], const uint8_t src[LFE_ETH_ALEN],
		    uint16_t type)
{
	memcpy(out, dst, LFE_ETH_ALEN);
	memcpy(out + LFE_ETH_ALEN, src, LFE_ETH_ALEN);
	wr16(out + 12, type);
}

ssize_t lfe_net_build_arp(uint8_t *out, size_t cap, const uint8_t eth_dst[LFE_ETH_ALEN],
			  const uint8_t eth_src[LFE_ETH_ALEN], const struct lfe_arp_pkt *arp)
{
	if (cap < LFE_ETH_MIN_FRAME)
		return -ENOSPC;
	memset(out, 0, LFE_ETH_MIN_FRAME);
	put_eth(out, eth_dst, eth_src, LFE_ETHERTYPE_ARP);
	uint8_t *a = out + LFE_ETH_HLEN;
	wr16(a, 1);
	wr16(a + 2, LFE_ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	wr16(a + 6, arp->op);
	memcpy(a + 8, arp->sha, LFE_ETH_ALEN);
	wr32(a + 14, arp->spa);
	memcpy(a + 18, arp->tha, LFE_ETH_ALEN);
	wr32(a + 24, arp->tpa);
	return LFE_ETH_MIN_FRAME;
}

/* csum false: the checksum field stays 0 for the port to fill in. The sum
 * is taken from the values written, never read back from the frame: the
 * frame may lie in memory the peer reads (memif zero-copy, ARCHITECTURE.md),
 * and loading words just stored in other widths waits until the stores
 * reach the cache, which for a line the peer holds is a trip between
 * cores. */
static void put_ipv4(uint8_t *ip, uint16_t tot, uint16_t id, uint8_t proto,
		     uint32_t saddr, uint32_t daddr, bool csum)
{
	ip[0] = 0x45;
	ip[1] = 0;
	wr16(ip + 2, tot);
	wr16(ip + 4, id);
	wr16(ip + 6, 0x4000);   /* DF: we never fragment */
	ip[8] = 64;
	ip[9] = proto;
	wr16(ip + 10, 0);
	wr32(ip + 12, saddr);
	wr32(ip + 16, daddr);
	if (csum)
		wr16(ip + 10, csum_fold(fold16((uint64_t)(0x4500u << 16 | tot) + ((uint32_t)id << 16 | 0x4000u) +
					       (64u << 24 | (uint32_t)proto << 16) + saddr + daddr)));
}

size_t lfe_net_icmp_echo_reply(uint8_t *frame, const struct lfe_net_pkt *pkt,
			       const uint8_t our_mac[LFE_ETH_ALEN])
{
	uint8_t peer[LFE_ETH_ALEN];
	uint8_t *ic = frame + pkt->l4_off;

	memcpy(peer, frame + LFE_ETH_ALEN, LFE_ETH_ALEN);
	put_eth(frame, peer, our_mac, LFE_ETHERTYPE_IPV4);
	put_ipv4(frame + LFE_ETH_HLEN, (uint16_t)(LFE_IPV4_HLEN + pkt->l4_len), pkt->ip_id,
		 LFE_IPPROTO_ICMP, pkt->daddr, pkt->saddr, true);
	ic[0] = 0;
	ic[1] = 0;
	wr16(ic + 2, 0);
	wr16(ic + 2, lfe_csum_fold(lfe_csum_add(0, ic, pkt->l4_len)));
	return pkt->l4_off + pkt->l4_len;
}

/* offload: the IPv4 checksum field 0 and the TCP one the pseudo-header
 * sum, what a port's transmit checksum offload completes (net.h). */
static ssize_t build_tcp(uint8_t *out, size_t cap, const uint8_t eth_dst[LFE_ETH_ALEN],
			 const uint8_t eth_src[LFE_ETH_ALEN], const struct lfe_tcp_seg *seg,
			 uint16_t ip_id, bool offload)
{
	bool ts = seg->opts & LFE_TCP_OPT_TS, sp = seg->opts & LFE_TCP_OPT_SACK_PERM;
	size_t optlen = (seg->mss ? 4u : 0u) + (seg->wscale >= 0 ? 4u : 0u) + (ts ? 12u : sp ? 4u : 0u);
	uint32_t nsack = 0;
	if (seg->n_sack) {
		/* NOP NOP SACK: of the blocks, the first that fit the option
		 * space (optlen is 20 at most here: 2 fit always, 4 at most). */
		nsack = (uint32_t)(LFE_TCP_OPT_MAX - 4u - optlen) / 8u;
		if (nsack > seg->n_sack)
			nsack = seg->n_sack;
		optlen += 4u + 8u * nsack;
	}
	size_t tcplen = LFE_TCP_HLEN + optlen + seg->len;
	size_t tot = LFE_IPV4_HLEN + tcplen;
	size_t flen = LFE_ETH_HLEN + tot;

	if (tot > 0xffffu || cap < flen || cap < LFE_ETH_MIN_FRAME)
		return -ENOSPC;
	put_eth(out, eth_dst, eth_src, LFE_ETHERTYPE_IPV4);
	put_ipv4(out + LFE_ETH_HLEN, (uint16_t)tot, ip_id, LFE_IPPROTO_TCP, seg->laddr, seg->raddr,
		 !offload);
	uint8_t *t = out + LFE_ETH_HLEN + LFE_IPV4_HLEN;
	/* The TCP sum, like put_ipv4's, from the values and the payload where
	 * it lies: the pseudo-header, then the header and options as written
	 * below, as 32-bit words (2^16 = 1 modulo 0xffff, so a word's sum folds
	 * to the sum of its halves); the payload starts at an even offset. With
	 * offload the field holds the pseudo-header's sum alone. */
	uint32_t pseudo = pseudo_sum(seg->laddr, seg->raddr, LFE_IPPROTO_TCP, tcplen);
	uint32_t doff_flags = ((LFE_TCP_HLEN + optlen) / 4u) << 12 | (seg->flags & 0x3fu);
	uint64_t hs = (uint64_t)pseudo + ((uint32_t)seg->lport << 16 | seg->rport) + seg->seq + seg->ack +
		      (doff_flags << 16 | seg->win);
	wr16(t, seg->lport);
	wr16(t + 2, seg->rport);
	wr32(t + 4, seg->seq);
	wr32(t + 8, seg->ack);
	t[12] = (uint8_t)(((LFE_TCP_HLEN + optlen) / 4u) << 4);
	t[13] = seg->flags & 0x3f;
	wr16(t + 14, seg->win);
	wr16(t + 16, 0);
	wr16(t + 18, 0);
	uint8_t *o = t + LFE_TCP_HLEN;
	if (seg->mss) {
		o[0] = 2; o[1] = 4;
		wr16(o + 2, seg->mss);
		hs += 0x02040000u | seg->mss;
		o += 4;
	}
	/* Linux's layout: SACK-permitted takes the two NOPs before the
	 * timestamps when both go, so a SYN's options fit 20 bytes. */
	if (ts) {
		o[0] = sp ? 4 : 1; o[1] = sp ? 2 : 1; o[2] = 8; o[3] = 10;
		wr32(o + 4, seg->tsval);
		wr32(o + 8, seg->tsecr);
		hs += (sp ? 0x0402080au : 0x0101080au) + (uint64_t)seg->tsval + seg->tsecr;
		o += 12;
	} else if (sp) {
		o[0] = 1; o[1] = 1; o[2] = 4; o[3] = 2;
		hs += 0x01010402u;
		o += 4;
	}
	if (seg->wscale >= 0) {
		o[0] = 1; o[1] = 3; o[2] = 3;
		o[3] = (uint8_t)seg->wscale;
		hs += 0x01030300u | (uint8_t)seg->wscale;
		o += 4;
	}
	if (nsack) {
		o[0] = 1; o[1] = 1; o[2] = 5; o[3] = (uint8_t)(2u + 8u * nsack);
		hs += 0x01010500u | (2u + 8u * nsack);
		for (uint32_t b = 0; b < nsack; b++) {
			wr32(o + 4 + 8 * b, seg->sack[b].start);
			wr32(o + 8 + 8 * b, seg->sack[b].end);
			hs += (uint64_t)seg->sack[b].start + seg->sack[b].end;
		}
		o += 4 + 8 * nsack;
	}
	if (seg->len)
		memcpy(o, seg->payload, seg->len);
	if (offload)
		wr16(t + 16, (uint16_t)fold16(pseudo));
	else
		wr16(t + 16, csum_fold(seg->len ? csum_add(fold16(hs), seg->payload, seg->len) : fold16(hs)));
	/* Pad runts so the frame is a legal Ethernet frame; the IP total
	 * length tells the receiver where the datagram ends. */
	if (flen < LFE_ETH_MIN_FRAME) {
		memset(out + flen, 0, LFE_ETH_MIN_FRAME - flen);
		flen = LFE_ETH_MIN_FRAME;
	}
	return (ssize_t)flen;
}

ssize_t lfe_net_build_tcp(uint8_t *out, size_t cap, const uint8_t eth_dst[LFE_ETH_ALEN],
			  const uint8_t eth_src[LFE_ETH_ALEN], const struct lfe_tcp_seg *seg,
			  uint16_t ip_id)
{
	return build_tcp(out, cap, eth_dst, eth_src, seg, ip_id, false);
}

ssize_t lfe_net_build_tcp_offload(uint8_t *out, size_t cap, const uint8_t eth_dst[LFE_ETH_ALEN],
				  const uint8_t eth_src[LFE_ETH_ALEN], const struct lfe_tcp_seg *seg,
				  uint16_t ip_id)
{
	return build_tcp(out, cap, eth_dst, eth_src, seg, ip_id, true);
}

static inline uint32_t mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

uint32_t lfe_net_flow_hash(uint32_t a1, uint16_t p1, uint32_t a2, uint16_t p2)
{
	/* Order the endpoints so (a1,p1,a2,p2) and (a2,p2,a1,p1) hash alike. */
	uint64_t e1 = (uint64_t)a1 << 16 | p1, e2 = (uint64_t)a2 << 16 | p2;
	uint64_t lo = e1 < e2 ? e1 : e2, hi = e1 < e2 ? e2 : e1;
	uint32_t h = mix32((uint32_t)lo ^ 0x9e3779b9u);
	h = mix32(h ^ (uint32_t)(lo >> 32) ^ (uint32_t)hi);
	return mix32(h ^ (uint32_t)(hi >> 32));
}

int lfe_net_parse_ipv4(const char *s, uint32_t *addr)
{
	uint32_t a = 0;

	if (s == NULL)
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		unsigned v = 0, digits = 0;
		while (*s >= '0' && *s <= '9') {
			v = v * 10u + (unsigned)(*s - '0');
			if (++digits > 3 || v > 255)
				return -EINVAL;
			s++;
		}
		if (digits == 0 || (digits > 1 && s[-(int)digits] == '0'))
			return -EINVAL;
		a = a << 8 | v;
		if (i < 3 && *s++ != '.')
			return -EINVAL;
	}
	if (*s != '\0')
		return -EINVAL;
	*addr = a;
	return 0;
}

void lfe_net_fmt_ipv4(uint32_t a, char out[16])
{
	char *p = out;
	for (int i = 3; i >= 0; i--) {
		unsigned v = (a >> (i * 8)) & 0xffu;
		if (v >= 100)
			*p++ = (char)('0' + v / 100);
		if (v >= 10)
			*p++ = (char)('0' + v / 10 % 10);
		*p++ = (char)('0' + v % 10);
		if (i)
			*p++ = '.';
	}
	*p = '\0';
}

void lfe_arp_cache_init(struct lfe_arp_cache *c, uint64_t max_age_us)
{
	memset(c, 0, sizeof(*c));
	c->max_age_us = max_age_us;
	c->refresh_us = max_age_us ? max_age_us - max_age_us / 4 : UINT64_MAX;
}

static inline uint32_t arp_set(uint32_t ip)
{
	return mix32(ip) & (LFE_ARP_CACHE_SETS - 1u);
}

bool lfe_arp_learnable(const struct lfe_arp_pkt *a, uint32_t our_addr, uint32_t mask)
{
	return (a->op == 1 || a->op == 2) && a->tpa == our_addr && a->spa != our_addr && a->spa != 0 &&
	       ((a->spa ^ our_addr) & mask) == 0 && !(a->sha[0] & 1u);
}

void lfe_arp_cache_put(struct lfe_arp_cache *c, uint32_t ip, const uint8_t mac[LFE_ETH_ALEN],
		       uint64_t now_us)
{
	static const uint8_t zero[LFE_ETH_ALEN];

	if (ip == 0 || (mac[0] & 1u) || memcmp(mac, zero, LFE_ETH_ALEN) == 0)
		return;
	struct lfe_arp_entry *set = c->e[arp_set(ip)], *victim = &set[0];
	for (uint32_t w = 0; w < LFE_ARP_CACHE_WAYS; w++) {
		if (set[w].ip == ip) {
			victim = &set[w];
			break;
		}
		if (set[w].ip == 0 || set[w].seen_us < victim->seen_us)
			victim = &set[w];
		if (set[w].ip == 0)
			break;
	}
	victim->ip = ip;
	memcpy(victim->mac, mac, LFE_ETH_ALEN);
	victim->seen_us = now_us;
}

const uint8_t *lfe_arp_cache_get(const struct lfe_arp_cache *c, uint32_t ip, uint64_t now_us)
{
	const struct lfe_arp_entry *set = c->e[arp_set(ip)];

	if (ip == 0)
		return NULL;
	for (uint32_t w = 0; w < LFE_ARP_CACHE_WAYS; w++) {
		if (set[w].ip != ip)
			continue;
		if (c->max_age_us && now_us - set[w].seen_us > c->max_age_us)
			return NULL;
		return set[w].mac;
	}
	return NULL;
}

const uint8_t *lfe_arp_cache_use(struct lfe_arp_cache *c, uint32_t ip, uint64_t now_us, bool *refresh)
{
	struct lfe_arp_entry *set = c->e[arp_set(ip)];

	if (ip == 0)
		return NULL;
	for (uint32_t w = 0; w < LFE_ARP_CACHE_WAYS; w++) {
		struct lfe_arp_entry *e = &set[w];
		if (e->ip != ip)
			continue;
		uint64_t age = now_us - e->seen_us;
		if (age > c->refresh_us) {   /* rare: aging, or expired */
			if (age > c->max_age_us)
				return NULL;
			if (now_us - e->asked_us >= LFE_ARP_REFRESH_RETRY_US) {
				e->asked_us = now_us;
				*refresh = true;
			}
		}
		return e->mac;
	}
	return NULL;
}

_Static_assert((LFE_ARP_CACHE_SETS & (LFE_ARP_CACHE_SETS - 1u)) == 0, "sets must be a power of 2");
