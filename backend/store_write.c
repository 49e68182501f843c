/* backend/store_write.c — the writer of the LMDB store: transactions,
 * batches, put, del, set_password and the index entries each one changes
 * (store_int.h).
 *
 * Writer. Every write validates its input (DN, suffix, sizes, index key
 * lengths, existence) before it touches the txn, so a refused operation
 * inside a batch leaves the batch usable. An LMDB failure after the first
 * modification (map full, I/O) poisons the batch: later calls and the commit
 * return that error and the batch is dropped. The entry count is kept as a
 * delta per transaction and folded into meta once, at commit.
 *
 * Import speed. A batch remembers the greatest key of "entries" and of each
 * index. A key above it is appended (MDB_APPEND: no search, and pages are
 * split at the end so they stay full instead of half full), and an entry
 * whose DN is above every DN in the store also appends its DN to the
 * duplicate lists of its index keys (MDB_APPENDDUP). Sorted input (an LDIF
 * export, the benchmark) thus takes the fast path; unsorted input takes the
 * ordinary one, key by key. Without MDB_WRITEMAP about half the CPU of a
 * large batch goes to LMDB's private dirty pages (malloc, first-touch
 * faults, dirty-list search); LFE_STORE_BULK turns it on for imports only,
 * because a full disk then means SIGBUS instead of -EIO.
 */
#include "backend/store.h"

#include <errno.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/ppolicy.h"
#include "backend/store_int.h"
#include "backend/record.h"
#include "ldap/dn.h"

#define LFE_STORE_MAX_ATTRS     1024u

/* ---- writer ---- */

int lfe_store_wtxn_begin(struct lfe_store *st, MDB_txn **txn)
{
	if (st->rdonly)
		return -EROFS;
	if (!st->ready)
		return -ENOENT;
	if (st->batch) {
		if (st->batch_err)
			return st->batch_err;
		*txn = st->batch;
		return 0;
	}
	st->delta = 0;
	return lfe_store_write_begin(st, txn);
}

static int flush_count(struct lfe_store *st, MDB_txn *txn)
{
	uint8_t b[8];
	MDB_val v;
	int rc;

	if (st->delta == 0)
		return 0;
	rc = lfe_store_meta_get(txn, st, META_ENTRIES, &v);
	if (rc < 0 || v.mv_size != 8)
		return rc < 0 ? rc : -EBADMSG;
	st_u64(b, ld_u64(v.mv_data) + (uint64_t)st->delta);
	rc = lfe_store_meta_put(txn, st, META_ENTRIES, b, sizeof(b));
	if (rc == 0)
		st->delta = 0;
	return rc;
}

/* Finish one operation. rc is its result; dirty says whether it modified
 * the txn before failing. Outside a batch: commit on success, else abort. */
int lfe_store_wtxn_end(struct lfe_store *st, MDB_txn *txn, int rc, bool dirty)
{
	if (txn == st->batch) {
		if (rc < 0 && dirty)
			st->batch_err = rc;
		return rc;
	}
	if (rc == 0)
		rc = flush_count(st, txn);
	if (rc < 0) {
		mdb_txn_abort(txn);
		st->delta = 0;
		return rc;
	}
	return map_err(mdb_txn_commit(txn));
}

/* Keep a private copy of a record: LMDB values in a write txn die with the
 * next modification. */
static int save_old(struct lfe_store *st, const MDB_val *v)
{
	if (v->mv_size > st->scratch_cap) {
		size_t cap = v->mv_size < 4096 ? 4096 : v->mv_size;
		uint8_t *p = realloc(st->scratch, cap);

		if (!p)
			return -ENOMEM;
		st->scratch = p;
		st->scratch_cap = cap;
	}
	memcpy(st->scratch, v->mv_data, v->mv_size);
	return 0;
}

/* Inside a batch: is k above every key of db (so MDB_APPEND applies)? */
static bool is_new_max(const struct lfe_store *st, unsigned db, const MDB_val *k)
{
	size_t ml;
	int c;

	if (!st->batch || !st->max_ok[db])
		return false;
	ml = st->max_len[db];
	c = memcmp(k->mv_data, st->max_key[db], k->mv_size < ml ? k->mv_size : ml);
	return c > 0 || (c == 0 && k->mv_size > ml);
}

