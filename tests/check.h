/* tests/check.h — the C unit tests' assertions, one copy for all of them.
 *
 *   CHECK(cond)                  count a failure when cond is false and print
 *   CHECK(cond, fmt, ...)        "file:line: CHECK(cond) failed[: message]";
 *                                the message is printf-checked. The test goes on.
 *   CHECK_EQ(a, b)               a and b as long long: "file:line: a == A,
 *                                expected B" when they differ.
 *   return check_done();         the last line of main: one summary line
 *                                ("test_x.c: N checks, M failed" on stderr, or
 *                                "test_x.c: N checks passed" on stdout) and the
 *                                exit status (1 if any check failed, else 0).
 *
 * check_failures counts the failed checks (a test may add failures it counted
 * itself: check_failures += bad), check_count every check made.
 * Threads: the counters are plain ints; check from one thread (per process:
 * a forked child's checks stay in the child). */
#ifndef LFE_TESTS_CHECK_H
#define LFE_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int check_failures __attribute__((unused));
static int check_count __attribute__((unused));

/* fmt is " " followed by the caller's message ("" when there is none): the
 * leading space keeps the format non-empty for -Wformat. */
__attribute__((format(printf, 4, 5)))
static inline void check_fail_(const char *file, int line, const char *expr, const char *fmt, ...)
{
	check_failures++;
	fprintf(stderr, "%s:%d: CHECK(%s) failed", file, line, expr);
	if (fmt[1]) {
		va_list ap;
		va_start(ap, fmt);
		fputc(':', stderr);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
}

/* The message is optional: CHECK(c) and CHECK(c, "fmt", ...) both work
 * (an empty variadic part: C23, and GCC and clang in C11 short of -pedantic). */
#define CHECK(cond, ...) do { check_count++; if (!(cond)) \
	check_fail_(__FILE__, __LINE__, #cond, " " __VA_ARGS__); } while (0)

#define CHECK_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	check_count++; if (a_ != b_) { check_failures++; \
	fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); } \
	} while (0)

/* Two NUL-terminated strings equal (the got one is printed on failure). */
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	check_count++; if (strcmp(a_, b_) != 0) { check_failures++; \
	fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, a_, b_); } \
	} while (0)

#define check_done() check_done_(__FILE__)

static inline int check_done_(const char *file)
{
	const char *name = strrchr(file, '/');
	name = name ? name + 1 : file;
	if (check_failures) {
		fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
		return 1;
	}
	printf("%s: %d checks passed\n", name, check_count);
	return 0;
}

#endif
