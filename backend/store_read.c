/* backend/store_read.c — readers of the LMDB store: snapshots, entry
 * lookups and views, index lookups, the walk over "entries" (store_int.h).
 *
 * Readers and renewal. Each worker keeps one read transaction open and calls
 * lfe_store_reader_renew() every 1–5 ms of its poll loop (not per request:
 * a reset+renew costs a few hundred ns, a lookup less). Two things depend on
 * that cadence:
 *   - visibility: a read txn is a snapshot; a password set by ldapfectl is
 *     seen only after the next renew, so the cadence bounds how long an old
 *     password keeps working (the concurrency test checks < 10 ms);
 *   - page reclamation: LMDB cannot reuse pages freed after the oldest live
 *     snapshot. A reader that never renews pins every page the writer frees,
 *     and an import or a stream of password changes then grows the file
 *     until MDB_MAP_FULL. Renewing every few ms keeps the pinned set to the
 *     few transactions committed in that window.
 * An idle worker should still renew on that timer (or reset and renew only
 * when work arrives) so it does not pin old pages while idle.
 */
#include "backend/store.h"

#include <errno.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>

#include "backend/store_int.h"
#include "backend/record.h"

/* ---- reader ---- */

struct lfe_store_reader *lfe_store_reader_new(struct lfe_store *st)
{
	struct lfe_store_reader *r;

	if (!st->ready)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->st = st;
	if (mdb_txn_begin(st->env, NULL, MDB_RDONLY, &r->txn) != 0) {
		free(r);
		return NULL;
	}
	for (unsigned i = 0; i < st->n_idx; i++) {
		if (mdb_cursor_open(r->txn, st->dbi[i], &r->cur[i]) != 0) {
			lfe_store_reader_free(r);
			return NULL;
		}
	}
	r->cur_live = ~(uint64_t)0;
	if (mdb_cursor_open(r->txn, st->dbi[DB_ENTRIES], &r->ecur) != 0 ||
	    (st->bix && st->fmt >= LFE_STORE_FORMAT_VERSION &&
	     mdb_cursor_open(r->txn, st->dbi[DB_BIND], &r->bcur) != 0)) {
		lfe_store_reader_free(r);
		return NULL;
	}
	if (r->bcur)
		lfe_store_bix_hints_new(r);   /* none on failure: binds only go slower */
	r->live = true;
	return r;
}

void lfe_store_reader_free(struct lfe_store_reader *r)
{
	if (!r)
		return;
	/* Read-only cursors outlive their txn and must be closed explicitly. */
	for (int i = 0; i < N_IDX; i++)
		if (r->cur[i])
			mdb_cursor_close(r->cur[i]);
	if (r->ecur)
		mdb_cursor_close(r->ecur);
	if (r->bcur)
		mdb_cursor_close(r->bcur);
	if (r->txn)
		mdb_txn_abort(r->txn);
	free(r->hint);
	free(r);
}

int lfe_store_reader_renew(struct lfe_store_reader *r)
{
	int rc;

	r->live = false;
	mdb_txn_reset(r->txn);
	rc = mdb_txn_renew(r->txn);
	if (rc != 0)
		return map_err(rc);
	r->cur_live = 0;   /* index cursors are renewed when a search uses them */
	rc = mdb_cursor_renew(r->txn, r->ecur);
	if (rc == 0 && r->bcur)
		rc = mdb_cursor_renew(r->txn, r->bcur);
	if (rc != 0)
		return map_err(rc);
	r->live = true;
	return 0;
}

uint64_t lfe_store_reader_txnid(const struct lfe_store_reader *r)
{
	return r->live ? mdb_txn_id(r->txn) : 0;
}

const struct lfe_store_reader_stats *lfe_store_reader_stats(const struct lfe_store_reader *r)
{
	return &r->stats;
}

static int get_in(MDB_txn *txn, struct lfe_store *st, const char *ndn, size_t ndn_len,
		  struct lfe_entry_view *e)
{
	MDB_val k, v;
	uint32_t n_attrs;
	size_t body;
	int rc;

	if (ndn_len == 0 || ndn_len > st->maxkey)
		return -ENOENT;
	k = mval(ndn, ndn_len);
	rc = map_err(mdb_get(txn, st->dbi[DB_ENTRIES], &k, &v));
	if (rc < 0)
		return rc;
	rc = lfe_record_validate(v.mv_data, v.mv_size);
	if (rc < 0)
		return rc;
	lfe_record_header(v.mv_data, v.mv_size, &e->dn, &n_attrs, &body);
	e->n_attrs = n_attrs;
	e->rec = v.mv_data;
	e->rec_len = v.mv_size;
	return 0;
}

