/* dataplane/wstats.c — the worker's counter table and its view of the
 * modules' tables; see wstats.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/auth.h"
#include "ldap/dnpool.h"
#include "net/net.h"
#include "net/tcp.h"
#include "tls/stream.h"
#include "tls/tlsoff.h"
#include "dataplane/wstats.h"

#define C LFE_CTR_C
#define G LFE_CTR_G
/* A counter the worker counts in struct lfe_wstats itself. */
#define OWN(n, k, h) LFE_CTR_ROW(struct lfe_wstats, n, #n, k, h)

static const struct lfe_ctr worker_rows[] = {
	OWN(rx_pkts, C, "Frames received."),
	OWN(tx_pkts, C, "Frames sent."),
	OWN(rx_bytes, C, "Bytes received (frames)."),
	OWN(tx_bytes, C, "Bytes sent (frames)."),
	OWN(conns_active, G, "LDAP connections open now."),
	OWN(conns_opened, C, "LDAP connections opened."),
	OWN(conns_refused, C, "Connections refused: no session slot, or TLS could not start."),
	OWN(searches, C, "Search requests."),
	OWN(search_unindexed, C, "Searches run without an index."),
	OWN(search_yielded, C, "Search parts that yielded (slice, work or send room spent)."),
	OWN(search_limited, C, "Searches stopped at a limit."),
	OWN(verify_dropped_closed, C, "Verifications dropped: their connection closed first."),
	OWN(verify_busy_source, C, "Binds refused busy: the source's verifier share was full."),
	OWN(verify_busy_conn, C, "Binds refused busy: the connection's verifier share was full."),
	OWN(arp_replies, C, "ARP replies sent."),
	OWN(arp_requests, C, "ARP requests sent."),
	OWN(icmp_replies, C, "ICMP echo replies sent."),
	OWN(neigh_held, C, "Frames held for an unresolved neighbour."),
	OWN(neigh_released, C, "Held frames sent when the neighbour answered."),
	OWN(steered_out, C, "Frames steered to another core."),
	OWN(steered_in, C, "Frames received from another core's steering."),
	OWN(conns_first_request_expired, C, "Connections closed: no first request in time."),
	OWN(conns_bind_expired, C, "Connections closed: bind not answered in time."),
	OWN(conns_pdu_expired, C, "Connections closed: a started request not complete in time."),
	OWN(arp_ignored, C, "ARP frames not learned from."),
	OWN(pdu_no_buffer, C, "Split requests that found no reassembly buffer."),
	OWN(tls_started, C, "Connections that started TLS (LDAPS, StartTLS)."),
	OWN(tls_failed, C, "Connections closed by a TLS failure."),
	OWN(pdu_small_held, G, "Split-request reassembly buffers held now."),
	OWN(pdu_small_peak, G, "Most split-request reassembly buffers held at once."),
	OWN(busy_cycles, C, "TSC cycles of loop turns that did work."),
	OWN(total_cycles, C, "TSC cycles of the worker loop."),
};

const struct lfe_ctr_table lfe_worker_ctrs = LFE_CTR_TABLE("worker", struct lfe_wstats, worker_rows);

/* The fields of struct lfe_wstats from a to b, both included. */
#define SPAN(a, b) ((offsetof(struct lfe_wstats, b) - offsetof(struct lfe_wstats, a)) / sizeof(uint64_t) + 1)

const struct lfe_ctr_group lfe_wstats_worker = {
	.table = &lfe_worker_ctrs, .rows = worker_rows, .n = SPAN(rx_pkts, total_cycles),
};

/* A module's slot: its table t copied (pulled) into or counted in place
 * in fields a..b. X(group, t, a, b, pulled). */
#define SLOTS(X)                                                                 \
	X(lfe_wstats_auth, lfe_auth_ctrs, binds_ok, bind_cache_peeked, 0)          \
	X(lfe_wstats_tcp, lfe_tcp_ctrs, tcp_retransmits, conns_table_full, 1)      \
	X(lfe_wstats_tcp_mem, lfe_tcp_mem_ctrs, tcp_sndbufs_used, tcp_rcvbufs_used, 1) \
	X(lfe_wstats_tls, lfe_stream_ctrs, tls_handshakes, tls_record_pool_empty, 1) \
	X(lfe_wstats_tlsoff, lfe_tlsoff_ctrs, tls_cancelled, tls_queue_depth, 1)   \
	X(lfe_wstats_dnpool, lfe_dnpool_ctrs, dn_pool_bytes, dn_pool_dry, 1)

#define SLOT_GROUP(g, t, a, b, p)                                                             \
	static struct lfe_ctr g##_rows[SPAN(a, b)];                                           \
	const struct lfe_ctr_group g = { .table = &t, .rows = g##_rows, .n = SPAN(a, b),      \
					 .base = offsetof(struct lfe_wstats, a), .pulled = p };
SLOTS(SLOT_GROUP)

static struct lfe_ctr drops_rows[LFE_DROP_MAX];
const struct lfe_ctr_group lfe_wstats_drops = {
	.table = &lfe_net_drop_ctrs, .rows = drops_rows, .n = LFE_DROP_MAX,
	.base = offsetof(struct lfe_wstats, drops),
};
_Static_assert(sizeof(((struct lfe_wstats *)0)->drops) == sizeof(struct lfe_net_drops), "drops slot");
_Static_assert(offsetof(struct lfe_wstats, drops) + sizeof(struct lfe_net_drops) == sizeof(struct lfe_wstats),
	       "drops last");
