/* ldap/session_search.c — a session's searches: which attributes an entry
 * carries (the request's selection under the search policy), the filter
 * checked once more on the policy's view of each entry, the root DSE,
 * paged results (RFC 2696), and a search that yields and goes on in later
 * calls (s->run). The session's other parts: session_int.h.
 *
 * Behaviour decided here (session.c's header says the rest):
 *  - Root DSE: a base-scope search of the empty DN whose filter is TRUE for
 *    the DSE. Its attributes are operational (RFC 4512 §5.1) and are returned
 *    for "+" or by name; like 389-ds and Active Directory they are also
 *    returned for an empty list and "*", because discovery tools
 *    (`ldapsearch -b "" -s base`) rarely ask for "+". supportedControl lists
 *    the Password Policy control when the backend answers it
 *    (ops->bind_controls, binds only); no other control is honoured (a
 *    critical one gets unavailableCriticalExtension). supportedSASLMechanisms
 *    is omitted: SASL is not offered.
 *  - Search entries never carry userPassword or authPassword (by name or
 *    OID, with any option), whatever is requested: an authentication front
 *    end must not disclose hashes. Each entry a backend emits is checked
 *    against the filter once more on the policy's view of it (secrets and
 *    attributes outside search_attrs Undefined), so a backend that matched
 *    on a secret cannot leak it through the result set either.
 *  - The search access policy: session.h, struct lfe_search_policy.
 */
#include "ldap/session.h"

#include "ldap/ber.h"
#include "ldap/dn.h"
#include "ldap/filter.h"
#include "ldap/session_int.h"

#define OID_ALL_OPATTRS "1.3.6.1.4.1.4203.1.5.1"   /* RFC 3673 "+" */

/* ------------------------------------------------- attribute selection */

struct attr_sel {
	bool all_user, all_oper, types_only, dse;
	uint32_t n;
	const struct lfe_search_policy *pol;   /* NULL for the root DSE */
	struct lfe_bytes name[LFE_LDAP_MAX_ATTRS];   /* requested, into the PDU */
};

static bool name_is(const char *name, size_t len, const char *lit)
{
	size_t l = strlen(lit);
	return len == l && memcmp(name, lit, l) == 0;
}

/* Operational attributes an entry may carry (RFC 4512, 3045, 4530, 5020 and
 * the common password-policy ones): returned for "+" or by name only. */
static bool attr_operational(struct lfe_bytes type)
{
	static const char *const oper[] = {
		"createtimestamp", "modifytimestamp", "creatorsname", "modifiersname",
		"entryuuid", "entrydn", "entrycsn", "structuralobjectclass",
		"subschemasubentry", "hassubordinates", "numsubordinates",
		"pwdchangedtime", "pwdaccountlockedtime", "pwdfailuretime",
		"pwdhistory", "pwdpolicysubentry", "nsuniqueid",
	};
	char n[LFE_ATTR_NAME_MAX];
	ssize_t l = lfe_attr_canon(type.p, lfe_attr_base_len(type.p, type.len), n, sizeof n);
	if (l <= 0)
		return false;
	for (size_t i = 0; i < sizeof oper / sizeof oper[0]; i++)
		if (name_is(n, (size_t)l, oper[i]))
			return true;
	return false;
}

/* May this search see the attribute at all (return it, test it)? Secrets
 * never; with a policy list, only its types and their subtypes. */
static bool policy_allows(const struct lfe_search_policy *pol, struct lfe_bytes type)
{
	if (lfe_attr_is_secret(type.p, type.len))
		return false;
	if (!pol || pol->n_attrs == 0)
		return true;
	for (uint32_t i = 0; i < pol->n_attrs; i++)
		if (lfe_attr_desc_matches((const uint8_t *)pol->attrs[i], strlen(pol->attrs[i]),
					  type.p, type.len))
			return true;
	return false;
}

static void sel_init(struct attr_sel *sel, const struct lfe_search_req *req,
		     const struct lfe_search_policy *pol)
{
	memset(sel, 0, offsetof(struct attr_sel, name));
	sel->types_only = req->types_only;
	sel->dse = pol == NULL;
	sel->pol = pol;
	if (req->n_attrs == 0) {
		sel->all_user = true;
		return;
	}
	for (uint32_t i = 0; i < req->n_attrs && i < LFE_LDAP_MAX_ATTRS; i++) {
		const struct lfe_bytes *a = &req->attrs[i];
		if (a->len == 1 && a->p[0] == '*') {
			sel->all_user = true;
			continue;
		}
		if (a->len == 1 && a->p[0] == '+') {
			sel->all_oper = true;
			continue;
		}
		/* "1.1" alone selects nothing; beside other names it is ignored. */
		if (a->len == 3 && memcmp(a->p, "1.1", 3) == 0)
			continue;
		if (a->len)
			sel->name[sel->n++] = *a;
	}
}

