/* dataplane/main.c — the ldapfe daemon: wires config, store, ports,
 * verifier threads and one worker per lcore, then waits for a signal.
 *
 *   ldapfe [EAL args] -- --config FILE [--impair drop=PPM,dup=PPM,reorder=PPM,seed=N]
 *                        [--stats-interval S]
 *   ldapfe --help | --version | --counters   (no EAL)
 *
 * The config file is INI read with rte_cfgfile ('#' starts a comment); its
 * keys are documented in config.h and conf/ldapfe.conf. Ports are vdev
 * strings hot-plugged at start (or devices EAL already made with --vdev).
 *
 * SIGHUP: reload the configuration as `ldapfectl reload` does (live keys,
 * and a new TLS context from the [tls] files); a bad file refuses the
 * whole reload and is logged.
 *
 * SIGINT/SIGTERM: workers stop accepting, FIN their connections and keep
 * polling for up to LFE_SHUTDOWN_US so the FINs and last responses leave,
 * then the final counters are printed and the process exits 0. A second
 * signal exits at once (status 1).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_interrupts.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "ldap/dn.h"
#include "backend/pwscheme.h"
#include "dataplane/control.h"
#include "dpdk/unmapguard.h"
#include "dataplane/metrics.h"
#include "dataplane/port.h"
#include "dataplane/priv.h"
#include "dataplane/telemetry.h"
#include "tls/tls.h"
#include "tls/tlsoff.h"
#include "dataplane/verifier.h"
#include "dataplane/worker.h"

/* Signal handlers reach the daemon only through a static; set before the
 * handlers are installed. */
static struct lfe_daemon *sig_daemon;
static volatile sig_atomic_t sig_count;

static void on_signal(int sig)
{
	(void)sig;
	if (++sig_count > 1)
		_exit(1);
	if (sig_daemon)
		atomic_store(&sig_daemon->stop, 1);
}

/* SIGHUP: reload (certificates and keys included) from the control
 * thread; d->ctl is set before this handler is installed and SIGHUP is
 * ignored again before the control is stopped. */
static void on_hup(int sig)
{
	(void)sig;
	if (sig_daemon)
		lfe_control_request_reload(sig_daemon->ctl);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ldapfe [EAL args] -- --config FILE "
		   "[--impair drop=PPM,dup=PPM,reorder=PPM,seed=N] [--stats-interval S]\n");
}

static void help(FILE *f)
{
	usage(f);
	fputs("\nldapfe, the kernel-bypass LDAP authentication front end.\n\n"
	      "  --config FILE        the configuration (INI; see ldapfe.conf and dataplane/config.h)\n"
	      "  --stats-interval S   print per-core counters every S seconds (1..86400)\n"
	      "  --impair SPEC        test only: drop/duplicate/reorder frames (parts per million)\n"
	      "  --counters           list every counter: NAME KIND MODULE METRIC HELP (no EAL)\n"
	      "  --help, --version    this text, the version (no EAL needed for either)\n\n"
	      "EAL's own options come before \"--\": see ldapfe --no-huge --help (DPDK's list).\n"
	      "The running daemon is managed with ldapfectl status|stats|conns|reload|drain|top.\n", f);
}

/* --help, --version and --counters after "--" (or as the only argument) answer
 * without starting EAL, which would want hugepages and devices. */
static int early_option(int argc, char **argv)
{
	int i = 1;
	if (argc != 2) {
		while (i < argc && strcmp(argv[i], "--") != 0)
			i++;
		i++;
	}
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--version") == 0) {
			printf("ldapfe " LFE_VERSION "\n");
			return 0;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			help(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--counters") == 0) {
			lfe_ctr_print_table(stdout);
			return 0;
		}
	}
	return -1;
}

static int load_config(const char *path, struct lfe_config *c)
{
	char err[512];
	int rc = lfe_config_load(path, c, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "ldapfe: %s\n", err);
	return rc;
}

static int pick_lcores(struct lfe_daemon *d)
{
	const struct lfe_config *c = &d->cfg;

	d->n_workers = 0;
	if (c->n_lcores) {
		for (uint32_t i = 0; i < c->n_lcores; i++) {
			if (!rte_lcore_is_enabled(c->lcores[i])) {
				fprintf(stderr, "ldapfe: [workers] lcores: lcore %u is not enabled by EAL (-l/--lcores)\n",
					c->lcores[i]);
				return -EINVAL;
			}
			if (d->n_workers == LFE_MAX_WORKERS) {
				fprintf(stderr, "ldapfe: [workers] lcores: more than %u\n", LFE_MAX_WORKERS);
				return -EINVAL;
			}
			d->lcore_ids[d->n_workers++] = c->lcores[i];
		}
		return 0;
	}
	unsigned l;
	RTE_LCORE_FOREACH_WORKER(l) {
		if (d->n_workers < LFE_MAX_WORKERS)
			d->lcore_ids[d->n_workers++] = l;
	}
	if (d->n_workers == 0)
		d->lcore_ids[d->n_workers++] = rte_get_main_lcore();
	return 0;
}

