/* dataplane/telemetry.c — counters through rte_telemetry and on stdout.
 *
 * "/ldapfe/stats" answers a dict: "lcore_N" → that worker's counters (every
 * row of the counter tables, wstats.h, by its `ldapfectl stats` name; drop
 * reasons only when not 0), and "total" → their sum.
 * Reach it with DPDK's usertools/dpdk-telemetry.py -f PREFIX (Debian's dpdk
 * package does not ship it; tests/integration/lib.sh has a small client
 * for the same socket, /var/run/dpdk/PREFIX/dpdk_telemetry.v2).
 *
 * The counters are the workers' published copies (relaxed atomics, at
 * most LFE_PUBLISH_US old), so reading never disturbs a poll loop.
 */
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "dataplane/telemetry.h"
#include "dataplane/worker.h"

/* rte_telemetry callbacks (DPDK 22.11) take no context argument, so the one
 * daemon of the process is reached through this pointer, set once before
 * the command is registered and never changed. */
static const struct lfe_daemon *tel_daemon;

/* Every counter of the tables (wstats.h) by its name; the rows of a
 * LFE_CTR_SPARSE group (drops) only when not 0: telemetry dicts are
 * bounded and most drop reasons are zero. */
static void add_stats(struct rte_tel_data *t, const struct lfe_wstats *s)
{
	for (size_t g = 0; lfe_wstats_groups[g]; g++) {
		const struct lfe_ctr_group *gr = lfe_wstats_groups[g];
		for (size_t i = 0; i < gr->n; i++) {
			uint64_t v = lfe_ctr_get(s, &gr->rows[i]);
			if ((gr->table->flags & LFE_CTR_SPARSE) && v == 0)
				continue;
			rte_tel_data_add_dict_u64(t, gr->rows[i].name, v);
		}
	}
}

static int cmd_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct lfe_daemon *dm = tel_daemon;
	struct lfe_wstats sum;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (dm == NULL)
		return 0;
	for (uint32_t k = 0; k < dm->n_workers; k++) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		struct lfe_wstats s;
		char name[32];
		if (c == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		lfe_stats_read(dm->w[k], &s);
		add_stats(c, &s);
		snprintf(name, sizeof(name), "lcore_%u", dm->w[k]->lcore);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	struct rte_tel_data *c = rte_tel_data_alloc();
	if (c == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(c);
	lfe_stats_sum(dm, &sum);
	add_stats(c, &sum);
	rte_tel_data_add_dict_container(d, "total", c, 0);
	return 0;
}

int lfe_telemetry_init(struct lfe_daemon *d)
{
	tel_daemon = d;
	return rte_telemetry_register_cmd("/ldapfe/stats", cmd_stats,
					  "ldapfe per-lcore counters. No parameters");
}

void lfe_stats_print(const struct lfe_daemon *d, FILE *f, const char *prefix)
{
	for (uint32_t k = 0; k < d->n_workers; k++) {
		struct lfe_wstats s;
		lfe_stats_read(d->w[k], &s);
		double busy = s.total_cycles ? 100.0 * (double)s.busy_cycles / (double)s.total_cycles : 0.0;
		uint64_t drops = 0;
		for (unsigned i = 1; i < LFE_DROP_MAX; i++)
			drops += s.drops[i];
		fprintf(f,
			"%slcore %u: rx %" PRIu64 " tx %" PRIu64 " conns %" PRIu64 " active %" PRIu64
			" opened binds ok %" PRIu64 " failed %" PRIu64 " offloaded %" PRIu64
			" searches %" PRIu64 " drops %" PRIu64 " busy %.1f%%\n",
			prefix, d->w[k]->lcore, s.rx_pkts, s.tx_pkts, s.conns_active, s.conns_opened,
			s.binds_ok, s.binds_failed, s.binds_offloaded, s.searches, drops, busy);
		for (unsigned i = 1; i < LFE_DROP_MAX; i++)
			if (s.drops[i])
				fprintf(f, "%slcore %u:   drop %s %" PRIu64 "\n", prefix, d->w[k]->lcore,
					lfe_net_drop_names[i], s.drops[i]);
	}
	fflush(f);
}
