/* dataplane/control.c — the control socket and thread; see control.h. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "dataplane/control.h"
#include "ldap/dn.h"
#include "tls/tls.h"
#include "dataplane/worker.h"

#define CTL_VERSION LFE_VERSION

/* One connection as a snapshot lists it. */
struct conn_info {
	uint32_t raddr, laddr;
	uint16_t rport, lport;
	uint8_t state;          /* enum conn_state */
	bool bound;
	uint64_t age_us, requests;
	char dn[256];           /* only filled with show_dn; truncated */
};

enum conn_state { CS_IDLE, CS_READING, CS_VERIFYING, CS_BLOCKED };
static const char *const conn_state_names[] = { "idle", "reading", "verifying", "blocked" };

/* Request/answer slot of one worker: the control thread writes the
 * parameters, then bumps req (release); the worker fills the answer and
 * sets done = req (release). Only the control thread asks, one at a time. */
struct snap {
	atomic_uint req, done;
	uint32_t limit;
	bool show_dn;
	uint32_t n, total;
	uint64_t now_us;
	struct conn_info ent[LFE_CTL_CONNS_MAX];
};

struct lfe_control {
	struct lfe_daemon *d;
	const char *config_path;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd;
	pthread_t th;
	atomic_int quit;
	uint64_t start_ns;
	unsigned reloads;
	/* reload barrier: workers park while cfg_gen != cfg_release */
	atomic_uint cfg_gen, cfg_release;
	atomic_uint parked[LFE_MAX_WORKERS];
	unsigned seen[LFE_MAX_WORKERS];       /* each worker's own (worker side) */
	atomic_bool applied;                  /* the parked generation changed d->cfg */
	struct lfe_config next;               /* control thread only */
	struct lfe_tls *next_tls, *old_tls;   /* reload: the context swapped in, and out */
	atomic_int hup;                       /* SIGHUP seen: reload from the thread */
	struct snap *snap;                    /* [n_workers] */
	struct lfe_log_src log;               /* control thread's own events */
	/* Counter samples for the rates of `stats` (control thread only):
	 * every RATE_SAMPLE_MS, RATE_SAMPLES kept, [n_workers] each. */
	struct rate_sample {
		uint64_t t_ns;                /* 0: not taken yet */
		struct lfe_wstats *w;
	} rs[4];
	unsigned rs_next;
	/* A drain in progress (control thread only): its client waits on
	 * drain_fd for the answer while other requests are served. */
	int drain_fd;                         /* -1: none */
	uint64_t drain_t0, drain_ns;
	unsigned drain_zero;
	bool drain_json;
};
#define RATE_SAMPLES   4u
#define RATE_SAMPLE_MS 500u
#define RATE_WINDOW_NS 1000000000u
_Static_assert(RATE_SAMPLES * RATE_SAMPLE_MS > RATE_WINDOW_NS / 1000000u, "a sample a window old is kept");

/* ------------------------------------------------------------ config file */

int lfe_config_load(const char *path, struct lfe_config *c, char *err, size_t errlen)
{
	struct rte_cfgfile_parameters params = { .comment_character = '#' };
	char e[LFE_CFG_ERR_LEN];
	int rc = 0;

	lfe_config_defaults(c);
	/* Empty values reach the key's parser ("metrics_listen =" is off;
	 * a key that needs a value says so, naming it). */
	struct rte_cfgfile *cf = rte_cfgfile_load_with_params(path, CFG_FLAG_EMPTY_VALUES, &params);
	if (cf == NULL) {
		snprintf(err, errlen, "%s: cannot read or parse the file", path);
		return -EINVAL;
	}
	int ns = rte_cfgfile_num_sections(cf, NULL, 0);
	for (int i = 0; i < ns && rc == 0; i++) {
		char sec[CFG_NAME_LEN];
		struct rte_cfgfile_entry ents[64];
		int ne = rte_cfgfile_section_entries_by_index(cf, i, sec, ents, 64);
		if (ne < 0) {
			snprintf(err, errlen, "%s: section %d unreadable", path, i);
			rc = -EINVAL;
			break;
		}
		if (ne == 64 && rte_cfgfile_section_num_entries_by_index(cf, sec, (uint32_t)i) > 64) {
			snprintf(err, errlen, "%s: [%s]: more than 64 keys", path, sec);
			rc = -EINVAL;
			break;
		}
		for (int j = 0; j < ne; j++) {
			rc = lfe_config_set(c, sec, ents[j].name, ents[j].value, e);
			if (rc < 0) {
				snprintf(err, errlen, "%s: %s", path, e);
				break;
			}
		}
	}
	rte_cfgfile_close(cf);
	if (rc == 0 && (rc = lfe_config_finish(c, e)) < 0)
		snprintf(err, errlen, "%s: %s", path, e);
	return rc < 0 ? -EINVAL : 0;
}

/* ---------------------------------------------------------- output buffer */

struct out {
	char *p;
	size_t len, cap;
	bool oom;
};

static void outf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		size_t room = o->cap - o->len;
		va_start(ap, fmt);
		int n = o->p ? vsnprintf(o->p + o->len, room, fmt, ap) : -1;
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		size_t need = o->len + (n > 0 ? (size_t)n : 0) + 1;
		size_t cap = o->cap ? o->cap * 2 : 4096;
		while (cap < need)
			cap *= 2;
		char *q = realloc(o->p, cap);
		if (q == NULL) {
			o->oom = true;
			return;
		}
		o->p = q;
		o->cap = cap;
	}
}

