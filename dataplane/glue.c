/* dataplane/glue.c — wires one worker's TCP stack to its LDAP sessions and
 * the sessions to the LMDB store.
 *
 * Connections and sessions: a session lives in a slot of the worker's
 * preallocated pool from on_open to on_close; the slot is the connection's
 * app pointer. Responses are encoded straight into the connection's send
 * buffer (lfe_tcp_send_space), so nothing is copied between the codec and
 * the wire except into the frame itself.
 *
 * Binds: fast schemes are verified inline on the poll core inside the
 * worker's read transaction. Slow schemes (-EAGAIN from the store) go to the
 * verifier threads with the connection's handle and the session's token;
 * the verdict comes back on this worker's completion ring and is delivered
 * only if the handle still names a live connection (generation check) and
 * the session still expects that token.
 *
 * Deadlines and eviction: each connection carries one TCP app deadline,
 * the earliest of: the first request must start within first_request_ms of
 * connect; a partial PDU must complete within pdu_timeout_ms of its first
 * byte; with bind_timeout_ms, the connection must be bound to a DN within
 * it of connect. It is recomputed after every delivery and checked lazily
 * when it fires (on_deadline), so a bind that completed on a verifier
 * thread needs no extra bookkeeping. A connection that holds nothing a
 * reset would lose (no partial PDU, no pending bind, no unanswered or
 * unconsumed request, not bound to a DN) is marked evictable; the TCP stack
 * resets the one marked longest ago when a SYN finds the table full.
 *
 * Searches (what login flows do before a bind: find the user's DN by uid or
 * mail): base scope reads the one entry; one/sub scope needs an equality
 * assertion on an indexed attribute (uid, mail, cn, objectClass) at the top
 * of the filter, looks the candidates up in the index and evaluates the full
 * filter on each. A search no index can serve is answered
 * unwillingToPerform: a full scan would stall every connection of the core.
 */
#include <errno.h>
#include <string.h>

#include "ldap/dn.h"
#include "ldap/filter.h"
#include "glue.h"
#include "verifier.h"
#include "worker.h"

#define SEARCH_MAX_CANDIDATES 10000u

static inline struct lfe_slot *slot_of(struct lfe_tcp_conn *c)
{
	return lfe_tcp_conn_app(c);
}

enum dl_kind { DL_NONE, DL_FIRST, DL_PDU, DL_BIND };

static bool slot_bound(const struct lfe_slot *sl)
{
	size_t n = 0;
	lfe_session_bound_dn(sl->s, &n);
	return n > 0;
}

/* The slot's earliest deadline (0 = none) and which one it is. */
static uint64_t slot_deadline(const struct lfe_worker *w, const struct lfe_slot *sl, enum dl_kind *kind)
{
	const struct lfe_config *cf = &w->d->cfg;
	uint64_t d = 0;
	*kind = DL_NONE;
	if (!sl->got_data && cf->first_request_ms) {
		d = sl->opened_us + cf->first_request_ms * 1000u;
		*kind = DL_FIRST;
	}
	if (sl->pdu_since) {
		uint64_t x = sl->pdu_since + cf->pdu_timeout_ms * 1000u;
		if (!d || x < d) {
			d = x;
			*kind = DL_PDU;
		}
	}
	if (cf->bind_timeout_ms && !slot_bound(sl)) {
		uint64_t x = sl->opened_us + cf->bind_timeout_ms * 1000u;
		if (!d || x < d) {
			d = x;
			*kind = DL_BIND;
		}
	}
	return d;
}

static void slot_arm(const struct lfe_worker *w, struct lfe_slot *sl, struct lfe_tcp_conn *c)
{
	enum dl_kind k;
	lfe_tcp_conn_set_deadline(c, slot_deadline(w, sl, &k));
}

static int on_deadline(void *ctx, struct lfe_tcp_conn *c)
{
	struct lfe_worker *w = ctx;
	struct lfe_slot *sl = lfe_tcp_conn_app(c);
	enum dl_kind k;

	if (sl == NULL)
		return -ETIME;
	uint64_t d = slot_deadline(w, sl, &k);
	if (d == 0 || d > w->now_us) {
		lfe_tcp_conn_set_deadline(c, d);   /* bound meanwhile, or moved */
		return 0;
	}
	if (k == DL_FIRST)
		w->st.conns_first_request_expired++;
	else if (k == DL_PDU)
		w->st.conns_pdu_expired++;
	else
		w->st.conns_bind_expired++;
	return -ETIME;
}

