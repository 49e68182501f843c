/* dataplane/daemon.h — the ldapfe daemon as a whole: its configuration,
 * ports, workers and verifier, as main.c builds them.
 *
 * Thread rules: everything here is written by the main lcore before the
 * workers are launched and only read afterwards, except `stop`,
 * `workers_done` and `draining` (atomics), and the live keys of cfg, which
 * `ldapfectl reload` rewrites while every worker is parked (control.h). Per-worker state lives in worker.h.
 */
#ifndef LFE_DATAPLANE_DAEMON_H
#define LFE_DATAPLANE_DAEMON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "backend/ppolicy.h"
#include "backend/store.h"
#include "dataplane/config.h"
#include "dataplane/log.h"
#include "net/net.h"

#define LFE_MAX_WORKERS  64u

struct lfe_worker;
struct lfe_verifier;
struct lfe_control;
struct lfe_worker_ctl;
struct lfe_tls;
struct lfe_tlsoff;

struct lfe_port {
	uint16_t port_id;
	uint8_t mac[LFE_ETH_ALEN];
	uint32_t addr, mask, gateway;
	uint16_t mtu;
	uint16_t n_queues;      /* queue pairs configured */
	bool steer;             /* one queue, several workers: software steering */
	bool rss;
	/* Checksum offload in use (port.c; [portN] checksum_offload): rx, the
	 * port verifies IPv4 and TCP checksums and the worker trusts its
	 * verdict; tx, the port computes them for the TCP frames we build. */
	bool rx_csum, tx_csum;
	int socket;
	char name[64];
	/* Steering: frames sent by workers other than 0 go to worker 0 here. */
	struct rte_ring *tx_ring;
};

struct lfe_daemon {
	struct lfe_config cfg;
	struct lfe_impair_opts impair;
	struct lfe_store *store;
	char suffix[1024];              /* normalized, for scope checks */
	char naming[1024];              /* as shown in the root DSE */
	unsigned pw_flags;
	uint32_t n_ports;
	struct lfe_port port[LFE_CFG_MAX_PORTS];
	struct rte_mempool *mbuf_pool[RTE_MAX_NUMA_NODES];
	uint32_t n_workers;
	unsigned lcore_ids[LFE_MAX_WORKERS];   /* worker i runs on lcore_ids[i] */
	struct lfe_worker *w[LFE_MAX_WORKERS];
	struct lfe_verifier *verifier;
	struct lfe_pp_grace grace;      /* grace logins this instance counted
	                                 * (ppolicy.h), every worker's */
	struct lfe_tls *tls;            /* [tls] context; NULL without ldaps_ports */
	struct lfe_tlsoff *tlsoff;      /* handshake crypto threads; NULL: inline */
	uint64_t tsc_hz;
	unsigned stats_interval;
	volatile atomic_int stop;       /* 1: graceful shutdown requested */
	atomic_int workers_done;
	/* 1: `ldapfectl drain`: workers refuse new connections (RST) and
	 * serve the open ones until the control thread sets stop. */
	atomic_int draining;
	struct lfe_control *ctl;        /* control socket (control.h); NULL: none */
	/* Its slots the workers serve (worker_ctl.h), set and cleared by
	 * the control socket while no worker runs; NULL: none. */
	struct lfe_worker_ctl *wctl;
	struct lfe_log log;             /* [daemon] log, log_level: the sink (log.h) */
	struct lfe_log_src log_main;    /* the main thread's events */
};

#endif
