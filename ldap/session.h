/* ldap/session.h — one LDAP connection's protocol state.
 *
 * A session takes the in-order bytes a transport received and produces the
 * response bytes to send back. It frames PDUs (zero copy when a PDU lies
 * whole in the input; otherwise it gathers the PDU in a buffer obtained from
 * the configured allocator, never more than max_pdu), decodes them,
 * dispatches the operation and encodes the result. It calls the directory
 * through struct lfe_backend_ops, so it runs the same behind the DPDK TCP
 * stack, a kernel socket, or a unit test.
 *
 * Thread rules: a session belongs to one thread (one lcore); nothing in it
 * is shared. lfe_session_init() does not allocate: the caller provides
 * lfe_session_size() bytes (a per-core pool slot). The slot is all an idle
 * connection costs; a bound one (or one with a bind in flight) adds its
 * DN's chunk from cfg->dns.
 */
#ifndef LFE_LDAP_SESSION_H
#define LFE_LDAP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldap/attr.h"
#include "ldap/msg.h"

struct lfe_session;
struct lfe_dnpool;

/* What a backend answers for a simple bind. */
enum lfe_be_verdict {
	LFE_BE_OK = 0,        /* credentials valid */
	LFE_BE_INVALID = 1,   /* unknown DN or wrong password: the same answer */
	LFE_BE_PENDING = 2,   /* a slow scheme is being verified elsewhere; the
	                       * result arrives via lfe_session_bind_done() */
	LFE_BE_BUSY = 3,      /* cannot take the verification now (queue full) */
};

/* Room a backend may keep its place in between the parts of one search
 * (backend/search.h's cursor fits). */
#define LFE_BE_RESUME_SIZE 1088u

/* A search as the backend sees it. base_ndn is normalized (dn.h). */
struct lfe_be_search {
	const char *base_ndn;
	size_t base_ndn_len;
	const struct lfe_search_req *req;   /* filter, scope, attrs, limits */
	/* The backend's place, resume_len bytes (8-aligned), zero before the
	 * search's first part and kept by the session between its parts. */
	void *resume;
	size_t resume_len;
};

/* Called by the backend once per matching entry, the whole entry as a
 * source (msg.h): the session checks it, selects the requested attributes
 * (nothing is counted before) and encodes a SearchResultEntry. Returns 0
 * (sent), 1 (withheld by the policy: not counted against any limit),
 * -EAGAIN (no room now: the backend returns -EAGAIN, keeping its place so
 * this entry comes first in the next part), or another negative errno to
 * stop (the session then ends the search with the result it chose). */
typedef int (*lfe_be_emit_fn)(void *emit_ctx, const struct lfe_ldap_entry *e);

struct lfe_backend_ops {
	/* Verify a simple bind of normalized DN ndn with password pw; dn is
	 * the name as the request spelled it (the octets of the PDU, as pw:
	 * valid during the call), for a backend that keys on the request's
	 * own bytes (ldapfe's credential cache). `token` identifies this
	 * request if the verdict is LFE_BE_PENDING; the backend hands it back
	 * to lfe_session_bind_done(). Must do the same work for an unknown DN
	 * as for a wrong password. */
	enum lfe_be_verdict (*bind)(void *be_ctx, uint64_t token,
				    const char *ndn, size_t ndn_len,
				    const uint8_t *dn, size_t dn_len,
				    const uint8_t *pw, size_t pw_len);
	/* Run a search (or its next part); call emit for each entry that
	 * matches. Returns an LDAP result code for SearchResultDone
	 * (LFE_RC_SUCCESS, LFE_RC_NO_SUCH_OBJECT, LFE_RC_SIZE_LIMIT_EXCEEDED,
	 * ...), or -EAGAIN to yield (its slice is spent, or emit had no room):
	 * the session calls it again with the same resume area later.
	 * May be NULL: searches other than the root DSE then answer
	 * unwillingToPerform. */
	int (*search)(void *be_ctx, const struct lfe_be_search *s,
		      lfe_be_emit_fn emit, void *emit_ctx);
	/* Password policy (optional; NULL: none, and the root DSE does not
	 * list the control). Called once right after each bind verdict of
	 * ops->bind (inline, or the one lfe_session_bind_done delivers):
	 * writes the response controls into out (at most cap bytes) and
	 * returns their length (0: none), or -ENOSPC. want: the request
	 * carried the Password Policy request control (LFE_OID_PPOLICY).
	 * *must_change: the identity may only change its password (pwdReset
	 * with pwdMustChange): as slapd, the session then answers every
	 * search but the root DSE's insufficientAccessRights (50) until the
	 * next bind. */
	ssize_t (*bind_controls)(void *be_ctx, bool want, uint8_t *out, size_t cap,
				 bool *must_change);
};

