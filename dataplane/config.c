/* dataplane/config.c — configuration keys, table-driven; see config.h. */
#include "dataplane/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ldap/dn.h"
#include "dataplane/log.h"
#include "net/net.h"
#include "common/share.h"
#include "net/tcp.h"

enum key_type { K_STR, K_U32, K_U64, K_BOOL, K_PORTS, K_LCORES, K_SCHEME, K_CIDR, K_IPV4, K_U16,
		K_ACCESS, K_SCOPE, K_DN, K_ATTRS, K_TLSPORTS, K_REQTLS, K_TLSVERIFY, K_TLSPROTO, K_TLSREC,
		K_AUTOOFF, K_FILE };

#define CF(f) offsetof(struct lfe_config, f)
#define PF(f) offsetof(struct lfe_cfg_port, f)
/* A text field of struct lfe_config (or lfe_cfg_port): offset and size. */
#define CS(f) CF(f), sizeof(((struct lfe_config *)0)->f)
#define PS(f) PF(f), sizeof(((struct lfe_cfg_port *)0)->f)
#define LIVE LFE_CFG_LIVE
#define RESTART LFE_CFG_RESTART

/* Every key, once. def: the default as written in the file (NULL: none or
 * computed, the help says which); alt: another valid value. A reload
 * copies the LIVE rows' fields and refuses a change to a RESTART row. The
 * man page's KEYS section is printed from this (lfe-config-schema --man). */
