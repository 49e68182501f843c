/* dataplane/config.h — the ldapfe configuration and its validation.
 *
 * Pure C, no DPDK: main.c reads the INI file with rte_cfgfile and feeds
 * every (section, key, value) to lfe_config_set(), then calls
 * lfe_config_finish(). Both refuse bad input with a message that names the
 * section, the key and the reason, so the daemon stops at start instead of
 * running with a guessed value. Unit-tested and fuzzed without EAL.
 *
 * Keys: one row each in config.c's table (struct lfe_cfg_key below):
 * section, name, type, range, default, LIVE or RESTART, a line of help.
 * The defaults, the parser, reload's apply and refuse lists
 * (control_reload.c), the settings of `ldapfectl status` (control_status.c,
 * lfe_config_key_format) and the KEYS section of ldapfe.conf(5) come from it;
 * `build/tests/dataplane/lfe-config-schema` prints it, and a test checks
 * conf/ldapfe.conf and the man page against it (tests/dataplane/
 * check_conf_docs.py) and walks every key through a reload
 * (tests/integration/test_confschema.sh).
 */
#ifndef LFE_DATAPLANE_CONFIG_H
#define LFE_DATAPLANE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldap/session.h"   /* enum lfe_search_access, lfe_search_scope_max */
#include "tls/tls.h"            /* enum lfe_tls_verify */

#define LFE_CFG_MAX_PORTS     8u
#define LFE_CFG_MAX_LISTEN    8u
#define LFE_CFG_MAX_LCORES    128u
#define LFE_CFG_ERR_LEN       256u
#define LFE_CFG_METRICS_DEFAULT "127.0.0.1:9389"

struct lfe_cfg_port {
	bool present;
	char dev[256];
	uint32_t addr;          /* host order */
	uint8_t prefix_len;
	uint32_t gateway;       /* 0 = none */
	uint16_t mtu;
	bool checksum_offload;  /* auto (true) or off */
};

struct lfe_cfg_throttle {
	bool enabled;
	uint32_t src_failures, dn_failures, dn_global_failures;   /* 0 = off */
	uint32_t window_ms, penalty_ms;
};

struct lfe_config {
	/* [store] */
	char store_path[512];
	char default_scheme[32];
	bool allow_cleartext;
	bool store_preload;             /* LFE_STORE_PRELOAD at open */
	uint32_t bind_cache;    /* verified-credential cache entries per core, 0 = off */
	/* [ldap] */
	uint16_t ldap_ports[LFE_CFG_MAX_LISTEN];
	uint32_t n_ldap_ports;
	uint32_t max_pdu;
	bool allow_anonymous;
	uint64_t idle_timeout_ms;       /* 64-bit: converted to µs */
	uint32_t max_conns_per_core;
	uint32_t request_slice_us;
	uint32_t search_max_candidates;
	uint32_t search_size_limit;     /* 0 = none */
	uint32_t max_conns_per_source;  /* floor of the fair share; 0 = none */
	uint32_t share_pressure_pct;    /* share.h: the pressure level, % */
	uint64_t pdu_timeout_ms;
	uint64_t first_request_ms;      /* 0 = off */
	uint64_t bind_timeout_ms;       /* 0 = off */
	char suffix[1024];      /* empty = the store's */
	enum lfe_search_access search_access;      /* DEFAULT: from allow_anonymous */
	enum lfe_search_scope_max search_scope;
	enum lfe_require_tls require_tls;          /* NONE by default */
	char search_base[1024]; /* normalized; empty = the suffix */
	char search_attrs[1024];/* as given (validated); empty = all non-secret */
	uint16_t ldaps_ports[LFE_CFG_MAX_LISTEN];   /* TLS from the first byte */
	uint32_t n_ldaps_ports;                     /* default 0: none */
	/* [tls] (required when ldaps_ports or require_tls is set; when present,
	 * StartTLS is offered on the cleartext ports) */
	char tls_certificate[512];      /* PEM, chain allowed */
	char tls_key[512];              /* PEM */
	char tls_ca[512];               /* optional */
	enum lfe_tls_verify tls_verify_client;   /* NONE by default; needs ca */
	unsigned tls_protocol_min;      /* 2 (TLS 1.2, default) or 3 */
	char tls_ciphers[512];          /* TLS 1.2 list; empty = OpenSSL's */
	char tls_ciphersuites[512];     /* TLS 1.3 list; empty = OpenSSL's */
	uint32_t tls_ticket_lifetime;   /* seconds; 0 = no tickets */
	enum lfe_tls_record tls_record_layer;   /* LDAPFE (0) by default */
	/* [portN] */
	struct lfe_cfg_port port[LFE_CFG_MAX_PORTS];
	uint32_t n_ports;       /* set by lfe_config_finish */
	/* [workers] */
	uint32_t lcores[LFE_CFG_MAX_LCORES];
	uint32_t n_lcores;      /* 0 = default */
	uint32_t verifier_threads;
	uint32_t verify_queue;
	uint32_t verify_per_source;
	/* [tls] handshake steps off the workers (tls/tlsoff.h) */
	uint32_t tls_handshake_threads;        /* 0 = inline on the worker */
	uint32_t tls_handshake_queue;          /* daemon total, shared by the workers */
	uint32_t tls_handshake_per_source;     /* per client address and worker */
	uint64_t tls_handshake_timeout_ms;     /* a handshake must finish within it (0: never) */
	uint32_t idle_sleep_us;
	/* [daemon] */
	char user[64];                  /* empty = keep running as started */
	char group[64];                 /* empty = the user's primary group */
	char log_dest[16];              /* log: "stderr" (default) | "syslog" (log.h) */
	char log_level[16];             /* log_level: err | warn | info (default) | debug */
	/* [throttle] */
	struct lfe_cfg_throttle throttle;
	/* [admin] */
	char metrics_listen[32];        /* "a.b.c.d:port"; empty = no /metrics */
	/* [tcp] */
	uint32_t tcp_buffer_pool;       /* 0 = from max_conns_per_core (tcp.h) */
	uint64_t tcp_buffer_stall_ms;   /* 0 = off */
	/* SYN admission while cookies are out (tcp.h): per second, 0 = no limit */
	uint32_t tcp_syn_rate, tcp_syn_rate_validated, tcp_validated_sources;
};

/* The schema. A reload copies every LIVE key into the running
 * configuration (workers read it at their next safe point or per use) and
 * refuses one that changes a RESTART key, naming it. */
enum lfe_cfg_reload { LFE_CFG_RESTART = 0, LFE_CFG_LIVE };

struct lfe_cfg_key {
	const char *section;   /* "port" matches port0..port7 */
	const char *key;
	unsigned type;         /* config.c's enum; lfe_config_key_type() names it */
	size_t off;            /* in struct lfe_config, or struct lfe_cfg_port for "port" */
	size_t size;           /* text types: buffer size */
	uint64_t min, max;     /* numbers: range; text: min 1 = must not be empty */
	const char *def;       /* the default as written in the file, parsed by
				* lfe_config_set at lfe_config_defaults time (for "port":
				* into every port); NULL: none or computed, help says */
	const char *alt;       /* another valid value (for the reload walk test) */
	enum lfe_cfg_reload reload;
	const char *help;      /* one line */
};

/* The table, *n rows; rows with no plain field (ports lists, lcores,
 * [portN] address) are RESTART and checked by name in control_reload.c. */
const struct lfe_cfg_key *lfe_config_keys(size_t *n);

/* "u32", "bool", "file", "enum" ...; and its range or choices as text
 * ("1024..16777216", "none|optional|require", "-"). */
const char *lfe_config_key_type(const struct lfe_cfg_key *k);
void lfe_config_key_range(const struct lfe_cfg_key *k, char *buf, size_t len);

/* The name a refused reload gives the key: "[section] key", "[port0]
 * key" for [portN] keys, "[ldap] ports" for its alias port. */
void lfe_config_key_name(const struct lfe_cfg_key *k, char *name, size_t len);

/* Bytes of the key's field; 0 for keys that fill several (ports, lcores,
 * address). */
size_t lfe_config_key_size(const struct lfe_cfg_key *k);

