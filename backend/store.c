/* backend/store.c — the LMDB directory store: open, meta, init, close,
 * format upgrade, settings kept in meta, info (interface in store.h, the
 * parts of the store in store_int.h, record format in record.h).
 */
#include "backend/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/store_int.h"
#include "backend/pwscheme.h"
#include "backend/record.h"

#define LFE_STORE_DEFAULT_MAP   (4ull << 30)
#define LFE_STORE_MAX_READERS   512u
#define BYTES(lit)              ((struct lfe_bytes){ (const uint8_t *)(lit), sizeof(lit) - 1 })

#define LEGACY_INDEXES "uid,mail,cn,objectclass"
#define DEFAULT_INDEXES \
	"uid,uidnumber,gidnumber,cn,mail,memberuid,member,uniquemember,memberof,objectclass,entryuuid"

/* Messages that name both versions must be static (store.h); format
 * versions are small, so a table covers every one we can meet. */
_Static_assert(LFE_STORE_FORMAT_VERSION == 3, "update version_msgs");
#define VMSG(n) "store format version " #n ", this build reads format versions 1 to 3"
static const char *const version_msgs[] = {
	VMSG(0), VMSG(1), VMSG(2), VMSG(3), VMSG(4), VMSG(5), VMSG(6), VMSG(7),
	VMSG(8), VMSG(9), VMSG(10), VMSG(11), VMSG(12), VMSG(13), VMSG(14), VMSG(15),
};
#undef VMSG

/* ---- open / init / close ---- */

int lfe_store_meta_get(MDB_txn *txn, struct lfe_store *st, const char *key, MDB_val *v)
{
	MDB_val k = mval(key, strlen(key));

	return map_err(mdb_get(txn, st->dbi[DB_META], &k, v));
}

int lfe_store_meta_put(MDB_txn *txn, struct lfe_store *st, const char *key,
		       const void *p, size_t len)
{
	MDB_val k = mval(key, strlen(key)), v = mval(p, len);

	return map_err(mdb_put(txn, st->dbi[DB_META], &k, &v, 0));
}

/* Draw a 16-byte SipHash key into meta (name) and key: the bind index's
 * (META_BINDKEY, drawn when the index is made) or that of long index
 * values' hashes (META_IDXKEY, format 3, drawn when the indexes are made:
 * init, upgrade). */
int lfe_store_meta_new_key(MDB_txn *txn, struct lfe_store *st, const char *name, uint64_t key[2])
{
	uint8_t k[16];

	if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k))
		return -EIO;
	int rc = lfe_store_meta_put(txn, st, name, k, sizeof(k));
	if (rc == 0) {
		key[0] = ld_u64(k);
		key[1] = ld_u64(k + 8);
	}
	explicit_bzero(k, sizeof(k));
	return rc;
}

