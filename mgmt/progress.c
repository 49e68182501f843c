/* mgmt/progress.c — see progress.h. */
#include <time.h>
#include <unistd.h>

#include "mgmt/progress.h"

#define REDRAW_NS 200000000u

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void lfe_progress_init(struct lfe_progress *p, const char *what, bool force)
{
	*p = (struct lfe_progress){ .what = what, .f = stderr, .on = force || isatty(STDERR_FILENO) };
	p->start_ns = p->last_ns = now_ns();
}

static void draw(struct lfe_progress *p, uint64_t done, double fraction, const char *note, uint64_t t)
{
	double secs = (double)(t - p->start_ns) / 1e9;
	double rate = secs > 0 ? (double)done / secs : 0;

	/* \r and erase-to-end: one line, redrawn in place. */
	fprintf(p->f, "\r%s: %llu entries", p->what, (unsigned long long)done);
	if (fraction >= 0 && fraction <= 1)
		fprintf(p->f, " (%.0f%%)", fraction * 100);
	fprintf(p->f, ", %.0f/s", rate);
	if (note) {
		fprintf(p->f, ", %s", note);
	} else if (fraction > 0 && fraction <= 1 && secs > 0) {
		unsigned long eta = (unsigned long)(secs / fraction - secs + 0.5);
		fprintf(p->f, ", ETA %lu:%02lu", eta / 60, eta % 60);
	}
	fputs("\033[K", p->f);
	fflush(p->f);
	p->drawn = true;
	p->last_ns = t;
}

void lfe_progress_update(struct lfe_progress *p, uint64_t done, double fraction)
{
	if (!p->on)
		return;
	uint64_t t = now_ns();
	if (t - p->last_ns >= REDRAW_NS)
		draw(p, done, fraction, NULL, t);
}

void lfe_progress_note(struct lfe_progress *p, uint64_t done, const char *note)
{
	if (p->on)
		draw(p, done, -1, note, now_ns());
}

double lfe_progress_end(struct lfe_progress *p, uint64_t done)
{
	if (p->on) {
		draw(p, done, 1.0, "done", now_ns());
		fputs("\r\033[K", p->f);
		fflush(p->f);
	}
	return (double)(now_ns() - p->start_ns) / 1e9;
}
