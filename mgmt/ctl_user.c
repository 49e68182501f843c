/* mgmt/ctl_user.c — ldapfectl user add, passwd, del, show and verify: the
 * commands on one entry, and reading and hashing a password (see ctl.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <ldap.h>

#include "backend/pwscheme.h"
#include "backend/record.h"
#include "backend/store.h"
#include "ldap/dn.h"
#include "mgmt/cli.h"
#include "mgmt/ctl.h"

#define PW_MAX         1024u     /* longest password we accept, bytes */
#define HASH_MAX       1024u     /* longest hashed userPassword we produce */

/* ------------------------------------------------------------ passwords */

static int read_line_fd(int fd, char *buf, size_t cap, size_t *len)
{
	size_t n = 0;

	for (;;) {
		ssize_t k;
		char *nl;

		if (n == cap)
			return -E2BIG;
		k = read(fd, buf + n, cap - n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		nl = memchr(buf + n, '\n', (size_t)k);
		if (nl) {
			n = (size_t)(nl - buf);
			break;
		}
		n += (size_t)k;
	}
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	*len = n;
	return 0;
}

static int prompt_tty(const char *prompt, char *buf, size_t cap, size_t *len)
{
	struct termios old, quiet;
	int rc;

	if (tcgetattr(STDIN_FILENO, &old) < 0)
		return -errno;
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	quiet.c_lflag |= ECHONL;
	/* Echo off before the prompt appears: whatever is typed after seeing
	 * the prompt must never reach the screen. */
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) < 0)
		return -errno;
	fputs(prompt, stderr);
	fflush(stderr);
	rc = read_line_fd(STDIN_FILENO, buf, cap, len);
	tcsetattr(STDIN_FILENO, TCSANOW, &old);
	return rc;
}

/* Password from stdin (first line) or, on a terminal, a prompt without
 * echo (twice when confirm): 0, or a negative errno with err. The caller
 * wipes buf. */
static int read_password(bool confirm, char *buf, size_t cap, size_t *len, char *err, size_t errlen)
{
	int rc;

	if (isatty(STDIN_FILENO)) {
		char again[PW_MAX];
		size_t alen = 0;
		bool differ = false;

		rc = prompt_tty(confirm ? "New password: " : "Password: ", buf, cap, len);
		if (rc == 0 && confirm) {
			rc = prompt_tty("Retype new password: ", again, sizeof(again), &alen);
			differ = rc == 0 && (alen != *len || !lfe_ct_equal(again, buf, alen));
			explicit_bzero(again, sizeof(again));
		}
		if (differ)
			return lfe_cli_fill(err, errlen, -EINVAL, "the passwords do not match; nothing changed");
	} else {
		rc = read_line_fd(STDIN_FILENO, buf, cap, len);
	}
	if (rc == -E2BIG)
		return lfe_cli_fill(err, errlen, rc, "password longer than %u bytes", (unsigned)cap - 1);
	if (rc < 0)
		return lfe_cli_fill(err, errlen, rc, "cannot read the password: %s", strerror(-rc));
	/* RFC 4513 §5.1.2: an empty password is an unauthenticated bind, never
	 * a credential. */
	if (*len == 0)
		return lfe_cli_fill(err, errlen, -EINVAL, "empty password refused");
	return 0;
}

/* pw hashed with the scheme of --scheme into out: 0, -ENOTSUP (a scheme we
 * do not have: a usage error) or another negative errno, with err. */
static int hash_password(const struct lfe_ctl *c, const char *pw, size_t len, char *out, size_t cap,
			 char *err, size_t errlen)
{
	ssize_t n = lfe_pw_hash(c->scheme, (const uint8_t *)pw, len, out, cap);

	if (n == -ENOTSUP)
		return lfe_cli_fill(err, errlen, -ENOTSUP, "password scheme %s (from %s) is not supported; "
				    "e.g. {SSHA512}, {CRYPT}, {ARGON2}, {PBKDF2-SHA512}", c->scheme,
				    c->scheme_from);
	if (n < 0)
		return lfe_cli_fill(err, errlen, (int)n, "cannot hash the password with %s: %s", c->scheme,
				    strerror((int)-n));
	return 0;
}

/* A new password for the entry (read, then hashed into hashed[HASH_MAX]):
 * LFE_CTL_CONTINUE, or the exit status with the reason printed. */
