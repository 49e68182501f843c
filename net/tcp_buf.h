/* net/tcp_buf.h — a per-core pool of fixed-size buffers for lfe_tcp
 * (internal to the TCP stack, tested on its own).
 *
 * A connection borrows a send buffer while it has bytes queued or unacked
 * and a receive buffer while it holds bytes the app has not consumed (or
 * out-of-order data); an idle connection holds neither. The pool is one
 * anonymous mapping reserved at init and backed by the kernel page by page
 * on first touch, so its cost is the peak number of buffers ever in use,
 * not its size. The free list is a stack: the buffers most recently used
 * (hot in cache, already backed) are handed out first.
 *
 * Thread rules: one pool per lcore, no locks. get/put are O(1) and never
 * allocate. Buffers are identified by index (uint32_t) so a connection
 * spends 4 bytes per kind on them; LFE_TCP_BUF_NONE means none.
 */
#ifndef LFE_NET_TCP_BUF_H
#define LFE_NET_TCP_BUF_H

#include <stddef.h>
#include <stdint.h>

#define LFE_TCP_BUF_NONE UINT32_MAX

struct lfe_tcp_pool {
	uint8_t *mem;        /* n buffers of size bytes, mapped lazily */
	size_t mem_len;
	uint32_t *free;      /* stack of free indexes, n_free deep */
	uint32_t size, n, n_free;
	uint32_t fresh;      /* indexes >= fresh were never handed out (not on the stack) */
	uint32_t peak;       /* most buffers ever in use at once */
};

/* Reserve n buffers of size bytes (n may be 0: every get fails).
 * Returns 0 or -ENOMEM / -EINVAL (size 0, or n * size overflows). */
int lfe_tcp_pool_init(struct lfe_tcp_pool *p, uint32_t n, uint32_t size);
/* Unmap; safe on a zeroed or already finished pool. */
void lfe_tcp_pool_fini(struct lfe_tcp_pool *p);

/* Anonymous zeroed memory backed on first touch (MAP_NORESERVE), for the
 * pool and the connection table; NULL on failure. len 0 gives NULL. */
void *lfe_tcp_map(size_t len);
/* The same, asking for transparent huge pages (madvise MADV_HUGEPAGE; the
 * kernel may refuse, then 4 KiB pages as lfe_tcp_map): for arrays indexed
 * at random, where a million connections' worth would miss the TLB on
 * every lookup. A touched 2 MiB page is backed whole. */
void *lfe_tcp_map_huge(size_t len);
void lfe_tcp_unmap(void *p, size_t len);   /* NULL is a no-op */

/* A free buffer's index, or LFE_TCP_BUF_NONE when all are in use. */
static inline uint32_t lfe_tcp_pool_get(struct lfe_tcp_pool *p)
{
	uint32_t i;
	if (p->n_free) {
		i = p->free[--p->n_free];
	} else if (p->fresh < p->n) {
		i = p->fresh++;
	} else {
		return LFE_TCP_BUF_NONE;
	}
	uint32_t used = p->fresh - p->n_free;
	if (used > p->peak)
		p->peak = used;
	return i;
}

/* Give back a buffer from get (its bytes are not wiped: the TCP stack
 * holds only protocol bytes in them, never secrets in clear beyond what
 * the wire carried). */
static inline void lfe_tcp_pool_put(struct lfe_tcp_pool *p, uint32_t i)
{
	p->free[p->n_free++] = i;
}

static inline uint8_t *lfe_tcp_pool_ptr(const struct lfe_tcp_pool *p, uint32_t i)
{
	return p->mem + (size_t)i * p->size;
}

/* Buffers that a get would succeed with. */
static inline uint32_t lfe_tcp_pool_avail(const struct lfe_tcp_pool *p)
{
	return p->n_free + (p->n - p->fresh);
}

static inline uint32_t lfe_tcp_pool_used(const struct lfe_tcp_pool *p)
{
	return p->n - lfe_tcp_pool_avail(p);
}

#endif
