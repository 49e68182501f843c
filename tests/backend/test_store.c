/* tests/backend/test_store.c — the LMDB store: init/open, format version,
 * put/get/replace/del, indexes, suffix, batches, bind verification, reader
 * renewal, map full, read-only, corrupt records. */
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/bindjob.h"
#include "backend/pwscheme.h"
#include "backend/record.h"
#include "backend/store.h"
#include "tests/check.h"

#define SUFFIX "dc=Example,dc=COM"
#define NSUFFIX "dc=example,dc=com"
/* The clock a password change is made at (2026-12-06T07:00:00Z). */
#define NOW 1796540400
#define NOW_GT "20261206070000Z"

static char root[] = "/tmp/lfe-test-store.XXXXXX";

static char *dir(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	return path;
}

static struct lfe_bytes S(const char *s)
{
	return (struct lfe_bytes){ (const uint8_t *)s, strlen(s) };
}

/* An entry built from "type: value" lines, values of one type adjacent. */
struct entry {
	struct lfe_ldap_attr attrs[16];
	struct lfe_bytes vals[64];
	uint32_t n;
};

static void entry_build(struct entry *e, const char *const *lines)
{
	uint32_t nv = 0;

	memset(e, 0, sizeof(*e));
	for (; *lines; lines++) {
		const char *colon = strchr(*lines, ':');
		struct lfe_bytes type = { (const uint8_t *)*lines, (size_t)(colon - *lines) };
		struct lfe_ldap_attr *a = e->n ? &e->attrs[e->n - 1] : NULL;

		if (!a || a->type.len != type.len || memcmp(a->type.p, type.p, type.len)) {
			a = &e->attrs[e->n++];
			a->type = type;
			a->vals = &e->vals[nv];
		}
		e->vals[nv++] = S(colon + 2);
		a->n_vals++;
	}
}

static int put(struct lfe_store *st, const char *dn, bool replace, const char *const *lines)
{
	struct entry e;

	entry_build(&e, lines);
	return lfe_store_put(st, S(dn), e.attrs, e.n, replace);
}

static int collect(void *ctx, const char *ndn, size_t len)
{
	char *out = ctx;
	size_t used = strlen(out);

	snprintf(out + used, 1024 - used, "%s%.*s", used ? "|" : "", (int)len, ndn);
	return 0;
}

/* Index lookup as a string of DNs joined by '|' (sorted: LMDB dup order). */
static const char *lookup(struct lfe_store_reader *r, const char *attr, const char *val)
{
	static char out[1024];
	int rc;

	out[0] = '\0';
	rc = lfe_store_index_each(r, attr, (const uint8_t *)val, strlen(val), collect, out);
	if (rc < 0)
		snprintf(out, sizeof(out), "error %d", rc);
	return out;
}

static uint64_t count(struct lfe_store *st)
{
	struct lfe_store_info info;

	return lfe_store_info(st, &info) == 0 ? info.entries : UINT64_MAX;
}

static char ssha_secret[128], ssha_other[128], crypt_secret[256];

static const char *const ann[] = {
	"objectClass: top", "objectClass: person", "objectClass: inetOrgPerson",
	"uid: ann", "cn: Ann Example", "sn: Example", "mail: Ann@Example.com",
	"userPassword: {SSHA}placeholder", NULL,
};
static const char *const bob[] = {
	"objectClass: top", "objectClass: inetOrgPerson", "uid: bob", "cn: Bob",
	"cn: Robert", "mail: bob@example.com", NULL,
};

