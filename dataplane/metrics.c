/* dataplane/metrics.c — see metrics.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>
#include <rte_ethdev.h>

#include "dataplane/metrics.h"
#include "dataplane/worker.h"

struct lfe_metrics {
	struct lfe_daemon *d;
	struct MHD_Daemon *mhd;
	double start_time;      /* unix seconds */
};

/* The port counters /metrics shows of the driver's struct rte_eth_stats
 * (ldapfe_NAME_total{port}). */
#define E struct rte_eth_stats
static const struct lfe_ctr port_rows[] = {
	LFE_CTR_ROW(E, ipackets, "port_rx_packets", LFE_CTR_C, "Frames the port received (driver counter)."),
	LFE_CTR_ROW(E, opackets, "port_tx_packets", LFE_CTR_C, "Frames the port sent (driver counter)."),
	LFE_CTR_ROW(E, imissed, "port_rx_missed", LFE_CTR_C, "Frames the port dropped for lack of room (driver counter)."),
};
#undef E

/* A group of counters: a metric per row, or one labelled family. */
static void group(FILE *f, const struct lfe_daemon *d, const struct lfe_wstats *s, const struct lfe_ctr_group *gr)
{
	const struct lfe_ctr_table *t = gr->table;
	char n[96];
	if (t->family) {
		fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", t->family, t->family_help, t->family);
		for (uint32_t k = 0; k < d->n_workers; k++)
			for (size_t i = 0; i < gr->n; i++)
				fprintf(f, "%s{core=\"%u\",%s=\"%s\"} %" PRIu64 "\n", t->family, d->w[k]->lcore,
					t->family_label, gr->rows[i].label, lfe_ctr_get(&s[k], &gr->rows[i]));
		return;
	}
	for (size_t i = 0; i < gr->n; i++) {
		const struct lfe_ctr *c = &gr->rows[i];
		lfe_ctr_prom_name(gr, c, n, sizeof(n));
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", n, c->help, n, c->kind == LFE_CTR_GAUGE ? "gauge" : "counter");
		for (uint32_t k = 0; k < d->n_workers; k++)
			fprintf(f, "%s{core=\"%u\"} %" PRIu64 "\n", n, d->w[k]->lcore, lfe_ctr_get(&s[k], c));
	}
}