static bool sel_wants(const struct attr_sel *sel, struct lfe_bytes type)
{
	if (!sel->dse) {
		if (!policy_allows(sel->pol, type))
			return false;
		if (attr_operational(type) ? sel->all_oper : sel->all_user)
			return true;
	} else if (sel->all_user || sel->all_oper) {
		return true;
	}
	/* A requested type returns its subtypes too (RFC 4512 §2.5.2). */
	for (uint32_t i = 0; i < sel->n; i++)
		if (lfe_attr_desc_matches(sel->name[i].p, sel->name[i].len, type.p, type.len))
			return true;
	return false;
}

/* ------------------------------------------------------------- entries */

/* One entry as the session's filter check sees it: the attributes the
 * backend emitted, less what the policy hides. Windows of one attribute's
 * values are handed out in order (filter.h): `rest` goes on where the last
 * one ended. */
struct entry_view {
	const struct lfe_ldap_entry *e;
	const struct lfe_search_policy *pol;
	struct lfe_bytes type;          /* the item of the last window */
	uint32_t n, next;
	struct lfe_bytes rest;
};

static uint32_t view_get(void *ctx, struct lfe_bytes type, uint32_t first, struct lfe_bytes *vals,
			 uint32_t cap)
{
	struct entry_view *v = ctx;
	const struct lfe_ldap_entry *e = v->e;
	struct lfe_bytes t, x;
	uint32_t i = 0;

	if (!policy_allows(v->pol, type))
		return LFE_FILTER_HIDDEN;
	if (first == 0 || v->type.p != type.p || v->type.len != type.len || v->next != first) {
		size_t cur = 0;
		int rc;
		v->type = (struct lfe_bytes){ NULL, 0 };
		while ((rc = e->next_attr(e, &cur, &t, &v->n, &v->rest)) == 1)
			if (lfe_attr_type_eq(t.p, t.len, type.p, type.len))
				break;
		if (rc != 1)
			return 0;
		v->type = type;
		for (v->next = 0; v->next < first && e->next_val(e, &v->rest, &x) == 1; v->next++)
			;
	}
	while (i < cap && e->next_val(e, &v->rest, &x) == 1)
		vals[i++] = x;
	v->next += i;
	return v->n;
}

enum search_stop { SS_NONE, SS_SIZE, SS_ROOM, SS_BIG, SS_CORRUPT, SS_ERR, SS_PAGE };

/* Parts are begun only with this much room, so they are not tiny. */
#define PART_MIN 1024u

struct search_ctx {
	struct lfe_session_io *io;
	const struct attr_sel *sel;
	const struct lfe_search_req *req;
	int32_t msgid;
	int32_t size_limit;
	uint32_t n_entries;       /* over the whole search (all its calls) */
	struct entry_part *part;  /* the entry under way in parts (off 0: none) */
	enum search_stop stop;
	int err;
	uint32_t page_size;       /* paged results: entries in this page (0: not paged) */
	uint64_t req_hash;        /* paged: the request's identity (page_hash) */
	struct search_run *park;  /* paged, first call: the parked search its
	                           * cookie named, out of s->run's list (its
	                           * allocation parks the next page); NULL: none */
};

static bool sel_wants_cb(const void *ctx, struct lfe_bytes type)
{
	return sel_wants(ctx, type);
}

/* The most room the caller ever offers this connection. */
static size_t room_max(const struct lfe_session_io *io)
{
	return io->out_max ? io->out_max : io->out_cap;
}

/* The backend's emit: 0 sent, 1 withheld (not counted), -EAGAIN no room
 * now (the search yields and this entry comes first next time), another
 * negative errno to stop (c->stop says why). */
