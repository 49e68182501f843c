/* mgmt/ldapfectl.c — store administration and daemon management CLI for ldapfe.
 *
 * ldapfectl is the only writer of the store: it initialises it, imports and
 * exports LDIF, adds and deletes users, changes and verifies passwords.
 * The commands for the running daemon (status, stats, conns, reload, drain,
 * top) talk to its control socket: mgmt/daemonctl.c. Each command is one row
 * of `commands` (name, handler, usage, help); the options every command
 * takes are LFE_CTL_COMMON_LONGOPTS / lfe_ctl_common_opt. ctl.h lists the
 * files the commands live in.
 * The daemon keeps reading while we write; every change is one LMDB commit,
 * an import is one batch (all entries or none).
 *
 * Exit codes (cli.h): 0 success, 1 runtime failure (store, input data,
 * wrong password), 2 usage (bad option, argument or DN syntax).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/dn.h"
#include "mgmt/cli.h"
#include "mgmt/ctl.h"
#include "mgmt/daemonctl.h"
#include "mgmt/sync.h"

#define DEFAULT_STORE  "/var/lib/ldapfe/store"
#define DEFAULT_SCHEME "{SSHA512}"

/* ---------------------------------------------------------------- options */

/* "{SSHA512}", "ssha512" and "SSHA512" all name the same scheme. */
static int set_scheme(struct lfe_ctl *c, const char *s, const char *from)
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

void lfe_ctl_cmd_help(FILE *f, const struct lfe_ctl_cmd *cmd)
{
	fprintf(f, "usage: ldapfectl [--store PATH] [--scheme SCHEME] %s\n\n%s", cmd->usage, cmd->help);
}

int lfe_ctl_common_opt(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int opt)
{
	switch (opt) {
	case 'S':
		c->store = optarg;
		return LFE_CTL_CONTINUE;
	case 'D':
		c->daemon = optarg;
		return LFE_CTL_CONTINUE;
	case 'P':
		c->prefix = optarg;
		return LFE_CTL_CONTINUE;
	case 'V':
		printf("ldapfectl " LFE_VERSION "\n");
		return LFE_EXIT_OK;
	case 'C':
		return set_scheme(c, optarg, "--scheme") < 0 ? LFE_EXIT_USAGE : LFE_CTL_CONTINUE;
	case 'h':
		lfe_ctl_cmd_help(stdout, cmd);
		return LFE_EXIT_OK;
	case '?':
		fprintf(stderr, "see: ldapfectl %s --help\n", cmd->name);
		return LFE_EXIT_USAGE;
	default:
		return LFE_CTL_NOT_MINE;
	}
}

/* ------------------------------------------------------------------- DNs */

int lfe_ctl_no_args(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option lo[] = { LFE_CTL_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1)
		if ((rc = lfe_ctl_common_opt(c, cmd, opt)) != LFE_CTL_CONTINUE)
			return rc;
	if (optind != argc)
		return lfe_cli_usage(cmd->usage, "unexpected argument \"%s\"", argv[optind]);
	return LFE_CTL_CONTINUE;
}

/* ------------------------------------------------------------------- DNs */

int lfe_ctl_dn(const char *dn, char *ndn, size_t cap, size_t *nlen, char *err, size_t errlen)
{
	ssize_t n = lfe_dn_normalize((const uint8_t *)dn, strlen(dn), ndn, cap);

	if (n == -ENOSPC)
		return lfe_cli_fill(err, errlen, -EINVAL, "is not a valid DN (over %u bytes normalized)",
				    LFE_DN_MAX);
	if (n < 0)
		return lfe_cli_fill(err, errlen, -EINVAL, "is not a valid DN (RFC 4514 syntax, "
				    "e.g. uid=jo,ou=people,dc=example,dc=com)");
	*nlen = (size_t)n;
	return 0;
}

/* ------------------------------------------------------------ commands */

static int cmd_help(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv);

static int cmd_sync(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	(void)cmd;
	return lfe_sync_cmd(c->store, argc, argv);
}

/* Every command for the running daemon: daemonctl.c. */
static int cmd_daemon(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	const struct lfe_dctl_cmd dc = { cmd->name, cmd->usage, cmd->help };
	return lfe_dctl_run(&dc, c->daemon, c->prefix, argc, argv);
}