static const struct lfe_cfg_key keys[] = {
	{ "store", "path", K_STR, CS(store_path), 1, 0, NULL, "/var/lib/ldapfe/other", RESTART,
	  "The LMDB store written by ldapfectl, opened read-only (required)." },
	{ "store", "default_scheme", K_SCHEME, CS(default_scheme), 0, 0, NULL, "{SSHA512}", RESTART,
	  "Scheme of the dummy verification that unknown DNs get; empty or unset: the store's own." },
	{ "store", "allow_cleartext", K_BOOL, CF(allow_cleartext), 0, 0, 0, "false", "true", RESTART,
	  "Accept {CLEARTEXT} and unprefixed userPassword values." },
	{ "store", "preload", K_BOOL, CF(store_preload), 0, 0, 0, "false", "true", RESTART,
	  "Read the store once at start so the map can use 2 MiB pages." },
	/* ≤ LFE_CREDCACHE_MAX (backend/credcache.h): 512 MiB per core. */
	{ "store", "bind_cache", K_U32, CF(bind_cache), 0, 0, 1u << 24, "65536", "1024", RESTART,
	  "Verified-credential cache entries per worker core (32 bytes each); 0 = off." },
	{ "ldap", "port", K_PORTS, 0, 0, 1, 65535, "389", "1389", RESTART,
	  "Cleartext LDAP port, or a comma list of at most 8 (the same key as ports)." },
	{ "ldap", "ports", K_PORTS, 0, 0, 1, 65535, "389", "389,1389", RESTART,
	  "Cleartext LDAP ports, a comma list of at most 8 (the same key as port)." },
	{ "ldap", "max_pdu", K_U32, CF(max_pdu), 0, 1024, 16u << 20, "65536", "131072", RESTART,
	  "Largest LDAPMessage accepted, in bytes." },
	{ "ldap", "allow_anonymous", K_BOOL, CF(allow_anonymous), 0, 0, 0, "true", "false", LIVE,
	  "Accept anonymous binds (false also refuses anonymous searches)." },
	{ "ldap", "idle_timeout_ms", K_U64, CF(idle_timeout_ms), 0, 0, 86400000u, "300000", "600000", RESTART,
	  "Idle connections are closed after this long; 0 = never." },
	{ "ldap", "max_conns_per_core", K_U32, CF(max_conns_per_core), 0, 1, 1u << 20, "4096", "2048", RESTART,
	  "Connection table and session pool of each worker core." },
	{ "ldap", "request_slice_us", K_U32, CF(request_slice_us), 0, 10, 1000000, "200", "300", LIVE,
	  "Worker time one search may take in one loop turn before it yields." },
	{ "ldap", "search_max_candidates", K_U32, CF(search_max_candidates), 0, 1, 10000000, "10000", "5000", LIVE,
	  "Entries one search may visit; past them adminLimitExceeded (11)." },
	{ "ldap", "search_size_limit", K_U32, CF(search_size_limit), 0, 0, 10000000, "0", "100", LIVE,
	  "Entries one search may return (a client's smaller sizelimit wins); 0 = no limit." },
	{ "ldap", "max_conns_per_source", K_U32, CF(max_conns_per_source), 0, 0, 1u << 20, "256", "128", RESTART,
	  "Per core, the fair share of connections of a client address never drops below it; 0 = none." },
	/* LFE_SHARE_PRESSURE_PCT (common/share.h): test_config checks they agree. */
	{ "ldap", "share_pressure_pct", K_U32, CF(share_pressure_pct), 0, 0, 100, "75", "90", RESTART,
	  "Below this percent of a shared resource no per-source bound applies; 100 = off." },
	{ "ldap", "pdu_timeout_ms", K_U64, CF(pdu_timeout_ms), 0, 100, 3600000u, "5000", "2500", LIVE,
	  "A request split over segments must be complete within this long, else reset." },
	{ "ldap", "first_request_ms", K_U64, CF(first_request_ms), 0, 0, 3600000u, "10000", "5000", LIVE,
	  "The first request must start within this long of connect; 0 = off." },
	{ "ldap", "bind_timeout_ms", K_U64, CF(bind_timeout_ms), 0, 0, 86400000u, "0", "30000", LIVE,
	  "A connection not bound to a DN within this long of connect is reset; 0 = off." },
	{ "ldap", "suffix", K_STR, CS(suffix), 0, 0, NULL, "dc=example,dc=org", RESTART,
	  "Shown in the root DSE; unset: the store's suffix." },
	{ "ldap", "search_access", K_ACCESS, CF(search_access), 0, 0, 0, NULL, "bound", LIVE,
	  "Who may search: anonymous, bound or none; unset: anonymous when allow_anonymous, else bound." },
	{ "ldap", "search_scope", K_SCOPE, CF(search_scope), 0, 0, 0, "sub", "one", LIVE,
	  "The widest search scope allowed." },
	{ "ldap", "require_tls", K_REQTLS, CF(require_tls), 0, 0, 0, "none", "bind", LIVE,
	  "bind: a cleartext password bind gets confidentialityRequired; all: every operation but "
	  "StartTLS, the root DSE and unbind (needs [tls])." },
	{ "ldap", "search_base", K_DN, CS(search_base), 0, 0, NULL, "ou=people,dc=example,dc=com", LIVE,
	  "Searches must be at or under this DN; unset: the suffix." },
	{ "ldap", "search_attrs", K_ATTRS, CS(search_attrs), 0, 0, NULL, "uid,cn,mail", LIVE,
	  "Comma list of the only attribute types a search may return or test; unset: all but the "
	  "password types." },
	{ "ldap", "ldaps_ports", K_TLSPORTS, 0, 0, 1, 65535, NULL, "1636", RESTART,
	  "Ports that speak TLS from the first byte (needs [tls]); unset: none." },
	{ "tls", "certificate", K_FILE, CS(tls_certificate), 1, 0, NULL, "/etc/ldapfe/tls/other.crt", LIVE,
	  "PEM certificate (chain allowed, leaf first); needed by ldaps_ports and require_tls." },
	{ "tls", "key", K_FILE, CS(tls_key), 1, 0, NULL, "/etc/ldapfe/tls/other.key", LIVE,
	  "The certificate's unencrypted PEM key." },
	{ "tls", "ca", K_FILE, CS(tls_ca), 0, 0, NULL, "/etc/ldapfe/tls/other-ca.crt", LIVE,
	  "CA certificates (PEM) that sign client certificates; unset: none." },
	{ "tls", "verify_client", K_TLSVERIFY, CF(tls_verify_client), 0, 0, 0, "none", "optional", LIVE,
	  "Client certificates: none, optional (one presented must verify) or require (needs ca)." },
	{ "tls", "protocol_min", K_TLSPROTO, CF(tls_protocol_min), 0, 0, 0, "1.2", "1.3", LIVE,
	  "Lowest TLS version offered." },
	{ "tls", "ciphers", K_STR, CS(tls_ciphers), 1, 0, NULL, "ECDHE-ECDSA-AES256-GCM-SHA384", LIVE,
	  "TLS 1.2 cipher list (OpenSSL syntax); unset: ECDHE with AEAD only." },
	{ "tls", "ciphersuites", K_STR, CS(tls_ciphersuites), 1, 0, NULL, "TLS_AES_256_GCM_SHA384", LIVE,
	  "TLS 1.3 ciphersuites (OpenSSL syntax); unset: AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305." },
	/* LFE_TLS_TICKET_LIFETIME_DEFAULT (tls/tls.h): test_config checks they agree. */
	{ "tls", "ticket_lifetime", K_U32, CF(tls_ticket_lifetime), 0, 0, LFE_TLS_TICKET_LIFETIME_MAX,
	  "7200", "600", LIVE, "Session ticket lifetime in seconds; 0 = no tickets, no resumption." },
	{ "tls", "record_layer", K_TLSREC, CF(tls_record_layer), 0, 0, 0, "ldapfe", "openssl", LIVE,
	  "Records of established TLS 1.3 AEAD connections: ldapfe's own, or openssl throughout." },
	{ "tls", "handshake_threads", K_U32, CF(tls_handshake_threads), 0, 0, 64, "1", "2", RESTART,
	  "Crypto threads that run handshake steps off the workers; 0 = inline on the worker." },
	{ "tls", "handshake_queue", K_U32, CF(tls_handshake_queue), 0, 1, 1u << 16, "1024", "128", RESTART,
	  "Handshakes in progress at most, shared equally by the workers; beyond, RST." },
	{ "tls", "handshake_per_source", K_U32, CF(tls_handshake_per_source), 0, 1, 1u << 16, "16", "4", RESTART,
	  "Under pressure a client address's share of a worker's handshakes is never below it." },
	{ "tls", "handshake_timeout_ms", K_U64, CF(tls_handshake_timeout_ms), 0, 0, 600000u, "10000", "2500",
	  LIVE, "A TLS handshake must finish within this long of its start, else reset; 0 = no limit." },
	{ "port", "dev", K_STR, PS(dev), 1, 0, NULL, "net_af_packet1,iface=veth1", RESTART,
	  "A vdev string, hot-plugged at start (required)." },
	{ "port", "address", K_CIDR, 0, 0, 0, 0, NULL, "10.98.0.1/24", RESTART,
	  "The port's address, a.b.c.d/len (required)." },
	{ "port", "gateway", K_IPV4, PF(gateway), 0, 0, 0, NULL, "10.98.0.254", RESTART,
	  "Next hop for clients outside the subnet; unset: none." },
	{ "port", "mtu", K_U16, PF(mtu), 0, 576, 9000, "1500", "9000", RESTART,
	  "The port's MTU." },
	{ "port", "checksum_offload", K_AUTOOFF, PF(checksum_offload), 0, 0, 0, "auto", "off", RESTART,
	  "IPv4/TCP checksums: auto, by the device where it can; off, on the worker." },
	{ "workers", "lcores", K_LCORES, 0, 0, 0, LFE_CFG_MAX_LCORES - 1, NULL, "1", RESTART,
	  "EAL lcores that run workers; unset: every EAL worker lcore, or the main lcore alone." },
	{ "workers", "verifier_threads", K_U32, CF(verifier_threads), 0, 1, 64, "1", "2", RESTART,
	  "Threads verifying slow password schemes." },
	{ "workers", "verify_queue", K_U32, CF(verify_queue), 0, 64, 1u << 16, "1024", "2048", RESTART,
	  "Slow verifications queued at most, shared equally by the workers; beyond, busy (51)." },
	{ "workers", "verify_per_source", K_U32, CF(verify_per_source), 0, 1, 1u << 16, "8", "16", RESTART,
	  "Under pressure a client address's share of a worker's verifications is never below it." },
	{ "workers", "idle_sleep_us", K_U32, CF(idle_sleep_us), 0, 0, 100000, "0", "100", RESTART,
	  "Sleep this long when idle (shared CPUs); 0 = pure polling." },
	{ "daemon", "user", K_STR, CS(user), 1, 0, NULL, "nobody", RESTART,
	  "Drop root to this user once ports are up; unset: stay root." },
	{ "daemon", "group", K_STR, CS(group), 1, 0, NULL, "nogroup", RESTART,
	  "The group to drop to (needs user); unset: the user's primary group." },
	{ "daemon", "log", K_STR, CS(log_dest), 1, 0, "stderr", "syslog", RESTART,
	  "Where event lines go: stderr or syslog." },
	{ "daemon", "log_level", K_STR, CS(log_level), 1, 0, "info", "debug", RESTART,
	  "err, warn, info or debug." },
	{ "throttle", "enabled", K_BOOL, CF(throttle.enabled), 0, 0, 0, "false", "true", RESTART,
	  "Throttle failed binds per worker core (backend/throttle.h)." },
	{ "throttle", "src_failures", K_U32, CF(throttle.src_failures), 0, 0, 65535, "100", "50", LIVE,
	  "Failures from one client address, any DN, within window_ms; 0 = off." },
	{ "throttle", "dn_failures", K_U32, CF(throttle.dn_failures), 0, 0, 65535, "5", "3", LIVE,
	  "Failures for one DN from one address; 0 = off." },
	{ "throttle", "dn_global_failures", K_U32, CF(throttle.dn_global_failures), 0, 0, 65535, "0", "10",
	  LIVE, "Failures for one DN from all addresses (lets anyone lock it out); 0 = off." },
	{ "throttle", "window_ms", K_U32, CF(throttle.window_ms), 0, 1, 86400000u, "60000", "30000", LIVE,
	  "The window failures are counted in (a reload that needs more memory is refused)." },
	{ "throttle", "penalty_ms", K_U32, CF(throttle.penalty_ms), 0, 1, 86400000u, "60000", "30000", LIVE,
	  "How long a key over its threshold gets invalidCredentials without verification." },
	{ "tcp", "buffer_pool", K_U32, CF(tcp_buffer_pool), 0, 0, 1u << 24, "0", "8192", RESTART,
	  "Send rings and receive buffers per core; 0 = from max_conns_per_core." },
	{ "tcp", "buffer_stall_ms", K_U64, CF(tcp_buffer_stall_ms), 0, 0, 86400000u, "60000", "30000", RESTART,
	  "A connection holding a buffer without progress this long is reset; 0 = off." },
	/* syn_rate, syn_rate_validated, validated_sources: lfe_tcp_cfg_default's
	 * (net/tcp.c): test_config checks they agree. */
	{ "tcp", "syn_rate", K_U32, CF(tcp_syn_rate), 0, 0, 100000000u, "100000", "50000", RESTART,
	  "SYNs per second per core admitted while SYN cookies are out; 0 = no limit." },
	{ "tcp", "syn_rate_validated", K_U32, CF(tcp_syn_rate_validated), 0, 0, 100000000u, "400000", "200000",
	  RESTART, "The same for sources that completed a handshake recently; 0 = no limit." },
	{ "tcp", "validated_sources", K_U32, CF(tcp_validated_sources), 0, 0, 1u << 24, "16384", "8192",
	  RESTART, "Entries of the table of validated sources; 0 = none." },
	{ "admin", "metrics_listen", K_STR, CS(metrics_listen), 0, 0, LFE_CFG_METRICS_DEFAULT,
	  "127.0.0.1:9390", RESTART, "Prometheus /metrics on this kernel address:port; empty = off." },
};

