/* dataplane/control_status.c — what the control socket reports: status
 * (what is in force), stats (the counters and their rates), conns (each
 * worker's snapshot of its connections); see control.h, control_int.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "dataplane/control_int.h"
#include "tls/tls.h"

#define CTL_VERSION LFE_VERSION

static const char *const conn_state_names[] = { "idle", "reading", "verifying", "blocked" };

static void ipv4_str(uint32_t a, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

/* ------------------------------------------------------------- counters */

/* Take a sample of every worker's counters when the last is old enough. */
void lfe_ctl_rate_sample(struct lfe_control *ctl)
{
	const struct lfe_daemon *d = ctl->d;
	uint64_t t = lfe_ctl_mono_ns();
	const struct rate_sample *last = &ctl->rs[(ctl->rs_next + RATE_SAMPLES - 1) % RATE_SAMPLES];

	if (last->t_ns && t - last->t_ns < RATE_SAMPLE_MS * 1000000ull)
		return;
	struct rate_sample *s = &ctl->rs[ctl->rs_next];
	if (s->w == NULL)
		return;
	for (uint32_t k = 0; k < d->n_workers; k++)
		lfe_stats_read(d->w[k], &s->w[k]);
	s->t_ns = t;
	ctl->rs_next = (ctl->rs_next + 1) % RATE_SAMPLES;
}

/* The newest sample at least RATE_WINDOW_NS old, else the oldest one; NULL
 * when none was taken yet. */
static const struct rate_sample *rate_base(const struct lfe_control *ctl, uint64_t now)
{
	const struct rate_sample *newest_old = NULL, *oldest = NULL;
	for (unsigned i = 0; i < RATE_SAMPLES; i++) {
		const struct rate_sample *s = &ctl->rs[i];
		if (s->t_ns == 0 || s->t_ns >= now)
			continue;
		if (now - s->t_ns >= RATE_WINDOW_NS && (!newest_old || s->t_ns > newest_old->t_ns))
			newest_old = s;
		if (!oldest || s->t_ns < oldest->t_ns)
			oldest = s;
	}
	return newest_old ? newest_old : oldest;
}

/* "CORE NAME VALUE" per counter, then "rate CORE NAME PER_SECOND" for
 * every counter but the gauges, over the last second or so (from the
 * control thread's samples: no waiting here). Names, order and kinds are
 * the counter tables' (wstats.h). */
void lfe_ctl_req_stats(struct lfe_control *ctl, struct out *o)
{
	const struct lfe_daemon *d = ctl->d;
	static struct lfe_wstats s[LFE_MAX_WORKERS];
	struct lfe_wstats sum;
	uint64_t now = lfe_ctl_mono_ns();
	const struct lfe_ctr_group *const *gs = lfe_wstats_groups;

	for (uint32_t k = 0; k < d->n_workers; k++) {
		lfe_stats_read(d->w[k], &s[k]);
		for (size_t g = 0; gs[g]; g++)
			for (size_t i = 0; i < gs[g]->n; i++)
				lfe_ctl_outf(o, "%u %s %" PRIu64 "\n", d->w[k]->lcore, gs[g]->rows[i].name,
					     lfe_ctr_get(&s[k], &gs[g]->rows[i]));
	}
	lfe_stats_sum(d, &sum);
	for (size_t g = 0; gs[g]; g++)
		for (size_t i = 0; i < gs[g]->n; i++)
			lfe_ctl_outf(o, "total %s %" PRIu64 "\n", gs[g]->rows[i].name, lfe_ctr_get(&sum, &gs[g]->rows[i]));
	const struct rate_sample *b = rate_base(ctl, now);
	if (b == NULL)
		return;
	double secs = (double)(now - b->t_ns) / 1e9;
	lfe_ctl_outf(o, "rate-window %.3f\n", secs);
	for (size_t g = 0; gs[g]; g++) {
		for (size_t i = 0; i < gs[g]->n; i++) {
			const struct lfe_ctr *c = &gs[g]->rows[i];
			if (c->kind == LFE_CTR_GAUGE)
				continue;
			uint64_t tot = 0;
			for (uint32_t k = 0; k < d->n_workers; k++) {
				uint64_t y = lfe_ctr_get(&s[k], c), x = lfe_ctr_get(&b->w[k], c);
				uint64_t dv = y >= x ? y - x : 0;
				tot += dv;
				lfe_ctl_outf(o, "rate %u %s %.1f\n", d->w[k]->lcore, c->name, (double)dv / secs);
			}
			lfe_ctl_outf(o, "rate total %s %.1f\n", c->name, (double)tot / secs);
		}
	}
}

