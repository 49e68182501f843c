/* tests/fuzz/fuzz_ldif.c — the LDIF reader on arbitrary bytes. Every record it
 * accepts, written back by lfe_ldif_put, reads again to the same DN, types
 * and values; every refusal carries a line number and a reason. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mgmt/ldif.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
/* Property: every record the reader accepts, written back by lfe_ldif_put,
 * reads again to the same DN, types and values. */
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct lfe_ldif_reader r; struct lfe_ldif_entry e = {0}, e2 = {0}; struct lfe_ldif_err err;
	lfe_ldif_reader_init(&r, d, n);
	for (int k = 0; k < 64; k++) {
		int rc = lfe_ldif_next(&r, &e, &err);
		if (rc <= 0) { if (rc < 0 && (err.line == 0 || !err.msg[0])) abort(); break; }
		char *buf = NULL; size_t blen = 0; FILE *f = open_memstream(&buf, &blen);
		lfe_ldif_put(f, "dn", e.dn.p, e.dn.len, false);
		for (uint32_t i = 0; i < e.n; i++) {
			char *t = malloc(e.av[i].type.len + 1);
			memcpy(t, e.av[i].type.p, e.av[i].type.len); t[e.av[i].type.len] = 0;
			lfe_ldif_put(f, t, e.av[i].val.p, e.av[i].val.len, i & 1); free(t);
		}
		fclose(f);
		struct lfe_ldif_reader r2; lfe_ldif_reader_init(&r2, (uint8_t *)buf, blen);
		if (lfe_ldif_next(&r2, &e2, &err) != 1) { fprintf(stderr, "reparse: %u %s\n%.*s", err.line, err.msg, (int)blen, buf); abort(); }
		if (e2.dn.len != e.dn.len || memcmp(e2.dn.p, e.dn.p, e.dn.len) || e2.n != e.n) abort();
		for (uint32_t i = 0; i < e.n; i++)
			if (e2.av[i].val.len != e.av[i].val.len || memcmp(e2.av[i].val.p, e.av[i].val.p, e.av[i].val.len) ||
			    e2.av[i].type.len != e.av[i].type.len) abort();
		lfe_ldif_reader_free(&r2); free(buf);
	}
	lfe_ldif_entry_free(&e); lfe_ldif_entry_free(&e2); lfe_ldif_reader_free(&r);
	return 0;
}
