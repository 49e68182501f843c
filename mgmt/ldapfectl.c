/* mgmt/ldapfectl.c — store administration and daemon management CLI for ldapfe.
 *
 * ldapfectl is the only writer of the store: it initialises it, imports and
 * exports LDIF, adds and deletes users, changes and verifies passwords.
 * The commands for the running daemon (status, stats, conns, reload, drain,
 * top) talk to its control socket: mgmt/daemonctl.c. Each command is one row
 * of `commands` (name, handler, usage, help); the options every command
 * takes are COMMON_LONGOPTS / common_opt.
 * The daemon keeps reading while we write; every change is one LMDB commit,
 * an import is one batch (all entries or none).
 *
 * Exit codes: 0 success, 1 runtime failure (store, input data, wrong
 * password), 2 usage (bad option, argument or DN syntax).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <ldap.h>

#include "backend/pwscheme.h"
#include "backend/record.h"
#include "backend/store.h"
#include "ldap/dn.h"
#include "mgmt/cli.h"
#include "mgmt/daemonctl.h"
#include "mgmt/ldif.h"
#include "mgmt/progress.h"
#include "mgmt/sync.h"


#define DEFAULT_STORE  "/var/lib/ldapfe/store"
#define DEFAULT_SCHEME "{SSHA512}"
#define PW_MAX         1024u     /* longest password we accept, bytes */
#define HASH_MAX       1024u     /* longest hashed userPassword we produce */
#define SCHEME_MAX     64u

struct ctl {
	const char *store;
	char scheme[SCHEME_MAX];
	const char *scheme_from;     /* where the scheme came from, for messages */
	const char *daemon, *prefix; /* control socket of the running daemon (daemonctl.h) */
};

struct cmd {
	const char *name;
	int (*fn)(struct ctl *c, const struct cmd *cmd, int argc, char **argv);
	const char *usage;
	const char *help;
};

/* ---------------------------------------------------------------- options */

/* "{SSHA512}", "ssha512" and "SSHA512" all name the same scheme. */
static int set_scheme(struct ctl *c, const char *s, const char *from)
{
	size_t n = strlen(s), o = 0;
	const char *p = s;

	if (n >= 2 && s[0] == '{' && s[n - 1] == '}') {
		p = s + 1;
		n -= 2;
	}
	if (n == 0 || n + 3 > sizeof(c->scheme)) {
		lfe_cli_err("invalid password scheme \"%s\" (from %s); e.g. {SSHA512}", s, from);
		return -EINVAL;
	}
	c->scheme[o++] = '{';
	for (size_t i = 0; i < n; i++) {
		char ch = p[i];

		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_')) {
			lfe_cli_err("invalid password scheme \"%s\" (from %s); e.g. {SSHA512}", s, from);
			return -EINVAL;
		}
		c->scheme[o++] = (char)(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
	}
	c->scheme[o++] = '}';
	c->scheme[o] = '\0';
	c->scheme_from = from;
	return 0;
}

#define COMMON_LONGOPTS \
	{ "store", required_argument, NULL, 'S' }, \
	{ "daemon", required_argument, NULL, 'D' }, \
	{ "prefix", required_argument, NULL, 'P' }, \
	{ "version", no_argument, NULL, 'V' }, \
	{ "scheme", required_argument, NULL, 'C' }, \
	{ "help", no_argument, NULL, 'h' }

enum { OPT_CONTINUE = -1, OPT_NOT_MINE = -2 };

static void print_cmd_help(FILE *f, const struct cmd *cmd)
{
	fprintf(f, "usage: ldapfectl [--store PATH] [--scheme SCHEME] %s\n\n%s", cmd->usage, cmd->help);
}

/* Options every command takes. Returns OPT_CONTINUE, OPT_NOT_MINE, or an
 * exit code when the command has to stop now. */
static int common_opt(struct ctl *c, const struct cmd *cmd, int opt)
{
	switch (opt) {
	case 'S':
		c->store = optarg;
		return OPT_CONTINUE;
	case 'D':
		c->daemon = optarg;
		return OPT_CONTINUE;
	case 'P':
		c->prefix = optarg;
		return OPT_CONTINUE;
	case 'V':
		printf("ldapfectl " LFE_VERSION "\n");
		return LFE_EXIT_OK;
	case 'C':
		return set_scheme(c, optarg, "--scheme") < 0 ? LFE_EXIT_USAGE : OPT_CONTINUE;
	case 'h':
		print_cmd_help(stdout, cmd);
		return LFE_EXIT_OK;
	case '?':
		fprintf(stderr, "see: ldapfectl %s --help\n", cmd->name);
		return LFE_EXIT_USAGE;
	default:
		return OPT_NOT_MINE;
	}
}

/* ------------------------------------------------------------------- DNs */

/* Normalize a DN given on the command line; prints why it is refused. */
static int cli_dn(const struct cmd *cmd, const char *dn, char *ndn, size_t cap, size_t *nlen)
{
	ssize_t n = lfe_dn_normalize((const uint8_t *)dn, strlen(dn), ndn, cap);

	if (n < 0) {
		if (n == -ENOSPC)
			lfe_cli_usage(cmd->usage, "\"%s\" is not a valid DN (over %u bytes normalized)", dn,
				    LFE_DN_MAX);
		else
			lfe_cli_usage(cmd->usage, "\"%s\" is not a valid DN (RFC 4514 syntax, e.g. uid=jo,ou=people,dc=example,dc=com)",
				    dn);
		return -EINVAL;
	}
	*nlen = (size_t)n;
	return 0;
}

/* ---------------------------------------------------------------- store */

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		buf[i] = i == n ? '\0' : '/';
	}
	return 0;
}

static struct lfe_store *open_store(const struct ctl *c, bool rdonly)
{
	struct stat sb;
	struct lfe_store *st;
	const char *msg = NULL, *suffix;
	size_t slen = 0;
	int err = 0;

	if (stat(c->store, &sb) < 0) {
		if (errno == ENOENT)
			lfe_cli_err("no store at %s (create one with: ldapfectl --store %s init --suffix DN)",
			     c->store, c->store);
		else
			lfe_cli_err("cannot open store %s: %s", c->store, strerror(errno));
		return NULL;
	}
	st = lfe_store_open(c->store, rdonly ? LFE_STORE_RDONLY : 0, 0, &err, &msg);
	if (!st && err == -ENOENT) {
		lfe_cli_err("store %s is not initialised; run: ldapfectl --store %s init --suffix DN",
		     c->store, c->store);
		return NULL;
	}
	if (!st) {
		lfe_cli_err("cannot open store %s: %s%s", c->store,
		     msg ? msg : strerror(err < 0 ? -err : EIO),
		     err == -EPROTO ? " (written by another format version of ldapfe)" : "");
		return NULL;
	}
	suffix = lfe_store_suffix(st, &slen);
	if (!suffix || slen == 0) {
		lfe_cli_err("store %s is not initialised; run: ldapfectl --store %s init --suffix DN",
		     c->store, c->store);
		lfe_store_close(st);
		return NULL;
	}
	return st;
}

static const char *store_err(int rc)
{
	switch (rc) {
	case -ENOSPC:
		return "the store's map is full";
	case -EPROTO:
		return "store of another format version";
	case -EBADMSG:
		return "corrupt record in the store";
	default:
		return strerror(rc < 0 ? -rc : EIO);
	}
}

