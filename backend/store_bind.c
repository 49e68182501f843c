/* backend/store_bind.c — the bind index of the LMDB store and the bind
 * lookup (lfe_store_verify_bind, lfe_store_get_bind), the hot path of
 * every bind (store_int.h).
 */
#include "backend/store.h"

#include <errno.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "backend/store_int.h"
#include "backend/acctlock.h"
#include "backend/bindjob.h"
#include "backend/ppolicy.h"
#include "backend/pwscheme.h"
#include "backend/record.h"
#include "common/siphash.h"

/* ---- bind index (format 2) ----
 *
 * "bind": 8-byte key = SipHash-2-4 of the normalized DN under the store's
 * key (meta "bind.key", 16 random bytes drawn when the index is made),
 * big-endian so LMDB's byte order is the hash's order. Value:
 *   1 byte  flags: BIX_PPOLICY = the record keeps a password-policy
 *           attribute (format 3: binds of a record without one, in a
 *           store without a default policy, skip the policy's walk);
 *           BIX_COLLIDED = two DNs had this hash; nothing follows,
 *           binds of that hash look in "entries";
 *   then    a record (record.h) whose DN is the normalized DN and whose
 *           attributes are the entry's userPassword (the first attribute
 *           of that type, the one lfe_record_find_attr finds) and its
 *           account-lock attributes (acctlock.h): everything a bind reads.
 * About 120 bytes an entry against ~400 in "entries", with 8-byte keys:
 * more entries per leaf, fewer levels, one value read per bind.
 *
 * Every entry has one key, with or without a password, so the index has
 * the entries' members and count. Writers keep it in the same write
 * transaction as the entry (put, set_password, del, clear; batches too):
 * a reader's snapshot sees both or neither. Format 1 stores have no index
 * (binds read "entries"); this build refuses nothing and a format 1 build
 * refuses format 2 stores, so an old writer can never leave the index
 * stale. lfe_store_bind_index_build makes one.
 *
 * Unknown DNs (verify_bind): the hash is keyed and uniform, so the range
 * lookup of an unknown DN's hash lands on a uniformly drawn real entry,
 * the same one for the same DN, in the leaf where the DN's hash would be:
 * the same walk and one value read, as a hit. */
#define BIX_COLLIDED 0x01u
#define BIX_PPOLICY 0x02u

int lfe_store_bix_new_key(struct lfe_store *st, MDB_txn *txn)
{
	int rc = lfe_store_meta_new_key(txn, st, META_BINDKEY, st->bix_key);

	if (rc == 0)
		st->bix = true;
	return rc;
}

static MDB_val bix_key(const struct lfe_store *st, const char *ndn, size_t len, uint8_t out[8])
{
	uint64_t h = lfe_siphash24(st->bix_key, ndn, len);

	for (int i = 7; i >= 0; i--, h >>= 8)
		out[i] = (uint8_t)h;
	return mval(out, 8);
}

/* Leaf hints. At a million entries a bind's cost is mostly memory. "bind"
 * is then 4 levels: the root and its children stay in cache, the ~260
 * branch pages below them (1 MiB) mostly in L2/L3, but the leaf (one of
 * ~50,000, ~20 entries each) is cold, and LMDB's binary search in it reads
 * one node after another, each a dependent cache miss. The keys are
 * uniform hashes in hash order, so each range of hashes (a bucket: the
 * top bits) lives in one leaf, or two at a boundary. The reader remembers,
 * per bucket, the page its last lookup landed in and prefetches that whole
 * page before the next lookup of the bucket: the page's lines then come in
 * together instead of one search step at a time (-5 to -8% of a bind at
 * 1M users, bench_store). A hint is only ever prefetched, never read: a
 * stale one (the writer copied the leaf elsewhere) costs a wasted
 * prefetch, not a wrong answer, and prefetches do not fault. The bucket
 * depends on the keyed hash alone, so an unknown DN gets the hint of the
 * leaf it lands in as a present DN does (no oracle). Buckets: a power of
 * two at least twice the leaves at reader_new, so a bucket rarely spans
 * two leaves; 4 bytes each, sized once (no allocation on renew): a
 * store that grows a lot after the daemon started gets coarser hints (some
 * prefetches wasted), or none if it was small, until the next start. */
