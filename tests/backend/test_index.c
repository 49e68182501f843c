/* tests/backend/test_index.c — the store's declared equality indexes
 * (format 3) against a scan:
 *   - property: random entries whose uidNumber, memberUid, member, cn and
 *     entryUUID values vary in case, spacing, DN spelling, emptiness and
 *     length (past LMDB's key limit: hashed keys); for random assertions an
 *     indexed search (lfe_store_search) returns exactly the entries a
 *     brute-force evaluation of the same filter over every entry matches;
 *   - the planner: (&(uidNumber=N)(objectClass=posixAccount)) and SSSD's
 *     lookup filter visit one candidate among 1,000 posixAccounts; a bare
 *     (uidNumber=N) answers;
 *   - presence and substring kinds: the property test above for
 *     (attr=*), substring and ANDed filters (index against scan); a
 *     presence list walked alone, an equality item preferred beside it;
 *   - index add / del / list; a reader opened before a del refuses the
 *     dropped index (53) instead of answering from it (a dropped kind
 *     alone: that kind only);
 *   - lfe_store_upgrade of a format 2 store (made from a fresh one the way a
 *     format 2 build leaves it) builds the default indexes in one go. */
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/search.h"
#include "backend/store.h"
#include "tests/backend/berbuild.h"
#include "ldap/filter.h"
#include "tests/check.h"

#define SUFFIX "dc=example,dc=com"
#define N_ENT 400u

static char root[] = "/tmp/lfe-test-index.XXXXXX";
static char pathbuf[512];

static const char *dir(const char *name)
{
	snprintf(pathbuf, sizeof(pathbuf), "%s/%s", root, name);
	return pathbuf;
}

