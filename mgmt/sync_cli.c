/* mgmt/sync_cli.c — `ldapfectl sync` command line and `--status` (the
 * consumer itself is sync.c; see sync.h). */
#include "mgmt/sync.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <ldap.h>

#include "backend/store.h"
#include "mgmt/cli.h"
#include "mgmt/sync_run.h"


#define DEFAULT_BATCH  10000u
#define MAX_EXTRA      32u

static const char *const base_attrs[] = {
	"objectClass", "uid", "mail", "cn", "userPassword", "entryUUID",
	/* what login clients (SSSD, nslcd) read and the default indexes
	 * cover: without them a synced store answers their lookups empty */
	"uidNumber", "gidNumber", "homeDirectory", "loginShell", "gecos",
	"memberUid", "member", "uniqueMember", "memberOf",
	/* what clients cache on, kept from the provider (issue 26) */
	"createTimestamp", "modifyTimestamp", "entryCSN",
	/* what the bind path checks (backend/acctlock.h) */
	"pwdAccountLockedTime", "nsAccountLock", "pwdEndTime", "shadowExpire",
	/* the password policy (backend/ppolicy.h): the account's state and
	 * the policy entries (objectClass pwdPolicy) themselves */
	"pwdChangedTime", "pwdReset", "pwdPolicySubentry", "pwdGraceUseTime",
	"pwdMaxAge", "pwdExpireWarning", "pwdGraceAuthNLimit", "pwdGraceExpiry", "pwdMustChange",
};
#define N_BASE_ATTRS (sizeof(base_attrs) / sizeof(base_attrs[0]))

struct opts {
	struct lfe_sync_opts r;
	const char *store, *pwfile;
	const char *pp_default;         /* --ppolicy-default; NULL: unchanged */
	bool status;
	const char *attrs[N_BASE_ATTRS + MAX_EXTRA + 1];
};


/* ---- --status ---- */

/* Time of the CSN in an OpenLDAP cookie ("rid=000,csn=20261201120000.123456Z#..."). */
static int64_t cookie_csn_time(const char *c, size_t n)
{
	for (size_t i = 0; i + 4 + 14 <= n; i++) {
		struct tm tm = { 0 };
		int f[6];
		const char *p = c + i + 4;

		if (memcmp(c + i, "csn=", 4) != 0)
			continue;
		if (sscanf(p, "%4d%2d%2d%2d%2d%2d", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]) != 6)
			return -1;
		tm.tm_year = f[0] - 1900;
		tm.tm_mon = f[1] - 1;
		tm.tm_mday = f[2];
		tm.tm_hour = f[3];
		tm.tm_min = f[4];
		tm.tm_sec = f[5];
		return (int64_t)timegm(&tm);
	}
	return -1;
}

/* A value of the status record or the cookie on the terminal: the consumer
 * stored DNs escaped (lfe_sync_escape), but a record of an older version,
 * the cookie, or the provider URI may hold any byte: controls, DEL and
 * bytes >= 0x80 are shown as \xHH (a backslash stays, so stored escapes
 * read once). */
