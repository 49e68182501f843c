/* gen/opts.c — see opts.h. */
#include "gen/opts.h"

#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "gen/dist.h"
#include "gen/pdu.h"

/* The usage's prose after the option list (lfe_gen_usage). */
static const char usage_notes[] =
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

/* ---- the option table ---- */

/* How a row's value is parsed and where it goes (off, off2: offsets in
 * struct lfe_gen_opts; size: the field's size where the kind needs it). */
enum opt_kind {
	K_FLAG,     /* no value: the bool at off becomes true */
	K_U32,      /* decimal min..max into the uint32_t at off */
	K_U16,      /* decimal min..max into the uint16_t at off */
	K_DOUBLE,   /* decimal, > 0 and ≤ dmax, into the double at off */
	K_RATE,     /* as K_DOUBLE, or "max" (0: unpaced) */
	K_STR,      /* non-empty, shorter than the char[size] at off */
	K_IP,       /* a.b.c.d into the uint32_t at off */
	K_CIDR,     /* a.b.c.d/len: the uint32_t at off, the uint8_t len at off2 */
	K_RANGE,    /* A-B or A/len, not 0.0.0.0, ≤ 65536 addresses: lo at off, hi at off2 */
	K_CHOICE,   /* one of choices' names: its value into the field (size 1 or int) */
	K_FN,       /* fn parses and stores */
};

struct opt_choice {
	const char *name;
	int val;
};

struct opt_row;
/* A custom handler: 0, or -EINVAL with the message in err (refuse() for
 * the row's usual one). a is NULL for an optional value not given. */
typedef int opt_fn(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen);

/* No short names: ldapfe-gen has none (main() answers -h before EAL). */
struct opt_row {
	const char *name;            /* long name, without "--" */
	enum opt_kind kind;
	int has_arg;                 /* K_FN: getopt's no_/required_/optional_argument */
	bool required;
	size_t off, off2, size;
	uint32_t min, max;           /* K_U32, K_U16 */
	double dmax;                 /* K_DOUBLE, K_RATE */
	const struct opt_choice *choices;   /* K_CHOICE: ends with a NULL name */
	opt_fn *fn;                  /* K_FN */
	const char *meta;            /* the value in the usage (K_CHOICE: the names) */
	const char *hint;            /* refusal: "--NAME: \"VALUE\": HINT" (K_U32/K_U16 NULL: "MIN..MAX") */
	const char *help;            /* the usage's line */
};

/* Row ids: the bit of each row in the parser's "seen" mask. */
enum opt_id {
	OPT_PORT, OPT_SRC, OPT_DST, OPT_GW, OPT_DPORT, OPT_WL, OPT_CONNS, OPT_USERS, OPT_UBASE,
	OPT_UFMT, OPT_PFMT, OPT_WRONG, OPT_UNKNOWN, OPT_RATE, OPT_DUR, OPT_BPC, OPT_DIST, OPT_SPORT,
	OPT_SEED, OPT_ARPTO, OPT_CONNTO, OPT_JSON, OPT_QUIET, OPT_SRCS, OPT_SYNRATE, OPT_BFRAC,
	OPT_LCORES, OPT_TLS, OPT_STARTTLS, OPT_TLSV, OPT_TLSCA, OPT_TLSR, OPT_TLSREC, OPT_FLOODIPS,
	OPT_FLOODRATE, OPT_FLOODREPLY, OPT_RXCSUM, OPT_HELP, OPT_N
};
_Static_assert(OPT_N <= 64, "the seen mask is a uint64_t");
_Static_assert(sizeof(enum lfe_gen_workload) == sizeof(int) && sizeof(enum lfe_gen_tls_resume) == sizeof(int),
	       "K_CHOICE stores enums as int");

#define SEEN(id) (UINT64_C(1) << (id))

static void *field(struct lfe_gen_opts *o, size_t off)
{
	return (char *)o + off;
}

static int refuse(const struct opt_row *r, const char *a, char *err, size_t errlen)
{
	if (r->hint)
		return errf(err, errlen, "--%s: \"%s\": %s", r->name, a, r->hint);
	return errf(err, errlen, "--%s: \"%s\": %u..%u", r->name, a, r->min, r->max);
}

