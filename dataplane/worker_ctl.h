/* dataplane/worker_ctl.h — what the control thread and the workers share
 * (control.h's request/answer slots and reload barrier), and the worker's
 * side of them (worker_ctl.c). The control thread (control*.c) owns the
 * memory and asks; each worker answers from its loop, at most every
 * LFE_PUBLISH_US (lfe_worker_ctl_poll), and knows nothing else of the
 * control socket.
 *
 * Thread rules: the control thread writes a slot's parameters, then bumps
 * req (release); the worker fills the answer and sets done = req
 * (release). Only the control thread asks, one request at a time. Reload:
 * workers park while cfg_gen != cfg_release (the control thread changes
 * d->cfg meanwhile); `seen` is each worker's own.
 */
#ifndef LFE_DATAPLANE_WORKER_CTL_H
#define LFE_DATAPLANE_WORKER_CTL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dataplane/daemon.h"

#define LFE_CTL_CONNS_MAX 256u    /* connections one snapshot lists per core */

/* One connection as a snapshot lists it. */
struct lfe_conn_info {
	uint32_t raddr, laddr;
	uint16_t rport, lport;
	uint8_t state;          /* enum lfe_conn_state */
	bool bound;
	uint64_t age_us, requests;
	char dn[256];           /* only filled with show_dn; truncated */
};

enum lfe_conn_state { LFE_CS_IDLE, LFE_CS_READING, LFE_CS_VERIFYING, LFE_CS_BLOCKED };

/* The connection snapshot slot of one worker. */
struct lfe_conn_snap {
	atomic_uint req, done;
	uint32_t limit;
	bool show_dn;
	uint32_t n, total;
	uint64_t now_us;
	struct lfe_conn_info ent[LFE_CTL_CONNS_MAX];
};

struct lfe_worker_ctl {
	/* reload barrier: workers park while cfg_gen != cfg_release */
	atomic_uint cfg_gen, cfg_release;
	atomic_uint parked[LFE_MAX_WORKERS];
	unsigned seen[LFE_MAX_WORKERS];       /* each worker's own (worker side) */
	atomic_bool applied;                  /* the parked generation changed d->cfg */
	struct lfe_conn_snap *snap;           /* [n_workers] */
};

struct lfe_worker;
/* The worker's side (its lcore, from its loop): park at the reload barrier
 * when asked, re-reading the live keys of d->cfg into its own copies if
 * the reload applied; fill its snapshot slot when asked. NULL wc: no-op. */
void lfe_worker_ctl_poll(struct lfe_worker_ctl *wc, struct lfe_worker *w);

#endif