static const char *shown(const char *p, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *p && o + 8 < cap; p++) {
		uint8_t c = (uint8_t)*p;

		if (c >= 0x20 && c < 0x7f) {
			out[o++] = (char)c;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	if (*p)
		memcpy(out + o, "...", 3), o += 3;
	out[o] = '\0';
	return out;
}

static int show_status(struct lfe_store *st)
{
	char sh[4 * (LFE_STORE_COOKIE_MAX + 1) + 8];
	char buf[LFE_STORE_SYNC_VAL_MAX + 1], v[512], ck[LFE_STORE_COOKIE_MAX + 1];
	ssize_t n = lfe_store_sync_get(st, LFE_SYNC_STATUS_KEY, strlen(LFE_SYNC_STATUS_KEY), buf, sizeof(buf) - 1);
	ssize_t cl = lfe_store_sync_cookie_get(st, (uint8_t *)ck, sizeof(ck) - 1);
	int64_t now = time(NULL), csn_t, commit_t, change_t;

	if (n < 0) {
		printf("no sync has run on this store\n");
		return LFE_EXIT_FAIL;
	}
	buf[n] = '\0';
	ck[cl > 0 ? cl : 0] = '\0';
	lfe_sync_status_field(buf, "provider", v, sizeof(v));
	printf("provider:       %s\n", shown(v, sh, sizeof(sh)));
	lfe_sync_status_field(buf, "base", v, sizeof(v));
	printf("base:           %s\n", shown(v, sh, sizeof(sh)));
	printf("cookie:         %s\n", cl > 0 ? shown(ck, sh, sizeof(sh)) : "(none: next run is a full refresh)");
	lfe_sync_status_field(buf, "last_change", v, sizeof(v));
	change_t = strtoll(v, NULL, 10);
	{
		char kind[16], dn[300];

		lfe_sync_status_field(buf, "last_kind", kind, sizeof(kind));
		lfe_sync_status_field(buf, "last_dn", dn, sizeof(dn));
		if (change_t > 0)
			printf("last change:    %s %s, %" PRId64 " s ago\n", kind, shown(dn, sh, sizeof(sh)),
			       now - change_t);
		else
			printf("last change:    none\n");
	}
	lfe_sync_status_field(buf, "last_commit", v, sizeof(v));
	commit_t = strtoll(v, NULL, 10);
	printf("last commit:    %" PRId64 " s ago\n", now - commit_t);
	csn_t = cl > 0 ? cookie_csn_time(ck, (size_t)cl) : -1;
	if (csn_t >= 0)
		printf("lag:            %" PRId64 " s (newest change in the cookie, made on the provider "
		       "%" PRId64 " s ago, committed here %" PRId64 " s later)\n",
		       commit_t - csn_t > 0 ? commit_t - csn_t : 0, now - csn_t,
		       commit_t - csn_t > 0 ? commit_t - csn_t : 0);
	else
		printf("lag:            unknown (no CSN in the cookie)\n");
	for (const char *k = "applied\0skipped\0deleted\0refreshes\0"; *k; k += strlen(k) + 1) {
		lfe_sync_status_field(buf, k, v, sizeof(v));
		printf("%s:%*s%s\n", k, (int)(15 - strlen(k)), "", v);
	}
	return LFE_EXIT_OK;
}

/* ---- command line ---- */

static int usage(const char *fmt, const char *arg)
{
	fputs("ldapfectl sync: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nsee: ldapfectl sync --help\n", stderr);
	return LFE_EXIT_USAGE;
}

static void help(void)
{
	printf("usage: ldapfectl [--store PATH] sync -H URI -b BASE [-D BINDDN -y PWFILE] [-Z]\n"
	       "         [-f FILTER] [-s sub|one|base] [-a ATTR]... [--interval SECONDS] [--once]\n"
	       "         [--batch N] [--max-backoff SECONDS] [--cacert FILE] [--insecure]\n"
	       "         [--require-lock-attrs] [--ppolicy-default DN]\n"
	       "       ldapfectl [--store PATH] sync --status\n\n"
	       "Keep the store equal to an LDAP directory with the Content Synchronization\n"
	       "operation (RFC 4533; OpenLDAP syncprov, 389-ds Content Synchronization plugin):\n"
	       "refreshAndPersist by default, refreshOnly every SECONDS with --interval, one\n"
	       "refresh with --once. The password is read from PWFILE (one line), never from\n"
	       "the command line. Kept attributes: objectClass uid mail cn userPassword\n"
	       "entryUUID uidNumber gidNumber homeDirectory loginShell gecos memberUid member\n"
	       "uniqueMember memberOf createTimestamp modifyTimestamp entryCSN\n"
	       "pwdAccountLockedTime nsAccountLock pwdEndTime shadowExpire, the password\n"
	       "policy's pwdChangedTime pwdReset pwdPolicySubentry pwdGraceUseTime pwdMaxAge\n"
	       "pwdExpireWarning pwdGraceAuthNLimit pwdGraceExpiry pwdMustChange and each\n"
	       "-a ATTR. --ppolicy-default names the provider's default policy entry\n"
	       "(slapd's olcPPolicyDefault; \"\" removes it): the policy of entries without\n"
	       "pwdPolicySubentry. --status prints the provider, cookie, last change and lag.\n\n"
	       "The provider's certificate is always verified (TLS_REQCERT and LDAPTLS_REQCERT\n"
	       "are overridden); --cacert or TLS_CACERT names a CA the system does not trust.\n"
	       "ldap:// needs -Z (StartTLS); --insecure allows it in clear (test setups only).\n"
	       "At start it warns when the bound account cannot read a lock attribute (a locked\n"
	       "account would then bind); --require-lock-attrs makes that an exit 1.\n");
}

static int read_pwfile(const char *path, char *out, size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, out, cap);
	close(fd);
	if (n < 0)
		return -errno;
	if ((size_t)n == cap)
		return -E2BIG;
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
		n--;
	*len = (size_t)n;
	return 0;
}

