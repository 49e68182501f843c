/* dataplane/control_int.h — what the parts of the control socket share
 * (internal: only control*.c include it).
 *
 *   control.c         the server: the socket, the thread, request framing
 *                     and deadlines, one client at a time, drain; the
 *                     request/answer slots (worker_ctl.h; the workers'
 *                     side is worker_ctl.c)
 *   control_status.c  what is in force and the counters: status, stats
 *                     (and their rate samples), conns (the snapshot)
 *   control_reload.c  reload: read the file, check what may change, apply
 *                     it at the workers' safe point (the barrier)
 *
 * Thread rules as control.h: struct lfe_control belongs to the control
 * thread, except wc (struct lfe_worker_ctl: the atomics and the slots
 * the workers serve).
 */
#ifndef LFE_DATAPLANE_CONTROL_INT_H
#define LFE_DATAPLANE_CONTROL_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/un.h>
#include <time.h>

#include "dataplane/control.h"
#include "dataplane/worker.h"
#include "dataplane/worker_ctl.h"

struct lfe_control {
	struct lfe_daemon *d;
	const char *config_path;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd;
	pthread_t th;
	atomic_int quit;
	uint64_t start_ns;
	unsigned reloads;
	/* the reload barrier and the snapshot slots the workers serve
	 * (worker_ctl.h); d->wctl points here while the thread runs */
	struct lfe_worker_ctl wc;
	struct lfe_config next;               /* control thread only */
	struct lfe_tls *next_tls, *old_tls;   /* reload: the context swapped in, and out */
	atomic_int hup;                       /* SIGHUP seen: reload from the thread */
	struct lfe_log_src log;               /* control thread's own events */
	/* Counter samples for the rates of `stats` (control thread only):
	 * every RATE_SAMPLE_MS, RATE_SAMPLES kept, [n_workers] each. */
	struct rate_sample {
		uint64_t t_ns;                /* 0: not taken yet */
		struct lfe_wstats *w;
	} rs[4];
	unsigned rs_next;
	/* A drain in progress (control thread only): its client waits on
	 * drain_fd for the answer while other requests are served. */
	int drain_fd;                         /* -1: none */
	uint64_t drain_t0, drain_ns;
	unsigned drain_zero;
	bool drain_json;
};
#define RATE_SAMPLES   4u
#define RATE_SAMPLE_MS 500u
#define RATE_WINDOW_NS 1000000000u
_Static_assert(RATE_SAMPLES * RATE_SAMPLE_MS > RATE_WINDOW_NS / 1000000u, "a sample a window old is kept");

/* ---------------------------------------------------------- output buffer */

/* An answer's body, grown as it is written; oom is sticky (the request
 * then answers "error out of memory"). */
struct out {
	char *p;
	size_t len, cap;
	bool oom;
};

void lfe_ctl_outf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string (quotes included); control characters escaped. */
void lfe_ctl_out_jstr(struct out *o, const char *s, size_t n);

static inline uint64_t lfe_ctl_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void lfe_ctl_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000u, (long)(ms % 1000u) * 1000000L };
	nanosleep(&ts, NULL);
}

/* ------------------------------------------------ control_status.c */

/* status [json], stats, conns LIMIT SHOWDN [json]: the body into o. */
void lfe_ctl_req_status(struct lfe_control *ctl, struct out *o, bool json);
void lfe_ctl_req_stats(struct lfe_control *ctl, struct out *o);
int lfe_ctl_req_conns(struct lfe_control *ctl, struct out *o, uint32_t limit, bool show_dn, bool json,
		      char *err, size_t errlen);
/* Take a sample of every worker's counters when the last is old enough
 * (control thread, every loop). */
void lfe_ctl_rate_sample(struct lfe_control *ctl);

/* ------------------------------------------------ control_reload.c */

/* reload [json] (and SIGHUP): 0, or a negative errno with the reason in
 * err and nothing changed. */
int lfe_ctl_req_reload(struct lfe_control *ctl, struct out *o, bool json, char *err, size_t errlen);

#endif
