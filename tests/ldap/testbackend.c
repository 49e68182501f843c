/* tests/ldap/testbackend.c — the real LMDB store behind the session's
 * backend ops, for session tests (see testbackend.h). */
#include "tests/ldap/testbackend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backend/bindjob.h"
#include "backend/pwscheme.h"
#include "backend/search.h"
#include "backend/store.h"
#include "ldap/dn.h"

#define TB_MAX_ATTRS 32u
#define TB_MAX_VALS 32u

struct lfe_tb {
	char dir[64];
	struct lfe_store *st;
	struct lfe_store_reader *rd;    /* made at the first operation */
	enum lfe_tb_mode mode;
	bool has_pending;
	uint64_t pending_token;
	enum lfe_be_verdict pending_v;
	struct lfe_tb_counts counts;
};

static void rm_store(const char *dir)
{
	static const char *const files[] = { "data.mdb", "lock.mdb" };
	char p[128];
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

struct lfe_tb *lfe_tb_new(void)
{
	struct lfe_tb *tb = calloc(1, sizeof(struct lfe_tb));
	if (!tb)
		return NULL;
	snprintf(tb->dir, sizeof tb->dir, "/tmp/lfe-tb.XXXXXX");
	if (!mkdtemp(tb->dir)) {
		free(tb);
		return NULL;
	}
	tb->st = lfe_store_open(tb->dir, 0, 64u << 20, NULL, NULL);
	if (!tb->st || lfe_store_init(tb->st, LFE_TB_SUFFIX) < 0) {
		lfe_tb_free(tb);
		return NULL;
	}
	/* LMDB keeps its files open and mapped: remove their names now, so a
	 * process that never calls lfe_tb_free (a fuzzer) leaves nothing. */
	rm_store(tb->dir);
	return tb;
}

void lfe_tb_free(struct lfe_tb *tb)
{
	if (!tb)
		return;
	lfe_store_reader_free(tb->rd);
	lfe_store_close(tb->st);
	rm_store(tb->dir);
	free(tb);
}

/* A read snapshot that sees every entry added so far. */
static struct lfe_store_reader *reader(struct lfe_tb *tb)
{
	if (!tb->rd)
		tb->rd = lfe_store_reader_new(tb->st);
	else if (lfe_store_reader_renew(tb->rd) < 0)
		return NULL;
	return tb->rd;
}

struct tb_build {
	struct lfe_ldap_attr attrs[TB_MAX_ATTRS];
	struct lfe_bytes vals[TB_MAX_ATTRS][TB_MAX_VALS];
	uint32_t n;
};

static int build_add(struct tb_build *b, const char *type, size_t tl, const char *val, size_t vl)
{
	uint32_t i;
	for (i = 0; i < b->n; i++)
		if (b->attrs[i].type.len == tl && strncasecmp((const char *)b->attrs[i].type.p, type, tl) == 0)
			break;
	if (i == b->n) {
		if (i == TB_MAX_ATTRS)
			return -E2BIG;
		b->attrs[i] = (struct lfe_ldap_attr){ .type = { (const uint8_t *)type, tl },
						      .vals = b->vals[i] };
		b->n++;
	}
	struct lfe_ldap_attr *a = &b->attrs[i];
	if (a->n_vals == TB_MAX_VALS)
		return -E2BIG;
	b->vals[i][a->n_vals++] = (struct lfe_bytes){ (const uint8_t *)val, vl };
	return 0;
}

static int tb_put(struct lfe_tb *tb, const char *dn, const char *password,
		  const char *const *attrs, size_t n, bool replace)
{
	static struct tb_build b;
	char hashed[256];
	int rc = 0;

	memset(&b, 0, sizeof b);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *eq = strchr(attrs[i], '=');
		if (!eq || eq == attrs[i])
			return -EINVAL;
		rc = build_add(&b, attrs[i], (size_t)(eq - attrs[i]), eq + 1, strlen(eq + 1));
	}
	if (rc == 0 && password) {
		ssize_t hl = lfe_pw_hash("{SSHA}", (const uint8_t *)password, strlen(password), hashed,
					 sizeof hashed);
		rc = hl < 0 ? (int)hl : build_add(&b, "userPassword", 12, hashed, (size_t)hl);
	}
	if (rc == 0)
		rc = lfe_store_put(tb->st, (struct lfe_bytes){ (const uint8_t *)dn, strlen(dn) },
				   b.attrs, b.n, replace);
	explicit_bzero(hashed, sizeof hashed);
	return rc;
}

int lfe_tb_add(struct lfe_tb *tb, const char *dn, const char *password,
	       const char *const *attrs, size_t n)
{
	return tb_put(tb, dn, password, attrs, n, false);
}

int lfe_tb_replace(struct lfe_tb *tb, const char *dn, const char *password,
		   const char *const *attrs, size_t n)
{
	return tb_put(tb, dn, password, attrs, n, true);
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

static void copy_str(char *dst, size_t cap, const char *src, size_t len)
{
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static enum lfe_be_verdict tb_bind(void *ctx, uint64_t token, const char *ndn,
				   size_t ndn_len, const uint8_t *dn, size_t dn_len,
				   const uint8_t *pw, size_t pw_len)
{
	(void)dn, (void)dn_len;
	struct lfe_tb *tb = ctx;
	struct lfe_store_reader *rd = reader(tb);
	struct lfe_bind_job job;

	tb->counts.binds++;
	copy_str(tb->counts.last_bind_ndn, sizeof tb->counts.last_bind_ndn, ndn, ndn_len);
	if (tb->mode == LFE_TB_BUSY || !rd)
		return LFE_BE_BUSY;
	int rc = lfe_store_verify_bind(rd, ndn, ndn_len, pw, pw_len, 0, &job);
	if (rc == -EAGAIN) {   /* the verifier's half, run here */
		rc = lfe_bind_job_run(&job, pw, pw_len, 0);
		lfe_bind_job_wipe(&job);
	}
	enum lfe_be_verdict v = rc == 0 ? LFE_BE_OK : LFE_BE_INVALID;
	if (tb->mode == LFE_TB_PENDING) {
		tb->has_pending = true;
		tb->pending_token = token;
		tb->pending_v = v;
		return LFE_BE_PENDING;
	}
	return v;
}

static int tb_search(void *ctx, const struct lfe_be_search *s, lfe_be_emit_fn emit,
		     void *emit_ctx)
{
	struct lfe_tb *tb = ctx;
	struct lfe_store_reader *rd = reader(tb);
	size_t suffix_len;
	const char *suffix = lfe_store_suffix(tb->st, &suffix_len);

	tb->counts.searches++;
	copy_str(tb->counts.last_search_base, sizeof tb->counts.last_search_base,
		 s->base_ndn, s->base_ndn_len);
	if (!rd)
		return LFE_RC_BUSY;
	const struct lfe_search_params p = {
		.base_ndn = s->base_ndn, .base_ndn_len = s->base_ndn_len,
		.suffix = suffix, .suffix_len = suffix_len,
		.req = s->req,
		.cursor = s->resume_len >= sizeof(struct lfe_search_cursor) ? s->resume : NULL,
	};
	return lfe_store_search(rd, &p, emit, emit_ctx, NULL);
}

const struct lfe_backend_ops lfe_tb_ops = {
	.bind = tb_bind,
	.search = tb_search,
};
