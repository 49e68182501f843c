/* fuzz_ber.c — walk arbitrary input with the strict BER cursor, entering
 * every constructed element, reading primitives through each typed reader;
 * re-encode what was accepted and check the writer agrees byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "ldap/ber.h"

static void walk(struct lfe_ber *b, struct lfe_berw *w)
{
	while (lfe_ber_more(b)) {
		int tag = lfe_ber_peek(b);
		if (tag & LFE_BER_CONS) {
			struct lfe_ber c;
			if (!lfe_ber_enter(b, (uint8_t)tag, &c))
				return;
			walk(&c, w);
			continue;
		}
		struct lfe_ber probe = *b;   /* shares the error slot */
		int64_t v;
		bool bv;
		struct lfe_bytes o;
		switch (tag) {
		case LFE_BER_INTEGER:
		case LFE_BER_ENUMERATED:
			if (lfe_ber_int(&probe, (uint8_t)tag, INT64_MIN, INT64_MAX, &v)) {
				/* Integer contents are minimal, so they re-encode to
				 * themselves (the length octets may have been a
				 * non-minimal long form, which the reader accepts; the
				 * writer's are always short for at most 8 octets). */
				uint8_t buf[16];
				struct lfe_berw iw;
				lfe_berw_init(&iw, buf, sizeof buf);
				lfe_berw_int(&iw, (uint8_t)tag, v);
				ssize_t n = lfe_berw_finish(&iw);
				if (n < 3 || n - 2 > probe.p - b->p ||
				    memcmp(buf + 2, probe.p - (n - 2), (size_t)(n - 2)) != 0)
					abort();
			}
			break;
		case LFE_BER_BOOLEAN:
			lfe_ber_bool(&probe, LFE_BER_BOOLEAN, &bv);
			break;
		case LFE_BER_NULL:
			lfe_ber_null(&probe, LFE_BER_NULL);
			break;
		default:
			if (lfe_ber_octets(&probe, (uint8_t)tag, &o)) {
				lfe_berw_octets(w, (uint8_t)tag, o.p, o.len);
				if (o.len > (size_t)(b->end - b->p))
					abort();
			}
			break;
		}
		if (lfe_ber_error(b))
			return;
		b->p = probe.p;
	}
	lfe_ber_done(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lfe_ber b;
	uint8_t out[256];
	struct lfe_berw w;
	uint8_t tag;
	size_t hl, cl;

	int rc = lfe_ber_hdr(data, size, &tag, &hl, &cl);
	if (rc != 0 && rc != -EAGAIN && rc != -EBADMSG)
		abort();
	lfe_ber_init(&b, data, size);
	lfe_berw_init(&w, out, sizeof out);
	walk(&b, &w);
	rc = lfe_ber_error(&b);
	if (rc != 0 && rc != -EBADMSG && rc != -E2BIG)
		abort();
	ssize_t n = lfe_berw_finish(&w);
	if (n < 0 && n != -ENOSPC)
		abort();
	return 0;
}