static int fn_fmt(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	if (strlen(a) >= LFE_GEN_FMT_MAX || lfe_gen_fmt_check(a) < 0)
		return refuse(r, a, err, errlen);
	snprintf(field(o, r->off), LFE_GEN_FMT_MAX, "%s", a);
	return 0;
}

static int fn_dist(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	if (strcmp(a, "uniform") == 0)
		o->dist = LFE_DIST_UNIFORM;
	else if (strncmp(a, "zipf:", 5) == 0 && parse_pos_double(a + 5, &o->zipf_s) == 0 && o->zipf_s <= 100)
		o->dist = LFE_DIST_ZIPF;
	else
		return refuse(r, a, err, errlen);
	return 0;
}

static int fn_sport(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	uint32_t l, h;
	char buf[32];
	const char *dash = strchr(a, '-');

	if (!dash || (size_t)(dash - a) >= sizeof(buf))
		return errf(err, errlen, "--%s: \"%s\": want LO-HI", r->name, a);
	memcpy(buf, a, (size_t)(dash - a));
	buf[dash - a] = '\0';
	if (parse_u32(buf, 1, 65535, &l) < 0 || parse_u32(dash + 1, 1, 65535, &h) < 0 || l > h)
		return refuse(r, a, err, errlen);
	o->sport_lo = (uint16_t)l;
	o->sport_hi = (uint16_t)h;
	return 0;
}

static int fn_seed(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	char *end;

	errno = 0;
	o->seed = strtoull(a, &end, 10);
	if (errno || *end || *a < '0' || *a > '9')
		return refuse(r, a, err, errlen);
	return 0;
}

static int fn_bfrac(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	char *end;

	errno = 0;
	o->bind_frac = strtod(a, &end);
	if (errno || *end || *a < '0' || *a > '9' || !(o->bind_frac >= 0 && o->bind_frac <= 1))
		return refuse(r, a, err, errlen);
	return 0;
}

static int fn_starttls(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	(void)r, (void)a, (void)err, (void)errlen;
	o->tls = o->starttls = true;
	return 0;
}

/* --tls-resume[=slot|shared]: the value only with "=", slot without one. */
static int fn_resume(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	if (!a || strcmp(a, "slot") == 0)
		o->tls_resume = LFE_GEN_RESUME_SLOT;
	else if (strcmp(a, "shared") == 0)
		o->tls_resume = LFE_GEN_RESUME_SHARED;
	else
		return errf(err, errlen, "--%s=\"%s\": %s", r->name, a, r->hint);
	return 0;
}

static int fn_help(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	(void)r, (void)a, (void)o;
	return errf(err, errlen, "help");
}

static const struct opt_choice wl_choices[] = {
	{ "persistent", LFE_WL_PERSISTENT }, { "session", LFE_WL_SESSION }, { "mix", LFE_WL_MIX },
	{ "hold", LFE_WL_HOLD }, { "synflood", LFE_WL_SYNFLOOD }, { NULL, 0 },
};
static const struct opt_choice tlsv_choices[] = { { "1.2", 12 }, { "1.3", 13 }, { "any", 0 }, { NULL, 0 } };
static const struct opt_choice rec_choices[] = { { "ldapfe", 0 }, { "openssl", 1 }, { NULL, 0 } };
static const struct opt_choice reply_choices[] = { { "none", 0 }, { "rst", 1 }, { NULL, 0 } };
static const struct opt_choice csum_choices[] = { { "sample", 0 }, { "all", 1 }, { NULL, 0 } };

#define F(fld) offsetof(struct lfe_gen_opts, fld)
#define FSIZE(fld) sizeof(((struct lfe_gen_opts *)0)->fld)
/* F(fld), and a build error unless the field has type T: a row's kind
 * writes exactly that type. */
