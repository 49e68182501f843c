/* mgmt/sync.c — the RFC 4533 consumer engine of `ldapfectl sync` (see sync.h;
 * the command line is sync_cli.c).
 *
 * Consumer state kept in the store (lfe_store_sync_*), all committed with
 * the changes it describes:
 *   "id:<entryUUID>"  → normalized DN (renames and deletes arrive by UUID)
 *   "initial"         present while an initial refresh is half done
 *   "status"          provider, counters, last change (ldapfectl sync --status)
 * and the cookie in the store's own meta slot.
 */
#include "mgmt/sync_run.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <lber.h>
#include <ldap.h>

#include "backend/record.h"
#include "backend/store.h"
#include "ldap/dn.h"
#include "mgmt/cli.h"

enum { RUN_STOP = 0, RUN_FATAL = -1, RUN_RETRY = -2, RUN_REFRESH = -3 };

#define MAX_ATTRS      1024u
#define INITIAL_KEY    "initial"

/* A set of normalized DNs (the present phase), open addressing. */
struct dnset {
	char **slot;
	size_t cap, n;
};

struct sync {
	const struct lfe_sync_opts *o;
	struct lfe_store *st;
	LDAP *ld;
	int msgid;
	struct berval cookie;       /* last cookie received (may be ahead of the store) */
	bool cookie_dirty;          /* cookie changed since the last commit */
	bool have_cookie;           /* the store had one when the search started */
	bool refreshing;            /* refresh phase of the current search */
	bool chunked;               /* initial refresh committed in chunks */
	bool in_batch;
	bool track_present;
	uint32_t in_batch_n;        /* changes in the open batch */
	struct dnset present;
	/* counters and the last change, for the status record */
	uint64_t applied, skipped, deleted, refreshes;
	int64_t last_change, last_commit;
	char last_kind[8];
	char last_dn[256];
	struct timespec refresh_t0;
	uint64_t refresh_n;
	/* scratch for one entry */
	struct lfe_ldap_attr attrs[MAX_ATTRS];
	struct berval *bvals[MAX_ATTRS];
	struct lfe_bytes *vals;
	size_t vals_cap;
	char pw[1024];
	size_t pw_len;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Provider bytes in a log line: escaped (lfe_sync_escape), at most ~200
 * characters; the buffer lives until the end of the enclosing statement. */
#define ESC(p, n) lfe_sync_escape((p), (n), (char[256]){ 0 }, 256)

static void logf_(const char *fmt, ...)
{
	va_list ap;

	fputs("ldapfectl sync: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* ---- DN set ---- */

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
	return h;
}

/* Slot of ndn: where it is, or the empty slot where it would go. */
static size_t dnset_slot(const struct dnset *s, const char *ndn, size_t len)
{
	size_t i = (size_t)hash_bytes(ndn, len) & (s->cap - 1);

	while (s->slot[i] && !(strlen(s->slot[i]) == len && memcmp(s->slot[i], ndn, len) == 0))
		i = (i + 1) & (s->cap - 1);
	return i;
}

static bool dnset_has(const struct dnset *s, const char *ndn, size_t len)
{
	return s->cap && s->slot[dnset_slot(s, ndn, len)] != NULL;
}

static int dnset_add(struct dnset *s, const char *ndn, size_t len)
{
	size_t i;

	if (s->n * 2 >= s->cap) {
		struct dnset g = { calloc(s->cap ? s->cap * 2 : 1024, sizeof(char *)),
				   s->cap ? s->cap * 2 : 1024, 0 };

		if (!g.slot)
			return -ENOMEM;
		for (size_t j = 0; j < s->cap; j++)
			if (s->slot[j])
				g.slot[dnset_slot(&g, s->slot[j], strlen(s->slot[j]))] = s->slot[j];
		g.n = s->n;
		free(s->slot);
		*s = g;
	}
	i = dnset_slot(s, ndn, len);
	if (s->slot[i])
		return 0;
	if (!(s->slot[i] = strndup(ndn, len)))
		return -ENOMEM;
	s->n++;
	return 0;
}

static void dnset_free(struct dnset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slot[i]);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

/* ---- store side ---- */

/* "id:" + the UUID's text form, as entryUUID values are written. */
static size_t uuid_key(const struct berval *u, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 3;

	memcpy(out, "id:", 3);
	if (u->bv_len != 16) {           /* not the binary form: keep as is */
		size_t n = u->bv_len < 64 ? u->bv_len : 64;

		memcpy(out + 3, u->bv_val, n);
		return 3 + n;
	}
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[(uint8_t)u->bv_val[i] >> 4];
		out[o++] = hex[(uint8_t)u->bv_val[i] & 15];
	}
	return o;
}

static int batch_open(struct sync *s)
{
	int rc;

	if (s->in_batch)
		return 0;
	if ((rc = lfe_store_batch_begin(s->st)) < 0) {
		logf_("cannot start a store transaction: %s", strerror(-rc));
		return rc;
	}
	s->in_batch = true;
	s->in_batch_n = 0;
	return 0;
}

static void batch_abort(struct sync *s)
{
	if (!s->in_batch)
		return;
	lfe_store_batch_abort(s->st);
	s->in_batch = false;
}

/* Text form of the status; parsed back by --status. */
static int put_status(struct sync *s)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf),
			 "provider=%s\nbase=%s\napplied=%" PRIu64 "\nskipped=%" PRIu64
			 "\ndeleted=%" PRIu64 "\nrefreshes=%" PRIu64 "\nlast_change=%" PRId64
			 "\nlast_kind=%s\nlast_dn=%s\nlast_commit=%" PRId64 "\n",
			 s->o->uri, s->o->base, s->applied, s->skipped, s->deleted, s->refreshes,
			 s->last_change, s->last_kind, s->last_dn, (int64_t)time(NULL));

	if (n < 0 || (size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	return lfe_store_sync_put(s->st, LFE_SYNC_STATUS_KEY, strlen(LFE_SYNC_STATUS_KEY), buf, (size_t)n);
}

/* Counters go on from the last run's status record. */
static void load_counters(struct sync *s)
{
	char buf[LFE_STORE_SYNC_VAL_MAX + 1], v[32];
	ssize_t n = lfe_store_sync_get(s->st, LFE_SYNC_STATUS_KEY, strlen(LFE_SYNC_STATUS_KEY), buf, sizeof(buf) - 1);
	uint64_t *dst[] = { &s->applied, &s->skipped, &s->deleted, &s->refreshes };
	const char *names[] = { "applied", "skipped", "deleted", "refreshes" };

	if (n < 0)
		return;
	buf[n] = '\0';
	for (size_t i = 0; i < 4; i++)
		if (lfe_sync_status_field(buf, names[i], v, sizeof(v)) == 0)
			*dst[i] = strtoull(v, NULL, 10);
}

/* Commit the open batch with the status and, when covered, the cookie. */
static int batch_commit(struct sync *s, bool with_cookie)
{
	int rc = 0;

	if (!s->in_batch && !(with_cookie && s->cookie_dirty))
		return 0;
	if ((rc = batch_open(s)) < 0)
		return rc;
	if (with_cookie && s->cookie_dirty) {
		if (s->cookie.bv_len > LFE_STORE_COOKIE_MAX)
			rc = -E2BIG;
		else
			rc = lfe_store_sync_cookie_set(s->st, (const uint8_t *)s->cookie.bv_val,
						       s->cookie.bv_len);
	}
	if (rc == 0)
		rc = put_status(s);
	s->in_batch = false;
	if (rc < 0) {
		lfe_store_batch_abort(s->st);
	} else {
		rc = lfe_store_batch_commit(s->st);
	}
	if (rc < 0) {
		logf_("store commit failed: %s", strerror(-rc));
		return rc;
	}
	if (with_cookie)
		s->cookie_dirty = false;
	s->last_commit = time(NULL);
	return 0;
}

static void note_change(struct sync *s, const char *kind, const char *dn, size_t len)
{
	snprintf(s->last_kind, sizeof(s->last_kind), "%s", kind);
	lfe_sync_escape(dn, len, s->last_dn, sizeof(s->last_dn));   /* one line of the record */
	s->last_change = time(NULL);
}

/* Delete the entry ndn (if there) and its UUID mapping. */
static int drop_entry(struct sync *s, const char *ndn, size_t len, const char *key, size_t klen)
{
	int rc = lfe_store_del(s->st, ndn, len);

	if (rc == 0)
		s->deleted++;
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (key) {
		rc = lfe_store_sync_del(s->st, key, klen);
		if (rc < 0 && rc != -ENOENT)
			return rc;
	}
	return 0;
}

static bool bad_password_syntax(const struct lfe_ldap_attr *a)
{
	for (uint32_t i = 0; i < a->n_vals; i++) {
		const struct lfe_bytes *v = &a->vals[i];

		if (v->len == 0 || (v->p[0] == '{' && !memchr(v->p, '}', v->len)))
			return true;
	}
	return false;
}

/* Decode the entry's attributes into s->attrs (values point into msg). */
static int read_attrs(struct sync *s, LDAPMessage *msg, BerElement *ber, uint32_t *n_out)
{
	struct berval type, *bv;
	uint32_t n = 0;
	size_t nv = 0;
	int rc = 0;

	while (ldap_get_attribute_ber(s->ld, msg, ber, &type, &bv) == LDAP_SUCCESS &&
	       type.bv_val != NULL) {
		size_t k = 0;

		if (n == MAX_ATTRS) {
			ber_memfree(bv);
			rc = -E2BIG;
			break;
		}
		while (bv && bv[k].bv_val)
			k++;
		if (nv + k > s->vals_cap) {
			/* vals moves: attributes so far are rebased below */
			size_t cap = (nv + k) * 2 + 64;
			struct lfe_bytes *p = realloc(s->vals, cap * sizeof(*p));

			if (!p) {
				ber_memfree(bv);
				rc = -ENOMEM;
				break;
			}
			for (uint32_t i = 0; i < n; i++)
				s->attrs[i].vals = p + (s->attrs[i].vals - s->vals);
			s->vals = p;
			s->vals_cap = cap;
		}
		s->attrs[n].type = (struct lfe_bytes){ (const uint8_t *)type.bv_val, type.bv_len };
		s->attrs[n].vals = s->vals + nv;
		s->attrs[n].n_vals = (uint32_t)k;
		for (size_t i = 0; i < k; i++)
			s->vals[nv + i] = (struct lfe_bytes){ (const uint8_t *)bv[i].bv_val, bv[i].bv_len };
		nv += k;
		s->bvals[n++] = bv;
	}
	*n_out = n;
	return rc;
}

static void free_attrs(struct sync *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ber_memfree(s->bvals[i]);
}

struct below {
	const char *ndn;
	size_t len;
};

/* 1 at the first entry strictly below b->ndn. */
static int below_fn(void *ctx, const char *ndn, size_t len, const uint8_t *rec, size_t rl)
{
	const struct below *b = ctx;

	(void)rec;
	(void)rl;
	return len > b->len && lfe_dn_is_under(ndn, len, b->ndn, b->len);
}

/* Add or modify (the provider sends the whole entry either way). A rename
 * shows up as the same UUID under another DN. An entry the store refuses
 * is logged, counted and removed, so an older version cannot keep binding. */
static int apply_entry(struct sync *s, LDAPMessage *msg, const struct berval *uuid, int state)
{
	char ndn[LFE_DN_MAX + 1], old[LFE_DN_MAX + 1], key[80];
	const char *why = NULL;
	struct berval dn;
	BerElement *ber = NULL;
	uint32_t n = 0;
	size_t klen = uuid_key(uuid, key);
	ssize_t nl, ol;
	bool renamed = false;
	int rc;

	if (ldap_get_dn_ber(s->ld, msg, &ber, &dn) != LDAP_SUCCESS) {
		logf_("entry without a DN from the provider");
		return RUN_RETRY;
	}
	nl = lfe_dn_normalize((const uint8_t *)dn.bv_val, dn.bv_len, ndn, sizeof(ndn));
	if ((rc = batch_open(s)) < 0)
		goto out;
	ol = lfe_store_sync_get(s->st, key, klen, old, sizeof(old) - 1);
	if (nl <= 0) {
		/* A DN the store cannot hold (over LFE_DN_MAX bytes, too many
		 * RDNs or AVAs, bad syntax). If this UUID was stored under
		 * another DN, this is a rename into it: the old entry goes, or
		 * it would keep binding with its old password and lock state
		 * and every later change to it would be skipped. */
		logf_("skipped %s: invalid DN", ESC(dn.bv_val, dn.bv_len));
		s->skipped++;
		if (ol > 0) {
			struct below b = { old, (size_t)ol };

			if ((rc = lfe_store_each(s->st, below_fn, &b)) == 1) {
				logf_("subtree rename of %s: full refresh", ESC(old, (size_t)ol));
				rc = RUN_REFRESH;
				goto out;
			}
			if (rc < 0 || (rc = drop_entry(s, old, (size_t)ol, key, klen)) < 0)
				goto out;
			logf_("%s removed: renamed to a DN the store cannot hold", ESC(old, (size_t)ol));
			note_change(s, "delete", old, (size_t)ol);
		}
		rc = 0;
		goto out;
	}
	if (ol > 0 && ((size_t)ol != (size_t)nl || memcmp(old, ndn, (size_t)nl) != 0)) {
		/* Renamed. The provider sends only the entry itself: when it has
		 * entries below it here, their DNs moved too, and a full refresh
		 * (one transaction) is the exact way to follow. */
		struct below b = { old, (size_t)ol };

		if ((rc = lfe_store_each(s->st, below_fn, &b)) == 1) {
			logf_("subtree rename of %s: full refresh", ESC(old, (size_t)ol));
			rc = RUN_REFRESH;
			goto out;
		}
		/* a leaf: the old DN goes in the same transaction */
		if (rc < 0 || (rc = drop_entry(s, old, (size_t)ol, NULL, 0)) < 0)
			goto out;
		s->deleted--;
		renamed = true;
	}
	rc = read_attrs(s, msg, ber, &n);
	for (uint32_t i = 0; rc == 0 && i < n; i++)
		if (s->attrs[i].type.len == 12 &&
		    strncasecmp((const char *)s->attrs[i].type.p, "userPassword", 12) == 0 &&
		    bad_password_syntax(&s->attrs[i]))
			why = "userPassword value without a valid {SCHEME} prefix";
	if (rc == -E2BIG)
		why = "too many attributes";
	else if (rc < 0)
		goto out;
	if (!why) {
		rc = lfe_store_put(s->st, (struct lfe_bytes){ (const uint8_t *)dn.bv_val, dn.bv_len },
				   s->attrs, n, true);
		if (rc == -EINVAL || rc == -E2BIG)
			why = rc == -E2BIG ? "entry too large for the store"
					   : "outside the store's suffix, or a value too long to index";
		else if (rc < 0)
			goto out;
	}
	if (why) {
		logf_("skipped %s: %s", ESC(dn.bv_val, dn.bv_len), why);
		s->skipped++;
		rc = drop_entry(s, ndn, (size_t)nl, key, klen);
		goto out;
	}
	rc = lfe_store_sync_put(s->st, key, klen, ndn, (size_t)nl);
	if (rc < 0)
		goto out;
	if (s->track_present)
		rc = dnset_add(&s->present, ndn, (size_t)nl);
	s->applied++;
	s->in_batch_n++;
	note_change(s, renamed ? "rename" : state == LDAP_SYNC_ADD ? "add" : "modify",
		    dn.bv_val, dn.bv_len);
out:
	free_attrs(s, n);
	ber_free(ber, 0);
	if (rc < 0 && rc != RUN_RETRY && rc != RUN_REFRESH) {
		logf_("store error on %s: %s", ESC(dn.bv_val, dn.bv_len), strerror(-rc));
		return RUN_FATAL;
	}
	return rc;
}

static int sweep(struct sync *s, const char *below, size_t below_len);

/* Delete by UUID (the DN in the message is a fallback). */
static int apply_delete(struct sync *s, const struct berval *uuid, const char *dn, size_t dnlen)
{
	char ndn[LFE_DN_MAX + 1], key[80];
	size_t klen = uuid_key(uuid, key);
	ssize_t nl;
	int rc;

	if ((rc = batch_open(s)) < 0)
		return RUN_FATAL;
	nl = lfe_store_sync_get(s->st, key, klen, ndn, sizeof(ndn) - 1);
	if (nl <= 0 && dn)
		nl = lfe_dn_normalize((const uint8_t *)dn, dnlen, ndn, sizeof(ndn));
	if (nl <= 0)
		return 0;           /* never stored (skipped, or outside the filter) */
	rc = drop_entry(s, ndn, (size_t)nl, key, klen);
	if (rc < 0) {
		logf_("store error deleting %s: %s", ESC(ndn, (size_t)nl), strerror(-rc));
		return RUN_FATAL;
	}
	/* LDAP deletes leaves only: a "delete" of an entry with entries below
	 * it here means the subtree left the scope (renamed away), and they go
	 * too. Walking the store costs O(entries), so uid= entries (accounts,
	 * the frequent deletes) are taken as leaves. */
	if (!(nl > 4 && strncmp(ndn, "uid=", 4) == 0) && (rc = sweep(s, ndn, (size_t)nl)) < 0)
		return rc;
	s->in_batch_n++;
	note_change(s, "delete", ndn, (size_t)nl);
	return 0;
}

static int mark_present(struct sync *s, const struct berval *uuid, const char *dn, size_t dnlen)
{
	char ndn[LFE_DN_MAX + 1], key[80];
	size_t klen = uuid_key(uuid, key);
	ssize_t nl = -1;

	if (!s->track_present)
		return 0;
	if (batch_open(s) < 0)
		return RUN_FATAL;
	nl = lfe_store_sync_get(s->st, key, klen, ndn, sizeof(ndn) - 1);
	if (nl <= 0 && dn)
		nl = lfe_dn_normalize((const uint8_t *)dn, dnlen, ndn, sizeof(ndn));
	if (nl <= 0)
		return 0;
	return dnset_add(&s->present, ndn, (size_t)nl) < 0 ? RUN_FATAL : 0;
}

/* End of a present phase: whatever the provider did not name is gone. */
struct sweep {
	struct sync *s;
	const char *below;          /* NULL: the present phase's sweep */
	size_t below_len;
	char **gone;
	size_t n, cap;
};

static int sweep_fn(void *ctx, const char *ndn, size_t len, const uint8_t *rec, size_t rl)
{
	struct sweep *w = ctx;
	struct lfe_bytes list, v = { NULL, 0 };
	uint32_t nv;
	char *g;

	if (w->below ? !(len > w->below_len && lfe_dn_is_under(ndn, len, w->below, w->below_len))
		     : dnset_has(&w->s->present, ndn, len))
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		char **p = realloc(w->gone, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->gone = p;
		w->cap = cap;
	}
	/* "ndn\0id:<entryUUID>" (the map key, from the record) */
	if (lfe_record_find_attr(rec, rl, "entryUUID", 9, &nv, &list) == 1 && nv > 0)
		lfe_record_next_val(&list, &v);
	if (v.len > 64)
		v.len = 0;
	if (!(g = malloc(len + 1 + 3 + v.len + 1)))
		return -ENOMEM;
	memcpy(g, ndn, len);
	g[len] = '\0';
	memcpy(g + len + 1, "id:", 3);
	if (v.len)
		memcpy(g + len + 4, v.p, v.len);
	g[len + 4 + v.len] = '\0';
	w->gone[w->n++] = g;
	return 0;
}

/* Delete what the sweep collects: entries not named in the present phase
 * (below == NULL), or every entry strictly below `below`. */
static int sweep(struct sync *s, const char *below, size_t below_len)
{
	struct sweep w = { .s = s, .below = below, .below_len = below_len };
	int rc;

	if (batch_open(s) < 0)
		return RUN_FATAL;
	rc = lfe_store_each(s->st, sweep_fn, &w);
	for (size_t i = 0; i < w.n; i++) {
		const char *ndn = w.gone[i], *key = ndn + strlen(ndn) + 1;

		if (rc == 0) {
			rc = drop_entry(s, ndn, strlen(ndn), strlen(key) > 3 ? key : NULL, strlen(key));
			if (rc == 0)
				note_change(s, "delete", ndn, strlen(ndn));
		}
		free(w.gone[i]);
	}
	free(w.gone);
	if (rc < 0) {
		logf_("store error while sweeping: %s", strerror(-rc));
		return RUN_FATAL;
	}
	if (w.n && below)
		logf_("%s left the search scope: %zu entries below it removed", ESC(below, below_len),
		      w.n);
	else if (w.n)
		logf_("present phase: %zu entries no longer on the provider removed", w.n);
	return 0;
}

/* ---- protocol ---- */

static void set_cookie(struct sync *s, const struct berval *c)
{
	if (!c->bv_val)
		return;
	if (s->cookie.bv_len == c->bv_len && s->cookie.bv_val &&
	    memcmp(s->cookie.bv_val, c->bv_val, c->bv_len) == 0)
		return;
	ber_bvreplace(&s->cookie, c);
	s->cookie_dirty = true;
}

/* The refresh phase ended (syncInfo refreshPresent/refreshDelete with
 * refreshDone, or syncDone of refreshOnly): sweep after a present phase,
 * commit everything with the cookie. */
static int refresh_done(struct sync *s, bool present_phase)
{
	int rc;

	if (present_phase && s->track_present && (rc = sweep(s, NULL, 0)) < 0)
		return rc;
	if (s->chunked) {
		if (batch_open(s) < 0)
			return RUN_FATAL;
		rc = lfe_store_sync_del(s->st, INITIAL_KEY, strlen(INITIAL_KEY));
		if (rc < 0 && rc != -ENOENT)
			return RUN_FATAL;
	}
	s->cookie_dirty = true;     /* write it even if unchanged: marks the end */
	s->refreshes++;
	if (batch_commit(s, true) < 0)
		return RUN_FATAL;
	logf_("refresh done: %" PRIu64 " entries in %.2f s (%.0f entries/s), %" PRIu64 " skipped",
	      s->refresh_n, since(&s->refresh_t0),
	      s->refresh_n / (since(&s->refresh_t0) > 1e-6 ? since(&s->refresh_t0) : 1e-6),
	      s->skipped);
	s->refreshing = false;
	s->chunked = false;
	s->track_present = false;
	dnset_free(&s->present);
	return 0;
}

static int on_entry(struct sync *s, LDAPMessage *msg)
{
	LDAPControl **ctrls = NULL, *c;
	BerElement *ber = NULL;
	struct berval uuid = { 0 }, cookie = { 0 };
	ber_len_t len;
	ber_int_t state = -1;
	char *dn = NULL;
	int rc = RUN_RETRY;

	if (ldap_get_entry_controls(s->ld, msg, &ctrls) != LDAP_SUCCESS ||
	    !(c = ldap_control_find(LDAP_CONTROL_SYNC_STATE, ctrls, NULL)) ||
	    !(ber = ber_init(&c->ldctl_value)) ||
	    ber_scanf(ber, "{em", &state, &uuid) == LBER_ERROR || uuid.bv_len == 0) {
		logf_("entry without a valid Sync State control");
		goto out;
	}
	if (ber_peek_tag(ber, &len) == LDAP_TAG_SYNC_COOKIE &&
	    ber_scanf(ber, "m", &cookie) == LBER_ERROR)
		goto out;
	switch (state) {
	case LDAP_SYNC_ADD:
	case LDAP_SYNC_MODIFY:
		rc = apply_entry(s, msg, &uuid, state);
		if (rc == 0 && s->refreshing)
			s->refresh_n++;
		break;
	case LDAP_SYNC_DELETE:
		dn = ldap_get_dn(s->ld, msg);
		rc = apply_delete(s, &uuid, dn, dn ? strlen(dn) : 0);
		break;
	case LDAP_SYNC_PRESENT:
		dn = ldap_get_dn(s->ld, msg);
		rc = mark_present(s, &uuid, dn, dn ? strlen(dn) : 0);
		break;
	default:
		logf_("unknown sync state %d", (int)state);
		goto out;
	}
	if (rc < 0)
		goto out;
	set_cookie(s, &cookie);
	if (!s->refreshing)
		rc = batch_commit(s, true) < 0 ? RUN_FATAL : 0;     /* persist: at once */
	else if (s->chunked && s->in_batch_n >= s->o->batch) {
		rc = batch_commit(s, false) < 0 ? RUN_FATAL : 0;    /* no cookie yet */
		if (rc == 0 && s->refresh_n % (s->o->batch * 10) == s->o->batch)
			logf_("initial refresh: %" PRIu64 " entries committed", s->refresh_n);
	}
out:
	ldap_memfree(dn);
	if (ber)
		ber_free(ber, 1);
	ldap_controls_free(ctrls);
	return rc;
}

static int on_intermediate(struct sync *s, LDAPMessage *msg)
{
	char *oid = NULL;
	struct berval *data = NULL, cookie = { 0 };
	BerElement *ber = NULL;
	BerVarray uuids = NULL;
	ber_tag_t tag;
	ber_len_t len;
	ber_int_t done = 1, deletes = 0;
	int rc = RUN_RETRY;

	if (ldap_parse_intermediate(s->ld, msg, &oid, &data, NULL, 0) != LDAP_SUCCESS ||
	    !oid || strcmp(oid, LDAP_SYNC_INFO) != 0 || !data || !(ber = ber_init(data))) {
		logf_("unexpected intermediate response");
		goto out;
	}
	tag = ber_peek_tag(ber, &len);
	switch (tag) {
	case LDAP_TAG_SYNC_NEW_COOKIE:
		if (ber_scanf(ber, "m", &cookie) == LBER_ERROR)
			goto out;
		set_cookie(s, &cookie);
		rc = s->refreshing ? 0 : batch_commit(s, true) < 0 ? RUN_FATAL : 0;
		break;
	case LDAP_TAG_SYNC_REFRESH_DELETE:
	case LDAP_TAG_SYNC_REFRESH_PRESENT:
		if (ber_scanf(ber, "{") == LBER_ERROR)
			goto out;
		if (ber_peek_tag(ber, &len) == LDAP_TAG_SYNC_COOKIE &&
		    ber_scanf(ber, "m", &cookie) == LBER_ERROR)
			goto out;
		if (ber_peek_tag(ber, &len) == LDAP_TAG_REFRESHDONE &&
		    ber_scanf(ber, "b", &done) == LBER_ERROR)
			goto out;
		set_cookie(s, &cookie);
		rc = 0;
		if (tag == LDAP_TAG_SYNC_REFRESH_PRESENT && !done && s->track_present)
			rc = sweep(s, NULL, 0);        /* a delete phase follows */
		if (rc == 0 && done)
			rc = refresh_done(s, tag == LDAP_TAG_SYNC_REFRESH_PRESENT);
		break;
	case LDAP_TAG_SYNC_ID_SET:
		if (ber_scanf(ber, "{") == LBER_ERROR)
			goto out;
		if (ber_peek_tag(ber, &len) == LDAP_TAG_SYNC_COOKIE &&
		    ber_scanf(ber, "m", &cookie) == LBER_ERROR)
			goto out;
		if (ber_peek_tag(ber, &len) == LDAP_TAG_REFRESHDELETES &&
		    ber_scanf(ber, "b", &deletes) == LBER_ERROR)
			goto out;
		if (ber_scanf(ber, "[W]}", &uuids) == LBER_ERROR || !uuids)
			goto out;
		rc = 0;
		for (size_t i = 0; rc == 0 && uuids[i].bv_val; i++)
			rc = deletes ? apply_delete(s, &uuids[i], NULL, 0)
				     : mark_present(s, &uuids[i], NULL, 0);
		if (rc == 0) {
			set_cookie(s, &cookie);
			if (!s->refreshing)
				rc = batch_commit(s, true) < 0 ? RUN_FATAL : 0;
		}
		break;
	default:
		logf_("unknown syncInfo message (tag 0x%lx)", (unsigned long)tag);
		goto out;
	}
out:
	ber_bvarray_free(uuids);
	if (ber)
		ber_free(ber, 1);
	ber_bvfree(data);
	ldap_memfree(oid);
	return rc;
}

static int on_result(struct sync *s, LDAPMessage *msg)
{
	LDAPControl **ctrls = NULL, *c;
	char *text = NULL;
	int err = LDAP_OTHER, rc;

	if (ldap_parse_result(s->ld, msg, &err, NULL, &text, NULL, &ctrls, 0) != LDAP_SUCCESS) {
		logf_("cannot parse the search result");
		return RUN_RETRY;
	}
	if (err == LDAP_SYNC_REFRESH_REQUIRED) {
		logf_("provider asks for a full refresh (e-syncRefreshRequired)");
		rc = RUN_REFRESH;
	} else if (err == LDAP_UNAVAILABLE_CRITICAL_EXTENSION) {
		logf_("%s does not support the Content Synchronization control (%s): "
		      "load the syncprov overlay on the provider", s->o->uri, LDAP_CONTROL_SYNC);
		rc = RUN_FATAL;
	} else if (err == LDAP_NO_SUCH_OBJECT && s->refreshes > 0) {
		/* The base we were in sync with is gone: its content is empty.
		 * Keeping the old entries would keep their passwords working. */
		logf_("search base %s no longer exists on the provider: emptying the store, "
		      "retrying", s->o->base);
		if (batch_open(s) < 0 || lfe_store_clear(s->st) < 0 ||
		    lfe_store_sync_cookie_set(s->st, NULL, 0) < 0 || batch_commit(s, false) < 0)
			rc = RUN_FATAL;
		else
			rc = RUN_RETRY;
	} else if (err != LDAP_SUCCESS) {
		logf_("sync search on %s failed: %s (%d)%s%s", s->o->base, ldap_err2string(err), err,
		      text && *text ? ": " : "", text ? ESC(text, strlen(text)) : "");
		rc = err == LDAP_BUSY || err == LDAP_UNAVAILABLE || err == LDAP_SERVER_DOWN ||
		     err == LDAP_TIMELIMIT_EXCEEDED ? RUN_RETRY : RUN_FATAL;
	} else {
		/* refreshOnly: syncDoneValue { cookie?, refreshDeletes? } */
		struct berval cookie = { 0 };
		ber_int_t deletes = 0;
		ber_len_t len;
		BerElement *ber = NULL;

		rc = RUN_RETRY;
		if ((c = ldap_control_find(LDAP_CONTROL_SYNC_DONE, ctrls, NULL)) &&
		    (ber = ber_init(&c->ldctl_value)) && ber_scanf(ber, "{") != LBER_ERROR) {
			if (ber_peek_tag(ber, &len) == LDAP_TAG_SYNC_COOKIE)
				ber_scanf(ber, "m", &cookie);
			if (ber_peek_tag(ber, &len) == LDAP_TAG_REFRESHDELETES)
				ber_scanf(ber, "b", &deletes);
			set_cookie(s, &cookie);
			rc = s->refreshing ? refresh_done(s, !deletes) : 0;
			if (rc == 0)
				rc = RUN_STOP;
		} else {
			logf_("search ended without a Sync Done control");
		}
		if (ber)
			ber_free(ber, 1);
	}
	ldap_memfree(text);
	ldap_controls_free(ctrls);
	return rc;
}

/* ---- connection ---- */

static void disconnect(struct sync *s)
{
	if (s->ld)
		ldap_unbind_ext_s(s->ld, NULL, NULL);
	s->ld = NULL;
}

/* The provider's certificate is always checked, whatever LDAPTLS_REQCERT,
 * ldap.conf or an ldaprc say (TLS_REQCERT never/allow/try would let an
 * impostor take the bind password and plant entries): demand on this
 * handle, TLS 1.2 at least, then a context of its own built from these
 * options (LDAP_OPT_X_TLS_NEWCTX), so no global context is used. */
static int tls_demand(struct sync *s)
{
	int demand = LDAP_OPT_X_TLS_DEMAND, min = LDAP_OPT_X_TLS_PROTOCOL_TLS1_2, zero = 0, rc;

	if ((rc = ldap_set_option(s->ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &demand)) != LDAP_OPT_SUCCESS ||
	    (rc = ldap_set_option(s->ld, LDAP_OPT_X_TLS_PROTOCOL_MIN, &min)) != LDAP_OPT_SUCCESS)
		return rc;
	if (s->o->cacert &&
	    (rc = ldap_set_option(s->ld, LDAP_OPT_X_TLS_CACERTFILE, s->o->cacert)) != LDAP_OPT_SUCCESS)
		return rc;
	return ldap_set_option(s->ld, LDAP_OPT_X_TLS_NEWCTX, &zero);
}

/* Connect and bind. RUN_STOP (0) on success, RUN_FATAL for errors a retry
 * will not fix (credentials, TLS setup, URI syntax), RUN_RETRY otherwise. */
static int connect_provider(struct sync *s)
{
	struct timeval tmo = { 5, 0 };
	struct berval cred = { s->pw_len, s->pw };
	int v3 = LDAP_VERSION3, rc;

	if ((rc = ldap_initialize(&s->ld, s->o->uri)) != LDAP_SUCCESS) {
		logf_("invalid provider URI %s: %s", s->o->uri, ldap_err2string(rc));
		return RUN_FATAL;
	}
	ldap_set_option(s->ld, LDAP_OPT_PROTOCOL_VERSION, &v3);
	ldap_set_option(s->ld, LDAP_OPT_NETWORK_TIMEOUT, &tmo);
	ldap_set_option(s->ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	if ((rc = tls_demand(s)) != LDAP_SUCCESS) {
		logf_("cannot set up TLS for %s: %s", s->o->uri, ldap_err2string(rc));
		disconnect(s);
		return RUN_FATAL;
	}
	if (s->o->starttls && (rc = ldap_start_tls_s(s->ld, NULL, NULL)) != LDAP_SUCCESS) {
		if (rc == LDAP_SERVER_DOWN)
			logf_("cannot reach %s: %s (%d)", s->o->uri, ldap_err2string(rc), rc);
		else
			logf_("StartTLS with %s failed: %s", s->o->uri, ldap_err2string(rc));
		goto fail;
	}
	rc = ldap_sasl_bind_s(s->ld, s->o->binddn ? s->o->binddn : "", LDAP_SASL_SIMPLE,
			      &cred, NULL, NULL, NULL);
	if (rc != LDAP_SUCCESS) {
		if (rc == LDAP_INVALID_CREDENTIALS || rc == LDAP_INAPPROPRIATE_AUTH ||
		    rc == LDAP_UNWILLING_TO_PERFORM) {
			logf_("the provider %s refused the bind as \"%s\": %s (%d)", s->o->uri,
			      s->o->binddn ? s->o->binddn : "", ldap_err2string(rc), rc);
			disconnect(s);
			return RUN_FATAL;
		}
		logf_("cannot reach %s: %s (%d)", s->o->uri, ldap_err2string(rc), rc);
		goto fail;
	}
	return RUN_STOP;
fail:
	disconnect(s);
	return rc == LDAP_SERVER_DOWN || rc == LDAP_CONNECT_ERROR || rc == LDAP_TIMEOUT ||
	       rc == LDAP_BUSY || rc == LDAP_UNAVAILABLE ? RUN_RETRY : RUN_FATAL;
}

/* Decide how the coming refresh writes (sync.h) and send the request. */
static int start_search(struct sync *s, bool refresh_and_persist)
{
	uint8_t ck[LFE_STORE_COOKIE_MAX];
	struct lfe_store_info info;
	LDAPControl ctrl = { 0 }, *ctrls[2] = { &ctrl, NULL };
	BerElement *ber;
	ssize_t cl;
	int rc, mode = refresh_and_persist ? LDAP_SYNC_REFRESH_AND_PERSIST : LDAP_SYNC_REFRESH_ONLY;

	cl = lfe_store_sync_cookie_get(s->st, ck, sizeof(ck));
	ber_memfree(s->cookie.bv_val);
	s->cookie = (struct berval){ 0 };
	s->cookie_dirty = false;
	if (cl > 0) {
		struct berval b = { (ber_len_t)cl, (char *)ck };
		ber_dupbv(&s->cookie, &b);
	}
	s->have_cookie = cl > 0;
	s->refreshing = true;
	s->chunked = false;
	s->track_present = false;
	s->refresh_n = 0;
	clock_gettime(CLOCK_MONOTONIC, &s->refresh_t0);
	if (!s->have_cookie) {
		/* Full content follows: start from an empty store. In chunks when
		 * nobody can be served from it yet (empty, or our own half-done
		 * initial refresh); else in one transaction (atomic swap). */
		uint8_t one;
		bool initial = lfe_store_sync_get(s->st, INITIAL_KEY, strlen(INITIAL_KEY), &one, 1) >= 0;

		if (lfe_store_info(s->st, &info) < 0)
			return RUN_FATAL;
		s->chunked = info.entries == 0 || initial;
		if (batch_open(s) < 0 || lfe_store_clear(s->st) < 0)
			return RUN_FATAL;
		if (s->chunked && (lfe_store_sync_put(s->st, INITIAL_KEY, strlen(INITIAL_KEY), "1", 1) < 0 ||
				   batch_commit(s, false) < 0))
			return RUN_FATAL;
		logf_("full refresh from %s (%s)", s->o->uri,
		      s->chunked ? "initial load, in batches" : "replacing the store at once");
	} else {
		s->track_present = true;
	}
	if (!(ber = ber_alloc_t(LBER_USE_DER)))
		return RUN_FATAL;
	if (s->have_cookie)
		rc = ber_printf(ber, "{eOb}", mode, &s->cookie, 0);
	else
		rc = ber_printf(ber, "{eb}", mode, 0);
	if (rc < 0 || ber_flatten2(ber, &ctrl.ldctl_value, 0) < 0) {
		ber_free(ber, 1);
		return RUN_FATAL;
	}
	ctrl.ldctl_oid = (char *)LDAP_CONTROL_SYNC;
	ctrl.ldctl_iscritical = 1;
	rc = ldap_search_ext(s->ld, s->o->base, s->o->scope, s->o->filter, (char **)s->o->attrs, 0,
			     ctrls, NULL, NULL, 0, &s->msgid);
	ber_free(ber, 1);
	if (rc != LDAP_SUCCESS) {
		logf_("cannot send the sync search: %s", ldap_err2string(rc));
		return RUN_RETRY;
	}
	return 0;
}

/* One search, read to its end (refreshOnly), or until stopped or broken. */
static int run_search(struct sync *s, bool persist)
{
	int rc = start_search(s, persist);

	while (rc == 0) {
		struct timeval tv = { 0, 500000 };
		LDAPMessage *msg = NULL;
		int t;

		if (stop_flag)
			return RUN_STOP;
		t = ldap_result(s->ld, s->msgid, LDAP_MSG_ONE, &tv, &msg);
		if (t == 0)
			continue;
		if (t < 0) {
			int err = 0;

			if (stop_flag)
				return RUN_STOP;
			ldap_get_option(s->ld, LDAP_OPT_RESULT_CODE, &err);
			logf_("connection to %s lost: %s", s->o->uri, ldap_err2string(err));
			return RUN_RETRY;
		}
		switch (t) {
		case LDAP_RES_SEARCH_ENTRY:
			rc = on_entry(s, msg);
			break;
		case LDAP_RES_INTERMEDIATE:
			rc = on_intermediate(s, msg);
			break;
		case LDAP_RES_SEARCH_RESULT:
			rc = on_result(s, msg);
			ldap_msgfree(msg);
			return rc;
		default:
			break;              /* references: not followed */
		}
		ldap_msgfree(msg);
	}
	return rc;
}

static void sleep_interruptible(double secs)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop_flag && since(&t0) < secs) {
		struct timespec ts = { 0, 100000000 };
		nanosleep(&ts, NULL);
	}
}

