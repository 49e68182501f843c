/* dataplane/glue.c — wires one worker's TCP stack to its LDAP sessions and
 * the sessions to the LMDB store (interface: the callbacks section of
 * worker.h; glue.c is part of the worker module).
 *
 * Connections and sessions: a session lives in a slot of the worker's
 * preallocated pool from on_open to on_close; the slot is the connection's
 * app pointer. The session talks to TCP through the slot's byte stream
 * (stream.h): it hands over whole responses, encoded in the worker's
 * scratch buffer; when send room is short, requests wait unconsumed in
 * TCP's receive buffer and are offered again when an ACK frees room.
 *
 * Binds: the policy is backend/auth.c's (lfe_auth_bind/_done); the glue
 * gives it the request, the clocks and two hooks. Fast schemes are
 * verified inline on the poll core inside the worker's read transaction. Slow schemes (-EAGAIN and a job from the store,
 * also the dummy verification of unknown DNs when the bind scheme is slow)
 * go to the verifier threads with the connection's handle, the client's
 * address (per-source bound) and the session's token;
 * the verdict comes back on this worker's completion ring and is delivered
 * only if the handle still names a live connection (generation check) and
 * the session still expects that token.
 *
 * Deadlines and eviction: each connection carries one TCP app deadline,
 * the earliest of: the first request must start within first_request_ms of
 * connect; a partial PDU must complete within pdu_timeout_ms of its first
 * byte; with bind_timeout_ms, the connection must be bound to a DN within
 * it of connect; TLS: the handshake must finish within [tls]
 * handshake_timeout_ms of its start, and a started record (ldapfe's record
 * layer) must complete within pdu_timeout_ms of its first byte. It is
 * recomputed after every delivery and checked lazily
 * when it fires (on_deadline), so a bind that completed on a verifier
 * thread needs no extra bookkeeping. A connection that holds nothing a
 * reset would lose (no partial PDU, no pending bind, no unanswered or
 * unconsumed request, not bound to a DN) is marked evictable; the TCP stack
 * resets the one marked longest ago when a SYN finds the table full.
 *
 * Verified-credential cache (backend/credcache.h, [store] bind_cache): after
 * the throttle check, a bind whose DN and password verified before and
 * whose entry is proved unchanged is answered at once, with no hash and no
 * verifier job; anything else takes the full path unchanged. A success of
 * the full path is inserted on the worker (auth.c): inline verdicts at
 * once, verifier verdicts in lfe_glue_bind_done with the tag and store
 * snapshot kept in the slot at submit — so the table is only touched by
 * its core.
 *
 * Searches (what login flows do before a bind: find the user's DN by uid or
 * mail) run in backend/search.c (lfe_store_search): index candidates only,
 * within the worker's per-request budget ([ldap] request_slice_us on the
 * TSC, search_max_candidates), past which they end with adminLimitExceeded.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>

#include "backend/auth.h"
#include "backend/bindjob.h"
#include "backend/search.h"
#include "tls/tls.h"
#include "dataplane/verifier.h"
#include "dataplane/worker.h"

bool lfe_glue_is_ldaps(const struct lfe_config *cf, uint16_t port)
{
	for (uint32_t i = 0; i < cf->n_ldaps_ports; i++)
		if (cf->ldaps_ports[i] == port)
			return true;
	return false;
}

static inline struct lfe_slot *slot_of(struct lfe_tcp_conn *c)
{
	return lfe_tcp_conn_app(c);
}

enum dl_kind { DL_NONE, DL_FIRST, DL_PDU, DL_BIND, DL_SEARCH, DL_HANDSHAKE, DL_RECORD };

static bool slot_bound(const struct lfe_slot *sl)
{
	size_t n = 0;
	lfe_session_bound_dn(sl->s, &n);
	return n > 0;
}

/* The slot's earliest deadline (0 = none) and which one it is. */
static uint64_t slot_deadline(const struct lfe_worker *w, struct lfe_slot *sl, enum dl_kind *kind)
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
	if (sl->search_more && !sl->search_at)
		sl->search_at = w->now_us + 1024u;   /* the timer wheel's next tick */
	if (sl->search_more && (!d || sl->search_at <= d)) {
		d = sl->search_at;
		*kind = DL_SEARCH;
	}
	/* TLS: the handshake within handshake_timeout_ms, a started record
	 * within pdu_timeout_ms of its first byte (stream.h). */
	if (sl->st.tls == NULL)
		return d;   /* cleartext: nothing more (a bind's path) */
	uint64_t hs = lfe_stream_handshake_since(&sl->st), rs = lfe_stream_record_since(&sl->st);
	if (hs && cf->tls_handshake_timeout_ms) {
		uint64_t x = hs + cf->tls_handshake_timeout_ms * 1000u;
		if (!d || x < d) {
			d = x;
			*kind = DL_HANDSHAKE;
		}
	}
	if (rs) {
		uint64_t x = rs + cf->pdu_timeout_ms * 1000u;
		if (!d || x < d) {
			d = x;
			*kind = DL_RECORD;
		}
	}
	return d;
}

