/* backend/store.h — the LMDB directory store.
 *
 * One LMDB environment (a directory), named databases:
 *   "entries"   normalized DN → versioned entry record (format in record.h)
 *   "idx.<attr>" index key of a value → normalized DN (dupsort): the
 *               indexes the store declares (format 3: meta "index" with
 *               their kinds, eq, pres, sub, lfe_store_index_add_kind;
 *               formats 1-2: uid, mail, cn, objectClass, eq), keys by the
 *               type's matching rule (lfe_attr_rule)
 *   "meta"      format version, suffix, entry count, sync cookie
 *
 * Readers (the daemon's worker cores) open the store with MDB_RDONLY |
 * MDB_NOTLS and keep one lfe_store_reader each. Values returned by reader
 * calls point into LMDB's map and are valid only until the next
 * lfe_store_reader_renew()/_free() of that reader: finish with them first.
 *
 * The writer (ldapfectl) commits each change in its own transaction; a call
 * that returned 0 is durable.
 *
 * Errors: 0 or a negative errno (-ENOENT not found, -EEXIST, -EINVAL bad
 * input, -EPROTO store of another format version, -ENOSPC map full, -EIO;
 * also -E2BIG entry too large, -EROFS write on a read-only store, -ENOTSUP
 * index lookup on an attribute without index, -EBUSY batch already open).
 */
#ifndef LFE_BACKEND_STORE_H
#define LFE_BACKEND_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ldap/msg.h"      /* struct lfe_bytes, struct lfe_ldap_attr */

/* What this build writes: 2 = format 1 plus the bind index "bind" (DN
 * hash → the entry's userPassword and lock attributes, kept by every
 * writer in the entry's transaction); 3 = format 2 plus declared equality
 * indexes (meta "index", default DEFAULT_INDEXES in store.c) keyed by each
 * type's matching rule, long values by a keyed hash (meta "index.key"),
 * and a bind index that also keeps the password-policy attributes
 * (ppolicy.h: pwdChangedTime, pwdReset, pwdPolicySubentry,
 * pwdGraceUseTime). This build reads 1 to 3 (1 and 2 with their four fixed
 * indexes; on them binds read "entries", which has every attribute); a
 * format 2 build refuses 3, so it cannot leave an index stale.
 * lfe_store_upgrade converts (declared indexes and the bind index). */
#define LFE_STORE_FORMAT_VERSION 3u
#define LFE_STORE_MAX_INDEX 32u          /* declared indexes per store */
#define LFE_STORE_INDEX_NAME_MAX 64u     /* canonical type name + NUL */

struct lfe_store;          /* an open environment */
struct lfe_store_reader;   /* one read transaction, owned by one thread */

enum {
	LFE_STORE_RDONLY = 1u << 0,   /* readers: the daemon */
	/* Writer, bulk import (ldapfectl import, like slapadd -q): LMDB writes
	 * pages in the map itself (MDB_WRITEMAP), about 1.5x faster for large
	 * batches. The data file becomes a sparse file of map_size bytes, and
	 * if the disk fills up the process dies of SIGBUS instead of getting
	 * -EIO: check free space first, and use it for imports only. */
	LFE_STORE_BULK = 1u << 1,
	/* Readers (the daemon, once at start): drop the data file's clean
	 * pages from the page cache and read its used part back in order, so
	 * the kernel caches it in large folios where the filesystem has them
	 * (ext4, xfs on Linux 6.x: up to 2 MiB) and maps them with 2 MiB
	 * entries: fewer TLB misses per lookup (store.c "Preload"). Costs one
	 * sequential read of the store from disk at open; does nothing on
	 * tmpfs. A best effort: failures are ignored. */
	LFE_STORE_PRELOAD = 1u << 2,
};

/* Open the store at path (a directory). map_size 0 → default (4 GiB).
 * On failure returns NULL and sets *err (negative errno) if err != NULL;
 * *msg (if non-NULL) gets a static human-readable reason. */
struct lfe_store *lfe_store_open(const char *path, unsigned flags, size_t map_size,
				 int *err, const char **msg);
void lfe_store_close(struct lfe_store *st);   /* NULL is a no-op */

/* Create a new empty store with this suffix (writer). -EEXIST if already
 * initialised. */
int lfe_store_init(struct lfe_store *st, const char *suffix);

/* Normalized suffix of the store (valid while st is open). */
const char *lfe_store_suffix(const struct lfe_store *st, size_t *len);

/* ---- reader (one per worker thread) ---- */

