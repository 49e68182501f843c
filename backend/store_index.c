/* backend/store_index.c — the declared indexes of the LMDB store (format
 * 3): the list in meta "index", index keys (equality, presence, substring),
 * adding, dropping, listing and filling them (store_int.h). The writer
 * keeps them per entry (store_write.c), readers look them up
 * (store_read.c).
 */
#include "backend/store.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <string.h>

#include "backend/store_int.h"
#include "backend/record.h"
#include "common/siphash.h"

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* type is looked up in the attribute table once, not once per index: an
 * import asks this for every attribute of every entry. */
unsigned lfe_store_idx_of_type(const struct lfe_store *st, const uint8_t *type, size_t len)
{
	struct lfe_attr_key k;

	lfe_attr_key_init(&k, type, len);
	for (unsigned i = 0; i < st->n_idx; i++)
		if (lfe_attr_key_eq(&k, (const uint8_t *)st->idx_name[i], strlen(st->idx_name[i])))
			return i;
	return IDX_NONE;
}

/* Index key of a value under its type's matching rule (lfe_attr_rule, the
 * rule the filter evaluator uses): a DN-valued type's value normalized as a
 * DN when it is one; ASCII case folded for case-ignore types; leading and
 * trailing spaces dropped, inner runs of spaces folded to one (the
 * insignificant-space rule of RFC 4518, ASCII only). Two values the
 * evaluator calls equal always get the same key; a key may be shared by
 * values it calls different (" a" and "a"; a hash collision), which only
 * adds candidates, and the filter is evaluated on every candidate. An
 * empty key is the key "\0"; a key longer than cap is replaced by "\0\0"
 * and the 128-bit SipHash of the whole key under the store's index key
 * (an attacker cannot aim values at one key). Returns the length, >= 1. */
#define KEY_HASHED_LEN 18u
ssize_t lfe_store_index_key(const struct lfe_store *st, unsigned idx, const uint8_t *v,
			    size_t len, uint8_t *out, size_t cap)
{
	char dn[LFE_DN_MAX + 1];
	enum lfe_match_rule rule = (enum lfe_match_rule)st->idx_rule[idx];
	bool fold = rule == LFE_MR_CASE_IGNORE, space = false, hashing = false;
	struct lfe_siphash h;
	size_t i = 0, n = 0;

	if (rule == LFE_MR_DN) {
		ssize_t dl = lfe_dn_normalize(v, len, dn, sizeof(dn));
		if (dl >= 0) {
			v = (const uint8_t *)dn;
			len = (size_t)dl;
		}
	}
	while (i < len && v[i] == ' ')
		i++;
	for (; i < len; i++) {
		if (v[i] == ' ') {
			space = true;
			continue;
		}
		uint8_t c[2];
		size_t m = 0;
		if (space)
			c[m++] = ' ';
		space = false;
		c[m++] = (uint8_t)(fold ? ascii_lower(v[i]) : v[i]);
		if (!hashing && n + m > cap) {
			lfe_siphash_init(&h, st->idx_key, 1);
			lfe_siphash_update(&h, out, n);
			hashing = true;
		}
		if (hashing) {
			lfe_siphash_update(&h, c, m);
		} else {
			memcpy(out + n, c, m);
			n += m;
		}
	}
	/* A key that begins with NUL is "\0" (empty), "\0\0" + hash, or a
	 * presence or substring key (lfe_store_ikey_pres, IKEY_SUB): a value that would
	 * begin so is hashed, so the kinds never share a key. */
	if (!hashing && n > 0 && out[0] == 0) {
		lfe_siphash_init(&h, st->idx_key, 1);
		lfe_siphash_update(&h, out, n);
		hashing = true;
	}
	if (hashing) {
		uint64_t w[2];
		lfe_siphash_final128(&h, w);
		out[0] = out[1] = 0;
		st_u64(out + 2, w[0]);
		st_u64(out + 10, w[1]);
		return KEY_HASHED_LEN;
	}
	if (n == 0)
		out[n++] = 0;
	return (ssize_t)n;
}

