/* test_filter_ref.c — property test: lfe_filter_eval against a brute-force
 * reference evaluator (filter_ref.h) over generated entries with 0..5,000
 * values per attribute and generated filters of every item type, with and
 * without a work budget. Issue 25: the evaluator used to look at the first
 * 32 values of an attribute only and call the rest Undefined, so a member
 * past the 32nd was not found (this test fails on that code within the
 * first few trials). */
#include <errno.h>
#include <stdio.h>

#include "tests/ldap/filter_ref.h"

int main(int argc, char **argv)
{
	unsigned trials = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 3000;
	struct ref_entry *e = ref_entry_new();
	static struct ref_filter f;
	unsigned failures = 0;

	for (unsigned i = 0; i < trials && failures < 10; i++) {
		struct ref_src s = { .x = 0x9e3779b97f4a7c15ull ^ (i + 1) * 0x100000001b3ull };
		failures += (unsigned)ref_trial(&s, e, &f);
	}
	ref_entry_free(e);
	printf("test_filter_ref: %u trials, %u failures\n", trials, failures);
	return failures ? 1 : 0;
}
