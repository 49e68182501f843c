/* tests/ldap/testbackend.c — in-memory directory for session tests. */
#include "testbackend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap/dn.h"
#include "ldap/filter.h"

#define TB_MAX_ATTRS 32u
#define TB_MAX_VALS 32u
#define TB_NAME_MAX 64u

struct tb_entry {
	char *dn;                          /* as given */
	char ndn[LFE_DN_MAX + 1];
	size_t ndn_len;
	uint32_t n_attrs;
	struct lfe_ldap_attr attrs[TB_MAX_ATTRS];
	struct lfe_bytes vals[TB_MAX_ATTRS][TB_MAX_VALS];
	char *pw;                          /* NULL: no password, bind fails */
	size_t pw_len;
};

struct lfe_tb {
	struct tb_entry **e;
	size_t n, cap;
	enum lfe_tb_mode mode;
	bool has_pending;
	uint64_t pending_token;
	enum lfe_be_verdict pending_v;
	struct lfe_tb_counts counts;
};

struct lfe_tb *lfe_tb_new(void)
{
	return calloc(1, sizeof(struct lfe_tb));
}

static void entry_free(struct tb_entry *e)
{
	if (!e)
		return;
	for (uint32_t i = 0; i < e->n_attrs; i++) {
		free((void *)e->attrs[i].type.p);
		for (uint32_t k = 0; k < e->attrs[i].n_vals; k++)
			free((void *)e->vals[i][k].p);
	}
	if (e->pw)
		explicit_bzero(e->pw, e->pw_len);
	free(e->pw);
	free(e->dn);
	free(e);
}

void lfe_tb_free(struct lfe_tb *tb)
{
	if (!tb)
		return;
	for (size_t i = 0; i < tb->n; i++)
		entry_free(tb->e[i]);
	free(tb->e);
	free(tb);
}

static bool same_type(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	return lfe_attr_type_eq(a, al, b, bl);
}

static int entry_add_val(struct tb_entry *e, const char *type, size_t tl,
			 const char *val, size_t vl)
{
	uint32_t i;
	for (i = 0; i < e->n_attrs; i++)
		if (same_type(e->attrs[i].type.p, e->attrs[i].type.len,
			      (const uint8_t *)type, tl))
			break;
	if (i == e->n_attrs) {
		if (i == TB_MAX_ATTRS)
			return -E2BIG;
		char *t = strndup(type, tl);
		if (!t)
			return -ENOMEM;
		e->attrs[i] = (struct lfe_ldap_attr){
			.type = { (const uint8_t *)t, tl }, .n_vals = 0, .vals = e->vals[i],
		};
		e->n_attrs++;
	}
	struct lfe_ldap_attr *a = &e->attrs[i];
	if (a->n_vals == TB_MAX_VALS)
		return -E2BIG;
	char *v = strndup(val, vl);
	if (!v)
		return -ENOMEM;
	e->vals[i][a->n_vals++] = (struct lfe_bytes){ (const uint8_t *)v, vl };
	return 0;
}

static struct tb_entry *find(const struct lfe_tb *tb, const char *ndn, size_t len)
{
	for (size_t i = 0; i < tb->n; i++)
		if (tb->e[i]->ndn_len == len && memcmp(tb->e[i]->ndn, ndn, len) == 0)
			return tb->e[i];
	return NULL;
}

