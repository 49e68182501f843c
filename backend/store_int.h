/* backend/store_int.h — what the parts of the LMDB store share (internal:
 * only backend/store*.c include it; the interface is store.h, the record
 * format record.h).
 *
 *   store.c        open, meta, init, close, format upgrade, settings, info
 *   store_read.c   readers: snapshots, entry lookups and views, index
 *                  lookups, the walk over "entries"
 *   store_bind.c   the bind index and the bind lookup (lfe_store_verify_bind)
 *   store_write.c  the writer: transactions, batches, put, del,
 *                  set_password, and the index entries each one changes
 *   store_index.c  the declared indexes: meta "index", index keys, add,
 *                  drop, list, fill
 *   store_sync.c   directory sync state (cookie, "sync/" keys), each, clear
 *
 * Threads: readers as store.h says; the writer calls on one lfe_store come
 * from one thread at a time (LMDB also serialises writers across processes).
 * A reader whose renew returns -ESTALE saw the writer grow the map beyond
 * its own map size: close and reopen the store.
 *
 * Deliberate limits: normalized DNs and index keys must fit LMDB's key size
 * (511 bytes in Debian's build); an entry with a longer uid/mail/cn/
 * objectClass value is refused (-EINVAL) rather than left unindexed, so an
 * index lookup never misses an entry that exists. Index values are folded
 * with ASCII rules only. At most LFE_STORE_MAX_ATTRS attributes per entry,
 * each type at most once.
 */
#ifndef LFE_BACKEND_STORE_INT_H
#define LFE_BACKEND_STORE_INT_H

#include <errno.h>
#include <lmdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/bindjob.h"
#include "backend/ppolicy.h"
#include "backend/store.h"
#include "ldap/dn.h"

#define LFE_STORE_SCHEME_MAX    32u

/* Slots 0..N_IDX-1 are the indexes the store declares (meta "index",
 * format 3, each with its kinds; formats 1 and 2 have the four equality
 * indexes of LEGACY_INDEXES), in databases "idx.<canonical name>". */
enum { N_IDX = LFE_STORE_MAX_INDEX, IDX_NONE = N_IDX };
enum { DB_ENTRIES = N_IDX, DB_META, DB_BIND, N_DB };

#define DB_NAME(i) ((i) == DB_ENTRIES ? "entries" : (i) == DB_META ? "meta" : "bind")

#define META_FORMAT      "format"
#define META_SUFFIX      "suffix"
#define META_SUFFIX_ORIG "suffix.orig"
#define META_ENTRIES     "entries"
#define META_COOKIE      "sync.cookie"
#define META_PWDEFAULT   "pw.default"
#define META_BINDKEY     "bind.key"     /* format 2: the bind index's SipHash key */
#define META_INDEX       "index"        /* format 3: the indexed types, ',' between */
#define META_IDXKEY      "index.key"    /* format 3: SipHash key of long index values */
#define META_PPDEFAULT   "ppolicy.default" /* the default policy entry's normalized DN */

