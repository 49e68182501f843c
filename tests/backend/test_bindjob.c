/* tests/backend/test_bindjob.c — two-phase bind verification: the store
 * answers fast checks at once and hands slow ones (real or dummy) out as a
 * job that runs with no store at all. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/bindjob.h"
#include "backend/pwscheme.h"
#include "backend/store.h"

static int failures;

#define CHECK(c) do { if (!(c)) { failures++; \
	fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); } } while (0)
#define CHECK_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { failures++; fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", \
	__FILE__, __LINE__, #a, a_, b_); } } while (0)

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

	/* An unknown DN costs what a wrong password costs on the real entry
	 * its lookup lands on (the next DN in key order, or the last entry):
	 * one record read, that entry's scheme and path, never a success.
	 * uid=elk lands on uid=fast: inline, like a wrong password there. */
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	const struct lfe_store_reader_stats *rs = lfe_store_reader_stats(r);
	memset(&job, 0x5a, sizeof(job));
	CHECK_EQ(verify(r, "uid=fast,dc=example,dc=com", "wrong", &job), -EACCES);
	CHECK(rs->records_read == 1 && rs->decoys == 0 && rs->dummies == 0);
	CHECK_EQ(verify(r, "uid=elk,dc=example,dc=com", "secret", &job), -EACCES);
	CHECK(rs->records_read == 2 && rs->decoys == 1 && rs->dummies == 0);
	/* uid=ghost lands on uid=many: slow values, so a job like a wrong
	 * password of uid=many gets (the old dummy answered it inline, at a
	 * fraction of that cost), with its values, marked to fail. */
	CHECK_EQ(verify(r, "uid=ghost,dc=example,dc=com", "secret", &j_unknown), -EAGAIN);
	CHECK(rs->records_read == 3 && rs->decoys == 2 && rs->dummies == 0);
	CHECK(!j_unknown.dummy && j_unknown.locked && j_unknown.n_vals == LFE_BIND_JOB_VALS &&
	      j_unknown.len[0] == strlen(crypt_other) &&
	      memcmp(j_unknown.buf, crypt_other, j_unknown.len[0]) == 0);
	CHECK_EQ(verify(r, "uid=ghost,dc=example,dc=com", "secret", &job), -EAGAIN);
	CHECK(memcmp(&job, &j_unknown, sizeof(job)) == 0);   /* the same DN, the same entry */
	CHECK_EQ(run(&job, "other"), -EACCES);               /* uid=many's own password */
	/* After the last entry: the last one (uid=slow). Its own password
	 * fails too, in a job and inline (NULL job). */
	CHECK_EQ(verify(r, "uid=zz,dc=example,dc=com", "secret", &job), -EAGAIN);
	CHECK(job.locked && job.n_vals == 1 && memcmp(job.buf, crypt_pw, job.len[0]) == 0);
	CHECK_EQ(run(&job, "secret"), -EACCES);
	CHECK_EQ(verify(r, "uid=zz,dc=example,dc=com", "secret", NULL), -EACCES);
	CHECK_EQ(verify(r, "uid=elk,dc=example,dc=com", "secret", NULL), -EACCES);
	/* A cleartext neighbour ("uid=clear"): its own value presented for the
	 * unknown DN before it still fails; the entry itself binds. */
	CHECK_EQ(put_user(st, "clear", (const char *const[]){ "secret" }, 1), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(lfe_store_verify_bind(r, "uid=cla,dc=example,dc=com", 25, (const uint8_t *)"secret",
				       6, LFE_PW_ALLOW_CLEARTEXT, &job), -EACCES);
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
	CHECK_EQ(verify(r, "uid=elk,dc=example,dc=com", "secret", &job), -EACCES);
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

	lfe_store_close(st);

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
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
