/* tests/dataplane/test_net.c — net/net.c: parse, build, checksums,
 * ARP cache, flow hash. Table-driven; each corrupted frame must be refused
 * with the expected drop reason. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "tests/check.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static const uint8_t MAC1[6] = { 2, 0, 0, 0, 0, 1 }, MAC2[6] = { 2, 0, 0, 0, 0, 2 };

/* 10.99.0.2:40000 → 10.99.0.1:389, PSH|ACK, "hello": checksums computed by
 * an independent Python implementation. */
static const uint8_t ref_frame[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00,
	0x45, 0x00, 0x00, 0x2d, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0x13, 0xcf, 0x0a, 0x63,
	0x00, 0x02, 0x0a, 0x63, 0x00, 0x01, 0x9c, 0x40, 0x01, 0x85, 0x00, 0x00, 0x03, 0xe8,
	0x00, 0x00, 0x07, 0xd0, 0x50, 0x18, 0xff, 0xff, 0xad, 0xaf, 0x00, 0x00, 0x68, 0x65,
	0x6c, 0x6c, 0x6f,
};

static void fix_ip_csum(uint8_t *f)
{
	size_t ihl = (size_t)(f[14] & 0xf) * 4;
	f[24] = f[25] = 0;
	uint16_t c = lfe_csum_fold(lfe_csum_add(0, f + 14, ihl));
	f[24] = (uint8_t)(c >> 8);
	f[25] = (uint8_t)c;
}

static void fix_tcp_csum(uint8_t *f, size_t len)
{
	size_t l4 = 34, n = len - l4;
	f[l4 + 16] = f[l4 + 17] = 0;
	uint16_t c = lfe_tcp_csum(IP(10, 99, 0, 2), IP(10, 99, 0, 1), f + l4, n);
	f[l4 + 16] = (uint8_t)(c >> 8);
	f[l4 + 17] = (uint8_t)c;
}