/* draft-behera-ldap-password-policy-10: the request and response control. */
#define LFE_OID_PPOLICY "1.3.6.1.4.1.42.2.27.8.5.1"
/* Room bind_controls gets: the longest Password Policy response control. */
#define LFE_BIND_CTRLS_MAX 64u

/* Search access policy (the daemon's [ldap] search_* keys).
 *
 * Who may search: `access`. allow_anonymous = false refuses anonymous
 * searches whatever `access` says. Where: `base` (a search's base must be
 * at or under it) and `max_scope` (the widest scope). What: `attrs` (the
 * only attribute types a search may return or test in a filter; their
 * subtypes with options included; none of them may be secret).
 *
 * Answers, decided after RFC 4513 §6.1 and slapd's ACL behaviour:
 *  - a search refused by who/where (access, allow_anonymous, base, scope)
 *    gets insufficientAccessRights (50) and no entry. The refusal depends
 *    on the request and the identity only, never on what the directory
 *    holds, so it discloses nothing about which entries exist;
 *  - attributes outside `attrs`, and the secret ones (attr.h) always, are
 *    treated as slapd treats attributes without search/read access: not
 *    returned, and every filter item on them is Undefined, so a filter on
 *    them can never make an entry match (no error: an error would tell
 *    which attributes exist);
 *  - the root DSE (base "", scope base) stays readable to everyone, bound
 *    or not, whatever the policy: clients need it for discovery
 *    (namingContexts, supportedLDAPVersion) before they bind. */
enum lfe_search_access {
	LFE_SEARCH_ACCESS_DEFAULT = 0,  /* anonymous if allow_anonymous, else bound */
	LFE_SEARCH_ACCESS_ANONYMOUS,    /* anyone */
	LFE_SEARCH_ACCESS_BOUND,        /* bound identities only */
	LFE_SEARCH_ACCESS_NONE,         /* nobody (the root DSE excepted) */
};

enum lfe_search_scope_max {
	LFE_SEARCH_SCOPE_SUB = 0,       /* any scope (default) */
	LFE_SEARCH_SCOPE_ONE,           /* base and one level */
	LFE_SEARCH_SCOPE_BASE,          /* base only */
};

#define LFE_SEARCH_MAX_ATTRS 32u

struct lfe_search_policy {
	enum lfe_search_access access;
	enum lfe_search_scope_max max_scope;
	const char *base;               /* normalized DN (dn.h); NULL: any base */
	size_t base_len;
	uint32_t n_attrs;               /* 0: every attribute but the secret ones */
	char attrs[LFE_SEARCH_MAX_ATTRS][LFE_ATTR_NAME_MAX];  /* types as given */
};

/* Parsers shared by the daemon's config and the session (one spelling
 * each). 0, or -EINVAL with *why set to a static reason. */
int lfe_search_access_parse(const char *s, enum lfe_search_access *out, const char **why);
int lfe_search_scope_parse(const char *s, enum lfe_search_scope_max *out, const char **why);
/* Fill p->attrs/n_attrs from a comma list of attribute types ("uid, cn,
 * mail"); "" or NULL: no restriction. Refuses empty items, malformed or
 * overlong types, options, duplicates (lfe_attr_type_eq), secret types and
 * more than LFE_SEARCH_MAX_ATTRS. On error p is unchanged. */
int lfe_search_attrs_parse(struct lfe_search_policy *p, const char *list, const char **why);

