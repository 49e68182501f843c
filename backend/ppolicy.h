/* backend/ppolicy.h — password policy at bind, as slapd's ppolicy overlay
 * answers it (draft-behera-ldap-password-policy-10, OpenLDAP 2.5/2.6).
 *
 * After a successful password check (never before: a wrong password stays
 * invalidCredentials with the same work), the bind asks:
 *
 *   pwdReset TRUE and the policy's pwdMustChange TRUE
 *       → MUST_CHANGE: the bind succeeds, the control says changeAfterReset
 *         (2), and slapd restricts the connection to a password change.
 *   pwdMaxAge > 0 and now - pwdChangedTime > pwdMaxAge (strictly: at
 *   exactly pwdMaxAge seconds the password still works, as in slapd)
 *       → grace logins left = pwdGraceAuthNLimit - uses (0 once past
 *         pwdMaxAge + pwdGraceExpiry when that is set); one is spent now:
 *         none left → EXPIRED (49, passwordExpired (0)), else GRACE with
 *         graceAuthNsRemaining = what is left after this one.
 *   pwdExpireWarning > 0 and pwdMaxAge - age < pwdExpireWarning
 *       → WARN with timeBeforeExpiration = pwdMaxAge - age.
 *   otherwise OK. No pwdChangedTime: the password never expires.
 *
 * A pwdChangedTime that does not parse as a GeneralizedTime, a pwdReset
 * that is not TRUE/FALSE, or a policy entry that does not parse fail
 * closed: EXPIRED with no grace.
 *
 * Grace uses: slapd adds a pwdGraceUseTime value per grace login. ldapfe
 * does not write the store; the caller passes the uses the record has
 * (synced from the provider) plus those it counted itself (see
 * lfe_pp_grace_*; the count is per ldapfe instance and never written
 * back to the directory).
 *
 * Pure and reentrant: no globals, nothing allocated, records only read.
 */
#ifndef LFE_BACKEND_PPOLICY_H
#define LFE_BACKEND_PPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ldap/msg.h"

/* Request and response control (draft-behera §6). */
#define LFE_PP_CONTROL_OID "1.3.6.1.4.1.42.2.27.8.5.1"

/* A policy entry's values (objectClass pwdPolicy). Absent: 0/false. */
struct lfe_pp_policy {
	int64_t max_age;          /* pwdMaxAge, seconds; 0: no expiry */
	int64_t expire_warning;   /* pwdExpireWarning, seconds; 0: none */
	int64_t grace_limit;      /* pwdGraceAuthNLimit */
	int64_t grace_expiry;     /* pwdGraceExpiry, seconds; 0: no limit */
	bool must_change;         /* pwdMustChange */
};

/* What an account's record says (the bind record keeps these types). */
struct lfe_pp_acct {
	bool any;                 /* one of the types below is present */
	bool changed_set;         /* pwdChangedTime present */
	bool bad;                 /* a value that does not parse: fail closed */
	bool reset;               /* pwdReset TRUE */
	int64_t changed;          /* pwdChangedTime, seconds since the epoch */
	uint32_t grace_used;      /* pwdGraceUseTime values */
	struct lfe_bytes subentry;/* pwdPolicySubentry (as stored), len 0: none */
};

enum lfe_pp_state {
	LFE_PP_OK = 0,
	LFE_PP_WARN,              /* bind ok, seconds = timeBeforeExpiration */
	LFE_PP_GRACE,             /* bind ok, grace = graceAuthNsRemaining */
	LFE_PP_MUST_CHANGE,       /* bind ok, changeAfterReset */
	LFE_PP_EXPIRED,           /* 49, passwordExpired */
};

struct lfe_pp_verdict {
	enum lfe_pp_state state;
	int32_t seconds;          /* WARN */
	int32_t grace;            /* GRACE: left after this login */
	int64_t changed;          /* GRACE: the account's pwdChangedTime */
};