#define FT(fld, T) (F(fld) + 0 * sizeof(char[_Generic(((struct lfe_gen_opts *)0)->fld, T: 1, default: -1)]))
#define U32(fld, lo, hi) .kind = K_U32, .off = FT(fld, uint32_t), .min = (lo), .max = (hi)
#define DBL(k, fld, m) .kind = (k), .off = FT(fld, double), .dmax = (m)
#define STR(fld) .kind = K_STR, .off = F(fld), .size = FSIZE(fld)
#define CHOICE(fld, c) .kind = K_CHOICE, .off = F(fld), .size = FSIZE(fld), .choices = (c)
#define IP(fld) .kind = K_IP, .off = FT(fld, uint32_t)
#define FLAG(fld) .kind = K_FLAG, .off = FT(fld, bool)
#define RANGE(lo, hi) .kind = K_RANGE, .off = FT(lo, uint32_t), .off2 = FT(hi, uint32_t), \
	.hint = "want A-B or A/len (len >= 8), at most 65536 addresses"
#define FN(f, arg) .kind = K_FN, .fn = (f), .has_arg = (arg)

static const struct opt_row rows[OPT_N] = {
	[OPT_PORT] = { "port", STR(port), .required = true, .meta = "VDEV_OR_PCI",
		       .help = "the DPDK port: a vdev string or a PCI address" },
	[OPT_SRC] = { "src-ip", .kind = K_CIDR, .off = FT(src_ip, uint32_t), .off2 = FT(prefix_len, uint8_t),
		      .required = true, .meta = "A/prefix", .hint = "want a.b.c.d/len", .help = "our address and subnet" },
	[OPT_DST] = { "dst-ip", IP(dst_ip), .required = true, .meta = "B",
		      .hint = "want a.b.c.d", .help = "the server" },
	[OPT_GW] = { "gateway", IP(gateway), .meta = "G", .hint = "want a.b.c.d",
		     .help = "the next hop when the server is off-link" },
	[OPT_DPORT] = { "dport", .kind = K_U16, .off = FT(dport, uint16_t), .min = 1, .max = 65535, .meta = "P",
			.hint = "1..65535", .help = "the server's port (389; --tls: 636)" },
	[OPT_WL] = { "workload", CHOICE(wl, wl_choices), .help = "what the connections do (persistent)" },
	[OPT_CONNS] = { "conns", U32(conns, 1, LFE_GEN_MAX_CONNS), .meta = "N",
			.help = "connections, all lcores together (16)" },
	[OPT_USERS] = { "users", U32(users, 1, 1u << 30), .meta = "N", .hint = "1..2^30",
			.help = "the population's size (1000)" },
	[OPT_UBASE] = { "user-base", U32(user_base, 0, 1u << 30), .meta = "N", .hint = "0..2^30",
			.help = "its first user number (0)" },
	[OPT_UFMT] = { "user-fmt", FN(fn_fmt, required_argument), .off = F(user_fmt), .meta = "FMT",
		       .hint = "want exactly one %u (optionally %0Nu), %% for a percent sign",
		       .help = "a user's DN, one %u (uid=user%07u,ou=people,dc=example,dc=com)" },
	[OPT_PFMT] = { "password-fmt", FN(fn_fmt, required_argument), .off = F(pw_fmt), .meta = "FMT",
		       .hint = "want exactly one %u (optionally %0Nu), %% for a percent sign",
		       .help = "a user's password, one %u (pw%07u)" },
	[OPT_WRONG] = { "wrong-pct", U32(wrong_pct, 0, 100), .meta = "P", .hint = "0..100",
			.help = "share of binds with a wrong password (mix: 10)" },
	[OPT_UNKNOWN] = { "unknown-pct", U32(unknown_pct, 0, 100), .meta = "P", .hint = "0..100",
			  .help = "share of binds as an unknown DN (mix: 10)" },
	[OPT_RATE] = { "rate", DBL(K_RATE, rate, 1e9), .meta = "R|max", .hint = "binds per second (> 0) or max",
		       .help = "binds per second offered (max)" },
	[OPT_DUR] = { "duration", DBL(K_DOUBLE, duration_s, 86400), .meta = "S",
		      .hint = "seconds, > 0, ≤ 86400", .help = "measured seconds (10)" },
	[OPT_BPC] = { "binds-per-conn", U32(binds_per_conn, 0, UINT32_MAX - 1), .meta = "N",
		      .hint = "0 (never) or a count", .help = "persistent: reconnect after N binds (0: never)" },
	[OPT_DIST] = { "dist", FN(fn_dist, required_argument), .meta = "uniform|zipf:S",
		       .hint = "uniform or zipf:S (0 < S ≤ 100)", .help = "which user a bind picks (uniform)" },
	[OPT_SPORT] = { "sport-range", FN(fn_sport, required_argument), .meta = "LO-HI",
			.hint = "1 ≤ LO ≤ HI ≤ 65535", .help = "source ports (10000-60999)" },
	[OPT_SEED] = { "seed", FN(fn_seed, required_argument), .meta = "N", .hint = "a decimal number",
		       .help = "random seed (1)" },
	[OPT_ARPTO] = { "arp-timeout-ms", U32(arp_timeout_ms, 10, 600000), .meta = "MS",
			.hint = "10..600000 ms", .help = "wait for the server's ARP answer (2000)" },
	[OPT_CONNTO] = { "connect-timeout-ms", U32(connect_timeout_ms, 10, 600000), .meta = "MS",
			 .hint = "10..600000 ms", .help = "wait for the first SYN-ACK (3000)" },
	[OPT_JSON] = { "json", STR(json), .meta = "FILE", .help = "the final report as JSON as well" },
	[OPT_QUIET] = { "quiet", FLAG(quiet), .help = "no per-second lines" },
	[OPT_SRCS] = { "src-ips", RANGE(src_lo, src_hi), .meta = "A-B|A/len",
		       .help = "source addresses of the connections (--src-ip's)" },
	[OPT_SYNRATE] = { "syn-rate", DBL(K_DOUBLE, syn_rate, 1e9), .meta = "R",
			  .hint = "connections per second (> 0)",
			  .help = "connections opened per second (hold: 20000; else unpaced)" },
	[OPT_BFRAC] = { "bind-frac", FN(fn_bfrac, required_argument), .meta = "F", .hint = "0..1",
			.help = "hold: the share of connections that bind (0.1)" },
	[OPT_LCORES] = { "lcores", U32(lcores, 1, LFE_GEN_MAX_LCORES), .meta = "N",
			 .help = "generator lcores, a queue pair each (1)" },
	[OPT_TLS] = { "tls", FLAG(tls), .help = "LDAPS: TLS from the first byte" },
	[OPT_STARTTLS] = { "starttls", FN(fn_starttls, no_argument),
			   .help = "StartTLS on the LDAP port, then TLS" },
	[OPT_TLSV] = { "tls-version", CHOICE(tls_version, tlsv_choices),
		       .help = "the TLS versions offered (any)" },
	[OPT_TLSCA] = { "tls-ca", STR(tls_ca), .meta = "FILE",
			.help = "verify the server's certificate (default: not verified)" },
	[OPT_TLSR] = { "tls-resume", FN(fn_resume, optional_argument), .meta = "slot|shared",
		       .hint = "slot or shared", .help = "offer the last session on reconnects (slot)" },
	[OPT_TLSREC] = { "tls-records", CHOICE(tls_records_openssl, rec_choices),
			 .help = "who seals TLS 1.3 records after the handshake (ldapfe)" },
	[OPT_FLOODIPS] = { "flood-ips", RANGE(flood_lo, flood_hi), .meta = "A-B|A/len",
			   .help = "SYN flood sources, beside any workload" },
	[OPT_FLOODRATE] = { "flood-rate", DBL(K_RATE, flood_rate, 1e9), .meta = "R|max",
			    .hint = "SYNs per second (> 0) or max", .help = "SYNs per second (max)" },
	[OPT_FLOODREPLY] = { "flood-reply", CHOICE(flood_rst, reply_choices),
			     .help = "answer each SYN-ACK with nothing or RST (none)" },
	[OPT_RXCSUM] = { "rx-csum", CHOICE(rx_csum_all, csum_choices),
			 .help = "verify received checksums in software (sample)" },
	[OPT_HELP] = { "help", FN(fn_help, no_argument), .help = "this text" },
};
#undef F
#undef FSIZE
#undef FT
#undef IP
#undef FLAG
#undef U32
#undef DBL
#undef STR
#undef CHOICE
#undef RANGE
#undef FN

