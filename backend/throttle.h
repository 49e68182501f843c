/* backend/throttle.h — brute-force throttling of simple binds, per core.
 *
 * Failed binds are counted per key in fixed memory; a key that reaches its
 * threshold within the window is "in penalty" for penalty_ms, and binds
 * that carry it are answered invalidCredentials (49) without verifying.
 * Three kinds of key, each with its own threshold (0 = that kind off):
 *
 *   SRC   the client's IPv4 address, any DN        (src_failures)
 *   PAIR  one normalized DN from one address       (pair_failures)
 *   DN    one normalized DN from every address     (dn_failures)
 *
 * The lockout trade-off. A per-DN counter lets anyone who knows a victim's
 * DN lock the victim out by failing on purpose (the classic account-lockout
 * DoS), while a per-source counter alone lets a botnet try src_failures
 * passwords per address per window. PAIR throttles the one attacker hammering
 * one account without letting them lock the account for anyone else; DN, set
 * much higher (or off), caps a distributed attack on one account at the price
 * that a distributed attacker can then lock that account for penalty_ms.
 * A source behind a NAT or a login proxy shares SRC with its neighbours:
 * set src_failures high enough for the proxy's honest failure rate, or 0.
 * Successful binds never reset a counter (an attacker with one valid account
 * would otherwise interleave good binds to wipe their record), and throttled
 * binds are not counted (no verification ran, so there is no verdict; a
 * throttled source thus adds at most one threshold per window + penalty).
 * Unknown and existing DNs are counted and answered alike: the check runs
 * before any lookup, so a throttled answer says nothing about existence.
 *
 * Why a count-min sketch and not a bounded hash table. Both have fixed
 * memory; they differ in how they fail under pressure. A bounded table
 * must evict, and an attacker who sprays fresh keys (other DNs, other
 * addresses) evicts their own record and starts over: it fails open, which
 * is the wrong way for a brute-force defence. A count-min sketch never
 * forgets before the window does; its error is one-sided (an estimate is
 * never below the true count), so it fails closed: an innocent key is
 * throttled only when, in every one of the LFE_THROTTLE_DEPTH rows, its cell
 * is shared with keys that together reached the threshold. With N attacking
 * keys each at the threshold and W cells per row that happens with
 * probability about (1 - e^(-N/W))^DEPTH: for W = 4096, 3e-7 at N = 100,
 * 2e-4 at N = 512, 0.024 at N = 2048 — and N counts distinct attacking
 * addresses (SRC, PAIR) that completed TCP handshakes, since throttled binds
 * add nothing. Cells are reached through SipHash-2-4 under a 128-bit secret
 * drawn per instance, so nobody can pick keys that collide with a victim's
 * cells on purpose; the kinds live in separate sketches, so a flood of one
 * kind never raises another kind's estimates.
 *
 * Time decay: each cell counts failures of the current window-long epoch and
 * of the previous one; the estimate weights the previous epoch by the part
 * of it still inside the sliding window (the usual two-bucket sliding
 * window), rounded up. A key with no failure for two windows is back at 0.
 * The penalty is a per-cell deadline set to now + penalty on every row of
 * the key when its estimate reaches the threshold; a key is in penalty while
 * all its rows' deadlines are in the future (min over rows, again one-sided).
 *
 * Memory: LFE_THROTTLE_DEPTH x width cells of 16 bytes per kind, allocated
 * once (lfe_throttle_new) or placed in the caller's memory (lfe_throttle_init:
 * the daemon uses its NUMA-local heap); nothing is allocated or freed after
 * that, whatever the traffic. Default width 4096: 768 KiB per worker.
 *
 * Per core, on purpose: RSS spreads one client's connections over the worker
 * cores by 4-tuple, so with N workers an attacker who opens many connections
 * gets up to N x threshold failures per window before every core holds it.
 * Divide the thresholds by N where that matters; sharing counters between
 * cores would put a contended cache line on every bind.
 *
 * Thread rules: one instance per worker core, touched by that core only; no
 * locks, no atomics, nothing shared. Times are microseconds on any monotonic
 * clock the caller keeps (the worker's now_us).
 *
 * Errors: 0 or a negative errno (-EINVAL bad parameters, -ENOMEM, -EIO when
 * no random secret could be drawn).
 */
