/* tests/dataplane/test_verifier.c — the verifier's bounds and fairness,
 * driven through its API for two workers (EAL in memory, no ports: the
 * verifier knows workers by index only).
 *
 * Nothing here is timed: outstanding jobs are released only when the test
 * polls, so the bounds are exact; fairness is checked on the order in which
 * completions come back while one worker's ring is long; a source over
 * its share on a full worker is told so (-EDQUOT). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#include "backend/pwscheme.h"
#include "common/offload.h"
#include "dataplane/verifier.h"
#include "tests/check.h"

#define QUEUE 64u
#define PER_SOURCE 3u
#define SRC_A 0x0a000002u
#define SRC_B 0x0a000003u

#define WORKERS 2u

static struct lfe_verifier *vf;
static unsigned worker_ids[WORKERS] = { 0, 1 };

/* Completions in arrival order: worker index, token, the result. */
struct done_rec {
	unsigned w;
	struct lfe_verify_result r;
};
static struct done_rec done_log[1024];
static unsigned n_done;

static void on_done(void *arg, const struct lfe_verify_result *r)
{
	if (n_done < 1024)
		done_log[n_done++] = (struct done_rec){ *(const unsigned *)arg, *r };
}

static unsigned poll_all(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < WORKERS; i++)
		n += lfe_verifier_poll(vf, i, on_done, &worker_ids[i]);
	return n;
}