/* A JSON string (quotes included); control characters escaped. */
static void out_jstr(struct out *o, const char *s, size_t n)
{
	outf(o, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			outf(o, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			outf(o, "\\u%04x", ch);
		else
			outf(o, "%c", ch);
	}
	outf(o, "\"");
}

static void ipv4_str(uint32_t a, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000u, (long)(ms % 1000u) * 1000000L };
	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ worker side */

static void fill_snap(struct lfe_worker *w, struct snap *s)
{
	uint32_t n = 0, total = 0;
	for (uint32_t i = 0; i < w->n_slots; i++) {
		const struct lfe_slot *sl = (const struct lfe_slot *)(w->slot_mem + (size_t)i * w->slot_size);
		if (sl->s == NULL || sl->st.c == NULL)
			continue;
		total++;
		if (n >= s->limit)
			continue;
		struct conn_info *ci = &s->ent[n++];
		lfe_tcp_conn_addrs(sl->st.c, &ci->laddr, &ci->lport, &ci->raddr, &ci->rport);
		ci->age_us = w->now_us - sl->opened_us;
		ci->state = sl->pending ? CS_VERIFYING : lfe_stream_holding(&sl->st) ? CS_BLOCKED
			  : lfe_session_gathering(sl->s) ? CS_READING : CS_IDLE;
		const struct lfe_session_stats *ss = lfe_session_stats(sl->s);
		ci->requests = ss->binds_ok + ss->binds_invalid + ss->binds_other + ss->searches + ss->extended;
		size_t dl = 0;
		const char *dn = lfe_session_bound_dn(sl->s, &dl);
		ci->bound = dl > 0;
		ci->dn[0] = '\0';
		if (s->show_dn && dl) {
			if (dl >= sizeof(ci->dn))
				dl = sizeof(ci->dn) - 1;
			memcpy(ci->dn, dn, dl);
			ci->dn[dl] = '\0';
		}
	}
	s->n = n;
	s->total = total;
	s->now_us = w->now_us;
}

/* Re-read the live keys of d->cfg into the worker's own copies. */
static void apply_live(struct lfe_worker *w)
{
	const struct lfe_config *c = &w->d->cfg;
	const char *why = NULL;

	w->scfg.allow_anonymous = c->allow_anonymous;
	w->scfg.search.access = c->search_access;
	w->scfg.search.max_scope = c->search_scope;
	if (c->search_base[0]) {
		w->scfg.search.base = c->search_base;
		w->scfg.search.base_len = strlen(c->search_base);
	} else {
		size_t sl;
		w->scfg.search.base = lfe_store_suffix(w->d->store, &sl);
		w->scfg.search.base_len = sl;
	}
	lfe_search_attrs_parse(&w->scfg.search, c->search_attrs, &why);   /* checked by reload */
	w->scfg.require_tls = c->require_tls;
	if (w->thr) {
		struct lfe_throttle_params tp = lfe_worker_throttle_params(&c->throttle);
		size_t sz = lfe_throttle_mem_size(&tp);
		int rc;
		/* The same width, so the same memory: counts start afresh. */
		if (sz)
			lfe_throttle_init(w->thr, sz, &tp, &rc);
	}
}

void lfe_control_poll(struct lfe_control *ctl, struct lfe_worker *w)
{
	if (ctl == NULL)
		return;
	unsigned gen = atomic_load_explicit(&ctl->cfg_gen, memory_order_acquire);
	if (gen != ctl->seen[w->idx]) {
		ctl->seen[w->idx] = gen;
		atomic_store_explicit(&ctl->parked[w->idx], gen, memory_order_release);
		/* Bounded: the control thread releases within its wait. */
		while (atomic_load_explicit(&ctl->cfg_release, memory_order_acquire) != gen)
			sched_yield();
		if (atomic_load_explicit(&ctl->applied, memory_order_acquire))
			apply_live(w);
	}
	struct snap *s = &ctl->snap[w->idx];
	unsigned req = atomic_load_explicit(&s->req, memory_order_acquire);
	if (req != atomic_load_explicit(&s->done, memory_order_relaxed)) {
		fill_snap(w, s);
		atomic_store_explicit(&s->done, req, memory_order_release);
	}
}

/* ------------------------------------------------------------- requests */

/* Take a sample of every worker's counters when the last is old enough. */
static void rate_sample(struct lfe_control *ctl)
{
	const struct lfe_daemon *d = ctl->d;
	uint64_t t = mono_ns();
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

static bool is_gauge(size_t i)
{
	return lfe_wstats_is_gauge(lfe_wstats_names[i]);
}

/* "CORE NAME VALUE" per counter, then "rate CORE NAME PER_SECOND" for
 * every counter but the gauges, over the last second or so (from the
 * control thread's samples: no waiting here). */
static void req_stats(struct lfe_control *ctl, struct out *o)
{
	const struct lfe_daemon *d = ctl->d;
	static struct lfe_wstats s[LFE_MAX_WORKERS];
	struct lfe_wstats sum;
	uint64_t now = mono_ns();

	for (uint32_t k = 0; k < d->n_workers; k++) {
		lfe_stats_read(d->w[k], &s[k]);
		for (size_t i = 0; i < LFE_WSTATS_N; i++)
			outf(o, "%u %s %" PRIu64 "\n", d->w[k]->lcore, lfe_wstats_names[i], ((uint64_t *)&s[k])[i]);
	}
	lfe_stats_sum(d, &sum);
	for (size_t i = 0; i < LFE_WSTATS_N; i++)
		outf(o, "total %s %" PRIu64 "\n", lfe_wstats_names[i], ((uint64_t *)&sum)[i]);
	const struct rate_sample *b = rate_base(ctl, now);
	if (b == NULL)
		return;
	double secs = (double)(now - b->t_ns) / 1e9;
	outf(o, "rate-window %.3f\n", secs);
	for (size_t i = 0; i < LFE_WSTATS_N; i++) {
		if (is_gauge(i))
			continue;
		uint64_t tot = 0;
		for (uint32_t k = 0; k < d->n_workers; k++) {
			uint64_t y = ((uint64_t *)&s[k])[i], x = ((uint64_t *)&b->w[k])[i];
			uint64_t dv = y >= x ? y - x : 0;
			tot += dv;
			outf(o, "rate %u %s %.1f\n", d->w[k]->lcore, lfe_wstats_names[i], (double)dv / secs);
		}
		outf(o, "rate total %s %.1f\n", lfe_wstats_names[i], (double)tot / secs);
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
		outf(o, json ? "{\"configured\":false}" : "not configured");
		return;
	}
	/* The live context: a reload swaps it on this thread. */
	struct lfe_tls_cert cd;
	lfe_tls_cert_info(d->tls, &cd);
	int64_t days = cd.known ? (cd.expiry - (int64_t)time(NULL)) / 86400 : 0;
	if (json) {
		outf(o, "{\"configured\":true,\"ldaps_ports\":[");
		for (uint32_t i = 0; i < c->n_ldaps_ports; i++)
			outf(o, "%s%u", i ? "," : "", c->ldaps_ports[i]);
		outf(o, "],\"starttls\":true,\"require_tls\":\"%s\",\"record_layer\":\"%s\","
		     "\"handshake_timeout_ms\":%" PRIu64 ",\"handshake_threads\":%u,"
		     "\"handshake_queue\":%u,\"handshake_per_source\":%u,\"certificate\":", rq, rl,
		     c->tls_handshake_timeout_ms, c->tls_handshake_threads, c->tls_handshake_queue,
		     c->tls_handshake_per_source);
		out_jstr(o, c->tls_certificate, strlen(c->tls_certificate));
		if (cd.known) {
			outf(o, ",\"subject\":");
			out_jstr(o, cd.subject, strlen(cd.subject));
			outf(o, ",\"serial\":\"%s\",\"not_after\":\"%s\",\"days_left\":%" PRId64, cd.serial,
			     cd.not_after, days);
		}
		outf(o, "}");
		return;
	}
	outf(o, "ldaps port(s)");
	for (uint32_t i = 0; i < c->n_ldaps_ports; i++)
		outf(o, " %u", c->ldaps_ports[i]);
	if (c->n_ldaps_ports == 0)
		outf(o, " none");
	outf(o, ", StartTLS on, require_tls %s, record_layer %s, handshake_timeout_ms %" PRIu64
	     ", handshake_threads %u queue %u per_source %u, certificate %s", rq, rl,
	     c->tls_handshake_timeout_ms, c->tls_handshake_threads, c->tls_handshake_queue,
	     c->tls_handshake_per_source, c->tls_certificate);
	if (cd.known)
		outf(o, " subject \"%s\" serial %s expires %s (%s%" PRId64 " days)", cd.subject, cd.serial, cd.not_after,
		     days < 0 ? "EXPIRED " : "", days);
}

static void req_status(struct lfe_control *ctl, struct out *o, bool json)
{
	const struct lfe_daemon *d = ctl->d;
	const struct lfe_config *c = &d->cfg;
	struct lfe_store_info info;
	uint64_t up = (mono_ns() - ctl->start_ns) / 1000000000u;
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
		outf(o, "{\"version\":\"%s\",\"pid\":%d,\"uptime_s\":%" PRIu64 ",\"draining\":%s,"
		     "\"reloads\":%u,\"config\":", CTL_VERSION, (int)getpid(), up,
		     atomic_load(&d->draining) ? "true" : "false", ctl->reloads);
		out_jstr(o, ctl->config_path, strlen(ctl->config_path));
		outf(o, ",\"ports\":[");
	} else {
		outf(o, "version: ldapfe %s\npid: %d\nuptime: %" PRIu64 " s\nconfig: %s\nstate: %s\n"
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
			outf(o, "%s{\"port\":%u,\"name\":", i ? "," : "", i);
			out_jstr(o, p->name, strlen(p->name));
			outf(o, ",\"driver\":\"%s\",\"link\":\"%s\",\"mac\":\"%s\",\"address\":\"%s/%u\","
			     "\"queues\":%u,\"steering\":%s,\"checksum_offload\":{\"rx\":%s,\"tx\":%s}}",
			     drv, link.link_status ? "up" : "down", mac, a, plen, p->n_queues,
			     p->steer ? "true" : "false", p->rx_csum ? "true" : "false",
			     p->tx_csum ? "true" : "false");
		} else {
			outf(o, "port%u: %s driver %s link %s mac %s address %s/%u queues %u%s checksums rx %s tx %s\n",
			     i, p->name, drv, link.link_status ? "up" : "down", mac, a, plen, p->n_queues,
			     p->steer ? " (software steering)" : "", p->rx_csum ? "offload" : "software",
			     p->tx_csum ? "offload" : "software");
		}
	}
	if (json) {
		outf(o, "],\"workers\":[");
		for (uint32_t k = 0; k < d->n_workers; k++)
			outf(o, "%s%u", k ? "," : "", d->lcore_ids[k]);
		outf(o, "],\"ldap_ports\":[");
		for (uint32_t i = 0; i < c->n_ldap_ports; i++)
			outf(o, "%s%u", i ? "," : "", c->ldap_ports[i]);
		outf(o, "],\"store\":{\"path\":");
		out_jstr(o, c->store_path, strlen(c->store_path));
		outf(o, ",\"suffix\":");
		out_jstr(o, d->naming, strlen(d->naming));
		if (have_info) {
			outf(o, ",\"entries\":%" PRIu64 ",\"bytes_used\":%" PRIu64 ",\"last_txnid\":%" PRIu64,
			     info.entries, (uint64_t)info.map_bytes_used, info.last_txnid);
			if (info.last_change)
				outf(o, ",\"last_change\":\"%s\"", changed);
		}
		outf(o, "},\"tls\":");
		status_tls(ctl, o, true);
		if (d->n_workers)
			outf(o, ",\"memory\":{\"per_idle_conn\":%zu,\"tcp_per_conn\":%zu,\"session_slot\":%zu,"
			     "\"dn_pool_bytes\":%" PRIu64 ",\"dn_pool_dry\":%" PRIu64 "}",
			     d->w[0]->tcp_per_conn + d->w[0]->slot_size, d->w[0]->tcp_per_conn,
			     d->w[0]->slot_size, sum.dn_pool_bytes, sum.dn_pool_dry);
		outf(o, ",\"conns_active\":%" PRIu64 ",\"limits\":{"
		     "\"max_conns_per_core\":%u,\"max_conns_per_source\":%u,\"max_pdu\":%u,"
		     "\"idle_timeout_ms\":%" PRIu64 ",\"first_request_ms\":%" PRIu64
		     ",\"bind_timeout_ms\":%" PRIu64 ",\"pdu_timeout_ms\":%" PRIu64
		     ",\"request_slice_us\":%u,\"search_max_candidates\":%u,\"verify_queue\":%u,"
		     "\"verify_per_source\":%u,\"throttle\":%s}}\n", sum.conns_active,
		     c->max_conns_per_core, c->max_conns_per_source, c->max_pdu, c->idle_timeout_ms,
		     c->first_request_ms, c->bind_timeout_ms, c->pdu_timeout_ms, c->request_slice_us,
		     c->search_max_candidates, c->verify_queue, c->verify_per_source,
		     c->throttle.enabled ? "true" : "false");
		return;
	}
	outf(o, "workers: lcore(s)");
	for (uint32_t k = 0; k < d->n_workers; k++)
		outf(o, " %u", d->lcore_ids[k]);
	outf(o, "\nldap ports:");
	for (uint32_t i = 0; i < c->n_ldap_ports; i++)
		outf(o, " %u", c->ldap_ports[i]);
	outf(o, "\nstore: %s suffix \"%s\"", c->store_path, d->naming);
	if (have_info) {
		outf(o, " entries %" PRIu64 " last txn %" PRIu64, info.entries, info.last_txnid);
		if (info.last_change)
			outf(o, " at %s", changed);
	}
	outf(o, "\ntls: ");
	status_tls(ctl, o, false);
	if (d->n_workers)
		outf(o, "\nmemory: per idle connection %zu B (TCP %zu B + session slot %zu B); "
		     "bound DNs and binds in flight hold %" PRIu64 " B of DN pool chunks (refused for want "
		     "of one: %" PRIu64 ")", d->w[0]->tcp_per_conn + d->w[0]->slot_size,
		     d->w[0]->tcp_per_conn, d->w[0]->slot_size, sum.dn_pool_bytes, sum.dn_pool_dry);
	outf(o, "\nconnections: %" PRIu64 " open\n"
	     "limits: max_conns_per_core %u max_conns_per_source %u max_pdu %u idle_timeout_ms %" PRIu64
	     " first_request_ms %" PRIu64 " bind_timeout_ms %" PRIu64 " pdu_timeout_ms %" PRIu64
	     " request_slice_us %u search_max_candidates %u verify_per_source %u throttle %s\n",
	     sum.conns_active, c->max_conns_per_core, c->max_conns_per_source, c->max_pdu,
	     c->idle_timeout_ms, c->first_request_ms, c->bind_timeout_ms, c->pdu_timeout_ms,
	     c->request_slice_us, c->search_max_candidates, c->verify_per_source,
	     c->throttle.enabled ? "on" : "off");
}

static int req_conns(struct lfe_control *ctl, struct out *o, uint32_t limit, bool show_dn, bool json,
		     char *err, size_t errlen)
{
	const struct lfe_daemon *d = ctl->d;
	if (limit > LFE_CTL_CONNS_MAX)
		limit = LFE_CTL_CONNS_MAX;
	for (uint32_t k = 0; k < d->n_workers; k++) {
		struct snap *s = &ctl->snap[k];
		s->limit = limit;
		s->show_dn = show_dn;
		atomic_fetch_add_explicit(&s->req, 1, memory_order_release);
	}
	if (json)
		outf(o, "{\"cores\":[");
	for (uint32_t k = 0; k < d->n_workers; k++) {
		struct snap *s = &ctl->snap[k];
		unsigned want = atomic_load_explicit(&s->req, memory_order_relaxed);
		uint64_t t0 = mono_ns();
		while (atomic_load_explicit(&s->done, memory_order_acquire) != want) {
			if (mono_ns() - t0 > 1000000000u) {
				snprintf(err, errlen, "worker on lcore %u did not answer within 1 s", d->w[k]->lcore);
				return -ETIMEDOUT;
			}
			sleep_ms(1);
		}
		if (json)
			outf(o, "%s{\"lcore\":%u,\"open\":%u,\"conns\":[", k ? "," : "", d->w[k]->lcore, s->total);
		else
			outf(o, "lcore %u: %u open%s\n", d->w[k]->lcore, s->total,
			     s->total > s->n ? " (list truncated)" : "");
		for (uint32_t i = 0; i < s->n; i++) {
			const struct conn_info *ci = &s->ent[i];
			char ra[16];
			ipv4_str(ci->raddr, ra);
			if (json) {
				outf(o, "%s{\"peer\":\"%s:%u\",\"port\":%u,\"state\":\"%s\",\"age_ms\":%" PRIu64
				     ",\"requests\":%" PRIu64 ",\"bound\":%s", i ? "," : "", ra, ci->rport, ci->lport,
				     conn_state_names[ci->state], ci->age_us / 1000u, ci->requests,
				     ci->bound ? "true" : "false");
				if (show_dn && ci->bound) {
					outf(o, ",\"dn\":");
					out_jstr(o, ci->dn, strlen(ci->dn));
				}
				outf(o, "}");
			} else {
				outf(o, "  %s:%u -> :%u %s age %" PRIu64 ".%03" PRIu64 " s requests %" PRIu64 " %s%s%s\n",
				     ra, ci->rport, ci->lport, conn_state_names[ci->state], ci->age_us / 1000000u,
				     (ci->age_us / 1000u) % 1000u, ci->requests, ci->bound ? "bound" : "not bound",
				     show_dn && ci->bound ? " " : "", show_dn && ci->bound ? ci->dn : "");
			}
		}
		if (json)
			outf(o, "]}");
	}
	if (json)
		outf(o, "]}\n");
	return 0;
}

/* The keys a reload applies while running (into c, from n): the workers
 * read them at their next safe point (apply_live) or per use. Every
 * other key must be the same, else reload_check refuses naming it. */
static void cfg_live(struct lfe_config *c, const struct lfe_config *n)
{
	c->allow_anonymous = n->allow_anonymous;
	c->request_slice_us = n->request_slice_us;
	c->search_max_candidates = n->search_max_candidates;
	c->search_size_limit = n->search_size_limit;
	c->pdu_timeout_ms = n->pdu_timeout_ms;
	c->first_request_ms = n->first_request_ms;
	c->bind_timeout_ms = n->bind_timeout_ms;
	c->search_access = n->search_access;
	c->search_scope = n->search_scope;
	memcpy(c->search_base, n->search_base, sizeof(c->search_base));
	memcpy(c->search_attrs, n->search_attrs, sizeof(c->search_attrs));
	c->throttle = n->throttle;
	c->require_tls = n->require_tls;
	/* TLS: new connections get the new context; those in progress
	 * keep theirs (SSL_new took a reference to it). */
	memcpy(c->tls_certificate, n->tls_certificate, sizeof(c->tls_certificate));
	memcpy(c->tls_key, n->tls_key, sizeof(c->tls_key));
	memcpy(c->tls_ca, n->tls_ca, sizeof(c->tls_ca));
	memcpy(c->tls_ciphers, n->tls_ciphers, sizeof(c->tls_ciphers));
	memcpy(c->tls_ciphersuites, n->tls_ciphersuites, sizeof(c->tls_ciphersuites));
	c->tls_verify_client = n->tls_verify_client;
	c->tls_protocol_min = n->tls_protocol_min;
	c->tls_ticket_lifetime = n->tls_ticket_lifetime;
	c->tls_record_layer = n->tls_record_layer;   /* the new context's keylog, new connections */
	c->tls_handshake_timeout_ms = n->tls_handshake_timeout_ms;   /* read per connection (glue.c) */
}

/* Live keys are copied from n into c; a difference in any other key
 * refuses the reload. */
static int reload_check(const struct lfe_daemon *d, const struct lfe_config *c, const struct lfe_config *n,
			char *err, size_t errlen)
{
#define SAME(f, key) do { \
		if (memcmp(&c->f, &n->f, sizeof(c->f)) != 0) { \
			snprintf(err, errlen, "%s: cannot change while running (restart ldapfe)", key); \
			return -EINVAL; \
		} } while (0)
	SAME(store_path, "[store] path");
	SAME(default_scheme, "[store] default_scheme");
	SAME(allow_cleartext, "[store] allow_cleartext");
	SAME(bind_cache, "[store] bind_cache");
	SAME(store_preload, "[store] preload");
	SAME(n_ldap_ports, "[ldap] ports");
	SAME(ldap_ports, "[ldap] ports");
	SAME(max_pdu, "[ldap] max_pdu");
	SAME(idle_timeout_ms, "[ldap] idle_timeout_ms");
	SAME(max_conns_per_core, "[ldap] max_conns_per_core");
	SAME(max_conns_per_source, "[ldap] max_conns_per_source");
	SAME(share_pressure_pct, "[ldap] share_pressure_pct");
	SAME(tcp_buffer_pool, "[tcp] buffer_pool");
	SAME(tcp_buffer_stall_ms, "[tcp] buffer_stall_ms");
	SAME(tcp_syn_rate, "[tcp] syn_rate");
	SAME(tcp_syn_rate_validated, "[tcp] syn_rate_validated");
	SAME(tcp_validated_sources, "[tcp] validated_sources");
	SAME(suffix, "[ldap] suffix");
	SAME(n_ldaps_ports, "[ldap] ldaps_ports");
	SAME(ldaps_ports, "[ldap] ldaps_ports");
	if ((d->tls != NULL) != (n->n_ldaps_ports || n->tls_certificate[0])) {
		snprintf(err, errlen, "[tls]: cannot be added or removed while running (restart ldapfe)");
		return -EINVAL;
	}
	SAME(n_ports, "[portN]");
	for (uint32_t i = 0; i < LFE_CFG_MAX_PORTS; i++) {
		const struct lfe_cfg_port *a = &c->port[i], *b = &n->port[i];
		if (a->present != b->present || strcmp(a->dev, b->dev) || a->addr != b->addr ||
		    a->prefix_len != b->prefix_len || a->gateway != b->gateway || a->mtu != b->mtu ||
		    a->checksum_offload != b->checksum_offload) {
			snprintf(err, errlen, "[port%u]: cannot change while running (restart ldapfe)", i);
			return -EINVAL;
		}
	}
	SAME(n_lcores, "[workers] lcores");
	SAME(lcores, "[workers] lcores");
	SAME(verifier_threads, "[workers] verifier_threads");
	SAME(verify_queue, "[workers] verify_queue");
	SAME(verify_per_source, "[workers] verify_per_source");
	SAME(idle_sleep_us, "[workers] idle_sleep_us");
	SAME(user, "[daemon] user");
	SAME(group, "[daemon] group");
	SAME(log_dest, "[daemon] log");
	SAME(log_level, "[daemon] log_level");
	SAME(throttle.enabled, "[throttle] enabled");
	SAME(metrics_listen, "[admin] metrics_listen");
#undef SAME
	/* Whatever the list above misses: a copy of the running configuration
	 * with the live keys applied must equal the new one. */
	static struct lfe_config tmp;   /* the control thread's; large */
	char key[80];
	tmp = *c;
	cfg_live(&tmp, n);
	if (lfe_config_differs(&tmp, n, key, sizeof key)) {
		snprintf(err, errlen, "%s: cannot change while running (restart ldapfe)", key);
		return -EINVAL;
	}
	/* Live keys that need more than config.c's checks. */
	size_t sl;
	const char *sfx = lfe_store_suffix(d->store, &sl);
	if (n->search_base[0] && !lfe_dn_is_under(n->search_base, strlen(n->search_base), sfx, sl)) {
		snprintf(err, errlen, "[ldap] search_base: not at or under the store's suffix %s", sfx);
		return -EINVAL;
	}
	struct lfe_search_policy p;
	const char *why = NULL;
	memset(&p, 0, sizeof(p));
	if (lfe_search_attrs_parse(&p, n->search_attrs, &why) < 0) {
		snprintf(err, errlen, "[ldap] search_attrs: %s", why);
		return -EINVAL;
	}
	if (n->throttle.enabled) {
		struct lfe_throttle_params a = { .failures = { 1, 1, 1 }, .window_ms = c->throttle.window_ms,
						 .penalty_ms = c->throttle.penalty_ms };
		struct lfe_throttle_params b = { .failures = { 1, 1, 1 }, .window_ms = n->throttle.window_ms,
						 .penalty_ms = n->throttle.penalty_ms };
		if (lfe_throttle_mem_size(&a) != lfe_throttle_mem_size(&b)) {
			snprintf(err, errlen, "[throttle]: this change needs a restart");
			return -EINVAL;
		}
	}
	return 0;
}

