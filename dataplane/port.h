/* dataplane/port.h — DPDK ports: hot-plug the configured vdevs, queues,
 * mbuf pools per NUMA socket, RSS or software steering.
 * Called from the main lcore only, before workers start / after they stop. */
#ifndef LFE_DATAPLANE_PORT_H
#define LFE_DATAPLANE_PORT_H

#include <stddef.h>

#include "dataplane/daemon.h"

/* After n_workers/lcore_ids are known, before the workers are made (they
 * take the mbuf pools and queue layout decided here). 0 or -1 with err. */
int lfe_ports_setup(struct lfe_daemon *d, char *err, size_t errlen);
void lfe_ports_close(struct lfe_daemon *d);

#endif