/* ------------------------------------------------------------ passwords */

static int read_line_fd(int fd, char *buf, size_t cap, size_t *len)
{
	size_t n = 0;

	for (;;) {
		ssize_t k;
		char *nl;

		if (n == cap)
			return -E2BIG;
		k = read(fd, buf + n, cap - n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		nl = memchr(buf + n, '\n', (size_t)k);
		if (nl) {
			n = (size_t)(nl - buf);
			break;
		}
		n += (size_t)k;
	}
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	*len = n;
	return 0;
}

static int prompt_tty(const char *prompt, char *buf, size_t cap, size_t *len)
{
	struct termios old, quiet;
	int rc;

	if (tcgetattr(STDIN_FILENO, &old) < 0)
		return -errno;
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	quiet.c_lflag |= ECHONL;
	/* Echo off before the prompt appears: whatever is typed after seeing
	 * the prompt must never reach the screen. */
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) < 0)
		return -errno;
	fputs(prompt, stderr);
	fflush(stderr);
	rc = read_line_fd(STDIN_FILENO, buf, cap, len);
	tcsetattr(STDIN_FILENO, TCSANOW, &old);
	return rc;
}

/* Password from stdin (first line) or, on a terminal, a prompt without
 * echo (twice when confirm). The caller wipes buf. */
static int read_password(bool confirm, char *buf, size_t cap, size_t *len)
{
	int rc;

	if (isatty(STDIN_FILENO)) {
		char again[PW_MAX];
		size_t alen = 0;

		rc = prompt_tty(confirm ? "New password: " : "Password: ", buf, cap, len);
		if (rc == 0 && confirm) {
			rc = prompt_tty("Retype new password: ", again, sizeof(again), &alen);
			if (rc == 0 && (alen != *len || !lfe_ct_equal(again, buf, alen))) {
				lfe_cli_err("the passwords do not match; nothing changed");
				rc = -EINVAL;
			}
			explicit_bzero(again, sizeof(again));
			if (rc == -EINVAL)
				return rc;
		}
	} else {
		rc = read_line_fd(STDIN_FILENO, buf, cap, len);
	}
	if (rc == -E2BIG) {
		lfe_cli_err("password longer than %u bytes", (unsigned)cap - 1);
		return rc;
	}
	if (rc < 0) {
		lfe_cli_err("cannot read the password: %s", strerror(-rc));
		return rc;
	}
	if (*len == 0) {
		/* RFC 4513 §5.1.2: an empty password is an unauthenticated bind,
		 * never a credential. */
		lfe_cli_err("empty password refused");
		return -EINVAL;
	}
	return 0;
}

static int hash_password(const struct ctl *c, const char *pw, size_t len, char *out, size_t cap)
{
	ssize_t n = lfe_pw_hash(c->scheme, (const uint8_t *)pw, len, out, cap);

	if (n == -ENOTSUP) {
		lfe_cli_err("password scheme %s (from %s) is not supported; e.g. {SSHA512}, {CRYPT}, {ARGON2}, {PBKDF2-SHA512}",
		     c->scheme, c->scheme_from);
		return -ENOTSUP;
	}
	if (n < 0) {
		lfe_cli_err("cannot hash the password with %s: %s", c->scheme, strerror((int)-n));
		return (int)n;
	}
	return 0;
}

static bool is_password_type(const uint8_t *t, size_t n)
{
	return lfe_attr_is_secret(t, n);
}

static bool is_type(const struct lfe_bytes *t, const char *name)
{
	return lfe_attr_type_eq(t->p, t->len, (const uint8_t *)name, strlen(name));
}

/* ------------------------------------------------------ attribute lists */

/* LDIF gives one line per value; the store wants one attribute per type
 * with all its values. Group by type (case-insensitive, options included),
 * keeping file order, through a small hash so that a group with many
 * members stays linear. */
struct attr_list {
	struct lfe_ldap_attr *attrs;
	uint32_t n_attrs;
	struct lfe_bytes *vals;
};

static void attr_list_free(struct attr_list *l)
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

static int group_attrs(const struct lfe_ldif_av *av, uint32_t n, struct attr_list *out)
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
		attr_list_free(out);
	free(table);
	free(gid);
	free(count);
	free(first);
	free(fill);
	return rc;
}

/* ------------------------------------------------------------- commands */

