/* tests/dataplane/test_tlsoff.c — tls/tlsoff.c's admission, which
 * counts handshakes (lfe_tlsoff_admit .. lfe_tlsoff_leave), not steps,
 * under share.h's rule: no per-source bound below the pressure level,
 * the fair share (at least per_source) above it, the worker's bound at
 * `queue`, workers apart, a handshake that left frees its place, a leave
 * for an address that holds none changes nothing. Table-driven. */
#include <errno.h>
#include <stdio.h>

#include "tls/tlsoff.h"
#include "tests/check.h"

#define A 0x0a000002u
#define B 0x0a000003u

int main(void)
{
	/* 8 handshakes a worker, pressure at 6 (75 %), per_source 2. */
	struct lfe_tlsoff_cfg cfg = { .threads = 1, .workers = 2, .queue = 8, .per_source = 2 };
	int err = 0;
	struct lfe_tlsoff *o = lfe_tlsoff_new(&cfg, &err);
	if (o == NULL) {
		fprintf(stderr, "lfe_tlsoff_new: %d\n", err);
		return 1;
	}
	static const struct { char op; unsigned w; uint32_t src; int rc; const char *why; } steps[] = {
		{ 'a', 0, A, 0, "A 1" }, { 'a', 0, A, 0, "A 2" }, { 'a', 0, A, 0, "A 3 (past per_source)" },
		{ 'a', 0, A, 0, "A 4" }, { 'a', 0, A, 0, "A 5" }, { 'a', 0, A, 0, "A 6: below the level" },
		{ 'a', 0, A, -EDQUOT, "A 7: at the level, its share 8 / 2" },
		{ 'a', 1, A, 0, "another worker: its own bound" },
		{ 'a', 0, B, 0, "B: under its share" }, { 'a', 0, B, 0, "B 2: its share 8 / 3, at least 2" },
		{ 'a', 0, B, -ENOBUFS, "the worker's bound" },
		{ 'l', 0, A, 0, "A's handshake done" }, { 'l', 0, A, 0, "" }, { 'l', 0, A, 0, "" },
		{ 'l', 0, A, 0, "" },   /* A holds 2, B 2: 4 below the level */
		{ 'a', 0, A, 0, "A again below the level" }, { 'a', 0, A, 0, "" },
		{ 'a', 0, A, -EDQUOT, "A at 4, the level reached: its share 8 / 3" },
		{ 'l', 0, 0x0b000000u, 0, "a leave for an address holding none: nothing" },
		{ 'a', 0, A, -EDQUOT, "unchanged" },
		{ 'l', 0, B, 0, "B done" }, { 'a', 0, A, 0, "room below the level again" },
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i].op == 'l') {
			lfe_tlsoff_leave(o, steps[i].w, steps[i].src);
			continue;
		}
		int rc = lfe_tlsoff_admit(o, steps[i].w, steps[i].src);
		CHECK(rc == steps[i].rc, "step %zu (%s): %d", i, steps[i].why, rc);
	}
	lfe_tlsoff_free(o);
	return check_done();
}
