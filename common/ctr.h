/* common/ctr.h — a module's counter table (header only, libc only).
 *
 * A module that keeps statistics in a struct of its own (struct
 * lfe_tcp_stats, struct lfe_stream_stats, ...) describes them in one
 * table, as DPDK's xstats name tables or Seastar's metric groups do: a row
 * per counter it exports, with the counter's name, kind, help line and the
 * offset and width of its field in the module's own struct. The table is
 * the module's: it knows nothing of who reads it. The daemon composes
 * the tables into the worker's view (dataplane/wstats.h), from which
 * `ldapfectl stats`, /metrics, telemetry and `ldapfe --counters` are
 * generated; test_wstats checks the composition against each table.
 *
 * Names: [a-z][a-z0-9_]*, the `ldapfectl stats` and telemetry key;
 * Prometheus has ldapfe_NAME_total (counter) or ldapfe_NAME (gauge), unless
 * the table is one labelled family (family{family_label="row's label"},
 * e.g. ldapfe_drops_total{reason="ip_csum"}).
 *
 * Thread rules: tables are constant; reading a row's field is the
 * caller's business (the struct's own rules).
 */
#ifndef LFE_COMMON_CTR_H
#define LFE_COMMON_CTR_H

#include <stddef.h>
#include <stdint.h>

enum lfe_ctr_kind { LFE_CTR_COUNTER, LFE_CTR_GAUGE };

/* One counter: a field of the table's struct. */
struct lfe_ctr {
	const char *name;   /* stats/telemetry key */
	const char *help;   /* one line, for HELP and `ldapfe --counters` */
	const char *label;  /* a labelled family's row: the label's value; else NULL */
	uint16_t off;       /* byte offset of the field in the table's struct */
	uint8_t size;       /* its width: 8 or 4 (uint64_t, uint32_t) */
	uint8_t kind;       /* enum lfe_ctr_kind */
};

#define LFE_CTR_SPARSE 1u   /* telemetry leaves out the rows that are 0 */

/* One module's counters. */
struct lfe_ctr_table {
	const char *module;         /* "tcp", "tls", ... */
	const char *type;           /* the struct the rows are fields of, e.g. "struct lfe_tcp_stats" */
	size_t type_size;           /* its sizeof */
	const struct lfe_ctr *rows;
	size_t n;
	unsigned flags;             /* LFE_CTR_SPARSE */
	/* A labelled family: Prometheus family{core,LABEL="row.label"}, a
	 * counter with this help, instead of a metric per row. NULL: none. */
	const char *family, *family_label, *family_help;
};

#define LFE_CTR_C LFE_CTR_COUNTER
#define LFE_CTR_G LFE_CTR_GAUGE

/* A row for field f of struct type S, named n (a string). */
#define LFE_CTR_ROW(S, f, n, k, h) \
	{ .name = (n), .help = (h), .off = offsetof(S, f), .size = sizeof(((S *)0)->f), .kind = (k) }
/* A labelled family's row: field f, label lab, named PREFIX lab. */
#define LFE_CTR_LABELLED(S, f, n, lab, h) \
	{ .name = (n), .help = (h), .label = (lab), .off = offsetof(S, f), .size = sizeof(((S *)0)->f), \
	  .kind = LFE_CTR_COUNTER }
/* The table of rows rws (an array) over struct type S. */
#define LFE_CTR_TABLE(m, S, rws, ...) \
	{ .module = (m), .type = #S, .type_size = sizeof(S), .rows = (rws), \
	  .n = sizeof(rws) / sizeof((rws)[0]), __VA_ARGS__ }

/* The value of row c in s, an instance of the table's struct. */
static inline uint64_t lfe_ctr_value(const void *s, const struct lfe_ctr *c)
{
	const char *p = (const char *)s + c->off;
	return c->size == 4 ? *(const uint32_t *)(const void *)p : *(const uint64_t *)(const void *)p;
}

#endif
