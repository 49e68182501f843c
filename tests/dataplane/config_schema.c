/* tests/dataplane/config_schema.c — lfe-config-schema: print config.c's
 * table of keys (dataplane/config.h, struct lfe_cfg_key).
 *
 *   lfe-config-schema        one key a line, tab-separated: section, key,
 *                            type, range, default ("-": none), another
 *                            valid value, LIVE or RESTART, the name a
 *                            refused reload gives it, help
 *   lfe-config-schema --man  the KEYS section of ldapfe.conf(5), which
 *                            dist/man/ldapfe.conf.5 must hold verbatim
 *
 * Used by check_conf_docs.py (conf/ldapfe.conf and the man page) and
 * tests/integration/test_confschema.sh (every key through a reload). */
#include <stdio.h>
#include <string.h>

#include "dataplane/config.h"

/* Text for roff: '-' as "\-", a leading '.' or '\'' guarded. */
static void roff(const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", stdout);
	for (; *s; s++) {
		if (*s == '-')
			fputs("\\-", stdout);
		else if (*s == '\\')
			fputs("\\e", stdout);
		else
			putchar(*s);
	}
}

static void man(const struct lfe_cfg_key *t, size_t n)
{
	const char *sec = "";
	for (size_t i = 0; i < n; i++) {
		const struct lfe_cfg_key *k = &t[i];
		char range[64];
		if (strcmp(k->section, sec) != 0) {
			sec = k->section;
			if (strcmp(sec, "port") == 0)
				printf(".SS [port0] .. [port%u]\n", LFE_CFG_MAX_PORTS - 1);
			else
				printf(".SS [%s]\n", sec);
		}
		lfe_config_key_range(k, range, sizeof range);
		printf(".TP\n.B %s\n", k->key);
		roff(k->help);
		printf("\nType: %s", lfe_config_key_type(k));
		if (strcmp(range, "-") != 0) {
			fputs(", ", stdout);
			roff(range);
		}
		fputs(". Default: ", stdout);
		if (k->def && k->def[0])
			roff(k->def);
		else
			fputs("none", stdout);
		printf(". %s\n", k->reload == LFE_CFG_LIVE ? "Live: a reload applies it."
			 : "Restart: a reload that changes it is refused.");
	}
}

int main(int argc, char **argv)
{
	size_t n;
	const struct lfe_cfg_key *t = lfe_config_keys(&n);

	if (argc == 2 && strcmp(argv[1], "--man") == 0) {
		man(t, n);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: lfe-config-schema [--man]\n");
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		const struct lfe_cfg_key *k = &t[i];
		char range[64], name[80];
		lfe_config_key_range(k, range, sizeof range);
		lfe_config_key_name(k, name, sizeof name);
		printf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k->section, k->key, lfe_config_key_type(k), range,
		       k->def && k->def[0] ? k->def : "-", k->alt, k->reload == LFE_CFG_LIVE ? "LIVE" : "RESTART",
		       name, k->help);
	}
	return 0;
}
