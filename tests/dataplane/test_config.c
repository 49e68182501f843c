/* tests/dataplane/test_config.c — dataplane/config.c: every key accepted
 * with its value checked, every bad value refused with a message naming the
 * section and key, and the cross-checks of lfe_config_finish(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dataplane/config.h"
#include "dataplane/priv.h"
#include "common/share.h"
#include "net/tcp.h"
#include "tests/check.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

struct setcase {
	const char *sec, *key, *val;
	int rc;
	const char *msg;     /* substring the error must contain (rc != 0) */
};

static void test_set_table(void)
{
	static const struct setcase cases[] = {
		{ "store", "path", "/var/lib/ldapfe", 0, NULL },
		{ "store", "path", "", -EINVAL, "[store] path" },
		{ "store", "path", "   ", -EINVAL, "must not be empty" },
		{ "store", "default_scheme", "{ssha256}", 0, NULL },
		{ "store", "default_scheme", "{MD5}", -EINVAL, "unknown password scheme" },
		{ "store", "default_scheme", "", 0, NULL },
		{ "store", "default_scheme", "ARGON2", -EINVAL, "[store] default_scheme" },
		{ "store", "allow_cleartext", "yes", 0, NULL },
		{ "store", "allow_cleartext", "maybe", -EINVAL, "[store] allow_cleartext" },
		{ "store", "bind_cache", "0", 0, NULL },
		{ "store", "preload", "true", 0, NULL },
		{ "store", "preload", "maybe", -EINVAL, "[store] preload" },
		{ "store", "bind_cache", "16777216", 0, NULL },
		{ "store", "bind_cache", "16777217", -EINVAL, "[store] bind_cache: 16777217 out of range 0..16777216" },
		{ "store", "bind_cache", "64k", -EINVAL, "[store] bind_cache" },
		{ "store", "colour", "blue", -ENOENT, "unknown key" },
		{ "ldap", "port", "389", 0, NULL },
		{ "ldap", "ports", "389,1389, 3389", 0, NULL },
		{ "ldap", "ports", "389,,3389", -EINVAL, "[ldap] ports" },
		{ "ldap", "ports", "389,1389", 0, NULL },
		{ "ldap", "port", "0", -EINVAL, "1..65535" },
		{ "ldap", "port", "65536", -EINVAL, "[ldap] port" },
		{ "ldap", "port", "389,389", -EINVAL, "duplicate" },
		{ "ldap", "port", "389,", -EINVAL, "[ldap] port" },
		{ "ldap", "port", "1,2,3,4,5,6,7,8,9", -EINVAL, "too many" },
		{ "ldap", "port", "-1", -EINVAL, "[ldap] port" },
		{ "ldap", "max_pdu", "1023", -EINVAL, "out of range 1024..16777216" },
		{ "ldap", "max_pdu", "65536", 0, NULL },
		{ "ldap", "max_pdu", "64k", -EINVAL, "not a decimal number" },
		{ "ldap", "max_pdu", "99999999999999999999999", -EINVAL, "[ldap] max_pdu" },
		{ "ldap", "allow_anonymous", "off", 0, NULL },
		{ "ldap", "idle_timeout_ms", "0", 0, NULL },
		{ "ldap", "idle_timeout_ms", "86400001", -EINVAL, "out of range" },
		{ "ldap", "idle_timeout_ms", "4294968", 0, NULL },
		{ "ldap", "idle_timeout_ms", "18446744073709551616", -EINVAL, "[ldap] idle_timeout_ms" },
		{ "ldap", "max_conns_per_source", "0", 0, NULL },
		{ "ldap", "max_conns_per_source", "1048577", -EINVAL, "[ldap] max_conns_per_source" },
		{ "tcp", "syn_rate", "0", 0, NULL },
		{ "tcp", "syn_rate", "100000001", -EINVAL, "[tcp] syn_rate" },
		{ "tcp", "syn_rate_validated", "-1", -EINVAL, "[tcp] syn_rate_validated" },
		{ "tcp", "validated_sources", "16777217", -EINVAL, "[tcp] validated_sources" },
		{ "tcp", "validated_sources", "0", 0, NULL },
		{ "ldap", "pdu_timeout_ms", "0", -EINVAL, "[ldap] pdu_timeout_ms: 0 out of range 100..3600000" },
		{ "ldap", "pdu_timeout_ms", "250", 0, NULL },
		{ "ldap", "first_request_ms", "0", 0, NULL },
		{ "ldap", "first_request_ms", "3600001", -EINVAL, "[ldap] first_request_ms" },
		{ "ldap", "bind_timeout_ms", "86400001", -EINVAL, "[ldap] bind_timeout_ms" },
		{ "ldap", "bind_timeout_ms", "5s", -EINVAL, "not a decimal number" },
		{ "daemon", "user", "ldapfe", 0, NULL },
		{ "daemon", "user", "", -EINVAL, "[daemon] user" },
		{ "daemon", "group", "", -EINVAL, "must not be empty" },
		{ "daemon", "shell", "/bin/sh", -ENOENT, "[daemon] shell: unknown key" },
		{ "ldap", "max_conns_per_core", "0", -EINVAL, "[ldap] max_conns_per_core" },
		{ "ldap", "max_conns_per_core", "10000", 0, NULL },
		{ "ldap", "suffix", "dc=example,dc=com", 0, NULL },
		{ "ldap", "request_slice_us", "200", 0, NULL },
		{ "ldap", "request_slice_us", "0", -EINVAL, "[ldap] request_slice_us" },
		{ "ldap", "request_slice_us", "9", -EINVAL, "out of range 10..1000000" },
		{ "ldap", "request_slice_us", "1000001", -EINVAL, "out of range" },
		{ "ldap", "search_max_candidates", "0", -EINVAL, "[ldap] search_max_candidates" },
		{ "ldap", "search_max_candidates", "10000001", -EINVAL, "out of range 1..10000000" },
		{ "ldap", "search_max_candidates", "500", 0, NULL },
		{ "ldap", "search_size_limit", "0", 0, NULL },
		{ "ldap", "search_size_limit", "10000001", -EINVAL, "out of range 0..10000000" },
		{ "ldap", "search_access", "bound", 0, NULL },
		{ "ldap", "search_access", "none", 0, NULL },
		{ "ldap", "search_access", " anonymous ", 0, NULL },
		{ "ldap", "search_access", "everyone", -EINVAL,
		  "[ldap] search_access: \"everyone\": expected anonymous, bound or none" },
		{ "ldap", "search_access", "", -EINVAL, "[ldap] search_access" },
		{ "ldap", "search_scope", "one", 0, NULL },
		{ "ldap", "require_tls", "none", 0, NULL },
		{ "ldap", "require_tls", "ldaps", -EINVAL,
		  "[ldap] require_tls: \"ldaps\": expected none, bind or all" },
		{ "ldap", "require_tls", "bind", 0, NULL },
		{ "ldap", "require_tls", "all", 0, NULL },
		{ "tls", "verify_client", "require", 0, NULL },
		{ "tls", "verify_client", "optional", 0, NULL },
		{ "tls", "verify_client", " none ", 0, NULL },
		{ "tls", "verify_client", "yes", -EINVAL,
		  "[tls] verify_client: \"yes\": expected none, optional or require" },
		{ "tls", "protocol_min", "1.3", 0, NULL },
		{ "tls", "protocol_min", "1.2", 0, NULL },
		{ "tls", "protocol_min", "1.1", -EINVAL, "[tls] protocol_min: \"1.1\": expected 1.2 or 1.3" },
		{ "tls", "protocol_min", "TLSv1.3", -EINVAL, "[tls] protocol_min" },
		{ "tls", "ticket_lifetime", "0", 0, NULL },
		{ "tls", "record_layer", "openssl", 0, NULL },
		{ "tls", "record_layer", "ldapfe", 0, NULL },
		{ "tls", "record_layer", "kernel", -EINVAL,
		  "[tls] record_layer: \"kernel\": expected ldapfe or openssl" },
		{ "tls", "ticket_lifetime", "604800", 0, NULL },
		{ "tls", "ticket_lifetime", "604801", -EINVAL, "[tls] ticket_lifetime: 604801 out of range" },
		{ "tls", "ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256", 0, NULL },
		{ "tls", "ciphers", "", -EINVAL, "[tls] ciphers" },
		{ "tls", "ciphersuites", "TLS_AES_256_GCM_SHA384", 0, NULL },
		{ "ldap", "search_scope", "subtree", -EINVAL,
		  "[ldap] search_scope: \"subtree\": expected base, one or sub" },
		{ "ldap", "search_base", "ou=People, dc=example,dc=com", 0, NULL },
		{ "ldap", "search_base", "not a dn", -EINVAL, "[ldap] search_base: \"not a dn\": not a valid" },
		{ "ldap", "search_base", "", -EINVAL, "[ldap] search_base" },
		{ "ldap", "search_attrs", "uid, cn,mail , 0.9.2342.19200300.100.1.3x", -EINVAL,
		  "[ldap] search_attrs" },
		{ "ldap", "search_attrs", "uid, cn,mail,objectClass", 0, NULL },
		{ "ldap", "search_attrs", "uid,userPassword", -EINVAL, "can never be searched" },
		{ "ldap", "search_attrs", "uid,2.5.4.35", -EINVAL, "can never be searched" },
		{ "ldap", "search_attrs", "authPassword", -EINVAL, "can never be searched" },
		{ "ldap", "search_attrs", "uid,userid", -EINVAL, "listed twice" },
		{ "ldap", "search_attrs", "cn;lang-en", -EINVAL, "options" },
		{ "ldap", "search_attrs", "uid,,cn", -EINVAL, "empty attribute name" },
		{ "ldap", "search_attrs", "uid,", -EINVAL, "empty attribute name" },
		{ "ldap", "search_attrs", "", -EINVAL, "[ldap] search_attrs" },
		{ "ldap", "search_attrs", "c n", -EINVAL, "not an attribute type" },
		{ "ldap", "search_attrs", "a1,a2,a3,a4,a5,a6,a7,a8,a9,a10,a11,a12,a13,a14,a15,a16,a17,"
		  "a18,a19,a20,a21,a22,a23,a24,a25,a26,a27,a28,a29,a30,a31,a32,a33", -EINVAL, "too many" },
		{ "port0", "dev", "net_af_packet0,iface=veth0,qpairs=2", 0, NULL },
		{ "port0", "address", "10.99.0.1/24", 0, NULL },
		{ "port0", "address", "10.99.0.1", -EINVAL, "a.b.c.d/len" },
		{ "port0", "address", "10.99.0.1/33", -EINVAL, "prefix length" },
		{ "port0", "address", "10.99.0.1/0", -EINVAL, "prefix length" },
		{ "port0", "address", "10.99.0.0/24", -EINVAL, "network or broadcast" },
		{ "port0", "address", "10.99.0.255/24", -EINVAL, "network or broadcast" },
		{ "port0", "address", "224.0.0.1/24", -EINVAL, "unicast" },
		{ "port0", "address", "127.0.0.1/8", -EINVAL, "unicast" },
		{ "port0", "address", "10.99.0.300/24", -EINVAL, "[port0] address" },
		{ "port0", "gateway", "10.99.0.254", 0, NULL },
		{ "port0", "gateway", "10.99.0", -EINVAL, "[port0] gateway" },
		{ "port0", "mtu", "100", -EINVAL, "out of range 576..9000" },
		{ "port0", "speed", "10G", -ENOENT, "[port0] speed: unknown key" },
		{ "port0", "checksum_offload", "auto", 0, NULL },
		{ "port0", "checksum_offload", "off", 0, NULL },
		{ "port0", "checksum_offload", "on", -EINVAL, "expected auto or off" },
		{ "port0", "checksum_offload", "", -EINVAL, "[port0] checksum_offload" },
		{ "port8", "dev", "x", -ENOENT, "port0..port7" },
		{ "portx", "dev", "x", -ENOENT, "unknown section" },
		{ "port", "dev", "x", -ENOENT, "unknown section" },
		{ "nosuch", "key", "x", -ENOENT, "[nosuch]: unknown section" },
		{ "workers", "lcores", "1,2", 0, NULL },
		{ "workers", "lcores", "0-3", 0, NULL },
		{ "workers", "lcores", "3-1", -EINVAL, "bad range" },
		{ "workers", "lcores", "1,1", -EINVAL, "duplicate" },
		{ "workers", "lcores", "128", -EINVAL, "[workers] lcores" },
		{ "workers", "lcores", "", -EINVAL, "[workers] lcores" },
		{ "workers", "verifier_threads", "0", -EINVAL, "out of range 1..64" },
		{ "workers", "verifier_threads", "2", 0, NULL },
		{ "workers", "idle_sleep_us", "50", 0, NULL },
		{ "workers", "verify_per_source", "0", -EINVAL, "[workers] verify_per_source" },
		{ "workers", "verify_per_source", "65537", -EINVAL, "out of range 1..65536" },
		{ "workers", "verify_per_source", "4", 0, NULL },
		{ "tls", "handshake_threads", "0", 0, NULL },
		{ "tls", "handshake_threads", "65", -EINVAL, "[tls] handshake_threads" },
		{ "tls", "handshake_queue", "0", -EINVAL, "out of range 1..65536" },
		{ "tls", "handshake_per_source", "x", -EINVAL, "[tls] handshake_per_source" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct setcase *c = &cases[i];
		struct lfe_config cfg;
		char err[LFE_CFG_ERR_LEN] = "";
		lfe_config_defaults(&cfg);
		int rc = lfe_config_set(&cfg, c->sec, c->key, c->val, err, sizeof(err));
		CHECK(rc == c->rc, "[%s] %s=%s: rc %d want %d (%s)", c->sec, c->key, c->val, rc, c->rc, err);
		if (c->rc != 0)
			CHECK(strstr(err, c->msg) != NULL, "[%s] %s=%s: message \"%s\" lacks \"%s\"", c->sec,
			      c->key, c->val, err, c->msg);
	}
}

static void test_values(void)
{
	struct lfe_config c;
	char err[LFE_CFG_ERR_LEN] = "";
	lfe_config_defaults(&c);
	CHECK(c.n_ldap_ports == 1 && c.ldap_ports[0] == 389, "default port");
	CHECK(c.max_pdu == 65536 && c.allow_anonymous && c.max_conns_per_core == 4096, "defaults");
	CHECK(c.bind_cache == 65536, "bind_cache default: %u", c.bind_cache);
	CHECK(c.default_scheme[0] == '\0', "default scheme: the store's (%s)", c.default_scheme);
	CHECK(c.request_slice_us == 200 && c.search_max_candidates == 10000, "request budget");
	CHECK(c.verify_per_source == 8, "verify_per_source %u", c.verify_per_source);
	CHECK(c.tls_handshake_threads == 1 && c.tls_handshake_queue == 1024 &&
	      c.tls_handshake_per_source == 16, "handshake offload defaults");
	CHECK(c.tls_protocol_min == 2 && c.tls_ticket_lifetime == 7200 &&
	      c.tls_verify_client == LFE_TLS_VERIFY_NONE, "tls defaults");
	CHECK(c.max_conns_per_source == 256 && c.pdu_timeout_ms == 5000 && c.first_request_ms == 10000 &&
	      c.bind_timeout_ms == 0 && c.user[0] == '\0', "connection defaults");
	static const char *const kv[][3] = {
		{ "store", "path", " /tmp/store " }, { "store", "default_scheme", "{pbkdf2-sha512}" },
		{ "ldap", "ports", "389, 1389" }, { "ldap", "max_pdu", "4096" },
		{ "ldap", "allow_anonymous", "FALSE" }, { "ldap", "idle_timeout_ms", "4294968" },
		{ "ldap", "request_slice_us", "350" }, { "ldap", "search_max_candidates", "77" },
		{ "workers", "verify_per_source", "3" },
		{ "ldap", "max_conns_per_source", "64" }, { "ldap", "pdu_timeout_ms", "2000" },
		{ "ldap", "first_request_ms", "3000" }, { "ldap", "bind_timeout_ms", "60000" },
		{ "daemon", "user", "nobody" }, { "daemon", "group", "nogroup" },
		{ "port0", "dev", "net_af_packet0,iface=v0" }, { "port0", "address", "10.99.1.1/24" },
		{ "port0", "gateway", "10.99.1.254" }, { "port1", "dev", "net_tap0" },
		{ "port1", "address", "10.99.2.1/30" }, { "workers", "lcores", "1,3-4" },
		{ "port1", "checksum_offload", " off " },
	};
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		CHECK(lfe_config_set(&c, kv[i][0], kv[i][1], kv[i][2], err, sizeof(err)) == 0, "%s.%s: %s", kv[i][0],
		      kv[i][1], err);
	CHECK(lfe_config_finish(&c, err, sizeof(err)) == 0, "finish: %s", err);
	CHECK(strcmp(c.store_path, "/tmp/store") == 0, "path trimmed: '%s'", c.store_path);
	CHECK(strcmp(c.default_scheme, "{PBKDF2-SHA512}") == 0, "scheme canonical: %s", c.default_scheme);
	CHECK(c.n_ldap_ports == 2 && c.ldap_ports[0] == 389 && c.ldap_ports[1] == 1389, "ports");
	CHECK(c.max_pdu == 4096 && !c.allow_anonymous && c.idle_timeout_ms == 4294968, "ldap");
	/* Its µs (what the TCP stack gets) must not wrap: 32 bits made it 1 ms. */
	CHECK(c.idle_timeout_ms * 1000u == 4294968000ull, "idle µs %llu",
	      (unsigned long long)(c.idle_timeout_ms * 1000u));
	CHECK(c.max_conns_per_source == 64 && c.pdu_timeout_ms == 2000 && c.first_request_ms == 3000 &&
	      c.bind_timeout_ms == 60000, "deadlines");
	CHECK(strcmp(c.user, "nobody") == 0 && strcmp(c.group, "nogroup") == 0, "daemon user");
	CHECK(c.request_slice_us == 350 && c.search_max_candidates == 77 && c.verify_per_source == 3,
	      "budget keys");
	CHECK(c.n_ports == 2, "n_ports %u", c.n_ports);
	CHECK(c.port[0].addr == IP(10, 99, 1, 1) && c.port[0].prefix_len == 24, "addr");
	CHECK(c.port[0].gateway == IP(10, 99, 1, 254) && c.port[1].gateway == 0, "gateway");
	CHECK(c.port[1].prefix_len == 30 && c.port[0].mtu == 1500, "port1");
	CHECK(c.port[0].checksum_offload && !c.port[1].checksum_offload, "checksum_offload: auto default, off");
	CHECK(c.n_lcores == 3 && c.lcores[0] == 1 && c.lcores[1] == 3 && c.lcores[2] == 4, "lcores");
}

struct fincase {
	const char *name;
	const char *kv[6][3];
	const char *msg;     /* NULL: must succeed */
};

static void test_finish_table(void)
{
	static const struct fincase cases[] = {
		{ "minimal", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
			       { "port0", "address", "10.0.0.1/24" } }, NULL },
		{ "no store", { { "port0", "dev", "d0" }, { "port0", "address", "10.0.0.1/24" } },
		  "[store] path: required" },
		{ "no port", { { "store", "path", "/s" } }, "[port0]: at least one port" },
		{ "log syslog", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				  { "port0", "address", "10.0.0.1/24" }, { "daemon", "log", "syslog" },
				  { "daemon", "log_level", "debug" } }, NULL },
		{ "log file", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "daemon", "log", "/var/log/x" } },
		  "[daemon] log: \"/var/log/x\": stderr or syslog" },
		{ "log level", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				 { "port0", "address", "10.0.0.1/24" }, { "daemon", "log_level", "loud" } },
		  "[daemon] log_level: \"loud\"" },
		{ "gap", { { "store", "path", "/s" }, { "port1", "dev", "d" },
			   { "port1", "address", "10.0.0.1/24" } }, "without gaps" },
		{ "no dev", { { "store", "path", "/s" }, { "port0", "address", "10.0.0.1/24" } },
		  "[port0] dev: required" },
		{ "no addr", { { "store", "path", "/s" }, { "port0", "dev", "d0" } },
		  "[port0] address: required" },
		{ "gw outside", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				  { "port0", "address", "10.0.0.1/24" }, { "port0", "gateway", "10.0.1.1" } },
		  "[port0] gateway: not inside" },
		{ "gw self", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
			       { "port0", "address", "10.0.0.1/24" }, { "port0", "gateway", "10.0.0.1" } },
		  "equals the port's own address" },
		{ "dup addr", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "port1", "dev", "d1" },
				{ "port1", "address", "10.0.0.1/24" } }, "[port1] address: same as [port0]" },
		{ "dup dev", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
			       { "port0", "address", "10.0.0.1/24" }, { "port1", "dev", "d0" },
			       { "port1", "address", "10.0.1.1/24" } }, "[port1] dev: same as [port0]" },
		{ "anon search without anon", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "ldap", "allow_anonymous", "false" },
				{ "ldap", "search_access", "anonymous" } },
		  "[ldap] search_access: anonymous conflicts with allow_anonymous = false" },
		{ "bound search without anon", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "ldap", "allow_anonymous", "false" },
				{ "ldap", "search_access", "bound" } }, NULL },
		{ "search base outside suffix", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "ldap", "suffix", "dc=example,dc=com" },
				{ "ldap", "search_base", "ou=x,dc=other" } },
		  "[ldap] search_base: not at or under the suffix" },
		{ "search base under suffix", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "ldap", "suffix", "DC=Example,dc=com" },
				{ "ldap", "search_base", "ou=People,dc=example,dc=com" } }, NULL },
		{ "ldaps without tls", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "ldap", "ldaps_ports", "636" } },
		  "[tls] certificate and key: required by [ldap] ldaps_ports" },
		{ "require_tls without tls", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "ldap", "require_tls", "bind" } },
		  "[ldap] require_tls: needs a [tls] certificate and key" },
		{ "require_tls with tls", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "ldap", "require_tls", "all" },
				{ "tls", "certificate", "/c" }, { "tls", "key", "/k" } }, NULL },
		{ "ldaps on a cleartext port", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "ldap", "ldaps_ports", "389" },
				{ "tls", "certificate", "/c" }, { "tls", "key", "/k" } },
		  "[ldap] ldaps_ports: 389 is also a cleartext port" },
		{ "ldaps", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "ldap", "ldaps_ports", "636, 3269" },
				{ "tls", "certificate", "/c" }, { "tls", "key", "/k" } }, NULL },
		{ "verify_client without ca", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				{ "port0", "address", "10.0.0.1/24" }, { "tls", "certificate", "/c" },
				{ "tls", "key", "/k" }, { "tls", "verify_client", "optional" } },
		  "[tls] verify_client: needs [tls] ca" },
		{ "group alone", { { "store", "path", "/s" }, { "port0", "dev", "d0" },
				   { "port0", "address", "10.0.0.1/24" }, { "daemon", "group", "nogroup" } },
		  "[daemon] group: needs [daemon] user" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fincase *c = &cases[i];
		struct lfe_config cfg;
		char err[LFE_CFG_ERR_LEN] = "";
		lfe_config_defaults(&cfg);
		for (size_t j = 0; j < 6 && c->kv[j][0]; j++)
			CHECK(lfe_config_set(&cfg, c->kv[j][0], c->kv[j][1], c->kv[j][2], err, sizeof(err)) == 0, "%s: set %s",
			      c->name, err);
		int rc = lfe_config_finish(&cfg, err, sizeof(err));
		if (c->msg == NULL)
			CHECK(rc == 0, "%s: %s", c->name, err);
		else
			CHECK(rc == -EINVAL && strstr(err, c->msg), "%s: rc %d \"%s\"", c->name, rc, err);
	}
}