struct lfe_store_reader *lfe_store_reader_new(struct lfe_store *st);
void lfe_store_reader_free(struct lfe_store_reader *r);
/* Reset and renew the read transaction so committed changes become
 * visible. Cheap (no allocation); call it every few milliseconds. */
int lfe_store_reader_renew(struct lfe_store_reader *r);
/* Id of the snapshot the reader sees: LMDB's id of the last write
 * transaction committed before its last renew. Equal ids mean equal
 * contents; every committed change makes it larger (the verified-credential
 * cache, credcache.h, relies on this). 0 when the last renew failed (the
 * reader reads nothing until a renew works): equal to no snapshot. */
uint64_t lfe_store_reader_txnid(const struct lfe_store_reader *r);

/* A decoded view of one entry record; all slices point into the map. */
struct lfe_entry_view {
	struct lfe_bytes dn;                 /* original DN */
	uint32_t n_attrs;
	const uint8_t *rec;                  /* the raw record, for iteration */
	size_t rec_len;
};

/* Look up an entry by normalized DN. 0 or -ENOENT / -EBADMSG (corrupt). */
int lfe_store_get(struct lfe_store_reader *r, const char *ndn, size_t ndn_len,
		  struct lfe_entry_view *e);

/* The record a bind reads for a normalized DN (record.h format): with the
 * bind index (format 2) the index's small record (the DN, userPassword and
 * the account-lock attributes, nothing else), else the entry's own. Valid
 * like lfe_store_get's. 0, -ENOENT, -EBADMSG. */
int lfe_store_get_bind(struct lfe_store_reader *r, const char *ndn, size_t ndn_len,
		       const uint8_t **rec, size_t *rec_len);

/* Iterate the attributes of an entry: *cursor starts at 0; returns 1 and
 * fills a (values in vals[0..min(n,cap)), a->n_vals = n), 0 at the end,
 * or -EBADMSG. */
int lfe_entry_next_attr(const struct lfe_entry_view *e, size_t *cursor,
			struct lfe_ldap_attr *a, struct lfe_bytes *vals, uint32_t cap);

/* Values of one attribute type (case-insensitive name). Returns the count
 * (may exceed cap) or 0 when absent. */
uint32_t lfe_entry_get(const struct lfe_entry_view *e, const char *type, size_t type_len,
		       struct lfe_bytes *vals, uint32_t cap);

/* The same from the value at index `first` on (a window, filter.h): values
 * first.. into vals[0..min(n - first, cap)); returns the count n. */
uint32_t lfe_entry_get_from(const struct lfe_entry_view *e, const char *type, size_t type_len,
			    uint32_t first, struct lfe_bytes *vals, uint32_t cap);

/* The entry as a source of attributes walked in place (ldap/msg.h), for
 * the session's selection and encoder; valid while ev is. */
void lfe_entry_source(const struct lfe_entry_view *ev, struct lfe_ldap_entry *e);

/* Index lookup: for each DN with an attr value whose index key is value's
 * (lfe_attr_rule: every entry the filter item (attr=value) matches, and
 * possibly more: evaluate the filter on each), call fn. fn returns 0 to go
 * on, non-zero to stop. Returns 0, fn's non-zero value when it stopped,
 * -ENOTSUP when attr has no index on this reader (never declared, or
 * dropped since the store was opened), or another -errno. */
int lfe_store_index_each(struct lfe_store_reader *r, const char *attr,
			 const uint8_t *value, size_t len,
			 int (*fn)(void *ctx, const char *ndn, size_t ndn_len), void *ctx);

/* How many DNs lfe_store_index_each would visit (0 when none): for the
 * planner. 0, -ENOTSUP as above, or -errno. */
int lfe_store_index_count(struct lfe_store_reader *r, const char *attr, const uint8_t *value,
			  size_t len, uint64_t *count);

/* The same, only for the DNs that sort after `after` (after_len 0: all):
 * a search resumed in a later transaction goes on where it stopped. */
int lfe_store_index_each_after(struct lfe_store_reader *r, const char *attr,
			       const uint8_t *value, size_t len, const char *after,
			       size_t after_len,
			       int (*fn)(void *ctx, const char *ndn, size_t ndn_len), void *ctx);

