/* fuzz_filter_ref.c — the input draws an entry (0..5,000 values per
 * attribute) and a filter tree (tests/ldap/filter_ref.h); lfe_filter_eval
 * must agree with the brute-force reference, and a budgeted evaluation must
 * agree or stop with -ETIME at an empty budget. */
#include <errno.h>

#include "tests/ldap/filter_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ref_entry *e;
	static struct ref_filter f;

	if (!e)
		e = ref_entry_new();
	struct ref_src s = { .p = data, .n = size };
	if (ref_trial(&s, e, &f))
		abort();
	return 0;
}