void lfe_store_set_max(struct lfe_store *st, unsigned db, const MDB_val *k)
{
	if (k->mv_size > sizeof(st->max_key[db])) {
		st->max_ok[db] = false;
		return;
	}
	if (k->mv_size)
		memcpy(st->max_key[db], k->mv_data, k->mv_size);
	st->max_len[db] = (uint16_t)k->mv_size;
	st->max_ok[db] = true;
}

/* Put or delete one (key, DN) pair of slot idx. Two values may share a
 * key ("Ann", "ann"; two trigrams of one value): that is no error. */
static int idx_put(struct lfe_store *st, MDB_txn *txn, unsigned idx, const uint8_t *key,
		   size_t kl, MDB_val *ndn, bool add, bool dn_is_max)
{
	MDB_val k = mval(key, kl);
	int rc;

	if (add) {
		unsigned fl = MDB_NODUPDATA;

		if (is_new_max(st, idx, &k))
			fl |= MDB_APPEND;
		else if (dn_is_max)
			fl |= MDB_APPENDDUP;
		rc = mdb_put(txn, st->dbi[idx], &k, ndn, fl);
		if (rc == 0 && (fl & MDB_APPEND))
			lfe_store_set_max(st, idx, &k);
	} else {
		rc = mdb_del(txn, st->dbi[idx], &k, ndn);
	}
	if (rc != 0 && rc != (add ? MDB_KEYEXIST : MDB_NOTFOUND))
		return map_err(rc);
	return 0;
}

static int sub_keys(struct lfe_store *st, MDB_txn *txn, unsigned idx, struct lfe_bytes v,
		    MDB_val *ndn, bool add, bool dn_is_max)
{
	struct subnorm x = { .fold = st->idx_rule[idx] == LFE_MR_CASE_IGNORE };
	uint8_t key[SUB_KEY_MAX], prev[SUB_LEN];
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < v.len; i++) {
		memcpy(prev, x.win, SUB_LEN);
		int full = lfe_store_subnorm_feed(&x, v.p[i]);
		/* A folded space and the next character complete two windows. */
		if (full == 2) {
			uint8_t w[SUB_LEN];
			memcpy(w, prev + 1, SUB_LEN - 1);
			w[SUB_LEN - 1] = ' ';
			lfe_store_sub_key(key, 'A', w, SUB_LEN);
			rc = idx_put(st, txn, idx, key, SUB_KEY_MAX, ndn, add, dn_is_max);
		}
		if (rc == 0 && full >= 1) {
			lfe_store_sub_key(key, 'A', x.win, SUB_LEN);
			rc = idx_put(st, txn, idx, key, SUB_KEY_MAX, ndn, add, dn_is_max);
		}
	}
	size_t m = x.n < SUB_LEN ? x.n : SUB_LEN;
	for (size_t l = 1; rc == 0 && l <= m; l++) {
		lfe_store_sub_key(key, 'I', x.head, l);
		rc = idx_put(st, txn, idx, key, 3 + l, ndn, add, dn_is_max);
		if (rc == 0) {
			lfe_store_sub_key(key, 'F', x.win + SUB_LEN - l, l);
			rc = idx_put(st, txn, idx, key, 3 + l, ndn, add, dn_is_max);
		}
	}
	return rc;
}

/* Add (add=true) or remove the index entries of one attribute, of the
 * kinds given (a subset of the slot's). dn_is_max: ndn is above every DN
 * in the store, so it goes last in any dup list. */
static int index_attr(struct lfe_store *st, MDB_txn *txn, unsigned idx, unsigned kinds,
		      const struct lfe_bytes *vals, uint32_t n,
		      struct lfe_bytes list, MDB_val *ndn, bool add, bool dn_is_max)
{
	uint8_t key[512];
	size_t cap = st->maxkey < sizeof(key) ? st->maxkey : sizeof(key);
	struct lfe_bytes v;
	int rc = 0;

