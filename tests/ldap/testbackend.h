/* tests/ldap/testbackend.h — the real directory behind struct
 * lfe_backend_ops, for session unit tests, the loopback socket server and
 * the session fuzzer: a throwaway LMDB store (backend/store.h) under
 * suffix dc=example,dc=com in a temporary directory, searched with
 * lfe_store_search and bound with lfe_store_verify_bind, as the daemon's
 * glue does (slow jobs run inline here: no verifier threads).
 *
 * Passwords given to lfe_tb_add are stored as {SSHA} userPassword values;
 * searches hand them to the session as stored, so tests can check that the
 * session withholds them.
 *
 * Not thread-safe; one instance per test or per server. lfe_tb_free
 * removes the store.
 */
#ifndef LFE_TESTS_TESTBACKEND_H
#define LFE_TESTS_TESTBACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldap/session.h"

struct lfe_tb;

/* How ops->bind answers. */
enum lfe_tb_mode {
	LFE_TB_VERIFY = 0,    /* check the password now: OK or INVALID */
	LFE_TB_PENDING,       /* compute the verdict, keep it, answer PENDING */
	LFE_TB_BUSY,          /* answer BUSY */
};

#define LFE_TB_SUFFIX "dc=example,dc=com"

/* A new empty store with suffix LFE_TB_SUFFIX; NULL on failure. */
struct lfe_tb *lfe_tb_new(void);
void lfe_tb_free(struct lfe_tb *tb);            /* NULL is a no-op */

extern const struct lfe_backend_ops lfe_tb_ops; /* be_ctx = struct lfe_tb * */

/* Add an entry. attrs is "type=value" strings (n of them); a password, if
 * not NULL, becomes a {SSHA} userPassword value. 0, -EINVAL (bad DN or
 * attr, DN outside the suffix), -EEXIST, -ENOMEM, or another store error. */
int lfe_tb_add(struct lfe_tb *tb, const char *dn, const char *password,
	       const char *const *attrs, size_t n);
/* The same, replacing an entry that exists (a write between two reads). */
int lfe_tb_replace(struct lfe_tb *tb, const char *dn, const char *password,
		   const char *const *attrs, size_t n);

/* Load a users file: one "DN<TAB>password" per line; '#' lines and blank
 * lines are skipped. Each user gets objectClass top/person/inetOrgPerson,
 * its RDN attribute and cn/sn. Returns the number of users or -errno. */
int lfe_tb_load_users(struct lfe_tb *tb, const char *path);

void lfe_tb_set_mode(struct lfe_tb *tb, enum lfe_tb_mode mode);

/* In LFE_TB_PENDING mode: the last token handed to bind and the verdict
 * computed for it. Returns false when no bind is outstanding; take clears. */
bool lfe_tb_take_pending(struct lfe_tb *tb, uint64_t *token, enum lfe_be_verdict *v);

/* Counters for assertions. */
struct lfe_tb_counts {
	uint64_t binds, searches;
	char last_bind_ndn[1025];
	char last_search_base[1025];
};
const struct lfe_tb_counts *lfe_tb_counts(const struct lfe_tb *tb);

#endif