#define BIX_HINTS_MIN_LEAVES 256u /* below (1 MiB of leaves: ~5,000 entries) the
					* leaves stay in cache and the prefetch only
					* costs */
#define BIX_HINTS_MIN_BITS 10u   /* 4 KiB */
#define BIX_HINTS_MAX_BITS 22u   /* 16 MiB: ~2M leaves, some 40M entries */

void lfe_store_bix_hints_new(struct lfe_store_reader *r)
{
	MDB_stat ms;
	unsigned bits = BIX_HINTS_MIN_BITS;

	if (mdb_stat(r->txn, r->st->dbi[DB_BIND], &ms) != 0 || ms.ms_psize < 64 ||
	    ms.ms_leaf_pages < BIX_HINTS_MIN_LEAVES)
		return;
	while (bits < BIX_HINTS_MAX_BITS && (1ull << bits) < 2ull * ms.ms_leaf_pages)
		bits++;
	r->hint = calloc((size_t)1 << bits, sizeof(r->hint[0]));
	r->hint_shift = 64 - bits;
	r->psize = ms.ms_psize;
}

static uint32_t *bix_hint(const struct lfe_store_reader *r, const uint8_t kb[8])
{
	uint64_t h = 0;

	for (int i = 0; i < 8; i++)
		h = h << 8 | kb[i];
	return &r->hint[h >> r->hint_shift];
}

/* A hint is a page's distance from hint_base in pages, plus HINT_BIAS
 * (any page of a map up to 8 TiB fits); 0: none. */
#define HINT_BIAS (1ll << 31)

/* Before the lookup of key kb: prefetch every line of its bucket's page. */
static void bix_prefetch(const struct lfe_store_reader *r, const uint8_t kb[8])
{
	uint32_t h = r->hint ? *bix_hint(r, kb) : 0;

	if (h == 0)
		return;
	uintptr_t p = r->hint_base + (uintptr_t)(((int64_t)h - HINT_BIAS) * (int64_t)r->psize);
	for (size_t off = 0; off < r->psize; off += 64)
		__builtin_prefetch((const void *)(p + off));
}

/* After it: remember the page the value v lies in. */
static void bix_remember(struct lfe_store_reader *r, const uint8_t kb[8], const MDB_val *v)
{
	if (!r->hint)
		return;
	uintptr_t pg = (uintptr_t)v->mv_data & ~(uintptr_t)(r->psize - 1);
	if (r->hint_base == 0)
		r->hint_base = pg;
	int64_t d = ((int64_t)pg - (int64_t)r->hint_base) / (int64_t)r->psize + HINT_BIAS;
	if (d > 0 && d <= UINT32_MAX)
		*bix_hint(r, kb) = (uint32_t)d;
}

/* The index value of a valid record rec (of normalized DN ndn) in
 * st->bix_buf: its length, or -errno. */