const struct lfe_cfg_key *lfe_config_keys(size_t *n)
{
	*n = sizeof keys / sizeof keys[0];
	return keys;
}

size_t lfe_config_key_size(const struct lfe_cfg_key *k)
{
	switch (k->type) {
	case K_STR: case K_FILE: case K_SCHEME: case K_DN: case K_ATTRS:
		return k->size;
	case K_U64:
		return sizeof(uint64_t);
	case K_U32: case K_IPV4:
		return sizeof(uint32_t);
	case K_U16:
		return sizeof(uint16_t);
	case K_BOOL: case K_AUTOOFF:
		return sizeof(bool);
	case K_ACCESS:
		return sizeof(enum lfe_search_access);
	case K_SCOPE:
		return sizeof(enum lfe_search_scope_max);
	case K_REQTLS:
		return sizeof(enum lfe_require_tls);
	case K_TLSVERIFY:
		return sizeof(enum lfe_tls_verify);
	case K_TLSPROTO:
		return sizeof(unsigned);
	case K_TLSREC:
		return sizeof(enum lfe_tls_record);
	default:
		return 0;
	}
}

static bool is_text(const struct lfe_cfg_key *k)
{
	return k->type == K_STR || k->type == K_FILE || k->type == K_SCHEME || k->type == K_DN ||
	       k->type == K_ATTRS;
}

static bool field_differs(const struct lfe_cfg_key *k, const uint8_t *a, const uint8_t *b)
{
	size_t n = lfe_config_key_size(k);
	if (is_text(k))
		return strncmp((const char *)a + k->off, (const char *)b + k->off, n) != 0;
	return memcmp(a + k->off, b + k->off, n) != 0;
}

/* "[ldap] port" is another name of "[ldap] ports": compared, named and
 * refused as that. */
static bool is_alias(const struct lfe_cfg_key *k)
{
	return k->type == K_PORTS && strcmp(k->key, "port") == 0;
}

/* Whether row k differs between a and b; for "port" rows the first port
 * that differs in *port, and whether the port itself was added or removed
 * in *presence. */
static bool key_differs(const struct lfe_cfg_key *k, const struct lfe_config *a,
			const struct lfe_config *b, unsigned *port, bool *presence)
{
	*presence = false;
	switch (k->type) {
	case K_PORTS:
		return a->n_ldap_ports != b->n_ldap_ports ||
		       memcmp(a->ldap_ports, b->ldap_ports, sizeof a->ldap_ports) != 0;
	case K_TLSPORTS:
		return a->n_ldaps_ports != b->n_ldaps_ports ||
		       memcmp(a->ldaps_ports, b->ldaps_ports, sizeof a->ldaps_ports) != 0;
	case K_LCORES:
		return a->n_lcores != b->n_lcores || memcmp(a->lcores, b->lcores, sizeof a->lcores) != 0;
	default:
		break;
	}
	if (strcmp(k->section, "port") != 0)
		return lfe_config_key_size(k) && field_differs(k, (const uint8_t *)a, (const uint8_t *)b);
	for (*port = 0; *port < LFE_CFG_MAX_PORTS; (*port)++) {
		const struct lfe_cfg_port *pa = &a->port[*port], *pb = &b->port[*port];
		if (pa->present != pb->present) {
			*presence = true;
			return true;
		}
		if (k->type == K_CIDR ? pa->addr != pb->addr || pa->prefix_len != pb->prefix_len
		    : field_differs(k, (const uint8_t *)pa, (const uint8_t *)pb))
			return true;
	}
	return false;
}