static void *stats_thread(void *arg)
{
	struct lfe_daemon *d = arg;
	uint64_t ticks = 0;

	while (!atomic_load(&d->stop)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		if (++ticks % (d->stats_interval * 10u) == 0) {
			char pfx[48];
			snprintf(pfx, sizeof(pfx), "ldapfe: t=%" PRIu64 "s ", ticks / 10u);
			lfe_stats_print(d, stdout, pfx);
		}
	}
	return NULL;
}

static int setup_store(struct lfe_daemon *d)
{
	const char *msg = NULL;
	int err = 0;
	struct lfe_store_info info;

	d->store = lfe_store_open(d->cfg.store_path,
				  LFE_STORE_RDONLY | (d->cfg.store_preload ? LFE_STORE_PRELOAD : 0u), 0, &err, &msg);
	if (d->store == NULL) {
		fprintf(stderr, "ldapfe: [store] path: %s: %s\n", d->cfg.store_path,
			msg ? msg : strerror(-err));
		return -EINVAL;
	}
	err = lfe_store_info(d->store, &info);
	if (err < 0) {
		fprintf(stderr, "ldapfe: [store] path: %s: %s\n", d->cfg.store_path, strerror(-err));
		return err;
	}
	if (d->cfg.suffix[0]) {
		ssize_t n = lfe_dn_normalize((const uint8_t *)d->cfg.suffix, strlen(d->cfg.suffix),
					     d->suffix, sizeof(d->suffix));
		if (n < 0) {
			fprintf(stderr, "ldapfe: [ldap] suffix: \"%s\": not a valid DN\n", d->cfg.suffix);
			return -EINVAL;
		}
		snprintf(d->naming, sizeof(d->naming), "%s", d->cfg.suffix);
	} else {
		snprintf(d->suffix, sizeof(d->suffix), "%s", info.suffix);
		snprintf(d->naming, sizeof(d->naming), "%s", info.suffix_orig[0] ? info.suffix_orig : info.suffix);
	}
	d->pw_flags = d->cfg.allow_cleartext ? LFE_PW_ALLOW_CLEARTEXT : 0;
	/* The dummy verification of unknown DNs: the configured scheme, or
	 * the store's own default (empty). */
	err = lfe_store_set_bind_scheme(d->store, d->cfg.default_scheme);
	if (err < 0) {
		fprintf(stderr, "ldapfe: [store] default_scheme: \"%s\": %s\n", d->cfg.default_scheme,
			err == -ENOTSUP ? "a scheme this build cannot verify" : "not a {SCHEME} name");
		return -EINVAL;
	}
	printf("ldapfe: store %s: %" PRIu64 " entries, suffix \"%s\"\n", d->cfg.store_path,
	       info.entries, d->naming);
	return 0;
}

