/* tests/backend/test_sync_engine.c — the sync consumer's state machine
 * (mgmt/sync.c, the engine of `ldapfectl sync`) against a scripted
 * provider: a fake RFC 4533 server on a loopback socket, written with
 * liblber, that answers the bind, checks the search's Sync Request control
 * (mode and the cookie the consumer kept), then sends one step's messages.
 * The consumer is lfe_sync_run itself, unchanged, in a child process per
 * step (its stop flag and signal handlers are per process); after each step
 * the parent opens the store and checks the entries, the entryUUID map and
 * the stored cookie.
 *
 * Why a fake provider rather than a seam in sync.c: the engine reads
 * libldap's LDAPMessage (controls, intermediate responses, attributes
 * through BerElement), so a seam taking decoded messages would move code
 * that another change is editing, and would leave the decoding of the sync
 * controls and syncInfo values untested. Over a socket the whole engine
 * runs as shipped, the decoding included, and the script states exactly
 * what a provider sends: states per entry, a present phase, a delete
 * phase, syncIdSet (deletes and present), a UUID the map does not know,
 * a cookie-only syncInfo, and the cookie in each place it can travel.
 *
 * Steps (each asserts the store and the cookie afterwards):
 *  1 initial refresh, refreshOnly: suffix, a, b, c added      cookie c1
 *    (then the test adds d directly, as an import would: no UUID mapping)
 *  2 refresh from c1 with a present phase: suffix, a present by UUID,
 *    d present by a UUID the map misses (found by DN), b modified, c not
 *    named → swept; syncDone refreshDeletes FALSE              cookie c2
 *  3 refresh from c2 with a delete phase: syncIdSet deletes {a}, b deleted
 *    by state; syncDone refreshDeletes TRUE: no sweep, d stays cookie c3
 *  4 refreshAndPersist from c3: refreshDelete done (c4), then d modified
 *    (now mapped) and e added in persist mode, e with its cookie in the
 *    state control                                             cookie c5
 *  5 persist: refresh done without a cookie, a cookie-only syncInfo
 *    (newcookie c6), then the search ends                      cookie c6
 *  6 persist: refreshPresent done (present phase naming everything by a
 *    syncIdSet of present UUIDs, c7), then syncIdSet deletes {e} (c8)
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <lber.h>
#include <ldap.h>

#include "backend/record.h"
#include "backend/store.h"
#include "mgmt/sync_run.h"
#include "tests/check.h"

#define SUFFIX "dc=example,dc=com"

/* ---- the fake provider's wire ---- */

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = write(fd, c, n);
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

