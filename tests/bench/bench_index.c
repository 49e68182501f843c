/* tests/bench/bench_index.c — what an intersection of two index lists
 * would save (issue 26, docs/BENCHMARKS.md "Measurements behind the design"): per candidate,
 * the walk's cost (lfe_store_search: the entry read and the whole filter
 * evaluated) against reading one DN of an index list and against probing a
 * list for one DN (the two ways an intersection reads the second list).
 *   bench_index [N] [DIR]   N entries (default 20000), store in DIR (tmp)
 * Prints ns per candidate walked, per DN read, per DN probed (medians of
 * 5 runs). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/search.h"
#include "backend/store.h"

#define SUFFIX "dc=example,dc=com"

static struct lfe_bytes S(const char *s)
{
	return (struct lfe_bytes){ (const uint8_t *)s, strlen(s) };
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int emit(void *ctx, const struct lfe_ldap_entry *e)
{
	(void)ctx;
	(void)e;
	return 0;
}

static unsigned long seen;
static int count_dn(void *ctx, const char *ndn, size_t len)
{
	(void)ctx;
	(void)ndn;
	seen += len > 0;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 20000;
	char tmpl[] = "/tmp/lfe-bench-index.XXXXXX";
	const char *dir = argc > 2 ? argv[2] : mkdtemp(tmpl);
	struct lfe_store *st = lfe_store_open(dir, 0, 1ull << 30, NULL, NULL);
	if (!st || lfe_store_init(st, SUFFIX) < 0 || lfe_store_batch_begin(st) < 0)
		return fprintf(stderr, "bench_index: cannot make a store in %s\n", dir), 1;
	for (unsigned i = 0; i < n; i++) {
		char dn[64], uid[16], num[16], cn[32], home[32];
		snprintf(dn, sizeof(dn), "uid=user%u,ou=people," SUFFIX, i);
		snprintf(uid, sizeof(uid), "user%u", i);
		snprintf(num, sizeof(num), "%u", 10000 + i);
		snprintf(cn, sizeof(cn), "User %u", i);
		snprintf(home, sizeof(home), "/home/user%u", i);
		struct lfe_bytes oc[2] = { S("inetOrgPerson"), S("posixAccount") }, u = S(uid),
				 nu = S(num), c = S(cn), h = S(home), sh = S("/bin/sh");
		struct lfe_ldap_attr a[] = {
			{ .type = S("objectClass"), .vals = oc, .n_vals = 2 },
			{ .type = S("uid"), .vals = &u, .n_vals = 1 },
			{ .type = S("cn"), .vals = &c, .n_vals = 1 },
			{ .type = S("sn"), .vals = &u, .n_vals = 1 },
			{ .type = S("uidNumber"), .vals = &nu, .n_vals = 1 },
			{ .type = S("gidNumber"), .vals = &nu, .n_vals = 1 },
			{ .type = S("homeDirectory"), .vals = &h, .n_vals = 1 },
			{ .type = S("loginShell"), .vals = &sh, .n_vals = 1 },
		};
		if (lfe_store_put(st, S(dn), a, sizeof(a) / sizeof(a[0]), false) < 0)
			return fprintf(stderr, "bench_index: put failed\n"), 1;
	}
	if (lfe_store_batch_commit(st) < 0)
		return 1;
	struct lfe_store_reader *r = lfe_store_reader_new(st);
	if (!r)
		return 1;
	/* (&(objectClass=posixAccount)(gecos=none)): every posixAccount is a
	 * candidate, read and evaluated, none matches. */
	static const uint8_t f[] = {
		0xa0, 0x2c,
		0xa3, 0x1b, 0x04, 0x0b, 'o', 'b', 'j', 'e', 'c', 't', 'C', 'l', 'a', 's', 's',
		0x04, 0x0c, 'p', 'o', 's', 'i', 'x', 'A', 'c', 'c', 'o', 'u', 'n', 't',
		0xa3, 0x0d, 0x04, 0x05, 'g', 'e', 'c', 'o', 's', 0x04, 0x04, 'n', 'o', 'n', 'e',
	};
	struct lfe_search_req req = { .scope = LFE_SCOPE_SUB, .filter = { f, sizeof(f) } };
	struct lfe_search_params p = {
		.base_ndn = SUFFIX, .base_ndn_len = strlen(SUFFIX),
		.suffix = SUFFIX, .suffix_len = strlen(SUFFIX), .req = &req,
		.max_candidates = n + 10, .max_work = ~0ull >> 2,
	};
	double walk[5], rd[5], probe[5];
	for (int k = 0; k < 5; k++) {
		struct lfe_search_stats stats;
		double t0 = now_ns();
		int rc = lfe_store_search(r, &p, emit, NULL, &stats);
		walk[k] = (now_ns() - t0) / n;
		if (rc != 0 || stats.visited != n)
			return fprintf(stderr, "bench_index: search rc %d visited %u\n", rc,
				       (unsigned)stats.visited), 1;
		t0 = now_ns();
		seen = 0;
		lfe_store_index_each(r, "objectClass", (const uint8_t *)"posixAccount", 12, count_dn,
				     NULL);
		rd[k] = (now_ns() - t0) / n;
		/* A probe: the list of one uid number (one key lookup). */
		t0 = now_ns();
		uint64_t cnt, tot = 0;
		for (unsigned i = 0; i < n; i++) {
			char num[16];
			int l = snprintf(num, sizeof(num), "%u", 10000 + i);
			lfe_store_index_count(r, "uidNumber", (const uint8_t *)num, (size_t)l, &cnt);
			tot += cnt;
		}
		probe[k] = (now_ns() - t0) / n;
		if (seen != n || tot != n)
			return fprintf(stderr, "bench_index: %lu read, %llu probed\n", seen,
				       (unsigned long long)tot), 1;
	}
	qsort(walk, 5, sizeof(double), cmpd);
	qsort(rd, 5, sizeof(double), cmpd);
	qsort(probe, 5, sizeof(double), cmpd);
	printf("bench_index: %u entries: walk %.0f ns/candidate, list read %.0f ns/DN, "
	       "probe %.0f ns/lookup (medians of 5)\n", n, walk[2], rd[2], probe[2]);
	lfe_store_reader_free(r);
	lfe_store_close(st);
	return 0;
}
