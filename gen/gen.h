/* gen/gen.h — ldapfe-gen's own header: the state of a run and of each
 * generator lcore, shared by its files (not a library: nothing outside
 * gen/ includes it).
 *
 *   main.c    the run: phases, the main lcore's loop, exit status
 *   setup.c   the port (dpdk/port.h) and each lcore's state
 *   work.c    the poll loop: frames in, the workloads (connections, binds,
 *             the flood), frames out (dpdk/txbuf.h); the hot path, one file
 *   report.c  the per-second line and the final report (text, JSON)
 *
 * Thread rules: struct gen is touched by its own lcore only, apart from
 * `pub` (relaxed atomics, read by the main lcore); struct genrun is set up
 * before the lcores start and read-only after, except `phase` and the
 * handoff rings.
 */
#ifndef LFE_GEN_GEN_H
#define LFE_GEN_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dpdk/txbuf.h"
#include "gen/dist.h"
#include "gen/hist.h"
#include "gen/opts.h"
#include "gen/pdu.h"
#include "gen/rxcsum.h"
#include "gen/tlsc.h"
#include "gen/tuples.h"
#include "net/net.h"
#include "net/tcp.h"

#define BURST 32u
/* Everything one poll emits leaves in one tx burst (flushed early only if
 * this fills). */
#define TXBUF 512u
#define HANDOFF_RING 4096u
/* hold: handshakes in flight per lcore at most. A server that falls behind
 * would otherwise fill its half-open table and answer with SYN cookies, and
 * the last ACK of a cookie handshake, if lost, leaves an idle connection
 * open on this side only (nothing is ever sent on it to tell). */
#define HOLD_HALF_OPEN 512u
#define POOL_SIZE 16383u
#define LINK_WAIT_MS 10000u
#define DRAIN_MS 3000u
#define CLOSE_MS 2000u
#define MIX_MAX_BINDS 8u
/* The flood: SYNs per poll at most, one rx burst's worth (the SYN-ACKs come
 * back at the rate the SYNs leave). */
#define FLOOD_BATCH BURST
#define FLOOD_RX_BURSTS 8u

enum cstate { CS_IDLE, CS_CONNECTING, CS_READY, CS_WAIT, CS_CLOSING };
enum bkind { BK_OK, BK_WRONG, BK_UNKNOWN };

enum err_kind {
	E_MSGID, E_OP, E_RC, E_DECODE, E_NOTICE, E_RESET, E_CLOSED, E_CONNECT, E_SEND, E_TLS, E_MAX
};

struct gconn {
	struct lfe_tcp_conn *tc;
	uint32_t idx;
	uint32_t t_cur;           /* its tuple in use (gen/tuples.h) */
	uint8_t st, kind;
	int32_t msgid;
	uint32_t left;            /* binds still to make on this connection (mix) */
	uint32_t answered;        /* responses on this connection */
	uint64_t t_req;           /* tsc when the outstanding bind was queued */
	uint64_t t_syn;           /* tsc when the connection was opened */
	bool opened;              /* reached ESTABLISHED */
	bool in_ready;            /* queued in g->ready (at most once) */
	struct lfe_tlsc_conn *tls;   /* --tls: from on_open to on_close */
	bool binder;              /* hold: this connection binds */
};

struct counters {
	uint64_t binds_sent, binds_ok, binds_invalid, sessions, conns_opened;
	uint64_t err[E_MAX];
	uint64_t rc_unexpected[3];     /* by kind asked: ok, wrong, unknown */
	struct lfe_txbuf_stats tx;     /* frames sent; dropped: refused by the port or not built */
	uint64_t rx_frames, rx_drops;
	struct lfe_gen_rxcsum_ct rxc;  /* received checksums: checked, by the port, bad */
	uint64_t busy_cycles;          /* polls that received or sent something */
	uint64_t busy_turns;           /* and how many such polls */
	uint64_t handed_off, handoff_drops;   /* segments passed to their owner lcore */
	/* the flood: SYNs the port took, SYNs it refused (ring full), answers back */
	uint64_t flood_syns, flood_tx_drops, flood_synacks, flood_rsts;
	/* The lcore thread's CPU time in the measured window and the times it
	 * was preempted. A poll loop's CPU time is the whole window less what
	 * other threads ran on its CPU; busy_cycles are wall-clock and count
	 * such time too when it falls in a busy poll (the server's crypto
	 * thread in tls-bench shares the generator's CPU). */
	uint64_t cpu_ns, preempted;
};
#define N_COUNTERS (sizeof(struct counters) / sizeof(uint64_t))
_Static_assert(sizeof(struct counters) % sizeof(uint64_t) == 0, "counters are all uint64_t");