static int new_password(const struct lfe_ctl *c, char *pw, char *hashed)
{
	char err[LFE_CLI_ERR_MAX];
	size_t pwlen = 0;
	int rc;

	if (read_password(true, pw, PW_MAX, &pwlen, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	if ((rc = hash_password(c, pw, pwlen, hashed, HASH_MAX, err, sizeof(err))) < 0) {
		lfe_cli_err("%s", err);
		return rc == -ENOTSUP ? LFE_EXIT_USAGE : LFE_EXIT_FAIL;
	}
	return LFE_CTL_CONTINUE;
}

static bool is_type(const struct lfe_bytes *t, const char *name)
{
	return lfe_attr_type_eq(t->p, t->len, (const uint8_t *)name, strlen(name));
}

/* ---- user add */

struct kv_list {
	struct lfe_ldif_av *av;
	uint32_t n, cap;
};

static int kv_add(struct kv_list *l, const void *t, size_t tlen, const void *v, size_t vlen)
{
	if (l->n == l->cap) {
		uint32_t ncap = l->cap ? l->cap * 2 : 16;
		struct lfe_ldif_av *na = realloc(l->av, (size_t)ncap * sizeof(*na));

		if (!na)
			return -ENOMEM;
		l->av = na;
		l->cap = ncap;
	}
	memset(&l->av[l->n], 0, sizeof(l->av[0]));
	l->av[l->n].type = (struct lfe_bytes){ t, tlen };
	l->av[l->n].val = (struct lfe_bytes){ v, vlen };
	l->n++;
	return 0;
}

static bool kv_has_type(const struct kv_list *l, const char *type)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (is_type(&l->av[i].type, type))
			return true;
	return false;
}

/* Does the list hold type=value, comparing types by canonical name (OIDs
 * too) and values the way the attribute compares them? */
static bool kv_has_value(const struct kv_list *l, const struct berval *t, const struct berval *v)
{
	bool ci = lfe_attr_is_case_ignore((const uint8_t *)t->bv_val, t->bv_len);

	for (uint32_t i = 0; i < l->n; i++) {
		const struct lfe_ldif_av *a = &l->av[i];

		if (!lfe_attr_type_eq(a->type.p, a->type.len, (const uint8_t *)t->bv_val, t->bv_len))
			continue;
		if (a->val.len == v->bv_len &&
		    (ci ? strncasecmp((const char *)a->val.p, v->bv_val, v->bv_len)
			: memcmp(a->val.p, v->bv_val, v->bv_len)) == 0)
			return true;
	}
	return false;
}

/* "add [options] DN" after "user": LFE_CTL_CONTINUE with the --attr values
 * in kv and *dn, or the exit status. */
static int user_args(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv,
		     struct kv_list *kv, bool *want_pw, const char **dn)
{
	static const struct option lo[] = { { "attr", required_argument, NULL, 'a' },
					    { "password-stdin", no_argument, NULL, 'p' },
					    LFE_CTL_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	int opt, rc;

	/* "user add": the sub-command first, then its options. */
	if (argc < 2 || strcmp(argv[1], "add") != 0) {
		if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
			lfe_ctl_cmd_help(stdout, cmd);
			return LFE_EXIT_OK;
		}
		if (argc < 2)
			return lfe_cli_usage(cmd->usage, "missing sub-command (add)");
		return lfe_cli_usage(cmd->usage, "unknown sub-command \"%s\" (only add)", argv[1]);
	}
	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "a:ph", lo, NULL)) != -1) {
		const char *eq;

		if (opt == 'p') {
			*want_pw = true;
			continue;
		}
		if (opt != 'a') {
			if ((rc = lfe_ctl_common_opt(c, cmd, opt)) != LFE_CTL_CONTINUE)
				return rc;
			continue;
		}
		if (!(eq = strchr(optarg, '=')) || eq == optarg)
			return lfe_cli_usage(cmd->usage, "--attr wants TYPE=VALUE, got \"%s\"", optarg);
		if (kv_add(kv, optarg, (size_t)(eq - optarg), eq + 1, strlen(eq + 1)) < 0)
			return lfe_cli_fail("out of memory");
	}
	if (argc - optind != 1)
		return lfe_cli_usage(cmd->usage, argc == optind ? "name the DN of the user to add"
								: "user add takes one DN");
	*dn = argv[optind];
	return LFE_CTL_CONTINUE;
}