static int read_full(int fd, uint8_t *p, size_t n)
{
	while (n) {
		struct pollfd pf = { fd, POLLIN, 0 };
		if (poll(&pf, 1, 10000) != 1)
			return -1;
		ssize_t k = read(fd, p, n);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One LDAPMessage (definite length) into buf; its length or -1. */
static ssize_t read_msg(int fd, uint8_t *buf, size_t cap)
{
	size_t len = 0, hl = 2;

	if (read_full(fd, buf, 2) < 0 || buf[0] != 0x30)
		return -1;
	if (buf[1] & 0x80) {
		size_t k = buf[1] & 0x7f;
		if (k == 0 || k > 3 || read_full(fd, buf + 2, k) < 0)
			return -1;
		for (size_t i = 0; i < k; i++)
			len = len << 8 | buf[2 + i];
		hl += k;
	} else {
		len = buf[1];
	}
	if (hl + len > cap || read_full(fd, buf + hl, len) < 0)
		return -1;
	return (ssize_t)(hl + len);
}

static void send_ber(int fd, BerElement *b)
{
	struct berval bv;

	if (ber_flatten2(b, &bv, 0) < 0 || write_all(fd, bv.bv_val, bv.bv_len) < 0)
		CHECK(0, "provider: cannot send");
	ber_free(b, 1);
}

static BerElement *ber_new(void)
{
	BerElement *b = ber_alloc_t(LBER_USE_DER);

	if (!b)
		abort();
	return b;
}

/* The value of a BerElement built by the caller, as a berval (owned). */
static struct berval *value_of(BerElement *b)
{
	struct berval *bv = NULL;

	if (ber_flatten(b, &bv) < 0)
		abort();
	ber_free(b, 1);
	return bv;
}

/* ---- UUIDs and cookies ---- */

/* 16 binary bytes, as OpenLDAP sends syncUUIDs; entryUUID is their text. */
static struct berval uuid_of(char id)
{
	static char u[26][16];
	int k = id - 'a';

	for (int i = 0; i < 16; i++)
		u[k][i] = i == 0 ? (char)(k + 1) : (char)(0x40 + i);
	return (struct berval){ 16, u[k] };
}

static void uuid_text(char id, char *out)
{
	struct berval u = uuid_of(id);
	size_t o = 0;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		o += (size_t)sprintf(out + o, "%02x", (uint8_t)u.bv_val[i]);
	}
}

static struct berval bv(const char *s)
{
	return (struct berval){ s ? strlen(s) : 0, (char *)s };
}

/* ---- messages a provider sends ---- */

struct req {
	int msgid;
	int mode;                   /* LDAP_SYNC_REFRESH_ONLY / _AND_PERSIST */
	char cookie[64];            /* "" when the request carried none */
};

static int entry_id;            /* msgid of the search being answered */

/* SearchResultEntry of uid=<id> (the suffix for '@') with a Sync State
 * control. attrs: NULL (a present or delete message: DN only), or the
 * entry with userPassword pw. */
static void send_entry(int fd, char id, int state, const char *pw, const char *cookie)
{
	char dn[64], ut[40], uid[2] = { id, 0 };
	struct berval u = id == '@' ? uuid_of('z') : uuid_of(id), ck = bv(cookie);
	BerElement *c = ber_new(), *b = ber_new();

	if (id == '@')
		snprintf(dn, sizeof dn, SUFFIX);
	else
		snprintf(dn, sizeof dn, "uid=%c," SUFFIX, id);
	uuid_text(id == '@' ? 'z' : id, ut);
	ber_printf(c, "{eO", state, &u);
	if (cookie)
		ber_printf(c, "O", &ck);
	ber_printf(c, "N}");
	struct berval *cv = value_of(c);

	ber_printf(b, "{it{s{", entry_id, (ber_tag_t)LDAP_RES_SEARCH_ENTRY, dn);
	if (pw && id == '@') {
		ber_printf(b, "{s[ss]}", "objectClass", "top", "domain");
		ber_printf(b, "{s[s]}", "entryUUID", ut);
	} else if (pw) {
		ber_printf(b, "{s[s]}", "objectClass", "inetOrgPerson");
		ber_printf(b, "{s[s]}", "uid", uid);
		ber_printf(b, "{s[s]}", "userPassword", pw);
		ber_printf(b, "{s[s]}", "entryUUID", ut);
	}
	ber_printf(b, "N}N}");
	ber_printf(b, "t{{sON}}N}", (ber_tag_t)LDAP_TAG_CONTROLS, LDAP_CONTROL_SYNC_STATE, cv);
	ber_bvfree(cv);
	send_ber(fd, b);
}

/* IntermediateResponse syncInfo with the value built in v. */
static void send_info(int fd, BerElement *v)
{
	struct berval *val = value_of(v);
	BerElement *b = ber_new();

	ber_printf(b, "{it{tstON}N}", entry_id, (ber_tag_t)LDAP_RES_INTERMEDIATE,
		   (ber_tag_t)LDAP_TAG_IM_RES_OID, LDAP_SYNC_INFO, (ber_tag_t)LDAP_TAG_IM_RES_VALUE,
		   val);
	ber_bvfree(val);
	send_ber(fd, b);
}

static void info_newcookie(int fd, const char *cookie)
{
	BerElement *v = ber_new();
	struct berval ck = bv(cookie);

	ber_printf(v, "tO", (ber_tag_t)LDAP_TAG_SYNC_NEW_COOKIE, &ck);
	send_info(fd, v);
}

/* refreshDelete / refreshPresent { cookie?, refreshDone } */
static void info_refresh(int fd, ber_tag_t tag, const char *cookie, int done)
{
	BerElement *v = ber_new();
	struct berval ck = bv(cookie);

	ber_printf(v, "t{", tag);
	if (cookie)
		ber_printf(v, "O", &ck);
	if (!done)
		ber_printf(v, "b", 0);
	ber_printf(v, "N}");
	send_info(fd, v);
}

/* syncIdSet { cookie?, refreshDeletes, syncUUIDs } of the ids in ids */
static void info_idset(int fd, const char *cookie, int deletes, const char *ids)
{
	BerElement *v = ber_new();
	struct berval ck = bv(cookie);

	ber_printf(v, "t{", (ber_tag_t)LDAP_TAG_SYNC_ID_SET);
	if (cookie)
		ber_printf(v, "O", &ck);
	if (deletes)
		ber_printf(v, "b", 1);
	ber_printf(v, "[");
	for (const char *p = ids; *p; p++) {
		struct berval u = uuid_of(*p == '@' ? 'z' : *p);
		ber_printf(v, "O", &u);
	}
	ber_printf(v, "N]N}");
	send_info(fd, v);
}

/* SearchResultDone: code, with a syncDone control when done_ctl. */
static void send_done(int fd, int code, int done_ctl, const char *cookie, int deletes)
{
	BerElement *b = ber_new();

	ber_printf(b, "{it{essN}", entry_id, (ber_tag_t)LDAP_RES_SEARCH_RESULT, code, "", "");
	if (done_ctl) {
		BerElement *v = ber_new();
		struct berval ck = bv(cookie);

		ber_printf(v, "{");
		if (cookie)
			ber_printf(v, "O", &ck);
		if (deletes)
			ber_printf(v, "b", 1);
		ber_printf(v, "N}");
		struct berval *val = value_of(v);
		ber_printf(b, "t{{sON}N}", (ber_tag_t)LDAP_TAG_CONTROLS, LDAP_CONTROL_SYNC_DONE, val);
		ber_bvfree(val);
	}
	ber_printf(b, "N}");
	send_ber(fd, b);
}

/* Accept the consumer, answer its bind, read its search: 0 and *r, or -1. */
static int serve_start(int lfd, int *cfd, struct req *r)
{
	static uint8_t buf[65536];
	struct pollfd pf = { lfd, POLLIN, 0 };
	ssize_t n;
	struct berval m;
	BerElement *ber;
	ber_int_t msgid;
	ber_tag_t tag;
	ber_len_t len;

	memset(r, 0, sizeof *r);
	if (poll(&pf, 1, 10000) != 1 || (*cfd = accept(lfd, NULL, NULL)) < 0)
		return -1;
	/* bind */
	if ((n = read_msg(*cfd, buf, sizeof buf)) < 0)
		return -1;
	m = (struct berval){ (ber_len_t)n, (char *)buf };
	ber = ber_init(&m);
	if (!ber || ber_scanf(ber, "{i", &msgid) == LBER_ERROR ||
	    ber_peek_tag(ber, &len) != LDAP_REQ_BIND)
		return -1;
	ber_free(ber, 1);
	BerElement *b = ber_new();
	ber_printf(b, "{it{essN}N}", msgid, (ber_tag_t)LDAP_RES_BIND, 0, "", "");
	send_ber(*cfd, b);
	/* search, its Sync Request control; a search without controls first
	 * is the consumer's check of the lock attributes' access (sync_access.c):
	 * it gets no entries, so no Compare follows */
	for (int k = 0;; k++) {
		if (k == 2 || (n = read_msg(*cfd, buf, sizeof buf)) < 0)
			return -1;
		m = (struct berval){ (ber_len_t)n, (char *)buf };
		ber = ber_init(&m);
		if (!ber || ber_scanf(ber, "{i", &msgid) == LBER_ERROR ||
		    ber_peek_tag(ber, &len) != LDAP_REQ_SEARCH || ber_scanf(ber, "x") == LBER_ERROR)
			return -1;
		if (ber_peek_tag(ber, &len) == LDAP_TAG_CONTROLS)
			break;
		ber_free(ber, 1);
		b = ber_new();
		ber_printf(b, "{it{essN}N}", msgid, (ber_tag_t)LDAP_RES_SEARCH_RESULT, 0, "", "");
		send_ber(*cfd, b);
	}
	if (ber_scanf(ber, "{") == LBER_ERROR)
		return -1;
	r->msgid = msgid;
	r->mode = -1;
	while ((tag = ber_peek_tag(ber, &len)) == LBER_SEQUENCE) {
		struct berval oid = { 0 }, val = { 0 };
		ber_int_t crit = 0;

		if (ber_scanf(ber, "{m", &oid) == LBER_ERROR)
			return -1;
		if (ber_peek_tag(ber, &len) == LBER_BOOLEAN)
			ber_scanf(ber, "b", &crit);
		if (ber_peek_tag(ber, &len) == LBER_OCTETSTRING)
			ber_scanf(ber, "m", &val);
		ber_scanf(ber, "}");
		if (oid.bv_len == strlen(LDAP_CONTROL_SYNC) &&
		    memcmp(oid.bv_val, LDAP_CONTROL_SYNC, oid.bv_len) == 0) {
			BerElement *v = ber_init(&val);
			ber_int_t mode;
			struct berval ck = { 0 };

			if (!v || ber_scanf(v, "{e", &mode) == LBER_ERROR)
				return -1;
			if (ber_peek_tag(v, &len) == LBER_OCTETSTRING)
				ber_scanf(v, "m", &ck);
			r->mode = mode;
			snprintf(r->cookie, sizeof r->cookie, "%.*s", (int)ck.bv_len,
				 ck.bv_val ? ck.bv_val : "");
			ber_free(v, 1);
		}
	}
	ber_free(ber, 1);
	entry_id = msgid;
	return r->mode >= 0 ? 0 : -1;
}

/* ---- the consumer, one step per child ---- */

static char store_dir[64];

static int consumer(const char *uri, bool once)
{
	static const char *const attrs[] = { "*", "+", NULL };
	struct lfe_sync_opts o = {
		.uri = uri, .binddn = "cn=admin," SUFFIX, .base = SUFFIX, .filter = "(objectClass=*)",
		.attrs = attrs, .scope = LDAP_SCOPE_SUBTREE, .once = once, .interval = 0,
		.batch = 2, .max_backoff = 1,
	};
	int err = 0;
	struct lfe_store *st = lfe_store_open(store_dir, 0, 0, &err, NULL);

	if (!st)
		return 99;
	int rc = lfe_sync_run(st, &o, "pw", 2);
	lfe_store_close(st);
	return rc;
}

typedef void (*script_fn)(int fd);

/* One step: the consumer's search must carry want_mode and want_cookie
 * ("" none); script sends the answer; the child must exit want_exit. */
static void step(const char *name, int lfd, const char *uri, bool once, int want_mode,
		 const char *want_cookie, script_fn script, int want_exit)
{
	pid_t pid;
	int cfd = -1, status = 0;
	struct req r;

	fflush(NULL);
	if ((pid = fork()) < 0)
		abort();
	if (pid == 0) {
		close(lfd);
		_exit(consumer(uri, once));
	}
	if (serve_start(lfd, &cfd, &r) < 0) {
		CHECK(0, "%s: the consumer did not bind and search", name);
	} else {
		CHECK(r.mode == want_mode, "%s: sync mode %d, want %d", name, r.mode, want_mode);
		CHECK(strcmp(r.cookie, want_cookie) == 0, "%s: the search carried cookie '%s', want '%s'",
		      name, r.cookie, want_cookie);
		script(cfd);
	}
	/* The consumer ends the step (exit), bounded. */
	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (i == 999) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			CHECK(0, "%s: the consumer did not end (killed)", name);
		}
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	if (cfd >= 0)
		close(cfd);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == want_exit, "%s: consumer exit %d, want %d",
	      name, WIFEXITED(status) ? WEXITSTATUS(status) : -1, want_exit);
}