/* PasswordPolicyResponseValue error codes used here. */
enum lfe_pp_error {
	LFE_PP_ERR_NONE = -1,
	LFE_PP_ERR_EXPIRED = 0,       /* passwordExpired */
	LFE_PP_ERR_LOCKED = 1,        /* accountLocked */
	LFE_PP_ERR_CHANGE_AFTER_RESET = 2,
};

/* true when this attribute type (ASCII case-insensitive) is one the bind
 * record keeps for the policy: pwdChangedTime, pwdReset,
 * pwdPolicySubentry, pwdGraceUseTime. */
bool lfe_pp_attr_type(const uint8_t *type, size_t len);

/* Read an account record's policy attributes into *a. A record without
 * any costs one byte compare per attribute. 0, or -EINVAL for a corrupt
 * record (then a->bad is set too). */
int lfe_pp_acct_read(const uint8_t *rec, size_t len, struct lfe_pp_acct *a);

/* Read a policy entry's record. 0, or -EINVAL when a value present does
 * not parse (a negative or non-numeric integer, a boolean other than
 * TRUE/FALSE) or the record is corrupt. */
int lfe_pp_policy_read(const uint8_t *rec, size_t len, struct lfe_pp_policy *pol);

/* The verdict at `now` (seconds since the epoch) for account a under pol
 * (NULL: no policy applies: OK), counting `extra_grace` grace logins
 * besides the record's pwdGraceUseTime values. */
struct lfe_pp_verdict lfe_pp_check(const struct lfe_pp_acct *a, const struct lfe_pp_policy *pol,
				   uint32_t extra_grace, int64_t now);

/* The error a verdict carries in the response control. */
enum lfe_pp_error lfe_pp_verdict_error(const struct lfe_pp_verdict *v);

/* Encode the response Control (SEQUENCE { controlType, controlValue }),
 * laid out as slapd's create_passcontrol does (DER):
 *   controlValue = SEQUENCE {
 *     [0] warning CHOICE { [0] timeBeforeExpiration INTEGER,   when warn >= 0
 *                          [1] graceAuthNsRemaining INTEGER }  else grace >= 0
 *     [1] error ENUMERATED                                     when err >= 0 }
 * warn/grace -1: absent. Returns the length or -ENOSPC. */
ssize_t lfe_pp_enc_control(uint8_t *out, size_t cap, int32_t warn, int32_t grace,
			   enum lfe_pp_error err);

/* The control for a verdict (warn, grace and error from it). */
ssize_t lfe_pp_enc_verdict(uint8_t *out, size_t cap, const struct lfe_pp_verdict *v);

/* Grace logins counted by this ldapfe instance (ldapfe never writes the
 * store, so the provider's pwdGraceUseTime does not see them, and another
 * ldapfe instance or the provider counts its own). One table shared by
 * every worker: slots of one 64-bit word (a 48-bit keyed hash of the DN
 * and the pwdChangedTime the logins were spent under, so a new password
 * starts from zero; 16 bits of count) updated by compare-and-swap: no
 * lock, no allocation after init. A full neighbourhood (8 slots) refuses
 * the grace login (fail closed; counted in `full`). */
struct lfe_pp_grace {
	uint64_t key[2];
	uint64_t mask;
	_Atomic uint64_t *slot;
	_Atomic uint64_t full;
};

/* The daemon's table: 65,536 accounts in grace at once (512 KiB). */
#define LFE_PP_GRACE_SLOTS 65536u

/* n_slots: rounded up to a power of two (at least 64). 0 or -ENOMEM. */
int lfe_pp_grace_init(struct lfe_pp_grace *g, size_t n_slots);
void lfe_pp_grace_fini(struct lfe_pp_grace *g);

/* A GRACE verdict v (computed from the record's uses) of account ndn:
 * spend one of the logins this instance counts. Returns 0 with v->grace
 * lowered by the logins counted before, or -EACCES (none left, or the
 * table is full: v becomes EXPIRED). */
int lfe_pp_grace_spend(struct lfe_pp_grace *g, const char *ndn, size_t len,
		       struct lfe_pp_verdict *v);

#endif