	for (uint32_t i = 0; rc == 0; i++) {
		if (vals) {
			if (i == n)
				break;
			v = vals[i];
		} else if (lfe_record_next_val(&list, &v) != 1) {
			break;
		}
		if (i == 0 && (kinds & LFE_INDEX_PRES))
			rc = idx_put(st, txn, idx, lfe_store_ikey_pres, sizeof(lfe_store_ikey_pres), ndn,
				     add, dn_is_max);
		if (rc == 0 && (kinds & LFE_INDEX_EQ)) {
			ssize_t kl = lfe_store_index_key(st, idx, v.p, v.len, key, cap);
			rc = idx_put(st, txn, idx, key, (size_t)kl, ndn, add, dn_is_max);
		}
		if (rc == 0 && (kinds & LFE_INDEX_SUB))
			rc = sub_keys(st, txn, idx, v, ndn, add, dn_is_max);
	}
	return rc;
}

/* Add (add=true) or remove the index entries of a record's attributes:
 * of the slots in mask, the kinds given (of each slot's). */
int lfe_store_index_record(struct lfe_store *st, MDB_txn *txn, const uint8_t *rec, size_t len,
			   MDB_val *ndn, uint64_t mask, unsigned kinds, bool add)
{
	struct lfe_bytes dn, type, list;
	uint32_t n_attrs, n_vals;
	size_t off;
	int rc;

	rc = lfe_record_header(rec, len, &dn, &n_attrs, &off);
	while (rc == 0 && (rc = lfe_record_next_attr(rec, len, &off, &type, &n_vals, &list)) == 1) {
		unsigned idx = lfe_store_idx_of_type(st, type.p, type.len);

		rc = idx == IDX_NONE || !(mask & (1ull << idx)) ? 0 :
		     index_attr(st, txn, idx, st->idx_kind[idx] & kinds, NULL, 0, list, ndn, add,
				false);
	}
	return rc;
}

/* Remove the index entries of the record saved in st->scratch. */
static int unindex_record(struct lfe_store *st, MDB_txn *txn, size_t len, MDB_val *ndn)
{
	return lfe_store_index_record(st, txn, st->scratch, len, ndn, ~(uint64_t)0, ~0u, false);
}

static ssize_t normalize_dn(const struct lfe_store *st, const uint8_t *dn, size_t len,
			    char *out, size_t cap)
{
	ssize_t nl = lfe_dn_normalize(dn, len, out, cap);

	if (nl <= 0 || (size_t)nl > st->maxkey ||
	    !lfe_dn_is_under(out, (size_t)nl, st->suffix, st->suffix_len))
		return -EINVAL;
	return nl;
}

/* Check an entry before anything is written: types unique. Fills idx[]
 * (index slot of each attribute; long values are indexed by hash). Each
 * type is looked up in the attribute table once (lfe_attr_key). */
static int check_attrs(const struct lfe_store *st, const struct lfe_ldap_attr *attrs,
		       uint32_t n, uint8_t *idx)
{
	if (n > LFE_STORE_MAX_ATTRS)
		return -E2BIG;
	for (uint32_t i = 0; i < n; i++) {
		struct lfe_attr_key k;

		if (attrs[i].type.len == 0 || (attrs[i].n_vals && !attrs[i].vals))
			return -EINVAL;
		lfe_attr_key_init(&k, attrs[i].type.p, attrs[i].type.len);
		for (uint32_t j = 0; j < i; j++)
			if (lfe_attr_key_eq(&k, attrs[j].type.p, attrs[j].type.len))
				return -EINVAL;
		idx[i] = (uint8_t)lfe_store_idx_of_type(st, attrs[i].type.p, attrs[i].type.len);
	}
	return 0;
}

/* Attribute types given as OIDs are stored under their names, so lookups by
 * name (userPassword above all) find them. Returns a private copy of attrs
 * when a type changed, NULL otherwise (*err set on failure). */