static int run(struct sync *s)
{
	double backoff = 0.5;
	bool ever = false;      /* connected and bound once: later losses are retried */

	for (;;) {
		int rc;

		if (stop_flag)
			return LFE_EXIT_OK;
		rc = connect_provider(s);
		if (rc == RUN_STOP && !ever && lfe_sync_check_access(s->ld, s->o) < 0 &&
		    s->o->require_lock_attrs) {
			logf_("refusing to start (--require-lock-attrs)");
			return LFE_EXIT_FAIL;
		}
		if (rc == RUN_STOP) {
			ever = true;
			rc = run_search(s, !s->o->once && s->o->interval == 0);
		}
		batch_abort(s);
		disconnect(s);
		if (rc == RUN_REFRESH) {
			/* Forget the cookie: the next search is a full refresh,
			 * written in one transaction over the current content. */
			if (lfe_store_sync_cookie_set(s->st, NULL, 0) < 0)
				return LFE_EXIT_FAIL;
			continue;
		}
		if (rc == RUN_FATAL)
			return LFE_EXIT_FAIL;
		if (rc == RUN_STOP) {
			if (stop_flag || s->o->once)
				return LFE_EXIT_OK;
			backoff = 0.5;
			sleep_interruptible(s->o->interval);
			continue;
		}
		if (!ever) {
			logf_("giving up: %s cannot be reached", s->o->uri);
			return LFE_EXIT_FAIL;
		}
		logf_("reconnecting in %.1f s", backoff);
		sleep_interruptible(backoff);
		backoff = backoff * 2 > s->o->max_backoff ? s->o->max_backoff : backoff * 2;
	}
}

