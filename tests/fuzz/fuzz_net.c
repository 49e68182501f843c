/* tests/fuzz/fuzz_net.c — net/net.c frame parser: any bytes must be
 * parsed or refused with a drop reason, never read out of bounds; a parsed
 * TCP segment must rebuild into a frame that parses to the same segment
 * (its SACK blocks as far as they fit);
 * an echo request must turn into a reply with valid checksums. With the
 * port's verdict "good" (no checksum gate, so random bytes reach the TCP
 * option parser) every bound still holds and whatever parses in software
 * parses the same; the transmit-offload build of a segment, finished as a
 * port does, equals the software build byte for byte. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	/* An exact-size copy so ASan catches any read past the frame. */
	uint8_t *f = malloc(size ? size : 1);
	struct lfe_net_pkt p;

	memcpy(f, data, size);
	struct lfe_net_pkt g;
	int good = lfe_net_parse_rx(f, size, LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_GOOD, &g);
	if (good < 0 && (g.drop <= LFE_DROP_NONE || g.drop >= LFE_DROP_MAX))
		abort();
	int kind = lfe_net_parse(f, size, &p);
	if (kind >= 0 && good != kind)
		abort();
	if (kind < 0) {
		if (p.drop <= LFE_DROP_NONE || p.drop >= LFE_DROP_MAX)
			abort();
	} else if (kind == LFE_NET_TCP) {
		uint8_t out[LFE_NET_TCP_HDR_MAX + 65536];
		struct lfe_tcp_seg s = p.seg, back;
		/* Rebuild as the sender would have: swap the point of view. */
		s.laddr = p.seg.raddr; s.raddr = p.seg.laddr;
		s.lport = p.seg.rport; s.rport = p.seg.lport;
		ssize_t n = lfe_net_build_tcp(out, sizeof(out), mac, mac, &s, 1);
		/* Our options may take more room than the sender's (SACK blocks
		 * with their NOPs, up to 40 bytes): a segment that filled the
		 * IPv4 datagram may not fit again; nothing else may fail. */
		if (n == -ENOSPC && (size_t)LFE_IPV4_HLEN + LFE_TCP_HLEN + LFE_TCP_OPT_MAX + p.seg.len > 0xffffu) {
			free(f);
			return 0;
		}
		if (n < 0)
			abort();
		static uint8_t hw[sizeof(out)];
		if (lfe_net_build_tcp_offload(hw, sizeof(hw), mac, mac, &s, 1) != n)
			abort();
		uint16_t c = lfe_csum_fold(lfe_csum_add(0, hw + LFE_ETH_HLEN, LFE_IPV4_HLEN));
		hw[24] = (uint8_t)(c >> 8);
		hw[25] = (uint8_t)c;
		c = lfe_csum_fold(lfe_csum_add(0, hw + 34, (size_t)n - 34));
		hw[50] = (uint8_t)(c >> 8);
		hw[51] = (uint8_t)c;
		if (memcmp(hw, out, (size_t)n) != 0)
			abort();
		struct lfe_net_pkt q;
		if (lfe_net_parse(out, (size_t)n, &q) != LFE_NET_TCP)
			abort();
		back = q.seg;
		if (back.seq != p.seg.seq || back.ack != p.seg.ack || back.len != p.seg.len ||
		    back.flags != p.seg.flags || back.mss != p.seg.mss || back.wscale != p.seg.wscale ||
		    back.opts != p.seg.opts ||
		    ((p.seg.opts & LFE_TCP_OPT_TS) && (back.tsval != p.seg.tsval || back.tsecr != p.seg.tsecr)) ||
		    back.laddr != p.seg.laddr || back.rport != p.seg.rport ||
		    memcmp(back.payload, p.seg.payload, p.seg.len) != 0)
			abort();
		/* SACK blocks: at most 4 parsed; rebuilt, as many as fit beside
		 * the other options, the first ones, edges as found. */
		if (p.seg.n_sack > 4 || back.n_sack > p.seg.n_sack)
			abort();
		for (uint8_t i = 0; i < back.n_sack; i++)
			if (back.sack[i].start != p.seg.sack[i].start || back.sack[i].end != p.seg.sack[i].end)
				abort();
	} else if (kind == LFE_NET_ICMP_ECHO) {
		size_t n = lfe_net_icmp_echo_reply(f, &p, mac);
		if (n > size || lfe_csum_fold(lfe_csum_add(0, f + p.l4_off, p.l4_len)) != 0)
			abort();
	} else if (kind == LFE_NET_ARP) {
		uint8_t out[64];
		if (lfe_net_build_arp(out, sizeof(out), mac, mac, &p.arp) != 60)
			abort();
	}
	free(f);
	return 0;
}