/* Presence and substring lookups (the planner's): a key names one DN list
 * of attr's index of that kind (-ENOTSUP when attr has no index of the
 * kind on this reader). pres_key: the key of (attr=*). sub_pick: of the
 * keys a substring piece (where: LFE_SUB_INITIAL, ANY or FINAL, as in the
 * filter) yields, the one listing the fewest DNs, into key (cap
 * LFE_STORE_SUBKEY_MAX), its length in *klen, its count in *count; 1 when
 * the piece yields no key (shorter than 3 characters in the middle, empty),
 * else 0. Every entry the piece matches is in the list; evaluate each. */
#define LFE_STORE_SUBKEY_MAX 6u
enum { LFE_SUB_INITIAL, LFE_SUB_ANY, LFE_SUB_FINAL };
size_t lfe_store_index_pres_key(uint8_t *key);
int lfe_store_index_sub_pick(struct lfe_store_reader *r, const char *attr, int where,
			     const uint8_t *piece, size_t len, uint8_t *key, size_t *klen,
			     uint64_t *count);
int lfe_store_index_count_key(struct lfe_store_reader *r, const char *attr, unsigned kind,
			      const uint8_t *key, size_t klen, uint64_t *count);
int lfe_store_index_each_key_after(struct lfe_store_reader *r, const char *attr,
				   unsigned kind, const uint8_t *key, size_t klen,
				   const char *after, size_t after_len,
				   int (*fn)(void *ctx, const char *ndn, size_t ndn_len),
				   void *ctx);

/* Verify a simple bind, first phase: look the DN up and check pw against
 * its fast userPassword values, inside the reader's transaction.
 *   0        a value matched;
 *   -EACCES  no match (wrong password; an unknown DN after the same work
 *            as a wrong password on the real entry its lookup lands on,
 *            which never answers success; an entry without a password or
 *            an empty password after a dummy verification of the bind
 *            scheme that costs what a real entry costs);
 *   -EAGAIN  a slow scheme is involved: *job holds copies of the entry's
 *            slow values (for an unknown DN those of the entry its lookup
 *            landed on, marked to fail; or the dummy value, for the other
 *            cases above when the bind scheme is slow); the caller runs lfe_bind_job_run()
 *            elsewhere (a verifier thread), with no second lookup, and
 *            wipes the job;
 *   other negative errno on a store error.
 * job may be NULL: slow checks then run here (tools and tests only: a
 * worker core must never). pw_flags: LFE_PW_* of pwscheme.h. */
struct lfe_bind_job;
int lfe_store_verify_bind(struct lfe_store_reader *r, const char *ndn, size_t ndn_len,
			  const uint8_t *pw, size_t pw_len, unsigned pw_flags,
			  struct lfe_bind_job *job);

/* What lfe_store_verify_bind did on this reader (for tests and
 * benchmarks; plain counters, never reset). records_read: entry records
 * whose userPassword was read; decoys: of which for an unknown DN (the
 * real record its lookup landed on, see store_bind.c); dummies: verifications
 * against the dummy value (empty password, entry without a usable
 * userPassword, empty store). An unknown DN and a wrong password both read
 * one record. */
struct lfe_store_reader_stats {
	uint64_t records_read;
	uint64_t decoys;
	uint64_t dummies;
};
const struct lfe_store_reader_stats *lfe_store_reader_stats(const struct lfe_store_reader *r);

/* The password-policy verdict (ppolicy.h) of the last lfe_store_verify_bind
 * on this reader that answered 0 or refused a matching password for the
 * policy (EXPIRED: -EACCES); LFE_PP_OK for every other answer. For a slow
 * scheme the verdict travels in the job (lfe_bind_job.pp). Grace logins
 * here count the record's pwdGraceUseTime values only: the caller
 * subtracts those it counted itself (lfe_pp_grace_spend). `timed` is
 * true when the verdict can change with the clock alone (a policy with
 * pwdMaxAge and a pwdChangedTime): such a success must not be cached. */
struct lfe_pp_verdict;
const struct lfe_pp_verdict *lfe_store_reader_ppolicy(const struct lfe_store_reader *r,
						      bool *timed);

/* The default password policy entry's DN (slapd's olcPPolicyDefault, which
 * the provider does not publish): the policy of an entry without
 * pwdPolicySubentry. Kept in meta; NULL or "" removes it. Readers opened
 * afterwards use it. Writer only. -EINVAL for a DN that does not parse. */
int lfe_store_set_ppolicy_default(struct lfe_store *st, const char *dn);

