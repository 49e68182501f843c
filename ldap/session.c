/* ldap/session.c — one LDAP connection: framing, dispatch, results.
 *
 * Behaviour decided here (the header leaves it open):
 *  - io->out_len and io->in_used are set by each call to what that call wrote
 *    and consumed; responses start at io->out.
 *  - Every response but a search's is small and bounded (at most ~1.1 KiB, a
 *    WhoAmI answer with a maximal DN): LFE_SESSION_ROOM_MIN. The session
 *    starts a request only with that much room, so a request it takes is
 *    always answered in the same call; nothing is owed between calls.
 *  - A search whose entries do not fit behind responses already written in
 *    the call is undone and left unconsumed (searches have no side
 *    effects); the caller calls again with an empty io->out. If even an
 *    empty io->out cannot hold the next entry, the entries that fit are
 *    sent and the search ends with adminLimitExceeded.
 *  - A request gathered from split input is completed (its last bytes taken)
 *    only as the first response of a call, because it cannot be left
 *    unconsumed once taken; until then its last bytes stay unconsumed.
 *  - A bind is dispatched with room for its response (the verification
 *    must not run twice), and a pending bind keeps that room reserved: the
 *    session writes nothing else until its verdict.
 *  - Anonymous bind refused by configuration: unwillingToPerform (53) with a
 *    diagnostic; it is a policy refusal, not a credential failure. An empty DN
 *    with a password: invalidCredentials (49). A DN with an empty password:
 *    unwillingToPerform (53), RFC 4513 §5.1.2. Any bind request first drops
 *    the current identity, so a failed bind leaves the session anonymous.
 *  - The DN of a bind with a name and password is kept in a chunk of the
 *    core's DN pool from before the verification (the verifier may hold it)
 *    to the end of the identity it becomes; a pool without room answers
 *    busy (51, "retry later") before any lookup, the same for every DN, so
 *    it tells nothing about which DNs exist.
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
 *  - messageID 0 (RFC 4511 §4.1.1.1: unsolicited notifications only) in a
 *    request: protocolError Notice of Disconnection, connection closed.
 *  - A search the decoder refuses for a cap (filter nodes, depth, substring
 *    pieces, attribute list: -E2BIG) is answered adminLimitExceeded (11) and
 *    the connection goes on; its framing was sound.
 *  - The search access policy: session.h, struct lfe_search_policy.
 */
#include "ldap/session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/ber.h"
#include "ldap/dn.h"
#include "ldap/dnpool.h"
#include "ldap/filter.h"

#define HDR_CAP 16u               /* longest LDAPMessage header + peek */
#define RESULT_RESERVE 160u       /* any LDAPResult we send, our diagnostics */

#define OID_WHOAMI "1.3.6.1.4.1.4203.1.11.3"
#define OID_ALL_OPATTRS "1.3.6.1.4.1.4203.1.5.1"   /* RFC 3673 "+" */
#define OID_STARTTLS "1.3.6.1.4.1.1466.20037"     /* RFC 4511 §4.14 */
#define OID_PAGED "1.2.840.113556.1.4.319"        /* RFC 2696 */
#define DIAG_RESTRICTED "Operations are restricted to bind/unbind/abandon/StartTLS/modify password"

/* The request controls this session honours: the root DSE's
 * supportedControl is this table, and a critical control is accepted only
 * when it is here for the request's operation (else
 * unavailableCriticalExtension, 12; a non-critical one not here is
 * ignored, RFC 4511 §4.1.11). Later controls are added here. */
static const struct ctl_def {
	const char *oid;
	uint32_t ops;       /* bit (1 << protocolOp tag number) per operation */
	bool bind_ctl;      /* honoured only where the backend answers bind controls */
} ctl_table[] = {
	{ OID_PAGED, 1u << 3 /* SearchRequest */, false },
	{ LFE_OID_PPOLICY, 1u << 0 /* BindRequest */, true },   /* ppolicy.h */
};
#define N_CTL (sizeof ctl_table / sizeof ctl_table[0])

static bool ctl_honoured(const struct lfe_session_cfg *cfg, size_t k)
{
	return !ctl_table[k].bind_ctl || (cfg->be && cfg->be->bind_controls);
}

_Static_assert(RESULT_RESERVE >= 64u + 96u, "reserve covers header + longest diagnostic");
_Static_assert(LFE_SESSION_ROOM_MIN >= RESULT_RESERVE + LFE_BIND_CTRLS_MAX + 4u,
	       "ROOM_MIN holds a BindResponse with its policy control");
_Static_assert(LFE_SESSION_ROOM_MIN >= RESULT_RESERVE + 3u + LFE_DN_MAX + 64u,
	       "ROOM_MIN holds a WhoAmI answer with a maximal DN, and any result");

enum gather_state { G_NONE, G_HDR, G_BODY, G_COMPLETE };

/* What handling one PDU led to. */
enum hres {
	H_DONE,     /* answered (or ignored); consume it */
	H_YIELD,    /* a search goes on later (s->run): consume it, stop */
	H_STOP,     /* no room for the answer: do not consume, resume later */
	H_PENDING,  /* bind verdict outstanding: consume, stop */
	H_CLOSE,    /* unbind or protocol error: consume, close */
	H_STARTTLS, /* StartTLS answered success: consume, read no further */
};

/* What every connection pays, idle or not: this struct (a session slot of
 * the caller's pool). The DN of a bind in flight and the bound identity
 * live in a chunk of the core's DN pool (dnpool.h), held only while there
 * is one; a gathered PDU in the allocator's buffer only while it is split. */
