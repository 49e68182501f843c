/* tests/ldap/test_dn_libldap.c — lfe_dn_normalize against libldap.
 *
 * usage: test_dn_libldap dn-corpus.txt DN-DIFFERENCES.md
 *
 * The reference is libldap's parser and LDAPv3 serializer with, on top, the
 * schema rules dn.h promises and libldap cannot know (it has no schema):
 * the DN is parsed with ldap_str2dn(LDAP_DN_FORMAT_LDAP), the syntax slapd
 * accepts; each AVA gets the canonical type name from this file's own table,
 * case-ignore values are ASCII-folded with RFC 4518 space handling, and the
 * AVAs of an RDN are sorted by their serialized "type=value" text. Every
 * AVA is serialized by ldap_dn2str(LDAP_DN_FORMAT_LDAPV3).
 *
 * Corpus lines are "TAG<TAB>DN". TAG "=" means lfe and the reference must
 * agree (same output, or both refuse). Any other TAG names a section
 * "### TAG" of DN-DIFFERENCES.md: lfe and the reference must then disagree.
 * An undocumented difference, a documented one that has gone away, a tag
 * without a section or a section no line uses all fail the test.
 */
#include "ldap/dn.h"

#include <ctype.h>
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kept apart from dn.c on purpose: an independent statement of the mapping. */
static const struct {
	const char *name, *oid, *alias;
	int ci;
} ref_attrs[] = {
	{ "uid", "0.9.2342.19200300.100.1.1", "userid", 1 },
	{ "cn", "2.5.4.3", "commonname", 1 },
	{ "ou", "2.5.4.11", "organizationalunitname", 1 },
	{ "o", "2.5.4.10", "organizationname", 1 },
	{ "c", "2.5.4.6", "countryname", 1 },
	{ "l", "2.5.4.7", "localityname", 1 },
	{ "st", "2.5.4.8", "stateorprovincename", 1 },
	{ "dc", "0.9.2342.19200300.100.1.25", "domaincomponent", 1 },
	{ "mail", "0.9.2342.19200300.100.1.3", "rfc822mailbox", 1 },
	{ "sn", "2.5.4.4", "surname", 1 },
	{ "givenname", "2.5.4.42", "gn", 1 },
	{ "street", "2.5.4.9", "streetaddress", 1 },
	{ "title", "2.5.4.12", NULL, 1 },
	{ "description", "2.5.4.13", NULL, 1 },
	{ "serialnumber", "2.5.4.5", NULL, 1 },
	{ "initials", "2.5.4.43", NULL, 1 },
	{ "displayname", "2.16.840.1.113730.3.1.241", NULL, 1 },
	{ "employeenumber", "2.16.840.1.113730.3.1.3", NULL, 1 },
	{ "postalcode", "2.5.4.17", NULL, 1 },
	{ "objectclass", "2.5.4.0", NULL, 1 },
	{ "userpassword", "2.5.4.35", NULL, 0 },
	{ "member", "2.5.4.31", NULL, 0 },
	{ "uniquemember", "2.5.4.50", NULL, 0 },
	{ "uidnumber", "1.3.6.1.1.1.1.0", NULL, 0 },
	{ "gidnumber", "1.3.6.1.1.1.1.1", NULL, 0 },
	{ "gecos", "1.3.6.1.1.1.1.2", NULL, 1 },
	{ "homedirectory", "1.3.6.1.1.1.1.3", NULL, 0 },
	{ "loginshell", "1.3.6.1.1.1.1.4", NULL, 0 },
	{ "memberuid", "1.3.6.1.1.1.1.12", NULL, 0 },
};

/* Lower-cases t into buf and maps it; returns whether it is case-ignore. */
static int ref_type(const struct berval *t, char *buf, size_t cap)
{
	size_t n = t->bv_len < cap - 1 ? t->bv_len : cap - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)t->bv_val[i]);
	buf[n] = '\0';
	for (size_t i = 0; i < sizeof ref_attrs / sizeof ref_attrs[0]; i++) {
		if (!strcmp(buf, ref_attrs[i].name) || !strcmp(buf, ref_attrs[i].oid) ||
		    (ref_attrs[i].alias && !strcmp(buf, ref_attrs[i].alias))) {
			snprintf(buf, cap, "%s", ref_attrs[i].name);
			return ref_attrs[i].ci;
		}
	}
	return 0;
}