int lfe_store_get(struct lfe_store_reader *r, const char *ndn, size_t ndn_len,
		  struct lfe_entry_view *e)
{
	return get_in(r->txn, r->st, ndn, ndn_len, e);
}

int lfe_entry_next_attr(const struct lfe_entry_view *e, size_t *cursor,
			struct lfe_ldap_attr *a, struct lfe_bytes *vals, uint32_t cap)
{
	struct lfe_bytes list, v;
	uint32_t n_vals, i = 0;
	int rc;

	if (*cursor == 0) {
		struct lfe_bytes dn;
		uint32_t n;

		rc = lfe_record_header(e->rec, e->rec_len, &dn, &n, cursor);
		if (rc < 0)
			return rc;
	}
	rc = lfe_record_next_attr(e->rec, e->rec_len, cursor, &a->type, &n_vals, &list);
	if (rc <= 0)
		return rc;
	while (i < cap && (rc = lfe_record_next_val(&list, &v)) == 1)
		vals[i++] = v;
	if (rc < 0 || (i < cap && i != n_vals))
		return -EBADMSG;
	a->n_vals = n_vals;
	a->vals = vals;
	return 1;
}

uint32_t lfe_entry_get_from(const struct lfe_entry_view *e, const char *type, size_t type_len,
			    uint32_t first, struct lfe_bytes *vals, uint32_t cap)
{
	struct lfe_bytes list, v;
	uint32_t n_vals, i = 0;

	if (lfe_record_find_attr(e->rec, e->rec_len, type, type_len, &n_vals, &list) != 1)
		return 0;
	for (uint32_t k = 0; k < first && lfe_record_next_val(&list, &v) == 1; k++)
		;
	while (i < cap && lfe_record_next_val(&list, &v) == 1)
		vals[i++] = v;
	return n_vals;
}

static int src_next_attr(const struct lfe_ldap_entry *e, size_t *cursor, struct lfe_bytes *type,
			 uint32_t *n_vals, struct lfe_bytes *list)
{
	const struct lfe_entry_view *ev = e->ctx;

	if (*cursor == 0) {
		struct lfe_bytes dn;
		uint32_t n;
		int rc = lfe_record_header(ev->rec, ev->rec_len, &dn, &n, cursor);
		if (rc < 0)
			return rc;
	}
	return lfe_record_next_attr(ev->rec, ev->rec_len, cursor, type, n_vals, list);
}

static int src_next_val(const struct lfe_ldap_entry *e, struct lfe_bytes *list,
			struct lfe_bytes *val)
{
	(void)e;
	return lfe_record_next_val(list, val);
}

void lfe_entry_source(const struct lfe_entry_view *ev, struct lfe_ldap_entry *e)
{
	*e = (struct lfe_ldap_entry){ .dn = ev->dn, .ctx = ev, .next_attr = src_next_attr,
				      .next_val = src_next_val };
}

uint32_t lfe_entry_get(const struct lfe_entry_view *e, const char *type, size_t type_len,
		       struct lfe_bytes *vals, uint32_t cap)
{
	return lfe_entry_get_from(e, type, type_len, 0, vals, cap);
}

/* The index slot of attr on this reader if it keeps kind, its cursor
 * renewed in the current txn, or IDX_NONE. A slot whose index (or kind)
 * was dropped since the store was opened (ldapfectl index del: no longer
 * in meta "index") is refused, never read as empty: checked once per
 * snapshot. */
static unsigned reader_idx(struct lfe_store_reader *r, const char *attr, unsigned kind)
{
	const struct lfe_store *st = r->st;
	unsigned idx = lfe_store_idx_of_type(st, (const uint8_t *)attr, strlen(attr));

	if (idx == IDX_NONE || !r->live || !(st->idx_kind[idx] & kind))
		return IDX_NONE;
	uint64_t id = mdb_txn_id(r->txn);
	if (r->idx_txn != id) {
		MDB_val v;
		r->idx_ok = 0;
		memset(r->idx_live, 0, sizeof(r->idx_live));
		if (st->fmt < 3) {
			r->idx_ok = ~(uint64_t)0;
			memcpy(r->idx_live, st->idx_kind, sizeof(r->idx_live));
		} else if (lfe_store_meta_get(r->txn, (struct lfe_store *)st, META_INDEX, &v) == 0) {
			for (unsigned i = 0; i < st->n_idx; i++) {
				size_t nl = strlen(st->idx_name[i]), l, el;
				const char *p = v.mv_data, *end = p + v.mv_size;
				while (p < end) {
					const char *c = memchr(p, ',', (size_t)(end - p));
					el = c ? (size_t)(c - p) : (size_t)(end - p);
					unsigned k = lfe_store_index_entry_kinds(p, el, &l);
					/* The kinds still declared that this
					 * store reads it for. */
					if (l == nl && memcmp(p, st->idx_name[i], nl) == 0) {
						r->idx_live[i] = (uint8_t)(k & st->idx_kind[i]);
						if (r->idx_live[i])
							r->idx_ok |= 1ull << i;
						break;
					}
					p += el + 1;
				}
			}
		}
		r->idx_txn = id;
	}
	if (!(r->idx_ok & (1ull << idx)) || !(r->idx_live[idx] & kind))
		return IDX_NONE;
	if (!(r->cur_live & (1ull << idx))) {
		if (mdb_cursor_renew(r->txn, r->cur[idx]) != 0)
			return IDX_NONE;
		r->cur_live |= 1ull << idx;
	}
	return idx;
}

