/* mgmt/ctl_ldif.c — ldapfectl import and export (LDIF in and out of the
 * store; ldif.c reads and writes the format), and what user add and show
 * share with them: attributes grouped by type, a record written as LDIF
 * (see ctl.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/pwscheme.h"
#include "backend/record.h"
#include "backend/store.h"
#include "ldap/dn.h"
#include "mgmt/cli.h"
#include "mgmt/ctl.h"
#include "mgmt/ldif.h"
#include "mgmt/progress.h"

/* ------------------------------------------------------ attribute lists */

void lfe_ctl_attrs_free(struct lfe_ctl_attrs *l)
{
	free(l->attrs);
	free(l->vals);
	memset(l, 0, sizeof(*l));
}

/* Hash of the canonical type (aliases and OIDs hash alike); options are
 * left to same_type. */
static uint32_t type_hash(struct lfe_bytes t)
{
	uint32_t h = 2166136261u;
	char canon[LFE_ATTR_NAME_MAX];
	ssize_t cl = lfe_attr_canon(t.p, lfe_attr_base_len(t.p, t.len), canon, sizeof(canon));

	if (cl > 0)
		t = (struct lfe_bytes){ (const uint8_t *)canon, (size_t)cl };
	else
		t.len = lfe_attr_base_len(t.p, t.len);
	for (size_t i = 0; i < t.len; i++) {
		uint8_t ch = t.p[i];

		if (ch >= 'A' && ch <= 'Z')
			ch = (uint8_t)(ch - 'A' + 'a');
		h = (h ^ ch) * 16777619u;
	}
	return h;
}

static bool same_type(struct lfe_bytes a, struct lfe_bytes b)
{
	return lfe_attr_type_eq(a.p, a.len, b.p, b.len);
}

int lfe_ctl_attrs_group(const struct lfe_ldif_av *av, uint32_t n, struct lfe_ctl_attrs *out)
{
	size_t tsize = 16;
	uint32_t *table = NULL, *gid = NULL, *count = NULL, *first = NULL, *fill = NULL;
	uint32_t ng = 0;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	while (tsize < (size_t)n * 2)
		tsize *= 2;
	table = malloc(tsize * sizeof(*table));
	gid = malloc(((size_t)n + 1) * sizeof(*gid));
	count = calloc((size_t)n + 1, sizeof(*count));
	first = malloc(((size_t)n + 1) * sizeof(*first));
	if (!table || !gid || !count || !first)
		goto out;
	memset(table, 0xff, tsize * sizeof(*table));
	for (uint32_t i = 0; i < n; i++) {
		size_t h = type_hash(av[i].type) & (tsize - 1);

		while (table[h] != UINT32_MAX && !same_type(av[first[table[h]]].type, av[i].type))
			h = (h + 1) & (tsize - 1);
		if (table[h] == UINT32_MAX) {
			table[h] = ng;
			first[ng++] = i;
		}
		gid[i] = table[h];
		count[gid[i]]++;
	}
	if (ng > LFE_RECORD_MAX_ATTRS) {
		rc = -E2BIG;
		goto out;
	}
	out->attrs = calloc(ng ? ng : 1, sizeof(*out->attrs));
	out->vals = malloc(((size_t)n + 1) * sizeof(*out->vals));
	fill = calloc((size_t)ng + 1, sizeof(*fill));
	if (!out->attrs || !out->vals || !fill)
		goto out;
	for (uint32_t g = 0, off = 0; g < ng; g++) {
		out->attrs[g].type = av[first[g]].type;
		out->attrs[g].n_vals = count[g];
		out->attrs[g].vals = out->vals + off;
		fill[g] = off;
		off += count[g];
	}
	for (uint32_t i = 0; i < n; i++)
		out->vals[fill[gid[i]]++] = av[i].val;
	out->n_attrs = ng;
	rc = 0;
out:
	if (rc < 0)
		lfe_ctl_attrs_free(out);
	free(table);
	free(gid);
	free(count);
	free(first);
	free(fill);
	return rc;
}

