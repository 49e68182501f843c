/* backend/throttle.c — count-min sketches of failed binds with a sliding
 * window and per-cell penalty deadlines (design and trade-offs in
 * throttle.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/siphash.h"
#include "backend/throttle.h"

/* One cell: failures in epoch `epoch` (cur) and in the epoch before (prev),
 * saturating; the penalty deadline of the keys that share it (max). */
struct cell {
	uint32_t epoch;
	uint16_t cur, prev;
	uint64_t until_us;
};
_Static_assert(sizeof(struct cell) == 16, "four cells per cache line");

struct lfe_throttle {
	uint64_t k[LFE_THR_KINDS][2];       /* SipHash key of each kind */
	uint64_t window_us, penalty_us;
	uint32_t thr[LFE_THR_KINDS];
	uint32_t mask;                      /* width - 1 */
	uint32_t width;
	struct cell *cells;                 /* [kind][row][width] */
} __attribute__((aligned(64)));

/* ---- setup ---- */

static uint32_t width_of(const struct lfe_throttle_params *p)
{
	return p->width ? p->width : LFE_THROTTLE_WIDTH_DEFAULT;
}

static int check_params(const struct lfe_throttle_params *p)
{
	uint32_t w = width_of(p);

	if (w < 64 || w > LFE_THROTTLE_WIDTH_MAX || (w & (w - 1)) != 0)
		return -EINVAL;
	if (p->window_ms == 0 || p->window_ms > 86400000u || p->penalty_ms == 0 ||
	    p->penalty_ms > 86400000u)
		return -EINVAL;
	for (unsigned k = 0; k < LFE_THR_KINDS; k++)
		if (p->failures[k] > UINT16_MAX)
			return -EINVAL;
	return 0;
}

static size_t cells_bytes(uint32_t width)
{
	return (size_t)LFE_THR_KINDS * LFE_THROTTLE_DEPTH * width * sizeof(struct cell);
}

size_t lfe_throttle_mem_size(const struct lfe_throttle_params *p)
{
	if (check_params(p) != 0)
		return 0;
	return sizeof(struct lfe_throttle) + cells_bytes(width_of(p));
}

struct lfe_throttle *lfe_throttle_init(void *mem, size_t mem_size,
				       const struct lfe_throttle_params *p, int *err)
{
	struct lfe_throttle *t = mem;
	uint8_t secret[16];
	int rc = check_params(p);

	if (rc == 0 && (mem == NULL || ((uintptr_t)mem & 63u) != 0 ||
			mem_size < lfe_throttle_mem_size(p)))
		rc = -EINVAL;
	if (rc == 0 && p->secret == NULL &&
	    getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret))
		rc = -EIO;
	if (rc != 0) {
		if (err)
			*err = rc;
		return NULL;
	}
	if (p->secret)
		memcpy(secret, p->secret, sizeof(secret));
	memset(t, 0, sizeof(*t));
	/* One key per kind, derived from the secret: the kinds never share a
	 * hash, so equal bytes (or a DN that looks like an address) in two
	 * kinds land in unrelated cells. */
	const uint64_t sk[2] = { lfe_siphash_load64(secret), lfe_siphash_load64(secret + 8) };
	for (unsigned k = 0; k < LFE_THR_KINDS; k++) {
		uint8_t label[8] = { 'l', 'f', 'e', 't', 'h', 'r', 0, (uint8_t)k };
		label[6] = 0;
		t->k[k][0] = lfe_siphash24(sk, label, sizeof(label));
		label[6] = 1;
		t->k[k][1] = lfe_siphash24(sk, label, sizeof(label));
	}
	memset(secret, 0, sizeof(secret));
	t->window_us = (uint64_t)p->window_ms * 1000u;
	t->penalty_us = (uint64_t)p->penalty_ms * 1000u;
	for (unsigned k = 0; k < LFE_THR_KINDS; k++)
		t->thr[k] = p->failures[k];
	t->width = width_of(p);
	t->mask = t->width - 1;
	t->cells = (struct cell *)(t + 1);
	memset(t->cells, 0, cells_bytes(t->width));
	return t;
}

struct lfe_throttle *lfe_throttle_new(const struct lfe_throttle_params *p, int *err)
{
	size_t sz = lfe_throttle_mem_size(p);
	void *mem;

	if (sz == 0) {
		if (err)
			*err = -EINVAL;
		return NULL;
	}
	mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	if (mem == NULL) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	struct lfe_throttle *t = lfe_throttle_init(mem, sz, p, err);
	if (t == NULL)
		free(mem);
	return t;
}

void lfe_throttle_free(struct lfe_throttle *t)
{
	free(t);
}