/* TLS part of status: ports, StartTLS, require_tls, the certificate. */
static void status_tls(const struct lfe_control *ctl, struct out *o, bool json)
{
	const struct lfe_daemon *d = ctl->d;
	const struct lfe_config *c = &d->cfg;
	static const char *const req[] = { "none", "bind", "all" };
	const char *rq = (unsigned)c->require_tls < 3 ? req[c->require_tls] : "?";
	const char *rl = c->tls_record_layer == LFE_TLS_RECORD_OPENSSL ? "openssl" : "ldapfe";

	if (d->tls == NULL) {
		lfe_ctl_outf(o, json ? "{\"configured\":false}" : "not configured");
		return;
	}
	/* The live context: a reload swaps it on this thread. */
	struct lfe_tls_cert cd;
	lfe_tls_cert_info(d->tls, &cd);
	int64_t days = cd.known ? (cd.expiry - (int64_t)time(NULL)) / 86400 : 0;
	if (json) {
		lfe_ctl_outf(o, "{\"configured\":true,\"ldaps_ports\":[");
		for (uint32_t i = 0; i < c->n_ldaps_ports; i++)
			lfe_ctl_outf(o, "%s%u", i ? "," : "", c->ldaps_ports[i]);
		/* the [tls] keys are in "settings" */
		lfe_ctl_outf(o, "],\"starttls\":true,\"certificate\":");
		lfe_ctl_out_jstr(o, c->tls_certificate, strlen(c->tls_certificate));
		if (cd.known) {
			lfe_ctl_outf(o, ",\"subject\":");
			lfe_ctl_out_jstr(o, cd.subject, strlen(cd.subject));
			lfe_ctl_outf(o, ",\"serial\":\"%s\",\"not_after\":\"%s\",\"days_left\":%" PRId64, cd.serial,
			     cd.not_after, days);
		}
		lfe_ctl_outf(o, "}");
		return;
	}
	lfe_ctl_outf(o, "ldaps port(s)");
	for (uint32_t i = 0; i < c->n_ldaps_ports; i++)
		lfe_ctl_outf(o, " %u", c->ldaps_ports[i]);
	if (c->n_ldaps_ports == 0)
		lfe_ctl_outf(o, " none");
	lfe_ctl_outf(o, ", StartTLS on, require_tls %s, record_layer %s, handshake_timeout_ms %" PRIu64
	     ", handshake_threads %u queue %u per_source %u, certificate %s", rq, rl,
	     c->tls_handshake_timeout_ms, c->tls_handshake_threads, c->tls_handshake_queue,
	     c->tls_handshake_per_source, c->tls_certificate);
	if (cd.known)
		lfe_ctl_outf(o, " subject \"%s\" serial %s expires %s (%s%" PRId64 " days)", cd.subject, cd.serial, cd.not_after,
		     days < 0 ? "EXPIRED " : "", days);
}

/* A text value as status prints it: bare when plain, else in quotes with
 * '"' and '\' escaped (an empty string, spaces). */