static int search_emit(void *vctx, const struct lfe_ldap_entry *e)
{
	struct search_ctx *c = vctx;
	struct lfe_session_io *io = c->io;

	if (c->stop != SS_NONE)
		return -ECANCELED;
	/* The filter once more, on the policy's view of the entry: items on
	 * secret or hidden attributes are Undefined here whatever the backend
	 * saw, so no backend can leak them through matching. Three-valued
	 * logic only turns TRUE into UNDEFINED when items become Undefined, so
	 * this never adds an entry the backend did not find. */
	if (!c->sel->dse && c->part->off == 0) {
		struct entry_view v = { .e = e, .pol = c->sel->pol };
		if (lfe_filter_eval(c->req->filter.p, c->req->filter.len, view_get, &v) !=
		    LFE_FILTER_TRUE)
			return 1;
	}
	if (c->part->off == 0 && c->size_limit > 0 && c->n_entries >= (uint32_t)c->size_limit) {
		c->stop = SS_SIZE;
		return -EOVERFLOW;
	}
	if (c->part->off == 0 && c->page_size > 0 && c->n_entries >= c->page_size) {
		/* The page is full: this entry comes first in the next one. */
		c->stop = SS_PAGE;
		return -EAGAIN;
	}
	/* Selection first (sel_wants), then the size of what is left; room
	 * for SearchResultDone is kept whatever the entries do. */
	const struct lfe_ldap_entry_sel es = { sel_wants_cb, c->sel, c->sel->types_only };
	uint64_t total = 0;
	ssize_t n = lfe_ldap_enc_entry(NULL, 0, 0, c->msgid, e, &es, &total, NULL);
	if (n == -EBADMSG) {
		c->stop = SS_CORRUPT;
		return -EBADMSG;
	}
	if (n == -EMSGSIZE) {
		c->stop = SS_BIG;
		return -E2BIG;
	}
	if (n < 0) {
		c->stop = SS_ERR;
		c->err = (int)n;
		return (int)n;
	}
	size_t avail = room(io) > RESULT_RESERVE ? room(io) - RESULT_RESERVE : 0;
	struct entry_part *pt = c->part;
	if (pt->off == 0 && total <= avail) {
		n = lfe_ldap_enc_entry(io->out + io->out_len, avail, 0, c->msgid, e, &es, &total,
				       NULL);
		if (n < 0 || (uint64_t)n != total) {
			c->stop = n == -EBADMSG ? SS_CORRUPT : SS_ERR;
			c->err = n < 0 ? (int)n : -EIO;
			return c->err;
		}
		io->out_len += (size_t)n;
		c->n_entries++;
		return 0;
	}
	/* Whole when an empty queue will take it: wait for that. Else in
	 * parts (the session goes on with the same search only). */
	if (pt->off == 0 && (total + RESULT_RESERVE <= room_max(io) || avail < PART_MIN))
		return -EAGAIN;
	if (avail == 0)
		return -EAGAIN;
	uint64_t sum = 0, had = pt->total;
	n = lfe_ldap_enc_entry(io->out + io->out_len, avail, pt->off, c->msgid, e, &es, &total, &sum);
	if (n < 0 || n == 0) {
		c->stop = n == -EBADMSG ? SS_CORRUPT : SS_ERR;
		c->err = n < 0 ? (int)n : -EIO;
		return c->err;
	}
	if (pt->off > 0 && (total != had || sum != pt->sum)) {
		c->stop = SS_ERR;   /* another entry than the parts sent: reset */
		c->err = -ESTALE;
		return c->err;
	}
	io->out_len += (size_t)n;
	pt->off += (uint64_t)n;
	pt->total = total;
	pt->sum = sum;
	if (pt->off < total)
		return -EAGAIN;   /* the next part when the queue drains */
	*pt = (struct entry_part){ 0, 0, 0 };
	c->n_entries++;
	return 0;
}

/* ------------------------------------------------------------ root DSE */

/* The root DSE, built from the configuration on each request. */
struct dse {
	struct lfe_ldap_attr a[9];
	struct lfe_bytes v[9];
	struct lfe_bytes ext[2];   /* supportedExtension's values */
	struct lfe_bytes ctl[N_CTL];   /* supportedControl's: session.c's ctl_table */
	uint32_t n;
};

static void dse_add(struct dse *d, const char *type, const char *val)
{
	d->v[d->n] = (struct lfe_bytes){ (const uint8_t *)val, strlen(val) };
	d->a[d->n] = (struct lfe_ldap_attr){
		.type = { (const uint8_t *)type, strlen(type) },
		.n_vals = 1,
		.vals = &d->v[d->n],
	};
	d->n++;
}

