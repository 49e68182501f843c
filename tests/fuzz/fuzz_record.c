/* tests/fuzz/fuzz_record.c — the entry record decoder on arbitrary bytes:
 * validation, the header, the attribute and value walks, the entry view
 * accessors the daemon uses, and attribute replacement of accepted records. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/record.h"
#include "backend/store.h"
#include "ldap/attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy, so ASan sees any read past the record's end. */
	uint8_t *rec = malloc(size ? size : 1);
	struct lfe_entry_view e;
	struct lfe_bytes dn, type, list, v, vals[4];
	struct lfe_ldap_attr a;
	uint32_t n_attrs, n_vals;
	size_t off, cur = 0;
	int valid, rc;

	if (!rec)
		return 0;
	memcpy(rec, data, size);
	valid = lfe_record_validate(rec, size) == 0;
	if (lfe_record_header(rec, size, &dn, &n_attrs, &off) == 0) {
		uint32_t seen = 0;

		while ((rc = lfe_record_next_attr(rec, size, &off, &type, &n_vals, &list)) == 1) {
			seen++;
			while (lfe_record_next_val(&list, &v) == 1)
				;
		}
		if (valid && (rc != 0 || seen != n_attrs))
			abort();
	} else if (valid) {
		abort();
	}
	e = (struct lfe_entry_view){ .dn = dn, .n_attrs = n_attrs, .rec = rec, .rec_len = size };
	while ((rc = lfe_entry_next_attr(&e, &cur, &a, vals, 4)) == 1)
		;
	if (valid && rc != 0)
		abort();
	uint32_t ng = lfe_entry_get(&e, "userPassword", 12, vals, 4);
	/* The bind path's hop-over lookup agrees with the validated walk. */
	uint32_t nf = 0;
	struct lfe_bytes fl;
	rc = lfe_record_find_attr(rec, size, "userPassword", 12, &nf, &fl);
	if (valid && (rc < 0 || (rc == 1 && nf != ng) || (rc == 0 && ng != 0)))
		abort();
	while (rc == 1 && lfe_record_next_val(&fl, &v) == 1)
		;
	if (valid) {
		/* The password replaced, and (a modify's other half) the first
		 * attribute's type removed: the result is a valid record with
		 * neither the removed type nor a second userPassword. */
		static const struct lfe_bytes nv = { (const uint8_t *)"{SSHA}x", 7 };
		struct lfe_ldap_attr repl[2] = { { { (const uint8_t *)"userPassword", 12 }, 1, &nv } };
		size_t n_repl = 1;
		off = 0;
		if (lfe_record_header(rec, size, &dn, &n_attrs, &off) == 0 &&
		    lfe_record_next_attr(rec, size, &off, &type, &n_vals, &list) == 1 && type.len &&
		    !lfe_attr_type_eq(type.p, type.len, repl[0].type.p, repl[0].type.len))
			repl[n_repl++] = (struct lfe_ldap_attr){ type, 0, NULL };
		ssize_t rs = lfe_record_replace_size(rec, size, repl, n_repl);

		if (rs > 0) {
			uint8_t *out = malloc((size_t)rs);
			uint32_t nf = 0;
			struct lfe_bytes fl;

			if (out && (lfe_record_replace_write(rec, size, repl, n_repl, out, (size_t)rs) != rs ||
				    lfe_record_validate(out, (size_t)rs) != 0 ||
				    lfe_record_find_attr(out, (size_t)rs, "userPassword", 12, &nf, &fl) != 1 ||
				    nf != 1 ||
				    (n_repl == 2 && lfe_record_find_attr(out, (size_t)rs, (const char *)type.p,
									 type.len, &nf, &fl) != 0)))
				abort();
			free(out);
		}
	}
	free(rec);
	return 0;
}