_Static_assert(offsetof(struct lfe_wstats, auth) == offsetof(struct lfe_wstats, binds_ok), "auth slot");

const struct lfe_ctr_group *const lfe_wstats_groups[] = {
	&lfe_wstats_worker, &lfe_wstats_auth, &lfe_wstats_tcp, &lfe_wstats_tcp_mem, &lfe_wstats_tls,
	&lfe_wstats_tlsoff, &lfe_wstats_dnpool, &lfe_wstats_drops, NULL,
};

/* Families over fields counted in place (a table over the struct at base). */
#define FAMILY_MAX 16
static struct lfe_ctr bind_results_rows[FAMILY_MAX];
static struct lfe_ctr_group bind_results = {
	.table = &lfe_auth_bind_results, .rows = bind_results_rows, .base = offsetof(struct lfe_wstats, auth),
};
const struct lfe_ctr_group *const lfe_wstats_families[] = { &bind_results, NULL };

/* Compose group g (slot of n fields, or a family when family): its rows
 * are the table's with their offset in struct lfe_wstats. The names of
 * the slot's first and last field, a and b (NULL: not checked), must be
 * the first and last row's. NULL, or what is wrong. */
static const char *compose(const struct lfe_ctr_group *g, struct lfe_ctr *rows, size_t n, const char *a,
			   const char *b, int family)
{
	const struct lfe_ctr_table *t = g->table;
	if (family ? t->n > n : t->n != n)
		return "its count is not its slot's in struct lfe_wstats (wstats.h, wstats.c SLOTS)";
	if (!g->pulled && g->base + t->type_size > sizeof(struct lfe_wstats))
		return "its struct does not fit its slot";
	for (size_t i = 0; i < t->n; i++) {
		const struct lfe_ctr *c = &t->rows[i];
		if (c->name == NULL || (c->size != 8 && c->size != 4) || c->off % c->size ||
		    c->off + c->size > t->type_size)
			return "a row outside its struct, or of a width not 4 or 8";
		/* in place: the struct is the slot, a uint64_t a row in order */
		if (!g->pulled && (c->size != 8 || (!family && c->off != i * sizeof(uint64_t))))
			return "a row counted in place is not the slot's field of its rank";
		rows[i] = *c;
		rows[i].size = sizeof(uint64_t);
		rows[i].off = (uint16_t)(g->base + (g->pulled ? i * sizeof(uint64_t) : c->off));
	}
	if (a && (strcmp(t->rows[0].name, a) != 0 || strcmp(t->rows[n - 1].name, b) != 0))
		return "its first or last row is not its slot's first or last field";
	return NULL;
}

static void fail(const struct lfe_ctr_group *g, const char *why)
{
	fprintf(stderr, "ldapfe: counter table %s (%s): %s\n", g->table->module, g->table->type, why);
	abort();
}

/* When the program loads, before main: a defect of the tables stops every
 * program that links them (test_wstats first). */
__attribute__((constructor)) static void wstats_compose(void)
{
	const char *e;
	if (lfe_worker_ctrs.n != lfe_wstats_worker.n)
		fail(&lfe_wstats_worker, "its count is not the worker's fields' (rx_pkts..total_cycles)");
#define SLOT_COMPOSE(g, t, a, b, p) \
	if ((e = compose(&g, g##_rows, g.n, #a, #b, 0)) != NULL) \
		fail(&g, e);
	SLOTS(SLOT_COMPOSE)
	if ((e = compose(&lfe_wstats_drops, drops_rows, LFE_DROP_MAX, NULL, NULL, 0)) != NULL)
		fail(&lfe_wstats_drops, e);
	if ((e = compose(&bind_results, bind_results_rows, FAMILY_MAX, NULL, NULL, 1)) != NULL)
		fail(&bind_results, e);
	bind_results.n = lfe_auth_bind_results.n;
}

const char *lfe_ctr_prom_name(const struct lfe_ctr_group *g, const struct lfe_ctr *c, char *buf, size_t n)
{
	if (g->table->family)
		snprintf(buf, n, "%s", g->table->family);
	else
		snprintf(buf, n, "ldapfe_%s%s", c->name, c->kind == LFE_CTR_GAUGE ? "" : "_total");
	return buf;
}

static void print_group(FILE *f, const struct lfe_ctr_group *g, const char *suffix)
{
	const struct lfe_ctr_table *t = g->table;
	for (size_t i = 0; i < g->n; i++) {
		const struct lfe_ctr *c = &g->rows[i];
		char m[96];
		lfe_ctr_prom_name(g, c, m, sizeof(m));
		fprintf(f, "%s %s%s%s %s %s", c->name, c->kind == LFE_CTR_GAUGE ? "gauge" : "counter",
			t->flags & LFE_CTR_SPARSE ? ",sparse" : "", suffix, t->module, m);
		if (t->family)
			fprintf(f, "{%s=\"%s\"}", t->family_label, c->label);
		fprintf(f, " %s\n", c->help);
	}
}

void lfe_ctr_print_table(FILE *f)
{
	for (size_t k = 0; lfe_wstats_groups[k]; k++)
		print_group(f, lfe_wstats_groups[k], "");
	for (size_t k = 0; lfe_wstats_families[k]; k++)
		print_group(f, lfe_wstats_families[k], ",alias");
}
