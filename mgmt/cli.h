/* mgmt/cli.h — how every ldapfectl command ends: its exit status and the way
 * it reports an error.
 *
 * Exit status (the same for the store commands, the daemon commands and
 * sync): LFE_EXIT_OK 0 success, LFE_EXIT_FAIL 1 runtime failure (store,
 * input data, wrong password, no daemon answers), LFE_EXIT_USAGE 2 usage
 * (bad option, argument or DN syntax).
 *
 * Diagnostics, one convention in mgmt/: a helper below a command prints
 * nothing; it returns 0 or a negative errno and, where the caller needs the
 * reason, fills `char *err, size_t errlen` (lfe_cli_fill). The command
 * prints the reason once, with lfe_cli_err ("ldapfectl: REASON" on stderr)
 * or lfe_cli_usage, and picks the exit status. The sync engine logs as it
 * runs, under its own prefix (sync.c).
 *
 * ldapfectl is one thread; nothing here keeps state.
 */
#ifndef LFE_MGMT_CLI_H
#define LFE_MGMT_CLI_H

#include <stddef.h>

enum lfe_cli_exit { LFE_EXIT_OK = 0, LFE_EXIT_FAIL = 1, LFE_EXIT_USAGE = 2 };

/* Room for one diagnostic: a reason with up to two paths (PATH_MAX each)
 * in it, never cut. */
#define LFE_CLI_ERR_MAX 16384u

/* "ldapfectl: " fmt "\n" on stderr. */
void lfe_cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* As lfe_cli_err; returns LFE_EXIT_FAIL. */
int lfe_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* As lfe_cli_err, then "usage: ldapfectl USAGE" on its own line. Returns
 * LFE_EXIT_USAGE. */
int lfe_cli_usage(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fill err (errlen bytes, always NUL-terminated, cut to fit; nothing when
 * errlen is 0) with fmt and return rc: `return lfe_cli_fill(err, errlen,
 * -ENOENT, "no entry %s", dn);`. */
int lfe_cli_fill(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
