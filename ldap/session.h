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
 * lfe_session_size() bytes (a per-core pool slot).
 */
#ifndef LFE_LDAP_SESSION_H
#define LFE_LDAP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msg.h"

struct lfe_session;

/* What a backend answers for a simple bind. */
enum lfe_be_verdict {
	LFE_BE_OK = 0,        /* credentials valid */
	LFE_BE_INVALID = 1,   /* unknown DN or wrong password: the same answer */
	LFE_BE_PENDING = 2,   /* a slow scheme is being verified elsewhere; the
	                       * result arrives via lfe_session_bind_done() */
	LFE_BE_BUSY = 3,      /* cannot take the verification now (queue full) */
};

/* A search as the backend sees it. base_ndn is normalized (dn.h). */
struct lfe_be_search {
	const char *base_ndn;
	size_t base_ndn_len;
	const struct lfe_search_req *req;   /* filter, scope, attrs, limits */
};

/* Called by the backend once per matching entry; the session encodes a
 * SearchResultEntry (selecting the requested attributes itself). Returns 0
 * to continue, or a negative errno to stop (-ENOSPC: output full;
 * the session then ends the search with adminLimitExceeded). */
typedef int (*lfe_be_emit_fn)(void *emit_ctx, struct lfe_bytes dn,
			      const struct lfe_ldap_attr *attrs, uint32_t n_attrs);

struct lfe_backend_ops {
	/* Verify a simple bind of normalized DN ndn with password pw.
	 * `token` identifies this request if the verdict is LFE_BE_PENDING; the
	 * backend hands it back to lfe_session_bind_done(). Must do the same
	 * work for an unknown DN as for a wrong password. */
	enum lfe_be_verdict (*bind)(void *be_ctx, uint64_t token,
				    const char *ndn, size_t ndn_len,
				    const uint8_t *pw, size_t pw_len);
	/* Run a search; call emit for each entry that matches. Returns an
	 * LDAP result code for SearchResultDone (LFE_RC_SUCCESS,
	 * LFE_RC_NO_SUCH_OBJECT, LFE_RC_SIZE_LIMIT_EXCEEDED, ...).
	 * May be NULL: searches other than the root DSE then answer
	 * unwillingToPerform. */
	int (*search)(void *be_ctx, const struct lfe_be_search *s,
		      lfe_be_emit_fn emit, void *emit_ctx);
};

/* Allocator for PDUs split across input chunks. get returns a buffer of at
 * least `size` bytes or NULL (then the connection is reset: LFE_SESS_ABORT). */
struct lfe_session_alloc {
	void *(*get)(void *ctx, size_t size);
	void (*put)(void *ctx, void *buf);
	void *ctx;
};

struct lfe_session_cfg {
	size_t max_pdu;                 /* 0 → LFE_LDAP_DEFAULT_MAX_PDU */
	bool allow_anonymous;           /* anonymous simple bind allowed */
	const struct lfe_backend_ops *be;
	void *be_ctx;
	struct lfe_session_alloc alloc; /* get == NULL → malloc/free */
	/* Root DSE */
	const char *naming_context;     /* suffix as configured, may be NULL */
	const char *vendor_name;        /* NULL → "ldapfe" */
	const char *vendor_version;     /* NULL → omitted */
};

/* Flags in lfe_session_io.flags after a call. */
enum {
	LFE_SESS_CLOSE = 1u << 0, /* send what is in out, then close (FIN) */
	LFE_SESS_ABORT = 1u << 1, /* reset the connection now (RST) */
	LFE_SESS_PENDING = 1u << 2, /* waiting for a bind verdict: input is
	                             * not consumed until lfe_session_bind_done */
	LFE_SESS_WANT_ROOM = 1u << 3, /* a complete request waits for output
	                             * room (it may already be consumed, e.g.
	                             * gathered from split input): call again
	                             * with more room, with or without input */
};

struct lfe_session_io {
	const uint8_t *in;   /* in-order stream bytes received */
	size_t in_len;
	size_t in_used;      /* out: bytes consumed (buffered counts as consumed) */
	uint8_t *out;        /* where responses are written */
	size_t out_cap;
	size_t out_len;      /* out: bytes written */
	unsigned flags;      /* out: LFE_SESS_* */
};

size_t lfe_session_size(void);

/* Initialise a session in mem (lfe_session_size() bytes, suitably aligned
 * for any object). cfg must outlive the session. */
struct lfe_session *lfe_session_init(void *mem, const struct lfe_session_cfg *cfg);

/* Release what the session holds (reassembly buffer, secrets are wiped).
 * NULL is a no-op. The memory itself stays the caller's. */
void lfe_session_fini(struct lfe_session *s);

/* Process input. Complete PDUs are answered in order; a trailing partial
 * PDU is buffered. When out is too small for the next response,
 * LFE_SESS_WANT_ROOM is set (in_used may still equal in_len, if the request
 * was gathered from split input); when a bind verdict is pending,
 * LFE_SESS_PENDING. Either way the caller presents the rest again later. Returns 0, or a negative errno for an internal failure (the caller
 * then aborts the connection). */
int lfe_session_process(struct lfe_session *s, struct lfe_session_io *io);

/* Deliver the verdict of a bind that returned LFE_BE_PENDING. token must be
 * the one given to ops->bind; a stale token (session reused) returns
 * -ESTALE and writes nothing. Writes the BindResponse to io->out. */
int lfe_session_bind_done(struct lfe_session *s, uint64_t token,
			  enum lfe_be_verdict v, struct lfe_session_io *io);

/* The token that the next ops->bind call of this session will carry is
 * (gen << 32 | sequence); set the generation when the slot is reused so
 * late verdicts for an old connection are refused. */
void lfe_session_set_generation(struct lfe_session *s, uint32_t gen);

/* True while a PDU split across input chunks is partly gathered (the
 * transport bounds how long that may last). */
bool lfe_session_gathering(const struct lfe_session *s);

/* Bound identity: normalized DN, empty when anonymous. */
const char *lfe_session_bound_dn(const struct lfe_session *s, size_t *len);

struct lfe_session_stats {
	uint64_t binds_ok, binds_invalid, binds_other;
	uint64_t searches, extended, protocol_errors;
};
const struct lfe_session_stats *lfe_session_stats(const struct lfe_session *s);

#endif
