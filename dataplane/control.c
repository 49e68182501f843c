/* dataplane/control.c — the control socket server: the socket and its
 * thread, one client at a time, request framing and deadlines, drain, and
 * the request/answer slots the workers serve (their side: worker_ctl.c);
 * see control.h. What the
 * requests answer is in control_status.c and control_reload.c. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#include "dataplane/control_int.h"

/* ---------------------------------------------------------- output buffer */

void lfe_ctl_outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		size_t room = o->cap - o->len;
		va_start(ap, fmt);
		int n = o->p ? vsnprintf(o->p + o->len, room, fmt, ap) : -1;
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		size_t need = o->len + (n > 0 ? (size_t)n : 0) + 1;
		size_t cap = o->cap ? o->cap * 2 : 4096;
		while (cap < need)
			cap *= 2;
		char *q = realloc(o->p, cap);
		if (q == NULL) {
			o->oom = true;
			return;
		}
		o->p = q;
		o->cap = cap;
	}
}

/* A JSON string (quotes included); control characters escaped. */
void lfe_ctl_out_jstr(struct out *o, const char *s, size_t n)
{
	lfe_ctl_outf(o, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\')
			lfe_ctl_outf(o, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			lfe_ctl_outf(o, "\\u%04x", ch);
		else
			lfe_ctl_outf(o, "%c", ch);
	}
	lfe_ctl_outf(o, "\"");
}

/* ---------------------------------------------------------------- drain */

/* drain: new connections are refused at once; the answer (and the stop)
 * comes when the open ones are gone or the time is up, from drain_step()
 * in the control thread's loop, which keeps serving requests, writing logs
 * and handling SIGHUP meanwhile. */
static int req_drain(struct lfe_control *ctl, unsigned secs, bool json, char *err, size_t errlen)
{
	if (ctl->drain_fd >= 0) {
		snprintf(err, errlen, "a drain is already in progress");
		return -EBUSY;
	}
	atomic_store(&ctl->d->draining, 1);
	ctl->drain_t0 = lfe_ctl_mono_ns();
	ctl->drain_ns = (uint64_t)secs * 1000000000u;
	ctl->drain_zero = 0;
	ctl->drain_json = json;
	struct lfe_log_line l;
	if (lfe_log_start(&l, &ctl->log, LFE_LOG_INFO, "drain", lfe_log_now_us())) {
		lfe_log_kv(&l, "timeout_s", "%u", secs);
		lfe_log_end(&l);
	}
	return 0;
}

static void write_all(int fd, const char *p, size_t n);

/* One look at a drain in progress (every loop of the control thread, at
 * most 10 ms apart while draining); true once it answered. */
static bool drain_step(struct lfe_control *ctl)
{
	struct lfe_daemon *d = ctl->d;
	struct lfe_wstats sum;
	uint64_t waited = lfe_ctl_mono_ns() - ctl->drain_t0;

	lfe_stats_sum(d, &sum);
	/* Twice, so a connection opened just before the drain and not yet
	 * published (LFE_PUBLISH_US) is seen. */
	ctl->drain_zero = sum.conns_active == 0 ? ctl->drain_zero + 1 : 0;
	if (ctl->drain_zero < 2 && waited < ctl->drain_ns && !atomic_load(&d->stop))
		return false;
	struct lfe_log_line l;
	if (lfe_log_start(&l, &ctl->log, LFE_LOG_INFO, "drained", lfe_log_now_us())) {
		lfe_log_kv(&l, "waited_ms", "%" PRIu64, waited / 1000000u);
		lfe_log_kv(&l, "open", "%" PRIu64, sum.conns_active);
		lfe_log_end(&l);
	}
	struct out o = { 0 };
	if (ctl->drain_json)
		lfe_ctl_outf(&o, "ok\n{\"drained\":true,\"open\":%" PRIu64 ",\"waited_ms\":%" PRIu64 "}\n",
		     sum.conns_active, waited / 1000000u);
	else
		lfe_ctl_outf(&o, "ok\ndrained in %" PRIu64 " ms; %" PRIu64 " connection(s) left, closed now; ldapfe stops\n",
		     waited / 1000000u, sum.conns_active);
	if (o.p)
		write_all(ctl->drain_fd, o.p, o.len);
	free(o.p);
	close(ctl->drain_fd);
	ctl->drain_fd = -1;
	atomic_store(&d->stop, 1);
	return true;
}

/* ------------------------------------------------------------- the thread */

static bool word_is(const char *w, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(w, s, n) == 0;
}

/* Handle one request line (NUL-terminated, no newline). Returns the
 * status line's reason in err on failure. */
static int handle(struct lfe_control *ctl, char *line, struct out *o, bool *drained, char *err, size_t errlen)
{
	char *argv[8];
	int argc = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (argc == 8) {
			snprintf(err, errlen, "too many words");
			return -EINVAL;
		}
		argv[argc++] = t;
	}
	if (argc == 0) {
		snprintf(err, errlen, "empty request");
		return -EINVAL;
	}
	bool json = argc > 1 && strcmp(argv[argc - 1], "json") == 0;
	int nargs = argc - (json ? 1 : 0);
	const char *cmd = argv[0];
	size_t cl = strlen(cmd);

	if (word_is(cmd, cl, "status") && nargs == 1) {
		lfe_ctl_req_status(ctl, o, json);
		return 0;
	}
	if (word_is(cmd, cl, "stats") && nargs == 1) {
		lfe_ctl_req_stats(ctl, o);
		return 0;
	}
	if (word_is(cmd, cl, "conns") && nargs == 3) {
		uint64_t limit, dn;
		if (lfe_config_parse_u64(argv[1], 0, UINT32_MAX, &limit) < 0 ||
		    lfe_config_parse_u64(argv[2], 0, 1, &dn) < 0) {
			snprintf(err, errlen, "usage: conns LIMIT SHOWDN(0|1) [json]");
			return -EINVAL;
		}
		return lfe_ctl_req_conns(ctl, o, (uint32_t)limit, dn == 1, json, err, errlen);
	}
	if (word_is(cmd, cl, "reload") && nargs == 1)
		return lfe_ctl_req_reload(ctl, o, json, err, errlen);
	if (word_is(cmd, cl, "drain") && nargs == 2) {
		uint64_t secs;
		if (lfe_config_parse_u64(argv[1], 0, 86400, &secs) < 0) {
			snprintf(err, errlen, "usage: drain SECONDS(0..86400) [json]");
			return -EINVAL;
		}
		int rc = req_drain(ctl, (unsigned)secs, json, err, errlen);
		*drained = rc == 0;
		return rc;
	}
	snprintf(err, errlen, "unknown request (status, stats, conns, reload, drain)");
	return -EINVAL;
}

