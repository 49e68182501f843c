/* gen/report.c — ldapfe-gen's figures (gen.h): the per-second line and
 * the final report, as text and as JSON (--json).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "gen/gen.h"

static const char *const err_names[E_MAX] = {
	"msgid", "op", "result_code", "decode", "notice_of_disconnection", "reset", "closed",
	"connect", "send_space", "tls",
};

static double us_of(const struct gen *g, uint64_t cyc)
{
	return (double)cyc * 1e6 / (double)g->hz;
}


/* The per-second line. With one lcore its own counters; with several the
 * sums the lcores published (at most 10 ms old) and lcore 0's percentiles. */
void gen_report_second(struct gen *g, double t, uint64_t *prev_binds, uint64_t *prev_sess, double dt)
{
	if (g->o.wl == LFE_WL_SYNFLOOD) {
		/* The same two slots carry SYNs sent and SYN-ACKs back. */
		if (dt < 1e-3)
			dt = 1e-3;
		gen_publish(g);
		uint64_t syns = PUB_SUM(g->run, syns), acks = PUB_SUM(g->run, synacks);
		printf("ldapfe-gen: t=%.0fs syn/s=%.0f synack/s=%.0f\n", t, (double)(syns - *prev_binds) / dt,
		       (double)(acks - *prev_sess) / dt);
		*prev_binds = syns;
		*prev_sess = acks;
		return;
	}

	struct genrun *r = g->run;
	const struct lfe_tcp_stats *ts = lfe_tcp_stats(g->tcp);
	uint64_t binds, sess, errs, est;

	if (dt < 1e-3)
		dt = 1e-3;   /* a second caught up right after another */
	gen_publish(g);
	binds = PUB_SUM(r, binds);
	sess = PUB_SUM(r, sessions);
	errs = PUB_SUM(r, errors);
	est = PUB_SUM(r, established);
	printf("ldapfe-gen: t=%.0fs binds/s=%.0f sessions/s=%.0f errors=%" PRIu64 " retrans=%" PRIu64
	       " p50=%.1fus p99=%.1fus tcbs=%" PRIu64,
	       t, (double)(binds - *prev_binds) / dt, (double)(sess - *prev_sess) / dt, errs,
	       ts->retransmits, us_of(g, lfe_hist_quantile(&g->lat_sec, 0.5)),
	       us_of(g, lfe_hist_quantile(&g->lat_sec, 0.99)), ts->conns_active);
	if (g->o.wl == LFE_WL_HOLD)
		printf(" established=%" PRIu64, est);
	putchar('\n');
	*prev_binds = binds;
	*prev_sess = sess;
	lfe_hist_merge(&g->lat, &g->lat_sec);
	lfe_hist_reset(&g->lat_sec);
}

static const char *wl_name(enum lfe_gen_workload w)
{
	return w == LFE_WL_SESSION ? "session" : w == LFE_WL_MIX ? "mix" : w == LFE_WL_HOLD ? "hold" :
	       w == LFE_WL_SYNFLOOD ? "synflood" : "persistent";
}