/* A refused value leaves nothing half-set behind (found by fuzz_config). */
static void test_refused_leaves_nothing(void)
{
	struct lfe_config c;
	char err[LFE_CFG_ERR_LEN];
	lfe_config_defaults(&c);
	CHECK(lfe_config_set(&c, "store", "path", "/s", err, sizeof(err)) == 0, "path");
	CHECK(lfe_config_set(&c, "port0", "dev", "d0", err, sizeof(err)) == 0, "dev");
	CHECK(lfe_config_set(&c, "port0", "address", "10.0.0.1/24p", err, sizeof(err)) == -EINVAL, "bad prefix");
	CHECK(c.port[0].addr == 0 && c.port[0].prefix_len == 0, "address untouched");
	CHECK(lfe_config_finish(&c, err, sizeof(err)) == -EINVAL && strstr(err, "[port0] address: required"), "%s", err);
	CHECK(lfe_config_set(&c, "ldap", "port", "389,99999", err, sizeof(err)) == -EINVAL, "bad port list");
	CHECK(c.n_ldap_ports == 1 && c.ldap_ports[0] == 389, "ports untouched");
}

static void test_search_policy_values(void)
{
	struct lfe_config c;
	char err[LFE_CFG_ERR_LEN] = "";
	lfe_config_defaults(&c);
	CHECK(c.search_access == LFE_SEARCH_ACCESS_DEFAULT && c.search_scope == LFE_SEARCH_SCOPE_SUB &&
	      c.search_base[0] == '\0' && c.search_attrs[0] == '\0', "search defaults");
	CHECK(lfe_config_set(&c, "ldap", "search_access", "bound", err, sizeof(err)) == 0, "%s", err);
	CHECK(lfe_config_set(&c, "ldap", "search_scope", "base", err, sizeof(err)) == 0, "%s", err);
	CHECK(lfe_config_set(&c, "ldap", "search_base", "OU=People,  DC=Example,dc=com", err, sizeof(err)) == 0, "%s", err);
	CHECK(lfe_config_set(&c, "ldap", "search_attrs", "uid, mail", err, sizeof(err)) == 0, "%s", err);
	CHECK(c.search_access == LFE_SEARCH_ACCESS_BOUND, "access");
	CHECK(c.search_scope == LFE_SEARCH_SCOPE_BASE, "scope");
	CHECK(strcmp(c.search_base, "ou=people,dc=example,dc=com") == 0, "base normalized: %s", c.search_base);
	struct lfe_search_policy p;
	const char *why = NULL;
	CHECK(lfe_search_attrs_parse(&p, c.search_attrs, &why) == 0 && p.n_attrs == 2 &&
	      strcmp(p.attrs[0], "uid") == 0 && strcmp(p.attrs[1], "mail") == 0, "attrs");
	/* A refused value leaves the earlier one in place. */
	CHECK(lfe_config_set(&c, "ldap", "search_access", "all", err, sizeof(err)) == -EINVAL, "bad access");
	CHECK(c.search_access == LFE_SEARCH_ACCESS_BOUND, "access untouched");
	CHECK(lfe_config_set(&c, "ldap", "search_attrs", "uid,userPassword", err, sizeof(err)) == -EINVAL, "secret");
	CHECK(strcmp(c.search_attrs, "uid, mail") == 0, "attrs untouched: %s", c.search_attrs);
}