/* A FIFO of connection indices (each connection is in it at most once). */
struct idxq {
	uint32_t *v;
	uint32_t cap, head, n;
};

static inline void q_push(struct idxq *q, uint32_t i)
{
	if (q->n == q->cap)   /* cannot happen: each conn is queued at most once */
		return;
	uint32_t at = q->head + q->n;   /* head < cap and n < cap: no division to wrap */
	q->v[at >= q->cap ? at - q->cap : at] = i;
	q->n++;
}

static inline bool q_pop(struct idxq *q, uint32_t *i)
{
	if (!q->n)
		return false;
	*i = q->v[q->head];
	q->head = q->head + 1u == q->cap ? 0 : q->head + 1u;
	q->n--;
	return true;
}

enum phase { PH_CONNECT = 0, PH_MEASURE = 1, PH_STOP = 2 };

/* What a worker lcore publishes for the main lcore's per-second line and
 * phase decisions: written with relaxed atomic stores by the owner only. */
struct pub {
	uint64_t binds, sessions, errors, established, opened, connect_errs;
	uint64_t syns, synacks;
};

struct genrun;

/* One generator lcore: its queue pair, its connections, its TCP stack and
 * its counters. Only its own lcore touches it (apart from `pub`). */
struct gen {
	struct lfe_gen_opts o;    /* copies of shared, read-only settings */
	struct genrun *run;
	uint64_t cpu0_ns, ivcsw0; /* the thread's CPU time and preemptions at the start */
	uint16_t port_id, q;      /* our queue pair */
	uint32_t lc;              /* index among the generator lcores */
	uint64_t guard_turn;      /* lfe_unmap_guard_turn's counter (slot lc) */
	struct rte_mempool *pool;
	uint8_t mac[LFE_ETH_ALEN];
	uint8_t peer_mac[LFE_ETH_ALEN];
	bool have_peer;
	bool rx_all_queues;       /* ARP phase: the answer may land on any queue */
	bool port_rx_csum;        /* the port gives receive checksum verdicts */
	bool port_tx_csum;        /* the port finishes transmit checksums */
	struct lfe_gen_rxcsum rxs;   /* which frames are checked in software */
	uint32_t next_hop;
	uint16_t ip_id;
	struct lfe_txbuf txb;     /* our queue's (dpdk/txbuf.h), slots in tx */
	struct rte_mbuf *tx[TXBUF];
	/* Received mbufs done with, reset, for the next frames sent (a
	 * persistent bind receives one and sends one): no mempool round trip. */
	struct rte_mbuf *spare[BURST];
	uint16_t nspare;

	struct lfe_tcp *tcp;
	struct lfe_tlsc *tlsc;    /* NULL: cleartext (the run's: --tls takes one lcore) */
	struct gconn *c;          /* the run's array; ours are c_lo .. c_hi-1 */
	uint32_t c_lo, c_hi;
	struct idxq ready, reconnect;
	/* A TLS handshake step ran in this segment's callbacks (tens of µs):
	 * its flight, and the first bind when it finished, leave before the
	 * next frame is handled (tcp_in). */
	bool flight;
	bool measuring;           /* binds are issued only between start and end */
	bool unpaced;             /* --rate max, binds only (next_bind sends at once) */
	bool stopping;            /* no new binds or connections */
	uint64_t rng;
	bool shares;              /* wrong or unknown shares asked */
	const struct lfe_gen_dist *dist;
	const struct lfe_gen_bindtab *bt;

	uint64_t hz, us_mult, now_tsc, now_us;
	uint64_t busy_t0;         /* start of the last turn when it was busy, else 0 */
	double tokens, tok_per_tsc, tok_cap;
	uint64_t tok_last;
	double syn_tokens, syn_per_tsc, syn_cap;
	uint64_t syn_last;