static void page(const struct lfe_metrics *m, FILE *f)
{
	const struct lfe_daemon *d = m->d;
	static struct lfe_wstats s[LFE_MAX_WORKERS];

	for (uint32_t k = 0; k < d->n_workers; k++)
		lfe_stats_read(d->w[k], &s[k]);
	fprintf(f, "# HELP ldapfe_info The running ldapfe.\n# TYPE ldapfe_info gauge\n"
		   "ldapfe_info{version=\"%s\"} 1\n", LFE_VERSION);
	fprintf(f, "# HELP ldapfe_start_time_seconds Start of the daemon, seconds since the epoch.\n"
		   "# TYPE ldapfe_start_time_seconds gauge\nldapfe_start_time_seconds %.3f\n", m->start_time);
	fprintf(f, "# HELP ldapfe_draining 1 while ldapfectl drain runs.\n# TYPE ldapfe_draining gauge\n"
		   "ldapfe_draining %d\n", atomic_load(&((struct lfe_daemon *)d)->draining) ? 1 : 0);
	/* Every counter of the tables (wstats.h), with its help and kind;
	 * then the labelled families over them (ldapfe_binds_total). */
	for (size_t g = 0; lfe_wstats_groups[g]; g++)
		group(f, d, s, lfe_wstats_groups[g]);
	for (size_t g = 0; lfe_wstats_families[g]; g++)
		group(f, d, s, lfe_wstats_families[g]);
	fprintf(f, "# HELP ldapfe_bind_duration_seconds Time to verify a bind: path=inline on the core (store "
		   "lookup and fast-scheme check) and path=cache (a verified-credential cache hit) from the "
		   "start of the core's loop turn that handles the request to the verdict, path=offload from "
		   "submit to the verifier until the verdict is back on the core (slow schemes).\n"
		   "# TYPE ldapfe_bind_duration_seconds histogram\n");
	static const char *const path[LFE_LAT_PATHS] = { "inline", "offload", "cache" };
	for (uint32_t k = 0; k < d->n_workers; k++) {
		for (unsigned p = 0; p < LFE_LAT_PATHS; p++) {
			struct lfe_lat_hist h;
			uint64_t cum = 0;
			unsigned lc = d->w[k]->lcore;
			lfe_lat_read(d->w[k], p, &h);
			for (unsigned b = 0; b < LFE_LAT_BUCKETS; b++) {
				cum += h.bucket[b];
				fprintf(f, "ldapfe_bind_duration_seconds_bucket{core=\"%u\",path=\"%s\",le=\"%g\"} %" PRIu64
					"\n", lc, path[p], lfe_lat_bound_ns(b) / 1e9, cum);
			}
			fprintf(f, "ldapfe_bind_duration_seconds_bucket{core=\"%u\",path=\"%s\",le=\"+Inf\"} %" PRIu64 "\n",
				lc, path[p], h.count);
			fprintf(f, "ldapfe_bind_duration_seconds_sum{core=\"%u\",path=\"%s\"} %.9f\n", lc, path[p],
				h.sum_ns / 1e9);
			fprintf(f, "ldapfe_bind_duration_seconds_count{core=\"%u\",path=\"%s\"} %" PRIu64 "\n", lc, path[p],
				h.count);
		}
	}
	/* Per port: the link (a bit field of struct rte_eth_link), then the
	 * driver's counters by port_rows. */
	static struct rte_eth_stats es[LFE_CFG_MAX_PORTS];
	fprintf(f, "# HELP ldapfe_port_link_up 1 when the port's link is up.\n# TYPE ldapfe_port_link_up gauge\n");
	for (uint32_t i = 0; i < d->n_ports; i++) {
		struct rte_eth_link link;
		memset(&link, 0, sizeof(link));
		rte_eth_link_get_nowait(d->port[i].port_id, &link);
		fprintf(f, "ldapfe_port_link_up{port=\"%u\"} %u\n", i, (unsigned)link.link_status);
		if (rte_eth_stats_get(d->port[i].port_id, &es[i]) != 0)
			memset(&es[i], 0, sizeof(es[i]));
	}
	for (size_t j = 0; j < sizeof(port_rows) / sizeof(port_rows[0]); j++) {
		const struct lfe_ctr *c = &port_rows[j];
		fprintf(f, "# HELP ldapfe_%s_total %s\n# TYPE ldapfe_%s_total counter\n", c->name, c->help, c->name);
		for (uint32_t i = 0; i < d->n_ports; i++)
			fprintf(f, "ldapfe_%s_total{port=\"%u\"} %" PRIu64 "\n", c->name, i, lfe_ctr_value(&es[i], c));
	}
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size,
			      void **con_cls)
{
	struct lfe_metrics *m = cls;
	struct MHD_Response *r;
	unsigned code = MHD_HTTP_OK;
	char *buf = NULL;
	size_t len = 0;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (*upload_data_size) {
		*upload_data_size = 0;   /* a body is never read */
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (strcmp(url, "/metrics") != 0) {
		code = MHD_HTTP_NOT_FOUND;
	} else {
		FILE *f = open_memstream(&buf, &len);
		if (f == NULL)
			return MHD_NO;
		page(m, f);
		if (fclose(f) != 0) {
			free(buf);
			return MHD_NO;
		}
	}
	if (code != MHD_HTTP_OK) {
		static const char nf[] = "ldapfe serves GET /metrics only\n";
		r = MHD_create_response_from_buffer(sizeof(nf) - 1, (void *)nf, MHD_RESPMEM_PERSISTENT);
	} else {
		r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	}
	if (r == NULL) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				code == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain");
	enum MHD_Result rc = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return rc;
}

struct lfe_metrics *lfe_metrics_start(struct lfe_daemon *d, char *err, size_t errlen)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	uint32_t addr;
	uint16_t port;
	struct lfe_metrics *m;

	if (lfe_config_parse_listen(d->cfg.metrics_listen, &addr, &port) < 0) {
		snprintf(err, errlen, "[admin] metrics_listen: \"%s\": not ADDRESS:PORT", d->cfg.metrics_listen);
		return NULL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		snprintf(err, errlen, "metrics: out of memory");
		return NULL;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	m->start_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	m->d = d;
	sin.sin_addr.s_addr = htonl(addr);
	sin.sin_port = htons(port);
	m->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, port, NULL, NULL, answer, m,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
				  /* per client address, so one scraper's address (or one
				   * attacker's) cannot take every slot from the others */
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)LFE_METRICS_CONNS,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)LFE_METRICS_CONNS_PER_ADDR,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
				  MHD_OPTION_END);
	if (m->mhd == NULL) {
		snprintf(err, errlen, "[admin] metrics_listen: cannot serve on %s (address in use or not local?)",
			 d->cfg.metrics_listen);
		free(m);
		return NULL;
	}
	return m;
}

void lfe_metrics_stop(struct lfe_metrics *m)
{
	if (m == NULL)
		return;
	MHD_stop_daemon(m->mhd);
	free(m);
}
