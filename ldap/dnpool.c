/* ldap/dnpool.c — slab pool of DN chunks (dnpool.h).
 *
 * Each page has a descriptor: its class, how many chunks are out, how many
 * it has carved (chunks are carved in order the first time, so a fresh page
 * is touched only as far as it is used) and the head of its list of
 * returned chunks, linked through their first two bytes by index. A class
 * keeps a doubly linked list of its pages that have a chunk to give; pages
 * with none left, and empty pages (which go back to the free pages at
 * once), are on no class list.
 */
#include "ldap/dnpool.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NCLASS 7u        /* 32 64 128 256 512 1024 2048 */
#define NIL UINT32_MAX
#define NO_CHUNK UINT16_MAX

_Static_assert(LFE_DNPOOL_CHUNK_MIN << (NCLASS - 1) == LFE_DNPOOL_CHUNK_MAX, "classes");
_Static_assert(LFE_DNPOOL_PAGE % LFE_DNPOOL_CHUNK_MAX == 0, "a page holds whole chunks");
_Static_assert(LFE_DNPOOL_PAGE / LFE_DNPOOL_CHUNK_MIN < NO_CHUNK, "chunk index fits");

struct pg {
	uint32_t next, prev;    /* class list (pages with a chunk to give) or free pages */
	uint16_t used;          /* chunks out */
	uint16_t carved;        /* chunks ever carved since the page joined its class */
	uint16_t free_head;     /* returned chunks, by index; NO_CHUNK: none */
	uint8_t cls;
	bool listed;            /* on its class list */
};

struct lfe_dnpool {
	uint8_t *mem;
	struct pg *pg;
	uint32_t pages_max;
	uint32_t fresh;         /* pages below this were touched */
	uint32_t free_pages;    /* list of touched empty pages, through pg.next */
	uint32_t partial[NCLASS];
	uint64_t chunks, bytes, pages, dry;
};

static size_t class_size(unsigned c)
{
	return (size_t)LFE_DNPOOL_CHUNK_MIN << c;
}

static uint16_t per_page(unsigned c)
{
	return (uint16_t)(LFE_DNPOOL_PAGE / class_size(c));
}

/* The class of n bytes, NCLASS when out of range. */
static unsigned class_of(size_t n)
{
	if (n == 0 || n > LFE_DNPOOL_CHUNK_MAX)
		return NCLASS;
	unsigned c = 0;
	while (class_size(c) < n)
		c++;
	return c;
}

size_t lfe_dnpool_chunk_size(size_t n)
{
	unsigned c = class_of(n);
	return c < NCLASS ? class_size(c) : 0;
}

struct lfe_dnpool *lfe_dnpool_new(size_t max_bytes)
{
	size_t np = (max_bytes + LFE_DNPOOL_PAGE - 1) / LFE_DNPOOL_PAGE;
	if (np == 0)
		np = 1;
	if (np >= NIL)
		return NULL;
	struct lfe_dnpool *p = calloc(1, sizeof *p);
	if (p == NULL)
		return NULL;
	/* calloc of a large array maps zero pages: descriptors of pages never
	 * used stay untouched too. */
	p->pg = calloc(np, sizeof *p->pg);
	void *m = mmap(NULL, np * LFE_DNPOOL_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->pg == NULL || m == MAP_FAILED) {
		if (m != MAP_FAILED)
			munmap(m, np * LFE_DNPOOL_PAGE);
		free(p->pg);
		free(p);
		return NULL;
	}
	p->mem = m;
	p->pages_max = (uint32_t)np;
	p->free_pages = NIL;
	for (unsigned c = 0; c < NCLASS; c++)
		p->partial[c] = NIL;
	return p;
}

void lfe_dnpool_free(struct lfe_dnpool *p)
{
	if (p == NULL)
		return;
	munmap(p->mem, (size_t)p->pages_max * LFE_DNPOOL_PAGE);
	free(p->pg);
	free(p);
}

static void list_add(struct lfe_dnpool *p, uint32_t i)
{
	struct pg *d = &p->pg[i];
	d->prev = NIL;
	d->next = p->partial[d->cls];
	if (d->next != NIL)
		p->pg[d->next].prev = i;
	p->partial[d->cls] = i;
	d->listed = true;
}