static struct lfe_ldap_attr *canon_types(const struct lfe_ldap_attr *attrs, uint32_t n,
					 int *err)
{
	struct lfe_ldap_attr *out;
	char *names;
	bool any = false;

	*err = 0;
	for (uint32_t i = 0; i < n && !any; i++)
		any = attrs[i].type.len && attrs[i].type.p[0] >= '0' && attrs[i].type.p[0] <= '9';
	if (!any)
		return NULL;
	out = malloc(n * (sizeof(*out) + LFE_RECORD_MAX_TYPE + 1));
	if (!out) {
		*err = -ENOMEM;
		return NULL;
	}
	names = (char *)(out + n);
	for (uint32_t i = 0; i < n; i++) {
		char *name = names + (size_t)i * (LFE_RECORD_MAX_TYPE + 1);
		ssize_t cl;

		out[i] = attrs[i];
		if (!attrs[i].type.len || attrs[i].type.p[0] < '0' || attrs[i].type.p[0] > '9')
			continue;
		cl = lfe_attr_canon(attrs[i].type.p, attrs[i].type.len, name,
				    LFE_RECORD_MAX_TYPE + 1);
		if (cl <= 0) {
			free(out);
			*err = -EINVAL;
			return NULL;
		}
		out[i].type = (struct lfe_bytes){ (const uint8_t *)name, (size_t)cl };
	}
	return out;
}

int lfe_store_put(struct lfe_store *st, struct lfe_bytes dn,
		  const struct lfe_ldap_attr *attrs, uint32_t n_attrs, bool replace)
{
	char ndn[LFE_DN_MAX + 1];
	uint8_t idx[LFE_STORE_MAX_ATTRS];
	struct lfe_ldap_attr *canon;
	MDB_val k, v, old;
	MDB_txn *txn;
	ssize_t nl, size;
	bool had = false, dn_is_max;
	int rc;

	if (st->rdonly)
		return -EROFS;
	if (!st->ready)
		return -ENOENT;
	if (n_attrs && !attrs)
		return -EINVAL;
	nl = normalize_dn(st, dn.p, dn.len, ndn, sizeof(ndn));
	if (nl < 0)
		return (int)nl;
	canon = canon_types(attrs, n_attrs, &rc);
	if (rc < 0)
		return rc;
	if (canon)
		attrs = canon;
	rc = check_attrs(st, attrs, n_attrs, idx);
	size = rc < 0 ? rc : lfe_record_size(dn, attrs, n_attrs);
	if (size < 0) {
		rc = (int)size;
		goto out;
	}
	rc = lfe_store_wtxn_begin(st, &txn);
	if (rc < 0)
		goto out;
	k = mval(ndn, (size_t)nl);
	v = mval(NULL, (size_t)size);
	/* The entries DB is not dupsort, so it is max slot N_IDX of max_key. */
	dn_is_max = is_new_max(st, N_IDX, &k);
	if (dn_is_max) {
		rc = mdb_put(txn, st->dbi[DB_ENTRIES], &k, &v, MDB_RESERVE | MDB_APPEND);
	} else if (!replace) {
		/* No separate lookup: NOOVERWRITE reports an existing entry. */
		rc = mdb_put(txn, st->dbi[DB_ENTRIES], &k, &v, MDB_RESERVE | MDB_NOOVERWRITE);
		if (rc == MDB_KEYEXIST) {
			rc = lfe_store_wtxn_end(st, txn, -EEXIST, false);
			goto out;
		}
	} else {
		rc = mdb_get(txn, st->dbi[DB_ENTRIES], &k, &old);
		if (rc == 0) {
			had = true;
			rc = save_old(st, &old);
		} else {
			rc = map_err(rc) == -ENOENT ? 0 : map_err(rc);
		}
		if (rc < 0) {
			rc = lfe_store_wtxn_end(st, txn, rc, false);
			goto out;
		}
		rc = mdb_put(txn, st->dbi[DB_ENTRIES], &k, &v, MDB_RESERVE);
	}
	rc = map_err(rc);
	if (rc == 0) {
		lfe_record_write(v.mv_data, v.mv_size, dn, attrs, n_attrs);
		if (dn_is_max)
			lfe_store_set_max(st, N_IDX, &k);
		if (st->bix)
			rc = lfe_store_bix_put(st, txn, ndn, (size_t)nl, v.mv_data, v.mv_size);
	}
	if (rc == 0 && had)
		rc = unindex_record(st, txn, old.mv_size, &k);
	for (uint32_t i = 0; rc == 0 && i < n_attrs; i++)
		if (idx[i] != IDX_NONE)
			rc = index_attr(st, txn, idx[i], st->idx_kind[idx[i]], attrs[i].vals,
					attrs[i].n_vals, (struct lfe_bytes){ 0 }, &k, true,
					dn_is_max);
	if (rc == 0 && !had)
		st->delta++;
	rc = lfe_store_wtxn_end(st, txn, rc, true);
out:
	free(canon);
	return rc;
}

