/* tests/backend/test_store_sync.c — the store calls of the sync consumer:
 * key-value state with the cookie in one batch (commit and abort), the entry
 * walk inside a batch, clear-and-refill seen atomically by a reader, and a
 * locked account refused by lfe_store_verify_bind like a wrong password. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pwscheme.h"
#include "backend/store.h"
#include "ldap/dn.h"
#include "tests/check.h"

static struct lfe_bytes S(const char *s)
{
	return (struct lfe_bytes){ (const uint8_t *)s, strlen(s) };
}

static char pw_hash[128];

/* uid=NAME,dc=example,dc=com with a password and optional lock attribute. */
static int put_user(struct lfe_store *st, const char *name, const char *lock_type,
		    const char *lock_val)
{
	char dn[128];
	struct lfe_bytes oc = S("inetOrgPerson"), uid = S(name), pw = S(pw_hash), lv;
	struct lfe_ldap_attr a[4] = {
		{ S("objectClass"), 1, &oc }, { S("uid"), 1, &uid }, { S("userPassword"), 1, &pw },
	};
	uint32_t n = 3;

	if (lock_type) {
		lv = S(lock_val);
		a[n++] = (struct lfe_ldap_attr){ S(lock_type), 1, &lv };
	}
	snprintf(dn, sizeof(dn), "uid=%s,dc=example,dc=com", name);
	return lfe_store_put(st, S(dn), a, n, true);
}

static int bind(struct lfe_store_reader *r, const char *name, const char *pw)
{
	char dn[128], ndn[LFE_DN_MAX + 1];
	ssize_t nl;

	snprintf(dn, sizeof(dn), "uid=%s,dc=example,dc=com", name);
	nl = lfe_dn_normalize((const uint8_t *)dn, strlen(dn), ndn, sizeof(ndn));
	if (nl < 0 || lfe_store_reader_renew(r) < 0)
		return -EIO;
	return lfe_store_verify_bind(r, ndn, (size_t)nl, (const uint8_t *)pw, strlen(pw), 0, NULL);
}

static int count_fn(void *ctx, const char *ndn, size_t len, const uint8_t *rec, size_t rl)
{
	(void)ndn; (void)len; (void)rec; (void)rl;
	++*(int *)ctx;
	return 0;
}

static int stop_fn(void *ctx, const char *ndn, size_t len, const uint8_t *rec, size_t rl)
{
	(void)ctx; (void)rec; (void)rl;
	return len > 4 && memcmp(ndn, "uid=", 4) == 0 ? 7 : 0;
}

static int walk_count(struct lfe_store *st)
{
	int n = 0;

	return lfe_store_each(st, count_fn, &n) == 0 ? n : -1;
}

