/* backend/credcache.h — the verified-credential cache: one per worker core.
 *
 * A bind whose (DN, password) was verified recently is answered without the
 * password hash, and — when nothing was written to the store since — without
 * the entry lookup either. The cache never changes an answer; it only proves
 * ahead of time what the full path (lfe_store_verify_bind) would answer.
 *
 * What is kept. For each (DN, password, password flags) that verified
 * successfully (the DN's octets as the caller keys them, see
 * lfe_credcache_key; the entry proved is the normalized DN's): a 125-bit
 * keyed tag, SipHash-2-4-128 under a
 * secret key of its own (never the password, never a hash of the password
 * that works without the key); the id of the store snapshot it was last
 * proved in (lfe_store_reader_txnid); a 64-bit keyed digest (a second
 * secret key) of the entry's userPassword value list at that time; and
 * whether the entry's lock state can change with time alone. Secrets are
 * 32 bytes from getrandom per instance unless the caller gives them.
 *
 * A hit (lfe_credcache_check) answers success only when one of these holds:
 *   - the reader's snapshot id equals the one remembered (and is not 0,
 *     which a reader whose renew failed reports): nothing at all was
 *     committed since, so entry, values and lock attributes are those
 *     that verified; and the entry's lock state cannot change with time
 *     alone (no pwdEndTime/shadowExpire that lies ahead);
 *   - otherwise the entry is looked up in the reader's snapshot, the keyed
 *     digest of its userPassword values equals the remembered one (so the
 *     same password verifies against the same values again: schemes are
 *     deterministic), and lfe_acct_locked() says unlocked at `now`. The
 *     snapshot id is then refreshed.
 * Anything else — the entry deleted or renamed away, its passwords changed,
 * the account locked or expired, a corrupt record — evicts the entry and
 * answers -ESTALE: the caller runs the full path, which gives the real
 * answer. Only a success is ever inserted (lfe_credcache_insert), so a
 * wrong password is never cached as right; a tag false positive needs a
 * 2^-125 chance per probe (and on the lookup path also a digest match).
 *
 * Timing. A miss costs one tag (SipHash over DN and password) and one
 * probe that compares every way of both buckets, whether or not the DN
 * exists: a wrong password for an existing user takes the same time as for
 * an unknown user, as before, plus the same constant. Only the holder of a
 * right password can see a hit.
 *
 * Time-based lock state. "Cannot change with time alone" is decided as
 * unlocked both at `now` and at a far future time: every rule of
 * acctlock.h locks on a time interval that is either unbounded above
 * (pwdEndTime, shadowExpire, an administrative lock) or ends before any
 * unlocked `now` (ppolicy with a lockout duration). An entry with a future
 * expiry is therefore looked up and re-checked on every hit.
 *
 * Layout. Set-associative with two choices: buckets of 4 ways in two
 * cache lines (the tags in the first, snapshot ids and digests in the
 * second); a tag may live in either of two buckets picked by independent
 * parts of it, and goes into the emptier one, which keeps about 99% of a
 * table filled to three quarters (one fixed bucket: about 89%). A probe
 * reads two lines (independent loads) on a miss, three on a hit.
 * Replacement is not-recently-used: a hit sets a way's reference bit; an
 * insert into two full buckets takes a way without the bit, else clears
 * both buckets' bits and takes the way of a rotating hand. Memory: 32
 * bytes per entry, fixed at init; nothing is allocated after that.
 *
 * Thread rules: one instance per worker core, touched by that core only
 * (inserts after a verifier thread's success happen on the worker, in its
 * completion path). The reader passed in is that core's.
 *
 * Errors: 0 or a negative errno.
 */
#ifndef LFE_BACKEND_CREDCACHE_H
#define LFE_BACKEND_CREDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/store.h"

#define LFE_CREDCACHE_WAYS        4u
#define LFE_CREDCACHE_ENTRY_BYTES 32u
#define LFE_CREDCACHE_MAX         (1u << 24)   /* entries per instance: 512 MiB */
#define LFE_CREDCACHE_DEFAULT     65536u       /* [store] bind_cache: 2 MiB per core */
#define LFE_CREDCACHE_SECRET      32u          /* bytes: tag key, digest key */