static int count_at(struct lfe_store_reader *r, unsigned idx, const uint8_t *key, size_t kl,
		    uint64_t *count)
{
	MDB_val k = mval(key, kl), d;
	size_t n;
	int rc = mdb_cursor_get(r->cur[idx], &k, &d, MDB_SET_KEY);

	if (rc == MDB_NOTFOUND) {
		*count = 0;
		return 0;
	}
	if (rc == 0)
		rc = mdb_cursor_count(r->cur[idx], &n);
	if (rc != 0)
		return map_err(rc);
	*count = n;
	return 0;
}

static int each_at(struct lfe_store_reader *r, unsigned idx, const uint8_t *key, size_t kl,
		   const char *after, size_t after_len,
		   int (*fn)(void *ctx, const char *ndn, size_t ndn_len), void *ctx)
{
	MDB_val k = mval(key, kl), d;
	int rc;

	if (after_len == 0) {
		rc = mdb_cursor_get(r->cur[idx], &k, &d, MDB_SET_KEY);
	} else {
		/* The first DN at or after `after` in the dup order; `after`
		 * itself was finished. */
		d = mval(after, after_len);
		rc = mdb_cursor_get(r->cur[idx], &k, &d, MDB_GET_BOTH_RANGE);
		if (rc == 0 && d.mv_size == after_len && memcmp(d.mv_data, after, after_len) == 0)
			rc = mdb_cursor_get(r->cur[idx], &k, &d, MDB_NEXT_DUP);
	}
	while (rc == 0) {
		int stop = fn(ctx, d.mv_data, d.mv_size);

		if (stop)
			return stop;
		rc = mdb_cursor_get(r->cur[idx], &k, &d, MDB_NEXT_DUP);
	}
	return rc == MDB_NOTFOUND ? 0 : map_err(rc);
}

/* The equality index slot of attr on this reader (IDX_NONE: none) and
 * value's key in it. */
#define EQ_KEY_MAX 512u
static unsigned eq_key(struct lfe_store_reader *r, const char *attr, const uint8_t *value,
		       size_t len, uint8_t key[EQ_KEY_MAX], size_t *kl)
{
	unsigned idx = reader_idx(r, attr, LFE_INDEX_EQ);

	if (idx != IDX_NONE)
		*kl = (size_t)lfe_store_index_key(r->st, idx, value, len, key,
						  r->st->maxkey < EQ_KEY_MAX ? r->st->maxkey : EQ_KEY_MAX);
	return idx;
}

int lfe_store_index_count(struct lfe_store_reader *r, const char *attr, const uint8_t *value,
			  size_t len, uint64_t *count)
{
	uint8_t key[EQ_KEY_MAX];
	size_t kl;
	unsigned idx = eq_key(r, attr, value, len, key, &kl);

	return idx == IDX_NONE ? -ENOTSUP : count_at(r, idx, key, kl, count);
}

int lfe_store_index_each_after(struct lfe_store_reader *r, const char *attr,
			       const uint8_t *value, size_t len, const char *after,
			       size_t after_len,
			       int (*fn)(void *ctx, const char *ndn, size_t ndn_len), void *ctx)
{
	uint8_t key[EQ_KEY_MAX];
	size_t kl;
	unsigned idx = eq_key(r, attr, value, len, key, &kl);

	return idx == IDX_NONE ? -ENOTSUP : each_at(r, idx, key, kl, after, after_len, fn, ctx);
}

int lfe_store_index_count_key(struct lfe_store_reader *r, const char *attr, unsigned kind,
			      const uint8_t *key, size_t klen, uint64_t *count)
{
	unsigned idx = reader_idx(r, attr, kind);

	if (idx == IDX_NONE)
		return -ENOTSUP;
	if (klen == 0 || klen > r->st->maxkey)
		return -EINVAL;
	return count_at(r, idx, key, klen, count);
}