int lfe_tb_add(struct lfe_tb *tb, const char *dn, const char *password,
	       const char *const *attrs, size_t n)
{
	struct tb_entry *e = calloc(1, sizeof *e);
	if (!e)
		return -ENOMEM;
	ssize_t nl = lfe_dn_normalize((const uint8_t *)dn, strlen(dn), e->ndn, sizeof e->ndn);
	int rc = 0;
	if (nl < 0) {
		rc = -EINVAL;
		goto fail;
	}
	e->ndn_len = (size_t)nl;
	if (find(tb, e->ndn, e->ndn_len)) {
		rc = -EEXIST;
		goto fail;
	}
	e->dn = strdup(dn);
	if (!e->dn) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(attrs[i], '=');
		if (!eq || eq == attrs[i]) {
			rc = -EINVAL;
			goto fail;
		}
		rc = entry_add_val(e, attrs[i], (size_t)(eq - attrs[i]), eq + 1, strlen(eq + 1));
		if (rc)
			goto fail;
	}
	if (password) {
		e->pw_len = strlen(password);
		e->pw = strdup(password);
		if (!e->pw) {
			rc = -ENOMEM;
			goto fail;
		}
		rc = entry_add_val(e, "userPassword", 12, password, e->pw_len);
		if (rc)
			goto fail;
	}
	if (tb->n == tb->cap) {
		size_t nc = tb->cap ? tb->cap * 2 : 16;
		struct tb_entry **ne = realloc(tb->e, nc * sizeof *ne);
		if (!ne) {
			rc = -ENOMEM;
			goto fail;
		}
		tb->e = ne;
		tb->cap = nc;
	}
	tb->e[tb->n++] = e;
	return 0;
fail:
	entry_free(e);
	return rc;
}

/* First RDN of a DN string as "type=value" (single-valued RDNs only). */
static int first_rdn(const char *dn, char *out, size_t cap)
{
	size_t i = 0;
	while (dn[i] && dn[i] != ',' && dn[i] != '+') {
		if (dn[i] == '\\' && dn[i + 1])
			i++;
		i++;
	}
	if (i == 0 || i >= cap || !memchr(dn, '=', i))
		return -EINVAL;
	memcpy(out, dn, i);
	out[i] = '\0';
	return 0;
}

int lfe_tb_load_users(struct lfe_tb *tb, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char line[2048];
	int n = 0, rc = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		char *tab = strchr(line, '\t');
		char *pw = NULL;
		if (tab) {
			*tab = '\0';
			pw = tab + 1;
		}
		char rdn[512], cn[520];
		rc = first_rdn(line, rdn, sizeof rdn);
		if (rc)
			break;
		const char *val = strchr(rdn, '=') + 1;
		snprintf(cn, sizeof cn, "cn=%s", val);
		char sn[520];
		snprintf(sn, sizeof sn, "sn=%s", val);
		const char *user[] = { "objectClass=top", "objectClass=person",
				       "objectClass=inetOrgPerson", rdn, cn, sn };
		const char *node[] = { "objectClass=top", rdn };
		if (pw)
			rc = lfe_tb_add(tb, line, pw, user,
					strncasecmp(rdn, "cn=", 3) == 0 ? 3 + 2 : 6);
		else
			rc = lfe_tb_add(tb, line, NULL, node, 2);
		if (pw)
			explicit_bzero(pw, strlen(pw));
		if (rc)
			break;
		n++;
	}
	explicit_bzero(line, sizeof line);
	fclose(f);
	return rc ? rc : n;
}

void lfe_tb_set_mode(struct lfe_tb *tb, enum lfe_tb_mode mode)
{
	tb->mode = mode;
}

bool lfe_tb_take_pending(struct lfe_tb *tb, uint64_t *token, enum lfe_be_verdict *v)
{
	if (!tb->has_pending)
		return false;
	*token = tb->pending_token;
	*v = tb->pending_v;
	tb->has_pending = false;
	return true;
}

const struct lfe_tb_counts *lfe_tb_counts(const struct lfe_tb *tb)
{
	return &tb->counts;
}

/* Same work for a missing entry as for a wrong password. */
static bool pw_equal(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	static const uint8_t dummy[] = "dummy-password-for-timing";
	if (bl == 0) {
		b = dummy;
		bl = sizeof dummy - 1;
	}
	unsigned acc = al != bl;
	for (size_t i = 0; i < al; i++)
		acc |= a[i] ^ b[i % bl];
	return acc == 0;
}