/* This process's resident memory in KiB (/proc/self/status), 0 if unknown. */
uint64_t gen_rss_kib(void)
{
	char line[256];
	uint64_t kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %" SCNu64, &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void sum_u64(uint64_t *dst, const void *src, size_t n)
{
	uint64_t v[64];
	while (n) {
		size_t k = n < 64 ? n : 64;
		memcpy(v, src, k * sizeof(uint64_t));
		for (size_t i = 0; i < k; i++)
			dst[i] += v[i];
		dst += k;
		src = (const uint64_t *)src + k;
		n -= k;
	}
}

void gen_totals_of(const struct genrun *r, struct totals *T)
{
	uint64_t ct[N_COUNTERS] = { 0 }, ts[sizeof(struct lfe_tcp_stats) / sizeof(uint64_t)] = { 0 };

	_Static_assert(sizeof(struct lfe_tcp_stats) % sizeof(uint64_t) == 0, "tcp stats are uint64_t");
	lfe_hist_reset(&T->lat);
	lfe_hist_reset(&T->lat_conn);
	for (uint32_t j = 0; j < r->nl; j++) {
		const struct gen *g = r->lc[j];
		sum_u64(ct, &g->ct, N_COUNTERS);
		sum_u64(ts, lfe_tcp_stats(g->tcp), sizeof(ts) / sizeof(ts[0]));
		lfe_hist_merge(&T->lat, &g->lat);
		lfe_hist_merge(&T->lat, &g->lat_sec);   /* since the last per-second line */
		lfe_hist_merge(&T->lat_conn, &g->lat_conn);
		T->est += g->n_est;
		T->est_peak += g->est_peak;
	}
	memcpy(&T->ct, ct, sizeof(T->ct));
	memcpy(&T->ts, ts, sizeof(T->ts));
	T->rss_kib = gen_rss_kib();
}

void gen_report_final(const struct genrun *r, const struct totals *T, double secs, FILE *f, bool json)
{
	const struct gen *g = r->lc[0];
	const struct counters *c = &T->ct;
	const struct lfe_tcp_stats *ts = &T->ts;
	uint64_t binds = binds_of(c);
	double p50 = us_of(g, lfe_hist_quantile(&T->lat, 0.5));
	double p99 = us_of(g, lfe_hist_quantile(&T->lat, 0.99));
	double p999 = us_of(g, lfe_hist_quantile(&T->lat, 0.999));
	double mx = us_of(g, T->lat.max);
	double mean = T->lat.count ? us_of(g, T->lat.sum) / (double)T->lat.count : 0;
	double busy_per_bind = binds ? us_of(g, c->busy_cycles) / (double)binds : 0;
	/* The lcores' share of their CPUs (1: nothing else ran there). */
	double cpu_share = secs > 0 ? (double)c->cpu_ns / 1e9 / secs / r->nl : 0;

	if (!json) {
		fprintf(f, "ldapfe-gen: done: %s, %u conns, %.3f s: binds %" PRIu64 " (ok %" PRIu64
			   ", invalid %" PRIu64 "), sessions %" PRIu64 ", binds/s %.0f, sessions/s %.0f\n",
			wl_name(g->o.wl), g->o.conns, secs, binds, c->binds_ok, c->binds_invalid,
			c->sessions, (double)binds / secs, (double)c->sessions / secs);
		fprintf(f, "ldapfe-gen: latency us: p50 %.1f p99 %.1f p99.9 %.1f max %.1f mean %.1f\n",
			p50, p99, p999, mx, mean);
		if (T->lat_conn.count)
			fprintf(f, "ldapfe-gen: connect us: p50 %.1f p99 %.1f max %.1f (%" PRIu64 ")\n",
				us_of(g, lfe_hist_quantile(&T->lat_conn, 0.5)),
				us_of(g, lfe_hist_quantile(&T->lat_conn, 0.99)), us_of(g, T->lat_conn.max),
				T->lat_conn.count);
		if (g->o.wl == LFE_WL_HOLD)
			fprintf(f, "ldapfe-gen: hold: established %" PRIu64 " of %u (peak %" PRIu64 ") in %.3f s, "
				   "%u binding; generator RSS %" PRIu64 " KiB (%.0f B per connection)\n",
				T->est, g->o.conns, T->est_peak, T->open_s, T->binders, T->rss_kib,
				T->est_peak ? 1024.0 * (double)T->rss_kib / (double)T->est_peak : 0);
		if (g->o.flood_lo)
			fprintf(f, "ldapfe-gen: synflood: SYNs sent %" PRIu64 " (%.0f/s; %" PRIu64 " more refused by "
				   "a full tx ring), SYN-ACKs back %" PRIu64 " (%.0f/s), RSTs back %" PRIu64 "\n",
				c->flood_syns, (double)c->flood_syns / secs, c->flood_tx_drops, c->flood_synacks,
				(double)c->flood_synacks / secs, c->flood_rsts);
		fprintf(f, "ldapfe-gen: errors %" PRIu64 ":", errors_total(c));
		for (unsigned k = 0; k < E_MAX; k++)
			fprintf(f, " %s=%" PRIu64, err_names[k], c->err[k]);
		fprintf(f, "\nldapfe-gen: tcp: opened %" PRIu64 " retransmits %" PRIu64 " rto_timeouts %" PRIu64
			   " resets %" PRIu64 " dup_acks %" PRIu64 " ooo %" PRIu64 " dup_segs %" PRIu64
			   " challenge_acks %" PRIu64 " drops: no_conn %" PRIu64 " bad_seq %" PRIu64
			   " bad_ack %" PRIu64 " window %" PRIu64 "\n",
			c->conns_opened, ts->retransmits, ts->rto_timeouts, ts->conns_reset, ts->dup_acks,
			ts->ooo_segs, ts->dup_segs, ts->challenge_acks, ts->drop_no_conn, ts->drop_bad_seq,
			ts->drop_bad_ack, ts->drop_window);
		fprintf(f, "ldapfe-gen: frames tx %" PRIu64 " rx %" PRIu64 " tx_drops %" PRIu64
			   " rx_drops %" PRIu64 "; rx checksums (--rx-csum %s): checked %" PRIu64
			   " by the port %" PRIu64 " bad %" PRIu64 "\n",
			c->tx.frames, c->rx_frames, c->tx.dropped, c->rx_drops, g->o.rx_csum_all ? "all" : "sample",
			c->rxc.checked, c->rxc.port_good, c->rxc.bad);
		fprintf(f, "ldapfe-gen: busy %.3f s (%.1f %% of %u lcore%s), %.3f us per bind; on CPU"
			   " %.1f %% of the time (preempted %" PRIu64 " times)\n",
			us_of(g, c->busy_cycles) / 1e6, 100.0 * us_of(g, c->busy_cycles) / 1e6 / secs / r->nl,
			r->nl, r->nl > 1 ? "s" : "", busy_per_bind, 100.0 * cpu_share, c->preempted);
		if (r->nl > 1) {
			for (uint32_t j = 0; j < r->nl; j++) {
				const struct gen *x = r->lc[j];
				fprintf(f, "ldapfe-gen: lcore %u (queue %u): binds %" PRIu64 " busy %.3f s handed off %"
					   PRIu64 " (drops %" PRIu64 ")\n", j, x->q, binds_of(&x->ct),
					us_of(g, x->ct.busy_cycles) / 1e6, x->ct.handed_off, x->ct.handoff_drops);
			}
		}
		if (g->tlsc)
			lfe_tlsc_report(g->tlsc, f, false);
		return;
	}
	fprintf(f, "{\n  \"workload\": \"%s\", \"conns\": %u, \"rate\": %.0f, \"duration_s\": %.6f,"
		   " \"tsc_hz\": %" PRIu64 ",\n", wl_name(g->o.wl), g->o.conns, g->o.rate, secs, g->hz);
	fprintf(f, "  \"binds\": %" PRIu64 ", \"binds_sent\": %" PRIu64 ", \"binds_ok\": %" PRIu64
		   ", \"binds_invalid\": %" PRIu64 ", \"sessions\": %" PRIu64 ",\n",
		binds, c->binds_sent, c->binds_ok, c->binds_invalid, c->sessions);
	fprintf(f, "  \"binds_per_s\": %.1f, \"sessions_per_s\": %.1f,\n", (double)binds / secs,
		(double)c->sessions / secs);
	fprintf(f, "  \"gen_busy_cycles\": %" PRIu64 ", \"gen_busy_turns\": %" PRIu64
		   ", \"gen_busy_us_per_bind\": %.4f, \"lcores\": %u, \"dist\": \"%s\", \"zipf_s\": %.3f,\n",
		c->busy_cycles, c->busy_turns, busy_per_bind, r->nl,
		g->o.dist == LFE_DIST_ZIPF ? "zipf" : "uniform", g->o.zipf_s);
	fprintf(f, "  \"gen_cpu_ns\": %" PRIu64 ", \"gen_cpu_share\": %.4f, \"gen_preempted\": %" PRIu64
		   ",\n", c->cpu_ns, cpu_share, c->preempted);
	fprintf(f, "  \"per_lcore\": [");
	for (uint32_t j = 0; j < r->nl; j++)
		fprintf(f, "%s{\"binds\": %" PRIu64 ", \"busy_cycles\": %" PRIu64 ", \"handed_off\": %" PRIu64
			   ", \"handoff_drops\": %" PRIu64 "}", j ? ", " : "", binds_of(&r->lc[j]->ct),
			r->lc[j]->ct.busy_cycles, r->lc[j]->ct.handed_off, r->lc[j]->ct.handoff_drops);
	fprintf(f, "],\n");
	if (g->o.wl == LFE_WL_HOLD)
		fprintf(f, "  \"hold\": {\"target\": %u, \"established\": %" PRIu64 ", \"established_peak\": %"
			   PRIu64 ", \"open_s\": %.3f, \"binders\": %u},\n",
			g->o.conns, T->est, T->est_peak, T->open_s, T->binders);
	if (g->o.flood_lo)
		fprintf(f, "  \"synflood\": {\"syns\": %" PRIu64 ", \"syns_per_s\": %.1f, \"tx_refused\": %" PRIu64
			   ", \"synacks\": %" PRIu64 ", \"synacks_per_s\": %.1f, \"rsts\": %" PRIu64
			   ", \"reply\": \"%s\"},\n",
			c->flood_syns, (double)c->flood_syns / secs, c->flood_tx_drops, c->flood_synacks,
			(double)c->flood_synacks / secs, c->flood_rsts, g->o.flood_rst ? "rst" : "none");
	fprintf(f, "  \"gen_rss_kib\": %" PRIu64 ",\n", T->rss_kib);
	fprintf(f, "  \"latency_us\": {\"p50\": %.2f, \"p99\": %.2f, \"p999\": %.2f, \"max\": %.2f, "
		   "\"mean\": %.2f, \"count\": %" PRIu64 "},\n", p50, p99, p999, mx, mean, T->lat.count);
	fprintf(f, "  \"connect_us\": {\"p50\": %.2f, \"p99\": %.2f, \"max\": %.2f, \"count\": %" PRIu64 "},\n",
		us_of(g, lfe_hist_quantile(&T->lat_conn, 0.5)), us_of(g, lfe_hist_quantile(&T->lat_conn, 0.99)),
		us_of(g, T->lat_conn.max), T->lat_conn.count);
	fprintf(f, "  \"errors\": {\"total\": %" PRIu64, errors_total(c));
	for (unsigned k = 0; k < E_MAX; k++)
		fprintf(f, ", \"%s\": %" PRIu64, err_names[k], c->err[k]);
	fprintf(f, ", \"rc_unexpected_for_ok\": %" PRIu64 ", \"rc_unexpected_for_wrong\": %" PRIu64
		   ", \"rc_unexpected_for_unknown\": %" PRIu64 "},\n",
		c->rc_unexpected[BK_OK], c->rc_unexpected[BK_WRONG], c->rc_unexpected[BK_UNKNOWN]);
	fprintf(f, "  \"tcp\": {\"opened\": %" PRIu64 ", \"retransmits\": %" PRIu64
		   ", \"rto_timeouts\": %" PRIu64 ", \"resets\": %" PRIu64 "},\n",
		c->conns_opened, ts->retransmits, ts->rto_timeouts, ts->conns_reset);
	lfe_tlsc_report(g->tlsc, f, true);
	fprintf(f, "  \"frames\": {\"tx\": %" PRIu64 ", \"rx\": %" PRIu64 ", \"tx_drops\": %" PRIu64
		   ", \"rx_drops\": %" PRIu64 "},\n",
		c->tx.frames, c->rx_frames, c->tx.dropped, c->rx_drops);
	fprintf(f, "  \"rx_csum\": {\"mode\": \"%s\", \"checked\": %" PRIu64 ", \"port_good\": %" PRIu64
		   ", \"bad\": %" PRIu64 "}\n}\n",
		g->o.rx_csum_all ? "all" : "sample", c->rxc.checked, c->rxc.port_good, c->rxc.bad);
}

uint64_t gen_pub_sum(const struct genrun *r, size_t off)
{
	uint64_t n = 0;
	for (uint32_t j = 0; j < r->nl; j++)
		n += __atomic_load_n((const uint64_t *)((const char *)&r->lc[j]->pub + off), __ATOMIC_RELAXED);
	return n;
}