static int cmd_init(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { { "suffix", required_argument, NULL, 's' },
					    COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	const char *suffix = NULL, *msg = NULL;
	char ndn[LFE_DN_MAX + 1];
	size_t nlen = 0;
	struct lfe_store *st;
	int opt, rc, err = 0;

	while ((opt = getopt_long(argc, argv, "s:h", lo, NULL)) != -1) {
		if (opt == 's') {
			suffix = optarg;
			continue;
		}
		if ((rc = common_opt(c, cmd, opt)) != OPT_CONTINUE)
			return rc;
	}
	if (optind != argc)
		return lfe_cli_usage(cmd->usage, "unexpected argument \"%s\"", argv[optind]);
	if (!suffix)
		return lfe_cli_usage(cmd->usage, "--suffix DN is required (e.g. --suffix dc=example,dc=com)");
	if (cli_dn(cmd, suffix, ndn, sizeof(ndn), &nlen) < 0)
		return LFE_EXIT_USAGE;
	if (nlen == 0)
		return lfe_cli_usage(cmd->usage, "the suffix must not be the empty DN");
	if ((rc = mkdir_p(c->store, 0750)) < 0) {
		lfe_cli_err("cannot create store directory %s: %s", c->store, strerror(-rc));
		return LFE_EXIT_FAIL;
	}
	st = lfe_store_open(c->store, 0, 0, &err, &msg);
	if (!st) {
		lfe_cli_err("cannot open store %s: %s", c->store, msg ? msg : strerror(err < 0 ? -err : EIO));
		return LFE_EXIT_FAIL;
	}
	rc = lfe_store_init(st, suffix);
	if (rc == -EEXIST) {
		size_t slen = 0;
		const char *cur = lfe_store_suffix(st, &slen);

		lfe_cli_err("store %s is already initialised (suffix %.*s)", c->store,
		     (int)(cur ? slen : 0), cur ? cur : "");
	} else if (rc < 0) {
		lfe_cli_err("cannot initialise store %s: %s", c->store, store_err(rc));
	} else if ((rc = lfe_store_set_default_scheme(st, c->scheme)) < 0) {
		lfe_cli_err("cannot record %s as the store's default scheme: %s", c->scheme, store_err(rc));
	} else {
		printf("initialised %s with suffix %s\n", c->store, ndn);
	}
	lfe_store_close(st);
	return rc < 0 ? LFE_EXIT_FAIL : LFE_EXIT_OK;
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

static int cmd_import(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { { "replace", no_argument, NULL, 'r' },
					    { "progress", no_argument, NULL, 'G' },
					    COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct lfe_ldif_reader rd;
	struct lfe_progress prog;
	struct lfe_ldif_entry e;
	struct lfe_ldif_err lerr;
	struct lfe_store *st = NULL;
	const char *fname, *suffix;
	uint8_t *data = NULL;
	size_t dlen = 0, slen = 0;
	uint64_t count = 0, cleartext = 0;
	bool replace = false, in_batch = false, force_progress = false;
	struct scheme_tally tally = { 0 };
	int opt, rc, fd, result = LFE_EXIT_FAIL;

	while ((opt = getopt_long(argc, argv, "rh", lo, NULL)) != -1) {
		if (opt == 'r') {
			replace = true;
			continue;
		}
		if (opt == 'G') {
			force_progress = true;
			continue;
		}
		if ((rc = common_opt(c, cmd, opt)) != OPT_CONTINUE)
			return rc;
	}
	if (argc - optind != 1)
		return lfe_cli_usage(cmd->usage, argc == optind ? "name the LDIF file to import (or - for stdin)"
						       : "import takes one file");
	fname = argv[optind];
	if (strcmp(fname, "-") == 0) {
		fd = STDIN_FILENO;
		fname = "<stdin>";
	} else if ((fd = open(fname, O_RDONLY | O_CLOEXEC)) < 0) {
		lfe_cli_err("cannot open %s: %s", fname, strerror(errno));
		return LFE_EXIT_FAIL;
	}
	rc = read_all(fd, &data, &dlen);
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc < 0) {
		lfe_cli_err("cannot read %s: %s", fname, strerror(-rc));
		return LFE_EXIT_FAIL;
	}
	/* The file is read whole, so the share of its bytes parsed gives the
	 * percent and the ETA. */
	lfe_progress_init(&prog, "import", force_progress);
	if (!(st = open_store(c, false)))
		goto out;
	suffix = lfe_store_suffix(st, &slen);
	if ((rc = lfe_store_batch_begin(st)) < 0) {
		lfe_cli_err("cannot start the import: %s", store_err(rc));
		goto out;
	}
	in_batch = true;
	memset(&e, 0, sizeof(e));
	lfe_ldif_reader_init(&rd, data, dlen);
	for (;;) {
		char ndn[LFE_DN_MAX + 1];
		struct attr_list al;
		ssize_t nlen;

		rc = lfe_ldif_next(&rd, &e, &lerr);
		if (rc == 0)
			break;
		if (rc < 0) {
			lfe_cli_err("%s:%u: %s", fname, lerr.line, lerr.msg);
			goto out_entry;
		}
		nlen = lfe_dn_normalize(e.dn.p, e.dn.len, ndn, sizeof(ndn));
		if (nlen < 0) {
			lfe_cli_err("%s:%u: invalid DN \"%.*s\"", fname, e.line,
			     (int)(e.dn.len > 200 ? 200 : e.dn.len), (const char *)e.dn.p);
			goto out_entry;
		}
		if (!lfe_dn_is_under(ndn, (size_t)nlen, suffix, slen)) {
			lfe_cli_err("%s:%u: entry %.*s is outside the suffix %.*s", fname, e.line,
			     (int)(e.dn.len > 200 ? 200 : e.dn.len), (const char *)e.dn.p,
			     (int)slen, suffix);
			goto out_entry;
		}
		for (uint32_t i = 0; i < e.n; i++) {
			char scheme[SCHEME_MAX];

			if (!lfe_attr_base_eq(e.av[i].type.p, e.av[i].type.len,
					      (const uint8_t *)"userPassword", 12) ||
			    lfe_pw_scheme_name((const char *)e.av[i].val.p, e.av[i].val.len,
					       scheme, sizeof(scheme)) <= 0)
				continue;
			if (strcmp(scheme, "{CLEARTEXT}") == 0) {
				if (cleartext++ < 10)
					fprintf(stderr, "ldapfectl: warning: %s:%u: userPassword of %.*s is not hashed\n",
						fname, e.av[i].line, (int)(e.dn.len > 200 ? 200 : e.dn.len),
						(const char *)e.dn.p);
				continue;
			}
			tally_scheme(&tally, scheme);
		}
		if ((rc = group_attrs(e.av, e.n, &al)) < 0) {
			lfe_cli_err("%s:%u: %s", fname, e.line,
			     rc == -E2BIG ? "too many attribute types in one entry" : "out of memory");
			goto out_entry;
		}
		rc = lfe_store_put(st, e.dn, al.attrs, al.n_attrs, replace);
		attr_list_free(&al);
		if (rc == -EEXIST) {
			lfe_cli_err("%s:%u: entry %.*s already exists (in the store or earlier in the file); "
			     "use import --replace to overwrite", fname, e.line,
			     (int)(e.dn.len > 200 ? 200 : e.dn.len), (const char *)e.dn.p);
			goto out_entry;
		}
		if (rc < 0) {
			lfe_cli_err("%s:%u: cannot store entry %.*s: %s", fname, e.line,
			     (int)(e.dn.len > 200 ? 200 : e.dn.len), (const char *)e.dn.p,
			     rc == -EINVAL ? "invalid entry (DN, attribute type or size)" : store_err(rc));
			goto out_entry;
		}
		count++;
		lfe_progress_update(&prog, count, dlen ? (double)rd.off / (double)dlen : 1.0);
	}
	in_batch = false;
	lfe_progress_note(&prog, count, "committing");
	rc = lfe_store_batch_commit(st);
	double secs = lfe_progress_end(&prog, count);
	if (rc < 0) {
		lfe_cli_err("%s: commit failed: %s; nothing was imported", fname, store_err(rc));
		goto out_entry;
	}
	if (cleartext > 0)
		fprintf(stderr, "ldapfectl: warning: %llu unhashed userPassword value(s); "
			"the daemon refuses them unless cleartext is allowed\n",
			(unsigned long long)cleartext);
	printf("imported %llu entries from %s in %.2f s\n", (unsigned long long)count, fname, secs);
	/* Unknown DNs get a dummy verification of the store's default scheme;
	 * make it the scheme most users have so both cost the same. Not part
	 * of the batch (the store refuses it inside one); failing it costs
	 * only timing uniformity, so it warns. */
	if (tally.n > 0) {
		uint32_t best = 0;

		for (uint32_t i = 1; i < tally.n; i++)
			if (tally.count[i] > tally.count[best])
				best = i;
		rc = lfe_store_set_default_scheme(st, tally.name[best]);
		if (rc < 0)
			fprintf(stderr, "ldapfectl: warning: cannot record %s as the default scheme: %s\n",
				tally.name[best], store_err(rc));
	}
	result = LFE_EXIT_OK;
out_entry:
	lfe_ldif_entry_free(&e);
	lfe_ldif_reader_free(&rd);
out:
	if (in_batch) {
		lfe_store_batch_abort(st);
		fprintf(stderr, "ldapfectl: nothing was imported\n");
	}
	lfe_store_close(st);
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

/* One entry as LDIF. hide: passwords as "{SCHEME} (hidden)" (show). */
static int write_entry(FILE *f, const uint8_t *rec, size_t len, bool hide)
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
		bool pw = is_password_type(type.p, type.len);

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

static int cmd_export(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { { "output", required_argument, NULL, 'o' },
					    { "progress", no_argument, NULL, 'G' },
					    COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	const char *output = NULL, *suffix;
	char suffix_copy[LFE_DN_MAX + 1];
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
		if ((rc = common_opt(c, cmd, opt)) != OPT_CONTINUE)
			return rc;
	}
	if (optind != argc)
		return lfe_cli_usage(cmd->usage, "unexpected argument \"%s\"", argv[optind]);
	if (!(st = open_store(c, true)))
		return LFE_EXIT_FAIL;
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
		     rc == -ENOMEM ? "out of memory" : store_err(rc));
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
		rc = write_entry(f, l.items[i].rec, l.items[i].rec_len, false);
		if (rc == -EBADMSG) {
			lfe_progress_end(&prog, i);
			lfe_cli_err("corrupt record for %.*s in %s", (int)l.items[i].ndn_len, l.items[i].ndn, c->store);
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

/* ---- user add */

struct kv_list {
	struct lfe_ldif_av *av;
	uint32_t n, cap;
};

static int kv_add(struct kv_list *l, const void *t, size_t tlen, const void *v, size_t vlen)
{
	if (l->n == l->cap) {
		uint32_t ncap = l->cap ? l->cap * 2 : 16;
		struct lfe_ldif_av *na = realloc(l->av, (size_t)ncap * sizeof(*na));

		if (!na)
			return -ENOMEM;
		l->av = na;
		l->cap = ncap;
	}
	memset(&l->av[l->n], 0, sizeof(l->av[0]));
	l->av[l->n].type = (struct lfe_bytes){ t, tlen };
	l->av[l->n].val = (struct lfe_bytes){ v, vlen };
	l->n++;
	return 0;
}

static bool kv_has_type(const struct kv_list *l, const char *type)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (is_type(&l->av[i].type, type))
			return true;
	return false;
}

/* Does the list hold type=value, comparing types by canonical name (OIDs
 * too) and values the way the attribute compares them? */
static bool kv_has_value(const struct kv_list *l, const struct berval *t, const struct berval *v)
{
	bool ci = lfe_attr_is_case_ignore((const uint8_t *)t->bv_val, t->bv_len);

	for (uint32_t i = 0; i < l->n; i++) {
		const struct lfe_ldif_av *a = &l->av[i];

		if (!lfe_attr_type_eq(a->type.p, a->type.len, (const uint8_t *)t->bv_val, t->bv_len))
			continue;
		if (a->val.len == v->bv_len &&
		    (ci ? strncasecmp((const char *)a->val.p, v->bv_val, v->bv_len)
			: memcmp(a->val.p, v->bv_val, v->bv_len)) == 0)
			return true;
	}
	return false;
}

static int cmd_user(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { { "attr", required_argument, NULL, 'a' },
					    { "password-stdin", no_argument, NULL, 'p' },
					    COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	static const char *const default_oc[] = { "top", "person", "organizationalPerson",
						  "inetOrgPerson" };
	struct kv_list kv = { 0 };
	struct attr_list al = { 0 };
	struct lfe_store *st = NULL;
	LDAPDN ldn = NULL;
	const char *dn, *suffix;
	char ndn[LFE_DN_MAX + 1], pw[PW_MAX], hashed[HASH_MAX];
	size_t nlen, slen = 0, pwlen = 0;
	bool want_pw = false;
	int opt, rc, result = LFE_EXIT_FAIL;

	/* "user add": the sub-command first, then its options. */
	if (argc < 2 || strcmp(argv[1], "add") != 0) {
		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
			print_cmd_help(stdout, cmd);
			return LFE_EXIT_OK;
		}
		if (argc < 2)
			return lfe_cli_usage(cmd->usage, "missing sub-command (add)");
		return lfe_cli_usage(cmd->usage, "unknown sub-command \"%s\" (only add)", argv[1]);
	}
	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "a:ph", lo, NULL)) != -1) {
		if (opt == 'p') {
			want_pw = true;
			continue;
		}
		if (opt == 'a') {
			const char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg) {
				result = lfe_cli_usage(cmd->usage, "--attr wants TYPE=VALUE, got \"%s\"", optarg);
				goto out;
			}
			if (kv_add(&kv, optarg, (size_t)(eq - optarg), eq + 1, strlen(eq + 1)) < 0) {
				lfe_cli_err("out of memory");
				goto out;
			}
			continue;
		}
		if ((rc = common_opt(c, cmd, opt)) != OPT_CONTINUE) {
			result = rc;
			goto out;
		}
	}
	if (argc - optind != 1) {
		result = lfe_cli_usage(cmd->usage, argc == optind ? "name the DN of the user to add"
							 : "user add takes one DN");
		goto out;
	}
	dn = argv[optind];
	if (cli_dn(cmd, dn, ndn, sizeof(ndn), &nlen) < 0) {
		result = LFE_EXIT_USAGE;
		goto out;
	}
	if (nlen == 0 || ldap_str2dn(dn, &ldn, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS ||
	    !ldn || !ldn[0]) {
		result = lfe_cli_usage(cmd->usage, "\"%s\" cannot name a user (empty or not an LDAPv3 DN)", dn);
		goto out;
	}
	for (uint32_t i = 0; i < kv.n; i++) {
		char scheme[SCHEME_MAX];

		if (!is_password_type(kv.av[i].type.p, kv.av[i].type.len))
			continue;
		/* authPassword has its own syntax, "scheme$authInfo$authValue"
		 * (RFC 3112), always hashed. */
		if (lfe_attr_base_eq(kv.av[i].type.p, kv.av[i].type.len,
				     (const uint8_t *)"authPassword", 12)) {
			const uint8_t *d = memchr(kv.av[i].val.p, '$', kv.av[i].val.len);
			if (d && d != kv.av[i].val.p &&
			    memchr(d + 1, '$', kv.av[i].val.len - (size_t)(d + 1 - kv.av[i].val.p)))
				continue;
			result = lfe_cli_usage(cmd->usage, "--attr %.*s= takes an RFC 3112 value (scheme$salt$hash)",
					     (int)kv.av[i].type.len, (const char *)kv.av[i].type.p);
			goto out;
		}
		if (lfe_pw_scheme_name((const char *)kv.av[i].val.p, kv.av[i].val.len, scheme,
				       sizeof(scheme)) < 0 || strcmp(scheme, "{CLEARTEXT}") == 0) {
			result = lfe_cli_usage(cmd->usage, "--attr %.*s= takes an already hashed value ({SCHEME}...); "
					     "use --password-stdin to hash a password",
					     (int)kv.av[i].type.len, (const char *)kv.av[i].type.p);
			goto out;
		}
	}
	/* An entry must hold the values of its own RDN (X.501). */
	for (LDAPRDN rdn = ldn[0]; *rdn; rdn++) {
		LDAPAVA *ava = *rdn;

		if (ava->la_flags & LDAP_AVA_BINARY)
			continue;
		if (!kv_has_value(&kv, &ava->la_attr, &ava->la_value) &&
		    kv_add(&kv, ava->la_attr.bv_val, ava->la_attr.bv_len,
			   ava->la_value.bv_val, ava->la_value.bv_len) < 0) {
			lfe_cli_err("out of memory");
			goto out;
		}
	}
	if (!kv_has_type(&kv, "objectClass")) {
		/* A person that slapd's schema check accepts when the store is
		 * exported: inetOrgPerson needs cn and sn. */
		const struct berval *rv = &ldn[0][0]->la_value;

		for (size_t i = 0; i < sizeof(default_oc) / sizeof(default_oc[0]); i++)
			if (kv_add(&kv, "objectClass", 11, default_oc[i], strlen(default_oc[i])) < 0)
				goto oom;
		if (!kv_has_type(&kv, "cn") && kv_add(&kv, "cn", 2, rv->bv_val, rv->bv_len) < 0)
			goto oom;
		if (!kv_has_type(&kv, "sn") && kv_add(&kv, "sn", 2, rv->bv_val, rv->bv_len) < 0)
			goto oom;
	}
	/* The operational attributes clients cache on (RFC 4530 entryUUID,
	 * RFC 4512 timestamps), unless given: returned for "+" or by name. */
	static char uuid[37], now[16];
	if (!kv_has_type(&kv, "entryUUID")) {
		uint8_t u[16];
		if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u)) {
			lfe_cli_err("cannot draw an entryUUID");
			goto out;
		}
		u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);   /* version 4 */
		u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);   /* RFC 4122 variant */
		snprintf(uuid, sizeof(uuid),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
			 u[12], u[13], u[14], u[15]);
		if (kv_add(&kv, "entryUUID", 9, uuid, 36) < 0)
			goto oom;
	}
	time_t t = time(NULL);
	struct tm tmv;
	if (!gmtime_r(&t, &tmv) || strftime(now, sizeof(now), "%Y%m%d%H%M%SZ", &tmv) != 15) {
		lfe_cli_err("cannot read the clock");
		goto out;
	}
	if (!kv_has_type(&kv, "createTimestamp") && kv_add(&kv, "createTimestamp", 15, now, 15) < 0)
		goto oom;
	if (!kv_has_type(&kv, "modifyTimestamp") && kv_add(&kv, "modifyTimestamp", 15, now, 15) < 0)
		goto oom;
	if (want_pw) {
		if (read_password(true, pw, sizeof(pw), &pwlen) < 0)
			goto out;
		rc = hash_password(c, pw, pwlen, hashed, sizeof(hashed));
		if (rc < 0) {
			result = rc == -ENOTSUP ? LFE_EXIT_USAGE : LFE_EXIT_FAIL;
			goto out;
		}
		if (kv_add(&kv, "userPassword", 12, hashed, strlen(hashed)) < 0)
			goto oom;
	}
	if (!(st = open_store(c, false)))
		goto out;
	suffix = lfe_store_suffix(st, &slen);
	if (!lfe_dn_is_under(ndn, nlen, suffix, slen)) {
		lfe_cli_err("entry %s is outside the suffix %.*s", dn, (int)slen, suffix);
		goto out;
	}
	if ((rc = group_attrs(kv.av, kv.n, &al)) < 0)
		goto oom;
	rc = lfe_store_put(st, (struct lfe_bytes){ (const uint8_t *)dn, strlen(dn) },
			   al.attrs, al.n_attrs, false);
	if (rc == -EEXIST)
		lfe_cli_err("entry %s already exists (change its password with: ldapfectl passwd DN)", dn);
	else if (rc < 0)
		lfe_cli_err("cannot add %s: %s", dn, rc == -EINVAL ? "invalid entry" : store_err(rc));
	else
		result = LFE_EXIT_OK;
	goto out;