void lfe_throttle_key(const struct lfe_throttle *t, const char *ndn, size_t ndn_len, uint32_t src,
		      struct lfe_throttle_key *k)
{
	uint8_t m[12];

	/* The DN is hashed once; the pair is the DN's hash with the address,
	 * under the pair's own key. */
	k->h[LFE_THR_DN] = lfe_siphash24(t->k[LFE_THR_DN], ndn, ndn_len);
	for (unsigned i = 0; i < 8; i++)
		m[i] = (uint8_t)(k->h[LFE_THR_DN] >> (8 * i));
	m[8] = (uint8_t)(src >> 24);
	m[9] = (uint8_t)(src >> 16);
	m[10] = (uint8_t)(src >> 8);
	m[11] = (uint8_t)src;
	k->h[LFE_THR_SRC] = lfe_siphash24(t->k[LFE_THR_SRC], m + 8, 4);
	k->h[LFE_THR_PAIR] = lfe_siphash24(t->k[LFE_THR_PAIR], m, sizeof(m));
}

/* ---- counting ---- */

static struct cell *cell_of(const struct lfe_throttle *t, unsigned kind, unsigned row, uint64_t h)
{
	uint32_t col = (uint32_t)(h >> (16 * row)) & t->mask;
	return &t->cells[((size_t)kind * LFE_THROTTLE_DEPTH + row) * t->width + col];
}

/* Failures of one cell inside the sliding window ending at now_us. */
static uint32_t cell_count(const struct lfe_throttle *t, const struct cell *c, uint64_t now_us)
{
	uint64_t epoch = now_us / t->window_us;
	uint64_t left = t->window_us - now_us % t->window_us;   /* of the previous epoch, in µs */
	uint32_t cur, prev;

	if (c->epoch == (uint32_t)epoch) {
		cur = c->cur;
		prev = c->prev;
	} else if (c->epoch == (uint32_t)(epoch - 1)) {
		cur = 0;
		prev = c->cur;
	} else {
		return 0;
	}
	/* Round up: the estimate must not fall below the true count. */
	return cur + (uint32_t)(((uint64_t)prev * left + t->window_us - 1) / t->window_us);
}

static void cell_add(const struct lfe_throttle *t, struct cell *c, uint64_t now_us)
{
	uint32_t epoch = (uint32_t)(now_us / t->window_us);

	if (c->epoch != epoch) {
		c->prev = c->epoch == epoch - 1 ? c->cur : 0;
		c->cur = 0;
		c->epoch = epoch;
	}
	if (c->cur < UINT16_MAX)
		c->cur++;
}

unsigned lfe_throttle_check(const struct lfe_throttle *t, const struct lfe_throttle_key *k,
			    uint64_t now_us)
{
	unsigned hit = 0;

	for (unsigned kind = 0; kind < LFE_THR_KINDS; kind++) {
		if (t->thr[kind] == 0)
			continue;
		unsigned row = 0;
		while (row < LFE_THROTTLE_DEPTH && cell_of(t, kind, row, k->h[kind])->until_us > now_us)
			row++;
		if (row == LFE_THROTTLE_DEPTH)
			hit |= LFE_THR_BIT(kind);
	}
	return hit;
}

uint32_t lfe_throttle_estimate(const struct lfe_throttle *t, const struct lfe_throttle_key *k,
			       enum lfe_throttle_kind kind, uint64_t now_us)
{
	uint32_t est = UINT32_MAX;

	for (unsigned row = 0; row < LFE_THROTTLE_DEPTH; row++) {
		uint32_t n = cell_count(t, cell_of(t, kind, row, k->h[kind]), now_us);
		if (n < est)
			est = n;
	}
	return est;
}

unsigned lfe_throttle_fail(struct lfe_throttle *t, const struct lfe_throttle_key *k,
			   uint64_t now_us)
{
	unsigned started = 0;

	for (unsigned kind = 0; kind < LFE_THR_KINDS; kind++) {
		if (t->thr[kind] == 0)
			continue;
		for (unsigned row = 0; row < LFE_THROTTLE_DEPTH; row++)
			cell_add(t, cell_of(t, kind, row, k->h[kind]), now_us);
		if (lfe_throttle_estimate(t, k, kind, now_us) < t->thr[kind])
			continue;
		uint64_t until = now_us + t->penalty_us;
		for (unsigned row = 0; row < LFE_THROTTLE_DEPTH; row++) {
			struct cell *c = cell_of(t, kind, row, k->h[kind]);
			if (c->until_us < until)
				c->until_us = until;
		}
		started |= LFE_THR_BIT(kind);
	}
	return started;
}
