/* mgmt/sync_access.c — does the sync account see the lock attributes?
 *
 * The bind path refuses locked and expired accounts from attributes the
 * consumer copies (backend/acctlock.h). A directory hides an attribute the
 * bound account may not read: the entry simply arrives without it, and a
 * locked account would bind through ldapfe. So at start, on up to two
 * entries the sync search selects, each lock attribute is tried with a
 * Compare (which needs the "compare" access that "read" includes):
 * insufficientAccessRights (50) means the account cannot see it; true,
 * false or noSuchAttribute mean it can; undefinedAttributeType means the
 * provider has no such attribute (nsAccountLock on OpenLDAP) and is
 * skipped. Internal to ldapfectl (sync_run.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include <ldap.h>

#include "mgmt/sync_run.h"

/* The attributes acctlock.h and ppolicy.h read on an account, with a value
 * of their syntax (a Compare with a malformed value fails on syntax before
 * any access check). */
static const struct {
	const char *type, *value;
} lock_attrs[] = {
	{ "pwdAccountLockedTime", "19700101000000Z" },
	{ "pwdEndTime", "19700101000000Z" },
	{ "shadowExpire", "0" },
	{ "nsAccountLock", "true" },
	{ "pwdChangedTime", "19700101000000Z" },
	{ "pwdReset", "TRUE" },
	{ "pwdPolicySubentry", "cn=x" },
};

int lfe_sync_check_access(LDAP *ld, const struct lfe_sync_opts *o)
{
	char *attrs[] = { LDAP_NO_ATTRS, NULL };
	struct timeval tmo = { 10, 0 };
	LDAPMessage *res = NULL;
	int rc, hidden = 0, samples = 0;

	rc = ldap_search_ext_s(ld, o->base, o->scope, o->filter, attrs, 0, NULL, NULL, &tmo, 3, &res);
	if (rc != LDAP_SUCCESS && rc != LDAP_SIZELIMIT_EXCEEDED) {
		ldap_msgfree(res);
		return 0;   /* the sync search itself will say why */
	}
	for (LDAPMessage *e = ldap_first_entry(ld, res); e && samples < 2; e = ldap_next_entry(ld, e)) {
		char *dn = ldap_get_dn(ld, e);

		if (dn == NULL)
			continue;
		/* the base (often the suffix) is no account; skip it if others follow */
		if (strcasecmp(dn, o->base) == 0 && ldap_next_entry(ld, e) != NULL) {
			ldap_memfree(dn);
			continue;
		}
		samples++;
		for (size_t i = 0; i < sizeof(lock_attrs) / sizeof(lock_attrs[0]); i++) {
			struct berval v = { strlen(lock_attrs[i].value), (char *)lock_attrs[i].value };

			rc = ldap_compare_ext_s(ld, dn, lock_attrs[i].type, &v, NULL, NULL);
			if (rc != LDAP_INSUFFICIENT_ACCESS)
				continue;
			char esc[256];
			fprintf(stderr, "ldapfectl sync: warning: the sync account cannot read %s (on %s): "
				"a locked or expired account would bind through ldapfe; grant it read access%s\n",
				lock_attrs[i].type, lfe_sync_escape(dn, strlen(dn), esc, sizeof(esc)),
				o->require_lock_attrs ? "" : ", or give --require-lock-attrs to refuse to start");
			hidden++;
		}
		ldap_memfree(dn);
	}
	ldap_msgfree(res);
	return hidden ? -EACCES : 0;
}