static const struct lfe_ctl_cmd commands[] = {
	{ "init", lfe_ctl_init, "init --suffix DN",
	  "Create an empty store for the naming context DN (the directory is created\n"
	  "if missing). Fails if the store is already initialised.\n" },
	{ "import", lfe_ctl_import, "import [--replace] [--no-op-attrs] [--progress] FILE.ldif|-",
	  "Load LDIF content records (slapcat or 389-ds db2ldif output) in one batch:\n"
	  "every entry lands or none does. Entries must be the suffix or lie below it.\n"
	  "userPassword values are kept in their {SCHEME} form. Refused: change records\n"
	  "(changetype:), \":<\" URL values. --replace overwrites entries that exist.\n"
	  "Like slapadd, an entry without them gets entryUUID (random), createTimestamp,\n"
	  "modifyTimestamp (the import's start) and entryCSN; values in the file are\n"
	  "kept. A replaced entry keeps its entryUUID and createTimestamp (and, when\n"
	  "unchanged, the rest). --no-op-attrs: store the entries exactly as given.\n" },
	{ "export", lfe_ctl_export, "export [-o FILE] [--progress]",
	  "Write every entry as LDIF (parents first) that slapadd and import accept;\n"
	  "values are base64 where RFC 2849 requires, userPassword always.\n"
	  "Import and export show entries done, rate and ETA on stderr when it is a\n"
	  "terminal (--progress: always).\n" },
	{ "user", lfe_ctl_user, "user add DN [--attr TYPE=VALUE ...] [--password-stdin]",
	  "Add an entry. --attr may repeat (one value each). The RDN's values are\n"
	  "added if missing. Without an objectClass the entry is an inetOrgPerson\n"
	  "whose cn and sn default to the RDN value. --password-stdin reads the\n"
	  "password (first line of stdin, or a prompt on a terminal) and stores it\n"
	  "hashed with the default scheme (--scheme, $LDAPFE_SCHEME, {SSHA512}).\n" },
	{ "passwd", lfe_ctl_passwd, "passwd DN",
	  "Replace the entry's userPassword with a hash (default scheme) of a new\n"
	  "password: the first line of stdin, or asked twice on a terminal.\n"
	  "An administrator's change, as slapd's ppolicy makes it: modifyTimestamp\n"
	  "is set; where a password policy applies (or pwdChangedTime is set), the\n"
	  "expiry clock restarts (pwdChangedTime), grace logins are cleared and\n"
	  "pwdReset follows the policy's pwdMustChange.\n" },
	{ "del", lfe_ctl_del, "del DN", "Delete one entry.\n" },
	{ "show", lfe_ctl_show, "show DN",
	  "Print the entry as LDIF; passwords appear only as their scheme,\n"
	  "e.g. \"userPassword: {SSHA} (hidden)\".\n" },
	{ "verify", lfe_ctl_verify, "verify [--allow-cleartext] DN",
	  "Check a password (first line of stdin, or a prompt) against the entry.\n"
	  "Prints \"ok {SCHEME}\" and exits 0, or prints \"invalid\" and exits 1.\n" },
	{ "info", lfe_ctl_info, "info",
	  "Print the suffix, entry count, store size, format version and indexes.\n" },
	{ "index", lfe_ctl_index, "index add ATTR [eq|pres|sub] | index del ATTR [eq|pres|sub] | index list",
	  "Declare (add: built from every entry in one transaction), drop (without a\n"
	  "kind: every kind) or list the store's indexes: eq (the default), pres\n"
	  "(attr=*), sub (substring pieces); each keys values by its type's matching rule.\n"
	  "A running daemon uses an added index once restarted; a dropped one it\n"
	  "stops using at once. Needs format 3 (ldapfectl upgrade).\n" },
	{ "upgrade", lfe_ctl_upgrade, "upgrade",
	  "Convert a format 1 or 2 store to format 3 (the default indexes: uid,\n"
	  "uidNumber, gidNumber, cn, mail, memberUid, member, uniqueMember, memberOf,\n"
	  "objectClass, entryUUID) in one transaction; older ldapfe builds refuse it.\n" },
	{ "reindex", lfe_ctl_reindex, "reindex",
	  "(Re)build the bind index (a store made by an older ldapfe has none: binds\n"
	  "then read the whole entries) in one transaction; a format 1 store becomes\n"
	  "format 2, which older ldapfe builds refuse (ldapfectl upgrade: format 3).\n" },
	{ "sync", cmd_sync, "sync -H URI -b BASE [-D DN -y PWFILE] [-Z] ... | sync --status",
	  "Keep the store in sync with an LDAP directory (RFC 4533); see: ldapfectl sync --help\n" },
	/* The running daemon (its control socket: --daemon PATH or --prefix NAME). */
	{ "status", cmd_daemon, "status [--json]",
	  "Version, uptime, ports (driver, link, MAC, address, queues, checksum\n"
	  "offload rx/tx), worker lcores, store (entries, last transaction and its\n"
	  "time), TLS (ports, certificate subject and expiry) and every config key's\n"
	  "value in force, by section (JSON: \"settings\").\n" },
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

static const struct lfe_ctl_cmd *find_cmd(const char *name)
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

static int cmd_help(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	const struct lfe_ctl_cmd *which;

	(void)c;
	if (argc > 2)
		return lfe_cli_usage(cmd->usage, "help takes at most one command");
	if (argc == 2 && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0) {
		if (!(which = find_cmd(argv[1]))) {
			lfe_cli_err("unknown command \"%s\"", argv[1]);
			main_help(stderr);
			return LFE_EXIT_USAGE;
		}
		lfe_ctl_cmd_help(stdout, which);
		return LFE_EXIT_OK;
	}
	main_help(stdout);
	return LFE_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { LFE_CTL_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct lfe_ctl c = { .store = DEFAULT_STORE };
	const struct lfe_ctl_cmd *cmd;
	const char *env;
	int opt, rc;

	if ((env = getenv("LDAPFE_STORE")) && *env)
		c.store = env;
	set_scheme(&c, DEFAULT_SCHEME, "the default");
	if ((env = getenv("LDAPFE_SCHEME")) && *env && set_scheme(&c, env, "LDAPFE_SCHEME") < 0)
		return LFE_EXIT_USAGE;
	while ((opt = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		/* The common options, but help and errors are ldapfectl's own. */
		if (opt == 'h') {
			main_help(stdout);
			return LFE_EXIT_OK;
		}
		rc = opt == '?' ? LFE_CTL_NOT_MINE : lfe_ctl_common_opt(&c, NULL, opt);
		if (rc == LFE_CTL_NOT_MINE) {
			main_help(stderr);
			return LFE_EXIT_USAGE;
		}
		if (rc != LFE_CTL_CONTINUE)
			return rc;
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