int lfe_store_index_each_key_after(struct lfe_store_reader *r, const char *attr,
				   unsigned kind, const uint8_t *key, size_t klen,
				   const char *after, size_t after_len,
				   int (*fn)(void *ctx, const char *ndn, size_t ndn_len),
				   void *ctx)
{
	unsigned idx = reader_idx(r, attr, kind);

	if (idx == IDX_NONE)
		return -ENOTSUP;
	if (klen == 0 || klen > r->st->maxkey)
		return -EINVAL;
	return each_at(r, idx, key, klen, after, after_len, fn, ctx);
}

/* At most this many windows of one piece are counted (one lookup each). */
#define SUB_PICK_MAX 16u

int lfe_store_index_sub_pick(struct lfe_store_reader *r, const char *attr, int where,
			     const uint8_t *piece, size_t len, uint8_t *key, size_t *klen,
			     uint64_t *count)
{
	unsigned idx = reader_idx(r, attr, LFE_INDEX_SUB);
	struct subnorm x;
	uint8_t k[SUB_KEY_MAX], prev[SUB_LEN];
	unsigned tried = 0;
	bool found = false;
	int rc;

	if (idx == IDX_NONE)
		return -ENOTSUP;
	/* The piece normalized as the value is, trimmed at both ends: what
	 * remains is a substring (prefix, suffix) of any matching value's
	 * normalized form. */
	x = (struct subnorm){ .fold = r->st->idx_rule[idx] == LFE_MR_CASE_IGNORE };
#define SUB_TRY(kp, kl_)                                                        \
	do {                                                                    \
		uint64_t c_;                                                    \
		rc = count_at(r, idx, (kp), (kl_), &c_);                        \
		if (rc < 0)                                                     \
			return rc;                                              \
		if (!found || c_ < *count) {                                    \
			memcpy(key, (kp), (kl_));                               \
			*klen = (kl_);                                          \
			*count = c_;                                            \
			found = true;                                           \
		}                                                               \
	} while (0)
	for (size_t i = 0; i < len && tried < SUB_PICK_MAX; i++) {
		memcpy(prev, x.win, SUB_LEN);
		int full = lfe_store_subnorm_feed(&x, piece[i]);
		if (full == 2) {
			uint8_t w[SUB_LEN];
			memcpy(w, prev + 1, SUB_LEN - 1);
			w[SUB_LEN - 1] = ' ';
			lfe_store_sub_key(k, 'A', w, SUB_LEN);
			SUB_TRY(k, SUB_KEY_MAX);
			tried++;
		}
		if (full >= 1) {
			lfe_store_sub_key(k, 'A', x.win, SUB_LEN);
			SUB_TRY(k, SUB_KEY_MAX);
			tried++;
		}
	}
	size_t m = x.n < SUB_LEN ? x.n : SUB_LEN;
	if (m > 0 && where == LFE_SUB_INITIAL) {
		lfe_store_sub_key(k, 'I', x.head, m);
		SUB_TRY(k, 3 + m);
	}
	/* The last window is known only when the whole piece was read. */
	if (m > 0 && where == LFE_SUB_FINAL && tried < SUB_PICK_MAX) {
		lfe_store_sub_key(k, 'F', x.win + SUB_LEN - m, m);
		SUB_TRY(k, 3 + m);
	}
#undef SUB_TRY
	return found ? 0 : 1;
}

int lfe_store_index_each(struct lfe_store_reader *r, const char *attr,
			 const uint8_t *value, size_t len,
			 int (*fn)(void *ctx, const char *ndn, size_t ndn_len), void *ctx)
{
	return lfe_store_index_each_after(r, attr, value, len, NULL, 0, fn, ctx);
}

/* The one walk over a database (store_int.h): "entries" for
 * lfe_store_each and lfe_store_reader_each, the bind index's and the
 * declared indexes' builds. */
int lfe_store_walk(MDB_txn *txn, MDB_dbi dbi, lfe_store_each_fn fn, void *ctx)
{
	MDB_cursor *c;
	MDB_val k, v;
	int rc = map_err(mdb_cursor_open(txn, dbi, &c));

	if (rc == 0) {
		int mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST);

		while (mrc == 0 && (rc = fn(ctx, k.mv_data, k.mv_size, v.mv_data, v.mv_size)) == 0)
			mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
		if (rc == 0 && mrc != MDB_NOTFOUND)
			rc = map_err(mrc);
		mdb_cursor_close(c);
	}
	return rc;
}

int lfe_store_reader_each(struct lfe_store_reader *r, lfe_store_each_fn fn, void *ctx)
{
	return lfe_store_walk(r->txn, r->st->dbi[DB_ENTRIES], fn, ctx);
}
