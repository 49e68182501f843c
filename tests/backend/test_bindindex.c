/* tests/backend/test_bindindex.c — the store's bind index (format 2, store.c
 * "bind index"): after every kind of write (put, replace, set_password, del,
 * batches committed and aborted, clear and refill, rename as the sync
 * consumer does it, lock attributes) every bind answers what the entries
 * say; a slot holding another DN (a hash collision) never answers for the
 * bind DN and turns into a marker that sends binds to "entries"; the index
 * has exactly the entries' members; lfe_store_get_bind finds present DNs
 * only; a reader that lives through writes which move the index's leaves
 * (its leaf hints go stale, store.c "Leaf hints") still answers right, and
 * so does a reader of a store opened with LFE_STORE_PRELOAD. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lmdb.h>

#include "backend/pwscheme.h"
#include "common/siphash.h"
#include "backend/store.h"
#include "tests/check.h"

#define N_USERS 24
static char root[] = "/tmp/lfe-test-bindindex.XXXXXX";
static char path[300];

/* The model: each user's current password (digit of "pw-N-V"), 0 = no
 * entry; locked: pwdAccountLockedTime present. */
static int cur[N_USERS];
static bool locked[N_USERS];

static struct lfe_bytes S(const char *s)
{
	return (struct lfe_bytes){ (const uint8_t *)s, strlen(s) };
}

static void dn_of(int u, char *dn, size_t cap)
{
	snprintf(dn, cap, "uid=u%02d,dc=example,dc=com", u);
}

static void pw_of(int u, int v, char *pw, size_t cap)
{
	snprintf(pw, cap, "pw-%d-%d", u, v);
}

static int put_user(struct lfe_store *st, int u, int v, bool lock, bool replace)
{
	char dn[64], pw[32], hashed[128], uid[16];
	struct lfe_bytes oc = S("person"), uv, pv, lv = S("000001010000Z");

	dn_of(u, dn, sizeof(dn));
	pw_of(u, v, pw, sizeof(pw));
	snprintf(uid, sizeof(uid), "u%02d", u);
	uv = S(uid);
	if (lfe_pw_hash("{SSHA}", (const uint8_t *)pw, strlen(pw), hashed, sizeof(hashed)) <= 0)
		return -EIO;
	pv = S(hashed);
	struct lfe_ldap_attr a[] = {
		{ .type = S("objectClass"), .vals = &oc, .n_vals = 1 },
		{ .type = S("uid"), .vals = &uv, .n_vals = 1 },
		{ .type = S("userPassword"), .vals = &pv, .n_vals = 1 },
		{ .type = S("pwdAccountLockedTime"), .vals = &lv, .n_vals = 1 },
	};
	int rc = lfe_store_put(st, S(dn), a, lock ? 4 : 3, replace);
	return rc;
}

static int set_pw(struct lfe_store *st, int u, int v)
{
	char dn[64], pw[32], hashed[128];

	dn_of(u, dn, sizeof(dn));
	pw_of(u, v, pw, sizeof(pw));
	if (lfe_pw_hash("{SSHA}", (const uint8_t *)pw, strlen(pw), hashed, sizeof(hashed)) <= 0)
		return -EIO;
	return lfe_store_set_password(st, dn, strlen(dn), hashed, strlen(hashed), (int64_t)time(NULL));
}

static int del_user(struct lfe_store *st, int u)
{
	char dn[64];

	dn_of(u, dn, sizeof(dn));
	return lfe_store_del(st, dn, strlen(dn));
}

static int bind(struct lfe_store_reader *r, int u, int v)
{
	char dn[64], pw[32];

	dn_of(u, dn, sizeof(dn));
	pw_of(u, v, pw, sizeof(pw));
	return lfe_store_verify_bind(r, dn, strlen(dn), (const uint8_t *)pw, strlen(pw), 0, NULL);
}

/* Every user, every password version 1..4, against the model, through a
 * fresh snapshot. */