/* Poll until `want` jobs came back (bounded: 60 s). */
static unsigned drain(unsigned want)
{
	unsigned got = 0;
	for (int i = 0; i < 60000 && got < want; i++) {
		got += poll_all();
		if (got < want) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	return got;
}

static struct lfe_bind_job job_of(const char *stored)
{
	struct lfe_bind_job j = { 0 };
	CHECK_EQ(lfe_bind_job_add(&j, stored, strlen(stored)), 0);
	return j;
}

/* The worker's clock at submit: the token plus a constant, so each result
 * can be checked to carry its own submit time back. */
#define SUBMIT_US(token) ((token) + 1000000u)

static int submit(unsigned w, uint32_t conn, uint32_t gen, uint32_t src, uint64_t token,
		  const struct lfe_bind_job *j, const char *pw)
{
	return lfe_verifier_submit(vf, w, SUBMIT_US(token), (struct lfe_tcp_handle){ conn, gen }, src,
				   token, j, (const uint8_t *)pw, strlen(pw));
}

static void test_bounds(const struct lfe_bind_job *fast)
{
	n_done = 0;
	/* One job per connection. */
	CHECK_EQ(submit(0, 1, 1, SRC_A, 11, fast, "secret"), 0);
	CHECK_EQ(submit(0, 1, 1, SRC_A, 12, fast, "secret"), -EBUSY);
	/* Per source (share.h): below the pressure level (75 % of QUEUE) no
	 * bound, so A holds more than PER_SOURCE; at the level a source may
	 * hold its fair share, QUEUE / sources but at least PER_SOURCE: A is
	 * over it, another source and another worker are not affected. */
	CHECK_EQ(submit(0, 2, 1, SRC_A, 13, fast, "secret"), 0);
	CHECK_EQ(submit(0, 3, 1, SRC_A, 14, fast, "wrong"), 0);
	CHECK_EQ(submit(0, 4, 1, SRC_A, 15, fast, "secret"), 0);
	for (uint32_t i = 0; i < QUEUE * 3 / 4 - 4; i++)
		CHECK_EQ(submit(0, 200 + i, 1, 0x0c000000u + i, 200 + i, fast, "secret"), 0);
	CHECK_EQ(submit(0, 5, 1, SRC_A, 15, fast, "secret"), -EDQUOT);
	CHECK_EQ(submit(0, 6, 1, SRC_B, 16, fast, "secret"), 0);
	CHECK_EQ(submit(1, 4, 1, SRC_A, 17, fast, "secret"), 0);
	/* A password too long to queue. */
	char longpw[LFE_VERIFY_PW_MAX + 2];
	memset(longpw, 'p', sizeof(longpw) - 1);
	longpw[sizeof(longpw) - 1] = '\0';
	CHECK_EQ(submit(0, 9, 1, SRC_B, 18, fast, longpw), -E2BIG);
	/* Per worker: QUEUE outstanding at most (distinct connections and
	 * sources, so only this bound applies). */
	unsigned ok = QUEUE * 3 / 4 + 1;
	int rc = 0;
	for (uint32_t i = 0; i < 2 * QUEUE && rc == 0; i++) {
		rc = submit(0, 100 + i, 1, 0x0b000000u + i, 100 + i, fast, "secret");
		ok += rc == 0;
	}
	CHECK_EQ(rc, -ENOBUFS);
	CHECK_EQ(ok, QUEUE);
	/* Everything comes back with the right verdict, and the bounds are
	 * released: the same connection and source can submit again. */
	CHECK_EQ(drain(QUEUE + 1), QUEUE + 1);
	unsigned good = 0, bad = 0, clock = 0, conn = 0;
	for (unsigned i = 0; i < n_done; i++) {
		const struct lfe_verify_result *r = &done_log[i].r;
		good += r->v == LFE_BE_OK;
		bad += r->v == LFE_BE_INVALID && r->token == 14;
		clock += r->submit_us == SUBMIT_US(r->token);
		/* each job's connection handle comes back with it */
		conn += r->token == 14 ? r->h.idx == 3 && r->h.gen == 1 : r->token == 17 ? r->h.idx == 4 : 1;
		/* a refused password says nothing of the account's policy */
		if (r->v != LFE_BE_OK)
			CHECK_EQ(r->pp.state, LFE_PP_OK);
	}
	CHECK_EQ(good, QUEUE);
	CHECK_EQ(bad, 1);
	CHECK_EQ(clock, n_done);
	CHECK_EQ(conn, n_done);
	CHECK_EQ(submit(0, 1, 1, SRC_A, 19, fast, "secret"), 0);
	CHECK_EQ(submit(0, 2, 1, SRC_A, 20, fast, "secret"), 0);
	CHECK_EQ(submit(0, 3, 1, SRC_A, 21, fast, "secret"), 0);
	CHECK_EQ(drain(3), 3);
}

static void test_cancel(const struct lfe_bind_job *slow, const struct lfe_bind_job *fast)
{
	uint64_t dropped0 = lfe_verifier_dropped_closed(vf, 0);
	n_done = 0;
	/* The thread is busy on the slow job while the second one's
	 * connection closes: it comes back unhashed and is not reported. */
	CHECK_EQ(submit(0, 30, 1, SRC_A, 30, slow, "secret"), 0);
	CHECK_EQ(submit(0, 31, 1, SRC_B, 31, fast, "secret"), 0);
	lfe_verifier_cancel(vf, 0, (struct lfe_tcp_handle){ 31, 1 });
	/* A stale handle (older generation) cancels nothing. */
	lfe_verifier_cancel(vf, 0, (struct lfe_tcp_handle){ 30, 0 });
	/* The slot can take a job of its next connection at once. */
	CHECK_EQ(submit(0, 31, 2, SRC_B, 32, fast, "secret"), 0);
	CHECK_EQ(drain(3), 3);
	CHECK_EQ(lfe_verifier_dropped_closed(vf, 0) - dropped0, 1);
	CHECK_EQ(lfe_verifier_dropped_closed(vf, 1), 0);
	CHECK_EQ(n_done, 2);
	for (unsigned i = 0; i < n_done; i++)
		CHECK(done_log[i].r.token != 31 && done_log[i].r.v == LFE_BE_OK);
}

static void test_fairness(const struct lfe_bind_job *slow)
{
	n_done = 0;
	/* Worker 0 floods with 16 slow jobs, then worker 1 submits 2: round
	 * robin serves worker 1 after at most one or two of worker 0's, where
	 * a single FIFO would make it wait for all 16. */
	for (uint32_t i = 0; i < 16; i++)
		CHECK_EQ(submit(0, 200 + i, 1, 0x0c000000u + i, 200 + i, slow, "secret"), 0);
	CHECK_EQ(submit(1, 300, 1, SRC_A, 300, slow, "secret"), 0);
	CHECK_EQ(submit(1, 301, 1, SRC_B, 301, slow, "secret"), 0);
	CHECK_EQ(drain(18), 18);
	unsigned w0_before = 0, w1 = 0;
	for (unsigned i = 0; i < n_done && w1 < 2; i++) {
		if (done_log[i].w == 1)
			w1++;
		else
			w0_before++;
	}
	CHECK_EQ(w1, 2);
	if (w0_before > 4)
		fprintf(stderr, "worker 1 waited behind %u jobs of worker 0\n", w0_before);
	CHECK(w0_before <= 4);
}

/* The worker full and a source over its share at once: the source's
 * bound is the one reported (-EDQUOT), as a source over its share is told
 * on a worker with room. */
static void test_full_and_over(const struct lfe_bind_job *job)
{
	n_done = 0;
	/* A takes 40 below the level (48), 24 other addresses fill the rest. */
	for (uint32_t i = 0; i < 40; i++)
		CHECK_EQ(submit(0, 400 + i, 1, SRC_A, 400 + i, job, "secret"), 0);
	for (uint32_t i = 0; i < QUEUE - 40; i++)
		CHECK_EQ(submit(0, 500 + i, 1, 0x0e000000u + i, 500 + i, job, "secret"), 0);
	CHECK_EQ(submit(0, 600, 1, SRC_A, 600, job, "secret"), -EDQUOT);
	CHECK_EQ(submit(0, 601, 1, 0x0f000000u, 601, job, "secret"), -ENOBUFS);
	CHECK_EQ(drain(QUEUE), QUEUE);
}

int main(void)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "--file-prefix=lfe-tv%d", (int)getpid());
	char *eal[] = { "test_verifier", "-l", "0", "--no-huge", "-m", "256", "--no-pci",
			"--no-shconf", "--no-telemetry", "--log-level=lib.eal:error", prefix, NULL };
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "SKIP: EAL init failed\n");
		return 77;
	}
	/* QUEUE per worker; the daemon's default pressure level (75 %). */
	const struct lfe_verifier_cfg cfg = { .workers = WORKERS, .queue = WORKERS * QUEUE, .threads = 1,
					      .per_source = PER_SOURCE, .share_pct = 75 };
	char err[256] = "";
	struct lfe_verifier_cfg too_many = cfg;
	too_many.workers = LFE_OFFLOAD_MAX_WORKERS + 1;
	CHECK(lfe_verifier_new(&too_many, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "workers") != NULL);
	vf = lfe_verifier_new(&cfg, err, sizeof(err));
	CHECK(vf != NULL);
	if (vf == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	char ssha[128], crypt_v[256];
	CHECK(lfe_pw_hash("{SSHA}", (const uint8_t *)"secret", 6, ssha, sizeof(ssha)) > 0);
	CHECK(lfe_pw_hash("{CRYPT}", (const uint8_t *)"secret", 6, crypt_v, sizeof(crypt_v)) > 0);
	struct lfe_bind_job fast = job_of(ssha), slow = job_of(crypt_v);

	test_bounds(&fast);
	test_cancel(&slow, &fast);
	test_fairness(&slow);
	test_full_and_over(&fast);

	lfe_verifier_free(vf);
	/* EAL's cleanup leaves its (empty) runtime directory behind. */
	char rundir[PATH_MAX];
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (rmdir(rundir) < 0 && errno != ENOENT)
		fprintf(stderr, "rmdir %s: %s\n", rundir, strerror(errno));
	return check_done();
}
