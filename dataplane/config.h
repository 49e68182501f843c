/* dataplane/config.h — the ldapfe configuration and its validation.
 *
 * Pure C, no DPDK: main.c reads the INI file with rte_cfgfile and feeds
 * every (section, key, value) to lfe_config_set(), then calls
 * lfe_config_finish(). Both refuse bad input with a message that names the
 * section, the key and the reason, so the daemon stops at start instead of
 * running with a guessed value. Unit-tested and fuzzed without EAL.
 *
 * Sections and keys (defaults in brackets):
 *   [store]   path (required), default_scheme [empty: the store's own,
 *             set by ldapfectl; the scheme of the dummy verification that
 *             unknown DNs get],
 *             allow_cleartext [false], preload [false: read the store
 *             once at start so the map can use 2 MiB pages, store.h],
 *             bind_cache [65536; 0 = off, ≤ 16777216]: entries of the
 *             verified-credential cache per worker core (backend/credcache.h;
 *             32 bytes each, allocated at start): a bind whose DN and
 *             password verified before is answered without the hash while
 *             the entry is unchanged
 *   [ldap]    port | ports (comma list) [389], max_pdu [65536],
 *             allow_anonymous [true], idle_timeout_ms [300000; ≤ 1 day],
 *             max_conns_per_core [4096], suffix [the store's],
 *             share_pressure_pct [75; 0..100, 100 = off: below this percent of a
 *             shared resource (connections, half-open connections, TLS
 *             handshakes, verifier jobs) no per-source bound applies; above
 *             it a source may hold its fair share, capacity / sources:
 *             net/share.h], max_conns_per_source [256; per core: the
 *             fair share of connections never goes below it; 0 = none; a
 *             SYN beyond the share is answered RST], pdu_timeout_ms [5000; 100..3600000: a
 *             request split over segments must be complete within it],
 *             first_request_ms [10000; 0 = off, ≤ 1 h: the first request
 *             must start within it of connect], bind_timeout_ms [0 = off;
 *             ≤ 1 day: a connection not bound (to a DN) within it of connect
 *             is closed; every deadline closes with RST and is counted],
 *             request_slice_us [200: the most worker time one search may
 *             take in one loop turn before it yields to the next],
 *             search_max_candidates [10000: entries one search may visit;
 *             past them adminLimitExceeded],
 *             search_size_limit [0 = none: entries one search may return;
 *             a client's smaller sizelimit wins; past it sizeLimitExceeded],
 *             search_access = anonymous | bound | none [anonymous when
 *               allow_anonymous, else bound]: who may search (the root DSE
 *               stays readable to all; allow_anonymous = false refuses
 *               anonymous searches and conflicts with "anonymous"),
 *             search_base [the suffix]: searches must be at or under it,
 *             search_scope = base | one | sub [sub]: the widest scope,
 *             require_tls = none | bind | all [none]: bind: a simple bind
 *               with a password over cleartext gets confidentialityRequired
 *               (13); all: every operation but StartTLS, the root DSE read
 *               and unbind does (needs [tls]),
 *             search_attrs [all but userPassword/authPassword]: comma list
 *               of the only attribute types a search may return or test
 *               in a filter (answers: ldap/session.h, "Search access")
 *   [tls]     certificate, key (PEM; required by ldaps_ports and
 *             require_tls), ca [none], verify_client = none | optional |
 *             require [none; needs ca: a client certificate asked for,
 *             verified against ca, and (require) needed for the handshake],
 *             protocol_min = 1.2 | 1.3 [1.2], ciphers [the TLS 1.2 list;
 *             LFE_TLS_CIPHERS_DEFAULT: ECDHE AEAD], ciphersuites [TLS 1.3;
 *             LFE_TLS_CIPHERSUITES_DEFAULT], ticket_lifetime
 *             [7200 s, ≤ 7 days; 0 = no session tickets, no resumption],
 *             record_layer = ldapfe | openssl [ldapfe: established TLS 1.3
 *             AES-GCM / ChaCha20 connections use tls/tlsrec.c's
 *             records; openssl: OpenSSL's throughout, the fallback].
 *             The files and cipher lists are checked by tls/tls.c at
 *             start and at reload (every [tls] key and require_tls are live:
 *             a reload builds a new context for new connections)
 *   [portN]   (N = 0..7, dense) dev (required; a vdev string such as
 *             net_af_packet0,iface=veth0,qpairs=2, hot-plugged at start),
 *             address (required, a.b.c.d/len), gateway [none], mtu [1500],
 *             checksum_offload [auto: the port verifies IPv4/TCP checksums
 *             on receive and computes them on transmit, each direction
 *             where the device can; off: ldapfe sums every frame itself]
 *   [workers] lcores [all EAL worker lcores, or the main lcore alone],
 *             verifier_threads [1], verify_queue [1024: slow verifications queued,
 *             shared equally by the workers],
 *             verify_per_source [8: under pressure (share_pressure_pct)
 *             a client address's share of a worker's jobs is never below
 *             it; beyond its share a bind is answered busy],
 *             idle_sleep_us [0: pure polling]
 *   [tls]     certificate, key, ca: see the struct below;
 *             handshake_threads [1; 0..64: crypto threads that run the
 *               handshake steps (the private-key operations) off the
 *               workers; 0 runs them inline on the worker, which stalls
 *               its other connections for each one],
 *             handshake_queue [1024; 1..65536: handshakes in progress
 *               (admitted at the client's hello, counted until finished,
 *               failed or closed), shared equally by the workers; beyond a
 *               worker's share a new handshake is refused with RST and
 *               counted in tls_busy; an admitted one is never refused],
 *             handshake_per_source [16; 1..65536: under pressure
 *               (share_pressure_pct) a client address's share of a
 *               worker's handshakes is never below it; beyond its share
 *               likewise refused]
 *             handshake_timeout_ms [10000; 0..600000: a TLS handshake must
 *               finish within it of its start (LDAPS connect, StartTLS),
 *               else the connection is reset (tls_handshake_expired); 0:
 *               no limit but idle_timeout_ms]
 *   [daemon]  user [none: stay root], group [the user's primary group]:
 *             once ports are up and memory is mapped, the daemon drops to
 *             this user (setgroups/setgid/setuid) with no capabilities left
 *             (af_packet, tap and memif need none after start). An unknown
 *             user or group is refused at start.
 *             log [stderr] | syslog: where event lines go (dataplane/log.h;
 *             journald takes stderr); log_level [info]: err, warn, info,
 *             debug. Start-up refusals are always plain text on stderr.
 *   [throttle] (failed binds, per worker core; see backend/throttle.h)
 *             enabled [false], src_failures [100] (per client address),
 *             dn_failures [5] (per DN from one address),
 *             dn_global_failures [0] (per DN from all addresses; lets a
 *             distributed attacker lock the DN out: off unless wanted),
 *             window_ms [60000], penalty_ms [60000]; a threshold of 0 turns
 *             that kind off, and at least one must be on when enabled.
 *   [tcp]     buffer_pool [0: max_conns_per_core up to 4096, then one per 8
 *             connections, at least 4096]: send rings (16 KiB) and receive
 *             buffers (8 KiB) per core, each; a connection holds them only
 *             while bytes are in flight or unconsumed. A dry pool gives zero
 *             windows and waits, never lost data (tcp_*_pool_empty counts).
 *             buffer_stall_ms [60000; 0 = off, ≤ 1 day]: a connection that
 *             holds a buffer and sees no ACK progress nor consumption for
 *             this long is reset (tcp_buf_stall_closed).
 *   [admin]   metrics_listen [127.0.0.1:9389; empty = off]: the address of the
 *             kernel's network where the daemon serves Prometheus /metrics
 *             (dataplane/metrics.h)
 *             Counted per worker core: N workers let a client that spreads
 *             its connections try up to N x a threshold per window
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