/* Substring keys (slapd's subinitial/subany/subfinal): of the value
 * normalized as lfe_store_index_key does (case folded for case-ignore types, spaces
 * trimmed and runs folded; never hashed), IKEY_SUB followed by 'I' and
 * each prefix of 1 to SUB_LEN characters, 'F' and each such suffix, 'A'
 * and every SUB_LEN-character window. A piece of a substring filter that
 * the value contains is, normalized the same way, a substring (prefix,
 * suffix) of the value's normalized form, so its keys are among the
 * value's: the index only narrows, the evaluator decides. */
void lfe_store_sub_key(uint8_t *key, char where, const uint8_t *p, size_t l)
{
	key[0] = 0;
	key[1] = 2;
	key[2] = (uint8_t)where;
	memcpy(key + 3, p, l);
}

/* Feed one byte; 1 when it completed a window (in x->win). */
int lfe_store_subnorm_feed(struct subnorm *x, uint8_t c)
{
	if (c == ' ') {
		x->space = x->started;
		return 0;
	}
	uint8_t o[2];
	size_t m = 0, full = 0;
	if (x->space)
		o[m++] = ' ';
	x->space = false;
	x->started = true;
	o[m++] = (uint8_t)(x->fold ? ascii_lower(c) : c);
	for (size_t i = 0; i < m; i++) {
		if (x->n < SUB_LEN)
			x->head[x->n] = o[i];
		memmove(x->win, x->win + 1, SUB_LEN - 1);
		x->win[SUB_LEN - 1] = o[i];
		x->n++;
		full += x->n >= SUB_LEN;
	}
	return (int)full;
}

const uint8_t lfe_store_ikey_pres[2] = { 0, 1 };

/* The kinds of one entry of meta "index": "name" is an equality index,
 * "name:KINDS" the kinds its letters name (e eq, p pres, s sub, in that
 * order). 0 when malformed; *name_len is the name's length. */
unsigned lfe_store_index_entry_kinds(const char *e, size_t len, size_t *name_len)
{
	const char *c = memchr(e, ':', len);
	static const char letters[] = "eps";
	unsigned k = 0, last = 0;

	if (!c) {
		*name_len = len;
		return LFE_INDEX_EQ;
	}
	*name_len = (size_t)(c - e);
	for (c++; c < e + len; c++) {
		const char *l = memchr(letters, *c, 3);
		unsigned bit = l ? 1u << (l - letters) : 0;
		if (!l || bit <= last)
			return 0;
		k |= bit;
		last = bit;
	}
	return k;
}

/* meta "index" from the table: "name" or "name:KINDS", ',' between. */
int lfe_store_index_list_format(const struct lfe_store *st, char *out, size_t cap)
{
	size_t n = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < st->n_idx; i++) {
		unsigned k = st->idx_kind[i];
		int w = snprintf(out + n, cap - n, "%s%s%s%s%s%s", i ? "," : "", st->idx_name[i],
				 k == LFE_INDEX_EQ ? "" : ":", k != LFE_INDEX_EQ && (k & LFE_INDEX_EQ) ? "e" : "",
				 k != LFE_INDEX_EQ && (k & LFE_INDEX_PRES) ? "p" : "",
				 k != LFE_INDEX_EQ && (k & LFE_INDEX_SUB) ? "s" : "");
		if (w < 0 || (size_t)w >= cap - n)
			return -ENOSPC;
		n += (size_t)w;
	}
	return (int)n;
}

/* Fill the index table from a list "a,b:ps,c" (meta "index"): -EBADMSG
 * when a name is not a canonical type name, repeats, its kinds are not
 * "e", "p", "s" in order, or there are too many. */
