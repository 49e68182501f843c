/* backend/bindjob.c — see bindjob.h. */
#include "backend/bindjob.h"

#include <errno.h>
#include <string.h>

#include "backend/pwscheme.h"

int lfe_bind_job_add(struct lfe_bind_job *job, const char *val, size_t len)
{
	size_t used = 0;

	for (unsigned i = 0; i < job->n_vals; i++)
		used += job->len[i];
	if (job->n_vals == LFE_BIND_JOB_VALS || len > sizeof(job->buf) - used)
		return -ENOSPC;
	memcpy(job->buf + used, val, len);
	job->len[job->n_vals++] = (uint16_t)len;
	return 0;
}

int lfe_bind_job_run(const struct lfe_bind_job *job, const uint8_t *pw, size_t pw_len,
		     unsigned flags)
{
	size_t off = 0;

	if (job->dummy || job->n_vals == 0) {
		/* lfe_pw_dummy_verify takes a full value (it mirrors its cost
		 * parameters) or a bare "{SCHEME}" (a built-in value). */
		char scheme[LFE_BIND_JOB_BYTES + 1];
		size_t n = job->n_vals ? job->len[0] : 0;
		memcpy(scheme, job->buf, n);
		scheme[n] = '\0';
		return lfe_pw_dummy_verify(scheme, pw, pw_len);
	}
	int rc = -EACCES;
	for (unsigned i = 0; i < job->n_vals; i++) {
		/* Try every value: the time spent does not tell which matched. */
		if (lfe_pw_verify(job->buf + off, job->len[i], pw, pw_len, flags) == 0)
			rc = 0;
		off += job->len[i];
	}
	if (job->locked)
		return -EACCES;
	/* A matching password of an account whose password expired (no
	 * grace left): refused, and said so (the control's passwordExpired). */
	if (rc == 0 && job->pp.state == LFE_PP_EXPIRED)
		return -EKEYEXPIRED;
	return rc;
}

void lfe_bind_job_wipe(struct lfe_bind_job *job)
{
	explicit_bzero(job, sizeof(*job));
}