static void text_value(struct out *o, const char *v)
{
	bool plain = v[0] != '\0';
	for (const char *p = v; *p && plain; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			strchr("._,:/{}@=+_-", *p) != NULL;
	if (plain) {
		lfe_ctl_outf(o, "%s", v);
		return;
	}
	lfe_ctl_outf(o, "\"");
	for (const char *p = v; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch == '"' || ch == '\\')
			lfe_ctl_outf(o, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			lfe_ctl_outf(o, "\\x%02x", ch);
		else
			lfe_ctl_outf(o, "%c", ch);
	}
	lfe_ctl_outf(o, "\"");
}

/* The settings in force, from the schema (config.h, struct lfe_cfg_key):
 * every key by section, [portN] for each port, each value as the file
 * spells it (lfe_config_key_format). JSON: "settings":{"SECTION":{"KEY":
 * VALUE}} with numbers, true/false, lists of numbers and strings; null
 * for a key left unset. Text: "settings:" then a line per section,
 * "  [SECTION] KEY=VALUE ...", "(unset)" for a key left unset. */
static void status_settings(const struct lfe_config *c, struct out *o, bool json)
{
	size_t n;
	const struct lfe_cfg_key *t = lfe_config_keys(&n);
	char v[1280];
	bool first_sec = true;

	lfe_ctl_outf(o, json ? "\"settings\":{" : "settings:\n");
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && strcmp(t[j].section, t[i].section) == 0; j++)
			;
		bool port = strcmp(t[i].section, "port") == 0;
		for (unsigned p = 0; p < (port ? c->n_ports : 1u); p++) {
			char sec[32];
			if (port)
				snprintf(sec, sizeof sec, "port%u", p);
			else
				snprintf(sec, sizeof sec, "%s", t[i].section);
			if (json)
				lfe_ctl_outf(o, "%s\"%s\":{", first_sec ? "" : ",", sec);
			else
				lfe_ctl_outf(o, "  [%s]", sec);
			first_sec = false;
			size_t col = strlen(sec) + 4;
			bool first = true;
			for (size_t r = i; r < j; r++) {
				const struct lfe_cfg_key *k = &t[r];
				if (lfe_config_key_alias(k))
					continue;
				int rc = lfe_config_key_format(c, k, p, v, sizeof v);
				if (json) {
					lfe_ctl_outf(o, "%s\"%s\":", first ? "" : ",", k->key);
					if (rc == LFE_CFG_UNSET || rc < 0) {
						lfe_ctl_outf(o, "null");
					} else {
						switch (lfe_config_key_json(k)) {
						case LFE_CFG_JSON_NUMBER: case LFE_CFG_JSON_BOOL:
							lfe_ctl_outf(o, "%s", v);
							break;
						case LFE_CFG_JSON_LIST:
							lfe_ctl_outf(o, "[%s]", v);
							break;
						default:
							lfe_ctl_out_jstr(o, v, strlen(v));
							break;
						}
					}
				} else {
					size_t w = strlen(k->key) + 1 + (rc == 0 ? strlen(v) : 7);
					if (col + 1 + w > 100 && !first) {
						lfe_ctl_outf(o, "\n     ");
						col = 5;
					}
					lfe_ctl_outf(o, " %s=", k->key);
					if (rc == 0)
						text_value(o, v);
					else
						lfe_ctl_outf(o, rc == LFE_CFG_UNSET ? "(unset)" : "(?)");
					col += 1 + w;
				}
				first = false;
			}
			lfe_ctl_outf(o, json ? "}" : "\n");
		}
	}
	if (json)
		lfe_ctl_outf(o, "}");
}