static void search_continue(struct lfe_worker *w, struct lfe_tcp_conn *c, struct lfe_slot *sl);

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
	if (k == DL_SEARCH) {
		/* A search that spent its slice goes on (a new slice). */
		sl->search_more = false;
		sl->search_at = 0;
		search_continue(w, c, sl);
		if (sl->s && lfe_tcp_conn_app(c) == sl)
			slot_arm(w, sl, c);
		return 0;
	}
	if (k == DL_FIRST)
		w->st.conns_first_request_expired++;
	else if (k == DL_PDU)
		w->st.conns_pdu_expired++;
	else if (k == DL_HANDSHAKE)
		w->sc.st.handshake_expired++;
	else if (k == DL_RECORD)
		w->sc.st.record_expired++;
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
	uint32_t la, ra;
	uint16_t lp, rp;
	lfe_tcp_conn_addrs(c, &la, &lp, &ra, &rp);
	bool ldaps = lfe_glue_is_ldaps(&w->d->cfg, lp);
	if (ldaps) {
		if (w->d->tls == NULL ||
		    lfe_stream_init_tls(&sl->st, c, lfe_tls_ctx(w->d->tls), &w->sc) < 0) {
			w->slot_free[w->n_free++] = i;
			w->st.conns_refused++;
			return -ENOBUFS;
		}
		w->st.tls_started++;
	} else {
		lfe_stream_init(&sl->st, c);
	}
	sl->s = lfe_session_init((uint8_t *)sl + LFE_SLOT_HDR, &w->scfg);
	if (ldaps)
		lfe_session_set_tls(sl->s);
	sl->w = w;
	sl->st.be_ctx = sl;   /* the backend ops get the connection's slot (stream.h) */
	sl->got_data = false;
	sl->pending = false;
	sl->search_more = false;
	sl->search_at = 0;
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

/* A search spent its slice (more) or no longer waits for the next one. */
__attribute__((noinline)) static void search_settle(struct lfe_slot *sl, bool more)
{
	if (more != sl->search_more || !more)
		sl->search_at = 0;
	sl->search_more = more;
}

/* After the session ran (on_data, a resume): pending state, deadlines,
 * evictability. */