static void test_checksum_vectors(void)
{
	/* RFC 1071 §3 example: the one's complement sum is 0xddf2. */
	static const uint8_t v[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	CHECK(lfe_csum_fold(lfe_csum_add(0, v, sizeof(v))) == (uint16_t)~0xddf2, "rfc1071");
	/* Odd length pads with a zero byte; chunked sums equal one sum. */
	static const uint8_t o[] = { 0x12, 0x34, 0x56 };
	CHECK(lfe_csum_fold(lfe_csum_add(0, o, 3)) == (uint16_t)~(0x1234 + 0x5600), "odd");
	CHECK(lfe_csum_add(lfe_csum_add(0, v, 4), v + 4, 4) == lfe_csum_add(0, v, 8), "chunks");
	CHECK(lfe_tcp_csum(IP(10, 99, 0, 2), IP(10, 99, 0, 1), ref_frame + 34, sizeof(ref_frame) - 34) == 0,
	      "reference tcp checksum verifies");
}

static void test_parse_reference(void)
{
	struct lfe_net_pkt p;
	int rc = lfe_net_parse(ref_frame, sizeof(ref_frame), &p);
	CHECK(rc == LFE_NET_TCP, "rc=%d drop=%d", rc, p.drop);
	CHECK(p.seg.raddr == IP(10, 99, 0, 2) && p.seg.laddr == IP(10, 99, 0, 1), "addrs");
	CHECK(p.seg.rport == 40000 && p.seg.lport == 389, "ports");
	CHECK(p.seg.seq == 1000 && p.seg.ack == 2000, "seq/ack");
	CHECK(p.seg.flags == (LFE_TCP_PSH | LFE_TCP_ACK) && p.seg.win == 65535, "flags/win");
	CHECK(p.seg.mss == 0 && p.seg.wscale == -1, "no options");
	CHECK(p.seg.len == 5 && memcmp(p.seg.payload, "hello", 5) == 0, "payload");
	CHECK(memcmp(p.eth_src, MAC2, 6) == 0 && memcmp(p.eth_dst, MAC1, 6) == 0, "macs");

	/* Ethernet padding after the datagram is not payload. */
	uint8_t padded[80];
	memset(padded, 0xee, sizeof(padded));
	memcpy(padded, ref_frame, sizeof(ref_frame));
	rc = lfe_net_parse(padded, sizeof(padded), &p);
	CHECK(rc == LFE_NET_TCP && p.seg.len == 5, "padded rc=%d len=%u", rc, p.seg.len);
}

static void test_build_tcp(void)
{
	uint8_t out[128];
	struct lfe_tcp_seg s = {
		.laddr = IP(10, 99, 0, 2), .raddr = IP(10, 99, 0, 1), .lport = 40000, .rport = 389,
		.seq = 1000, .ack = 2000, .win = 65535, .flags = LFE_TCP_PSH | LFE_TCP_ACK,
		.wscale = -1, .payload = (const uint8_t *)"hello", .len = 5,
	};
	ssize_t n = lfe_net_build_tcp(out, sizeof(out), MAC1, MAC2, &s, 0x1234);
	CHECK(n == 60, "padded to 60, got %zd", n);
	CHECK(memcmp(out, ref_frame, sizeof(ref_frame)) == 0, "byte-identical to reference");
	CHECK(out[59] == 0, "pad zeroed");
	CHECK(lfe_net_build_tcp(out, 58, MAC1, MAC2, &s, 0) == -ENOSPC, "cap checked");

	/* Round trip with both options. */
	struct lfe_tcp_seg syn = {
		.laddr = IP(10, 99, 0, 1), .raddr = IP(10, 99, 0, 2), .lport = 389, .rport = 51000,
		.seq = 0xfffffff0u, .ack = 7, .win = 1024, .flags = LFE_TCP_SYN | LFE_TCP_ACK,
		.mss = 1460, .wscale = 7,
	};
	n = lfe_net_build_tcp(out, sizeof(out), MAC2, MAC1, &syn, 9);
	CHECK(n == 62, "syn len %zd", n);
	struct lfe_net_pkt p;
	int rc = lfe_net_parse(out, (size_t)n, &p);
	CHECK(rc == LFE_NET_TCP, "rc=%d drop=%d", rc, p.drop);
	/* Parsed from the peer's view: its laddr is our raddr. */
	CHECK(p.seg.laddr == syn.raddr && p.seg.raddr == syn.laddr, "addrs");
	CHECK(p.seg.lport == 51000 && p.seg.rport == 389, "ports");
	CHECK(p.seg.seq == syn.seq && p.seg.ack == 7 && p.seg.win == 1024, "fields");
	CHECK(p.seg.mss == 1460 && p.seg.wscale == 7 && p.seg.len == 0, "options");

	/* Every option we send: MSS, SACK-permitted, timestamps, window scale
	 * in Linux's 20-byte layout, and timestamps alone on a data segment. */
	syn.opts = LFE_TCP_OPT_TS | LFE_TCP_OPT_SACK_PERM;
	syn.tsval = 0xdeadbeefu;
	syn.tsecr = 0x01020304u;
	n = lfe_net_build_tcp(out, sizeof(out), MAC2, MAC1, &syn, 9);
	CHECK(n == 14 + 20 + 20 + 20, "full syn len %zd", n);
	static const uint8_t linux_opts[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0xde, 0xad, 0xbe, 0xef,
						1, 2, 3, 4, 1, 3, 3, 7 };
	CHECK(memcmp(out + 54, linux_opts, 20) == 0, "option bytes as Linux lays them out");
	rc = lfe_net_parse(out, (size_t)n, &p);
	CHECK(rc == LFE_NET_TCP && p.seg.opts == (LFE_TCP_OPT_TS | LFE_TCP_OPT_SACK_PERM) &&
	      p.seg.tsval == 0xdeadbeefu && p.seg.tsecr == 0x01020304u && p.seg.mss == 1460 &&
	      p.seg.wscale == 7, "all options round trip");
	struct lfe_tcp_seg data = syn;
	data.flags = LFE_TCP_ACK | LFE_TCP_PSH;
	data.mss = 0;
	data.wscale = -1;
	data.opts = LFE_TCP_OPT_TS;
	data.payload = (const uint8_t *)"abc";
	data.len = 3;
	n = lfe_net_build_tcp(out, sizeof(out), MAC2, MAC1, &data, 9);
	CHECK(n == 14 + 20 + 32 + 3 && out[54] == 1 && out[55] == 1 && out[56] == 8, "NOP NOP TS: %zd", n);
	rc = lfe_net_parse(out, (size_t)n, &p);
	CHECK(rc == LFE_NET_TCP && p.seg.opts == LFE_TCP_OPT_TS && p.seg.tsval == 0xdeadbeefu &&
	      p.seg.len == 3 && memcmp(p.seg.payload, "abc", 3) == 0, "data with timestamps");
}

struct corrupt {
	const char *name;
	size_t off;          /* byte to overwrite (SIZE_MAX: truncate to len) */
	uint8_t val;
	size_t len;          /* frame length to parse (0: full) */
	int fix;             /* 1: fix IP csum after, 2: fix TCP csum, 3: both */
	int want_rc;
	enum lfe_net_drop want_drop;
};

static void test_corruptions(void)
{
	static const struct corrupt cases[] = {
		{ "runt ethernet", SIZE_MAX, 0, 13, 0, -EBADMSG, LFE_DROP_SHORT },
		{ "ipv6 ethertype", 12, 0x86, 0, 0, -EPROTONOSUPPORT, LFE_DROP_ETHERTYPE },
		{ "vlan tag", 12, 0x81, 0, 0, -EPROTONOSUPPORT, LFE_DROP_ETHERTYPE },
		{ "short ip header", SIZE_MAX, 0, 33, 0, -EBADMSG, LFE_DROP_SHORT },
		{ "ip version 6", 14, 0x65, 0, 1, -EBADMSG, LFE_DROP_IP_VERSION },
		{ "ihl 4", 14, 0x44, 0, 0, -EBADMSG, LFE_DROP_IP_VERSION },
		{ "ihl 15 beyond frame", 14, 0x4f, 0, 0, -EBADMSG, LFE_DROP_IP_LEN },
		{ "ip options", 14, 0x46, 0, 1, -EPROTONOSUPPORT, LFE_DROP_IP_OPTIONS },
		{ "total length > frame", 17, 0x2e, 0, 1, -EBADMSG, LFE_DROP_IP_LEN },
		{ "total length < ihl", 17, 0x10, 0, 1, -EBADMSG, LFE_DROP_IP_LEN },
		{ "truncated datagram", SIZE_MAX, 0, 58, 0, -EBADMSG, LFE_DROP_IP_LEN },
		{ "ip checksum", 25, 0xd0, 0, 0, -EINVAL, LFE_DROP_IP_CSUM },
		{ "more fragments", 20, 0x20, 0, 1, -EPROTONOSUPPORT, LFE_DROP_IP_FRAG },
		{ "fragment offset", 21, 0x01, 0, 1, -EPROTONOSUPPORT, LFE_DROP_IP_FRAG },
		{ "multicast source", 26, 0xe0, 0, 3, -EBADMSG, LFE_DROP_IP_ADDR },
		{ "udp", 23, 17, 0, 1, -EPROTONOSUPPORT, LFE_DROP_PROTO },
		{ "tcp checksum", 50, 0x00, 0, 0, -EINVAL, LFE_DROP_TCP_CSUM },
		{ "payload bit flip", 56, 0x00, 0, 0, -EINVAL, LFE_DROP_TCP_CSUM },
		{ "data offset 4", 46, 0x40, 0, 2, -EBADMSG, LFE_DROP_TCP_HDR },
		{ "data offset beyond segment", 46, 0x70, 0, 2, -EBADMSG, LFE_DROP_TCP_HDR },
		{ "source port 0", 34, 0x00, 0, 0, -EBADMSG, LFE_DROP_TCP_HDR },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct corrupt *c = &cases[i];
		uint8_t f[sizeof(ref_frame)];
		size_t len = c->len ? c->len : sizeof(f);
		memcpy(f, ref_frame, sizeof(f));
		if (c->off != SIZE_MAX) {
			f[c->off] = c->val;
			if (c->off == 34)
				f[35] = 0;
		}
		if (c->fix & 1)
			fix_ip_csum(f);
		if ((c->fix & 2) || c->off == 34)
			fix_tcp_csum(f, len);
		struct lfe_net_pkt p;
		int rc = lfe_net_parse(f, len, &p);
		CHECK(rc == c->want_rc && p.drop == c->want_drop, "%s: rc=%d drop=%s", c->name, rc,
		      p.drop < LFE_DROP_MAX ? lfe_net_drop_names[p.drop] : "?");
	}
	/* Every truncation of a valid frame is refused, never read past. */
	for (size_t len = 0; len < sizeof(ref_frame); len++) {
		uint8_t *f = malloc(len ? len : 1);
		memcpy(f, ref_frame, len);
		struct lfe_net_pkt p;
		CHECK(lfe_net_parse(len ? f : NULL, len, &p) < 0, "truncated to %zu accepted", len);
		free(f);
	}
}

struct optcase {
	const char *name;
	uint8_t opts[12];
	int ok;
	uint16_t mss;
	int8_t ws;
};

static void test_tcp_options(void)
{
	static const struct optcase cases[] = {
		{ "mss+nop+ws", { 2, 4, 0x05, 0xb4, 1, 3, 3, 7, 0, 0, 0, 0 }, 1, 1460, 7 },
		{ "eol stops", { 0, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 1, 0, -1 },
		{ "ws capped at 14", { 3, 3, 20, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, 1, 0, 14 },
		{ "sackok+ts", { 4, 2, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8 }, 1, 0, -1 },
		/* The fast path (NOP NOP TS) and what only looks like it. */
		{ "nop+nop+ts", { 1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8 }, 1, 0, -1 },
		{ "nop+nop+ts bad length", { 1, 1, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8 }, 0, 0, 0 },
		{ "nop+nop+ts overruns", { 1, 1, 8, 11, 1, 2, 3, 4, 5, 6, 7, 8 }, 0, 0, 0 },
		{ "nop+nop+unknown", { 1, 1, 9, 10, 1, 2, 3, 4, 5, 6, 7, 8 }, 1, 0, -1 },
		{ "sack block", { 5, 10, 0, 0, 0, 1, 0, 0, 0, 9, 1, 1 }, 1, 0, -1 },
		{ "sack bad length", { 5, 9, 0, 0, 0, 1, 0, 0, 0, 9, 1, 1 }, 0, 0, 0 },
		{ "sack empty", { 5, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 0, 0, 0 },
		{ "ts bad length", { 8, 8, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1 }, 0, 0, 0 },
		{ "sackok bad length", { 4, 3, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 0, 0, 0 },
		{ "mss bad length", { 2, 3, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, 0, 0, 0 },
		{ "option length 0", { 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 0, 0, 0 },
		{ "option overruns", { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 8, 4 }, 0, 0, 0 },
		{ "kind without length", { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5 }, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t f[128];
		struct lfe_tcp_seg s = {
			.laddr = IP(10, 99, 0, 2), .raddr = IP(10, 99, 0, 1), .lport = 1234, .rport = 389,
			.flags = LFE_TCP_SYN, .wscale = -1,
		};
		ssize_t n = lfe_net_build_tcp(f, sizeof(f), MAC1, MAC2, &s, 1);
		CHECK(n == 60, "base");
		/* Grow the header by 12 option bytes. */
		memcpy(f + 54, cases[i].opts, 12);
		f[46] = 8 << 4;
		f[16] = 0;
		f[17] = 20 + 32;
		fix_ip_csum(f);
		fix_tcp_csum(f, 66);
		struct lfe_net_pkt p;
		int rc = lfe_net_parse(f, 66, &p);
		if (cases[i].ok) {
			CHECK(rc == LFE_NET_TCP && p.seg.mss == cases[i].mss && p.seg.wscale == cases[i].ws,
			      "%s: rc=%d mss=%u ws=%d", cases[i].name, rc, p.seg.mss, p.seg.wscale);
			if (cases[i].opts[0] == 5)
				CHECK(p.seg.n_sack == 1 && p.seg.sack[0].start == 1 && p.seg.sack[0].end == 9,
				      "sack edges");
			if (cases[i].opts[0] == 1 && cases[i].opts[2] == 8)
				CHECK(p.seg.opts == LFE_TCP_OPT_TS && p.seg.tsval == 0x01020304u &&
				      p.seg.tsecr == 0x05060708u && p.seg.n_sack == 0, "nop+nop+ts parsed");
			if (cases[i].opts[0] == 1 && cases[i].opts[2] == 9)
				CHECK(p.seg.opts == 0, "unknown kind skipped");
			if (cases[i].opts[0] == 4)
				CHECK(p.seg.opts == (LFE_TCP_OPT_SACK_PERM | LFE_TCP_OPT_TS) &&
				      p.seg.tsval == 0x01020304u, "sackok+ts parsed");
		} else {
			CHECK(rc == -EBADMSG && p.drop == LFE_DROP_TCP_HDR, "%s: rc=%d", cases[i].name, rc);
		}
	}
}

static void test_arp(void)
{
	uint8_t f[64];
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct lfe_arp_pkt a = { .op = 1, .spa = IP(10, 99, 0, 2), .tpa = IP(10, 99, 0, 1) };
	memcpy(a.sha, MAC2, 6);
	CHECK(lfe_net_build_arp(f, 59, bcast, MAC2, &a) == -ENOSPC, "cap");
	ssize_t n = lfe_net_build_arp(f, sizeof(f), bcast, MAC2, &a);
	CHECK(n == 60, "len %zd", n);
	struct lfe_net_pkt p;
	CHECK(lfe_net_parse(f, (size_t)n, &p) == LFE_NET_ARP, "parse");
	CHECK(p.arp.op == 1 && p.arp.spa == a.spa && p.arp.tpa == a.tpa, "fields");
	CHECK(memcmp(p.arp.sha, MAC2, 6) == 0, "sha");
	CHECK(lfe_net_parse(f, 41, &p) == -EBADMSG && p.drop == LFE_DROP_SHORT, "short arp");
	f[14 + 7] = 3;   /* RARP op */
	CHECK(lfe_net_parse(f, 60, &p) == -EPROTONOSUPPORT && p.drop == LFE_DROP_ARP, "op 3");
	f[14 + 7] = 1;
	f[14 + 4] = 8;   /* hlen 8 */
	CHECK(lfe_net_parse(f, 60, &p) == -EPROTONOSUPPORT && p.drop == LFE_DROP_ARP, "hlen");
}

static void test_icmp(void)
{
	uint8_t f[98];
	memset(f, 0, sizeof(f));
	memcpy(f, MAC1, 6);
	memcpy(f + 6, MAC2, 6);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45; ip[2] = 0; ip[3] = 84; ip[4] = 0xab; ip[5] = 0xcd; ip[8] = 64; ip[9] = 1;
	ip[12] = 10; ip[13] = 99; ip[14] = 0; ip[15] = 2;
	ip[16] = 10; ip[17] = 99; ip[18] = 0; ip[19] = 1;
	fix_ip_csum(f);
	uint8_t *ic = f + 34;
	ic[0] = 8; ic[4] = 0x12; ic[5] = 0x34; ic[7] = 1;
	for (int i = 8; i < 64; i++)
		ic[i] = (uint8_t)i;
	uint16_t c = lfe_csum_fold(lfe_csum_add(0, ic, 64));
	ic[2] = (uint8_t)(c >> 8); ic[3] = (uint8_t)c;

	struct lfe_net_pkt p;
	CHECK(lfe_net_parse(f, sizeof(f), &p) == LFE_NET_ICMP_ECHO, "echo request");
	size_t n = lfe_net_icmp_echo_reply(f, &p, MAC1);
	CHECK(n == 98, "reply len %zu", n);
	CHECK(memcmp(f, MAC2, 6) == 0 && memcmp(f + 6, MAC1, 6) == 0, "macs swapped");
	CHECK(ic[0] == 0 && ic[1] == 0, "type 0");
	CHECK(lfe_csum_fold(lfe_csum_add(0, ic, 64)) == 0, "icmp csum valid");
	CHECK(lfe_csum_fold(lfe_csum_add(0, ip, 20)) == 0, "ip csum valid");
	CHECK(ip[12] == 10 && ip[15] == 1 && ip[19] == 2, "ips swapped");
	CHECK(ic[4] == 0x12 && ic[5] == 0x34 && ic[7] == 1 && ic[63] == 63, "id/seq/data kept");
	/* An echo reply is not something we answer. */
	CHECK(lfe_net_parse(f, n, &p) == -EPROTONOSUPPORT && p.drop == LFE_DROP_ICMP, "reply refused");
	ic[10] ^= 1;
	CHECK(lfe_net_parse(f, n, &p) == -EINVAL && p.drop == LFE_DROP_ICMP_CSUM, "icmp csum");
	/* A port's L4 verdict is about TCP: ICMP is summed here whatever it says. */
	CHECK(lfe_net_parse_rx(f, n, LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_GOOD, &p) == -EINVAL &&
	      p.drop == LFE_DROP_ICMP_CSUM, "icmp csum with an L4 verdict");
}

/* lfe_net_parse_rx: the port's verdict replaces our sum, never a length
 * check. Frames: the reference, its TCP or IPv4 checksum broken, and
 * (with valid checksums) broken lengths. */
static void test_rx_verdicts(void)
{
	enum { OK, BAD_TCP, BAD_IP, LONG_TOT, BAD_DOFF };
	static const struct {
		int frame;
		unsigned rx;
		int rc;
		enum lfe_net_drop drop;
	} cases[] = {
		{ OK, 0, LFE_NET_TCP, LFE_DROP_NONE },
		{ OK, LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_GOOD, LFE_NET_TCP, LFE_DROP_NONE },
		{ OK, LFE_NET_RX_L4_BAD, -EINVAL, LFE_DROP_TCP_CSUM },
		{ OK, LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_BAD, -EINVAL, LFE_DROP_TCP_CSUM },
		{ OK, LFE_NET_RX_IP_BAD | LFE_NET_RX_L4_GOOD, -EINVAL, LFE_DROP_IP_CSUM },
		{ OK, LFE_NET_RX_L4_GOOD | LFE_NET_RX_L4_BAD, -EINVAL, LFE_DROP_TCP_CSUM },
		/* Wrong TCP sum: trusted when the port says good, else ours finds it. */
		{ BAD_TCP, LFE_NET_RX_L4_GOOD, LFE_NET_TCP, LFE_DROP_NONE },
		{ BAD_TCP, LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_GOOD, LFE_NET_TCP, LFE_DROP_NONE },
		{ BAD_TCP, 0, -EINVAL, LFE_DROP_TCP_CSUM },
		{ BAD_TCP, LFE_NET_RX_IP_GOOD, -EINVAL, LFE_DROP_TCP_CSUM },
		{ BAD_TCP, LFE_NET_RX_L4_BAD, -EINVAL, LFE_DROP_TCP_CSUM },
		/* Wrong IPv4 sum (the TCP sum does not cover it). */
		{ BAD_IP, LFE_NET_RX_IP_GOOD, LFE_NET_TCP, LFE_DROP_NONE },
		{ BAD_IP, 0, -EINVAL, LFE_DROP_IP_CSUM },
		{ BAD_IP, LFE_NET_RX_L4_GOOD, -EINVAL, LFE_DROP_IP_CSUM },
		{ BAD_IP, LFE_NET_RX_IP_BAD, -EINVAL, LFE_DROP_IP_CSUM },
		/* Every bound is checked whatever the port says. */
		{ LONG_TOT, LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_GOOD, -EBADMSG, LFE_DROP_IP_LEN },
		{ BAD_DOFF, LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_GOOD, -EBADMSG, LFE_DROP_TCP_HDR },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t f[sizeof(ref_frame)];
		memcpy(f, ref_frame, sizeof(f));
		if (cases[i].frame == BAD_TCP) {
			f[50] ^= 0x40;
		} else if (cases[i].frame == BAD_IP) {
			f[25] ^= 0x01;
		} else if (cases[i].frame == LONG_TOT) {
			f[17] = (uint8_t)(f[17] + 1);   /* one byte past the frame */
			fix_ip_csum(f);
		} else if (cases[i].frame == BAD_DOFF) {
			f[46] = 0xf0;                   /* 60-byte header in a 25-byte segment */
			fix_tcp_csum(f, sizeof(f));
		}
		struct lfe_net_pkt p;
		int rc = lfe_net_parse_rx(f, sizeof(f), cases[i].rx, &p);
		CHECK(rc == cases[i].rc && p.drop == cases[i].drop, "case %zu: rc %d drop %d, want %d %d", i,
		      rc, p.drop, cases[i].rc, cases[i].drop);
		if (cases[i].rx == 0)
			CHECK(lfe_net_parse(f, sizeof(f), &p) == rc, "case %zu: lfe_net_parse agrees", i);
	}
}

/* lfe_net_build_tcp_offload: finishing its frame the way a port does
 * (IPv4 sum over the header; TCP sum from the pseudo-header seed in the
 * field to the end of the frame, padding included) gives, byte for byte,
 * the frame lfe_net_build_tcp sums in software. */
static void test_build_offload(void)
{
	/* The reference segment's pseudo-header, summed by hand: 0x0a63 + 0x0002
	 * + 0x0a63 + 0x0001 + protocol 6 + TCP length 25 = 0x14e8. */
	CHECK(lfe_tcp_pseudo_csum(IP(10, 99, 0, 2), IP(10, 99, 0, 1), 25) == 0x14e8, "pseudo 0x%04x",
	      lfe_tcp_pseudo_csum(IP(10, 99, 0, 2), IP(10, 99, 0, 1), 25));
	/* Folding with a carry: 255.255.255.255 → 255.255.255.254, 1460 bytes. */
	CHECK(lfe_tcp_pseudo_csum(0xffffffffu, 0xfffffffeu, 1460) == (uint16_t)((0x3fffbu + 6 + 1460) % 0xffff),
	      "pseudo with carries 0x%04x", lfe_tcp_pseudo_csum(0xffffffffu, 0xfffffffeu, 1460));

	static const uint8_t big[1400] = { 0xa5, [700] = 0x5a, [1399] = 0xff };
	const struct lfe_tcp_seg segs[] = {
		{ .laddr = IP(10, 99, 0, 2), .raddr = IP(10, 99, 0, 1), .lport = 40000, .rport = 389,
		  .seq = 1000, .ack = 2000, .win = 65535, .flags = LFE_TCP_PSH | LFE_TCP_ACK, .wscale = -1,
		  .payload = (const uint8_t *)"hello", .len = 5 },
		{ .laddr = IP(10, 99, 0, 1), .raddr = IP(192, 168, 7, 200), .lport = 389, .rport = 65535,
		  .seq = 0xfffffff0u, .ack = 7, .win = 1024, .flags = LFE_TCP_SYN | LFE_TCP_ACK, .mss = 1460,
		  .wscale = 7, .opts = LFE_TCP_OPT_TS | LFE_TCP_OPT_SACK_PERM, .tsval = 0xdeadbeefu },
		{ .laddr = IP(10, 99, 0, 1), .raddr = IP(10, 99, 0, 2), .lport = 636, .rport = 50001,
		  .seq = 1, .ack = 0xffffffffu, .flags = LFE_TCP_RST | LFE_TCP_ACK, .wscale = -1 },
		{ .laddr = IP(255, 255, 255, 254), .raddr = IP(255, 255, 255, 253), .lport = 389, .rport = 1,
		  .seq = 5, .ack = 6, .win = 501, .flags = LFE_TCP_ACK | LFE_TCP_PSH, .wscale = -1,
		  .opts = LFE_TCP_OPT_TS, .tsval = 1, .tsecr = 2, .payload = big, .len = 1399 },
	};
	for (size_t i = 0; i < sizeof(segs) / sizeof(segs[0]); i++) {
		uint8_t sw[1600], hw[1600];
		ssize_t n = lfe_net_build_tcp(sw, sizeof(sw), MAC1, MAC2, &segs[i], 0x4242);
		ssize_t m = lfe_net_build_tcp_offload(hw, sizeof(hw), MAC1, MAC2, &segs[i], 0x4242);
		CHECK(n > 0 && m == n, "seg %zu: lengths %zd %zd", i, n, m);
		if (n <= 0 || m != n)
			continue;
		uint8_t *ip = hw + 14, *t = hw + 34;
		size_t tcplen = (size_t)(ip[2] << 8 | ip[3]) - 20;
		CHECK(ip[10] == 0 && ip[11] == 0, "seg %zu: IPv4 checksum left 0", i);
		uint16_t ph = lfe_tcp_pseudo_csum(segs[i].laddr, segs[i].raddr, tcplen);
		CHECK((t[16] << 8 | t[17]) == ph, "seg %zu: TCP field holds the pseudo-header sum", i);
		CHECK(memcmp(hw, sw, 24) == 0 && memcmp(hw + 26, sw + 26, 24) == 0 &&
		      memcmp(hw + 52, sw + 52, (size_t)n - 52) == 0, "seg %zu: all else identical", i);
		/* What the port does. */
		uint16_t c = lfe_csum_fold(lfe_csum_add(0, ip, 20));
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
		c = lfe_csum_fold(lfe_csum_add(0, t, (size_t)n - 34));
		t[16] = (uint8_t)(c >> 8);
		t[17] = (uint8_t)c;
		CHECK(memcmp(hw, sw, (size_t)n) == 0, "seg %zu: finished frame equals the software one", i);
		struct lfe_net_pkt p;
		CHECK(lfe_net_parse(hw, (size_t)n, &p) == LFE_NET_TCP, "seg %zu: parses (drop %d)", i, p.drop);
	}
	uint8_t out[64];
	CHECK(lfe_net_build_tcp_offload(out, 58, MAC1, MAC2, &segs[2], 0) == -ENOSPC, "cap checked");
}

/* SACK blocks built (RFC 2018): NOP NOP, kind 5, as many blocks as fit
 * the 40 option bytes beside the others, the first ones; the sum right
 * (the parse checks it) and the blocks parsed back as written. */
static void test_build_sack(void)
{
	static const struct {
		const char *name;
		uint8_t opts, n_sack, want;
		uint16_t mss;
		int8_t ws;
	} cases[] = {
		{ "one block alone", 0, 1, 1, 0, -1 },
		{ "four alone", 0, 4, 4, 0, -1 },
		{ "three beside timestamps", LFE_TCP_OPT_TS, 3, 3, 0, -1 },
		{ "a fourth beside timestamps does not fit", LFE_TCP_OPT_TS, 4, 3, 0, -1 },
		{ "beside a SYN's 20 bytes: two", LFE_TCP_OPT_TS | LFE_TCP_OPT_SACK_PERM, 4, 2, 1460, 7 },
		{ "beside MSS and window scale: three", 0, 4, 3, 1460, 7 },
		{ "none", LFE_TCP_OPT_TS, 0, 0, 0, -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lfe_tcp_seg s = {
			.laddr = IP(10, 99, 0, 1), .raddr = IP(10, 99, 0, 2), .lport = 389, .rport = 40000,
			.seq = 7, .ack = 0xfffffff0u, .win = 512, .flags = LFE_TCP_ACK, .mss = cases[i].mss,
			.wscale = cases[i].ws, .opts = cases[i].opts, .tsval = 0x11223344u, .tsecr = 0x55667788u,
			.n_sack = cases[i].n_sack, .payload = (const uint8_t *)"xyz", .len = 3,
		};
		for (uint32_t b = 0; b < 4; b++) {
			s.sack[b].start = 0xfffffff0u + 1000 * (b + 1);   /* edges across 2^32 */
			s.sack[b].end = s.sack[b].start + 100 + b;
		}
		uint8_t f[256];
		ssize_t n = lfe_net_build_tcp(f, sizeof(f), MAC1, MAC2, &s, 1);
		size_t opt = (s.mss ? 4u : 0u) + (s.wscale >= 0 ? 4u : 0u) + ((s.opts & LFE_TCP_OPT_TS) ? 12u : 0u) +
			     (cases[i].want ? 4u + 8u * cases[i].want : 0u);
		CHECK(opt <= 40 && n == (ssize_t)(54 + opt + 3), "%s: frame %zd", cases[i].name, n);
		struct lfe_net_pkt p;
		CHECK(lfe_net_parse(f, (size_t)n, &p) == LFE_NET_TCP, "%s: parses (drop %d)", cases[i].name, p.drop);
		CHECK(p.seg.n_sack == cases[i].want && p.seg.len == 3 && memcmp(p.seg.payload, "xyz", 3) == 0 &&
		      p.seg.mss == s.mss && p.seg.wscale == s.wscale && p.seg.opts == s.opts,
		      "%s: %u blocks back", cases[i].name, p.seg.n_sack);
		for (uint8_t b = 0; b < p.seg.n_sack && b < 4; b++)
			CHECK(p.seg.sack[b].start == s.sack[b].start && p.seg.sack[b].end == s.sack[b].end,
			      "%s: block %u", cases[i].name, b);
		uint8_t off[256];
		ssize_t m = lfe_net_build_tcp_offload(off, sizeof(off), MAC1, MAC2, &s, 1);
		CHECK(m == n && memcmp(off + 54, f + 54, (size_t)n - 54) == 0, "%s: offload build alike",
		      cases[i].name);
	}
}

static void test_ipv4_strings(void)
{
	static const struct { const char *s; int ok; uint32_t v; } cases[] = {
		{ "10.99.0.1", 1, IP(10, 99, 0, 1) }, { "0.0.0.0", 1, 0 },
		{ "255.255.255.255", 1, 0xffffffffu }, { "256.1.1.1", 0, 0 }, { "1.2.3", 0, 0 },
		{ "1.2.3.4.5", 0, 0 }, { "01.2.3.4", 0, 0 }, { "1.2.3.4 ", 0, 0 }, { "", 0, 0 },
		{ "a.b.c.d", 0, 0 }, { "1..2.3", 0, 0 }, { "1.2.3.1000", 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t v = 0x5a5a5a5a;
		int rc = lfe_net_parse_ipv4(cases[i].s, &v);
		CHECK(cases[i].ok ? rc == 0 && v == cases[i].v : rc == -EINVAL, "\"%s\" rc=%d", cases[i].s, rc);
		if (cases[i].ok) {
			char buf[16];
			lfe_net_fmt_ipv4(v, buf);
			CHECK(strcmp(buf, cases[i].s) == 0, "fmt %s -> %s", cases[i].s, buf);
		}
	}
}

static void test_flow_hash(void)
{
	unsigned buckets[4] = { 0 };
	for (uint32_t i = 0; i < 4000; i++) {
		uint32_t a = IP(10, 99, 0, 2) + (i % 7), b = IP(10, 99, 0, 1);
		uint16_t pa = (uint16_t)(32768 + i), pb = 389;
		uint32_t h = lfe_net_flow_hash(a, pa, b, pb);
		CHECK(h == lfe_net_flow_hash(b, pb, a, pa), "symmetric for %u", i);
		buckets[h % 4]++;
	}
	for (int i = 0; i < 4; i++)
		CHECK(buckets[i] > 800 && buckets[i] < 1200, "bucket %d has %u of 4000", i, buckets[i]);
}

static void test_arp_cache(void)
{
	static struct lfe_arp_cache c;
	static const uint8_t mcast[6] = { 1, 0, 0x5e, 0, 0, 1 };
	lfe_arp_cache_init(&c, 1000);
	lfe_arp_cache_put(&c, IP(10, 99, 0, 2), MAC2, 0);
	const uint8_t *m = lfe_arp_cache_get(&c, IP(10, 99, 0, 2), 500);
	CHECK(m && memcmp(m, MAC2, 6) == 0, "hit");
	CHECK(lfe_arp_cache_get(&c, IP(10, 99, 0, 3), 500) == NULL, "miss");
	CHECK(lfe_arp_cache_get(&c, IP(10, 99, 0, 2), 1001) == NULL, "aged out");
	lfe_arp_cache_put(&c, IP(10, 99, 0, 2), MAC1, 1001);
	m = lfe_arp_cache_get(&c, IP(10, 99, 0, 2), 1002);
	CHECK(m && memcmp(m, MAC1, 6) == 0, "refreshed with new mac");
	lfe_arp_cache_put(&c, IP(10, 99, 0, 9), mcast, 0);
	CHECK(lfe_arp_cache_get(&c, IP(10, 99, 0, 9), 1) == NULL, "multicast mac ignored");

	/* Fill far beyond capacity: the most recent peers must all be present. */
	lfe_arp_cache_init(&c, 0);
	uint8_t mac[6] = { 2, 0, 0, 0, 0, 0 };
	for (uint32_t i = 1; i <= 2000; i++) {
		mac[4] = (uint8_t)(i >> 8); mac[5] = (uint8_t)i;
		lfe_arp_cache_put(&c, IP(10, 0, 0, 0) + i, mac, i);
	}
	unsigned present = 0;
	for (uint32_t i = 1; i <= 2000; i++)
		present += lfe_arp_cache_get(&c, IP(10, 0, 0, 0) + i, 2001) != NULL;
	CHECK(present <= LFE_ARP_CACHE_SETS * LFE_ARP_CACHE_WAYS && present > 200, "present %u", present);
	m = lfe_arp_cache_get(&c, IP(10, 0, 0, 0) + 2000, 2001);
	CHECK(m && m[4] == (2000 >> 8) && m[5] == (uint8_t)2000, "newest kept");
}

/* Who may teach us a neighbour's MAC: ARP for our address only. */
static void test_arp_learnable(void)
{
	const uint32_t us = IP(10, 99, 0, 1), mask = 0xffffff00u;
	static const struct { const char *name; uint16_t op; uint32_t spa, tpa; bool mcast, want; } cases[] = {
		{ "request for us", 1, IP(10, 99, 0, 2), IP(10, 99, 0, 1), false, true },
		{ "reply to us", 2, IP(10, 99, 0, 2), IP(10, 99, 0, 1), false, true },
		{ "gateway's own reply", 2, IP(10, 99, 0, 254), IP(10, 99, 0, 1), false, true },
		{ "request for another host", 1, IP(10, 99, 0, 2), IP(10, 99, 0, 3), false, false },
		{ "reply to another host", 2, IP(10, 99, 0, 2), IP(10, 99, 0, 3), false, false },
		{ "gratuitous", 1, IP(10, 99, 0, 2), IP(10, 99, 0, 2), false, false },
		{ "gratuitous reply", 2, IP(10, 99, 0, 254), IP(10, 99, 0, 254), false, false },
		{ "sender outside the subnet", 2, IP(10, 98, 0, 2), IP(10, 99, 0, 1), false, false },
		{ "sender claims our address", 2, IP(10, 99, 0, 1), IP(10, 99, 0, 1), false, false },
		{ "probe (sender 0)", 1, 0, IP(10, 99, 0, 1), false, false },
		{ "multicast sender MAC", 2, IP(10, 99, 0, 2), IP(10, 99, 0, 1), true, false },
		{ "unknown op", 3, IP(10, 99, 0, 2), IP(10, 99, 0, 1), false, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lfe_arp_pkt a = { .op = cases[i].op, .spa = cases[i].spa, .tpa = cases[i].tpa };
		memcpy(a.sha, MAC2, 6);
		if (cases[i].mcast)
			a.sha[0] |= 1;
		CHECK(lfe_arp_learnable(&a, us, mask) == cases[i].want, "%s", cases[i].name);
	}
}

/* The word-at-a-time sum against RFC 1071's plain loop (16-bit big-endian
 * words, end-around carry), for every length up to 100 at every alignment,
 * from 0x00 and 0xff filled buffers (carries everywhere) and a pattern,
 * whole and split at every even offset. */
static uint16_t csum_ref(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i < n; i += 2)
		s += (uint32_t)p[i] << 8 | (i + 1 < n ? p[i + 1] : 0);
	while (s >> 16)
		s = (s & 0xffffu) + (s >> 16);
	return (uint16_t)~s;
}

static void test_checksum_reference(void)
{
	static uint8_t buf[9016];
	for (unsigned fill = 0; fill < 3; fill++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = fill == 0 ? 0 : fill == 1 ? 0xff : (uint8_t)(i * 37u + 11u);
		for (size_t off = 0; off < 8; off++) {
			for (size_t n = 0; n <= 100; n++) {
				const uint8_t *p = buf + off;
				uint16_t want = csum_ref(p, n);
				CHECK(lfe_csum_fold(lfe_csum_add(0, p, n)) == want, "csum vs reference");
				for (size_t k = 0; k <= n; k += 2)
					CHECK(lfe_csum_fold(lfe_csum_add(lfe_csum_add(0, p, k), p + k, n - k)) == want,
					      "split csum vs reference");
			}
			/* Frames up to a jumbo's: all-ones words carry on every add. */
			for (size_t n = 101; n <= 9000; n += n < 300 ? 1 : 97) {
				const uint8_t *p = buf + off;
				CHECK(lfe_csum_fold(lfe_csum_add(0, p, n)) == csum_ref(p, n), "long csum vs reference");
			}
		}
	}
}

/* Segments built with every payload length to 300 at every alignment of
 * the source, with and without timestamps: the bytes where they belong,
 * and a TCP sum the parse accepts (the word loop's tail cases, 0..7 bytes
 * after the 32- and 8-byte steps, on the building side). */
static void test_build_payloads(void)
{
	static uint8_t src[320], f[512];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 151u + 7u);
	for (int ts = 0; ts < 2; ts++) {
		for (size_t off = 0; off < 8; off++) {
			for (uint16_t len = 0; len <= 300; len++) {
				struct lfe_tcp_seg s = {
					.laddr = IP(10, 99, 0, 2), .raddr = IP(10, 99, 0, 1), .lport = 40000,
					.rport = 389, .seq = 1, .ack = 2, .win = 512, .flags = LFE_TCP_ACK,
					.wscale = -1, .opts = ts ? LFE_TCP_OPT_TS : 0, .tsval = 0xfffefdfcu,
					.tsecr = 0x01020304u, .payload = src + off, .len = len,
				};
				ssize_t n = lfe_net_build_tcp(f, sizeof(f), MAC1, MAC2, &s, 7);
				size_t hl = 34u + 20u + (ts ? 12u : 0u);
				struct lfe_net_pkt p;
				CHECK(n >= (ssize_t)(hl + len) && memcmp(f + hl, src + off, len) == 0, "payload %u", len);
				CHECK(lfe_net_parse(f, (size_t)n, &p) == LFE_NET_TCP && p.seg.len == len,
				      "built frame parses: len %u off %zu ts %d drop %d", len, off, ts, p.drop);
			}
		}
	}
}

int main(void)
{
	test_checksum_vectors();
	test_checksum_reference();
	test_parse_reference();
	test_build_tcp();
	test_build_payloads();
	test_corruptions();
	test_tcp_options();
	test_arp();
	test_icmp();
	test_rx_verdicts();
	test_build_offload();
	test_build_sack();
	test_ipv4_strings();
	test_flow_hash();
	test_arp_cache();
	test_arp_learnable();
	return check_done();
}
