/* backend/store.c — the LMDB directory store (interface in store.h, record
 * format in record.h).
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
#include "backend/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ldap/dn.h"
#include "backend/bindjob.h"
#include "backend/acctlock.h"
#include "backend/ppolicy.h"
#include "backend/pwscheme.h"
#include "backend/record.h"
#include "backend/siphash.h"

#define LFE_STORE_DEFAULT_MAP   (4ull << 30)
#define LFE_STORE_MAX_ATTRS     1024u
#define LFE_STORE_MAX_READERS   512u
#define LFE_STORE_SCHEME_MAX    32u
#define BYTES(lit)              ((struct lfe_bytes){ (const uint8_t *)(lit), sizeof(lit) - 1 })

/* Slots 0..N_IDX-1 are the indexes the store declares (meta "index",
 * format 3, each with its kinds; formats 1 and 2 have the four equality
 * indexes of LEGACY_INDEXES), in databases "idx.<canonical name>". */
enum { N_IDX = LFE_STORE_MAX_INDEX, IDX_NONE = N_IDX };
enum { DB_ENTRIES = N_IDX, DB_META, DB_BIND, N_DB };

static const char *const db_fixed[] = { [DB_ENTRIES - N_IDX] = "entries",
					[DB_META - N_IDX] = "meta", [DB_BIND - N_IDX] = "bind" };
#define DB_NAME(i) db_fixed[(i) - N_IDX]

#define LEGACY_INDEXES "uid,mail,cn,objectclass"
#define DEFAULT_INDEXES \
	"uid,uidnumber,gidnumber,cn,mail,memberuid,member,uniquemember,memberof,objectclass,entryuuid"

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

/* Messages that name both versions must be static (store.h); format
 * versions are small, so a table covers every one we can meet. */
_Static_assert(LFE_STORE_FORMAT_VERSION == 3, "update version_msgs");
#define VMSG(n) "store format version " #n ", this build reads format versions 1 to 3"
static const char *const version_msgs[] = {
	VMSG(0), VMSG(1), VMSG(2), VMSG(3), VMSG(4), VMSG(5), VMSG(6), VMSG(7),
	VMSG(8), VMSG(9), VMSG(10), VMSG(11), VMSG(12), VMSG(13), VMSG(14), VMSG(15),
};
#undef VMSG

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
	 * the type's matching rule (index_key). */
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
	/* Format 2: the bind index "bind" (see "Bind index" below) exists and
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
	/* Leaf hints of the bind index (see "Leaf hints" below): for each
	 * range of hashes, the page its last lookup landed in (0: none yet). */
	uint32_t *hint;
	unsigned hint_shift;        /* bucket = hash >> hint_shift */
	uintptr_t hint_base;        /* a page of the map; 0 until the first hint */
	size_t psize;               /* the map's page size */
};

static int bix_new_key(struct lfe_store *st, MDB_txn *txn);
static int idx_new_key(struct lfe_store *st, MDB_txn *txn);
static void bix_hints_new(struct lfe_store_reader *r);

static int map_err(int rc)
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

static MDB_val mval(const void *p, size_t len)
{
	return (MDB_val){ .mv_size = len, .mv_data = (void *)p };
}

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static void st_u64_fwd(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		b[i] = (uint8_t)v;
}

static unsigned idx_of_type(const struct lfe_store *st, const uint8_t *type, size_t len)
{
	for (unsigned i = 0; i < st->n_idx; i++)
		if (lfe_attr_type_eq(type, len, (const uint8_t *)st->idx_name[i],
				     strlen(st->idx_name[i])))
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
static ssize_t index_key(const struct lfe_store *st, unsigned idx, const uint8_t *v,
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
	 * presence or substring key (IKEY_PRES, IKEY_SUB): a value that would
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
		st_u64_fwd(out + 2, w[0]);
		st_u64_fwd(out + 10, w[1]);
		return KEY_HASHED_LEN;
	}
	if (n == 0)
		out[n++] = 0;
	return (ssize_t)n;
}

/* Substring keys (slapd's subinitial/subany/subfinal): of the value
 * normalized as index_key does (case folded for case-ignore types, spaces
 * trimmed and runs folded; never hashed), IKEY_SUB followed by 'I' and
 * each prefix of 1 to SUB_LEN characters, 'F' and each such suffix, 'A'
 * and every SUB_LEN-character window. A piece of a substring filter that
 * the value contains is, normalized the same way, a substring (prefix,
 * suffix) of the value's normalized form, so its keys are among the
 * value's: the index only narrows, the evaluator decides. */
#define SUB_LEN 3u
#define SUB_KEY_MAX (2u + 1u + SUB_LEN)
struct subnorm {
	bool fold, space, started;
	size_t n;                   /* characters emitted */
	uint8_t head[SUB_LEN];      /* the first SUB_LEN */
	uint8_t win[SUB_LEN];       /* the last SUB_LEN, oldest first */
};

static void sub_key(uint8_t *key, char where, const uint8_t *p, size_t l)
{
	key[0] = 0;
	key[1] = 2;
	key[2] = (uint8_t)where;
	memcpy(key + 3, p, l);
}

/* Feed one byte; 1 when it completed a window (in x->win). */
static int subnorm_feed(struct subnorm *x, uint8_t c)
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

static const uint8_t IKEY_PRES[2] = { 0, 1 };

/* ---- open / init / close ---- */

static int meta_get(MDB_txn *txn, struct lfe_store *st, const char *key, MDB_val *v)
{
	MDB_val k = mval(key, strlen(key));

	return map_err(mdb_get(txn, st->dbi[DB_META], &k, v));
}

static int meta_put(MDB_txn *txn, struct lfe_store *st, const char *key,
		    const void *p, size_t len)
{
	MDB_val k = mval(key, strlen(key)), v = mval(p, len);

	return map_err(mdb_put(txn, st->dbi[DB_META], &k, &v, 0));
}

static uint64_t ld_u64(const void *p)
{
	const uint8_t *b = p;
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static void st_u64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		b[i] = (uint8_t)v;
}

static int copy_str(char *dst, size_t cap, MDB_val v)
{
	if (v.mv_size >= cap)
		return -EBADMSG;
	memcpy(dst, v.mv_data, v.mv_size);
	dst[v.mv_size] = '\0';
	return 0;
}

