/* mgmt/ctl.h — what ldapfectl's command files share (internal: only the
 * ldapfectl executable's files include it).
 *
 *   ldapfectl.c  main: the global options, the command table, help
 *   cli.c        exit codes and error reporting (cli.h)
 *   ctl_store.c  init, info, upgrade, reindex; opening the store
 *   ctl_index.c  index add|del|list
 *   ctl_ldif.c   import, export; an LDIF entry's attributes grouped for
 *                the store, a record written as LDIF
 *   ctl_user.c   user add, passwd, del, show, verify
 *   daemonctl.c  status, stats, conns, reload, drain, top (the running daemon)
 *   sync_cli.c   sync (sync.c, sync_access.c: the RFC 4533 consumer)
 *
 * Each command is one row of the table in ldapfectl.c: name, handler,
 * usage, help. A handler gets argv with argv[0] = its name (getopt
 * restarted) and returns the exit status (cli.h). The options every
 * command takes are LFE_CTL_COMMON_LONGOPTS, handled by lfe_ctl_common_opt.
 *
 * One thread; a struct lfe_ctl lives for the whole run (main's).
 */
#ifndef LFE_MGMT_CTL_H
#define LFE_MGMT_CTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ldap/attr.h"  /* struct lfe_attr_key */
#include "ldap/msg.h"   /* struct lfe_bytes, struct lfe_ldap_attr */
#include "mgmt/ldif.h"

struct lfe_store;

#define SCHEME_MAX 64u  /* "{NAME}" of a password scheme, with its NUL */

/* The global options. */
struct lfe_ctl {
	const char *store;
	char scheme[SCHEME_MAX];
	const char *scheme_from;     /* where the scheme came from, for messages */
	const char *daemon, *prefix; /* control socket of the running daemon (daemonctl.h) */
};

/* One command: a row of the table. */
struct lfe_ctl_cmd {
	const char *name;
	int (*fn)(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv);
	const char *usage;
	const char *help;
};

#define LFE_CTL_COMMON_LONGOPTS \
	{ "store", required_argument, NULL, 'S' }, \
	{ "daemon", required_argument, NULL, 'D' }, \
	{ "prefix", required_argument, NULL, 'P' }, \
	{ "version", no_argument, NULL, 'V' }, \
	{ "scheme", required_argument, NULL, 'C' }, \
	{ "help", no_argument, NULL, 'h' }

/* What lfe_ctl_common_opt and the argument parsers return besides an exit
 * status: go on parsing / this option is not a common one. */
enum { LFE_CTL_CONTINUE = -1, LFE_CTL_NOT_MINE = -2 };

/* ldapfectl.c. An option every command takes: LFE_CTL_CONTINUE,
 * LFE_CTL_NOT_MINE, or the exit status when the command has to stop now
 * (--help, --version, a bad --scheme, an unknown option). */
int lfe_ctl_common_opt(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int opt);
/* "usage: ldapfectl ..." and the command's help on f. */
void lfe_ctl_cmd_help(FILE *f, const struct lfe_ctl_cmd *cmd);
/* Parse a command that takes the common options and no argument:
 * LFE_CTL_CONTINUE or the exit status. */
int lfe_ctl_no_args(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv);
/* Normalize a DN given on the command line into ndn (cap bytes): 0, or
 * -EINVAL with the reason in err, to print after the DN (which may be
 * any length): "\"DN\" REASON". */
int lfe_ctl_dn(const char *dn, char *ndn, size_t cap, size_t *nlen, char *err, size_t errlen);

/* ctl_store.c. Open the store of --store, initialised (a suffix): 0 with
 * *st, or a negative errno with the reason (and the command that helps) in
 * err. */
int lfe_ctl_store_open(const struct lfe_ctl *c, bool rdonly, struct lfe_store **st, char *err,
		       size_t errlen);
/* A store error (negative errno) in words. */
const char *lfe_ctl_store_err(int rc);