oom:
	lfe_cli_err("out of memory");
out:
	explicit_bzero(pw, sizeof(pw));
	explicit_bzero(hashed, sizeof(hashed));
	attr_list_free(&al);
	free(kv.av);
	if (ldn)
		ldap_dnfree(ldn);
	lfe_store_close(st);
	return result;
}

/* ---- commands on one DN */

/* Parses "[options] DN" for commands that take one DN. Returns OPT_CONTINUE
 * with *dn and its normal form, or an exit code. */
static int one_dn_args(struct ctl *c, const struct cmd *cmd, int argc, char **argv,
		       const struct option *extra, bool *flag, const char **dn,
		       char *ndn, size_t cap, size_t *nlen)
{
	struct option lo[8];
	size_t n = 0;
	int opt, rc;

	if (extra)
		lo[n++] = *extra;
	lo[n++] = (struct option){ "store", required_argument, NULL, 'S' };
	lo[n++] = (struct option){ "scheme", required_argument, NULL, 'C' };
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (extra && opt == extra->val) {
			*flag = true;
			continue;
		}
		if ((rc = common_opt(c, cmd, opt)) != OPT_CONTINUE)
			return rc;
	}
	if (argc == optind)
		return lfe_cli_usage(cmd->usage, "name the entry's DN");
	if (argc - optind != 1)
		return lfe_cli_usage(cmd->usage, "%s takes one DN", cmd->name);
	*dn = argv[optind];
	if (cli_dn(cmd, *dn, ndn, cap, nlen) < 0)
		return LFE_EXIT_USAGE;
	return OPT_CONTINUE;
}

