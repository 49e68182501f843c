/* backend/credcache.c — the verified-credential cache (design, proof
 * obligations and thread rules in credcache.h). */
#include "backend/credcache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "backend/acctlock.h"
#include "backend/record.h"
#include "common/siphash.h"

/* Low bits of a way's tag word 0: the rest (and word 1) is the tag. */
#define M_LIVE     1ull
#define M_REF      2ull
#define M_TIMELESS 4ull
#define M_ALL      7ull

/* A time no expiry attribute reaches: shadowExpire has at most 12 digits of
 * days (1e12 * 86400 < 2^62), GeneralizedTime at most year 9999. */
#define FAR_FUTURE (INT64_MAX / 2)

struct bucket {
	uint64_t tag[LFE_CREDCACHE_WAYS][2];    /* line 0: tags and M_* bits */
	uint64_t txn[LFE_CREDCACHE_WAYS];       /* line 1: snapshot proved in */
	uint64_t digest[LFE_CREDCACHE_WAYS];    /*         userPassword digest */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct bucket) == 2 * 64, "a bucket is two cache lines");
_Static_assert(sizeof(struct bucket) == LFE_CREDCACHE_WAYS * LFE_CREDCACHE_ENTRY_BYTES,
	       "entry size as documented");

struct lfe_credcache {
	uint64_t ktag[2], kdig[2];
	uint32_t mask;                          /* buckets - 1 */
	uint32_t hand;                          /* NRU victim when all are referenced */
	bool own;                               /* allocated by lfe_credcache_new */
	struct lfe_credcache_stats st;
	struct bucket *b;
} __attribute__((aligned(64)));

static uint32_t entries_of(uint32_t entries)
{
	uint32_t n = LFE_CREDCACHE_WAYS;

	if (entries == 0 || entries > LFE_CREDCACHE_MAX)
		return 0;
	while (n < entries)
		n <<= 1;
	return n;
}

size_t lfe_credcache_mem_size(uint32_t entries)
{
	uint32_t n = entries_of(entries);

	if (n == 0)
		return 0;
	return sizeof(struct lfe_credcache) + (size_t)(n / LFE_CREDCACHE_WAYS) * sizeof(struct bucket);
}

struct lfe_credcache *lfe_credcache_init(void *mem, size_t mem_size, uint32_t entries,
					 const uint8_t *secret, int *err)
{
	uint8_t s[LFE_CREDCACHE_SECRET];
	size_t need = lfe_credcache_mem_size(entries);
	struct lfe_credcache *c = mem;
	int rc = 0;

	if (need == 0 || mem == NULL || mem_size < need || ((uintptr_t)mem & 63) != 0)
		rc = -EINVAL;
	else if (secret)
		memcpy(s, secret, sizeof(s));
	else if (getrandom(s, sizeof(s), 0) != (ssize_t)sizeof(s))
		rc = -EIO;
	if (rc < 0) {
		if (err)
			*err = rc;
		return NULL;
	}
	memset(mem, 0, need);
	c->ktag[0] = lfe_siphash_load64(s);
	c->ktag[1] = lfe_siphash_load64(s + 8);
	c->kdig[0] = lfe_siphash_load64(s + 16);
	c->kdig[1] = lfe_siphash_load64(s + 24);
	memset(s, 0, sizeof(s));
	c->mask = entries_of(entries) / LFE_CREDCACHE_WAYS - 1;
	c->b = (struct bucket *)((uint8_t *)mem + sizeof(*c));
	return c;
}

struct lfe_credcache *lfe_credcache_new(uint32_t entries, const uint8_t *secret, int *err)
{
	size_t sz = lfe_credcache_mem_size(entries);
	void *mem;

	if (sz == 0) {
		if (err)
			*err = -EINVAL;
		return NULL;
	}
	sz = (sz + 63) & ~(size_t)63;
	mem = aligned_alloc(64, sz);
	if (mem == NULL) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	struct lfe_credcache *c = lfe_credcache_init(mem, sz, entries, secret, err);
	if (c == NULL) {
		free(mem);
		return NULL;
	}
	c->own = true;
	return c;
}

void lfe_credcache_free(struct lfe_credcache *c)
{
	if (c && c->own)
		free(c);
}

uint32_t lfe_credcache_capacity(const struct lfe_credcache *c)
{
	return (c->mask + 1) * LFE_CREDCACHE_WAYS;
}

void lfe_credcache_clear(struct lfe_credcache *c)
{
	memset(c->b, 0, (size_t)(c->mask + 1) * sizeof(struct bucket));
}

const struct lfe_credcache_stats *lfe_credcache_stats(const struct lfe_credcache *c)
{
	return &c->st;
}