/* When the connection must be under TLS ([ldap] require_tls): NONE never;
 * BIND: a simple bind with a password over cleartext gets
 * confidentialityRequired (13) unverified; ALL: every operation but
 * StartTLS, the root DSE read and unbind gets 13 over cleartext. */
enum lfe_require_tls {
	LFE_REQUIRE_TLS_NONE = 0,
	LFE_REQUIRE_TLS_BIND,
	LFE_REQUIRE_TLS_ALL,
};

/* "none", "bind" or "all": 0, or -EINVAL with *why set. */
int lfe_require_tls_parse(const char *s, enum lfe_require_tls *out, const char **why);

/* Allocator for PDUs split across input chunks. get returns a buffer of at
 * least `size` bytes or NULL (then the connection is reset: LFE_SESS_ABORT).
 * spare (NULL: always true) says whether buffers are plentiful enough for
 * a connection to take more than its share: a second parked paged search
 * is only kept while it says so (session_search.c), so that under
 * pressure a connection holds what it did with one. */
struct lfe_session_alloc {
	void *(*get)(void *ctx, size_t size);
	void (*put)(void *ctx, void *buf);
	bool (*spare)(void *ctx);
	void *ctx;
};

struct lfe_session_cfg {
	size_t max_pdu;                 /* 0 → LFE_LDAP_DEFAULT_MAX_PDU; < 4 GiB */
	bool allow_anonymous;           /* anonymous simple bind allowed */
	const struct lfe_backend_ops *be;
	void *be_ctx;                   /* the ops' context, unless the call's
	                                 * lfe_session_io.be_ctx names one */
	struct lfe_session_alloc alloc; /* get == NULL → malloc/free */
	/* The core's DN pool (dnpool.h): a session takes a chunk for the DN of
	 * each bind with a name and password, before the verification, and
	 * keeps it while the verdict is out and, on success, as its identity
	 * until the next bind or lfe_session_fini. No room: the bind is
	 * answered busy (51) unverified. NULL → malloc/free. */
	struct lfe_dnpool *dns;
	/* Root DSE */
	const char *naming_context;     /* suffix as configured, may be NULL */
	const char *vendor_name;        /* NULL → "ldapfe" */
	const char *vendor_version;     /* NULL → omitted */
	struct lfe_search_policy search;   /* all zero: anyone allowed by
	                                    * allow_anonymous, anywhere, any
	                                    * non-secret attribute */
	bool starttls;                  /* TLS is configured: StartTLS is
	                                 * accepted and advertised in the root
	                                 * DSE; false: it gets unavailable (52) */
	enum lfe_require_tls require_tls;
};

/* Flags in lfe_session_io.flags after a call. */
enum {
	LFE_SESS_CLOSE = 1u << 0, /* send what is in out, then close (FIN) */
	LFE_SESS_ABORT = 1u << 1, /* reset the connection now (RST) */
	LFE_SESS_PENDING = 1u << 2, /* waiting for a bind verdict: input is
	                             * not consumed until lfe_session_bind_done */
	LFE_SESS_MORE = 1u << 4,  /* a search yielded its time slice with room
	                           * left: call again on a later loop turn
	                           * (without new input); a search that waits
	                           * for room sets no flag: call again when
	                           * the send queue drained */
	LFE_SESS_STARTTLS = 1u << 3, /* out ends with a StartTLS success: send
	                              * it, then start TLS; every byte after
	                              * in_used belongs to the handshake (the
	                              * session read nothing past the request) */
};

struct lfe_session_io {
	const uint8_t *in;   /* in-order stream bytes received */
	size_t in_len;
	size_t in_used;      /* out: bytes consumed (buffered counts as consumed) */
	uint8_t *out;        /* where responses are written */
	size_t out_cap;
	size_t out_len;      /* out: bytes written */
	size_t out_max;      /* the most room the caller ever offers (its send
	                      * queue empty); 0: out_cap. A search entry larger
	                      * ends the search with adminLimitExceeded. */
	unsigned flags;      /* out: LFE_SESS_* */
	/* The backend ops' context for this call: the connection's (the byte
	 * stream passes what its owner set, tls/stream.h); NULL: cfg->be_ctx. */
	void *be_ctx;
};