struct lfe_session {
	const struct lfe_session_cfg *cfg;
	uint8_t *gbuf;      /* allocator buffer; NULL while the PDU fits hdr */
	char *dn;           /* the pending bind's DN, or (bound) the identity:
	                     * normalized, NUL-terminated; NULL: none */
	uint32_t glen;      /* bytes gathered */
	uint32_t gneed;     /* total PDU length once known (= gbuf size;
	                     * max_pdu is under 4 GiB, session.h) */
	uint32_t gen, seq;  /* a pending bind's token is gen << 32 | seq */
	int32_t pending_msgid;
	uint16_t dn_len;
	uint8_t gstate;     /* enum gather_state */
	bool closed;
	bool pending;
	bool bound;         /* dn is the bound identity (else: pending or none) */
	bool pp_want;       /* the pending bind carried the ppolicy control */
	bool restricted;    /* bound with pwdReset + pwdMustChange (ppolicy) */
	bool tls;           /* under TLS: StartTLS refused */
	uint8_t hdr[HDR_CAP];
	struct search_run *run;   /* a search that yielded, or a paged search
	                           * parked between pages; NULL: none */
	struct lfe_session_stats st;
};
_Static_assert(LFE_DN_MAX < UINT16_MAX, "dn_len holds any DN");
_Static_assert(LFE_DN_MAX + 1 <= LFE_DNPOOL_CHUNK_MAX, "a DN pool chunk holds any DN");

static const char DIAG_READ_ONLY[] = "the directory is read-only here; use ldapfectl";

/* ---------------------------------------------------------------- memory */

static void *buf_get(struct lfe_session *s, size_t n)
{
	const struct lfe_session_alloc *a = &s->cfg->alloc;
	return a->get ? a->get(a->ctx, n) : malloc(n);
}

static void buf_put(struct lfe_session *s, void *p)
{
	const struct lfe_session_alloc *a = &s->cfg->alloc;
	if (a->get)
		a->put(a->ctx, p);
	else
		free(p);
}

/* A chunk for a DN of n bytes (NUL included) from the core's pool, or the
 * heap for a session configured without one. */
static char *dn_get(struct lfe_session *s, size_t n)
{
	struct lfe_dnpool *p = s->cfg->dns;
	return p ? lfe_dnpool_get(p, n) : malloc(n);
}

/* Drop the DN the session keeps (the bound identity, or the DN of a bind
 * whose verdict will not be used): the session is anonymous after. */
static void dn_drop(struct lfe_session *s)
{
	if (s->dn) {
		struct lfe_dnpool *p = s->cfg->dns;
		if (p)
			lfe_dnpool_put(p, s->dn);
		else
			free(s->dn);
	}
	s->dn = NULL;
	s->dn_len = 0;
	s->bound = false;
}

static size_t max_pdu(const struct lfe_session *s)
{
	size_t m = s->cfg->max_pdu ? s->cfg->max_pdu : LFE_LDAP_DEFAULT_MAX_PDU;
	return m < UINT32_MAX ? m : UINT32_MAX - 1;   /* glen, gneed */
}

/* Gathered PDUs may hold a bind password: wipe before giving memory back. */
static void gather_release(struct lfe_session *s)
{
	explicit_bzero(s->hdr, sizeof s->hdr);
	if (s->gbuf) {
		explicit_bzero(s->gbuf, s->gneed);
		buf_put(s, s->gbuf);
		s->gbuf = NULL;
	}
	s->glen = s->gneed = 0;
	s->gstate = G_NONE;
}

/* --------------------------------------------------------------- output */

static size_t room(const struct lfe_session_io *io)
{
	return io->out_cap - io->out_len;
}

static ssize_t emit_result(struct lfe_session_io *io, int32_t msgid,
			   enum lfe_ldap_op resp_op, enum lfe_ldap_rc code,
			   const char *diag)
{
	struct lfe_ldap_result r = {
		.code = code,
		.diag = { (const uint8_t *)diag, diag ? strlen(diag) : 0 },
	};
	uint8_t *o = io->out + io->out_len;
	if (resp_op == LFE_OP_EXT_RESP)
		return lfe_ldap_enc_ext_resp(o, room(io), msgid, &r, NULL, NULL);
	return lfe_ldap_enc_result(o, room(io), msgid, resp_op, &r);
}

/* Account for n bytes an encoder wrote at the end of io->out: H_DONE, or
 * H_STOP when it did not fit now, or the encoder's error. */
static int appended(struct lfe_session_io *io, ssize_t n)
{
	if (n == -ENOSPC)
		return H_STOP;
	if (n < 0)
		return (int)n;
	io->out_len += (size_t)n;
	return H_DONE;
}

/* Append a result; H_STOP when it does not fit now. */
static int reply(struct lfe_session_io *io, int32_t msgid, enum lfe_ldap_op resp_op,
		 enum lfe_ldap_rc code, const char *diag)
{
	return appended(io, emit_result(io, msgid, resp_op, code, diag));
}

/* Notice of Disconnection then close. The notice is advisory: when even an
 * empty output cannot hold it the connection closes without it. */
static int protocol_close(struct lfe_session *s, struct lfe_session_io *io, const char *diag)
{
	ssize_t n = lfe_ldap_enc_notice_of_disconnection(io->out + io->out_len, room(io),
							 LFE_RC_PROTOCOL_ERROR, diag);
	if (n == -ENOSPC && io->out_len > 0)
		return H_STOP;
	if (n > 0)
		io->out_len += (size_t)n;
	else if (n != -ENOSPC)
		return (int)n;
	s->st.protocol_errors++;
	return H_CLOSE;
}

/* ---------------------------------------------------------------- bind */