/* ---- the store after a step ---- */

struct seen {
	char ids[64];               /* uid letters in store order, '@' the suffix */
	char pw[26][32];
};

static int seen_fn(void *ctx, const char *ndn, size_t len, const uint8_t *rec, size_t rl)
{
	struct seen *s = ctx;
	size_t n = strlen(s->ids);
	struct lfe_bytes list, v;
	uint32_t nv;

	if (len == strlen(SUFFIX) && memcmp(ndn, SUFFIX, len) == 0) {
		s->ids[n] = '@';
		return 0;
	}
	if (len < 6 || memcmp(ndn, "uid=", 4) != 0 || n + 1 >= sizeof s->ids)
		return 0;
	char id = ndn[4];
	s->ids[n] = id;
	if (id >= 'a' && id <= 'z' &&
	    lfe_record_find_attr(rec, rl, "userPassword", 12, &nv, &list) == 1 && nv &&
	    lfe_record_next_val(&list, &v) == 1)
		snprintf(s->pw[id - 'a'], sizeof s->pw[0], "%.*s", (int)v.len, (const char *)v.p);
	return 0;
}

static int cmp_char(const void *a, const void *b)
{
	return *(const char *)a - *(const char *)b;
}

/* The store holds exactly the entries `ids` (sorted letters, '@' the
 * suffix), the UUID map of `mapped`, and cookie `cookie` ("" none). */
