/* tests/net/test_share.c — common/share.h, the admission rule of
 * every per-source bound: no bound below the pressure level, the fair
 * share (capacity / sources, at least the floor) above it, a new source
 * counted in; the pressure level's edges (0 %, 100 %, rounding); the
 * source type (IPv4 mapped, distinct from any other). Table-driven. */
#include <stdio.h>

#include "common/share.h"
#include "tests/check.h"

static void test_admit(void)
{
	static const struct {
		uint32_t cap, pct, floor, used, mine, sources;
		int ok;
	} cases[] = {
		/* below the pressure level: anything, even one source holding all */
		{ 4096, 75, 256, 0, 0, 0, 1 },
		{ 4096, 75, 256, 3071, 3071, 1, 1 },    /* 3072 is the level */
		{ 4096, 75, 256, 3071, 3000, 2, 1 },
		/* at the level: the fair share, a newcomer counted in */
		{ 4096, 75, 256, 3072, 3072, 1, 0 },    /* alone: 4096 / 2 */
		{ 4096, 75, 256, 3072, 2047, 1, 1 },
		{ 4096, 75, 256, 3072, 3000, 2, 0 },    /* two: 4096 / 3 = 1365 */
		{ 4096, 75, 256, 3072, 72, 2, 1 },      /* the lighter one may grow */
		{ 4096, 75, 256, 3072, 1364, 2, 1 },
		{ 4096, 75, 256, 3072, 1365, 2, 0 },
		{ 4096, 75, 256, 3072, 0, 1, 1 },       /* a new source */
		{ 4096, 75, 256, 4000, 0, 400, 1 },     /* many: the floor (256) */
		{ 4096, 75, 256, 4000, 255, 400, 1 },
		{ 4096, 75, 256, 4000, 256, 400, 0 },
		{ 4096, 75, 0, 4000, 9, 399, 1 },       /* 4096 / 400 = 10: mine must be < 10 */
		{ 4096, 75, 0, 4000, 10, 399, 0 },
		{ 4, 75, 0, 3, 1, 8, 0 },               /* share rounds to 0: at least 1 */
		{ 4, 75, 0, 3, 0, 8, 1 },
		/* pct 0: always under pressure; 100: never (the capacity alone) */
		{ 100, 0, 0, 0, 32, 2, 1 },             /* 100 / 3 = 33 */
		{ 100, 0, 0, 0, 33, 2, 0 },
		{ 100, 90, 0, 90, 15, 5, 1 },           /* 100 / 6 = 16 */
		{ 100, 90, 0, 90, 16, 5, 0 },
		{ 100, 90, 0, 90, 19, 4, 1 },           /* 100 / 5 = 20 */
		{ 100, 100, 0, 99, 99, 5, 1 },
		{ 100, 100, 0, 100, 100, 5, 1 },
		{ 100, 250, 0, 100, 100, 5, 1 },        /* pct over 100 is 100 */
		/* handshakes: 1024 per worker, one address bursting 200 */
		{ 1024, 75, 16, 199, 199, 1, 1 },
		{ 1024, 75, 16, 768, 768, 1, 0 },       /* a flood stops at the level */
		{ 1024, 75, 16, 800, 0, 1, 1 },         /* and the next address gets in */
		{ 1024, 75, 16, 800, 300, 2, 1 },
		{ 1024, 75, 16, 800, 341, 2, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lfe_share s = lfe_share_make(cases[i].cap, cases[i].pct, cases[i].floor);
		bool ok = lfe_share_admit(&s, cases[i].used, cases[i].mine, cases[i].sources);
		CHECK(ok == (cases[i].ok != 0), "case %zu: got %d", i, ok);
	}
	struct lfe_share s = lfe_share_make(4096, 75, 0);
	CHECK(s.pressure == 3072, "level %u", s.pressure);
	s = lfe_share_make(3, 50, 0);
	CHECK(s.pressure == 1, "rounded down: %u", s.pressure);
	CHECK(lfe_share_fair(&s, 0) == 3, "no source: the whole");
}

static void test_src(void)
{
	struct lfe_src a = lfe_src_v4(0x0a000002), b = lfe_src_v4(0x0a000003);
	CHECK(lfe_src_eq(a, a) && !lfe_src_eq(a, b), "v4 equality");
	CHECK(a.hi == 0 && a.lo == 0x0000ffff0a000002ull, "v4-mapped");
	struct lfe_src v6 = { .hi = 0x20010db800000000ull, .lo = 0 };   /* a /64 later */
	CHECK(!lfe_src_eq(v6, lfe_src_v4(0)), "v6 prefix apart from v4");
}

int main(void)
{
	test_admit();
	test_src();
	return check_done();
}
