/* dataplane/glue.h — one worker's TCP stack wired to its LDAP sessions and
 * the sessions to the store (glue.c). Runs on the worker's lcore only. */
#ifndef LFE_DATAPLANE_GLUE_H
#define LFE_DATAPLANE_GLUE_H

#include "ldap/session.h"
#include "net/tcp.h"

struct lfe_worker;
struct lfe_config;

/* True when port is one of [ldap] ldaps_ports (connections speak TLS from
 * their first byte). */
bool lfe_glue_is_ldaps(const struct lfe_config *cf, uint16_t port);

extern const struct lfe_tcp_ops lfe_glue_tcp_ops;
extern const struct lfe_backend_ops lfe_glue_backend_ops;

/* The worker's bind policy (w->auth, backend/auth.h) on its reader,
 * throttle and cache, with the verifier as its offload: call once they
 * are made, before the worker's loop. */
void lfe_glue_auth_init(struct lfe_worker *w);

/* A verdict came back from a verifier thread (the worker's completion hook,
 * see verifier.h): answered only if h still names a live connection whose
 * session waits for token. */
void lfe_glue_bind_done(struct lfe_worker *w, struct lfe_tcp_handle h, uint64_t token,
			enum lfe_be_verdict v);

/* A handshake step came back from a crypto thread (the worker's tlsoff
 * poll hook, see tlsoff.h): its bytes go out, the session runs over the
 * records that came with it, and TCP offers what waited meanwhile. */
struct lfe_tlsoff_job;
void lfe_glue_handshake_done(void *worker, struct lfe_tlsoff_job *job);

/* The bind peek (worker.h, w->bind_peek): when seg's payload starts with a
 * whole simple BindRequest, make its credential-cache key and prefetch its
 * buckets into w->peek[slot & 1]; else empty that slot. The worker calls it for a
 * frame while it handles the frame before, and empties the slot after. */
void lfe_glue_bind_peek(struct lfe_worker *w, const struct lfe_tcp_seg *seg, unsigned slot);

#endif
