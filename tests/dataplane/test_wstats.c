/* tests/dataplane/test_wstats.c — the counter tables (dataplane/wstats.h):
 * every field of struct lfe_wstats is one row, in order (offsets 0, 8, 16
 * ... so none is left out, doubled or outside the struct); names unique and
 * valid Prometheus names (and the metric names derived from them); a help
 * line each; the rows copied from a module's struct name a field inside it
 * of the right width, and lfe_ctr_pull copies exactly those; the drop rows
 * are net.h's reasons in order; `ldapfe --counters` prints a line a row. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/wstats.h"
#include "ldap/dnpool.h"
#include "net/net.h"
#include "net/tcp.h"
#include "tls/stream.h"
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
		CHECK(lower_name_ok(gr->module), "group %zu", g);
		CHECK(gr->n > 0, "%s", gr->module);
		CHECK((gr->source == NULL) == (gr->source_size == 0), "%s", gr->module);
		if (gr->family) {
			CHECK(prom_name_ok(gr->family) && strncmp(gr->family, "ldapfe_", 7) == 0, "%s", gr->family);
			CHECK(prom_name_ok(gr->family_label), "%s", gr->module);
			CHECK(gr->family_help && *gr->family_help && !strpbrk(gr->family_help, "\n\\"), "%s", gr->module);
			metrics[n_metrics++] = gr->family;
		}
		for (size_t i = 0; i < gr->n; i++, rows++) {
			const struct lfe_ctr *c = &gr->rows[i];
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
			if (gr->family) {
				CHECK(c->label && lower_name_ok(c->label), "%s: label", c->name);
				CHECK(c->kind == LFE_CTR_COUNTER, "%s: the family is a counter", c->name);
			} else {
				CHECK(c->label == NULL, "%s", c->name);
				static char buf[LFE_WSTATS_N][96];
				const char *m = lfe_ctr_prom_name(gr, c, buf[n_metrics], sizeof(buf[0]));
				CHECK(prom_name_ok(m), "%s", m);
				metrics[n_metrics++] = m;
			}
			if (gr->source) {
				CHECK(c->src_size == 4 || c->src_size == 8, "%s", c->name);
				CHECK(c->src + c->src_size <= gr->source_size, "%s: outside %s", c->name, gr->source);
				CHECK(c->src % c->src_size == 0, "%s: misaligned", c->name);
				for (size_t j = 0; j < i; j++)
					CHECK(gr->rows[j].src != c->src, "%s: same source field as %s", c->name,
					      gr->rows[j].name);
			} else {
				CHECK(c->src_size == 0 && c->src == 0, "%s", c->name);
			}
		}
	}
	CHECK_EQ(rows, LFE_WSTATS_N);
	CHECK(LFE_WSTATS_N <= CTL_MAX_NAMES, "ldapfectl stats keeps %u names", CTL_MAX_NAMES);
	for (size_t i = 0; i < n_metrics; i++)
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(metrics[i], metrics[j]) != 0, "metric %s twice", metrics[i]);
}

static void test_drops(void)
{
	const struct lfe_ctr_group *g = &lfe_ctr_drops;
	CHECK_EQ(g->n, LFE_DROP_MAX);
	CHECK(g->flags & LFE_CTR_SPARSE);
	for (size_t r = 0; r < g->n && r < LFE_DROP_MAX; r++) {
		char want[64];
		CHECK_EQ(g->rows[r].off, offsetof(struct lfe_wstats, drops) + r * sizeof(uint64_t));
		CHECK(strcmp(g->rows[r].label, lfe_net_drop_names[r]) == 0, "%s", g->rows[r].label);
		snprintf(want, sizeof(want), "drop_%s", lfe_net_drop_names[r]);
		CHECK(strcmp(g->rows[r].name, want) == 0, "%s", g->rows[r].name);
	}
}

/* lfe_ctr_pull copies each row's source field and nothing else. */
static void pull_case(const struct lfe_ctr_group *g, size_t size)
{
	unsigned char src[512];
	struct lfe_wstats st;
	CHECK(size <= sizeof(src) && size == g->source_size, "%s", g->module);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	memset(&st, 0xa5, sizeof(st));
	lfe_ctr_pull(&st, g, src);
	for (size_t k = 0; k < LFE_WSTATS_N; k++) {
		uint64_t got = ((const uint64_t *)&st)[k], want = 0xa5a5a5a5a5a5a5a5ull;
		for (size_t i = 0; i < g->n; i++) {
			const struct lfe_ctr *c = &g->rows[i];
			if (c->off != k * sizeof(uint64_t))
				continue;
			if (c->src_size == 4) {
				uint32_t v;
				memcpy(&v, src + c->src, 4);
				want = v;
			} else {
				memcpy(&want, src + c->src, 8);
			}
		}
		CHECK(got == want, "%s: word %zu", g->module, k);
	}
}

static void test_pull(void)
{
	pull_case(&lfe_ctr_tcp, sizeof(struct lfe_tcp_stats));
	pull_case(&lfe_ctr_tcp_mem, sizeof(struct lfe_tcp_mem));
	pull_case(&lfe_ctr_tls, sizeof(struct lfe_stream_stats));
	pull_case(&lfe_ctr_tlsoff, sizeof(struct lfe_tlsoff_wstats));
	pull_case(&lfe_ctr_dnpool, sizeof(struct lfe_dnpool_stats));
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
	CHECK_EQ(lines, LFE_WSTATS_N);
	free(buf);
}

int main(void)
{
	test_tables();
	test_drops();
	test_pull();
	test_print();
	return check_done();
}