/* Park every worker at its safe point, run fn, release them. */
static int barrier(struct lfe_control *ctl, bool apply, char *err, size_t errlen)
{
	struct lfe_daemon *d = ctl->d;
	unsigned gen = atomic_load(&ctl->cfg_gen) + 1;

	atomic_store(&ctl->applied, false);
	atomic_store_explicit(&ctl->cfg_gen, gen, memory_order_release);
	uint64_t t0 = mono_ns();
	int rc = 0;
	for (uint32_t k = 0; k < d->n_workers && rc == 0; k++) {
		while (atomic_load_explicit(&ctl->parked[k], memory_order_acquire) != gen) {
			if (mono_ns() - t0 > 2000000000u || atomic_load(&d->stop)) {
				snprintf(err, errlen, "worker on lcore %u did not reach a safe point within 2 s; "
					 "nothing changed", d->lcore_ids[k]);
				rc = -ETIMEDOUT;
				break;
			}
			sleep_ms(1);
		}
	}
	if (rc == 0 && apply) {
		cfg_live(&d->cfg, &ctl->next);
		if (ctl->next_tls) {
			ctl->old_tls = d->tls;
			d->tls = ctl->next_tls;
			ctl->next_tls = NULL;
		}
		atomic_store_explicit(&ctl->applied, true, memory_order_release);
	}
	atomic_store_explicit(&ctl->cfg_release, gen, memory_order_release);
	return rc;
}

