/* net/tcp_cookie.h — keyed numbers of lfe_tcp (internal to tcp.c):
 * SipHash, RFC 6528 initial sequence numbers, per-connection timestamp
 * offsets, SYN cookies and the options a cookie carries in the low bits of
 * its timestamp. Pure functions of their arguments: no state, no clock
 * (now is µs from the caller), so they are unit-tested on their own.
 *
 * key is the 128-bit secret of one struct lfe_tcp (random per run).
 */
#ifndef LFE_NET_TCP_COOKIE_H
#define LFE_NET_TCP_COOKIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/tcp.h"

/* The keyed hash of the tuple of s (our side = laddr/lport) that both
 * per-tuple numbers of a connection come from, one SipHash per new
 * connection: its low half offsets the ISN, its high half the timestamp
 * clock. The halves of a PRF's output are independent, so a peer that sees
 * one learns nothing of the other. */
uint64_t lfe_tcp_tuple_secret(const uint64_t key[2], const struct lfe_tcp_seg *s);

/* RFC 6528 ISN: the tuple's secret plus a 4 µs clock. */
static inline uint32_t lfe_tcp_isn(uint64_t tuple_secret, uint64_t now_us)
{
	return (uint32_t)tuple_secret + (uint32_t)(now_us >> 2);
}

/* Per-tuple offset added to our timestamp clock (RFC 7323 §7.1: a peer
 * cannot learn our clock or correlate connections). Stable for a tuple, so
 * a cookie connection continues the timestamps its SYN,ACK began. */
static inline uint32_t lfe_tcp_ts_offset(uint64_t tuple_secret)
{
	return (uint32_t)(tuple_secret >> 32);
}

/* Our timestamp clock: 1.024 ms ticks (RFC 7323 asks 1 ms to 1 s). */
static inline uint32_t lfe_tcp_ts_clock(uint64_t now_us, uint32_t off)
{
	return (uint32_t)(now_us >> 10) + off;
}

/* SYN cookie for the SYN s: 2 bits of a 67 s clock, 3 bits of MSS index
 * (the largest table MSS <= min(peer's, ours)), 27 bits of keyed hash over
 * tuple, peer ISN, clock and index. Returns our ISN for the SYN,ACK. */
uint32_t lfe_tcp_cookie_make(const uint64_t key[2], const struct lfe_tcp_seg *s, uint16_t our_mss,
			     uint64_t now_us);
/* Check the cookie in the ACK s (s->ack - 1) against the current and the
 * previous clock count. Returns the MSS it encodes, 0 when it is not ours
 * or too old. */
uint32_t lfe_tcp_cookie_check(const uint64_t key[2], const struct lfe_tcp_seg *s, uint64_t now_us);

/* What a cookie SYN,ACK's timestamp carries (Linux's layout): the low 6
 * bits hold the peer's window shift (bits 0-3, 0xf = no window scaling) and
 * SACK-permitted (bit 4); the rest is our clock, rounded down so the
 * timestamps of the connection never go backwards. */
uint32_t lfe_tcp_cookie_ts(uint32_t ts_now, int8_t peer_wscale, bool sack_ok);
/* Decode the TSecr of a cookie ACK: *peer_wscale -1 when none. */
void lfe_tcp_cookie_ts_decode(uint32_t tsecr, int8_t *peer_wscale, bool *sack_ok);

#endif