static int on_open(void *ctx, struct lfe_tcp_conn *c)
{
	struct lfe_worker *w = ctx;

	if (w->n_free == 0) {
		w->st.conns_refused++;
		return -ENOBUFS;
	}
	uint32_t i = w->slot_free[--w->n_free];
	struct lfe_slot *sl = (struct lfe_slot *)(w->slot_mem + (size_t)i * w->slot_size);
	sl->s = lfe_session_init((uint8_t *)sl + LFE_SLOT_HDR, &w->scfg);
	sl->owed = false;
	sl->c = c;
	sl->blocked = false;
	sl->got_data = false;
	sl->pending = false;
	sl->opened_us = w->now_us;
	sl->pdu_since = 0;
	lfe_session_set_generation(sl->s, lfe_tcp_conn_handle(c).gen);
	lfe_tcp_conn_set_app(c, sl);
	slot_arm(w, sl, c);
	lfe_tcp_conn_set_evictable(c, true);
	w->st.conns_opened++;
	w->st.conns_active++;
	return 0;
}

/* The send buffer is a ring and lfe_tcp_send_space() offers only the
 * contiguous room up to its end. When that room is too small for the next
 * response while the ring has room after the wrap (the usual case of a
 * long request/response connection), the session would wait for an ACK
 * that never comes. Then the response is encoded into the worker's spill
 * buffer and queued with lfe_tcp_send(), which wraps. The spill capacity is
 * bounded by the ring's total free space, so the session stops before a
 * response that would not fit (and resumes on the peer's ACK) instead of
 * producing one that cannot be queued. */
static size_t spill_cap(const struct lfe_worker *w, const struct lfe_tcp_conn *c)
{
	size_t free_bytes = lfe_tcp_send_free(c);
	return free_bytes < sizeof(w->spill) ? free_bytes : sizeof(w->spill);
}

static int commit_out(struct lfe_tcp_conn *c, const struct lfe_session_io *io, bool spilled)
{
	if (io->out_len == 0)
		return 0;
	if (!spilled) {
		lfe_tcp_send_commit(c, io->out_len);
		return 0;
	}
	return lfe_tcp_send(c, io->out, io->out_len) == io->out_len ? 0 : -ENOBUFS;
}

/* Run the session over the bytes offered; returns how many it consumed. */
static size_t run_session(struct lfe_worker *w, struct lfe_tcp_conn *c, struct lfe_slot *sl,
			  const uint8_t *data, size_t len)
{
	size_t used = 0;
	bool spill = false;

	sl->blocked = false;
	sl->pending = false;
	w->cur = c;
	while (used < len || sl->owed) {
		uint8_t *out;
		size_t cap = lfe_tcp_send_space(c, &out);
		if (cap == 0) {
			sl->blocked = true;   /* ring full: resume on the peer's ACK */
			break;
		}
		if (spill) {
			out = w->spill;
			cap = spill_cap(w, c);
		}
		struct lfe_session_io io = { .in = data + used, .in_len = len - used, .out = out,
					     .out_cap = cap };
		int rc = lfe_session_process(sl->s, &io);
		if (rc < 0 || commit_out(c, &io, spill) < 0) {
			w->cur = NULL;
			lfe_tcp_abort(c);
			return len;
		}
		used += io.in_used;
		sl->owed = io.flags & LFE_SESS_WANT_ROOM;
		if (io.flags & LFE_SESS_ABORT) {
			w->cur = NULL;
			lfe_tcp_abort(c);
			return len;
		}
		if (io.flags & LFE_SESS_CLOSE) {
			lfe_tcp_close(c);
			used = len;   /* nothing after an unbind or a protocol error counts */
			break;
		}
		if (io.flags & LFE_SESS_PENDING) {
			sl->pending = true;
			break;
		}
		if (io.out_len == 0 && (io.in_used == 0 || sl->owed)) {
			if (spill) {
				sl->blocked = true;
				break;
			}
			spill = true;   /* contiguous room too small: retry through the spill buffer */
			continue;
		}
		spill = false;
	}
	w->cur = NULL;
	return used;
}

static size_t on_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct lfe_slot *sl = slot_of(c);

	if (sl == NULL)
		return len;
	struct lfe_worker *w = ctx;
	size_t used = run_session(w, c, sl, data, len);
	if (sl->s == NULL)
		return used;   /* closed inside */
	bool gathering = lfe_session_gathering(sl->s);
	if (len)
		sl->got_data = true;
	if (!gathering)
		sl->pdu_since = 0;
	else if (!sl->pdu_since)
		sl->pdu_since = w->now_us;
	slot_arm(w, sl, c);
	lfe_tcp_conn_set_evictable(c, !gathering && !sl->pending && !sl->owed && !sl->blocked &&
				      used == len && !slot_bound(sl));
	return used;
}