static int copy_str(char *dst, size_t cap, MDB_val v)
{
	if (v.mv_size >= cap)
		return -EBADMSG;
	memcpy(dst, v.mv_data, v.mv_size);
	dst[v.mv_size] = '\0';
	return 0;
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
	rc = lfe_store_meta_get(txn, st, META_FORMAT, &v);
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
	rc = lfe_store_meta_get(txn, st, META_SUFFIX, &v);
	if (rc == 0)
		rc = copy_str(st->suffix, sizeof(st->suffix), v);
	if (rc == 0) {
		st->suffix_len = v.mv_size;
		rc = lfe_store_meta_get(txn, st, META_SUFFIX_ORIG, &v);
	}
	if (rc == 0)
		rc = copy_str(st->suffix_orig, sizeof(st->suffix_orig), v);
	if (rc < 0) {
		*msg = "store meta has no valid suffix";
		rc = rc == -ENOENT ? -EBADMSG : rc;
		goto out;
	}
	rc = lfe_store_meta_get(txn, st, META_PWDEFAULT, &v);
	if (rc == 0 && copy_str(st->pw_default, sizeof(st->pw_default), v) < 0)
		rc = -EBADMSG;
	if (rc < 0 && rc != -ENOENT) {
		*msg = "store meta has an invalid default password scheme";
		goto out;
	}
	rc = lfe_store_meta_get(txn, st, META_PPDEFAULT, &v);
	if (rc == 0 && copy_str(st->pp_default, sizeof(st->pp_default), v) < 0)
		rc = -EBADMSG;
	if (rc < 0 && rc != -ENOENT) {
		*msg = "store meta has an invalid default password policy DN";
		goto out;
	}
	st->pp_default_len = rc == 0 ? v.mv_size : 0;
	st->fmt = fmt;
	if (fmt >= 3) {
		rc = lfe_store_meta_get(txn, st, META_INDEX, &v);
		if (rc == 0)
			rc = lfe_store_index_list_set(st, v.mv_data, v.mv_size);
		if (rc == 0) {
			rc = lfe_store_meta_get(txn, st, META_IDXKEY, &v);
			if (rc == 0 && v.mv_size != 16)
				rc = -EBADMSG;
		}
		if (rc == 0) {
			st->idx_key[0] = ld_u64(v.mv_data);
			st->idx_key[1] = ld_u64((const uint8_t *)v.mv_data + 8);
		}
	} else {
		rc = lfe_store_index_list_set(st, LEGACY_INDEXES, strlen(LEGACY_INDEXES));
	}
	if (rc < 0) {
		*msg = "store meta has no valid index list or index key";
		rc = rc == -ENOENT ? -EBADMSG : rc;
		goto out;
	}
	for (int i = 0; i < N_DB; i++) {
		if (i == DB_META || (i == DB_BIND && fmt < 2) || (i < N_IDX && (unsigned)i >= st->n_idx))
			continue;
		rc = i < N_IDX ? lfe_store_idx_dbi_open(txn, st, (unsigned)i, 0) :
		     map_err(mdb_dbi_open(txn, DB_NAME(i), 0, &st->dbi[i]));
		if (rc < 0) {
			*msg = "store lacks one of its databases";
			rc = rc == -ENOENT ? -EBADMSG : rc;
			goto out;
		}
	}
	if (fmt >= 2) {
		rc = lfe_store_meta_get(txn, st, META_BINDKEY, &v);
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
 * part back from the start: a bind at 1M users then costs what it costs on
 * a huge=within_size tmpfs, ~15 % less than on 4 KiB entries (bench_store,
 * docs/BENCHMARKS.md); /proc/PID/smaps shows FilePmdMapped for data.mdb. */
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

/* Sharing the store (docs/ARCHITECTURE.md "Running unprivileged"): the writer
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
int lfe_store_write_begin(struct lfe_store *st, MDB_txn **txn)
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
	rc = lfe_store_index_list_set(st, DEFAULT_INDEXES, strlen(DEFAULT_INDEXES));
	if (rc < 0)
		return rc;
	rc = lfe_store_write_begin(st, &txn);
	if (rc < 0)
		return rc;
	for (int i = 0; i < N_DB && rc == 0; i++) {
		if (i < N_IDX && (unsigned)i >= st->n_idx)
			continue;
		rc = i < N_IDX ? lfe_store_idx_dbi_open(txn, st, (unsigned)i, MDB_CREATE) :
		     map_err(mdb_dbi_open(txn, DB_NAME(i), MDB_CREATE, &st->dbi[i]));
	}
	if (rc == 0) {
		MDB_val v;

		rc = lfe_store_meta_get(txn, st, META_FORMAT, &v);
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
		rc = lfe_store_meta_put(txn, st, META_FORMAT, fmt, sizeof(fmt));
	if (rc == 0)
		rc = lfe_store_meta_put(txn, st, META_SUFFIX, nsuf, (size_t)nl);
	if (rc == 0)
		rc = lfe_store_meta_put(txn, st, META_SUFFIX_ORIG, suffix, slen);
	if (rc == 0)
		rc = lfe_store_meta_put(txn, st, META_ENTRIES, cnt, sizeof(cnt));
	if (rc == 0)
		rc = lfe_store_bix_new_key(st, txn);
	if (rc == 0)
		rc = lfe_store_meta_put(txn, st, META_INDEX, st->idx_list, strlen(st->idx_list));
	if (rc == 0)
		rc = lfe_store_meta_new_key(txn, st, META_IDXKEY, st->idx_key);
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
	rc = lfe_store_index_txn_begin(st, &txn);
	if (rc < 0)
		return rc;
	if (st->fmt >= 3) {
		mdb_txn_abort(txn);
		return -EALREADY;
	}
	/* The legacy indexes are among the defaults: emptied and refilled. */
	rc = lfe_store_index_list_set(st, DEFAULT_INDEXES, strlen(DEFAULT_INDEXES));
	for (unsigned i = 0; rc == 0 && i < st->n_idx; i++) {
		rc = lfe_store_idx_dbi_open(txn, st, i, MDB_CREATE);
		if (rc == 0)
			rc = map_err(mdb_drop(txn, st->dbi[i], 0));
	}
	if (rc == 0)
		rc = lfe_store_meta_new_key(txn, st, META_IDXKEY, st->idx_key);
	if (rc == 0)
		rc = lfe_store_fill_indexes(st, txn, ~(uint64_t)0, ~0u);
	if (rc == 0)
		rc = lfe_store_meta_put(txn, st, META_INDEX, st->idx_list, strlen(st->idx_list));
	if (rc == 0)
		rc = lfe_store_meta_put(txn, st, META_FORMAT, fmt3, sizeof(fmt3));
	rc = lfe_store_index_txn_end(st, txn, rc);
	if (rc == 0)
		st->fmt = 3;
	return rc;
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
	rc = lfe_store_meta_get(txn, st, META_ENTRIES, &v);
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
	rc = lfe_store_wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = lfe_store_meta_put(txn, st, META_PWDEFAULT, scheme, len);
	rc = lfe_store_wtxn_end(st, txn, rc, true);
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
	rc = lfe_store_wtxn_begin(st, &txn);
	if (rc < 0)
		return rc;
	rc = lfe_store_meta_put(txn, st, META_PPDEFAULT, nd, (size_t)nl);
	rc = lfe_store_wtxn_end(st, txn, rc, true);
	if (rc == 0) {
		memcpy(st->pp_default, nd, (size_t)nl);
		st->pp_default[nl] = '\0';
		st->pp_default_len = (size_t)nl;
	}
	return rc;
}