static void bind_count(struct lfe_session *s, enum lfe_ldap_rc rc)
{
	if (rc == LFE_RC_SUCCESS)
		s->st.binds_ok++;
	else if (rc == LFE_RC_INVALID_CREDENTIALS)
		s->st.binds_invalid++;
	else
		s->st.binds_other++;
}

static int bind_reply(struct lfe_session *s, struct lfe_session_io *io, int32_t msgid,
		      enum lfe_ldap_rc rc, const char *diag)
{
	bind_count(s, rc);
	return reply(io, msgid, LFE_OP_BIND_RESP, rc, diag);
}

static bool oid_is(struct lfe_bytes oid, const char *lit);

/* The answer to a verdict of the backend, with its response controls
 * (ops->bind_controls). */
static ssize_t emit_bind_result(struct lfe_session *s, struct lfe_session_io *io, int32_t msgid,
				enum lfe_ldap_rc rc, const char *diag, bool want)
{
	const struct lfe_backend_ops *be = s->cfg->be;
	struct lfe_ldap_result r = {
		.code = rc,
		.diag = { (const uint8_t *)diag, diag ? strlen(diag) : 0 },
	};
	uint8_t ctrls[LFE_BIND_CTRLS_MAX];
	ssize_t n = 0;
	bool must_change = false;

	if (be->bind_controls) {
		n = be->bind_controls(s->cfg->be_ctx, want, ctrls, sizeof ctrls, &must_change);
		if (n < 0)
			n = 0;   /* never larger than the room given: nothing to say */
		s->restricted = rc == LFE_RC_SUCCESS && must_change;
	}
	if (n == 0)
		return lfe_ldap_enc_result(io->out + io->out_len, room(io), msgid, LFE_OP_BIND_RESP, &r);
	return lfe_ldap_enc_result_ctrls(io->out + io->out_len, room(io), msgid, LFE_OP_BIND_RESP,
					 &r, ctrls, (size_t)n);
}

/* Does the bind carry the Password Policy request control, which this
 * backend answers? */
static bool wants_ppolicy(const struct lfe_session *s, const struct lfe_ldap_msg *m)
{
	if (m->n_controls == 0 || !s->cfg->be || !s->cfg->be->bind_controls)
		return false;
	for (uint32_t i = 0; i < m->n_controls; i++)
		if (oid_is(m->controls[i].oid, LFE_OID_PPOLICY))
			return true;
	return false;
}

static enum lfe_ldap_rc verdict_rc(enum lfe_be_verdict v, const char **diag)
{
	*diag = NULL;
	switch (v) {
	case LFE_BE_OK:
		return LFE_RC_SUCCESS;
	case LFE_BE_INVALID:
		return LFE_RC_INVALID_CREDENTIALS;
	case LFE_BE_BUSY:
		*diag = "password verification is saturated; retry";
		return LFE_RC_BUSY;
	default:
		*diag = "internal error";
		return LFE_RC_OTHER;
	}
}

static int do_bind(struct lfe_session *s, struct lfe_session_io *io,
		   const struct lfe_ldap_msg *m, bool crit_unknown)
{
	const struct lfe_bind_req *b = &m->u.bind;
	const struct lfe_session_cfg *cfg = s->cfg;

	/* The verification runs once, so its answer must be able to go out. */
	if (room(io) < RESULT_RESERVE + LFE_BIND_CTRLS_MAX + 4u)
		return H_STOP;
	dn_drop(s);
	s->restricted = false;

	if (crit_unknown)
		return bind_reply(s, io, m->msgid, LFE_RC_UNAVAILABLE_CRITICAL_EXTENSION,
				  "critical control not supported");
	if (b->version != 3)
		return bind_reply(s, io, m->msgid, LFE_RC_PROTOCOL_ERROR,
				  "only LDAPv3 is supported");
	if (b->auth != LFE_AUTH_SIMPLE)
		return bind_reply(s, io, m->msgid, LFE_RC_AUTH_METHOD_NOT_SUPPORTED,
				  "only simple bind is supported");
	if (cfg->require_tls != LFE_REQUIRE_TLS_NONE && !s->tls && b->simple.len != 0)
		return bind_reply(s, io, m->msgid, LFE_RC_CONFIDENTIALITY_REQUIRED,
				  "TLS is required for binds with a password");
	if (b->name.len == 0) {
		if (b->simple.len != 0)
			return bind_reply(s, io, m->msgid, LFE_RC_INVALID_CREDENTIALS, NULL);
		if (!cfg->allow_anonymous)
			return bind_reply(s, io, m->msgid, LFE_RC_UNWILLING_TO_PERFORM,
					  "anonymous bind is disabled");
		return bind_reply(s, io, m->msgid, LFE_RC_SUCCESS, NULL);
	}
	if (b->simple.len == 0)
		return bind_reply(s, io, m->msgid, LFE_RC_UNWILLING_TO_PERFORM,
				  "unauthenticated bind (DN with no password) disallowed");
	if (!cfg->be || !cfg->be->bind)
		return bind_reply(s, io, m->msgid, LFE_RC_UNWILLING_TO_PERFORM,
				  "no directory to bind against");

	char nd[LFE_DN_MAX + 1];
	ssize_t nl = lfe_dn_normalize(b->name.p, b->name.len, nd, sizeof nd);
	if (nl < 0)
		return bind_reply(s, io, m->msgid, LFE_RC_INVALID_CREDENTIALS, NULL);
	/* The DN is kept from here: while the verdict is out, and as the
	 * identity after a success. Taken before the verification, so a pool
	 * without room refuses the bind unverified, the same for every DN. */
	s->dn = dn_get(s, (size_t)nl + 1);
	if (s->dn == NULL)
		return bind_reply(s, io, m->msgid, LFE_RC_BUSY,
				  "too many bound identities on this core; retry later");
	memcpy(s->dn, nd, (size_t)nl + 1);
	s->dn_len = (uint16_t)nl;

	uint64_t token = (uint64_t)s->gen << 32 | ++s->seq;
	enum lfe_be_verdict v = cfg->be->bind(cfg->be_ctx, token, s->dn, (size_t)nl, b->name.p,
					      b->name.len, b->simple.p, b->simple.len);
	if (v == LFE_BE_PENDING) {
		s->pending = true;
		s->pending_msgid = m->msgid;
		s->pp_want = wants_ppolicy(s, m);
		return H_PENDING;
	}
	const char *diag;
	enum lfe_ldap_rc rc = verdict_rc(v, &diag);
	if (rc == LFE_RC_SUCCESS)
		s->bound = true;
	else
		dn_drop(s);
	bind_count(s, rc);
	return appended(io, emit_bind_result(s, io, m->msgid, rc, diag, wants_ppolicy(s, m)));
}