/* Password attributes given with --attr must be hashed already:
 * LFE_CTL_CONTINUE or the usage exit status. */
static int check_pw_attrs(const struct lfe_ctl_cmd *cmd, const struct kv_list *kv)
{
	for (uint32_t i = 0; i < kv->n; i++) {
		const struct lfe_ldif_av *a = &kv->av[i];
		char scheme[SCHEME_MAX];

		if (!lfe_attr_is_secret(a->type.p, a->type.len))
			continue;
		/* authPassword has its own syntax, "scheme$authInfo$authValue"
		 * (RFC 3112), always hashed. */
		if (lfe_attr_base_eq(a->type.p, a->type.len, (const uint8_t *)"authPassword", 12)) {
			const uint8_t *d = memchr(a->val.p, '$', a->val.len);

			if (d && d != a->val.p &&
			    memchr(d + 1, '$', a->val.len - (size_t)(d + 1 - a->val.p)))
				continue;
			return lfe_cli_usage(cmd->usage, "--attr %.*s= takes an RFC 3112 value "
					     "(scheme$salt$hash)", (int)a->type.len, (const char *)a->type.p);
		}
		if (lfe_pw_scheme_name((const char *)a->val.p, a->val.len, scheme, sizeof(scheme)) < 0 ||
		    strcmp(scheme, "{CLEARTEXT}") == 0)
			return lfe_cli_usage(cmd->usage, "--attr %.*s= takes an already hashed value "
					     "({SCHEME}...); use --password-stdin to hash a password",
					     (int)a->type.len, (const char *)a->type.p);
	}
	return LFE_CTL_CONTINUE;
}

/* The values an entry needs that --attr did not give: its RDN's (X.501),
 * a person's objectClass, cn and sn, and the operational attributes
 * clients cache on, as import gives them (lfe_ctl_opattrs_add: entryUUID,
 * the timestamps, entryCSN), returned for "+" or by name. 0, or a negative
 * errno with err. */
static int add_defaults(struct kv_list *kv, LDAPDN ldn, struct lfe_ctl_opattrs *op, char *err,
			size_t errlen)
{
	static const char *const default_oc[] = { "top", "person", "organizationalPerson",
						  "inetOrgPerson" };
	const struct berval *rv = &ldn[0][0]->la_value;
	struct lfe_ldif_av extra[LFE_CTL_OPATTRS];
	bool oom = false;
	int n;

	for (LDAPRDN rdn = ldn[0]; *rdn; rdn++) {
		LDAPAVA *ava = *rdn;

		if (!(ava->la_flags & LDAP_AVA_BINARY) && !kv_has_value(kv, &ava->la_attr, &ava->la_value))
			oom |= kv_add(kv, ava->la_attr.bv_val, ava->la_attr.bv_len, ava->la_value.bv_val,
				      ava->la_value.bv_len) < 0;
	}
	/* A person that slapd's schema check accepts when the store is
	 * exported: inetOrgPerson needs cn and sn. */
	if (!oom && !kv_has_type(kv, "objectClass")) {
		for (size_t i = 0; i < sizeof(default_oc) / sizeof(default_oc[0]); i++)
			oom |= kv_add(kv, "objectClass", 11, default_oc[i], strlen(default_oc[i])) < 0;
		if (!kv_has_type(kv, "cn"))
			oom |= kv_add(kv, "cn", 2, rv->bv_val, rv->bv_len) < 0;
		if (!kv_has_type(kv, "sn"))
			oom |= kv_add(kv, "sn", 2, rv->bv_val, rv->bv_len) < 0;
	}
	if (oom)
		return lfe_cli_fill(err, errlen, -ENOMEM, "out of memory");
	if (lfe_ctl_opattrs_init(op) < 0)
		return lfe_cli_fill(err, errlen, -EIO, "cannot read the clock");
	if ((n = lfe_ctl_opattrs_add(op, kv->av, kv->n, extra)) < 0)
		return lfe_cli_fill(err, errlen, -EIO, "cannot draw an entryUUID");
	for (int i = 0; i < n; i++)
		oom |= kv_add(kv, extra[i].type.p, extra[i].type.len, extra[i].val.p, extra[i].val.len) < 0;
	return oom ? lfe_cli_fill(err, errlen, -ENOMEM, "out of memory") : 0;
}