static void expect(const char *name, const char *ids, const char *mapped, const char *cookie,
		   const char *pw_of, const char *pw)
{
	struct lfe_store *st = lfe_store_open(store_dir, 0, 0, NULL, NULL);
	struct seen s;
	uint8_t ck[LFE_STORE_COOKIE_MAX + 1];
	char key[64], val[512];

	memset(&s, 0, sizeof s);
	CHECK(st != NULL, "%s: store", name);
	if (!st)
		return;
	CHECK(lfe_store_each(st, seen_fn, &s) == 0, "%s: walk", name);
	qsort(s.ids, strlen(s.ids), 1, cmp_char);
	CHECK(strcmp(s.ids, ids) == 0, "%s: entries '%s', want '%s'", name, s.ids, ids);
	ssize_t cl = lfe_store_sync_cookie_get(st, ck, sizeof ck - 1);
	ck[cl > 0 ? cl : 0] = 0;
	CHECK(strcmp((char *)ck, cookie) == 0, "%s: stored cookie '%s', want '%s'", name, ck, cookie);
	for (char id = 'a'; id <= 'z'; id++) {
		size_t o = (size_t)sprintf(key, "id:");
		uuid_text(id, key + o);
		ssize_t vl = lfe_store_sync_get(st, key, strlen(key), val, sizeof val - 1);
		bool want = strchr(mapped, id) != NULL;
		CHECK((vl > 0) == want, "%s: UUID map of %c: %zd, want %s", name, id, vl,
		      want ? "mapped" : "none");
		if (vl > 0) {
			char dn[64];
			val[vl] = 0;
			if (id == 'z')
				snprintf(dn, sizeof dn, SUFFIX);
			else
				snprintf(dn, sizeof dn, "uid=%c," SUFFIX, id);
			CHECK(strcmp(val, dn) == 0, "%s: UUID of %c maps to %s", name, id, val);
		}
	}
	if (pw_of)
		CHECK(strcmp(s.pw[*pw_of - 'a'], pw) == 0, "%s: %c's password '%s', want '%s'", name,
		      *pw_of, s.pw[*pw_of - 'a'], pw);
	lfe_store_close(st);
}