static void dse_build(struct dse *d, const struct lfe_session_cfg *cfg)
{
	d->n = 0;
	dse_add(d, "objectClass", "top");
	if (cfg->naming_context && cfg->naming_context[0])
		dse_add(d, "namingContexts", cfg->naming_context);
	dse_add(d, "supportedLDAPVersion", "3");
	dse_add(d, "supportedExtension", OID_WHOAMI);
	if (cfg->starttls) {
		d->ext[0] = d->v[d->n - 1];
		d->ext[1] = (struct lfe_bytes){ (const uint8_t *)OID_STARTTLS,
						sizeof OID_STARTTLS - 1 };
		d->a[d->n - 1].vals = d->ext;
		d->a[d->n - 1].n_vals = 2;
	}
	uint32_t nc = lfe_session_ctl_oids(cfg, d->ctl);
	dse_add(d, "supportedControl", OID_PAGED);
	d->a[d->n - 1].vals = d->ctl;
	d->a[d->n - 1].n_vals = nc;
	dse_add(d, "supportedFeatures", OID_ALL_OPATTRS);
	dse_add(d, "vendorName", cfg->vendor_name ? cfg->vendor_name : "ldapfe");
	if (cfg->vendor_version)
		dse_add(d, "vendorVersion", cfg->vendor_version);
}

static uint32_t dse_get(void *ctx, struct lfe_bytes type, uint32_t first, struct lfe_bytes *vals,
			uint32_t cap)
{
	const struct dse *d = ctx;

	for (uint32_t i = 0; i < d->n; i++) {
		if (!lfe_attr_type_eq(d->a[i].type.p, d->a[i].type.len, type.p, type.len))
			continue;
		for (uint32_t k = 0; first + k < d->a[i].n_vals && k < cap; k++)
			vals[k] = d->a[i].vals[first + k];
		return d->a[i].n_vals;
	}
	return 0;
}

/* ---- paged results (RFC 2696) ----
 * Up to PAGED_MAX (4) paged searches are open per connection, each found
 * by its cookie: a client that shares one connection among concurrent
 * requests (SSSD's sssd_be runs enumerations and lookups over one) pages
 * through several at once. Between pages each is parked in s->run's list
 * (struct search_run marked parked: the backend's place after the last
 * page, the request's identity and the cookie; never resumed), behind the
 * search under way if there is one: a search that yields, paged or not,
 * leaves them be. The list keeps the most recently used first: a new
 * paged search whose first page fills while PAGED_MAX are parked takes
 * the place (and the allocation) of the least recently used one, whose
 * cookie then gets unwillingToPerform (53) like any expired one. Evicted
 * rather than refused: a client that abandons paged searches without
 * size 0 (ldapsearch stopped, a request timed out) must not lock itself
 * out of paging for the connection's life, which refusing new ones would
 * do; the search left untouched longest is the one most likely abandoned,
 * and its client can start it again. Four covers SSSD's concurrent
 * requests of a domain; each costs one buffer of the session's allocator
 * (the worker's pool), so one connection holds at most PAGED_MAX + 1 of
 * them for searches (+ 1 while a PDU is gathered) while the allocator has
 * buffers to spare (alloc.spare), and one parked search, as it always
 * could, once it has not: then a new paged search takes the place of the
 * connection's least recently used one. No buffer to park a
 * page in: the page ends with adminLimitExceeded (11), no cookie. A cookie
 * is 8 bytes: valid only on this connection, for the request that got it
 * (the same base, scope, filter, attributes; else 53, and the parked
 * search stays), and only for the next page. A page asked for after the
 * store changed goes on after the last entry sent, in DN order, in the
 * snapshot current then: every entry present and unchanged throughout is
 * returned exactly once; one added, changed or deleted meanwhile appears
 * as that snapshot has it (if it sorts after the place reached). A size
 * of 0 with a cookie ends that paged search; the connection's end ends
 * all (run_free). */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return (h ^ n) * 0x100000001b3ull;
}

static uint64_t page_hash(const struct lfe_search_req *r)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint8_t sc[4] = { (uint8_t)r->scope, r->deref, (uint8_t)r->types_only, 0 };

	h = fnv(h, r->base.p, r->base.len);
	h = fnv(h, sc, sizeof sc);
	h = fnv(h, r->filter.p, r->filter.len);
	for (uint32_t i = 0; i < r->n_attrs; i++)
		h = fnv(h, r->attrs[i].p, r->attrs[i].len);
	return h;
}