static void test_open_init(void)
{
	struct lfe_store *st;
	struct lfe_store_info info;
	const char *msg = NULL;
	size_t len;
	int err = 0;

	st = lfe_store_open(dir("absent"), LFE_STORE_RDONLY, 0, &err, &msg);
	CHECK(st == NULL);
	CHECK_EQ(err, -ENOENT);
	CHECK(msg != NULL);

	st = lfe_store_open(dir("init"), 0, 0, &err, &msg);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ(put(st, "uid=ann,dc=example,dc=com", false, ann), -ENOENT);
	CHECK(lfe_store_reader_new(st) == NULL);
	lfe_store_close(st);

	/* Opened once by a writer but never initialised: readers refuse it. */
	err = 0;
	st = lfe_store_open(dir("init"), LFE_STORE_RDONLY, 0, &err, &msg);
	CHECK(st == NULL);
	CHECK_EQ(err, -ENOENT);

	st = lfe_store_open(dir("init"), 0, 0, &err, &msg);
	CHECK_EQ(lfe_store_init(st, "not a dn"), -EINVAL);
	CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
	CHECK_EQ(lfe_store_init(st, SUFFIX), -EEXIST);
	CHECK(strcmp(lfe_store_suffix(st, &len), NSUFFIX) == 0);
	CHECK_EQ(len, strlen(NSUFFIX));
	CHECK_EQ(lfe_store_info(st, &info), 0);
	CHECK_EQ(info.format_version, LFE_STORE_FORMAT_VERSION);
	CHECK_EQ(info.entries, 0);
	CHECK(strcmp(info.suffix, NSUFFIX) == 0);
	CHECK(strcmp(info.suffix_orig, SUFFIX) == 0);
	CHECK(info.map_bytes_used > 0);
	CHECK_EQ(lfe_store_sync_cookie_get(st, (uint8_t *)info.suffix, 16), -ENOENT);
	CHECK_EQ(lfe_store_sync_cookie_set(st, (const uint8_t *)"rid=1,csn=abc", 13), 0);
	CHECK_EQ(lfe_store_set_default_scheme(st, "SSHA"), -EINVAL);
	CHECK_EQ(lfe_store_set_default_scheme(st, "{SSHA}"), 0);
	lfe_store_close(st);

	/* A second writer open finds it initialised; a reader open works. */
	st = lfe_store_open(dir("init"), 0, 0, &err, &msg);
	CHECK_EQ(lfe_store_init(st, SUFFIX), -EEXIST);
	lfe_store_close(st);
	st = lfe_store_open(dir("init"), LFE_STORE_RDONLY, 0, &err, &msg);
	CHECK(st != NULL);
	if (st) {
		char cookie[64];

		CHECK(strcmp(lfe_store_suffix(st, NULL), NSUFFIX) == 0);
		CHECK_EQ(lfe_store_sync_cookie_get(st, (uint8_t *)cookie, 4), -ENOSPC);
		CHECK_EQ(lfe_store_sync_cookie_get(st, (uint8_t *)cookie, sizeof(cookie)), 13);
		CHECK(memcmp(cookie, "rid=1,csn=abc", 13) == 0);
		CHECK_EQ(put(st, "uid=ann,dc=example,dc=com", false, ann), -EROFS);
		CHECK_EQ(lfe_store_del(st, "uid=ann,dc=example,dc=com", 25), -EROFS);
		CHECK_EQ(lfe_store_batch_begin(st), -EROFS);
		lfe_store_close(st);
	}
	lfe_store_close(NULL);
}

/* Rewrite one meta or entries value behind the store's back. */
static void raw_put(const char *path, const char *db, const char *key,
		    const void *val, size_t len)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { strlen(key), (void *)key }, v = { len, (void *)val };

	CHECK(mdb_env_create(&env) == 0);
	mdb_env_set_maxdbs(env, 8);
	CHECK(mdb_env_open(env, path, 0, 0640) == 0);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	CHECK(mdb_dbi_open(txn, db, 0, &dbi) == 0);
	CHECK(mdb_put(txn, dbi, &k, &v, 0) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
}

