/* tests/dataplane/test_log.c — dataplane/log.c: value escaping (spaces,
 * quotes, '=', control and high bytes, cut at the buffer), line format,
 * level filter, the per-kind token bucket driven by an injected clock
 * (burst, refill, suppressed=N on the next line that passes, kinds apart),
 * and the worker ring (order, full ring counted and reported). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataplane/log.h"
#include "tests/check.h"

static void test_escape(void)
{
	static const struct { const char *in; size_t n; const char *out; } cases[] = {
		{ "10.0.0.2", 8, "10.0.0.2" },
		{ "", 0, "\"\"" },
		{ "two words", 9, "\"two words\"" },
		{ "say \"hi\"", 8, "\"say \\\"hi\\\"\"" },
		{ "a=b", 3, "\"a=b\"" },
		{ "back\\slash", 10, "\"back\\\\slash\"" },
		{ "x\ny level=err", 13, "\"x\\ny level=err\"" },      /* no forged line or field */
		{ "\r\t\x01\x7f\xc3\xa9", 6, "\"\\r\\t\\x01\\x7f\\xc3\\xa9\"" },
		{ "nul\0in", 6, "\"nul\\x00in\"" },
	};
	char out[128];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = lfe_log_escape(out, sizeof(out), cases[i].in, cases[i].n);
		CHECK(strcmp(out, cases[i].out) == 0 && n == strlen(cases[i].out), "case %zu: got [%s]", i, out);
	}
	/* cut: never mid-escape, always closed */
	size_t n = lfe_log_escape(out, 8, "a\nbcdefgh", 9);
	CHECK(n < 8 && out[0] == '"' && out[n - 1] == '"' && strlen(out) == n, "cut: [%s]", out);
	n = lfe_log_escape(out, 5, "abcdefgh", 8);
	CHECK(n == 4 && strcmp(out, "abcd") == 0, "cut bare: [%s]", out);
	CHECK(lfe_log_escape(out, 0, "a", 1) == 0, "cap 0");
}

/* Lines written to a pipe, read back. */
static int pfd[2];

