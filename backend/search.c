/* backend/search.c — see search.h. */
#include "backend/search.h"

#include <errno.h>
#include <string.h>

#include "ldap/dn.h"
#include "ldap/filter.h"
#include "backend/record.h"

struct walk {
	struct lfe_store_reader *r;
	const struct lfe_search_params *p;
	uint32_t max;
	lfe_search_emit_fn emit;
	void *emit_ctx;
	struct lfe_search_stats st;
	struct lfe_search_cursor *cur;  /* the caller's, or one for this call */
	uint64_t last;          /* clock when the current candidate began */
	uint64_t dearest;       /* longest candidate so far, clock units */
	uint64_t work;          /* filter work left for this call */
	uint32_t this_call;     /* candidates begun in this call */
	int rc;                 /* LDAP result once stopped early */
};

/* One candidate as the filter sees it. The evaluator asks for an
 * attribute's values window after window (filter.h); the view remembers where
 * the last window of the same item ended (`next`, `rest`), so walking an attribute of n
 * values costs O(n), not O(n^2 / window). */
struct fview {
	const struct lfe_entry_view *e;
	struct lfe_bytes type;          /* the item of the last window */
	uint32_t n, next;               /* its count, the next value's index */
	struct lfe_bytes rest;          /* its packed values from `next` on */
};

static uint32_t filter_attr(void *ctx, struct lfe_bytes type, uint32_t first,
			    struct lfe_bytes *vals, uint32_t cap)
{
	struct fview *f = ctx;
	struct lfe_bytes v;
	uint32_t i = 0;

	if (first == 0 || f->type.p != type.p || f->type.len != type.len || f->next != first) {
		f->type = (struct lfe_bytes){ NULL, 0 };
		if (lfe_record_find_attr(f->e->rec, f->e->rec_len, (const char *)type.p, type.len,
					 &f->n, &f->rest) != 1)
			return 0;
		f->type = type;
		for (f->next = 0; f->next < first && lfe_record_next_val(&f->rest, &v) == 1; f->next++)
			;
	}
	while (i < cap && lfe_record_next_val(&f->rest, &v) == 1)
		vals[i++] = v;
	f->next += i;
	return f->n;
}

static bool in_scope(const struct lfe_search_params *p, const char *ndn, size_t len)
{
	const char *parent;

	switch (p->req->scope) {
	case LFE_SCOPE_BASE:
		return len == p->base_ndn_len && memcmp(ndn, p->base_ndn, len) == 0;
	case LFE_SCOPE_ONE:
		return len != p->base_ndn_len && lfe_dn_parent(ndn, len, &parent) == p->base_ndn_len &&
		       memcmp(parent, p->base_ndn, p->base_ndn_len) == 0;
	case LFE_SCOPE_SUB:
		return lfe_dn_is_under(ndn, len, p->base_ndn, p->base_ndn_len);
	}
	return false;
}

static int stop(struct walk *x, int rc)
{
	x->rc = rc;
	return 1;
}

/* The per-call budget is spent: yield when the search can go on later,
 * else adminLimitExceeded. */
static int spent(struct walk *x)
{
	if (x->p->cursor) {
		x->st.yielded = 1;
		return stop(x, LFE_SEARCH_YIELD);
	}
	x->st.limited = 1;
	return stop(x, LFE_RC_ADMIN_LIMIT_EXCEEDED);
}

/* Charge one candidate to the budgets; 1 when the search stops here. The
 * clock is read before each candidate; a candidate is started only if the
 * dearest one so far would still end before the deadline, so one call holds
 * the worker about its slice, not its slice plus a candidate (the first
 * candidate of a call always runs: every call makes progress). */
static int over_budget(struct walk *x)
{
	const struct lfe_search_params *p = x->p;

	if (x->cur->visited >= x->max) {
		x->st.limited = 1;
		return stop(x, LFE_RC_ADMIN_LIMIT_EXCEEDED);
	}
	if (p->clock) {
		uint64_t now = p->clock(p->clock_ctx);
		if (p->time_limit && now - x->cur->started >= p->time_limit)
			return stop(x, LFE_RC_TIME_LIMIT_EXCEEDED);
		if (x->this_call > 0) {
			uint64_t cost = now - x->last;
			if (cost > x->dearest)
				x->dearest = cost;
			if (now >= p->deadline || p->deadline - now < x->dearest)
				return spent(x);
		}
		x->last = now;
	}
	x->this_call++;
	return 0;
}

