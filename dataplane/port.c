/* dataplane/port.c — bring up the configured ports: the daemon's layer
 * over dpdk/port.h (which finds or hot-plugs each [portN] dev, picks its
 * offloads and starts its queues). Queue pairs: one per worker when the
 * device has enough (worker i owns queue i), else one queue with software
 * steering (worker.c).
 * Mbuf pools: one per NUMA socket that has a port, sized for every worker's
 * queues and bursts; workers take the pool of their own socket.
 * Checksum offload ([portN] checksum_offload = auto): receive IPv4+TCP
 * verification and transmit IPv4+TCP computation, each direction enabled
 * when the device offers both of its flags; otherwise the worker sums in
 * software (net.c) as it does with checksum_offload = off.
 */
#include <errno.h>
#include <numa.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "dataplane/port.h"
#include "dataplane/worker.h"
#include "dpdk/port.h"

#define POOL_PER_WORKER 8192u

static struct rte_mempool *pool_for(struct lfe_daemon *d, int socket, char *err, size_t errlen)
{
	unsigned s = socket < 0 ? 0 : (unsigned)socket;
	char name[RTE_MEMPOOL_NAMESIZE];

	if (d->mbuf_pool[s])
		return d->mbuf_pool[s];
	snprintf(name, sizeof(name), "lfe_mbuf_%u", s);
	unsigned n = rte_align32pow2(POOL_PER_WORKER * d->n_workers) - 1;
	d->mbuf_pool[s] = rte_pktmbuf_pool_create(name, n, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)s);
	if (d->mbuf_pool[s] == NULL)
		snprintf(err, errlen, "mbuf pool of %u on socket %u: %s", n, s, rte_strerror(rte_errno));
	return d->mbuf_pool[s];
}

static const char *csum_word(bool on, bool wanted)
{
	return on ? "offload" : wanted ? "software (device lacks it)" : "software";
}

/* The queue layout: one queue pair per worker when the device has enough
 * (worker i owns queue i), else one with software steering; queue q's
 * memory near the core that polls it. */
static void plan_queues(const struct lfe_daemon *d, struct lfe_port *p, const struct lfe_dpdk_port *dp,
			int qsock[LFE_MAX_WORKERS])
{
	uint16_t maxq = (uint16_t)RTE_MIN(dp->max_rxq, dp->max_txq);
	if (maxq >= d->n_workers) {
		p->n_queues = (uint16_t)d->n_workers;
	} else {
		p->n_queues = 1;
		p->steer = d->n_workers > 1;
	}
	for (uint16_t q = 0; q < p->n_queues; q++)
		qsock[q] = p->steer ? p->socket : (int)rte_lcore_to_socket_id(d->lcore_ids[q]);
}

static int setup_one(struct lfe_daemon *d, uint32_t pi, char *err, size_t errlen)
{
	const struct lfe_cfg_port *cp = &d->cfg.port[pi];
	struct lfe_port *p = &d->port[pi];
	struct lfe_dpdk_port dp;
	int qsock[LFE_MAX_WORKERS];
	char e[200];
	int rc;

	rc = lfe_dpdk_port_find(cp->dev, &dp, e, sizeof(e));
	if (rc < 0) {
		snprintf(err, errlen, "[port%u] dev: %s", pi, e);
		return rc == -EINVAL || rc == -ENODEV ? -ENODEV : rc;
	}
	p->port_id = dp.port_id;
	snprintf(p->name, sizeof(p->name), "%s", dp.name);
	p->addr = cp->addr;
	p->mask = cp->prefix_len == 32 ? 0xffffffffu : ~(0xffffffffu >> cp->prefix_len);
	p->gateway = cp->gateway;
	p->mtu = cp->mtu;
	p->socket = dp.socket;
	plan_queues(d, p, &dp, qsock);
	struct rte_mempool *mp = pool_for(d, p->socket, err, errlen);
	if (mp == NULL)
		return -ENOMEM;
	if (p->steer) {
		char rn[RTE_RING_NAMESIZE];
		snprintf(rn, sizeof(rn), "lfe_ptx_%u", pi);
		p->tx_ring = rte_ring_create(rn, 4096, p->socket, RING_F_SC_DEQ);
		if (p->tx_ring == NULL) {
			snprintf(err, errlen, "[port%u] steering tx ring: %s", pi, rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}
	const struct lfe_dpdk_port_conf conf = {
		.n_queues = p->n_queues, .csum = cp->checksum_offload, .rss = true, .mtu = p->mtu,
		.pool = mp, .queue_socket = qsock,
	};
	rc = lfe_dpdk_port_start(&dp, &conf, e, sizeof(e));
	if (rc < 0) {
		snprintf(err, errlen, "[port%u] %s: %s", pi, p->name, e);
		return rc;
	}
	p->rss = dp.rss;
	p->rx_csum = dp.rx_csum;
	p->tx_csum = dp.tx_csum;
	memcpy(p->mac, dp.mac, LFE_ETH_ALEN);
	char a[16];
	lfe_net_fmt_ipv4(p->addr, a);
	printf("ldapfe: port%u %s (ethdev %u, %s) %s/%u mac " RTE_ETHER_ADDR_PRT_FMT
	       " %u queue(s)%s%s, socket %d\n",
	       pi, p->name, p->port_id, dp.driver, a, cp->prefix_len,
	       RTE_ETHER_ADDR_BYTES((const struct rte_ether_addr *)p->mac), p->n_queues,
	       p->rss ? ", symmetric RSS" : "", p->steer ? ", software steering" : "", p->socket);
	printf("ldapfe: port%u checksums: rx %s, tx %s\n", pi, csum_word(p->rx_csum, cp->checksum_offload),
	       csum_word(p->tx_csum, cp->checksum_offload));
	return 0;
}

int lfe_ports_setup(struct lfe_daemon *d, char *err, size_t errlen)
{
	if (numa_available() >= 0)
		printf("ldapfe: NUMA: %d node(s)\n", numa_max_node() + 1);
	else
		printf("ldapfe: NUMA: not available, one memory node assumed\n");
	for (uint32_t pi = 0; pi < d->cfg.n_ports; pi++) {
		int rc = setup_one(d, pi, err, errlen);
		if (rc < 0)
			return rc;
		d->n_ports = pi + 1;
	}
	return 0;
}

void lfe_ports_close(struct lfe_daemon *d)
{
	for (uint32_t pi = 0; pi < d->n_ports; pi++) {
		struct lfe_port *p = &d->port[pi];
		lfe_dpdk_port_close(p->port_id);
		if (p->tx_ring) {
			struct rte_mbuf *m;
			while (rte_ring_dequeue(p->tx_ring, (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(p->tx_ring);
			p->tx_ring = NULL;
		}
	}
	d->n_ports = 0;
}