	uint32_t n_live;          /* connections with a TCB (connecting or open) */
	uint32_t n_est;           /* established now */
	uint32_t n_wait;          /* binds outstanding */
	uint32_t est_peak;
	uint32_t close_cur;       /* paced close: next connection to close */
	uint64_t flood_next;      /* flood: next tuple number (gen/tuples.h) */
	double flood_tokens, flood_per_tsc, flood_cap;
	uint64_t flood_last;
	uint64_t next_pub;

	struct counters ct;
	/* Bind latency: each answer is added to lat_sec only (one histogram
	 * per bind); the per-second line (lcore 0) reads lat_sec, then folds
	 * it into lat. The window's whole is lat + lat_sec (totals_of). */
	struct lfe_hist lat, lat_sec;
	struct lfe_hist lat_conn;     /* SYN to ESTABLISHED */
	uint64_t ever_opened;
	struct pub pub;
};

/* What every lcore shares: set up before the workers start, read-only
 * after, except `phase` (main writes) and the handoff rings. */
struct genrun {
	struct lfe_gen_opts o;
	struct lfe_tlsc *tlsc;    /* --tls/--starttls: one lcore only (opts.c) */
	uint32_t nl;
	struct gen *lc[LFE_GEN_MAX_LCORES];
	struct rte_ring *handoff[LFE_GEN_MAX_LCORES];
	uint32_t per_lcore;       /* connections per lcore (the last may have fewer) */
	struct lfe_gen_tuples tup;   /* each connection's (address, port) tuples */
	struct lfe_gen_tuples ftup;  /* the flood's tuples (when o.flood_lo) */
	int phase;                /* enum phase, atomic */
	struct lfe_gen_dist dist;
	struct lfe_gen_bindtab *bt;
	struct gconn *c;
};

/* Totals over the lcores, for the final report. */
struct totals {
	struct counters ct;
	struct lfe_tcp_stats ts;
	struct lfe_hist lat, lat_conn;
	uint64_t est, est_peak, rss_kib;
	double open_s;            /* hold: time to establish them */
	uint32_t binders;
};

static inline uint64_t errors_total(const struct counters *c)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < E_MAX; k++)
		n += c->err[k];
	return n;
}

static inline uint64_t binds_of(const struct counters *c)
{
	return c->binds_ok + c->binds_invalid + c->err[E_RC];
}

static inline void clock_tick(struct gen *g)
{
	g->now_tsc = rte_rdtsc();
	g->now_us = (uint64_t)(((unsigned __int128)g->now_tsc * g->us_mult) >> 32);
}

/* Token bucket: refill from the clock, capped. */
static inline void refill(double *tokens, uint64_t *last, double per_tsc, double cap, uint64_t now)
{
	*tokens += (double)(now - *last) * per_tsc;
	*last = now;
	if (*tokens > cap)
		*tokens = cap;
}

/* ---- work.c: the poll loop (one lcore's) ---- */
extern const struct lfe_tcp_ops gen_tcp_ops;
/* One turn: receive, feed TCP, issue, flush. */
void gen_poll_once(struct gen *g);
/* A turn, and every 10 ms the figures published (gen_publish). */
void gen_poll_pub(struct gen *g);
void gen_publish(struct gen *g);
/* Unbind and close one connection. */
void gen_end_session(struct gen *g, struct gconn *c);
/* ARP: ask the next hop for its MAC from spa; announce every source address. */
void gen_arp_request(struct gen *g, uint32_t spa);
void gen_announce(struct gen *g);

/* ---- setup.c ---- */
/* The port, set up on lcore 0's state (others copy it in gen_init). 0 or <0, said on stderr. */
int gen_port_setup(struct genrun *r, struct gen *g);
/* Lcore j's state: its connections, tx buffer, TCP stack. */
int gen_init(struct genrun *r, struct gen *g, const struct gen *g0, uint32_t j);
void gen_free(struct gen *g);

/* ---- report.c ---- */
/* The sum over the lcores of a published figure (struct pub). */
uint64_t gen_pub_sum(const struct genrun *r, size_t off);
#define PUB_SUM(r, field) gen_pub_sum(r, offsetof(struct pub, field))
void gen_report_second(struct gen *g, double t, uint64_t *prev_binds, uint64_t *prev_sess, double dt);
void gen_totals_of(const struct genrun *r, struct totals *T);
void gen_report_final(const struct genrun *r, const struct totals *T, double secs, FILE *f, bool json);
uint64_t gen_rss_kib(void);

#endif