static char *drain_pipe(void)
{
	static char buf[1 << 16];
	ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static unsigned count_lines(const char *s)
{
	unsigned n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_line_and_level(void)
{
	struct lfe_log lg;
	struct lfe_log_src src;
	struct lfe_log_line l;

	lfe_log_init(&lg, LFE_LOG_STDERR, LFE_LOG_WARN);
	lg.fd = pfd[1];
	lfe_log_src_init(&src, &lg, NULL);
	CHECK(lfe_log_start(&l, &src, LFE_LOG_WARN, "verifier_busy", 1000), "warn passes");
	lfe_log_kv(&l, "core", "%u", 1u);
	lfe_log_kv(&l, "peer", "%s", "10.0.0.2");
	lfe_log_kv(&l, "why", "%s", "queue full");
	lfe_log_end(&l);
	char *s = drain_pipe();
	CHECK(strcmp(s, "ldapfe: level=warn event=verifier_busy core=1 peer=10.0.0.2 why=\"queue full\"\n") == 0,
	      "line: [%s]", s);
	CHECK(!lfe_log_start(&l, &src, LFE_LOG_INFO, "reload", 1000), "info filtered at warn");
	CHECK(lfe_log_start(&l, &src, LFE_LOG_ERR, "fatal", 1000), "err passes at warn");
	lfe_log_end(&l);
	s = drain_pipe();
	CHECK(strcmp(s, "ldapfe: level=err event=fatal\n") == 0, "err line: [%s]", s);

	/* a huge value: the line is cut and says so, one line */
	char big[2000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(lfe_log_start(&l, &src, LFE_LOG_WARN, "big", 1000), "big");
	lfe_log_kv(&l, "v", "%s", big);
	lfe_log_kv(&l, "after", "%d", 1);
	lfe_log_end(&l);
	s = drain_pipe();
	CHECK(count_lines(s) == 1 && strstr(s, "truncated=1\n") && strlen(s) <= LFE_LOG_LINE_MAX + 9,
	      "cut line: %zu bytes [%.60s...]", strlen(s), s);

	static const struct { const char *s; int rc; enum lfe_log_level l; } lv[] = {
		{ "err", 0, LFE_LOG_ERR }, { "warn", 0, LFE_LOG_WARN }, { "info", 0, LFE_LOG_INFO },
		{ "debug", 0, LFE_LOG_DEBUG }, { "WARN", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "verbose", -EINVAL, 0 },
	};
	for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		enum lfe_log_level got = LFE_LOG_DEBUG;
		int rc = lfe_log_parse_level(lv[i].s, &got);
		CHECK(rc == lv[i].rc && (rc || got == lv[i].l), "level %s", lv[i].s);
	}
	enum lfe_log_dest d;
	CHECK(lfe_log_parse_dest("stderr", &d) == 0 && d == LFE_LOG_STDERR, "stderr");
	CHECK(lfe_log_parse_dest("syslog", &d) == 0 && d == LFE_LOG_SYSLOG, "syslog");
	CHECK(lfe_log_parse_dest("file", &d) == -EINVAL, "file");
}

/* Emit one line of kind ev at t; true when it passed. */
static bool emit(struct lfe_log_src *src, const char *ev, uint64_t t)
{
	struct lfe_log_line l;
	if (!lfe_log_start(&l, src, LFE_LOG_WARN, ev, t))
		return false;
	lfe_log_end(&l);
	return true;
}

static void test_rate_limit(void)
{
	struct lfe_log lg;
	struct lfe_log_src src;
	uint64_t t = 5000000;   /* injected clock, µs */

	lfe_log_init(&lg, LFE_LOG_STDERR, LFE_LOG_INFO);
	lg.fd = pfd[1];
	lg.burst = 3;
	lg.per_s = 2;
	lfe_log_src_init(&src, &lg, NULL);
	unsigned passed = 0;
	for (int i = 0; i < 100; i++)          /* a flood at one instant */
		passed += emit(&src, "flood", t);
	CHECK(passed == 3, "burst: %u passed", passed);
	CHECK(count_lines(drain_pipe()) == 3, "3 lines");
	CHECK(emit(&src, "other", t), "another kind has its own bucket");
	drain_pipe();
	t += 400000;                            /* 0.4 s at 2/s: no whole token yet */
	CHECK(!emit(&src, "flood", t), "no token after 0.4 s");
	t += 100000;                            /* 0.5 s: one token */
	CHECK(emit(&src, "flood", t), "a token after 0.5 s");
	char *s = drain_pipe();
	CHECK(strstr(s, "event=flood suppressed=98\n") != NULL, "suppressed count: [%s]", s);
	CHECK(!emit(&src, "flood", t), "spent again");
	t += 3600u * 1000000u;                  /* an hour: refill caps at burst */
	passed = 0;
	for (int i = 0; i < 10; i++)
		passed += emit(&src, "flood", t);
	CHECK(passed == 3, "after a long pause: burst again (%u)", passed);
	s = drain_pipe();
	CHECK(strstr(s, "suppressed=1\n") != NULL && count_lines(s) == 3, "one line carries it: [%s]", s);
	/* a clock that goes back does not mint tokens */
	t -= 1000000;
	CHECK(!emit(&src, "flood", t), "clock backwards");

	/* more kinds than the table: the rest share one bucket, still limited */
	static char names[LFE_LOG_KINDS + 8][16];
	for (unsigned i = 0; i < LFE_LOG_KINDS + 8; i++)
		snprintf(names[i], sizeof(names[i]), "kind%u", i);
	lfe_log_src_init(&src, &lg, NULL);
	passed = 0;
	for (int r = 0; r < 5; r++)
		for (unsigned i = 0; i < LFE_LOG_KINDS + 8; i++)
			passed += emit(&src, names[i], t);
	CHECK(passed == LFE_LOG_KINDS * 3 + 3, "table overflow: %u passed", passed);
	drain_pipe();
}

static void test_ring(void)
{
	struct lfe_log lg;
	struct lfe_log_src src;
	static struct lfe_log_ring ring;
	struct lfe_log_line l;

	lfe_log_init(&lg, LFE_LOG_STDERR, LFE_LOG_INFO);
	lg.fd = pfd[1];
	lg.burst = 1000;
	lfe_log_src_init(&src, &lg, &ring);
	for (unsigned i = 0; i < 3; i++) {
		CHECK(lfe_log_start(&l, &src, LFE_LOG_INFO, "ev", 1), "start %u", i);
		lfe_log_kv(&l, "i", "%u", i);
		lfe_log_end(&l);
	}
	CHECK(drain_pipe()[0] == '\0', "nothing written by the producer");
	CHECK(lfe_log_drain(&ring, &lg) == 3, "three queued");
	char *s = drain_pipe();
	CHECK(strcmp(s, "ldapfe: level=info event=ev i=0\nldapfe: level=info event=ev i=1\n"
		     "ldapfe: level=info event=ev i=2\n") == 0, "order: [%s]", s);
	for (unsigned i = 0; i < LFE_LOG_RING + 5; i++)
		emit(&src, "ev2", 1);
	unsigned n = lfe_log_drain(&ring, &lg);
	s = drain_pipe();
	CHECK(n == LFE_LOG_RING + 1 && strstr(s, "level=warn event=log_dropped count=5\n"), "full ring: %u [%s]",
	      n, s + (strlen(s) > 80 ? strlen(s) - 80 : 0));
	CHECK(lfe_log_drain(&ring, &lg) == 0, "empty, drop told once");
}

int main(void)
{
	if (pipe2(pfd, O_NONBLOCK) < 0)
		return 1;
	test_escape();
	test_line_and_level();
	test_rate_limit();
	test_ring();
	return check_done();
}
