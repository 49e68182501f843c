/* net/neigh.c — frames held for unresolved neighbours; see neigh.h.
 *
 * The table is small and visited only on a miss (a frame to a next hop
 * with no MAC), an answer, or a tick while something is pending: a scan
 * of LFE_NEIGH_PENDING entries there costs less than the ARP round trip
 * it waits for, and nothing on the path of a resolved frame.
 */
#include "net/neigh.h"

#include <errno.h>
#include <string.h>

#define ONE 1000000ull   /* one token */

void lfe_neigh_init(struct lfe_neigh *n)
{
	memset(n, 0, sizeof(*n));
	n->tok = (uint64_t)LFE_NEIGH_REQ_BURST * ONE;
}

/* A request token from the overall bucket. */
static bool take(struct lfe_neigh *n, uint64_t now)
{
	if (now > n->tok_us) {
		uint64_t dt = now - n->tok_us;
		uint64_t cap = (uint64_t)LFE_NEIGH_REQ_BURST * ONE;
		if (dt > 1000000000ull)
			dt = 1000000000ull;
		n->tok = n->tok + dt * LFE_NEIGH_REQ_RATE < cap ? n->tok + dt * LFE_NEIGH_REQ_RATE : cap;
		n->tok_us = now;
	}
	if (n->tok < ONE) {
		n->st.requests_limited++;
		return false;
	}
	n->tok -= ONE;
	n->st.requests++;
	return true;
}

static struct lfe_neigh_pend *find(struct lfe_neigh *n, uint32_t ip)
{
	if (!n->n_pending && ip)
		return NULL;
	for (uint32_t i = 0; i < LFE_NEIGH_PENDING; i++)
		if (n->p[i].ip == ip)
			return &n->p[i];
	return NULL;
}

static void release(struct lfe_neigh *n, struct lfe_neigh_pend *e)
{
	e->ip = 0;
	e->n = 0;
	n->n_pending--;
}

int lfe_neigh_hold(struct lfe_neigh *n, uint32_t ip, uint16_t port, void *frame, uint64_t now_us,
		   bool *ask)
{
	*ask = false;
	if (ip == 0)
		goto full;
	struct lfe_neigh_pend *e = find(n, ip);
	if (e == NULL) {
		if (n->n_pending == LFE_NEIGH_PENDING)
			goto full;
		e = find(n, 0);
		if (e == NULL)   /* cannot happen: n_pending counts the used */
			goto full;
		e->ip = ip;
		e->port = port;
		e->n = 0;
		e->since_us = now_us;
		e->asked_us = 0;
		n->n_pending++;
	}
	if (e->n == LFE_NEIGH_QLEN)
		goto full;
	e->q[e->n++] = frame;
	n->st.held++;
	if ((e->asked_us == 0 || now_us - e->asked_us >= LFE_NEIGH_RETRY_US) && take(n, now_us)) {
		e->asked_us = now_us ? now_us : 1;
		*ask = true;
	}
	return 0;
full:
	n->st.dropped_full++;
	return -ENOBUFS;
}

unsigned lfe_neigh_resolved(struct lfe_neigh *n, uint32_t ip, void *frames[LFE_NEIGH_QLEN],
			    uint16_t *port)
{
	struct lfe_neigh_pend *e = ip ? find(n, ip) : NULL;
	if (e == NULL)
		return 0;
	unsigned k = e->n;
	memcpy(frames, e->q, k * sizeof(e->q[0]));
	*port = e->port;
	n->st.released += k;
	release(n, e);
	return k;
}

void lfe_neigh_tick(struct lfe_neigh *n, uint64_t now_us, lfe_neigh_ask_fn ask, lfe_neigh_drop_fn drop,
		    void *ctx)
{
	if (!n->n_pending || now_us - n->tick_us < LFE_NEIGH_TICK_US)
		return;
	n->tick_us = now_us;
	for (uint32_t i = 0; i < LFE_NEIGH_PENDING; i++) {
		struct lfe_neigh_pend *e = &n->p[i];
		if (e->ip == 0)
			continue;
		if (now_us - e->since_us >= LFE_NEIGH_HOLD_US) {
			for (unsigned k = 0; k < e->n; k++)
				drop(ctx, e->q[k]);
			n->st.dropped_timeout += e->n;
			release(n, e);
			continue;
		}
		if ((e->asked_us == 0 || now_us - e->asked_us >= LFE_NEIGH_RETRY_US) && take(n, now_us)) {
			e->asked_us = now_us ? now_us : 1;
			ask(ctx, e->port, e->ip);
		}
	}
}

void lfe_neigh_flush(struct lfe_neigh *n, lfe_neigh_drop_fn drop, void *ctx)
{
	for (uint32_t i = 0; i < LFE_NEIGH_PENDING && n->n_pending; i++) {
		struct lfe_neigh_pend *e = &n->p[i];
		if (e->ip == 0)
			continue;
		for (unsigned k = 0; k < e->n; k++)
			drop(ctx, e->q[k]);
		release(n, e);
	}
}
