/* backend/ppolicy.c — password policy at bind (interface in ppolicy.h). */
#include "backend/ppolicy.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/random.h>

#include "backend/acctlock.h"
#include "backend/record.h"
#include "common/siphash.h"

static bool type_is(struct lfe_bytes t, const char *name, size_t n)
{
	return t.len == n && strncasecmp((const char *)t.p, name, n) == 0;
}

bool lfe_pp_attr_type(const uint8_t *type, size_t len)
{
	struct lfe_bytes t = { type, len };

	return type_is(t, "pwdChangedTime", 14) || type_is(t, "pwdReset", 8) ||
	       type_is(t, "pwdPolicySubentry", 17) || type_is(t, "pwdGraceUseTime", 15);
}

/* LDAP Boolean: "TRUE" or "FALSE" (RFC 4517 §3.3.3); 1, 0, or -1. */
static int boolean(struct lfe_bytes v)
{
	if (v.len == 4 && strncasecmp((const char *)v.p, "TRUE", 4) == 0)
		return 1;
	if (v.len == 5 && strncasecmp((const char *)v.p, "FALSE", 5) == 0)
		return 0;
	return -1;
}

/* A non-negative INTEGER of at most 10 digits (ppolicy's are C ints). */
static bool count(struct lfe_bytes v, int64_t *out)
{
	int64_t n = 0;

	if (v.len == 0 || v.len > 10)
		return false;
	for (size_t i = 0; i < v.len; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return false;
		n = n * 10 + (v.p[i] - '0');
	}
	if (n > INT32_MAX)
		return false;
	*out = n;
	return true;
}

static bool first_val(struct lfe_bytes list, struct lfe_bytes *v)
{
	return lfe_record_next_val(&list, v) == 1;
}

int lfe_pp_acct_read(const uint8_t *rec, size_t len, struct lfe_pp_acct *a)
{
	struct lfe_bytes dn, type, list, v;
	uint32_t n_attrs, n_vals, seen = 0;
	size_t off;
	int rc;

	memset(a, 0, sizeof(*a));
	if (lfe_record_header(rec, len, &dn, &n_attrs, &off) < 0)
		goto corrupt;
	while ((rc = lfe_record_next_attr(rec, len, &off, &type, &n_vals, &list)) == 1) {
		seen++;
		/* Cheap filter first: every type below is "pwd..." and at
		 * least 8 bytes long. */
		if (type.len < 8 || (type.p[0] | 0x20) != 'p')
			continue;
		if (type_is(type, "pwdChangedTime", 14)) {
			a->any = true;
			a->changed_set = true;
			if (n_vals == 0 || !first_val(list, &v) ||
			    lfe_gentime_parse(v.p, v.len, &a->changed) < 0)
				a->bad = true;
		} else if (type_is(type, "pwdReset", 8)) {
			int b = -1;

			a->any = true;
			if (n_vals > 0 && first_val(list, &v))
				b = boolean(v);
			if (b < 0)
				a->bad = true;
			a->reset = b == 1;
		} else if (type_is(type, "pwdPolicySubentry", 17)) {
			a->any = true;
			if (n_vals == 0 || !first_val(list, &v) || v.len == 0)
				a->bad = true;
			else
				a->subentry = v;
		} else if (type_is(type, "pwdGraceUseTime", 15)) {
			a->any = true;
			a->grace_used = n_vals;
		}
	}
	if (rc < 0 || seen != n_attrs)
		goto corrupt;
	return 0;
corrupt:
	a->bad = true;
	return -EINVAL;
}

