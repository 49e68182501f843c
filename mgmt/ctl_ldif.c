/* mgmt/ctl_ldif.c — ldapfectl import and export (LDIF in and out of the
 * store; ldif.c reads and writes the format), and what user add and show
 * share with them: attributes grouped by type, a record written as LDIF
 * (see ctl.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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

/* Item i of av (n items) then extra. */
static const struct lfe_ldif_av *av_at(const struct lfe_ldif_av *av, uint32_t n,
				       const struct lfe_ldif_av *extra, uint32_t i)
{
	return i < n ? &av[i] : &extra[i - n];
}

int lfe_ctl_attrs_group(const struct lfe_ldif_av *av, uint32_t n_av, const struct lfe_ldif_av *extra,
			uint32_t n_extra, struct lfe_ctl_attrs *out)
{
	size_t tsize = 16;
	uint32_t *table = NULL, *gid = NULL, *count = NULL, *first = NULL, *fill = NULL;
	uint32_t ng = 0;
	uint32_t n = n_av + n_extra;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (n_extra > UINT32_MAX - n_av)
		return -E2BIG;
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
		struct lfe_bytes t = av_at(av, n_av, extra, i)->type;
		size_t h = type_hash(t) & (tsize - 1);

		while (table[h] != UINT32_MAX && !same_type(av_at(av, n_av, extra, first[table[h]])->type, t))
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
		out->attrs[g].type = av_at(av, n_av, extra, first[g])->type;
		out->attrs[g].n_vals = count[g];
		out->attrs[g].vals = out->vals + off;
		fill[g] = off;
		off += count[g];
	}
	for (uint32_t i = 0; i < n; i++)
		out->vals[fill[gid[i]]++] = av_at(av, n_av, extra, i)->val;
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

/* ------------------------------------------- operational attributes */

static const char *const op_type[LFE_CTL_OPATTRS] = { "entryUUID", "createTimestamp",
						      "modifyTimestamp", "entryCSN" };

int lfe_ctl_opattrs_init(struct lfe_ctl_opattrs *o)
{
	struct timespec ts;
	struct tm tmv;

	memset(o, 0, sizeof(*o));
	o->pool_used = LFE_CTL_UUID_POOL;
	for (unsigned i = 0; i < LFE_CTL_OPATTRS; i++)
		lfe_attr_key_init(&o->key[i], (const uint8_t *)op_type[i], strlen(op_type[i]));
	if (clock_gettime(CLOCK_REALTIME, &ts) < 0 || !gmtime_r(&ts.tv_sec, &tmv) ||
	    strftime(o->now, sizeof(o->now), "%Y%m%d%H%M%SZ", &tmv) != 15)
		return -EIO;
	snprintf(o->csn_time, sizeof(o->csn_time), "%.14s.%06uZ", o->now,
		 (unsigned)(ts.tv_nsec / 1000) % 1000000u);
	return 0;
}

/* The next random version 4 UUID (RFC 4122 §4.4) into o->uuid: 0 or -EIO.
 * One getrandom fills the pool for LFE_CTL_UUID_POOL of them: an import of
 * a million entries makes 4k system calls, not a million. */
static int next_uuid(struct lfe_ctl_opattrs *o)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t *u;

	if (o->pool_used == LFE_CTL_UUID_POOL) {
		if (getrandom(o->pool, sizeof(o->pool), 0) != (ssize_t)sizeof(o->pool))
			return -EIO;
		o->pool_used = 0;
	}
	u = o->pool[o->pool_used++];
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);   /* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);   /* RFC 4122 variant */
	/* 8-4-4-4-12 lower-case hex, as slapd writes it */
	for (unsigned i = 0, j = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			o->uuid[j++] = '-';
		o->uuid[j++] = hex[u[i] >> 4];
		o->uuid[j++] = hex[u[i] & 15];
	}
	o->uuid[36] = '\0';
	return 0;
}