/* "[section] key", "[portN] key" or "[portN]" for a row that differs. */
static void key_name(const struct lfe_cfg_key *k, unsigned port, bool presence, char *name, size_t len)
{
	if (strcmp(k->section, "port") == 0 && presence)
		snprintf(name, len, "[port%u]", port);
	else if (strcmp(k->section, "port") == 0)
		snprintf(name, len, "[port%u] %s", port, k->key);
	else
		snprintf(name, len, "[%s] %s", k->section, is_alias(k) ? "ports" : k->key);
}

void lfe_config_key_name(const struct lfe_cfg_key *k, char *name, size_t len)
{
	key_name(k, 0, false, name, len);
}

bool lfe_config_differs(const struct lfe_config *a, const struct lfe_config *b, char *name,
			size_t len)
{
	unsigned port = 0;
	bool presence;

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		if (key_differs(&keys[i], a, b, &port, &presence)) {
			key_name(&keys[i], port, presence, name, len);
			return true;
		}
	}
	return false;
}

unsigned lfe_config_restart_differs(const struct lfe_config *a, const struct lfe_config *b,
				    char *name, size_t len)
{
	unsigned n = 0, port = 0;
	size_t at = 0;
	bool presence, ports_named = false;

	if (len)
		name[0] = '\0';
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const struct lfe_cfg_key *k = &keys[i];
		char one[80];
		if (k->reload != LFE_CFG_RESTART || !key_differs(k, a, b, &port, &presence))
			continue;
		if (k->type == K_PORTS) {   /* port and ports: one key */
			if (ports_named)
				continue;
			ports_named = true;
		}
		key_name(k, port, presence, one, sizeof one);
		if (at < len) {
			int w = snprintf(name + at, len - at, "%s%s", n ? ", " : "", one);
			at += w > 0 ? (size_t)w : 0;
		}
		n++;
	}
	return n;
}

void lfe_config_copy_live(struct lfe_config *dst, const struct lfe_config *src)
{
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const struct lfe_cfg_key *k = &keys[i];
		size_t n = lfe_config_key_size(k);
		if (k->reload != LFE_CFG_LIVE || n == 0)
			continue;
		if (strcmp(k->section, "port") == 0) {
			for (unsigned p = 0; p < LFE_CFG_MAX_PORTS; p++)
				memcpy((uint8_t *)&dst->port[p] + k->off, (const uint8_t *)&src->port[p] + k->off, n);
		} else {
			memcpy((uint8_t *)dst + k->off, (const uint8_t *)src + k->off, n);
		}
	}
}

bool lfe_config_key_alias(const struct lfe_cfg_key *k)
{
	return is_alias(k);
}

enum lfe_cfg_json lfe_config_key_json(const struct lfe_cfg_key *k)
{
	switch (k->type) {
	case K_U32: case K_U64: case K_U16:
		return LFE_CFG_JSON_NUMBER;
	case K_BOOL:
		return LFE_CFG_JSON_BOOL;
	case K_PORTS: case K_TLSPORTS: case K_LCORES:
		return LFE_CFG_JSON_LIST;
	default:
		return LFE_CFG_JSON_TEXT;
	}
}

/* snprintf into buf at *at; false once it no longer fits. */
static bool put(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static bool put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = *at < len ? vsnprintf(buf + *at, len - *at, fmt, ap) : -1;
	va_end(ap);
	if (w < 0 || (size_t)w >= len - *at)
		return false;
	*at += (size_t)w;
	return true;
}

/* One of an enum's words by its value; NULL when out of the table. */
static const char *word(const char *const *words, size_t n, unsigned v)
{
	return v < n ? words[v] : NULL;
}
#define WORD(t, v) word(t, sizeof(t) / sizeof(t[0]), (unsigned)(v))

