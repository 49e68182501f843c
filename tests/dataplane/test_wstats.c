/* tests/dataplane/test_wstats.c — the modules' counter tables
 * (common/ctr.h) and the worker's view of them (dataplane/wstats.h):
 * every field of struct lfe_wstats is one row of one group, in order
 * (offsets 0, 8, 16 ... so none is left out, doubled or outside the
 * struct); each group's rows are its module table's rows, same count,
 * order, names, help, kinds, labels (the composition), and the slot's
 * fields are those the module's rows name; names unique and valid
 * Prometheus names (and the metric names derived from them); a help line
 * each; a module's rows name a field inside its own struct of the right
 * width, and lfe_wstats_pull copies exactly those into the slot; the drop
 * rows are net.h's reasons in order; the labelled families (binds by
 * result) read the fields of the counters they repeat; `ldapfe --counters`
 * prints a line a row. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/wstats.h"
#include "ldap/dnpool.h"
#include "net/net.h"
#include "net/tcp.h"
#include "tls/stream.h"
#include "tls/tlsoff.h"
#include "tests/check.h"

/* mgmt/daemonctl.c's MAX_NAMES and its name buffer (char [48]). */
#define CTL_MAX_NAMES 128u
#define CTL_NAME_MAX  47u

static bool prom_name_ok(const char *s)
{
	if (!s || !*s || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static bool lower_name_ok(const char *s)
{
	if (!s || !*s || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static void test_tables(void)
{
	const char *names[LFE_WSTATS_N + 8], *metrics[LFE_WSTATS_N + 8];
	size_t rows = 0, n_metrics = 0;

	for (size_t g = 0; lfe_wstats_groups[g]; g++) {
		const struct lfe_ctr_group *gr = lfe_wstats_groups[g];
		const struct lfe_ctr_table *t = gr->table;
		CHECK(lower_name_ok(t->module), "group %zu", g);
		CHECK(gr->n > 0, "%s", t->module);
		/* the composition: the module's table, row for row */
		CHECK_EQ(gr->n, t->n);
		CHECK(t->type && t->type_size > 0, "%s", t->module);
		CHECK(gr->pulled || gr->base + t->type_size <= sizeof(struct lfe_wstats), "%s", t->module);
		if (t->family) {
			CHECK(prom_name_ok(t->family) && strncmp(t->family, "ldapfe_", 7) == 0, "%s", t->family);
			CHECK(prom_name_ok(t->family_label), "%s", t->module);
			CHECK(t->family_help && *t->family_help && !strpbrk(t->family_help, "\n\\"), "%s", t->module);
			metrics[n_metrics++] = t->family;
		}
		for (size_t i = 0; i < gr->n && i < t->n; i++, rows++) {
			const struct lfe_ctr *c = &gr->rows[i], *m = &t->rows[i];
			CHECK(c->name == m->name && c->help == m->help && c->label == m->label && c->kind == m->kind,
			      "%s: row %zu is not %s's", c->name, i, t->module);
			CHECK_EQ(c->size, 8);
			/* a module's row: a field of its own struct, of its width */
			CHECK(m->size == 4 || m->size == 8, "%s", m->name);
			CHECK(m->off + m->size <= t->type_size, "%s: outside %s", m->name, t->type);
			CHECK(m->off % m->size == 0, "%s: misaligned", m->name);
			for (size_t j = 0; j < i; j++)
				CHECK(t->rows[j].off != m->off, "%s: same field as %s", m->name, t->rows[j].name);
			/* in place: the slot is the module's struct */
			if (!gr->pulled)
				CHECK_EQ(c->off, gr->base + m->off);
			CHECK(rows < LFE_WSTATS_N, "%s: more rows than fields", c->name);
			if (rows >= LFE_WSTATS_N)
				return;
			/* In struct order without gaps: every field has exactly one row. */
			CHECK_EQ(c->off, rows * sizeof(uint64_t));
			CHECK(lower_name_ok(c->name) && strlen(c->name) <= CTL_NAME_MAX, "%s", c->name);
			CHECK(c->help && *c->help && !strpbrk(c->help, "\n\\"), "%s: help", c->name);
			CHECK(c->kind == LFE_CTR_COUNTER || c->kind == LFE_CTR_GAUGE, "%s", c->name);
			for (size_t j = 0; j < rows; j++)
				CHECK(strcmp(names[j], c->name) != 0, "%s: twice", c->name);
			names[rows] = c->name;
			if (t->family) {
				CHECK(c->label && lower_name_ok(c->label), "%s: label", c->name);
				CHECK(c->kind == LFE_CTR_COUNTER, "%s: the family is a counter", c->name);
			} else {
				CHECK(c->label == NULL, "%s", c->name);
				static char buf[LFE_WSTATS_N][96];
				const char *m = lfe_ctr_prom_name(gr, c, buf[n_metrics], sizeof(buf[0]));
				CHECK(prom_name_ok(m), "%s", m);
				metrics[n_metrics++] = m;
			}
		}
	}
	CHECK_EQ(rows, LFE_WSTATS_N);
	CHECK(LFE_WSTATS_N <= CTL_MAX_NAMES, "ldapfectl stats keeps %u names", CTL_MAX_NAMES);
	for (size_t i = 0; i < n_metrics; i++)
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(metrics[i], metrics[j]) != 0, "metric %s twice", metrics[i]);
}

/* Every named field of a module's slot holds the row of its name (a table
 * reordered without its slot fails here, not only at its ends). */
static void test_slots(void)
{
	static const struct { const struct lfe_ctr_group *g; const char *field; size_t off; } f[] = {
#define F(g, n) { &g, #n, offsetof(struct lfe_wstats, n) }
		F(lfe_wstats_auth, binds_ok), F(lfe_wstats_auth, binds_failed),
		F(lfe_wstats_auth, binds_offloaded), F(lfe_wstats_auth, binds_busy),
		F(lfe_wstats_auth, binds_throttled), F(lfe_wstats_auth, throttled_src),
		F(lfe_wstats_auth, throttled_dn), F(lfe_wstats_auth, throttled_dn_global),
		F(lfe_wstats_auth, throttle_penalties), F(lfe_wstats_auth, bind_cache_hits),
		F(lfe_wstats_auth, bind_cache_misses), F(lfe_wstats_auth, bind_cache_invalidated),
		F(lfe_wstats_auth, bind_cache_peeked), F(lfe_wstats_tcp, tcp_retransmits),
		F(lfe_wstats_tcp, tcp_resets), F(lfe_wstats_tcp, tcp_syncookies),
		F(lfe_wstats_tcp, tcp_drop_paws), F(lfe_wstats_tcp, tcp_sack_rexmits),
		F(lfe_wstats_tcp, tcp_syn_budget_dropped), F(lfe_wstats_tcp, tcp_pushes),
		F(lfe_wstats_tcp, tcp_sndbuf_pool_empty), F(lfe_wstats_tcp, tcp_rcvbuf_pool_empty),
		F(lfe_wstats_tcp, tcp_buf_stall_closed), F(lfe_wstats_tcp, conns_src_capped),
		F(lfe_wstats_tcp, conns_evicted), F(lfe_wstats_tcp, conns_idle_closed),
		F(lfe_wstats_tcp, conns_table_full), F(lfe_wstats_tcp_mem, tcp_sndbufs_used),
		F(lfe_wstats_tcp_mem, tcp_rcvbufs_used), F(lfe_wstats_tls, tls_handshakes),
		F(lfe_wstats_tls, tls_resumed), F(lfe_wstats_tls, tls_handshake_failed),
		F(lfe_wstats_tls, tls_offloaded), F(lfe_wstats_tls, tls_busy), F(lfe_wstats_tls, tls_handover),
		F(lfe_wstats_tls, tls_handshake_expired), F(lfe_wstats_tls, tls_record_expired),
		F(lfe_wstats_tls, tls_record_pool_empty), F(lfe_wstats_tlsoff, tls_cancelled),
		F(lfe_wstats_tlsoff, tls_queue_depth), F(lfe_wstats_dnpool, dn_pool_bytes),
		F(lfe_wstats_dnpool, dn_pool_dry), F(lfe_wstats_worker, rx_pkts),
		F(lfe_wstats_worker, verify_dropped_closed), F(lfe_wstats_worker, total_cycles),
#undef F
	};
	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		const struct lfe_ctr_group *g = f[k].g;
		size_t hit = 0;
		for (size_t i = 0; i < g->n; i++)
			if (g->rows[i].off == f[k].off) {
				hit++;
				CHECK(strcmp(g->rows[i].name, f[k].field) == 0, "field %s holds %s", f[k].field,
				      g->rows[i].name);
			}
		CHECK(hit == 1, "field %s: in %s %zu times", f[k].field, g->table->module, hit);
	}
	/* every worker row names its own field (OWN) */
	for (size_t i = 0; i < lfe_wstats_worker.n; i++)
		CHECK(lfe_wstats_worker.rows[i].off == i * sizeof(uint64_t), "%s", lfe_wstats_worker.rows[i].name);
}

/* Every module table is composed once (a table exported and left out of
 * lfe_wstats_groups would show nowhere). */
static void test_every_table(void)
{
	const struct lfe_ctr_table *const t[] = {
		&lfe_worker_ctrs, &lfe_auth_ctrs, &lfe_tcp_ctrs, &lfe_tcp_mem_ctrs, &lfe_stream_ctrs,
		&lfe_tlsoff_ctrs, &lfe_dnpool_ctrs, &lfe_net_drop_ctrs,
	};
	size_t groups = 0;
	for (size_t g = 0; lfe_wstats_groups[g]; g++)
		groups++;
	CHECK_EQ(groups, sizeof(t) / sizeof(t[0]));
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		size_t hit = 0;
		for (size_t g = 0; lfe_wstats_groups[g]; g++)
			hit += lfe_wstats_groups[g]->table == t[k];
		CHECK(hit == 1, "table %s (%s): in %zu groups", t[k]->module, t[k]->type, hit);
	}
}

/* Binds by result: the family's rows read the fields of binds_ok ... */
static void test_families(void)
{
	size_t n = 0;
	for (size_t k = 0; lfe_wstats_families[k]; k++) {
		const struct lfe_ctr_group *g = lfe_wstats_families[k];
		CHECK(g->table->family != NULL && g->n == g->table->n && g->n > 0, "family %zu", k);
		for (size_t i = 0; i < g->n; i++, n++) {
			const struct lfe_ctr *c = &g->rows[i];
			size_t hit = 0;
			CHECK(c->label && lower_name_ok(c->label), "%s", c->name);
			for (size_t j = 0; lfe_wstats_groups[j]; j++)
				for (size_t r = 0; r < lfe_wstats_groups[j]->n; r++)
					if (lfe_wstats_groups[j]->rows[r].off == c->off) {
						hit++;
						CHECK(strcmp(lfe_wstats_groups[j]->rows[r].name, c->name) == 0, "%s", c->name);
					}
			CHECK(hit == 1, "%s", c->name);
		}
	}
	CHECK(n >= 4, "binds by result");
}

static void test_drops(void)
{
	const struct lfe_ctr_group *g = &lfe_wstats_drops;
	CHECK_EQ(g->n, LFE_DROP_MAX);
	CHECK(g->table->flags & LFE_CTR_SPARSE);
	for (size_t r = 0; r < g->n && r < LFE_DROP_MAX; r++) {
		char want[64];
		CHECK_EQ(g->rows[r].off, offsetof(struct lfe_wstats, drops) + r * sizeof(uint64_t));
		CHECK(strcmp(g->rows[r].label, lfe_net_drop_names[r]) == 0, "%s", g->rows[r].label);
		snprintf(want, sizeof(want), "drop_%s", lfe_net_drop_names[r]);
		CHECK(strcmp(g->rows[r].name, want) == 0, "%s", g->rows[r].name);
	}
}

/* lfe_wstats_pull copies each row's field of the module's struct into
 * the row's field of struct lfe_wstats and nothing else. */
static void pull_case(const struct lfe_ctr_group *g, size_t size)
{
	_Alignas(8) unsigned char src[512];
	struct lfe_wstats st;
	CHECK(g->pulled, "%s", g->table->module);
	CHECK(size <= sizeof(src) && size == g->table->type_size, "%s", g->table->module);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	memset(&st, 0xa5, sizeof(st));
	lfe_wstats_pull(&st, g, src);
	for (size_t k = 0; k < LFE_WSTATS_N; k++) {
		uint64_t got = ((const uint64_t *)&st)[k], want = 0xa5a5a5a5a5a5a5a5ull;
		for (size_t i = 0; i < g->n; i++) {
			const struct lfe_ctr *m = &g->table->rows[i];
			if (g->rows[i].off != k * sizeof(uint64_t))
				continue;
			if (m->size == 4) {
				uint32_t v;
				memcpy(&v, src + m->off, 4);
				want = v;
			} else {
				memcpy(&want, src + m->off, 8);
			}
		}
		CHECK(got == want, "%s: word %zu", g->table->module, k);
	}
}

static void test_pull(void)
{
	pull_case(&lfe_wstats_tcp, sizeof(struct lfe_tcp_stats));
	pull_case(&lfe_wstats_tcp_mem, sizeof(struct lfe_tcp_mem));
	pull_case(&lfe_wstats_tls, sizeof(struct lfe_stream_stats));
	pull_case(&lfe_wstats_tlsoff, sizeof(struct lfe_tlsoff_stats));
	pull_case(&lfe_wstats_dnpool, sizeof(struct lfe_dnpool_stats));
	CHECK(!lfe_wstats_auth.pulled && !lfe_wstats_drops.pulled && !lfe_wstats_worker.pulled);
}

static void test_print(void)
{
	char *buf = NULL;
	size_t len = 0, lines = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(f != NULL);
	if (f == NULL)
		return;
	lfe_ctr_print_table(f);
	fclose(f);
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save), lines++) {
		char name[64], kind[32], mod[32], metric[128];
		CHECK(sscanf(l, "%63s %31s %31s %127s", name, kind, mod, metric) == 4, "%s", l);
	}
	size_t fam = 0;
	for (size_t k = 0; lfe_wstats_families[k]; k++)
		fam += lfe_wstats_families[k]->n;
	CHECK_EQ(lines, LFE_WSTATS_N + fam);
	free(buf);
}

int main(void)
{
	test_tables();
	test_slots();
	test_every_table();
	test_families();
	test_drops();
	test_pull();
	test_print();
	return check_done();
}