static struct lfe_bytes S(const char *s)
{
	return (struct lfe_bytes){ (const uint8_t *)s, strlen(s) };
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* ---- value generators: spellings the matching rules make equal or not ---- */

static void vary_case(char *s)
{
	for (; *s; s++)
		if (rnd(3) == 0 && *s >= 'a' && *s <= 'z')
			*s = (char)(*s - 32);
}

static char longv[3][700];

static void gen_value(const char *attr, char *out, size_t cap)
{
	unsigned k = rnd(12);

	if (rnd(25) == 0) {
		out[0] = '\0';                          /* empty */
		return;
	}
	if (rnd(20) == 0) {
		snprintf(out, cap, "%s", longv[rnd(3)]);   /* past the key limit */
		if (rnd(2))
			vary_case(out);
		return;
	}
	if (strcmp(attr, "uidNumber") == 0) {
		snprintf(out, cap, rnd(8) == 0 ? "0%u" : rnd(8) == 0 ? " %u" : "%u", k);
	} else if (strcmp(attr, "member") == 0) {
		static const char *const forms[] = {
			"uid=u%u,ou=people,dc=example,dc=com", "UID=u%u, ou=People,DC=example,dc=COM",
			"uid=u%u,ou=people,dc=example,dc=com ", "uid=U%u,ou=people,dc=example,dc=com",
			"0.9.2342.19200300.100.1.1=u%u,ou=people,dc=example,dc=com", "not a dn %u",
		};
		snprintf(out, cap, forms[rnd(6)], k);
	} else if (strcmp(attr, "entryUUID") == 0) {
		snprintf(out, cap, "%08x-aaaa-bbbb-cccc-0000000000%02u", k * 7919u, k);
		if (rnd(2))
			vary_case(out);
	} else {
		snprintf(out, cap, rnd(4) == 0 ? "name  %u" : rnd(4) == 0 ? " name %u " : "name %u", k);
		if (rnd(2))
			vary_case(out);
	}
}

static const char *const attrs[] = { "uidNumber", "memberUid", "member", "cn", "entryUUID" };
#define N_ATTRS (sizeof(attrs) / sizeof(attrs[0]))

static int put_random(struct lfe_store *st, unsigned i)
{
	static char vbuf[N_ATTRS][4][800];
	struct lfe_bytes vals[N_ATTRS][4], oc[2] = { S("top"), S("extensibleObject") };
	struct lfe_ldap_attr a[N_ATTRS + 1];
	char dn[64];
	uint32_t n = 0;

	a[n++] = (struct lfe_ldap_attr){ .type = S("objectClass"), .vals = oc, .n_vals = 2 };
	for (unsigned t = 0; t < N_ATTRS; t++) {
		unsigned nv = rnd(4);
		if (nv == 0)
			continue;
		uint32_t m = 0;
		for (unsigned j = 0; j < nv; j++) {
			gen_value(attrs[t], vbuf[t][m], sizeof(vbuf[t][m]));
			bool dup = false;
			for (uint32_t q = 0; q < m; q++)
				dup |= strcmp(vbuf[t][q], vbuf[t][m]) == 0;
			if (!dup) {
				vals[t][m] = S(vbuf[t][m]);
				m++;
			}
		}
		a[n++] = (struct lfe_ldap_attr){ .type = S(attrs[t]), .vals = vals[t], .n_vals = m };
	}
	snprintf(dn, sizeof(dn), "cn=e%u," SUFFIX, i);
	return lfe_store_put(st, S(dn), a, n, true);
}

/* ---- search vs scan ---- */

struct seen {
	uint8_t by_index[N_ENT + 1], by_scan[N_ENT + 1];
};

static unsigned ent_no(const uint8_t *dn, size_t len)
{
	unsigned k;
	char b[64];
	snprintf(b, sizeof(b), "%.*s", (int)len, (const char *)dn);
	return sscanf(b, "cn=e%u,", &k) == 1 && k < N_ENT ? k : N_ENT;
}

static int emit(void *ctx, const struct lfe_ldap_entry *e)
{
	struct seen *s = ctx;
	s->by_index[ent_no(e->dn.p, e->dn.len)]++;
	return 0;
}

static uint32_t provide(void *ctx, struct lfe_bytes type, uint32_t first, struct lfe_bytes *vals,
			uint32_t cap)
{
	return lfe_entry_get_from(ctx, (const char *)type.p, type.len, first, vals, cap);
}

struct scan {
	struct lfe_store_reader *r;
	struct seen *s;
	const struct bb *f;
};

static int scan_one(void *ctx, const char *ndn, size_t ndn_len, const uint8_t *rec, size_t len)
{
	struct scan *x = ctx;
	struct lfe_entry_view e;
	(void)rec;
	(void)len;
	if (lfe_store_get(x->r, ndn, ndn_len, &e) != 0)
		return 0;
	if (lfe_filter_eval(x->f->b, x->f->n, provide, &e) == LFE_FILTER_TRUE)
		x->s->by_scan[ent_no(e.dn.p, e.dn.len)]++;
	return 0;
}

static int search(struct lfe_store_reader *r, const struct bb *f, void *ctx,
		  lfe_search_emit_fn fn, struct lfe_search_stats *stats)
{
	struct lfe_search_req req = { .scope = LFE_SCOPE_SUB, .filter = { f->b, f->n } };
	struct lfe_search_params p = {
		.base_ndn = SUFFIX, .base_ndn_len = strlen(SUFFIX),
		.suffix = SUFFIX, .suffix_len = strlen(SUFFIX), .req = &req,
		.max_candidates = 100000,
	};
	return lfe_store_search(r, &p, fn, ctx, stats);
}

static uint8_t fb[1u << 16];

/* A piece of v: n bytes from at, case varied at random. */
static void piece_of(const char *v, size_t at, size_t n, char *out)
{
	memcpy(out, v + at, n);
	out[n] = '\0';
	if (rnd(2))
		vary_case(out);
}

/* (attr=[initial]*[any*]...[final]) cut from a value of attr's kind:
 * pieces of 0 to 5 bytes, spaces and case as they come. 0: no piece. */
static int gen_sub(struct bb *f, const char *attr)
{
	char v[800], pc[8];
	gen_value(attr, v, sizeof(v));
	size_t len = strlen(v), at = f->n, pos = 0;
	unsigned pieces = 0;
	bb_octets(f, 0x04, attr);
	size_t seq = f->n;
	if (len && rnd(2)) {
		size_t n = 1 + rnd(len < 5 ? (uint32_t)len : 5);
		piece_of(v, 0, n, pc);
		bb_octets(f, 0x80, pc);
		pos = n;
		pieces++;
	}
	for (unsigned k = rnd(3); k > 0 && pos < len; k--) {
		size_t from = pos + rnd((uint32_t)(len - pos));
		size_t n = 1 + rnd(len - from < 5 ? (uint32_t)(len - from) : 5);
		piece_of(v, from, n, pc);
		bb_octets(f, 0x81, pc);
		pos = from + n;
		pieces++;
	}
	if ((pieces == 0 || rnd(2)) && len > pos) {
		size_t n = 1 + rnd(len - pos < 5 ? (uint32_t)(len - pos) : 5);
		piece_of(v, len - n, n, pc);
		bb_octets(f, 0x82, pc);
		pieces++;
	}
	if (!pieces)
		return 0;
	bb_wrap(f, seq, 0x30);
	bb_wrap(f, at, 0xa4);
	return 1;
}

/* Presence and substring filters, alone and ANDed, index against scan.
 * A substring filter with no piece an index key can come from (every
 * piece in the middle shorter than 3) gets 53; every other answers. */
static void prop_pres_sub(struct lfe_store_reader *r)
{
	static const char *const sub_attrs[] = { "cn", "memberUid", "entryUUID" };
	static const char *const pres_attrs[] = { "cn", "uidNumber", "member" };
	unsigned asked = 0, answered = 0, refused = 0, matched = 0, by_pres = 0;

	for (unsigned q = 0; q < 3000 && r; q++) {
		struct bb f = { fb, 0 };
		unsigned shape = rnd(4);   /* 0 pres, 1 sub, 2 (&sub pres), 3 (&pres sub eq) */
		if (shape == 0) {
			bb_octets(&f, 0x87, pres_attrs[rnd(3)]);
		} else if (shape == 1) {
			if (!gen_sub(&f, sub_attrs[rnd(3)]))
				continue;
		} else {
			bb_octets(&f, 0x87, pres_attrs[rnd(3)]);
			if (!gen_sub(&f, sub_attrs[rnd(3)]))
				continue;
			if (shape == 3) {
				char v[800];
				gen_value("memberUid", v, sizeof(v));
				bb_eq(&f, "memberUid", v);
			}
			bb_wrap(&f, 0, 0xa0);
		}
		asked++;
		struct seen s;
		memset(&s, 0, sizeof(s));
		struct lfe_search_stats stats;
		int rc = search(r, &f, &s, emit, &stats);
		if (rc == LFE_RC_UNWILLING_TO_PERFORM && shape == 1) {
			refused++;
			continue;
		}
		CHECK_EQ(rc, LFE_RC_SUCCESS);
		answered++;
		by_pres += shape == 0;
		struct scan x = { r, &s, &f };
		CHECK_EQ(lfe_store_reader_each(r, scan_one, &x), 0);
		for (unsigned i = 0; i <= N_ENT; i++) {
			if (s.by_index[i] != s.by_scan[i]) {
				char txt[2048];
				check_failures++;
				if (lfe_filter_to_string(f.b, f.n, txt, sizeof(txt)) < 0)
					strcpy(txt, "?");
				fprintf(stderr, "%s: entry e%u: index %u, scan %u\n", txt, i,
					s.by_index[i], s.by_scan[i]);
			}
			matched += s.by_scan[i];
		}
	}
	printf("property (pres, sub): %u filters, %u answered (%u presence alone), %u refused "
	       "(no piece of 3), %u matches\n", asked, answered, by_pres, refused, matched);
	CHECK(answered > asked / 2 && matched > 5000 && refused < asked / 4);
}

static void test_property(void)
{
	struct lfe_store *st = lfe_store_open(dir("prop"), 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
	for (int i = 0; i < 3; i++) {
		memset(longv[i], 'a' + i, 650);
		longv[i][650 + i] = '\0';
		memcpy(longv[i], "long value ", 11);
	}
	for (unsigned i = 0; i < N_ENT; i++)
		CHECK_EQ(put_random(st, i), 0);
	/* Presence and substring kinds, built over what is there (sub beside
	 * cn's equality keys), then kept by the rewrites and deletes below. */
	CHECK_EQ(lfe_store_index_add_kind(st, "cn", LFE_INDEX_SUB | LFE_INDEX_PRES), 0);
	CHECK_EQ(lfe_store_index_add_kind(st, "memberUid", LFE_INDEX_SUB), 0);
	CHECK_EQ(lfe_store_index_add_kind(st, "entryUUID", LFE_INDEX_SUB), 0);
	CHECK_EQ(lfe_store_index_add_kind(st, "uidNumber", LFE_INDEX_PRES), 0);
	CHECK_EQ(lfe_store_index_add_kind(st, "member", LFE_INDEX_PRES), 0);
	CHECK_EQ(lfe_store_index_add_kind(st, "uidNumber", LFE_INDEX_SUB), -EOPNOTSUPP);
	/* Rewrite some (unindex then index again) and delete some. */
	for (unsigned i = 0; i < N_ENT; i += 7)
		CHECK_EQ(put_random(st, i), 0);
	for (unsigned i = 3; i < N_ENT; i += 29) {
		char dn[64];
		snprintf(dn, sizeof(dn), "cn=e%u," SUFFIX, i);
		CHECK_EQ(lfe_store_del(st, dn, strlen(dn)), 0);
	}
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	unsigned matched = 0, hashed = 0;
	for (unsigned q = 0; q < 1500 && r; q++) {
		const char *attr = attrs[rnd(N_ATTRS)];
		char val[800];
		gen_value(attr, val, sizeof(val));
		struct bb f = { fb, 0 };
		bb_eq(&f, attr, val);
		struct seen s;
		memset(&s, 0, sizeof(s));
		struct lfe_search_stats stats;
		int rc = search(r, &f, &s, emit, &stats);
		CHECK_EQ(rc, LFE_RC_SUCCESS);
		struct scan x = { r, &s, &f };
		CHECK_EQ(lfe_store_reader_each(r, scan_one, &x), 0);
		for (unsigned i = 0; i <= N_ENT; i++) {
			if (s.by_index[i] != s.by_scan[i]) {
				check_failures++;
				fprintf(stderr, "(%s=%s): entry e%u: index %u, scan %u\n", attr, val, i,
					s.by_index[i], s.by_scan[i]);
			}
			matched += s.by_scan[i];
		}
		hashed += strlen(val) > 600;
	}
	printf("property: 1500 assertions, %u matches (%u long-value assertions)\n", matched, hashed);
	CHECK(matched > 1000 && hashed > 10);
	prop_pres_sub(r);
	lfe_store_reader_free(r);
	lfe_store_close(st);
}

/* ---- the planner ---- */

static int count_emit(void *ctx, const struct lfe_ldap_entry *e)
{
	(void)e;
	(*(unsigned *)ctx)++;
	return 0;
}

static int put_account(struct lfe_store *st, unsigned i)
{
	char dn[80], uid[16], num[16];
	snprintf(dn, sizeof(dn), "uid=user%u,ou=people," SUFFIX, i);
	snprintf(uid, sizeof(uid), "user%u", i);
	snprintf(num, sizeof(num), "%u", 10000 + i);
	struct lfe_bytes oc[3] = { S("top"), S("posixAccount"), S("inetOrgPerson") };
	struct lfe_bytes u = S(uid), n = S(num), g = S("100");
	struct lfe_ldap_attr a[] = {
		{ .type = S("objectClass"), .vals = oc, .n_vals = 3 },
		{ .type = S("uid"), .vals = &u, .n_vals = 1 },
		{ .type = S("cn"), .vals = &u, .n_vals = 1 },
		{ .type = S("uidNumber"), .vals = &n, .n_vals = 1 },
		{ .type = S("gidNumber"), .vals = &g, .n_vals = 1 },
	};
	return lfe_store_put(st, S(dn), a, sizeof(a) / sizeof(a[0]), false);
}

/* (&(uidNumber=N)(objectclass=posixAccount)(uid=*)(&(uidNumber=*)(!(uidNumber=0)))) */
static void sssd_by_number(struct bb *f, const char *num)
{
	size_t and = f->n;
	bb_eq(f, "uidNumber", num);
	bb_eq(f, "objectclass", "posixAccount");
	bb_octets(f, 0x87, "uid");
	size_t in = f->n;
	bb_octets(f, 0x87, "uidNumber");
	size_t not = f->n;
	bb_eq(f, "uidNumber", "0");
	bb_wrap(f, not, 0xa2);
	bb_wrap(f, in, 0xa0);
	bb_wrap(f, and, 0xa0);
}

static void test_planner(void)
{
	struct lfe_store *st = lfe_store_open(dir("plan"), 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
	CHECK_EQ(lfe_store_batch_begin(st), 0);
	for (unsigned i = 0; i < 1000; i++)
		CHECK_EQ(put_account(st, i), 0);
	CHECK_EQ(lfe_store_batch_commit(st), 0);
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	if (!r)
		return;
	struct lfe_search_stats stats;
	unsigned n = 0;
	struct bb f = { fb, 0 };
	size_t at = f.n;
	bb_eq(&f, "objectClass", "posixAccount");
	bb_eq(&f, "uidNumber", "10999");
	bb_wrap(&f, at, 0xa0);
	CHECK_EQ(search(r, &f, &n, count_emit, &stats), LFE_RC_SUCCESS);
	CHECK_EQ(n, 1);
	CHECK_EQ(stats.visited, 1);

	f.n = 0;
	sssd_by_number(&f, "10500");
	n = 0;
	CHECK_EQ(search(r, &f, &n, count_emit, &stats), LFE_RC_SUCCESS);
	CHECK_EQ(n, 1);
	CHECK_EQ(stats.visited, 1);

	f.n = 0;
	bb_eq(&f, "uidNumber", "10001");   /* bare: was unwillingToPerform (53) */
	n = 0;
	CHECK_EQ(search(r, &f, &n, count_emit, &stats), LFE_RC_SUCCESS);
	CHECK_EQ(n, 1);

	f.n = 0;
	bb_eq(&f, "gidNumber", "100");
	n = 0;
	CHECK_EQ(search(r, &f, &n, count_emit, &stats), LFE_RC_SUCCESS);
	CHECK_EQ(n, 1000);

	/* index del: this reader refuses the dropped index from its next
	 * snapshot; index add builds one from the entries. */
	CHECK_EQ(lfe_store_index_del(st, "uidNumber"), 0);
	CHECK_EQ(lfe_store_index_del(st, "uidNumber"), -ENOENT);
	CHECK_EQ(lfe_store_reader_renew(r), 0);
	f.n = 0;
	bb_eq(&f, "uidNumber", "10001");
	n = 0;
	CHECK_EQ(search(r, &f, &n, count_emit, &stats), LFE_RC_UNWILLING_TO_PERFORM);
	CHECK_EQ(lfe_store_index_add(st, "1.3.6.1.1.1.1.0"), 0);    /* uidNumber by OID */
	CHECK_EQ(lfe_store_index_add(st, "uidnumber"), -EEXIST);
	CHECK_EQ(lfe_store_index_add(st, "userPassword"), -EINVAL);
	struct lfe_store_reader *r2 = lfe_store_reader_new(st);
	CHECK(r2 != NULL);
	n = 0;
	if (r2)
		CHECK_EQ(search(r2, &f, &n, count_emit, &stats), LFE_RC_SUCCESS);
	CHECK_EQ(n, 1);
	/* A presence index: (uidNumber=*) walks its list; beside an equality
	 * item the equality list (1) wins; dropping the presence kind alone
	 * refuses (attr=*) from the next snapshot and keeps equality. */
	/* (&) (RFC 4526's absolute true): no item an index answers, 53, not a
	 * protocol error. */
	static const uint8_t and_empty[] = { 0xa0, 0x00 };
	struct bb fe = { (uint8_t *)and_empty, sizeof(and_empty) };
	if (r2)
		CHECK_EQ(search(r2, &fe, &n, count_emit, &stats), LFE_RC_UNWILLING_TO_PERFORM);
	CHECK_EQ(lfe_store_index_add_kind(st, "uidNumber", LFE_INDEX_PRES), 0);
	struct lfe_store_reader *r3 = lfe_store_reader_new(st);
	CHECK(r3 != NULL);
	if (!r3)
		return;
	struct bb fp = { fb + 4096, 0 };
	bb_octets(&fp, 0x87, "uidNumber");
	n = 0;
	CHECK_EQ(search(r3, &fp, &n, count_emit, &stats), LFE_RC_SUCCESS);
	CHECK_EQ(n, 1000);
	CHECK_EQ(stats.planned_count, 1000);
	bb_eq(&fp, "uidNumber", "10001");
	bb_wrap(&fp, 0, 0xa0);
	n = 0;
	CHECK_EQ(search(r3, &fp, &n, count_emit, &stats), LFE_RC_SUCCESS);
	CHECK_EQ(n, 1);
	CHECK_EQ(stats.visited, 1);
	CHECK_EQ(lfe_store_index_del_kind(st, "uidNumber", LFE_INDEX_PRES), 0);
	CHECK_EQ(lfe_store_index_del_kind(st, "uidNumber", LFE_INDEX_PRES), -ENOENT);
	CHECK_EQ(lfe_store_reader_renew(r3), 0);
	fp.n = 0;
	bb_octets(&fp, 0x87, "uidNumber");
	CHECK_EQ(search(r3, &fp, &n, count_emit, &stats), LFE_RC_UNWILLING_TO_PERFORM);
	n = 0;
	CHECK_EQ(search(r3, &f, &n, count_emit, &stats), LFE_RC_SUCCESS);
	CHECK_EQ(n, 1);
	lfe_store_reader_free(r3);
	struct lfe_store_index ix[LFE_STORE_MAX_INDEX];
	int ni = lfe_store_index_list(st, ix, LFE_STORE_MAX_INDEX);
	CHECK_EQ(ni, 11);
	CHECK(ni == 11 && strcmp(ix[10].attr, "uidnumber") == 0 && ix[10].keys == 1000 &&
	      ix[10].rule == LFE_MR_INTEGER);
	lfe_store_reader_free(r2);
	lfe_store_reader_free(r);
	lfe_store_close(st);
}

/* ---- upgrade from format 2 ---- */

/* Make a fresh store look as a format 2 build leaves one: format 2, no
 * index list or key, only the four legacy index databases. */
static void make_format2(const char *path)
{
	static const char *const extra[] = { "uidnumber", "gidnumber", "memberuid", "member",
					     "uniquemember", "memberof", "entryuuid" };
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi meta, dbi;
	char name[64];

	CHECK(mdb_env_create(&env) == 0);
	mdb_env_set_maxdbs(env, 64);
	mdb_env_set_mapsize(env, 64u << 20);
	CHECK(mdb_env_open(env, path, 0, 0640) == 0);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	CHECK(mdb_dbi_open(txn, "meta", 0, &meta) == 0);
	MDB_val k = { 6, "format" }, v = { 4, (uint8_t[]){ 2, 0, 0, 0 } };
	CHECK(mdb_put(txn, meta, &k, &v, 0) == 0);
	k = (MDB_val){ 5, "index" };
	CHECK(mdb_del(txn, meta, &k, NULL) == 0);
	k = (MDB_val){ 9, "index.key" };
	CHECK(mdb_del(txn, meta, &k, NULL) == 0);
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		snprintf(name, sizeof(name), "idx.%s", extra[i]);
		CHECK(mdb_dbi_open(txn, name, MDB_DUPSORT, &dbi) == 0);
		CHECK(mdb_drop(txn, dbi, 1) == 0);
	}
	CHECK(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
}

static void test_upgrade(void)
{
	struct lfe_store *st = lfe_store_open(dir("up"), 0, 64u << 20, NULL, NULL);
	struct lfe_store_info info;
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK_EQ(lfe_store_init(st, SUFFIX), 0);
	for (unsigned i = 0; i < 50; i++)
		CHECK_EQ(put_account(st, i), 0);
	lfe_store_close(st);
	make_format2(dir("up"));

	st = lfe_store_open(dir("up"), 0, 64u << 20, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK(lfe_store_info(st, &info) == 0 && info.format_version == 2);
	CHECK_EQ(lfe_store_index_list(st, NULL, 0), 4);
	CHECK_EQ(lfe_store_index_add(st, "gecos"), -EPROTO);
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	struct lfe_search_stats stats;
	struct bb f = { fb, 0 };
	unsigned n = 0;
	bb_eq(&f, "uidNumber", "10042");
	CHECK(r != NULL);
	if (r)
		CHECK_EQ(search(r, &f, &n, count_emit, &stats), LFE_RC_UNWILLING_TO_PERFORM);
	lfe_store_reader_free(r);
	/* Writes to a format 2 store keep its four indexes. */
	CHECK_EQ(put_account(st, 50), 0);
	CHECK_EQ(lfe_store_upgrade(st), 0);
	CHECK_EQ(lfe_store_upgrade(st), -EALREADY);
	lfe_store_close(st);

	st = lfe_store_open(dir("up"), LFE_STORE_RDONLY, 0, NULL, NULL);
	CHECK(st != NULL);
	if (!st)
		return;
	CHECK(lfe_store_info(st, &info) == 0 && info.format_version == 3 && info.bind_index);
	CHECK_EQ(lfe_store_index_list(st, NULL, 0), 11);
	r = lfe_store_reader_new(st);
	CHECK(r != NULL);
	for (unsigned i = 0; r && i <= 50; i++) {
		char num[16];
		snprintf(num, sizeof(num), "%u", 10000 + i);
		f.n = 0;
		bb_eq(&f, "uidNumber", num);
		n = 0;
		CHECK_EQ(search(r, &f, &n, count_emit, &stats), LFE_RC_SUCCESS);
		CHECK_EQ(n, 1);
		f.n = 0;
		bb_eq(&f, "uid", num + 3);   /* "user" is not in it: none */
		n = 0;
		CHECK_EQ(search(r, &f, &n, count_emit, &stats), LFE_RC_SUCCESS);
		CHECK_EQ(n, 0);
	}
	lfe_store_reader_free(r);
	lfe_store_close(st);
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_property();
	test_planner();
	test_upgrade();
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return check_done();
}
