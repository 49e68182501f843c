/* tests/bench/bench_store.c — import and bind-verification speed of the
 * LMDB store.
 *
 *   bench_store [N [DIR [MODES]]]
 *                             N users (default 1000000), store in DIR
 *                             (default a fresh /tmp/lfe-bench-store.XXXXXX,
 *                             removed at the end; a DIR that already holds
 *                             a store of N users is reused, not imported
 *                             again); MODES: a comma list of the short
 *                             names below (default: all)
 *   LFE_BENCH_SECONDS=S        CPU seconds per run (default 1; small under
 *                             valgrind --tool=cachegrind, which then counts
 *                             misses per operation: see "operations")
 *   LFE_BENCH_PRELOAD=1        open the store with LFE_STORE_PRELOAD (store.h:
 *                             re-read into large page-cache folios, mapped
 *                             with 2 MiB entries where the filesystem can);
 *                             prints how much of the map is then 2 MiB-mapped
 *
 * Users are uid=userNNNNNNN,ou=people,dc=example,dc=com with objectClass
 * (4 values), uid, cn, sn, mail, uidNumber and an {SSHA} userPassword of
 * their own (hashed before the clock starts). Prints:
 *   - import rate: one batch through a LFE_STORE_BULK writer, DN building
 *     and normalization included, commit and fsync included;
 *   - store bytes per entry (pages in use × page size / N);
 *   - lookups/s and lookup+{SSHA} verify/s of random users on one core,
 *     through a read-only store as the daemon opens it, the reader renewed
 *     every 4096 operations; median of 5 runs of >= 1 s of CPU each;
 *   - the same binds through the verified-credential cache (credcache.h,
 *     room for twice the users, each bound once first): a hit while the store
 *     is unchanged, and misses — a wrong password of an existing user
 *     against an unknown DN, each then taking the full path — beside the
 *     full path alone for both (the dummy scheme is {SSHA}, the users');
 *     and (mode "hit-ahead") hits whose next key is made and its buckets
 *     prefetched before the probe, as the daemon's bind peek does;
 *   - the timing oracle: the cost of an unknown DN over that of a wrong
 *     password for an existing user (1.00 = indistinguishable), from the
 *     runs above and (modes "paired", "cpaired") from binds of the kinds
 *     taking turns, each timed alone, which a shared machine's load
 *     changes disturb much less. Two kinds
 *     of unknown DN: one that sorts between existing entries (the DN of a
 *     random user with "ou=people" changed to "ou=qeople"), as a guessed
 *     name does, and one that sorts after every entry (user's "uid=user"
 *     changed to "uid=usex": all of them land on the same last leaf of
 *     the B-tree, so they stay in cache whatever the store does).
 * Rates are per CPU second of this thread (what one dedicated core would
 * do); the wall-clock rate is printed beside them, lower when the machine
 * is shared.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/credcache.h"
#include "backend/pwscheme.h"
#include "backend/store.h"

#define SUFFIX   "dc=example,dc=com"
#define DN_FMT   "uid=user%07u,ou=people," SUFFIX
#define DIGITS_AT 8   /* offset of NNNNNNN in DN_FMT */
#define OU_AT    19   /* offset of the "p" of "ou=people" in DN_FMT */
#define RUNS     5

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this thread: on a shared 2-vCPU machine the wall clock also
 * counts the time other processes held the core, so rates "per core" are
 * given per CPU second, with the wall-clock rate beside them. */
