/* gen/opts.c — see opts.h. */
#include "gen/opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "gen/dist.h"
#include "gen/pdu.h"

const char *const lfe_gen_usage =
	"usage: ldapfe-gen [EAL args] -- --port VDEV_OR_PCI --src-ip A/prefix --dst-ip B\n"
	"       [--gateway G] [--dport 389] [--workload persistent|session|mix|hold|synflood]\n"
	"       [--conns N]"
	"       [--users N] [--user-base N] [--user-fmt FMT] [--password-fmt FMT]\n"
	"       [--wrong-pct P] [--unknown-pct P] [--rate R|max] [--duration S]\n"
	"       [--binds-per-conn N] [--dist uniform|zipf:S]\n"
	"       [--sport-range LO-HI] [--seed N] [--arp-timeout-ms MS]\n"
	"       [--connect-timeout-ms MS] [--json FILE] [--quiet]\n"
	"       [--src-ips A-B|A/len] [--syn-rate R] [--bind-frac F] [--lcores N]\n"
	"       [--tls|--starttls [--tls-version 1.2|1.3|any] [--tls-ca FILE]\n"
	"        [--tls-resume[=slot|shared]] [--tls-records ldapfe|openssl]]\n"
	"       [--flood-ips A-B|A/len] [--flood-rate R|max] [--flood-reply none|rst]\n"
	"       [--rx-csum sample|all]\n"
	"A SYN flood: SYNs from --flood-ips x --sport-range at --flood-rate (default max:\n"
	"as fast as the port takes them), never completed; SYN-ACKs and RSTs back are\n"
	"counted. --flood-ips adds it to any workload (same lcores); --workload synflood\n"
	"floods only (sources: --flood-ips, else --src-ips, else --src-ip).\n"
	"--tls-records: who seals and opens TLS 1.3 records once the handshake is done:\n"
	"ldapfe (default: tls/tlsrec.c, as the server does; not with --tls-resume,\n"
	"which keeps OpenSSL for the tickets) or openssl (OpenSSL throughout).\n"
	"--rx-csum: received IPv4/TCP checksums, where the port does not verify them\n"
	"itself (memif, af_packet): sample (default) verifies a random ~1 in 8 frames in\n"
	"software (a server sending bad checksums on a share f of N frames goes\n"
	"unnoticed with probability ~(1-f/8)^N; found ones are dropped and counted:\n"
	"rx_csum bad), all verifies every frame (~5% more generator work per bind).\n"
	"A port with checksum offload does both ways itself, whatever this says.\n";

static int errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void lfe_gen_opts_defaults(struct lfe_gen_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->dport = 389;
	o->wl = LFE_WL_PERSISTENT;
	o->conns = 16;
	o->users = 1000;
	snprintf(o->user_fmt, sizeof(o->user_fmt), "uid=user%%07u,ou=people,dc=example,dc=com");
	snprintf(o->pw_fmt, sizeof(o->pw_fmt), "pw%%07u");
	o->duration_s = 10;
	o->sport_lo = 10000;
	o->sport_hi = 60999;
	o->seed = 1;
	o->arp_timeout_ms = 2000;
	o->connect_timeout_ms = 3000;
	o->lcores = 1;
}

