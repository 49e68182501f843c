/* net/tcp_table.c — the connection table of lfe_tcp: slots, the
 * 4-tuple hash and the per-source counts (see tcp_int.h).
 *
 * Everything is mapped lazily (tcp_buf.h's lfe_tcp_map): zero means empty
 * in the hash and in the source counts, slots are handed out from `fresh`
 * upwards until the first one is released, and a slot's list links are
 * set up when the slot is first used. So a table sized for a million
 * connections costs the pages its busiest moment touched, and
 * lfe_tcp_new() is O(1) in max_conns. The arrays a segment indexes at
 * random (slots, hash, links, source counts) ask for transparent huge
 * pages: with 4 KiB pages a lookup among a million connections walks the
 * page table on nearly every array it touches (huge pages cut the cycles
 * per exchange by ~40 %: bench_tcp hold 1000000, docs/BENCHMARKS.md); the
 * price is that a touched 2 MiB page is backed whole (~12 MiB at start for
 * a million-slot table, the same per connection at scale).
 */
#include "net/tcp_int.h"

#include <errno.h>
#include <string.h>

static inline uint32_t seg_tag(const struct lfe_tcp *t, const struct lfe_tcp_seg *s)
{
	return (uint32_t)(lfe_tcp_tuple_hash(t, s->laddr, s->lport, s->raddr, s->rport) >> 32);
}

static inline uint32_t conn_tag(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	return (uint32_t)(lfe_tcp_tuple_hash(t, c->laddr, c->lport, c->raddr, c->rport) >> 32);
}

/* Sizes of the parts, for init, fini and accounting. */
struct layout {
	size_t conns, htab, free_stack, links, tl, src;
};

static struct layout layout_of(uint32_t n, uint32_t hsize)
{
	return (struct layout){
		.conns = sizeof(struct lfe_tcp_conn) * (size_t)n,
		.htab = sizeof(uint64_t) * (size_t)hsize,
		.free_stack = sizeof(uint32_t) * (size_t)n,
		.links = sizeof(struct lnk) * ((size_t)n + 1),
		.tl = sizeof(struct lnk) * ((size_t)n + WHEEL_SIZE + WHEEL2_SIZE + 1),
		.src = sizeof(struct srcent) * (size_t)hsize,
	};
}

/* Unlink index i (a slot, or the heads at max_conns) in the flat lists. */
static void lists_init(struct lfe_tcp *t, uint32_t i)
{
	l_init(t->pl, i);
	l_init(t->wl, i);
	l_init(t->el, i);
	l_init(t->sw, i);
	l_init(t->rw, i);
}

int lfe_tcp_table_init(struct lfe_tcp *t)
{
	uint32_t n = t->cfg.max_conns;
	uint32_t hsize = 2;
	while (hsize < 2 * n)
		hsize <<= 1;
	t->hmask = t->srcmask = hsize - 1;
	struct layout L = layout_of(n, hsize);
	t->conns = lfe_tcp_map_huge(L.conns);
	t->htab = lfe_tcp_map_huge(L.htab);
	t->free_stack = lfe_tcp_map(L.free_stack);
	t->tl = lfe_tcp_map_huge(L.tl);
	t->pl = lfe_tcp_map_huge(L.links);
	t->wl = lfe_tcp_map_huge(L.links);
	t->el = lfe_tcp_map_huge(L.links);
	t->sw = lfe_tcp_map_huge(L.links);
	t->rw = lfe_tcp_map_huge(L.links);
	t->src = lfe_tcp_map_huge(L.src);
	if (!t->conns || !t->htab || !t->free_stack || !t->tl || !t->pl || !t->wl || !t->el ||
	    !t->sw || !t->rw || !t->src)
		return -ENOMEM;
	t->table_bytes = L.conns + L.htab + L.free_stack + 5 * L.links + L.tl + L.src;
	for (uint32_t i = n; i < n + WHEEL_SIZE + WHEEL2_SIZE + 1; i++)
		l_init(t->tl, i);
	lists_init(t, n);
	return 0;
}

void lfe_tcp_table_fini(struct lfe_tcp *t)
{
	struct layout L = layout_of(t->cfg.max_conns, t->hmask + 1);
	lfe_tcp_unmap(t->conns, L.conns);
	lfe_tcp_unmap(t->htab, L.htab);
	lfe_tcp_unmap(t->free_stack, L.free_stack);
	lfe_tcp_unmap(t->tl, L.tl);
	lfe_tcp_unmap(t->pl, L.links);
	lfe_tcp_unmap(t->wl, L.links);
	lfe_tcp_unmap(t->el, L.links);
	lfe_tcp_unmap(t->sw, L.links);
	lfe_tcp_unmap(t->rw, L.links);
	lfe_tcp_unmap(t->src, L.src);
}

size_t lfe_tcp_table_per_conn(const struct lfe_tcp *t)
{
	return (t->table_bytes + t->cfg.max_conns - 1) / t->cfg.max_conns;
}

/* ---- slots ---- */

struct lfe_tcp_conn *lfe_tcp_slot_take(struct lfe_tcp *t)
{
	uint32_t i;
	if (t->n_free) {
		i = t->free_stack[--t->n_free];
	} else if (t->fresh < t->cfg.max_conns) {
		i = t->fresh++;
		t->conns[i].idx = i;
		t->conns[i].gen = 1;
		l_init(t->tl, i);
		lists_init(t, i);
	} else {
		return NULL;
	}
	struct lfe_tcp_conn *c = &t->conns[i];
	uint32_t gen = c->gen;
	memset(c, 0, sizeof(*c));
	c->idx = i;
	c->gen = gen;
	c->t = t;
	c->sbuf = c->rbuf = LFE_TCP_BUF_NONE;
	return c;
}