/* The next entryCSN into o->csn: the start time, the entry's number as
 * the change count (6 hex digits, as slapd; beyond 2^24 entries the count
 * restarts, so the number above it goes into the modifier field), SID 000. */
static void next_csn(struct lfe_ctl_opattrs *o)
{
	uint64_t k = o->n_csn++;

	snprintf(o->csn, sizeof(o->csn), "%s#%06x#000#%06x", o->csn_time, (unsigned)(k & 0xffffff),
		 (unsigned)((k >> 24) & 0xffffff));
}

int lfe_ctl_opattrs_add(struct lfe_ctl_opattrs *o, const struct lfe_ldif_av *av, uint32_t n,
			struct lfe_ldif_av *extra)
{
	bool have[LFE_CTL_OPATTRS] = { false };
	int k = 0;

	for (uint32_t i = 0; i < n; i++) {
		size_t bl = lfe_attr_base_len(av[i].type.p, av[i].type.len);

		for (unsigned j = 0; j < LFE_CTL_OPATTRS; j++)
			have[j] |= lfe_attr_key_type_is(&o->key[j], av[i].type.p, bl);
	}
	for (unsigned j = 0; j < LFE_CTL_OPATTRS; j++) {
		const char *v = o->now;
		size_t vlen = 15;

		if (have[j])
			continue;
		if (j == 0) {
			if (next_uuid(o) < 0)
				return -EIO;
			v = o->uuid, vlen = 36;
		} else if (j == 3) {
			next_csn(o);
			v = o->csn, vlen = strlen(o->csn);
		}
		memset(&extra[k], 0, sizeof(extra[k]));
		extra[k].type = (struct lfe_bytes){ (const uint8_t *)op_type[j], strlen(op_type[j]) };
		extra[k].val = (struct lfe_bytes){ (const uint8_t *)v, vlen };
		k++;
	}
	return k;
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
	bool replace, as_is;            /* as_is: --no-op-attrs */
	uint64_t count, cleartext;
	struct scheme_tally tally;
	struct lfe_ctl_opattrs op;
	struct lfe_store_reader *before;   /* --replace: the store as it was */
	uint8_t *rec;                      /* --replace: a record to compare */
	size_t rec_cap;
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

/* Does the record of dn and al equal the stored one (ev)? 0 no, 1 yes,
 * -ENOMEM. */
static int same_record(struct import *im, struct lfe_bytes dn, const struct lfe_ctl_attrs *al,
		       const struct lfe_entry_view *ev)
{
	ssize_t n = lfe_record_size(dn, al->attrs, al->n_attrs);

	if (n < 0 || (size_t)n != ev->rec_len)
		return 0;
	if ((size_t)n > im->rec_cap) {
		uint8_t *p = realloc(im->rec, (size_t)n);

		if (!p)
			return -ENOMEM;
		im->rec = p;
		im->rec_cap = (size_t)n;
	}
	n = lfe_record_write(im->rec, im->rec_cap, dn, al->attrs, al->n_attrs);
	return n > 0 && (size_t)n == ev->rec_len && memcmp(im->rec, ev->rec, ev->rec_len) == 0;
}

/* --replace of an entry the store has: what the LDIF does not give of the
 * n operational attributes in extra is taken from the stored entry, which
 * keeps its entryUUID and createTimestamp; its modifyTimestamp and
 * entryCSN too when nothing else changes (al then is the stored record).
 * al is (re)grouped from e and extra. 0 or a negative errno. */
static int keep_stored(struct import *im, const struct lfe_ldif_entry *e, const char *ndn,
		       size_t nlen, struct lfe_ldif_av *extra, int n, struct lfe_ctl_attrs *al)
{
	struct lfe_bytes made[LFE_CTL_OPATTRS];
	struct lfe_entry_view ev;
	bool carried = false;
	int rc;

	if (lfe_store_get(im->before, ndn, nlen, &ev) < 0)
		return lfe_ctl_attrs_group(e->av, e->n, extra, (uint32_t)n, al);
	for (int i = 0; i < n; i++) {
		struct lfe_bytes v;

		made[i] = extra[i].val;
		if (lfe_entry_get(&ev, (const char *)extra[i].type.p, extra[i].type.len, &v, 1) == 1) {
			extra[i].val = v;
			carried = true;
		}
	}
	if ((rc = lfe_ctl_attrs_group(e->av, e->n, extra, (uint32_t)n, al)) < 0 || !carried ||
	    (rc = same_record(im, e->dn, al, &ev)) != 0)
		return rc < 0 ? rc : 0;
	/* Changed: modified now. */
	for (int i = 0; i < n; i++)
		if (lfe_attr_base_eq(extra[i].type.p, extra[i].type.len,
				     (const uint8_t *)"modifyTimestamp", 15) ||
		    lfe_attr_base_eq(extra[i].type.p, extra[i].type.len, (const uint8_t *)"entryCSN", 8))
			extra[i].val = made[i];
	lfe_ctl_attrs_free(al);
	return lfe_ctl_attrs_group(e->av, e->n, extra, (uint32_t)n, al);
}

/* Put one entry into the open batch: 0, or a negative errno with err. */
static int import_entry(struct import *im, const struct lfe_ldif_entry *e, char *err, size_t errlen)
{
	char ndn[LFE_DN_MAX + 1];
	struct lfe_ldif_av extra[LFE_CTL_OPATTRS];
	struct lfe_ctl_attrs al;
	ssize_t nlen;
	int rc, n_extra = 0;

	nlen = lfe_dn_normalize(e->dn.p, e->dn.len, ndn, sizeof(ndn));
	if (nlen < 0)
		return lfe_cli_fill(err, errlen, -EINVAL, "%s:%u: invalid DN \"%.*s\"", im->fname,
				    e->line, DN_SHOWN(e));
	if (!lfe_dn_is_under(ndn, (size_t)nlen, im->suffix, im->slen))
		return lfe_cli_fill(err, errlen, -EINVAL, "%s:%u: entry %.*s is outside the suffix %.*s",
				    im->fname, e->line, DN_SHOWN(e), (int)im->slen, im->suffix);
	import_schemes(im, e);
	if (!im->as_is && (n_extra = lfe_ctl_opattrs_add(&im->op, e->av, e->n, extra)) < 0)
		return lfe_cli_fill(err, errlen, n_extra, "%s:%u: cannot draw an entryUUID", im->fname,
				    e->line);
	if (n_extra > 0 && im->before)
		rc = keep_stored(im, e, ndn, (size_t)nlen, extra, n_extra, &al);
	else
		rc = lfe_ctl_attrs_group(e->av, e->n, extra, (uint32_t)n_extra, &al);
	if (rc < 0)
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
					    { "no-op-attrs", no_argument, NULL, 'N' },
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
		if (opt == 'N') {
			im.as_is = true;
			continue;
		}
		if ((rc = lfe_ctl_common_opt(c, cmd, opt)) != LFE_CTL_CONTINUE)
			return rc;
	}
	if (argc - optind != 1)
		return lfe_cli_usage(cmd->usage, argc == optind ? "name the LDIF file to import (or - for stdin)"
								: "import takes one file");
	/* Every entry the import stamps gets its start time, as one change. */
	if (lfe_ctl_opattrs_init(&im.op) < 0)
		return lfe_cli_fail("cannot read the clock");
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
	/* --replace: a snapshot of the store before the batch, for the
	 * operational attributes of the entries it replaces (keep_stored). */
	if (im.replace && !im.as_is && !(im.before = lfe_store_reader_new(im.st))) {
		lfe_cli_err("cannot read store %s", c->store);
		goto out;
	}
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
	lfe_store_reader_free(im.before);
	lfe_store_close(im.st);
	free(im.rec);
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