/* The link (in s->run's list) to the parked search with this cookie, or
 * NULL. */
static struct search_run **park_find(struct lfe_session *s, uint64_t cookie)
{
	for (struct search_run **l = &s->run; *l; l = &(*l)->next)
		if ((*l)->parked && (*l)->cookie == cookie)
			return l;
	return NULL;
}

/* Parked searches in s->run's list, and the link to the last (least
 * recently used) one in *lru. */
static unsigned park_count(struct lfe_session *s, struct search_run ***lru)
{
	unsigned n = 0;
	*lru = NULL;
	for (struct search_run **l = &s->run; *l; l = &(*l)->next)
		if ((*l)->parked) {
			n++;
			*lru = l;
		}
	return n;
}

/* Put r (out of the list) back as the most recently used parked search:
 * behind the search under way, if any. */
static void park_link(struct lfe_session *s, struct search_run *r)
{
	struct search_run **l = run_active(s) ? &s->run->next : &s->run;
	r->parked = true;
	r->next = *l;
	*l = r;
}

/* The paged-results control of m: 1 with *size and *cookie, 0 when none,
 * -EBADMSG when its value is malformed. */
static int paged_control(const struct lfe_ldap_msg *m, uint32_t *size, struct lfe_bytes *cookie)
{
	for (uint32_t i = 0; i < m->n_controls; i++) {
		const struct lfe_ldap_control *ctl = &m->controls[i];
		if (!oid_is(ctl->oid, OID_PAGED))
			continue;
		struct lfe_ber b, q;
		int64_t sz;
		if (!ctl->has_value)
			return -EBADMSG;
		lfe_ber_init(&b, ctl->value.p, ctl->value.len);
		if (!lfe_ber_enter(&b, LFE_BER_SEQUENCE, &q) ||
		    !lfe_ber_int(&q, LFE_BER_INTEGER, 0, INT32_MAX, &sz) ||
		    !lfe_ber_octets(&q, LFE_BER_OCTETS, cookie) || !lfe_ber_done(&q) ||
		    !lfe_ber_done(&b))
			return -EBADMSG;
		*size = (uint32_t)sz;
		return 1;
	}
	return 0;
}

/* SearchResultDone with the paged-results response control (size 0:
 * unknown; cookie of clen bytes, empty at the end). */
static int done_paged(struct lfe_session_io *io, int32_t msgid, enum lfe_ldap_rc rc,
		      const char *diag, const uint8_t *cookie, size_t clen)
{
	struct lfe_ldap_result r = {
		.code = rc, .diag = { (const uint8_t *)diag, diag ? strlen(diag) : 0 },
	};
	uint8_t res[512], ctl[96];
	ssize_t n = lfe_ldap_enc_result(res, sizeof res, msgid, LFE_OP_SEARCH_DONE, &r);
	uint8_t tag;
	size_t hl, cl;
	struct lfe_berw w;

	if (n < 0 || lfe_ber_hdr(res, (size_t)n, &tag, &hl, &cl) < 0)
		return n < 0 ? (int)n : -EIO;
	lfe_berw_init(&w, ctl, sizeof ctl);
	size_t m0 = lfe_berw_mark(&w);
	size_t m1 = lfe_berw_mark(&w);
	lfe_berw_octets(&w, LFE_BER_OCTETS, cookie, clen);
	lfe_berw_int(&w, LFE_BER_INTEGER, 0);
	lfe_berw_wrap(&w, LFE_BER_SEQUENCE, m1);
	lfe_berw_wrap(&w, LFE_BER_OCTETS, m1);
	lfe_berw_octets(&w, LFE_BER_OCTETS, OID_PAGED, sizeof OID_PAGED - 1);
	lfe_berw_wrap(&w, LFE_BER_SEQUENCE, m0);
	lfe_berw_wrap(&w, 0xa0, m0);                /* controls [0] */
	ssize_t ctl_len = lfe_berw_finish(&w);
	if (ctl_len < 0)
		return (int)ctl_len;
	/* LDAPMessage: the result's content, then the controls. */
	size_t body = (size_t)n - hl + (size_t)ctl_len;
	uint8_t *o = io->out + io->out_len;
	size_t need = 1 + (body < 128 ? 1 : body < 256 ? 2 : 3) + body;
	if (room(io) < need)
		return H_STOP;
	size_t k = 0;
	o[k++] = 0x30;
	if (body < 128) {
		o[k++] = (uint8_t)body;
	} else if (body < 256) {
		o[k++] = 0x81;
		o[k++] = (uint8_t)body;
	} else {
		o[k++] = 0x82;
		o[k++] = (uint8_t)(body >> 8);
		o[k++] = (uint8_t)body;
	}
	memcpy(o + k, res + hl, (size_t)n - hl);
	k += (size_t)n - hl;
	memcpy(o + k, ctl, (size_t)ctl_len);
	io->out_len += k + (size_t)ctl_len;
	return H_DONE;
}