/* Open a write transaction (or join the batch) on an existing entry: ndn
 * (LFE_DN_MAX + 1 bytes) and *k get its normalized DN, *old its record, whose
 * bytes are kept in st->scratch (save_old) so they outlive the first write.
 * On error nothing is left open. */
static int begin_on_entry(struct lfe_store *st, const char *dn, size_t len, char *ndn,
			  MDB_txn **txn, MDB_val *k, MDB_val *old)
{
	if (st->rdonly)
		return -EROFS;
	if (!st->ready)
		return -ENOENT;
	ssize_t nl = normalize_dn(st, (const uint8_t *)dn, len, ndn, LFE_DN_MAX + 1);
	if (nl < 0)
		return (int)nl;
	int rc = lfe_store_wtxn_begin(st, txn);
	if (rc < 0)
		return rc;
	*k = mval(ndn, (size_t)nl);
	rc = map_err(mdb_get(*txn, st->dbi[DB_ENTRIES], k, old));
	if (rc == 0)
		rc = save_old(st, old);
	if (rc < 0)
		return lfe_store_wtxn_end(st, *txn, rc, false);
	return 0;
}

int lfe_store_del(struct lfe_store *st, const char *dn, size_t len)
{
	char ndn[LFE_DN_MAX + 1];
	MDB_val k, old;
	MDB_txn *txn;
	int rc;

	rc = begin_on_entry(st, dn, len, ndn, &txn, &k, &old);
	if (rc < 0)
		return rc;
	rc = map_err(mdb_del(txn, st->dbi[DB_ENTRIES], &k, NULL));
	if (rc == 0)
		rc = unindex_record(st, txn, old.mv_size, &k);
	if (rc == 0 && st->bix)
		rc = lfe_store_bix_del(st, txn, k.mv_data, k.mv_size);
	if (rc == 0)
		st->delta--;
	return lfe_store_wtxn_end(st, txn, rc, true);
}

/* The password policy of the record saved in st->scratch (len bytes), read
 * in txn as the bind reads it (store_bind.c's pp_verdict): 1 when one
 * applies or the record has a pwdChangedTime, with *must_change the
 * policy's pwdMustChange; 0 when none. */
static int pw_policy(struct lfe_store *st, MDB_txn *txn, size_t len, bool *must_change)
{
	struct lfe_pp_acct a;
	struct lfe_pp_policy pol;
	char nd[LFE_DN_MAX + 1];
	size_t pl;
	MDB_val pk, pv;

	*must_change = false;
	(void)lfe_pp_acct_read(st->scratch, len, &a);
	const char *pdn = lfe_store_pp_dn(st, &a, nd, &pl);
	if (pl) {
		pk = mval(pdn, pl);
		if (mdb_get(txn, st->dbi[DB_ENTRIES], &pk, &pv) == 0) {
			/* A policy that does not parse still applies: its binds
			 * are refused anyway (fail closed). */
			if (lfe_pp_policy_read(pv.mv_data, pv.mv_size, &pol) == 0)
				*must_change = pol.must_change;
			return 1;
		}
	}
	return a.changed_set;
}