void lfe_credcache_key(const struct lfe_credcache *c, const char *dn, size_t dn_len,
		       const uint8_t *pw, size_t pw_len, unsigned pw_flags,
		       struct lfe_credcache_key *k)
{
	/* Lengths first, so no (DN, password) split of the same bytes aliases
	 * another. */
	uint8_t hdr[12];
	uint64_t n = dn_len, p = pw_len;
	struct lfe_siphash s;

	for (unsigned i = 0; i < 4; i++) {
		hdr[i] = (uint8_t)(n >> (8 * i));
		hdr[4 + i] = (uint8_t)(p >> (8 * i));
		hdr[8 + i] = (uint8_t)(pw_flags >> (8 * i));
	}
	/* The usual bind's bytes in one buffer and one pass (no partial words
	 * carried between pieces); the same bytes fed in pieces otherwise. */
	uint8_t one[256];
	if (dn_len + pw_len <= sizeof(one) - sizeof(hdr)) {
		memcpy(one, hdr, sizeof(hdr));
		memcpy(one + sizeof(hdr), dn, dn_len);
		memcpy(one + sizeof(hdr) + dn_len, pw, pw_len);
		size_t len = sizeof(hdr) + dn_len + pw_len;
		lfe_siphash24_128(c->ktag, one, len, k->t);
		explicit_bzero(one, len);   /* the password in clear */
	} else {
		lfe_siphash_init(&s, c->ktag, 1);
		lfe_siphash_update(&s, hdr, sizeof(hdr));
		lfe_siphash_update(&s, dn, dn_len);
		lfe_siphash_update(&s, pw, pw_len);
		lfe_siphash_final128(&s, k->t);
		explicit_bzero(&s, sizeof(s));   /* its tail: password bytes */
	}
	k->t[0] = (k->t[0] & ~M_ALL) | M_LIVE;   /* a computed tag is never a free way */
}

/* The two buckets a tag may live in (two independent parts of the tag;
 * the same bucket twice in a one-bucket cache). */
static inline void buckets_of(const struct lfe_credcache *c, const struct lfe_credcache_key *k,
			      struct bucket *b[2])
{
	b[0] = &c->b[(k->t[1] >> 7) & c->mask];
	b[1] = &c->b[(k->t[0] >> 7) & c->mask];
}

void lfe_credcache_prefetch(const struct lfe_credcache *c, const struct lfe_credcache_key *k)
{
	struct bucket *b[2];

	buckets_of(c, k, b);
	for (unsigned i = 0; i < 2; i++) {
		__builtin_prefetch(b[i]->tag);
		__builtin_prefetch(b[i]->txn);
	}
}

/* Where k is: *bi (0, 1) and the way, or LFE_CREDCACHE_WAYS. Every way of
 * both buckets is compared, hit or miss, so the probe costs the same
 * whatever the buckets hold. */
static unsigned find(struct bucket *const b[2], const struct lfe_credcache_key *k, unsigned *bi)
{
	unsigned way = LFE_CREDCACHE_WAYS;

	*bi = 0;
	for (unsigned i = 0; i < 2; i++) {
		for (unsigned w = 0; w < LFE_CREDCACHE_WAYS; w++) {
			uint64_t d = ((b[i]->tag[w][0] & ~(M_REF | M_TIMELESS)) ^ k->t[0]) |
				     (b[i]->tag[w][1] ^ k->t[1]);
			way = d == 0 ? w : way;
			*bi = d == 0 ? i : *bi;
		}
	}
	return way;
}

/* The entry's userPassword list and the facts a hit re-checks. */
struct proof {
	uint64_t digest;
	bool locked_now, timeless;
};

static int prove(const struct lfe_credcache *c, struct lfe_store_reader *r, const char *ndn,
		 size_t ndn_len, int64_t now, struct proof *p)
{
	const uint8_t *rec;
	size_t rec_len;
	struct lfe_bytes list;
	uint32_t n_vals;
	/* The bind index's record when there is one: the same userPassword
	 * and lock attributes, in fewer cache lines. */
	int rc = lfe_store_get_bind(r, ndn, ndn_len, &rec, &rec_len);

	if (rc < 0)
		return rc;
	rc = lfe_record_find_attr(rec, rec_len, "userPassword", 12, &n_vals, &list);
	if (rc < 0)
		return rc;
	if (rc == 0 || n_vals == 0)
		return -ENOENT;
	uint8_t nv[4] = { (uint8_t)n_vals, (uint8_t)(n_vals >> 8), (uint8_t)(n_vals >> 16),
			  (uint8_t)(n_vals >> 24) };
	struct lfe_siphash s;
	lfe_siphash_init(&s, c->kdig, 0);
	lfe_siphash_update(&s, nv, sizeof(nv));
	lfe_siphash_update(&s, list.p, list.len);
	p->digest = lfe_siphash_final(&s);
	p->locked_now = lfe_acct_locked(rec, rec_len, now, 0);
	p->timeless = !p->locked_now && !lfe_acct_locked(rec, rec_len, FAR_FUTURE, 0);
	return 0;
}

