/* tests/ldap/sockserver.c — a loopback kernel-socket LDAP server running one
 * lfe_session per connection over the in-memory test backend, so real
 * clients (ldapwhoami, ldapsearch, python3-ldap3) exercise the session
 * before the DPDK dataplane exists.
 *
 * usage: sockserver PORT USERS_FILE [--portfile F] [--pending] [--no-anon]
 *                   [--suffix DN] [--max-seconds N]
 *   PORT 0 picks a free port; it is written to F (and stdout) once listening.
 *   --pending: every bind is verified "elsewhere": the verdict is delivered
 *   with lfe_session_bind_done() on the next loop turn, like a verifier
 *   thread would.
 * Listens on 127.0.0.1 only. Stops on SIGTERM/SIGINT or after N seconds
 * (default 120) so a forgotten server cannot linger.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ldap/session.h"
#include "tests/ldap/testbackend.h"

#define MAX_CONNS 256
#define IN_CAP 16384
#define OUT_CAP 65536

struct conn {
	int fd;
	struct lfe_session *s;
	bool closing;          /* flush out, then close */
	bool has_verdict;      /* --pending: a verdict waits for delivery */
	uint64_t token;
	enum lfe_be_verdict verdict;
	size_t in_len, out_off, out_len;
	uint8_t in[IN_CAP];
	uint8_t out[OUT_CAP];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void conn_close(struct conn **slot, bool reset)
{
	struct conn *c = *slot;
	if (reset) {
		struct linger l = { .l_onoff = 1, .l_linger = 0 };
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
	}
	close(c->fd);
	lfe_session_fini(c->s);
	free(c->s);
	explicit_bzero(c->in, sizeof c->in);
	free(c);
	*slot = NULL;
}

/* Run the session over what is buffered, as long as it makes progress. */
static int pump(struct conn *c, struct lfe_tb *tb)
{
	for (int turns = 0; turns < 1024; turns++) {
		if (c->out_off == c->out_len)
			c->out_off = c->out_len = 0;
		struct lfe_session_io io = {
			.in = c->in, .in_len = c->in_len,
			.out = c->out + c->out_len, .out_cap = OUT_CAP - c->out_len,
		};
		int rc = lfe_session_process(c->s, &io);
		if (rc < 0)
			return -1;
		c->out_len += io.out_len;
		memmove(c->in, c->in + io.in_used, c->in_len - io.in_used);
		explicit_bzero(c->in + c->in_len - io.in_used, io.in_used);
		c->in_len -= io.in_used;
		if (io.flags & LFE_SESS_ABORT)
			return -1;
		if (io.flags & LFE_SESS_CLOSE) {
			c->closing = true;
			return 0;
		}
		if (io.flags & LFE_SESS_PENDING) {
			if (!c->has_verdict)
				c->has_verdict = lfe_tb_take_pending(tb, &c->token, &c->verdict);
			return 0;
		}
		if (io.in_used == 0 && io.out_len == 0)
			return 0;   /* all taken, or the rest waits for room */
	}
	return 0;
}

static int deliver_verdict(struct conn *c, struct lfe_tb *tb)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	struct lfe_session_io io = { .out = c->out + c->out_len, .out_cap = OUT_CAP - c->out_len };
	int rc = lfe_session_bind_done(c->s, c->token, c->verdict, &io);
	if (rc == -ENOSPC)
		return 0;     /* retry once output drained */
	if (rc < 0)
		return -1;
	c->has_verdict = false;
	c->out_len += io.out_len;
	return pump(c, tb);
}

static int flush(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		c->out_off += (size_t)n;
	}
	return 0;
}