/* ---- the script ---- */

static void step1(int fd)       /* initial refresh, refreshOnly */
{
	send_entry(fd, '@', LDAP_SYNC_ADD, "", NULL);
	send_entry(fd, 'a', LDAP_SYNC_ADD, "{SSHA}a1", NULL);
	send_entry(fd, 'b', LDAP_SYNC_ADD, "{SSHA}b1", NULL);
	send_entry(fd, 'c', LDAP_SYNC_ADD, "{SSHA}c1", NULL);
	send_done(fd, LDAP_SUCCESS, 1, "c1", 0);
}

static void step2(int fd)       /* present phase */
{
	send_entry(fd, '@', LDAP_SYNC_PRESENT, NULL, NULL);
	send_entry(fd, 'a', LDAP_SYNC_PRESENT, NULL, NULL);
	send_entry(fd, 'd', LDAP_SYNC_PRESENT, NULL, NULL);   /* UUID unmapped: by DN */
	send_entry(fd, 'b', LDAP_SYNC_MODIFY, "{SSHA}b2", NULL);
	/* c is not named: gone on the provider */
	send_done(fd, LDAP_SUCCESS, 1, "c2", 0);
}

static void step3(int fd)       /* delete phase */
{
	info_idset(fd, NULL, 1, "a");
	send_entry(fd, 'b', LDAP_SYNC_DELETE, NULL, NULL);
	send_done(fd, LDAP_SUCCESS, 1, "c3", 1);
}