int lfe_config_key_format(const struct lfe_config *c, const struct lfe_cfg_key *k, unsigned port,
			  char *buf, size_t len)
{
	static const char *const access[] = { [LFE_SEARCH_ACCESS_ANONYMOUS] = "anonymous",
		[LFE_SEARCH_ACCESS_BOUND] = "bound", [LFE_SEARCH_ACCESS_NONE] = "none" };
	static const char *const scope[] = { [LFE_SEARCH_SCOPE_SUB] = "sub",
		[LFE_SEARCH_SCOPE_ONE] = "one", [LFE_SEARCH_SCOPE_BASE] = "base" };
	static const char *const reqtls[] = { [LFE_REQUIRE_TLS_NONE] = "none",
		[LFE_REQUIRE_TLS_BIND] = "bind", [LFE_REQUIRE_TLS_ALL] = "all" };
	static const char *const verify[] = { [LFE_TLS_VERIFY_NONE] = "none",
		[LFE_TLS_VERIFY_OPTIONAL] = "optional", [LFE_TLS_VERIFY_REQUIRE] = "require" };
	static const char *const proto[] = { [2] = "1.2", [3] = "1.3" };
	static const char *const rec[] = { [LFE_TLS_RECORD_LDAPFE] = "ldapfe",
		[LFE_TLS_RECORD_OPENSSL] = "openssl" };
	const uint8_t *base = (const uint8_t *)c;
	const char *w = NULL;
	size_t at = 0;
	bool ok = true;

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (strcmp(k->section, "port") == 0) {
		if (port >= LFE_CFG_MAX_PORTS)
			return -EINVAL;
		base = (const uint8_t *)&c->port[port];
	}
	const void *f = base + k->off;
	switch (k->type) {
	case K_STR: case K_FILE: case K_SCHEME: case K_DN: case K_ATTRS: {
		const char *s = f;
		size_t l = strnlen(s, k->size);
		/* empty: unset, unless the parser takes empty for something
		 * else than the default ([admin] metrics_listen: off) */
		if (l == 0 && (k->min > 0 || k->type == K_DN || k->type == K_ATTRS || k->def == NULL ||
			       k->def[0] == '\0'))
			return LFE_CFG_UNSET;
		ok = put(buf, len, &at, "%.*s", (int)l, s);
		break;
	}
	case K_U64:
		ok = put(buf, len, &at, "%llu", (unsigned long long)*(const uint64_t *)f);
		break;
	case K_U32:
		ok = put(buf, len, &at, "%u", (unsigned)*(const uint32_t *)f);
		break;
	case K_U16:
		ok = put(buf, len, &at, "%u", (unsigned)*(const uint16_t *)f);
		break;
	case K_BOOL:
		w = *(const bool *)f ? "true" : "false";
		break;
	case K_AUTOOFF:
		w = *(const bool *)f ? "auto" : "off";
		break;
	case K_PORTS: case K_TLSPORTS: {
		bool tls = k->type == K_TLSPORTS;
		uint32_t n = tls ? c->n_ldaps_ports : c->n_ldap_ports;
		const uint16_t *v = tls ? c->ldaps_ports : c->ldap_ports;
		if (n == 0)
			return LFE_CFG_UNSET;
		for (uint32_t i = 0; i < n && i < LFE_CFG_MAX_LISTEN && ok; i++)
			ok = put(buf, len, &at, "%s%u", i ? "," : "", v[i]);
		break;
	}
	case K_LCORES:
		if (c->n_lcores == 0)
			return LFE_CFG_UNSET;
		for (uint32_t i = 0; i < c->n_lcores && i < LFE_CFG_MAX_LCORES && ok; i++)
			ok = put(buf, len, &at, "%s%u", i ? "," : "", c->lcores[i]);
		break;
	case K_CIDR: {
		const struct lfe_cfg_port *p = (const struct lfe_cfg_port *)base;
		uint32_t a = p->addr;
		if (a == 0)
			return LFE_CFG_UNSET;
		ok = put(buf, len, &at, "%u.%u.%u.%u/%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255,
			 p->prefix_len);
		break;
	}
	case K_IPV4: {
		uint32_t a = *(const uint32_t *)f;
		if (a == 0)
			return LFE_CFG_UNSET;
		ok = put(buf, len, &at, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
		break;
	}
	case K_ACCESS:
		if (*(const enum lfe_search_access *)f == LFE_SEARCH_ACCESS_DEFAULT)
			return LFE_CFG_UNSET;
		w = WORD(access, *(const enum lfe_search_access *)f);
		break;
	case K_SCOPE:
		w = WORD(scope, *(const enum lfe_search_scope_max *)f);
		break;
	case K_REQTLS:
		w = WORD(reqtls, *(const enum lfe_require_tls *)f);
		break;
	case K_TLSVERIFY:
		w = WORD(verify, *(const enum lfe_tls_verify *)f);
		break;
	case K_TLSPROTO:
		w = WORD(proto, *(const unsigned *)f);
		break;
	case K_TLSREC:
		w = WORD(rec, *(const enum lfe_tls_record *)f);
		break;
	default:
		return -EINVAL;
	}
	switch (k->type) {
	case K_BOOL: case K_AUTOOFF: case K_ACCESS: case K_SCOPE: case K_REQTLS: case K_TLSVERIFY:
	case K_TLSPROTO: case K_TLSREC:
		if (w == NULL)
			return -EINVAL;   /* a value no word names: not one the parser makes */
		ok = put(buf, len, &at, "%s", w);
		break;
	default:
		break;
	}
	return ok ? 0 : -ENOSPC;
}

const char *lfe_config_key_type(const struct lfe_cfg_key *k)
{
	static const char *const names[] = {
		[K_STR] = "text", [K_FILE] = "file", [K_U32] = "number", [K_U64] = "number",
		[K_U16] = "number", [K_BOOL] = "bool", [K_PORTS] = "ports", [K_TLSPORTS] = "ports",
		[K_LCORES] = "lcores", [K_SCHEME] = "scheme", [K_CIDR] = "cidr", [K_IPV4] = "ipv4",
		[K_ACCESS] = "enum", [K_SCOPE] = "enum", [K_REQTLS] = "enum", [K_TLSVERIFY] = "enum",
		[K_TLSPROTO] = "enum", [K_TLSREC] = "enum", [K_AUTOOFF] = "enum", [K_DN] = "dn",
		[K_ATTRS] = "attrs",
	};
	return k->type < sizeof names / sizeof names[0] && names[k->type] ? names[k->type] : "?";
}

void lfe_config_key_range(const struct lfe_cfg_key *k, char *buf, size_t len)
{
	const char *choices = NULL;
	switch (k->type) {
	case K_U32: case K_U64: case K_U16: case K_PORTS: case K_TLSPORTS: case K_LCORES:
		snprintf(buf, len, "%llu..%llu", (unsigned long long)k->min, (unsigned long long)k->max);
		return;
	case K_BOOL: choices = "true|false"; break;
	case K_ACCESS: choices = "anonymous|bound|none"; break;
	case K_SCOPE: choices = "base|one|sub"; break;
	case K_REQTLS: choices = "none|bind|all"; break;
	case K_TLSVERIFY: choices = "none|optional|require"; break;
	case K_TLSPROTO: choices = "1.2|1.3"; break;
	case K_TLSREC: choices = "ldapfe|openssl"; break;
	case K_AUTOOFF: choices = "auto|off"; break;
	default: choices = "-"; break;
	}
	snprintf(buf, len, "%s", choices);
}

/* Password schemes a store may default to (those backend/pwscheme.c hashes). */
static const char *const schemes[] = {
	"{SSHA}", "{SSHA256}", "{SSHA512}", "{SHA}", "{SHA256}", "{SHA512}",
	"{CRYPT}", "{ARGON2}", "{PBKDF2-SHA1}", "{PBKDF2-SHA256}", "{PBKDF2-SHA512}",
};

static int errf(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int errf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static int set_value(struct lfe_config *c, uint8_t *base, const struct lfe_cfg_key *k,
		     const char *section, const char *key, const char *raw, char *err, size_t errlen);

/* Every row's def, parsed as if written in the file ("port" rows into
 * every port, which stays absent). The table's defaults are checked by
 * test_config, so a failure here cannot happen. */
void lfe_config_defaults(struct lfe_config *c)
{
	char err[LFE_CFG_ERR_LEN];

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const struct lfe_cfg_key *k = &keys[i];
		if (k->def == NULL)
			continue;
		if (strcmp(k->section, "port") == 0) {
			for (uint32_t p = 0; p < LFE_CFG_MAX_PORTS; p++)
				(void)set_value(c, (uint8_t *)&c->port[p], k, "port", k->key, k->def, err, sizeof(err));
		} else {
			(void)set_value(c, (uint8_t *)c, k, k->section, k->key, k->def, err, sizeof(err));
		}
	}
}

int lfe_config_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10u)
			return -EINVAL;
		v = v * 10u + d;
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, bool *b)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) { *b = true; return 0; }
		if (strcasecmp(s, no[i]) == 0) { *b = false; return 0; }
	}
	return -EINVAL;
}

static void trim_inplace(char *t)
{
	size_t a = 0, l = strlen(t);
	while (isspace((unsigned char)t[a]))
		a++;
	while (l > a && isspace((unsigned char)t[l - 1]))
		l--;
	memmove(t, t + a, l - a);
	t[l - a] = '\0';
}