struct lfe_store {
	MDB_env *env;
	MDB_dbi dbi[N_DB];
	bool rdonly;
	bool ready;                 /* initialised: dbi[] valid, suffix known */
	size_t maxkey;
	MDB_txn *batch;             /* open batch transaction, or NULL */
	int batch_err;              /* sticky error that poisoned the batch */
	/* Batch only: the greatest key of entries and of each index, so keys
	 * that arrive in order (a sorted import) go in with MDB_APPEND. */
	bool max_ok[N_IDX + 1];
	uint16_t max_len[N_IDX + 1];
	uint8_t max_key[N_IDX + 1][512];
	int64_t delta;              /* entry count change of the open write txn */
	uint8_t *scratch;           /* writer: copy of the record being changed */
	size_t scratch_cap;
	size_t suffix_len;
	char suffix[LFE_DN_MAX];
	char suffix_orig[LFE_DN_MAX];
	char pw_default[LFE_STORE_SCHEME_MAX];
	/* What an unknown DN is verified against (lfe_store_set_bind_scheme):
	 * a value of the bind scheme hashed with its default cost parameters
	 * when this build can hash it, else the bare "{SCHEME}". */
	struct lfe_bind_job dummy;
	bool dummy_slow;
	uint32_t fmt;               /* format version of the store (1 to 3) */
	/* The declared indexes: slot i is "idx.<idx_name[i]>", values keyed by
	 * the type's matching rule (lfe_store_index_key). */
	unsigned n_idx;
	char idx_name[N_IDX][LFE_STORE_INDEX_NAME_MAX];
	uint8_t idx_rule[N_IDX];
	uint8_t idx_kind[N_IDX];    /* LFE_INDEX_EQ|PRES|SUB the slot keeps */
	char idx_list[N_IDX * (LFE_STORE_INDEX_NAME_MAX + 4)];   /* meta "index" as loaded */
	uint64_t idx_key[2];        /* format 3: hash key of long values */
	/* The default password policy entry (meta "ppolicy.default"),
	 * normalized; 0: none. */
	size_t pp_default_len;
	char pp_default[LFE_DN_MAX + 1];
	/* Format 2: the bind index "bind" (store_bind.c, "bind index") exists and
	 * every writer keeps it; its key is the store's, in meta. */
	bool bix;
	uint64_t bix_key[2];
	uint8_t *bix_buf;           /* writer: the index value being built */
	size_t bix_cap;
	/* A typical user record whose userPassword is the dummy value (fast
	 * schemes with a full value only): an unknown DN walks it exactly as a
	 * wrong password walks the real record, so the two cost the same. */
	size_t dummy_rec_len;           /* 0: none, use lfe_bind_job_run */
	uint8_t dummy_rec[1536];
};

struct lfe_store_reader {
	struct lfe_store *st;
	MDB_txn *txn;
	MDB_cursor *cur[N_IDX];
	uint64_t cur_live;          /* bit i: cur[i] renewed in this txn */
	uint64_t idx_txn;           /* txn whose meta "index" idx_ok reflects */
	uint64_t idx_ok;            /* bit i: slot i is still declared */
	uint8_t idx_live[N_IDX];    /* slot i's kinds still declared (and known here) */
	MDB_cursor *ecur;           /* on "entries": the bind lookup */
	MDB_cursor *bcur;           /* on "bind" (format 3), else NULL */
	struct lfe_pp_verdict pp;   /* of the last bind (lfe_store_reader_ppolicy) */
	bool pp_timed;
	bool pp_maybe;              /* the record may keep policy attributes */
	bool live;                  /* txn is a snapshot (its last renew worked) */
	struct lfe_store_reader_stats stats;
	/* Leaf hints of the bind index (store_bind.c, "Leaf hints"): for each
	 * range of hashes, the page its last lookup landed in (0: none yet). */
	uint32_t *hint;
	unsigned hint_shift;        /* bucket = hash >> hint_shift */
	uintptr_t hint_base;        /* a page of the map; 0 until the first hint */
	size_t psize;               /* the map's page size */
};

#define SUB_LEN 3u
#define SUB_KEY_MAX (2u + 1u + SUB_LEN)
/* Substring keys (store_index.c, lfe_store_sub_key): windows of SUB_LEN
 * characters of a value normalized as its index key is. */
struct subnorm {
	bool fold, space, started;
	size_t n;                   /* characters emitted */
	uint8_t head[SUB_LEN];      /* the first SUB_LEN */
	uint8_t win[SUB_LEN];       /* the last SUB_LEN, oldest first */
};
static inline int map_err(int rc)
{
	switch (rc) {
	case MDB_SUCCESS:        return 0;
	case MDB_NOTFOUND:       return -ENOENT;
	case MDB_KEYEXIST:       return -EEXIST;
	case MDB_MAP_FULL:       return -ENOSPC;
	case MDB_TXN_FULL:       return -ENOSPC;
	case MDB_BAD_VALSIZE:    return -EINVAL;
	case MDB_READERS_FULL:   return -EBUSY;
	case MDB_DBS_FULL:       return -ENOSPC;
	case MDB_VERSION_MISMATCH:
	case MDB_INVALID:        return -EPROTO;
	case MDB_MAP_RESIZED:    return -ESTALE;   /* reopen: the writer grew the map */
	case MDB_CORRUPTED:
	case MDB_PAGE_NOTFOUND:  return -EBADMSG;
	default:                 return rc > 0 ? -rc : -EIO;
	}
}

static inline MDB_val mval(const void *p, size_t len)
{
	return (MDB_val){ .mv_size = len, .mv_data = (void *)p };
}