static void evict(struct bucket *b, unsigned w)
{
	b->tag[w][0] = b->tag[w][1] = 0;
	b->txn[w] = b->digest[w] = 0;
}

int lfe_credcache_check(struct lfe_credcache *c, struct lfe_store_reader *r,
			const struct lfe_credcache_key *k, const char *ndn, size_t ndn_len,
			int64_t now)
{
	struct bucket *bb[2];
	unsigned bi;
	/* A hit reads its bucket's second line (snapshot ids, digests) after
	 * the tags: fetched with the tags, both buckets' whether hit or miss,
	 * it is not a second miss in a row on a table larger than the caches. */
	buckets_of(c, k, bb);
	__builtin_prefetch(bb[0]->txn);
	__builtin_prefetch(bb[1]->txn);
	unsigned w = find(bb, k, &bi);
	struct bucket *b = bb[bi];
	struct proof p;

	if (w == LFE_CREDCACHE_WAYS) {
		c->st.misses++;
		return -ENOENT;
	}
	uint64_t txn = lfe_store_reader_txnid(r);
	if (txn != 0 && b->txn[w] == txn && (b->tag[w][0] & M_TIMELESS)) {
		b->tag[w][0] |= M_REF;
		c->st.hits++;
		c->st.hits_fast++;
		return 0;
	}
	if (prove(c, r, ndn, ndn_len, now, &p) < 0 || p.digest != b->digest[w] || p.locked_now) {
		evict(b, w);
		c->st.invalidated++;
		return -ESTALE;
	}
	b->txn[w] = txn;
	b->tag[w][0] = (b->tag[w][0] & ~M_TIMELESS) | M_REF | (p.timeless ? M_TIMELESS : 0);
	c->st.hits++;
	return 0;
}

static unsigned count_free(const struct bucket *b, unsigned *first)
{
	unsigned n = 0;

	*first = LFE_CREDCACHE_WAYS;
	for (unsigned w = LFE_CREDCACHE_WAYS; w-- > 0;) {
		if (!(b->tag[w][0] & M_LIVE)) {
			n++;
			*first = w;
		}
	}
	return n;
}

/* Where a new tag goes: a free way of the emptier bucket (two choices keep
 * the table evenly filled), else a way not referenced since the last sweep
 * (not recently used), else sweep both buckets (clear every reference bit)
 * and take the rotating hand's way. */
static struct bucket *victim(struct lfe_credcache *c, struct bucket *const b[2], unsigned *way)
{
	unsigned f0, f1, n0 = count_free(b[0], &f0), n1 = count_free(b[1], &f1);

	if (n0 || n1) {
		*way = n0 >= n1 ? f0 : f1;
		return n0 >= n1 ? b[0] : b[1];
	}
	c->st.evictions++;
	for (unsigned i = 0; i < 2; i++) {
		for (unsigned w = 0; w < LFE_CREDCACHE_WAYS; w++) {
			if (!(b[i]->tag[w][0] & M_REF)) {
				*way = w;
				return b[i];
			}
		}
	}
	for (unsigned i = 0; i < 2; i++)
		for (unsigned w = 0; w < LFE_CREDCACHE_WAYS; w++)
			b[i]->tag[w][0] &= ~M_REF;
	unsigned h = c->hand++ % (2 * LFE_CREDCACHE_WAYS);
	*way = h % LFE_CREDCACHE_WAYS;
	return b[h / LFE_CREDCACHE_WAYS];
}

int lfe_credcache_insert(struct lfe_credcache *c, struct lfe_store_reader *r,
			 const struct lfe_credcache_key *k, const char *ndn, size_t ndn_len,
			 uint64_t verified_txn, int64_t now)
{
	struct proof p;
	uint64_t txn = lfe_store_reader_txnid(r);

	if (txn == 0 || txn != verified_txn)
		return -ESTALE;
	int rc = prove(c, r, ndn, ndn_len, now, &p);
	if (rc < 0)
		return rc;
	if (p.locked_now)
		return -EACCES;
	struct bucket *bb[2], *b;
	unsigned bi, w;
	buckets_of(c, k, bb);
	w = find(bb, k, &bi);
	if (w == LFE_CREDCACHE_WAYS)
		b = victim(c, bb, &w);
	else
		b = bb[bi];
	/* Not referenced yet: one bind inserted it, a second one proves use. */
	b->tag[w][0] = k->t[0] | (p.timeless ? M_TIMELESS : 0);
	b->tag[w][1] = k->t[1];
	b->txn[w] = txn;
	b->digest[w] = p.digest;
	c->st.inserts++;
	return 0;
}