static void on_writable(void *ctx, struct lfe_tcp_conn *c)
{
	struct lfe_worker *w = ctx;
	struct lfe_slot *sl = slot_of(c);

	if (sl && sl->blocked) {
		sl->blocked = false;
		/* A request the session gathered whole but could not answer has
		 * no unconsumed bytes left for the kick to offer: answer it
		 * first. */
		static const uint8_t nothing[1];
		if (sl->owed)
			run_session(w, c, sl, nothing, 0);
		lfe_tcp_conn_kick(w->tcp, c, w->now_us);
	}
}

static void on_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct lfe_worker *w = ctx;
	struct lfe_slot *sl = slot_of(c);

	(void)reason;
	if (sl == NULL)
		return;
	lfe_session_fini(sl->s);
	sl->s = NULL;
	sl->c = NULL;
	lfe_tcp_conn_set_app(c, NULL);
	w->slot_free[w->n_free++] = (uint32_t)(((uint8_t *)sl - w->slot_mem) / w->slot_size);
	w->st.conns_active--;
}

const struct lfe_tcp_ops lfe_glue_tcp_ops = {
	.tx = lfe_worker_tx_seg,
	.on_open = on_open,
	.on_data = on_data,
	.on_writable = on_writable,
	.on_peer_fin = NULL,
	.on_close = on_close,
	.on_deadline = on_deadline,
};

void lfe_glue_bind_done(struct lfe_worker *w, struct lfe_tcp_handle h, uint64_t token,
			enum lfe_be_verdict v)
{
	struct lfe_tcp_conn *c = lfe_tcp_conn_get(w->tcp, h);
	struct lfe_slot *sl = c ? slot_of(c) : NULL;

	if (v == LFE_BE_OK)
		w->st.binds_ok++;
	else
		w->st.binds_failed++;
	if (sl == NULL)
		return;   /* the connection went away while the hash ran */
	uint8_t *out;
	size_t cap = lfe_tcp_send_space(c, &out);
	/* A BindResponse is small; below this much contiguous room use the
	 * spill buffer (see commit_out). */
	bool spill = cap < 256;
	struct lfe_session_io io = { .out = spill ? w->spill : out,
				     .out_cap = spill ? spill_cap(w, c) : cap };
	int rc = lfe_session_bind_done(sl->s, token, v, &io);
	if (rc == -ESTALE)
		return;
	if (rc < 0 || commit_out(c, &io, spill) < 0) {
		lfe_tcp_abort(c);
		return;
	}
	/* Input that arrived behind the bind was left unconsumed: offer it now. */
	lfe_tcp_conn_kick(w->tcp, c, w->now_us);
}

static enum lfe_be_verdict be_bind(void *ctx, uint64_t token, const char *ndn, size_t ndn_len,
				   const uint8_t *pw, size_t pw_len)
{
	struct lfe_worker *w = ctx;
	int rc = lfe_store_verify_bind(w->rd, ndn, ndn_len, pw, pw_len, w->d->pw_flags);

	if (rc == 0) {
		w->st.binds_ok++;
		return LFE_BE_OK;
	}
	if (rc != -EAGAIN || w->cur == NULL) {
		w->st.binds_failed++;
		return LFE_BE_INVALID;
	}
	rc = lfe_verifier_submit(w->d->verifier, w, lfe_tcp_conn_handle(w->cur), token, ndn, ndn_len,
				 pw, pw_len);
	if (rc == -E2BIG) {
		w->st.binds_failed++;
		return LFE_BE_INVALID;
	}
	if (rc < 0) {
		w->st.binds_busy++;
		return LFE_BE_BUSY;
	}
	w->st.binds_offloaded++;
	return LFE_BE_PENDING;
}

/* ---- search ---- */

struct sctx {
	struct lfe_worker *w;
	const struct lfe_be_search *s;
	lfe_be_emit_fn emit;
	void *emit_ctx;
	uint32_t emitted, visited;
	int rc;                 /* LDAP result once stopped early */
};

static uint32_t filter_attr(void *ctx, struct lfe_bytes type, struct lfe_bytes *vals, uint32_t cap)
{
	return lfe_entry_get(ctx, (const char *)type.p, type.len, vals, cap);
}

/* Parent of a normalized DN: what follows the first unescaped comma. */
static void dn_parent(const char *ndn, size_t len, const char **p, size_t *plen)
{
	for (size_t i = 0; i < len; i++) {
		if (ndn[i] == '\\') {
			i++;
			continue;
		}
		if (ndn[i] == ',') {
			*p = ndn + i + 1;
			*plen = len - i - 1;
			return;
		}
	}
	*p = ndn + len;
	*plen = 0;
}