static int req_reload(struct lfe_control *ctl, struct out *o, bool json, char *err, size_t errlen)
{
	int rc = lfe_config_load(ctl->config_path, &ctl->next, err, errlen);
	if (rc < 0)
		return rc;
	if ((rc = reload_check(ctl->d, &ctl->d->cfg, &ctl->next, err, errlen)) < 0)
		return rc;
	/* The new files are read and checked before anything changes: a bad
	 * certificate or key refuses the whole reload. */
	if (ctl->d->tls && (ctl->next_tls = lfe_tls_from_config(&ctl->next, ctl->d->tls, err,
								 errlen)) == NULL)
		return -EINVAL;
	rc = barrier(ctl, true, err, errlen);
	lfe_tls_free(ctl->next_tls);   /* not swapped in: the barrier failed */
	ctl->next_tls = NULL;
	lfe_tls_free(ctl->old_tls);    /* its SSL_CTX lives on in open connections */
	ctl->old_tls = NULL;
	if (rc < 0)
		return rc;
	if (ctl->d->tls) {
		char desc[512];
		lfe_tls_describe(ctl->d->tls, desc, sizeof(desc));
		printf("ldapfe: tls: %s\n", desc);
	}
	ctl->reloads++;
	struct lfe_log_line l;
	if (lfe_log_start(&l, &ctl->log, LFE_LOG_INFO, "reload", lfe_log_now_us())) {
		lfe_log_kv(&l, "config", "%s", ctl->config_path);
		lfe_log_kv(&l, "reloads", "%u", ctl->reloads);
		lfe_log_end(&l);
	}
	if (json) {
		outf(o, "{\"reloaded\":true,\"config\":");
		out_jstr(o, ctl->config_path, strlen(ctl->config_path));
		outf(o, ",\"reloads\":%u}\n", ctl->reloads);
	} else
		outf(o, "reloaded %s\n", ctl->config_path);
	return 0;
}

