/* gen/rxcsum.h — which received frames ldapfe-gen checksums in software.
 *
 * Verifying the IPv4 and TCP checksums of every frame costs the generator
 * about 5 % of what it spends per bind, more per session (the TCP sum
 * reads the whole segment; callgrind-gen.sh: ~135 instructions of ~2,600
 * a persistent bind, ~415 of ~8,000 a session), and a generator core must
 * drive at least twice what one server core answers. A port that verifies checksums on receive (its verdicts,
 * enum lfe_net_rx_csum) makes that free: GOOD is trusted, BAD is dropped.
 * Where the port gives no verdict (memif, af_packet), --rx-csum sample (the
 * default) verifies a random sample of about one frame in
 * LFE_GEN_RXCSUM_EVERY in software and --rx-csum all every frame.
 *
 * The sample: after each frame checked, the next LFE_GEN_RXCSUM_GAP_MIN..
 * LFE_GEN_RXCSUM_GAP_MAX-1 frames (uniform, from a seeded xorshift: the
 * same seed gives the same choices) go unchecked. Random gaps rather than a
 * fixed period, so that no periodic pattern of bad frames (every 8th, every
 * FIN, one connection of 8) can fall between the checks: a fraction f of
 * bad frames among N received is missed with probability about
 * (1 - f / 8)^N, e.g. all of them wrong: the first frame; one in a thousand
 * over a million frames: e^-125. What is not checked is still parsed with
 * every length and header check; only the two sums are skipped. A bad
 * checksum found is dropped and counted (bad), as with --rx-csum all.
 *
 * Pure C, no DPDK: the unit test drives it with real frames.
 */
#ifndef LFE_GEN_RXCSUM_H
#define LFE_GEN_RXCSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/net.h"

/* Frames unchecked after a checked one: GAP_MIN .. GAP_MAX - 1, mean 7:
 * one frame in 8 is checked. */
#define LFE_GEN_RXCSUM_GAP_MIN 0u
#define LFE_GEN_RXCSUM_GAP_MAX 15u
#define LFE_GEN_RXCSUM_EVERY 8u

struct lfe_gen_rxcsum {
	uint64_t rng;
	uint32_t skip;       /* frames still to pass unchecked */
	bool all;            /* --rx-csum all: skip stays 0 */
};

/* What happened to the received frames' checksums (all uint64_t: the
 * generator sums its counters as arrays). */
struct lfe_gen_rxcsum_ct {
	uint64_t checked;    /* frames whose sums were verified here */
	uint64_t port_good;  /* frames whose sums the port verified */
	uint64_t bad;        /* dropped for a bad checksum (ours or the port's) */
};

/* all: verify every frame; else the sample, seeded by seed (any value). */
void lfe_gen_rxcsum_init(struct lfe_gen_rxcsum *s, bool all, uint64_t seed);

/* The sample's next gap (GAP_MIN .. GAP_MAX - 1), from s->rng. */
uint32_t lfe_gen_rxcsum_gap(struct lfe_gen_rxcsum *s);

/* lfe_net_parse_rx of one frame, its checksums verified in software when
 * the port gave no verdict on both (port_verdict: enum lfe_net_rx_csum, 0
 * for none) and the sample picks it; counts into *ct. Returns what
 * lfe_net_parse_rx returns. Inline: it runs for every frame received. */
static inline int lfe_gen_rxcsum_parse(struct lfe_gen_rxcsum *s, struct lfe_gen_rxcsum_ct *ct,
				       const uint8_t *frame, size_t len, unsigned port_verdict,
				       struct lfe_net_pkt *pkt)
{
	const unsigned good = LFE_NET_RX_IP_GOOD | LFE_NET_RX_L4_GOOD;
	unsigned v = port_verdict;

	if (v & (LFE_NET_RX_IP_BAD | LFE_NET_RX_L4_BAD)) {
		/* The port's BAD: dropped by the parse, counted below. */
	} else if ((v & good) == good) {
		ct->port_good++;
	} else if (s->skip) {
		s->skip--;
		v |= good;
	} else {
		ct->checked++;
		if (!s->all)
			s->skip = lfe_gen_rxcsum_gap(s);
	}
	int kind = lfe_net_parse_rx(frame, len, v, pkt);
	if (kind < 0 && (pkt->drop == LFE_DROP_IP_CSUM || pkt->drop == LFE_DROP_TCP_CSUM ||
			 pkt->drop == LFE_DROP_ICMP_CSUM))
		ct->bad++;
	return kind;
}

#endif