static ssize_t bix_value(struct lfe_store *st, const char *ndn, size_t nl, const uint8_t *rec,
			 size_t len)
{
	struct lfe_bytes dn, type, list;
	uint32_t n_attrs, n_vals, n = 0;
	size_t off, out = 1 + LFE_RECORD_HDR_LEN + nl;
	bool pw = false, pp = false;
	int rc;

	if (len + nl + 1 > st->bix_cap) {
		size_t cap = len + nl + 1 < 4096 ? 4096 : len + nl + 1;
		uint8_t *p = realloc(st->bix_buf, cap);

		if (!p)
			return -ENOMEM;
		st->bix_buf = p;
		st->bix_cap = cap;
	}
	rc = lfe_record_header(rec, len, &dn, &n_attrs, &off);
	if (rc < 0)
		return rc;
	while ((rc = lfe_record_next_attr(rec, len, &off, &type, &n_vals, &list)) == 1) {
		bool is_pw = !pw && type.len == 12 && strncasecmp((const char *)type.p, "userPassword", 12) == 0;

		bool is_pp = !is_pw && lfe_pp_attr_type(type.p, type.len);

		if (!is_pw && !is_pp && !lfe_acct_attr_type(type.p, type.len))
			continue;
		pp |= is_pp;
		pw |= is_pw;
		/* The attribute's bytes as they are: type_len .. end of values. */
		const uint8_t *a = type.p - 1;
		size_t alen = (size_t)(list.p + list.len - a);
		memcpy(st->bix_buf + out, a, alen);
		out += alen;
		n++;
	}
	if (rc < 0)
		return rc;
	uint8_t *h = st->bix_buf + 1;
	st->bix_buf[0] = pp ? BIX_PPOLICY : 0;
	h[0] = LFE_RECORD_VERSION;
	h[1] = 0;
	h[2] = (uint8_t)nl;
	h[3] = (uint8_t)(nl >> 8);
	h[4] = (uint8_t)n;
	h[5] = (uint8_t)(n >> 8);
	memcpy(h + LFE_RECORD_HDR_LEN, ndn, nl);
	return (ssize_t)out;
}

/* The DN of an index value, false for a collision marker or a value that
 * does not parse. */
static bool bix_dn(const MDB_val *v, struct lfe_bytes *dn, const uint8_t **rec, size_t *rec_len)
{
	uint32_t n_attrs;
	size_t off;

	if (v->mv_size < 1 || (((const uint8_t *)v->mv_data)[0] & BIX_COLLIDED))
		return false;
	*rec = (const uint8_t *)v->mv_data + 1;
	*rec_len = v->mv_size - 1;
	return lfe_record_header(*rec, *rec_len, dn, &n_attrs, &off) == 0;
}

/* Index the entry ndn → record rec (just written in txn): a new key, the
 * same DN's value replaced, or a collision marker when another DN has the
 * hash (then binds of that hash read "entries", which is always right). */
int lfe_store_bix_put(struct lfe_store *st, MDB_txn *txn, const char *ndn, size_t nl,
		      const uint8_t *rec, size_t len)
{
	uint8_t kb[8];
	MDB_val k = bix_key(st, ndn, nl, kb), old, v;
	struct lfe_bytes dn;
	const uint8_t *orec;
	size_t olen;
	ssize_t vl;
	int rc = mdb_get(txn, st->dbi[DB_BIND], &k, &old);

	if (rc != 0 && rc != MDB_NOTFOUND)
		return map_err(rc);
	if (rc == 0 && !(bix_dn(&old, &dn, &orec, &olen) &&
			 dn.len == nl && memcmp(dn.p, ndn, nl) == 0)) {
		/* (a collision marker is exactly { BIX_COLLIDED }) */
		static const uint8_t marker = BIX_COLLIDED;

		if (old.mv_size == 1 && ((const uint8_t *)old.mv_data)[0] == marker)
			return 0;
		v = mval(&marker, 1);
		return map_err(mdb_put(txn, st->dbi[DB_BIND], &k, &v, 0));
	}
	vl = bix_value(st, ndn, nl, rec, len);
	if (vl < 0)
		return (int)vl;
	v = mval(st->bix_buf, (size_t)vl);
	return map_err(mdb_put(txn, st->dbi[DB_BIND], &k, &v, 0));
}

/* Drop ndn's key, unless it is a collision marker (kept: it only sends
 * binds of that hash to "entries"). */
int lfe_store_bix_del(struct lfe_store *st, MDB_txn *txn, const char *ndn, size_t nl)
{
	uint8_t kb[8];
	MDB_val k = bix_key(st, ndn, nl, kb), old;
	struct lfe_bytes dn;
	const uint8_t *orec;
	size_t olen;
	int rc = mdb_get(txn, st->dbi[DB_BIND], &k, &old);

	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return map_err(rc);
	if (!bix_dn(&old, &dn, &orec, &olen) || dn.len != nl || memcmp(dn.p, ndn, nl) != 0)
		return 0;
	return map_err(mdb_del(txn, st->dbi[DB_BIND], &k, NULL));
}

