/* ldap/session_int.h — what the parts of the LDAP session share (internal:
 * only ldap/session*.c include it).
 *
 *   session.c         memory, output, bind, extended operations, dispatch,
 *                     framing, the per-connection API (session.h); the bind
 *                     path (lfe_session_process → handle_pdu → do_bind)
 *                     stays inside it
 *   session_search.c  search: attribute selection, the policy's view of an
 *                     entry, the root DSE, paged results (RFC 2696), a
 *                     search that yields and goes on in later calls
 *   session_policy.c  the policy's words as the configuration spells them
 *                     (lfe_*_parse)
 *
 * Thread rules as session.h: a session belongs to one thread (one lcore);
 * nothing in it is shared. A struct search_run belongs to its session
 * (s->run's list) and comes from the session's allocator.
 */
#ifndef LFE_LDAP_SESSION_INT_H
#define LFE_LDAP_SESSION_INT_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/dnpool.h"
#include "ldap/session.h"

#define HDR_CAP 16u               /* longest LDAPMessage header + peek */
#define RESULT_RESERVE 160u       /* any LDAPResult we send, our diagnostics */

#define OID_WHOAMI "1.3.6.1.4.1.4203.1.11.3"
#define OID_STARTTLS "1.3.6.1.4.1.1466.20037"     /* RFC 4511 §4.14 */
#define OID_PAGED "1.2.840.113556.1.4.319"        /* RFC 2696 */

/* Entries of session.c's ctl_table: the controls honoured. */
#define N_CTL 2u

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
	struct search_run *run;   /* a search that yielded, then the paged
	                           * searches parked between pages (a list,
	                           * struct search_run); NULL: none */
	struct lfe_session_stats st;
};
_Static_assert(LFE_DN_MAX < UINT16_MAX, "dn_len holds any DN");

/* The backend ops' context of this call: the connection's, else the
 * configuration's (session.h). */
static inline void *be_ctx(const struct lfe_session *s, const struct lfe_session_io *io)
{
	return io->be_ctx ? io->be_ctx : s->cfg->be_ctx;
}
_Static_assert(LFE_DN_MAX + 1 <= LFE_DNPOOL_CHUNK_MAX, "a DN pool chunk holds any DN");

/* An entry larger than the connection can ever queue at once goes out in
 * parts, one per call, each the next window of the same message: off bytes
 * of total sent so far, sum the message's hash (msg.h). The backend emits
 * the same candidate again for each part; if the bytes changed (the store
 * was written between two parts) the connection is reset rather than send
 * a message made of two entries. */
struct entry_part {
	uint64_t off, total, sum;
};

/* A search that yielded: its request (copied: the input it came in is
 * consumed) and the backend's place, held from the yield to its
 * SearchResultDone; one allocation, from the session's allocator. A paged
 * search parked between pages (RFC 2696) is one too, marked parked: the
 * backend's place after its last page, the request's identity and the
 * cookie of its next page (no request: pdu_len 0, unless it was a run
 * whose page filled, parked in place). s->run lists them: the search under
 * way (at most one) first, then the parked ones, most recently used first,
 * at most PAGED_MAX (session_search.c). */
struct search_run {
	uint64_t resume[(LFE_BE_RESUME_SIZE + 7) / 8];   /* the backend's, opaque */
	struct search_run *next;  /* s->run's list */
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

/* Paged searches parked per connection, at most (session_search.c). */
#define PAGED_MAX 4u

/* ---------------------------------------------------------------- memory */

static inline bool buf_spare(const struct lfe_session *s)
{
	const struct lfe_session_alloc *a = &s->cfg->alloc;
	return a->spare == NULL || a->spare(a->ctx);
}

static inline void *buf_get(struct lfe_session *s, size_t n)
{
	const struct lfe_session_alloc *a = &s->cfg->alloc;
	return a->get ? a->get(a->ctx, n) : malloc(n);
}

static inline void buf_put(struct lfe_session *s, void *p)
{
	const struct lfe_session_alloc *a = &s->cfg->alloc;
	if (a->get)
		a->put(a->ctx, p);
	else
		free(p);
}

/* --------------------------------------------------------------- output */

static inline size_t room(const struct lfe_session_io *io)
{
	return io->out_cap - io->out_len;
}

static inline ssize_t emit_result(struct lfe_session_io *io, int32_t msgid,
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
static inline int appended(struct lfe_session_io *io, ssize_t n)
{
	if (n == -ENOSPC)
		return H_STOP;
	if (n < 0)
		return (int)n;
	io->out_len += (size_t)n;
	return H_DONE;
}

/* Append a result; H_STOP when it does not fit now. */
static inline int reply(struct lfe_session_io *io, int32_t msgid, enum lfe_ldap_op resp_op,
			enum lfe_ldap_rc code, const char *diag)
{
	return appended(io, emit_result(io, msgid, resp_op, code, diag));
}

static inline bool oid_is(struct lfe_bytes oid, const char *lit)
{
	return oid.len == strlen(lit) && memcmp(oid.p, lit, oid.len) == 0;
}

/* ------------------------------------------------------ session.c gives */

/* The OIDs of the controls honoured under cfg, in ctl_table's order (the
 * root DSE's supportedControl): how many. */
uint32_t lfe_session_ctl_oids(const struct lfe_session_cfg *cfg, struct lfe_bytes oids[N_CTL]);

/* ----------------------------------------------- session_search.c gives */

/* A SearchRequest m (its PDU: pdu, plen, copied if the search yields):
 * H_DONE, H_YIELD, H_STOP or a negative errno, as handle_pdu's. */
int lfe_session_search(struct lfe_session *s, struct lfe_session_io *io,
		       const struct lfe_ldap_msg *m, const uint8_t *pdu, size_t plen);

/* The next part of the search in s->run. H_DONE when it ended (run
 * freed), H_YIELD when it goes on later, H_STOP when there is not even room
 * for its SearchResultDone yet, or a negative errno. */
int lfe_session_search_resume(struct lfe_session *s, struct lfe_session_io *io);

/* A search under way (s->run, not parked between pages)? */
static inline bool run_active(const struct lfe_session *s)
{
	return s->run && !s->run->parked;
}

/* Free one search of s->run's list (wiped first, as gbuf). */
static inline void run_put(struct lfe_session *s, struct search_run *r)
{
	explicit_bzero(r, sizeof *r + r->pdu_len);
	buf_put(s, r);
}

/* Free every search of s->run's list, under way or parked (none: no-op):
 * the connection's end. */
static inline void run_free(struct lfe_session *s)
{
	while (s->run) {
		struct search_run *r = s->run;
		s->run = r->next;
		run_put(s, r);
	}
}

#endif