void lfe_ctl_req_status(struct lfe_control *ctl, struct out *o, bool json)
{
	const struct lfe_daemon *d = ctl->d;
	const struct lfe_config *c = &d->cfg;
	struct lfe_store_info info;
	uint64_t up = (lfe_ctl_mono_ns() - ctl->start_ns) / 1000000000u;
	bool have_info = lfe_store_info(d->store, &info) == 0;
	struct lfe_wstats sum;
	char changed[32] = "";
	if (have_info && info.last_change) {
		struct tm tm;
		time_t t = (time_t)info.last_change;
		gmtime_r(&t, &tm);
		strftime(changed, sizeof(changed), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}

	lfe_stats_sum(d, &sum);
	if (json) {
		lfe_ctl_outf(o, "{\"version\":\"%s\",\"pid\":%d,\"uptime_s\":%" PRIu64 ",\"draining\":%s,"
		     "\"reloads\":%u,\"config\":", CTL_VERSION, (int)getpid(), up,
		     atomic_load(&d->draining) ? "true" : "false", ctl->reloads);
		lfe_ctl_out_jstr(o, ctl->config_path, strlen(ctl->config_path));
		lfe_ctl_outf(o, ",\"ports\":[");
	} else {
		lfe_ctl_outf(o, "version: ldapfe %s\npid: %d\nuptime: %" PRIu64 " s\nconfig: %s\nstate: %s\n"
		     "reloads: %u\n", CTL_VERSION, (int)getpid(), up, ctl->config_path,
		     atomic_load(&d->draining) ? "draining" : "serving", ctl->reloads);
	}
	for (uint32_t i = 0; i < d->n_ports; i++) {
		const struct lfe_port *p = &d->port[i];
		struct rte_eth_link link;
		struct rte_eth_dev_info di;
		char a[16];
		memset(&link, 0, sizeof(link));
		memset(&di, 0, sizeof(di));
		rte_eth_link_get_nowait(p->port_id, &link);
		const char *drv = rte_eth_dev_info_get(p->port_id, &di) == 0 && di.driver_name ? di.driver_name : "?";
		ipv4_str(p->addr, a);
		unsigned plen = (unsigned)__builtin_popcount(p->mask);
		char mac[18];
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", p->mac[0], p->mac[1], p->mac[2],
			 p->mac[3], p->mac[4], p->mac[5]);
		if (json) {
			lfe_ctl_outf(o, "%s{\"port\":%u,\"name\":", i ? "," : "", i);
			lfe_ctl_out_jstr(o, p->name, strlen(p->name));
			lfe_ctl_outf(o, ",\"driver\":\"%s\",\"link\":\"%s\",\"mac\":\"%s\",\"address\":\"%s/%u\","
			     "\"queues\":%u,\"steering\":%s,\"checksum_offload\":{\"rx\":%s,\"tx\":%s}}",
			     drv, link.link_status ? "up" : "down", mac, a, plen, p->n_queues,
			     p->steer ? "true" : "false", p->rx_csum ? "true" : "false",
			     p->tx_csum ? "true" : "false");
		} else {
			lfe_ctl_outf(o, "port%u: %s driver %s link %s mac %s address %s/%u queues %u%s checksums rx %s tx %s\n",
			     i, p->name, drv, link.link_status ? "up" : "down", mac, a, plen, p->n_queues,
			     p->steer ? " (software steering)" : "", p->rx_csum ? "offload" : "software",
			     p->tx_csum ? "offload" : "software");
		}
	}
	if (json) {
		lfe_ctl_outf(o, "],\"workers\":[");
		for (uint32_t k = 0; k < d->n_workers; k++)
			lfe_ctl_outf(o, "%s%u", k ? "," : "", d->lcore_ids[k]);
		lfe_ctl_outf(o, "],\"ldap_ports\":[");
		for (uint32_t i = 0; i < c->n_ldap_ports; i++)
			lfe_ctl_outf(o, "%s%u", i ? "," : "", c->ldap_ports[i]);
		lfe_ctl_outf(o, "],\"store\":{\"path\":");
		lfe_ctl_out_jstr(o, c->store_path, strlen(c->store_path));
		lfe_ctl_outf(o, ",\"suffix\":");
		lfe_ctl_out_jstr(o, d->naming, strlen(d->naming));
		if (have_info) {
			lfe_ctl_outf(o, ",\"entries\":%" PRIu64 ",\"bytes_used\":%" PRIu64 ",\"last_txnid\":%" PRIu64,
			     info.entries, (uint64_t)info.map_bytes_used, info.last_txnid);
			if (info.last_change)
				lfe_ctl_outf(o, ",\"last_change\":\"%s\"", changed);
		}
		lfe_ctl_outf(o, "},\"tls\":");
		status_tls(ctl, o, true);
		if (d->n_workers)
			lfe_ctl_outf(o, ",\"memory\":{\"per_idle_conn\":%zu,\"tcp_per_conn\":%zu,\"session_slot\":%zu,"
			     "\"dn_pool_bytes\":%" PRIu64 ",\"dn_pool_dry\":%" PRIu64 "}",
			     d->w[0]->tcp_per_conn + d->w[0]->slot_size, d->w[0]->tcp_per_conn,
			     d->w[0]->slot_size, sum.dn_pool_bytes, sum.dn_pool_dry);
		lfe_ctl_outf(o, ",\"conns_active\":%" PRIu64 ",", sum.conns_active);
		status_settings(c, o, true);
		lfe_ctl_outf(o, "}\n");
		return;
	}
	lfe_ctl_outf(o, "workers: lcore(s)");
	for (uint32_t k = 0; k < d->n_workers; k++)
		lfe_ctl_outf(o, " %u", d->lcore_ids[k]);
	lfe_ctl_outf(o, "\nldap ports:");
	for (uint32_t i = 0; i < c->n_ldap_ports; i++)
		lfe_ctl_outf(o, " %u", c->ldap_ports[i]);
	lfe_ctl_outf(o, "\nstore: %s suffix \"%s\"", c->store_path, d->naming);
	if (have_info) {
		lfe_ctl_outf(o, " entries %" PRIu64 " last txn %" PRIu64, info.entries, info.last_txnid);
		if (info.last_change)
			lfe_ctl_outf(o, " at %s", changed);
	}
	lfe_ctl_outf(o, "\ntls: ");
	status_tls(ctl, o, false);
	if (d->n_workers)
		lfe_ctl_outf(o, "\nmemory: per idle connection %zu B (TCP %zu B + session slot %zu B); "
		     "bound DNs and binds in flight hold %" PRIu64 " B of DN pool chunks (refused for want "
		     "of one: %" PRIu64 ")", d->w[0]->tcp_per_conn + d->w[0]->slot_size,
		     d->w[0]->tcp_per_conn, d->w[0]->slot_size, sum.dn_pool_bytes, sum.dn_pool_dry);
	lfe_ctl_outf(o, "\nconnections: %" PRIu64 " open\n", sum.conns_active);
	status_settings(c, o, false);
}