/* -------------------------------------------------------------- search */

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

/* An entry larger than the connection can ever queue at once goes out in
 * parts, one per call, each the next window of the same message: off bytes
 * of total sent so far, sum the message's hash (msg.h). The backend emits
 * the same candidate again for each part; if the bytes changed (the store
 * was written between two parts) the connection is reset rather than send
 * a message made of two entries. */
struct entry_part {
	uint64_t off, total, sum;
};

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

/* The root DSE, built from the configuration on each request. */
struct dse {
	struct lfe_ldap_attr a[9];
	struct lfe_bytes v[9];
	struct lfe_bytes ext[2];   /* supportedExtension's values */
	struct lfe_bytes ctl[N_CTL];   /* supportedControl's: ctl_table */
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
	uint32_t nc = 0;
	for (size_t k = 0; k < N_CTL; k++)
		if (ctl_honoured(cfg, k))
			d->ctl[nc++] = (struct lfe_bytes){ (const uint8_t *)ctl_table[k].oid,
							   strlen(ctl_table[k].oid) };
	dse_add(d, "supportedControl", ctl_table[0].oid);
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
 * At most one paged search is open per connection: between pages it is
 * parked in s->run (the backend's place after the last page, the
 * request's identity and the cookie; parked, so not resumed). A new paged
 * search without a cookie ends it, and so does any search that must yield
 * (needs s->run) and the connection's end. A cookie is 8 bytes:
 * valid only on this connection, for the request that got it (the same
 * base, scope, filter, attributes; else unwillingToPerform, 53), and only
 * for the next page. A page asked for after the store changed goes on
 * after the last entry sent, in DN order, in the snapshot current then:
 * every entry present and unchanged throughout is returned exactly once;
 * one added, changed or deleted meanwhile appears as that snapshot has it
 * (if it sorts after the place reached). A size of 0 with a cookie ends the
 * paged search. */
static bool oid_is(struct lfe_bytes oid, const char *lit);

static void page_free(struct lfe_session *s);

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

/* A search that yielded: its request (copied: the input it came in is
 * consumed) and the backend's place, held from the yield to its
 * SearchResultDone; one allocation, from the session's allocator. */
struct search_run {
	uint64_t resume[(LFE_BE_RESUME_SIZE + 7) / 8];   /* the backend's, opaque */
	int32_t msgid;
	uint32_t n_entries;
	uint32_t page_size;       /* paged results: this page's size (0: not paged) */
	bool parked;              /* a paged search between pages: not under way */
	uint64_t req_hash;
	uint64_t cookie;          /* parked: the cookie of its next page */
	struct entry_part part;
	size_t pdu_len;
	uint8_t pdu[];
};

static void run_free(struct lfe_session *s)
{
	if (s->run) {
		explicit_bzero(s->run, sizeof *s->run + s->run->pdu_len);   /* as gbuf */
		buf_put(s, s->run);
		s->run = NULL;
	}
}

static void page_free(struct lfe_session *s)
{
	if (s->run && s->run->parked)
		run_free(s);
}

static bool run_active(const struct lfe_session *s)
{
	return s->run && !s->run->parked;
}

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
	int rc = cfg->be->search(cfg->be_ctx, &bs, search_emit, c);
	const char *diag = NULL;

	if (c->part->off > 0 && (rc != -EAGAIN || c->stop != SS_NONE))
		return -ESTALE;   /* the entry went away between its parts: reset */
	if (c->stop == SS_PAGE && rc == -EAGAIN) {
		/* A full page: park the backend's place for the next one (in
		 * the run under way, or a new one). */
		if (room(io) < RESULT_RESERVE)
			return H_STOP;
		struct search_run *r = s->run;
		if (!r) {
			r = buf_get(s, sizeof *r);
			if (!r)
				return done_paged(io, c->msgid, LFE_RC_ADMIN_LIMIT_EXCEEDED,
						  "no memory to keep the paged search", NULL, 0);
			memset(r, 0, sizeof *r);
			memcpy(r->resume, resume, sizeof r->resume);
			s->run = r;
		}
		r->parked = true;
		r->req_hash = c->req_hash;
		r->cookie = fnv(c->req_hash ^ (uint64_t)(uint32_t)c->msgid, r->resume, sizeof r->resume);
		uint8_t ck[8];
		memcpy(ck, &r->cookie, 8);
		return done_paged(io, c->msgid, LFE_RC_SUCCESS, NULL, ck, sizeof ck);
	}
	if (c->page_size && rc != -EAGAIN)
		page_free(s);   /* the last page (or an error): nothing to go on with */
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

/* Not inlined into handle_pdu: its frame (the backend's resume area) stays
 * off the bind path's. */
__attribute__((noinline)) static int do_search(struct lfe_session *s, struct lfe_session_io *io,
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
			if (!s->run || !s->run->parked || cookie.len != 8 ||
			    memcmp(cookie.p, &s->run->cookie, 8) != 0 ||
			    s->run->req_hash != c.req_hash) {
				return done_paged(io, m->msgid, LFE_RC_UNWILLING_TO_PERFORM,
						  "paged results cookie is invalid or expired", NULL, 0);
			}
			if (psize == 0) {   /* the client ends it */
				page_free(s);
				return done_paged(io, m->msgid, LFE_RC_SUCCESS, NULL, NULL, 0);
			}
			memcpy(resume, s->run->resume, sizeof resume);
			page_free(s);   /* this call goes on from the copy */
		} else {
			page_free(s);   /* a new paged search ends the open one */
			if (psize == 0)
				return done_paged(io, m->msgid, LFE_RC_SUCCESS, NULL, NULL, 0);
		}
		c.page_size = psize;
	}
	int h = search_step(s, io, &c, base, (size_t)bl, resume);
	if (h != H_YIELD)
		return h;
	page_free(s);   /* a search under way needs s->run: a parked one ends */
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
	r->part = part;
	r->pdu_len = plen;
	memcpy(r->pdu, pdu, plen);
	s->run = r;
	return H_YIELD;
}