/* Handshake steps off the workers ([tls] handshake_*), when TLS is on. */
static int start_tlsoff(struct lfe_daemon *d)
{
	const struct lfe_config *c = &d->cfg;
	if (d->tls == NULL || c->tls_handshake_threads == 0)
		return 0;
	uint32_t nw = d->n_workers ? d->n_workers : 1;
	struct lfe_tlsoff_cfg oc = {
		.threads = c->tls_handshake_threads, .workers = nw,
		.queue = c->tls_handshake_queue / nw ? c->tls_handshake_queue / nw : 1,
		.per_source = c->tls_handshake_per_source, .share_pct = c->share_pressure_pct,
		.spawn = lfe_ctrl_spawn,   /* crypto threads: control threads too */
	};
	int err = 0;
	d->tlsoff = lfe_tlsoff_new(&oc, &err);
	if (d->tlsoff == NULL) {
		fprintf(stderr, "ldapfe: [tls] handshake_threads: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

/* ------------------------------------------------------------ main's steps */

/* What main's steps share besides the daemon. */
struct run {
	const char *config, *impair;   /* --config, --impair */
	uid_t uid;                     /* [daemon] user, group: whom to become (0: stay) */
	gid_t gid;
	struct lfe_metrics *metrics;   /* NULL: none */
	pthread_t stats_th;            /* --stats-interval's thread, when stats_on */
	bool stats_on;
	bool fast_exit;                /* a clean stop: DPDK memory goes with the process */
};

/* Before EAL starts a thread, no_new_privs, so every thread has it
 * (priv.h); then EAL. The number of arguments EAL took, or -1. */
static int start_eal(int argc, char **argv)
{
	char err[256];
	if (lfe_priv_no_new_privs(err, sizeof(err)) < 0) {
		fprintf(stderr, "ldapfe: %s\n", err);
		return -1;
	}
	int rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "ldapfe: EAL init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	/* The memif PMD unmaps a gone peer's regions from the interrupt
	 * thread: that munmap waits for the workers' turns (unmapguard.h). */
	lfe_unmap_guard_set_filter(rte_thread_is_intr);
	return rc;
}

/* Our options, after EAL's. 0: go on; 1: answered (-h), exit 0; -1: bad
 * options, said on stderr. */
static int parse_options(int argc, char **argv, struct lfe_daemon *d, struct run *r)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "impair", required_argument, NULL, 'i' },
		{ "stats-interval", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o;
	optind = 1;
	while ((o = getopt_long(argc, argv, "c:i:s:h", opts, NULL)) != -1) {
		uint64_t v;
		switch (o) {
		case 'c': r->config = optarg; break;
		case 'i': r->impair = optarg; break;
		case 's':
			if (lfe_config_parse_u64(optarg, 1, 86400, &v) < 0) {
				fprintf(stderr, "ldapfe: --stats-interval: \"%s\": seconds 1..86400\n", optarg);
				return -1;
			}
			d->stats_interval = (unsigned)v;
			break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -1;
		}
	}
	if (r->config == NULL || optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* The config file, the log, the TLS context, --impair and the user to
 * run as: everything read before the privilege drop. */
static int setup_config(struct lfe_daemon *d, struct run *r)
{
	char err[256];

	if (load_config(r->config, &d->cfg) < 0)
		return -1;
	enum lfe_log_dest ld = LFE_LOG_STDERR;
	enum lfe_log_level ll = LFE_LOG_INFO;
	lfe_log_parse_dest(d->cfg.log_dest, &ld);      /* checked by lfe_config_finish */
	lfe_log_parse_level(d->cfg.log_level, &ll);
	lfe_log_init(&d->log, ld, ll);
	lfe_log_src_init(&d->log_main, &d->log, NULL);
	/* Before the privilege drop: key files are often root's only. */
	if (d->cfg.n_ldaps_ports || d->cfg.tls_certificate[0]) {   /* LDAPS, StartTLS */
		d->tls = lfe_tls_from_config(&d->cfg, NULL, err, sizeof(err));
		if (d->tls == NULL) {
			fprintf(stderr, "ldapfe: %s: %s\n", r->config, err);
			return -1;
		}
	}
	if (r->impair && lfe_config_parse_impair(r->impair, &d->impair, err, sizeof(err)) < 0) {
		fprintf(stderr, "ldapfe: %s\n", err);
		return -1;
	}
	if (d->cfg.user[0] && lfe_priv_resolve(d->cfg.user, d->cfg.group, &r->uid, &r->gid, err, sizeof(err)) < 0) {
		fprintf(stderr, "ldapfe: %s: %s\n", r->config, err);
		return -1;
	}
	return 0;
}

/* The ports, then the handshake threads (they need the worker count). */
static int setup_ports(struct lfe_daemon *d)
{
	char err[256];
	if (lfe_ports_setup(d, err, sizeof(err)) < 0) {
		fprintf(stderr, "ldapfe: %s\n", err);
		return -1;
	}
	return start_tlsoff(d);
}

/* One worker per lcore, the grace login table, the verifier threads. */
static int setup_workers(struct lfe_daemon *d)
{
	char err[256];
	for (uint32_t i = 0; i < d->n_workers; i++) {
		d->w[i] = lfe_worker_new(d, i, d->lcore_ids[i], err, sizeof(err));
		if (d->w[i] == NULL) {
			fprintf(stderr, "ldapfe: %s\n", err);
			return -1;
		}
		if (rte_lcore_to_socket_id(d->lcore_ids[i]) != (unsigned)d->port[0].socket &&
		    d->port[0].socket >= 0)
			printf("ldapfe: note: lcore %u is on socket %u, port0 on socket %d\n", d->lcore_ids[i],
			       rte_lcore_to_socket_id(d->lcore_ids[i]), d->port[0].socket);
	}
	int rc = lfe_pp_grace_init(&d->grace, LFE_PP_GRACE_SLOTS);
	if (rc < 0) {
		fprintf(stderr, "ldapfe: grace login table: %s\n", strerror(-rc));
		return -1;
	}
	const struct lfe_verifier_cfg vc = {
		.workers = d->n_workers, .queue = d->cfg.verify_queue, .threads = d->cfg.verifier_threads,
		.per_source = d->cfg.verify_per_source, .share_pct = d->cfg.share_pressure_pct,
		.pw_flags = d->pw_flags,
	};
	d->verifier = lfe_verifier_new(&vc, err, sizeof(err));
	if (d->verifier == NULL) {
		fprintf(stderr, "ldapfe: %s\n", err);
		return -1;
	}
	return 0;
}

/* Telemetry, the control socket, /metrics; then root is dropped. */
static int start_services(struct lfe_daemon *d, struct run *r)
{
	char err[256];
	int rc = lfe_telemetry_init(d);
	if (rc < 0)
		printf("ldapfe: telemetry command not registered: %s\n", strerror(-rc));
	d->ctl = lfe_control_start(d, r->config, r->uid, r->gid, err, sizeof(err));
	if (d->ctl == NULL) {
		fprintf(stderr, "ldapfe: %s\n", err);
		return -1;
	}
	if (d->cfg.metrics_listen[0]) {
		r->metrics = lfe_metrics_start(d, err, sizeof(err));
		if (r->metrics == NULL) {
			fprintf(stderr, "ldapfe: %s\n", err);
			return -1;
		}
		printf("ldapfe: metrics on http://%s/metrics\n", d->cfg.metrics_listen);
	}
	/* Ports are up, memory mapped, sockets open: root is no longer needed. */
	if (d->cfg.user[0]) {
		if (lfe_priv_drop(r->uid, r->gid, err, sizeof(err)) < 0) {
			fprintf(stderr, "ldapfe: %s\n", err);
			return -1;
		}
		printf("ldapfe: running as %s (uid %u, gid %u), no capabilities\n", d->cfg.user,
		       (unsigned)r->uid, (unsigned)r->gid);
	}
	return 0;
}

static void install_signals(struct lfe_daemon *d)
{
	sig_daemon = d;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
}

/* The "ready" banner: workers, ports, impairment, what a connection costs. */
static void print_ready(const struct lfe_daemon *d)
{
	printf("ldapfe: %u worker(s) on lcore(s)", d->n_workers);
	for (uint32_t i = 0; i < d->n_workers; i++)
		printf(" %u", d->lcore_ids[i]);
	printf(", LDAP port(s)");
	for (uint32_t i = 0; i < d->cfg.n_ldap_ports; i++)
		printf(" %u", d->cfg.ldap_ports[i]);
	if (d->cfg.n_ldaps_ports)
		printf(", LDAPS port(s)");
	for (uint32_t i = 0; i < d->cfg.n_ldaps_ports; i++)
		printf(" %u", d->cfg.ldaps_ports[i]);
	if (d->impair.on)
		printf(", impairment drop=%u dup=%u reorder=%u ppm seed=%" PRIu64, d->impair.drop_ppm,
		       d->impair.dup_ppm, d->impair.reorder_ppm, d->impair.seed);
	if (d->n_workers) {
		/* What a held, idle connection costs: its TCP control block and
		 * table links and its session slot; buffers are pooled. A bound
		 * one (or one with a bind in flight) adds its DN's chunk from the
		 * core's DN pool. */
		struct lfe_tcp_mem tm;
		struct lfe_dnpool_stats ds;
		size_t small = lfe_dnpool_chunk_size(64);   /* a typical DN's chunk */
		lfe_tcp_mem(d->w[0]->tcp, &tm);
		lfe_dnpool_stats(d->w[0]->dns, &ds);
		printf("\nldapfe: memory per idle connection %zu B (TCP control block %zu B + table %zu B, "
		       "session slot %zu B); a bound connection adds its DN's chunk (%zu B for a DN of up to "
		       "%zu bytes, %zu B at most) from a DN pool of %" PRIu64 " KiB per core; a request "
		       "split across segments borrows a %u B reassembly buffer until it is whole "
		       "(resident: the most split at once); "
		       "per core: %u connections, buffer pool %u x (%u + %u) B",
		       tm.per_conn + d->w[0]->slot_size, tm.conn_size, tm.per_conn - tm.conn_size,
		       d->w[0]->slot_size, small, small - 1,
		       lfe_dnpool_chunk_size(LFE_DN_MAX + 1), ds.pages_max * LFE_DNPOOL_PAGE / 1024,
		       LFE_PDU_SMALL,
		       d->cfg.max_conns_per_core, tm.bufs, tm.sndbuf_size, tm.rcvbuf_size);
	}
	printf("\nldapfe: ready\n");
}

/* Launch the workers (the one on the main lcore, if any, runs here) and
 * wait until every one returned. */
static void run_workers(struct lfe_daemon *d)
{
	struct lfe_worker *on_main = NULL;
	for (uint32_t i = 0; i < d->n_workers; i++) {
		if (d->lcore_ids[i] == rte_get_main_lcore()) {
			on_main = d->w[i];
			continue;
		}
		int rc = rte_eal_remote_launch(lfe_worker_main, d->w[i], d->lcore_ids[i]);
		if (rc < 0) {
			lfe_log_msg(&d->log_main, LFE_LOG_ERR, "lcore_launch_failed", lfe_log_now_us(),
				    "lcore %u: %s", d->lcore_ids[i], strerror(-rc));
			atomic_store(&d->stop, 1);
			break;
		}
	}
	if (on_main)
		lfe_worker_main(on_main);
	else
		while (!atomic_load(&d->stop))
			rte_delay_us_sleep(20000);
	rte_eal_mp_wait_lcore();
}

/* A clean stop, the workers gone: the threads beside them, then the final
 * counters. */
static void stop_services(struct lfe_daemon *d, struct run *r)
{
	atomic_store(&d->stop, 1);
	signal(SIGHUP, SIG_IGN);   /* the control goes away below */
	if (r->stats_on)
		pthread_join(r->stats_th, NULL);
	lfe_metrics_stop(r->metrics);
	r->metrics = NULL;
	lfe_control_stop(d->ctl);
	d->ctl = NULL;
	printf("ldapfe: stopping; final counters:\n");
	lfe_stats_print(d, stdout, "ldapfe: ");
	uint64_t guard_waits, guard_late;
	lfe_unmap_guard_counts(&guard_waits, &guard_late);
	printf("ldapfe: unmaps held for the workers' turns: %" PRIu64 " (%" PRIu64 " past the bound; %s)\n",
	       guard_waits, guard_late,
	       atomic_load(&lfe_unmap_guard_fenced) ? "fenced marks" : "membarrier");
}

int main(int argc, char **argv)
{
	static struct lfe_daemon daemon_state;
	struct lfe_daemon *d = &daemon_state;
	struct run r = { 0 };
	int rc, status = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((rc = early_option(argc, argv)) >= 0)
		return rc;
	if ((rc = start_eal(argc, argv)) < 0)
		return 1;
	argc -= rc;
	argv += rc;
	if ((rc = parse_options(argc, argv, d, &r)) != 0) {
		status = rc > 0 ? 0 : 1;
		goto out_eal;
	}
	if (setup_config(d, &r) < 0)
		goto out_eal;
	d->tsc_hz = rte_get_tsc_hz();
	if (pick_lcores(d) < 0 || setup_store(d) < 0)
		goto out_store;
	if (setup_ports(d) < 0)
		goto out_ports;
	if (setup_workers(d) < 0 || start_services(d, &r) < 0)
		goto out_workers;

	install_signals(d);
	if (d->stats_interval)
		r.stats_on = pthread_create(&r.stats_th, NULL, stats_thread, d) == 0;
	print_ready(d);
	run_workers(d);
	stop_services(d, &r);
	status = 0;
	r.fast_exit = true;

out_workers:
	lfe_metrics_stop(r.metrics);
	r.metrics = NULL;
	lfe_control_stop(d->ctl);
	d->ctl = NULL;
	lfe_verifier_free(d->verifier);
	d->verifier = NULL;
	lfe_pp_grace_fini(&d->grace);   /* after the verifier: no verdict comes back */
out_ports:
	lfe_ports_close(d);
	for (uint32_t i = 0; i < d->n_workers; i++)
		lfe_worker_free(d->w[i], !r.fast_exit);
	lfe_tlsoff_free(d->tlsoff);   /* after the workers: their streams cancelled what was out */
	d->tlsoff = NULL;
	for (unsigned s = 0; s < RTE_MAX_NUMA_NODES && !r.fast_exit; s++)
		rte_mempool_free(d->mbuf_pool[s]);
out_store:
	lfe_store_close(d->store);
out_eal:
	lfe_tls_free(d->tls);
	d->tls = NULL;
	rte_eal_cleanup();
	return status;
}