/* Every URI of -H (libldap takes a list, spaces or commas between them)
 * must be ldaps://, ldapi://, or ldap:// with -Z: a cleartext ldap://
 * sends the bind password to whoever answers and takes their entries. That
 * needs --insecure. -1 when fine, else the usage exit status. */
static int check_uris(const struct opts *o)
{
	const char *p = o->r.uri;

	while (*p) {
		size_t n = strcspn(p, " ,");

		if (n == 0) {
			p++;
			continue;
		}
		if (n >= 7 && strncasecmp(p, "ldap://", 7) == 0) {
			if (!o->r.starttls && !o->r.insecure)
				return usage("%s: ldap:// without StartTLS sends the password and the "
					     "entries in clear; add -Z, use ldaps://, or --insecure",
					     o->r.uri);
		} else if (!(n >= 8 && (strncasecmp(p, "ldaps://", 8) == 0 ||
					strncasecmp(p, "ldapi://", 8) == 0))) {
			return usage("%s: not an ldap://, ldaps:// or ldapi:// URI", o->r.uri);
		}
		p += n;
	}
	return -1;
}

/* -s sub|one|base: LDAP_SCOPE_*, or -1. */
static int scope_of(const char *name)
{
	static const struct {
		const char *name;
		int scope;
	} scopes[] = {
		{ "sub", LDAP_SCOPE_SUBTREE }, { "one", LDAP_SCOPE_ONELEVEL }, { "base", LDAP_SCOPE_BASE },
	};

	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++)
		if (strcmp(name, scopes[i].name) == 0)
			return scopes[i].scope;
	return -1;
}

