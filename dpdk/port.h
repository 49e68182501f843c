/* dpdk/port.h — bring up one DPDK port, for ldapfe (dataplane/port.c) and
 * ldapfe-gen (gen/setup.c) alike: find the device or hot-plug it, pick its
 * checksum offloads and symmetric RSS, configure and start its queue pairs,
 * wait for its link.
 *
 * Takes plain parameters: what the caller's config decides (queue count,
 * pools, sockets, MTU) comes in lfe_dpdk_port_conf; the startup lines stay
 * the caller's, from what lfe_dpdk_port holds.
 *
 * Thread rules: main lcore only, before the pollers start and after they
 * stop. Errors: 0 or a negative errno, with a line in err (no prefix: the
 * caller names the port).
 */
#ifndef LFE_DPDK_PORT_H
#define LFE_DPDK_PORT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "net/net.h"

struct lfe_dpdk_port {
	uint16_t port_id;
	char name[64];             /* the ethdev: the device string up to its first ',' */
	const char *driver;        /* the PMD's name (static in the PMD) */
	uint16_t max_rxq, max_txq; /* queues the device offers */
	int socket;                /* the device's NUMA socket (SOCKET_ID_ANY: unknown) */
	/* Set by lfe_dpdk_port_start: */
	uint16_t n_queues;         /* queue pairs configured */
	bool rss;                  /* symmetric RSS over TCP/IPv4 */
	/* Checksum offload in use: rx, the port verifies IPv4 and TCP
	 * checksums (dpdk/mbuf_csum.h reads its verdicts); tx, it computes
	 * them for frames marked so (lfe_net_build_tcp_offload). */
	bool rx_csum, tx_csum;
	uint8_t mac[LFE_ETH_ALEN];
};

/* What the caller wants of the port. */
struct lfe_dpdk_port_conf {
	uint16_t n_queues;         /* queue pairs (1 or more; at most the device's) */
	bool csum;                 /* checksum offload, each direction where the device has both
	                            * of its flags (IPv4 and TCP); else software */
	bool rss;                  /* symmetric RSS when n_queues > 1 and the device hashes TCP/IPv4 */
	uint16_t mtu;              /* 0: the device's default; -ENOTSUP from the PMD is ignored */
	struct rte_mempool *pool;  /* the receive queues' mbufs */
	const int *queue_socket;   /* queue i's descriptors on socket queue_socket[i]; NULL: the device's */
};

/* The device named by dev ("name[,args]", a vdev string): the ethdev of
 * that name if EAL already made it (--vdev), else hot-plugged with
 * rte_dev_probe(), so a config file or one option alone describes it.
 * Fills port_id, name, driver, max_rxq/max_txq and socket. */
int lfe_dpdk_port_find(const char *dev, struct lfe_dpdk_port *p, char *err, size_t errlen);

/* Configure (offloads, RSS, MTU, descriptors adjusted to the device's
 * limits, n_queues queue pairs) and start p, found by lfe_dpdk_port_find;
 * read its MAC. */
int lfe_dpdk_port_start(struct lfe_dpdk_port *p, const struct lfe_dpdk_port_conf *c, char *err,
			size_t errlen);

/* Stop and close the port (after lfe_dpdk_port_start, or after a failed one). */
void lfe_dpdk_port_close(uint16_t port_id);

/* Wait until the link is up: memif and real NICs need a moment before frames
 * flow. 0; -ETIMEDOUT after ms; -EINTR as soon as *stop is set. */
int lfe_dpdk_port_wait_link(uint16_t port_id, uint32_t ms, const volatile sig_atomic_t *stop);

#endif
