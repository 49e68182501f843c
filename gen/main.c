/* gen/main.c — ldapfe-gen, an LDAP simple-bind load generator on DPDK.
 *
 *   ldapfe-gen [EAL args] -- --port DEV --src-ip A/len --dst-ip B [options]
 *
 * Each generator lcore (--lcores, one by default) drives its own share of
 * the connections on its own queue pair: the client side of
 * net/tcp.c (lfe_tcp_connect), frames from net/net.c, bind
 * requests pre-encoded at start (gen/pdu.h), users drawn by gen/dist.h.
 * Each connection owns a fixed slice of the (source address, source port)
 * space, so the lcore that owns a received segment follows from its
 * destination; a segment that arrives on another lcore's queue (RSS or
 * af_packet fanout hashing differently) is handed over through a ring.
 * Each connection has at most one bind outstanding; N connections give the
 * concurrency. The hold workload opens N connections at --syn-rate, keeps
 * them, and binds on the --bind-frac of them at --rate. A SYN flood
 * (--workload synflood alone, or --flood-ips beside any workload, on the
 * same lcores) sends bare SYNs (options as Linux offers them) from every
 * tuple of the flood's addresses × --sport-range in turn, at --flood-rate
 * or as fast as the port takes them, never completes a handshake, and
 * counts the SYN-ACKs (cookies, once the server's half-open budget is
 * spent) and RSTs that come back. Every response is checked against what was asked (message
 * id, operation, result code 0 or 49 as the chosen user/password implies)
 * and mismatches are counted by kind. Latency is rdtsc from the moment the
 * bind is queued on the connection to the moment its response is decoded.
 *
 * Exit status: 0 when the run completed without a mismatch, 1 when it
 * completed with errors, 2 when it could not run (no link, no ARP answer, no
 * SYN-ACK, bad options).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "dpdk/port.h"
#include "dpdk/unmapguard.h"
#include "gen/gen.h"

/* The signal handler can reach nothing else. */
static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* Poll until cond(g) holds or ms pass; true if it held. */
static bool poll_until(struct gen *g, bool (*cond)(const struct gen *), uint64_t ms)
{
	uint64_t end = rte_rdtsc() + g->hz / 1000u * ms;
	while (!cond(g)) {
		if (rte_rdtsc() > end)
			return false;
		gen_poll_pub(g);
	}
	return true;
}

static bool no_outstanding(const struct gen *g)
{
	return g->n_wait == 0 && g->n_live == g->n_est;
}

static bool all_closed(const struct gen *g)
{
	return g->n_live == 0;
}

/* Answers to binds already sent still count (and are still checked); then
 * every connection closes, at --syn-rate when paced (a million FINs at once
 * would only be dropped and retransmitted), while this side keeps polling:
 * the peer must never see it vanish mid-stream. */
static bool finish(struct gen *g, bool *drained)
{
	g->stopping = true;
	*drained = poll_until(g, no_outstanding, DRAIN_MS);
	uint64_t close_ms = CLOSE_MS + (g->o.syn_rate > 0 ? (uint64_t)(1000.0 * (g->c_hi - g->c_lo) / g->o.syn_rate) : 0);
	uint64_t end = rte_rdtsc() + g->hz / 1000u * close_ms;
	double toks = 0;
	uint64_t last = rte_rdtsc();
	for (uint32_t i = g->c_lo; i < g->c_hi;) {
		if (rte_rdtsc() > end)
			break;
		if (g->o.syn_rate > 0) {
			refill(&toks, &last, g->syn_per_tsc, g->syn_cap, rte_rdtsc());
			if (toks < 1.0) {
				gen_poll_pub(g);
				continue;
			}
			toks -= 1.0;
		}
		struct gconn *c = &g->c[i++];
		if (c->tc && c->st == CS_READY)
			gen_end_session(g, c);
	}
	return poll_until(g, all_closed, end > rte_rdtsc() ? (end - rte_rdtsc()) * 1000u / g->hz + 1 : 1);
}

static int phase_of(const struct genrun *r)
{
	return __atomic_load_n(&r->phase, __ATOMIC_ACQUIRE);
}