struct lfe_credcache;

/* The tag of one (DN, password, flags): computed once per bind and kept by
 * the caller while a verifier thread works (plain data, no secret in
 * clear: useless without the instance's key). */
struct lfe_credcache_key {
	uint64_t t[2];
};

struct lfe_credcache_stats {
	uint64_t hits;          /* answered success from the cache */
	uint64_t hits_fast;     /* of which without an entry lookup */
	uint64_t misses;        /* no entry: the full path ran */
	uint64_t invalidated;   /* an entry failed its re-check and was evicted */
	uint64_t inserts;       /* entries written (new or refreshed) */
	uint64_t evictions;     /* live entries replaced for room */
};

/* Bytes lfe_credcache_init needs for `entries` (rounded up to a power of
 * two ≥ LFE_CREDCACHE_WAYS); 0 when entries is 0 or above
 * LFE_CREDCACHE_MAX. */
size_t lfe_credcache_mem_size(uint32_t entries);
/* Lay a cache out in mem (mem_size bytes, 64-byte aligned, any content);
 * the caller owns mem and frees it after the last use. secret: 32 bytes,
 * or NULL to draw them from getrandom (tests pass fixed ones). Returns the
 * handle (== mem) or NULL with *err (-EINVAL, -EIO: no randomness) when err != NULL. */
struct lfe_credcache *lfe_credcache_init(void *mem, size_t mem_size, uint32_t entries,
					 const uint8_t *secret, int *err);
/* The same in memory of its own; lfe_credcache_free releases it. */
struct lfe_credcache *lfe_credcache_new(uint32_t entries, const uint8_t *secret, int *err);
void lfe_credcache_free(struct lfe_credcache *c);   /* NULL is a no-op */

/* Entries the instance holds at most. */
uint32_t lfe_credcache_capacity(const struct lfe_credcache *c);

/* The tag of a bind: the DN's octets, the presented password, the LFE_PW_*
 * flags the verification uses. ldapfe passes the DN as the request spelled
 * it (so the key can be made before the DN is normalized: the bind peek);
 * a hit then needs the same spelling again, while check and insert prove
 * against the entry of the normalized DN they are given. Any one fixed
 * choice is exact; the tests key on normalized DNs. */
void lfe_credcache_key(const struct lfe_credcache *c, const char *dn, size_t dn_len,
		       const uint8_t *pw, size_t pw_len, unsigned pw_flags,
		       struct lfe_credcache_key *k);

/* Fetch the lines a check of k will read (both buckets, both lines), to
 * overlap that miss with other work; touches nothing else. */
void lfe_credcache_prefetch(const struct lfe_credcache *c, const struct lfe_credcache_key *k);

/* Before the full path, after any throttle check: 0 when the full path
 * would answer success now (see above), -ENOENT when there is no entry,
 * -ESTALE when there was one and it no longer holds (evicted). On anything
 * but 0 run the full path. now: seconds since the epoch (the clock
 * lfe_store_verify_bind uses for lock state). */
int lfe_credcache_check(struct lfe_credcache *c, struct lfe_store_reader *r,
			const struct lfe_credcache_key *k, const char *ndn, size_t ndn_len,
			int64_t now);

/* After a success: lfe_store_verify_bind returned 0, or a job it made
 * matched on a verifier thread. verified_txn is lfe_store_reader_txnid(r)
 * when that verification read the entry; if the reader has moved on since
 * (a write was committed), nothing is inserted (-ESTALE): the values that
 * verified can no longer be told from newer ones. Also not inserted:
 * the entry gone, without userPassword, corrupt (its error), or locked at
 * now (-EACCES). 0 when inserted. */
int lfe_credcache_insert(struct lfe_credcache *c, struct lfe_store_reader *r,
			 const struct lfe_credcache_key *k, const char *ndn, size_t ndn_len,
			 uint64_t verified_txn, int64_t now);

/* Forget every entry (the secrets stay). */
void lfe_credcache_clear(struct lfe_credcache *c);

const struct lfe_credcache_stats *lfe_credcache_stats(const struct lfe_credcache *c);

#endif