size_t lfe_session_size(void);

/* Initialise a session in mem (lfe_session_size() bytes, suitably aligned
 * for any object). cfg must outlive the session. */
struct lfe_session *lfe_session_init(void *mem, const struct lfe_session_cfg *cfg);

/* Release what the session holds (reassembly buffer, secrets are wiped;
 * its DN chunk goes back to the pool).
 * NULL is a no-op. The memory itself stays the caller's. */
void lfe_session_fini(struct lfe_session *s);

/* The output room that any one response but a search's fits in (the
 * longest is a WhoAmI answer with a maximal DN; a BindResponse and every
 * refusal are far smaller). */
#define LFE_SESSION_ROOM_MIN 1280u

/* Process input. Complete PDUs are answered in order, each response
 * written whole into out; a trailing partial PDU is buffered.
 *
 * Output contract: a request is started only while out has at least
 * LFE_SESSION_ROOM_MIN bytes of room, and a request gathered from split
 * input is completed only as the first response of a call; in each case
 * the call stops before the request, leaving its bytes unconsumed. Every
 * response but a search's is whole in the call that takes its request. A
 * search streams: each entry is written whole when it fits, and when the
 * next one does not (or the backend's slice is spent) the search yields
 * (lfe_session_searching) and goes on in later calls, before any later
 * request is read. Hence:
 *  - out_len > 0: call again (with out emptied) for what may follow;
 *  - a search under way: call again when send room frees, or on the next
 *    loop turn when LFE_SESS_MORE is set (in may be empty);
 *  - out_len == 0 and in_used < in_len: the rest waits for more room (or,
 *    with LFE_SESS_PENDING, for the bind verdict); present it again then;
 *  - out_len == 0 and in_used == in_len: all input taken.
 * A pending bind's response room is reserved: after the caller has queued
 * this call's out_len bytes, the room it had left stays enough for it.
 * Returns 0, or a negative errno for an internal failure (the caller then
 * aborts the connection). */
int lfe_session_process(struct lfe_session *s, struct lfe_session_io *io);

/* Deliver the verdict of a bind that returned LFE_BE_PENDING. token must be
 * the one given to ops->bind; a stale token (session reused) returns
 * -ESTALE and writes nothing. Writes the BindResponse to io->out (the room
 * reserved at dispatch, see above: -ENOSPC only if the caller offered less). */
int lfe_session_bind_done(struct lfe_session *s, uint64_t token,
			  enum lfe_be_verdict v, struct lfe_session_io *io);

/* The token that the next ops->bind call of this session will carry is
 * (gen << 32 | sequence); set the generation when the slot is reused so
 * late verdicts for an old connection are refused. */
void lfe_session_set_generation(struct lfe_session *s, uint32_t gen);

/* The connection is under TLS (LDAPS from the first byte; the session sets
 * it itself when it answers StartTLS): a StartTLS request then gets
 * operationsError (RFC 4511 §4.14.1). */
void lfe_session_set_tls(struct lfe_session *s);

/* True while a search is under way across calls (it yielded): the session
 * reads no further request until it ends; call lfe_session_process again
 * when send room frees, or on the next turn after LFE_SESS_MORE. */
bool lfe_session_searching(const struct lfe_session *s);

/* True while a PDU split across input chunks is partly gathered (the
 * transport bounds how long that may last). */
bool lfe_session_gathering(const struct lfe_session *s);

/* Bound identity: normalized DN (NUL-terminated), "" with *len 0 when
 * anonymous or while a bind is in flight. Valid until the session's next
 * bind or lfe_session_fini. */
const char *lfe_session_bound_dn(const struct lfe_session *s, size_t *len);

/* The normalized DN of the bind in flight (NULL when none), valid until
 * its verdict is delivered. */
const char *lfe_session_pending_dn(const struct lfe_session *s, size_t *len);

struct lfe_session_stats {
	uint64_t binds_ok, binds_invalid, binds_other;
	uint64_t searches, extended, protocol_errors;
};
const struct lfe_session_stats *lfe_session_stats(const struct lfe_session *s);

#endif