static void settle(struct lfe_worker *w, struct lfe_tcp_conn *c, struct lfe_slot *sl,
		   unsigned flags, bool all_taken)
{
	sl->pending = flags & LFE_SESS_PENDING;
	if ((flags & LFE_SESS_MORE) || sl->search_more)
		search_settle(sl, flags & LFE_SESS_MORE);
	bool gathering = lfe_session_gathering(sl->s);
	if (!gathering)
		sl->pdu_since = 0;
	else if (!sl->pdu_since)
		sl->pdu_since = w->now_us;
	slot_arm(w, sl, c);
	/* A started TLS record holds only its pool buffer: evictable. A
	 * search under way is not. */
	bool holding = sl->st.tls && lfe_stream_holding(&sl->st) && !lfe_stream_record_since(&sl->st);
	lfe_tcp_conn_set_evictable(c, !gathering && !sl->pending && all_taken && !holding &&
				      !slot_bound(sl) && !lfe_session_searching(sl->s));
}

static size_t on_data(void *ctx, struct lfe_tcp_conn *c, const uint8_t *data, size_t len)
{
	struct lfe_slot *sl = slot_of(c);

	if (sl == NULL)
		return len;
	struct lfe_worker *w = ctx;
	unsigned flags;
	size_t used = lfe_stream_deliver(&sl->st, sl->s, data, len, w->out, sizeof w->out, &flags);
	if (flags & LFE_SESS_STARTTLS) {
		/* The success response is queued in clear; every byte after the
		 * request is the client's handshake (the session read none). */
		if (w->d->tls == NULL ||
		    lfe_stream_init_tls(&sl->st, c, lfe_tls_ctx(w->d->tls), &w->sc) < 0) {
			lfe_tcp_abort(c);
			return len;
		}
		w->st.tls_started++;
		sl->st.be_ctx = sl;   /* cleared by the stream's init */
		used += lfe_stream_deliver(&sl->st, sl->s, data + used, len - used, w->out,
					   sizeof w->out, &flags);
	}
	if (sl->s == NULL || (flags & LFE_SESS_ABORT))
		return used;   /* closed inside */
	if (len)
		sl->got_data = true;
	settle(w, c, sl, flags, used == len);
	return used;
}

static void on_writable(void *ctx, struct lfe_tcp_conn *c)
{
	struct lfe_worker *w = ctx;
	struct lfe_slot *sl = slot_of(c);
	unsigned flags;

	if (sl == NULL)
		return;
	lfe_stream_on_writable(&sl->st, sl->s, w->tcp, w->now_us, w->out, sizeof w->out, &flags);
	if (sl->s && !(flags & LFE_SESS_ABORT) && sl->st.tls)
		settle(w, c, sl, flags, true);
	/* Send room freed: a search under way writes its next entries (a
	 * slow reader's search waits here, holding one send ring). */
	if (lfe_tcp_conn_app(c) == sl && sl->s && !(flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE)) &&
	    lfe_session_searching(sl->s) && !sl->search_more)
		search_continue(w, c, sl);
}

/* The next part of a search under way (lfe_stream_resume). */
static void search_continue(struct lfe_worker *w, struct lfe_tcp_conn *c, struct lfe_slot *sl)
{
	unsigned flags;

	lfe_stream_resume(&sl->st, sl->s, w->out, sizeof w->out, &flags);
	if (sl->s == NULL || lfe_tcp_conn_app(c) != sl || (flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE)))
		return;
	settle(w, c, sl, flags, true);
	/* Requests that waited behind the search are offered again. */
	if (!lfe_session_searching(sl->s))
		lfe_tcp_conn_kick(w->tcp, c, w->now_us);
}

void lfe_glue_handshake_done(void *ctx, struct lfe_tlsoff_job *job)
{
	struct lfe_worker *w = ctx;
	struct lfe_stream *st = lfe_stream_of_job(job);
	struct lfe_tcp_conn *c = st->c;
	struct lfe_slot *sl = slot_of(c);
	unsigned flags;

	lfe_stream_handshake_done(st, sl->s, w->out, sizeof w->out, &flags);
	if (flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE))
		return;
	settle(w, c, sl, flags, true);
	lfe_tcp_conn_kick(w->tcp, c, w->now_us);
}