int lfe_store_get_bind(struct lfe_store_reader *r, const char *ndn, size_t ndn_len,
		       const uint8_t **rec, size_t *rec_len)
{
	struct lfe_entry_view e;
	int rc;

	if (ndn_len == 0 || ndn_len > r->st->maxkey)
		return -ENOENT;
	if (r->bcur) {
		uint8_t kb[8];
		struct lfe_bytes dn;
		MDB_val k = bix_key(r->st, ndn, ndn_len, kb), v;

		bix_prefetch(r, kb);
		rc = mdb_cursor_get(r->bcur, &k, &v, MDB_SET_KEY);
		if (rc == MDB_NOTFOUND)
			return -ENOENT;
		if (rc != 0)
			return map_err(rc);
		bix_remember(r, kb, &v);
		if (bix_dn(&v, &dn, rec, rec_len))
			return dn.len == ndn_len && memcmp(dn.p, ndn, ndn_len) == 0 ? 0 : -ENOENT;
		/* a collision marker: the entry itself */
	}
	rc = lfe_store_get(r, ndn, ndn_len, &e);
	if (rc == 0) {
		*rec = e.rec;
		*rec_len = e.rec_len;
	}
	return rc;
}

/* The dummy verification of an unknown DN (or an entry without a usable
 * userPassword): the same work as a real entry of the bind scheme, on the
 * same path — inline when the scheme is fast, a job when it is slow. */
static int verify_dummy(struct lfe_store_reader *r, const uint8_t *pw, size_t pw_len,
			unsigned pw_flags, struct lfe_bind_job *job)
{
	const struct lfe_store *st = r->st;

	r->stats.dummies++;
	if (st->dummy_slow && job) {
		*job = st->dummy;
		return -EAGAIN;
	}
	if (!st->dummy_slow && st->dummy_rec_len) {
		/* The steps of a wrong password on a real record (see
		 * lfe_store_verify_bind), on the dummy record. */
		struct lfe_bytes list, v;
		uint32_t n_vals;
		if (lfe_record_find_attr(st->dummy_rec, st->dummy_rec_len, "userPassword", 12, &n_vals,
					 &list) == 1)
			while (lfe_record_next_val(&list, &v) == 1)
				if (v.len && lfe_pw_class_of((const char *)v.p, v.len) != LFE_PW_SLOW)
					(void)lfe_pw_verify((const char *)v.p, v.len, pw, pw_len, pw_flags);
		return -EACCES;
	}
	(void)lfe_bind_job_run(&st->dummy, pw, pw_len, pw_flags);
	return -EACCES;
}

/* The password-policy verdict of a record whose password matched
 * (ppolicy.h) into r->pp: 0, or -EACCES when it refuses the bind
 * (EXPIRED). A record without policy attributes in a store without a
 * default policy costs one walk over its (few) attribute types. The
 * policy entry is read in the same snapshot: pwdPolicySubentry's, else
 * the default one; one that is absent is no policy (as slapd falls back
 * to its built-in defaults, which never expire), one that does not parse
 * refuses (fail closed). */