/* [daemon] user/group are looked up at start: unknown names, uid 0 and gid 0
 * stop it. */
static void test_priv_resolve(void)
{
	char err[LFE_CFG_ERR_LEN] = "";
	uid_t u = 0;
	gid_t g = 0;
	CHECK(lfe_priv_resolve("nosuchuser-lfe", NULL, &u, &g, err, sizeof(err)) == -ENOENT &&
	      strstr(err, "[daemon] user: \"nosuchuser-lfe\": no such user"), "%s", err);
	CHECK(lfe_priv_resolve("root", NULL, &u, &g, err, sizeof(err)) == -EINVAL && strstr(err, "uid 0"), "%s", err);
	CHECK(lfe_priv_resolve("nobody", "nosuchgroup-lfe", &u, &g, err, sizeof(err)) == -ENOENT &&
	      strstr(err, "[daemon] group"), "%s", err);
	CHECK(lfe_priv_resolve("nobody", NULL, &u, &g, err, sizeof(err)) == 0 && u != 0, "nobody: %s", err);
	/* gid 0 is refused like uid 0 (priv.h): it keeps root's group files. */
	CHECK(lfe_priv_resolve("nobody", "root", &u, &g, err, sizeof(err)) == -EINVAL && strstr(err, "gid 0"),
	      "explicit group root: %s", err);
	CHECK(lfe_priv_resolve("nobody", "nogroup", &u, &g, err, sizeof(err)) == 0 && g != 0, "explicit group: %s", err);
}