static void on_close(void *ctx, struct lfe_tcp_conn *c, int reason)
{
	struct lfe_worker *w = ctx;
	struct lfe_slot *sl = slot_of(c);

	(void)reason;
	if (sl == NULL)
		return;
	lfe_verifier_cancel(w->d->verifier, w->idx, lfe_tcp_conn_handle(c));
	if (lfe_stream_tls_failed(&sl->st))
		w->st.tls_failed++;
	lfe_stream_fini(&sl->st);
	lfe_session_fini(sl->s);
	sl->s = NULL;
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

/* ---- binds: the policy is backend/auth.c's (lfe_auth_bind/_done) ----
 * The glue gives it the request, the client's address, the clocks and the
 * peeked key; the verifier is its offload hook, the latency histograms its
 * verified hook, and the connection's slot keeps the offload's keys. */

/* One event line about a client (log.h: rate-limited per kind, queued for
 * the control thread to write). raddr 0: unknown. No DN, ever. */
static void log_peer(struct lfe_worker *w, enum lfe_log_level lv, const char *event, uint32_t raddr)
{
	struct lfe_log_line l;
	if (!lfe_log_start(&l, &w->log, lv, event, w->now_us))
		return;
	lfe_log_kv(&l, "core", "%u", w->lcore);
	if (raddr)
		lfe_log_kv(&l, "peer", "%u.%u.%u.%u", raddr >> 24, (raddr >> 16) & 255, (raddr >> 8) & 255,
			   raddr & 255);
	lfe_log_end(&l);
}

static void log_auth_events(struct lfe_worker *w, unsigned ev, uint32_t raddr)
{
	if (ev & LFE_AUTH_EV_PENALTY)
		log_peer(w, LFE_LOG_INFO, "throttle_penalty", raddr);
	if (ev & LFE_AUTH_EV_BUSY)
		log_peer(w, LFE_LOG_WARN, "verifier_busy", raddr);
}

/* lfe_auth's offload hook: the verifier (verifier.h), with the connection
 * of the slot that keeps the bind's keys (r->conn); its busy refusals are
 * counted here (binds_busy is lfe_auth's). */
static int auth_submit(void *ctx, const struct lfe_auth_req *r, const struct lfe_bind_job *job)
{
	struct lfe_worker *w = ctx;
	struct lfe_slot *sl = (struct lfe_slot *)((uint8_t *)r->conn - offsetof(struct lfe_slot, auth));
	struct lfe_tcp_conn *c = sl->st.c;
	uint32_t laddr, raddr;
	uint16_t lport, rport;
	lfe_tcp_conn_addrs(c, &laddr, &lport, &raddr, &rport);   /* per-source bound */
	int rc = lfe_verifier_submit(w->d->verifier, w->idx, w->now_us, lfe_tcp_conn_handle(c), raddr,
				     r->token, job, r->pw, r->pw_len);
	w->st.verify_busy_conn += rc == -EBUSY;
	w->st.verify_busy_source += rc == -EDQUOT;
	return rc;
}

/* lfe_auth's verified hook: the latency histogram, from the start of the
 * loop turn (worker.h): one TSC read a bind, not two. */
static void auth_verified(void *ctx, enum lfe_auth_path path)
{
	struct lfe_worker *w = ctx;
	lfe_lat_hist_add(&w->bind_lat[path == LFE_AUTH_PATH_CACHE ? LFE_LAT_CACHE : LFE_LAT_INLINE],
			 lfe_worker_tsc_ns(w, rte_rdtsc() - w->turn_tsc));
}

void lfe_glue_auth_init(struct lfe_worker *w)
{
	const struct lfe_auth_hooks hooks = { .submit = auth_submit, .verified = auth_verified, .ctx = w };
	lfe_auth_init(&w->auth, w->rd, w->thr, w->cc, &w->d->grace, w->d->pw_flags, &hooks, &w->st.auth);
}

void lfe_glue_bind_done(void *worker, const struct lfe_verify_result *r)
{
	struct lfe_worker *w = worker;
	struct lfe_tcp_conn *c = lfe_tcp_conn_get(w->tcp, r->h);
	uint64_t token = r->token;
	enum lfe_be_verdict v = r->v;
	struct lfe_slot *sl = c ? slot_of(c) : NULL;
	size_t ndn_len = 0;
	const char *ndn = sl && sl->s ? lfe_session_pending_dn(sl->s, &ndn_len) : NULL;
	unsigned ev;

	lfe_lat_hist_add(&w->bind_lat[LFE_LAT_OFFLOAD], (w->now_us - r->submit_us) * 1000u);
	v = lfe_auth_done(&w->auth, sl ? &sl->auth : NULL, v, &r->pp, r->pp_timed, ndn, ndn_len,
			  w->now_us, &ev);
	if (sl == NULL)
		return;   /* the connection went away while the hash ran */
	if (ev) {
		uint32_t laddr, raddr;
		uint16_t lport, rport;
		lfe_tcp_conn_addrs(c, &laddr, &lport, &raddr, &rport);
		log_auth_events(w, ev, raddr);
	}
	int rc = lfe_stream_bind_done(&sl->st, sl->s, token, v, w->out, sizeof w->out);
	if (rc < 0)
		return;   /* stale token, or the connection was reset */
	if (v == LFE_BE_OK && sl->s) {
		/* The session is bound to the DN that verified (token checked). */
		ndn = lfe_session_bound_dn(sl->s, &ndn_len);
		lfe_auth_done_bound(&w->auth, &sl->auth, ndn, ndn_len, time(NULL));
	}
	/* Input that arrived behind the bind was left unconsumed: offer it now
	 * (what the TLS stream holds first, then TCP's). */
	if (sl->st.tls) {
		unsigned flags;
		lfe_stream_resume(&sl->st, sl->s, w->out, sizeof w->out, &flags);
		if (sl->s == NULL || (flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE)))
			return;
		settle(w, c, sl, flags, true);
	}
	lfe_tcp_conn_kick(w->tcp, c, w->now_us);
}