/* The kinds of one entry of meta "index": "name" is an equality index,
 * "name:KINDS" the kinds its letters name (e eq, p pres, s sub, in that
 * order). 0 when malformed; *name_len is the name's length. */
static unsigned index_entry_kinds(const char *e, size_t len, size_t *name_len)
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
static int format_index_list(const struct lfe_store *st, char *out, size_t cap)
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
static int set_index_list(struct lfe_store *st, const char *list, size_t len)
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
		unsigned kinds = index_entry_kinds(list + i, j - i, &nl);
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

static int idx_dbi_open(MDB_txn *txn, struct lfe_store *st, unsigned i, unsigned flags)
{
	char name[LFE_STORE_INDEX_NAME_MAX + 8];

	snprintf(name, sizeof(name), "idx.%s", st->idx_name[i]);
	return map_err(mdb_dbi_open(txn, name, MDB_DUPSORT | flags, &st->dbi[i]));
}

/* Read meta and open every named DB. -ENOENT when the store has never been
 * initialised. */
static int load_meta(struct lfe_store *st, const char **msg)
{
	MDB_txn *txn;
	MDB_val v;
	uint32_t fmt;
	int rc;

	rc = map_err(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn));
	if (rc < 0) {
		*msg = "cannot begin a read transaction";
		return rc;
	}
	rc = map_err(mdb_dbi_open(txn, DB_NAME(DB_META), 0, &st->dbi[DB_META]));
	if (rc < 0) {
		*msg = rc == -ENOENT ? "store not initialised" : "cannot open the meta database";
		goto out;
	}
	rc = meta_get(txn, st, META_FORMAT, &v);
	if (rc < 0 || v.mv_size != 4) {
		*msg = "store meta has no valid format version";
		rc = rc == -ENOENT || rc == 0 ? -EBADMSG : rc;
		goto out;
	}
	fmt = (uint32_t)((const uint8_t *)v.mv_data)[0] |
	      (uint32_t)((const uint8_t *)v.mv_data)[1] << 8 |
	      (uint32_t)((const uint8_t *)v.mv_data)[2] << 16 |
	      (uint32_t)((const uint8_t *)v.mv_data)[3] << 24;
	if (fmt < 1 || fmt > LFE_STORE_FORMAT_VERSION) {
		*msg = fmt < sizeof(version_msgs) / sizeof(version_msgs[0]) ? version_msgs[fmt] :
		       "store format version above 15, this build reads format versions 1 to 3";
		rc = -EPROTO;
		goto out;
	}
	rc = meta_get(txn, st, META_SUFFIX, &v);
	if (rc == 0)
		rc = copy_str(st->suffix, sizeof(st->suffix), v);
	if (rc == 0) {
		st->suffix_len = v.mv_size;
		rc = meta_get(txn, st, META_SUFFIX_ORIG, &v);
	}
	if (rc == 0)
		rc = copy_str(st->suffix_orig, sizeof(st->suffix_orig), v);
	if (rc < 0) {
		*msg = "store meta has no valid suffix";
		rc = rc == -ENOENT ? -EBADMSG : rc;
		goto out;
	}
	rc = meta_get(txn, st, META_PWDEFAULT, &v);
	if (rc == 0 && copy_str(st->pw_default, sizeof(st->pw_default), v) < 0)
		rc = -EBADMSG;
	if (rc < 0 && rc != -ENOENT) {
		*msg = "store meta has an invalid default password scheme";
		goto out;
	}
	rc = meta_get(txn, st, META_PPDEFAULT, &v);
	if (rc == 0 && copy_str(st->pp_default, sizeof(st->pp_default), v) < 0)
		rc = -EBADMSG;
	if (rc < 0 && rc != -ENOENT) {
		*msg = "store meta has an invalid default password policy DN";
		goto out;
	}
	st->pp_default_len = rc == 0 ? v.mv_size : 0;
	st->fmt = fmt;
	if (fmt >= 3) {
		rc = meta_get(txn, st, META_INDEX, &v);
		if (rc == 0)
			rc = set_index_list(st, v.mv_data, v.mv_size);
		if (rc == 0) {
			rc = meta_get(txn, st, META_IDXKEY, &v);
			if (rc == 0 && v.mv_size != 16)
				rc = -EBADMSG;
		}
		if (rc == 0) {
			st->idx_key[0] = ld_u64(v.mv_data);
			st->idx_key[1] = ld_u64((const uint8_t *)v.mv_data + 8);
		}
	} else {
		rc = set_index_list(st, LEGACY_INDEXES, strlen(LEGACY_INDEXES));
	}
	if (rc < 0) {
		*msg = "store meta has no valid index list or index key";
		rc = rc == -ENOENT ? -EBADMSG : rc;
		goto out;
	}
	for (int i = 0; i < N_DB; i++) {
		if (i == DB_META || (i == DB_BIND && fmt < 2) || (i < N_IDX && (unsigned)i >= st->n_idx))
			continue;
		rc = i < N_IDX ? idx_dbi_open(txn, st, (unsigned)i, 0) :
		     map_err(mdb_dbi_open(txn, DB_NAME(i), 0, &st->dbi[i]));
		if (rc < 0) {
			*msg = "store lacks one of its databases";
			rc = rc == -ENOENT ? -EBADMSG : rc;
			goto out;
		}
	}
	if (fmt >= 2) {
		rc = meta_get(txn, st, META_BINDKEY, &v);
		if (rc < 0 || v.mv_size != 16) {
			*msg = "store meta has no valid bind index key";
			rc = rc == 0 || rc == -ENOENT ? -EBADMSG : rc;
			goto out;
		}
		st->bix_key[0] = ld_u64(v.mv_data);
		st->bix_key[1] = ld_u64((const uint8_t *)v.mv_data + 8);
		st->bix = true;
	}
	/* Commit, not abort: DBI handles opened in a txn survive only a commit. */
	rc = map_err(mdb_txn_commit(txn));
	if (rc < 0)
		*msg = "cannot commit the opening transaction";
	else
		st->ready = true;
	return rc;
out:
	mdb_txn_abort(txn);
	return rc;
}