/* Split a comma list into numbers (ranges "a-b" when allow_range) within
 * [min, max], refusing duplicates. */
static int parse_list(const char *s, bool allow_range, uint64_t min, uint64_t max,
		      uint32_t *out, uint32_t cap, uint32_t *n, const char **why)
{
	char tok[32];
	uint32_t cnt = 0;

	*why = "expected a comma-separated list of numbers";
	while (*s) {
		size_t l = strcspn(s, ",");
		if (l == 0 || l >= sizeof(tok))
			return -EINVAL;
		memcpy(tok, s, l);
		tok[l] = '\0';
		s += l;
		if (*s == ',' && *++s == '\0')
			return -EINVAL;
		trim_inplace(tok);
		char *dash = allow_range ? strchr(tok, '-') : NULL;
		uint64_t lo, hi;
		if (dash) {
			*dash = '\0';
			if (lfe_config_parse_u64(tok, min, max, &lo) < 0 ||
			    lfe_config_parse_u64(dash + 1, min, max, &hi) < 0 || hi < lo) {
				*why = "bad range or value out of range";
				return -EINVAL;
			}
		} else {
			if (lfe_config_parse_u64(tok, min, max, &lo) < 0) {
				*why = "value not a number or out of range";
				return -EINVAL;
			}
			hi = lo;
		}
		for (uint64_t v = lo; v <= hi; v++) {
			for (uint32_t i = 0; i < cnt; i++) {
				if (out[i] == v) {
					*why = "duplicate value";
					return -EINVAL;
				}
			}
			if (cnt == cap) {
				*why = "too many values";
				return -EINVAL;
			}
			out[cnt++] = (uint32_t)v;
		}
	}
	if (cnt == 0)
		return -EINVAL;
	*n = cnt;
	return 0;
}

/* Writes *out_addr and *plen only when the whole value is valid. */
static int parse_cidr(const char *s, uint32_t *out_addr, uint8_t *plen, const char **why)
{
	char buf[32];
	uint32_t a, *addr = &a;
	const char *slash = strchr(s, '/');
	uint64_t p;

	*why = "expected a.b.c.d/len";
	if (slash == NULL || (size_t)(slash - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (lfe_net_parse_ipv4(buf, addr) < 0)
		return -EINVAL;
	if (lfe_config_parse_u64(slash + 1, 1, 32, &p) < 0) {
		*why = "prefix length must be 1..32";
		return -EINVAL;
	}
	uint32_t mask = p == 32 ? 0xffffffffu : ~(0xffffffffu >> p);
	if (*addr == 0 || (*addr >> 28) >= 0xe || (*addr >> 24) == 127) {
		*why = "not a unicast host address";
		return -EINVAL;
	}
	if (p <= 30 && ((*addr & ~mask) == 0 || (*addr & ~mask) == ~mask)) {
		*why = "network or broadcast address of its subnet";
		return -EINVAL;
	}
	*out_addr = a;
	*plen = (uint8_t)p;
	return 0;
}

static void trim(const char *in, char *out, size_t cap)
{
	while (isspace((unsigned char)*in))
		in++;
	size_t l = strlen(in);
	while (l && isspace((unsigned char)in[l - 1]))
		l--;
	if (l >= cap)
		l = cap - 1;   /* callers check lengths against the raw value first */
	memcpy(out, in, l);
	out[l] = '\0';
}

int lfe_config_set(struct lfe_config *c, const char *section, const char *key,
		   const char *raw, char *err, size_t errlen)
{
	char v[1024];
	uint8_t *base = (uint8_t *)c;
	const char *sec = section;
	uint64_t u;

	if (section == NULL || key == NULL || raw == NULL)
		return errf(err, errlen, -EINVAL, "missing section, key or value");
	if (strlen(raw) >= sizeof(v))
		return errf(err, errlen, -EINVAL, "[%.32s] %.32s: value too long", section, key);
	trim(raw, v, sizeof(v));

	if (strncmp(section, "port", 4) == 0) {
		if (lfe_config_parse_u64(section + 4, 0, LFE_CFG_MAX_PORTS - 1, &u) < 0)
			return errf(err, errlen, -ENOENT, "[%.32s]: unknown section (ports are port0..port%u)",
				    section, LFE_CFG_MAX_PORTS - 1);
		base = (uint8_t *)&c->port[u];
		c->port[u].present = true;
		sec = "port";
	}
	const struct lfe_cfg_key *k = NULL;
	bool sec_known = false;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(keys[i].section, sec) != 0)
			continue;
		sec_known = true;
		if (strcmp(keys[i].key, key) == 0) {
			k = &keys[i];
			break;
		}
	}
	if (!sec_known)
		return errf(err, errlen, -ENOENT, "[%.32s]: unknown section", section);
	if (k == NULL)
		return errf(err, errlen, -ENOENT, "[%.32s] %.64s: unknown key", section, key);
	return set_value(c, base, k, section, key, v, err, errlen);
}

