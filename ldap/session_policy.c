/* ldap/session_policy.c — the session policy's words as the configuration
 * spells them (session.h: lfe_search_access_parse, lfe_require_tls_parse,
 * lfe_search_scope_parse, lfe_search_attrs_parse). Pure functions of their
 * arguments: any thread.
 */
#include "ldap/session.h"

#include <errno.h>
#include <string.h>

static bool word_is(const char *s, const char *lit)
{
	return s && strcmp(s, lit) == 0;
}

/* One of three words, each naming an enum value: 0, or -EINVAL with *why. */
struct word_val {
	const char *name;
	int v;
};

static int pick_word(const char *s, const struct word_val t[3], int *out, const char **why,
		     const char *expected)
{
	for (size_t i = 0; i < 3; i++) {
		if (word_is(s, t[i].name)) {
			*out = t[i].v;
			return 0;
		}
	}
	*why = expected;
	return -EINVAL;
}

int lfe_search_access_parse(const char *s, enum lfe_search_access *out, const char **why)
{
	static const struct word_val t[3] = {
		{ "anonymous", LFE_SEARCH_ACCESS_ANONYMOUS },
		{ "bound", LFE_SEARCH_ACCESS_BOUND },
		{ "none", LFE_SEARCH_ACCESS_NONE },
	};
	int v;
	int rc = pick_word(s, t, &v, why, "expected anonymous, bound or none");
	if (rc == 0)
		*out = (enum lfe_search_access)v;
	return rc;
}

int lfe_require_tls_parse(const char *s, enum lfe_require_tls *out, const char **why)
{
	static const struct word_val t[3] = {
		{ "none", LFE_REQUIRE_TLS_NONE },
		{ "bind", LFE_REQUIRE_TLS_BIND },
		{ "all", LFE_REQUIRE_TLS_ALL },
	};
	int v;
	int rc = pick_word(s, t, &v, why, "expected none, bind or all");
	if (rc == 0)
		*out = (enum lfe_require_tls)v;
	return rc;
}

int lfe_search_scope_parse(const char *s, enum lfe_search_scope_max *out, const char **why)
{
	static const struct word_val t[3] = {
		{ "base", LFE_SEARCH_SCOPE_BASE },
		{ "one", LFE_SEARCH_SCOPE_ONE },
		{ "sub", LFE_SEARCH_SCOPE_SUB },
	};
	int v;
	int rc = pick_word(s, t, &v, why, "expected base, one or sub");
	if (rc == 0)
		*out = (enum lfe_search_scope_max)v;
	return rc;
}

/* A descr or numericoid, no options: what lfe_attr_canon accepts. */
static bool plain_type(const char *t, size_t n)
{
	char tmp[LFE_ATTR_NAME_MAX];
	return lfe_attr_canon((const uint8_t *)t, n, tmp, sizeof tmp) > 0;
}

int lfe_search_attrs_parse(struct lfe_search_policy *p, const char *list, const char **why)
{
	char a[LFE_SEARCH_MAX_ATTRS][LFE_ATTR_NAME_MAX];
	uint32_t n = 0;

	while (list && *list) {
		size_t l = strcspn(list, ",");
		const char *t = list, *e = list + l;
		list = *e ? e + 1 : e;
		while (t < e && (*t == ' ' || *t == '\t'))
			t++;
		while (e > t && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		size_t tl = (size_t)(e - t);
		if (tl == 0 || (*list == '\0' && list[-1] == ',')) {
			*why = "empty attribute name in the list";
			return -EINVAL;
		}
		if (memchr(t, ';', tl)) {
			*why = "attribute options are not allowed (a type covers its subtypes)";
			return -EINVAL;
		}
		if (!plain_type(t, tl)) {
			*why = "not an attribute type (a name or a numeric OID)";
			return -EINVAL;
		}
		if (lfe_attr_is_secret((const uint8_t *)t, tl)) {
			*why = "userPassword and authPassword can never be searched";
			return -EINVAL;
		}
		for (uint32_t i = 0; i < n; i++) {
			if (lfe_attr_type_eq((const uint8_t *)a[i], strlen(a[i]), (const uint8_t *)t, tl)) {
				*why = "attribute listed twice";
				return -EINVAL;
			}
		}
		if (n == LFE_SEARCH_MAX_ATTRS) {
			*why = "too many attributes (at most 32)";
			return -EINVAL;
		}
		memcpy(a[n], t, tl);
		a[n++][tl] = '\0';
	}
	memcpy(p->attrs, a, sizeof a[0] * n);
	p->n_attrs = n;
	return 0;
}