/* The next part of the search in s->run. H_DONE when it ended (run
 * freed), H_YIELD when it goes on later, H_STOP when there is not even room
 * for its SearchResultDone yet, or a negative errno. */
__attribute__((noinline)) static int search_resume(struct lfe_session *s,
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
	if (h != H_YIELD && !r->parked)
		run_free(s);
	return h;
}

/* ------------------------------------------------------------ extended */

static bool oid_is(struct lfe_bytes oid, const char *lit)
{
	return oid.len == strlen(lit) && memcmp(oid.p, lit, oid.len) == 0;
}

/* RFC 4511 §4.14, RFC 4513 §3. Every earlier operation has been answered
 * (a pending bind stops reading before this request is decoded), so only
 * TLS already active refuses it with operationsError. */
static int do_starttls(struct lfe_session *s, struct lfe_session_io *io,
		       const struct lfe_ldap_msg *m)
{
	const struct lfe_bytes name = { (const uint8_t *)OID_STARTTLS, sizeof OID_STARTTLS - 1 };
	struct lfe_ldap_result r = { .code = LFE_RC_SUCCESS };
	const char *diag = NULL;

	if (m->u.ext.has_value) {
		r.code = LFE_RC_PROTOCOL_ERROR;
		diag = "StartTLS takes no request value";
	} else if (!s->cfg->starttls) {
		r.code = LFE_RC_UNAVAILABLE;
		diag = "TLS is not configured";
	} else if (s->tls) {
		r.code = LFE_RC_OPERATIONS_ERROR;
		diag = "TLS is already active";
	}
	r.diag = (struct lfe_bytes){ (const uint8_t *)diag, diag ? strlen(diag) : 0 };
	int h = appended(io, lfe_ldap_enc_ext_resp(io->out + io->out_len, room(io), m->msgid, &r,
						   &name, NULL));
	if (h != H_DONE || r.code != LFE_RC_SUCCESS)
		return h;
	s->tls = true;
	return H_STARTTLS;
}

static int do_extended(struct lfe_session *s, struct lfe_session_io *io,
		       const struct lfe_ldap_msg *m)
{
	const struct lfe_ext_req *x = &m->u.ext;
	static const char whoami[] = OID_WHOAMI;

	s->st.extended++;
	if (oid_is(x->oid, OID_STARTTLS))
		return do_starttls(s, io, m);
	if (x->oid.len != sizeof whoami - 1 || memcmp(x->oid.p, whoami, x->oid.len) != 0)
		return reply(io, m->msgid, LFE_OP_EXT_RESP, LFE_RC_PROTOCOL_ERROR,
			     "unsupported extended operation");
	if (x->has_value)
		return reply(io, m->msgid, LFE_OP_EXT_RESP, LFE_RC_PROTOCOL_ERROR,
			     "WhoAmI takes no request value");

	/* RFC 4532: "dn:" + DN when bound, an empty value when anonymous. */
	char id[3 + LFE_DN_MAX];
	size_t idl = 0;
	if (s->bound) {
		memcpy(id, "dn:", 3);
		memcpy(id + 3, s->dn, s->dn_len);
		idl = 3 + (size_t)s->dn_len;
	}
	struct lfe_ldap_result r = { .code = LFE_RC_SUCCESS };
	struct lfe_bytes val = { (const uint8_t *)id, idl };
	return appended(io, lfe_ldap_enc_ext_resp(io->out + io->out_len, room(io), m->msgid, &r,
						  NULL, &val));
}

/* ------------------------------------------------------------ dispatch */

static int response_op(enum lfe_ldap_op op)
{
	switch (op) {
	case LFE_OP_BIND_REQ: return LFE_OP_BIND_RESP;
	case LFE_OP_SEARCH_REQ: return LFE_OP_SEARCH_DONE;
	case LFE_OP_MODIFY_REQ: return LFE_OP_MODIFY_RESP;
	case LFE_OP_ADD_REQ: return LFE_OP_ADD_RESP;
	case LFE_OP_DEL_REQ: return LFE_OP_DEL_RESP;
	case LFE_OP_MODDN_REQ: return LFE_OP_MODDN_RESP;
	case LFE_OP_COMPARE_REQ: return LFE_OP_COMPARE_RESP;
	case LFE_OP_EXT_REQ: return LFE_OP_EXT_RESP;
	default: return -1;
	}
}