/* A candidate is finished (skipped or emitted): a later call goes on after
 * it. */
static void done_with(struct walk *x, const char *ndn, size_t len)
{
	x->cur->visited++;
	x->st.visited++;
	if (len <= sizeof x->cur->after) {
		memcpy(x->cur->after, ndn, len);
		x->cur->after_len = (uint16_t)len;
	}
}

/* Evaluate one candidate and emit it if it matches. 0 to go on, 1 to stop
 * (x->rc set). */
static int consider(struct walk *x, const char *ndn, size_t len)
{
	const struct lfe_search_params *p = x->p;
	const struct lfe_search_req *req = p->req;
	struct lfe_entry_view e;

	if (over_budget(x))
		return 1;
	if (!in_scope(p, ndn, len) || lfe_store_get(x->r, ndn, len, &e) != 0) {
		done_with(x, ndn, len);
		return 0;
	}
	struct fview fv = { .e = &e };
	int f = lfe_filter_eval_budget(req->filter.p, req->filter.len, filter_attr, &fv, &x->work);
	if (f == -ETIME && x->this_call > 1)
		return spent(x);   /* this candidate again, with a fresh budget */
	if (f < 0) {
		x->st.limited = f == -ETIME;
		return stop(x, f == -E2BIG || f == -ETIME ? LFE_RC_ADMIN_LIMIT_EXCEEDED
							  : LFE_RC_PROTOCOL_ERROR);
	}
	if (f != LFE_FILTER_TRUE) {
		done_with(x, ndn, len);
		return 0;
	}
	if (req->size_limit > 0 && x->cur->emitted == (uint32_t)req->size_limit)
		return stop(x, LFE_RC_SIZE_LIMIT_EXCEEDED);
	struct lfe_ldap_entry src;
	lfe_entry_source(&e, &src);
	int rc = x->emit(x->emit_ctx, &src);
	if (rc > 0) {
		done_with(x, ndn, len);   /* withheld by the caller: not counted */
		return 0;
	}
	if (rc == -EAGAIN)
		return spent(x);   /* no room now: this entry first, next call */
	if (rc < 0)
		return stop(x, LFE_RC_ADMIN_LIMIT_EXCEEDED);
	x->cur->emitted++;
	x->st.emitted++;
	done_with(x, ndn, len);
	return 0;
}

static int index_cb(void *ctx, const char *ndn, size_t len)
{
	return consider(ctx, ndn, len);
}

/* The planner: of the filter's items an index can answer (the filter
 * itself, or the top level of an AND): equality on an equality index,
 * (attr=*) on a presence index, a substring piece of 3 characters or more
 * (or an initial or final one of any length) on a substring index, the one
 * whose list holds the fewest entries (counts the store keeps: one lookup
 * each; equality first, so presence or a substring key wins only when
 * strictly smaller). Every entry the filter matches is in each such list,
 * so any of them is complete; the smallest visits the fewest candidates,
 * and each candidate is evaluated with the whole filter (the other items
 * are checked per candidate: no intersection, see ARCHITECTURE.md). A
 * search resumed in a later call plans again and goes on after the last
 * DN finished: every list is in DN order, so a changed choice misses
 * nothing. */
