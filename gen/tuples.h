/* gen/tuples.h — which (source address, source port) pairs each of
 * ldapfe-gen's connections uses. Pure C (no DPDK), unit-tested.
 *
 * The run's tuples are numbered address first: tuple t is address
 * ip_lo + t % n_ips, port port_lo + t / n_ips. Connection i owns the
 * tuples i, i + conns, i + 2·conns, ... (`per` of them) and walks them in
 * turn as it reconnects (TIME_WAIT on our side never blocks it). So at any
 * step the connections spread evenly over the addresses, ⌈conns / n_ips⌉
 * at most on one: a server's per-source cap sized conns / n_ips holds
 * them all. (A layout that gives each connection a block of consecutive
 * ports fills the first addresses past that cap and leaves the last ones
 * empty: 1M connections on 64 addresses put 17,000 on each of 59.)
 *
 * Plain values, no allocation; any thread may read one once initialised.
 */
#ifndef LFE_GEN_TUPLES_H
#define LFE_GEN_TUPLES_H

#include <stdint.h>

struct lfe_gen_tuples {
	uint32_t ip_lo, n_ips;     /* host order */
	uint32_t port_lo, n_ports;
	uint32_t conns;
	uint32_t per;              /* tuples per connection, 1 .. 65535 */
};

/* n_ips addresses from ip_lo, ports port_lo..port_hi, conns connections.
 * 0, or -EINVAL when a count is 0, port_lo > port_hi, the addresses wrap
 * past 255.255.255.255, or there are fewer tuples than connections. */
int lfe_gen_tuples_init(struct lfe_gen_tuples *t, uint32_t ip_lo, uint32_t n_ips, uint16_t port_lo,
			uint16_t port_hi, uint32_t conns);

/* Tuple k (0 ≤ k < per, taken modulo per) of connection conn (< conns). */
void lfe_gen_tuple(const struct lfe_gen_tuples *t, uint32_t conn, uint32_t k, uint32_t *ip,
		   uint16_t *port);

/* Tuple number n of the whole space (taken modulo n_ips · n_ports): what a
 * SYN flood cycles through. */
void lfe_gen_tuple_at(const struct lfe_gen_tuples *t, uint64_t n, uint32_t *ip, uint16_t *port);

/* The connection owning (ip, port), or -1 when no connection owns it. */
int64_t lfe_gen_tuple_conn(const struct lfe_gen_tuples *t, uint32_t ip, uint16_t port);

#endif