static void count_op(struct lfe_session *s, enum lfe_ldap_op op)
{
	if (op == LFE_OP_SEARCH_REQ)
		s->st.searches++;
	else if (op == LFE_OP_EXT_REQ)
		s->st.extended++;
}

/* What require_tls = all lets through in clear: StartTLS itself and the
 * root DSE read (clients discover StartTLS there). Unbind and abandon are
 * handled before. */
static bool tls_exempt(const struct lfe_ldap_msg *m)
{
	if (m->op == LFE_OP_EXT_REQ)
		return oid_is(m->u.ext.oid, OID_STARTTLS);
	return m->op == LFE_OP_SEARCH_REQ && m->u.search.base.len == 0 &&
	       m->u.search.scope == LFE_SCOPE_BASE;
}

static int handle_pdu(struct lfe_session *s, struct lfe_session_io *io,
		      const uint8_t *pdu, size_t len)
{
	struct lfe_ldap_msg m;
	int dr = lfe_ldap_decode(pdu, len, &m);

	/* A well-framed search over the filter or attribute-list caps is a
	 * limit, not garbage: answer it and keep the connection. */
	if (dr == -E2BIG && m.op == LFE_OP_SEARCH_REQ && m.msgid > 0) {
		s->st.searches++;
		return reply(io, m.msgid, LFE_OP_SEARCH_DONE, LFE_RC_ADMIN_LIMIT_EXCEEDED,
			     "filter or attribute list exceeds the server's limits");
	}
	if (dr < 0)
		return protocol_close(s, io, "malformed LDAP message");
	/* RFC 4511 §4.1.1.1: messageID 0 is reserved for unsolicited
	 * notifications; a request carrying it is a protocol error. */
	if (m.msgid == 0)
		return protocol_close(s, io, "messageID 0 is reserved");
	if (m.op == LFE_OP_UNBIND_REQ)
		return H_CLOSE;
	if (m.op == LFE_OP_ABANDON_REQ)
		return H_DONE;   /* every operation completes before the next is read */
	int resp = response_op(m.op);
	if (resp < 0)
		return protocol_close(s, io, "unexpected protocol operation");

	/* RFC 4511 §4.1.11: a control not in ctl_table for this operation is
	 * ignored when non-critical; a critical one refuses the operation. */
	bool crit = false;
	for (uint32_t i = 0; i < m.n_controls; i++) {
		bool known = false;
		for (size_t k = 0; k < N_CTL && !known; k++)
			known = oid_is(m.controls[i].oid, ctl_table[k].oid) &&
				(ctl_table[k].ops & (1u << (m.op & 0x1f))) && ctl_honoured(s->cfg, k);
		crit |= m.controls[i].critical && !known;
	}

	if (s->cfg->require_tls == LFE_REQUIRE_TLS_ALL && !s->tls && !tls_exempt(&m)) {
		if (m.op == LFE_OP_BIND_REQ)
			return bind_reply(s, io, m.msgid, LFE_RC_CONFIDENTIALITY_REQUIRED,
					  "TLS is required");
		count_op(s, m.op);
		return reply(io, m.msgid, (enum lfe_ldap_op)resp, LFE_RC_CONFIDENTIALITY_REQUIRED,
			     "TLS is required");
	}
	if (m.op == LFE_OP_BIND_REQ)
		return do_bind(s, io, &m, crit);
	if (crit) {
		count_op(s, m.op);
		return reply(io, m.msgid, (enum lfe_ldap_op)resp,
			     LFE_RC_UNAVAILABLE_CRITICAL_EXTENSION,
			     "critical control not supported");
	}
	if (s->restricted && m.op == LFE_OP_SEARCH_REQ && !tls_exempt(&m)) {
		s->st.searches++;
		return reply(io, m.msgid, LFE_OP_SEARCH_DONE, LFE_RC_INSUFFICIENT_ACCESS_RIGHTS,
			     DIAG_RESTRICTED);
	}
	switch (m.op) {
	case LFE_OP_SEARCH_REQ: {
		int h = do_search(s, io, &m, pdu, len);
		if (h != H_STOP)
			s->st.searches++;
		return h;
	}
	case LFE_OP_EXT_REQ:
		return do_extended(s, io, &m);
	default:
		return reply(io, m.msgid, (enum lfe_ldap_op)resp,
			     LFE_RC_UNWILLING_TO_PERFORM, DIAG_READ_ONLY);
	}
}

/* ------------------------------------------------------------- framing */

/* A gathered PDU cannot be left unconsumed once its last bytes are taken,
 * so they are taken only when its answer, whatever it is, can be written
 * now: as the call's first response, with the minimum room. */
static bool may_complete(const struct lfe_session_io *io)
{
	return io->out_len == 0 && room(io) >= LFE_SESSION_ROOM_MIN;
}

/* Move input into the gather buffers. Returns 1 when a complete PDU is
 * gathered (G_COMPLETE), 0 when all input was taken and more is needed,
 * -ENOMEM when the allocator failed, or the framing error. */
