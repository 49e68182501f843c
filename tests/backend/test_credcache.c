/* tests/backend/test_credcache.c — the verified-credential cache against a
 * real LMDB store: hits and misses, bounded capacity, wrong passwords never
 * cached, invalidation by every kind of change a writer makes (password,
 * delete, rename, lock, expiry), and a randomized run in which every bind's
 * answer with the cache equals the full path's in the same snapshot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/credcache.h"
#include "backend/pwscheme.h"
#include "common/siphash.h"
#include "backend/store.h"
#include "tests/check.h"

static char root[] = "/tmp/lfe-test-credcache.XXXXXX";
static const uint8_t secret[LFE_CREDCACHE_SECRET] = "0123456789abcdef0123456789abcdef";

static struct lfe_bytes S(const char *s)
{
	return (struct lfe_bytes){ (const uint8_t *)s, strlen(s) };
}

static void dn_of(const char *uid, char *dn, size_t cap)
{
	snprintf(dn, cap, "uid=%s,dc=example,dc=com", uid);
}

/* uid=<uid> with one userPassword value (hashed with scheme) and optionally
 * one more attribute (a lock). */
static int put_user(struct lfe_store *st, const char *uid, const char *scheme, const char *pw,
		    const char *xtype, const char *xval, bool replace)
{
	char dn[128], h[512];
	ssize_t n = lfe_pw_hash(scheme, (const uint8_t *)pw, strlen(pw), h, sizeof(h));
	if (n <= 0)
		return -EIO;
	struct lfe_bytes oc = S("person"), u = S(uid), pv = S(h), xv = S(xval ? xval : "");
	struct lfe_ldap_attr a[4] = {
		{ .type = S("objectClass"), .vals = &oc, .n_vals = 1 },
		{ .type = S("uid"), .vals = &u, .n_vals = 1 },
		{ .type = S("userPassword"), .vals = &pv, .n_vals = 1 },
		{ .type = S(xtype ? xtype : "x"), .vals = &xv, .n_vals = 1 },
	};
	dn_of(uid, dn, sizeof(dn));
	return lfe_store_put(st, S(dn), a, xtype ? 4 : 3, replace);
}

static int set_pw(struct lfe_store *st, const char *uid, const char *pw)
{
	char dn[128], h[512];
	ssize_t n = lfe_pw_hash("{SSHA}", (const uint8_t *)pw, strlen(pw), h, sizeof(h));
	dn_of(uid, dn, sizeof(dn));
	return n <= 0 ? -EIO : lfe_store_set_password(st, dn, strlen(dn), h, (size_t)n, (int64_t)time(NULL));
}

static int del_user(struct lfe_store *st, const char *uid)
{
	char dn[128];
	dn_of(uid, dn, sizeof(dn));
	return lfe_store_del(st, dn, strlen(dn));
}

/* The full path alone (store.h; slow checks run here since job is NULL). */
static int full(struct lfe_store_reader *r, const char *uid, const char *pw)
{
	char dn[128];
	dn_of(uid, dn, sizeof(dn));
	return lfe_store_verify_bind(r, dn, strlen(dn), (const uint8_t *)pw, strlen(pw), 0, NULL);
}

/* What the daemon's bind path does: check, else the full path and an insert
 * after a success. *hit tells which way it went. */
static int cached_at(struct lfe_credcache *c, struct lfe_store_reader *r, const char *uid,
		     const char *pw, int64_t now, int *hit)
{
	char dn[128];
	struct lfe_credcache_key k;

	dn_of(uid, dn, sizeof(dn));
	lfe_credcache_key(c, dn, strlen(dn), (const uint8_t *)pw, strlen(pw), 0, &k);
	*hit = lfe_credcache_check(c, r, &k, dn, strlen(dn), now);
	if (*hit == 0)
		return 0;
	uint64_t txn = lfe_store_reader_txnid(r);
	int rc = lfe_store_verify_bind(r, dn, strlen(dn), (const uint8_t *)pw, strlen(pw), 0, NULL);
	if (rc == 0)
		lfe_credcache_insert(c, r, &k, dn, strlen(dn), txn, now);
	return rc;
}

