/* tests/ldap/test_dnpool.c — the per-core DN pool (ldap/dnpool.h): size
 * classes, a dry pool, pages going back and being reused, and a random
 * get/put churn checked against a model (no chunk overlaps another, every
 * count right). The session's use of it is in test_session.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/dn.h"
#include "ldap/dnpool.h"
#include "tests/check.h"

static struct lfe_dnpool_stats stats(const struct lfe_dnpool *p)
{
	struct lfe_dnpool_stats st;
	lfe_dnpool_stats(p, &st);
	return st;
}

static void test_classes(void)
{
	static const struct {
		size_t n, want;
	} cases[] = {
		{ 0, 0 }, { 1, 32 }, { 32, 32 }, { 33, 64 }, { 44, 64 }, { 128, 128 },
		{ 129, 256 }, { 1024, 1024 }, { LFE_DN_MAX + 1, 2048 }, { 2048, 2048 },
		{ 2049, 0 }, { SIZE_MAX, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK(lfe_dnpool_chunk_size(cases[i].n) == cases[i].want, "chunk_size(%zu) = %zu want %zu",
		      cases[i].n, lfe_dnpool_chunk_size(cases[i].n), cases[i].want);
	CHECK(lfe_dnpool_chunk_size(LFE_DN_MAX + 1) != 0, "a maximal DN has a class");
}

/* Three pages: one of 32 B chunks, two of 2 KiB; then dry, then pages back. */
static void test_dry_and_pages(void)
{
	struct lfe_dnpool *p = lfe_dnpool_new(3 * LFE_DNPOOL_PAGE);
	CHECK(p != NULL, "new");
	if (!p)
		return;
	CHECK(stats(p).pages_max == 3, "pages_max %llu", (unsigned long long)stats(p).pages_max);
	CHECK(lfe_dnpool_get(p, 0) == NULL && lfe_dnpool_get(p, 2049) == NULL, "size out of range");
	CHECK(stats(p).dry == 0 && stats(p).chunks == 0, "out-of-range gets counted");

	enum { N32 = LFE_DNPOOL_PAGE / 32 };
	uint8_t *small[N32];
	for (unsigned i = 0; i < N32; i++) {
		small[i] = lfe_dnpool_get(p, 20);
		CHECK(small[i] != NULL, "32 B chunk %u", i);
		if (small[i])
			memset(small[i], (int)(i & 0xff), 32);
	}
	uint8_t *big[4];
	for (unsigned i = 0; i < 4; i++) {
		big[i] = lfe_dnpool_get(p, LFE_DN_MAX + 1);
		CHECK(big[i] != NULL, "2 KiB chunk %u", i);
		if (big[i])
			memset(big[i], 0xa0 + (int)i, 2048);
	}
	struct lfe_dnpool_stats st = stats(p);
	CHECK(st.chunks == N32 + 4 && st.bytes == N32 * 32u + 4 * 2048u && st.pages == 3,
	      "full: %llu chunks %llu bytes %llu pages", (unsigned long long)st.chunks,
	      (unsigned long long)st.bytes, (unsigned long long)st.pages);
	/* Full: every class is refused and counted. */
	CHECK(lfe_dnpool_get(p, 2048) == NULL, "2 KiB from a full pool");
	CHECK(lfe_dnpool_get(p, 10) == NULL, "32 B from a full pool");
	CHECK(lfe_dnpool_get(p, 100) == NULL, "128 B from a full pool");
	CHECK(stats(p).dry == 3, "dry %llu", (unsigned long long)stats(p).dry);
	/* Nothing overlapped: every chunk still holds its own pattern. */
	for (unsigned i = 0; i < N32; i++)
		for (unsigned k = 0; k < 32 && small[i]; k++)
			if (small[i][k] != (uint8_t)i) {
				CHECK(0, "32 B chunk %u overwritten", i);
				break;
			}
	for (unsigned i = 0; i < 4; i++)
		CHECK(big[i] && big[i][0] == 0xa0 + i && big[i][2047] == 0xa0 + i, "2 KiB chunk %u", i);

	/* A returned chunk is handed out again (same class). */
	lfe_dnpool_put(p, small[7]);
	CHECK(stats(p).chunks == N32 + 3, "after one put");
	uint8_t *again = lfe_dnpool_get(p, 32);
	CHECK(again == small[7], "returned 32 B chunk reused");
	/* The page is still the 32 B class's: a 64 B get finds no room. */
	CHECK(lfe_dnpool_get(p, 64) == NULL, "64 B from a page of 32 B chunks");

	/* A page whose chunks all come back serves another class. */
	lfe_dnpool_put(p, big[0]);
	CHECK(lfe_dnpool_get(p, 200) == NULL, "a half-used 2 KiB page lent to 256 B");
	lfe_dnpool_put(p, big[1]);
	st = stats(p);
	CHECK(st.pages == 2 && st.pages_touched == 3, "pages %llu touched %llu",
	      (unsigned long long)st.pages, (unsigned long long)st.pages_touched);
	uint8_t *mid = lfe_dnpool_get(p, 200);
	CHECK(mid != NULL, "256 B on the page given back");
	CHECK(mid == big[0] || mid == big[1], "the page given back is reused");

	/* put(NULL) and a pointer outside the pool change nothing. */
	uint8_t outside[64];
	st = stats(p);
	lfe_dnpool_put(p, NULL);
	lfe_dnpool_put(p, outside);
	CHECK(stats(p).chunks == st.chunks, "foreign put counted");

	for (unsigned i = 0; i < N32; i++)
		lfe_dnpool_put(p, small[i]);
	lfe_dnpool_put(p, big[2]);
	lfe_dnpool_put(p, big[3]);
	lfe_dnpool_put(p, mid);
	st = stats(p);
	CHECK(st.chunks == 0 && st.bytes == 0 && st.pages == 0, "all back: %llu chunks %llu bytes %llu pages",
	      (unsigned long long)st.chunks, (unsigned long long)st.bytes, (unsigned long long)st.pages);
	lfe_dnpool_free(p);
	lfe_dnpool_free(NULL);
}