/* drain: new connections are refused at once; the answer (and the stop)
 * comes when the open ones are gone or the time is up, from drain_step()
 * in the control thread's loop, which keeps serving requests, writing logs
 * and handling SIGHUP meanwhile. */
static int req_drain(struct lfe_control *ctl, unsigned secs, bool json, char *err, size_t errlen)
{
	if (ctl->drain_fd >= 0) {
		snprintf(err, errlen, "a drain is already in progress");
		return -EBUSY;
	}
	atomic_store(&ctl->d->draining, 1);
	ctl->drain_t0 = mono_ns();
	ctl->drain_ns = (uint64_t)secs * 1000000000u;
	ctl->drain_zero = 0;
	ctl->drain_json = json;
	struct lfe_log_line l;
	if (lfe_log_start(&l, &ctl->log, LFE_LOG_INFO, "drain", lfe_log_now_us())) {
		lfe_log_kv(&l, "timeout_s", "%u", secs);
		lfe_log_end(&l);
	}
	return 0;
}

static void write_all(int fd, const char *p, size_t n);

/* One look at a drain in progress (every loop of the control thread, at
 * most 10 ms apart while draining); true once it answered. */
static bool drain_step(struct lfe_control *ctl)
{
	struct lfe_daemon *d = ctl->d;
	struct lfe_wstats sum;
	uint64_t waited = mono_ns() - ctl->drain_t0;

	lfe_stats_sum(d, &sum);
	/* Twice, so a connection opened just before the drain and not yet
	 * published (LFE_PUBLISH_US) is seen. */
	ctl->drain_zero = sum.conns_active == 0 ? ctl->drain_zero + 1 : 0;
	if (ctl->drain_zero < 2 && waited < ctl->drain_ns && !atomic_load(&d->stop))
		return false;
	struct lfe_log_line l;
	if (lfe_log_start(&l, &ctl->log, LFE_LOG_INFO, "drained", lfe_log_now_us())) {
		lfe_log_kv(&l, "waited_ms", "%" PRIu64, waited / 1000000u);
		lfe_log_kv(&l, "open", "%" PRIu64, sum.conns_active);
		lfe_log_end(&l);
	}
	struct out o = { 0 };
	if (ctl->drain_json)
		outf(&o, "ok\n{\"drained\":true,\"open\":%" PRIu64 ",\"waited_ms\":%" PRIu64 "}\n",
		     sum.conns_active, waited / 1000000u);
	else
		outf(&o, "ok\ndrained in %" PRIu64 " ms; %" PRIu64 " connection(s) left, closed now; ldapfe stops\n",
		     waited / 1000000u, sum.conns_active);
	if (o.p)
		write_all(ctl->drain_fd, o.p, o.len);
	free(o.p);
	close(ctl->drain_fd);
	ctl->drain_fd = -1;
	atomic_store(&d->stop, 1);
	return true;
}