/* Parse v (trimmed) into row k's field at base (c, or one of its ports). */
static int set_value(struct lfe_config *c, uint8_t *base, const struct lfe_cfg_key *k,
		     const char *section, const char *key, const char *v, char *err, size_t errlen)
{
	const char *why = NULL;
	uint64_t u;
	void *f = base + k->off;
	switch (k->type) {
	case K_STR:
	case K_FILE:
		if (strlen(v) < k->min)
			why = "must not be empty";
		else if (strlen(v) >= k->size)
			why = "too long";
		else
			memcpy(f, v, strlen(v) + 1);
		break;
	case K_U32:
	case K_U64:
	case K_U16: {
		int rc = lfe_config_parse_u64(v, k->min, k->max, &u);
		if (rc == -ERANGE) {
			return errf(err, errlen, -EINVAL, "[%.32s] %s: %s out of range %llu..%llu", section, key, v,
				    (unsigned long long)k->min, (unsigned long long)k->max);
		} else if (rc < 0) {
			why = "not a decimal number";
		} else if (k->type == K_U64) {
			*(uint64_t *)f = u;
		} else if (k->type == K_U32) {
			*(uint32_t *)f = (uint32_t)u;
		} else {
			*(uint16_t *)f = (uint16_t)u;
		}
		break;
	}
	case K_BOOL:
		if (parse_bool(v, (bool *)f) < 0)
			why = "expected true/false, yes/no, on/off or 1/0";
		break;
	case K_PORTS:
	case K_TLSPORTS: {
		uint32_t tmp[LFE_CFG_MAX_LISTEN], n;
		bool tls = k->type == K_TLSPORTS;
		if (parse_list(v, false, k->min, k->max, tmp, LFE_CFG_MAX_LISTEN, &n, &why) == 0) {
			for (uint32_t i = 0; i < n; i++)
				(tls ? c->ldaps_ports : c->ldap_ports)[i] = (uint16_t)tmp[i];
			*(tls ? &c->n_ldaps_ports : &c->n_ldap_ports) = n;
			why = NULL;
		} else if (why[0] == 'v') {
			why = "port not a number or outside 1..65535";
		}
		break;
	}
	case K_LCORES: {
		uint32_t tmp[LFE_CFG_MAX_LCORES], n;
		if (parse_list(v, true, k->min, k->max, tmp, LFE_CFG_MAX_LCORES, &n, &why) == 0) {
			memcpy(c->lcores, tmp, n * sizeof(tmp[0]));
			c->n_lcores = n;
			why = NULL;
		}
		break;
	}
	case K_SCHEME:
		why = "unknown password scheme";
		if (v[0] == '\0') {   /* empty: the store's own default */
			*(char *)f = '\0';
			why = NULL;
		}
		for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
			if (strcasecmp(v, schemes[i]) == 0) {
				memcpy(f, schemes[i], strlen(schemes[i]) + 1);
				why = NULL;
			}
		}
		break;
	case K_CIDR: {
		struct lfe_cfg_port *p = (struct lfe_cfg_port *)base;
		if (parse_cidr(v, &p->addr, &p->prefix_len, &why) == 0)
			why = NULL;
		break;
	}
	case K_IPV4:
		if (lfe_net_parse_ipv4(v, (uint32_t *)f) < 0 || *(uint32_t *)f == 0)
			why = "expected a dotted-quad IPv4 address";
		break;
	case K_ACCESS:
		lfe_search_access_parse(v, (enum lfe_search_access *)f, &why);
		break;
	case K_SCOPE:
		lfe_search_scope_parse(v, (enum lfe_search_scope_max *)f, &why);
		break;
	case K_REQTLS:
		lfe_require_tls_parse(v, (enum lfe_require_tls *)f, &why);
		break;
	case K_TLSVERIFY: {
		static const char *const modes[] = { "none", "optional", "require" };
		why = "expected none, optional or require";
		for (unsigned i = 0; i < 3; i++)
			if (strcmp(v, modes[i]) == 0) {
				*(enum lfe_tls_verify *)f = (enum lfe_tls_verify)i;
				why = NULL;
			}
		break;
	}
	case K_TLSPROTO:
		if (strcmp(v, "1.2") == 0 || strcmp(v, "1.3") == 0)
			*(unsigned *)f = (unsigned)(v[2] - '0');
		else
			why = "expected 1.2 or 1.3 (TLS 1.0 and 1.1 are never offered)";
		break;
	case K_TLSREC:
		if (strcmp(v, "ldapfe") == 0)
			*(enum lfe_tls_record *)f = LFE_TLS_RECORD_LDAPFE;
		else if (strcmp(v, "openssl") == 0)
			*(enum lfe_tls_record *)f = LFE_TLS_RECORD_OPENSSL;
		else
			why = "expected ldapfe or openssl";
		break;
	case K_AUTOOFF:
		if (strcmp(v, "auto") == 0 || strcmp(v, "off") == 0)
			*(bool *)f = v[0] == 'a';
		else
			why = "expected auto or off";
		break;
	case K_DN: {
		char n[LFE_DN_MAX + 1];
		ssize_t nl = v[0] ? lfe_dn_normalize((const uint8_t *)v, strlen(v), n, sizeof(n)) : -EINVAL;
		if (nl <= 0 || (size_t)nl >= k->size)
			why = "not a valid (non-empty) DN";
		else
			memcpy(f, n, (size_t)nl + 1);
		break;
	}
	case K_ATTRS: {
		struct lfe_search_policy p;
		if (lfe_search_attrs_parse(&p, v, &why) == 0 && p.n_attrs == 0)
			why = "empty list (leave the key out to allow every non-secret attribute)";
		else if (why == NULL)
			memcpy(f, v, strlen(v) + 1);
		break;
	}
	}
	if (why)
		return errf(err, errlen, -EINVAL, "[%.32s] %s: \"%.64s\": %s", section, key, v, why);
	return 0;
}

