/* backend/acctlock.c — locked and expired accounts (interface in acctlock.h). */
#include "backend/acctlock.h"

#include <errno.h>
#include <strings.h>
#include <string.h>

#include "backend/record.h"

/* "000001010000Z": ppolicy's permanent (administrative) lock. */
#define PPOLICY_LOCK_FOREVER "000001010000Z"

static bool digits(const uint8_t *s, size_t n, int *out)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

int lfe_gentime_parse(const uint8_t *s, size_t len, int64_t *out)
{
	int y, mo, d, h, mi = 0, sec = 0, oh = 0, om = 0;
	size_t i = 10;
	int64_t t;

	if (len < 11 || !digits(s, 4, &y) || !digits(s + 4, 2, &mo) ||
	    !digits(s + 6, 2, &d) || !digits(s + 8, 2, &h))
		return -EINVAL;
	if (len - i >= 2 && s[i] >= '0' && s[i] <= '9') {
		if (!digits(s + i, 2, &mi))
			return -EINVAL;
		i += 2;
		if (len - i >= 2 && s[i] >= '0' && s[i] <= '9') {
			if (!digits(s + i, 2, &sec))
				return -EINVAL;
			i += 2;
		}
	}
	if (i < len && (s[i] == '.' || s[i] == ',')) {
		size_t f = ++i;

		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == f)
			return -EINVAL;
	}
	if (i == len)
		return -EINVAL;             /* local time: refused by LDAP syntax */
	if (s[i] == 'Z') {
		i++;
	} else if (s[i] == '+' || s[i] == '-') {
		int sign = s[i] == '-' ? -1 : 1;

		if (len - i < 3 || !digits(s + i + 1, 2, &oh))
			return -EINVAL;
		i += 3;
		if (len - i >= 2) {
			if (!digits(s + i, 2, &om))
				return -EINVAL;
			i += 2;
		}
		oh *= sign;
		om *= sign;
	} else {
		return -EINVAL;
	}
	if (i != len || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -EINVAL;
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	*out = t - (int64_t)oh * 3600 - (int64_t)om * 60;
	return 0;
}

static bool first_val(struct lfe_bytes list, struct lfe_bytes *v)
{
	return lfe_record_next_val(&list, v) == 1;
}

static bool type_is(struct lfe_bytes t, const char *name, size_t n)
{
	return t.len == n && strncasecmp((const char *)t.p, name, n) == 0;
}

static bool ppolicy_locked(struct lfe_bytes v, int64_t now, int64_t lockout_s)
{
	int64_t t;

	if (v.len == sizeof(PPOLICY_LOCK_FOREVER) - 1 &&
	    memcmp(v.p, PPOLICY_LOCK_FOREVER, v.len) == 0)
		return true;
	if (lockout_s <= 0 || lfe_gentime_parse(v.p, v.len, &t) < 0)
		return true;
	return now < t + lockout_s;
}

static bool shadow_expired(struct lfe_bytes v, int64_t now)
{
	int64_t days = 0;
	size_t i = 0;
	bool neg = false;

	if (v.len > 0 && v.p[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == v.len || v.len - i > 12)
		return true;
	for (; i < v.len; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return true;
		days = days * 10 + (v.p[i] - '0');
	}
	if (neg)
		return days != 1;           /* -1: never; other negatives: garbage */
	return now / 86400 >= days;
}

bool lfe_acct_attr_type(const uint8_t *type, size_t len)
{
	struct lfe_bytes t = { type, len };

	return type_is(t, "pwdAccountLockedTime", 20) || type_is(t, "nsAccountLock", 13) ||
	       type_is(t, "pwdEndTime", 10) || type_is(t, "shadowExpire", 12);
}

bool lfe_acct_locked(const uint8_t *rec, size_t len, int64_t now, int64_t lockout_s)
{
	struct lfe_bytes dn, type, list, v;
	uint32_t n_attrs, n_vals, seen = 0;
	size_t off;
	int rc;

	if (lfe_record_header(rec, len, &dn, &n_attrs, &off) < 0)
		return true;
	while ((rc = lfe_record_next_attr(rec, len, &off, &type, &n_vals, &list)) == 1) {
		seen++;
		/* Cheap filter first: every type below starts with p, n or s. */
		int c = type.len ? (type.p[0] | 0x20) : 0;

		if ((c != 'p' && c != 'n' && c != 's') || n_vals == 0)
			continue;
		if (type_is(type, "pwdAccountLockedTime", 20)) {
			if (!first_val(list, &v) || ppolicy_locked(v, now, lockout_s))
				return true;
		} else if (type_is(type, "nsAccountLock", 13)) {
			/* "true" locks, "false" does not; anything else is
			 * not a boolean: locked (fail closed). */
			if (!first_val(list, &v) ||
			    !(v.len == 5 && strncasecmp((const char *)v.p, "false", 5) == 0))
				return true;
		} else if (type_is(type, "pwdEndTime", 10)) {
			int64_t t;

			if (!first_val(list, &v) || lfe_gentime_parse(v.p, v.len, &t) < 0 || now >= t)
				return true;
		} else if (type_is(type, "shadowExpire", 12)) {
			if (!first_val(list, &v) || shadow_expired(v, now))
				return true;
		}
	}
	return rc < 0 || seen != n_attrs;
}
