/* tests/backend/test_bindjob.c — two-phase bind verification: the store
 * answers fast checks at once and hands slow ones (real or dummy) out as a
 * job that runs with no store at all. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lmdb.h>

#include "backend/bindjob.h"
#include "backend/pwscheme.h"
#include "backend/store.h"
#include "tests/check.h"

static char root[] = "/tmp/lfe-test-bindjob.XXXXXX";

static struct lfe_bytes S(const char *s)
{
	return (struct lfe_bytes){ (const uint8_t *)s, strlen(s) };
}

/* uid=<uid>,dc=example,dc=com with the given userPassword values (may be 0). */
static int put_user(struct lfe_store *st, const char *uid, const char *const *pws, uint32_t n)
{
	char dn[128];
	struct lfe_bytes oc = S("person"), u = S(uid), pv[8];
	struct lfe_ldap_attr a[3] = {
		{ .type = S("objectClass"), .vals = &oc, .n_vals = 1 },
		{ .type = S("uid"), .vals = &u, .n_vals = 1 },
		{ .type = S("userPassword"), .vals = pv, .n_vals = n },
	};
	for (uint32_t i = 0; i < n; i++)
		pv[i] = S(pws[i]);
	snprintf(dn, sizeof(dn), "uid=%s,dc=example,dc=com", uid);
	return lfe_store_put(st, S(dn), a, n ? 3 : 2, false);
}

static void hash(const char *scheme, const char *pw, char *out, size_t cap)
{
	ssize_t n = lfe_pw_hash(scheme, (const uint8_t *)pw, strlen(pw), out, cap);
	CHECK(n > 0);
	if (n <= 0)
		out[0] = '\0';
}

static int verify(struct lfe_store_reader *r, const char *dn, const char *pw, struct lfe_bind_job *job)
{
	return lfe_store_verify_bind(r, dn, strlen(dn), (const uint8_t *)pw, strlen(pw), 0, job);
}

static int run(const struct lfe_bind_job *job, const char *pw)
{
	return lfe_bind_job_run(job, (const uint8_t *)pw, strlen(pw), 0);
}


/* Make the store at path look like one of a format 1 build (meta
 * "format" = 1; its "bind" database is then never opened). */
static void to_format1(const char *path)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { 6, (void *)"format" }, v = { 4, (void *)"\1\0\0\0" };

	CHECK(mdb_env_create(&env) == 0);
	mdb_env_set_maxdbs(env, 16);
	CHECK(mdb_env_open(env, path, 0, 0640) == 0);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	CHECK(mdb_dbi_open(txn, "meta", 0, &dbi) == 0);
	CHECK(mdb_put(txn, dbi, &k, &v, 0) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
}

/* Stores whose users all take one path: an unknown DN takes it too,
 * whatever the dummy's scheme (the dummy's scheme decided it before). */
