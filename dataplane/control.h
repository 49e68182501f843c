/* dataplane/control.h — the daemon's control socket (what `ldapfectl
 * status|stats|conns|reload|drain|top` talk to).
 *
 * A Unix stream socket, <EAL runtime dir>/ldapfe.ctl (by default
 * /var/run/dpdk/<file-prefix>/ldapfe.ctl), mode 0660, owned by [daemon]
 * user/group when set. One control thread (a plain pthread, never an
 * lcore) accepts one client at a time: a request is one line of at most
 * LFE_CTL_REQ_MAX bytes, the answer is a status line ("ok" or
 * "error <reason>") and a body, then the connection closes. Requests:
 *
 *   status [json]            version, uptime, ports, workers, store, limits
 *   stats                    lines "CORE NAME VALUE" (CORE = lcore id or
 *                            "total"), NAME from the counter tables
 *                            (wstats.h), then "rate ..." lines
 *   conns LIMIT SHOWDN [json] open connections per core, at most LIMIT each
 *   reload [json]            re-read the config file; apply the live keys
 *                            (also on SIGHUP); with TLS, a new SSL_CTX
 *                            from the [tls] files for new connections
 *   drain SECONDS [json]     stop accepting, wait for connections to end,
 *                            then stop the daemon (exit 0)
 *
 * Thread rules: the control thread reads only the workers' published
 * counters. What needs the worker itself goes through lock-free
 * request/answer slots that each worker serves from its loop
 * (worker_ctl.h: lfe_worker_ctl_poll, at most every LFE_PUBLISH_US; the
 * worker knows nothing else of the control socket): a connection snapshot
 * (bounded to LFE_CTL_CONNS_MAX entries per core) and the reload barrier
 * (every worker parks at that safe point while the control thread writes the
 * live keys into d->cfg, then re-reads them into its own copies).
 *
 * The parts (control_int.h): control.c the server, control_status.c what
 * status, stats and conns answer, control_reload.c reload.
 */
#ifndef LFE_DATAPLANE_CONTROL_H
#define LFE_DATAPLANE_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

#include "dataplane/config.h"
#include "dataplane/daemon.h"

#define LFE_CTL_REQ_MAX   1024u   /* bytes of one request line, newline included */
#define LFE_CTL_SOCK_NAME "ldapfe.ctl"

struct lfe_control;

/* Read and validate a config file (rte_cfgfile). 0, or -EINVAL with a
 * message naming the file, the key and the reason in err. */
int lfe_config_load(const char *path, struct lfe_config *c, char *err, size_t errlen);

/* Create the socket (as root, before the privileges are dropped: uid/gid
 * (uid 0 = leave) own it) and start the control thread. config_path must
 * outlive the control. NULL with a message in err on failure. */
struct lfe_control *lfe_control_start(struct lfe_daemon *d, const char *config_path, uid_t uid,
				      gid_t gid, char *err, size_t errlen);
/* Stop the thread, remove the socket, free. NULL is a no-op. Call after the
 * workers returned. */
void lfe_control_stop(struct lfe_control *ctl);

/* Ask the control thread to reload as `reload` does (SIGHUP): it runs
 * within its poll interval (200 ms) and logs the outcome. Async-signal-
 * safe (one atomic store); ctl may be NULL. */
void lfe_control_request_reload(struct lfe_control *ctl);

#endif
