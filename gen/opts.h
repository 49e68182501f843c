/* gen/opts.h — ldapfe-gen's command line (the part after EAL's "--").
 * Pure C (no DPDK), so every option and its refusal is unit-tested.
 */
#ifndef LFE_GEN_OPTS_H
#define LFE_GEN_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum lfe_gen_workload {
	LFE_WL_PERSISTENT = 0,   /* N connections, binds repeated on each */
	LFE_WL_SESSION = 1,      /* connect, bind, unbind, close, repeat */
	LFE_WL_MIX = 2,          /* 1..8 binds per connection, wrong/unknown shares */
	LFE_WL_HOLD = 3,         /* open N connections and hold them; a fraction binds */
	LFE_WL_SYNFLOOD = 4,     /* SYNs from every source tuple, never completed */
};

/* Most connections one run may hold (all lcores together). */
#define LFE_GEN_MAX_CONNS (1u << 22)
/* Most generator lcores. */
#define LFE_GEN_MAX_LCORES 16u

#define LFE_GEN_FMT_MAX 256u

/* --tls-resume: what a reconnect offers (gen/tlsc.h's lfe_tlsc_resume). */
enum lfe_gen_tls_resume {
	LFE_GEN_RESUME_OFF = 0,
	LFE_GEN_RESUME_SLOT = 1,     /* each connection slot its own session */
	LFE_GEN_RESUME_SHARED = 2,   /* one session for all */
};

struct lfe_gen_opts {
	char port[256];          /* vdev string or PCI address */
	uint32_t src_ip;         /* host order */
	uint8_t prefix_len;
	uint32_t dst_ip;
	uint32_t gateway;        /* 0: the server is on-link */
	uint16_t dport;
	enum lfe_gen_workload wl;
	uint32_t conns;
	uint32_t users;          /* population: indices user_base .. user_base+users-1 */
	uint32_t user_base;
	char user_fmt[LFE_GEN_FMT_MAX];
	char pw_fmt[LFE_GEN_FMT_MAX];
	uint32_t wrong_pct, unknown_pct;
	uint32_t binds_per_conn; /* persistent: reconnect after this many; 0 = never */
	double rate;             /* binds/s offered; 0 = max (open loop) */
	double duration_s;
	uint16_t sport_lo, sport_hi;
	uint64_t seed;
	uint32_t arp_timeout_ms, connect_timeout_ms;
	char json[512];          /* empty: no JSON */
	bool quiet;              /* no per-second lines */
	/* TLS: --tls (LDAPS; --dport then defaults to 636) or --starttls */
	bool tls;
	bool starttls;           /* --starttls: StartTLS on the LDAP port, then TLS */
	uint8_t tls_version;     /* 0: 1.2 or 1.3; 12 or 13: that one only */
	enum lfe_gen_tls_resume tls_resume;
	char tls_ca[512];        /* empty: the server's certificate is not verified */
	bool tls_records_openssl; /* --tls-records openssl; default ldapfe's (gen/tlsc.h) */
	int dist;                /* enum lfe_gen_dist_kind (gen/dist.h) */
	double zipf_s;           /* --dist zipf:S */
	/* Source addresses of the connections (host order, inclusive); both 0:
	 * --src-ip alone. Inside --src-ip's subnet, not the server or gateway. */
	uint32_t src_lo, src_hi;
	double syn_rate;         /* connections opened per second; 0 = unpaced */
	double bind_frac;        /* hold: share of connections that bind (0..1) */
	uint32_t lcores;         /* generator lcores, each with its own queue pair */
	/* SYN flood (--workload synflood, or --flood-ips beside any workload):
	 * source addresses (host order, inclusive; 0: no flood), SYNs per
	 * second (0 = max), and whether each SYN-ACK is answered with RST. */
	uint32_t flood_lo, flood_hi;
	double flood_rate;
	bool flood_rst;
	/* --rx-csum all: verify every received frame's checksums in software
	 * where the port gives no verdict; default (sample): about one in 8
	 * (gen/rxcsum.h). */
	bool rx_csum_all;
};

/* Defaults for everything optional (wrong/unknown shares depend on the
 * workload and are fixed up by the parser). */
void lfe_gen_opts_defaults(struct lfe_gen_opts *o);

/* Parse argv[0..argc) (argv[0] is the program name). 0, or -EINVAL with a
 * message naming the option in err. */
int lfe_gen_opts_parse(int argc, char **argv, struct lfe_gen_opts *o, char *err, size_t errlen);

/* A user/password format must hold exactly one unsigned conversion (%u with
 * optional 0 flag and width ≤ 20) and otherwise only "%%" escapes, so that
 * snprintf with one unsigned argument is safe whatever the user typed.
 * 0 or -EINVAL. */
int lfe_gen_fmt_check(const char *fmt);

/* The usage: the synopsis and one line per option, from the option table,
 * then notes. */
void lfe_gen_usage(FILE *f);

#endif