static int parse_opts(struct opts *o, int argc, char **argv)
{
	enum { O_INTERVAL = 256, O_ONCE, O_BATCH, O_BACKOFF, O_STATUS, O_CACERT, O_STORE, O_INSECURE, O_REQLOCK,
	       O_PPDEFAULT };
	static const struct option lo[] = {
		{ "uri", required_argument, NULL, 'H' }, { "bind-dn", required_argument, NULL, 'D' },
		{ "password-file", required_argument, NULL, 'y' },
		{ "base", required_argument, NULL, 'b' }, { "filter", required_argument, NULL, 'f' },
		{ "scope", required_argument, NULL, 's' }, { "attr", required_argument, NULL, 'a' },
		{ "starttls", no_argument, NULL, 'Z' }, { "interval", required_argument, NULL, O_INTERVAL },
		{ "once", no_argument, NULL, O_ONCE }, { "batch", required_argument, NULL, O_BATCH },
		{ "max-backoff", required_argument, NULL, O_BACKOFF },
		{ "status", no_argument, NULL, O_STATUS }, { "cacert", required_argument, NULL, O_CACERT },
		{ "store", required_argument, NULL, O_STORE }, { "help", no_argument, NULL, 'h' },
		{ "insecure", no_argument, NULL, O_INSECURE },
		{ "require-lock-attrs", no_argument, NULL, O_REQLOCK },
		{ "ppolicy-default", required_argument, NULL, O_PPDEFAULT },
		{ NULL, 0, NULL, 0 },
	};
	size_t na = 0;
	int opt, rc;

	for (size_t i = 0; i < N_BASE_ATTRS; i++)
		o->attrs[na++] = base_attrs[i];
	o->r.filter = "(objectClass=*)";
	o->r.scope = LDAP_SCOPE_SUBTREE;
	o->r.batch = DEFAULT_BATCH;
	o->r.max_backoff = 30;
	while ((opt = getopt_long(argc, argv, "H:D:y:b:f:s:a:Zh", lo, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (opt) {
		case 'H': o->r.uri = optarg; break;
		case 'D': o->r.binddn = optarg; break;
		case 'y': o->pwfile = optarg; break;
		case 'b': o->r.base = optarg; break;
		case 'f': o->r.filter = optarg; break;
		case 'Z': o->r.starttls = true; break;
		case O_INSECURE: o->r.insecure = true; break;
		case O_REQLOCK: o->r.require_lock_attrs = true; break;
		case O_PPDEFAULT: o->pp_default = optarg; break;
		case O_ONCE: o->r.once = true; break;
		case O_STATUS: o->status = true; break;
		case O_CACERT: o->r.cacert = optarg; break;
		case O_STORE: o->store = optarg; break;
		case 's':
			if ((o->r.scope = scope_of(optarg)) < 0)
				return usage("unknown scope \"%s\" (sub, one or base)", optarg);
			break;
		case 'a':
			if (na == N_BASE_ATTRS + MAX_EXTRA)
				return usage("too many -a attributes (%s)", "at most 32");
			o->attrs[na++] = optarg;
			break;
		case O_INTERVAL: case O_BATCH: case O_BACKOFF:
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v == 0 || v > 86400 * 10u)
				return usage("invalid number \"%s\"", optarg);
			if (opt == O_INTERVAL)
				o->r.interval = (unsigned)v;
			else if (opt == O_BATCH)
				o->r.batch = (unsigned)v;
			else
				o->r.max_backoff = (unsigned)v;
			break;
		case 'h':
			help();
			return LFE_EXIT_OK;
		default:
			fputs("see: ldapfectl sync --help\n", stderr);
			return LFE_EXIT_USAGE;
		}
	}
	o->attrs[na] = NULL;
	o->r.attrs = o->attrs;
	if (optind != argc)
		return usage("unexpected argument \"%s\"", argv[optind]);
	if (o->status)
		return -1;
	if (!o->r.uri)
		return usage("%s", "name the provider with -H URI (ldap://, ldaps://, ldapi://)");
	if (!o->r.base)
		return usage("%s", "name the search base with -b BASE");
	if ((rc = check_uris(o)) >= 0)
		return rc;
	if (o->r.binddn && !o->pwfile)
		return usage("%s", "-D needs -y PWFILE (the password is never taken from the command line)");
	return -1;
}

int lfe_sync_cmd(const char *store, int argc, char **argv)
{
	struct opts o = { .store = store };
	struct lfe_store *st;
	const char *msg = NULL;
	char pw[1024];
	size_t pw_len = 0;
	int err = 0, rc = parse_opts(&o, argc, argv);

	if (rc >= 0)
		return rc;
	if (o.pwfile && (rc = read_pwfile(o.pwfile, pw, sizeof(pw), &pw_len)) < 0) {
		fprintf(stderr, "ldapfectl sync: cannot read the password file %s: %s\n", o.pwfile,
			strerror(-rc));
		return LFE_EXIT_FAIL;
	}
	st = lfe_store_open(o.store, o.status ? LFE_STORE_RDONLY : 0, 0, &err, &msg);
	if (!st) {
		fprintf(stderr, "ldapfectl sync: cannot open the store %s: %s\n", o.store,
			msg ? msg : strerror(-err));
		rc = LFE_EXIT_FAIL;
	} else if (!o.status && o.pp_default &&
		   (err = lfe_store_set_ppolicy_default(st, o.pp_default)) < 0) {
		fprintf(stderr, "ldapfectl sync: cannot keep the default policy \"%s\": %s\n",
			o.pp_default, err == -EINVAL ? "not a DN" : strerror(-err));
		lfe_store_close(st);
		rc = LFE_EXIT_FAIL;
	} else {
		rc = o.status ? show_status(st) : lfe_sync_run(st, &o.r, pw, pw_len);
		lfe_store_close(st);
	}
	explicit_bzero(pw, sizeof(pw));
	return rc;
}