static void step4(int fd)       /* refreshAndPersist: refresh done, one add */
{
	info_refresh(fd, LDAP_TAG_SYNC_REFRESH_DELETE, "c4", 1);
	send_entry(fd, 'd', LDAP_SYNC_MODIFY, "{SSHA}d2", NULL);   /* now mapped */
	send_entry(fd, 'e', LDAP_SYNC_ADD, "{SSHA}e1", "c5");
	send_done(fd, LDAP_OTHER, 0, NULL, 0);                 /* ends the step: exit 1 */
}

static void step5(int fd)       /* persist: a cookie-only message */
{
	info_refresh(fd, LDAP_TAG_SYNC_REFRESH_DELETE, NULL, 1);
	info_newcookie(fd, "c6");
	send_done(fd, LDAP_OTHER, 0, NULL, 0);
}

static void step6(int fd)       /* present phase by syncIdSet, then deletes */
{
	info_idset(fd, NULL, 0, "@de");
	info_refresh(fd, LDAP_TAG_SYNC_REFRESH_PRESENT, "c7", 1);
	info_idset(fd, "c8", 1, "e");
	send_done(fd, LDAP_OTHER, 0, NULL, 0);
}

/* d as `ldapfectl import` would leave it: an entry, no UUID mapping. */
static void import_d(void)
{
	struct lfe_store *st = lfe_store_open(store_dir, 0, 0, NULL, NULL);
	struct lfe_bytes oc = { (const uint8_t *)"inetOrgPerson", 13 }, uid = { (const uint8_t *)"d", 1 },
			 pw = { (const uint8_t *)"{SSHA}d1", 8 };
	struct lfe_ldap_attr a[3] = { { { (const uint8_t *)"objectClass", 11 }, 1, &oc },
				      { { (const uint8_t *)"uid", 3 }, 1, &uid },
				      { { (const uint8_t *)"userPassword", 12 }, 1, &pw } };
	const char *dn = "uid=d," SUFFIX;

	CHECK(st && lfe_store_put(st, (struct lfe_bytes){ (const uint8_t *)dn, strlen(dn) }, a, 3,
				  true) == 0, "import d");
	lfe_store_close(st);
}

int main(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	char uri[64], cmd[96];

	signal(SIGPIPE, SIG_IGN);
	snprintf(store_dir, sizeof store_dir, "/tmp/lfe-test-syncengine.XXXXXX");
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 4) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0 || !mkdtemp(store_dir)) {
		perror("setup");
		return 2;
	}
	snprintf(uri, sizeof uri, "ldap://127.0.0.1:%u/", ntohs(sa.sin_port));
	struct lfe_store *st = lfe_store_open(store_dir, 0, 0, NULL, NULL);
	if (!st || lfe_store_init(st, SUFFIX) < 0) {
		fprintf(stderr, "store setup failed\n");
		return 2;
	}
	lfe_store_close(st);

	step("1 initial refresh", lfd, uri, true, LDAP_SYNC_REFRESH_ONLY, "", step1, 0);
	expect("1 initial refresh", "@abc", "zabc", "c1", "b", "{SSHA}b1");
	import_d();
	expect("1 + imported d", "@abcd", "zabc", "c1", NULL, NULL);
	step("2 present phase", lfd, uri, true, LDAP_SYNC_REFRESH_ONLY, "c1", step2, 0);
	expect("2 present phase", "@abd", "zab", "c2", "b", "{SSHA}b2");
	step("3 delete phase", lfd, uri, true, LDAP_SYNC_REFRESH_ONLY, "c2", step3, 0);
	expect("3 delete phase", "@d", "z", "c3", NULL, NULL);
	step("4 persist add", lfd, uri, false, LDAP_SYNC_REFRESH_AND_PERSIST, "c3", step4, 1);
	expect("4 persist add", "@de", "zde", "c5", "d", "{SSHA}d2");
	expect("4 persist add", "@de", "zde", "c5", "e", "{SSHA}e1");
	step("5 cookie only", lfd, uri, false, LDAP_SYNC_REFRESH_AND_PERSIST, "c5", step5, 1);
	expect("5 cookie only", "@de", "zde", "c6", NULL, NULL);
	step("6 idset present, idset deletes", lfd, uri, false, LDAP_SYNC_REFRESH_AND_PERSIST, "c6",
	     step6, 1);
	expect("6 idset present, idset deletes", "@d", "zd", "c8", NULL, NULL);

	close(lfd);
	snprintf(cmd, sizeof cmd, "rm -rf %s", store_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", store_dir);
	return check_done();
}
