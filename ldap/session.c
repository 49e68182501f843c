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
 *  - messageID 0 (RFC 4511 §4.1.1.1: unsolicited notifications only) in a
 *    request: protocolError Notice of Disconnection, connection closed.
 *  - A search the decoder refuses for a cap (filter nodes, depth, substring
 *    pieces, attribute list: -E2BIG) is answered adminLimitExceeded (11) and
 *    the connection goes on; its framing was sound.
 *  - Searches (the root DSE, what entries carry, paged results):
 *    session_search.c; the parts of the session: session_int.h.
 */
#include "ldap/session.h"

#include "ldap/dn.h"
#include "ldap/session_int.h"

#define DIAG_RESTRICTED "Operations are restricted to bind/unbind/abandon/StartTLS/modify password"

/* The request controls this session honours: the root DSE's
 * supportedControl is this table, and a critical control is accepted only
 * when it is here for the request's operation (else
 * unavailableCriticalExtension, 12; a non-critical one not here is
 * ignored, RFC 4511 §4.1.11). Later controls are added here (and counted
 * in N_CTL, session_int.h). */
static const struct ctl_def {
	const char *oid;
	uint32_t ops;       /* bit (1 << protocolOp tag number) per operation */
	bool bind_ctl;      /* honoured only where the backend answers bind controls */
} ctl_table[] = {
	{ OID_PAGED, 1u << 3 /* SearchRequest */, false },
	{ LFE_OID_PPOLICY, 1u << 0 /* BindRequest */, true },   /* ppolicy.h */
};
_Static_assert(sizeof ctl_table / sizeof ctl_table[0] == N_CTL, "N_CTL counts ctl_table");

static bool ctl_honoured(const struct lfe_session_cfg *cfg, size_t k)
{
	return !ctl_table[k].bind_ctl || (cfg->be && cfg->be->bind_controls);
}

/* session_int.h. */
uint32_t lfe_session_ctl_oids(const struct lfe_session_cfg *cfg, struct lfe_bytes oids[N_CTL])
{
	uint32_t n = 0;
	for (size_t k = 0; k < N_CTL; k++)
		if (ctl_honoured(cfg, k))
			oids[n++] = (struct lfe_bytes){ (const uint8_t *)ctl_table[k].oid,
							strlen(ctl_table[k].oid) };
	return n;
}

static const char DIAG_READ_ONLY[] = "the directory is read-only here; use ldapfectl";

/* ---------------------------------------------------------------- memory */

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
		n = be->bind_controls(be_ctx(s, io), want, ctrls, sizeof ctrls, &must_change);
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
	enum lfe_be_verdict v = cfg->be->bind(be_ctx(s, io), token, s->dn, (size_t)nl, b->name.p,
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

/* ------------------------------------------------------------ extended */

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
		int h = lfe_session_search(s, io, &m, pdu, len);
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
			int h = lfe_session_search_resume(s, io);
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
