/* mgmt/progress.h — a progress line for long ldapfectl work (import,
 * export): entries done, percent, rate and ETA, redrawn in place on stderr
 * at most 5 times a second, cleared when the work ends.
 *
 * Shown only when stderr is a terminal (or forced: --progress), so scripts,
 * pipes and logs never see it. One owner thread; no globals.
 */
#ifndef LFE_MGMT_PROGRESS_H
#define LFE_MGMT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct lfe_progress {
	bool on, drawn;
	const char *what;       /* "import", "export" */
	FILE *f;                /* stderr */
	uint64_t start_ns, last_ns;
};

/* Start the clock. force: draw even when stderr is not a terminal. */
void lfe_progress_init(struct lfe_progress *p, const char *what, bool force);
/* done entries so far; fraction of the work done (0..1) for percent and
 * ETA, or negative when unknown. Cheap when nothing is drawn. */
void lfe_progress_update(struct lfe_progress *p, uint64_t done, double fraction);
/* A word for a phase with no count (e.g. "committing"). */
void lfe_progress_note(struct lfe_progress *p, uint64_t done, const char *note);
/* Draw the final count, then clear the line. Returns the seconds since
 * init (for the summary). */
double lfe_progress_end(struct lfe_progress *p, uint64_t done);

#endif
