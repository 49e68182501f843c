/* mgmt/sync_run.h — the sync consumer's engine (sync.c), driven by the
 * command line (sync_cli.c). Internal to ldapfectl; the behaviour is
 * described in sync.h. */
#ifndef LFE_MGMT_SYNC_RUN_H
#define LFE_MGMT_SYNC_RUN_H

#include <stdbool.h>
#include <stddef.h>

struct lfe_store;

/* Everything a run needs besides the store and the password. Strings and
 * attrs (NULL-terminated) are borrowed for the whole run. */
struct lfe_sync_opts {
	const char *uri, *binddn, *base, *filter, *cacert;
	const char *const *attrs;
	int scope;                      /* LDAP_SCOPE_* */
	bool starttls;
	bool insecure;                  /* ldap:// without StartTLS allowed (--insecure) */
	bool require_lock_attrs;        /* exit 1 when a lock attribute is hidden (--require-lock-attrs) */
	bool once;                      /* one refreshOnly search, then exit */
	unsigned interval;              /* refreshOnly every N s; 0: refreshAndPersist */
	unsigned batch;                 /* entries per commit in an initial refresh */
	unsigned max_backoff;           /* seconds, cap of the reconnect delay */
};

/* Run until SIGTERM/SIGINT (installed here), --once done, or a fatal error.
 * st is open for writing and stays the caller's. Returns the exit status
 * (0, or 1 with the reason on stderr). */
int lfe_sync_run(struct lfe_store *st, const struct lfe_sync_opts *o, const char *pw,
		 size_t pw_len);

/* The status record ("name=value" lines) the consumer keeps in the store's
 * sync state under this key; lfe_sync_status_field copies one value
 * (or "-", returning -ENOENT). */
#define LFE_SYNC_STATUS_KEY "status"
int lfe_sync_status_field(const char *status, const char *name, char *out, size_t cap);

/* At start (sync_access.c): whether the bound account may read each lock
 * attribute (backend/acctlock.h) on up to two entries the sync search
 * selects; a warning on stderr for each it may not. 0, or -EACCES when one
 * is hidden. */
struct ldap;   /* libldap's LDAP */
int lfe_sync_check_access(struct ldap *ld, const struct lfe_sync_opts *o);

/* Provider bytes made safe for a terminal, a log line and the status
 * record: printable ASCII is copied, every other byte (controls, DEL,
 * bytes >= 0x80) and the backslash become \xHH; past cap-1 bytes the text
 * ends in "...". Always NUL-terminates (cap >= 4). Returns out. */
char *lfe_sync_escape(const char *p, size_t n, char *out, size_t cap);

#endif
