/* net/tcp_timer.c — the timer wheel of lfe_tcp (see tcp_int.h).
 *
 * Each connection keeps absolute deadlines (retransmit/persist, delayed
 * ACK, TIME_WAIT/FIN_WAIT_2, idle, buffer stall, the app's deadline) and
 * sits at most once in the wheel, at its earliest one. Two levels:
 * level 1 has WHEEL_SIZE buckets of one tick (1.024 ms, 4.2 s around);
 * level 2 has WHEEL2_SIZE buckets of one level-1 revolution (18 min
 * around). An entry due within a revolution goes to level 1; a later one
 * (the idle timeout of a quiet connection) to level 2, and moves down
 * once, when the level-1 revolution it falls in begins. So a million idle
 * connections cost nothing per tick, and each entry is touched O(1) times
 * per arm (one more pass per 18 min beyond that).
 *
 * A deadline that moves later does not move the entry: it fires early,
 * the state machine finds nothing due and re-files it (lfe_tcp_due). A
 * deadline that moves earlier re-files it at once. So the per-segment
 * cost of timers is a compare.
 */
#include "net/tcp_int.h"

static inline uint32_t l1_head(const struct lfe_tcp *t, uint64_t tick)
{
	return t->cfg.max_conns + (uint32_t)(tick & (WHEEL_SIZE - 1));
}

static inline uint32_t l2_head(const struct lfe_tcp *t, uint64_t tick)
{
	return t->cfg.max_conns + WHEEL_SIZE + (uint32_t)((tick >> WHEEL_BITS) & (WHEEL2_SIZE - 1));
}

static inline uint32_t scratch_head(const struct lfe_tcp *t)
{
	return t->cfg.max_conns + WHEEL_SIZE + WHEEL2_SIZE;
}

/* The bucket for an entry due at tick, seen from tick_cur. */
static inline uint32_t bucket(const struct lfe_tcp *t, uint64_t tick)
{
	return tick < t->tick_cur + WHEEL_SIZE ? l1_head(t, tick) : l2_head(t, tick);
}

void lfe_tcp_wheel_file(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t tick)
{
	if (l_linked(t->tl, c->idx))
		l_del(t->tl, c->idx);
	else
		t->n_armed++;
	c->wheel_tick = tick;
	l_add_tail(t->tl, bucket(t, tick), c->idx);
}

void lfe_tcp_wheel_del(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (l_linked(t->tl, c->idx)) {
		l_del(t->tl, c->idx);
		t->n_armed--;
	}
}

/* Move the list at head to the scratch head (entries may re-file into
 * head while it is walked). */
static uint32_t detach(struct lfe_tcp *t, uint32_t head)
{
	uint32_t s = scratch_head(t);
	t->tl[s] = t->tl[head];
	t->tl[t->tl[head].next].prev = s;
	t->tl[t->tl[head].prev].next = s;
	l_init(t->tl, head);
	return s;
}

/* Re-file every entry of a level-2 bucket from tick_cur's view. */
static void cascade(struct lfe_tcp *t, uint32_t head)
{
	if (!l_linked(t->tl, head))
		return;
	uint32_t s = detach(t, head);
	while (l_linked(t->tl, s)) {
		uint32_t i = t->tl[s].next;
		l_del(t->tl, i);
		l_add_tail(t->tl, bucket(t, t->conns[i].wheel_tick), i);
	}
}

void lfe_tcp_wheel_run(struct lfe_tcp *t, uint64_t now)
{
	uint64_t nt = now >> TICK_SHIFT;
	if (nt <= t->tick_done)
		return;
	if (!t->n_armed) {
		t->tick_done = t->tick_cur = nt;
		return;
	}
	uint64_t from = t->tick_done + 1;
	if (nt - t->tick_done > WHEEL_SIZE) {
		/* More than a revolution passed (a stall, or the first call):
		 * bring every level-2 entry down from the view of the tick
		 * before `from`; the walk below covers all level-1 buckets. */
		from = nt - WHEEL_SIZE + 1;
		t->tick_cur = from - 1;
		for (uint32_t b = 0; b < WHEEL2_SIZE; b++)
			cascade(t, t->cfg.max_conns + WHEEL_SIZE + b);
	}
	for (uint64_t tick = from; tick <= nt; tick++) {
		t->tick_cur = tick;
		if (!(tick & (WHEEL_SIZE - 1)))
			cascade(t, l2_head(t, tick));
		uint32_t head = l1_head(t, tick);
		if (!l_linked(t->tl, head))
			continue;
		uint32_t s = detach(t, head);
		while (l_linked(t->tl, s)) {
			uint32_t i = t->tl[s].next;
			struct lfe_tcp_conn *c = &t->conns[i];
			l_del(t->tl, i);
			if (c->wheel_tick > nt) {
				l_add_tail(t->tl, bucket(t, c->wheel_tick), i);
				continue;
			}
			t->n_armed--;
			lfe_tcp_due(t, c, now);
		}
	}
	t->tick_done = nt;
	t->tick_cur = nt;
}