static int gather_feed(struct lfe_session *s, struct lfe_session_io *io)
{
	const uint8_t *src = io->in + io->in_used;
	size_t avail = io->in_len - io->in_used;

	if (s->gstate == G_HDR) {
		/* Peek: bytes past the header stay unconsumed until the PDU
		 * length says whose they are. */
		size_t k = avail < HDR_CAP - s->glen ? avail : HDR_CAP - s->glen;
		size_t plen = 0;
		memcpy(s->hdr + s->glen, src, k);
		int r = lfe_ldap_frame(s->hdr, s->glen + k, max_pdu(s), &plen);
		if (r == 0) {
			if (!may_complete(io))
				return 0;
			io->in_used += plen - s->glen;
			s->glen = s->gneed = plen;
			s->gstate = G_COMPLETE;
			return 1;
		}
		if (r == -EAGAIN && plen == 0) {
			if (s->glen + k == HDR_CAP)
				return -EBADMSG;
			s->glen += k;
			io->in_used += k;
			return 0;
		}
		if (r != -EAGAIN)
			return r;
		uint8_t *b = buf_get(s, plen);
		if (!b)
			return -ENOMEM;
		memcpy(b, s->hdr, s->glen);
		explicit_bzero(s->hdr, sizeof s->hdr);
		s->gbuf = b;
		s->gneed = plen;
		s->gstate = G_BODY;
	}
	size_t k = avail < s->gneed - s->glen ? avail : s->gneed - s->glen;
	if (s->glen + k == s->gneed && !may_complete(io))
		return 0;
	memcpy(s->gbuf + s->glen, src, k);
	s->glen += k;
	io->in_used += k;
	if (s->glen < s->gneed)
		return 0;
	s->gstate = G_COMPLETE;
	return 1;
}

static void close_now(struct lfe_session *s, struct lfe_session_io *io, unsigned flag)
{
	gather_release(s);
	s->closed = true;
	io->in_used = io->in_len;
	io->flags |= flag;
}

/* The bytes stay unconsumed when the notice must wait for room. */
static void frame_error(struct lfe_session *s, struct lfe_session_io *io, int err)
{
	int h = protocol_close(s, io, err == -EMSGSIZE ? "message exceeds the size limit"
							: "malformed LDAP message header");
	if (h != H_STOP)
		close_now(s, io, LFE_SESS_CLOSE);
}

int lfe_session_process(struct lfe_session *s, struct lfe_session_io *io)
{
	io->in_used = 0;
	io->out_len = 0;
	io->flags = 0;
	if (s->closed) {
		io->in_used = io->in_len;
		io->flags = LFE_SESS_CLOSE;
		return 0;
	}
	for (;;) {
		if (s->pending) {
			io->flags |= LFE_SESS_PENDING;
			return 0;
		}
		if (run_active(s)) {
			/* A search that yielded goes on before any later
			 * request is read. */
			int h = search_resume(s, io);
			if (h < 0) {
				close_now(s, io, LFE_SESS_ABORT);
				return h;
			}
			if (h != H_DONE)
				return 0;
		}
		const uint8_t *pdu = NULL;
		size_t plen = 0;
		bool gathered = s->gstate == G_COMPLETE;
		if (!gathered && io->in_used == io->in_len)
			return 0;
		if (gathered) {
			pdu = s->gbuf ? s->gbuf : s->hdr;
			plen = s->gneed;
		} else {
			size_t avail = io->in_len - io->in_used;
			if (avail == 0)
				return 0;
			if (s->gstate == G_NONE) {
				pdu = io->in + io->in_used;
				int r = lfe_ldap_frame(pdu, avail, max_pdu(s), &plen);
				if (r != -EAGAIN && room(io) < LFE_SESSION_ROOM_MIN)
					return 0;   /* its bytes wait for room */
				if (r == -EAGAIN) {
					s->gstate = G_HDR;
					s->glen = 0;
				} else if (r < 0) {
					frame_error(s, io, r);
					return 0;
				}
			}
			if (s->gstate != G_NONE) {
				int g = gather_feed(s, io);
				if (g == -ENOMEM) {
					close_now(s, io, LFE_SESS_ABORT);
					return 0;
				}
				if (g < 0) {
					frame_error(s, io, g);
					return 0;
				}
				if (g == 0)
					return 0;
				continue;   /* complete: handled from the gather buffer */
			}
		}

		int h = handle_pdu(s, io, pdu, plen);
		if (h < 0) {
			/* Encoder failure other than room: our bug, not the peer's. */
			close_now(s, io, LFE_SESS_ABORT);
			return h;
		}
		if (h == H_STOP) {
			/* Only a search behind other responses stops here
			 * (out_len > 0: the caller calls again); its bytes stay
			 * unconsumed. A gathered PDU is always its call's first
			 * response, so it can never be left owed. */
			if (gathered && io->out_len == 0) {
				close_now(s, io, LFE_SESS_ABORT);
				return -EPROTO;
			}
			return 0;
		}
		if (gathered)
			gather_release(s);
		else
			io->in_used += plen;
		if (h == H_CLOSE) {
			close_now(s, io, LFE_SESS_CLOSE);
			return 0;
		}
		if (h == H_STARTTLS) {
			io->flags |= LFE_SESS_STARTTLS;
			return 0;
		}
		if (h == H_YIELD)
			return 0;
	}
}

void lfe_session_set_tls(struct lfe_session *s)
{
	s->tls = true;
}

int lfe_session_bind_done(struct lfe_session *s, uint64_t token,
			  enum lfe_be_verdict v, struct lfe_session_io *io)
{
	io->in_used = 0;
	io->out_len = 0;
	io->flags = 0;
	if (!s->pending || token != ((uint64_t)s->gen << 32 | s->seq))
		return -ESTALE;
	if (v == LFE_BE_PENDING)
		return -EINVAL;
	const char *diag;
	enum lfe_ldap_rc rc = verdict_rc(v, &diag);
	ssize_t n = emit_bind_result(s, io, s->pending_msgid, rc, diag, s->pp_want);
	if (n < 0)
		return (int)n;   /* -ENOSPC: still pending; call again with room */
	io->out_len = (size_t)n;
	bind_count(s, rc);
	s->pending = false;
	if (rc == LFE_RC_SUCCESS)
		s->bound = true;
	else
		dn_drop(s);
	return 0;
}

/* -------------------------------------------------------------- policy */

