/* backend/bindjob.h — the slow half of a simple bind, as a self-contained job.
 *
 * lfe_store_verify_bind() (store.h) answers a bind at once when every check
 * it needs is fast. When a slow scheme ({CRYPT}, {PBKDF2-*}, {ARGON2}) is
 * involved it fills a struct lfe_bind_job instead: copies of the entry's
 * slow userPassword values, or — for an unknown DN, an entry without
 * userPassword, an empty password — the store's dummy value, so that the
 * two cases take the same path and cost the same. A verifier thread then
 * runs the job with lfe_bind_job_run(): no store, no lookup, no transaction.
 *
 * Ownership: a job is a plain value (no pointers), copyable between
 * threads; whoever holds it last calls lfe_bind_job_wipe(). Thread rules:
 * none; lfe_bind_job_run() is reentrant.
 */
#ifndef LFE_BACKEND_BINDJOB_H
#define LFE_BACKEND_BINDJOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/ppolicy.h"

#define LFE_BIND_JOB_VALS   4u      /* slow values tried per entry, at most */
#define LFE_BIND_JOB_BYTES  1024u   /* their total length, at most */

struct lfe_bind_job {
	bool dummy;                     /* spend the work, then fail */
	bool locked;                    /* the account is locked or expired
	                                 * (acctlock.h): a matching value still
	                                 * fails, after the same work */
	uint8_t n_vals;
	bool pp_timed;                  /* lfe_store_reader_ppolicy's timed */
	struct lfe_pp_verdict pp;       /* the policy's verdict when a value
	                                 * matches and !locked (ppolicy.h) */
	uint16_t len[LFE_BIND_JOB_VALS];
	char buf[LFE_BIND_JOB_BYTES];   /* the values back to back */
};

/* Append one stored value. Returns 0, or -ENOSPC when the job is full (the
 * value is then not tried: an entry with more slow values than fit keeps
 * the first ones). */
int lfe_bind_job_add(struct lfe_bind_job *job, const char *val, size_t len);

/* Run the job for password pw: 0 when a value matches, else -EACCES (a
 * dummy job always answers -EACCES, after the same work as a real value of
 * its scheme); -EKEYEXPIRED when a value matches but the password policy
 * refuses the bind (job->pp EXPIRED): a refusal like -EACCES, which only
 * the holder of the right password learns. flags: LFE_PW_* of pwscheme.h. */
int lfe_bind_job_run(const struct lfe_bind_job *job, const uint8_t *pw, size_t pw_len,
		     unsigned flags);

/* Forget the job's contents (stored hashes are secrets too). */
void lfe_bind_job_wipe(struct lfe_bind_job *job);

#endif