static int cmd_passwd(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	struct lfe_store *st;
	const char *dn = NULL;
	char ndn[LFE_DN_MAX + 1], pw[PW_MAX], hashed[HASH_MAX];
	size_t nlen = 0, pwlen = 0;
	int rc, result = LFE_EXIT_FAIL;

	if ((rc = one_dn_args(c, cmd, argc, argv, NULL, NULL, &dn, ndn, sizeof(ndn), &nlen)) !=
	    OPT_CONTINUE)
		return rc;
	/* Open first: no point asking for a password for a missing store. */
	if (!(st = open_store(c, false)))
		return LFE_EXIT_FAIL;
	if (read_password(true, pw, sizeof(pw), &pwlen) < 0)
		goto out;
	if ((rc = hash_password(c, pw, pwlen, hashed, sizeof(hashed))) < 0) {
		result = rc == -ENOTSUP ? LFE_EXIT_USAGE : LFE_EXIT_FAIL;
		goto out;
	}
	rc = lfe_store_set_password(st, dn, strlen(dn), hashed, strlen(hashed));
	if (rc == -ENOENT)
		lfe_cli_err("no entry %s", dn);
	else if (rc < 0)
		lfe_cli_err("cannot set the password of %s: %s", dn, store_err(rc));
	else
		result = LFE_EXIT_OK;
out:
	explicit_bzero(pw, sizeof(pw));
	explicit_bzero(hashed, sizeof(hashed));
	lfe_store_close(st);
	return result;
}

static int cmd_del(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	struct lfe_store *st;
	const char *dn = NULL;
	char ndn[LFE_DN_MAX + 1];
	size_t nlen = 0;
	int rc;

	if ((rc = one_dn_args(c, cmd, argc, argv, NULL, NULL, &dn, ndn, sizeof(ndn), &nlen)) !=
	    OPT_CONTINUE)
		return rc;
	if (!(st = open_store(c, false)))
		return LFE_EXIT_FAIL;
	rc = lfe_store_del(st, dn, strlen(dn));
	if (rc == -ENOENT)
		lfe_cli_err("no entry %s", dn);
	else if (rc == -ENOTEMPTY)
		lfe_cli_err("entry %s has entries below it; delete those first", dn);
	else if (rc < 0)
		lfe_cli_err("cannot delete %s: %s", dn, store_err(rc));
	lfe_store_close(st);
	return rc < 0 ? LFE_EXIT_FAIL : LFE_EXIT_OK;
}