static void check_model(struct lfe_store *st, const char *what)
{
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	int bad = 0;

	CHECK(r != NULL);
	if (!r)
		return;
	for (int u = 0; u < N_USERS; u++) {
		for (int v = 1; v <= 4; v++) {
			int want = cur[u] == v && !locked[u] ? 0 : -EACCES;
			if (v == 1) {
				/* lfe_store_get_bind: the record of a present DN only */
				char dn[64];
				const uint8_t *rec;
				size_t rl;
				dn_of(u, dn, sizeof(dn));
				int grc = lfe_store_get_bind(r, dn, strlen(dn), &rec, &rl);
				if (grc != (cur[u] ? 0 : -ENOENT)) {
					fprintf(stderr, "%s: get_bind u%02d: %d\n", what, u, grc);
					bad++;
				}
			}
			int rc = bind(r, u, v);
			if (rc != want) {
				fprintf(stderr, "%s: u%02d pw v%d: %d, expected %d\n", what, u, v, rc, want);
				bad++;
			}
		}
	}
	check_failures += bad;
	lfe_store_reader_free(r);
}

/* Raw LMDB on the closed store: the bind key, and the count of "bind". */
static void raw_open(MDB_env **env, MDB_txn **txn, MDB_dbi *bind, MDB_dbi *meta, bool rw)
{
	CHECK(mdb_env_create(env) == 0);
	mdb_env_set_maxdbs(*env, 16);
	CHECK(mdb_env_open(*env, path, 0, 0640) == 0);
	CHECK(mdb_txn_begin(*env, NULL, rw ? 0 : MDB_RDONLY, txn) == 0);
	CHECK(mdb_dbi_open(*txn, "bind", 0, bind) == 0);
	CHECK(mdb_dbi_open(*txn, "meta", 0, meta) == 0);
}

static MDB_val hkey(MDB_txn *txn, MDB_dbi meta, int u, uint8_t kb[8])
{
	MDB_val k = { 8, (void *)"bind.key" }, v;
	uint64_t key[2] = { 0, 0 };
	char dn[64];

	if (mdb_get(txn, meta, &k, &v) == 0 && v.mv_size == 16) {
		const uint8_t *p = v.mv_data;
		for (int i = 7; i >= 0; i--) {
			key[0] = key[0] << 8 | p[i];
			key[1] = key[1] << 8 | p[8 + i];
		}
	}
	dn_of(u, dn, sizeof(dn));
	uint64_t h = lfe_siphash24(key, dn, strlen(dn));
	for (int i = 7; i >= 0; i--, h >>= 8)
		kb[i] = (uint8_t)h;
	return (MDB_val){ 8, kb };
}

static size_t bind_count(void)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi bind, meta;
	MDB_stat ms = { 0 };

	raw_open(&env, &txn, &bind, &meta, false);
	mdb_stat(txn, bind, &ms);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return ms.ms_entries;
}


/* One reader kept across writes, renewed as a worker renews it: its leaf
 * hints point at pages the writer has since copied, freed and reused. The
 * answers must not care. Enough users for the hints to exist (store.c:
 * BIX_HINTS_MIN_LEAVES, 256 leaves; checked at the end). */
#define N_MANY 6000
static void many_binds(struct lfe_store_reader *r, const int *v, const char *what)
{
	char dn[64], pw[32];
	int bad = 0;

	for (int u = 0; u < N_MANY; u++) {
		snprintf(dn, sizeof(dn), "uid=m%04d,dc=example,dc=com", u);
		for (int w = 1; w <= 2; w++) {
			snprintf(pw, sizeof(pw), "pw-%d-%d", u, w);
			int rc = lfe_store_verify_bind(r, dn, strlen(dn), (const uint8_t *)pw,
						       strlen(pw), 0, NULL);
			bad += rc != (v[u] == w ? 0 : -EACCES);
		}
		const uint8_t *rec;
		size_t rl;
		bad += lfe_store_get_bind(r, dn, strlen(dn), &rec, &rl) != (v[u] ? 0 : -ENOENT);
	}
	if (bad)
		fprintf(stderr, "%s: %d wrong answers\n", what, bad);
	check_failures += bad;
}

static int put_many(struct lfe_store *st, int u, int v, bool replace)
{
	char dn[64], pw[32], hashed[128];
	struct lfe_bytes oc = S("person"), pv;

	snprintf(dn, sizeof(dn), "uid=m%04d,dc=example,dc=com", u);
	snprintf(pw, sizeof(pw), "pw-%d-%d", u, v);
	if (lfe_pw_hash("{SSHA}", (const uint8_t *)pw, strlen(pw), hashed, sizeof(hashed)) <= 0)
		return -EIO;
	pv = S(hashed);
	struct lfe_ldap_attr a[] = {
		{ .type = S("objectClass"), .vals = &oc, .n_vals = 1 },
		{ .type = S("userPassword"), .vals = &pv, .n_vals = 1 },
	};
	return lfe_store_put(st, S(dn), a, 2, replace);
}