int lfe_store_set_password(struct lfe_store *st, const char *dn, size_t len,
			   const char *hashed, size_t hashed_len, int64_t now)
{
#define T(s) { (const uint8_t *)s, sizeof(s) - 1 }
	static const struct lfe_bytes v_true = T("TRUE");
	struct lfe_bytes val = { (const uint8_t *)hashed, hashed_len };
	char ts[16];
	struct lfe_bytes v_ts = { (const uint8_t *)ts, 15 };
	struct lfe_ldap_attr repl[] = {
		{ T("userPassword"), 1, &val },
		{ T("modifyTimestamp"), 1, &v_ts },
		{ T("pwdChangedTime"), 1, &v_ts },
		{ T("pwdGraceUseTime"), 0, NULL },
		{ T("pwdReset"), 0, NULL },
	};
#undef T
	char ndn[LFE_DN_MAX + 1];
	MDB_val k, old, v;
	MDB_txn *txn;
	ssize_t size;
	struct tm tm;
	time_t t = (time_t)now;
	bool must_change;
	int rc;

	if (st->rdonly)
		return -EROFS;
	if (!st->ready)
		return -ENOENT;
	if (hashed_len == 0 || now < 0 || now > 253402300799 || !gmtime_r(&t, &tm) ||
	    strftime(ts, sizeof(ts), "%Y%m%d%H%M%SZ", &tm) != 15)
		return -EINVAL;
	rc = begin_on_entry(st, dn, len, ndn, &txn, &k, &old);
	if (rc < 0)
		return rc;
	size_t n_repl = 2;
	if (pw_policy(st, txn, old.mv_size, &must_change)) {
		if (must_change)
			repl[4] = (struct lfe_ldap_attr){ repl[4].type, 1, &v_true };
		n_repl = 5;
	}
	size = lfe_record_replace_size(st->scratch, old.mv_size, repl, n_repl);
	if (size < 0)
		return lfe_store_wtxn_end(st, txn, (int)size, false);
	v = mval(NULL, (size_t)size);
	rc = map_err(mdb_put(txn, st->dbi[DB_ENTRIES], &k, &v, MDB_RESERVE));
	if (rc == 0)
		lfe_record_replace_write(st->scratch, old.mv_size, repl, n_repl, v.mv_data, v.mv_size);
	if (rc == 0 && st->bix)
		rc = lfe_store_bix_put(st, txn, k.mv_data, k.mv_size, v.mv_data, v.mv_size);
	/* modifyTimestamp (or any replaced type) may be indexed. */
	if (rc == 0)
		rc = unindex_record(st, txn, old.mv_size, &k);
	if (rc == 0)
		rc = lfe_store_index_record(st, txn, v.mv_data, v.mv_size, &k, ~(uint64_t)0, ~0u, true);
	return lfe_store_wtxn_end(st, txn, rc, true);
}

int lfe_store_batch_begin(struct lfe_store *st)
{
	MDB_txn *txn;
	int rc;

	if (st->batch)
		return -EBUSY;
	rc = lfe_store_wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	for (unsigned db = 0; db <= N_IDX; db++) {
		MDB_cursor *c;
		MDB_val k, d;

		st->max_ok[db] = false;
		if (db < N_IDX && db >= st->n_idx)
			continue;
		if (mdb_cursor_open(txn, st->dbi[db == N_IDX ? DB_ENTRIES : db], &c) != 0)
			continue;
		rc = mdb_cursor_get(c, &k, &d, MDB_LAST);
		if (rc == 0)
			lfe_store_set_max(st, db, &k);
		else if (rc == MDB_NOTFOUND)
			lfe_store_set_max(st, db, &(MDB_val){ 0, NULL });
		mdb_cursor_close(c);
	}
	/* One fsync at commit instead of LMDB's data+meta syncs. */
	mdb_env_set_flags(st->env, MDB_NOSYNC, 1);
	st->batch = txn;
	st->batch_err = 0;
	return 0;
}

int lfe_store_batch_commit(struct lfe_store *st)
{
	MDB_txn *txn = st->batch;
	int rc;

	if (!txn)
		return -EINVAL;
	st->batch = NULL;
	rc = st->batch_err;
	if (rc == 0)
		rc = flush_count(st, txn);
	if (rc < 0) {
		mdb_txn_abort(txn);
	} else {
		rc = map_err(mdb_txn_commit(txn));
		if (rc == 0)
			rc = map_err(mdb_env_sync(st->env, 1));
	}
	mdb_env_set_flags(st->env, MDB_NOSYNC, 0);
	st->delta = 0;
	st->batch_err = 0;
	return rc;
}

void lfe_store_batch_abort(struct lfe_store *st)
{
	if (!st->batch)
		return;
	mdb_txn_abort(st->batch);
	mdb_env_set_flags(st->env, MDB_NOSYNC, 0);
	st->batch = NULL;
	st->batch_err = 0;
	st->delta = 0;
}