/* Look dn up through a reader; on success *r, *st hold it open. */
static int lookup(const struct ctl *c, const char *dn, const char *ndn, size_t nlen,
		  struct lfe_store **st, struct lfe_store_reader **r, struct lfe_entry_view *e)
{
	int rc;

	*r = NULL;
	if (!(*st = open_store(c, true)))
		return -EIO;
	if (!(*r = lfe_store_reader_new(*st))) {
		lfe_cli_err("cannot read store %s", c->store);
		return -EIO;
	}
	rc = lfe_store_get(*r, ndn, nlen, e);
	if (rc == -ENOENT)
		lfe_cli_err("no entry %s", dn);
	else if (rc < 0)
		lfe_cli_err("cannot read %s: %s", dn, store_err(rc));
	return rc;
}

static int cmd_show(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	struct lfe_store *st = NULL;
	struct lfe_store_reader *r = NULL;
	struct lfe_entry_view e;
	const char *dn = NULL;
	char ndn[LFE_DN_MAX + 1];
	size_t nlen = 0;
	int rc;

	if ((rc = one_dn_args(c, cmd, argc, argv, NULL, NULL, &dn, ndn, sizeof(ndn), &nlen)) !=
	    OPT_CONTINUE)
		return rc;
	rc = lookup(c, dn, ndn, nlen, &st, &r, &e);
	if (rc == 0) {
		rc = write_entry(stdout, e.rec, e.rec_len, true);
		if (rc < 0)
			lfe_cli_err("cannot show %s: %s", dn, rc == -EBADMSG ? "corrupt record" : strerror(-rc));
	}
	lfe_store_reader_free(r);
	lfe_store_close(st);
	return rc < 0 ? LFE_EXIT_FAIL : LFE_EXIT_OK;
}

static int cmd_verify(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	static const struct option cleartext = { "allow-cleartext", no_argument, NULL, 'x' };
	struct lfe_store *st = NULL;
	struct lfe_store_reader *r = NULL;
	struct lfe_entry_view e;
	struct lfe_bytes small[8], *vals = small;
	const char *dn = NULL;
	char ndn[LFE_DN_MAX + 1], pw[PW_MAX], scheme[SCHEME_MAX];
	size_t nlen = 0, pwlen = 0;
	uint32_t n = 0, unsupported = 0;
	bool allow_clear = false, ok = false;
	int rc, result = LFE_EXIT_FAIL;

	if ((rc = one_dn_args(c, cmd, argc, argv, &cleartext, &allow_clear, &dn, ndn, sizeof(ndn),
			      &nlen)) != OPT_CONTINUE)
		return rc;
	if (read_password(false, pw, sizeof(pw), &pwlen) < 0)
		goto out;
	if (lookup(c, dn, ndn, nlen, &st, &r, &e) < 0) {
		puts("invalid");
		goto out;
	}
	n = lfe_entry_get(&e, "userPassword", 12, small, 8);
	if (n > 8) {
		if (!(vals = calloc(n, sizeof(*vals)))) {
			lfe_cli_err("out of memory");
			goto out;
		}
		n = lfe_entry_get(&e, "userPassword", 12, vals, n);
	}
	for (uint32_t i = 0; i < n && !ok; i++) {
		rc = lfe_pw_verify((const char *)vals[i].p, vals[i].len, (const uint8_t *)pw, pwlen,
				   allow_clear ? LFE_PW_ALLOW_CLEARTEXT : 0);
		if (rc == 0) {
			ok = true;
			if (lfe_pw_scheme_name((const char *)vals[i].p, vals[i].len, scheme,
					       sizeof(scheme)) < 0)
				strcpy(scheme, "{?}");
		} else if (rc == -ENOTSUP || rc == -EINVAL) {
			char s[SCHEME_MAX];

			if (lfe_pw_scheme_name((const char *)vals[i].p, vals[i].len, s, sizeof(s)) < 0)
				strcpy(s, "{?}");
			lfe_cli_err("userPassword value %u of %s: %s %s", i + 1, dn, s,
			     rc == -EINVAL ? "value is malformed"
			     : strcmp(s, "{CLEARTEXT}") == 0 ? "is not hashed (see --allow-cleartext)"
			     : "is not a supported scheme");
			unsupported++;
		}
	}
	if (n == 0)
		lfe_cli_err("%s has no userPassword", dn);
	if (ok) {
		printf("ok %s\n", scheme);
		result = LFE_EXIT_OK;
	} else {
		puts("invalid");
	}
out:
	explicit_bzero(pw, sizeof(pw));
	if (vals != small)
		free(vals);
	lfe_store_reader_free(r);
	lfe_store_close(st);
	return result;
}

static void print_indexes(struct lfe_store *st, bool detail);

static int cmd_info(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct lfe_store_info info;
	struct lfe_store *st;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1)
		if ((rc = common_opt(c, cmd, opt)) != OPT_CONTINUE)
			return rc;
	if (optind != argc)
		return lfe_cli_usage(cmd->usage, "unexpected argument \"%s\"", argv[optind]);
	if (!(st = open_store(c, true)))
		return LFE_EXIT_FAIL;
	memset(&info, 0, sizeof(info));
	rc = lfe_store_info(st, &info);
	if (rc < 0) {
		lfe_store_close(st);
		lfe_cli_err("cannot read store %s: %s", c->store, store_err(rc));
		return LFE_EXIT_FAIL;
	}
	info.suffix[sizeof(info.suffix) - 1] = '\0';
	info.suffix_orig[sizeof(info.suffix_orig) - 1] = '\0';
	printf("store: %s\nsuffix: %s\nentries: %llu\nsize: %llu bytes\nformat: %u\n"
	       "bind index: %s\n", c->store,
	       info.suffix_orig[0] ? info.suffix_orig : info.suffix, (unsigned long long)info.entries,
	       (unsigned long long)info.map_bytes_used, info.format_version,
	       info.bind_index ? "yes" :
	       info.format_version == 2 ? "no (format 2: run ldapfectl upgrade)" : "no");
	info.ppolicy_default[sizeof(info.ppolicy_default) - 1] = '\0';
	if (info.ppolicy_default[0])
		printf("default password policy: %s\n", info.ppolicy_default);
	print_indexes(st, false);
	lfe_store_close(st);
	return LFE_EXIT_OK;
}

static const char *const rule_names[] = {
	[LFE_MR_CASE_EXACT] = "caseExactMatch", [LFE_MR_CASE_IGNORE] = "caseIgnoreMatch",
	[LFE_MR_INTEGER] = "integerMatch", [LFE_MR_DN] = "distinguishedNameMatch",
};

/* "eq", "pres,sub", ... */
static const char *kinds_name(unsigned k, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s%s%s%s", k & LFE_INDEX_EQ ? "eq" : "",
		 (k & LFE_INDEX_EQ) && (k & (LFE_INDEX_PRES | LFE_INDEX_SUB)) ? "," : "",
		 k & LFE_INDEX_PRES ? "pres" : "",
		 (k & LFE_INDEX_PRES) && (k & LFE_INDEX_SUB) ? "," : "",
		 k & LFE_INDEX_SUB ? "sub" : "");
	return buf;
}