/* [throttle]: every key checked, defaults, and the cross-checks. */
static void test_throttle(void)
{
	static const struct setcase cases[] = {
		{ "throttle", "enabled", "on", 0, NULL },
		{ "throttle", "enabled", "sometimes", -EINVAL, "[throttle] enabled" },
		{ "throttle", "src_failures", "0", 0, NULL },
		{ "throttle", "src_failures", "65535", 0, NULL },
		{ "throttle", "src_failures", "65536", -EINVAL, "[throttle] src_failures: 65536 out of range" },
		{ "throttle", "src_failures", "-1", -EINVAL, "[throttle] src_failures" },
		{ "throttle", "dn_failures", "5", 0, NULL },
		{ "throttle", "dn_failures", "five", -EINVAL, "[throttle] dn_failures" },
		{ "throttle", "dn_global_failures", "1000", 0, NULL },
		{ "throttle", "dn_global_failures", "70000", -EINVAL, "[throttle] dn_global_failures" },
		{ "throttle", "window_ms", "0", -EINVAL, "[throttle] window_ms: 0 out of range 1..86400000" },
		{ "throttle", "window_ms", "86400001", -EINVAL, "[throttle] window_ms" },
		{ "throttle", "window_ms", "1000", 0, NULL },
		{ "throttle", "penalty_ms", "0", -EINVAL, "[throttle] penalty_ms" },
		{ "throttle", "penalty_ms", "1.5", -EINVAL, "[throttle] penalty_ms" },
		{ "throttle", "penalty_ms", "2000", 0, NULL },
		{ "throttle", "threshold", "5", -ENOENT, "[throttle] threshold: unknown key" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct setcase *c = &cases[i];
		struct lfe_config cfg;
		char err[LFE_CFG_ERR_LEN] = "";
		lfe_config_defaults(&cfg);
		int rc = lfe_config_set(&cfg, c->sec, c->key, c->val, err, sizeof(err));
		CHECK(rc == c->rc, "[%s] %s=%s: rc %d want %d (%s)", c->sec, c->key, c->val, rc, c->rc, err);
		if (c->rc != 0)
			CHECK(strstr(err, c->msg) != NULL, "[%s] %s=%s: message \"%s\" lacks \"%s\"", c->sec,
			      c->key, c->val, err, c->msg);
	}

	struct lfe_config c;
	char err[LFE_CFG_ERR_LEN] = "";
	lfe_config_defaults(&c);
	CHECK(!c.throttle.enabled && c.throttle.src_failures == 100 && c.throttle.dn_failures == 5 &&
	      c.throttle.dn_global_failures == 0 && c.throttle.window_ms == 60000 &&
	      c.throttle.penalty_ms == 60000, "throttle defaults");
	static const char *const kv[][3] = {
		{ "store", "path", "/s" }, { "port0", "dev", "d0" }, { "port0", "address", "10.0.0.1/24" },
		{ "throttle", "enabled", "yes" }, { "throttle", "src_failures", "20" },
		{ "throttle", "dn_failures", " 3 " }, { "throttle", "dn_global_failures", "50" },
		{ "throttle", "window_ms", "10000" }, { "throttle", "penalty_ms", "30000" },
	};
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		CHECK(lfe_config_set(&c, kv[i][0], kv[i][1], kv[i][2], err, sizeof(err)) == 0, "%s.%s: %s", kv[i][0],
		      kv[i][1], err);
	CHECK(lfe_config_finish(&c, err, sizeof(err)) == 0, "finish: %s", err);
	CHECK(c.throttle.enabled && c.throttle.src_failures == 20 && c.throttle.dn_failures == 3 &&
	      c.throttle.dn_global_failures == 50 && c.throttle.window_ms == 10000 &&
	      c.throttle.penalty_ms == 30000, "throttle values");

	/* Enabled with every kind off, and a global DN threshold below the
	 * per-source one (it could never be the one that holds). */
	CHECK(lfe_config_set(&c, "throttle", "dn_global_failures", "2", err, sizeof(err)) == 0, "%s", err);
	CHECK(lfe_config_finish(&c, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "[throttle] dn_global_failures: below dn_failures"), "%s", err);
	CHECK(lfe_config_set(&c, "throttle", "dn_global_failures", "0", err, sizeof(err)) == 0, "%s", err);
	CHECK(lfe_config_set(&c, "throttle", "src_failures", "0", err, sizeof(err)) == 0, "%s", err);
	CHECK(lfe_config_set(&c, "throttle", "dn_failures", "0", err, sizeof(err)) == 0, "%s", err);
	CHECK(lfe_config_finish(&c, err, sizeof(err)) == -EINVAL && strstr(err, "[throttle] enabled: every threshold"),
	      "%s", err);
	CHECK(lfe_config_set(&c, "throttle", "enabled", "no", err, sizeof(err)) == 0, "%s", err);
	CHECK(lfe_config_finish(&c, err, sizeof(err)) == 0, "disabled with zero thresholds: %s", err);
}

static void test_impair(void)
{
	static const struct { const char *s; int rc; uint32_t drop, dup, reo; uint64_t seed; } cases[] = {
		{ "drop=50000,dup=50000,reorder=50000,seed=7", 0, 50000, 50000, 50000, 7 },
		{ "reorder=1", 0, 0, 0, 1, 1 },
		{ "seed=18446744073709551615", 0, 0, 0, 0, UINT64_MAX },
		{ "drop=1000001", -EINVAL, 0, 0, 0, 0 },
		{ "drop=", -EINVAL, 0, 0, 0, 0 },
		{ "loss=5", -EINVAL, 0, 0, 0, 0 },
		{ "drop=5,", -EINVAL, 0, 0, 0, 0 },
		{ "drop", -EINVAL, 0, 0, 0, 0 },
		{ "", -EINVAL, 0, 0, 0, 0 },
		{ "drop=5%", -EINVAL, 0, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lfe_impair_opts o;
		char err[LFE_CFG_ERR_LEN] = "";
		int rc = lfe_config_parse_impair(cases[i].s, &o, err, sizeof(err));
		CHECK(rc == cases[i].rc, "\"%s\": rc %d (%s)", cases[i].s, rc, err);
		if (rc == 0)
			CHECK(o.on && o.drop_ppm == cases[i].drop && o.dup_ppm == cases[i].dup &&
			      o.reorder_ppm == cases[i].reo && o.seed == cases[i].seed, "\"%s\" values", cases[i].s);
		else
			CHECK(strstr(err, "--impair") != NULL, "\"%s\": message \"%s\"", cases[i].s, err);
	}
}

/* [admin] metrics_listen: default, a value, off, and what finish refuses. */
static void test_metrics_listen(void)
{
	static const struct { const char *v; int rc; } cases[] = {
		{ "127.0.0.1:9389", 0 }, { "0.0.0.0:80", 0 }, { "", 0 }, { "10.0.0.1", -EINVAL },
		{ "10.0.0.1:0", -EINVAL }, { "10.0.0.1:65536", -EINVAL }, { "localhost:9389", -EINVAL },
		{ "10.0.0.1:9x", -EINVAL }, { ":9389", -EINVAL },
	};
	struct lfe_config c;
	char err[LFE_CFG_ERR_LEN] = "";
	lfe_config_defaults(&c);
	CHECK(strcmp(c.metrics_listen, "127.0.0.1:9389") == 0, "default %s", c.metrics_listen);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lfe_config_defaults(&c);
		CHECK(lfe_config_set(&c, "store", "path", "/s", err, sizeof(err)) == 0 &&
		      lfe_config_set(&c, "port0", "dev", "d0", err, sizeof(err)) == 0 &&
		      lfe_config_set(&c, "port0", "address", "10.0.0.1/24", err, sizeof(err)) == 0 &&
		      lfe_config_set(&c, "admin", "metrics_listen", cases[i].v, err, sizeof(err)) == 0, "%s", err);
		int rc = lfe_config_finish(&c, err, sizeof(err));
		CHECK(rc == cases[i].rc, "metrics_listen \"%s\": rc %d want %d (%s)", cases[i].v, rc, cases[i].rc, err);
		if (rc)
			CHECK(strstr(err, "[admin] metrics_listen") != NULL, "message: %s", err);
	}
	uint32_t a;
	uint16_t p;
	CHECK(lfe_config_parse_listen("10.1.2.3:8080", &a, &p) == 0 && a == IP(10, 1, 2, 3) && p == 8080,
	      "parse_listen");
}

/* lfe_config_differs (what a reload compares, control_reload.c): one key changed
 * from the defaults is found and named; the same value is no difference. */
static void test_differs(void)
{
	static const struct { const char *sec, *key, *val, *name; } kv[] = {
		{ "tls", "handshake_threads", "2", "[tls] handshake_threads" },
		{ "tls", "handshake_queue", "128", "[tls] handshake_queue" },
		{ "tls", "handshake_per_source", "4", "[tls] handshake_per_source" },
		{ "tls", "handshake_timeout_ms", "100", "[tls] handshake_timeout_ms" },
		{ "tls", "record_layer", "openssl", "[tls] record_layer" },
		{ "tls", "protocol_min", "1.3", "[tls] protocol_min" },
		{ "tls", "ciphersuites", "TLS_AES_128_GCM_SHA256", "[tls] ciphersuites" },
		{ "tls", "verify_client", "require", "[tls] verify_client" },
		{ "tls", "ticket_lifetime", "60", "[tls] ticket_lifetime" },
		{ "ldap", "port", "390", "[ldap] ports" },
		{ "ldap", "ldaps_ports", "636", "[ldap] ldaps_ports" },
		{ "ldap", "search_scope", "base", "[ldap] search_scope" },
		{ "store", "allow_cleartext", "true", "[store] allow_cleartext" },
		{ "workers", "lcores", "1", "[workers] lcores" },
		{ "port0", "mtu", "1400", "[port0] mtu" },
		{ "port1", "mtu", "1400", "[port1]" },   /* a port added */
		{ "port0", "address", "10.0.0.1/24", "[port0] address" },
		{ "throttle", "window_ms", "5", "[throttle] window_ms" },
		{ "admin", "metrics_listen", "", "[admin] metrics_listen" },
	};
	static struct lfe_config a, b;
	char err[LFE_CFG_ERR_LEN], name[80];
	lfe_config_defaults(&a);
	CHECK(lfe_config_set(&a, "port0", "dev", "d0", err, sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
		lfe_config_defaults(&b);
		CHECK(lfe_config_set(&b, "port0", "dev", "d0", err, sizeof(err)) == 0, "%s", err);
		CHECK(!lfe_config_differs(&a, &b, name, sizeof name), "defaults differ: %s", name);
		CHECK(lfe_config_set(&b, kv[i].sec, kv[i].key, kv[i].val, err, sizeof(err)) == 0, "%s: %s", kv[i].key, err);
		name[0] = '\0';
		CHECK(lfe_config_differs(&a, &b, name, sizeof name) && strcmp(name, kv[i].name) == 0,
		      "%s = %s: named '%s'", kv[i].key, kv[i].val, name);
	}
}

/* The schema itself: every row's default and alternative value parse (the
 * default inside the row's range, and what lfe_config_defaults holds
 * already), the alternative changes exactly that key (offset and size
 * right: lfe_config_differs names it), a LIVE row has a plain field that
 * lfe_config_copy_live carries and a RESTART row is named by
 * lfe_config_restart_differs; rows are grouped by section, each key once;
 * defaults kept as constants elsewhere agree with the table's. */
static void test_schema(void)
{
	static struct lfe_config def, c, d;
	char err[LFE_CFG_ERR_LEN], name[200], want[80], range[64];
	size_t n;
	const struct lfe_cfg_key *t = lfe_config_keys(&n);

	CHECK(n > 60, "%zu rows", n);
	lfe_config_defaults(&def);
	for (size_t i = 0; i < n; i++) {
		const struct lfe_cfg_key *k = &t[i];
		bool port = strcmp(k->section, "port") == 0;
		const char *sec = port ? "port0" : k->section;
		lfe_config_key_name(k, want, sizeof want);
		CHECK(k->help && k->help[0] && strchr(k->help, '\n') == NULL && strchr(k->help, '\t') == NULL,
		      "%s: one line of help", want);
		CHECK(k->alt && k->alt[0], "%s: an alternative value", want);
		CHECK(k->min <= k->max || k->max == 0, "%s: range %llu..%llu", want,
		      (unsigned long long)k->min, (unsigned long long)k->max);
		for (size_t j = 0; j < i; j++) {
			CHECK(strcmp(t[j].section, k->section) != 0 || strcmp(t[j].key, k->key) != 0,
			      "%s: twice", want);
			/* a section's rows are together (one .SS in the man page) */
			CHECK(strcmp(t[j].section, k->section) != 0 || j == i - 1 ||
			      strcmp(t[j + 1].section, k->section) == 0, "%s: section split", want);
		}
		lfe_config_key_range(k, range, sizeof range);
		if (strcmp(lfe_config_key_type(k), "number") == 0 && k->def) {
			uint64_t v;
			CHECK(lfe_config_parse_u64(k->def, k->min, k->max, &v) == 0, "%s: default %s outside %s",
			      want, k->def, range);
		}
		if (k->def) {
			/* The default parses and is what lfe_config_defaults holds. */
			c = def;
			CHECK(lfe_config_set(&c, sec, k->key, k->def, err, sizeof(err)) == 0, "%s: default %s: %s", want,
			      k->def, err);
			c.port[0].present = false;
			CHECK(!lfe_config_differs(&def, &c, name, sizeof name), "%s: default %s is not the "
			      "defaults' (%s)", want, k->def, name);
		}
		/* The alternative parses, differs, and is named as this key. */
		c = def;
		d = def;
		if (port) {
			c.port[0].present = true;
			d.port[0].present = true;
		}
		CHECK(lfe_config_set(&d, sec, k->key, k->alt, err, sizeof(err)) == 0, "%s: alt %s: %s", want, k->alt, err);
		CHECK(lfe_config_differs(&c, &d, name, sizeof name) && strcmp(name, want) == 0,
		      "%s = %s: differs names '%s'", want, k->alt, name);
		unsigned r = lfe_config_restart_differs(&c, &d, name, sizeof name);
		if (k->reload == LFE_CFG_LIVE) {
			CHECK(lfe_config_key_size(k) > 0, "%s: LIVE without a plain field", want);
			CHECK(r == 0, "%s: LIVE, but restart_differs names '%s'", want, name);
			lfe_config_copy_live(&c, &d);
			CHECK(!lfe_config_differs(&c, &d, name, sizeof name), "%s: copy_live leaves %s", want,
			      name);
		} else {
			CHECK(r == 1 && strcmp(name, want) == 0, "%s: RESTART, restart_differs %u '%s'", want, r,
			      name);
			lfe_config_copy_live(&c, &d);
			CHECK(lfe_config_differs(&c, &d, name, sizeof name), "%s: copy_live copied it", want);
		}
	}
	/* Every RESTART key changed at once: all named, ports once. */
	c = def;
	d = def;
	unsigned restart = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i].reload != LFE_CFG_RESTART || strcmp(t[i].key, "port") == 0)
			continue;
		restart++;
		CHECK(lfe_config_set(&d, strcmp(t[i].section, "port") == 0 ? "port0" : t[i].section, t[i].key,
				     t[i].alt, err, sizeof(err)) == 0, "%s", err);
	}
	c.port[0].present = true;
	unsigned r = lfe_config_restart_differs(&c, &d, name, 40);
	CHECK(r == restart, "all RESTART keys: %u named, want %u", r, restart);
	CHECK(strlen(name) == 39 && strncmp(name, "[store] path, [store] default_scheme", 36) == 0,
	      "truncated list: '%s'", name);
	/* Constants of other modules that the table writes as text. */
	struct lfe_tcp_cfg tcd;
	lfe_tcp_cfg_default(&tcd);
	CHECK(def.tcp_syn_rate == tcd.syn_rate && def.tcp_syn_rate_validated == tcd.syn_rate_validated &&
	      def.tcp_validated_sources == tcd.validated_sources, "tcp defaults: net/tcp.c's");
	CHECK(def.share_pressure_pct == LFE_SHARE_PRESSURE_PCT, "share_pressure_pct %u",
	      def.share_pressure_pct);
	CHECK(def.tls_ticket_lifetime == LFE_TLS_TICKET_LIFETIME_DEFAULT, "ticket_lifetime %u",
	      def.tls_ticket_lifetime);
	CHECK(def.port[7].mtu == 1500 && def.port[7].checksum_offload && !def.port[7].present,
	      "port defaults in every port, none present");
}

