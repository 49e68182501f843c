/* gen/tuples.c — see tuples.h. */
#include "gen/tuples.h"

#include <errno.h>

int lfe_gen_tuples_init(struct lfe_gen_tuples *t, uint32_t ip_lo, uint32_t n_ips, uint16_t port_lo,
			uint16_t port_hi, uint32_t conns)
{
	if (!n_ips || !conns || port_lo > port_hi || (uint64_t)ip_lo + n_ips - 1u > UINT32_MAX)
		return -EINVAL;
	uint32_t n_ports = (uint32_t)(port_hi - port_lo) + 1u;
	uint64_t per = (uint64_t)n_ips * n_ports / conns;
	if (per == 0)
		return -EINVAL;
	*t = (struct lfe_gen_tuples){
		.ip_lo = ip_lo, .n_ips = n_ips, .port_lo = port_lo, .n_ports = n_ports, .conns = conns,
		.per = (uint32_t)(per > 65535u ? 65535u : per),
	};
	return 0;
}

void lfe_gen_tuple_at(const struct lfe_gen_tuples *t, uint64_t n, uint32_t *ip, uint16_t *port)
{
	n %= (uint64_t)t->n_ips * t->n_ports;
	*ip = t->ip_lo + (uint32_t)(n % t->n_ips);
	*port = (uint16_t)(t->port_lo + n / t->n_ips);
}

void lfe_gen_tuple(const struct lfe_gen_tuples *t, uint32_t conn, uint32_t k, uint32_t *ip,
		   uint16_t *port)
{
	lfe_gen_tuple_at(t, conn + (uint64_t)(k % t->per) * t->conns, ip, port);
}

int64_t lfe_gen_tuple_conn(const struct lfe_gen_tuples *t, uint32_t ip, uint16_t port)
{
	if (ip < t->ip_lo || ip - t->ip_lo >= t->n_ips || port < t->port_lo ||
	    (uint32_t)(port - t->port_lo) >= t->n_ports)
		return -1;
	uint64_t n = (uint64_t)(port - t->port_lo) * t->n_ips + (ip - t->ip_lo);
	if (n >= (uint64_t)t->per * t->conns)
		return -1;
	return (int64_t)(n % t->conns);
}
