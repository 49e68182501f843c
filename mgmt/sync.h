/* mgmt/sync.h — `ldapfectl sync`: an RFC 4533 (Content Synchronization,
 * "syncrepl") consumer that keeps the ldapfe store equal to a directory of
 * record while the daemon serves from it.
 *
 * Shape. One process, one thread, one provider connection (libldap). It
 * sends the Sync Request control itself and reads the replies one message
 * at a time (ldap_result LDAP_MSG_ONE), decoding syncStateValue,
 * syncInfoValue and syncDoneValue with liblber. (libldap's ldap_sync_poll()
 * reads with LDAP_MSG_RECEIVED and hands the head of the chain to every
 * callback, so under a fast initial refresh it would apply one entry twice
 * and drop the next.)
 *
 * Durability. Every store commit carries the changes, the consumer's
 * entryUUID → DN map and the cookie that covers them, in one LMDB write
 * transaction: a kill -9 at any point leaves the store at a cookie whose
 * changes are all in it, and the next run resumes from there.
 *   - initial refresh (no cookie, empty store): the store is cleared and
 *     filled in batches of --batch entries, marked "initial" until the
 *     refresh ends; a restart while marked starts it again;
 *   - a refresh with a cookie, a refresh of a store that already has content,
 *     and the full refresh asked by e-syncRefreshRequired (4096): one
 *     transaction, so readers switch from the old content to the new at once;
 *   - persist phase: one commit per change.
 *
 * Renames and scope. Entries are tracked by entryUUID (kept in each record
 * and mapped to the DN in the consumer's state). A renamed leaf moves in one
 * transaction; a renamed entry with entries below it here triggers a full
 * refresh (the provider names only the entry itself); a delete of an entry
 * with entries below it (a subtree renamed out of the scope) removes them
 * too; a search base that vanished empties the store. Entries the store
 * cannot hold are logged with their DN, counted, and removed if an older
 * version was stored, so it cannot keep binding.
 *
 * Exit status: 0 after SIGTERM/SIGINT (or --once), 1 on a runtime failure
 * with the reason on stderr (wrong credentials, no sync control on the
 * provider, unreachable provider at start, store error), 2 on usage errors.
 * After the first successful refresh a lost provider is retried with capped
 * exponential backoff.
 */
#ifndef LFE_MGMT_SYNC_H
#define LFE_MGMT_SYNC_H

/* Run `ldapfectl sync` (argv[0] == "sync") against the store at `store`.
 * Returns the exit status. */
int lfe_sync_cmd(const char *store, int argc, char **argv);

#endif