int lfe_store_index_list_set(struct lfe_store *st, const char *list, size_t len)
{
	unsigned n = 0;
	size_t i = 0;

	if (len >= sizeof(st->idx_list))
		return -EBADMSG;
	while (i < len) {
		size_t j = i, nl;
		char canon[LFE_STORE_INDEX_NAME_MAX];
		while (j < len && list[j] != ',')
			j++;
		if (n == N_IDX || j - i == 0)
			return -EBADMSG;
		unsigned kinds = lfe_store_index_entry_kinds(list + i, j - i, &nl);
		if (kinds == 0 || nl == 0 || nl >= LFE_STORE_INDEX_NAME_MAX)
			return -EBADMSG;
		ssize_t cl = lfe_attr_canon((const uint8_t *)list + i, nl, canon, sizeof(canon));
		if (cl != (ssize_t)nl || memcmp(canon, list + i, nl) != 0)
			return -EBADMSG;
		for (unsigned k = 0; k < n; k++)
			if (strcmp(st->idx_name[k], canon) == 0)
				return -EBADMSG;
		memcpy(st->idx_name[n], canon, (size_t)cl + 1);
		st->idx_rule[n] = (uint8_t)lfe_attr_rule((const uint8_t *)canon, (size_t)cl);
		st->idx_kind[n] = (uint8_t)kinds;
		n++;
		i = j + 1;
	}
	st->n_idx = n;
	memcpy(st->idx_list, list, len);
	st->idx_list[len] = '\0';
	return 0;
}

int lfe_store_idx_dbi_open(MDB_txn *txn, struct lfe_store *st, unsigned i, unsigned flags)
{
	char name[LFE_STORE_INDEX_NAME_MAX + 8];

	snprintf(name, sizeof(name), "idx.%s", st->idx_name[i]);
	return map_err(mdb_dbi_open(txn, name, MDB_DUPSORT | flags, &st->dbi[i]));
}

size_t lfe_store_index_pres_key(uint8_t *key)
{
	memcpy(key, lfe_store_ikey_pres, sizeof(lfe_store_ikey_pres));
	return sizeof(lfe_store_ikey_pres);
}

/* ---- declared indexes (format 3) ---- */

struct fill {
	struct lfe_store *st;
	MDB_txn *txn;
	uint64_t mask;
	unsigned kinds;
};

static int fill_one(void *ctx, const char *ndn, size_t ndn_len, const uint8_t *rec,
		    size_t rec_len)
{
	const struct fill *f = ctx;
	MDB_val k = mval(ndn, ndn_len);

	return lfe_store_index_record(f->st, f->txn, rec, rec_len, &k, f->mask, f->kinds, true);
}

/* Index every entry's values of the slots in mask (in txn). "entries" is
 * only read here: the walk's values stay valid while the indexes are
 * written. */
int lfe_store_fill_indexes(struct lfe_store *st, MDB_txn *txn, uint64_t mask, unsigned kinds)
{
	struct fill f = { st, txn, mask, kinds };

	return lfe_store_walk(txn, st->dbi[DB_ENTRIES], fill_one, &f);
}

int lfe_store_index_txn_begin(struct lfe_store *st, MDB_txn **txn)
{
	if (st->rdonly)
		return -EROFS;
	if (!st->ready)
		return -ENOENT;
	if (st->batch)
		return -EBUSY;
	return lfe_store_write_begin(st, txn);
}

/* Commit txn, or abort it and leave the store unusable (its handles may
 * name databases the abort undid): the caller reports and exits. */
int lfe_store_index_txn_end(struct lfe_store *st, MDB_txn *txn, int rc)
{
	if (rc == 0)
		rc = map_err(mdb_txn_commit(txn));
	else
		mdb_txn_abort(txn);
	if (rc < 0)
		st->ready = false;
	return rc;
}

/* The kind of an index key (idx_put's keys): lfe_store_index_key never makes a
 * key that begins with NUL other than "\0" and "\0\0" + hash. */
static unsigned key_kind(const MDB_val *k)
{
	const uint8_t *p = k->mv_data;

	if (k->mv_size < 2 || p[0] != 0 || p[1] == 0)
		return LFE_INDEX_EQ;
	return p[1] == 1 ? LFE_INDEX_PRES : LFE_INDEX_SUB;
}