/* The whole answer within 5 s, whatever pace the client reads at: one
 * client must not hold the single control thread. */
static void write_all(int fd, const char *p, size_t n)
{
	uint64_t end = lfe_ctl_mono_ns() + 5000000000u;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			uint64_t now = lfe_ctl_mono_ns();
			struct pollfd pf = { .fd = fd, .events = POLLOUT };
			if (now >= end || poll(&pf, 1, (int)((end - now) / 1000000u) + 1) <= 0)
				return;
			continue;
		}
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* One request: the whole line within 1 s of accept (not 1 s per recv: a
 * client sending a byte at a time would hold the control thread for
 * LFE_CTL_REQ_MAX seconds). Returns true when fd was kept (a drain
 * answers later). */
static bool serve_one(struct lfe_control *ctl, int fd)
{
	char line[LFE_CTL_REQ_MAX + 1];
	size_t len = 0;
	bool complete = false, bad = false;
	uint64_t end = lfe_ctl_mono_ns() + 1000000000u;

	while (len < LFE_CTL_REQ_MAX) {
		uint64_t now = lfe_ctl_mono_ns();
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (now >= end || poll(&pf, 1, (int)((end - now) / 1000000u) + 1) <= 0)
			break;
		ssize_t r = recv(fd, line + len, LFE_CTL_REQ_MAX - len, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			continue;
		if (r <= 0)
			break;
		char *nl = memchr(line + len, '\n', (size_t)r);
		len += (size_t)r;
		if (nl) {
			*nl = '\0';
			len = (size_t)(nl - line);
			complete = true;
			break;
		}
	}
	char err[512] = "";
	struct out o = { 0 };
	bool drained = false;
	int rc;
	if (!complete) {
		snprintf(err, sizeof(err), len >= LFE_CTL_REQ_MAX ? "request too long (at most %u bytes)"
			 : "incomplete request (no newline within 1 s)", LFE_CTL_REQ_MAX);
		rc = -EINVAL;
	} else {
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)line[i] < 0x20 && line[i] != '\t')
				bad = true;
			else if ((unsigned char)line[i] >= 0x7f)
				bad = true;
		if (bad) {
			snprintf(err, sizeof(err), "request is not printable ASCII");
			rc = -EINVAL;
		} else {
			line[len] = '\0';
			rc = handle(ctl, line, &o, &drained, err, sizeof(err));
		}
	}
	if (rc == 0 && o.oom) {
		rc = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
	}
	if (rc < 0) {
		char head[600];
		struct lfe_log_line l;
		/* Rate-limited: whoever can reach the socket cannot flood the log. */
		if (lfe_log_start(&l, &ctl->log, LFE_LOG_WARN, "ctl_refused", lfe_log_now_us())) {
			lfe_log_kv(&l, "reason", "%s", err);
			lfe_log_end(&l);
		}
		int n = snprintf(head, sizeof(head), "error %s\n", err);
		write_all(fd, head, (size_t)n);
	} else if (drained) {
		ctl->drain_fd = fd;   /* answered by drain_step() */
	} else {
		write_all(fd, "ok\n", 3);
		write_all(fd, o.p ? o.p : "", o.len);
	}
	free(o.p);
	return rc >= 0 && drained;
}