/* Every row's value, formatted from the defaults and from its alt, parses
 * back (lfe_config_set) into the same field bytes; an unset value only
 * where the row has no default. */
static void test_format(void)
{
	static struct lfe_config def, c, d, e;
	char err[LFE_CFG_ERR_LEN], name[200], want[80], buf[2048];
	size_t n;
	const struct lfe_cfg_key *t = lfe_config_keys(&n);
	unsigned formatted = 0;

	lfe_config_defaults(&def);
	for (size_t i = 0; i < n; i++) {
		const struct lfe_cfg_key *k = &t[i];
		bool port = strcmp(k->section, "port") == 0;
		lfe_config_key_name(k, want, sizeof want);
		/* The defaults: a default formats to a value that gives it back. */
		int rc = lfe_config_key_format(&def, k, 0, buf, sizeof buf);
		if (k->def == NULL) {
			CHECK(rc == LFE_CFG_UNSET || rc == 0, "%s: default formats rc %d", want, rc);
		} else {
			CHECK(rc == 0, "%s: default %s formats rc %d", want, k->def, rc);
		}
		if (rc == LFE_CFG_UNSET)
			CHECK(buf[0] == '\0', "%s: unset but '%s'", want, buf);
		if (rc == 0) {
			c = def;
			CHECK(lfe_config_set(&c, port ? "port0" : k->section, k->key, buf, err, sizeof err) == 0,
			      "%s: default formatted as '%s': %s", want, buf, err);
			c.port[0].present = false;
			CHECK(!lfe_config_differs(&def, &c, name, sizeof name), "%s: default formatted as '%s' "
			      "parses back different (%s)", want, buf, name);
		}
		/* The alt, in [port5] for port rows: formats, parses back equal. */
		const char *sec = port ? "port5" : k->section;
		d = def;
		CHECK(lfe_config_set(&d, sec, k->key, k->alt, err, sizeof err) == 0, "%s: alt: %s", want, err);
		rc = lfe_config_key_format(&d, k, 5, buf, sizeof buf);
		CHECK(rc == 0, "%s = %s formats rc %d", want, k->alt, rc);
		e = def;
		CHECK(lfe_config_set(&e, sec, k->key, buf, err, sizeof err) == 0, "%s: alt %s formatted as "
		      "'%s': %s", want, k->alt, buf, err);
		CHECK(!lfe_config_differs(&d, &e, name, sizeof name), "%s: alt %s formatted as '%s' parses "
		      "back different (%s)", want, k->alt, buf, name);
		size_t sz = lfe_config_key_size(k);
		const uint8_t *fd = port ? (const uint8_t *)&d.port[5] : (const uint8_t *)&d;
		const uint8_t *fe = port ? (const uint8_t *)&e.port[5] : (const uint8_t *)&e;
		CHECK(sz == 0 || memcmp(fd + k->off, fe + k->off, sz) == 0, "%s: field bytes", want);
		/* What status --json makes of it. */
		enum lfe_cfg_json j = lfe_config_key_json(k);
		if (j == LFE_CFG_JSON_NUMBER)
			CHECK(strspn(buf, "0123456789") == strlen(buf), "%s: number '%s'", want, buf);
		else if (j == LFE_CFG_JSON_BOOL)
			CHECK(strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0, "%s: bool '%s'", want, buf);
		else if (j == LFE_CFG_JSON_LIST)
			CHECK(strspn(buf, "0123456789,") == strlen(buf), "%s: list '%s'", want, buf);
		/* Too small a buffer says so, and stays a string. */
		char small[2] = "xx";
		rc = lfe_config_key_format(&d, k, 5, small, sizeof small);
		CHECK(strlen(buf) < 2 ? rc == 0 : rc == -ENOSPC, "%s: '%s' into 2 bytes: rc %d", want, buf, rc);
		CHECK(memchr(small, '\0', sizeof small) != NULL, "%s: truncated, not terminated", want);
		CHECK(!port || lfe_config_key_format(&d, k, LFE_CFG_MAX_PORTS, buf, sizeof buf) == -EINVAL,
		      "%s: port %u", want, LFE_CFG_MAX_PORTS);
		formatted++;
	}
	CHECK(formatted == n, "%u of %zu rows", formatted, n);
	/* A list given with ranges comes back as its numbers. */
	size_t lc;
	for (lc = 0; lc < n && strcmp(t[lc].key, "lcores") != 0; lc++)
		;
	d = def;
	CHECK(lc < n && lfe_config_set(&d, "workers", "lcores", "0-3, 7", err, sizeof err) == 0, "%s", err);
	CHECK(lc < n && lfe_config_key_format(&d, &t[lc], 0, buf, sizeof buf) == 0 &&
	      strcmp(buf, "0,1,2,3,7") == 0, "lcores 0-3, 7: '%s'", buf);
	printf("format: %zu rows round-trip (defaults and alt)\n", n);
}

int main(void)
{
	test_schema();
	test_format();
	test_differs();
	test_metrics_listen();
	test_set_table();
	test_values();
	test_finish_table();
	test_refused_leaves_nothing();
	test_search_policy_values();
	test_throttle();
	test_impair();
	test_priv_resolve();
	return check_done();
}