/* Store the entry kv names dn: the exit status, the reason printed. */
static int user_put(const struct lfe_ctl *c, const char *dn, const char *ndn, size_t nlen,
		    const struct kv_list *kv)
{
	struct lfe_ctl_attrs al = { 0 };
	struct lfe_store *st;
	const char *suffix;
	char err[LFE_CLI_ERR_MAX];
	size_t slen = 0;
	int rc;

	if (lfe_ctl_store_open(c, false, &st, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	suffix = lfe_store_suffix(st, &slen);
	if (!lfe_dn_is_under(ndn, nlen, suffix, slen))
		rc = lfe_cli_fill(err, sizeof(err), -EINVAL, "entry %s is outside the suffix %.*s", dn,
				  (int)slen, suffix);
	else if ((rc = lfe_ctl_attrs_group(kv->av, kv->n, NULL, 0, &al)) < 0)
		lfe_cli_fill(err, sizeof(err), rc, "out of memory");
	else if ((rc = lfe_store_put(st, (struct lfe_bytes){ (const uint8_t *)dn, strlen(dn) },
				     al.attrs, al.n_attrs, false)) == -EEXIST)
		lfe_cli_fill(err, sizeof(err), rc, "entry %s already exists (change its password with: "
			     "ldapfectl passwd DN)", dn);
	else if (rc < 0)
		lfe_cli_fill(err, sizeof(err), rc, "cannot add %s: %s", dn,
			     rc == -EINVAL ? "invalid entry" : lfe_ctl_store_err(rc));
	lfe_ctl_attrs_free(&al);
	lfe_store_close(st);
	return rc < 0 ? lfe_cli_fail("%s", err) : LFE_EXIT_OK;
}

int lfe_ctl_user(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	struct kv_list kv = { 0 };
	struct lfe_ctl_opattrs op;   /* the values kv's made-up attributes point into */
	LDAPDN ldn = NULL;
	const char *dn = NULL;
	char ndn[LFE_DN_MAX + 1], pw[PW_MAX], hashed[HASH_MAX], err[LFE_CLI_ERR_MAX];
	size_t nlen = 0;
	bool want_pw = false;
	int rc;

	if ((rc = user_args(c, cmd, argc, argv, &kv, &want_pw, &dn)) != LFE_CTL_CONTINUE)
		goto out;
	if (lfe_ctl_dn(dn, ndn, sizeof(ndn), &nlen, err, sizeof(err)) < 0) {
		rc = lfe_cli_usage(cmd->usage, "\"%s\" %s", dn, err);
		goto out;
	}
	if (nlen == 0 || ldap_str2dn(dn, &ldn, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS ||
	    !ldn || !ldn[0]) {
		rc = lfe_cli_usage(cmd->usage, "\"%s\" cannot name a user (empty or not an LDAPv3 DN)", dn);
		goto out;
	}
	if ((rc = check_pw_attrs(cmd, &kv)) != LFE_CTL_CONTINUE)
		goto out;
	if (add_defaults(&kv, ldn, &op, err, sizeof(err)) < 0) {
		rc = lfe_cli_fail("%s", err);
		goto out;
	}
	if (want_pw) {
		if ((rc = new_password(c, pw, hashed)) != LFE_CTL_CONTINUE)
			goto out;
		if (kv_add(&kv, "userPassword", 12, hashed, strlen(hashed)) < 0) {
			rc = lfe_cli_fail("out of memory");
			goto out;
		}
	}
	rc = user_put(c, dn, ndn, nlen, &kv);
out:
	explicit_bzero(pw, sizeof(pw));
	explicit_bzero(hashed, sizeof(hashed));
	free(kv.av);
	if (ldn)
		ldap_dnfree(ldn);
	return rc;
}

/* ---- commands on one DN */

/* Parses "[options] DN" for commands that take one DN. Returns
 * LFE_CTL_CONTINUE with *dn and its normal form, or an exit code. */
static int one_dn_args(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv,
		       const struct option *extra, bool *flag, const char **dn,
		       char *ndn, size_t cap, size_t *nlen)
{
	struct option lo[8];
	char err[LFE_CLI_ERR_MAX];
	size_t n = 0;
	int opt, rc;

	if (extra)
		lo[n++] = *extra;
	lo[n++] = (struct option){ "store", required_argument, NULL, 'S' };
	lo[n++] = (struct option){ "scheme", required_argument, NULL, 'C' };
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (extra && opt == extra->val) {
			*flag = true;
			continue;
		}
		if ((rc = lfe_ctl_common_opt(c, cmd, opt)) != LFE_CTL_CONTINUE)
			return rc;
	}
	if (argc == optind)
		return lfe_cli_usage(cmd->usage, "name the entry's DN");
	if (argc - optind != 1)
		return lfe_cli_usage(cmd->usage, "%s takes one DN", cmd->name);
	*dn = argv[optind];
	if (lfe_ctl_dn(*dn, ndn, cap, nlen, err, sizeof(err)) < 0)
		return lfe_cli_usage(cmd->usage, "\"%s\" %s", *dn, err);
	return LFE_CTL_CONTINUE;
}

/* one_dn_args, then the store opened for writing: LFE_CTL_CONTINUE with
 * *dn and *st, or the exit status. */
static int one_dn_open(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv,
		       const char **dn, struct lfe_store **st)
{
	char ndn[LFE_DN_MAX + 1], err[LFE_CLI_ERR_MAX];
	size_t nlen = 0;
	int rc;

	if ((rc = one_dn_args(c, cmd, argc, argv, NULL, NULL, dn, ndn, sizeof(ndn), &nlen)) !=
	    LFE_CTL_CONTINUE)
		return rc;
	if (lfe_ctl_store_open(c, false, st, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	return LFE_CTL_CONTINUE;
}

int lfe_ctl_passwd(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	struct lfe_store *st;
	const char *dn = NULL;
	char pw[PW_MAX], hashed[HASH_MAX];
	int rc;

	/* Open first: no point asking for a password for a missing store. */
	if ((rc = one_dn_open(c, cmd, argc, argv, &dn, &st)) != LFE_CTL_CONTINUE)
		return rc;
	if ((rc = new_password(c, pw, hashed)) != LFE_CTL_CONTINUE)
		goto out;
	rc = lfe_store_set_password(st, dn, strlen(dn), hashed, strlen(hashed), (int64_t)time(NULL));
	if (rc == -ENOENT)
		rc = lfe_cli_fail("no entry %s", dn);
	else if (rc < 0)
		rc = lfe_cli_fail("cannot set the password of %s: %s", dn, lfe_ctl_store_err(rc));
	else
		rc = LFE_EXIT_OK;
out:
	explicit_bzero(pw, sizeof(pw));
	explicit_bzero(hashed, sizeof(hashed));
	lfe_store_close(st);
	return rc;
}

int lfe_ctl_del(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	struct lfe_store *st;
	const char *dn = NULL;
	int rc;

	if ((rc = one_dn_open(c, cmd, argc, argv, &dn, &st)) != LFE_CTL_CONTINUE)
		return rc;
	rc = lfe_store_del(st, dn, strlen(dn));
	lfe_store_close(st);
	if (rc == -ENOENT)
		return lfe_cli_fail("no entry %s", dn);
	if (rc == -ENOTEMPTY)
		return lfe_cli_fail("entry %s has entries below it; delete those first", dn);
	if (rc < 0)
		return lfe_cli_fail("cannot delete %s: %s", dn, lfe_ctl_store_err(rc));
	return LFE_EXIT_OK;
}

/* Look dn up through a reader: 0 with *st, *r holding it open (also on
 * failure: the caller frees them), or a negative errno with err. */
static int lookup(const struct lfe_ctl *c, const char *dn, const char *ndn, size_t nlen,
		  struct lfe_store **st, struct lfe_store_reader **r, struct lfe_entry_view *e,
		  char *err, size_t errlen)
{
	int rc;

	*r = NULL;
	if ((rc = lfe_ctl_store_open(c, true, st, err, errlen)) < 0)
		return rc;
	if (!(*r = lfe_store_reader_new(*st)))
		return lfe_cli_fill(err, errlen, -EIO, "cannot read store %s", c->store);
	rc = lfe_store_get(*r, ndn, nlen, e);
	if (rc == -ENOENT)
		return lfe_cli_fill(err, errlen, rc, "no entry %s", dn);
	if (rc < 0)
		return lfe_cli_fill(err, errlen, rc, "cannot read %s: %s", dn, lfe_ctl_store_err(rc));
	return 0;
}

int lfe_ctl_show(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	struct lfe_store *st = NULL;
	struct lfe_store_reader *r = NULL;
	struct lfe_entry_view e;
	const char *dn = NULL;
	char ndn[LFE_DN_MAX + 1], err[LFE_CLI_ERR_MAX];
	size_t nlen = 0;
	int rc;

	if ((rc = one_dn_args(c, cmd, argc, argv, NULL, NULL, &dn, ndn, sizeof(ndn), &nlen)) !=
	    LFE_CTL_CONTINUE)
		return rc;
	if ((rc = lookup(c, dn, ndn, nlen, &st, &r, &e, err, sizeof(err))) < 0)
		lfe_cli_err("%s", err);
	else if ((rc = lfe_ctl_write_entry(stdout, e.rec, e.rec_len, true)) < 0)
		lfe_cli_err("cannot show %s: %s", dn, rc == -EBADMSG ? "corrupt record" : strerror(-rc));
	lfe_store_reader_free(r);
	lfe_store_close(st);
	return rc < 0 ? LFE_EXIT_FAIL : LFE_EXIT_OK;
}

int lfe_ctl_verify(struct lfe_ctl *c, const struct lfe_ctl_cmd *cmd, int argc, char **argv)
{
	static const struct option cleartext = { "allow-cleartext", no_argument, NULL, 'x' };
	struct lfe_store *st = NULL;
	struct lfe_store_reader *r = NULL;
	struct lfe_entry_view e;
	struct lfe_bytes small[8], *vals = small;
	const char *dn = NULL;
	char ndn[LFE_DN_MAX + 1], pw[PW_MAX], scheme[SCHEME_MAX], err[LFE_CLI_ERR_MAX];
	size_t nlen = 0, pwlen = 0;
	uint32_t n = 0, unsupported = 0;
	bool allow_clear = false, ok = false;
	int rc, result = LFE_EXIT_FAIL;

	if ((rc = one_dn_args(c, cmd, argc, argv, &cleartext, &allow_clear, &dn, ndn, sizeof(ndn),
			      &nlen)) != LFE_CTL_CONTINUE)
		return rc;
	if (read_password(false, pw, sizeof(pw), &pwlen, err, sizeof(err)) < 0) {
		lfe_cli_err("%s", err);
		goto out;
	}
	if (lookup(c, dn, ndn, nlen, &st, &r, &e, err, sizeof(err)) < 0) {
		lfe_cli_err("%s", err);
		puts("invalid");
		goto out;
	}
	n = lfe_entry_get(&e, "userPassword", 12, small, 8);
	if (n > 8) {
		if (!(vals = calloc(n, sizeof(*vals)))) {
			lfe_cli_err("out of memory");
			goto out;
		}
		n = lfe_entry_get(&e, "userPassword", 12, vals, n);
	}
	for (uint32_t i = 0; i < n && !ok; i++) {
		rc = lfe_pw_verify((const char *)vals[i].p, vals[i].len, (const uint8_t *)pw, pwlen,
				   allow_clear ? LFE_PW_ALLOW_CLEARTEXT : 0);
		if (rc == 0) {
			ok = true;
			if (lfe_pw_scheme_name((const char *)vals[i].p, vals[i].len, scheme,
					       sizeof(scheme)) < 0)
				strcpy(scheme, "{?}");
		} else if (rc == -ENOTSUP || rc == -EINVAL) {
			char s[SCHEME_MAX];

			if (lfe_pw_scheme_name((const char *)vals[i].p, vals[i].len, s, sizeof(s)) < 0)
				strcpy(s, "{?}");
			lfe_cli_err("userPassword value %u of %s: %s %s", i + 1, dn, s,
				    rc == -EINVAL ? "value is malformed"
				    : strcmp(s, "{CLEARTEXT}") == 0 ? "is not hashed (see --allow-cleartext)"
				    : "is not a supported scheme");
			unsupported++;
		}
	}
	if (n == 0)
		lfe_cli_err("%s has no userPassword", dn);
	if (ok) {
		printf("ok %s\n", scheme);
		result = LFE_EXIT_OK;
	} else {
		puts("invalid");
	}
out:
	explicit_bzero(pw, sizeof(pw));
	if (vals != small)
		free(vals);
	lfe_store_reader_free(r);
	lfe_store_close(st);
	return result;
}