/* Random gets and puts of random sizes against a model: each live chunk
 * holds its id; counts and bytes match; a refusal happens only when no
 * page is free (the pool is small enough to run dry). */
static void test_churn(void)
{
	enum { PAGES = 12, LIVE = 512, OPS = 200000 };
	struct lfe_dnpool *p = lfe_dnpool_new(PAGES * LFE_DNPOOL_PAGE);
	CHECK(p != NULL, "new");
	if (!p)
		return;
	struct {
		uint8_t *c;
		size_t n;
		uint8_t id;
	} live[LIVE] = { { 0 } };
	uint64_t n_live = 0, bytes = 0, refused = 0;
	uint32_t x = 12345;
	for (unsigned op = 0; op < OPS; op++) {
		x = x * 1103515245u + 12345u;
		unsigned slot = (x >> 8) % LIVE;
		if (live[slot].c) {
			for (size_t k = 0; k < live[slot].n; k++)
				if (live[slot].c[k] != live[slot].id) {
					CHECK(0, "op %u: chunk of slot %u overwritten", op, slot);
					goto out;
				}
			lfe_dnpool_put(p, live[slot].c);
			live[slot].c = NULL;
			n_live--;
			bytes -= lfe_dnpool_chunk_size(live[slot].n);
			continue;
		}
		/* Mostly short DNs, now and then a long one. */
		size_t n = (x >> 20) % 8 == 0 ? 1 + (x >> 3) % 2048 : 20 + (x >> 3) % 100;
		uint8_t *c = lfe_dnpool_get(p, n);
		if (c == NULL) {
			refused++;
			CHECK(stats(p).pages == PAGES, "op %u: refused with %llu of %d pages used", op,
			      (unsigned long long)stats(p).pages, PAGES);
			continue;
		}
		live[slot].c = c;
		live[slot].n = n;
		live[slot].id = (uint8_t)op;
		memset(c, live[slot].id, n);
		n_live++;
		bytes += lfe_dnpool_chunk_size(n);
		struct lfe_dnpool_stats st = stats(p);
		if (st.chunks != n_live || st.bytes != bytes) {
			CHECK(0, "op %u: %llu chunks %llu bytes, model %llu %llu", op,
			      (unsigned long long)st.chunks, (unsigned long long)st.bytes,
			      (unsigned long long)n_live, (unsigned long long)bytes);
			goto out;
		}
	}
	CHECK(refused > 0 && refused == stats(p).dry, "refused %llu dry %llu (the pool should run dry)",
	      (unsigned long long)refused, (unsigned long long)stats(p).dry);
out:
	for (unsigned i = 0; i < LIVE; i++)
		lfe_dnpool_put(p, live[i].c);
	CHECK(stats(p).chunks == 0 && stats(p).pages == 0, "churn: all back");
	CHECK(stats(p).pages_touched <= PAGES, "touched beyond the bound");
	lfe_dnpool_free(p);
}

/* A pool for a million connections reserves address space only. */
static void test_large_lazy(void)
{
	struct lfe_dnpool *p = lfe_dnpool_new((size_t)1048576 * 256);
	CHECK(p != NULL, "a pool of 256 MiB");
	if (!p)
		return;
	CHECK(stats(p).pages_max == 65536 && stats(p).pages_touched == 0, "reserved");
	void *c = lfe_dnpool_get(p, 44);
	CHECK(c != NULL && stats(p).pages_touched == 1, "one page touched");
	lfe_dnpool_put(p, c);
	lfe_dnpool_free(p);
}

int main(void)
{
	test_classes();
	test_dry_and_pages();
	test_churn();
	test_large_lazy();
	return check_done();
}