static void list_del(struct lfe_dnpool *p, uint32_t i)
{
	struct pg *d = &p->pg[i];
	if (d->prev != NIL)
		p->pg[d->prev].next = d->next;
	else
		p->partial[d->cls] = d->next;
	if (d->next != NIL)
		p->pg[d->next].prev = d->prev;
	d->listed = false;
}

/* An empty page for class c, listed; NIL when the pool is full. */
static uint32_t page_take(struct lfe_dnpool *p, unsigned c)
{
	uint32_t i = p->free_pages;
	if (i != NIL)
		p->free_pages = p->pg[i].next;
	else if (p->fresh < p->pages_max)
		i = p->fresh++;
	else
		return NIL;
	p->pg[i] = (struct pg){ .cls = (uint8_t)c, .free_head = NO_CHUNK };
	list_add(p, i);
	p->pages++;
	return i;
}

static uint8_t *chunk_at(const struct lfe_dnpool *p, uint32_t page, unsigned idx, unsigned c)
{
	return p->mem + (size_t)page * LFE_DNPOOL_PAGE + idx * class_size(c);
}

void *lfe_dnpool_get(struct lfe_dnpool *p, size_t n)
{
	unsigned c = class_of(n);
	if (c == NCLASS)
		return NULL;
	uint32_t i = p->partial[c];
	if (i == NIL && (i = page_take(p, c)) == NIL) {
		p->dry++;
		return NULL;
	}
	struct pg *d = &p->pg[i];
	uint8_t *ch;
	if (d->free_head != NO_CHUNK) {
		ch = chunk_at(p, i, d->free_head, c);
		uint16_t next;
		memcpy(&next, ch, sizeof next);
		d->free_head = next;
	} else {
		ch = chunk_at(p, i, d->carved++, c);
	}
	if (++d->used == per_page(c))
		list_del(p, i);
	p->chunks++;
	p->bytes += class_size(c);
	return ch;
}

void lfe_dnpool_put(struct lfe_dnpool *p, void *chunk)
{
	const uint8_t *ch = chunk;
	if (chunk == NULL || ch < p->mem || ch >= p->mem + (size_t)p->fresh * LFE_DNPOOL_PAGE)
		return;
	size_t off = (size_t)(ch - p->mem);
	uint32_t i = (uint32_t)(off / LFE_DNPOOL_PAGE);
	struct pg *d = &p->pg[i];
	unsigned c = d->cls;
	size_t in = off % LFE_DNPOOL_PAGE;
	if (d->used == 0 || in % class_size(c) != 0)
		return;   /* not a chunk handed out */
	uint16_t idx = (uint16_t)(in / class_size(c));
	memcpy(chunk, &d->free_head, sizeof d->free_head);
	d->free_head = idx;
	p->chunks--;
	p->bytes -= class_size(c);
	if (d->used-- == per_page(c))
		list_add(p, i);
	if (d->used == 0) {
		list_del(p, i);
		d->next = p->free_pages;
		p->free_pages = i;
		p->pages--;
	}
}

void lfe_dnpool_stats(const struct lfe_dnpool *p, struct lfe_dnpool_stats *st)
{
	*st = (struct lfe_dnpool_stats){
		.chunks = p->chunks, .bytes = p->bytes, .pages = p->pages,
		.pages_touched = p->fresh, .pages_max = p->pages_max, .dry = p->dry,
	};
}

#define T struct lfe_dnpool_stats
static const struct lfe_ctr dnpool_rows[] = {
	LFE_CTR_ROW(T, bytes, "dn_pool_bytes", LFE_CTR_G, "Bytes of DN pool chunks held now."),
	LFE_CTR_ROW(T, dry, "dn_pool_dry", LFE_CTR_C, "Binds refused busy for want of a DN pool chunk."),
};
#undef T
const struct lfe_ctr_table lfe_dnpool_ctrs = LFE_CTR_TABLE("dnpool", struct lfe_dnpool_stats, dnpool_rows);
