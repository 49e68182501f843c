/* ldap/bytes.h — struct lfe_bytes, the slice every decoder in ldap/ hands
 * out: a pointer into a caller-owned buffer and a length, never owned,
 * never NUL-terminated. Here alone so ber.h and filter.h need not include
 * msg.h (which includes them). */
#ifndef LFE_LDAP_BYTES_H
#define LFE_LDAP_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* A slice of a caller-owned buffer. */
struct lfe_bytes {
	const uint8_t *p;
	size_t len;
};

#endif