/* "indexes: a b(eq,sub) c(pres)" (info: the kinds when not eq alone) or
 * one line per index with its kinds, matching rule, key count and pages
 * (index list). */
static void print_indexes(struct lfe_store *st, bool detail)
{
	char kb[16];
	struct lfe_store_index ix[LFE_STORE_MAX_INDEX];
	int n = lfe_store_index_list(st, ix, LFE_STORE_MAX_INDEX);

	if (n < 0)
		return;
	if (!detail)
		fputs("indexes:", stdout);
	for (int i = 0; i < n && i < (int)LFE_STORE_MAX_INDEX; i++) {
		if (!detail) {
			printf(" %s", ix[i].attr);
			if (ix[i].kinds != LFE_INDEX_EQ)
				printf("(%s)", kinds_name(ix[i].kinds, kb, sizeof(kb)));
			continue;
		}
		printf("%s %s %s keys=%llu bytes=%llu\n", ix[i].attr,
		       kinds_name(ix[i].kinds, kb, sizeof(kb)),
		       ix[i].rule < sizeof(rule_names) / sizeof(rule_names[0]) ? rule_names[ix[i].rule] : "?",
		       (unsigned long long)ix[i].keys, (unsigned long long)ix[i].bytes);
	}
	if (!detail)
		putchar('\n');
}

static int cmd_index(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct lfe_store *st;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1)
		if ((rc = common_opt(c, cmd, opt)) != OPT_CONTINUE)
			return rc;
	if (optind == argc)
		return lfe_cli_usage(cmd->usage, "missing add, del or list");
	const char *verb = argv[optind++];
	bool list = strcmp(verb, "list") == 0, add = strcmp(verb, "add") == 0;
	if (!list && !add && strcmp(verb, "del") != 0)
		return lfe_cli_usage(cmd->usage, "unknown \"%s\" (add, del or list)", verb);
	if (list ? optind != argc : optind == argc || argc - optind > 2)
		return lfe_cli_usage(cmd->usage, "wrong number of arguments");
	unsigned kinds = add ? LFE_INDEX_EQ : LFE_INDEX_ALL;
	if (!list && argc - optind == 2) {
		const char *k = argv[optind + 1];
		kinds = strcmp(k, "eq") == 0 ? LFE_INDEX_EQ : strcmp(k, "pres") == 0 ? LFE_INDEX_PRES :
			strcmp(k, "sub") == 0 ? LFE_INDEX_SUB : 0;
		if (!kinds)
			return lfe_cli_usage(cmd->usage, "index type \"%s\" not supported (eq, pres or sub)", k);
	}
	if (!(st = open_store(c, list)))
		return LFE_EXIT_FAIL;
	if (list) {
		print_indexes(st, true);
		lfe_store_close(st);
		return LFE_EXIT_OK;
	}
	rc = add ? lfe_store_index_add_kind(st, argv[optind], kinds) :
		   lfe_store_index_del_kind(st, argv[optind], kinds);
	lfe_store_close(st);
	if (rc < 0) {
		lfe_cli_err("cannot %s the index of %s: %s", add ? "add" : "drop", argv[optind],
		     rc == -EPROTO ? "the store is below format 3: run ldapfectl upgrade" :
		     rc == -EEXIST ? "already indexed" : rc == -ENOENT ? "not indexed" :
		     rc == -EINVAL ? "not an attribute type that can be indexed" :
		     rc == -EOPNOTSUPP ? "its matching rule has no substring form (integer, DN)" :
		     rc == -ENOSPC ? "too many indexes" : store_err(rc));
		return LFE_EXIT_FAIL;
	}
	return LFE_EXIT_OK;
}

static int cmd_upgrade(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct lfe_store *st;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1)
		if ((rc = common_opt(c, cmd, opt)) != OPT_CONTINUE)
			return rc;
	if (optind != argc)
		return lfe_cli_usage(cmd->usage, "unexpected argument \"%s\"", argv[optind]);
	if (!(st = open_store(c, false)))
		return LFE_EXIT_FAIL;
	rc = lfe_store_upgrade(st);
	lfe_store_close(st);
	if (rc == -EALREADY) {
		printf("%s is already format %u\n", c->store, LFE_STORE_FORMAT_VERSION);
		return LFE_EXIT_OK;
	}
	if (rc < 0) {
		lfe_cli_err("cannot upgrade %s: %s", c->store, store_err(rc));
		return LFE_EXIT_FAIL;
	}
	return LFE_EXIT_OK;
}

static int cmd_reindex(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct lfe_store *st;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1)
		if ((rc = common_opt(c, cmd, opt)) != OPT_CONTINUE)
			return rc;
	if (optind != argc)
		return lfe_cli_usage(cmd->usage, "unexpected argument \"%s\"", argv[optind]);
	if (!(st = open_store(c, false)))
		return LFE_EXIT_FAIL;
	rc = lfe_store_bind_index_build(st);
	lfe_store_close(st);
	if (rc < 0) {
		lfe_cli_err("cannot build the bind index of %s: %s", c->store, store_err(rc));
		return LFE_EXIT_FAIL;
	}
	return LFE_EXIT_OK;
}

static int cmd_help(struct ctl *c, const struct cmd *cmd, int argc, char **argv);

static int cmd_sync(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	(void)cmd;
	return lfe_sync_cmd(c->store, argc, argv);
}

/* Every command for the running daemon: daemonctl.c. */
static int cmd_daemon(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	const struct lfe_dctl_cmd dc = { cmd->name, cmd->usage, cmd->help };
	return lfe_dctl_run(&dc, c->daemon, c->prefix, argc, argv);
}