static inline uint64_t ld_u64(const void *p)
{
	const uint8_t *b = p;
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static inline void st_u64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		b[i] = (uint8_t)v;
}

/* ---- store.c: meta ---- */
int lfe_store_meta_get(MDB_txn *txn, struct lfe_store *st, const char *key, MDB_val *v);
int lfe_store_meta_put(MDB_txn *txn, struct lfe_store *st, const char *key,
		       const void *p, size_t len);
int lfe_store_meta_new_key(MDB_txn *txn, struct lfe_store *st, const char *name, uint64_t key[2]);
/* A write transaction on the last committed snapshot, or -EIO (store.c). */
int lfe_store_write_begin(struct lfe_store *st, MDB_txn **txn);

/* ---- store_read.c ---- */
/* Every key and value of dbi in txn, in key order, through fn (the contract
 * of lfe_store_each_fn: a nonzero return stops the walk and is returned). */
int lfe_store_walk(MDB_txn *txn, MDB_dbi dbi, lfe_store_each_fn fn, void *ctx);

/* ---- store_bind.c: the bind index ---- */
int lfe_store_bix_new_key(struct lfe_store *st, MDB_txn *txn);
void lfe_store_bix_hints_new(struct lfe_store_reader *r);
int lfe_store_bix_put(struct lfe_store *st, MDB_txn *txn, const char *ndn, size_t nl,
		      const uint8_t *rec, size_t len);
int lfe_store_bix_del(struct lfe_store *st, MDB_txn *txn, const char *ndn, size_t nl);

/* ---- store_write.c ---- */
int lfe_store_wtxn_begin(struct lfe_store *st, MDB_txn **txn);
int lfe_store_wtxn_end(struct lfe_store *st, MDB_txn *txn, int rc, bool dirty);
void lfe_store_set_max(struct lfe_store *st, unsigned db, const MDB_val *k);
int lfe_store_index_record(struct lfe_store *st, MDB_txn *txn, const uint8_t *rec, size_t len,
			   MDB_val *ndn, uint64_t mask, unsigned kinds, bool add);

/* ---- store_index.c ---- */
extern const uint8_t lfe_store_ikey_pres[2];
unsigned lfe_store_idx_of_type(const struct lfe_store *st, const uint8_t *type, size_t len);
ssize_t lfe_store_index_key(const struct lfe_store *st, unsigned idx, const uint8_t *v,
			    size_t len, uint8_t *out, size_t cap);
void lfe_store_sub_key(uint8_t *key, char where, const uint8_t *p, size_t l);
int lfe_store_subnorm_feed(struct subnorm *x, uint8_t c);
unsigned lfe_store_index_entry_kinds(const char *e, size_t len, size_t *name_len);
int lfe_store_index_list_format(const struct lfe_store *st, char *out, size_t cap);
int lfe_store_index_list_set(struct lfe_store *st, const char *list, size_t len);
int lfe_store_idx_dbi_open(MDB_txn *txn, struct lfe_store *st, unsigned i, unsigned flags);
int lfe_store_fill_indexes(struct lfe_store *st, MDB_txn *txn, uint64_t mask, unsigned kinds);
/* A write transaction for a change to a whole database (index add and del,
 * upgrade, the bind index build): -EBUSY inside a batch. _end commits, or
 * aborts and leaves the store unusable (its handles may name databases the
 * abort undid). */
int lfe_store_index_txn_begin(struct lfe_store *st, MDB_txn **txn);
int lfe_store_index_txn_end(struct lfe_store *st, MDB_txn *txn, int rc);

/* The DN of the password policy of an account whose record said a: its
 * pwdPolicySubentry normalized into nd (LFE_DN_MAX + 1 bytes), else the
 * store's default; *len 0 when none. NULL (and *len 0) when the
 * subentry does not normalize. */
static inline const char *lfe_store_pp_dn(const struct lfe_store *st, const struct lfe_pp_acct *a,
					  char *nd, size_t *len)
{
	if (a->subentry.len) {
		ssize_t n = lfe_dn_normalize(a->subentry.p, a->subentry.len, nd, LFE_DN_MAX + 1);
		*len = n < 0 ? 0 : (size_t)n;
		return n < 0 ? NULL : nd;
	}
	*len = st->pp_default_len;
	return st->pp_default;
}

#endif