int lfe_store_index_add_kind(struct lfe_store *st, const char *attr, unsigned kinds)
{
	char canon[LFE_STORE_INDEX_NAME_MAX], list[sizeof(st->idx_list)];
	MDB_txn *txn;
	ssize_t cl = lfe_attr_canon((const uint8_t *)attr, strlen(attr), canon, sizeof(canon));
	int rc;

	if (cl <= 0 || lfe_attr_is_secret((const uint8_t *)canon, (size_t)cl) || kinds == 0 ||
	    (kinds & ~LFE_INDEX_ALL))
		return -EINVAL;
	enum lfe_match_rule rule = lfe_attr_rule((const uint8_t *)canon, (size_t)cl);
	/* integerMatch and DN syntax have no substring rule (as in slapd). */
	if ((kinds & LFE_INDEX_SUB) && (rule == LFE_MR_INTEGER || rule == LFE_MR_DN))
		return -EOPNOTSUPP;
	if (st->ready && st->fmt < 3)
		return -EPROTO;
	unsigned i = lfe_store_idx_of_type(st, (const uint8_t *)canon, (size_t)cl);
	bool fresh = i == IDX_NONE;
	if (!fresh && (kinds & ~st->idx_kind[i]) == 0)
		return -EEXIST;
	if (fresh && st->n_idx == N_IDX)
		return -ENOSPC;
	if (fresh) {
		i = st->n_idx;
		memcpy(st->idx_name[i], canon, (size_t)cl + 1);
		st->idx_rule[i] = (uint8_t)rule;
		st->idx_kind[i] = 0;
	}
	unsigned added = kinds & ~st->idx_kind[i], was = st->idx_kind[i];
	st->idx_kind[i] |= (uint8_t)added;
	st->n_idx += fresh;
	int ll = lfe_store_index_list_format(st, list, sizeof(list));
	if (ll < 0 || (rc = lfe_store_index_txn_begin(st, &txn)) < 0) {
		st->idx_kind[i] = (uint8_t)was;
		st->n_idx -= fresh;
		return ll < 0 ? -ENOSPC : rc;
	}
	rc = 0;
	if (fresh) {
		rc = lfe_store_idx_dbi_open(txn, st, i, MDB_CREATE);
		if (rc == 0)
			rc = map_err(mdb_drop(txn, st->dbi[i], 0));
	}
	if (rc == 0)
		rc = lfe_store_fill_indexes(st, txn, 1ull << i, added);
	if (rc == 0)
		rc = lfe_store_meta_put(txn, st, META_INDEX, list, (size_t)ll);
	rc = lfe_store_index_txn_end(st, txn, rc);
	if (rc == 0)
		memcpy(st->idx_list, list, (size_t)ll + 1);
	return rc;
}

int lfe_store_index_add(struct lfe_store *st, const char *attr)
{
	return lfe_store_index_add_kind(st, attr, LFE_INDEX_EQ);
}

/* Delete every key of the given kinds from slot idx (in txn). */
static int drop_kinds(struct lfe_store *st, MDB_txn *txn, unsigned idx, unsigned kinds)
{
	MDB_cursor *c;
	MDB_val k, d;
	int rc = map_err(mdb_cursor_open(txn, st->dbi[idx], &c));

	if (rc < 0)
		return rc;
	int mrc = mdb_cursor_get(c, &k, &d, MDB_FIRST);
	while (mrc == 0 && rc == 0) {
		if (key_kind(&k) & kinds) {
			uint8_t kb[512];
			size_t kl = k.mv_size < sizeof(kb) ? k.mv_size : sizeof(kb);
			memcpy(kb, k.mv_data, kl);
			rc = map_err(mdb_cursor_del(c, MDB_NODUPDATA));
			/* Seek again: the first key after the one deleted. */
			k = mval(kb, kl);
			mrc = rc == 0 ? mdb_cursor_get(c, &k, &d, MDB_SET_RANGE) : 0;
		} else {
			mrc = mdb_cursor_get(c, &k, &d, MDB_NEXT_NODUP);
		}
	}
	if (rc == 0 && mrc != 0 && mrc != MDB_NOTFOUND)
		rc = map_err(mrc);
	mdb_cursor_close(c);
	return rc;
}