/* Scheme of the dummy verification (above): NULL or "" → the store's
 * default (lfe_store_set_default_scheme, kept in meta), else e.g.
 * "{ARGON2}" (the daemon's [store] default_scheme). A dummy value of that
 * scheme is hashed here once, with the scheme's default cost parameters
 * (for a slow scheme this call costs one slow hash). lfe_store_open and
 * lfe_store_init already set it from meta. Returns 0, -EINVAL (not
 * "{NAME}") or -ENOTSUP (a scheme this build cannot verify). Not while
 * readers verify binds: call it before starting them. */
int lfe_store_set_bind_scheme(struct lfe_store *st, const char *scheme);

/* ---- writer (ldapfectl) ---- */

/* Put or replace an entry. dn is as written by the user (it is normalized
 * here); attrs include objectClass and userPassword values. -EINVAL when
 * the DN is outside the suffix or malformed. */
int lfe_store_put(struct lfe_store *st, struct lfe_bytes dn,
		  const struct lfe_ldap_attr *attrs, uint32_t n_attrs, bool replace);
int lfe_store_del(struct lfe_store *st, const char *dn, size_t len);
/* Replace userPassword with one already hashed value: an administrator's
 * password change, as slapd and its ppolicy overlay make it. now (seconds
 * since the epoch) is written as modifyTimestamp; and when a password
 * policy applies to the entry (its pwdPolicySubentry, else the store's
 * default policy, either present in the store) or the entry has a
 * pwdChangedTime, also as pwdChangedTime (the expiry clock starts again,
 * and the daemon's grace count, keyed by it, with it), pwdGraceUseTime is
 * removed, and pwdReset becomes TRUE when the policy says pwdMustChange
 * (the user must change what an administrator set), else is removed. The
 * entry's index entries follow (modifyTimestamp may be indexed). -ENOENT,
 * -EINVAL (empty hash, a time before 1970 or after 9999), -EROFS. */
int lfe_store_set_password(struct lfe_store *st, const char *dn, size_t len,
			   const char *hashed, size_t hashed_len, int64_t now);

/* Batch writes (import): everything between begin and commit lands
 * atomically; abort drops it all. Inside a batch, put/del use the batch's
 * transaction. */
int lfe_store_batch_begin(struct lfe_store *st);
int lfe_store_batch_commit(struct lfe_store *st);
void lfe_store_batch_abort(struct lfe_store *st);

/* Make (or remake) the bind index from "entries" in one write transaction
 * and raise a format 1 store to 2 (format 1 builds then refuse it; a
 * format 3 store stays 3): for a store made by a format 1 build. Readers that open the store afterwards
 * use it. A rebuild draws a new key. -EBUSY inside a batch. */
int lfe_store_bind_index_build(struct lfe_store *st);

/* ---- declared indexes (writer; format 3) ----
 * add: index attr (any spelling; stored under its canonical name), built
 * from every entry in one transaction (-EEXIST, -EINVAL secret or bad
 * name, -ENOSPC LFE_STORE_MAX_INDEX reached, -EPROTO format below 3: run
 * lfe_store_upgrade). del: drop it (-ENOENT). Readers opened before see an
 * added index after they reopen the store, and refuse a dropped one
 * (-ENOTSUP) from their next snapshot. Not in a batch (-EBUSY). A failure
 * leaves st unusable for writes: close it. */
int lfe_store_index_add(struct lfe_store *st, const char *attr);
int lfe_store_index_del(struct lfe_store *st, const char *attr);
/* The kinds of an index (slapd's eq, pres, sub), kept with its declaration
 * in meta "index" ("cn" eq; "cn:eps" eq, pres and sub), all in its one
 * "idx.<attr>" database: equality keys as index_key makes them, the
 * presence key "\0\1", substring keys "\0\2" + I|A|F + up to 3
 * characters (store_write.c, sub_keys). add_kind adds the kinds not yet there
 * (-EEXIST when none is new; -EOPNOTSUPP sub on an integer or DN type, which
 * have no substring rule), building only those; del_kind drops the kinds
 * given (-ENOENT none there), the whole index with its last kind. add is
 * add_kind(EQ), del del_kind(ALL). */
#define LFE_INDEX_EQ   1u
#define LFE_INDEX_PRES 2u
#define LFE_INDEX_SUB  4u
#define LFE_INDEX_ALL  7u
int lfe_store_index_add_kind(struct lfe_store *st, const char *attr, unsigned kinds);
int lfe_store_index_del_kind(struct lfe_store *st, const char *attr, unsigned kinds);
struct lfe_store_index {
	char attr[LFE_STORE_INDEX_NAME_MAX];
	unsigned rule;          /* enum lfe_match_rule (ldap/attr.h) */
	unsigned kinds;         /* LFE_INDEX_EQ|PRES|SUB */
	uint64_t keys;          /* (key, DN) pairs */
	uint64_t bytes;         /* pages the index holds */
};
/* Fills up to cap, returns how many the store declares, or -errno. */
int lfe_store_index_list(struct lfe_store *st, struct lfe_store_index *out, unsigned cap);