static int search_done(struct lfe_session_io *io, struct search_ctx *c,
		       enum lfe_ldap_rc rc, const char *diag)
{
	if (c->page_size)
		return done_paged(io, c->msgid, rc, diag, NULL, 0);
	return reply(io, c->msgid, LFE_OP_SEARCH_DONE, rc, diag);
}

/* -------------------------------------------------------------- search */

/* Run the backend's search (its first part, or the next one) and answer
 * what it ended with. H_DONE (SearchResultDone written), H_YIELD (goes on
 * later: io->flags says when), or a negative errno. */
static int search_step(struct lfe_session *s, struct lfe_session_io *io, struct search_ctx *c,
		       const char *base, size_t base_len, void *resume)
{
	const struct lfe_session_cfg *cfg = s->cfg;
	struct lfe_be_search bs = {
		.base_ndn = base, .base_ndn_len = base_len, .req = c->req,
		.resume = resume, .resume_len = LFE_BE_RESUME_SIZE,
	};
	int rc = cfg->be->search(be_ctx(s, io), &bs, search_emit, c);
	const char *diag = NULL;

	if (c->part->off > 0 && (rc != -EAGAIN || c->stop != SS_NONE))
		return -ESTALE;   /* the entry went away between its parts: reset */
	if (c->stop == SS_PAGE && rc == -EAGAIN) {
		/* A full page: park the backend's place for the next one: the
		 * run under way becomes parked, else the allocation of the
		 * search the cookie named, else a new one (the least recently
		 * used one's when PAGED_MAX are parked). */
		if (room(io) < RESULT_RESERVE)
			return H_STOP;
		struct search_run *r = run_active(s) ? s->run : c->park, **lru;
		unsigned n = park_count(s, &lru);
		/* Under pressure on the allocator, one parked search per
		 * connection, as before there were several: the new one takes
		 * the older one's place. */
		unsigned cap = buf_spare(s) ? PAGED_MAX : 1;
		if (!r && n >= cap) {
			r = *lru;
			*lru = r->next;
			size_t pl = r->pdu_len;
			explicit_bzero(r, sizeof *r + pl);
			r->pdu_len = pl;   /* the allocation's size, for its wipe */
		} else if (!r) {
			r = buf_get(s, sizeof *r);
			if (!r)
				return done_paged(io, c->msgid, LFE_RC_ADMIN_LIMIT_EXCEEDED,
						  "no memory to keep the paged search", NULL, 0);
			memset(r, 0, sizeof *r);
		}
		if (r == c->park)
			c->park = NULL;
		if ((void *)r->resume != resume)
			memcpy(r->resume, resume, sizeof r->resume);
		r->req_hash = c->req_hash;
		uint64_t ck = fnv(c->req_hash ^ (uint64_t)(uint32_t)c->msgid, r->resume,
				  sizeof r->resume);
		while (ck == 0 || park_find(s, ck))
			ck++;   /* each parked search its own cookie */
		r->cookie = ck;
		if (r == s->run) {
			/* The run under way, parked in place: the list's head. */
			r->parked = true;
			if (n >= cap) {
				r = *lru;
				*lru = r->next;
				run_put(s, r);
			}
		} else {
			park_link(s, r);
		}
		uint8_t cb[8];
		memcpy(cb, &ck, 8);
		return done_paged(io, c->msgid, LFE_RC_SUCCESS, NULL, cb, sizeof cb);
	}
	if (rc == -EAGAIN && c->stop == SS_NONE) {
		/* Out of room (the queue drains, then on): no flag; or out of
		 * its slice with room left: on the next turn. */
		if (room(io) >= RESULT_RESERVE + 64u)
			io->flags |= LFE_SESS_MORE;
		return H_YIELD;
	}
	switch (c->stop) {
	case SS_NONE:
	case SS_ROOM:
	case SS_PAGE:
		break;
	case SS_SIZE:
		rc = LFE_RC_SIZE_LIMIT_EXCEEDED;
		break;
	case SS_BIG:
		rc = LFE_RC_ADMIN_LIMIT_EXCEEDED;
		diag = "entry too large to encode";
		break;
	case SS_CORRUPT:
		rc = LFE_RC_OTHER;
		diag = "corrupt entry in the store";
		break;
	case SS_ERR:
		return c->err;
	}
	if (rc < 0 || rc > 127) {
		rc = LFE_RC_OTHER;
		diag = "internal error";
	}
	return search_done(io, c, (enum lfe_ldap_rc)rc, diag);
}