/* K_CHOICE: the names as "a, b or c" (a refusal) or "a|b|c" (the usage). */
static void choice_list(const struct opt_choice *c, bool usage, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; c[i].name && n < len; i++) {
		const char *sep = i == 0 ? "" : usage ? "|" : c[i + 1].name ? ", " : " or ";
		int w = snprintf(buf + n, len - n, "%s%s", sep, c[i].name);
		n += w > 0 ? (size_t)w : 0;
	}
}

static int parse_choice(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err,
			size_t errlen)
{
	for (const struct opt_choice *c = r->choices; c->name; c++) {
		if (strcmp(a, c->name) != 0)
			continue;
		if (r->size == 1) {
			uint8_t b = (uint8_t)c->val;
			memcpy(field(o, r->off), &b, 1);
		} else {
			memcpy(field(o, r->off), &c->val, sizeof(int));
		}
		return 0;
	}
	char names[128];
	choice_list(r->choices, false, names, sizeof(names));
	return errf(err, errlen, "--%s: \"%s\": %s", r->name, a, names);
}

/* One row's value a (NULL: none) into o. 0 or -EINVAL with the message. */
static int parse_row(const struct opt_row *r, const char *a, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	void *p = field(o, r->off);
	uint32_t v;
	double d;

	switch (r->kind) {
	case K_FLAG:
		*(bool *)p = true;
		return 0;
	case K_U32:
	case K_U16:
		if (parse_u32(a, r->min, r->max, &v) < 0)
			return refuse(r, a, err, errlen);
		if (r->kind == K_U16)
			*(uint16_t *)p = (uint16_t)v;
		else
			*(uint32_t *)p = v;
		return 0;
	case K_RATE:
	case K_DOUBLE:
		if (r->kind == K_RATE && strcmp(a, "max") == 0)
			d = 0;
		else if (parse_pos_double(a, &d) < 0 || d > r->dmax)
			return refuse(r, a, err, errlen);
		*(double *)p = d;
		return 0;
	case K_STR:
		if (strlen(a) == 0 || strlen(a) >= r->size)
			return errf(err, errlen, "--%s: empty or too long", r->name);
		snprintf(p, r->size, "%s", a);
		return 0;
	case K_IP:
		return lfe_net_parse_ipv4(a, p) < 0 ? refuse(r, a, err, errlen) : 0;
	case K_CIDR:
		return parse_cidr(a, p, field(o, r->off2)) < 0 ? refuse(r, a, err, errlen) : 0;
	case K_RANGE: {
		uint32_t *lo = p, *hi = field(o, r->off2);
		if (parse_ip_range(a, lo, hi) < 0 || *lo == 0 || *hi - *lo >= 65536u)
			return refuse(r, a, err, errlen);
		return 0;
	}
	case K_CHOICE:
		return parse_choice(r, a, o, err, errlen);
	case K_FN:
		return r->fn(r, a, o, err, errlen);
	}
	return errf(err, errlen, "--%s: no parser", r->name);
}

