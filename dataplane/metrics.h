/* dataplane/metrics.h — Prometheus /metrics over HTTP (libmicrohttpd).
 *
 * Served on [admin] metrics_listen (an address of the kernel's network,
 * default 127.0.0.1:9389) by libmicrohttpd's own thread — a control thread
 * that only reads the workers' published counters, never a worker. Text
 * exposition format 0.0.4: every counter of the tables (wstats.h) with
 * their help, as ldapfe_NAME_total{core="LCORE"} (NAME as in `ldapfectl
 * stats`; gauges as ldapfe_NAME), drops as ldapfe_drops_total{core,reason}
 * (reason="none" too, always 0), binds
 * answered as ldapfe_binds_total{core,result=ok|failed|busy|throttled},
 * ports as ldapfe_port_*{port="N"}. Anything but GET /metrics is 404/405.
 */
#ifndef LFE_DATAPLANE_METRICS_H
#define LFE_DATAPLANE_METRICS_H

#include <stddef.h>

#include "dataplane/daemon.h"

/* Connections at once: in all, and from one client address (beyond it a
 * connection is closed at accept). Each idles out after 10 s and holds at
 * most 32 KiB. */
#define LFE_METRICS_CONNS           64u
#define LFE_METRICS_CONNS_PER_ADDR  4u

struct lfe_metrics;

/* Listen on d->cfg.metrics_listen (must be non-empty and valid) and serve.
 * NULL with a message in err on failure. */
struct lfe_metrics *lfe_metrics_start(struct lfe_daemon *d, char *err, size_t errlen);
/* Stop serving and free. NULL is a no-op. */
void lfe_metrics_stop(struct lfe_metrics *m);

#endif