static void test_version_mismatch(void)
{
	static const struct { uint8_t v[4]; const char *found; } cases[] = {
		{ { 4, 0, 0, 0 }, "version 4" },
		{ { 0, 0, 0, 0 }, "version 0" },
		{ { 0, 1, 0, 0 }, "above 15" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lfe_store *st = lfe_store_open(dir("ver"), 0, 0, NULL, NULL);
		const char *msg = NULL;
		int err = 0;

		CHECK(st != NULL);
		if (!st)
			return;
		if (i == 0)
			CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
		lfe_store_close(st);
		raw_put(dir("ver"), "meta", "format", cases[i].v, 4);
		for (unsigned flags = 0; flags <= LFE_STORE_RDONLY; flags++) {
			st = lfe_store_open(dir("ver"), flags, 0, &err, &msg);
			CHECK(st == NULL);
			CHECK_EQ(err, -EPROTO);
			CHECK(msg && strstr(msg, cases[i].found) && strstr(msg, "versions 1 to 3"));
			lfe_store_close(st);
		}
		raw_put(dir("ver"), "meta", "format", (const uint8_t[]){ 3, 0, 0, 0 }, 4);
	}
	{
		struct lfe_store *st = lfe_store_open(dir("ver"), LFE_STORE_RDONLY, 0, NULL, NULL);

		CHECK(st != NULL);
		lfe_store_close(st);
	}
}

static void test_crud(struct lfe_store *st)
{
	static const char *const ann2[] = {
		"objectClass: top", "objectClass: person", "uid: anne", "cn: Anne Other",
		"mail: anne@example.com", "description: replaced", NULL,
	};
	static const char *const dup_type[] = { "cn: a", "sn: b", "CN: c", NULL };
	static const char *const oid_type[] = { "2.5.4.3: Oid Person", "uid: oid", NULL };
	static const struct { const char *dn; int rc; } refused[] = {
		{ "uid=x,dc=other,dc=com", -EINVAL },
		{ "uid=x,dc=example", -EINVAL },
		{ "dc=com", -EINVAL },
		{ "", -EINVAL },
		{ "garbage", -EINVAL },
		{ "uid=x,,dc=example,dc=com", -EINVAL },
	};
	struct lfe_store_reader *r;
	struct lfe_entry_view e;
	struct lfe_ldap_attr a;
	struct lfe_bytes vals[4];
	char big[700];
	size_t cur = 0;
	int n = 0, rc;

	CHECK_EQ(put(st, "uid=Ann,dc=Example,dc=com", false, ann), 0);
	CHECK_EQ(put(st, "uid=ann,dc=example,dc=com", false, ann), -EEXIST);
	CHECK_EQ(put(st, "UID=bob, DC=example, DC=com", false, bob), 0);
	CHECK_EQ(count(st), 2);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		CHECK_EQ(put(st, refused[i].dn, false, bob), refused[i].rc);
	CHECK_EQ(put(st, "cn=dup,dc=example,dc=com", false, dup_type), -EINVAL);
	/* An indexed value longer than a key could hold is indexed by its
	 * keyed hash (format 3), found like any other. */
	memset(big, 'x', sizeof(big));
	memcpy(big, "uid: ", 5);
	big[sizeof(big) - 1] = '\0';
	{
		const char *lines[] = { big, NULL };

		CHECK_EQ(put(st, "cn=long,dc=example,dc=com", false, lines), 0);
		r = lfe_store_reader_new(st);
		CHECK(r != NULL);
		if (r) {
			big[6] = 'X';   /* uid is caseIgnore */
			CHECK(!strcmp(lookup(r, "uid", big + 5), "cn=long,dc=example,dc=com"));
			big[7] = 'y';
			CHECK(!strcmp(lookup(r, "uid", big + 5), ""));
			lfe_store_reader_free(r);
		}
		CHECK_EQ(lfe_store_del(st, "cn=long,dc=example,dc=com", 25), 0);
	}
	CHECK_EQ(put(st, "cn=oid,dc=example,dc=com", false, oid_type), 0);
	CHECK_EQ(count(st), 3);

	r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(lfe_store_get(r, "uid=ann,dc=example,dc=com", 25, &e), 0);
	CHECK(e.dn.len == 25 && memcmp(e.dn.p, "uid=Ann,dc=Example,dc=com", 25) == 0);
	CHECK_EQ(e.n_attrs, 6);
	CHECK_EQ(lfe_entry_get(&e, "OBJECTCLASS", 11, vals, 2), 3);
	CHECK(vals[1].len == 6 && memcmp(vals[1].p, "person", 6) == 0);
	CHECK_EQ(lfe_entry_get(&e, "mail", 4, vals, 4), 1);
	CHECK(vals[0].len == 15 && memcmp(vals[0].p, "Ann@Example.com", 15) == 0);
	CHECK_EQ(lfe_entry_get(&e, "telephoneNumber", 15, vals, 4), 0);
	while ((rc = lfe_entry_next_attr(&e, &cur, &a, vals, 1)) == 1) {
		if (n == 0)
			CHECK(a.type.len == 11 && a.n_vals == 3 && vals[0].len == 3);
		n++;
	}
	CHECK_EQ(rc, 0);
	CHECK_EQ(n, 6);
	CHECK_EQ(lfe_store_get(r, "uid=nobody,dc=example,dc=com", 28, &e), -ENOENT);
	CHECK_EQ(lfe_store_get(r, "", 0, &e), -ENOENT);
	/* Types given as OIDs are stored under their names. */
	CHECK_EQ(lfe_store_get(r, "cn=oid,dc=example,dc=com", 24, &e), 0);
	CHECK_EQ(lfe_entry_get(&e, "cn", 2, vals, 4), 1);

	CHECK(!strcmp(lookup(r, "uid", "ann"), "uid=ann,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "UID", "  ANN "), "uid=ann,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "0.9.2342.19200300.100.1.1", "bob"), "uid=bob,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "mail", "ann@example.COM"), "uid=ann,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "cn", "ann  example"), "uid=ann,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "cn", "robert"), "uid=bob,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "commonName", "oid person"), "cn=oid,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "objectClass", "INETORGPERSON"),
		      "uid=ann,dc=example,dc=com|uid=bob,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "objectClass", "person"), "uid=ann,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "uid", "nobody"), ""));
	CHECK(!strcmp(lookup(r, "uid", "   "), ""));
	CHECK(!strcmp(lookup(r, "sn", "example"), "error -95"));

	/* Replace: old index entries go, new ones come, the count holds. */
	CHECK_EQ(put(st, "uid=ann,dc=example,dc=com", true, ann2), 0);
	CHECK_EQ(count(st), 3);
	CHECK(!strcmp(lookup(r, "uid", "ann"), "uid=ann,dc=example,dc=com"));
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK(!strcmp(lookup(r, "uid", "ann"), ""));
	CHECK(!strcmp(lookup(r, "uid", "anne"), "uid=ann,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "mail", "ann@example.com"), ""));
	CHECK(!strcmp(lookup(r, "cn", "anne other"), "uid=ann,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "objectClass", "inetorgperson"), "uid=bob,dc=example,dc=com"));
	CHECK_EQ(lfe_store_get(r, "uid=ann,dc=example,dc=com", 25, &e), 0);
	CHECK_EQ(lfe_entry_get(&e, "description", 11, vals, 4), 1);
	CHECK_EQ(lfe_entry_get(&e, "sn", 2, vals, 4), 0);
	/* Replace of an absent entry is a plain add. */
	CHECK_EQ(put(st, "uid=carl,dc=example,dc=com", true, bob), 0);
	CHECK_EQ(count(st), 4);

	/* Delete. */
	CHECK_EQ(lfe_store_del(st, "uid=BOB,dc=example,dc=com", 25), 0);
	CHECK_EQ(lfe_store_del(st, "uid=bob,dc=example,dc=com", 25), -ENOENT);
	CHECK_EQ(lfe_store_del(st, "garbage", 7), -EINVAL);
	CHECK_EQ(count(st), 3);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(lfe_store_get(r, "uid=bob,dc=example,dc=com", 25, &e), -ENOENT);
	CHECK(!strcmp(lookup(r, "uid", "bob"), "uid=carl,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "cn", "robert"), "uid=carl,dc=example,dc=com"));
	CHECK_EQ(lfe_store_del(st, "uid=carl,dc=example,dc=com", 26), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK(!strcmp(lookup(r, "uid", "bob"), ""));
	CHECK(!strcmp(lookup(r, "objectClass", "inetorgperson"), ""));
	CHECK(!strcmp(lookup(r, "objectClass", "top"), "uid=ann,dc=example,dc=com"));
	lfe_store_reader_free(r);
}

static void test_batch(struct lfe_store *st)
{
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	struct lfe_entry_view e;
	uint64_t before = count(st);
	char dn[64];

	CHECK_EQ(lfe_store_batch_begin(st), 0);
	CHECK_EQ(lfe_store_batch_begin(st), -EBUSY);
	for (int i = 0; i < 3; i++) {
		snprintf(dn, sizeof(dn), "uid=batch%d,dc=example,dc=com", i);
		CHECK_EQ(put(st, dn, false, bob), 0);
	}
	CHECK_EQ(lfe_store_del(st, "uid=ann,dc=example,dc=com", 25), 0);
	lfe_store_batch_abort(st);
	lfe_store_batch_abort(st);
	CHECK_EQ(count(st), before);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(lfe_store_get(r, "uid=batch0,dc=example,dc=com", 28, &e), -ENOENT);
	CHECK_EQ(lfe_store_get(r, "uid=ann,dc=example,dc=com", 25, &e), 0);
	CHECK(!strcmp(lookup(r, "uid", "bob"), ""));

	/* A refused put inside a batch leaves the rest of it intact. */
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	for (int i = 0; i < 100; i++) {
		snprintf(dn, sizeof(dn), "uid=batch%d,dc=example,dc=com", i);
		CHECK_EQ(put(st, dn, false, bob), 0);
	}
	CHECK_EQ(put(st, "uid=batch7,dc=example,dc=com", false, bob), -EEXIST);
	CHECK_EQ(put(st, "uid=x,dc=elsewhere", false, bob), -EINVAL);
	CHECK_EQ(lfe_store_del(st, "uid=batch99,dc=example,dc=com", 29), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(lfe_store_get(r, "uid=batch0,dc=example,dc=com", 28, &e), -ENOENT);
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	CHECK_EQ(lfe_store_batch_commit(st), -EINVAL);
	CHECK_EQ(count(st), before + 99);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(lfe_store_get(r, "uid=batch98,dc=example,dc=com", 29, &e), 0);
	CHECK_EQ(lfe_store_get(r, "uid=batch99,dc=example,dc=com", 29, &e), -ENOENT);
	for (int i = 0; i < 99; i++) {
		snprintf(dn, sizeof(dn), "uid=batch%d,dc=example,dc=com", i);
		CHECK_EQ(lfe_store_del(st, dn, strlen(dn)), 0);
	}
	CHECK_EQ(count(st), before);
	lfe_store_reader_free(r);
}

static void test_bind(struct lfe_store *st)
{
	static const char *const nopw[] = { "objectClass: person", "cn: No Password", NULL };
	const char *dn_ann = "uid=ann,dc=example,dc=com";
	const char *lines_dual[] = { "uid: dual", NULL, NULL, NULL };
	char l1[300], l2[300];
	struct lfe_store_reader *r;
	static const struct {
		const char *dn;
		const char *pw;
		int rc;
	} cases[] = {
		{ "uid=ann,dc=example,dc=com", "secret", 0 },
		{ "uid=ann,dc=example,dc=com", "Secret", -EACCES },
		{ "uid=ann,dc=example,dc=com", "secret ", -EACCES },
		{ "uid=ann,dc=example,dc=com", "", -EACCES },
		/* Unknown: the work of a wrong password on the entry its lookup
		 * lands on (drawn by the bind index's keyed hash: inline or a
		 * job), which never answers success, not even with that
		 * entry's own password. rc 1: either. */
		{ "uid=nobody,dc=example,dc=com", "secret", 1 },
		{ "uid=Ann,dc=example,dc=com", "secret", 1 },   /* not normalized: unknown */
		{ "", "secret", -EACCES },
		{ "cn=nopw,dc=example,dc=com", "secret", -EACCES },
		{ "uid=slow,dc=example,dc=com", "secret", -EAGAIN },
		{ "uid=slow,dc=example,dc=com", "wrong", -EAGAIN },
		{ "uid=dual,dc=example,dc=com", "other", 0 },         /* fast value matches */
		{ "uid=dual,dc=example,dc=com", "secret", -EAGAIN },  /* only the slow one can */
	};

	CHECK_EQ(lfe_store_set_password(st, dn_ann, strlen(dn_ann), ssha_secret,
					strlen(ssha_secret), NOW), 0);
	CHECK_EQ(lfe_store_set_password(st, "uid=nobody,dc=example,dc=com", 28, ssha_secret,
					strlen(ssha_secret), NOW), -ENOENT);
	CHECK_EQ(lfe_store_set_password(st, dn_ann, strlen(dn_ann), "", 0, NOW), -EINVAL);
	CHECK_EQ(put(st, "cn=nopw,dc=example,dc=com", false, nopw), 0);
	CHECK_EQ(put(st, "uid=slow,dc=example,dc=com", false,
		     (const char *const[]){ "uid: slow", NULL }), 0);
	/* set_password adds userPassword where there was none. */
	CHECK_EQ(lfe_store_set_password(st, "uid=slow,dc=example,dc=com", 26, crypt_secret,
					strlen(crypt_secret), NOW), 0);
	snprintf(l1, sizeof(l1), "userPassword: %s", crypt_secret);
	snprintf(l2, sizeof(l2), "userPassword: %s", ssha_other);
	lines_dual[1] = l1;
	lines_dual[2] = l2;
	CHECK_EQ(put(st, "uid=dual,dc=example,dc=com", false, lines_dual), 0);

	r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	if (!r)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lfe_bind_job job;
		int rc = lfe_store_verify_bind(r, cases[i].dn, strlen(cases[i].dn),
					       (const uint8_t *)cases[i].pw, strlen(cases[i].pw), 0, &job);
		/* The second phase needs only the job; NULL runs both here. */
		int want = strcmp(cases[i].pw, "secret") == 0 && strstr(cases[i].dn, "nopw") == NULL &&
			   cases[i].rc != 1 ? 0 : -EACCES;
		if (rc == -EAGAIN) {
			CHECK_EQ(lfe_bind_job_run(&job, (const uint8_t *)cases[i].pw,
						  strlen(cases[i].pw), 0), want);
			lfe_bind_job_wipe(&job);
			CHECK_EQ(lfe_store_verify_bind(r, cases[i].dn, strlen(cases[i].dn),
						       (const uint8_t *)cases[i].pw, strlen(cases[i].pw),
						       0, NULL), want);
		}
		if (rc != cases[i].rc && !(cases[i].rc == 1 && (rc == -EACCES || rc == -EAGAIN))) {
			fprintf(stderr, "bind %s / '%s': %d, expected %d\n", cases[i].dn,
				cases[i].pw, rc, cases[i].rc);
			check_failures++;
		}
	}

	/* The reader keeps its snapshot until it renews. */
	CHECK_EQ(lfe_store_set_password(st, dn_ann, strlen(dn_ann), ssha_other,
					strlen(ssha_other), NOW), 0);
	CHECK_EQ(lfe_store_verify_bind(r, dn_ann, strlen(dn_ann), (const uint8_t *)"secret", 6, 0, NULL), 0);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	CHECK_EQ(lfe_store_verify_bind(r, dn_ann, strlen(dn_ann), (const uint8_t *)"secret", 6, 0, NULL),
		 -EACCES);
	CHECK_EQ(lfe_store_verify_bind(r, dn_ann, strlen(dn_ann), (const uint8_t *)"other", 5, 0, NULL), 0);
	{
		/* set_password kept the entry's other attributes and indexes. */
		struct lfe_entry_view e;
		struct lfe_bytes v[2];

		CHECK_EQ(lfe_store_get(r, dn_ann, strlen(dn_ann), &e), 0);
		CHECK_EQ(lfe_entry_get(&e, "userPassword", 12, v, 2), 1);
		CHECK(v[0].len == strlen(ssha_other) && !memcmp(v[0].p, ssha_other, v[0].len));
		CHECK_EQ(lfe_entry_get(&e, "description", 11, v, 2), 1);
		CHECK(!strcmp(lookup(r, "uid", "anne"), dn_ann));
	}
	lfe_store_reader_free(r);
}

static void test_map_full(void)
{
	struct lfe_store *st = lfe_store_open(dir("small"), 0, 256 << 10, NULL, NULL);
	struct lfe_store_reader *r;
	struct lfe_entry_view e;
	char dn[64];
	int rc = 0, i;

	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
	for (i = 0; i < 100000 && rc == 0; i++) {
		snprintf(dn, sizeof(dn), "uid=u%d,dc=example,dc=com", i);
		rc = put(st, dn, false, ann);
	}
	CHECK_EQ(rc, -ENOSPC);
	CHECK(i > 10);
	/* The failed put left nothing behind; the store still reads. */
	CHECK_EQ(count(st), (uint64_t)(i - 1));
	r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	CHECK_EQ(lfe_store_get(r, "uid=u0,dc=example,dc=com", 24, &e), 0);
	CHECK_EQ(lfe_store_get(r, dn, strlen(dn), &e), -ENOENT);
	lfe_store_reader_free(r);

	/* Inside a batch the failure poisons the batch; commit reports it. */
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	rc = 0;
	for (i = 0; i < 100000 && rc == 0; i++) {
		snprintf(dn, sizeof(dn), "uid=b%d,dc=example,dc=com", i);
		rc = put(st, dn, false, ann);
	}
	CHECK_EQ(rc, -ENOSPC);
	CHECK_EQ(put(st, "uid=after,dc=example,dc=com", false, ann), -ENOSPC);
	CHECK_EQ(lfe_store_batch_commit(st), -ENOSPC);
	lfe_store_close(st);
}

static int count_cb(void *ctx, const char *ndn, size_t len)
{
	(void)ndn;
	(void)len;
	++*(unsigned *)ctx;
	return 0;
}

/* The batch append fast path: sorted and unsorted keys mixed, in a store
 * that already holds larger and smaller DNs; every index must stay whole. */
static void test_batch_order(unsigned flags)
{
	struct lfe_store *st = lfe_store_open(dir(flags ? "bulk" : "order"), flags, 0, NULL, NULL);
	struct lfe_store_reader *r;
	static const unsigned order[] = { 500, 0, 1, 2, 999, 3, 998, 4, 5 };
	char dn[64], uid[32], line[40];
	unsigned n = 0;

	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
	CHECK_EQ(put(st, "uid=m,dc=example,dc=com", false, bob), 0);
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	for (unsigned i = 0; i < 1000 + sizeof(order) / sizeof(order[0]); i++) {
		unsigned n_ord = sizeof(order) / sizeof(order[0]);
		unsigned u = i < n_ord ? order[i] + 2000 : i - n_ord;
		const char *lines[] = { "objectClass: top", "objectClass: inetOrgPerson", line,
					"cn: Same", NULL };

		snprintf(uid, sizeof(uid), "u%04u", u);
		snprintf(line, sizeof(line), "uid: %s", uid);
		snprintf(dn, sizeof(dn), "uid=%s,dc=example,dc=com", uid);
		CHECK_EQ(put(st, dn, false, lines), 0);
	}
	/* An entry replaced inside the batch drops its old index keys. */
	CHECK_EQ(put(st, "uid=u0007,dc=example,dc=com", true,
		     (const char *const[]){ "uid: renamed", NULL }), 0);
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	CHECK_EQ(count(st), 1010);
	r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	if (!r) {
		lfe_store_close(st);
		return;
	}
	/* 1009 batch entries and "m" have both classes; the renamed one none. */
	CHECK_EQ(lfe_store_index_each(r, "objectClass", (const uint8_t *)"top", 3, count_cb, &n), 0);
	CHECK_EQ(n, 1009);
	n = 0;
	CHECK_EQ(lfe_store_index_each(r, "objectClass", (const uint8_t *)"inetorgperson", 13,
				      count_cb, &n), 0);
	CHECK_EQ(n, 1009);
	n = 0;
	CHECK_EQ(lfe_store_index_each(r, "cn", (const uint8_t *)"same", 4, count_cb, &n), 0);
	CHECK_EQ(n, 1008);
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(uid, sizeof(uid), "u%04u", i == 7 ? 9999 : i);
		n = 0;
		lfe_store_index_each(r, "uid", (const uint8_t *)uid, 5, count_cb, &n);
		if (n != (i == 7 ? 0u : 1u)) {
			fprintf(stderr, "uid %s: %u index entries\n", uid, n);
			check_failures++;
		}
	}
	CHECK(!strcmp(lookup(r, "uid", "u0007"), ""));
	CHECK(!strcmp(lookup(r, "uid", "renamed"), "uid=u0007,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "uid", "u2999"), "uid=u2999,dc=example,dc=com"));
	CHECK(!strcmp(lookup(r, "uid", "bob"), "uid=m,dc=example,dc=com"));
	lfe_store_reader_free(r);
	lfe_store_close(st);
}

/* lfe_store_reader_each: key order, one snapshot whose slices outlive the
 * walk (until the reader is renewed) while the writer commits, early stop;
 * lfe_store_info's last transaction id moves with each commit. */
struct each_item {
	const char *ndn;
	size_t len;
	const uint8_t *rec;
	size_t rec_len;
};
struct each_ctx {
	struct each_item it[8];
	unsigned n, stop_at;
};

static int each_fn(void *vctx, const char *ndn, size_t len, const uint8_t *rec, size_t rec_len)
{
	struct each_ctx *c = vctx;

	if (c->n == c->stop_at)
		return 42;
	if (c->n < 8)
		c->it[c->n] = (struct each_item){ ndn, len, rec, rec_len };
	c->n++;
	return 0;
}

static void test_reader_each(void)
{
	static const char *const person[] = { "objectClass: person", "cn: x", NULL };
	struct lfe_store_info i0, i1;
	struct lfe_store *st = lfe_store_open(dir("each"), 0, 0, NULL, NULL);
	struct lfe_store_reader *r;
	struct each_ctx c = { .stop_at = 99 };

	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
	CHECK_EQ(put(st, SUFFIX, false, person), 0);
	CHECK_EQ(put(st, "uid=b," SUFFIX, false, person), 0);
	CHECK_EQ(put(st, "uid=a," SUFFIX, false, person), 0);
	CHECK_EQ(lfe_store_info(st, &i0), 0);
	CHECK(i0.last_txnid > 0);
	CHECK(i0.last_change > 1000000000);
	r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	if (!r) {
		lfe_store_close(st);
		return;
	}
	CHECK_EQ(lfe_store_reader_each(r, each_fn, &c), 0);
	CHECK_EQ(c.n, 3);
	/* The writer deletes one and adds one: the reader's slices still show
	 * the snapshot the walk saw. */
	CHECK_EQ(lfe_store_del(st, "uid=a," SUFFIX, strlen("uid=a," SUFFIX)), 0);
	CHECK_EQ(put(st, "uid=c," SUFFIX, false, person), 0);
	CHECK_EQ(lfe_store_info(st, &i1), 0);
	CHECK_EQ(i1.last_txnid, i0.last_txnid + 2);
	static const char *const want[] = { NSUFFIX, "uid=a," NSUFFIX, "uid=b," NSUFFIX };
	for (unsigned k = 0; k < 3 && k < c.n; k++) {
		struct lfe_bytes dn;
		uint32_t n_attrs;
		size_t off;

		CHECK(c.it[k].len == strlen(want[k]) && memcmp(c.it[k].ndn, want[k], c.it[k].len) == 0);
		CHECK_EQ(lfe_record_header(c.it[k].rec, c.it[k].rec_len, &dn, &n_attrs, &off), 0);
		CHECK_EQ(n_attrs, 2);   /* objectClass, cn */
	}
	/* After a renew the walk sees the new content; a non-zero fn stops it. */
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	c = (struct each_ctx){ .stop_at = 99 };
	CHECK_EQ(lfe_store_reader_each(r, each_fn, &c), 0);
	CHECK_EQ(c.n, 3);
	CHECK(c.n >= 2 && c.it[1].len == strlen("uid=b," NSUFFIX));
	CHECK(c.n >= 3 && memcmp(c.it[2].ndn, "uid=c,", 6) == 0);
	c = (struct each_ctx){ .stop_at = 1 };
	CHECK_EQ(lfe_store_reader_each(r, each_fn, &c), 42);
	CHECK_EQ(c.n, 1);
	lfe_store_reader_free(r);
	lfe_store_close(st);
}

static void test_corrupt_record(void)
{
	struct lfe_store *st;
	struct lfe_store_reader *r;
	struct lfe_entry_view e;

	/* "entries" of dir("main") gets a broken record for one DN. */
	raw_put(dir("main"), "entries", "uid=broken,dc=example,dc=com", "\x01\x00\x09\x00", 4);
	st = lfe_store_open(dir("main"), LFE_STORE_RDONLY, 0, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return;
	r = lfe_store_reader_new(st);
	CHECK_EQ(lfe_store_get(r, "uid=broken,dc=example,dc=com", 28, &e), -EBADMSG);
	CHECK_EQ(lfe_store_verify_bind(r, "uid=broken,dc=example,dc=com", 28,
				       (const uint8_t *)"x", 1, 0, NULL), -EACCES);
	CHECK_EQ(lfe_store_verify_bind(r, "uid=ann,dc=example,dc=com", 25,
				       (const uint8_t *)"other", 5, 0, NULL), 0);
	lfe_store_reader_free(r);
	lfe_store_close(st);
}


/* The first value of type in entry ndn (a new reader: the last commit),
 * or "" when absent; "(n)" appended when it has n > 1 values. */
static const char *val_of(struct lfe_store *st, const char *ndn, const char *type)
{
	static char out[256];
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	struct lfe_entry_view e;
	struct lfe_bytes v[4];
	uint32_t n = 0;

	out[0] = '\0';
	if (r && lfe_store_get(r, ndn, strlen(ndn), &e) == 0)
		n = lfe_entry_get(&e, type, strlen(type), v, 4);
	if (n)
		snprintf(out, sizeof(out), n > 1 ? "%.*s(%u)" : "%.*s", (int)v[0].len,
			 (const char *)v[0].p, n);
	lfe_store_reader_free(r);
	return out;
}

/* An administrator's password change (lfe_store_set_password) as slapd's
 * ppolicy overlay makes it: modifyTimestamp always; with a policy (the
 * entry's, the default one) or a pwdChangedTime, the expiry clock starts
 * again, grace uses go and pwdReset follows pwdMustChange. modifyTimestamp
 * stays findable through its index. */
static void test_set_password_policy(void)
{
	struct lfe_store *st = lfe_store_open(dir("pwchange"), 0, 0, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
	CHECK_EQ(lfe_store_index_add(st, "modifyTimestamp"), 0);
	CHECK_EQ(put(st, "cn=must,dc=example,dc=com", false, (const char *const[]){
		"objectClass: pwdPolicy", "cn: must", "pwdAttribute: userPassword",
		"pwdMaxAge: 3600", "pwdMustChange: TRUE", NULL }), 0);
	CHECK_EQ(put(st, "cn=plainpol,dc=example,dc=com", false, (const char *const[]){
		"objectClass: pwdPolicy", "cn: plainpol", "pwdAttribute: userPassword",
		"pwdMaxAge: 3600", NULL }), 0);
	/* no policy, no pwdChangedTime: the password and modifyTimestamp */
	CHECK_EQ(put(st, "uid=p,dc=example,dc=com", false, (const char *const[]){
		"uid: p", "userPassword: {SSHA}old", "modifyTimestamp: 20200101000000Z", NULL }), 0);
	/* an old pwdChangedTime, grace logins spent and a reset, no policy */
	CHECK_EQ(put(st, "uid=old,dc=example,dc=com", false, (const char *const[]){
		"uid: old", "userPassword: {SSHA}old", "pwdChangedTime: 20200101000000Z",
		"pwdGraceUseTime: 20200201000000Z", "pwdGraceUseTime: 20200202000000Z",
		"pwdReset: TRUE", NULL }), 0);
	/* its own policy says pwdMustChange */
	CHECK_EQ(put(st, "uid=m,dc=example,dc=com", false, (const char *const[]){
		"uid: m", "userPassword: {SSHA}old", "pwdPolicySubentry: cn=MUST,dc=example,dc=com",
		NULL }), 0);
	/* a pwdPolicySubentry that names no entry: no policy */
	CHECK_EQ(put(st, "uid=gone,dc=example,dc=com", false, (const char *const[]){
		"uid: gone", "userPassword: {SSHA}old", "pwdPolicySubentry: cn=none,dc=example,dc=com",
		NULL }), 0);

	CHECK_EQ(lfe_store_set_password(st, "uid=p,dc=example,dc=com", 23, ssha_secret,
					strlen(ssha_secret), NOW), 0);
	CHECK_STR(val_of(st, "uid=p,dc=example,dc=com", "userPassword"), ssha_secret);
	CHECK_STR(val_of(st, "uid=p,dc=example,dc=com", "modifyTimestamp"), NOW_GT);
	CHECK_STR(val_of(st, "uid=p,dc=example,dc=com", "pwdChangedTime"), "");
	CHECK_STR(val_of(st, "uid=p,dc=example,dc=com", "uid"), "p");

	CHECK_EQ(lfe_store_set_password(st, "uid=old,dc=example,dc=com", 25, ssha_secret,
					strlen(ssha_secret), NOW), 0);
	CHECK_STR(val_of(st, "uid=old,dc=example,dc=com", "pwdChangedTime"), NOW_GT);
	CHECK_STR(val_of(st, "uid=old,dc=example,dc=com", "pwdGraceUseTime"), "");
	CHECK_STR(val_of(st, "uid=old,dc=example,dc=com", "pwdReset"), "");

	CHECK_EQ(lfe_store_set_password(st, "uid=m,dc=example,dc=com", 23, ssha_secret,
					strlen(ssha_secret), NOW), 0);
	CHECK_STR(val_of(st, "uid=m,dc=example,dc=com", "pwdChangedTime"), NOW_GT);
	CHECK_STR(val_of(st, "uid=m,dc=example,dc=com", "pwdReset"), "TRUE");

	CHECK_EQ(lfe_store_set_password(st, "uid=gone,dc=example,dc=com", 26, ssha_secret,
					strlen(ssha_secret), NOW), 0);
	CHECK_STR(val_of(st, "uid=gone,dc=example,dc=com", "pwdChangedTime"), "");

	/* The default policy covers an entry without pwdPolicySubentry. */
	CHECK_EQ(lfe_store_set_ppolicy_default(st, "cn=plainpol,dc=example,dc=com"), 0);
	CHECK_EQ(lfe_store_set_password(st, "uid=p,dc=example,dc=com", 23, ssha_other,
					strlen(ssha_other), NOW + 61), 0);
	CHECK_STR(val_of(st, "uid=p,dc=example,dc=com", "pwdChangedTime"), "20261206070101Z");
	CHECK_STR(val_of(st, "uid=p,dc=example,dc=com", "pwdReset"), "");
	CHECK_STR(val_of(st, "uid=p,dc=example,dc=com", "modifyTimestamp"), "20261206070101Z");

	/* The index follows: the old timestamp is gone from it, the new ones in. */
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	if (r) {
		CHECK_STR(lookup(r, "modifyTimestamp", "20200101000000Z"), "");
		CHECK_STR(lookup(r, "modifyTimestamp", "20261206070101Z"), "uid=p,dc=example,dc=com");
		CHECK_STR(lookup(r, "modifyTimestamp", NOW_GT),
			  "uid=gone,dc=example,dc=com|uid=m,dc=example,dc=com|uid=old,dc=example,dc=com");
		lfe_store_reader_free(r);
	}
	CHECK_EQ(lfe_store_set_password(st, "uid=p,dc=example,dc=com", 23, ssha_other,
					strlen(ssha_other), -1), -EINVAL);
	lfe_store_close(st);
}

int main(void)
{
	struct lfe_store *st;
	char cmd[300];

	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	if (lfe_pw_hash("{SSHA}", (const uint8_t *)"secret", 6, ssha_secret,
			sizeof(ssha_secret)) <= 0 ||
	    lfe_pw_hash("{SSHA}", (const uint8_t *)"other", 5, ssha_other,
			sizeof(ssha_other)) <= 0 ||
	    lfe_pw_hash("{CRYPT}", (const uint8_t *)"secret", 6, crypt_secret,
			sizeof(crypt_secret)) <= 0) {
		fprintf(stderr, "lfe_pw_hash failed\n");
		return 1;
	}
	test_open_init();
	test_version_mismatch();
	st = lfe_store_open(dir("main"), 0, 0, NULL, NULL);
	CHECK(st != NULL);
	if (st) {
		CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
		test_crud(st);
		test_batch(st);
		test_bind(st);
		lfe_store_close(st);
		test_corrupt_record();
	}
	test_set_password_policy();
	test_reader_each();
	test_map_full();
	test_batch_order(0);
	test_batch_order(LFE_STORE_BULK);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", root);
	return check_done();
}