/* The workers' event lines (log.h): written here, never on a worker. */
static void drain_logs(struct lfe_control *ctl)
{
	for (uint32_t k = 0; k < ctl->d->n_workers; k++)
		if (ctl->d->w[k])
			lfe_log_drain(&ctl->d->w[k]->log_ring, &ctl->d->log);
}

static void *ctl_thread(void *arg)
{
	struct lfe_control *ctl = arg;
	while (!atomic_load(&ctl->quit)) {
		if (atomic_exchange(&ctl->hup, 0)) {
			char err[512];
			struct out o = { 0 };
			if (lfe_ctl_req_reload(ctl, &o, false, err, sizeof(err)) < 0)
				fprintf(stderr, "ldapfe: SIGHUP: reload refused, nothing changed: %s\n", err);
			free(o.p);
		}
		struct pollfd p = { .fd = ctl->lfd, .events = POLLIN };
		drain_logs(ctl);
		lfe_ctl_rate_sample(ctl);
		if (ctl->drain_fd >= 0 && drain_step(ctl))
			continue;
		if (poll(&p, 1, ctl->drain_fd >= 0 ? 10 : 200) <= 0)
			continue;
		int fd = accept4(ctl->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (!serve_one(ctl, fd))
			close(fd);
	}
	return NULL;
}

struct lfe_control *lfe_control_start(struct lfe_daemon *d, const char *config_path, uid_t uid, gid_t gid,
				      char *err, size_t errlen)
{
	struct lfe_control *ctl = calloc(1, sizeof(*ctl));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (ctl == NULL || (ctl->wc.snap = calloc(d->n_workers, sizeof(*ctl->wc.snap))) == NULL) {
		snprintf(err, errlen, "control socket: out of memory");
		free(ctl);
		return NULL;
	}
	ctl->d = d;
	d->wctl = &ctl->wc;
	lfe_log_src_init(&ctl->log, &d->log, NULL);
	ctl->config_path = config_path;
	ctl->start_ns = lfe_ctl_mono_ns();
	ctl->lfd = -1;
	ctl->drain_fd = -1;
	for (unsigned i = 0; i < RATE_SAMPLES; i++) {
		if ((ctl->rs[i].w = calloc(d->n_workers, sizeof(struct lfe_wstats))) == NULL) {
			snprintf(err, errlen, "control socket: out of memory");
			goto fail;
		}
	}
	int n = snprintf(ctl->path, sizeof(ctl->path), "%s/%s", rte_eal_get_runtime_dir(), LFE_CTL_SOCK_NAME);
	if (n < 0 || (size_t)n >= sizeof(ctl->path)) {
		snprintf(err, errlen, "control socket: runtime directory path too long");
		goto fail;
	}
	memcpy(sa.sun_path, ctl->path, (size_t)n + 1);
	ctl->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl->lfd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		goto fail;
	}
	unlink(ctl->path);   /* a previous run's, under the same file prefix */
	mode_t old = umask(0117);
	int brc = bind(ctl->lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (brc < 0 || listen(ctl->lfd, 16) < 0) {
		snprintf(err, errlen, "control socket %s: %s", ctl->path, strerror(errno));
		goto fail;
	}
	if (uid && chown(ctl->path, uid, gid) < 0) {
		snprintf(err, errlen, "control socket %s: chown: %s", ctl->path, strerror(errno));
		goto fail;
	}
	if (pthread_create(&ctl->th, NULL, ctl_thread, ctl) != 0) {
		snprintf(err, errlen, "control socket: cannot start its thread");
		goto fail;
	}
	return ctl;
fail:
	if (ctl->lfd >= 0) {
		close(ctl->lfd);
		unlink(ctl->path);
	}
	for (unsigned i = 0; i < RATE_SAMPLES; i++)
		free(ctl->rs[i].w);
	d->wctl = NULL;
	free(ctl->wc.snap);
	free(ctl);
	return NULL;
}

void lfe_control_request_reload(struct lfe_control *ctl)
{
	if (ctl)
		atomic_store(&ctl->hup, 1);
}

void lfe_control_stop(struct lfe_control *ctl)
{
	if (ctl == NULL)
		return;
	atomic_store(&ctl->quit, 1);
	pthread_join(ctl->th, NULL);
	ctl->d->wctl = NULL;
	drain_logs(ctl);   /* what the workers said last */
	if (ctl->drain_fd >= 0)
		close(ctl->drain_fd);
	close(ctl->lfd);
	unlink(ctl->path);
	for (unsigned i = 0; i < RATE_SAMPLES; i++)
		free(ctl->rs[i].w);
	free(ctl->wc.snap);
	free(ctl);
}