int lfe_pp_policy_read(const uint8_t *rec, size_t len, struct lfe_pp_policy *pol)
{
	static const struct {
		const char *name;
		size_t len;
		size_t field;          /* offset of the int64_t in the policy */
	} ints[] = {
		{ "pwdMaxAge", 9, offsetof(struct lfe_pp_policy, max_age) },
		{ "pwdExpireWarning", 16, offsetof(struct lfe_pp_policy, expire_warning) },
		{ "pwdGraceAuthNLimit", 18, offsetof(struct lfe_pp_policy, grace_limit) },
		{ "pwdGraceExpiry", 14, offsetof(struct lfe_pp_policy, grace_expiry) },
	};
	struct lfe_bytes dn, type, list, v;
	uint32_t n_attrs, n_vals, seen = 0;
	size_t off;
	int rc;

	memset(pol, 0, sizeof(*pol));
	if (lfe_record_header(rec, len, &dn, &n_attrs, &off) < 0)
		return -EINVAL;
	while ((rc = lfe_record_next_attr(rec, len, &off, &type, &n_vals, &list)) == 1) {
		seen++;
		if (type.len < 9 || (type.p[0] | 0x20) != 'p')
			continue;
		if (type_is(type, "pwdMustChange", 13)) {
			int b = n_vals > 0 && first_val(list, &v) ? boolean(v) : -1;

			if (b < 0)
				return -EINVAL;
			pol->must_change = b == 1;
			continue;
		}
		for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
			if (!type_is(type, ints[i].name, ints[i].len))
				continue;
			if (n_vals == 0 || !first_val(list, &v) ||
			    !count(v, (int64_t *)((uint8_t *)pol + ints[i].field)))
				return -EINVAL;
			break;
		}
	}
	return rc < 0 || seen != n_attrs ? -EINVAL : 0;
}

static int32_t clamp32(int64_t v)
{
	return v > INT32_MAX ? INT32_MAX : v < 0 ? 0 : (int32_t)v;
}

struct lfe_pp_verdict lfe_pp_check(const struct lfe_pp_acct *a, const struct lfe_pp_policy *pol,
				   uint32_t extra_grace, int64_t now)
{
	struct lfe_pp_verdict v = { LFE_PP_OK, -1, -1, 0 };
	int64_t age, left;

	if (a->bad) {
		v.state = LFE_PP_EXPIRED;
		return v;
	}
	if (!pol)
		return v;
	if (pol->must_change && a->reset) {
		v.state = LFE_PP_MUST_CHANGE;
		return v;
	}
	if (pol->max_age <= 0 || !a->changed_set)
		return v;
	age = now - a->changed;
	if (age > pol->max_age) {
		if (pol->grace_expiry > 0 && age > pol->max_age + pol->grace_expiry)
			left = 0;
		else
			left = pol->grace_limit - (int64_t)a->grace_used - (int64_t)extra_grace;
		left--;                 /* this login spends one */
		if (left < 0) {
			v.state = LFE_PP_EXPIRED;
			return v;
		}
		v.state = LFE_PP_GRACE;
		v.grace = clamp32(left);
		v.changed = a->changed;
		return v;
	}
	if (pol->expire_warning > 0 && pol->max_age - age < pol->expire_warning) {
		v.state = LFE_PP_WARN;
		v.seconds = clamp32(pol->max_age - age);
	}
	return v;
}

enum lfe_pp_error lfe_pp_verdict_error(const struct lfe_pp_verdict *v)
{
	switch (v->state) {
	case LFE_PP_EXPIRED:
		return LFE_PP_ERR_EXPIRED;
	case LFE_PP_MUST_CHANGE:
		return LFE_PP_ERR_CHANGE_AFTER_RESET;
	default:
		return LFE_PP_ERR_NONE;
	}
}

/* DER INTEGER contents of a non-negative v: minimal, with a leading 0
 * when the top bit would be set. Returns the length (1..5). */
static size_t int_bytes(int32_t v, uint8_t out[5])
{
	uint8_t b[5];
	size_t n = 0;
	uint32_t u = (uint32_t)v;

	do {
		b[n++] = (uint8_t)u;
		u >>= 8;
	} while (u);
	if (b[n - 1] & 0x80)
		b[n++] = 0;
	for (size_t i = 0; i < n; i++)
		out[i] = b[n - 1 - i];
	return n;
}

ssize_t lfe_pp_enc_control(uint8_t *out, size_t cap, int32_t warn, int32_t grace,
			   enum lfe_pp_error err)
{
	static const char oid[] = LFE_PP_CONTROL_OID;
	uint8_t val[16], ib[5];
	size_t vl = 0, n, oidl = sizeof(oid) - 1;

