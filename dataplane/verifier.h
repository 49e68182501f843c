/* dataplane/verifier.h — slow password schemes verified off the poll cores.
 *
 * Workers submit jobs; verifier threads (EAL control threads, never on a
 * worker's CPU) run them and post each verdict on the submitting worker's
 * completion ring. The worker collects verdicts with lfe_verifier_poll(),
 * which hands each to the completion hook the worker gives it: the verifier
 * knows nothing of connections or sessions.
 *
 * Thread rules: submit and poll run on the worker's lcore; new/free on the
 * main lcore while no worker runs.
 */
#ifndef LFE_DATAPLANE_VERIFIER_H
#define LFE_DATAPLANE_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "ldap/session.h"
#include "tcp.h"

struct lfe_daemon;
struct lfe_worker;
struct lfe_verifier;

/* Called once per completed job, on the submitting worker's lcore. */
typedef void (*lfe_verify_done_fn)(struct lfe_worker *w, struct lfe_tcp_handle h,
				   uint64_t token, enum lfe_be_verdict v);

struct lfe_verifier *lfe_verifier_new(struct lfe_daemon *d, char *err, size_t errlen);
/* Stop and join the threads, wiping what is queued. NULL is a no-op. */
void lfe_verifier_free(struct lfe_verifier *v);
/* Queue a verification for worker w. Returns 0, or -ENOBUFS when the queue is
 * full (the caller answers busy) or -E2BIG for a password too long to queue. */
int lfe_verifier_submit(struct lfe_verifier *v, struct lfe_worker *w, struct lfe_tcp_handle h,
			uint64_t token, const char *ndn, size_t ndn_len,
			const uint8_t *pw, size_t pw_len);
/* Deliver completions queued for w to done (from w's loop). Returns how many. */
unsigned lfe_verifier_poll(struct lfe_verifier *v, struct lfe_worker *w, lfe_verify_done_fn done);

#endif
