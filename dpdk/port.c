/* dpdk/port.c — one DPDK port brought up (port.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>

#include "dpdk/port.h"

#define NB_RXD 1024u
#define NB_TXD 1024u

/* Symmetric Toeplitz key: 0x6d5a repeated makes hash(a→b) == hash(b→a),
 * so both directions of a flow reach the same queue. */
static const uint8_t sym_rss_key[40] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

int lfe_dpdk_port_find(const char *dev, struct lfe_dpdk_port *p, char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	size_t l = strcspn(dev, ",");

	memset(p, 0, sizeof(*p));
	if (l == 0 || l >= sizeof(p->name)) {
		snprintf(err, errlen, "bad device name in \"%s\"", dev);
		return -EINVAL;
	}
	memcpy(p->name, dev, l);
	p->name[l] = '\0';
	if (rte_eth_dev_get_port_by_name(p->name, &p->port_id) != 0) {
		int rc = rte_dev_probe(dev);
		if (rc < 0) {
			snprintf(err, errlen, "cannot probe \"%s\": %s", dev, strerror(-rc));
			return rc;
		}
		if (rte_eth_dev_get_port_by_name(p->name, &p->port_id) != 0) {
			snprintf(err, errlen, "\"%s\" probed but no ethdev named \"%s\"", dev, p->name);
			return -ENODEV;
		}
	}
	int rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc < 0) {
		snprintf(err, errlen, "%s: device info: %s", p->name, strerror(-rc));
		return rc;
	}
	p->driver = info.driver_name;
	p->max_rxq = info.max_rx_queues;
	p->max_txq = info.max_tx_queues;
	p->socket = rte_eth_dev_socket_id(p->port_id);
	return 0;
}

#define RX_CSUM (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM)
#define TX_CSUM (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM)

/* The offloads and RSS the port gets: both checksum flags of a direction
 * or none (a PMD that offers one alone is summed in software). */
static void pick_conf(struct lfe_dpdk_port *p, const struct lfe_dpdk_port_conf *c,
		      const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	uint64_t rss_hf = info->flow_type_rss_offloads & RTE_ETH_RSS_NONFRAG_IPV4_TCP;
	p->rss = c->rss && c->n_queues > 1 && rss_hf;
	if (p->rss) {
		conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf->rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)sym_rss_key;
		conf->rx_adv_conf.rss_conf.rss_key_len = sizeof(sym_rss_key);
		conf->rx_adv_conf.rss_conf.rss_hf = rss_hf;
	}
	p->rx_csum = c->csum && (info->rx_offload_capa & RX_CSUM) == RX_CSUM;
	p->tx_csum = c->csum && (info->tx_offload_capa & TX_CSUM) == TX_CSUM;
	if (p->rx_csum)
		conf->rxmode.offloads |= RX_CSUM;
	if (p->tx_csum)
		conf->txmode.offloads |= TX_CSUM;
}

int lfe_dpdk_port_start(struct lfe_dpdk_port *p, const struct lfe_dpdk_port_conf *c, char *err,
			size_t errlen)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	struct rte_ether_addr mac;

	int rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc < 0) {
		snprintf(err, errlen, "device info: %s", strerror(-rc));
		return rc;
	}
	pick_conf(p, c, &info, &conf);
	rc = rte_eth_dev_configure(p->port_id, c->n_queues, c->n_queues, &conf);
	if (rc < 0) {
		snprintf(err, errlen, "configure %u queues: %s", c->n_queues, strerror(-rc));
		return rc;
	}
	p->n_queues = c->n_queues;
	if (c->mtu) {
		rc = rte_eth_dev_set_mtu(p->port_id, c->mtu);
		if (rc < 0 && rc != -ENOTSUP) {
			snprintf(err, errlen, "mtu %u: %s", c->mtu, strerror(-rc));
			return rc;
		}
	}
	uint16_t nrx = NB_RXD, ntx = NB_TXD;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nrx, &ntx);
	if (rc < 0) {
		snprintf(err, errlen, "descriptors: %s", strerror(-rc));
		return rc;
	}
	for (uint16_t q = 0; q < c->n_queues; q++) {
		int qs = c->queue_socket ? c->queue_socket[q] : p->socket;
		rc = rte_eth_rx_queue_setup(p->port_id, q, nrx, (unsigned)qs, NULL, c->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->port_id, q, ntx, (unsigned)qs, NULL);
		if (rc < 0) {
			snprintf(err, errlen, "queue %u: %s", q, strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(p->port_id);
	if (rc < 0) {
		snprintf(err, errlen, "start: %s", strerror(-rc));
		return rc;
	}
	rte_eth_macaddr_get(p->port_id, &mac);
	memcpy(p->mac, mac.addr_bytes, LFE_ETH_ALEN);
	return 0;
}

void lfe_dpdk_port_close(uint16_t port_id)
{
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
}

int lfe_dpdk_port_wait_link(uint16_t port_id, uint32_t ms, const volatile sig_atomic_t *stop)
{
	struct rte_eth_link link;
	uint64_t t0 = rte_rdtsc(), limit = rte_get_tsc_hz() / 1000u * ms;

	for (;;) {
		memset(&link, 0, sizeof(link));
		rte_eth_link_get_nowait(port_id, &link);
		if (link.link_status == RTE_ETH_LINK_UP)
			return 0;
		if (*stop)
			return -EINTR;
		if (rte_rdtsc() - t0 > limit)
			return -ETIMEDOUT;
		rte_delay_us_sleep(10000);
	}
}
