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
	lfe_session_set_generation(sl->s, lfe_tcp_conn_handle(c).gen);
	lfe_tcp_conn_set_app(c, sl);
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
		if (io.flags & LFE_SESS_PENDING)
			break;
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
	return run_session(ctx, c, sl, data, len);
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
};

/* ---- brute-force throttle (backend/throttle.h) ----
 * Checked before any lookup or verification, so a throttled unknown DN and
 * a throttled existing DN take the same path; recorded after every
 * invalidCredentials verdict, inline or from the verifier. */

/* Check before verify: true when the bind must be answered 49 unverified.
 * Fills *k for throttle_record. */
static bool throttle_check(struct lfe_worker *w, const char *ndn, size_t ndn_len,
			   struct lfe_throttle_key *k)
{
	uint32_t laddr, raddr = 0;
	uint16_t lport, rport;

	if (w->thr == NULL)
		return false;
	if (w->cur)
		lfe_tcp_conn_addrs(w->cur, &laddr, &lport, &raddr, &rport);
	lfe_throttle_key(w->thr, ndn, ndn_len, raddr, k);
	unsigned hit = lfe_throttle_check(w->thr, k, w->now_us);
	if (hit == 0)
		return false;
	w->st.binds_throttled++;
	w->st.throttled_src += (hit & LFE_THR_BIT(LFE_THR_SRC)) != 0;
	w->st.throttled_dn += (hit & LFE_THR_BIT(LFE_THR_PAIR)) != 0;
	w->st.throttled_dn_global += (hit & LFE_THR_BIT(LFE_THR_DN)) != 0;
	return true;
}

/* Record after a failed verdict. */
static void throttle_record(struct lfe_worker *w, const struct lfe_throttle_key *k)
{
	if (w->thr && lfe_throttle_fail(w->thr, k, w->now_us))
		w->st.throttle_penalties++;
}

void lfe_glue_bind_done(struct lfe_worker *w, struct lfe_tcp_handle h, uint64_t token,
			enum lfe_be_verdict v)
{
	struct lfe_tcp_conn *c = lfe_tcp_conn_get(w->tcp, h);
	struct lfe_slot *sl = c ? slot_of(c) : NULL;

	if (v == LFE_BE_OK)
		w->st.binds_ok++;
	else
		w->st.binds_failed++;
	/* Record after a failed verdict, with the keys kept in the slot at
	 * submit. A connection that went away is not recorded: its verdict
	 * reaches nobody. */
	if (sl && v == LFE_BE_INVALID)
		throttle_record(w, &sl->thr_key);
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
	struct lfe_throttle_key tk;

	if (throttle_check(w, ndn, ndn_len, &tk))   /* check before verify */
		return LFE_BE_INVALID;
	int rc = lfe_store_verify_bind(w->rd, ndn, ndn_len, pw, pw_len, w->d->pw_flags);

	if (rc == 0) {
		w->st.binds_ok++;
		return LFE_BE_OK;
	}
	if (rc != -EAGAIN || w->cur == NULL) {
		w->st.binds_failed++;
		throttle_record(w, &tk);   /* record after a failed verdict */
		return LFE_BE_INVALID;
	}
	rc = lfe_verifier_submit(w->d->verifier, w, lfe_tcp_conn_handle(w->cur), token, ndn, ndn_len,
				 pw, pw_len);
	if (rc == -E2BIG) {
		w->st.binds_failed++;
		throttle_record(w, &tk);
		return LFE_BE_INVALID;
	}
	if (rc < 0) {
		w->st.binds_busy++;
		return LFE_BE_BUSY;
	}
	w->st.binds_offloaded++;
	if (w->thr)
		slot_of(w->cur)->thr_key = tk;   /* for lfe_glue_bind_done's record */
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
