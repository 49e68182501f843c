/* dataplane/port.c — bring up the configured ports.
 *
 * A port's `dev` is a vdev string. If EAL already created a device of that
 * name (--vdev on the command line) it is used as is; otherwise it is
 * hot-plugged here with rte_dev_probe(), so the config file alone describes
 * the ports. Queue pairs: one per worker when the device has enough (worker
 * i owns queue i), else one queue with software steering (worker.c).
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
#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "dataplane/port.h"
#include "dataplane/worker.h"

#define NB_RXD 1024u
#define NB_TXD 1024u
#define POOL_PER_WORKER 8192u

/* Symmetric Toeplitz key: 0x6d5a repeated makes hash(a→b) == hash(b→a),
 * so both directions of a flow reach the same queue. */
static const uint8_t sym_rss_key[40] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

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

static int find_or_probe(const char *dev, uint16_t *port_id, char *name, size_t namelen,
			 char *err, size_t errlen)
{
	size_t l = strcspn(dev, ",");
	if (l == 0 || l >= namelen) {
		snprintf(err, errlen, "bad device name in \"%s\"", dev);
		return -EINVAL;
	}
	memcpy(name, dev, l);
	name[l] = '\0';
	if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
		return 0;
	int rc = rte_dev_probe(dev);
	if (rc < 0) {
		snprintf(err, errlen, "cannot probe \"%s\": %s", dev, strerror(-rc));
		return rc;
	}
	if (rte_eth_dev_get_port_by_name(name, port_id) != 0) {
		snprintf(err, errlen, "\"%s\" probed but no ethdev named \"%s\"", dev, name);
		return -ENODEV;
	}
	return 0;
}

#define RX_CSUM (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM)
#define TX_CSUM (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM)

/* Which checksum offloads the port gets: both flags of a direction or none. */
static void pick_csum(struct lfe_port *p, const struct lfe_cfg_port *cp,
		      const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	p->rx_csum = cp->checksum_offload && (info->rx_offload_capa & RX_CSUM) == RX_CSUM;
	p->tx_csum = cp->checksum_offload && (info->tx_offload_capa & TX_CSUM) == TX_CSUM;
	if (p->rx_csum)
		conf->rxmode.offloads |= RX_CSUM;
	if (p->tx_csum)
		conf->txmode.offloads |= TX_CSUM;
}

static const char *csum_word(bool on, bool wanted)
{
	return on ? "offload" : wanted ? "software (device lacks it)" : "software";
}

static int setup_one(struct lfe_daemon *d, uint32_t pi, char *err, size_t errlen)
{
	const struct lfe_cfg_port *cp = &d->cfg.port[pi];
	struct lfe_port *p = &d->port[pi];
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	struct rte_ether_addr mac;
	char e[200];
	int rc;

	if (find_or_probe(cp->dev, &p->port_id, p->name, sizeof(p->name), e, sizeof(e)) < 0) {
		snprintf(err, errlen, "[port%u] dev: %s", pi, e);
		return -ENODEV;
	}
	p->addr = cp->addr;
	p->mask = cp->prefix_len == 32 ? 0xffffffffu : ~(0xffffffffu >> cp->prefix_len);
	p->gateway = cp->gateway;
	p->mtu = cp->mtu;
	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc < 0) {
		snprintf(err, errlen, "[port%u] %s: device info: %s", pi, p->name, strerror(-rc));
		return rc;
	}
	uint16_t maxq = (uint16_t)RTE_MIN(info.max_rx_queues, info.max_tx_queues);
	if (maxq >= d->n_workers) {
		p->n_queues = (uint16_t)d->n_workers;
	} else {
		p->n_queues = 1;
		p->steer = d->n_workers > 1;
	}
	memset(&conf, 0, sizeof(conf));
	uint64_t rss_hf = info.flow_type_rss_offloads & RTE_ETH_RSS_NONFRAG_IPV4_TCP;
	if (p->n_queues > 1 && rss_hf) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)sym_rss_key;
		conf.rx_adv_conf.rss_conf.rss_key_len = sizeof(sym_rss_key);
		conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
		p->rss = true;
	}
	pick_csum(p, cp, &info, &conf);
	rc = rte_eth_dev_configure(p->port_id, p->n_queues, p->n_queues, &conf);
	if (rc < 0) {
		snprintf(err, errlen, "[port%u] %s: configure %u queues: %s", pi, p->name, p->n_queues,
			 strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_set_mtu(p->port_id, p->mtu);
	if (rc < 0 && rc != -ENOTSUP) {
		snprintf(err, errlen, "[port%u] mtu %u: %s", pi, p->mtu, strerror(-rc));
		return rc;
	}
	uint16_t nrx = NB_RXD, ntx = NB_TXD;
	rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nrx, &ntx);
	p->socket = rte_eth_dev_socket_id(p->port_id);
	struct rte_mempool *mp = pool_for(d, p->socket, err, errlen);
	if (mp == NULL)
		return -ENOMEM;
	for (uint16_t q = 0; q < p->n_queues; q++) {
		/* Queue q is polled by worker q: its memory belongs near that core. */
		int qs = p->steer ? p->socket : (int)rte_lcore_to_socket_id(d->lcore_ids[q]);
		rc = rte_eth_rx_queue_setup(p->port_id, q, nrx, (unsigned)qs, NULL, mp);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->port_id, q, ntx, (unsigned)qs, NULL);
		if (rc < 0) {
			snprintf(err, errlen, "[port%u] queue %u: %s", pi, q, strerror(-rc));
			return rc;
		}
	}
	if (p->steer) {
		char rn[RTE_RING_NAMESIZE];
		snprintf(rn, sizeof(rn), "lfe_ptx_%u", pi);
		p->tx_ring = rte_ring_create(rn, 4096, p->socket, RING_F_SC_DEQ);
		if (p->tx_ring == NULL) {
			snprintf(err, errlen, "[port%u] steering tx ring: %s", pi, rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}
	rc = rte_eth_dev_start(p->port_id);
	if (rc < 0) {
		snprintf(err, errlen, "[port%u] %s: start: %s", pi, p->name, strerror(-rc));
		return rc;
	}
	rte_eth_macaddr_get(p->port_id, &mac);
	memcpy(p->mac, mac.addr_bytes, LFE_ETH_ALEN);
	char a[16];
	lfe_net_fmt_ipv4(p->addr, a);
	printf("ldapfe: port%u %s (ethdev %u, %s) %s/%u mac " RTE_ETHER_ADDR_PRT_FMT
	       " %u queue(s)%s%s, socket %d\n",
	       pi, p->name, p->port_id, info.driver_name, a, cp->prefix_len, RTE_ETHER_ADDR_BYTES(&mac),
	       p->n_queues, p->rss ? ", symmetric RSS" : "", p->steer ? ", software steering" : "",
	       p->socket);
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
		rte_eth_dev_stop(p->port_id);
		rte_eth_dev_close(p->port_id);
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