/* Who/where refusals of the policy (session.h): a diagnostic, or NULL
 * when the search may run. */
static const char *search_refusal(const struct lfe_session *s, const struct lfe_search_req *req,
				  const char *base, size_t base_len)
{
	const struct lfe_session_cfg *cfg = s->cfg;
	const struct lfe_search_policy *p = &cfg->search;
	enum lfe_search_access acc = p->access;

	if (acc == LFE_SEARCH_ACCESS_DEFAULT)
		acc = cfg->allow_anonymous ? LFE_SEARCH_ACCESS_ANONYMOUS : LFE_SEARCH_ACCESS_BOUND;
	if (acc == LFE_SEARCH_ACCESS_NONE)
		return "searching is disabled here";
	if (!s->bound && (acc != LFE_SEARCH_ACCESS_ANONYMOUS || !cfg->allow_anonymous))
		return "anonymous search is disabled; bind first";
	if (p->base && !lfe_dn_is_under(base, base_len, p->base, p->base_len))
		return "search base outside the searchable subtree";
	if ((p->max_scope == LFE_SEARCH_SCOPE_BASE && req->scope != LFE_SCOPE_BASE) ||
	    (p->max_scope == LFE_SEARCH_SCOPE_ONE && req->scope == LFE_SCOPE_SUB))
		return "search scope wider than allowed";
	return NULL;
}

/* session_int.h. Never inlined into handle_pdu (noinline for a build with
 * LTO): its frame (the backend's resume area) stays off the bind path's. */