static int cached(struct lfe_credcache *c, struct lfe_store_reader *r, const char *uid,
		  const char *pw, int *hit)
{
	return cached_at(c, r, uid, pw, time(NULL), hit);
}

static void gentime(int64_t t, char *out, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, cap, "%Y%m%d%H%M%SZ", &tm);
}

static void test_siphash(void)
{
	uint8_t key[16], msg[64];
	uint64_t k[2], out[2];
	struct lfe_siphash s;

	for (unsigned i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (unsigned i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	k[0] = lfe_siphash_load64(key);
	k[1] = lfe_siphash_load64(key + 8);
	/* The reference implementation's vectors (vectors.h). */
	CHECK(lfe_siphash24(k, msg, 0) == 0x726fdb47dd0e0e31ull);
	CHECK(lfe_siphash24(k, msg, 15) == 0xa129ca6149be45e5ull);
	lfe_siphash_init(&s, k, 1);
	lfe_siphash_final128(&s, out);
	CHECK(out[0] == 0xe6a825ba047f81a3ull && out[1] == 0x930255c71472f66dull);
	/* The one-shot 128-bit form = init/update/final128, every length
	 * across the word boundaries (the tail from the last whole word, or
	 * byte by byte below 8). */
	for (size_t len = 0; len <= 64; len++) {
		uint64_t ref[2], got[2];
		lfe_siphash_init(&s, k, 1);
		lfe_siphash_update(&s, msg, len);
		lfe_siphash_final128(&s, ref);
		lfe_siphash24_128(k, msg, len, got);
		CHECK(got[0] == ref[0] && got[1] == ref[1]);
	}
	lfe_siphash24_128(k, msg, 0, out);
	CHECK(out[0] == 0xe6a825ba047f81a3ull && out[1] == 0x930255c71472f66dull);
	/* The word form (TCP's ISNs and cookies) = the byte form over the
	 * words' little-endian bytes, for 0 to 8 words. */
	for (size_t n = 0; n <= 8; n++) {
		uint64_t w[8];
		for (size_t i = 0; i < n; i++)
			w[i] = lfe_siphash_load64(msg + 8 * i);
		CHECK(lfe_siphash24_words(k, w, n) == lfe_siphash24(k, msg, 8 * n));
	}
	/* Fed in pieces = one call, for every split of every length. */
	for (size_t len = 0; len <= 40; len++) {
		uint64_t one = lfe_siphash24(k, msg, len);
		for (size_t a = 0; a <= len; a++) {
			for (size_t b = a; b <= len; b++) {
				lfe_siphash_init(&s, k, 0);
				lfe_siphash_update(&s, msg, a);
				lfe_siphash_update(&s, msg + a, b - a);
				lfe_siphash_update(&s, msg + b, len - b);
				CHECK(lfe_siphash_final(&s) == one);
			}
		}
	}
}

static void test_sizes(void)
{
	CHECK_EQ(lfe_credcache_mem_size(0), 0);
	CHECK_EQ(lfe_credcache_mem_size(LFE_CREDCACHE_MAX + 1u), 0);
	CHECK(lfe_credcache_mem_size(LFE_CREDCACHE_MAX) > (size_t)LFE_CREDCACHE_MAX * 32u);
	struct lfe_credcache *c = lfe_credcache_new(5, secret, NULL);
	CHECK(c && lfe_credcache_capacity(c) == 8);
	lfe_credcache_free(c);
	int err = 0;
	CHECK(lfe_credcache_new(0, NULL, &err) == NULL && err == -EINVAL);
	uint8_t buf[64] __attribute__((aligned(64)));
	CHECK(lfe_credcache_init(buf, sizeof(buf), 4, secret, &err) == NULL && err == -EINVAL);
	c = lfe_credcache_new(4, NULL, &err);   /* secrets from getrandom */
	CHECK(c != NULL);
	lfe_credcache_free(c);
	lfe_credcache_free(NULL);
}

/* A tag is SipHash-2-4-128 under the secret's first 16 bytes of the
 * lengths, flags, DN and password (the live bit set, the M_* bits taken),
 * whether the key hashes them in one buffer (short) or in pieces (long). */
static void test_key_bytes(void)
{
	struct lfe_credcache *c = lfe_credcache_new(64, secret, NULL);
	uint64_t k[2] = { lfe_siphash_load64(secret), lfe_siphash_load64(secret + 8) };
	char dn[600];
	uint8_t pw[300];

	for (size_t i = 0; i < sizeof dn; i++)
		dn[i] = (char)('a' + i % 26);
	for (size_t i = 0; i < sizeof pw; i++)
		pw[i] = (uint8_t)(i * 7);
	static const size_t dl[] = { 0, 1, 7, 8, 9, 40, 200, 231, 232, 233, 244, 245, 599 };
	static const size_t pl[] = { 0, 1, 8, 12, 13, 299 };
	for (size_t a = 0; a < sizeof dl / sizeof dl[0]; a++) {
		for (size_t b = 0; b < sizeof pl / sizeof pl[0]; b++) {
			uint8_t hdr[12];
			for (unsigned i = 0; i < 4; i++) {
				hdr[i] = (uint8_t)(dl[a] >> (8 * i));
				hdr[4 + i] = (uint8_t)(pl[b] >> (8 * i));
				hdr[8 + i] = (uint8_t)(5u >> (8 * i));
			}
			struct lfe_siphash s;
			uint64_t ref[2];
			lfe_siphash_init(&s, k, 1);
			lfe_siphash_update(&s, hdr, sizeof hdr);
			lfe_siphash_update(&s, dn, dl[a]);
			lfe_siphash_update(&s, pw, pl[b]);
			lfe_siphash_final128(&s, ref);
			struct lfe_credcache_key got;
			lfe_credcache_key(c, dn, dl[a], pw, pl[b], 5, &got);
			CHECK(got.t[1] == ref[1] && (got.t[0] & ~7ull) == (ref[0] & ~7ull) &&
			      (got.t[0] & 7) == 1);
		}
	}
	lfe_credcache_free(c);
}

/* Tags: distinct for DN/password splits and flags; secret-dependent. */
static void test_keys(void)
{
	struct lfe_credcache *a = lfe_credcache_new(64, secret, NULL);
	uint8_t other[LFE_CREDCACHE_SECRET];
	memcpy(other, secret, sizeof(other));
	other[0] ^= 1;
	struct lfe_credcache *b = lfe_credcache_new(64, other, NULL);
	struct lfe_credcache_key k1, k2, k3, k4;

	lfe_credcache_key(a, "uid=ab", 6, (const uint8_t *)"c", 1, 0, &k1);
	lfe_credcache_key(a, "uid=a", 5, (const uint8_t *)"bc", 2, 0, &k2);
	lfe_credcache_key(a, "uid=ab", 6, (const uint8_t *)"c", 1, LFE_PW_ALLOW_CLEARTEXT, &k3);
	lfe_credcache_key(b, "uid=ab", 6, (const uint8_t *)"c", 1, 0, &k4);
	CHECK(memcmp(&k1, &k2, sizeof(k1)) != 0);
	CHECK(memcmp(&k1, &k3, sizeof(k1)) != 0);
	CHECK(memcmp(&k1, &k4, sizeof(k1)) != 0);
	lfe_credcache_free(a);
	lfe_credcache_free(b);
}

static void test_invalidation(struct lfe_store *st)
{
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	struct lfe_credcache *c = lfe_credcache_new(1024, secret, NULL);
	const struct lfe_credcache_stats *cs = lfe_credcache_stats(c);
	int hit;

	CHECK(r && c);
	CHECK_EQ(put_user(st, "alice", "{SSHA}", "pw-a", NULL, NULL, false), 0);
	CHECK_EQ(put_user(st, "bob", "{SSHA}", "pw-b", NULL, NULL, false), 0);
	CHECK_EQ(put_user(st, "carol", "{PBKDF2-SHA256}", "pw-c", NULL, NULL, false), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);

	/* Miss, insert, then a hit without lookup. */
	CHECK_EQ(cached(c, r, "alice", "pw-a", &hit), 0);
	CHECK_EQ(hit, -ENOENT);
	CHECK_EQ(cs->inserts, 1);
	CHECK_EQ(cached(c, r, "alice", "pw-a", &hit), 0);
	CHECK_EQ(hit, 0);
	CHECK_EQ(cs->hits_fast, 1);

	/* Wrong and unknown: never inserted, however often. */
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(cached(c, r, "alice", "wrong", &hit), -EACCES);
		CHECK_EQ(hit, -ENOENT);
		CHECK_EQ(cached(c, r, "nobody", "pw-a", &hit), -EACCES);
		CHECK_EQ(hit, -ENOENT);
		CHECK_EQ(cached(c, r, "alice", "", &hit), -EACCES);
	}
	CHECK_EQ(cs->inserts, 1);

	/* A slow scheme: hashed once, then answered from the cache. */
	CHECK_EQ(cached(c, r, "carol", "pw-c", &hit), 0);
	CHECK_EQ(hit, -ENOENT);
	CHECK_EQ(cached(c, r, "carol", "pw-c", &hit), 0);
	CHECK_EQ(hit, 0);
	CHECK_EQ(cached(c, r, "carol", "pw-x", &hit), -EACCES);

	/* An unrelated write: the hit is proved by a lookup, and stays a hit. */
	CHECK_EQ(cached(c, r, "bob", "pw-b", &hit), 0);
	CHECK_EQ(put_user(st, "dave", "{SSHA}", "pw-d", NULL, NULL, false), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	uint64_t fast = cs->hits_fast;
	CHECK_EQ(cached(c, r, "alice", "pw-a", &hit), 0);
	CHECK_EQ(hit, 0);
	CHECK_EQ(cs->hits_fast, fast);
	CHECK_EQ(cached(c, r, "alice", "pw-a", &hit), 0);   /* refreshed: fast again */
	CHECK_EQ(cs->hits_fast, fast + 1);

	/* Password change: visible after the renew, like the full path. */
	CHECK_EQ(set_pw(st, "alice", "pw-a2"), 0);
	CHECK_EQ(cached(c, r, "alice", "pw-a", &hit), 0);    /* old snapshot: still right */
	CHECK_EQ(full(r, "alice", "pw-a"), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	uint64_t inv = cs->invalidated;
	CHECK_EQ(cached(c, r, "alice", "pw-a", &hit), -EACCES);
	CHECK_EQ(hit, -ESTALE);
	CHECK_EQ(cs->invalidated, inv + 1);
	CHECK_EQ(cached(c, r, "alice", "pw-a", &hit), -EACCES);
	CHECK_EQ(hit, -ENOENT);                              /* evicted */
	CHECK_EQ(cached(c, r, "alice", "pw-a2", &hit), 0);
	CHECK_EQ(cached(c, r, "alice", "pw-a2", &hit), 0);
	CHECK_EQ(hit, 0);

	/* The same password set again (new salt): a new value, re-proved. */
	CHECK_EQ(set_pw(st, "alice", "pw-a2"), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(cached(c, r, "alice", "pw-a2", &hit), 0);
	CHECK_EQ(hit, -ESTALE);

	/* Delete. */
	CHECK_EQ(del_user(st, "bob"), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(cached(c, r, "bob", "pw-b", &hit), -EACCES);
	CHECK_EQ(hit, -ESTALE);

	/* Rename (delete and re-add in one batch, as the sync consumer does):
	 * the old DN is gone; the new one verifies by the full path first. */
	CHECK_EQ(cached(c, r, "carol", "pw-c", &hit), 0);
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	CHECK_EQ(del_user(st, "carol"), 0);
	CHECK_EQ(put_user(st, "carol2", "{SSHA}", "pw-c", NULL, NULL, false), 0);
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(cached(c, r, "carol", "pw-c", &hit), -EACCES);
	CHECK_EQ(hit, -ESTALE);
	CHECK_EQ(cached(c, r, "carol2", "pw-c", &hit), 0);
	CHECK_EQ(hit, -ENOENT);

	/* Lock (389-ds nsAccountLock, ppolicy pwdAccountLockedTime), unlock. */
	CHECK_EQ(put_user(st, "erin", "{SSHA}", "pw-e", NULL, NULL, false), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(cached(c, r, "erin", "pw-e", &hit), 0);
	CHECK_EQ(cached(c, r, "erin", "pw-e", &hit), 0);
	CHECK_EQ(hit, 0);
	CHECK_EQ(put_user(st, "erin", "{SSHA}", "pw-e", "nsAccountLock", "TRUE", true), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(cached(c, r, "erin", "pw-e", &hit), -EACCES);
	CHECK_EQ(hit, -ESTALE);
	CHECK_EQ(full(r, "erin", "pw-e"), -EACCES);
	CHECK_EQ(put_user(st, "erin", "{SSHA}", "pw-e", NULL, NULL, true), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(cached(c, r, "erin", "pw-e", &hit), 0);
	CHECK_EQ(cached(c, r, "erin", "pw-e", &hit), 0);
	CHECK_EQ(hit, 0);
	/* A lock that keeps the same password values: only the lock changed. */
	{
		char dn[128];
		struct lfe_entry_view e;
		struct lfe_bytes pv, oc = S("person"), u = S("erin"), lk = S("000001010000Z");
		dn_of("erin", dn, sizeof(dn));
		CHECK_EQ(lfe_store_get(r, dn, strlen(dn), &e), 0);
		CHECK_EQ(lfe_entry_get(&e, "userPassword", 12, &pv, 1), 1);
		char keep[512];
		memcpy(keep, pv.p, pv.len);
		struct lfe_bytes kv = { (const uint8_t *)keep, pv.len };
		struct lfe_ldap_attr a[4] = {
			{ .type = S("objectClass"), .vals = &oc, .n_vals = 1 },
			{ .type = S("uid"), .vals = &u, .n_vals = 1 },
			{ .type = S("userPassword"), .vals = &kv, .n_vals = 1 },
			{ .type = S("pwdAccountLockedTime"), .vals = &lk, .n_vals = 1 },
		};
		CHECK_EQ(lfe_store_put(st, S(dn), a, 4, true), 0);
		CHECK_EQ(lfe_store_reader_renew(r), 0);
		CHECK_EQ(cached(c, r, "erin", "pw-e", &hit), -EACCES);
		CHECK_EQ(hit, -ESTALE);
	}

	/* Expiry by time alone, no write: every hit is re-checked at now. */
	int64_t now = time(NULL);
	char end[32];
	gentime(now + 1000, end, sizeof(end));
	CHECK_EQ(put_user(st, "frank", "{SSHA}", "pw-f", "pwdEndTime", end, false), 0);
	CHECK_EQ(put_user(st, "gina", "{SSHA}", "pw-g", "shadowExpire", "-1", false), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(cached_at(c, r, "frank", "pw-f", now, &hit), 0);
	fast = cs->hits_fast;
	CHECK_EQ(cached_at(c, r, "frank", "pw-f", now + 10, &hit), 0);
	CHECK_EQ(hit, 0);
	CHECK_EQ(cs->hits_fast, fast);                       /* looked up */
	char dn[128];
	struct lfe_credcache_key k;
	dn_of("frank", dn, sizeof(dn));
	lfe_credcache_key(c, dn, strlen(dn), (const uint8_t *)"pw-f", 4, 0, &k);
	CHECK_EQ(lfe_credcache_check(c, r, &k, dn, strlen(dn), now + 2000), -ESTALE);
	/* shadowExpire -1 never expires: fast hits. */
	CHECK_EQ(cached(c, r, "gina", "pw-g", &hit), 0);
	CHECK_EQ(cached(c, r, "gina", "pw-g", &hit), 0);
	CHECK_EQ(cs->hits_fast, fast + 1);

	/* A verifier success reported after a write: not inserted. */
	dn_of("gina", dn, sizeof(dn));
	lfe_credcache_clear(c);
	lfe_credcache_key(c, dn, strlen(dn), (const uint8_t *)"pw-g", 4, 0, &k);
	uint64_t t0 = lfe_store_reader_txnid(r);
	CHECK_EQ(put_user(st, "hank", "{SSHA}", "pw-h", NULL, NULL, false), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK(lfe_store_reader_txnid(r) > t0);
	CHECK_EQ(lfe_credcache_insert(c, r, &k, dn, strlen(dn), t0, now), -ESTALE);
	CHECK_EQ(lfe_credcache_check(c, r, &k, dn, strlen(dn), now), -ENOENT);
	CHECK_EQ(lfe_credcache_insert(c, r, &k, dn, strlen(dn), lfe_store_reader_txnid(r), now), 0);
	CHECK_EQ(lfe_credcache_check(c, r, &k, dn, strlen(dn), now), 0);

	lfe_credcache_free(c);
	lfe_store_reader_free(r);
}

/* A small cache holds at most its capacity; recently used entries survive
 * a scan of new ones better than unused ones. */
static void test_capacity(struct lfe_store *st)
{
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	struct lfe_credcache *c = lfe_credcache_new(16, secret, NULL);
	const struct lfe_credcache_stats *cs = lfe_credcache_stats(c);
	char uid[32], pw[32];
	int hit;

	CHECK(r && c);
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	for (int i = 0; i < 200; i++) {
		snprintf(uid, sizeof(uid), "cap%03d", i);
		snprintf(pw, sizeof(pw), "pw%03d", i);
		CHECK_EQ(put_user(st, uid, "{SSHA}", pw, NULL, NULL, false), 0);
	}
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	for (int i = 0; i < 200; i++) {
		snprintf(uid, sizeof(uid), "cap%03d", i);
		snprintf(pw, sizeof(pw), "pw%03d", i);
		CHECK_EQ(cached(c, r, uid, pw, &hit), 0);
	}
	CHECK_EQ(cs->inserts, 200);
	CHECK(cs->evictions >= 200 - 16);
	uint64_t h0 = cs->hits;
	for (int i = 0; i < 200; i++) {
		snprintf(uid, sizeof(uid), "cap%03d", i);
		snprintf(pw, sizeof(pw), "pw%03d", i);
		CHECK_EQ(cached(c, r, uid, pw, &hit), 0);   /* answers never change */
	}
	CHECK(cs->hits - h0 <= 16);
	lfe_credcache_free(c);

	/* Room for 256, 200 users: two bucket choices keep nearly all of them
	 * (one fixed bucket of 4 ways loses about one in nine here). */
	c = lfe_credcache_new(256, secret, NULL);
	cs = lfe_credcache_stats(c);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 200; i++) {
			snprintf(uid, sizeof(uid), "cap%03d", i);
			snprintf(pw, sizeof(pw), "pw%03d", i);
			CHECK_EQ(cached(c, r, uid, pw, &hit), 0);
		}
	}
	fprintf(stderr, "occupancy: %llu of 200 kept, %llu evictions\n", (unsigned long long)cs->hits,
		(unsigned long long)cs->evictions);
	CHECK(cs->hits >= 190);   /* one fixed bucket: 167 */
	lfe_credcache_free(c);
	lfe_store_reader_free(r);
}

/* Several thousand random operations: binds with right, old, wrong and
 * unknown passwords, interleaved with password changes, deletes, re-adds,
 * locks and unlocks by the writer, and renews at random (so the reader
 * lags the writer as a worker does). Every answer with the cache equals the
 * full path's answer in the same snapshot. */
static void test_random(struct lfe_store *st)
{
	enum { USERS = 24, OPS = 6000 };
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	struct lfe_credcache *c = lfe_credcache_new(32, secret, NULL);
	const struct lfe_credcache_stats *cs = lfe_credcache_stats(c);
	char cur[USERS][16], old[USERS][16], uid[32];
	bool exists[USERS];
	unsigned seed = 12345, gen = 0, mismatches = 0;
	int hit;

	CHECK(r && c);
	srand(seed);
	for (int u = 0; u < USERS; u++) {
		snprintf(uid, sizeof(uid), "rnd%02d", u);
		snprintf(cur[u], sizeof(cur[u]), "p%u", gen++);
		strcpy(old[u], cur[u]);
		CHECK_EQ(put_user(st, uid, "{SSHA}", cur[u], NULL, NULL, false), 0);
		exists[u] = true;
	}
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	for (int op = 0; op < OPS; op++) {
		int u = rand() % USERS, kind = rand() % 100;
		snprintf(uid, sizeof(uid), "rnd%02d", u);
		if (kind < 70) {
			const char *pw = kind < 45 ? cur[u] : kind < 55 ? old[u] : kind < 65 ? "wrong" : "";
			if (kind >= 65)
				snprintf(uid, sizeof(uid), "ghost%02d", u);
			int a = cached(c, r, uid, pw, &hit);
			int b = full(r, uid, pw);
			if (a != b) {
				mismatches++;
				fprintf(stderr, "op %d: %s/%s cached %d full %d (check %d)\n", op, uid, pw, a,
					b, hit);
			}
		} else if (kind < 80) {
			strcpy(old[u], cur[u]);
			snprintf(cur[u], sizeof(cur[u]), "p%u", gen++);
			if (exists[u])
				CHECK_EQ(set_pw(st, uid, cur[u]), 0);
		} else if (kind < 86) {
			if (exists[u])
				CHECK_EQ(del_user(st, uid), 0);
			else
				CHECK_EQ(put_user(st, uid, "{SSHA}", cur[u], NULL, NULL, false), 0);
			exists[u] = !exists[u];
		} else if (kind < 90) {
			/* Lock or unlock, new salt each time. */
			if (exists[u])
				CHECK_EQ(put_user(st, uid, "{SSHA}", cur[u], rand() % 2 ? "nsAccountLock" : NULL,
						  "true", true), 0);
		} else {
			CHECK_EQ(lfe_store_reader_renew(r), 0);
		}
	}
	CHECK_EQ(mismatches, 0);
	fprintf(stderr, "random: hits %llu (fast %llu) misses %llu invalidated %llu inserts %llu "
		"evictions %llu\n", (unsigned long long)cs->hits, (unsigned long long)cs->hits_fast,
		(unsigned long long)cs->misses, (unsigned long long)cs->invalidated,
		(unsigned long long)cs->inserts, (unsigned long long)cs->evictions);
	/* The run exercised every outcome. */
	CHECK(cs->hits > 100 && cs->hits_fast > 0 && cs->hits > cs->hits_fast);
	CHECK(cs->invalidated > 10 && cs->evictions > 0);
	lfe_credcache_free(c);
	lfe_store_reader_free(r);
}

int main(void)
{
	char path[300], cmd[400];

	test_siphash();
	test_sizes();
	test_keys();
	test_key_bytes();
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/s", root);
	struct lfe_store *st = lfe_store_open(path, 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return 1;
	CHECK_EQ(lfe_store_init(st, "dc=example,dc=com"), 0);
	test_invalidation(st);
	test_capacity(st);
	test_random(st);
	lfe_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	return check_done();
}