/* This thread's CPU time (ns) and involuntary context switches so far. */
static void thread_cpu(uint64_t *ns, uint64_t *ivcsw)
{
	struct timespec ts;
	struct rusage ru;

	*ns = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0
		      ? (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec : 0;
	*ivcsw = getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nivcsw : 0;
}

/* The end of the measured window for this lcore's CPU figures. */
static void stop_measuring_cpu(struct gen *g)
{
	uint64_t ns, iv;

	thread_cpu(&ns, &iv);
	g->ct.cpu_ns = ns - g->cpu0_ns;
	g->ct.preempted = iv - g->ivcsw0;
}

static void start_measuring(struct gen *g)
{
	/* Measure from here: every counter starts at zero. */
	memset(&g->ct, 0, sizeof(g->ct));
	g->busy_t0 = 0;
	g->ct.conns_opened = g->ever_opened;
	lfe_hist_reset(&g->lat);
	lfe_hist_reset(&g->lat_sec);
	if (g->o.wl != LFE_WL_HOLD)
		lfe_hist_reset(&g->lat_conn);
	clock_tick(g);
	g->tok_last = g->now_tsc;
	g->tokens = 0;
	thread_cpu(&g->cpu0_ns, &g->ivcsw0);
	g->measuring = true;
}

/* A worker lcore: connect, wait for the start, measure, finish. */
static int worker_main(void *arg)
{
	struct gen *g = arg;
	struct genrun *r = g->run;
	bool drained;

	(void)lfe_unmap_guard_enter(g->lc, &g->guard_turn);
	clock_tick(g);
	g->syn_last = g->now_tsc;
	while (phase_of(r) == PH_CONNECT)
		gen_poll_pub(g);
	start_measuring(g);
	while (phase_of(r) == PH_MEASURE)
		gen_poll_pub(g);
	stop_measuring_cpu(g);
	/* Unanswered binds and unclosed connections are counted by the main
	 * lcore from n_wait and n_live once this returns. */
	finish(g, &drained);
	gen_publish(g);
	lfe_unmap_guard_leave(g->lc);
	return 0;
}

static uint64_t opened_all(const struct genrun *r)
{
	return PUB_SUM(r, opened);
}

/* The link up, the next hop's MAC known (ARP), our addresses announced and
 * the other lcores launched: 0, or 2 (said on stderr). */
static int reach_peer(struct genrun *r)
{
	struct gen *g = r->lc[0];
	char a[16];
	uint64_t t0;

	if (lfe_dpdk_port_wait_link(g->port_id, LINK_WAIT_MS, &g_stop) < 0) {
		fprintf(stderr, "ldapfe-gen: error: link of %s still down after %u ms "
				"(is the peer running?%s)\n", g->o.port, LINK_WAIT_MS,
			r->nl > 1 ? " a memif server must offer as many queues as --lcores" : "");
		return 2;
	}

	lfe_net_fmt_ipv4(g->next_hop, a);
	t0 = rte_rdtsc();
	uint64_t last_req = 0;
	g->rx_all_queues = true;
	while (!g->have_peer) {
		clock_tick(g);
		if (g->now_tsc - t0 > g->hz / 1000u * g->o.arp_timeout_ms || g_stop) {
			fprintf(stderr, "ldapfe-gen: error: no ARP answer from %s within %u ms\n", a,
				g->o.arp_timeout_ms);
			return 2;
		}
		if (g->now_tsc - last_req > g->hz / 5u) {
			gen_arp_request(g, g->o.src_ip);
			last_req = g->now_tsc;
		}
		gen_poll_once(g);
	}
	g->rx_all_queues = false;
	printf("ldapfe-gen: %s is at " RTE_ETHER_ADDR_PRT_FMT "\n", a,
	       RTE_ETHER_ADDR_BYTES((const struct rte_ether_addr *)g->peer_mac));
	gen_announce(g);

	/* Every lcore connects its own share (paced by --syn-rate when set). */
	for (uint32_t j = 1; j < r->nl; j++) {
		memcpy(r->lc[j]->peer_mac, g->peer_mac, LFE_ETH_ALEN);
		r->lc[j]->have_peer = true;
	}
	unsigned lcore_id, j = 1;
	RTE_LCORE_FOREACH_WORKER(lcore_id) {
		if (j == r->nl)
			break;
		if (rte_eal_remote_launch(worker_main, r->lc[j], lcore_id) != 0) {
			fprintf(stderr, "ldapfe-gen: cannot launch lcore %u\n", lcore_id);
			return 2;
		}
		j++;
	}
	return 0;
}

static int run(struct genrun *r)
{
	struct gen *g = r->lc[0];
	char a[16];
	uint64_t t0;

	if (reach_peer(r) != 0)
		return 2;
	clock_tick(g);
	g->syn_last = g->now_tsc;
	t0 = g->now_tsc;
	int status = 0;
	if (g->o.wl == LFE_WL_HOLD) {
		/* Hold: wait until all are open, or no progress for the connect timeout. */
		uint64_t last_n = 0, last_t = t0, target = g->o.conns, next_sec = t0 + g->hz;
		for (;;) {
			gen_poll_pub(g);
			uint64_t n = PUB_SUM(r, established);
			if (n >= target || g_stop)
				break;
			if (n != last_n) {
				last_n = n;
				last_t = g->now_tsc;
			}
			if (g->now_tsc - last_t > g->hz / 1000u * g->o.connect_timeout_ms)
				break;
			if (g->now_tsc >= next_sec && !g->o.quiet) {
				printf("ldapfe-gen: opening: t=%.0fs established=%" PRIu64 " of %" PRIu64 "\n",
				       (double)(g->now_tsc - t0) / (double)g->hz, n, target);
				next_sec += g->hz;
			}
		}
		if (last_n == 0 && PUB_SUM(r, established) == 0)
			status = 2;
	} else if (g->o.wl != LFE_WL_SYNFLOOD) {
		uint64_t end = t0 + g->hz / 1000u * g->o.connect_timeout_ms;
		while (opened_all(r) == 0 && PUB_SUM(r, connect_errs) < g->o.conns && g->now_tsc < end && !g_stop)
			gen_poll_pub(g);
		if (opened_all(r) == 0)
			status = 2;
	}
	double open_s = (double)(rte_rdtsc() - t0) / (double)g->hz;
	if (status == 2) {
		lfe_net_fmt_ipv4(g->o.dst_ip, a);
		fprintf(stderr, "ldapfe-gen: error: no connection to %s:%u within %u ms (%s)\n", a,
			g->o.dport, g->o.connect_timeout_ms,
			PUB_SUM(r, connect_errs) ? "refused or reset" : "no SYN-ACK");
		__atomic_store_n(&r->phase, PH_STOP, __ATOMIC_RELEASE);
		rte_eal_mp_wait_lcore();
		return 2;
	}
	if (g->o.wl == LFE_WL_HOLD)
		printf("ldapfe-gen: hold: %" PRIu64 " of %u connections established in %.3f s\n",
		       PUB_SUM(r, established), g->o.conns, open_s);

	start_measuring(g);
	uint64_t start = g->now_tsc, next_sec = start + g->hz;
	__atomic_store_n(&r->phase, PH_MEASURE, __ATOMIC_RELEASE);
	uint64_t end = start + (uint64_t)(g->o.duration_s * (double)g->hz);
	uint64_t prev_binds = 0, prev_sess = 0, prev_tsc = start;
	while (!g_stop && g->now_tsc < end) {
		gen_poll_pub(g);
		if (g->now_tsc >= next_sec) {
			if (!g->o.quiet)
				/* Labelled by the second it closes (t=1s, 2s, ...) even
				 * when this lcore was descheduled past several: the
				 * rates are over the time that really passed. */
				gen_report_second(g, (double)(next_sec - start) / (double)g->hz, &prev_binds,
					      &prev_sess, (double)(g->now_tsc - prev_tsc) / (double)g->hz);
			prev_tsc = g->now_tsc;
			next_sec += g->hz;
		}
	}
	stop_measuring_cpu(g);
	double secs = (double)(g->now_tsc - start) / (double)g->hz;
	static struct totals T;   /* histograms: not on the stack */
	memset(&T, 0, sizeof(T));
	/* Established connections and memory at the end of the measured
	 * time, before closing (the workers published at most 10 ms ago). */
	gen_publish(g);
	uint64_t est_end = PUB_SUM(r, established), rss = gen_rss_kib();
	__atomic_store_n(&r->phase, PH_STOP, __ATOMIC_RELEASE);
	bool drained, closed = finish(g, &drained);
	gen_publish(g);
	rte_eal_mp_wait_lcore();
	uint32_t unanswered = 0, open_left = 0;
	for (uint32_t k = 0; k < r->nl; k++) {
		unanswered += r->lc[k]->n_wait;
		open_left += r->lc[k]->n_live;
	}
	/* A bind answered while connections closed still counts as answered. */
	drained = unanswered == 0;
	closed = closed && open_left == 0;
	gen_totals_of(r, &T);
	T.est = est_end;
	T.rss_kib = rss;
	T.open_s = open_s;
	for (uint32_t i = 0; i < g->o.conns; i++)
		T.binders += r->c[i].binder;
	gen_report_final(r, &T, secs, stdout, false);
	if (!drained)
		printf("ldapfe-gen: warning: %u binds still unanswered %u ms after the end\n", unanswered, DRAIN_MS);
	if (!closed)
		printf("ldapfe-gen: warning: %u connections still open after the end\n", open_left);
	if (T.ct.rxc.bad)
		printf("ldapfe-gen: warning: %" PRIu64 " frames with bad checksums received and dropped\n",
		       T.ct.rxc.bad);
	if (g->o.json[0]) {
		FILE *f = fopen(g->o.json, "w");
		if (!f) {
			fprintf(stderr, "ldapfe-gen: --json %s: %s\n", g->o.json, strerror(errno));
			return 2;
		}
		gen_report_final(r, &T, secs, f, true);
		fclose(f);
	}
	return errors_total(&T.ct) || !drained ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct genrun run_state;
	struct genrun *r = &run_state;
	char err[256];
	int status = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* --help / --version (alone, or after "--") answer without EAL. */
	for (int i = argc == 2 ? 1 : 0, seen = argc == 2; i < argc; i++) {
		if (!seen) {
			seen = strcmp(argv[i], "--") == 0;
			continue;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("ldapfe-gen " LFE_VERSION "\n");
			return 0;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			lfe_gen_usage(stdout);
			fputs("\nEAL's own options come before \"--\" (ldapfe-gen --no-huge --help lists them).\n",
			      stdout);
			return 0;
		}
	}
	int rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "ldapfe-gen: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	argc -= rc;
	argv += rc;
	argv[0] = (char *)"ldapfe-gen";
	lfe_gen_opts_defaults(&r->o);
	if (lfe_gen_opts_parse(argc, argv, &r->o, err, sizeof(err)) < 0) {
		bool help = strcmp(err, "help") == 0;
		if (!help)
			fprintf(stderr, "ldapfe-gen: %s\n", err);
		lfe_gen_usage(help ? stdout : stderr);
		rte_eal_cleanup();
		return help ? 0 : 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	r->nl = r->o.lcores;
	if (r->nl > rte_lcore_count()) {
		fprintf(stderr, "ldapfe-gen: --lcores %u but EAL gave %u lcore%s (-l)\n", r->nl,
			rte_lcore_count(), rte_lcore_count() > 1 ? "s" : "");
		goto out;
	}
	if (lfe_gen_dist_init(&r->dist, r->o.dist, r->o.users, r->o.zipf_s) < 0) {
		fprintf(stderr, "ldapfe-gen: --dist: bad parameters\n");
		goto out;
	}
	r->bt = lfe_gen_bindtab_new(r->o.user_fmt, r->o.pw_fmt, &rc);
	if (!r->bt) {
		fprintf(stderr, "ldapfe-gen: bind templates: %s\n", strerror(-rc));
		goto out;
	}

	/* The (address, port) tuples spread over the connections
	 * (gen/tuples.h); lcore j owns connections
	 * [j * per_lcore, (j + 1) * per_lcore). */
	if (lfe_gen_tuples_init(&r->tup, r->o.src_lo ? r->o.src_lo : r->o.src_ip,
				r->o.src_lo ? r->o.src_hi - r->o.src_lo + 1u : 1u, r->o.sport_lo, r->o.sport_hi,
				r->o.conns) < 0) {
		fprintf(stderr, "ldapfe-gen: fewer (address, port) pairs than connections\n");
		goto out;
	}
	if (r->o.flood_lo && lfe_gen_tuples_init(&r->ftup, r->o.flood_lo, r->o.flood_hi - r->o.flood_lo + 1u,
						 r->o.sport_lo, r->o.sport_hi, 1) < 0) {
		fprintf(stderr, "ldapfe-gen: --flood-ips: no tuples\n");
		goto out;
	}
	r->per_lcore = (r->o.conns + r->nl - 1u) / r->nl;
	r->c = calloc(r->o.conns, sizeof(*r->c));
	if (!r->c) {
		fprintf(stderr, "ldapfe-gen: out of memory for %u connections\n", r->o.conns);
		goto out;
	}
	uint64_t pick = r->o.seed ? r->o.seed : 1;
	for (uint32_t i = 0; i < r->o.conns; i++) {
		r->c[i].idx = i;
		/* hold: which connections bind, fixed by the seed */
		pick = pick * 6364136223846793005ull + 1442695040888963407ull;
		r->c[i].binder = (double)(pick >> 11) * 0x1.0p-53 < r->o.bind_frac;
	}
	for (uint32_t j = 0; j < r->nl; j++) {
		r->lc[j] = calloc(1, sizeof(struct gen));
		if (!r->lc[j]) {
			fprintf(stderr, "ldapfe-gen: out of memory\n");
			goto out;
		}
	}
	if (r->o.tls) {
		char ip[16];
		lfe_net_fmt_ipv4(r->o.dst_ip, ip);
		struct lfe_tlsc_cfg tcfg = {
			.version = r->o.tls_version, .ca_file = r->o.tls_ca, .verify_ip = ip,
			.resume = (enum lfe_tlsc_resume)r->o.tls_resume, .slots = r->o.conns,
			.starttls = r->o.starttls,
			.records = r->o.tls_records_openssl ? LFE_TLSC_RECORDS_OPENSSL : LFE_TLSC_RECORDS_LDAPFE,
		};
		r->tlsc = lfe_tlsc_new(&tcfg, err, sizeof(err));
		if (!r->tlsc) {
			fprintf(stderr, "ldapfe-gen: %s\n", err);
			goto out;
		}
	}
	r->lc[0]->o = r->o;
	if (gen_port_setup(r, r->lc[0]) < 0)
		goto out;
	for (uint32_t j = 0; j < r->nl; j++) {
		if (gen_init(r, r->lc[j], r->lc[0], j) < 0)
			goto stop;
		if (r->nl > 1) {
			char name[32];
			snprintf(name, sizeof(name), "gen_handoff%u", j);
			r->handoff[j] = rte_ring_create(name, HANDOFF_RING, (int)rte_socket_id(), RING_F_SC_DEQ);
			if (!r->handoff[j]) {
				fprintf(stderr, "ldapfe-gen: handoff ring: %s\n", rte_strerror(rte_errno));
				goto stop;
			}
		}
	}
	/* The main lcore polls from here to run's end: a memif peer that goes
	 * meanwhile has its regions unmapped only between turns (unmapguard.h). */
	lfe_unmap_guard_set_filter(rte_thread_is_intr);
	(void)lfe_unmap_guard_enter(0, &r->lc[0]->guard_turn);
	status = run(r);
	lfe_unmap_guard_leave(0);
stop:
	lfe_dpdk_port_close(r->lc[0]->port_id);
out:
	for (uint32_t j = 0; j < r->nl && j < LFE_GEN_MAX_LCORES; j++) {
		gen_free(r->lc[j]);
		rte_ring_free(r->handoff[j]);
	}
	lfe_gen_bindtab_free(r->bt);
	for (uint32_t i = 0; r->c && r->tlsc && i < r->o.conns; i++)
		lfe_tlsc_conn_free(r->c[i].tls);   /* lfe_tcp_free made no callbacks */
	lfe_tlsc_free(r->tlsc);
	free(r->c);
	rte_eal_cleanup();
	return status;
}