static int row_has_arg(const struct opt_row *r)
{
	return r->kind == K_FN ? r->has_arg : r->kind == K_FLAG ? no_argument : required_argument;
}

/* The checks between options, and the defaults that depend on others,
 * once every option is read; seen: the rows given (SEEN bits). */
static int opts_cross_check(struct lfe_gen_opts *o, uint64_t seen, char *err, size_t errlen)
{
	const uint64_t tls_sub = SEEN(OPT_TLSV) | SEEN(OPT_TLSCA) | SEEN(OPT_TLSR) | SEEN(OPT_TLSREC);

	for (int i = 0; i < OPT_N; i++)
		if (rows[i].required && !(seen & SEEN(i)))
			return errf(err, errlen, "--port, --src-ip and --dst-ip are required");
	if (o->src_ip == o->dst_ip)
		return errf(err, errlen, "--src-ip and --dst-ip are the same address");
	uint32_t mask = o->prefix_len == 32 ? 0xffffffffu : ~(0xffffffffu >> o->prefix_len);
	if (o->gateway && (o->gateway & mask) != (o->src_ip & mask))
		return errf(err, errlen, "--gateway is not inside --src-ip's subnet");
	if (!o->gateway && (o->dst_ip & mask) != (o->src_ip & mask))
		return errf(err, errlen, "--dst-ip is off-link: give --gateway");
	if ((seen & tls_sub) && !o->tls)
		return errf(err, errlen, "--tls-version, --tls-ca, --tls-resume and --tls-records need --tls "
					 "or --starttls");
	if ((seen & SEEN(OPT_TLSREC)) && !o->tls_records_openssl && o->tls_resume != LFE_GEN_RESUME_OFF)
		return errf(err, errlen, "--tls-records ldapfe: --tls-resume needs OpenSSL's records "
					 "(they carry the tickets)");
	if (o->tls && !o->starttls && !(seen & SEEN(OPT_DPORT)))
		o->dport = 636;
	if (o->wl == LFE_WL_MIX) {
		if (!(seen & SEEN(OPT_WRONG)))
			o->wrong_pct = 10;
		if (!(seen & SEEN(OPT_UNKNOWN)))
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
		if (!(seen & SEEN(OPT_SYNRATE)))
			o->syn_rate = 20000;
		if (!(seen & SEEN(OPT_BFRAC)))
			o->bind_frac = 0.1;
	} else if (seen & SEEN(OPT_BFRAC)) {
		return errf(err, errlen, "--bind-frac is for --workload hold");
	}
	if (o->wl == LFE_WL_SYNFLOOD) {
		if (o->tls || o->starttls)
			return errf(err, errlen, "--workload synflood sends SYNs only: no --tls/--starttls");
		if (seen & SEEN(OPT_SYNRATE))
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
	} else if (seen & (SEEN(OPT_FLOODREPLY) | SEEN(OPT_FLOODRATE))) {
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

int lfe_gen_opts_parse(int argc, char **argv, struct lfe_gen_opts *o, char *err, size_t errlen)
{
	struct option lo[OPT_N + 1];
	uint64_t seen = 0;
	int c;

	for (int i = 0; i < OPT_N; i++)
		lo[i] = (struct option){ rows[i].name, row_has_arg(&rows[i]), NULL, 256 + i };
	lo[OPT_N] = (struct option){ NULL, 0, NULL, 0 };
	optind = 0;   /* glibc: full re-initialisation, so parsing can repeat */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c < 256 || c >= 256 + OPT_N)
			return errf(err, errlen, "unknown option or missing value: \"%s\"",
				    argv[optind - 1] ? argv[optind - 1] : "?");
		if (parse_row(&rows[c - 256], optarg, o, err, errlen) < 0)
			return -EINVAL;
		seen |= SEEN(c - 256);
	}
	if (optind != argc)
		return errf(err, errlen, "unexpected argument \"%s\"", argv[optind]);
	return opts_cross_check(o, seen, err, errlen);
}