void lfe_tcp_slot_put(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	t->free_stack[t->n_free++] = c->idx;
}

/* ---- the 4-tuple hash: open addressing, (tag, idx + 1) words (the
 * hash and the lookup are in tcp_int.h, inline into lfe_tcp_input) ---- */

void lfe_tcp_prefetch_hash(const struct lfe_tcp *t, const struct lfe_tcp_seg *s)
{
	uint32_t tag = seg_tag(t, s);
	__builtin_prefetch(&t->htab[tag & t->hmask]);
}

void lfe_tcp_prefetch_conn(const struct lfe_tcp *t, const struct lfe_tcp_seg *s)
{
	uint32_t tag = seg_tag(t, s);
	uint64_t e = t->htab[tag & t->hmask];
	if (!e || (uint32_t)(e >> 32) != tag)
		return;   /* no connection, or not at the first probe: input will see */
	uint32_t i = (uint32_t)e - 1;
	const char *c = (const char *)&t->conns[i];
	for (size_t off = 0; off < sizeof(struct lfe_tcp_conn); off += 64)
		__builtin_prefetch(c + off);
	__builtin_prefetch(&t->tl[i]);
	__builtin_prefetch(&t->pl[i]);
	__builtin_prefetch(&t->el[i]);
}

void lfe_tcp_hash_insert(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	uint32_t tag = conn_tag(t, c);
	uint32_t i = tag & t->hmask;
	while (t->htab[i])
		i = (i + 1) & t->hmask;
	t->htab[i] = (uint64_t)tag << 32 | (c->idx + 1);
}

/* Backward-shift deletion keeps probe chains tombstone-free, so a table
 * that churns through millions of connections never degrades. */
void lfe_tcp_hash_remove(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	uint32_t tag = conn_tag(t, c);
	uint64_t want = (uint64_t)tag << 32 | (c->idx + 1);
	uint32_t i = tag & t->hmask;
	while (t->htab[i] != want) {
		if (!t->htab[i])
			return;
		i = (i + 1) & t->hmask;
	}
	for (uint32_t j = (i + 1) & t->hmask;; j = (j + 1) & t->hmask) {
		uint64_t e = t->htab[j];
		if (!e)
			break;
		uint32_t home = (uint32_t)(e >> 32) & t->hmask;
		if (((j - home) & t->hmask) >= ((j - i) & t->hmask)) {
			t->htab[i] = e;
			i = j;
		}
	}
	t->htab[i] = 0;
}

/* ---- per-source counts ---- */

static inline uint32_t src_home(const struct lfe_tcp *t, uint32_t addr)
{
	return (uint32_t)(((addr ^ t->hk1) * t->hk0) >> 32) & t->srcmask;
}

static inline bool src_used(const struct srcent *e)
{
	return e->n || e->ho;
}

static uint32_t src_slot(const struct lfe_tcp *t, uint32_t addr)
{
	uint32_t i = src_home(t, addr);
	while (src_used(&t->src[i]) && t->src[i].addr != addr)
		i = (i + 1) & t->srcmask;
	return i;
}

uint32_t lfe_tcp_src_count(const struct lfe_tcp *t, uint32_t addr)
{
	return t->src[src_slot(t, addr)].n;
}

uint32_t lfe_tcp_src_half_open(const struct lfe_tcp *t, uint32_t addr)
{
	return t->src[src_slot(t, addr)].ho;
}

void lfe_tcp_src_inc(struct lfe_tcp *t, struct lfe_tcp_conn *c, bool half_open)
{
	struct srcent *e = &t->src[src_slot(t, c->raddr)];
	e->addr = c->raddr;
	if (half_open) {
		t->n_src_ho += !e->ho;
		e->ho++;
	} else {
		t->n_src += !e->n;
		e->n++;
	}
	c->flags |= F_SRC;
	c->src_ho = half_open;
}

void lfe_tcp_src_promote(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (!(c->flags & F_SRC) || !c->src_ho)
		return;
	struct srcent *e = &t->src[src_slot(t, c->raddr)];
	/* ho ≥ 1 (this connection's), so the entry stays in use throughout. */
	t->n_src += !e->n;
	e->n++;
	t->n_src_ho -= e->ho == 1;
	e->ho--;
	c->src_ho = false;
}

/* Uncount; an entry that reaches 0 leaves by backward shift (as htab). */
void lfe_tcp_src_dec(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (!(c->flags & F_SRC))
		return;
	c->flags &= (uint16_t)~F_SRC;
	uint32_t i = src_slot(t, c->raddr);
	struct srcent *e = &t->src[i];
	if (c->src_ho) {
		if (!e->ho)
			return;
		t->n_src_ho -= e->ho == 1;
		e->ho--;
	} else {
		if (!e->n)
			return;
		t->n_src -= e->n == 1;
		e->n--;
	}
	c->src_ho = false;
	if (src_used(e))
		return;
	for (uint32_t j = (i + 1) & t->srcmask; src_used(&t->src[j]); j = (j + 1) & t->srcmask) {
		uint32_t home = src_home(t, t->src[j].addr);
		if (((j - home) & t->srcmask) >= ((j - i) & t->srcmask)) {
			t->src[i] = t->src[j];
			i = j;
		}
	}
	t->src[i].n = t->src[i].ho = 0;
}
