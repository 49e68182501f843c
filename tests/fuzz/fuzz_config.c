/* tests/fuzz/fuzz_config.c — dataplane/config.c: input lines are
 * "section key value" (or "impair SPEC"); every value is accepted or
 * refused with a message, never crashes, and a finished config holds only
 * values inside their documented ranges. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lfe_config c;
	struct lfe_impair_opts io;
	char err[LFE_CFG_ERR_LEN];
	char *buf = malloc(size + 1), *save = NULL;

	memcpy(buf, data, size);
	buf[size] = '\0';
	lfe_config_defaults(&c);
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sec = line, *key = strchr(line, ' ');
		if (key == NULL)
			continue;
		*key++ = '\0';
		if (strcmp(sec, "impair") == 0) {
			if (lfe_config_parse_impair(key, &io, err, sizeof(err)) == 0 &&
			    (io.drop_ppm > 1000000 || io.dup_ppm > 1000000 || io.reorder_ppm > 1000000))
				abort();
			continue;
		}
		char *val = strchr(key, ' ');
		if (val == NULL)
			continue;
		*val++ = '\0';
		if (lfe_config_set(&c, sec, key, val, err, sizeof(err)) < 0 && strlen(err) == 0)
			abort();
	}
	if (lfe_config_finish(&c, err, sizeof(err)) == 0) {
		if (c.n_ports == 0 || c.n_ports > LFE_CFG_MAX_PORTS || c.store_path[0] == '\0')
			abort();
		if (c.max_pdu < 1024 || c.n_ldap_ports == 0 || c.n_ldap_ports > LFE_CFG_MAX_LISTEN)
			abort();
		for (uint32_t i = 0; i < c.n_ports; i++)
			if (c.port[i].addr == 0 || c.port[i].prefix_len == 0 || c.port[i].prefix_len > 32)
				abort();
		for (uint32_t i = 0; i < c.n_ldap_ports; i++)
			if (c.ldap_ports[i] == 0)
				abort();
		/* Timeouts stay where their µs cannot wrap; a group needs a user. */
		if (c.idle_timeout_ms > 86400000u || c.bind_timeout_ms > 86400000u ||
		    c.first_request_ms > 3600000u || c.pdu_timeout_ms < 100 || c.pdu_timeout_ms > 3600000u ||
		    (c.group[0] && !c.user[0]) || !memchr(c.user, 0, sizeof(c.user)))
			abort();
		/* What tls/tls.h takes: a CA for client verification. */
		if (c.tls_protocol_min < 2 || c.tls_protocol_min > 3 ||
		    c.tls_verify_client > LFE_TLS_VERIFY_REQUIRE ||
		    (c.tls_verify_client != LFE_TLS_VERIFY_NONE && c.tls_ca[0] == '\0') ||
		    c.tls_ticket_lifetime > LFE_TLS_TICKET_LIFETIME_MAX)
			abort();
		/* What backend/throttle.h accepts when enabled. */
		const struct lfe_cfg_throttle *t = &c.throttle;
		if (t->enabled && (t->window_ms == 0 || t->window_ms > 86400000u || t->penalty_ms == 0 ||
				   t->penalty_ms > 86400000u || t->src_failures > 65535 ||
				   t->dn_failures > 65535 || t->dn_global_failures > 65535 ||
				   (t->src_failures | t->dn_failures | t->dn_global_failures) == 0))
			abort();
	}
	free(buf);
	return 0;
}
