/* mgmt/ctl_store.c — ldapfectl init, info, upgrade and reindex, and opening
 * the store for every store command (see ctl.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/store.h"
#include "ldap/dn.h"
#include "mgmt/cli.h"
#include "mgmt/ctl.h"

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

int lfe_ctl_store_open(const struct lfe_ctl *c, bool rdonly, struct lfe_store **out, char *err,
		       size_t errlen)
{
	struct stat sb;
	struct lfe_store *st;
	const char *msg = NULL, *suffix;
	size_t slen = 0;
	int rc = 0;

	*out = NULL;
	if (stat(c->store, &sb) < 0) {
		rc = -errno;
		if (rc == -ENOENT)
			return lfe_cli_fill(err, errlen, rc, "no store at %s (create one with: ldapfectl "
					    "--store %s init --suffix DN)", c->store, c->store);
		return lfe_cli_fill(err, errlen, rc, "cannot open store %s: %s", c->store, strerror(-rc));
	}
	st = lfe_store_open(c->store, rdonly ? LFE_STORE_RDONLY : 0, 0, &rc, &msg);
	if (!st && rc == -ENOENT)
		return lfe_cli_fill(err, errlen, rc, "store %s is not initialised; run: ldapfectl --store "
				    "%s init --suffix DN", c->store, c->store);
	if (!st)
		return lfe_cli_fill(err, errlen, rc < 0 ? rc : -EIO, "cannot open store %s: %s%s", c->store,
				    msg ? msg : strerror(rc < 0 ? -rc : EIO),
				    rc == -EPROTO ? " (written by another format version of ldapfe)" : "");
	suffix = lfe_store_suffix(st, &slen);
	if (!suffix || slen == 0) {
		lfe_store_close(st);
		return lfe_cli_fill(err, errlen, -ENOENT, "store %s is not initialised; run: ldapfectl "
				    "--store %s init --suffix DN", c->store, c->store);
	}
	*out = st;
	return 0;
}

const char *lfe_ctl_store_err(int rc)
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

/* ------------------------------------------------------------- commands */

int lfe_ctl_init(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { { "suffix", required_argument, NULL, 's' },
					    LFE_CTL_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	const char *suffix = NULL, *msg = NULL;
	char ndn[LFE_DN_MAX + 1], err[LFE_CLI_ERR_MAX];
	size_t nlen = 0;
	struct lfe_store *st;
	int opt, rc, oerr = 0;

	while ((opt = getopt_long(argc, argv, "s:h", lo, NULL)) != -1) {
		if (opt == 's') {
			suffix = optarg;
			continue;
		}
		if ((rc = lfe_ctl_common_opt(c, cmd, opt)) != LFE_CTL_CONTINUE)
			return rc;
	}
	if (optind != argc)
		return lfe_cli_usage(cmd->usage, "unexpected argument \"%s\"", argv[optind]);
	if (!suffix)
		return lfe_cli_usage(cmd->usage, "--suffix DN is required (e.g. --suffix dc=example,dc=com)");
	if (lfe_ctl_dn(suffix, ndn, sizeof(ndn), &nlen, err, sizeof(err)) < 0)
		return lfe_cli_usage(cmd->usage, "\"%s\" %s", suffix, err);
	if (nlen == 0)
		return lfe_cli_usage(cmd->usage, "the suffix must not be the empty DN");
	if ((rc = mkdir_p(c->store, 0750)) < 0)
		return lfe_cli_fail("cannot create store directory %s: %s", c->store, strerror(-rc));
	/* Not lfe_ctl_store_open: this store has no suffix yet. */
	if (!(st = lfe_store_open(c->store, 0, 0, &oerr, &msg)))
		return lfe_cli_fail("cannot open store %s: %s", c->store,
				    msg ? msg : strerror(oerr < 0 ? -oerr : EIO));
	rc = lfe_store_init(st, suffix);
	if (rc == -EEXIST) {
		size_t slen = 0;
		const char *cur = lfe_store_suffix(st, &slen);

		lfe_cli_err("store %s is already initialised (suffix %.*s)", c->store,
			    (int)(cur ? slen : 0), cur ? cur : "");
	} else if (rc < 0) {
		lfe_cli_err("cannot initialise store %s: %s", c->store, lfe_ctl_store_err(rc));
	} else if ((rc = lfe_store_set_default_scheme(st, c->scheme)) < 0) {
		lfe_cli_err("cannot record %s as the store's default scheme: %s", c->scheme,
			    lfe_ctl_store_err(rc));
	} else {
		printf("initialised %s with suffix %s\n", c->store, ndn);
	}
	lfe_store_close(st);
	return rc < 0 ? LFE_EXIT_FAIL : LFE_EXIT_OK;
}

int lfe_ctl_info(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	struct lfe_store_info info;
	struct lfe_store *st;
	char err[LFE_CLI_ERR_MAX];
	int rc;

	if ((rc = lfe_ctl_no_args(c, cmd, argc, argv)) != LFE_CTL_CONTINUE)
		return rc;
	if (lfe_ctl_store_open(c, true, &st, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	memset(&info, 0, sizeof(info));
	rc = lfe_store_info(st, &info);
	if (rc < 0) {
		lfe_store_close(st);
		return lfe_cli_fail("cannot read store %s: %s", c->store, lfe_ctl_store_err(rc));
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
	lfe_ctl_print_indexes(st, false);
	lfe_store_close(st);
	return LFE_EXIT_OK;
}

/* upgrade and reindex: one transaction over the whole store, no argument. */
struct store_job {
	int (*run)(struct lfe_store *st);
	const char *fail;       /* "cannot FAIL STORE: reason" */
	bool already_ok;        /* -EALREADY: the store is at the current format, exit 0 */
};

static int store_job(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv,
		     const struct store_job *job)
{
	struct lfe_store *st;
	char err[LFE_CLI_ERR_MAX];
	int rc;

	if ((rc = lfe_ctl_no_args(c, cmd, argc, argv)) != LFE_CTL_CONTINUE)
		return rc;
	if (lfe_ctl_store_open(c, false, &st, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	rc = job->run(st);
	lfe_store_close(st);
	if (job->already_ok && rc == -EALREADY) {
		printf("%s is already format %u\n", c->store, LFE_STORE_FORMAT_VERSION);
		return LFE_EXIT_OK;
	}
	if (rc < 0)
		return lfe_cli_fail("cannot %s %s: %s", job->fail, c->store, lfe_ctl_store_err(rc));
	return LFE_EXIT_OK;
}

int lfe_ctl_upgrade(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	static const struct store_job job = { lfe_store_upgrade, "upgrade", true };

	return store_job(c, cmd, argc, argv, &job);
}

int lfe_ctl_reindex(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	static const struct store_job job = { lfe_store_bind_index_build, "build the bind index of",
					      false };

	return store_job(c, cmd, argc, argv, &job);
}
