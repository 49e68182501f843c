/* ldap/dnpool.h — a per-core pool for the DNs that sessions keep.
 *
 * A session keeps one DN while a bind of it is in flight (the verdict comes
 * back from a verifier thread) and, if the bind succeeded, as its bound
 * identity until the next bind, an unbind or the close. Most connections
 * keep none, and a DN is usually far shorter than LFE_DN_MAX, so a session
 * holds a pointer to a chunk of this pool instead of an array of its own:
 * an idle connection pays 8 bytes, a bound one the chunk its DN needs.
 *
 * Layout: a slab allocator. Chunks come in seven size classes (32 B to
 * 2 KiB, powers of two: a DN of n bytes plus its NUL takes the smallest
 * that holds it); pages of 4 KiB belong to one class while they hold a
 * chunk, and go back to the pool's free pages when their last chunk is
 * returned. Get and put are O(1): no search, no heap, no syscall. The
 * pages are one anonymous mapping reserved at lfe_dnpool_new and backed by
 * the kernel on first touch, so a pool sized for a million bound DNs costs
 * the pages in use, and pages once used are reused before fresh ones.
 *
 * Bounds: the pool never grows past max_bytes (rounded up to whole pages).
 * A get that finds no chunk of its class and no free page returns NULL and
 * is counted (stats.dry); the caller refuses what needed the chunk (the
 * session answers the bind busy). Memory is never taken from another class
 * while pages of it are partly used, so a pool full of one class's chunks
 * refuses others until pages empty.
 *
 * Thread rules: a pool belongs to one thread (one lcore); nothing in it is
 * shared or locked. new/free may run on any thread while nobody uses it.
 */
#ifndef LFE_LDAP_DNPOOL_H
#define LFE_LDAP_DNPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/ctr.h"

struct lfe_dnpool;

#define LFE_DNPOOL_PAGE 4096u
#define LFE_DNPOOL_CHUNK_MIN 32u
#define LFE_DNPOOL_CHUNK_MAX 2048u   /* holds LFE_DN_MAX + 1 */

/* A pool of at most max_bytes (rounded up to pages, at least one page).
 * Reserves address space only. NULL when the mapping or the page table
 * cannot be had, or max_bytes needs more than 2^32 - 2 pages. */
struct lfe_dnpool *lfe_dnpool_new(size_t max_bytes);

/* Unmap the pool; every chunk dies with it. NULL is a no-op. */
void lfe_dnpool_free(struct lfe_dnpool *p);

/* A chunk of at least n bytes (1 ≤ n ≤ LFE_DNPOOL_CHUNK_MAX), owned by the
 * caller until lfe_dnpool_put; NULL when n is out of range or the pool has
 * no room (counted in stats.dry). Contents are undefined. */
void *lfe_dnpool_get(struct lfe_dnpool *p, size_t n);

/* Give a chunk back. NULL is a no-op; a pointer that is not a chunk of p
 * handed out and not yet returned is a bug (ignored when it lies outside
 * the pool). */
void lfe_dnpool_put(struct lfe_dnpool *p, void *chunk);

/* The bytes a get of n takes (its class), 0 when n is out of range. */
size_t lfe_dnpool_chunk_size(size_t n);

struct lfe_dnpool_stats {
	uint64_t chunks;        /* handed out now */
	uint64_t bytes;         /* their class sizes */
	uint64_t pages;         /* pages holding a chunk now */
	uint64_t pages_touched; /* pages ever used (resident), ≤ pages_max */
	uint64_t pages_max;
	uint64_t dry;           /* gets refused for want of room (ever) */
};
void lfe_dnpool_stats(const struct lfe_dnpool *p, struct lfe_dnpool_stats *st);
/* The figures the daemon exports (common/ctr.h): bytes, dry. */
extern const struct lfe_ctr_table lfe_dnpool_ctrs;

#endif
