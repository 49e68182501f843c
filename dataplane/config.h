/* dataplane/config.h — the ldapfe configuration and its validation.
 *
 * Pure C, no DPDK: main.c reads the INI file with rte_cfgfile and feeds
 * every (section, key, value) to lfe_config_set(), then calls
 * lfe_config_finish(). Both refuse bad input with a message that names the
 * section, the key and the reason, so the daemon stops at start instead of
 * running with a guessed value. Unit-tested and fuzzed without EAL.
 *
 * Sections and keys (defaults in brackets):
 *   [store]   path (required), default_scheme [{SSHA512}],
 *             allow_cleartext [false]
 *   [ldap]    port | ports (comma list) [389], max_pdu [65536],
 *             allow_anonymous [true], idle_timeout_ms [300000],
 *             max_conns_per_core [4096], suffix [the store's]
 *   [portN]   (N = 0..7, dense) dev (required; a vdev string such as
 *             net_af_packet0,iface=veth0,qpairs=2, hot-plugged at start),
 *             address (required, a.b.c.d/len), gateway [none], mtu [1500]
 *   [workers] lcores [all EAL worker lcores, or the main lcore alone],
 *             verifier_threads [1], verify_queue [1024],
 *             idle_sleep_us [0: pure polling]
 *   [throttle] (failed binds, per worker core; see backend/throttle.h)
 *             enabled [false], src_failures [100] (per client address),
 *             dn_failures [5] (per DN from one address),
 *             dn_global_failures [0] (per DN from all addresses; lets a
 *             distributed attacker lock the DN out: off unless wanted),
 *             window_ms [60000], penalty_ms [60000]; a threshold of 0 turns
 *             that kind off, and at least one must be on when enabled.
 *             Counted per worker core: N workers let a client that spreads
 *             its connections try up to N x a threshold per window
 */
#ifndef LFE_DATAPLANE_CONFIG_H
#define LFE_DATAPLANE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LFE_CFG_MAX_PORTS     8u
#define LFE_CFG_MAX_LISTEN    8u
#define LFE_CFG_MAX_LCORES    128u
#define LFE_CFG_ERR_LEN       256u

struct lfe_cfg_port {
	bool present;
	char dev[256];
	uint32_t addr;          /* host order */
	uint8_t prefix_len;
	uint32_t gateway;       /* 0 = none */
	uint16_t mtu;
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
	/* [ldap] */
	uint16_t ldap_ports[LFE_CFG_MAX_LISTEN];
	uint32_t n_ldap_ports;
	uint32_t max_pdu;
	bool allow_anonymous;
	uint32_t idle_timeout_ms;
	uint32_t max_conns_per_core;
	char suffix[1024];      /* empty = the store's */
	/* [portN] */
	struct lfe_cfg_port port[LFE_CFG_MAX_PORTS];
	uint32_t n_ports;       /* set by lfe_config_finish */
	/* [workers] */
	uint32_t lcores[LFE_CFG_MAX_LCORES];
	uint32_t n_lcores;      /* 0 = default */
	uint32_t verifier_threads;
	uint32_t verify_queue;
	uint32_t idle_sleep_us;
	/* [throttle] */
	struct lfe_cfg_throttle throttle;
};

/* Defaults for every optional key. */
void lfe_config_defaults(struct lfe_config *c);

/* Apply one key. Returns 0, or -EINVAL / -ENOENT (unknown section or key)
 * with a NUL-terminated message in err. Strings are taken with any
 * surrounding spaces trimmed. */
int lfe_config_set(struct lfe_config *c, const char *section, const char *key,
		   const char *value, char err[LFE_CFG_ERR_LEN]);

/* Cross-checks once every key is in: required keys present, ports dense
 * from port0, addresses unique, gateway inside the port's subnet. */
int lfe_config_finish(struct lfe_config *c, char err[LFE_CFG_ERR_LEN]);

/* Options after "--" on the command line that are not in the file. */
struct lfe_impair_opts {
	bool on;
	uint64_t seed;
	uint32_t drop_ppm, dup_ppm, reorder_ppm;
};

/* Parse "drop=PPM,dup=PPM,reorder=PPM,seed=N" (any subset, any order;
 * PPM ≤ 1000000). 0 or -EINVAL with a message. */
int lfe_config_parse_impair(const char *s, struct lfe_impair_opts *o, char err[LFE_CFG_ERR_LEN]);

/* Strict unsigned parse of a whole decimal string within [min, max]. */
int lfe_config_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif
