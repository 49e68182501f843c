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
#include "net/share.h"
#include "net/tcp.h"

enum key_type { K_STR, K_U32, K_U64, K_BOOL, K_PORTS, K_LCORES, K_SCHEME, K_CIDR, K_IPV4, K_U16,
		K_ACCESS, K_SCOPE, K_DN, K_ATTRS, K_TLSPORTS, K_REQTLS, K_TLSVERIFY, K_TLSPROTO, K_TLSREC,
		K_AUTOOFF };

struct key_def {
	const char *section;   /* "port" matches port0..port7 */
	const char *key;
	enum key_type type;
	size_t off;            /* in struct lfe_config, or struct lfe_cfg_port for "port" */
	size_t size;           /* K_STR: buffer size */
	uint64_t min, max;
};

#define CF(f) offsetof(struct lfe_config, f)
#define PF(f) offsetof(struct lfe_cfg_port, f)

static const struct key_def keys[] = {
	{ "store", "path", K_STR, CF(store_path), sizeof(((struct lfe_config *)0)->store_path), 1, 0 },
	{ "store", "default_scheme", K_SCHEME, CF(default_scheme),
	  sizeof(((struct lfe_config *)0)->default_scheme), 0, 0 },
	{ "store", "allow_cleartext", K_BOOL, CF(allow_cleartext), 0, 0, 0 },
	{ "store", "preload", K_BOOL, CF(store_preload), 0, 0, 0 },
	/* ≤ LFE_CREDCACHE_MAX (backend/credcache.h): 512 MiB per core. */
	{ "store", "bind_cache", K_U32, CF(bind_cache), 0, 0, 1u << 24 },
	{ "ldap", "port", K_PORTS, 0, 0, 1, 65535 },
	{ "ldap", "ports", K_PORTS, 0, 0, 1, 65535 },
	{ "ldap", "max_pdu", K_U32, CF(max_pdu), 0, 1024, 16u << 20 },
	{ "ldap", "allow_anonymous", K_BOOL, CF(allow_anonymous), 0, 0, 0 },
	{ "ldap", "idle_timeout_ms", K_U64, CF(idle_timeout_ms), 0, 0, 86400000u },
	{ "ldap", "max_conns_per_core", K_U32, CF(max_conns_per_core), 0, 1, 1u << 20 },
	{ "ldap", "request_slice_us", K_U32, CF(request_slice_us), 0, 10, 1000000 },
	{ "ldap", "search_max_candidates", K_U32, CF(search_max_candidates), 0, 1, 10000000 },
	{ "ldap", "search_size_limit", K_U32, CF(search_size_limit), 0, 0, 10000000 },
	{ "ldap", "max_conns_per_source", K_U32, CF(max_conns_per_source), 0, 0, 1u << 20 },
	{ "ldap", "share_pressure_pct", K_U32, CF(share_pressure_pct), 0, 0, 100 },
	{ "ldap", "pdu_timeout_ms", K_U64, CF(pdu_timeout_ms), 0, 100, 3600000u },
	{ "ldap", "first_request_ms", K_U64, CF(first_request_ms), 0, 0, 3600000u },
	{ "ldap", "bind_timeout_ms", K_U64, CF(bind_timeout_ms), 0, 0, 86400000u },
	{ "ldap", "suffix", K_STR, CF(suffix), sizeof(((struct lfe_config *)0)->suffix), 0, 0 },
	{ "ldap", "search_access", K_ACCESS, CF(search_access), 0, 0, 0 },
	{ "ldap", "search_scope", K_SCOPE, CF(search_scope), 0, 0, 0 },
	{ "ldap", "require_tls", K_REQTLS, CF(require_tls), 0, 0, 0 },
	{ "ldap", "search_base", K_DN, CF(search_base), sizeof(((struct lfe_config *)0)->search_base), 0, 0 },
	{ "ldap", "search_attrs", K_ATTRS, CF(search_attrs),
	  sizeof(((struct lfe_config *)0)->search_attrs), 0, 0 },
	{ "ldap", "ldaps_ports", K_TLSPORTS, 0, 0, 1, 65535 },
	{ "tls", "certificate", K_STR, CF(tls_certificate),
	  sizeof(((struct lfe_config *)0)->tls_certificate), 1, 0 },
	{ "tls", "key", K_STR, CF(tls_key), sizeof(((struct lfe_config *)0)->tls_key), 1, 0 },
	{ "tls", "ca", K_STR, CF(tls_ca), sizeof(((struct lfe_config *)0)->tls_ca), 0, 0 },
	{ "tls", "verify_client", K_TLSVERIFY, CF(tls_verify_client), 0, 0, 0 },
	{ "tls", "protocol_min", K_TLSPROTO, CF(tls_protocol_min), 0, 0, 0 },
	{ "tls", "ciphers", K_STR, CF(tls_ciphers), sizeof(((struct lfe_config *)0)->tls_ciphers), 1, 0 },
	{ "tls", "ciphersuites", K_STR, CF(tls_ciphersuites),
	  sizeof(((struct lfe_config *)0)->tls_ciphersuites), 1, 0 },
	{ "tls", "ticket_lifetime", K_U32, CF(tls_ticket_lifetime), 0, 0, LFE_TLS_TICKET_LIFETIME_MAX },
	{ "tls", "record_layer", K_TLSREC, CF(tls_record_layer), 0, 0, 0 },
	{ "port", "dev", K_STR, PF(dev), sizeof(((struct lfe_cfg_port *)0)->dev), 1, 0 },
	{ "port", "address", K_CIDR, 0, 0, 0, 0 },
	{ "port", "gateway", K_IPV4, PF(gateway), 0, 0, 0 },
	{ "port", "mtu", K_U16, PF(mtu), 0, 576, 9000 },
	{ "port", "checksum_offload", K_AUTOOFF, PF(checksum_offload), 0, 0, 0 },
	{ "workers", "lcores", K_LCORES, 0, 0, 0, LFE_CFG_MAX_LCORES - 1 },
	{ "workers", "verifier_threads", K_U32, CF(verifier_threads), 0, 1, 64 },
	{ "workers", "verify_queue", K_U32, CF(verify_queue), 0, 64, 1u << 16 },
	{ "workers", "verify_per_source", K_U32, CF(verify_per_source), 0, 1, 1u << 16 },
	{ "workers", "idle_sleep_us", K_U32, CF(idle_sleep_us), 0, 0, 100000 },
	{ "tls", "handshake_threads", K_U32, CF(tls_handshake_threads), 0, 0, 64 },
	{ "tls", "handshake_queue", K_U32, CF(tls_handshake_queue), 0, 1, 1u << 16 },
	{ "tls", "handshake_per_source", K_U32, CF(tls_handshake_per_source), 0, 1, 1u << 16 },
	{ "tls", "handshake_timeout_ms", K_U64, CF(tls_handshake_timeout_ms), 0, 0, 600000u },
	{ "daemon", "user", K_STR, CF(user), sizeof(((struct lfe_config *)0)->user), 1, 0 },
	{ "daemon", "group", K_STR, CF(group), sizeof(((struct lfe_config *)0)->group), 1, 0 },
	{ "daemon", "log", K_STR, CF(log_dest), sizeof(((struct lfe_config *)0)->log_dest), 1, 0 },
	{ "daemon", "log_level", K_STR, CF(log_level), sizeof(((struct lfe_config *)0)->log_level), 1, 0 },
	{ "throttle", "enabled", K_BOOL, CF(throttle.enabled), 0, 0, 0 },
	{ "throttle", "src_failures", K_U32, CF(throttle.src_failures), 0, 0, 65535 },
	{ "throttle", "dn_failures", K_U32, CF(throttle.dn_failures), 0, 0, 65535 },
	{ "throttle", "dn_global_failures", K_U32, CF(throttle.dn_global_failures), 0, 0, 65535 },
	{ "throttle", "window_ms", K_U32, CF(throttle.window_ms), 0, 1, 86400000u },
	{ "throttle", "penalty_ms", K_U32, CF(throttle.penalty_ms), 0, 1, 86400000u },
	{ "tcp", "buffer_pool", K_U32, CF(tcp_buffer_pool), 0, 0, 1u << 24 },
	{ "tcp", "buffer_stall_ms", K_U64, CF(tcp_buffer_stall_ms), 0, 0, 86400000u },
	{ "tcp", "syn_rate", K_U32, CF(tcp_syn_rate), 0, 0, 100000000u },
	{ "tcp", "syn_rate_validated", K_U32, CF(tcp_syn_rate_validated), 0, 0, 100000000u },
	{ "tcp", "validated_sources", K_U32, CF(tcp_validated_sources), 0, 0, 1u << 24 },
	{ "admin", "metrics_listen", K_STR, CF(metrics_listen),
	  sizeof(((struct lfe_config *)0)->metrics_listen), 0, 0 },
};

/* The bytes of a key's field in struct lfe_config (or lfe_cfg_port); 0
 * for the keys that fill several fields (ports, lcores, address). */
static size_t key_size(const struct key_def *k)
{
	switch (k->type) {
	case K_STR: case K_SCHEME: case K_DN: case K_ATTRS:
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

static bool field_differs(const struct key_def *k, const uint8_t *a, const uint8_t *b)
{
	size_t n = key_size(k);
	if (k->type == K_STR || k->type == K_SCHEME || k->type == K_DN || k->type == K_ATTRS)
		return strncmp((const char *)a + k->off, (const char *)b + k->off, n) != 0;
	return memcmp(a + k->off, b + k->off, n) != 0;
}

bool lfe_config_differs(const struct lfe_config *a, const struct lfe_config *b, char *name,
			size_t len)
{
	const char *which = NULL;
	unsigned port = 0;

	if (a->n_ldap_ports != b->n_ldap_ports ||
	    memcmp(a->ldap_ports, b->ldap_ports, sizeof a->ldap_ports) != 0)
		which = "[ldap] ports";
	else if (a->n_ldaps_ports != b->n_ldaps_ports ||
		 memcmp(a->ldaps_ports, b->ldaps_ports, sizeof a->ldaps_ports) != 0)
		which = "[ldap] ldaps_ports";
	else if (a->n_lcores != b->n_lcores || memcmp(a->lcores, b->lcores, sizeof a->lcores) != 0)
		which = "[workers] lcores";
	for (size_t i = 0; which == NULL && i < sizeof keys / sizeof keys[0]; i++) {
		const struct key_def *k = &keys[i];
		if (strcmp(k->section, "port") == 0) {
			for (port = 0; port < LFE_CFG_MAX_PORTS; port++) {
				const struct lfe_cfg_port *pa = &a->port[port], *pb = &b->port[port];
				bool d = k->type == K_CIDR ? pa->addr != pb->addr || pa->prefix_len != pb->prefix_len
					 : field_differs(k, (const uint8_t *)pa, (const uint8_t *)pb);
				if (pa->present != pb->present || d) {
					snprintf(name, len, "[port%u]%s%s", port, d ? " " : "", d ? k->key : "");
					return true;
				}
			}
			continue;
		}
		if (key_size(k) && field_differs(k, (const uint8_t *)a, (const uint8_t *)b)) {
			snprintf(name, len, "[%s] %s", k->section, k->key);
			return true;
		}
	}
	if (which)
		snprintf(name, len, "%s", which);
	return which != NULL;
}

/* Password schemes a store may default to (those backend/pwscheme.c hashes). */
static const char *const schemes[] = {
	"{SSHA}", "{SSHA256}", "{SSHA512}", "{SHA}", "{SHA256}", "{SHA512}",
	"{CRYPT}", "{ARGON2}", "{PBKDF2-SHA1}", "{PBKDF2-SHA256}", "{PBKDF2-SHA512}",
};

static int errf(char err[LFE_CFG_ERR_LEN], int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int errf(char err[LFE_CFG_ERR_LEN], int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, LFE_CFG_ERR_LEN, fmt, ap);
	va_end(ap);
	return rc;
}

void lfe_config_defaults(struct lfe_config *c)
{
	memset(c, 0, sizeof(*c));
	c->ldap_ports[0] = 389;
	c->n_ldap_ports = 1;
	snprintf(c->metrics_listen, sizeof(c->metrics_listen), "%s", LFE_CFG_METRICS_DEFAULT);
	snprintf(c->log_dest, sizeof(c->log_dest), "stderr");
	snprintf(c->log_level, sizeof(c->log_level), "info");
	c->max_pdu = 65536;
	c->bind_cache = 65536;
	c->allow_anonymous = true;
	c->idle_timeout_ms = 300000;
	c->max_conns_per_core = 4096;
	c->max_conns_per_source = 256;
	c->share_pressure_pct = LFE_SHARE_PRESSURE_PCT;
	c->pdu_timeout_ms = 5000;
	c->first_request_ms = 10000;
	c->verifier_threads = 1;
	c->verify_queue = 1024;
	c->verify_per_source = 8;
	c->tls_handshake_threads = 1;
	c->tls_handshake_queue = 1024;
	c->tls_handshake_per_source = 16;
	c->tls_handshake_timeout_ms = 10000;   /* conf/ldapfe.conf says why */
	c->request_slice_us = 200;
	c->search_max_candidates = 10000;
	c->tls_protocol_min = 2;
	c->tls_ticket_lifetime = LFE_TLS_TICKET_LIFETIME_DEFAULT;
	c->throttle.src_failures = 100;
	c->throttle.dn_failures = 5;
	c->throttle.window_ms = 60000;
	c->throttle.penalty_ms = 60000;
	c->tcp_buffer_stall_ms = 60000;
	struct lfe_tcp_cfg tcd;
	lfe_tcp_cfg_default(&tcd);
	c->tcp_syn_rate = tcd.syn_rate;
	c->tcp_syn_rate_validated = tcd.syn_rate_validated;
	c->tcp_validated_sources = tcd.validated_sources;
	for (uint32_t i = 0; i < LFE_CFG_MAX_PORTS; i++) {
		c->port[i].mtu = 1500;
		c->port[i].checksum_offload = true;
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
		   const char *raw, char err[LFE_CFG_ERR_LEN])
{
	char v[1024];
	const char *why = NULL;
	uint8_t *base = (uint8_t *)c;
	const char *sec = section;
	uint64_t u;

	if (section == NULL || key == NULL || raw == NULL)
		return errf(err, -EINVAL, "missing section, key or value");
	if (strlen(raw) >= sizeof(v))
		return errf(err, -EINVAL, "[%.32s] %.32s: value too long", section, key);
	trim(raw, v, sizeof(v));

	if (strncmp(section, "port", 4) == 0) {
		if (lfe_config_parse_u64(section + 4, 0, LFE_CFG_MAX_PORTS - 1, &u) < 0)
			return errf(err, -ENOENT, "[%.32s]: unknown section (ports are port0..port%u)",
				    section, LFE_CFG_MAX_PORTS - 1);
		base = (uint8_t *)&c->port[u];
		c->port[u].present = true;
		sec = "port";
	}
	const struct key_def *k = NULL;
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
		return errf(err, -ENOENT, "[%.32s]: unknown section", section);
	if (k == NULL)
		return errf(err, -ENOENT, "[%.32s] %.64s: unknown key", section, key);

	void *f = base + k->off;
	switch (k->type) {
	case K_STR:
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
			return errf(err, -EINVAL, "[%.32s] %s: %s out of range %llu..%llu", section, key, v,
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
		return errf(err, -EINVAL, "[%.32s] %s: \"%.64s\": %s", section, key, v, why);
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

int lfe_config_finish(struct lfe_config *c, char err[LFE_CFG_ERR_LEN])
{
	uint32_t la;
	uint16_t lp;
	if (c->store_path[0] == '\0')
		return errf(err, -EINVAL, "[store] path: required");
	enum lfe_log_dest ld;
	enum lfe_log_level ll;
	if (lfe_log_parse_dest(c->log_dest, &ld) < 0)
		return errf(err, -EINVAL, "[daemon] log: \"%s\": stderr or syslog", c->log_dest);
	if (lfe_log_parse_level(c->log_level, &ll) < 0)
		return errf(err, -EINVAL, "[daemon] log_level: \"%s\": err, warn, info or debug", c->log_level);
	if (c->metrics_listen[0] && lfe_config_parse_listen(c->metrics_listen, &la, &lp) < 0)
		return errf(err, -EINVAL, "[admin] metrics_listen: \"%s\": not ADDRESS:PORT (IPv4), "
			    "or empty for no metrics", c->metrics_listen);
	if (c->n_ldap_ports + c->n_ldaps_ports > LFE_CFG_MAX_LISTEN)
		return errf(err, -EINVAL, "[ldap] ldaps_ports: at most %u ports with [ldap] ports",
			    LFE_CFG_MAX_LISTEN);
	for (uint32_t i = 0; i < c->n_ldaps_ports; i++)
		for (uint32_t j = 0; j < c->n_ldap_ports; j++)
			if (c->ldaps_ports[i] == c->ldap_ports[j])
				return errf(err, -EINVAL, "[ldap] ldaps_ports: %u is also a cleartext port",
					    c->ldaps_ports[i]);
	if (c->n_ldaps_ports && (c->tls_certificate[0] == '\0' || c->tls_key[0] == '\0'))
		return errf(err, -EINVAL, "[tls] certificate and key: required by [ldap] ldaps_ports");
	if (c->require_tls != LFE_REQUIRE_TLS_NONE &&
	    (c->tls_certificate[0] == '\0' || c->tls_key[0] == '\0'))
		return errf(err, -EINVAL, "[ldap] require_tls: needs a [tls] certificate and key");
	if (c->tls_verify_client != LFE_TLS_VERIFY_NONE && c->tls_ca[0] == '\0')
		return errf(err, -EINVAL, "[tls] verify_client: needs [tls] ca (the CA that signs "
			    "client certificates)");
	c->n_ports = 0;
	for (uint32_t i = 0; i < LFE_CFG_MAX_PORTS; i++) {
		struct lfe_cfg_port *p = &c->port[i];
		if (!p->present)
			continue;
		if (i != c->n_ports)
			return errf(err, -EINVAL, "[port%u]: ports must be numbered from port0 without gaps", i);
		c->n_ports++;
		if (p->dev[0] == '\0')
			return errf(err, -EINVAL, "[port%u] dev: required", i);
		if (p->addr == 0)
			return errf(err, -EINVAL, "[port%u] address: required", i);
		uint32_t mask = p->prefix_len == 32 ? 0xffffffffu : ~(0xffffffffu >> p->prefix_len);
		if (p->gateway && ((p->gateway ^ p->addr) & mask))
			return errf(err, -EINVAL, "[port%u] gateway: not inside the port's subnet", i);
		if (p->gateway == p->addr)
			return errf(err, -EINVAL, "[port%u] gateway: equals the port's own address", i);
		for (uint32_t j = 0; j < i; j++) {
			if (c->port[j].addr == p->addr)
				return errf(err, -EINVAL, "[port%u] address: same as [port%u]", i, j);
			if (strcmp(c->port[j].dev, p->dev) == 0)
				return errf(err, -EINVAL, "[port%u] dev: same as [port%u]", i, j);
		}
	}
	if (c->n_ports == 0)
		return errf(err, -EINVAL, "[port0]: at least one port is required");
	if (c->search_access == LFE_SEARCH_ACCESS_ANONYMOUS && !c->allow_anonymous)
		return errf(err, -EINVAL, "[ldap] search_access: anonymous conflicts with "
			    "allow_anonymous = false (anonymous clients may not search then)");
	if (c->search_base[0] && c->suffix[0]) {
		char s[LFE_DN_MAX + 1];
		ssize_t sl = lfe_dn_normalize((const uint8_t *)c->suffix, strlen(c->suffix), s, sizeof(s));
		if (sl < 0)
			return errf(err, -EINVAL, "[ldap] suffix: not a valid DN");
		if (!lfe_dn_is_under(c->search_base, strlen(c->search_base), s, (size_t)sl))
			return errf(err, -EINVAL, "[ldap] search_base: not at or under the suffix %.200s",
				    c->suffix);
	}
	if (c->group[0] && !c->user[0])
		return errf(err, -EINVAL, "[daemon] group: needs [daemon] user");
	const struct lfe_cfg_throttle *t = &c->throttle;
	if (t->enabled && t->src_failures == 0 && t->dn_failures == 0 && t->dn_global_failures == 0)
		return errf(err, -EINVAL, "[throttle] enabled: every threshold "
			    "(src_failures, dn_failures, dn_global_failures) is 0");
	if (t->enabled && t->dn_global_failures && t->dn_failures > t->dn_global_failures)
		return errf(err, -EINVAL, "[throttle] dn_global_failures: below dn_failures "
			    "(the per-DN count over all sources includes each source's)");
	return 0;
}

int lfe_config_parse_impair(const char *s, struct lfe_impair_opts *o, char err[LFE_CFG_ERR_LEN])
{
	char tok[64];

	memset(o, 0, sizeof(*o));
	o->seed = 1;
	if (s == NULL || *s == '\0')
		return errf(err, -EINVAL, "--impair: empty");
	while (*s) {
		size_t l = strcspn(s, ",");
		if (l == 0 || l >= sizeof(tok))
			return errf(err, -EINVAL, "--impair: empty or overlong item");
		memcpy(tok, s, l);
		tok[l] = '\0';
		s += l;
		if (*s == ',' && *++s == '\0')
			return errf(err, -EINVAL, "--impair: trailing comma");
		char *eq = strchr(tok, '=');
		if (eq == NULL)
			return errf(err, -EINVAL, "--impair: \"%s\": expected name=value", tok);
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
			return errf(err, -EINVAL, "--impair: unknown item \"%s\" (drop, dup, reorder, seed)", tok);
		if (lfe_config_parse_u64(eq + 1, 0, dst ? 1000000u : UINT64_MAX, &v) < 0)
			return errf(err, -EINVAL, "--impair %s: \"%s\": %s", tok, eq + 1,
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
