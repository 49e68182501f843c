/* tests/bench/bench_hold.c — how long one request holds a worker, and
 * whether unknown DNs can be told from wrong passwords by their latency.
 *
 *   bench_hold [N_USERS]      (default 20000)
 *
 * Part 1, hold time per request type: lfe_session_process() over a real
 * LMDB store with the daemon's backend logic (lfe_store_verify_bind, a slow
 * job only copied as the verifier submission would, lfe_store_search with a
 * 200 µs slice on CLOCK_MONOTONIC and the default candidate cap). One
 * request per call, timed around the call in thread CPU time (a dedicated
 * core's view; the slice itself runs on CLOCK_MONOTONIC); per run the median,
 * p99 and max; printed: the median of 5 runs of each. The costliest search
 * within the caps: an AND of objectClass=inetOrgPerson (every user is a
 * candidate) and a substring filter of as many pieces as fit in max_pdu.
 * For comparison the same search with no time slice (candidate cap only),
 * which is what the glue did before the budget.
 *
 * Part 2, bind latency of unknown DN vs wrong password at the backend: both
 * phases (lfe_store_verify_bind, then lfe_bind_job_run when it hands out a
 * job) for an {SSHA} store and an {ARGON2} store, each with its default
 * scheme matching; the two kinds interleaved; median and p99 of 3 runs.
 *
 * Figures, not a test: run it by hand on an idle machine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/bindjob.h"
#include "backend/pwscheme.h"
#include "backend/search.h"
#include "backend/store.h"
#include "ldap/client.h"
#include "ldap/filter.h"
#include "ldap/session.h"
#include "tests/backend/berbuild.h"

#define SUFFIX "dc=example,dc=com"
#define RUNS 5
#define SLICE_NS 200000u

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of this thread: what a dedicated worker core would spend (on a
 * shared machine wall time adds whatever else ran meanwhile). */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t clock_cb(void *ctx)
{
	(void)ctx;
	return now_ns();
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	size_t i = (size_t)(p * (double)n);
	return v[i < n ? i : n - 1];
}

/* ---- a backend as the daemon's glue has it ---- */

struct be {
	struct lfe_store *st;
	struct lfe_store_reader *rd;
	bool slice;                     /* time budget on */
	uint64_t token;                 /* of the last PENDING bind */
	/* What a verifier submission copies: the job and the password. */
	struct lfe_bind_job queued;
	uint8_t queued_pw[512];
	struct lfe_ldap_attr attrs[64];
	struct lfe_bytes vals[512];
};

static enum lfe_be_verdict be_bind(void *ctx, uint64_t token, const char *ndn, size_t ndn_len,
				   const uint8_t *dn, size_t dn_len, const uint8_t *pw, size_t pw_len)
{
	(void)dn, (void)dn_len;
	struct be *b = ctx;
	struct lfe_bind_job job;
	int rc = lfe_store_verify_bind(b->rd, ndn, ndn_len, pw, pw_len, 0, &job);
	if (rc != -EAGAIN)
		return rc == 0 ? LFE_BE_OK : LFE_BE_INVALID;
	b->queued = job;
	memcpy(b->queued_pw, pw, pw_len < sizeof(b->queued_pw) ? pw_len : sizeof(b->queued_pw));
	lfe_bind_job_wipe(&job);
	b->token = token;
	return LFE_BE_PENDING;
}

static int be_search(void *ctx, const struct lfe_be_search *s, lfe_be_emit_fn emit, void *emit_ctx)
{
	struct be *b = ctx;
	const struct lfe_search_params p = {
		.base_ndn = s->base_ndn, .base_ndn_len = s->base_ndn_len,
		.suffix = SUFFIX, .suffix_len = strlen(SUFFIX), .req = s->req,
		.clock = b->slice ? clock_cb : NULL, .deadline = now_ns() + SLICE_NS,
		.cursor = s->resume_len >= sizeof(struct lfe_search_cursor) ? s->resume : NULL,
	};
	return lfe_store_search(b->rd, &p, emit, emit_ctx, NULL);
}

static const struct lfe_backend_ops ops = { .bind = be_bind, .search = be_search };

