/* dataplane/telemetry.h — counters out: rte_telemetry commands (so
 * dpdk-telemetry.py works) and the periodic stats line.
 * Reads only the workers' published copies (lfe_stats_read). */
#ifndef LFE_DATAPLANE_TELEMETRY_H
#define LFE_DATAPLANE_TELEMETRY_H

#include <stdio.h>

#include "dataplane/daemon.h"

int lfe_telemetry_init(struct lfe_daemon *d);
void lfe_stats_print(const struct lfe_daemon *d, FILE *f, const char *prefix);

#endif