static void test_stale_hints(void)
{
	static int v[N_MANY];
	char dir[320];

	snprintf(dir, sizeof(dir), "%s/many", root);
	struct lfe_store *st = lfe_store_open(dir, 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ(lfe_store_init(st, "dc=example,dc=com"), 0);
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	for (int u = 0; u < N_MANY; u++) {
		CHECK_EQ(put_many(st, u, 1, false), 0);
		v[u] = 1;
	}
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	if (!r) {
		lfe_store_close(st);
		return;
	}
	many_binds(r, v, "hints: first pass");
	many_binds(r, v, "hints: second pass (hints in place)");
	/* Three rounds of writes: every third user a new password, every
	 * fifth deleted then put back in a later round; each round in its own
	 * batch, then a renew. Leaves are copied on write, freed pages reused
	 * by the next round: the hints of the first passes now point at pages
	 * that hold other keys, or nothing the index uses. */
	for (int round = 0; round < 3; round++) {
		CHECK_EQ(lfe_store_batch_begin(st), 0);
		for (int u = round; u < N_MANY; u += 3) {
			if (u % 5 == 0 && v[u]) {
				char dn[64];
				snprintf(dn, sizeof(dn), "uid=m%04d,dc=example,dc=com", u);
				CHECK_EQ(lfe_store_del(st, dn, strlen(dn)), 0);
				v[u] = 0;
			} else {
				int nv = v[u] == 1 ? 2 : 1;
				CHECK_EQ(put_many(st, u, nv, v[u] != 0), 0);
				v[u] = nv;
			}
		}
		CHECK_EQ(lfe_store_batch_commit(st), 0);
		CHECK_EQ(lfe_store_reader_renew(r), 0);
		many_binds(r, v, "hints: after writes");
	}
	lfe_store_reader_free(r);
	/* A daemon-style open with LFE_STORE_PRELOAD (the file dropped from
	 * the page cache and read back) beside the writer: same answers. */
	struct lfe_store *ro = lfe_store_open(dir, LFE_STORE_RDONLY | LFE_STORE_PRELOAD, 0, NULL, NULL);
	CHECK(ro != NULL);
	r = ro ? lfe_store_reader_new(ro) : NULL;
	CHECK(r != NULL);
	if (r)
		many_binds(r, v, "preloaded reader");
	lfe_store_reader_free(r);
	lfe_store_close(ro);
	lfe_store_close(st);
	/* The store was big enough for leaf hints (store.c: 256 leaves). */
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi bix;
	MDB_stat ms = { 0 };
	if (mdb_env_create(&env) == 0) {
		mdb_env_set_maxdbs(env, 16);
		if (mdb_env_open(env, dir, MDB_RDONLY, 0) == 0 &&
		    mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0) {
			if (mdb_dbi_open(txn, "bind", 0, &bix) == 0)
				(void)mdb_stat(txn, bix, &ms);
			mdb_txn_abort(txn);
		}
		mdb_env_close(env);
	}
	CHECK(ms.ms_leaf_pages >= 256);
}

int main(void)
{
	struct lfe_store_info info;

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/s", root);
	struct lfe_store *st = lfe_store_open(path, 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return 1;
	CHECK_EQ(lfe_store_init(st, "dc=example,dc=com"), 0);
	CHECK(lfe_store_info(st, &info) == 0 && info.format_version == 3 && info.bind_index);

	/* put, one transaction each */
	for (int u = 0; u < 16; u++) {
		CHECK_EQ(put_user(st, u, 1, false, false), 0);
		cur[u] = 1;
	}
	check_model(st, "put");
	/* replace (a password change by modify), set_password, del */
	CHECK_EQ(put_user(st, 3, 2, false, true), 0);
	cur[3] = 2;
	CHECK_EQ(set_pw(st, 4, 3), 0);
	cur[4] = 3;
	CHECK_EQ(del_user(st, 5), 0);
	cur[5] = 0;
	CHECK_EQ(put_user(st, 3, 1, false, false), -EEXIST);   /* refused: nothing changes */
	check_model(st, "replace/set_password/del");
	/* lock attributes travel in the index: a locked account fails with its
	 * right password, and binds again once unlocked */
	CHECK_EQ(put_user(st, 6, 1, true, true), 0);
	locked[6] = true;
	check_model(st, "locked");
	CHECK_EQ(put_user(st, 6, 2, false, true), 0);
	locked[6] = false;
	cur[6] = 2;
	check_model(st, "unlocked");
	/* a batch: puts, a password change, a delete, committed at once */
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	for (int u = 16; u < N_USERS; u++)
		CHECK_EQ(put_user(st, u, 1, false, false), 0);
	CHECK_EQ(set_pw(st, 0, 4), 0);
	CHECK_EQ(del_user(st, 1), 0);
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	for (int u = 16; u < N_USERS; u++)
		cur[u] = 1;
	cur[0] = 4;
	cur[1] = 0;
	check_model(st, "batch");
	/* an aborted batch leaves entries and index as they were (one
	 * transaction: a crash before commit is the same) */
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	CHECK_EQ(put_user(st, 1, 3, false, false), 0);
	CHECK_EQ(set_pw(st, 2, 4), 0);
	CHECK_EQ(del_user(st, 7), 0);
	lfe_store_batch_abort(st);
	check_model(st, "aborted batch");
	/* rename as the sync consumer applies it: delete and put in one batch */
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	CHECK_EQ(del_user(st, 8), 0);
	CHECK_EQ(put_user(st, 5, 2, false, false), 0);
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	cur[8] = 0;
	cur[5] = 2;
	check_model(st, "rename");
	/* a full refresh: clear and refill in one batch */
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	CHECK_EQ(lfe_store_clear(st), 0);
	for (int u = 0; u < N_USERS; u++) {
		cur[u] = u % 3 ? 3 : 0;
		locked[u] = false;
		if (cur[u])
			CHECK_EQ(put_user(st, u, cur[u], false, false), 0);
	}
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	check_model(st, "clear and refill");
	CHECK(lfe_store_info(st, &info) == 0);
	uint64_t entries = info.entries;
	lfe_store_close(st);
	CHECK_EQ(bind_count(), entries);   /* one key per entry, no more */

	/* A collision: u02's slot holds u04's value (as if u04 had u02's hash
	 * and had been written first). u02's bind must not be answered from
	 * it, not even with u04's password; a write of u02 then turns the slot
	 * into a marker and binds of that hash read "entries". */
	{
		MDB_env *env;
		MDB_txn *txn;
		MDB_dbi bind, meta;
		uint8_t k2[8], k4[8];
		MDB_val a, b;

		raw_open(&env, &txn, &bind, &meta, true);
		a = hkey(txn, meta, 2, k2);
		b = hkey(txn, meta, 4, k4);
		CHECK(mdb_get(txn, bind, &b, &b) == 0);
		CHECK(mdb_put(txn, bind, &a, &b, 0) == 0);
		CHECK(mdb_txn_commit(txn) == 0);
		mdb_env_close(env);
	}
	st = lfe_store_open(path, 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return 1;
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	CHECK_EQ(bind(r, 2, cur[2]), -EACCES);   /* the slot is u04's: not u02's answer */
	{
		const uint8_t *rec;
		size_t rl;
		CHECK_EQ(lfe_store_get_bind(r, "uid=u02,dc=example,dc=com", 25, &rec, &rl), -ENOENT);
	}
	CHECK_EQ(bind(r, 2, cur[4]), -EACCES);
	{
		char pw[32];
		pw_of(4, cur[4], pw, sizeof(pw));
		CHECK_EQ(lfe_store_verify_bind(r, "uid=u02,dc=example,dc=com", 25, (const uint8_t *)pw,
					       strlen(pw), 0, NULL), -EACCES);
	}
	lfe_store_reader_free(r);
	CHECK_EQ(put_user(st, 2, 4, false, true), 0);   /* sees u04 there: a marker */
	cur[2] = 4;
	check_model(st, "collision marker");
	CHECK_EQ(del_user(st, 2), 0);   /* the marker stays; entries say gone */
	cur[2] = 0;
	check_model(st, "collision marker, deleted");
	CHECK_EQ(put_user(st, 2, 1, false, false), 0);
	cur[2] = 1;
	check_model(st, "collision marker, back");
	lfe_store_close(st);

	test_stale_hints();

	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", root);
	return check_done();
}