/* ------------------------------------------------------------- the thread */

static bool word_is(const char *w, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(w, s, n) == 0;
}

/* Handle one request line (NUL-terminated, no newline). Returns the
 * status line's reason in err on failure. */
static int handle(struct lfe_control *ctl, char *line, struct out *o, bool *drained, char *err, size_t errlen)
{
	char *argv[8];
	int argc = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (argc == 8) {
			snprintf(err, errlen, "too many words");
			return -EINVAL;
		}
		argv[argc++] = t;
	}
	if (argc == 0) {
		snprintf(err, errlen, "empty request");
		return -EINVAL;
	}
	bool json = argc > 1 && strcmp(argv[argc - 1], "json") == 0;
	int nargs = argc - (json ? 1 : 0);
	const char *cmd = argv[0];
	size_t cl = strlen(cmd);

	if (word_is(cmd, cl, "status") && nargs == 1) {
		req_status(ctl, o, json);
		return 0;
	}
	if (word_is(cmd, cl, "stats") && nargs == 1) {
		req_stats(ctl, o);
		return 0;
	}
	if (word_is(cmd, cl, "conns") && nargs == 3) {
		uint64_t limit, dn;
		if (lfe_config_parse_u64(argv[1], 0, UINT32_MAX, &limit) < 0 ||
		    lfe_config_parse_u64(argv[2], 0, 1, &dn) < 0) {
			snprintf(err, errlen, "usage: conns LIMIT SHOWDN(0|1) [json]");
			return -EINVAL;
		}
		return req_conns(ctl, o, (uint32_t)limit, dn == 1, json, err, errlen);
	}
	if (word_is(cmd, cl, "reload") && nargs == 1)
		return req_reload(ctl, o, json, err, errlen);
	if (word_is(cmd, cl, "drain") && nargs == 2) {
		uint64_t secs;
		if (lfe_config_parse_u64(argv[1], 0, 86400, &secs) < 0) {
			snprintf(err, errlen, "usage: drain SECONDS(0..86400) [json]");
			return -EINVAL;
		}
		int rc = req_drain(ctl, (unsigned)secs, json, err, errlen);
		*drained = rc == 0;
		return rc;
	}
	snprintf(err, errlen, "unknown request (status, stats, conns, reload, drain)");
	return -EINVAL;
}