/* True for a row that is another name of a key before it ("[ldap]
 * port" of "[ldap] ports"): status prints the key once. */
bool lfe_config_key_alias(const struct lfe_cfg_key *k);

/* Row k's value in force in c, spelled as the file spells it, into buf
 * (NUL-terminated): lfe_config_set(section, key, buf) gives back the same
 * field bytes (test_config checks every row). Lists comma-separated
 * ("389,1389"; lcores without ranges), [portN] address "a.b.c.d/len",
 * bools "true"/"false". port: which [portN] for "port" rows, else
 * ignored. Returns 0; LFE_CFG_UNSET when the key holds what leaving it
 * out gives and the row has no default, or no value a file could spell
 * (buf ""); -ENOSPC when buf is too
 * small (buf truncated); -EINVAL for a port out of range or a field no
 * value of the parser's makes.
 * No key holds a secret inline (passwords and keys are files, [tls] key
 * a path): a row that did would need a type that prints "(set)" here. */
#define LFE_CFG_UNSET 1
int lfe_config_key_format(const struct lfe_config *c, const struct lfe_cfg_key *k, unsigned port,
			  char *buf, size_t len);

/* How status --json writes a formatted value: a number, true/false, a
 * list of numbers ("[" buf "]"), or a JSON string. */
enum lfe_cfg_json { LFE_CFG_JSON_TEXT, LFE_CFG_JSON_NUMBER, LFE_CFG_JSON_BOOL, LFE_CFG_JSON_LIST };
enum lfe_cfg_json lfe_config_key_json(const struct lfe_cfg_key *k);

/* Copy every LIVE key's field from src into dst. */
void lfe_config_copy_live(struct lfe_config *dst, const struct lfe_config *src);

/* The RESTART keys whose value differs between a and b, as "[section]
 * key" ("[port1] mtu", "[port1]" when the port is added or removed),
 * comma-separated into name (truncated to len); 0 when none. Ports lists
 * and lcores are compared by their whole lists. */
unsigned lfe_config_restart_differs(const struct lfe_config *a, const struct lfe_config *b,
				    char *name, size_t len);

/* Defaults for every optional key: the table's. */
void lfe_config_defaults(struct lfe_config *c);

/* Apply one key. Returns 0, or -EINVAL / -ENOENT (unknown section or key)
 * with a NUL-terminated message in err. Strings are taken with any
 * surrounding spaces trimmed. */
int lfe_config_set(struct lfe_config *c, const char *section, const char *key,
		   const char *value, char *err, size_t errlen);

/* Cross-checks once every key is in: required keys present, ports dense
 * from port0, addresses unique, gateway inside the port's subnet. */
int lfe_config_finish(struct lfe_config *c, char *err, size_t errlen);

/* Options after "--" on the command line that are not in the file. */
struct lfe_impair_opts {
	bool on;
	uint64_t seed;
	uint32_t drop_ppm, dup_ppm, reorder_ppm;
};

/* Parse "drop=PPM,dup=PPM,reorder=PPM,seed=N" (any subset, any order;
 * PPM ≤ 1000000). 0 or -EINVAL with a message. */
int lfe_config_parse_impair(const char *s, struct lfe_impair_opts *o, char *err, size_t errlen);

/* "a.b.c.d:port" (port 1..65535) → host-order address and port. 0 or -EINVAL. */
int lfe_config_parse_listen(const char *s, uint32_t *addr, uint16_t *port);

/* Strict unsigned parse of a whole decimal string within [min, max]. */
int lfe_config_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* True when a key's value differs between a and b (ports, lcores and
 * port addresses included), with the first such key's name ("[tls]
 * handshake_threads") in name. A reload copies its live keys into a copy
 * of the running configuration and refuses itself if this is still true:
 * no key can be changed and silently ignored. */
bool lfe_config_differs(const struct lfe_config *a, const struct lfe_config *b, char *name,
			size_t len);

/* The TLS context of c's [tls] keys, as lfe_tls_new_opts (tls/tls.h). */
struct lfe_tls *lfe_tls_from_config(const struct lfe_config *c, const struct lfe_tls *prev,
				    char *err, size_t errlen);

#endif