/* RFC 4518 insignificant space handling plus ASCII case folding. */
static size_t ref_fold(char *v, size_t n)
{
	char tmp[4096];
	size_t o = 0;
	size_t i = 0;
	while (i < n && v[i] == ' ')
		i++;
	size_t end = n;
	while (end > i && v[end - 1] == ' ')
		end--;
	for (; i < end; i++) {
		if (v[i] == ' ' && o > 0 && tmp[o - 1] == ' ')
			continue;
		tmp[o++] = (char)((v[i] >= 'A' && v[i] <= 'Z') ? v[i] + 32 : v[i]);
	}
	if (o == 0 && n > 0)
		tmp[o++] = ' ';
	memcpy(v, tmp, o);
	return o;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Returns 0 and the reference form in out, or -1 when libldap refuses. */
static int reference(const char *in, char *out, size_t cap)
{
	LDAPDN dn = NULL;
	if (ldap_str2dn(in, &dn, LDAP_DN_FORMAT_LDAP) != LDAP_SUCCESS)
		return -1;
	size_t o = 0;
	out[0] = '\0';
	int rc = 0;
	for (size_t r = 0; dn && dn[r] && rc == 0; r++) {
		char *avastr[64];
		size_t na = 0;
		for (size_t a = 0; dn[r][a] && na < 64; a++) {
			LDAPAVA *src = dn[r][a];
			char tbuf[256], vbuf[4096];
			int ci = ref_type(&src->la_attr, tbuf, sizeof tbuf);
			size_t vlen = src->la_value.bv_len < sizeof vbuf ? src->la_value.bv_len
									: sizeof vbuf - 1;
			if (vlen)
				memcpy(vbuf, src->la_value.bv_val, vlen);
			if (ci && !(src->la_flags & LDAP_AVA_BINARY))
				vlen = ref_fold(vbuf, vlen);
			/* libldap's serializer reads a whole UTF-8 sequence from its
			 * lead byte, even past bv_len: give it a terminator to stop on. */
			vbuf[vlen] = '\0';
			LDAPAVA ava = {
				.la_attr = { .bv_len = strlen(tbuf), .bv_val = tbuf },
				.la_value = { .bv_len = vlen, .bv_val = vbuf },
				.la_flags = src->la_flags & ~(LDAP_AVA_FREE_ATTR | LDAP_AVA_FREE_VALUE),
			};
			LDAPAVA *avas[2] = { &ava, NULL };
			LDAPRDN rdns[2] = { avas, NULL };
			char *s = NULL;
			if (ldap_dn2str(rdns, &s, LDAP_DN_FORMAT_LDAPV3) != LDAP_SUCCESS) {
				rc = -1;
				break;
			}
			avastr[na++] = s;
		}
		qsort(avastr, na, sizeof avastr[0], cmp_str);
		for (size_t a = 0; a < na; a++) {
			int n = snprintf(out + o, cap - o, "%s%s", a ? "+" : (r ? "," : ""),
					 avastr[a]);
			if (n < 0 || (size_t)n >= cap - o)
				rc = -1;
			else
				o += (size_t)n;
			ldap_memfree(avastr[a]);
		}
	}
	ldap_dnfree(dn);
	return rc;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = '\0';
	fclose(f);
	return s;
}

struct tag {
	char name[64];
	int used;
};

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s dn-corpus.txt DN-DIFFERENCES.md\n", argv[0]);
		return 2;
	}
	char *corpus = slurp(argv[1]), *doc = slurp(argv[2]);
	if (!corpus || !doc) {
		fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
		return 2;
	}

	struct tag tags[64];
	size_t ntags = 0;
	for (char *l = doc; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "### ", 4) || ntags == 64)
			continue;
		size_t n = strcspn(l + 4, " \r\n");
		if (n == 0 || n >= sizeof tags[0].name)
			continue;
		memcpy(tags[ntags].name, l + 4, n);
		tags[ntags].name[n] = '\0';
		tags[ntags++].used = 0;
	}

	int fails = 0, lines = 0, same = 0, both_refuse = 0, documented = 0;
	char *save = NULL;
	for (char *l = strtok_r(corpus, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (l[0] == '#' || l[0] == '\0')
			continue;
		char *tab = strchr(l, '\t');
		if (!tab) {
			fprintf(stderr, "corpus line without TAB: %s\n", l);
			fails++;
			continue;
		}
		*tab = '\0';
		const char *tagname = l, *in = tab + 1;
		lines++;

		char ref[8192], mine[LFE_DN_MAX + 1];
		int rrc = reference(in, ref, sizeof ref);
		ssize_t mrc = lfe_dn_normalize((const uint8_t *)in, strlen(in), mine, sizeof mine);
		int agree = (rrc < 0 && mrc < 0) ||
			    (rrc == 0 && mrc >= 0 && strcmp(ref, mine) == 0);

		if (strcmp(tagname, "=") == 0) {
			if (agree) {
				same += rrc == 0;
				both_refuse += rrc < 0;
				continue;
			}
			fprintf(stderr, "UNDOCUMENTED DIFFERENCE [%s]\n  libldap: %s\n  lfe:     %s\n",
				in, rrc < 0 ? "(refused)" : ref, mrc < 0 ? "(refused)" : mine);
			fails++;
			continue;
		}
		size_t t = 0;
		while (t < ntags && strcmp(tags[t].name, tagname))
			t++;
		if (t == ntags) {
			fprintf(stderr, "tag '%s' has no section in %s\n", tagname, argv[2]);
			fails++;
			continue;
		}
		tags[t].used++;
		if (agree) {
			fprintf(stderr, "documented difference '%s' no longer differs: [%s] -> %s\n",
				tagname, in, mrc < 0 ? "(refused)" : mine);
			fails++;
			continue;
		}
		documented++;
		printf("  %-14s [%s]\n    libldap: %s\n    lfe:     %s\n", tagname, in,
		       rrc < 0 ? "(refused)" : ref, mrc < 0 ? "(refused)" : mine);
	}
	for (size_t t = 0; t < ntags; t++) {
		if (!tags[t].used) {
			fprintf(stderr, "section '%s' is used by no corpus line\n", tags[t].name);
			fails++;
		}
	}
	printf("%d DNs: %d same output, %d refused by both, %d documented differences, %d failures\n",
	       lines, same, both_refuse, documented, fails);
	free(corpus);
	free(doc);
	return fails ? 1 : 0;
}
