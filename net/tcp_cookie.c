/* net/tcp_cookie.c — keyed numbers of lfe_tcp; see tcp_cookie.h. */
#include "net/tcp_cookie.h"

#include "common/siphash.h"

#define COOKIE_SHIFT 26         /* cookie clock: 2^26 us ≈ 67 s per count */
#define TS_OPT_BITS 6u
#define TS_OPT_WS_NONE 0xfu
#define TS_OPT_SACK 0x10u

static const uint16_t cookie_mss[8] = {536, 1024, 1220, 1360, 1400, 1440, 1460, 8960};

/* ISNs and cookies must not be predictable from observed ones, so they get
 * a real PRF: SipHash-2-4 (common/siphash.h) over whole words. */
static inline void tuple_words(uint64_t w[2], const struct lfe_tcp_seg *s)
{
	w[0] = (uint64_t)s->raddr << 32 | s->laddr;
	w[1] = (uint64_t)s->rport << 16 | s->lport;
}

uint64_t lfe_tcp_tuple_secret(const uint64_t key[2], const struct lfe_tcp_seg *s)
{
	uint64_t w[2];
	tuple_words(w, s);
	return lfe_siphash24_words(key, w, 2);
}

static uint32_t cookie_hash(const uint64_t key[2], const struct lfe_tcp_seg *s, uint32_t peer_isn,
			    uint64_t count, uint32_t mssi)
{
	uint64_t w[4];
	tuple_words(w, s);
	w[2] = (uint64_t)peer_isn << 32 | mssi;
	w[3] = count;
	return (uint32_t)lfe_siphash24_words(key, w, 4) & 0x7ffffff;
}

uint32_t lfe_tcp_cookie_make(const uint64_t key[2], const struct lfe_tcp_seg *s, uint16_t our_mss,
			     uint64_t now)
{
	uint32_t peer = s->mss ? s->mss : 536, mssi = 0;
	for (uint32_t i = 0; i < 8; i++)
		if (cookie_mss[i] <= peer && cookie_mss[i] <= our_mss)
			mssi = i;
	uint64_t count = now >> COOKIE_SHIFT;
	return (uint32_t)(count & 3) << 30 | mssi << 27 | cookie_hash(key, s, s->seq, count, mssi);
}

uint32_t lfe_tcp_cookie_check(const uint64_t key[2], const struct lfe_tcp_seg *s, uint64_t now)
{
	uint32_t ck = s->ack - 1, mssi = (ck >> 27) & 7;
	uint64_t count = now >> COOKIE_SHIFT;
	for (uint64_t age = 0; age < 2; age++) {
		uint64_t cn = count - age;
		if ((cn & 3) == ck >> 30 && cookie_hash(key, s, s->seq - 1, cn, mssi) == (ck & 0x7ffffff))
			return cookie_mss[mssi];
	}
	return 0;
}

uint32_t lfe_tcp_cookie_ts(uint32_t ts_now, int8_t peer_wscale, bool sack_ok)
{
	uint32_t opt = peer_wscale >= 0 ? (uint32_t)peer_wscale & TS_OPT_WS_NONE : TS_OPT_WS_NONE;
	if (sack_ok)
		opt |= TS_OPT_SACK;
	uint32_t ts = (ts_now & ~((1u << TS_OPT_BITS) - 1)) | opt;
	/* Never ahead of the clock: later segments carry ts_now + elapsed. */
	if ((int32_t)(ts - ts_now) > 0)
		ts -= 1u << TS_OPT_BITS;
	return ts;
}

void lfe_tcp_cookie_ts_decode(uint32_t tsecr, int8_t *peer_wscale, bool *sack_ok)
{
	uint32_t ws = tsecr & TS_OPT_WS_NONE;
	*peer_wscale = ws == TS_OPT_WS_NONE ? -1 : (int8_t)(ws > 14 ? 14 : ws);
	*sack_ok = tsecr & TS_OPT_SACK;
}
