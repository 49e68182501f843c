/* mgmt/daemonctl.c — see daemonctl.h. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "mgmt/cli.h"
#include "mgmt/daemonctl.h"


#define SOCK_NAME   "ldapfe.ctl"
#define ANSWER_MAX  (16u << 20)
#define MAX_CORES   64u
#define MAX_NAMES   128u

struct opts {
	const char *daemon, *prefix;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool json, per_core, show_dn;
	unsigned limit, timeout, count;
};

/* A derived socket path is used only when its directory belongs to root or
 * to the caller and no one else may write to it: otherwise anyone could
 * have put a socket there that answers as the daemon (a fake status, a
 * reload "ok" that reloaded nothing). 0, or -EPERM with the reason in err. */
static int trusted_dir(const char *sock, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *slash = strrchr(sock, '/');
	struct stat st;

	if (slash == NULL || slash == sock)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - sock), sock);
	if (stat(dir, &st) < 0)
		return 0;   /* nothing there: connect says so */
	if ((st.st_uid != 0 && st.st_uid != getuid()) || (st.st_mode & 0022))
		return lfe_cli_fill(err, errlen, -EPERM, "%s: owned by uid %u with mode %03o: not trusted "
				    "(only root's or yours, not writable by others); name the socket "
				    "with --daemon PATH", dir, (unsigned)st.st_uid,
				    (unsigned)(st.st_mode & 0777));
	return 0;
}

/* The daemon's socket: --daemon PATH (a socket or EAL's runtime directory),
 * else EAL's runtime directory of --prefix: /var/run/dpdk/PREFIX for a
 * daemon started as root (the package's), $XDG_RUNTIME_DIR/dpdk/PREFIX for
 * one a user started. Never /tmp/dpdk (EAL's choice for a user without
 * XDG_RUNTIME_DIR), where any local user can create the directory first.
 * 0, or a negative errno with the reason in err. */
static int sock_path(struct opts *o, char *err, size_t errlen)
{
	int n;
	if (o->daemon) {
		struct stat st;
		if (stat(o->daemon, &st) == 0 && S_ISDIR(st.st_mode))
			n = snprintf(o->path, sizeof(o->path), "%s/%s", o->daemon, SOCK_NAME);
		else
			n = snprintf(o->path, sizeof(o->path), "%s", o->daemon);
	} else {
		const char *p = o->prefix ? o->prefix : "rte";
		const char *xdg = getenv("XDG_RUNTIME_DIR");
		if (getuid() != 0 && xdg && *xdg)
			n = snprintf(o->path, sizeof(o->path), "%s/dpdk/%s/%s", xdg, p, SOCK_NAME);
		else
			n = snprintf(o->path, sizeof(o->path), "/var/run/dpdk/%s/%s", p, SOCK_NAME);
	}
	if (n < 0 || (size_t)n >= sizeof(o->path))
		return lfe_cli_fill(err, errlen, -ENAMETOOLONG, "control socket path too long");
	return o->daemon ? 0 : trusted_dir(o->path, err, errlen);
}

/* The whole answer to the request on fd (until the daemon closes): 0 with
 * *out (malloc'd, NUL-terminated) and *len, or a negative errno with err. */