void lfe_glue_bind_peek(struct lfe_worker *w, const struct lfe_tcp_seg *s, unsigned slot)
{
	struct lfe_bind_peek *pk = &w->peek[slot & 1];
	struct lfe_bytes dn, pw;

	pk->pw = NULL;
	/* No connection lookup: a key is only ever used for the very octets
	 * it was made from (peeked), which a segment of no connection, out of
	 * order, or of TLS (records are read into another buffer,
	 * lfe_tlsrec_read) never hands to a session. What a stranger's
	 * bind-shaped frame costs here is one SipHash, as its bind would. */
	if (s->len == 0 || lfe_ldap_peek_bind(s->payload, s->len, &dn, &pw) != 0)
		return;
	lfe_credcache_key(w->cc, (const char *)dn.p, dn.len, pw.p, pw.len, w->d->pw_flags, &pk->k);
	lfe_credcache_prefetch(w->cc, &pk->k);
	pk->dn = dn.p;
	pk->dn_len = dn.len;
	pk->pw = pw.p;
	pk->pw_len = pw.len;
}

/* The peeked key of exactly these octets (the same memory, in the burst
 * being handled), else NULL. */
static const struct lfe_credcache_key *peeked(const struct lfe_worker *w, const uint8_t *dn,
					      size_t dn_len, const uint8_t *pw, size_t pw_len)
{
	for (unsigned i = 0; i < 2; i++) {
		const struct lfe_bind_peek *pk = &w->peek[i];
		if (pk->pw && pk->pw == pw && pk->pw_len == pw_len && pk->dn == dn && pk->dn_len == dn_len)
			return &pk->k;
	}
	return NULL;
}