#define PLAN_MAX_ITEMS 16
static int run(struct walk *x)
{
	const struct lfe_search_params *p = x->p;
	struct lfe_entry_view e;

	bool base_exists = lfe_store_get(x->r, p->base_ndn, p->base_ndn_len, &e) == 0;
	bool is_suffix = p->base_ndn_len == p->suffix_len &&
			 memcmp(p->base_ndn, p->suffix, p->suffix_len) == 0;
	if (!base_exists && !is_suffix)
		return LFE_RC_NO_SUCH_OBJECT;
	if (p->req->scope == LFE_SCOPE_BASE) {
		if (base_exists && x->cur->visited == 0)
			consider(x, p->base_ndn, p->base_ndn_len);
		return x->rc;
	}
	struct lfe_filter_item items[PLAN_MAX_ITEMS];
	int n = lfe_filter_plan_items(p->req->filter.p, p->req->filter.len, items,
				      PLAN_MAX_ITEMS);
	if (n < 0)
		return LFE_RC_PROTOCOL_ERROR;
	char name[LFE_STORE_INDEX_NAME_MAX], best_name[LFE_STORE_INDEX_NAME_MAX];
	uint8_t key[LFE_STORE_SUBKEY_MAX], best_key[LFE_STORE_SUBKEY_MAX];
	size_t best_klen = 0;
	int best = -1;
	unsigned best_kind = 0;
	uint64_t best_n = 0;
	for (int pass = 0; pass < 2 && !(best >= 0 && best_n == 0); pass++) {
		for (int i = 0; i < n; i++) {
			const struct lfe_filter_item *it = &items[i];
			uint64_t cnt = 0;
			size_t klen = 0;
			unsigned kind;
			int rc;

			if ((pass == 0) != (it->kind == LFE_FITEM_EQ) ||
			    it->type.len >= sizeof(name))
				continue;
			memcpy(name, it->type.p, it->type.len);
			name[it->type.len] = '\0';
			if (it->kind == LFE_FITEM_EQ) {
				kind = LFE_INDEX_EQ;
				rc = lfe_store_index_count(x->r, name, it->value.p, it->value.len,
							   &cnt);
			} else if (it->kind == LFE_FITEM_PRES) {
				kind = LFE_INDEX_PRES;
				klen = lfe_store_index_pres_key(key);
				rc = lfe_store_index_count_key(x->r, name, kind, key, klen, &cnt);
			} else {
				struct lfe_bytes subs = it->subs, piece;
				uint8_t k[LFE_STORE_SUBKEY_MAX];
				size_t kl;
				uint64_t c;
				int where;
				kind = LFE_INDEX_SUB;
				rc = 1;
				while (rc != -ENOTSUP && rc >= 0 &&
				       lfe_filter_sub_next(&subs, &where, &piece) == 1) {
					int pr = lfe_store_index_sub_pick(x->r, name, where, piece.p,
									  piece.len, k, &kl, &c);
					if (pr < 0) {
						rc = pr;
					} else if (pr == 0 && (rc == 1 || c < cnt)) {
						memcpy(key, k, kl);
						klen = kl;
						cnt = c;
						rc = 0;
					}
				}
				if (rc == 1)
					continue;   /* no piece long enough */
			}
			if (rc == -ENOTSUP)
				continue;
			if (rc < 0)
				return LFE_RC_OTHER;
			if (best < 0 || cnt < best_n) {
				best = i;
				best_n = cnt;
				best_kind = kind;
				memcpy(best_name, name, it->type.len + 1);
				memcpy(best_key, key, klen);
				best_klen = klen;
			}
			if (cnt == 0)
				break;
		}
	}
	x->st.planned_count = best_n;
	if (best >= 0) {
		int rc = best_kind == LFE_INDEX_EQ ?
			 lfe_store_index_each_after(x->r, best_name, items[best].value.p,
						    items[best].value.len, x->cur->after,
						    x->cur->after_len, index_cb, x) :
			 lfe_store_index_each_key_after(x->r, best_name, best_kind, best_key,
							best_klen, x->cur->after,
							x->cur->after_len, index_cb, x);
		if (rc < 0 && rc != -ENOENT)
			return LFE_RC_OTHER;
		return x->rc;
	}
	x->st.unindexed = 1;
	return LFE_RC_UNWILLING_TO_PERFORM;
}

int lfe_store_search(struct lfe_store_reader *r, const struct lfe_search_params *p,
		     lfe_search_emit_fn emit, void *emit_ctx, struct lfe_search_stats *stats)
{
	struct lfe_search_cursor once;
	struct walk x = { .r = r, .p = p, .emit = emit, .emit_ctx = emit_ctx, .rc = LFE_RC_SUCCESS,
			  .max = p->max_candidates ? p->max_candidates : LFE_SEARCH_DEFAULT_CANDIDATES,
			  .work = p->max_work ? p->max_work : LFE_SEARCH_DEFAULT_WORK,
			  .cur = p->cursor };

	if (!x.cur) {
		once.visited = once.emitted = 0;
		once.after_len = 0;
		once.begun = 0;
		x.cur = &once;
	}
	if (!x.cur->begun) {
		x.cur->begun = 1;
		x.cur->started = p->clock ? p->clock(p->clock_ctx) : 0;
	}
	int rc = run(&x);

	if (stats)
		*stats = x.st;
	return rc;
}