__attribute__((noinline)) int lfe_session_search(struct lfe_session *s, struct lfe_session_io *io,
						 const struct lfe_ldap_msg *m, const uint8_t *pdu,
						 size_t plen)
{
	const struct lfe_search_req *req = &m->u.search;
	const struct lfe_session_cfg *cfg = s->cfg;
	char base[LFE_DN_MAX + 1];
	struct attr_sel sel;
	struct entry_part part = { 0, 0, 0 };
	struct search_ctx c = {
		.io = io, .sel = &sel, .req = req, .msgid = m->msgid,
		.size_limit = req->size_limit, .part = &part,
	};

	if (room(io) < RESULT_RESERVE)
		return H_STOP;
	ssize_t bl = lfe_dn_normalize(req->base.p, req->base.len, base, sizeof base);
	if (bl < 0)
		return search_done(io, &c, LFE_RC_INVALID_DN_SYNTAX, "invalid base DN");

	if (bl == 0 && req->scope == LFE_SCOPE_BASE) {
		struct dse d;
		struct lfe_ldap_entry e;
		dse_build(&d, cfg);
		sel_init(&sel, req, NULL);
		int f = lfe_filter_eval(req->filter.p, req->filter.len, dse_get, &d);
		if (f < 0)
			return search_done(io, &c, LFE_RC_PROTOCOL_ERROR, "malformed filter");
		lfe_ldap_entry_of_attrs(&e, (struct lfe_bytes){ (const uint8_t *)"", 0 }, d.a, d.n);
		if (f == LFE_FILTER_TRUE && search_emit(&c, &e) == -EAGAIN) {
			/* The DSE is small: only a call's earlier answers can
			 * leave too little room; this one waits unconsumed. */
			return H_STOP;
		}
		if (c.stop == SS_ERR)
			return c.err;
		return search_done(io, &c, LFE_RC_SUCCESS, NULL);
	}
	const char *why = search_refusal(s, req, base, (size_t)bl);
	if (why)
		return search_done(io, &c, LFE_RC_INSUFFICIENT_ACCESS_RIGHTS, why);
	if (!cfg->be || !cfg->be->search)
		return search_done(io, &c, LFE_RC_UNWILLING_TO_PERFORM,
				   "search is not supported here");
	sel_init(&sel, req, &cfg->search);
	/* The backend's place starts zeroed; it moves to s->run only when the
	 * search yields (most end in their first call). */
	uint64_t resume[(LFE_BE_RESUME_SIZE + 7) / 8];
	memset(resume, 0, sizeof resume);
	uint32_t psize = 0;
	struct lfe_bytes cookie = { NULL, 0 };
	int pc = paged_control(m, &psize, &cookie);
	if (pc < 0)
		return search_done(io, &c, LFE_RC_PROTOCOL_ERROR, "malformed paged results control");
	if (pc > 0) {
		c.req_hash = page_hash(req);
		if (cookie.len > 0) {
			uint64_t ck = 0;
			struct search_run **l = NULL;
			if (cookie.len == 8) {
				memcpy(&ck, cookie.p, 8);
				l = park_find(s, ck);
			}
			if (!l || (*l)->req_hash != c.req_hash) {
				return done_paged(io, m->msgid, LFE_RC_UNWILLING_TO_PERFORM,
						  "paged results cookie is invalid or expired", NULL, 0);
			}
			struct search_run *p = *l;
			*l = p->next;   /* out of the list while this call runs */
			p->next = NULL;
			if (psize == 0) {   /* the client ends it */
				run_put(s, p);
				return done_paged(io, m->msgid, LFE_RC_SUCCESS, NULL, NULL, 0);
			}
			memcpy(resume, p->resume, sizeof resume);
			c.park = p;     /* this call goes on from the copy */
		} else if (psize == 0) {
			return done_paged(io, m->msgid, LFE_RC_SUCCESS, NULL, NULL, 0);
		}
		c.page_size = psize;
	}
	int h = search_step(s, io, &c, base, (size_t)bl, resume);
	if (c.park) {
		/* Not parked again: the last page, an error, or the search
		 * yields (a run of its own, below); unanswered (H_STOP): the
		 * request comes again, so does its cookie. */
		if (h == H_STOP)
			park_link(s, c.park);
		else
			run_put(s, c.park);
		c.park = NULL;
	}
	if (h != H_YIELD)
		return h;
	struct search_run *r = buf_get(s, sizeof *r + plen);
	if (!r) {
		/* Nowhere to keep it: say so, with the entries already sent
		 * (an entry half sent cannot be ended: reset). */
		if (part.off > 0)
			return -ENOMEM;
		io->flags &= ~(unsigned)LFE_SESS_MORE;
		return search_done(io, &c, LFE_RC_ADMIN_LIMIT_EXCEEDED,
				   "no memory to continue the search now");
	}
	memcpy(r->resume, resume, sizeof resume);
	r->msgid = m->msgid;
	r->n_entries = c.n_entries;
	r->page_size = c.page_size;
	r->parked = false;
	r->req_hash = c.req_hash;
	r->cookie = 0;
	r->part = part;
	r->pdu_len = plen;
	memcpy(r->pdu, pdu, plen);
	r->next = s->run;   /* the search under way heads the list */
	s->run = r;
	return H_YIELD;
}

/* session_int.h. */
__attribute__((noinline)) int lfe_session_search_resume(struct lfe_session *s,
							struct lfe_session_io *io)
{
	struct search_run *r = s->run;
	struct lfe_ldap_msg m;
	char base[LFE_DN_MAX + 1];
	struct attr_sel sel;

	if (room(io) < RESULT_RESERVE)
		return H_STOP;
	/* The copy decoded as the original did. */
	if (lfe_ldap_decode(r->pdu, r->pdu_len, &m) < 0 || m.op != LFE_OP_SEARCH_REQ)
		return -EPROTO;
	const struct lfe_search_req *req = &m.u.search;
	ssize_t bl = lfe_dn_normalize(req->base.p, req->base.len, base, sizeof base);
	if (bl < 0)
		return -EPROTO;
	sel_init(&sel, req, &s->cfg->search);
	struct search_ctx c = {
		.io = io, .sel = &sel, .req = req, .msgid = r->msgid,
		.size_limit = req->size_limit, .n_entries = r->n_entries, .part = &r->part,
		.page_size = r->page_size, .req_hash = r->req_hash,
	};
	int h = search_step(s, io, &c, base, (size_t)bl, r->resume);
	r->n_entries = c.n_entries;
	if (h != H_YIELD && !r->parked) {
		s->run = r->next;   /* ended: out of the list's head */
		run_put(s, r);
	}
	return h;
}