static double cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static uint64_t rng(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Write n as 7 digits into p: cheaper than snprintf in the timed loop. */
static void digits7(char *p, unsigned n)
{
	for (int i = 6; i >= 0; i--, n /= 10)
		p[i] = (char)('0' + n % 10);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define B(s) { (const uint8_t *)(s), sizeof(s) - 1 }

static int import(const char *path, unsigned n, char (*hashes)[48])
{
	static const struct lfe_bytes oc[] = {
		B("top"), B("person"), B("organizationalPerson"), B("inetOrgPerson"),
	};
	char dn[64], uid[16], cn[16], sn[8], mail[40], num[12];
	struct lfe_bytes v_uid, v_cn, v_sn, v_mail, v_num, v_pw;
	struct lfe_ldap_attr attrs[] = {
		{ B("objectClass"), 4, oc }, { B("uid"), 1, &v_uid }, { B("cn"), 1, &v_cn },
		{ B("sn"), 1, &v_sn }, { B("mail"), 1, &v_mail }, { B("uidNumber"), 1, &v_num },
		{ B("userPassword"), 1, &v_pw },
	};
	struct lfe_store_info info;
	struct lfe_store *st;
	const char *msg = "";
	double t0, t1, c0, c1;
	int rc, err = 0;

	st = lfe_store_open(path, LFE_STORE_BULK, 0, &err, &msg);
	if (!st) {
		fprintf(stderr, "open %s: %d %s\n", path, err, msg);
		return 1;
	}
	rc = lfe_store_init(st, SUFFIX);
	if (rc != 0) {
		fprintf(stderr, "init: %d\n", rc);
		lfe_store_close(st);
		return 1;
	}
	t0 = now_s();
	c0 = cpu_s();
	rc = lfe_store_batch_begin(st);
	for (unsigned i = 0; i < n && rc == 0; i++) {
		int dl = snprintf(dn, sizeof(dn), DN_FMT, i);

		v_uid = (struct lfe_bytes){ (const uint8_t *)uid,
					    (size_t)snprintf(uid, sizeof(uid), "user%07u", i) };
		v_cn = (struct lfe_bytes){ (const uint8_t *)cn,
					   (size_t)snprintf(cn, sizeof(cn), "User %07u", i) };
		v_sn = (struct lfe_bytes){ (const uint8_t *)sn,
					   (size_t)snprintf(sn, sizeof(sn), "%07u", i) };
		v_mail = (struct lfe_bytes){ (const uint8_t *)mail,
			(size_t)snprintf(mail, sizeof(mail), "user%07u@example.com", i) };
		v_num = (struct lfe_bytes){ (const uint8_t *)num,
					    (size_t)snprintf(num, sizeof(num), "%u", 10000 + i) };
		v_pw = (struct lfe_bytes){ (const uint8_t *)hashes[i], strlen(hashes[i]) };
		rc = lfe_store_put(st, (struct lfe_bytes){ (const uint8_t *)dn, (size_t)dl },
				   attrs, sizeof(attrs) / sizeof(attrs[0]), false);
	}
	if (rc == 0) {
		rc = lfe_store_batch_commit(st);
	} else {
		fprintf(stderr, "put: %d\n", rc);
		lfe_store_batch_abort(st);
	}
	t1 = now_s();
	c1 = cpu_s();
	if (rc == 0 && lfe_store_info(st, &info) == 0) {
		printf("import: %u entries, %.2f s CPU = %.0f entries/CPU-s; wall %.2f s = %.0f "
		       "entries/s (one batch, fsync included)\n",
		       n, c1 - c0, n / (c1 - c0), t1 - t0, n / (t1 - t0));
		printf("store: %llu bytes in use = %.1f bytes/entry, %llu entries in meta\n",
		       (unsigned long long)info.map_bytes_used,
		       (double)info.map_bytes_used / n, (unsigned long long)info.entries);
	}
	lfe_store_close(st);
	return rc != 0;
}

enum op {
	OP_LOOKUP, OP_VERIFY, OP_CACHE_HIT, OP_WRONG, OP_UNKNOWN, OP_UNKNOWN_MID, OP_CACHE_WRONG,
	OP_CACHE_UNKNOWN, OP_CACHE_UNKNOWN_MID, OP_CACHE_HIT_AHEAD, OP_N,
	/* not timed runs of their own: the paired oracle (oracle_paired) */
	OP_PAIRED = OP_N, OP_CPAIRED, OP_ALL
};

static const char *const op_short[OP_ALL] = {
	[OP_LOOKUP] = "lookup", [OP_VERIFY] = "verify", [OP_CACHE_HIT] = "hit",
	[OP_WRONG] = "wrong", [OP_UNKNOWN] = "unknown", [OP_UNKNOWN_MID] = "unknown-mid",
	[OP_CACHE_WRONG] = "cwrong", [OP_CACHE_UNKNOWN] = "cunknown",
	[OP_CACHE_UNKNOWN_MID] = "cunknown-mid", [OP_CACHE_HIT_AHEAD] = "hit-ahead",
	[OP_PAIRED] = "paired", [OP_CPAIRED] = "cpaired",
};

static const char *const op_names[OP_N] = {
	[OP_LOOKUP] = "lookup",
	[OP_VERIFY] = "lookup+{SSHA} verify",
	[OP_CACHE_HIT] = "bind, cache hit (store unchanged)",
	[OP_WRONG] = "bind, wrong password, no cache",
	[OP_UNKNOWN] = "bind, unknown DN after the last entry, no cache",
	[OP_UNKNOWN_MID] = "bind, unknown DN between entries, no cache",
	[OP_CACHE_WRONG] = "bind, wrong password, cache miss",
	[OP_CACHE_UNKNOWN] = "bind, unknown DN after the last entry, cache miss",
	[OP_CACHE_UNKNOWN_MID] = "bind, unknown DN between entries, cache miss",
	[OP_CACHE_HIT_AHEAD] = "bind, cache hit, the next bind's key made and prefetched first",
};

struct op_ctx {
	struct lfe_store_reader *r;
	double seconds;             /* CPU time per run */
	uint64_t ops;               /* operations run in all, every mode */
	struct lfe_credcache *cc;
	unsigned n;
	uint64_t seed;
	enum op op;
	unsigned failures;
	/* OP_CACHE_HIT_AHEAD: the next operation's user and key, made (and
	 * its buckets prefetched) before this one's probe, as the daemon's
	 * bind peek does for the next frame. */
	bool have_next;
	unsigned u_next;
	struct lfe_credcache_key k_next;
};

/* A bind as the daemon's glue makes it: the cache first, then the full
 * path (and an insert after a success). Returns the full path's answer. */
static int cached_bind_key(struct op_ctx *c, const char *dn, size_t dl, const char *pw, size_t pl,
			   const struct lfe_credcache_key *kp)
{
	struct lfe_credcache_key k = *kp;

	if (lfe_credcache_check(c->cc, c->r, &k, dn, dl, time(NULL)) == 0)
		return 0;
	uint64_t txn = lfe_store_reader_txnid(c->r);
	int rc = lfe_store_verify_bind(c->r, dn, dl, (const uint8_t *)pw, pl, 0, NULL);
	if (rc == 0)
		lfe_credcache_insert(c->cc, c->r, &k, dn, dl, txn, time(NULL));
	return rc;
}

static int cached_bind(struct op_ctx *c, const char *dn, size_t dl, const char *pw, size_t pl)
{
	struct lfe_credcache_key k;

	lfe_credcache_key(c->cc, dn, dl, (const uint8_t *)pw, pl, 0, &k);
	return cached_bind_key(c, dn, dl, pw, pl, &k);
}

/* One operation on user u; false when its answer is not the expected one. */
static bool one_op(struct op_ctx *c, char *dn, size_t dl, char *pw, unsigned u)
{
	struct lfe_entry_view e;

	digits7(dn + DIGITS_AT, u);
	digits7(pw + 3, u);
	switch (c->op) {
	case OP_LOOKUP:
		return lfe_store_get(c->r, dn, dl, &e) == 0;
	case OP_VERIFY:
		return lfe_store_verify_bind(c->r, dn, dl, (const uint8_t *)pw, 10, 0, NULL) == 0;
	case OP_CACHE_HIT:
		return cached_bind(c, dn, dl, pw, 10) == 0;
	case OP_CACHE_HIT_AHEAD: {
		struct lfe_credcache_key k;
		char dn2[64], pw2[16];
		if (c->have_next)
			k = c->k_next;
		else
			lfe_credcache_key(c->cc, dn, dl, (const uint8_t *)pw, 10, 0, &k);
		c->u_next = (unsigned)(rng(&c->seed) % c->n);
		memcpy(dn2, dn, dl);
		memcpy(pw2, pw, 3);
		digits7(dn2 + DIGITS_AT, c->u_next);
		digits7(pw2 + 3, c->u_next);
		lfe_credcache_key(c->cc, dn2, dl, (const uint8_t *)pw2, 10, 0, &c->k_next);
		lfe_credcache_prefetch(c->cc, &c->k_next);
		c->have_next = true;
		return cached_bind_key(c, dn, dl, pw, 10, &k) == 0;
	}
	case OP_WRONG:
	case OP_UNKNOWN:
	case OP_UNKNOWN_MID:
		/* unknown: the same DN with one byte off, which no entry has */
		if (c->op == OP_UNKNOWN)
			dn[DIGITS_AT - 1] = 'x';
		else if (c->op == OP_UNKNOWN_MID)
			dn[OU_AT] = 'q';
		else
			pw[3] ^= 0x40;
		return lfe_store_verify_bind(c->r, dn, dl, (const uint8_t *)pw, 10, 0, NULL) == -EACCES;
	case OP_CACHE_WRONG:
	case OP_CACHE_UNKNOWN:
	case OP_CACHE_UNKNOWN_MID:
		if (c->op == OP_CACHE_UNKNOWN)
			dn[DIGITS_AT - 1] = 'x';
		else if (c->op == OP_CACHE_UNKNOWN_MID)
			dn[OU_AT] = 'q';
		else
			pw[3] ^= 0x40;
		return cached_bind(c, dn, dl, pw, 10) == -EACCES;
	default:
		return false;
	}
}

/* One timed run: ops per CPU second over at least one CPU second; the wall
 * rate goes to *wall. */
static double run(struct op_ctx *c, double *wall)
{
	char dn[64], pw[16];
	uint64_t ops = 0;
	double w0 = now_s(), t0 = cpu_s(), t;
	int dl = snprintf(dn, sizeof(dn), DN_FMT, 0u);

	memcpy(pw, "pw-", 3);
	c->have_next = false;
	do {
		for (int k = 0; k < 4096; k++) {
			unsigned u = c->have_next ? c->u_next : (unsigned)(rng(&c->seed) % c->n);

			if (!one_op(c, dn, (size_t)dl, pw, u))
				c->failures++;
			dn[DIGITS_AT - 1] = 'r';   /* undo OP_UNKNOWN's change */
			dn[OU_AT] = 'p';           /* and OP_UNKNOWN_MID's */
		}
		ops += 4096;
		lfe_store_reader_renew(c->r);
		t = cpu_s();
	} while (t - t0 < c->seconds);
	c->ops += ops;
	*wall = ops / (now_s() - w0);
	return ops / (t - t0);
}

/* Is op named in modes (a comma list of op_short names; NULL: all)? */
static bool mode_on(const char *modes, enum op op)
{
	size_t len = strlen(op_short[op]);

	if (!modes)
		return true;
	for (const char *p = modes; *p;) {
		size_t l = strcspn(p, ",");

		if (l == len && strncmp(p, op_short[op], len) == 0)
			return true;
		p += l + (p[l] == ',');
	}
	return false;
}

/* How much of the store's map the kernel maps with 2 MiB entries (smaps of
 * data.mdb: FilePmdMapped on a disk filesystem, ShmemPmdMapped on tmpfs). */
static void print_pmd_mapped(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	unsigned long rss = 0, pmd = 0, v;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
			in = strstr(line, "data.mdb") != NULL;
		else if (in && sscanf(line, "Rss: %lu", &v) == 1)
			rss += v;
		else if (in && (sscanf(line, "FilePmdMapped: %lu", &v) == 1 ||
				sscanf(line, "ShmemPmdMapped: %lu", &v) == 1))
			pmd += v;
	}
	fclose(f);
	printf("map: %lu MiB resident, of which %lu MiB mapped with 2 MiB entries\n",
	       rss / 1024, pmd / 1024);
}

/* "unknown DN / wrong password" cost ratio of two measured modes. */
static void print_ratio(const char *what, const double *ns, enum op unknown, enum op wrong)
{
	if (ns[unknown] > 0 && ns[wrong] > 0)
		printf("timing oracle, %s: unknown DN %.0f ns, wrong password %.0f ns, "
		       "ratio %.2f\n", what, ns[unknown], ns[wrong], ns[unknown] / ns[wrong]);
}

/* The timing oracle, paired: binds with a wrong password, of an unknown DN
 * between entries and of one after the last entry, for random users, take
 * turns, each timed alone (CLOCK_MONOTONIC); the medians of each kind come
 * from the same stretch of time, so a change of load on a shared machine
 * (which moves the separate runs above by 10-20%) hits all three alike.
 * kinds: OP_WRONG, OP_UNKNOWN_MID, OP_UNKNOWN (or their cache-miss twins). */
#define PAIRED_SAMPLES 100000u
static void oracle_paired(struct op_ctx *c, const enum op kinds[3], const char *what)
{
	static double t[3][PAIRED_SAMPLES];
	char dn[64], pw[16];
	int dl = snprintf(dn, sizeof(dn), DN_FMT, 0u);
	double med[3];

	memcpy(pw, "pw-", 3);
	for (unsigned i = 0; i < PAIRED_SAMPLES; i++) {
		for (unsigned k = 0; k < 3; k++) {
			unsigned u = (unsigned)(rng(&c->seed) % c->n);
			double t0;

			c->op = kinds[(i + k) % 3];
			t0 = now_s();
			if (!one_op(c, dn, (size_t)dl, pw, u))
				c->failures++;
			t[(i + k) % 3][i] = now_s() - t0;
			dn[DIGITS_AT - 1] = 'r';
			dn[OU_AT] = 'p';
		}
		if (i % 4096 == 4095)
			lfe_store_reader_renew(c->r);
	}
	for (unsigned k = 0; k < 3; k++) {
		qsort(t[k], PAIRED_SAMPLES, sizeof(t[k][0]), cmp_double);
		med[k] = t[k][PAIRED_SAMPLES / 2] * 1e9;
	}
	printf("timing oracle, paired, %s (medians of %u each, turns): wrong password %.0f ns, "
	       "unknown DN between entries %.0f ns (ratio %.3f), after the last entry %.0f ns "
	       "(ratio %.3f)\n", what, PAIRED_SAMPLES, med[0], med[1], med[1] / med[0], med[2],
	       med[2] / med[0]);
}

static int lookups(const char *path, unsigned n, const char *modes)
{
	double ns[OP_N] = { 0 };
	struct lfe_store *st;
	struct op_ctx c = { .n = n, .seed = 0x9e3779b97f4a7c15ull, .seconds = 1.0 };
	const char *sec = getenv("LFE_BENCH_SECONDS");

	if (sec && strtod(sec, NULL) > 0)
		c.seconds = strtod(sec, NULL);
	const char *msg = "";
	int err = 0;

	const char *pre = getenv("LFE_BENCH_PRELOAD");
	bool preload = pre && strcmp(pre, "1") == 0;
	double p0 = now_s();
	st = lfe_store_open(path, LFE_STORE_RDONLY | (preload ? LFE_STORE_PRELOAD : 0), 0, &err,
			    &msg);
	if (!st) {
		fprintf(stderr, "open ro %s: %d %s\n", path, err, msg);
		return 1;
	}
	if (preload)
		printf("preload: %.2f s\n", now_s() - p0);
	/* Unknown DNs are verified against the users' own scheme. */
	if (lfe_store_set_bind_scheme(st, "{SSHA}") != 0)
		fprintf(stderr, "cannot set the bind scheme\n");
	c.r = lfe_store_reader_new(st);
	c.cc = lfe_credcache_new(2 * n, NULL, NULL);   /* twice the users, as run-bench sizes it */
	bool cached = mode_on(modes, OP_CACHE_HIT) || mode_on(modes, OP_CACHE_HIT_AHEAD) ||
		      mode_on(modes, OP_CACHE_WRONG) ||
		      mode_on(modes, OP_CACHE_UNKNOWN) || mode_on(modes, OP_CACHE_UNKNOWN_MID) ||
		      mode_on(modes, OP_CPAIRED);
	if (c.r && c.cc && cached) {
		/* Every user bound once: the hits below find their entries. */
		char dn[64], pw[16];
		int dl = snprintf(dn, sizeof(dn), DN_FMT, 0u);
		memcpy(pw, "pw-", 3);
		for (unsigned u = 0; u < n; u++) {
			digits7(dn + DIGITS_AT, u);
			digits7(pw + 3, u);
			cached_bind(&c, dn, (size_t)dl, pw, 10);
		}
	}
	for (int mode = 0; mode < OP_N && c.r && c.cc; mode++) {
		double rates[RUNS], walls[RUNS];

		if (!mode_on(modes, (enum op)mode))
			continue;
		c.op = (enum op)mode;
		for (int i = 0; i < RUNS; i++)
			rates[i] = run(&c, &walls[i]);
		qsort(rates, RUNS, sizeof(rates[0]), cmp_double);
		qsort(walls, RUNS, sizeof(walls[0]), cmp_double);
		printf("%s: median %.0f /CPU-s on one core (min %.0f, max %.0f), %.0f ns/op; "
		       "wall median %.0f /s\n", op_names[mode], rates[RUNS / 2], rates[0],
		       rates[RUNS - 1], 1e9 / rates[RUNS / 2], walls[RUNS / 2]);
		ns[mode] = 1e9 / rates[RUNS / 2];
	}
	if (c.r && c.cc && mode_on(modes, OP_PAIRED))
		oracle_paired(&c, (const enum op[3]){ OP_WRONG, OP_UNKNOWN_MID, OP_UNKNOWN },
			      "no cache");
	if (c.r && c.cc && mode_on(modes, OP_CPAIRED))
		oracle_paired(&c, (const enum op[3]){ OP_CACHE_WRONG, OP_CACHE_UNKNOWN_MID,
						      OP_CACHE_UNKNOWN }, "cache miss");
	print_ratio("between entries, no cache", ns, OP_UNKNOWN_MID, OP_WRONG);
	print_ratio("after the last entry, no cache", ns, OP_UNKNOWN, OP_WRONG);
	print_ratio("between entries, cache miss", ns, OP_CACHE_UNKNOWN_MID, OP_CACHE_WRONG);
	print_ratio("after the last entry, cache miss", ns, OP_CACHE_UNKNOWN, OP_CACHE_WRONG);
	printf("operations: %llu in all modes\n", (unsigned long long)c.ops);
	print_pmd_mapped();
	if (c.failures)
		printf("FAILED operations: %u\n", c.failures);
	if (c.cc) {
		const struct lfe_credcache_stats *cs = lfe_credcache_stats(c.cc);
		printf("cache: %u entries, hits %llu, misses %llu, inserts %llu, evictions %llu\n",
		       lfe_credcache_capacity(c.cc), (unsigned long long)cs->hits,
		       (unsigned long long)cs->misses, (unsigned long long)cs->inserts,
		       (unsigned long long)cs->evictions);
	}
	lfe_credcache_free(c.cc);
	lfe_store_reader_free(c.r);
	lfe_store_close(st);
	return c.failures != 0;
}

/* Entries of the store in path, 0 when there is none. */
static uint64_t stored_entries(const char *path)
{
	struct lfe_store_info info;
	struct lfe_store *st = lfe_store_open(path, LFE_STORE_RDONLY, 0, NULL, NULL);
	uint64_t n = st && lfe_store_info(st, &info) == 0 ? info.entries : 0;

	lfe_store_close(st);
	return n;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000000u;
	char tmpl[] = "/tmp/lfe-bench-store.XXXXXX";
	const char *path = argc > 2 ? argv[2] : NULL;
	char (*hashes)[48];
	char cmd[300];
	double t0;
	int rc;

	if (n == 0 || n > 9999999) {
		fprintf(stderr, "usage: %s [N (1..9999999) [DIR [MODES]]]\n", argv[0]);
		return 2;
	}
	if (path && stored_entries(path) == n) {
		printf("reusing the store of %u users in %s\n", n, path);
		return lookups(path, n, argc > 3 ? argv[3] : NULL);
	}
	if (!path && !(path = mkdtemp(tmpl))) {
		perror("mkdtemp");
		return 1;
	}
	hashes = malloc((size_t)n * sizeof(*hashes));
	if (!hashes)
		return 1;
	t0 = now_s();
	for (unsigned i = 0; i < n; i++) {
		char pw[16];

		snprintf(pw, sizeof(pw), "pw-%07u", i);
		if (lfe_pw_hash("{SSHA}", (const uint8_t *)pw, 10, hashes[i], sizeof(hashes[i])) <= 0) {
			fprintf(stderr, "lfe_pw_hash failed\n");
			return 1;
		}
	}
	printf("hashing: %u {SSHA} values in %.2f s (not part of the import figure)\n",
	       n, now_s() - t0);
	rc = import(path, n, hashes);
	free(hashes);
	if (rc == 0)
		rc = lookups(path, n, argc > 3 ? argv[3] : NULL);
	if (argc <= 2) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
		if (system(cmd) != 0)
			fprintf(stderr, "cleanup of %s failed\n", path);
	}
	return rc;
}