/* The whole answer within 5 s, whatever pace the client reads at: one
 * client must not hold the single control thread. */
static void write_all(int fd, const char *p, size_t n)
{
	uint64_t end = mono_ns() + 5000000000u;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			uint64_t now = mono_ns();
			struct pollfd pf = { .fd = fd, .events = POLLOUT };
			if (now >= end || poll(&pf, 1, (int)((end - now) / 1000000u) + 1) <= 0)
				return;
			continue;
		}
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* One request: the whole line within 1 s of accept (not 1 s per recv: a
 * client sending a byte at a time would hold the control thread for
 * LFE_CTL_REQ_MAX seconds). Returns true when fd was kept (a drain
 * answers later). */
static bool serve_one(struct lfe_control *ctl, int fd)
{
	char line[LFE_CTL_REQ_MAX + 1];
	size_t len = 0;
	bool complete = false, bad = false;
	uint64_t end = mono_ns() + 1000000000u;

	while (len < LFE_CTL_REQ_MAX) {
		uint64_t now = mono_ns();
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (now >= end || poll(&pf, 1, (int)((end - now) / 1000000u) + 1) <= 0)
			break;
		ssize_t r = recv(fd, line + len, LFE_CTL_REQ_MAX - len, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			continue;
		if (r <= 0)
			break;
		char *nl = memchr(line + len, '\n', (size_t)r);
		len += (size_t)r;
		if (nl) {
			*nl = '\0';
			len = (size_t)(nl - line);
			complete = true;
			break;
		}
	}
	char err[512] = "";
	struct out o = { 0 };
	bool drained = false;
	int rc;
	if (!complete) {
		snprintf(err, sizeof(err), len >= LFE_CTL_REQ_MAX ? "request too long (at most %u bytes)"
			 : "incomplete request (no newline within 1 s)", LFE_CTL_REQ_MAX);
		rc = -EINVAL;
	} else {
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)line[i] < 0x20 && line[i] != '\t')
				bad = true;
			else if ((unsigned char)line[i] >= 0x7f)
				bad = true;
		if (bad) {
			snprintf(err, sizeof(err), "request is not printable ASCII");
			rc = -EINVAL;
		} else {
			line[len] = '\0';
			rc = handle(ctl, line, &o, &drained, err, sizeof(err));
		}
	}
	if (rc == 0 && o.oom) {
		rc = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
	}
	if (rc < 0) {
		char head[600];
		struct lfe_log_line l;
		/* Rate-limited: whoever can reach the socket cannot flood the log. */
		if (lfe_log_start(&l, &ctl->log, LFE_LOG_WARN, "ctl_refused", lfe_log_now_us())) {
			lfe_log_kv(&l, "reason", "%s", err);
			lfe_log_end(&l);
		}
		int n = snprintf(head, sizeof(head), "error %s\n", err);
		write_all(fd, head, (size_t)n);
	} else if (drained) {
		ctl->drain_fd = fd;   /* answered by drain_step() */
	} else {
		write_all(fd, "ok\n", 3);
		write_all(fd, o.p ? o.p : "", o.len);
	}
	free(o.p);
	return rc >= 0 && drained;
}