static enum lfe_be_verdict be_bind(void *ctx, uint64_t token, const char *ndn, size_t ndn_len,
				   const uint8_t *dn, size_t dn_len, const uint8_t *pw, size_t pw_len)
{
	struct lfe_slot *sl = ctx;   /* the connection's (sl->st.be_ctx) */
	struct lfe_worker *w = sl->w;
	uint32_t laddr, raddr = 0;
	uint16_t lport, rport;

	if (w->thr)   /* the throttle's source key */
		lfe_tcp_conn_addrs(sl->st.c, &laddr, &lport, &raddr, &rport);
	const struct lfe_auth_req r = {
		.ndn = ndn, .ndn_len = ndn_len, .dn = dn, .dn_len = dn_len, .pw = pw, .pw_len = pw_len,
		.src = raddr, .token = token, .now_us = w->now_us,
		.now_s = w->cc ? time(NULL) : 0,
		.peeked = w->bind_peek ? peeked(w, dn, dn_len, pw, pw_len) : NULL,   /* else none made */
		.conn = &sl->auth,
	};
	unsigned ev;
	enum lfe_be_verdict v = lfe_auth_bind(&w->auth, &r, &ev);
	if (__builtin_expect(ev != 0, 0)) {
		lfe_tcp_conn_addrs(sl->st.c, &laddr, &lport, &raddr, &rport);
		log_auth_events(w, ev, raddr);
	}
	return v;
}

/* The Password Policy response control of the bind just answered
 * (session.h's bind_controls). */
static ssize_t be_bind_controls(void *ctx, bool want, uint8_t *out, size_t cap, bool *must_change)
{
	const struct lfe_slot *sl = ctx;
	return lfe_auth_controls(&sl->w->auth, want, out, cap, must_change);
}

/* ---- search: directory logic in backend/search.c, under a budget ---- */

static uint64_t tsc_clock(void *ctx)
{
	(void)ctx;
	return rte_rdtsc();
}

_Static_assert(sizeof(struct lfe_search_cursor) <= LFE_BE_RESUME_SIZE,
	       "the session keeps the search's cursor");

static int be_search(void *ctx, const struct lfe_be_search *s, lfe_be_emit_fn emit, void *emit_ctx)
{
	struct lfe_worker *w = ((struct lfe_slot *)ctx)->w;
	const struct lfe_daemon *d = w->d;
	struct lfe_search_stats st;
	/* The server's size limit, where the client asks more or none: the
	 * backend ends the search with sizeLimitExceeded past it. */
	uint32_t lim = d->cfg.search_size_limit;
	const struct lfe_search_req *req = s->req;
	struct lfe_search_req capped;
	if (lim && (req->size_limit == 0 || (uint32_t)req->size_limit > lim)) {
		capped = *req;
		capped.size_limit = (int32_t)lim;
		req = &capped;
	}
	const struct lfe_search_params p = {
		.base_ndn = s->base_ndn,
		.base_ndn_len = s->base_ndn_len,
		.suffix = d->suffix,
		.suffix_len = strlen(d->suffix),
		.req = req,
		.max_candidates = d->cfg.search_max_candidates,
		.clock = tsc_clock,
		.deadline = rte_rdtsc() + d->cfg.request_slice_us * d->tsc_hz / 1000000u,
		.time_limit = (uint64_t)s->req->time_limit * d->tsc_hz,
		.cursor = s->resume_len >= sizeof(struct lfe_search_cursor) ? s->resume : NULL,
	};
	int rc = lfe_store_search(w->rd, &p, emit, emit_ctx, &st);

	if (!p.cursor || p.cursor->visited == st.visited)
		w->st.searches++;   /* counted once, at its first part */
	w->st.search_unindexed += st.unindexed;
	w->st.search_limited += st.limited;
	w->st.search_yielded += st.yielded;
	return rc;
}

const struct lfe_backend_ops lfe_glue_backend_ops = {
	.bind = be_bind,
	.search = be_search,
	.bind_controls = be_bind_controls,
};
