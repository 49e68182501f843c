/* net/tcp_buf.c — the per-core buffer pool; see tcp_buf.h.
 *
 * The free stack starts empty and the never-used indexes are handed out
 * from `fresh` upwards, so init touches no page of the pool or the stack:
 * a pool sized for a million connections costs what the busiest moment
 * used.
 */
#include "net/tcp_buf.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

void *lfe_tcp_map(size_t len)
{
	if (!len)
		return NULL;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void *lfe_tcp_map_huge(size_t len)
{
	void *p = lfe_tcp_map(len);
	if (p && len >= (2u << 20))
		(void)madvise(p, len, MADV_HUGEPAGE);   /* advice: THP off is no error */
	return p;
}

void lfe_tcp_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

int lfe_tcp_pool_init(struct lfe_tcp_pool *p, uint32_t n, uint32_t size)
{
	memset(p, 0, sizeof(*p));
	if (!size)
		return -EINVAL;
	if (!n)
		return 0;
	size_t len = (size_t)n * size;
	if (len / size != n)
		return -EINVAL;
	p->mem_len = len;
	p->size = size;
	p->n = n;
	p->mem = lfe_tcp_map(len);
	p->free = lfe_tcp_map((size_t)n * sizeof(*p->free));
	if (!p->mem || !p->free) {
		lfe_tcp_pool_fini(p);
		return -ENOMEM;
	}
	return 0;
}

void lfe_tcp_pool_fini(struct lfe_tcp_pool *p)
{
	lfe_tcp_unmap(p->mem, p->mem_len);
	lfe_tcp_unmap(p->free, (size_t)p->n * sizeof(*p->free));
	memset(p, 0, sizeof(*p));
}