static int pp_verdict(struct lfe_store_reader *r, const uint8_t *rec, size_t rec_len)
{
	struct lfe_store *st = r->st;
	struct lfe_pp_acct a;
	struct lfe_pp_policy pol;
	struct lfe_entry_view e;
	const struct lfe_pp_policy *pp = NULL;
	char nd[LFE_DN_MAX + 1];
	size_t pl = st->pp_default_len;

	/* Read through the bind index, whose flags say the record keeps no
	 * policy attribute: nothing to read here without a default policy. */
	if (!r->pp_maybe && pl == 0)
		return 0;
	(void)lfe_pp_acct_read(rec, rec_len, &a);
	if (!a.any && pl == 0)
		return 0;
	const char *pdn = lfe_store_pp_dn(st, &a, nd, &pl);
	if (pdn == NULL)
		a.bad = true;   /* a subentry that does not normalize */
	if (pl && lfe_store_get(r, pdn, pl, &e) == 0) {
		if (lfe_pp_policy_read(e.rec, e.rec_len, &pol) < 0)
			a.bad = true;
		pp = &pol;
	}
	r->pp = lfe_pp_check(&a, pp, 0, time(NULL));
	r->pp_timed = pp && pp->max_age > 0 && a.changed_set;
	return r->pp.state == LFE_PP_EXPIRED ? -EACCES : 0;
}

const struct lfe_pp_verdict *lfe_store_reader_ppolicy(const struct lfe_store_reader *r,
						      bool *timed)
{
	if (timed)
		*timed = r->pp_timed;
	return &r->pp;
}

/* Check pw against the userPassword values of one entry record (store.h,
 * lfe_store_verify_bind). decoy: the record is not the bind DN's but the
 * one its lookup landed on (the DN is unknown): the same work as a wrong
 * password on it, and never a success. */
static int verify_record(struct lfe_store_reader *r, const uint8_t *rec, size_t rec_len,
			 const uint8_t *pw, size_t pw_len, unsigned pw_flags, bool decoy,
			 struct lfe_bind_job *job)
{
	struct lfe_bytes list, v;
	uint32_t n_vals;
	struct lfe_bind_job local = { 0 }, *j = job ? job : &local;
	int rc;

	r->stats.records_read++;
	r->stats.decoys += decoy;
	if (lfe_record_find_attr(rec, rec_len, "userPassword", 12, &n_vals, &list) != 1 ||
	    n_vals == 0)
		return verify_dummy(r, pw, pw_len, pw_flags, job);
	bool any = false;
	while (lfe_record_next_val(&list, &v) == 1) {
		if (v.len == 0)
			continue;
		any = true;
		if (lfe_pw_class_of((const char *)v.p, v.len) == LFE_PW_SLOW) {
			/* Copied now: LMDB values die with the read txn. */
			(void)lfe_bind_job_add(j, (const char *)v.p, v.len);
			continue;
		}
		/* A locked or expired account answers like a wrong password,
		 * after the same work (acctlock.h). A decoy goes on like a
		 * wrong password, whatever the result. */
		if (lfe_pw_verify((const char *)v.p, v.len, pw, pw_len, pw_flags) == 0 && !decoy) {
			lfe_bind_job_wipe(j);
			if (lfe_acct_locked(rec, rec_len, time(NULL), 0))
				return -EACCES;
			/* (pp_verdict's first test, here: no call for a record
			 * without policy attributes and no default policy) */
			if (!r->pp_maybe && r->st->pp_default_len == 0)
				return 0;
			return pp_verdict(r, rec, rec_len);
		}
	}
	if (!any)
		return verify_dummy(r, pw, pw_len, pw_flags, job);
	if (j->n_vals == 0)
		return -EACCES;
	/* Known now, while the record is at hand; the verifier has no store.
	 * A decoy's job is "locked": every value is tried, none can answer
	 * success. */
	j->locked = lfe_acct_locked(rec, rec_len, time(NULL), 0) | decoy;
	if (!j->locked) {
		/* The policy's verdict if the password turns out right: an
		 * expired one fails after the same work (lfe_bind_job_run:
		 * -EKEYEXPIRED). */
		(void)pp_verdict(r, rec, rec_len);
		j->pp = r->pp;
		j->pp_timed = r->pp_timed;
		r->pp = (struct lfe_pp_verdict){ LFE_PP_OK, -1, -1, 0 };
		r->pp_timed = false;
	}
	if (job)
		return -EAGAIN;
	/* No job wanted (tools, tests): run the slow check here. */
	rc = lfe_bind_job_run(&local, pw, pw_len, pw_flags);
	if (rc == 0 || rc == -EKEYEXPIRED) {
		r->pp = local.pp;
		r->pp_timed = local.pp_timed;
	}
	lfe_bind_job_wipe(&local);
	return rc == -EKEYEXPIRED ? -EACCES : rc;
}