static int read_answer(const struct opts *o, int fd, char **out, size_t *len, char *err, size_t errlen)
{
	size_t n = 0, cap = 65536;
	char *buf = malloc(cap);

	for (;;) {
		if (buf == NULL)
			return lfe_cli_fill(err, errlen, -ENOMEM, "out of memory");
		if (n + 1 == cap) {
			if (cap >= ANSWER_MAX) {
				free(buf);
				return lfe_cli_fill(err, errlen, -E2BIG, "%s: answer larger than %u bytes",
						    o->path, ANSWER_MAX);
			}
			char *b = realloc(buf, cap * 2);
			if (b == NULL) {
				free(buf);
				buf = NULL;
				continue;
			}
			buf = b;
			cap *= 2;
		}
		ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
		if (r < 0) {
			int e = errno;
			free(buf);
			return lfe_cli_fill(err, errlen, -e, "%s: no answer: %s", o->path,
					    e == EAGAIN ? "timed out" : strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* Send one request, read the whole answer. 0 and *body (malloc'd, NUL-
 * terminated, the status line removed), or a negative errno with the
 * reason in err. */
static int ask(const struct opts *o, const char *req, unsigned wait_s, char **body, char *err,
	       size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;
	char *buf = NULL;
	size_t len = 0;

	*body = NULL;
	memcpy(sa.sun_path, o->path, strlen(o->path) + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		return lfe_cli_fill(err, errlen, rc, "no ldapfe daemon answers at %s: %s (is it running? "
				    "see --daemon PATH, --prefix NAME)", o->path, strerror(-rc));
	}
	struct timeval tv = { (time_t)wait_s, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	size_t rl = strlen(req);
	if (send(fd, req, rl, MSG_NOSIGNAL) != (ssize_t)rl || send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		rc = -errno;
		close(fd);
		return lfe_cli_fill(err, errlen, rc, "%s: %s", o->path, strerror(-rc));
	}
	rc = read_answer(o, fd, &buf, &len, err, errlen);
	close(fd);
	if (rc < 0)
		return rc;
	char *nl = strchr(buf, '\n');
	if (nl == NULL)
		rc = lfe_cli_fill(err, errlen, -EBADMSG, "%s: the daemon closed without an answer", o->path);
	else if (*nl = '\0', strncmp(buf, "error ", 6) == 0)
		rc = lfe_cli_fill(err, errlen, -EREMOTEIO, "%s", buf + 6);
	else if (strcmp(buf, "ok") != 0)
		rc = lfe_cli_fill(err, errlen, -EBADMSG, "%s: unexpected answer \"%.60s\"", o->path, buf);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	memmove(buf, nl + 1, len - (size_t)(nl + 1 - buf) + 1);
	*body = buf;
	return 0;
}

/* ---------------------------------------------------------------- stats */

struct stats {
	unsigned n_cores, n_names;
	char cores[MAX_CORES][16];      /* lcore ids, "total" last */
	char names[MAX_NAMES][48];
	uint64_t v[MAX_CORES + 1][MAX_NAMES];
	/* Per second over the daemon's last second or so ("rate" lines). */
	double r[MAX_CORES + 1][MAX_NAMES];
	bool has_r[MAX_NAMES];
	double window;          /* seconds; 0: the daemon sent no rates */
};

static int core_index(struct stats *s, const char *core)
{
	for (unsigned i = 0; i < s->n_cores; i++)
		if (strcmp(s->cores[i], core) == 0)
			return (int)i;
	if (s->n_cores == MAX_CORES)
		return -1;
	snprintf(s->cores[s->n_cores], sizeof(s->cores[0]), "%s", core);
	return (int)s->n_cores++;
}

static int name_index(struct stats *s, const char *name)
{
	for (unsigned i = 0; i < s->n_names; i++)
		if (strcmp(s->names[i], name) == 0)
			return (int)i;
	if (s->n_names == MAX_NAMES)
		return -1;
	snprintf(s->names[s->n_names], sizeof(s->names[0]), "%s", name);
	return (int)s->n_names++;
}

/* 0 with s filled, or a negative errno with err. */
static int fetch_stats(const struct opts *o, struct stats *s, char *err, size_t errlen)
{
	char *body;
	int rc = ask(o, "stats", 5, &body, err, errlen);
	if (rc < 0)
		return rc;
	memset(s, 0, sizeof(*s));
	char *save = NULL;
	for (char *l = strtok_r(body, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char core[16], name[48];
		uint64_t v;
		double rv;
		if (sscanf(l, "rate-window %lf", &rv) == 1) {
			s->window = rv;
			continue;
		}
		if (sscanf(l, "rate %15s %47s %lf", core, name, &rv) == 3) {
			int c = core_index(s, core), n = name_index(s, name);
			if (c >= 0 && n >= 0) {
				s->r[c][n] = rv;
				s->has_r[n] = true;
			}
			continue;
		}
		if (sscanf(l, "%15s %47s %" SCNu64, core, name, &v) != 3)
			continue;
		int c = core_index(s, core), n = name_index(s, name);
		if (c >= 0 && n >= 0)
			s->v[c][n] = v;
	}
	free(body);
	return 0;
}

static uint64_t sv(const struct stats *s, unsigned core, const char *name)
{
	for (unsigned i = 0; i < s->n_names; i++)
		if (strcmp(s->names[i], name) == 0)
			return s->v[core][i];
	return 0;
}

static int do_stats(const struct opts *o)
{
	static struct stats s;
	char err[LFE_CLI_ERR_MAX];
	if (fetch_stats(o, &s, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	int total = core_index(&s, "total");
	if (o->json) {
		printf("{\"total\":{");
		for (unsigned n = 0; n < s.n_names; n++)
			printf("%s\"%s\":%" PRIu64, n ? "," : "", s.names[n], s.v[total][n]);
		printf("}");
		/* "rates": per second, summed over the cores, same names. */
		if (s.window > 0) {
			printf(",\"rate_window_s\":%.3f,\"rates\":{", s.window);
			for (unsigned n = 0, k = 0; n < s.n_names; n++)
				if (s.has_r[n])
					printf("%s\"%s\":%.1f", k++ ? "," : "", s.names[n], s.r[total][n]);
			printf("}");
		}
		if (o->per_core) {
			for (int pass = 0; pass < (s.window > 0 ? 2 : 1); pass++) {
				printf(pass ? ",\"core_rates\":{" : ",\"cores\":{");
				for (unsigned c = 0, k = 0; c < s.n_cores; c++) {
					if ((int)c == total)
						continue;
					printf("%s\"%s\":{", k++ ? "," : "", s.cores[c]);
					for (unsigned n = 0, m = 0; n < s.n_names; n++) {
						if (pass == 0)
							printf("%s\"%s\":%" PRIu64, n ? "," : "", s.names[n], s.v[c][n]);
						else if (s.has_r[n])
							printf("%s\"%s\":%.1f", m++ ? "," : "", s.names[n], s.r[c][n]);
					}
					printf("}");
				}
				printf("}");
			}
		}
		printf("}\n");
		return LFE_EXIT_OK;
	}
	printf("%-28s %14s %10s", "counter", "total", "per s");
	if (o->per_core)
		for (unsigned c = 0; c < s.n_cores; c++)
			if ((int)c != total)
				printf(" %10s%-4s", "lcore ", s.cores[c]);
	printf("\n");
	for (unsigned n = 0; n < s.n_names; n++) {
		/* Drop reasons that never happened stay out of the table (not of --json). */
		if (strncmp(s.names[n], "drop_", 5) == 0 && s.v[total][n] == 0)
			continue;
		printf("%-28s %14" PRIu64, s.names[n], s.v[total][n]);
		if (s.has_r[n])
			printf(" %10.1f", s.r[total][n]);
		else
			printf(" %10s", "-");
		if (o->per_core)
			for (unsigned c = 0; c < s.n_cores; c++)
				if ((int)c != total)
					printf(" %14" PRIu64, s.v[c][n]);
		printf("\n");
	}
	return LFE_EXIT_OK;
}

/* ------------------------------------------------------------------ top */

static volatile sig_atomic_t top_stop;

static void on_int(int sig)
{
	(void)sig;
	top_stop = 1;
}

static double rate(const struct stats *a, const struct stats *b, unsigned c, const char *name, double secs)
{
	uint64_t x = sv(a, c, name), y = sv(b, c, name);
	return y >= x && secs > 0 ? (double)(y - x) / secs : 0.0;
}

static void top_row(const struct stats *a, const struct stats *b, unsigned c, double secs)
{
	uint64_t bc = sv(b, c, "busy_cycles") - sv(a, c, "busy_cycles");
	uint64_t tc = sv(b, c, "total_cycles") - sv(a, c, "total_cycles");
	printf("%-7s %11.0f %11.0f %9.0f %9.0f %9.0f %9.0f %8" PRIu64 " %6.1f\n", b->cores[c],
	       rate(a, b, c, "rx_pkts", secs), rate(a, b, c, "tx_pkts", secs),
	       rate(a, b, c, "binds_ok", secs), rate(a, b, c, "binds_failed", secs),
	       rate(a, b, c, "searches", secs), rate(a, b, c, "conns_opened", secs),
	       sv(b, c, "conns_active"), tc ? 100.0 * (double)bc / (double)tc : 0.0);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int do_top(const struct opts *o)
{
	static struct stats a, b;
	struct termios old, raw;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &old) == 0;
	struct sigaction sa;
	char err[LFE_CLI_ERR_MAX];
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_int;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (fetch_stats(o, &a, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	if (tty) {
		raw = old;
		raw.c_lflag &= (tcflag_t)~(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	double ta = now_s();
	rc = 0;
	for (unsigned it = 0; !top_stop && (o->count == 0 || it < o->count); it++) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		double end = ta + 1.0;
		while (!top_stop) {
			double left = end - now_s();
			if (left <= 0)
				break;
			if (tty && poll(&p, 1, (int)(left * 1000) + 1) > 0) {
				char ch;
				if (read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
					top_stop = 1;
			} else if (!tty) {
				struct timespec ts = { 0, (long)(left * 1e9) };
				nanosleep(&ts, NULL);
			}
		}
		if (top_stop)
			break;
		if ((rc = fetch_stats(o, &b, err, sizeof(err))) < 0) {
			lfe_cli_err("%s", err);
			break;
		}
		double tb = now_s(), secs = tb - ta;
		printf("%sldapfe top — %s — per second over %.2f s; q or Ctrl-C quits\n\n",
		       tty || isatty(STDOUT_FILENO) ? "\033[H\033[2J" : "", o->path, secs);
		printf("%-7s %11s %11s %9s %9s %9s %9s %8s %6s\n", "lcore", "rx_pkts", "tx_pkts", "binds_ok",
		       "binds_fail", "searches", "opened", "active", "busy%");
		int total = core_index(&b, "total");
		for (unsigned c = 0; c < b.n_cores; c++)
			if ((int)c != total)
				top_row(&a, &b, c, secs);
		if (total >= 0)
			top_row(&a, &b, (unsigned)total, secs);
		fflush(stdout);
		a = b;
		ta = tb;
	}
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &old);
	return rc < 0 ? LFE_EXIT_FAIL : LFE_EXIT_OK;
}

/* ------------------------------------------------------------- commands */

static int simple(const struct opts *o, const char *req, unsigned wait_s)
{
	char *body, err[LFE_CLI_ERR_MAX];
	if (ask(o, req, wait_s, &body, err, sizeof(err)) < 0)
		return lfe_cli_fail("%s", err);
	fputs(body, stdout);
	free(body);
	return LFE_EXIT_OK;
}

/* After a drain the daemon exits: wait (bounded) until its socket stops
 * answering, so a script can start the next one at once. */
static void wait_gone(const struct opts *o, unsigned secs)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, o->path, strlen(o->path) + 1);
	for (unsigned i = 0; i < secs * 20u; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return;
		int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		close(fd);
		if (rc < 0)
			return;
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

static int num(const struct lfe_dctl_cmd *cmd, const char *opt, const char *s, unsigned max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v > max)
		return lfe_cli_usage(cmd->usage, "%s: \"%s\": a number 0..%u", opt, s, max);
	*out = (unsigned)v;
	return 0;
}

static const char *json(const struct opts *o)
{
	return o->json ? " json" : "";
}

static int do_status(const struct opts *o)
{
	char req[32];
	snprintf(req, sizeof(req), "status%s", json(o));
	return simple(o, req, 5);
}

static int do_conns(const struct opts *o)
{
	char req[64];
	snprintf(req, sizeof(req), "conns %u %d%s", o->limit, o->show_dn ? 1 : 0, json(o));
	return simple(o, req, 10);
}

static int do_reload(const struct opts *o)
{
	char req[32];
	snprintf(req, sizeof(req), "reload%s", json(o));
	return simple(o, req, 10);
}

static int do_drain(const struct opts *o)
{
	char req[64];
	snprintf(req, sizeof(req), "drain %u%s", o->timeout, json(o));
	int rc = simple(o, req, o->timeout + 10u);
	if (rc == LFE_EXIT_OK)
		wait_gone(o, 10);
	return rc;
}

/* The daemon commands (their rows in ldapfectl.c give usage and help). */
static const struct {
	const char *name;
	int (*run)(const struct opts *o);
} commands[] = {
	{ "status", do_status }, { "stats", do_stats }, { "conns", do_conns },
	{ "reload", do_reload }, { "drain", do_drain }, { "top", do_top },
};

/* The options only some commands take: a command takes one when its usage
 * names it. */
static const struct {
	int opt;
	const char *name;
} own_opts[] = {
	{ 'j', "--json" }, { 'c', "--per-core" }, { 'l', "--limit" },
	{ 'd', "--show-dn" }, { 't', "--timeout" }, { 'n', "--count" },
};

static const char *own_opt(int opt)
{
	for (size_t i = 0; i < sizeof(own_opts) / sizeof(own_opts[0]); i++)
		if (own_opts[i].opt == opt)
			return own_opts[i].name;
	return NULL;
}

int lfe_dctl_run(const struct lfe_dctl_cmd *cmd, const char *daemon, const char *prefix, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "daemon", required_argument, NULL, 'D' }, { "prefix", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' }, { "per-core", no_argument, NULL, 'c' },
		{ "limit", required_argument, NULL, 'l' }, { "show-dn", no_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' }, { "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct opts o = { .daemon = daemon, .prefix = prefix, .limit = 100, .timeout = 30 };
	const char *env;
	char err[LFE_CLI_ERR_MAX];
	int opt;

	if (o.prefix == NULL && (env = getenv("LDAPFE_PREFIX")) && *env)
		o.prefix = env;
	if (o.daemon == NULL && (env = getenv("LDAPFE_DAEMON")) && *env)
		o.daemon = env;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		/* Each option only where its command describes it. */
		const char *name = own_opt(opt);
		if (name && strstr(cmd->usage, name) == NULL)
			return lfe_cli_usage(cmd->usage, "%s takes no %s", cmd->name, name);
		switch (opt) {
		case 'D': o.daemon = optarg; break;
		case 'P': o.prefix = optarg; break;
		case 'j': o.json = true; break;
		case 'c': o.per_core = true; break;
		case 'd': o.show_dn = true; break;
		case 'l': if (num(cmd, "--limit", optarg, 1u << 20, &o.limit)) return LFE_EXIT_USAGE; break;
		case 't': if (num(cmd, "--timeout", optarg, 86400, &o.timeout)) return LFE_EXIT_USAGE; break;
		case 'n': if (num(cmd, "--count", optarg, 1u << 20, &o.count)) return LFE_EXIT_USAGE; break;
		case 'h':
			printf("usage: ldapfectl [--daemon PATH | --prefix NAME] %s\n\n%s", cmd->usage, cmd->help);
			return LFE_EXIT_OK;
		default:
			fprintf(stderr, "see: ldapfectl %s --help\n", cmd->name);
			return LFE_EXIT_USAGE;
		}
	}
	if (optind != argc)
		return lfe_cli_usage(cmd->usage, "unexpected argument \"%s\"", argv[optind]);
	if (sock_path(&o, err, sizeof(err)) < 0) {
		lfe_cli_err("%s", err);
		return LFE_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd->name, commands[i].name) == 0)
			return commands[i].run(&o);
	return lfe_cli_fail("internal: no daemon command \"%s\"", cmd->name);
}