	/* PasswordPolicyResponseValue: at most 2 + (2 + 2 + 5) + 3 bytes,
	 * every length short form. */
	val[vl++] = 0x30;
	val[vl++] = 0;
	if (warn >= 0 || grace >= 0) {
		n = int_bytes(warn >= 0 ? warn : grace, ib);
		val[vl++] = 0xa0;                          /* [0] warning */
		val[vl++] = (uint8_t)(2 + n);
		val[vl++] = warn >= 0 ? 0x80 : 0x81;       /* [0] / [1] */
		val[vl++] = (uint8_t)n;
		memcpy(val + vl, ib, n);
		vl += n;
	}
	if (err >= 0) {
		val[vl++] = 0x81;                          /* [1] error */
		val[vl++] = 1;
		val[vl++] = (uint8_t)err;
	}
	val[1] = (uint8_t)(vl - 2);
	/* Control: SEQUENCE { OCTET STRING oid, OCTET STRING value } */
	n = 2 + oidl + 2 + vl;
	if (cap < 2 + n)
		return -ENOSPC;
	out[0] = 0x30;
	out[1] = (uint8_t)n;
	out[2] = 0x04;
	out[3] = (uint8_t)oidl;
	memcpy(out + 4, oid, oidl);
	out[4 + oidl] = 0x04;
	out[5 + oidl] = (uint8_t)vl;
	memcpy(out + 6 + oidl, val, vl);
	return (ssize_t)(2 + n);
}

ssize_t lfe_pp_enc_verdict(uint8_t *out, size_t cap, const struct lfe_pp_verdict *v)
{
	return lfe_pp_enc_control(out, cap, v->state == LFE_PP_WARN ? v->seconds : -1,
				  v->state == LFE_PP_GRACE ? v->grace : -1, lfe_pp_verdict_error(v));
}

/* ---- grace logins counted here ---- */

#define GRACE_PROBE 8u
#define GRACE_COUNT_MASK 0xffffull

int lfe_pp_grace_init(struct lfe_pp_grace *g, size_t n_slots)
{
	size_t n = 64;

	memset(g, 0, sizeof(*g));
	while (n < n_slots && n < ((size_t)1 << 30))
		n <<= 1;
	if (getrandom(g->key, sizeof(g->key), 0) != (ssize_t)sizeof(g->key))
		return -EIO;
	g->slot = calloc(n, sizeof(g->slot[0]));
	if (!g->slot)
		return -ENOMEM;
	g->mask = n - 1;
	return 0;
}

void lfe_pp_grace_fini(struct lfe_pp_grace *g)
{
	free((void *)g->slot);
	g->slot = NULL;
}

int lfe_pp_grace_spend(struct lfe_pp_grace *g, const char *ndn, size_t len,
		       struct lfe_pp_verdict *v)
{
	uint64_t h = lfe_siphash24(g->key, ndn, len) ^
		     lfe_siphash24(g->key, &v->changed, sizeof(v->changed)) * 0x9e3779b97f4a7c15ull;
	uint64_t tag = (h | (1ull << 63)) & ~GRACE_COUNT_MASK;   /* never 0 */

	for (unsigned i = 0; i < GRACE_PROBE; i++) {
		_Atomic uint64_t *s = &g->slot[(h + i) & g->mask];
		uint64_t cur = atomic_load_explicit(s, memory_order_relaxed);

		for (;;) {
			if (cur != 0 && (cur & ~GRACE_COUNT_MASK) != tag)
				break;                          /* another account's */
			uint64_t used = cur ? cur & GRACE_COUNT_MASK : 0;

			if ((int64_t)v->grace - (int64_t)used < 0 || used == GRACE_COUNT_MASK) {
				v->state = LFE_PP_EXPIRED;
				v->grace = -1;
				return -EACCES;
			}
			if (atomic_compare_exchange_weak_explicit(s, &cur, tag | (used + 1),
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				v->grace -= (int32_t)used;
				return 0;
			}
		}
	}
	atomic_fetch_add_explicit(&g->full, 1, memory_order_relaxed);
	v->state = LFE_PP_EXPIRED;
	v->grace = -1;
	return -EACCES;
}