/* a == b, reading every byte of the shorter whatever differs: a decoy's DN
 * (another entry's, often of the same length) costs the compare a hit's
 * does, not an early exit. */
static bool same_all_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	unsigned d = alen != blen;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* Position c on key *k or the next key after it; past the last key, on
 * `wrap` (MDB_FIRST or MDB_LAST). 0, -ENOENT (empty database) or -errno. */
static int land(MDB_cursor *c, MDB_val *k, MDB_val *v, MDB_cursor_op wrap)
{
	int rc = mdb_cursor_get(c, k, v, MDB_SET_RANGE);

	if (rc == MDB_NOTFOUND)
		rc = mdb_cursor_get(c, k, v, wrap);
	return map_err(rc);
}

/* The bind lookup. An unknown DN must cost what a wrong password costs, and
 * most of that cost at a million entries is memory: the B-tree walk and the
 * record's cache lines, not the hash. So an existing DN and an unknown one
 * take the same LMDB step, a range lookup (MDB_SET_RANGE), which walks the
 * tree to where the key is or would be and lands on the entry there: the
 * DN's own, or for an unknown DN a real one of the same leaf, as cold as
 * the DN's own would be. An unknown DN then verifies the password against
 * that real entry's values as a wrong password would (decoy: never a
 * success), so scheme, cost parameters, value count, slow or fast path are
 * those of a real entry, and the same DN always lands on the same entry,
 * as a real user always reads its own.
 *   - With the bind index the key is the DN's keyed hash: the entry landed
 *     on is drawn uniformly (two unknown DNs share it with chance 1/N, and
 *     no one without the store's key can choose it); past the greatest
 *     hash, the smallest. The search key is never present (see below), so
 *     both run the same full binary search.
 *   - Without it (format 1) the key is the DN and the entry the next DN;
 *     past the last DN, the last entry. There unknown DNs that sort
 *     together share one entry (DNs after the last one all share the last
 *     one, which stays in cache): build the index.
 * The dummy record is left for an empty password, an entry without a
 * usable userPassword and an empty store. With the index, a key that
 * sorts after the last one of a leaf lands on the first of the next leaf
 * (LMDB steps to the sibling page): an unknown DN whose hash falls there,
 * and (searching just below its hash) a present DN whose hash is the first
 * of a leaf, alike. Without the index a hit's binary search stops early at
 * the exact match and only unknown DNs take that step: residuals of the
 * fallback. */
int lfe_store_verify_bind(struct lfe_store_reader *r, const char *ndn, size_t ndn_len,
			  const uint8_t *pw, size_t pw_len, unsigned pw_flags,
			  struct lfe_bind_job *job)
{
	int rc;