/* ---- requests ---- */

struct buf {
	uint8_t b[70000];
	size_t n;
};

/* The shared builder over a struct buf. */
#define BB(f) (&(struct bb){ (f)->b, (f)->n })
static void wrap(struct buf *f, size_t from, uint8_t tag)
{
	struct bb *x = BB(f);
	bb_wrap(x, from, tag);
	f->n = x->n;
}

static void raw(struct buf *f, const void *p, size_t n)
{
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static void octets(struct buf *f, uint8_t tag, const char *s)
{
	struct bb *x = BB(f);
	bb_octets(x, tag, s);
	f->n = x->n;
}

/* SearchRequest with messageID 2, filter given by fn. */
static void search_pdu(struct buf *f, const char *base, uint8_t scope,
		       void (*filter)(struct buf *, unsigned), unsigned arg)
{
	f->n = 0;
	raw(f, "\x02\x01\x02", 3);
	size_t op = f->n;
	octets(f, 0x04, base);
	uint8_t sc[] = { 0x0a, 0x01, scope, 0x0a, 0x01, 0x00, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00,
			 0x01, 0x01, 0x00 };
	raw(f, sc, sizeof(sc));
	filter(f, arg);
	raw(f, "\x30\x00", 2);
	wrap(f, op, 0x63);
	wrap(f, 0, 0x30);
}

static void f_uid(struct buf *f, unsigned u)
{
	char v[32];
	size_t at = f->n;
	snprintf(v, sizeof(v), "user%u", u);
	octets(f, 0x04, "uid");
	octets(f, 0x04, v);
	wrap(f, at, 0xa3);
}

static void f_present(struct buf *f, unsigned u)
{
	(void)u;
	octets(f, 0x87, "objectClass");
}

/* (&(objectClass=inetOrgPerson)(cn=*zq*zq*...*)) with n pieces: over the
 * filter caps (ldap/msg.h) when n > LFE_LDAP_MAX_SUBSTR_PIECES, so the
 * session refuses it at decode. */
static void f_costly(struct buf *f, unsigned n)
{
	struct bb *x = BB(f);
	size_t and_at = x->n;
	bb_eq(x, "objectClass", "inetOrgPerson");
	bb_substr(x, "cn", "zq", n);
	bb_wrap(x, and_at, 0xa0);
	f->n = x->n;
}

/* The costliest filter the caps let through: every user a candidate, an OR
 * of substring items of 16 pieces each, k items (64 pieces in all at most),
 * none matching. */
static void f_capped(struct buf *f, unsigned k)
{
	struct bb *x = BB(f);
	size_t and_at = x->n;
	bb_eq(x, "objectClass", "inetOrgPerson");
	size_t or_at = x->n;
	for (unsigned i = 0; i < k; i++)
		bb_substr(x, i & 1 ? "sn" : "cn", "zq", 16);
	bb_wrap(x, or_at, 0xa1);
	bb_wrap(x, and_at, 0xa0);
	f->n = x->n;
}

static void bind_pdu(struct buf *f, const char *dn, const char *pw)
{
	ssize_t n = lfe_ldap_enc_bind_req(f->b, sizeof(f->b), 1, dn, strlen(dn), pw, strlen(pw));
	f->n = n > 0 ? (size_t)n : 0;
}

/* ---- part 1 ---- */

static uint32_t entry_attr(void *ctx, struct lfe_bytes type, uint32_t first, struct lfe_bytes *vals,
			   uint32_t cap)
{
	return lfe_entry_get_from(ctx, (const char *)type.p, type.len, first, vals, cap);
}

static uint8_t out[1u << 20];

/* Hold time of one request in a fresh session each time (so a bind never
 * meets a bind in progress), ns. */
static uint64_t hold_once(struct be *b, const struct lfe_session_cfg *cfg, void *mem,
			  const struct buf *req)
{
	struct lfe_session *s = lfe_session_init(mem, cfg);
	lfe_session_set_generation(s, 1);
	struct lfe_session_io io = { .in = req->b, .in_len = req->n, .out = out, .out_cap = sizeof(out) };
	uint64_t t0 = cpu_ns();
	int rc = lfe_session_process(s, &io);
	uint64_t t = cpu_ns() - t0;
	if (rc < 0 || (io.flags & (LFE_SESS_ABORT | LFE_SESS_CLOSE)))
		fprintf(stderr, "request failed: rc %d flags %#x\n", rc, io.flags);
	if (io.flags & LFE_SESS_PENDING) {
		struct lfe_session_io done = { .out = out, .out_cap = sizeof(out) };
		lfe_session_bind_done(s, b->token, LFE_BE_INVALID, &done);
		lfe_bind_job_wipe(&b->queued);
	}
	lfe_session_fini(s);
	return t;
}

static void hold(const char *name, struct be *b, const struct lfe_session_cfg *cfg, void *mem,
		 const struct buf *req, unsigned iters, unsigned runs)
{
	uint64_t med[RUNS], p99[RUNS], max[RUNS], *v = malloc(sizeof(uint64_t) * iters);
	for (unsigned r = 0; r < runs; r++) {
		lfe_store_reader_renew(b->rd);
		for (unsigned i = 0; i < iters; i++)
			v[i] = hold_once(b, cfg, mem, req);
		med[r] = pct(v, iters, 0.5);
		p99[r] = pct(v, iters, 0.99);
		max[r] = v[iters - 1];
	}
	printf("  %-46s median %8.1f  p99 %8.1f  max %8.1f µs\n", name,
	       (double)pct(med, runs, 0.5) / 1e3, (double)pct(p99, runs, 0.5) / 1e3,
	       (double)pct(max, runs, 0.5) / 1e3);
	free(v);
}

static int put_user(struct lfe_store *st, unsigned i, const char *scheme, const char *pwfmt)
{
	char dn[128], uid[32], cn[40], pw[32], hashed[256];
	snprintf(uid, sizeof(uid), "user%u", i);
	snprintf(cn, sizeof(cn), "user %u", i);
	snprintf(dn, sizeof(dn), "uid=%s,ou=people," SUFFIX, uid);
	snprintf(pw, sizeof(pw), pwfmt, i);
	ssize_t hl = lfe_pw_hash(scheme, (const uint8_t *)pw, strlen(pw), hashed, sizeof(hashed));
	if (hl < 0)
		return (int)hl;
	struct lfe_bytes ocv[3] = { { (const uint8_t *)"top", 3 }, { (const uint8_t *)"person", 6 },
				    { (const uint8_t *)"inetOrgPerson", 13 } };
	struct lfe_bytes u = { (const uint8_t *)uid, strlen(uid) }, c = { (const uint8_t *)cn, strlen(cn) },
			 h = { (const uint8_t *)hashed, (size_t)hl };
	struct lfe_ldap_attr a[4] = {
		{ .type = { (const uint8_t *)"objectClass", 11 }, .vals = ocv, .n_vals = 3 },
		{ .type = { (const uint8_t *)"uid", 3 }, .vals = &u, .n_vals = 1 },
		{ .type = { (const uint8_t *)"cn", 2 }, .vals = &c, .n_vals = 1 },
		{ .type = { (const uint8_t *)"userPassword", 12 }, .vals = &h, .n_vals = 1 },
	};
	return lfe_store_put(st, (struct lfe_bytes){ (const uint8_t *)dn, strlen(dn) }, a, 4, false);
}

static struct lfe_store *make_store(const char *dir, unsigned n, const char *scheme)
{
	struct lfe_store *st = lfe_store_open(dir, LFE_STORE_BULK, 1ull << 30, NULL, NULL);
	if (!st || lfe_store_init(st, SUFFIX) < 0 || lfe_store_batch_begin(st) < 0)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		if (put_user(st, i, scheme, "pw-%u") < 0)
			return NULL;
	if (lfe_store_batch_commit(st) < 0 || lfe_store_set_default_scheme(st, scheme) < 0)
		return NULL;
	return st;
}

static void rm_store(const char *dir)
{
	char p[300];
	snprintf(p, sizeof(p), "%s/data.mdb", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock.mdb", dir);
	unlink(p);
	rmdir(dir);
}

static int part1(unsigned n_users)
{
	char dir[] = "/tmp/lfe-bench-hold.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	struct lfe_store *st = make_store(dir, n_users, "{SSHA}");
	if (!st || put_user(st, n_users, "{ARGON2}", "pw-%u") < 0) {
		fprintf(stderr, "store setup failed\n");
		return 1;
	}
	static struct be b;
	b.st = st;
	b.rd = lfe_store_reader_new(st);
	b.slice = true;
	struct lfe_session_cfg cfg = { .allow_anonymous = true, .be = &ops, .be_ctx = &b,
				       .naming_context = SUFFIX };
	void *mem = aligned_alloc(64, (lfe_session_size() + 63) & ~(size_t)63);
	static struct buf req;
	char dn[128];

	printf("worker hold time per request (lfe_session_process, %u users, {SSHA} default,\n"
	       "slice %u µs; median of %d runs of each figure):\n", n_users, SLICE_NS / 1000, RUNS);
	snprintf(dn, sizeof(dn), "uid=user%u,ou=people," SUFFIX, n_users / 2);
	bind_pdu(&req, dn, "pw-0");
	char pw[32];
	snprintf(pw, sizeof(pw), "pw-%u", n_users / 2);
	bind_pdu(&req, dn, pw);
	hold("bind, {SSHA} user, right password", &b, &cfg, mem, &req, 2000, RUNS);
	bind_pdu(&req, dn, "wrong");
	hold("bind, {SSHA} user, wrong password", &b, &cfg, mem, &req, 2000, RUNS);
	bind_pdu(&req, "uid=nobody,ou=people," SUFFIX, "wrong");
	hold("bind, unknown DN ({SSHA} dummy inline)", &b, &cfg, mem, &req, 2000, RUNS);
	snprintf(dn, sizeof(dn), "uid=user%u,ou=people," SUFFIX, n_users);
	bind_pdu(&req, dn, "wrong");
	hold("bind, {ARGON2} user (job submission only)", &b, &cfg, mem, &req, 2000, RUNS);
	lfe_store_set_bind_scheme(st, "{ARGON2}");
	bind_pdu(&req, "uid=nobody,ou=people," SUFFIX, "wrong");
	hold("bind, unknown DN, {ARGON2} default (submission)", &b, &cfg, mem, &req, 2000, RUNS);
	lfe_store_set_bind_scheme(st, NULL);
	search_pdu(&req, SUFFIX, 2, f_uid, n_users / 3);
	hold("search (uid=userN), subtree", &b, &cfg, mem, &req, 2000, RUNS);
	search_pdu(&req, "", 0, f_present, 0);
	hold("search root DSE", &b, &cfg, mem, &req, 2000, RUNS);
	char name[96];
	search_pdu(&req, SUFFIX, 2, f_capped, 4);
	snprintf(name, sizeof(name), "search, 4 x 16 substring pieces x %u candidates", n_users);
	hold(name, &b, &cfg, mem, &req, 200, RUNS);
	{
		static struct buf fb;
		f_capped(&fb, 4);
		struct lfe_entry_view e;
		snprintf(dn, sizeof(dn), "uid=user1,ou=people," SUFFIX);
		int er = lfe_store_get(b.rd, dn, strlen(dn), &e);
		uint64_t t0 = cpu_ns();
		int ev = er == 0 ? lfe_filter_eval(fb.b, fb.n, entry_attr, &e) : -1;
		uint64_t t1 = cpu_ns();
		printf("    (that filter: eval on one entry %.1f µs (%d))\n", (double)(t1 - t0) / 1e3, ev);
	}
	unsigned pieces = (unsigned)((sizeof(req.b) - 200) / 4);
	if (pieces > 16000)
		pieces = 16000;
	search_pdu(&req, SUFFIX, 2, f_costly, pieces);
	snprintf(name, sizeof(name), "search, %u pieces (over the caps) x %u candidates", pieces, n_users);
	hold(name, &b, &cfg, mem, &req, 200, RUNS);
	{
		/* Where a candidate's time goes: the filter walk (ldap/). */
		static struct buf fb;
		f_costly(&fb, pieces);
		uint64_t t0 = cpu_ns();
		int vr = lfe_filter_validate(fb.b, fb.n);
		uint64_t t1 = cpu_ns();
		struct lfe_entry_view e;
		snprintf(dn, sizeof(dn), "uid=user1,ou=people," SUFFIX);
		int er = lfe_store_get(b.rd, dn, strlen(dn), &e);
		uint64_t t2 = cpu_ns();
		int ev = er == 0 ? lfe_filter_eval(fb.b, fb.n, entry_attr, &e) : -1;
		uint64_t t3 = cpu_ns();
		printf("    (that filter: validate %.1f µs (%d), eval on one entry %.1f µs (%d))\n",
		       (double)(t1 - t0) / 1e3, vr, (double)(t3 - t2) / 1e3, ev);
	}
	b.slice = false;
	search_pdu(&req, SUFFIX, 2, f_capped, 4);
	snprintf(name, sizeof(name), "  4 x 16 pieces, no time slice (candidate and work caps)");
	hold(name, &b, &cfg, mem, &req, 3, 3);

	free(mem);
	lfe_store_reader_free(b.rd);
	lfe_store_close(st);
	rm_store(dir);
	return 0;
}

/* ---- part 2 ---- */

static uint64_t bind_full(struct lfe_store_reader *rd, const char *dn, const char *pw)
{
	struct lfe_bind_job job;
	uint64_t t0 = now_ns();
	int rc = lfe_store_verify_bind(rd, dn, strlen(dn), (const uint8_t *)pw, strlen(pw), 0, &job);
	if (rc == -EAGAIN) {
		rc = lfe_bind_job_run(&job, (const uint8_t *)pw, strlen(pw), 0);
		lfe_bind_job_wipe(&job);
	}
	uint64_t t = now_ns() - t0;
	if (rc != -EACCES)
		fprintf(stderr, "bind of %s: %d, expected -EACCES\n", dn, rc);
	return t;
}

static int part2(const char *scheme, unsigned n_users, unsigned iters)
{
	char dir[] = "/tmp/lfe-bench-hold.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	struct lfe_store *st = make_store(dir, n_users, scheme);
	if (!st)
		return 1;
	struct lfe_store_reader *rd = lfe_store_reader_new(st);
	uint64_t *u = malloc(sizeof(uint64_t) * iters), *w = malloc(sizeof(uint64_t) * iters);
	uint64_t um[3], u99[3], wm[3], w99[3];
	char dn[128];
	for (unsigned r = 0; r < 3; r++) {
		for (unsigned i = 0; i < iters; i++) {
			snprintf(dn, sizeof(dn), "uid=ghost%u,ou=people," SUFFIX, i);
			u[i] = bind_full(rd, dn, "wrong-pw");
			snprintf(dn, sizeof(dn), "uid=user%u,ou=people," SUFFIX, i % n_users);
			w[i] = bind_full(rd, dn, "wrong-pw");
		}
		um[r] = pct(u, iters, 0.5);
		u99[r] = pct(u, iters, 0.99);
		wm[r] = pct(w, iters, 0.5);
		w99[r] = pct(w, iters, 0.99);
	}
	printf("  %-10s unknown DN     median %9.1f  p99 %9.1f µs\n", scheme,
	       (double)pct(um, 3, 0.5) / 1e3, (double)pct(u99, 3, 0.5) / 1e3);
	printf("  %-10s wrong password median %9.1f  p99 %9.1f µs\n", scheme,
	       (double)pct(wm, 3, 0.5) / 1e3, (double)pct(w99, 3, 0.5) / 1e3);
	free(u);
	free(w);
	lfe_store_reader_free(rd);
	lfe_store_close(st);
	rm_store(dir);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20000;
	if (n < 10)
		n = 10;
	if (part1(n))
		return 1;
	printf("bind latency, both phases at the backend (default scheme = the users'; median of 3 runs):\n");
	if (part2("{SSHA}", 1000, 5000) || part2("{ARGON2}", 20, 60))
		return 1;
	return 0;
}