char *lfe_sync_escape(const char *p, size_t n, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t c = (uint8_t)p[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '\\';

		if (o + (plain ? 1 : 4) + 3 >= cap) {       /* room for "..." and NUL */
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (plain) {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return out;
}

int lfe_sync_status_field(const char *st, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);

	for (const char *p = st; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
			const char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p - nl - 1) : strlen(p + nl + 1);

			snprintf(out, cap, "%.*s", (int)n, p + nl + 1);
			return 0;
		}
	}
	snprintf(out, cap, "-");
	return -ENOENT;
}

int lfe_sync_run(struct lfe_store *st, const struct lfe_sync_opts *o, const char *pw,
		 size_t pw_len)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sync *s;
	int rc;

	if (pw_len > sizeof(s->pw)) {
		logf_("password too long");
		return LFE_EXIT_FAIL;
	}
	if (!(s = calloc(1, sizeof(*s)))) {
		logf_("out of memory");
		return LFE_EXIT_FAIL;
	}
	s->o = o;
	s->st = st;
	memcpy(s->pw, pw, pw_len);
	s->pw_len = pw_len;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	load_counters(s);
	rc = run(s);
	batch_abort(s);
	disconnect(s);
	dnset_free(&s->present);
	ber_memfree(s->cookie.bv_val);
	free(s->vals);
	explicit_bzero(s->pw, sizeof(s->pw));
	free(s);
	return rc;
}