static bool in_scope(const struct lfe_be_search *s, const char *ndn, size_t len)
{
	switch (s->req->scope) {
	case LFE_SCOPE_BASE:
		return len == s->base_ndn_len && memcmp(ndn, s->base_ndn, len) == 0;
	case LFE_SCOPE_ONE: {
		const char *p;
		size_t pl;
		dn_parent(ndn, len, &p, &pl);
		return len != s->base_ndn_len && pl == s->base_ndn_len &&
		       memcmp(p, s->base_ndn, pl) == 0;
	}
	case LFE_SCOPE_SUB:
		return lfe_dn_is_under(ndn, len, s->base_ndn, s->base_ndn_len);
	}
	return false;
}

/* Evaluate and emit one entry. Returns 0 to go on, 1 to stop (x->rc set). */
static int consider(struct sctx *x, const char *ndn, size_t len)
{
	struct lfe_worker *w = x->w;
	const struct lfe_search_req *req = x->s->req;
	struct lfe_entry_view e;

	if (++x->visited > SEARCH_MAX_CANDIDATES) {
		x->rc = LFE_RC_ADMIN_LIMIT_EXCEEDED;
		return 1;
	}
	if (!in_scope(x->s, ndn, len) || lfe_store_get(w->rd, ndn, len, &e) != 0)
		return 0;
	if (lfe_filter_eval(req->filter.p, req->filter.len, filter_attr, &e) != LFE_FILTER_TRUE)
		return 0;
	if (req->size_limit > 0 && x->emitted == (uint32_t)req->size_limit) {
		x->rc = LFE_RC_SIZE_LIMIT_EXCEEDED;
		return 1;
	}
	uint32_t na = 0, nv = 0;
	size_t cur = 0;
	const uint32_t acap = sizeof(w->sattrs) / sizeof(w->sattrs[0]);
	const uint32_t vcap = sizeof(w->svals) / sizeof(w->svals[0]);
	while (na < acap && nv < vcap) {
		struct lfe_ldap_attr *a = &w->sattrs[na];
		int rc = lfe_entry_next_attr(&e, &cur, a, &w->svals[nv], vcap - nv);
		if (rc < 0) {
			x->rc = LFE_RC_OTHER;
			return 1;
		}
		if (rc == 0)
			break;
		if (a->n_vals > vcap - nv)
			a->n_vals = vcap - nv;
		a->vals = &w->svals[nv];
		nv += a->n_vals;
		na++;
	}
	int rc = x->emit(x->emit_ctx, e.dn, w->sattrs, na);
	if (rc < 0) {
		x->rc = LFE_RC_ADMIN_LIMIT_EXCEEDED;
		return 1;
	}
	x->emitted++;
	return 0;
}

static int index_cb(void *ctx, const char *ndn, size_t len)
{
	return consider(ctx, ndn, len);
}

static int be_search(void *ctx, const struct lfe_be_search *s, lfe_be_emit_fn emit, void *emit_ctx)
{
	static const char *const indexed[] = { "uid", "mail", "cn", "objectClass" };
	struct lfe_worker *w = ctx;
	struct sctx x = { .w = w, .s = s, .emit = emit, .emit_ctx = emit_ctx, .rc = LFE_RC_SUCCESS };
	struct lfe_entry_view e;

	w->st.searches++;
	bool base_exists = lfe_store_get(w->rd, s->base_ndn, s->base_ndn_len, &e) == 0;
	size_t sl = strlen(w->d->suffix);
	if (!base_exists && !(s->base_ndn_len == sl && memcmp(s->base_ndn, w->d->suffix, sl) == 0))
		return LFE_RC_NO_SUCH_OBJECT;
	if (s->req->scope == LFE_SCOPE_BASE) {
		if (base_exists)
			consider(&x, s->base_ndn, s->base_ndn_len);
		return x.rc;
	}
	for (size_t i = 0; i < sizeof(indexed) / sizeof(indexed[0]); i++) {
		struct lfe_bytes v;
		int rc = lfe_filter_find_eq(s->req->filter.p, s->req->filter.len, indexed[i], &v);
		if (rc < 0)
			return LFE_RC_PROTOCOL_ERROR;
		if (rc == 0)
			continue;
		rc = lfe_store_index_each(w->rd, indexed[i], v.p, v.len, index_cb, &x);
		if (rc == -ENOTSUP)
			continue;
		if (rc < 0 && rc != -ENOENT)
			return LFE_RC_OTHER;
		return x.rc;
	}
	w->st.search_unindexed++;
	return LFE_RC_UNWILLING_TO_PERFORM;
}

const struct lfe_backend_ops lfe_glue_backend_ops = {
	.bind = be_bind,
	.search = be_search,
};