/* "--name META" as the usage shows it, into buf. */
static void row_synopsis(const struct opt_row *r, char *buf, size_t len)
{
	char names[128];
	const char *meta = r->meta;

	if (r->kind == K_CHOICE) {
		choice_list(r->choices, true, names, sizeof(names));
		meta = names;
	}
	if (!meta)
		snprintf(buf, len, "--%s", r->name);
	else if (row_has_arg(r) == optional_argument)
		snprintf(buf, len, "--%s[=%s]", r->name, meta);
	else
		snprintf(buf, len, "--%s %s", r->name, meta);
}

void lfe_gen_usage(FILE *f)
{
	char s[160];

	fputs("usage: ldapfe-gen [EAL args] --", f);
	for (int i = 0; i < OPT_N; i++) {
		if (rows[i].required) {
			row_synopsis(&rows[i], s, sizeof(s));
			fprintf(f, " %s", s);
		}
	}
	fputs(" [options]\noptions (defaults in parentheses):\n", f);
	for (int i = 0; i < OPT_N; i++) {
		row_synopsis(&rows[i], s, sizeof(s));
		/* a long synopsis gets a line of its own */
		fprintf(f, strlen(s) > 32 ? "  %s\n%35s%s\n" : "  %-32s %s%s\n", s, "", rows[i].help);
	}
	fputs(usage_notes, f);
}