/* Preload (LFE_STORE_PRELOAD). The page cache keeps a file in folios of
 * the size they were filled with: pages written by ldapfectl or copied in
 * with cp sit in small folios, mapped by 4 KiB entries, and a random lookup
 * in a 1 GB store then pays a TLB miss per page it touches. Folios filled
 * by sequential readahead grow up to 2 MiB (ext4 and xfs on Linux 6.x), and
 * a 2 MiB folio is mapped with one entry. So: drop the clean cached pages
 * (pages mapped by another process stay as they are) and read the used
 * part back from the start. 1M users (1 GB, bench_store, wrong password):
 * 2.2-2.4 us on 4 KiB entries, ~1.9 us after, as on a huge=within_size
 * tmpfs; /proc/PID/smaps then shows FilePmdMapped for data.mdb. */
static void preload(struct lfe_store *st)
{
	enum { CHUNK = 2u << 20 };
	MDB_envinfo ei;
	MDB_stat ms;
	int fd;

	if (mdb_env_get_fd(st->env, &fd) != 0 || mdb_env_info(st->env, &ei) != 0 ||
	    mdb_env_stat(st->env, &ms) != 0)
		return;
	off_t used = (off_t)(ei.me_last_pgno + 1) * ms.ms_psize;
	uint8_t *buf = malloc(CHUNK);
	if (!buf)
		return;
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	(void)posix_fadvise(fd, 0, used, POSIX_FADV_SEQUENTIAL);
	for (off_t off = 0; off < used;) {
		ssize_t n = pread(fd, buf, CHUNK, off);
		if (n <= 0)
			break;
		off += n;
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
	free(buf);
}

/* Sharing the store (docs/ARCHITECTURE.md "Store ownership"): the writer
 * (ldapfectl, user ldapfe-sync under systemd) owns the environment; the
 * daemon reads it through the directory's group. An MDB_RDONLY reader still
 * needs lock.mdb open read-write (its reader slot, the writer's view of
 * which pages are still in use), so the writer makes that one file group
 * read-write (0660); data.mdb stays 0640. Only when this process owns
 * the file, and never through a link. Best effort: a failure leaves the
 * mode as it was (a reader of the group then gets EACCES and says so). */
static void share_lock_file(const char *path)
{
	char lp[PATH_MAX];
	struct stat sb;

	if (snprintf(lp, sizeof(lp), "%s/lock.mdb", path) >= (int)sizeof(lp))
		return;
	int fd = open(lp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
	    (sb.st_mode & 0777) != 0660)
		(void)fchmod(fd, 0660);
	close(fd);
}

/* A write transaction whose id does not follow the last committed meta
 * page's means lock.mdb's txnid was changed by someone else: the group
 * that may write lock.mdb (the daemon's) must not be able to make the
 * writer build on an old snapshot (a rollback that would bring revoked
 * passwords back). Refuse with -EIO instead. */
static int write_begin(struct lfe_store *st, MDB_txn **txn)
{
	MDB_envinfo ei;
	int rc = map_err(mdb_txn_begin(st->env, NULL, 0, txn));

	if (rc < 0)
		return rc;
	if (mdb_env_info(st->env, &ei) != 0 || mdb_txn_id(*txn) != ei.me_last_txnid + 1) {
		mdb_txn_abort(*txn);
		*txn = NULL;
		return -EIO;
	}
	return 0;
}

struct lfe_store *lfe_store_open(const char *path, unsigned flags, size_t map_size,
				 int *err, const char **msg)
{
	const char *why = NULL;
	struct lfe_store *st;
	unsigned eflags = MDB_NOTLS;
	int rc;

	st = calloc(1, sizeof(*st));
	if (!st) {
		rc = -ENOMEM;
		why = "out of memory";
		goto fail;
	}
	st->rdonly = flags & LFE_STORE_RDONLY;
	strcpy(st->pw_default, "{SSHA512}");
	rc = map_err(mdb_env_create(&st->env));
	if (rc < 0) {
		why = "mdb_env_create failed";
		goto fail;
	}
	mdb_env_set_maxdbs(st->env, N_DB + 4);
	mdb_env_set_maxreaders(st->env, LFE_STORE_MAX_READERS);
	/* A reader takes the writer's map size from the file unless told. */
	if (map_size || !st->rdonly)
		mdb_env_set_mapsize(st->env, map_size ? map_size : LFE_STORE_DEFAULT_MAP);
	if (st->rdonly)
		eflags |= MDB_RDONLY;
	else if (flags & LFE_STORE_BULK)
		eflags |= MDB_WRITEMAP;
	if (!st->rdonly && mkdir(path, 0750) < 0 && errno != EEXIST) {
		rc = -errno;
		why = "cannot create the store directory";
		goto fail;
	}
	rc = map_err(mdb_env_open(st->env, path, eflags, 0640));
	if (rc < 0) {
		why = rc == -EPROTO ? "not an LMDB environment of this LMDB version" :
		      rc == -ENOENT ? "store directory does not exist" :
		      rc == -EACCES ? "permission denied on the store" :
		      "cannot open the LMDB environment";
		goto fail;
	}
	if (!st->rdonly)
		share_lock_file(path);
	st->maxkey = (size_t)mdb_env_get_maxkeysize(st->env);
	rc = load_meta(st, &why);
	/* A writer may open an empty environment in order to init it. */
	if (rc == -ENOENT && !st->rdonly)
		rc = 0;
	if (rc < 0)
		goto fail;
	if (st->ready && lfe_store_set_bind_scheme(st, NULL) < 0)
		(void)lfe_store_set_bind_scheme(st, "{SSHA512}");   /* unknown scheme in meta */
	if (st->rdonly && (flags & LFE_STORE_PRELOAD))
		preload(st);
	return st;
fail:
	if (err)
		*err = rc;
	if (msg)
		*msg = why;
	lfe_store_close(st);
	return NULL;
}

void lfe_store_close(struct lfe_store *st)
{
	if (!st)
		return;
	if (st->batch)
		mdb_txn_abort(st->batch);
	if (st->env)
		mdb_env_close(st->env);
	free(st->scratch);
	free(st->bix_buf);
	free(st);
}

int lfe_store_init(struct lfe_store *st, const char *suffix)
{
	char nsuf[LFE_DN_MAX + 1];
	uint8_t fmt[4], cnt[8] = { 0 };
	size_t slen = strlen(suffix);
	ssize_t nl;
	MDB_txn *txn;
	int rc;

	if (st->rdonly)
		return -EROFS;
	if (st->ready)
		return -EEXIST;
	nl = lfe_dn_normalize((const uint8_t *)suffix, slen, nsuf, sizeof(nsuf));
	if (nl < 0 || slen >= LFE_DN_MAX || (size_t)nl > st->maxkey)
		return -EINVAL;
	rc = set_index_list(st, DEFAULT_INDEXES, strlen(DEFAULT_INDEXES));
	if (rc < 0)
		return rc;
	rc = write_begin(st, &txn);
	if (rc < 0)
		return rc;
	for (int i = 0; i < N_DB && rc == 0; i++) {
		if (i < N_IDX && (unsigned)i >= st->n_idx)
			continue;
		rc = i < N_IDX ? idx_dbi_open(txn, st, (unsigned)i, MDB_CREATE) :
		     map_err(mdb_dbi_open(txn, DB_NAME(i), MDB_CREATE, &st->dbi[i]));
	}
	if (rc == 0) {
		MDB_val v;

		rc = meta_get(txn, st, META_FORMAT, &v);
		if (rc == 0)
			rc = -EEXIST;
		else if (rc == -ENOENT)
			rc = 0;
	}
	fmt[0] = LFE_STORE_FORMAT_VERSION & 0xff;
	fmt[1] = (LFE_STORE_FORMAT_VERSION >> 8) & 0xff;
	fmt[2] = (LFE_STORE_FORMAT_VERSION >> 16) & 0xff;
	fmt[3] = (LFE_STORE_FORMAT_VERSION >> 24) & 0xff;
	if (rc == 0)
		rc = meta_put(txn, st, META_FORMAT, fmt, sizeof(fmt));
	if (rc == 0)
		rc = meta_put(txn, st, META_SUFFIX, nsuf, (size_t)nl);
	if (rc == 0)
		rc = meta_put(txn, st, META_SUFFIX_ORIG, suffix, slen);
	if (rc == 0)
		rc = meta_put(txn, st, META_ENTRIES, cnt, sizeof(cnt));
	if (rc == 0)
		rc = bix_new_key(st, txn);
	if (rc == 0)
		rc = meta_put(txn, st, META_INDEX, st->idx_list, strlen(st->idx_list));
	if (rc == 0)
		rc = idx_new_key(st, txn);
	if (rc < 0) {
		mdb_txn_abort(txn);
		st->bix = false;
		st->n_idx = 0;
		return rc;
	}
	rc = map_err(mdb_txn_commit(txn));
	if (rc < 0)
		return rc;
	memcpy(st->suffix, nsuf, (size_t)nl + 1);
	st->suffix_len = (size_t)nl;
	memcpy(st->suffix_orig, suffix, slen + 1);
	st->fmt = LFE_STORE_FORMAT_VERSION;
	st->ready = true;
	return lfe_store_set_bind_scheme(st, NULL);
}

int lfe_store_set_bind_scheme(struct lfe_store *st, const char *scheme)
{
	/* Any password does: the dummy never answers success. */
	static const uint8_t pw[] = "lfe-dummy-bind";
	struct lfe_bind_job job = { .dummy = true };
	char val[LFE_BIND_JOB_BYTES];

	if (scheme == NULL || scheme[0] == '\0')
		scheme = st->pw_default;
	size_t len = strnlen(scheme, LFE_STORE_SCHEME_MAX);
	if (len < 3 || len >= LFE_STORE_SCHEME_MAX || scheme[0] != '{' || scheme[len - 1] != '}')
		return -EINVAL;
	ssize_t n = lfe_pw_hash(scheme, pw, sizeof(pw) - 1, val, sizeof(val));
	if (n < 0) {
		/* Schemes this build verifies but does not hash ({SHA},
		 * {CLEARTEXT}, 389-ds {PBKDF2_SHA256}): lfe_pw_dummy_verify has
		 * a built-in value for each. Anything else is unknown. */
		if (lfe_pw_verify(scheme, len, pw, sizeof(pw) - 1, LFE_PW_ALLOW_CLEARTEXT) == -ENOTSUP)
			return -ENOTSUP;
		memcpy(val, scheme, len);
		n = (ssize_t)len;
	}
	(void)lfe_bind_job_add(&job, val, (size_t)n);
	st->dummy_rec_len = 0;
	if ((size_t)n > len) {
		struct lfe_bytes oc[4] = { BYTES("top"), BYTES("person"), BYTES("organizationalPerson"),
					   BYTES("inetOrgPerson") };
		struct lfe_bytes u = BYTES("lfe-dummy"), pwv = { (const uint8_t *)val, (size_t)n };
		struct lfe_ldap_attr a[] = {
			{ .type = BYTES("objectClass"), .vals = oc, .n_vals = 4 },
			{ .type = BYTES("uid"), .vals = &u, .n_vals = 1 },
			{ .type = BYTES("cn"), .vals = &u, .n_vals = 1 },
			{ .type = BYTES("sn"), .vals = &u, .n_vals = 1 },
			{ .type = BYTES("mail"), .vals = &u, .n_vals = 1 },
			{ .type = BYTES("userPassword"), .vals = &pwv, .n_vals = 1 },
		};
		ssize_t rl = lfe_record_write(st->dummy_rec, sizeof(st->dummy_rec),
					      BYTES("uid=lfe-dummy"), a, sizeof(a) / sizeof(a[0]));
		st->dummy_rec_len = rl > 0 ? (size_t)rl : 0;
	}
	explicit_bzero(val, sizeof(val));
	lfe_bind_job_wipe(&st->dummy);
	st->dummy = job;
	st->dummy_slow = lfe_pw_class_of(scheme, len) == LFE_PW_SLOW;
	lfe_bind_job_wipe(&job);
	return 0;
}

const char *lfe_store_suffix(const struct lfe_store *st, size_t *len)
{
	if (len)
		*len = st->suffix_len;
	return st->suffix;
}

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
		bix_hints_new(r);   /* none on failure: binds only go slower */
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
	unsigned idx = idx_of_type(st, (const uint8_t *)attr, strlen(attr));

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
		} else if (meta_get(r->txn, (struct lfe_store *)st, META_INDEX, &v) == 0) {
			for (unsigned i = 0; i < st->n_idx; i++) {
				size_t nl = strlen(st->idx_name[i]), l, el;
				const char *p = v.mv_data, *end = p + v.mv_size;
				while (p < end) {
					const char *c = memchr(p, ',', (size_t)(end - p));
					el = c ? (size_t)(c - p) : (size_t)(end - p);
					unsigned k = index_entry_kinds(p, el, &l);
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

int lfe_store_index_count(struct lfe_store_reader *r, const char *attr, const uint8_t *value,
			  size_t len, uint64_t *count)
{
	unsigned idx = reader_idx(r, attr, LFE_INDEX_EQ);
	uint8_t key[512];

	if (idx == IDX_NONE)
		return -ENOTSUP;
	ssize_t kl = index_key(r->st, idx, value, len, key,
			       r->st->maxkey < sizeof(key) ? r->st->maxkey : sizeof(key));
	return count_at(r, idx, key, (size_t)kl, count);
}

int lfe_store_index_each_after(struct lfe_store_reader *r, const char *attr,
			       const uint8_t *value, size_t len, const char *after,
			       size_t after_len,
			       int (*fn)(void *ctx, const char *ndn, size_t ndn_len), void *ctx)
{
	unsigned idx = reader_idx(r, attr, LFE_INDEX_EQ);
	uint8_t key[512];

	if (idx == IDX_NONE)
		return -ENOTSUP;
	ssize_t kl = index_key(r->st, idx, value, len, key,
			       r->st->maxkey < sizeof(key) ? r->st->maxkey : sizeof(key));
	return each_at(r, idx, key, (size_t)kl, after, after_len, fn, ctx);
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

size_t lfe_store_index_pres_key(uint8_t *key)
{
	memcpy(key, IKEY_PRES, sizeof(IKEY_PRES));
	return sizeof(IKEY_PRES);
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
		int full = subnorm_feed(&x, piece[i]);
		if (full == 2) {
			uint8_t w[SUB_LEN];
			memcpy(w, prev + 1, SUB_LEN - 1);
			w[SUB_LEN - 1] = ' ';
			sub_key(k, 'A', w, SUB_LEN);
			SUB_TRY(k, SUB_KEY_MAX);
			tried++;
		}
		if (full >= 1) {
			sub_key(k, 'A', x.win, SUB_LEN);
			SUB_TRY(k, SUB_KEY_MAX);
			tried++;
		}
	}
	size_t m = x.n < SUB_LEN ? x.n : SUB_LEN;
	if (m > 0 && where == LFE_SUB_INITIAL) {
		sub_key(k, 'I', x.head, m);
		SUB_TRY(k, 3 + m);
	}
	/* The last window is known only when the whole piece was read. */
	if (m > 0 && where == LFE_SUB_FINAL && tried < SUB_PICK_MAX) {
		sub_key(k, 'F', x.win + SUB_LEN - m, m);
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

static int bix_new_key(struct lfe_store *st, MDB_txn *txn)
{
	uint8_t k[16];

	if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k))
		return -EIO;
	int rc = meta_put(txn, st, META_BINDKEY, k, sizeof(k));
	if (rc == 0) {
		st->bix_key[0] = ld_u64(k);
		st->bix_key[1] = ld_u64(k + 8);
		st->bix = true;
	}
	explicit_bzero(k, sizeof(k));
	return rc;
}

/* Format 3: the key of long index values' hashes (index_key), drawn when
 * the indexes are made (init, upgrade). */
static int idx_new_key(struct lfe_store *st, MDB_txn *txn)
{
	uint8_t k[16];

	if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k))
		return -EIO;
	int rc = meta_put(txn, st, META_IDXKEY, k, sizeof(k));
	if (rc == 0) {
		st->idx_key[0] = ld_u64(k);
		st->idx_key[1] = ld_u64(k + 8);
	}
	explicit_bzero(k, sizeof(k));
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
					* costs (~50 ns a bind at 1,000 users) */
#define BIX_HINTS_MIN_BITS 10u   /* 4 KiB */
#define BIX_HINTS_MAX_BITS 22u   /* 16 MiB: ~2M leaves, some 40M entries */

static void bix_hints_new(struct lfe_store_reader *r)
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
static int bix_put(struct lfe_store *st, MDB_txn *txn, const char *ndn, size_t nl,
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
static int bix_del(struct lfe_store *st, MDB_txn *txn, const char *ndn, size_t nl)
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
	const char *pdn = st->pp_default;
	size_t pl = st->pp_default_len;

	/* Read through the bind index, whose flags say the record keeps no
	 * policy attribute: nothing to read here without a default policy. */
	if (!r->pp_maybe && pl == 0)
		return 0;
	(void)lfe_pp_acct_read(rec, rec_len, &a);
	if (!a.any && pl == 0)
		return 0;
	if (a.subentry.len) {
		ssize_t n = lfe_dn_normalize(a.subentry.p, a.subentry.len, nd, sizeof(nd));

		if (n < 0)
			a.bad = true;
		pdn = nd;
		pl = n < 0 ? 0 : (size_t)n;
	}
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

/* ---- writer ---- */

static int wtxn_begin(struct lfe_store *st, MDB_txn **txn)
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
	return write_begin(st, txn);
}

static int flush_count(struct lfe_store *st, MDB_txn *txn)
{
	uint8_t b[8];
	MDB_val v;
	int rc;

	if (st->delta == 0)
		return 0;
	rc = meta_get(txn, st, META_ENTRIES, &v);
	if (rc < 0 || v.mv_size != 8)
		return rc < 0 ? rc : -EBADMSG;
	st_u64(b, ld_u64(v.mv_data) + (uint64_t)st->delta);
	rc = meta_put(txn, st, META_ENTRIES, b, sizeof(b));
	if (rc == 0)
		st->delta = 0;
	return rc;
}

/* Finish one operation. rc is its result; dirty says whether it modified
 * the txn before failing. Outside a batch: commit on success, else abort. */
static int wtxn_end(struct lfe_store *st, MDB_txn *txn, int rc, bool dirty)
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

static void set_max(struct lfe_store *st, unsigned db, const MDB_val *k)
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
			set_max(st, idx, &k);
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
		int full = subnorm_feed(&x, v.p[i]);
		/* A folded space and the next character complete two windows. */
		if (full == 2) {
			uint8_t w[SUB_LEN];
			memcpy(w, prev + 1, SUB_LEN - 1);
			w[SUB_LEN - 1] = ' ';
			sub_key(key, 'A', w, SUB_LEN);
			rc = idx_put(st, txn, idx, key, SUB_KEY_MAX, ndn, add, dn_is_max);
		}
		if (rc == 0 && full >= 1) {
			sub_key(key, 'A', x.win, SUB_LEN);
			rc = idx_put(st, txn, idx, key, SUB_KEY_MAX, ndn, add, dn_is_max);
		}
	}
	size_t m = x.n < SUB_LEN ? x.n : SUB_LEN;
	for (size_t l = 1; rc == 0 && l <= m; l++) {
		sub_key(key, 'I', x.head, l);
		rc = idx_put(st, txn, idx, key, 3 + l, ndn, add, dn_is_max);
		if (rc == 0) {
			sub_key(key, 'F', x.win + SUB_LEN - l, l);
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
			rc = idx_put(st, txn, idx, IKEY_PRES, sizeof(IKEY_PRES), ndn, add, dn_is_max);
		if (rc == 0 && (kinds & LFE_INDEX_EQ)) {
			ssize_t kl = index_key(st, idx, v.p, v.len, key, cap);
			rc = idx_put(st, txn, idx, key, (size_t)kl, ndn, add, dn_is_max);
		}
		if (rc == 0 && (kinds & LFE_INDEX_SUB))
			rc = sub_keys(st, txn, idx, v, ndn, add, dn_is_max);
	}
	return rc;
}

/* Remove the index entries of the record saved in st->scratch. */
static int unindex_record(struct lfe_store *st, MDB_txn *txn, size_t len, MDB_val *ndn)
{
	struct lfe_bytes dn, type, list;
	uint32_t n_attrs, n_vals;
	size_t off;
	int rc;

	rc = lfe_record_header(st->scratch, len, &dn, &n_attrs, &off);
	while (rc == 0 &&
	       (rc = lfe_record_next_attr(st->scratch, len, &off, &type, &n_vals, &list)) == 1) {
		unsigned idx = idx_of_type(st, type.p, type.len);

		rc = idx == IDX_NONE ? 0 :
		     index_attr(st, txn, idx, st->idx_kind[idx], NULL, 0, list, ndn, false, false);
	}
	return rc;
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

static bool type_same(struct lfe_bytes a, struct lfe_bytes b)
{
	return lfe_attr_type_eq(a.p, a.len, b.p, b.len);
}

/* Check an entry before anything is written: types unique. Fills idx[]
 * (index slot of each attribute; long values are indexed by hash). */
static int check_attrs(const struct lfe_store *st, const struct lfe_ldap_attr *attrs,
		       uint32_t n, uint8_t *idx)
{
	if (n > LFE_STORE_MAX_ATTRS)
		return -E2BIG;
	for (uint32_t i = 0; i < n; i++) {
		if (attrs[i].type.len == 0 || (attrs[i].n_vals && !attrs[i].vals))
			return -EINVAL;
		for (uint32_t j = 0; j < i; j++)
			if (type_same(attrs[i].type, attrs[j].type))
				return -EINVAL;
		idx[i] = (uint8_t)idx_of_type(st, attrs[i].type.p, attrs[i].type.len);
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
	rc = wtxn_begin(st, &txn);
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
			rc = wtxn_end(st, txn, -EEXIST, false);
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
			rc = wtxn_end(st, txn, rc, false);
			goto out;
		}
		rc = mdb_put(txn, st->dbi[DB_ENTRIES], &k, &v, MDB_RESERVE);
	}
	rc = map_err(rc);
	if (rc == 0) {
		lfe_record_write(v.mv_data, v.mv_size, dn, attrs, n_attrs);
		if (dn_is_max)
			set_max(st, N_IDX, &k);
		if (st->bix)
			rc = bix_put(st, txn, ndn, (size_t)nl, v.mv_data, v.mv_size);
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
	rc = wtxn_end(st, txn, rc, true);
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
	int rc = wtxn_begin(st, txn);
	if (rc < 0)
		return rc;
	*k = mval(ndn, (size_t)nl);
	rc = map_err(mdb_get(*txn, st->dbi[DB_ENTRIES], k, old));
	if (rc == 0)
		rc = save_old(st, old);
	if (rc < 0)
		return wtxn_end(st, *txn, rc, false);
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
		rc = bix_del(st, txn, k.mv_data, k.mv_size);
	if (rc == 0)
		st->delta--;
	return wtxn_end(st, txn, rc, true);
}

int lfe_store_set_password(struct lfe_store *st, const char *dn, size_t len,
			   const char *hashed, size_t hashed_len)
{
	static const char type[] = "userPassword";
	struct lfe_bytes val = { (const uint8_t *)hashed, hashed_len };
	struct lfe_ldap_attr repl = {
		.type = { (const uint8_t *)type, sizeof(type) - 1 }, .n_vals = 1, .vals = &val,
	};
	char ndn[LFE_DN_MAX + 1];
	MDB_val k, old, v;
	MDB_txn *txn;
	ssize_t size;
	int rc;

	if (st->rdonly)
		return -EROFS;
	if (!st->ready)
		return -ENOENT;
	if (hashed_len == 0)
		return -EINVAL;
	rc = begin_on_entry(st, dn, len, ndn, &txn, &k, &old);
	if (rc < 0)
		return rc;
	size = lfe_record_replace_size(st->scratch, old.mv_size, &repl);
	if (size < 0)
		return wtxn_end(st, txn, (int)size, false);
	v = mval(NULL, (size_t)size);
	rc = map_err(mdb_put(txn, st->dbi[DB_ENTRIES], &k, &v, MDB_RESERVE));
	if (rc == 0)
		lfe_record_replace_write(st->scratch, old.mv_size, &repl, v.mv_data, v.mv_size);
	if (rc == 0 && st->bix)
		rc = bix_put(st, txn, k.mv_data, k.mv_size, v.mv_data, v.mv_size);
	return wtxn_end(st, txn, rc, true);
}

int lfe_store_batch_begin(struct lfe_store *st)
{
	MDB_txn *txn;
	int rc;

	if (st->batch)
		return -EBUSY;
	rc = wtxn_begin(st, &txn);
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
			set_max(st, db, &k);
		else if (rc == MDB_NOTFOUND)
			set_max(st, db, &(MDB_val){ 0, NULL });
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

int lfe_store_bind_index_build(struct lfe_store *st)
{
	/* Format 1 becomes 2; format 3 stays 3. */
	const uint8_t fmt[4] = { st->fmt >= 3 ? 3 : 2, 0, 0, 0 };
	MDB_cursor *c = NULL;
	MDB_txn *txn;
	MDB_val k, v;
	int rc, mrc;

	if (st->rdonly)
		return -EROFS;
	if (!st->ready)
		return -ENOENT;
	if (st->batch)
		return -EBUSY;
	rc = write_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = map_err(mdb_dbi_open(txn, DB_NAME(DB_BIND), MDB_CREATE, &st->dbi[DB_BIND]));
	if (rc == 0)
		rc = map_err(mdb_drop(txn, st->dbi[DB_BIND], 0));
	if (rc == 0)
		rc = bix_new_key(st, txn);   /* a rebuild draws a new key */
	if (rc == 0)
		rc = map_err(mdb_cursor_open(txn, st->dbi[DB_ENTRIES], &c));
	if (rc == 0) {
		/* "entries" is only read here: the cursor's values stay valid
		 * while "bind" is written. */
		mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
		while (mrc == 0 && rc == 0) {
			rc = lfe_record_validate(v.mv_data, v.mv_size);
			if (rc == 0)
				rc = bix_put(st, txn, k.mv_data, k.mv_size, v.mv_data, v.mv_size);
			mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
		}
		if (rc == 0 && mrc != MDB_NOTFOUND)
			rc = map_err(mrc);
		mdb_cursor_close(c);
	}
	if (rc == 0)
		rc = meta_put(txn, st, META_FORMAT, fmt, sizeof(fmt));
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

/* ---- declared indexes (format 3) ---- */

/* Index every entry's values of the slots in mask (in txn). */
static int fill_indexes(struct lfe_store *st, MDB_txn *txn, uint64_t mask, unsigned kinds)
{
	MDB_cursor *c;
	MDB_val k, v;
	int rc = map_err(mdb_cursor_open(txn, st->dbi[DB_ENTRIES], &c));
	if (rc < 0)
		return rc;
	/* "entries" is only read here: the cursor's values stay valid while
	 * the indexes are written. */
	int mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	while (mrc == 0 && rc == 0) {
		struct lfe_bytes dn, type, list;
		uint32_t n_attrs, n_vals;
		size_t off;

		rc = lfe_record_header(v.mv_data, v.mv_size, &dn, &n_attrs, &off);
		while (rc == 0 && (rc = lfe_record_next_attr(v.mv_data, v.mv_size, &off, &type,
							       &n_vals, &list)) == 1) {
			unsigned idx = idx_of_type(st, type.p, type.len);
			rc = idx == IDX_NONE || !(mask & (1ull << idx)) ? 0 :
			     index_attr(st, txn, idx, st->idx_kind[idx] & kinds, NULL, 0, list, &k,
					true, false);
		}
		mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	if (rc == 0 && mrc != MDB_NOTFOUND)
		rc = map_err(mrc);
	mdb_cursor_close(c);
	return rc;
}

static int index_txn_begin(struct lfe_store *st, MDB_txn **txn)
{
	if (st->rdonly)
		return -EROFS;
	if (!st->ready)
		return -ENOENT;
	if (st->batch)
		return -EBUSY;
	return write_begin(st, txn);
}

/* Commit txn, or abort it and leave the store unusable (its handles may
 * name databases the abort undid): the caller reports and exits. */
static int index_txn_end(struct lfe_store *st, MDB_txn *txn, int rc)
{
	if (rc == 0)
		rc = map_err(mdb_txn_commit(txn));
	else
		mdb_txn_abort(txn);
	if (rc < 0)
		st->ready = false;
	return rc;
}

int lfe_store_upgrade(struct lfe_store *st)
{
	static const uint8_t fmt3[4] = { 3, 0, 0, 0 };
	MDB_txn *txn;
	int rc;

	/* The bind index first (format 1 has none; format 2's lacks the
	 * password-policy attributes that format 3's keeps), in a transaction
	 * of its own: the store stays format 2 until the indexes are done. */
	if (st->ready && st->fmt < 3 && !st->batch && !st->rdonly) {
		rc = lfe_store_bind_index_build(st);
		if (rc < 0)
			return rc;
	}
	rc = index_txn_begin(st, &txn);
	if (rc < 0)
		return rc;
	if (st->fmt >= 3) {
		mdb_txn_abort(txn);
		return -EALREADY;
	}
	/* The legacy indexes are among the defaults: emptied and refilled. */
	rc = set_index_list(st, DEFAULT_INDEXES, strlen(DEFAULT_INDEXES));
	for (unsigned i = 0; rc == 0 && i < st->n_idx; i++) {
		rc = idx_dbi_open(txn, st, i, MDB_CREATE);
		if (rc == 0)
			rc = map_err(mdb_drop(txn, st->dbi[i], 0));
	}
	if (rc == 0)
		rc = idx_new_key(st, txn);
	if (rc == 0)
		rc = fill_indexes(st, txn, ~(uint64_t)0, ~0u);
	if (rc == 0)
		rc = meta_put(txn, st, META_INDEX, st->idx_list, strlen(st->idx_list));
	if (rc == 0)
		rc = meta_put(txn, st, META_FORMAT, fmt3, sizeof(fmt3));
	rc = index_txn_end(st, txn, rc);
	if (rc == 0)
		st->fmt = 3;
	return rc;
}

/* The kind of an index key (idx_put's keys): index_key never makes a
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
	unsigned i = idx_of_type(st, (const uint8_t *)canon, (size_t)cl);
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
	int ll = format_index_list(st, list, sizeof(list));
	if (ll < 0 || (rc = index_txn_begin(st, &txn)) < 0) {
		st->idx_kind[i] = (uint8_t)was;
		st->n_idx -= fresh;
		return ll < 0 ? -ENOSPC : rc;
	}
	rc = 0;
	if (fresh) {
		rc = idx_dbi_open(txn, st, i, MDB_CREATE);
		if (rc == 0)
			rc = map_err(mdb_drop(txn, st->dbi[i], 0));
	}
	if (rc == 0)
		rc = fill_indexes(st, txn, 1ull << i, added);
	if (rc == 0)
		rc = meta_put(txn, st, META_INDEX, list, (size_t)ll);
	rc = index_txn_end(st, txn, rc);
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
	unsigned idx = idx_of_type(st, (const uint8_t *)attr, strlen(attr));
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
	int ll = format_index_list(&keep, list, sizeof(list));
	if (ll < 0)
		return -ENOSPC;
	rc = index_txn_begin(st, &txn);
	if (rc < 0)
		return rc;
	if (left == 0)
		rc = map_err(mdb_drop(txn, st->dbi[idx], 1));
	else
		rc = drop_kinds(st, txn, idx, was & kinds);
	if (rc == 0)
		rc = meta_put(txn, st, META_INDEX, list, (size_t)ll);
	rc = index_txn_end(st, txn, rc);
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

int lfe_store_info(struct lfe_store *st, struct lfe_store_info *info)
{
	MDB_envinfo ei;
	MDB_stat es;
	MDB_txn *txn;
	MDB_val v;
	int rc;

	memset(info, 0, sizeof(*info));
	info->format_version = st->ready ? st->fmt : LFE_STORE_FORMAT_VERSION;
	info->bind_index = st->bix && st->fmt >= LFE_STORE_FORMAT_VERSION;
	memcpy(info->ppolicy_default, st->pp_default, st->pp_default_len);
	mdb_env_info(st->env, &ei);
	mdb_env_stat(st->env, &es);
	info->map_bytes_used = ((uint64_t)ei.me_last_pgno + 1) * es.ms_psize;
	if (!st->ready)
		return -ENOENT;
	/* init and load_meta keep both below 1024 bytes. */
	memcpy(info->suffix, st->suffix, st->suffix_len + 1);
	memcpy(info->suffix_orig, st->suffix_orig, strlen(st->suffix_orig) + 1);
	rc = map_err(mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn));
	if (rc < 0)
		return rc;
	rc = meta_get(txn, st, META_ENTRIES, &v);
	if (rc == 0 && v.mv_size != 8)
		rc = -EBADMSG;
	if (rc == 0)
		info->entries = ld_u64(v.mv_data);
	mdb_txn_abort(txn);
	info->last_txnid = (uint64_t)ei.me_last_txnid;
	/* LMDB keeps no commit time: every commit rewrites data.mdb (a meta
	 * page at least), so its mtime is the time of the last one. */
	const char *dir = NULL;
	char p[PATH_MAX];
	struct stat sb;
	if (mdb_env_get_path(st->env, &dir) == 0 && dir &&
	    (size_t)snprintf(p, sizeof(p), "%s/data.mdb", dir) < sizeof(p) && stat(p, &sb) == 0)
		info->last_change = (int64_t)sb.st_mtime;
	return rc;
}

int lfe_store_set_default_scheme(struct lfe_store *st, const char *scheme)
{
	size_t len = strlen(scheme);
	MDB_txn *txn;
	int rc;

	if (len < 3 || len >= LFE_STORE_SCHEME_MAX || scheme[0] != '{' || scheme[len - 1] != '}')
		return -EINVAL;
	if (st->batch)
		return -EBUSY;
	rc = wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = meta_put(txn, st, META_PWDEFAULT, scheme, len);
	rc = wtxn_end(st, txn, rc, true);
	if (rc == 0) {
		memcpy(st->pw_default, scheme, len + 1);
		rc = lfe_store_set_bind_scheme(st, NULL);
	}
	return rc;
}

int lfe_store_set_ppolicy_default(struct lfe_store *st, const char *dn)
{
	char nd[LFE_DN_MAX + 1];
	ssize_t nl = 0;
	MDB_txn *txn;
	int rc;

	if (dn && dn[0]) {
		nl = lfe_dn_normalize((const uint8_t *)dn, strlen(dn), nd, sizeof(nd));
		if (nl <= 0)
			return -EINVAL;
	}
	if (st->batch)
		return -EBUSY;
	rc = wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = meta_put(txn, st, META_PPDEFAULT, nd, (size_t)nl);
	rc = wtxn_end(st, txn, rc, true);
	if (rc == 0) {
		memcpy(st->pp_default, nd, (size_t)nl);
		st->pp_default[nl] = '\0';
		st->pp_default_len = (size_t)nl;
	}
	return rc;
}

int lfe_store_sync_cookie_set(struct lfe_store *st, const uint8_t *cookie, size_t len)
{
	MDB_txn *txn;
	int rc;

	if (len > LFE_STORE_COOKIE_MAX)
		return -EINVAL;
	rc = wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = meta_put(txn, st, META_COOKIE, cookie, len);
	return wtxn_end(st, txn, rc, true);
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
	rc = meta_get(txn, st, META_COOKIE, &v);
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
	rc = wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = map_err(mdb_put(txn, st->dbi[DB_META], &k, &v, 0));
	return wtxn_end(st, txn, rc, true);
}

int lfe_store_sync_del(struct lfe_store *st, const void *key, size_t klen)
{
	uint8_t buf[SYNC_KV_PREFIX_LEN + LFE_STORE_SYNC_KEY_MAX];
	MDB_txn *txn;
	MDB_val k;
	int rc = sync_key(st, key, klen, buf, &k);

	if (rc < 0)
		return rc;
	rc = wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = map_err(mdb_del(txn, st->dbi[DB_META], &k, NULL));
	return wtxn_end(st, txn, rc, rc != -ENOENT);
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

/* Every entry of txn in key order through fn (lfe_store_each's contract). */
static int walk_entries(struct lfe_store *st, MDB_txn *txn, lfe_store_each_fn fn, void *ctx)
{
	MDB_cursor *c;
	MDB_val k, v;
	int rc = map_err(mdb_cursor_open(txn, st->dbi[DB_ENTRIES], &c));

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

int lfe_store_each(struct lfe_store *st, lfe_store_each_fn fn, void *ctx)
{
	MDB_txn *txn;
	bool own;
	int rc = sync_view(st, &txn, &own);

	if (rc < 0)
		return rc;
	rc = walk_entries(st, txn, fn, ctx);
	if (own)
		mdb_txn_abort(txn);
	return rc;
}

int lfe_store_reader_each(struct lfe_store_reader *r, lfe_store_each_fn fn, void *ctx)
{
	return walk_entries(r->st, r->txn, fn, ctx);
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
		rc = meta_put(st->batch, st, META_ENTRIES, zero, sizeof(zero));
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
		set_max(st, db, &(MDB_val){ 0, NULL });
	return 0;
}
