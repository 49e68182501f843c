/* fuzz_filter.c — validate, print and evaluate arbitrary Filter TLVs
 * against a fixed fake entry. The string form validates and must be
 * printable ASCII; evaluation and the index helper do not validate again
 * (the decoder did) but must stay memory-safe on anything, never hand a
 * secret attribute to the value provider, and agree with the budgeted
 * evaluation (which may only stop early, with -ETIME). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldap/attr.h"
#include "ldap/filter.h"

static const struct {
	const char *type;
	const char *vals[3];
} entry[] = {
	{ "uid", { "alice" } },
	{ "cn", { "Alice Smith", "Al", "a*b(c)" } },
	{ "objectClass", { "top", "person" } },
	{ "uidNumber", { "1001" } },
	{ "homeDirectory", { "/home/alice" } },
	{ "userPassword", { "{SSHA}abc" } },
};

static uint32_t get(void *ctx, struct lfe_bytes type, uint32_t first, struct lfe_bytes *vals,
		    uint32_t cap)
{
	(void)ctx;
	if (lfe_attr_is_secret(type.p, type.len))
		abort();   /* the evaluator must never ask for a secret */
	for (size_t i = 0; i < sizeof entry / sizeof entry[0]; i++) {
		if (strlen(entry[i].type) != type.len ||
		    strncasecmp(entry[i].type, (const char *)type.p, type.len))
			continue;
		uint32_t n = 0;
		while (n < 3 && entry[i].vals[n]) {
			if (n >= first && n - first < cap)
				vals[n - first] = (struct lfe_bytes){ (const uint8_t *)entry[i].vals[n],
								      strlen(entry[i].vals[n]) };
			n++;
		}
		return n;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char s[65536];
	struct lfe_bytes v;

	int rc = lfe_filter_validate(data, size);
	if (rc != 0 && rc != -EBADMSG && rc != -E2BIG)
		abort();
	ssize_t n = lfe_filter_to_string(data, size, s, sizeof s);
	int e = lfe_filter_eval(data, size, get, NULL);
	int f = lfe_filter_find_eq(data, size, "uid", &v);
	uint64_t work = UINT64_MAX;
	if (lfe_filter_eval_budget(data, size, get, NULL, &work) != e)
		abort();
	work = size ? data[0] : 0;
	int eb = lfe_filter_eval_budget(data, size, get, NULL, &work);
	if (eb != e && !(eb == -ETIME && work == 0))
		abort();
	if ((e < 0 && e != -EBADMSG && e != -E2BIG) || (f < 0 && f != -EBADMSG && f != -E2BIG))
		abort();
	if (e > LFE_FILTER_UNDEFINED || f > 1)
		abort();
	if (f == 1 && (v.p < data || v.p + v.len > data + size))
		abort();
	if (rc) {
		if (n != rc)
			abort();
		return 0;
	}
	if (e < 0 || f < 0)
		abort();
	if (n >= 0) {
		if ((size_t)n != strlen(s) || s[0] != '(' || s[n - 1] != ')')
			abort();
		for (ssize_t i = 0; i < n; i++)
			if (s[i] < 0x20 || s[i] > 0x7e)
				abort();
	} else if (n != -ENOSPC) {
		abort();
	}
	return 0;
}