#ifndef LFE_BACKEND_THROTTLE_H
#define LFE_BACKEND_THROTTLE_H

#include <stddef.h>
#include <stdint.h>

#define LFE_THROTTLE_DEPTH         4u
#define LFE_THROTTLE_WIDTH_DEFAULT 4096u
#define LFE_THROTTLE_WIDTH_MAX     65536u   /* 16 hash bits per row */

enum lfe_throttle_kind { LFE_THR_SRC, LFE_THR_PAIR, LFE_THR_DN, LFE_THR_KINDS };

/* Bits of lfe_throttle_check's and lfe_throttle_fail's results. */
#define LFE_THR_BIT(kind) (1u << (kind))

struct lfe_throttle_params {
	uint32_t failures[LFE_THR_KINDS];   /* thresholds, 0 = kind off; ≤ 65535 */
	uint32_t window_ms;                 /* 1 .. 86400000 */
	uint32_t penalty_ms;                /* 1 .. 86400000 */
	uint32_t width;                     /* cells per row, power of two ≥ 64 and
	                                     * ≤ LFE_THROTTLE_WIDTH_MAX; 0 = default */
	const uint8_t *secret;              /* 16 bytes, or NULL: drawn from getrandom */
};

/* The keys of one bind attempt, hashed once (lfe_throttle_key) and used for
 * both the check and, after a failed verdict, the record. Plain data: the
 * caller may keep it (e.g. while a verifier thread runs). */
struct lfe_throttle_key {
	uint64_t h[LFE_THR_KINDS];
};

struct lfe_throttle;

/* Bytes lfe_throttle_init needs for these parameters (0 if invalid). */
size_t lfe_throttle_mem_size(const struct lfe_throttle_params *p);
/* Lay a throttle out in mem (mem_size bytes, 64-byte aligned, any content).
 * The caller owns mem and frees it after the last use; no lfe_throttle_free.
 * Returns the handle (== mem) or NULL with *err set if err != NULL. */
struct lfe_throttle *lfe_throttle_init(void *mem, size_t mem_size,
				       const struct lfe_throttle_params *p, int *err);
/* The same in memory of its own; lfe_throttle_free releases it. */
struct lfe_throttle *lfe_throttle_new(const struct lfe_throttle_params *p, int *err);
void lfe_throttle_free(struct lfe_throttle *t);   /* NULL is a no-op */

/* Hash the keys of a bind for ndn (normalized DN, any bytes, may be empty)
 * from IPv4 address src (host order). */
void lfe_throttle_key(const struct lfe_throttle *t, const char *ndn, size_t ndn_len, uint32_t src,
		      struct lfe_throttle_key *k);

/* Before verifying: the kinds of k that are in penalty at now_us (a mask of
 * LFE_THR_BIT), 0 to go on and verify. Changes nothing. */
unsigned lfe_throttle_check(const struct lfe_throttle *t, const struct lfe_throttle_key *k,
			    uint64_t now_us);

/* After an invalidCredentials verdict: count one failure for every enabled
 * kind of k. Returns the kinds that reached their threshold with it (their
 * penalty starts at now_us). */
unsigned lfe_throttle_fail(struct lfe_throttle *t, const struct lfe_throttle_key *k,
			   uint64_t now_us);

/* The count-min estimate of failures of one kind of k inside the window
 * ending at now_us (never below the true count). For tests and tools. */
uint32_t lfe_throttle_estimate(const struct lfe_throttle *t, const struct lfe_throttle_key *k,
			       enum lfe_throttle_kind kind, uint64_t now_us);

#endif