/* Convert a format 1 or 2 store to format 3 in one transaction (format 1
 * first gets its bind index, in its own): the default indexes built, the
 * format raised. -EALREADY at format 3. Stop writers first; a daemon keeps
 * serving its old snapshot's indexes and uses the new ones once restarted. */
int lfe_store_upgrade(struct lfe_store *st);

struct lfe_store_info {
	uint32_t format_version;
	uint64_t entries;
	uint64_t map_bytes_used;
	char suffix[1024];              /* normalized */
	char suffix_orig[1024];         /* as given to lfe_store_init */
	uint64_t last_txnid;            /* LMDB's last committed transaction */
	int64_t last_change;            /* its time (unix s; data.mdb's mtime), 0 unknown */
	bool bind_index;                /* format 3: binds read the bind index */
	char ppolicy_default[1025];     /* normalized DN, "" none */
};
int lfe_store_info(struct lfe_store *st, struct lfe_store_info *info);

/* Scheme of the dummy verification (default "{SSHA512}") of an entry
 * without a usable userPassword, an empty password or an empty store (an
 * unknown DN reads a real entry instead, see lfe_store_verify_bind): set
 * it to the scheme most entries use so all paths cost the same. Kept
 * in meta; readers pick it up when they open the store. Writer only. */
int lfe_store_set_default_scheme(struct lfe_store *st, const char *scheme);

/* Sync cookie of the last directory sync (ldapfectl sync), kept in meta.
 * get returns its length, -ENOENT when none was set, -ENOSPC. */
#define LFE_STORE_COOKIE_MAX 4096u
int lfe_store_sync_cookie_set(struct lfe_store *st, const uint8_t *cookie, size_t len);
ssize_t lfe_store_sync_cookie_get(struct lfe_store *st, uint8_t *out, size_t cap);

/* ---- directory sync (ldapfectl sync) ----
 * Writer only, like every call above: inside a batch these join it, so a
 * change, the consumer's state and the cookie commit together. */

/* The consumer's own key-value state in meta (the entryUUID → DN map, the
 * status record), apart from the store's keys. Keys 1..LFE_STORE_SYNC_KEY_MAX
 * bytes, values up to LFE_STORE_SYNC_VAL_MAX. get reads the open batch (its
 * own changes included) or a fresh snapshot; it returns the value length,
 * -ENOENT, or -ENOSPC when cap is too small. del returns -ENOENT when absent. */
#define LFE_STORE_SYNC_KEY_MAX 256u
#define LFE_STORE_SYNC_VAL_MAX 8192u
int lfe_store_sync_put(struct lfe_store *st, const void *key, size_t klen,
		       const void *val, size_t vlen);
int lfe_store_sync_del(struct lfe_store *st, const void *key, size_t klen);
ssize_t lfe_store_sync_get(struct lfe_store *st, const void *key, size_t klen,
			   void *out, size_t cap);

/* Walk every entry in DN-key order, in the open batch (its changes
 * included) or a snapshot. fn gets the normalized DN and the record, both
 * valid only during the call; it must not write to the store; non-zero
 * stops the walk and is returned. Other errors: -errno of the walk. */
typedef int (*lfe_store_each_fn)(void *ctx, const char *ndn, size_t ndn_len,
				 const uint8_t *rec, size_t rec_len);
int lfe_store_each(struct lfe_store *st, lfe_store_each_fn fn, void *ctx);

/* The same walk in a reader's transaction (one snapshot; any thread that
 * owns the reader, writer or read-only store alike). ndn and rec point into
 * the map and stay valid until lfe_store_reader_renew()/_free() of r, so a
 * caller may keep them across the walk (export sorts them, then writes). */
int lfe_store_reader_each(struct lfe_store_reader *r, lfe_store_each_fn fn, void *ctx);

/* Inside a batch only (-EINVAL otherwise): drop every entry, every index
 * key and the sync key-value state (not the cookie). Readers keep seeing
 * the old content until the batch commits: a full refresh swaps at once. */
int lfe_store_clear(struct lfe_store *st);

#endif