	if (job)
		memset(job, 0, sizeof(*job));
	r->pp = (struct lfe_pp_verdict){ LFE_PP_OK, -1, -1, 0 };
	r->pp_timed = false;
	r->pp_maybe = true;
	/* An empty password is an unauthenticated bind (RFC 4513 §5.1.2): never
	 * a success here, and it costs what a wrong password costs. */
	if (pw_len == 0 || ndn_len == 0 || ndn_len > r->st->maxkey)
		return verify_dummy(r, pw, pw_len, pw_flags, job);
	/* The hot path of every bind: no whole-record validation here, the
	 * userPassword lookup checks every length it hops over. */
	MDB_val k, rec;
	if (r->bcur) {
		/* Through the bind index (above): past the greatest hash, the
		 * smallest (a drawn entry as well). */
		uint8_t kb[8];
		struct lfe_bytes dn;
		const uint8_t *br;
		size_t bl;
		uint8_t sk[9];
		(void)bix_key(r->st, ndn, ndn_len, kb);

		/* The search key is the 9 bytes (h − 1)‖FF, just below the
		 * 8-byte hash h: no key equals it, so a present DN and an
		 * unknown one both run LMDB's binary search in the leaf to its
		 * end (an exact match stops it early: a hit would read one node
		 * less) and land on the first key ≥ h. h = 0 wraps to FF…FF‖FF,
		 * past every key, and MDB_FIRST lands right. */
		memcpy(sk, kb, 8);
		sk[8] = 0xff;
		for (int i = 7; i >= 0 && sk[i]-- == 0; i--)
			;
		k = mval(sk, sizeof(sk));
		bix_prefetch(r, kb);
		rc = land(r->bcur, &k, &rec, MDB_FIRST);
		if (rc == -ENOENT)
			return verify_dummy(r, pw, pw_len, pw_flags, job);
		if (rc < 0)
			return rc;
		bix_remember(r, kb, &rec);
		r->pp_maybe = (((const uint8_t *)rec.mv_data)[0] & BIX_PPOLICY) != 0;
		if (bix_dn(&rec, &dn, &br, &bl)) {
			/* Both compares always run (no short cut): a decoy costs
			 * what a hit costs. */
			unsigned key_eq = same_all_bytes(k.mv_data, k.mv_size, kb, 8);
			unsigned dn_eq = same_all_bytes(dn.p, dn.len, (const uint8_t *)ndn, ndn_len);
			bool hit = (key_eq & dn_eq) != 0;
			return verify_record(r, br, bl, pw, pw_len, pw_flags, !hit, job);
		}
		/* A collision marker (or a value that does not parse): "entries"
		 * answers. */
	}
	k = mval(ndn, ndn_len);
	rc = land(r->ecur, &k, &rec, MDB_LAST);
	if (rc == -ENOENT)
		return verify_dummy(r, pw, pw_len, pw_flags, job);
	if (rc < 0)
		return rc;
	bool decoy = k.mv_size != ndn_len || memcmp(k.mv_data, ndn, ndn_len) != 0;
	return verify_record(r, rec.mv_data, rec.mv_size, pw, pw_len, pw_flags, decoy, job);
}

struct bix_build {
	struct lfe_store *st;
	MDB_txn *txn;
};

static int bix_build_one(void *ctx, const char *ndn, size_t ndn_len, const uint8_t *rec,
			 size_t rec_len)
{
	const struct bix_build *b = ctx;
	int rc = lfe_record_validate(rec, rec_len);

	return rc < 0 ? rc : lfe_store_bix_put(b->st, b->txn, ndn, ndn_len, rec, rec_len);
}

int lfe_store_bind_index_build(struct lfe_store *st)
{
	/* Format 1 becomes 2; format 3 stays 3. */
	const uint8_t fmt[4] = { st->fmt >= 3 ? 3 : 2, 0, 0, 0 };
	MDB_txn *txn;
	int rc;

	rc = lfe_store_index_txn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = map_err(mdb_dbi_open(txn, DB_NAME(DB_BIND), MDB_CREATE, &st->dbi[DB_BIND]));
	if (rc == 0)
		rc = map_err(mdb_drop(txn, st->dbi[DB_BIND], 0));
	if (rc == 0)
		rc = lfe_store_bix_new_key(st, txn);   /* a rebuild draws a new key */
	/* "entries" is only read here: the walk's values stay valid while
	 * "bind" is written. */
	if (rc == 0)
		rc = lfe_store_walk(txn, st->dbi[DB_ENTRIES], bix_build_one,
				    &(struct bix_build){ st, txn });
	if (rc == 0)
		rc = lfe_store_meta_put(txn, st, META_FORMAT, fmt, sizeof(fmt));
	if (rc == 0)
		rc = map_err(mdb_txn_commit(txn));
	else
		mdb_txn_abort(txn);
	if (rc == 0)
		st->fmt = fmt[0];
	else
		st->bix = st->fmt >= 2;   /* an aborted rebuild leaves the old index */
	return rc;
}