int lfe_gen_fmt_check(const char *fmt)
{
	struct lfe_gen_fmt f;

	return strlen(fmt) < LFE_GEN_FMT_MAX && lfe_gen_fmt_parse(fmt, &f) == 0 ? 0 : -EINVAL;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_pos_double(const char *s, double *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e9)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_cidr(const char *s, uint32_t *addr, uint8_t *len)
{
	char buf[32];
	const char *slash = strchr(s, '/');
	uint32_t l;

	if (!slash || (size_t)(slash - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (lfe_net_parse_ipv4(buf, addr) < 0 || parse_u32(slash + 1, 1, 32, &l) < 0)
		return -EINVAL;
	*len = (uint8_t)l;
	return 0;
}

enum {
	O_PORT = 256, O_SRC, O_DST, O_GW, O_DPORT, O_WL, O_CONNS, O_USERS, O_UBASE, O_UFMT,
	O_PFMT, O_WRONG, O_UNKNOWN, O_RATE, O_DUR, O_SPORT, O_SEED, O_ARPTO, O_CONNTO, O_JSON,
	O_QUIET, O_HELP, O_BPC, O_TLS, O_TLSV, O_TLSCA, O_TLSR, O_TLSREC, O_STARTTLS, O_DIST, O_SRCS, O_SYNRATE,
	O_BFRAC, O_LCORES, O_FLOODREPLY, O_FLOODIPS, O_FLOODRATE, O_RXCSUM,
};

/* A source address range (--src-ips, --flood-ips): inside --src-ip's
 * subnet, holding neither the server nor the gateway. */
static int check_range(const struct lfe_gen_opts *o, uint32_t mask, uint32_t lo, uint32_t hi,
		       const char *name, char *err, size_t errlen)
{
	if ((lo & mask) != (o->src_ip & mask) || (hi & mask) != (o->src_ip & mask))
		return errf(err, errlen, "%s must lie inside --src-ip's subnet", name);
	if ((o->dst_ip >= lo && o->dst_ip <= hi) || (o->gateway >= lo && o->gateway <= hi))
		return errf(err, errlen, "%s includes the server or the gateway", name);
	return 0;
}

/* "A-B" or "A/len" (the host addresses of the prefix). */
static int parse_ip_range(const char *s, uint32_t *lo, uint32_t *hi)
{
	char buf[32];
	const char *sep = strpbrk(s, "-/");

	if (!sep || (size_t)(sep - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, (size_t)(sep - s));
	buf[sep - s] = '\0';
	if (lfe_net_parse_ipv4(buf, lo) < 0)
		return -EINVAL;
	if (*sep == '-')
		return lfe_net_parse_ipv4(sep + 1, hi) < 0 || *hi < *lo ? -EINVAL : 0;
	uint32_t len;
	if (parse_u32(sep + 1, 8, 32, &len) < 0)
		return -EINVAL;
	uint32_t mask = len == 32 ? 0xffffffffu : ~(0xffffffffu >> len);
	*lo &= mask;
	*hi = *lo | ~mask;
	if (len < 31) {   /* not the network and broadcast addresses */
		(*lo)++;
		(*hi)--;
	}
	return 0;
}

int lfe_gen_opts_parse(int argc, char **argv, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, O_PORT },
		{ "src-ip", required_argument, NULL, O_SRC },
		{ "dst-ip", required_argument, NULL, O_DST },
		{ "gateway", required_argument, NULL, O_GW },
		{ "dport", required_argument, NULL, O_DPORT },
		{ "workload", required_argument, NULL, O_WL },
		{ "conns", required_argument, NULL, O_CONNS },
		{ "users", required_argument, NULL, O_USERS },
		{ "user-base", required_argument, NULL, O_UBASE },
		{ "user-fmt", required_argument, NULL, O_UFMT },
		{ "password-fmt", required_argument, NULL, O_PFMT },
		{ "wrong-pct", required_argument, NULL, O_WRONG },
		{ "unknown-pct", required_argument, NULL, O_UNKNOWN },
		{ "rate", required_argument, NULL, O_RATE },
		{ "duration", required_argument, NULL, O_DUR },
		{ "sport-range", required_argument, NULL, O_SPORT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "arp-timeout-ms", required_argument, NULL, O_ARPTO },
		{ "connect-timeout-ms", required_argument, NULL, O_CONNTO },
		{ "json", required_argument, NULL, O_JSON },
		{ "quiet", no_argument, NULL, O_QUIET },
		{ "binds-per-conn", required_argument, NULL, O_BPC },
		{ "tls", no_argument, NULL, O_TLS },
		{ "starttls", no_argument, NULL, O_STARTTLS },
		{ "tls-version", required_argument, NULL, O_TLSV },
		{ "tls-ca", required_argument, NULL, O_TLSCA },
		{ "tls-resume", optional_argument, NULL, O_TLSR },
		{ "tls-records", required_argument, NULL, O_TLSREC },
		{ "dist", required_argument, NULL, O_DIST },
		{ "src-ips", required_argument, NULL, O_SRCS },
		{ "syn-rate", required_argument, NULL, O_SYNRATE },
		{ "bind-frac", required_argument, NULL, O_BFRAC },
		{ "lcores", required_argument, NULL, O_LCORES },
		{ "flood-reply", required_argument, NULL, O_FLOODREPLY },
		{ "flood-ips", required_argument, NULL, O_FLOODIPS },
		{ "flood-rate", required_argument, NULL, O_FLOODRATE },
		{ "rx-csum", required_argument, NULL, O_RXCSUM },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	bool have_src = false, have_dst = false, have_wrong = false, have_unknown = false;
	bool have_dport = false, have_tls_sub = false, records_ldapfe = false;
	bool have_syn = false, have_bfrac = false, have_freply = false, have_frate = false;
	uint32_t v;
	int c;

	optind = 0;   /* glibc: full re-initialisation, so parsing can repeat */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		const char *a = optarg;
		switch (c) {
		case O_PORT:
			if (strlen(a) == 0 || strlen(a) >= sizeof(o->port))
				return errf(err, errlen, "--port: empty or too long");
			snprintf(o->port, sizeof(o->port), "%s", a);
			break;
		case O_SRC:
			if (parse_cidr(a, &o->src_ip, &o->prefix_len) < 0)
				return errf(err, errlen, "--src-ip: \"%s\": want a.b.c.d/len", a);
			have_src = true;
			break;
		case O_DST:
			if (lfe_net_parse_ipv4(a, &o->dst_ip) < 0)
				return errf(err, errlen, "--dst-ip: \"%s\": want a.b.c.d", a);
			have_dst = true;
			break;
		case O_GW:
			if (lfe_net_parse_ipv4(a, &o->gateway) < 0)
				return errf(err, errlen, "--gateway: \"%s\": want a.b.c.d", a);
			break;
		case O_DPORT:
			if (parse_u32(a, 1, 65535, &v) < 0)
				return errf(err, errlen, "--dport: \"%s\": 1..65535", a);
			o->dport = (uint16_t)v;
			have_dport = true;
			break;
		case O_WL:
			if (strcmp(a, "persistent") == 0)
				o->wl = LFE_WL_PERSISTENT;
			else if (strcmp(a, "session") == 0)
				o->wl = LFE_WL_SESSION;
			else if (strcmp(a, "mix") == 0)
				o->wl = LFE_WL_MIX;
			else if (strcmp(a, "hold") == 0)
				o->wl = LFE_WL_HOLD;
			else if (strcmp(a, "synflood") == 0)
				o->wl = LFE_WL_SYNFLOOD;
			else
				return errf(err, errlen, "--workload: \"%s\": persistent, session, mix, hold or synflood", a);
			break;
		case O_CONNS:
			if (parse_u32(a, 1, LFE_GEN_MAX_CONNS, &o->conns) < 0)
				return errf(err, errlen, "--conns: \"%s\": 1..%u", a, LFE_GEN_MAX_CONNS);
			break;
		case O_USERS:
			if (parse_u32(a, 1, 1u << 30, &o->users) < 0)
				return errf(err, errlen, "--users: \"%s\": 1..2^30", a);
			break;
		case O_UBASE:
			if (parse_u32(a, 0, 1u << 30, &o->user_base) < 0)
				return errf(err, errlen, "--user-base: \"%s\": 0..2^30", a);
			break;
		case O_UFMT:
		case O_PFMT: {
			char *dst = c == O_UFMT ? o->user_fmt : o->pw_fmt;
			const char *name = c == O_UFMT ? "--user-fmt" : "--password-fmt";
			if (strlen(a) >= LFE_GEN_FMT_MAX || lfe_gen_fmt_check(a) < 0)
				return errf(err, errlen,
					    "%s: \"%s\": want exactly one %%u (optionally %%0Nu), %%%% for a percent sign",
					    name, a);
			snprintf(dst, LFE_GEN_FMT_MAX, "%s", a);
			break;
		}
		case O_WRONG:
		case O_UNKNOWN:
			if (parse_u32(a, 0, 100, &v) < 0)
				return errf(err, errlen, "--%s-pct: \"%s\": 0..100",
					    c == O_WRONG ? "wrong" : "unknown", a);
			if (c == O_WRONG) {
				o->wrong_pct = v;
				have_wrong = true;
			} else {
				o->unknown_pct = v;
				have_unknown = true;
			}
			break;
		case O_RATE:
			if (strcmp(a, "max") == 0)
				o->rate = 0;
			else if (parse_pos_double(a, &o->rate) < 0)
				return errf(err, errlen, "--rate: \"%s\": binds per second (> 0) or max", a);
			break;
		case O_DUR:
			if (parse_pos_double(a, &o->duration_s) < 0 || o->duration_s > 86400)
				return errf(err, errlen, "--duration: \"%s\": seconds, > 0, ≤ 86400", a);
			break;
		case O_SPORT: {
			uint32_t l, h;
			char buf[32];
			const char *dash = strchr(a, '-');
			if (!dash || (size_t)(dash - a) >= sizeof(buf))
				return errf(err, errlen, "--sport-range: \"%s\": want LO-HI", a);
			memcpy(buf, a, (size_t)(dash - a));
			buf[dash - a] = '\0';
			if (parse_u32(buf, 1, 65535, &l) < 0 || parse_u32(dash + 1, 1, 65535, &h) < 0 || l > h)
				return errf(err, errlen, "--sport-range: \"%s\": 1 ≤ LO ≤ HI ≤ 65535", a);
			o->sport_lo = (uint16_t)l;
			o->sport_hi = (uint16_t)h;
			break;
		}
		case O_SEED: {
			char *end;
			errno = 0;
			o->seed = strtoull(a, &end, 10);
			if (errno || *end || *a < '0' || *a > '9')
				return errf(err, errlen, "--seed: \"%s\": a decimal number", a);
			break;
		}
		case O_ARPTO:
		case O_CONNTO:
			if (parse_u32(a, 10, 600000, &v) < 0)
				return errf(err, errlen, "%s: \"%s\": 10..600000 ms",
					    c == O_ARPTO ? "--arp-timeout-ms" : "--connect-timeout-ms", a);
			if (c == O_ARPTO)
				o->arp_timeout_ms = v;
			else
				o->connect_timeout_ms = v;
			break;
		case O_JSON:
			if (strlen(a) == 0 || strlen(a) >= sizeof(o->json))
				return errf(err, errlen, "--json: empty or too long");
			snprintf(o->json, sizeof(o->json), "%s", a);
			break;
		case O_BPC:
			if (parse_u32(a, 0, UINT32_MAX - 1, &o->binds_per_conn) < 0)
				return errf(err, errlen, "--binds-per-conn: \"%s\": 0 (never) or a count", a);
			break;
		case O_DIST:
			if (strcmp(a, "uniform") == 0) {
				o->dist = LFE_DIST_UNIFORM;
			} else if (strncmp(a, "zipf:", 5) == 0 && parse_pos_double(a + 5, &o->zipf_s) == 0 &&
				   o->zipf_s <= 100) {
				o->dist = LFE_DIST_ZIPF;
			} else {
				return errf(err, errlen, "--dist: \"%s\": uniform or zipf:S (0 < S ≤ 100)", a);
			}
			break;
		case O_SRCS:
			if (parse_ip_range(a, &o->src_lo, &o->src_hi) < 0 || o->src_lo == 0 ||
			    o->src_hi - o->src_lo >= 65536u)
				return errf(err, errlen,
					    "--src-ips: \"%s\": want A-B or A/len (len >= 8), at most 65536 addresses", a);
			break;
		case O_FLOODIPS:
			if (parse_ip_range(a, &o->flood_lo, &o->flood_hi) < 0 || o->flood_lo == 0 ||
			    o->flood_hi - o->flood_lo >= 65536u)
				return errf(err, errlen,
					    "--flood-ips: \"%s\": want A-B or A/len (len >= 8), at most 65536 addresses", a);
			break;
		case O_FLOODRATE:
			if (strcmp(a, "max") == 0)
				o->flood_rate = 0;
			else if (parse_pos_double(a, &o->flood_rate) < 0)
				return errf(err, errlen, "--flood-rate: \"%s\": SYNs per second (> 0) or max", a);
			have_frate = true;
			break;
		case O_SYNRATE:
			if (parse_pos_double(a, &o->syn_rate) < 0)
				return errf(err, errlen, "--syn-rate: \"%s\": connections per second (> 0)", a);
			have_syn = true;
			break;
		case O_BFRAC: {
			char *end;
			errno = 0;
			o->bind_frac = strtod(a, &end);
			if (errno || *end || *a < '0' || *a > '9' || !(o->bind_frac >= 0 && o->bind_frac <= 1))
				return errf(err, errlen, "--bind-frac: \"%s\": 0..1", a);
			have_bfrac = true;
			break;
		}
		case O_LCORES:
			if (parse_u32(a, 1, LFE_GEN_MAX_LCORES, &o->lcores) < 0)
				return errf(err, errlen, "--lcores: \"%s\": 1..%u", a, LFE_GEN_MAX_LCORES);
			break;
		case O_FLOODREPLY:
			if (strcmp(a, "none") == 0)
				o->flood_rst = false;
			else if (strcmp(a, "rst") == 0)
				o->flood_rst = true;
			else
				return errf(err, errlen, "--flood-reply: \"%s\": none or rst", a);
			have_freply = true;
			break;
		case O_QUIET:
			o->quiet = true;
			break;
		case O_RXCSUM:
			if (strcmp(a, "all") == 0)
				o->rx_csum_all = true;
			else if (strcmp(a, "sample") == 0)
				o->rx_csum_all = false;
			else
				return errf(err, errlen, "--rx-csum: \"%s\": sample or all", a);
			break;
		case O_TLS:
			o->tls = true;
			break;
		case O_STARTTLS:
			o->tls = o->starttls = true;
			break;
		case O_TLSV:
			if (strcmp(a, "1.2") == 0)
				o->tls_version = 12;
			else if (strcmp(a, "1.3") == 0)
				o->tls_version = 13;
			else if (strcmp(a, "any") == 0)
				o->tls_version = 0;
			else
				return errf(err, errlen, "--tls-version: \"%s\": 1.2, 1.3 or any", a);
			have_tls_sub = true;
			break;
		case O_TLSCA:
			if (strlen(a) == 0 || strlen(a) >= sizeof(o->tls_ca))
				return errf(err, errlen, "--tls-ca: empty or too long");
			snprintf(o->tls_ca, sizeof(o->tls_ca), "%s", a);
			have_tls_sub = true;
			break;
		case O_TLSR:
			if (!a || strcmp(a, "slot") == 0)
				o->tls_resume = LFE_GEN_RESUME_SLOT;
			else if (strcmp(a, "shared") == 0)
				o->tls_resume = LFE_GEN_RESUME_SHARED;
			else
				return errf(err, errlen, "--tls-resume=\"%s\": slot or shared", a);
			have_tls_sub = true;
			break;
		case O_TLSREC:
			if (strcmp(a, "ldapfe") == 0)
				o->tls_records_openssl = false, records_ldapfe = true;
			else if (strcmp(a, "openssl") == 0)
				o->tls_records_openssl = true, records_ldapfe = false;
			else
				return errf(err, errlen, "--tls-records: \"%s\": ldapfe or openssl", a);
			have_tls_sub = true;
			break;
		case O_HELP:
			return errf(err, errlen, "help");
		default:
			return errf(err, errlen, "unknown option or missing value: \"%s\"",
				    argv[optind - 1] ? argv[optind - 1] : "?");
		}
	}
	if (optind != argc)
		return errf(err, errlen, "unexpected argument \"%s\"", argv[optind]);
	if (!o->port[0] || !have_src || !have_dst)
		return errf(err, errlen, "--port, --src-ip and --dst-ip are required");
	if (o->src_ip == o->dst_ip)
		return errf(err, errlen, "--src-ip and --dst-ip are the same address");
	uint32_t mask = o->prefix_len == 32 ? 0xffffffffu : ~(0xffffffffu >> o->prefix_len);
	if (o->gateway && (o->gateway & mask) != (o->src_ip & mask))
		return errf(err, errlen, "--gateway is not inside --src-ip's subnet");
	if (!o->gateway && (o->dst_ip & mask) != (o->src_ip & mask))
		return errf(err, errlen, "--dst-ip is off-link: give --gateway");
	if (have_tls_sub && !o->tls)
		return errf(err, errlen, "--tls-version, --tls-ca, --tls-resume and --tls-records need --tls "
					 "or --starttls");
	if (records_ldapfe && o->tls_resume != LFE_GEN_RESUME_OFF)
		return errf(err, errlen, "--tls-records ldapfe: --tls-resume needs OpenSSL's records "
					 "(they carry the tickets)");
	if (o->tls && !o->starttls && !have_dport)
		o->dport = 636;
	if (o->wl == LFE_WL_MIX) {
		if (!have_wrong)
			o->wrong_pct = 10;
		if (!have_unknown)
			o->unknown_pct = 10;
	}
	if (o->wrong_pct + o->unknown_pct > 100)
		return errf(err, errlen, "--wrong-pct + --unknown-pct exceed 100");
	if ((uint64_t)o->user_base + 2ull * o->users > UINT32_MAX)
		return errf(err, errlen, "--user-base + 2 * --users must fit in 32 bits");
	if (o->src_lo && check_range(o, mask, o->src_lo, o->src_hi, "--src-ips", err, errlen) < 0)
		return -EINVAL;
	uint64_t nips = o->src_lo ? (uint64_t)o->src_hi - o->src_lo + 1u : 1u;
	if (nips * ((uint32_t)(o->sport_hi - o->sport_lo) + 1u) < o->conns)
		return errf(err, errlen, "--sport-range%s gives fewer (address, port) pairs than --conns",
			    o->src_lo ? " times --src-ips" : "");
	if (o->wl == LFE_WL_HOLD) {
		if (!have_syn)
			o->syn_rate = 20000;
		if (!have_bfrac)
			o->bind_frac = 0.1;
	} else if (have_bfrac) {
		return errf(err, errlen, "--bind-frac is for --workload hold");
	}
	if (o->wl == LFE_WL_SYNFLOOD) {
		if (o->tls || o->starttls)
			return errf(err, errlen, "--workload synflood sends SYNs only: no --tls/--starttls");
		if (have_syn)
			return errf(err, errlen, "--workload synflood: its rate is --flood-rate");
		if (!o->flood_lo) {
			o->flood_lo = o->src_lo ? o->src_lo : o->src_ip;
			o->flood_hi = o->src_lo ? o->src_hi : o->src_ip;
		}
	} else if (o->flood_lo) {
		/* Beside a workload: sources of their own, never the workload's. */
		uint32_t lo = o->src_lo ? o->src_lo : o->src_ip, hi = o->src_lo ? o->src_hi : o->src_ip;
		if (o->flood_lo <= hi && lo <= o->flood_hi)
			return errf(err, errlen, "--flood-ips overlaps --src-ip/--src-ips");
	} else if (have_freply || have_frate) {
		return errf(err, errlen, "--flood-rate and --flood-reply need --flood-ips or --workload synflood");
	}
	if (o->flood_lo && check_range(o, mask, o->flood_lo, o->flood_hi, "--flood-ips", err, errlen) < 0)
		return -EINVAL;
	if (o->lcores > o->conns)
		return errf(err, errlen, "--lcores exceeds --conns");
	if (o->lcores > 1 && (o->tls || o->starttls))
		return errf(err, errlen, "--tls/--starttls run on one lcore (--lcores 1)");
	return 0;
}