static void test_one_path_stores(const char *crypt_pw, const char *ssha_pw)
{
	char path[300];
	struct lfe_bind_job job;

	for (int slow = 0; slow <= 1; slow++) {
		snprintf(path, sizeof(path), "%s/%s", root, slow ? "slowonly" : "fastonly");
		struct lfe_store *st = lfe_store_open(path, 0, 64u << 20, NULL, NULL);
		CHECK(st != NULL);
		if (!st)
			return;
		CHECK_EQ(lfe_store_init(st, "dc=example,dc=com"), 0);
		/* The dummy's scheme is the other class on purpose. */
		CHECK_EQ(lfe_store_set_default_scheme(st, slow ? "{SSHA}" : "{CRYPT}"), 0);
		const char *pw = slow ? crypt_pw : ssha_pw;
		CHECK_EQ(put_user(st, "u1", &pw, 1), 0);
		CHECK_EQ(put_user(st, "u2", &pw, 1), 0);
		CHECK_EQ(put_user(st, "u3", &pw, 1), 0);
		struct lfe_store_reader *r = lfe_store_reader_new(st);
		const struct lfe_store_reader_stats *rs = lfe_store_reader_stats(r);
		for (int i = 0; i < 8; i++) {
			char dn[64];
			snprintf(dn, sizeof(dn), "uid=nobody%d,dc=example,dc=com", i);
			CHECK_EQ(verify(r, dn, "secret", &job), slow ? -EAGAIN : -EACCES);
			CHECK(!slow || (job.locked && !job.dummy && job.n_vals == 1 &&
					memcmp(job.buf, crypt_pw, job.len[0]) == 0));
			CHECK_EQ(run(&job, "secret"), -EACCES);   /* the users' own password */
			CHECK_EQ(verify(r, "uid=u2,dc=example,dc=com", "wrong", &job),
				 slow ? -EAGAIN : -EACCES);
		}
		CHECK(rs->records_read == 16 && rs->decoys == 8 && rs->dummies == 0);
		lfe_bind_job_wipe(&job);
		lfe_store_reader_free(r);
		lfe_store_close(st);
	}
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

int main(void)
{
	char path[300], crypt_pw[256], ssha_pw[256], crypt_other[256];
	struct lfe_bind_job job, j_unknown, j_nopw, j_empty, j_slow, j_dual;

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/s", root);
	hash("{CRYPT}", "secret", crypt_pw, sizeof(crypt_pw));
	hash("{CRYPT}", "other", crypt_other, sizeof(crypt_other));
	hash("{SSHA}", "secret", ssha_pw, sizeof(ssha_pw));

	struct lfe_store *st = lfe_store_open(path, 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return 1;
	CHECK_EQ(lfe_store_init(st, "dc=example,dc=com"), 0);
	CHECK_EQ(put_user(st, "fast", (const char *const[]){ ssha_pw }, 1), 0);
	CHECK_EQ(put_user(st, "slow", (const char *const[]){ crypt_pw }, 1), 0);
	CHECK_EQ(put_user(st, "dual", (const char *const[]){ ssha_pw, crypt_other }, 2), 0);
	CHECK_EQ(put_user(st, "nopw", NULL, 0), 0);
	CHECK_EQ(put_user(st, "many", (const char *const[]){ crypt_other, crypt_other, crypt_other,
							     crypt_other, crypt_pw }, 5), 0);

	/* A new store has the bind index (format 2): an unknown DN lands on a
	 * real entry drawn by the keyed hash of the DN, and costs what a wrong
	 * password costs there: one record read, that entry's path (inline,
	 * or a job marked to fail), the same entry every time, never a
	 * success, whichever entry it is (the key is random: every property
	 * below holds for each landing). */
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	const struct lfe_store_reader_stats *rs = lfe_store_reader_stats(r);
	memset(&job, 0x5a, sizeof(job));
	CHECK_EQ(verify(r, "uid=fast,dc=example,dc=com", "wrong", &job), -EACCES);
	CHECK(rs->records_read == 1 && rs->decoys == 0 && rs->dummies == 0);
	static const char *const ghosts[] = {
		"uid=ghost,dc=example,dc=com", "uid=elk,dc=example,dc=com", "uid=zz,dc=example,dc=com",
		"uid=a,dc=example,dc=com", "uid=fast2,dc=example,dc=com", "uid=Fast,dc=example,dc=com",
	};
	for (size_t i = 0; i < sizeof(ghosts) / sizeof(ghosts[0]); i++) {
		struct lfe_bind_job j2;
		uint64_t rd = rs->records_read, dc = rs->decoys;
		int rc = verify(r, ghosts[i], "secret", &job);
		CHECK(rc == -EACCES || rc == -EAGAIN);
		CHECK(rs->records_read == rd + 1 && rs->decoys == dc + 1);
		CHECK_EQ(verify(r, ghosts[i], "secret", &j2), rc);
		if (rc == -EAGAIN) {
			CHECK(job.locked && memcmp(&job, &j2, sizeof(job)) == 0);
			CHECK_EQ(run(&job, "secret"), -EACCES);
			CHECK_EQ(run(&job, "other"), -EACCES);
		}
		CHECK_EQ(verify(r, ghosts[i], "secret", NULL), -EACCES);
		CHECK_EQ(verify(r, ghosts[i], "other", NULL), -EACCES);
	}
	/* A cleartext user ("uid=clear"): binds; an unknown DN with its value
	 * still fails wherever it lands. */
	CHECK_EQ(put_user(st, "clear", (const char *const[]){ "secret" }, 1), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(lfe_store_verify_bind(r, "uid=cla,dc=example,dc=com", 25, (const uint8_t *)"secret",
				       6, LFE_PW_ALLOW_CLEARTEXT, NULL), -EACCES);
	CHECK_EQ(lfe_store_verify_bind(r, "uid=clear,dc=example,dc=com", 27, (const uint8_t *)"secret",
				       6, LFE_PW_ALLOW_CLEARTEXT, &job), 0);
	CHECK_EQ(lfe_store_del(st, "uid=clear,dc=example,dc=com", 27), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	/* Fast default ({SSHA512} of a new store): an entry without a
	 * password gets the dummy, inline. */
	uint64_t dummies = rs->dummies;
	CHECK_EQ(verify(r, "uid=nopw,dc=example,dc=com", "secret", &job), -EACCES);
	CHECK(rs->dummies == dummies + 1);
	CHECK_EQ(verify(r, "uid=fast,dc=example,dc=com", "secret", &job), 0);
	CHECK_EQ(verify(r, "uid=fast,dc=example,dc=com", "wrong", &job), -EACCES);
	/* A slow user: a job with a copy of the value, whatever the password. */
	CHECK_EQ(verify(r, "uid=slow,dc=example,dc=com", "wrong", &j_slow), -EAGAIN);
	CHECK(!j_slow.dummy && j_slow.n_vals == 1 && j_slow.len[0] == strlen(crypt_pw) &&
	      memcmp(j_slow.buf, crypt_pw, j_slow.len[0]) == 0);
	/* Fast value matches inline; only the slow one can match "other". */
	CHECK_EQ(verify(r, "uid=dual,dc=example,dc=com", "secret", &job), 0);
	CHECK_EQ(verify(r, "uid=dual,dc=example,dc=com", "other", &j_dual), -EAGAIN);
	CHECK(j_dual.n_vals == 1);
	/* At most LFE_BIND_JOB_VALS values are carried (the fifth is not). */
	CHECK_EQ(verify(r, "uid=many,dc=example,dc=com", "secret", &job), -EAGAIN);
	CHECK_EQ(job.n_vals, LFE_BIND_JOB_VALS);
	CHECK_EQ(run(&job, "other"), 0);
	lfe_bind_job_wipe(&job);
	CHECK(all_zero(&job, sizeof(job)));
	lfe_store_reader_free(r);

	/* A slow store default: the dummy of an entry without userPassword
	 * and of an empty password is a job too (same path as a real slow
	 * entry), holding a value of that scheme with its default cost
	 * parameters. An unknown DN still takes its landing entry's path. */
	CHECK_EQ(lfe_store_set_default_scheme(st, "{ARGON2}"), 0);
	r = lfe_store_reader_new(st);
	CHECK_EQ(verify(r, "uid=nopw,dc=example,dc=com", "secret", &j_nopw), -EAGAIN);
	CHECK(j_nopw.dummy && j_nopw.n_vals == 1 &&
	      strncmp(j_nopw.buf, "{ARGON2}$argon2id$v=19$m=19456,t=2,p=1$", 39) == 0);
	CHECK_EQ(verify(r, "uid=slow,dc=example,dc=com", "", &j_empty), -EAGAIN);
	CHECK(j_empty.dummy);
	/* The fast user is still answered inline. */
	CHECK_EQ(verify(r, "uid=fast,dc=example,dc=com", "secret", &job), 0);
	/* NULL job: both phases here (tools). */
	CHECK_EQ(verify(r, "uid=slow,dc=example,dc=com", "secret", NULL), 0);
	CHECK_EQ(verify(r, "uid=nopw,dc=example,dc=com", "secret", NULL), -EACCES);
	lfe_store_reader_free(r);

	/* The daemon's override, refused when unknown; "" = the meta default. */
	CHECK_EQ(lfe_store_set_bind_scheme(st, "{MD5X}"), -ENOTSUP);
	CHECK_EQ(lfe_store_set_bind_scheme(st, "SSHA"), -EINVAL);
	CHECK_EQ(lfe_store_set_bind_scheme(st, "{SSHA}"), 0);
	r = lfe_store_reader_new(st);
	CHECK_EQ(verify(r, "uid=nopw,dc=example,dc=com", "secret", &job), -EACCES);
	lfe_store_reader_free(r);
	CHECK_EQ(lfe_store_set_bind_scheme(st, "{CRYPT}"), 0);
	r = lfe_store_reader_new(st);
	CHECK_EQ(verify(r, "uid=nopw,dc=example,dc=com", "secret", &job), -EAGAIN);
	CHECK(job.dummy && strncmp(job.buf, "{CRYPT}$6$", 10) == 0);
	lfe_store_reader_free(r);
	CHECK_EQ(lfe_store_set_bind_scheme(st, ""), 0);
	r = lfe_store_reader_new(st);
	CHECK_EQ(verify(r, "uid=nopw,dc=example,dc=com", "secret", &job), -EAGAIN);
	CHECK(strncmp(job.buf, "{ARGON2}", 8) == 0);
	lfe_store_reader_free(r);

	/* A store of a format 1 build: no bind index, the range lookup runs on
	 * "entries" and lands on the next DN (or the last entry). */
	lfe_store_close(st);
	to_format1(path);
	st = lfe_store_open(path, 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return 1;
	struct lfe_store_info info;
	CHECK(lfe_store_info(st, &info) == 0 && info.format_version == 1 && !info.bind_index);
	CHECK_EQ(lfe_store_set_bind_scheme(st, "{SSHA}"), 0);
	r = lfe_store_reader_new(st);
	rs = lfe_store_reader_stats(r);
	/* uid=elk lands on uid=fast: inline, like a wrong password there. */
	CHECK_EQ(verify(r, "uid=elk,dc=example,dc=com", "secret", &job), -EACCES);
	CHECK(rs->records_read == 1 && rs->decoys == 1 && rs->dummies == 0);
	/* uid=ghost lands on uid=many: its slow values, marked to fail (the
	 * old dummy answered it inline, at a fraction of that cost). */
	CHECK_EQ(verify(r, "uid=ghost,dc=example,dc=com", "secret", &j_unknown), -EAGAIN);
	CHECK(!j_unknown.dummy && j_unknown.locked && j_unknown.n_vals == LFE_BIND_JOB_VALS &&
	      j_unknown.len[0] == strlen(crypt_other) &&
	      memcmp(j_unknown.buf, crypt_other, j_unknown.len[0]) == 0);
	CHECK_EQ(verify(r, "uid=ghost,dc=example,dc=com", "secret", &job), -EAGAIN);
	CHECK(memcmp(&job, &j_unknown, sizeof(job)) == 0);   /* the same DN, the same entry */
	/* After the last entry: the last one (uid=slow). */
	CHECK_EQ(verify(r, "uid=zz,dc=example,dc=com", "secret", &job), -EAGAIN);
	CHECK(job.locked && job.n_vals == 1 && memcmp(job.buf, crypt_pw, job.len[0]) == 0);
	CHECK_EQ(run(&job, "secret"), -EACCES);
	CHECK_EQ(verify(r, "uid=zz,dc=example,dc=com", "secret", NULL), -EACCES);
	CHECK_EQ(verify(r, "uid=fast,dc=example,dc=com", "secret", NULL), 0);
	CHECK(rs->records_read == 6 && rs->decoys == 5);
	/* Writes to a format 1 store keep it one; then the upgrade builds the
	 * bind index (and the declared indexes). */
	CHECK_EQ(put_user(st, "late", (const char *const[]){ ssha_pw }, 1), 0);
	CHECK(lfe_store_info(st, &info) == 0 && info.format_version == 1);
	CHECK_EQ(lfe_store_upgrade(st), 0);
	CHECK(lfe_store_info(st, &info) == 0 &&
	      info.format_version == LFE_STORE_FORMAT_VERSION && info.bind_index);
	lfe_store_reader_free(r);
	r = lfe_store_reader_new(st);
	CHECK_EQ(verify(r, "uid=late,dc=example,dc=com", "secret", NULL), 0);
	CHECK_EQ(verify(r, "uid=slow,dc=example,dc=com", "secret", NULL), 0);
	CHECK_EQ(verify(r, "uid=dual,dc=example,dc=com", "other", NULL), 0);
	CHECK_EQ(verify(r, "uid=nopw,dc=example,dc=com", "secret", NULL), -EACCES);
	CHECK_EQ(verify(r, "uid=ghost,dc=example,dc=com", "secret", NULL), -EACCES);
	lfe_store_reader_free(r);
	lfe_store_close(st);
	test_one_path_stores(crypt_pw, ssha_pw);

	/* The second phase needs no store: it is closed now. */
	CHECK_EQ(run(&j_slow, "secret"), 0);
	CHECK_EQ(run(&j_slow, "wrong"), -EACCES);
	CHECK_EQ(run(&j_dual, "other"), 0);
	CHECK_EQ(run(&j_unknown, "secret"), -EACCES);
	CHECK_EQ(run(&j_unknown, "other"), -EACCES);   /* uid=many's own password */
	CHECK_EQ(run(&j_unknown, "lfe-dummy-bind"), -EACCES);   /* the dummy's own password */
	CHECK_EQ(run(&j_nopw, "secret"), -EACCES);
	CHECK_EQ(run(&j_empty, ""), -EACCES);
	/* A bare "{SCHEME}" dummy (schemes this build does not hash). */
	struct lfe_bind_job bare = { .dummy = true };
	CHECK_EQ(lfe_bind_job_add(&bare, "{PBKDF2_SHA256}", 15), 0);
	CHECK_EQ(run(&bare, "secret"), -EACCES);
	/* Capacity. */
	struct lfe_bind_job cap = { 0 };
	char big[LFE_BIND_JOB_BYTES + 1];
	memset(big, 'x', sizeof(big));
	CHECK_EQ(lfe_bind_job_add(&cap, big, sizeof(big)), -ENOSPC);
	CHECK_EQ(lfe_bind_job_add(&cap, big, LFE_BIND_JOB_BYTES), 0);
	CHECK_EQ(lfe_bind_job_add(&cap, big, 1), -ENOSPC);

	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup failed\n");
	return check_done();
}