int lfe_ctl_req_conns(struct lfe_control *ctl, struct out *o, uint32_t limit, bool show_dn, bool json,
		      char *err, size_t errlen)
{
	const struct lfe_daemon *d = ctl->d;
	if (limit > LFE_CTL_CONNS_MAX)
		limit = LFE_CTL_CONNS_MAX;
	for (uint32_t k = 0; k < d->n_workers; k++) {
		struct lfe_conn_snap *s = &ctl->wc.snap[k];
		s->limit = limit;
		s->show_dn = show_dn;
		atomic_fetch_add_explicit(&s->req, 1, memory_order_release);
	}
	if (json)
		lfe_ctl_outf(o, "{\"cores\":[");
	for (uint32_t k = 0; k < d->n_workers; k++) {
		struct lfe_conn_snap *s = &ctl->wc.snap[k];
		unsigned want = atomic_load_explicit(&s->req, memory_order_relaxed);
		uint64_t t0 = lfe_ctl_mono_ns();
		while (atomic_load_explicit(&s->done, memory_order_acquire) != want) {
			if (lfe_ctl_mono_ns() - t0 > 1000000000u) {
				snprintf(err, errlen, "worker on lcore %u did not answer within 1 s", d->w[k]->lcore);
				return -ETIMEDOUT;
			}
			lfe_ctl_sleep_ms(1);
		}
		if (json)
			lfe_ctl_outf(o, "%s{\"lcore\":%u,\"open\":%u,\"conns\":[", k ? "," : "", d->w[k]->lcore, s->total);
		else
			lfe_ctl_outf(o, "lcore %u: %u open%s\n", d->w[k]->lcore, s->total,
			     s->total > s->n ? " (list truncated)" : "");
		for (uint32_t i = 0; i < s->n; i++) {
			const struct lfe_conn_info *ci = &s->ent[i];
			char ra[16];
			ipv4_str(ci->raddr, ra);
			if (json) {
				lfe_ctl_outf(o, "%s{\"peer\":\"%s:%u\",\"port\":%u,\"state\":\"%s\",\"age_ms\":%" PRIu64
				     ",\"requests\":%" PRIu64 ",\"bound\":%s", i ? "," : "", ra, ci->rport, ci->lport,
				     conn_state_names[ci->state], ci->age_us / 1000u, ci->requests,
				     ci->bound ? "true" : "false");
				if (show_dn && ci->bound) {
					lfe_ctl_outf(o, ",\"dn\":");
					lfe_ctl_out_jstr(o, ci->dn, strlen(ci->dn));
				}
				lfe_ctl_outf(o, "}");
			} else {
				lfe_ctl_outf(o, "  %s:%u -> :%u %s age %" PRIu64 ".%03" PRIu64 " s requests %" PRIu64 " %s%s%s\n",
				     ra, ci->rport, ci->lport, conn_state_names[ci->state], ci->age_us / 1000000u,
				     (ci->age_us / 1000u) % 1000u, ci->requests, ci->bound ? "bound" : "not bound",
				     show_dn && ci->bound ? " " : "", show_dn && ci->bound ? ci->dn : "");
			}
		}
		if (json)
			lfe_ctl_outf(o, "]}");
	}
	if (json)
		lfe_ctl_outf(o, "]}\n");
	return 0;
}
