/* backend/store_sync.c — directory sync state of the LMDB store
 * (ldapfectl sync): the cookie, the consumer's "sync/" keys, the walk over
 * every entry and the clear of a full refresh (store_int.h).
 */
#include "backend/store.h"

#include <errno.h>
#include <lmdb.h>
#include <string.h>

#include "backend/store_int.h"

int lfe_store_sync_cookie_set(struct lfe_store *st, const uint8_t *cookie, size_t len)
{
	MDB_txn *txn;
	int rc;

	if (len > LFE_STORE_COOKIE_MAX)
		return -EINVAL;
	rc = lfe_store_wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = lfe_store_meta_put(txn, st, META_COOKIE, cookie, len);
	return lfe_store_wtxn_end(st, txn, rc, true);
}

ssize_t lfe_store_sync_cookie_get(struct lfe_store *st, uint8_t *out, size_t cap)
{
	MDB_txn *txn;
	MDB_val v;
	ssize_t rc;

	if (!st->ready)
		return -ENOENT;
	rc = map_err(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn));
	if (rc < 0)
		return rc;
	rc = lfe_store_meta_get(txn, st, META_COOKIE, &v);
	if (rc == 0 && v.mv_size > cap)
		rc = -ENOSPC;
	if (rc == 0) {
		if (v.mv_size)
			memcpy(out, v.mv_data, v.mv_size);
		rc = (ssize_t)v.mv_size;
	}
	mdb_txn_abort(txn);
	return rc;
}

/* ---- directory sync (ldapfectl sync): key-value state, walk, clear ---- */

#define SYNC_KV_PREFIX     "sync/"
#define SYNC_KV_PREFIX_LEN 5u

/* meta key "sync/" + key into buf (cap >= SYNC_KV_PREFIX_LEN + LFE_STORE_SYNC_KEY_MAX). */
static int sync_key(const struct lfe_store *st, const void *key, size_t klen, uint8_t *buf,
		    MDB_val *k)
{
	if (klen == 0 || klen > LFE_STORE_SYNC_KEY_MAX || SYNC_KV_PREFIX_LEN + klen > st->maxkey)
		return -EINVAL;
	memcpy(buf, SYNC_KV_PREFIX, SYNC_KV_PREFIX_LEN);
	memcpy(buf + SYNC_KV_PREFIX_LEN, key, klen);
	*k = mval(buf, SYNC_KV_PREFIX_LEN + klen);
	return 0;
}

int lfe_store_sync_put(struct lfe_store *st, const void *key, size_t klen,
		       const void *val, size_t vlen)
{
	uint8_t buf[SYNC_KV_PREFIX_LEN + LFE_STORE_SYNC_KEY_MAX];
	MDB_txn *txn;
	MDB_val k, v = mval(val, vlen);
	int rc = sync_key(st, key, klen, buf, &k);

	if (rc < 0)
		return rc;
	if (vlen > LFE_STORE_SYNC_VAL_MAX)
		return -E2BIG;
	rc = lfe_store_wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = map_err(mdb_put(txn, st->dbi[DB_META], &k, &v, 0));
	return lfe_store_wtxn_end(st, txn, rc, true);
}

int lfe_store_sync_del(struct lfe_store *st, const void *key, size_t klen)
{
	uint8_t buf[SYNC_KV_PREFIX_LEN + LFE_STORE_SYNC_KEY_MAX];
	MDB_txn *txn;
	MDB_val k;
	int rc = sync_key(st, key, klen, buf, &k);

	if (rc < 0)
		return rc;
	rc = lfe_store_wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = map_err(mdb_del(txn, st->dbi[DB_META], &k, NULL));
	return lfe_store_wtxn_end(st, txn, rc, rc != -ENOENT);
}

/* A read view for the sync calls: the open batch (its own changes are
 * visible), else a fresh read transaction (*own set: abort it after). */
static int sync_view(struct lfe_store *st, MDB_txn **txn, bool *own)
{
	if (!st->ready)
		return -ENOENT;
	if (st->batch) {
		*own = false;
		*txn = st->batch;
		return st->batch_err;
	}
	*own = true;
	return map_err(mdb_txn_begin(st->env, NULL, MDB_RDONLY, txn));
}

ssize_t lfe_store_sync_get(struct lfe_store *st, const void *key, size_t klen,
			   void *out, size_t cap)
{
	uint8_t buf[SYNC_KV_PREFIX_LEN + LFE_STORE_SYNC_KEY_MAX];
	MDB_txn *txn;
	MDB_val k, v;
	bool own;
	ssize_t rc = sync_key(st, key, klen, buf, &k);

	if (rc < 0)
		return rc;
	rc = sync_view(st, &txn, &own);
	if (rc < 0)
		return rc;
	rc = map_err(mdb_get(txn, st->dbi[DB_META], &k, &v));
	if (rc == 0 && v.mv_size > cap)
		rc = -ENOSPC;
	if (rc == 0) {
		if (v.mv_size)
			memcpy(out, v.mv_data, v.mv_size);
		rc = (ssize_t)v.mv_size;
	}
	if (own)
		mdb_txn_abort(txn);
	return rc;
}

int lfe_store_each(struct lfe_store *st, lfe_store_each_fn fn, void *ctx)
{
	MDB_txn *txn;
	bool own;
	int rc = sync_view(st, &txn, &own);

	if (rc < 0)
		return rc;
	rc = lfe_store_walk(txn, st->dbi[DB_ENTRIES], fn, ctx);
	if (own)
		mdb_txn_abort(txn);
	return rc;
}

int lfe_store_clear(struct lfe_store *st)
{
	static const uint8_t zero[8];
	MDB_cursor *c;
	MDB_val k, v;
	int rc, mrc;

	if (!st->batch)
		return -EINVAL;
	if (st->batch_err)
		return st->batch_err;
	rc = 0;
	for (unsigned db = 0; rc == 0 && db < st->n_idx; db++)
		rc = map_err(mdb_drop(st->batch, st->dbi[db], 0));
	if (rc == 0)
		rc = map_err(mdb_drop(st->batch, st->dbi[DB_ENTRIES], 0));
	if (rc == 0 && st->bix)
		rc = map_err(mdb_drop(st->batch, st->dbi[DB_BIND], 0));
	if (rc == 0)
		rc = lfe_store_meta_put(st->batch, st, META_ENTRIES, zero, sizeof(zero));
	/* The consumer's own state ("sync/…") goes with the entries. */
	if (rc == 0)
		rc = map_err(mdb_cursor_open(st->batch, st->dbi[DB_META], &c));
	if (rc == 0) {
		k = mval(SYNC_KV_PREFIX, SYNC_KV_PREFIX_LEN);
		mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
		while (mrc == 0 && k.mv_size >= SYNC_KV_PREFIX_LEN &&
		       memcmp(k.mv_data, SYNC_KV_PREFIX, SYNC_KV_PREFIX_LEN) == 0) {
			mrc = mdb_cursor_del(c, 0);
			if (mrc == 0)
				mrc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT);
		}
		if (mrc != 0 && mrc != MDB_NOTFOUND && mrc != EINVAL)
			rc = map_err(mrc);
		mdb_cursor_close(c);
	}
	if (rc < 0) {
		st->batch_err = rc;
		return rc;
	}
	st->delta = 0;
	for (unsigned db = 0; db <= N_IDX; db++)
		lfe_store_set_max(st, db, &(MDB_val){ 0, NULL });
	return 0;
}