static int listen_on(unsigned port, unsigned *bound)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
		close(fd);
		return -1;
	}
	*bound = ntohs(a.sin_port);
	return fd;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s PORT USERS_FILE [--portfile F] [--pending] "
				"[--no-anon] [--suffix DN] [--max-seconds N]\n", argv[0]);
		return 2;
	}
	const char *portfile = NULL, *suffix = "dc=example,dc=com";
	bool pending = false, anon = true;
	long max_seconds = 120;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--portfile") && i + 1 < argc)
			portfile = argv[++i];
		else if (!strcmp(argv[i], "--suffix") && i + 1 < argc)
			suffix = argv[++i];
		else if (!strcmp(argv[i], "--max-seconds") && i + 1 < argc)
			max_seconds = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--pending"))
			pending = true;
		else if (!strcmp(argv[i], "--no-anon"))
			anon = false;
		else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
	}

	struct lfe_tb *tb = lfe_tb_new();
	int nusers = tb ? lfe_tb_load_users(tb, argv[2]) : -ENOMEM;
	if (nusers < 0) {
		fprintf(stderr, "sockserver: cannot load %s: %s\n", argv[2], strerror(-nusers));
		return 1;
	}
	if (pending)
		lfe_tb_set_mode(tb, LFE_TB_PENDING);
	struct lfe_session_cfg cfg = {
		.allow_anonymous = anon,
		.be = &lfe_tb_ops,
		.be_ctx = tb,
		.naming_context = suffix,
		.vendor_version = "sockserver",
	};

	unsigned port;
	int lfd = listen_on((unsigned)strtoul(argv[1], NULL, 10), &port);
	if (lfd < 0) {
		perror("sockserver: listen");
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (portfile) {
		char tmp[4096];
		snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
		FILE *f = fopen(tmp, "w");
		if (!f || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0 || rename(tmp, portfile)) {
			perror("sockserver: portfile");
			return 1;
		}
	}
	printf("sockserver: %d entries, listening on 127.0.0.1:%u%s\n", nusers, port,
	       pending ? " (pending binds)" : "");
	fflush(stdout);

	static struct conn *conns[MAX_CONNS];
	struct pollfd pfd[MAX_CONNS + 1];
	int slot_of[MAX_CONNS + 1];
	time_t deadline = time(NULL) + max_seconds;
	unsigned long accepted = 0;

	while (!stop && time(NULL) < deadline) {
		/* Verdicts arrive "later": deliver them before polling again. */
		bool quick = false;
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = conns[i];
			if (c && c->has_verdict) {
				if (deliver_verdict(c, tb) < 0 || flush(c) < 0)
					conn_close(&conns[i], true);
				else
					quick = true;
			}
		}
		int n = 0;
		pfd[n] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		slot_of[n++] = -1;
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = conns[i];
			if (!c)
				continue;
			short ev = 0;
			if (!c->closing && c->in_len < IN_CAP)
				ev |= POLLIN;
			if (c->out_off < c->out_len)
				ev |= POLLOUT;
			pfd[n] = (struct pollfd){ .fd = c->fd, .events = ev };
			slot_of[n++] = i;
		}
		int pr = poll(pfd, (nfds_t)n, quick ? 0 : 100);
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			perror("poll");
			break;
		}
		for (int k = 0; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (slot_of[k] < 0) {
				int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd < 0)
					continue;
				int free_slot = -1;
				for (int i = 0; i < MAX_CONNS && free_slot < 0; i++)
					if (!conns[i])
						free_slot = i;
				struct conn *c = free_slot >= 0 ? calloc(1, sizeof *c) : NULL;
				void *mem = c ? malloc(lfe_session_size()) : NULL;
				if (!mem) {
					free(c);
					close(fd);
					continue;
				}
				int one = 1;
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
				c->fd = fd;
				c->s = lfe_session_init(mem, &cfg);
				lfe_session_set_generation(c->s, (uint32_t)++accepted);
				conns[free_slot] = c;
				continue;
			}
			struct conn **slot = &conns[slot_of[k]];
			struct conn *c = *slot;
			bool dead = false;
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t r = recv(c->fd, c->in + c->in_len, IN_CAP - c->in_len, MSG_DONTWAIT);
				if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
					dead = true;
				else if (r > 0) {
					c->in_len += (size_t)r;
					if (pump(c, tb) < 0) {
						conn_close(slot, true);
						continue;
					}
				}
			}
			if (!dead && flush(c) < 0)
				dead = true;
			/* Output drained: input held back by backpressure may go on. */
			if (!dead && !c->closing && c->in_len && c->out_off == c->out_len &&
			    pump(c, tb) < 0) {
				conn_close(slot, true);
				continue;
			}
			if (!dead && flush(c) < 0)
				dead = true;
			if (dead || (c->closing && c->out_off == c->out_len))
				conn_close(slot, false);
		}
	}
	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i])
			conn_close(&conns[i], false);
	close(lfd);
	lfe_tb_free(tb);
	return 0;
}
