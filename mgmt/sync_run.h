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

#endif