/* The workers' event lines (log.h): written here, never on a worker. */
static void drain_logs(struct lfe_control *ctl)
{
	for (uint32_t k = 0; k < ctl->d->n_workers; k++)
		if (ctl->d->w[k])
			lfe_log_drain(&ctl->d->w[k]->log_ring, &ctl->d->log);
}

static void *ctl_thread(void *arg)
{
	struct lfe_control *ctl = arg;
	while (!atomic_load(&ctl->quit)) {
		if (atomic_exchange(&ctl->hup, 0)) {
			char err[512];
			struct out o = { 0 };
			if (req_reload(ctl, &o, false, err, sizeof(err)) < 0)
				fprintf(stderr, "ldapfe: SIGHUP: reload refused, nothing changed: %s\n", err);
			free(o.p);
		}
		struct pollfd p = { .fd = ctl->lfd, .events = POLLIN };
		drain_logs(ctl);
		rate_sample(ctl);
		if (ctl->drain_fd >= 0 && drain_step(ctl))
			continue;
		if (poll(&p, 1, ctl->drain_fd >= 0 ? 10 : 200) <= 0)
			continue;
		int fd = accept4(ctl->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (!serve_one(ctl, fd))
			close(fd);
	}
	return NULL;
}

struct lfe_control *lfe_control_start(struct lfe_daemon *d, const char *config_path, uid_t uid, gid_t gid,
				      char *err, size_t errlen)
{
	struct lfe_control *ctl = calloc(1, sizeof(*ctl));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (ctl == NULL || (ctl->snap = calloc(d->n_workers, sizeof(*ctl->snap))) == NULL) {
		snprintf(err, errlen, "control socket: out of memory");
		free(ctl);
		return NULL;
	}
	ctl->d = d;
	lfe_log_src_init(&ctl->log, &d->log, NULL);
	ctl->config_path = config_path;
	ctl->start_ns = mono_ns();
	ctl->lfd = -1;
	ctl->drain_fd = -1;
	for (unsigned i = 0; i < RATE_SAMPLES; i++) {
		if ((ctl->rs[i].w = calloc(d->n_workers, sizeof(struct lfe_wstats))) == NULL) {
			snprintf(err, errlen, "control socket: out of memory");
			goto fail;
		}
	}
	int n = snprintf(ctl->path, sizeof(ctl->path), "%s/%s", rte_eal_get_runtime_dir(), LFE_CTL_SOCK_NAME);
	if (n < 0 || (size_t)n >= sizeof(ctl->path)) {
		snprintf(err, errlen, "control socket: runtime directory path too long");
		goto fail;
	}
	memcpy(sa.sun_path, ctl->path, (size_t)n + 1);
	ctl->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl->lfd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		goto fail;
	}
	unlink(ctl->path);   /* a previous run's, under the same file prefix */
	mode_t old = umask(0117);
	int brc = bind(ctl->lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (brc < 0 || listen(ctl->lfd, 16) < 0) {
		snprintf(err, errlen, "control socket %s: %s", ctl->path, strerror(errno));
		goto fail;
	}
	if (uid && chown(ctl->path, uid, gid) < 0) {
		snprintf(err, errlen, "control socket %s: chown: %s", ctl->path, strerror(errno));
		goto fail;
	}
	if (pthread_create(&ctl->th, NULL, ctl_thread, ctl) != 0) {
		snprintf(err, errlen, "control socket: cannot start its thread");
		goto fail;
	}
	return ctl;
fail:
	if (ctl->lfd >= 0) {
		close(ctl->lfd);
		unlink(ctl->path);
	}
	for (unsigned i = 0; i < RATE_SAMPLES; i++)
		free(ctl->rs[i].w);
	free(ctl->snap);
	free(ctl);
	return NULL;
}

void lfe_control_request_reload(struct lfe_control *ctl)
{
	if (ctl)
		atomic_store(&ctl->hup, 1);
}

void lfe_control_stop(struct lfe_control *ctl)
{
	if (ctl == NULL)
		return;
	atomic_store(&ctl->quit, 1);
	pthread_join(ctl->th, NULL);
	drain_logs(ctl);   /* what the workers said last */
	if (ctl->drain_fd >= 0)
		close(ctl->drain_fd);
	close(ctl->lfd);
	unlink(ctl->path);
	for (unsigned i = 0; i < RATE_SAMPLES; i++)
		free(ctl->rs[i].w);
	free(ctl->snap);
	free(ctl);
}
