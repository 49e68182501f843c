/* mgmt/ctl_index.c — ldapfectl index add|del|list, and the index line of
 * info (see ctl.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend/store.h"
#include "ldap/attr.h"
#include "mgmt/cli.h"
#include "mgmt/ctl.h"

static const char *const rule_names[] = {
	[LFE_MR_CASE_EXACT] = "caseExactMatch", [LFE_MR_CASE_IGNORE] = "caseIgnoreMatch",
	[LFE_MR_INTEGER] = "integerMatch", [LFE_MR_DN] = "distinguishedNameMatch",
};

/* The kinds of index, in the order they are named. */
static const struct {
	const char *name;
	unsigned kind;
} kinds[] = {
	{ "eq", LFE_INDEX_EQ }, { "pres", LFE_INDEX_PRES }, { "sub", LFE_INDEX_SUB },
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/* "eq", "pres,sub", ... */
static const char *kinds_name(unsigned k, char *buf, size_t cap)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_KINDS; i++)
		if ((k & kinds[i].kind) && o < cap)
			o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? "," : "", kinds[i].name);
	return buf;
}

/* "indexes: a b(eq,sub) c(pres)" (info: the kinds when not eq alone) or
 * one line per index with its kinds, matching rule, key count and pages
 * (index list). */
void lfe_ctl_print_indexes(struct lfe_store *st, bool detail)
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

/* Why an index could not be added or dropped. */
static const struct {
	int rc;
	const char *why;
} index_errs[] = {
	{ -EPROTO, "the store is below format 3: run ldapfectl upgrade" },
	{ -EEXIST, "already indexed" },
	{ -ENOENT, "not indexed" },
	{ -EINVAL, "not an attribute type that can be indexed" },
	{ -EOPNOTSUPP, "its matching rule has no substring form (integer, DN)" },
	{ -ENOSPC, "too many indexes" },
};

static const char *index_err(int rc)
{
	for (size_t i = 0; i < sizeof(index_errs) / sizeof(index_errs[0]); i++)
		if (index_errs[i].rc == rc)
			return index_errs[i].why;
	return lfe_ctl_store_err(rc);
}

enum verb { V_ADD, V_DEL, V_LIST };

/* "add ATTR [KIND]", "del ATTR [KIND]" or "list" after the options: the
 * verb and the kinds (add: eq by default; del: every kind), or the exit
 * status of a usage error. */
static int index_args(const struct lfe_ctl_cmd *cmd, int argc, char **argv, enum verb *verb,
		      unsigned *kind)
{
	static const char *const verbs[] = { [V_ADD] = "add", [V_DEL] = "del", [V_LIST] = "list" };
	const char *v;
	size_t i;

	if (optind == argc)
		return lfe_cli_usage(cmd->usage, "missing add, del or list");
	v = argv[optind++];
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]) && strcmp(v, verbs[i]) != 0; i++)
		;
	if (i == sizeof(verbs) / sizeof(verbs[0]))
		return lfe_cli_usage(cmd->usage, "unknown \"%s\" (add, del or list)", v);
	*verb = (enum verb)i;
	if (*verb == V_LIST ? optind != argc : optind == argc || argc - optind > 2)
		return lfe_cli_usage(cmd->usage, "wrong number of arguments");
	*kind = *verb == V_ADD ? LFE_INDEX_EQ : LFE_INDEX_ALL;
	if (*verb == V_LIST || argc - optind != 2)
		return LFE_CTL_CONTINUE;
	for (i = 0; i < N_KINDS && strcmp(argv[optind + 1], kinds[i].name) != 0; i++)
		;
	if (i == N_KINDS)
		return lfe_cli_usage(cmd->usage, "index type \"%s\" not supported (eq, pres or sub)",
				     argv[optind + 1]);
	*kind = kinds[i].kind;
	return LFE_CTL_CONTINUE;
}

int lfe_ctl_index(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { LFE_CTL_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct lfe_store *st;
	char err[LFE_CLI_ERR_MAX];
	enum verb verb = V_LIST;
	unsigned kind = 0;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1)
		if ((rc = lfe_ctl_common_opt(c, cmd, opt)) != LFE_CTL_CONTINUE)
			return rc;
	if ((rc = index_args(cmd, argc, argv, &verb, &kind)) != LFE_CTL_CONTINUE)
		return rc;
	if (lfe_ctl_store_open(c, verb == V_LIST, &st, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	if (verb == V_LIST) {
		lfe_ctl_print_indexes(st, true);
		lfe_store_close(st);
		return LFE_EXIT_OK;
	}
	rc = verb == V_ADD ? lfe_store_index_add_kind(st, argv[optind], kind) :
			     lfe_store_index_del_kind(st, argv[optind], kind);
	lfe_store_close(st);
	if (rc < 0)
		return lfe_cli_fail("cannot %s the index of %s: %s", verb == V_ADD ? "add" : "drop",
				    argv[optind], index_err(rc));
	return LFE_EXIT_OK;
}