static int read_all(int fd, uint8_t **out, size_t *len)
{
	size_t n = 0, cap = 1 << 16;
	uint8_t *buf = malloc(cap);
	struct stat sb;

	if (!buf)
		return -ENOMEM;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size + 1 > cap &&
	    (uint64_t)sb.st_size < SIZE_MAX / 2) {
		uint8_t *nb = realloc(buf, (size_t)sb.st_size + 1);

		if (!nb) {
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		cap = (size_t)sb.st_size + 1;
	}
	for (;;) {
		ssize_t k;

		if (n == cap) {
			uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		k = read(fd, buf + n, cap - n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			k = -errno;
			free(buf);
			return (int)k;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* Which hash schemes an import brought in, and how often. */
#define TALLY_MAX 32u
struct scheme_tally {
	uint32_t n;
	char name[TALLY_MAX][SCHEME_MAX];
	uint64_t count[TALLY_MAX];
};

static void tally_scheme(struct scheme_tally *t, const char *scheme)
{
	for (uint32_t i = 0; i < t->n; i++) {
		if (strcmp(t->name[i], scheme) == 0) {
			t->count[i]++;
			return;
		}
	}
	if (t->n < TALLY_MAX) {
		snprintf(t->name[t->n], SCHEME_MAX, "%s", scheme);
		t->count[t->n++] = 1;
	}
}

/* The LDIF file name (or - for stdin) read whole: 0 with *data (malloc'd)
 * and *shown (the name for messages), or a negative errno with err. */
static int read_input(const char *name, uint8_t **data, size_t *len, const char **shown, char *err,
		      size_t errlen)
{
	int fd = STDIN_FILENO, rc;

	*shown = name;
	if (strcmp(name, "-") == 0)
		*shown = "<stdin>";
	else if ((fd = open(name, O_RDONLY | O_CLOEXEC)) < 0)
		return lfe_cli_fill(err, errlen, -errno, "cannot open %s: %s", name, strerror(errno));
	rc = read_all(fd, data, len);
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc < 0)
		return lfe_cli_fill(err, errlen, rc, "cannot read %s: %s", *shown, strerror(-rc));
	return 0;
}

/* One import: the file, the store and what the entries brought in. */
struct import {
	struct lfe_store *st;
	const char *fname, *suffix;
	size_t slen;
	bool replace;
	uint64_t count, cleartext;
	struct scheme_tally tally;
};

/* At most 200 bytes of a DN in a message. */
#define DN_SHOWN(e) (int)((e)->dn.len > 200 ? 200 : (e)->dn.len), (const char *)(e)->dn.p

/* Tally the userPassword schemes of e; warn of (the first ten) unhashed. */
static void import_schemes(struct import *im, const struct lfe_ldif_entry *e)
{
	for (uint32_t i = 0; i < e->n; i++) {
		char scheme[SCHEME_MAX];

		if (!lfe_attr_base_eq(e->av[i].type.p, e->av[i].type.len,
				      (const uint8_t *)"userPassword", 12) ||
		    lfe_pw_scheme_name((const char *)e->av[i].val.p, e->av[i].val.len,
				       scheme, sizeof(scheme)) <= 0)
			continue;
		if (strcmp(scheme, "{CLEARTEXT}") == 0) {
			if (im->cleartext++ < 10)
				lfe_cli_err("warning: %s:%u: userPassword of %.*s is not hashed", im->fname,
					    e->av[i].line, DN_SHOWN(e));
			continue;
		}
		tally_scheme(&im->tally, scheme);
	}
}

/* Put one entry into the open batch: 0, or a negative errno with err. */
static int import_entry(struct import *im, const struct lfe_ldif_entry *e, char *err, size_t errlen)
{
	char ndn[LFE_DN_MAX + 1];
	struct lfe_ctl_attrs al;
	ssize_t nlen;
	int rc;

	nlen = lfe_dn_normalize(e->dn.p, e->dn.len, ndn, sizeof(ndn));
	if (nlen < 0)
		return lfe_cli_fill(err, errlen, -EINVAL, "%s:%u: invalid DN \"%.*s\"", im->fname,
				    e->line, DN_SHOWN(e));
	if (!lfe_dn_is_under(ndn, (size_t)nlen, im->suffix, im->slen))
		return lfe_cli_fill(err, errlen, -EINVAL, "%s:%u: entry %.*s is outside the suffix %.*s",
				    im->fname, e->line, DN_SHOWN(e), (int)im->slen, im->suffix);
	import_schemes(im, e);
	if ((rc = lfe_ctl_attrs_group(e->av, e->n, &al)) < 0)
		return lfe_cli_fill(err, errlen, rc, "%s:%u: %s", im->fname, e->line,
				    rc == -E2BIG ? "too many attribute types in one entry" : "out of memory");
	rc = lfe_store_put(im->st, e->dn, al.attrs, al.n_attrs, im->replace);
	lfe_ctl_attrs_free(&al);
	if (rc == -EEXIST)
		return lfe_cli_fill(err, errlen, rc, "%s:%u: entry %.*s already exists (in the store or "
				    "earlier in the file); use import --replace to overwrite", im->fname,
				    e->line, DN_SHOWN(e));
	if (rc < 0)
		return lfe_cli_fill(err, errlen, rc, "%s:%u: cannot store entry %.*s: %s", im->fname,
				    e->line, DN_SHOWN(e), rc == -EINVAL ?
				    "invalid entry (DN, attribute type or size)" : lfe_ctl_store_err(rc));
	im->count++;
	return 0;
}

/* Every entry of data into the open batch: 0, or a negative errno with err. */
static int import_all(struct import *im, const uint8_t *data, size_t dlen, struct lfe_progress *prog,
		      char *err, size_t errlen)
{
	struct lfe_ldif_reader rd;
	struct lfe_ldif_entry e;
	struct lfe_ldif_err lerr;
	int rc;

	memset(&e, 0, sizeof(e));
	lfe_ldif_reader_init(&rd, data, dlen);
	for (;;) {
		rc = lfe_ldif_next(&rd, &e, &lerr);
		if (rc < 0)
			lfe_cli_fill(err, errlen, rc, "%s:%u: %s", im->fname, lerr.line, lerr.msg);
		if (rc <= 0 || (rc = import_entry(im, &e, err, errlen)) < 0)
			break;
		lfe_progress_update(prog, im->count, dlen ? (double)rd.off / (double)dlen : 1.0);
	}
	lfe_ldif_entry_free(&e);
	lfe_ldif_reader_free(&rd);
	return rc;
}

/* Unknown DNs get a dummy verification of the store's default scheme; make
 * it the scheme most users have so both cost the same. Not part of the
 * batch (the store refuses it inside one); failing it costs only timing
 * uniformity, so it warns. */
static void import_default_scheme(const struct import *im)
{
	uint32_t best = 0;
	int rc;

	if (im->tally.n == 0)
		return;
	for (uint32_t i = 1; i < im->tally.n; i++)
		if (im->tally.count[i] > im->tally.count[best])
			best = i;
	rc = lfe_store_set_default_scheme(im->st, im->tally.name[best]);
	if (rc < 0)
		lfe_cli_err("warning: cannot record %s as the default scheme: %s", im->tally.name[best],
			    lfe_ctl_store_err(rc));
}

int lfe_ctl_import(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { { "replace", no_argument, NULL, 'r' },
					    { "progress", no_argument, NULL, 'G' },
					    LFE_CTL_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct import im = { 0 };
	struct lfe_progress prog;
	char err[LFE_CLI_ERR_MAX];
	uint8_t *data = NULL;
	size_t dlen = 0;
	bool force_progress = false;
	int opt, rc, result = LFE_EXIT_FAIL;

	while ((opt = getopt_long(argc, argv, "rh", lo, NULL)) != -1) {
		if (opt == 'r') {
			im.replace = true;
			continue;
		}
		if (opt == 'G') {
			force_progress = true;
			continue;
		}
		if ((rc = lfe_ctl_common_opt(c, cmd, opt)) != LFE_CTL_CONTINUE)
			return rc;
	}
	if (argc - optind != 1)
		return lfe_cli_usage(cmd->usage, argc == optind ? "name the LDIF file to import (or - for stdin)"
								: "import takes one file");
	if (read_input(argv[optind], &data, &dlen, &im.fname, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	/* The file is read whole, so the share of its bytes parsed gives the
	 * percent and the ETA. */
	lfe_progress_init(&prog, "import", force_progress);
	if (lfe_ctl_store_open(c, false, &im.st, err, sizeof(err)) < 0) {
		lfe_cli_err("%s", err);
		goto out;
	}
	im.suffix = lfe_store_suffix(im.st, &im.slen);
	if ((rc = lfe_store_batch_begin(im.st)) < 0) {
		lfe_cli_err("cannot start the import: %s", lfe_ctl_store_err(rc));
		goto out;
	}
	if (import_all(&im, data, dlen, &prog, err, sizeof(err)) < 0) {
		lfe_cli_err("%s", err);
		lfe_store_batch_abort(im.st);
		lfe_cli_err("nothing was imported");
		goto out;
	}
	lfe_progress_note(&prog, im.count, "committing");
	rc = lfe_store_batch_commit(im.st);
	double secs = lfe_progress_end(&prog, im.count);
	if (rc < 0) {
		lfe_cli_err("%s: commit failed: %s; nothing was imported", im.fname, lfe_ctl_store_err(rc));
		goto out;
	}
	if (im.cleartext > 0)
		lfe_cli_err("warning: %llu unhashed userPassword value(s); the daemon refuses them unless "
			    "cleartext is allowed", (unsigned long long)im.cleartext);
	printf("imported %llu entries from %s in %.2f s\n", (unsigned long long)im.count, im.fname, secs);
	import_default_scheme(&im);
	result = LFE_EXIT_OK;
out:
	lfe_store_close(im.st);
	free(data);
	return result;
}

/* ---- export: every entry of one snapshot, parents first */

/* Slices into the reader's snapshot (lfe_store_reader_each): valid until
 * the reader is freed. */
struct export_item {
	uint32_t depth;
	const char *ndn;
	size_t ndn_len;
	const uint8_t *rec;
	size_t rec_len;
};

struct export_list {
	struct export_item *items;
	size_t n, cap;
};

/* RDN count of a normalized DN: commas that are not escaped. */
static uint32_t dn_depth(const char *p, size_t n)
{
	uint32_t d = n ? 1 : 0;

	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\')
			i++;
		else if (p[i] == ',')
			d++;
	}
	return d;
}

static int export_collect(void *ctx, const char *ndn, size_t ndn_len, const uint8_t *rec, size_t rec_len)
{
	struct export_list *l = ctx;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 1024;
		struct export_item *ni = realloc(l->items, ncap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		l->items = ni;
		l->cap = ncap;
	}
	l->items[l->n++] = (struct export_item){ dn_depth(ndn, ndn_len), ndn, ndn_len, rec, rec_len };
	return 0;
}

static int export_cmp(const void *a, const void *b)
{
	const struct export_item *x = a, *y = b;
	size_t n;
	int r;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	n = x->ndn_len < y->ndn_len ? x->ndn_len : y->ndn_len;
	r = memcmp(x->ndn, y->ndn, n);
	if (r)
		return r;
	return x->ndn_len < y->ndn_len ? -1 : x->ndn_len > y->ndn_len;
}

int lfe_ctl_write_entry(FILE *f, const uint8_t *rec, size_t len, bool hide)
{
	struct lfe_bytes dn, type, list, v;
	uint32_t n_attrs, n_vals;
	size_t off;
	int rc;

	if (lfe_record_header(rec, len, &dn, &n_attrs, &off) < 0)
		return -EBADMSG;
	if (lfe_ldif_put(f, "dn", dn.p, dn.len, false) < 0)
		return -EIO;
	while ((rc = lfe_record_next_attr(rec, len, &off, &type, &n_vals, &list)) == 1) {
		char tname[LFE_RECORD_MAX_TYPE + 1];
		bool pw = lfe_attr_is_secret(type.p, type.len);

		memcpy(tname, type.p, type.len);
		tname[type.len] = '\0';
		while ((rc = lfe_record_next_val(&list, &v)) == 1) {
			if (pw && hide) {
				char scheme[SCHEME_MAX];

				if (lfe_pw_scheme_name((const char *)v.p, v.len, scheme, sizeof(scheme)) < 0)
					strcpy(scheme, "{?}");
				fprintf(f, "%s: %s (hidden)\n", tname, scheme);
				continue;
			}
			/* slapcat writes passwords base64 too: a hash on screen
			 * invites copy and paste into the wrong place. */
			if (lfe_ldif_put(f, tname, v.p, v.len, pw) < 0)
				return -EIO;
		}
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int lfe_ctl_export(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { { "output", required_argument, NULL, 'o' },
					    { "progress", no_argument, NULL, 'G' },
					    LFE_CTL_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	const char *output = NULL, *suffix;
	char suffix_copy[LFE_DN_MAX + 1];
	char err[LFE_CLI_ERR_MAX];
	struct lfe_store *st;
	struct lfe_store_reader *r = NULL;
	struct export_list l = { 0 };
	struct lfe_progress prog;
	size_t slen = 0;
	FILE *f = stdout;
	bool force_progress = false;
	int opt, rc, result = LFE_EXIT_FAIL;

	while ((opt = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		if (opt == 'o') {
			output = optarg;
			continue;
		}
		if (opt == 'G') {
			force_progress = true;
			continue;
		}
		if ((rc = lfe_ctl_common_opt(c, cmd, opt)) != LFE_CTL_CONTINUE)
			return rc;
	}
	if (optind != argc)
		return lfe_cli_usage(cmd->usage, "unexpected argument \"%s\"", argv[optind]);
	if (lfe_ctl_store_open(c, true, &st, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	suffix = lfe_store_suffix(st, &slen);
	snprintf(suffix_copy, sizeof(suffix_copy), "%.*s", (int)slen, suffix);
	/* One read transaction for the walk and the writing: the export is
	 * one snapshot even while the daemon's writer commits. */
	if (!(r = lfe_store_reader_new(st))) {
		lfe_cli_err("cannot read store %s", c->store);
		goto out;
	}
	if ((rc = lfe_store_reader_each(r, export_collect, &l)) < 0) {
		lfe_cli_err("cannot read the entries of %s: %s", c->store,
			    rc == -ENOMEM ? "out of memory" : lfe_ctl_store_err(rc));
		goto out;
	}
	/* Parents first: slapadd and our own import want a parent before its
	 * children. */
	if (l.n > 1)
		qsort(l.items, l.n, sizeof(*l.items), export_cmp);
	if (output && !(f = fopen(output, "we"))) {
		lfe_cli_err("cannot write %s: %s", output, strerror(errno));
		goto out;
	}
	lfe_progress_init(&prog, "export", force_progress);
	/* No "version: 1" line: slapadd takes it for an entry without a DN. */
	fprintf(f, "# ldapfe store %s, suffix %s, %zu entries\n\n", c->store, suffix_copy, l.n);
	for (size_t i = 0; i < l.n; i++) {
		rc = lfe_ctl_write_entry(f, l.items[i].rec, l.items[i].rec_len, false);
		if (rc == -EBADMSG) {
			lfe_progress_end(&prog, i);
			lfe_cli_err("corrupt record for %.*s in %s", (int)l.items[i].ndn_len, l.items[i].ndn,
				    c->store);
			goto out;
		}
		if (rc < 0)
			break;
		lfe_progress_update(&prog, i + 1, (double)(i + 1) / (double)l.n);
	}
	lfe_progress_end(&prog, l.n);
	if (fflush(f) != 0 || ferror(f)) {
		lfe_cli_err("cannot write %s: %s", output ? output : "standard output", strerror(errno));
		goto out;
	}
	result = LFE_EXIT_OK;
out:
	if (f && f != stdout && fclose(f) != 0 && result == LFE_EXIT_OK) {
		lfe_cli_err("cannot write %s: %s", output, strerror(errno));
		result = LFE_EXIT_FAIL;
	}
	lfe_store_reader_free(r);
	lfe_store_close(st);
	free(l.items);
	return result;
}
