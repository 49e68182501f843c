/* dataplane/worker_ctl.c — the worker's side of the control socket: the
 * reload barrier and the connection snapshot; see worker_ctl.h. */
#include <sched.h>
#include <string.h>

#include "dataplane/worker.h"
#include "dataplane/worker_ctl.h"

/* Re-read the live keys of d->cfg into the worker's own copies (at the
 * barrier, after a reload applied). */
static void apply_live(struct lfe_worker *w)
{
	const struct lfe_config *c = &w->d->cfg;
	const char *why = NULL;

	w->scfg.allow_anonymous = c->allow_anonymous;
	w->scfg.search.access = c->search_access;
	w->scfg.search.max_scope = c->search_scope;
	if (c->search_base[0]) {
		w->scfg.search.base = c->search_base;
		w->scfg.search.base_len = strlen(c->search_base);
	} else {
		size_t sl;
		w->scfg.search.base = lfe_store_suffix(w->d->store, &sl);
		w->scfg.search.base_len = sl;
	}
	lfe_search_attrs_parse(&w->scfg.search, c->search_attrs, &why);   /* checked by reload */
	w->scfg.require_tls = c->require_tls;
	if (w->thr) {
		struct lfe_throttle_params tp = lfe_worker_throttle_params(&c->throttle);
		size_t sz = lfe_throttle_mem_size(&tp);
		int rc;
		/* The same width, so the same memory: counts start afresh. */
		if (sz)
			lfe_throttle_init(w->thr, sz, &tp, &rc);
	}
}

/* The answer of conns: this worker's connections into s. */
static void fill_snap(struct lfe_worker *w, struct lfe_conn_snap *s)
{
	uint32_t n = 0, total = 0;
	for (uint32_t i = 0; i < w->n_slots; i++) {
		const struct lfe_slot *sl = (const struct lfe_slot *)(w->slot_mem + (size_t)i * w->slot_size);
		if (sl->s == NULL || sl->st.c == NULL)
			continue;
		total++;
		if (n >= s->limit)
			continue;
		struct lfe_conn_info *ci = &s->ent[n++];
		lfe_tcp_conn_addrs(sl->st.c, &ci->laddr, &ci->lport, &ci->raddr, &ci->rport);
		ci->age_us = w->now_us - sl->opened_us;
		ci->state = sl->pending ? LFE_CS_VERIFYING : lfe_stream_holding(&sl->st) ? LFE_CS_BLOCKED
			  : lfe_session_gathering(sl->s) ? LFE_CS_READING : LFE_CS_IDLE;
		const struct lfe_session_stats *ss = lfe_session_stats(sl->s);
		ci->requests = ss->binds_ok + ss->binds_invalid + ss->binds_other + ss->searches + ss->extended;
		size_t dl = 0;
		const char *dn = lfe_session_bound_dn(sl->s, &dl);
		ci->bound = dl > 0;
		ci->dn[0] = '\0';
		if (s->show_dn && dl) {
			if (dl >= sizeof(ci->dn))
				dl = sizeof(ci->dn) - 1;
			memcpy(ci->dn, dn, dl);
			ci->dn[dl] = '\0';
		}
	}
	s->n = n;
	s->total = total;
	s->now_us = w->now_us;
}

void lfe_worker_ctl_poll(struct lfe_worker_ctl *wc, struct lfe_worker *w)
{
	if (wc == NULL)
		return;
	unsigned gen = atomic_load_explicit(&wc->cfg_gen, memory_order_acquire);
	if (gen != wc->seen[w->idx]) {
		wc->seen[w->idx] = gen;
		atomic_store_explicit(&wc->parked[w->idx], gen, memory_order_release);
		/* Bounded: the control thread releases within its wait. */
		while (atomic_load_explicit(&wc->cfg_release, memory_order_acquire) != gen)
			sched_yield();
		if (atomic_load_explicit(&wc->applied, memory_order_acquire))
			apply_live(w);
	}
	struct lfe_conn_snap *s = &wc->snap[w->idx];
	unsigned req = atomic_load_explicit(&s->req, memory_order_acquire);
	if (req != atomic_load_explicit(&s->done, memory_order_relaxed)) {
		fill_snap(w, s);
		atomic_store_explicit(&s->done, req, memory_order_release);
	}
}