static bool word_is(const char *s, const char *lit)
{
	return s && strcmp(s, lit) == 0;
}

/* One of three words, each naming an enum value: 0, or -EINVAL with *why. */
struct word_val {
	const char *name;
	int v;
};

static int pick_word(const char *s, const struct word_val t[3], int *out, const char **why,
		     const char *expected)
{
	for (size_t i = 0; i < 3; i++) {
		if (word_is(s, t[i].name)) {
			*out = t[i].v;
			return 0;
		}
	}
	*why = expected;
	return -EINVAL;
}

int lfe_search_access_parse(const char *s, enum lfe_search_access *out, const char **why)
{
	static const struct word_val t[3] = {
		{ "anonymous", LFE_SEARCH_ACCESS_ANONYMOUS },
		{ "bound", LFE_SEARCH_ACCESS_BOUND },
		{ "none", LFE_SEARCH_ACCESS_NONE },
	};
	int v;
	int rc = pick_word(s, t, &v, why, "expected anonymous, bound or none");
	if (rc == 0)
		*out = (enum lfe_search_access)v;
	return rc;
}

int lfe_require_tls_parse(const char *s, enum lfe_require_tls *out, const char **why)
{
	static const struct word_val t[3] = {
		{ "none", LFE_REQUIRE_TLS_NONE },
		{ "bind", LFE_REQUIRE_TLS_BIND },
		{ "all", LFE_REQUIRE_TLS_ALL },
	};
	int v;
	int rc = pick_word(s, t, &v, why, "expected none, bind or all");
	if (rc == 0)
		*out = (enum lfe_require_tls)v;
	return rc;
}

int lfe_search_scope_parse(const char *s, enum lfe_search_scope_max *out, const char **why)
{
	static const struct word_val t[3] = {
		{ "base", LFE_SEARCH_SCOPE_BASE },
		{ "one", LFE_SEARCH_SCOPE_ONE },
		{ "sub", LFE_SEARCH_SCOPE_SUB },
	};
	int v;
	int rc = pick_word(s, t, &v, why, "expected base, one or sub");
	if (rc == 0)
		*out = (enum lfe_search_scope_max)v;
	return rc;
}

/* A descr or numericoid, no options: what lfe_attr_canon accepts. */
static bool plain_type(const char *t, size_t n)
{
	char tmp[LFE_ATTR_NAME_MAX];
	return lfe_attr_canon((const uint8_t *)t, n, tmp, sizeof tmp) > 0;
}

int lfe_search_attrs_parse(struct lfe_search_policy *p, const char *list, const char **why)
{
	char a[LFE_SEARCH_MAX_ATTRS][LFE_ATTR_NAME_MAX];
	uint32_t n = 0;

	while (list && *list) {
		size_t l = strcspn(list, ",");
		const char *t = list, *e = list + l;
		list = *e ? e + 1 : e;
		while (t < e && (*t == ' ' || *t == '\t'))
			t++;
		while (e > t && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		size_t tl = (size_t)(e - t);
		if (tl == 0 || (*list == '\0' && list[-1] == ',')) {
			*why = "empty attribute name in the list";
			return -EINVAL;
		}
		if (memchr(t, ';', tl)) {
			*why = "attribute options are not allowed (a type covers its subtypes)";
			return -EINVAL;
		}
		if (!plain_type(t, tl)) {
			*why = "not an attribute type (a name or a numeric OID)";
			return -EINVAL;
		}
		if (lfe_attr_is_secret((const uint8_t *)t, tl)) {
			*why = "userPassword and authPassword can never be searched";
			return -EINVAL;
		}
		for (uint32_t i = 0; i < n; i++) {
			if (lfe_attr_type_eq((const uint8_t *)a[i], strlen(a[i]), (const uint8_t *)t, tl)) {
				*why = "attribute listed twice";
				return -EINVAL;
			}
		}
		if (n == LFE_SEARCH_MAX_ATTRS) {
			*why = "too many attributes (at most 32)";
			return -EINVAL;
		}
		memcpy(a[n], t, tl);
		a[n++][tl] = '\0';
	}
	memcpy(p->attrs, a, sizeof a[0] * n);
	p->n_attrs = n;
	return 0;
}

/* --------------------------------------------------------------- admin */

size_t lfe_session_size(void)
{
	return sizeof(struct lfe_session);
}

struct lfe_session *lfe_session_init(void *mem, const struct lfe_session_cfg *cfg)
{
	struct lfe_session *s = mem;
	if (!s || !cfg)
		return NULL;
	memset(s, 0, sizeof *s);
	s->cfg = cfg;
	return s;
}

void lfe_session_fini(struct lfe_session *s)
{
	if (!s)
		return;
	gather_release(s);
	dn_drop(s);
	run_free(s);
	page_free(s);
	s->pending = false;
	s->closed = true;
}

void lfe_session_set_generation(struct lfe_session *s, uint32_t gen)
{
	s->gen = gen;
}

bool lfe_session_searching(const struct lfe_session *s)
{
	return run_active(s);
}

bool lfe_session_gathering(const struct lfe_session *s)
{
	return s->gstate == G_HDR || s->gstate == G_BODY;
}

const char *lfe_session_bound_dn(const struct lfe_session *s, size_t *len)
{
	if (len)
		*len = s->bound ? s->dn_len : 0;
	return s->bound ? s->dn : "";
}

const char *lfe_session_pending_dn(const struct lfe_session *s, size_t *len)
{
	*len = s->pending && s->dn ? s->dn_len : 0;
	return s->pending ? s->dn : NULL;
}

const struct lfe_session_stats *lfe_session_stats(const struct lfe_session *s)
{
	return &s->st;
}