/* ctl_index.c. "indexes: a b(eq,sub)" (detail false: info's line) or one
 * line per index with kinds, matching rule, keys and bytes (index list). */
void lfe_ctl_print_indexes(struct lfe_store *st, bool detail);

/* ctl_ldif.c. LDIF gives one line per value; the store wants one attribute
 * per type with all its values: lfe_ctl_attrs_group groups av, then the
 * n_extra of extra (may be NULL when 0), by type (case-insensitive, options
 * included, file order kept). 0, -E2BIG (over LFE_RECORD_MAX_ATTRS types)
 * or -ENOMEM. The list points into av and extra. */
struct lfe_ctl_attrs {
	struct lfe_ldap_attr *attrs;
	uint32_t n_attrs;
	struct lfe_bytes *vals;
};
int lfe_ctl_attrs_group(const struct lfe_ldif_av *av, uint32_t n, const struct lfe_ldif_av *extra,
			uint32_t n_extra, struct lfe_ctl_attrs *out);
void lfe_ctl_attrs_free(struct lfe_ctl_attrs *l);
/* ctl_ldif.c. The operational attributes import and user add give an
 * entry that lacks them, as slapadd does (see docs/OPERATIONS.md for where
 * ldapfe differs): entryUUID (RFC 4530; a random version 4 UUID), and
 * createTimestamp, modifyTimestamp (RFC 4512 GeneralizedTime) and entryCSN
 * (OpenLDAP's "TIME.uuuuuuZ#COUNT#SID#MOD", unique per entry) all of the
 * command's start time. A type the entry has (any option, name or OID) is
 * left as it is. UUIDs are drawn from getrandom a pool at a time: one
 * system call per LFE_CTL_UUID_POOL entries of an import.
 * lfe_ctl_opattrs_init reads the clock: 0 or -EIO. lfe_ctl_opattrs_add
 * writes into extra (room for LFE_CTL_OPATTRS) those av lacks and returns
 * how many, or -EIO (no random bytes). The values live in o until its next
 * lfe_ctl_opattrs_add. */
#define LFE_CTL_OPATTRS   4u
#define LFE_CTL_UUID_POOL 256u
struct lfe_ctl_opattrs {
	char now[16];                   /* "YYYYmmddHHMMSSZ" */
	char csn_time[23];              /* "YYYYmmddHHMMSS.uuuuuuZ" */
	uint64_t n_csn;                 /* entryCSNs made so far */
	uint32_t pool_used;             /* UUIDs of pool taken; LFE_CTL_UUID_POOL: empty */
	uint8_t pool[LFE_CTL_UUID_POOL][16];
	char uuid[37], csn[41];         /* the latest entry's values */
	struct lfe_attr_key key[LFE_CTL_OPATTRS];
};
int lfe_ctl_opattrs_init(struct lfe_ctl_opattrs *o);
int lfe_ctl_opattrs_add(struct lfe_ctl_opattrs *o, const struct lfe_ldif_av *av, uint32_t n,
			struct lfe_ldif_av *extra);
/* One store record as LDIF on f. hide: passwords as "{SCHEME} (hidden)".
 * 0, -EBADMSG (corrupt record) or -EIO. */
int lfe_ctl_write_entry(FILE *f, const uint8_t *rec, size_t len, bool hide);

/* The handlers, one per command (their rows are in ldapfectl.c). */
typedef int lfe_ctl_fn(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv);
lfe_ctl_fn lfe_ctl_init, lfe_ctl_info, lfe_ctl_upgrade, lfe_ctl_reindex;   /* ctl_store.c */
lfe_ctl_fn lfe_ctl_index;                                                  /* ctl_index.c */
lfe_ctl_fn lfe_ctl_import, lfe_ctl_export;                                 /* ctl_ldif.c */
lfe_ctl_fn lfe_ctl_user, lfe_ctl_passwd, lfe_ctl_del, lfe_ctl_show, lfe_ctl_verify; /* ctl_user.c */

#endif