int lfe_config_parse_listen(const char *s, uint32_t *addr, uint16_t *port)
{
	char a[16];
	const char *colon = strrchr(s, ':');
	uint64_t p;

	if (colon == NULL || (size_t)(colon - s) >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, (size_t)(colon - s));
	a[colon - s] = '\0';
	if (lfe_net_parse_ipv4(a, addr) < 0 || lfe_config_parse_u64(colon + 1, 1, 65535, &p) < 0)
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

int lfe_config_finish(struct lfe_config *c, char *err, size_t errlen)
{
	uint32_t la;
	uint16_t lp;
	if (c->store_path[0] == '\0')
		return errf(err, errlen, -EINVAL, "[store] path: required");
	enum lfe_log_dest ld;
	enum lfe_log_level ll;
	if (lfe_log_parse_dest(c->log_dest, &ld) < 0)
		return errf(err, errlen, -EINVAL, "[daemon] log: \"%s\": stderr or syslog", c->log_dest);
	if (lfe_log_parse_level(c->log_level, &ll) < 0)
		return errf(err, errlen, -EINVAL, "[daemon] log_level: \"%s\": err, warn, info or debug", c->log_level);
	if (c->metrics_listen[0] && lfe_config_parse_listen(c->metrics_listen, &la, &lp) < 0)
		return errf(err, errlen, -EINVAL, "[admin] metrics_listen: \"%s\": not ADDRESS:PORT (IPv4), "
			    "or empty for no metrics", c->metrics_listen);
	if (c->n_ldap_ports + c->n_ldaps_ports > LFE_CFG_MAX_LISTEN)
		return errf(err, errlen, -EINVAL, "[ldap] ldaps_ports: at most %u ports with [ldap] ports",
			    LFE_CFG_MAX_LISTEN);
	for (uint32_t i = 0; i < c->n_ldaps_ports; i++)
		for (uint32_t j = 0; j < c->n_ldap_ports; j++)
			if (c->ldaps_ports[i] == c->ldap_ports[j])
				return errf(err, errlen, -EINVAL, "[ldap] ldaps_ports: %u is also a cleartext port",
					    c->ldaps_ports[i]);
	if (c->n_ldaps_ports && (c->tls_certificate[0] == '\0' || c->tls_key[0] == '\0'))
		return errf(err, errlen, -EINVAL, "[tls] certificate and key: required by [ldap] ldaps_ports");
	if (c->require_tls != LFE_REQUIRE_TLS_NONE &&
	    (c->tls_certificate[0] == '\0' || c->tls_key[0] == '\0'))
		return errf(err, errlen, -EINVAL, "[ldap] require_tls: needs a [tls] certificate and key");
	if (c->tls_verify_client != LFE_TLS_VERIFY_NONE && c->tls_ca[0] == '\0')
		return errf(err, errlen, -EINVAL, "[tls] verify_client: needs [tls] ca (the CA that signs "
			    "client certificates)");
	c->n_ports = 0;
	for (uint32_t i = 0; i < LFE_CFG_MAX_PORTS; i++) {
		struct lfe_cfg_port *p = &c->port[i];
		if (!p->present)
			continue;
		if (i != c->n_ports)
			return errf(err, errlen, -EINVAL, "[port%u]: ports must be numbered from port0 without gaps", i);
		c->n_ports++;
		if (p->dev[0] == '\0')
			return errf(err, errlen, -EINVAL, "[port%u] dev: required", i);
		if (p->addr == 0)
			return errf(err, errlen, -EINVAL, "[port%u] address: required", i);
		uint32_t mask = p->prefix_len == 32 ? 0xffffffffu : ~(0xffffffffu >> p->prefix_len);
		if (p->gateway && ((p->gateway ^ p->addr) & mask))
			return errf(err, errlen, -EINVAL, "[port%u] gateway: not inside the port's subnet", i);
		if (p->gateway == p->addr)
			return errf(err, errlen, -EINVAL, "[port%u] gateway: equals the port's own address", i);
		for (uint32_t j = 0; j < i; j++) {
			if (c->port[j].addr == p->addr)
				return errf(err, errlen, -EINVAL, "[port%u] address: same as [port%u]", i, j);
			if (strcmp(c->port[j].dev, p->dev) == 0)
				return errf(err, errlen, -EINVAL, "[port%u] dev: same as [port%u]", i, j);
		}
	}
	if (c->n_ports == 0)
		return errf(err, errlen, -EINVAL, "[port0]: at least one port is required");
	if (c->search_access == LFE_SEARCH_ACCESS_ANONYMOUS && !c->allow_anonymous)
		return errf(err, errlen, -EINVAL, "[ldap] search_access: anonymous conflicts with "
			    "allow_anonymous = false (anonymous clients may not search then)");
	if (c->search_base[0] && c->suffix[0]) {
		char s[LFE_DN_MAX + 1];
		ssize_t sl = lfe_dn_normalize((const uint8_t *)c->suffix, strlen(c->suffix), s, sizeof(s));
		if (sl < 0)
			return errf(err, errlen, -EINVAL, "[ldap] suffix: not a valid DN");
		if (!lfe_dn_is_under(c->search_base, strlen(c->search_base), s, (size_t)sl))
			return errf(err, errlen, -EINVAL, "[ldap] search_base: not at or under the suffix %.200s",
				    c->suffix);
	}
	if (c->group[0] && !c->user[0])
		return errf(err, errlen, -EINVAL, "[daemon] group: needs [daemon] user");
	const struct lfe_cfg_throttle *t = &c->throttle;
	if (t->enabled && t->src_failures == 0 && t->dn_failures == 0 && t->dn_global_failures == 0)
		return errf(err, errlen, -EINVAL, "[throttle] enabled: every threshold "
			    "(src_failures, dn_failures, dn_global_failures) is 0");
	if (t->enabled && t->dn_global_failures && t->dn_failures > t->dn_global_failures)
		return errf(err, errlen, -EINVAL, "[throttle] dn_global_failures: below dn_failures "
			    "(the per-DN count over all sources includes each source's)");
	return 0;
}

int lfe_config_parse_impair(const char *s, struct lfe_impair_opts *o, char *err, size_t errlen)
{
	char tok[64];

	memset(o, 0, sizeof(*o));
	o->seed = 1;
	if (s == NULL || *s == '\0')
		return errf(err, errlen, -EINVAL, "--impair: empty");
	while (*s) {
		size_t l = strcspn(s, ",");
		if (l == 0 || l >= sizeof(tok))
			return errf(err, errlen, -EINVAL, "--impair: empty or overlong item");
		memcpy(tok, s, l);
		tok[l] = '\0';
		s += l;
		if (*s == ',' && *++s == '\0')
			return errf(err, errlen, -EINVAL, "--impair: trailing comma");
		char *eq = strchr(tok, '=');
		if (eq == NULL)
			return errf(err, errlen, -EINVAL, "--impair: \"%s\": expected name=value", tok);
		*eq = '\0';
		uint64_t v;
		uint32_t *dst = NULL;
		if (strcmp(tok, "drop") == 0)
			dst = &o->drop_ppm;
		else if (strcmp(tok, "dup") == 0)
			dst = &o->dup_ppm;
		else if (strcmp(tok, "reorder") == 0)
			dst = &o->reorder_ppm;
		else if (strcmp(tok, "seed") != 0)
			return errf(err, errlen, -EINVAL, "--impair: unknown item \"%s\" (drop, dup, reorder, seed)", tok);
		if (lfe_config_parse_u64(eq + 1, 0, dst ? 1000000u : UINT64_MAX, &v) < 0)
			return errf(err, errlen, -EINVAL, "--impair %s: \"%s\": %s", tok, eq + 1,
				    dst ? "expected parts per million 0..1000000" : "expected a number");
		if (dst)
			*dst = (uint32_t)v;
		else
			o->seed = v;
	}
	o->on = true;
	return 0;
}

struct lfe_tls *lfe_tls_from_config(const struct lfe_config *c, const struct lfe_tls *prev,
				    char *err, size_t errlen)
{
	struct lfe_tls_opts o = {
		.cert = c->tls_certificate, .key = c->tls_key, .ca = c->tls_ca,
		.verify_client = c->tls_verify_client, .protocol_min = c->tls_protocol_min,
		.ciphers = c->tls_ciphers, .ciphersuites = c->tls_ciphersuites,
		.ticket_lifetime = c->tls_ticket_lifetime, .record_layer = c->tls_record_layer,
	};
	return lfe_tls_new_opts(&o, prev, err, errlen);
}