int lfe_store_index_del_kind(struct lfe_store *st, const char *attr, unsigned kinds)
{
	char list[sizeof(st->idx_list)];
	MDB_txn *txn;
	unsigned idx = lfe_store_idx_of_type(st, (const uint8_t *)attr, strlen(attr));
	int rc;

	if (st->ready && st->fmt < 3)
		return -EPROTO;
	if (idx == IDX_NONE || !(st->idx_kind[idx] & kinds))
		return -ENOENT;
	unsigned was = st->idx_kind[idx], left = was & ~kinds;
	struct lfe_store keep;
	/* The list without the slot (left == 0) or with its kinds left. */
	memcpy(keep.idx_name, st->idx_name, sizeof(keep.idx_name));
	memcpy(keep.idx_kind, st->idx_kind, sizeof(keep.idx_kind));
	keep.n_idx = 0;
	for (unsigned i = 0; i < st->n_idx; i++) {
		if (i == idx && left == 0)
			continue;
		memcpy(keep.idx_name[keep.n_idx], st->idx_name[i], sizeof(keep.idx_name[0]));
		keep.idx_kind[keep.n_idx++] = (uint8_t)(i == idx ? left : st->idx_kind[i]);
	}
	int ll = lfe_store_index_list_format(&keep, list, sizeof(list));
	if (ll < 0)
		return -ENOSPC;
	rc = lfe_store_index_txn_begin(st, &txn);
	if (rc < 0)
		return rc;
	if (left == 0)
		rc = map_err(mdb_drop(txn, st->dbi[idx], 1));
	else
		rc = drop_kinds(st, txn, idx, was & kinds);
	if (rc == 0)
		rc = lfe_store_meta_put(txn, st, META_INDEX, list, (size_t)ll);
	rc = lfe_store_index_txn_end(st, txn, rc);
	if (rc == 0 && left) {
		st->idx_kind[idx] = (uint8_t)left;
	} else if (rc == 0) {
		for (unsigned i = idx; i + 1 < st->n_idx; i++) {
			memcpy(st->idx_name[i], st->idx_name[i + 1], sizeof(st->idx_name[i]));
			st->idx_rule[i] = st->idx_rule[i + 1];
			st->idx_kind[i] = st->idx_kind[i + 1];
			st->dbi[i] = st->dbi[i + 1];
		}
		st->n_idx--;
	}
	if (rc == 0)
		memcpy(st->idx_list, list, (size_t)ll + 1);
	return rc;
}

int lfe_store_index_del(struct lfe_store *st, const char *attr)
{
	return lfe_store_index_del_kind(st, attr, LFE_INDEX_ALL);
}

int lfe_store_index_list(struct lfe_store *st, struct lfe_store_index *out, unsigned cap)
{
	MDB_txn *txn;
	unsigned n = 0;
	int rc = map_err(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn));

	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < st->n_idx && n < cap; i++, n++) {
		MDB_stat ms;
		memset(&out[n], 0, sizeof(out[n]));
		memcpy(out[n].attr, st->idx_name[i], sizeof(out[n].attr));
		out[n].rule = st->idx_rule[i];
		out[n].kinds = st->idx_kind[i];
		if (mdb_stat(txn, st->dbi[i], &ms) == 0) {
			out[n].keys = ms.ms_entries;
			out[n].bytes = (uint64_t)ms.ms_psize *
				       (ms.ms_branch_pages + ms.ms_leaf_pages + ms.ms_overflow_pages);
		}
	}
	mdb_txn_abort(txn);
	return (int)st->n_idx;
}