static void test_kv_and_cookie(struct lfe_store *st)
{
	uint8_t buf[64];

	/* One batch: a change, consumer state and the cookie land together. */
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	CHECK_EQ(put_user(st, "ann", NULL, NULL), 0);
	CHECK_EQ(lfe_store_sync_put(st, "id1", 3, "uid=ann", 7), 0);
	CHECK_EQ(lfe_store_sync_get(st, "id1", 3, buf, sizeof(buf)), 7);   /* sees its own write */
	CHECK_EQ(lfe_store_sync_cookie_set(st, (const uint8_t *)"c1", 2), 0);
	CHECK_EQ(walk_count(st), 2);                                        /* suffix + ann */
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	CHECK_EQ(lfe_store_sync_cookie_get(st, buf, sizeof(buf)), 2);
	CHECK_EQ(lfe_store_sync_get(st, "id1", 3, buf, sizeof(buf)), 7);
	CHECK(memcmp(buf, "uid=ann", 7) == 0);
	CHECK_EQ(lfe_store_sync_get(st, "id1", 3, buf, 3), -ENOSPC);
	CHECK_EQ(lfe_store_sync_get(st, "nope", 4, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ(lfe_store_sync_get(st, "", 0, buf, sizeof(buf)), -EINVAL);

	/* Aborted: neither the change, the state nor the cookie moved. */
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	CHECK_EQ(put_user(st, "bob", NULL, NULL), 0);
	CHECK_EQ(lfe_store_sync_del(st, "id1", 3), 0);
	CHECK_EQ(lfe_store_sync_del(st, "id1", 3), -ENOENT);   /* not poisoning */
	CHECK_EQ(lfe_store_sync_cookie_set(st, (const uint8_t *)"c2", 2), 0);
	lfe_store_batch_abort(st);
	CHECK_EQ(lfe_store_sync_cookie_get(st, buf, sizeof(buf)), 2);
	CHECK(memcmp(buf, "c1", 2) == 0);
	CHECK_EQ(lfe_store_sync_get(st, "id1", 3, buf, sizeof(buf)), 7);
	CHECK_EQ(walk_count(st), 2);
	CHECK_EQ(lfe_store_each(st, stop_fn, NULL), 7);
	CHECK_EQ(lfe_store_clear(st), -EINVAL);                 /* batch only */
}

static void test_clear_swap(struct lfe_store *st)
{
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	struct lfe_store_info info;
	uint8_t buf[64];

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(bind(r, "ann", "secret"), 0);
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	CHECK_EQ(lfe_store_clear(st), 0);
	CHECK_EQ(walk_count(st), 0);
	CHECK_EQ(lfe_store_sync_get(st, "id1", 3, buf, sizeof(buf)), -ENOENT);
	CHECK_EQ(put_user(st, "carl", NULL, NULL), 0);
	/* The reader still sees the old content while the refresh runs. */
	CHECK_EQ(bind(r, "ann", "secret"), 0);
	CHECK_EQ(bind(r, "carl", "secret"), -EACCES);
	CHECK_EQ(lfe_store_sync_cookie_set(st, (const uint8_t *)"c3", 2), 0);
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	CHECK_EQ(bind(r, "ann", "secret"), -EACCES);
	CHECK_EQ(bind(r, "carl", "secret"), 0);
	CHECK_EQ(lfe_store_info(st, &info), 0);
	CHECK_EQ(info.entries, 1);
	CHECK_EQ(lfe_store_sync_cookie_get(st, buf, sizeof(buf)), 2);  /* cookie kept */
	lfe_store_reader_free(r);
}

static void test_locked_bind(struct lfe_store *st)
{
	struct lfe_store_reader *r = lfe_store_reader_new(st);

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(put_user(st, "dora", "pwdAccountLockedTime", "000001010000Z"), 0);
	CHECK_EQ(bind(r, "dora", "secret"), -EACCES);
	CHECK_EQ(bind(r, "dora", "wrong"), -EACCES);
	CHECK_EQ(put_user(st, "dora", "nsAccountLock", "TRUE"), 0);
	CHECK_EQ(bind(r, "dora", "secret"), -EACCES);
	CHECK_EQ(put_user(st, "dora", "shadowExpire", "-1"), 0);
	CHECK_EQ(bind(r, "dora", "secret"), 0);
	CHECK_EQ(put_user(st, "dora", "pwdEndTime", "20000101000000Z"), 0);
	CHECK_EQ(bind(r, "dora", "secret"), -EACCES);
	CHECK_EQ(put_user(st, "dora", NULL, NULL), 0);           /* unlocked */
	CHECK_EQ(bind(r, "dora", "secret"), 0);
	lfe_store_reader_free(r);
}

int main(void)
{
	char root[] = "/tmp/lfe-test-sync.XXXXXX", cmd[64];
	struct lfe_store *st;

	if (!mkdtemp(root) ||
	    lfe_pw_hash("{SSHA}", (const uint8_t *)"secret", 6, pw_hash, sizeof(pw_hash)) <= 0) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	st = lfe_store_open(root, 0, 0, NULL, NULL);
	CHECK(st != NULL);
	if (st) {
		struct lfe_bytes oc = S("domain");
		struct lfe_ldap_attr a = { S("objectClass"), 1, &oc };

		CHECK_EQ(lfe_store_init(st, "dc=example,dc=com"), 0);
		CHECK_EQ(lfe_store_put(st, S("dc=example,dc=com"), &a, 1, false), 0);
		test_kv_and_cookie(st);
		test_clear_swap(st);
		test_locked_bind(st);
		lfe_store_close(st);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	return check_done();
}