static const struct cmd commands[] = {
	{ "init", cmd_init, "init --suffix DN",
	  "Create an empty store for the naming context DN (the directory is created\n"
	  "if missing). Fails if the store is already initialised.\n" },
	{ "import", cmd_import, "import [--replace] [--progress] FILE.ldif|-",
	  "Load LDIF content records (slapcat or 389-ds db2ldif output) in one batch:\n"
	  "every entry lands or none does. Entries must be the suffix or lie below it.\n"
	  "userPassword values are kept in their {SCHEME} form. Refused: change records\n"
	  "(changetype:), \":<\" URL values. --replace overwrites entries that exist.\n" },
	{ "export", cmd_export, "export [-o FILE] [--progress]",
	  "Write every entry as LDIF (parents first) that slapadd and import accept;\n"
	  "values are base64 where RFC 2849 requires, userPassword always.\n"
	  "Import and export show entries done, rate and ETA on stderr when it is a\n"
	  "terminal (--progress: always).\n" },
	{ "user", cmd_user, "user add DN [--attr TYPE=VALUE ...] [--password-stdin]",
	  "Add an entry. --attr may repeat (one value each). The RDN's values are\n"
	  "added if missing. Without an objectClass the entry is an inetOrgPerson\n"
	  "whose cn and sn default to the RDN value. --password-stdin reads the\n"
	  "password (first line of stdin, or a prompt on a terminal) and stores it\n"
	  "hashed with the default scheme (--scheme, $LDAPFE_SCHEME, {SSHA512}).\n" },
	{ "passwd", cmd_passwd, "passwd DN",
	  "Replace the entry's userPassword with a hash (default scheme) of a new\n"
	  "password: the first line of stdin, or asked twice on a terminal.\n" },
	{ "del", cmd_del, "del DN", "Delete one entry.\n" },
	{ "show", cmd_show, "show DN",
	  "Print the entry as LDIF; passwords appear only as their scheme,\n"
	  "e.g. \"userPassword: {SSHA} (hidden)\".\n" },
	{ "verify", cmd_verify, "verify [--allow-cleartext] DN",
	  "Check a password (first line of stdin, or a prompt) against the entry.\n"
	  "Prints \"ok {SCHEME}\" and exits 0, or prints \"invalid\" and exits 1.\n" },
	{ "info", cmd_info, "info",
	  "Print the suffix, entry count, store size, format version and indexes.\n" },
	{ "index", cmd_index, "index add ATTR [eq|pres|sub] | index del ATTR [eq|pres|sub] | index list",
	  "Declare (add: built from every entry in one transaction), drop (without a\n"
	  "kind: every kind) or list the store's indexes: eq (the default), pres\n"
	  "(attr=*), sub (substring pieces); each keys values by its type's matching rule.\n"
	  "A running daemon uses an added index once restarted; a dropped one it\n"
	  "stops using at once. Needs format 3 (ldapfectl upgrade).\n" },
	{ "upgrade", cmd_upgrade, "upgrade",
	  "Convert a format 1 or 2 store to format 3 (the default indexes: uid,\n"
	  "uidNumber, gidNumber, cn, mail, memberUid, member, uniqueMember, memberOf,\n"
	  "objectClass, entryUUID) in one transaction; older ldapfe builds refuse it.\n" },
	{ "reindex", cmd_reindex, "reindex",
	  "(Re)build the bind index (a store made by an older ldapfe has none: binds\n"
	  "then read the whole entries) in one transaction; a format 1 store becomes\n"
	  "format 2, which older ldapfe builds refuse (ldapfectl upgrade: format 3).\n" },
	{ "sync", cmd_sync, "sync -H URI -b BASE [-D DN -y PWFILE] [-Z] ... | sync --status",
	  "Keep the store in sync with an LDAP directory (RFC 4533); see: ldapfectl sync --help\n" },
	/* The running daemon (its control socket: --daemon PATH or --prefix NAME). */
	{ "status", cmd_daemon, "status [--json]",
	  "Version, uptime, ports (driver, link, MAC, address, queues, checksum\n"
	  "offload rx/tx), worker lcores, store (entries, last transaction and its\n"
	  "time), TLS (ports, certificate subject and expiry) and the limits in force.\n" },
	{ "stats", cmd_daemon, "stats [--per-core] [--json]",
	  "Every counter (the names of the daemon's telemetry and /metrics), summed\n"
	  "over the workers, and its rate per second over the daemon's last second\n"
	  "or so; --per-core adds one column (JSON object) per lcore.\n" },
	{ "conns", cmd_daemon, "conns [--limit N] [--show-dn] [--json]",
	  "Open connections per core: peer, local port, state, age, requests, bound or\n"
	  "not (at most N per core, default 100, at most 256). The bound DN only with\n"
	  "--show-dn.\n" },
	{ "reload", cmd_daemon, "reload [--json]",
	  "Re-read the daemon's config file and apply what can change live (deadlines,\n"
	  "search limits and policy, throttle thresholds), or refuse all of it, naming\n"
	  "the key and the reason. Throttle counts start afresh.\n" },
	{ "drain", cmd_daemon, "drain [--timeout S] [--json]",
	  "Refuse new connections (RST), let open ones finish for up to S seconds\n"
	  "(default 30), then stop the daemon (it exits 0). Waits until it is gone.\n" },
	{ "top", cmd_daemon, "top [--count N]",
	  "Live per-core and total rates, refreshed every second; q or Ctrl-C quits\n"
	  "(--count: stop after N refreshes).\n" },
	{ "help", cmd_help, "help [COMMAND]", "Describe ldapfectl or one command.\n" },
};

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void main_help(FILE *f)
{
	fputs("usage: ldapfectl [--store PATH] [--scheme SCHEME] [--daemon PATH | --prefix NAME] COMMAND [ARGS]\n\n"
	      "Administer an ldapfe store (the daemon reads it while we write) and the\n"
	      "running daemon.\n\n"
	      "  --store PATH      the store directory ($LDAPFE_STORE, else " DEFAULT_STORE ")\n"
	      "  --scheme SCHEME   hash for new passwords ($LDAPFE_SCHEME, else " DEFAULT_SCHEME ")\n"
	      "  --daemon PATH     the daemon's control socket ($LDAPFE_DAEMON), or the\n"
	      "  --prefix NAME     EAL file prefix it runs with ($LDAPFE_PREFIX, else rte):\n"
	      "                    /var/run/dpdk/NAME/ldapfe.ctl\n"
	      "  --version         print the version\n\n"
	      "commands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s\n", commands[i].usage);
	fputs("\nldapfectl COMMAND --help describes one command.\n"
	      "Exit status: 0 success, 1 failure, 2 usage error.\n", f);
}

static int cmd_help(struct ctl *c, const struct cmd *cmd, int argc, char **argv)
{
	const struct cmd *which;

	(void)c;
	if (argc > 2)
		return lfe_cli_usage(cmd->usage, "help takes at most one command");
	if (argc == 2 && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0) {
		if (!(which = find_cmd(argv[1]))) {
			lfe_cli_err("unknown command \"%s\"", argv[1]);
			main_help(stderr);
			return LFE_EXIT_USAGE;
		}
		print_cmd_help(stdout, which);
		return LFE_EXIT_OK;
	}
	main_help(stdout);
	return LFE_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct ctl c = { .store = DEFAULT_STORE };
	const struct cmd *cmd;
	const char *env;
	int opt;

	if ((env = getenv("LDAPFE_STORE")) && *env)
		c.store = env;
	set_scheme(&c, DEFAULT_SCHEME, "the default");
	if ((env = getenv("LDAPFE_SCHEME")) && *env && set_scheme(&c, env, "LDAPFE_SCHEME") < 0)
		return LFE_EXIT_USAGE;
	while ((opt = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		switch (opt) {
		case 'S':
			c.store = optarg;
			break;
		case 'D':
			c.daemon = optarg;
			break;
		case 'P':
			c.prefix = optarg;
			break;
		case 'V':
			printf("ldapfectl " LFE_VERSION "\n");
			return LFE_EXIT_OK;
		case 'C':
			if (set_scheme(&c, optarg, "--scheme") < 0)
				return LFE_EXIT_USAGE;
			break;
		case 'h':
			main_help(stdout);
			return LFE_EXIT_OK;
		default:
			main_help(stderr);
			return LFE_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		lfe_cli_err("missing command");
		main_help(stderr);
		return LFE_EXIT_USAGE;
	}
	if (!(cmd = find_cmd(argv[optind]))) {
		lfe_cli_err("unknown command \"%s\"; see: ldapfectl help", argv[optind]);
		return LFE_EXIT_USAGE;
	}
	if (*c.store == '\0') {
		lfe_cli_err("--store must not be empty");
		return LFE_EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	optind = 0;     /* glibc: restart getopt for the command's options */
	return cmd->fn(&c, cmd, argc, argv);
}