static void copy_str(char *dst, size_t cap, const char *src, size_t len)
{
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static enum lfe_be_verdict tb_bind(void *ctx, uint64_t token, const char *ndn,
				   size_t ndn_len, const uint8_t *pw, size_t pw_len)
{
	struct lfe_tb *tb = ctx;
	tb->counts.binds++;
	copy_str(tb->counts.last_bind_ndn, sizeof tb->counts.last_bind_ndn, ndn, ndn_len);
	if (tb->mode == LFE_TB_BUSY)
		return LFE_BE_BUSY;
	const struct tb_entry *e = find(tb, ndn, ndn_len);
	bool ok = pw_equal(pw, pw_len, e && e->pw ? (const uint8_t *)e->pw : NULL,
			   e && e->pw ? e->pw_len : 0) && e && e->pw;
	enum lfe_be_verdict v = ok ? LFE_BE_OK : LFE_BE_INVALID;
	if (tb->mode == LFE_TB_PENDING) {
		tb->has_pending = true;
		tb->pending_token = token;
		tb->pending_v = v;
		return LFE_BE_PENDING;
	}
	return v;
}

static uint32_t tb_get(void *ctx, struct lfe_bytes type, struct lfe_bytes *vals, uint32_t cap)
{
	const struct tb_entry *e = ctx;
	for (uint32_t i = 0; i < e->n_attrs; i++) {
		const struct lfe_ldap_attr *a = &e->attrs[i];
		if (!same_type(a->type.p, a->type.len, type.p, type.len))
			continue;
		for (uint32_t k = 0; k < a->n_vals && k < cap; k++)
			vals[k] = a->vals[k];
		return a->n_vals;
	}
	return 0;
}

static unsigned rdn_count(const char *ndn, size_t len)
{
	if (len == 0)
		return 0;
	unsigned n = 1;
	for (size_t i = 0; i < len; i++) {
		if (ndn[i] == '\\')
			i++;
		else if (ndn[i] == ',')
			n++;
	}
	return n;
}

static int tb_search(void *ctx, const struct lfe_be_search *s, lfe_be_emit_fn emit,
		     void *emit_ctx)
{
	struct lfe_tb *tb = ctx;
	const struct lfe_search_req *req = s->req;
	tb->counts.searches++;
	copy_str(tb->counts.last_search_base, sizeof tb->counts.last_search_base,
		 s->base_ndn, s->base_ndn_len);
	if (s->base_ndn_len && !find(tb, s->base_ndn, s->base_ndn_len))
		return LFE_RC_NO_SUCH_OBJECT;
	unsigned base_rdns = rdn_count(s->base_ndn, s->base_ndn_len);
	for (size_t i = 0; i < tb->n; i++) {
		const struct tb_entry *e = tb->e[i];
		bool under = s->base_ndn_len == 0 ||
			     lfe_dn_is_under(e->ndn, e->ndn_len, s->base_ndn, s->base_ndn_len);
		if (!under)
			continue;
		unsigned depth = rdn_count(e->ndn, e->ndn_len);
		if (req->scope == LFE_SCOPE_BASE && depth != base_rdns)
			continue;
		if (req->scope == LFE_SCOPE_ONE && depth != base_rdns + 1)
			continue;
		int f = lfe_filter_eval(req->filter.p, req->filter.len, tb_get, (void *)e);
		if (f < 0)
			return LFE_RC_PROTOCOL_ERROR;
		if (f != LFE_FILTER_TRUE)
			continue;
		struct lfe_bytes dn = { (const uint8_t *)e->dn, strlen(e->dn) };
		if (emit(emit_ctx, dn, e->attrs, e->n_attrs) < 0)
			break;
	}
	return LFE_RC_SUCCESS;
}

const struct lfe_backend_ops lfe_tb_ops = {
	.bind = tb_bind,
	.search = tb_search,
};
