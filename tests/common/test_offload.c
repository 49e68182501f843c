/* tests/common/test_offload.c — common/offload.c, the offload engine, with
 * real threads and no DPDK:
 *   - bounds: per connection (key, -EBUSY), per worker (-ENOBUFS), per
 *     source under share.h's rule (-EDQUOT), in the engine's order, for
 *     holding jobs and for admit/leave; a cancelled key is free at once,
 *     its place in the worker's bound only when the poll took it back;
 *   - fairness: one thread, a worker with 16 jobs queued and another with
 *     2: the other's are run within the first turns, not after the 16;
 *   - cancel before start skips run and releases at the poll; cancel after
 *     run still releases (and done is not called); a stale key cancels
 *     nothing;
 *   - free releases what is still queued, once each;
 *   - stress: 4 producer workers, 3 threads, random submits (keyed,
 *     holding or plain), cancels and polls: every accepted job comes back
 *     exactly once (done or release), run at most once, exactly once when
 *     done; the counts return to zero.
 * Nothing but the stress test is timed: jobs leave a bound only when the
 * test polls them back, so the bounds are exact. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/offload.h"
#include "tests/check.h"

#define A 0x0a000002u
#define B 0x0a000003u

struct tjob {
	struct lfe_offload_job base;   /* first */
	unsigned id;
	unsigned w;
	atomic_int runs;                /* run calls, all submissions */
	atomic_int run_now;             /* run calls of the current submission */
	atomic_int order;               /* global run order stamp */
	int dones, releases;
	bool out;                       /* between an accepted submit and its return */
	bool gate;                      /* run waits for the gate to open */
};

static atomic_int gate_open, gate_started, run_seq;
static int double_returns;          /* a job handed back while not out */

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void t_run(struct lfe_offload_job *b)
{
	struct tjob *j = (struct tjob *)b;
	atomic_fetch_add(&j->runs, 1);
	atomic_fetch_add(&j->run_now, 1);
	atomic_store(&j->order, atomic_fetch_add(&run_seq, 1) + 1);
	if (j->gate) {
		atomic_store(&gate_started, 1);
		while (!atomic_load(&gate_open))
			msleep(1);
	}
}

static void t_release(struct lfe_offload_job *b)
{
	struct tjob *j = (struct tjob *)b;
	double_returns += !j->out;
	j->out = false;
	j->releases++;
}

static void t_done(void *ctx, struct lfe_offload_job *b)
{
	struct tjob *j = (struct tjob *)b;
	(void)ctx;
	double_returns += !j->out;
	j->out = false;
	j->dones++;
}

static void job_init(struct tjob *j, unsigned id, uint64_t key, uint32_t src, bool hold)
{
	memset(j, 0, sizeof *j);
	j->id = id;
	j->base.run = t_run;
	j->base.release = t_release;
	j->base.key = key;
	j->base.src = src;
	j->base.hold = hold;
}

static int submit(struct lfe_offload *o, unsigned w, struct tjob *j)
{
	atomic_store(&j->run_now, 0);
	j->w = w;
	int rc = lfe_offload_submit(o, w, &j->base);
	if (rc == 0)
		j->out = true;
	return rc;
}

/* Poll worker w until want jobs came back (bounded: 20 s). */
static unsigned drain(struct lfe_offload *o, unsigned w, unsigned want)
{
	unsigned got = 0;
	for (int i = 0; i < 20000 && got < want; i++) {
		got += lfe_offload_poll(o, w, 64, t_done, NULL);
		if (got < want)
			msleep(1);
	}
	return got;
}

static struct lfe_offload *engine(uint32_t threads, uint32_t workers, uint32_t cap, uint32_t queue,
				  uint32_t per_source)
{
	struct lfe_offload_cfg cfg = { .name = "lfe-test", .threads = threads, .workers = workers,
				       .cap = cap, .queue = queue, .per_source = per_source,
				       .share_pct = 75 };
	int err = 0;
	struct lfe_offload *o = lfe_offload_new(&cfg, &err);
	CHECK(o != NULL, "lfe_offload_new: %d", err);
	if (o == NULL)
		exit(1);
	return o;
}

static void test_cfg(void)
{
	static const struct { struct lfe_offload_cfg c; const char *why; } bad[] = {
		{ { .threads = 0, .workers = 1, .cap = 1, .queue = 1, .per_source = 1 }, "no thread" },
		{ { .threads = 65, .workers = 1, .cap = 1, .queue = 1, .per_source = 1 }, "65 threads" },
		{ { .threads = 1, .workers = 0, .cap = 1, .queue = 1, .per_source = 1 }, "no worker" },
		{ { .threads = 1, .workers = 1, .cap = 0, .queue = 1, .per_source = 1 }, "cap 0" },
		{ { .threads = 1, .workers = 1, .cap = 4, .queue = 3, .per_source = 1 }, "queue < cap" },
		{ { .threads = 1, .workers = 1, .cap = 1, .queue = 1, .per_source = 0 }, "per_source 0" },
		{ { .threads = 1, .workers = 1, .cap = 1, .queue = 1, .per_source = 1, .share_pct = 101 },
		  "share_pct 101" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int err = 0;
		struct lfe_offload *o = lfe_offload_new(&bad[i].c, &err);
		CHECK(o == NULL && err == -EINVAL, "cfg %s: %d", bad[i].why, err);
		lfe_offload_free(o);
	}
}

/* Holding jobs: cap 8, queue 8, pressure at 6 (75 %), per_source 2. */
static void test_bounds(void)
{
	struct lfe_offload *o = engine(1, 2, 8, 8, 2);
	static struct tjob j[32];
	static const struct {
		unsigned w; uint64_t key; uint32_t src; int rc; const char *why;
	} steps[] = {
		{ 0, 1, A, 0, "A 1" },
		{ 0, 1, A, -EBUSY, "key 1 again: one job per connection" },
		{ 0, 1, B, -EBUSY, "key 1 from another address: still busy" },
		{ 1, 1, A, 0, "key 1 on another worker: its own table" },
		{ 0, 2, A, 0, "A 2" }, { 0, 3, A, 0, "A 3 (past per_source)" }, { 0, 4, A, 0, "A 4" },
		{ 0, 5, A, 0, "A 5" }, { 0, 6, A, 0, "A 6: below the level" },
		{ 0, 7, A, -EDQUOT, "A 7: at the level, its share 8 / 2" },
		{ 0, 8, B, 0, "B: under its share" }, { 0, 9, B, 0, "B 2: its share 8 / 3, at least 2" },
		{ 0, 10, 0x0b000000u, -ENOBUFS, "a new address: the worker's bound" },
		{ 0, 11, B, -ENOBUFS, "B over its share and the worker full: the worker's bound first" },
		{ 0, 1, B, -EBUSY, "a busy key first of all" },
		{ 0, 0, 0x0b000001u, -ENOBUFS, "no key: the worker's bound" },
	};
	unsigned n = 0, ok0 = 0;
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		job_init(&j[n], n, steps[i].key, steps[i].src, true);
		int rc = submit(o, steps[i].w, &j[n]);
		CHECK(rc == steps[i].rc, "step %zu (%s): %d", i, steps[i].why, rc);
		if (rc == 0) {
			ok0 += steps[i].w == 0;
			n++;
		}
	}
	CHECK_EQ(lfe_offload_held(o, 0), 8);
	CHECK_EQ(lfe_offload_outstanding(o, 0), 8);
	/* Over its share: A (6) and B (2, its share 8 / 3 = 2); a newcomer not. */
	CHECK(lfe_offload_over_share(o, 0, A) && lfe_offload_over_share(o, 0, B));
	CHECK(!lfe_offload_over_share(o, 0, 0x0b000000u));
	CHECK(!lfe_offload_over_share(o, 1, A));
	CHECK_EQ(lfe_offload_held(o, 1), 1);
	/* Admission for multi-job work shares the same holdings. */
	CHECK_EQ(lfe_offload_admit(o, 0, 0x0c000000u), -ENOBUFS);
	CHECK_EQ(lfe_offload_admit(o, 1, 0x0c000000u), 0);
	CHECK_EQ(lfe_offload_held(o, 1), 2);
	lfe_offload_leave(o, 1, 0x0c000001u);   /* an address holding none: nothing */
	CHECK_EQ(lfe_offload_held(o, 1), 2);
	lfe_offload_leave(o, 1, 0x0c000000u);
	CHECK_EQ(lfe_offload_held(o, 1), 1);

	/* A stale key cancels nothing; cancelling key 1 frees the key at once,
	 * the worker's place only when the poll took the job back. */
	lfe_offload_cancel_key(o, 0, 99);
	lfe_offload_cancel_key(o, 0, 1);
	struct tjob again;
	job_init(&again, 100, 1, 0x0d000000u, true);
	CHECK_EQ(submit(o, 0, &again), -ENOBUFS);
	CHECK_EQ(drain(o, 0, ok0), ok0);
	CHECK_EQ(drain(o, 1, 1), 1);
	CHECK_EQ(lfe_offload_held(o, 0), 0);
	CHECK_EQ(lfe_offload_outstanding(o, 0), 0);
	CHECK_EQ(lfe_offload_cancelled(o, 0), 1);
	CHECK_EQ(j[0].releases + j[0].dones, 1);
	CHECK_EQ(submit(o, 0, &again), 0);
	/* A done job's key and holding are free again. */
	job_init(&j[n], n, 2, A, true);
	CHECK_EQ(submit(o, 0, &j[n]), 0);
	CHECK_EQ(drain(o, 0, 2), 2);
	CHECK_EQ(again.dones, 1);
	CHECK_EQ(double_returns, 0);
	lfe_offload_free(o);

	/* The share at its edge: A 4 and D 2 reach the level (6); D's share
	 * is then 8 / 3 = 2, which it holds; a newcomer E still has room. */
	o = engine(1, 1, 8, 8, 2);
	static const struct { uint32_t src; int rc; const char *why; } edge[] = {
		{ A, 0, "A 1" }, { A, 0, "A 2" }, { A, 0, "A 3" }, { A, 0, "A 4" },
		{ 0x0d000000u, 0, "D 1" }, { 0x0d000000u, 0, "D 2: the level reached" },
		{ 0x0d000000u, -EDQUOT, "D 3: D holds its share 8 / 3 = 2" },
		{ A, -EDQUOT, "A 5: over its share" },
		{ 0x0e000000u, 0, "E 1: a newcomer's share 8 / 4 = 2" },
		{ 0x0e000000u, 0, "E 2: its share 8 / 4 = 2" },
		{ 0x0e000000u, -ENOBUFS, "E 3: the worker is full" },
	};
	n = 0;
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
		job_init(&j[n], n, 0, edge[i].src, true);
		int rc = submit(o, 0, &j[n]);
		CHECK(rc == edge[i].rc, "edge %zu (%s): %d", i, edge[i].why, rc);
		n += rc == 0;
	}
	CHECK_EQ(drain(o, 0, n), n);
	lfe_offload_free(o);

	/* Plain jobs (no hold): only the queue bounds them, holdings apart. */
	o = engine(1, 1, 2, 4, 2);
	CHECK_EQ(lfe_offload_admit(o, 0, A), 0);
	CHECK_EQ(lfe_offload_admit(o, 0, A), 0);
	for (unsigned i = 0; i < 5; i++) {
		job_init(&j[i], i, 0, 0, false);
		CHECK_EQ(submit(o, 0, &j[i]), i < 4 ? 0 : -ENOBUFS);
	}
	CHECK_EQ(lfe_offload_admit(o, 0, B), -ENOBUFS);
	lfe_offload_leave(o, 0, A);
	CHECK_EQ(lfe_offload_admit(o, 0, B), -ENOBUFS);   /* cap (2) jobs out */
	CHECK_EQ(drain(o, 0, 4), 4);
	CHECK_EQ(lfe_offload_admit(o, 0, B), 0);
	lfe_offload_free(o);
}

/* Block the single thread on a gate job of worker w. */
static void gate_close(struct lfe_offload *o, unsigned w, struct tjob *g)
{
	atomic_store(&gate_open, 0);
	atomic_store(&gate_started, 0);
	job_init(g, 1000, 0, 0, false);
	g->gate = true;
	CHECK_EQ(submit(o, w, g), 0);
	for (int i = 0; i < 20000 && !atomic_load(&gate_started); i++)
		msleep(1);
	CHECK(atomic_load(&gate_started), "the gate job did not start");
}

static void test_cancel(void)
{
	struct lfe_offload *o = engine(1, 1, 8, 8, 8);
	struct tjob g, x, y, z;
	/* Before start: skipped, released at the poll, not done. */
	gate_close(o, 0, &g);
	job_init(&x, 1, 7, A, true);
	CHECK_EQ(submit(o, 0, &x), 0);
	lfe_offload_cancel(&x.base);
	lfe_offload_cancel(&x.base);   /* twice: nothing more */
	/* Its key is free at once: the connection's next job is accepted. */
	struct tjob x2, x3;
	job_init(&x2, 4, 7, A, true);
	job_init(&x3, 5, 7, A, true);
	CHECK_EQ(submit(o, 0, &x2), 0);
	CHECK_EQ(submit(o, 0, &x3), -EBUSY);
	atomic_store(&gate_open, 1);
	CHECK_EQ(drain(o, 0, 3), 3);
	CHECK(atomic_load(&x2.runs) == 1 && x2.dones == 1);
	CHECK_EQ(atomic_load(&x.runs), 0);
	CHECK_EQ(x.releases, 1);
	CHECK_EQ(x.dones, 0);
	CHECK_EQ(g.dones, 1);
	CHECK_EQ(lfe_offload_cancelled(o, 0), 1);
	/* After run (on the completion queue already): released, not done. */
	job_init(&y, 2, 8, A, true);
	CHECK_EQ(submit(o, 0, &y), 0);
	for (int i = 0; i < 20000 && atomic_load(&y.runs) == 0; i++)
		msleep(1);
	msleep(5);
	lfe_offload_cancel_key(o, 0, 8);
	CHECK_EQ(drain(o, 0, 1), 1);
	CHECK_EQ(atomic_load(&y.runs), 1);
	CHECK_EQ(y.releases, 1);
	CHECK_EQ(y.dones, 0);
	CHECK_EQ(lfe_offload_cancelled(o, 0), 2);
	/* Not cancelled: run once, done once. */
	job_init(&z, 3, 9, A, true);
	CHECK_EQ(submit(o, 0, &z), 0);
	CHECK_EQ(drain(o, 0, 1), 1);
	CHECK(atomic_load(&z.runs) == 1 && z.dones == 1 && z.releases == 0);
	CHECK_EQ(lfe_offload_held(o, 0), 0);
	CHECK_EQ(double_returns, 0);
	lfe_offload_free(o);
}

static void *open_gate_later(void *arg)
{
	(void)arg;
	msleep(100);
	atomic_store(&gate_open, 1);
	return NULL;
}

/* free releases every job still queued, once, and runs none of them. */
static void test_free(void)
{
	struct lfe_offload *o = engine(1, 2, 8, 8, 8);
	struct tjob g, q[6];
	gate_close(o, 0, &g);
	for (unsigned i = 0; i < 6; i++) {
		job_init(&q[i], i, i + 1, A + i, i % 2 == 0);
		CHECK_EQ(submit(o, i % 2, &q[i]), 0);
	}
	lfe_offload_cancel(&q[0].base);
	lfe_offload_cancel_key(o, 1, 4);
	pthread_t th;
	CHECK_EQ(pthread_create(&th, NULL, open_gate_later, NULL), 0);
	lfe_offload_free(o);   /* stops the thread once the gate opened */
	pthread_join(th, NULL);
	for (unsigned i = 0; i < 6; i++)
		CHECK(q[i].releases == 1 && q[i].dones == 0 && atomic_load(&q[i].runs) == 0,
		      "queued job %u: %d releases, %d dones, %d runs", i, q[i].releases, q[i].dones,
		      atomic_load(&q[i].runs));
	CHECK(g.releases == 1 && g.dones == 0, "the gate job, on the completion queue: released");
	CHECK_EQ(double_returns, 0);
}

/* One thread; worker 0 queues 16 jobs behind a gate job, worker 1 two:
 * round robin runs worker 1's as the 2nd and 4th after the gate. */
static void test_fairness(void)
{
	struct lfe_offload *o = engine(1, 2, 32, 32, 32);
	static struct tjob g, f[16], s[2];
	gate_close(o, 0, &g);
	for (unsigned i = 0; i < 16; i++) {
		job_init(&f[i], i, 0, A, false);
		CHECK_EQ(submit(o, 0, &f[i]), 0);
	}
	for (unsigned i = 0; i < 2; i++) {
		job_init(&s[i], 100 + i, 0, B, false);
		CHECK_EQ(submit(o, 1, &s[i]), 0);
	}
	atomic_store(&gate_open, 1);
	CHECK_EQ(drain(o, 0, 17), 17);
	CHECK_EQ(drain(o, 1, 2), 2);
	int base = atomic_load(&g.order);
	int o1 = atomic_load(&s[0].order) - base, o2 = atomic_load(&s[1].order) - base;
	CHECK(o1 == 1 && o2 == 3, "worker 1's jobs ran %d and %d turns after the gate (a FIFO: 17, 18)",
	      o1, o2);
	/* And worker 0's in its own order. */
	for (unsigned i = 1; i < 16; i++)
		CHECK(atomic_load(&f[i].order) > atomic_load(&f[i - 1].order));
	lfe_offload_free(o);
}

/* ---- stress ---- */

#define S_WORKERS 4u
#define S_JOBS 48u
#define S_ACCEPT 4000u     /* accepted jobs a producer aims at */
#define S_ROUNDS 2000000u  /* ... within this many rounds */

struct producer {
	struct lfe_offload *o;
	unsigned w;
	struct tjob job[S_JOBS];
	unsigned long accepted, refused, cancels, dones, releases, bad;
	uint64_t rng;
};

static struct producer prod[S_WORKERS];

static uint32_t rnd(struct producer *p)
{
	p->rng ^= p->rng << 13;
	p->rng ^= p->rng >> 7;
	p->rng ^= p->rng << 17;
	return (uint32_t)p->rng;
}

static void s_release(struct lfe_offload_job *b)
{
	struct tjob *j = (struct tjob *)b;
	struct producer *p = &prod[j->w];
	p->bad += !j->out || !lfe_offload_job_cancelled(b) || atomic_load(&j->run_now) > 1;
	j->out = false;
	p->releases++;
}

static void s_done(void *ctx, struct lfe_offload_job *b)
{
	struct producer *p = ctx;
	struct tjob *j = (struct tjob *)b;
	p->bad += !j->out || j->w != p->w || atomic_load(&j->run_now) != 1;
	j->out = false;
	p->dones++;
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	for (unsigned r = 0; r < S_ROUNDS && p->accepted < S_ACCEPT; r++) {
		struct tjob *j = &p->job[rnd(p) % S_JOBS];
		uint32_t x = rnd(p);
		if (!j->out) {
			unsigned id = j->id;
			job_init(j, id, x & 1 ? (x >> 8) % 16 + 1 : 0, A + (x >> 4) % 4, x & 2);
			j->base.release = s_release;
			j->w = p->w;
			atomic_store(&j->run_now, 0);
			int rc = lfe_offload_submit(p->o, p->w, &j->base);
			if (rc == 0) {
				j->out = true;
				p->accepted++;
			} else {
				p->refused++;
				p->bad += rc != -EBUSY && rc != -ENOBUFS && rc != -EDQUOT;
				struct timespec ts = { 0, 20000 };   /* let the threads catch up */
				nanosleep(&ts, NULL);
			}
		} else if (x % 2 == 0 && !lfe_offload_job_cancelled(&j->base)) {
			if (j->base.key && x & 16)
				lfe_offload_cancel_key(p->o, p->w, j->base.key);
			else
				lfe_offload_cancel(&j->base);
			p->cancels++;
		}
		if (x % 3 == 0)
			lfe_offload_poll(p->o, p->w, 1 + x % 8, s_done, p);
	}
	for (int i = 0; i < 20000 && lfe_offload_outstanding(p->o, p->w); i++) {
		if (lfe_offload_poll(p->o, p->w, 64, s_done, p) == 0)
			msleep(1);
	}
	return NULL;
}

static void test_stress(void)
{
	struct lfe_offload *o = engine(3, S_WORKERS, 12, 24, 2);
	pthread_t th[S_WORKERS];
	for (unsigned w = 0; w < S_WORKERS; w++) {
		prod[w].o = o;
		prod[w].w = w;
		prod[w].rng = 0x9e3779b97f4a7c15ull * (w + 1);
		for (unsigned i = 0; i < S_JOBS; i++)
			prod[w].job[i].id = i;
		CHECK_EQ(pthread_create(&th[w], NULL, producer_main, &prod[w]), 0);
	}
	unsigned long acc = 0, back = 0, canc = 0;
	for (unsigned w = 0; w < S_WORKERS; w++) {
		pthread_join(th[w], NULL);
		struct producer *p = &prod[w];
		CHECK(p->bad == 0, "worker %u: %lu jobs back wrong (twice, not out, run count)", w, p->bad);
		CHECK(p->accepted == p->dones + p->releases,
		      "worker %u: %lu accepted, %lu done + %lu released", w, p->accepted, p->dones,
		      p->releases);
		CHECK_EQ(lfe_offload_outstanding(o, w), 0);
		CHECK_EQ(lfe_offload_held(o, w), 0);
		CHECK_EQ(lfe_offload_cancelled(o, w), p->releases);
		for (unsigned i = 0; i < S_JOBS; i++)
			CHECK(!p->job[i].out);
		acc += p->accepted;
		back += p->dones + p->releases;
		canc += p->cancels;
	}
	printf("stress: %lu jobs accepted, %lu back, %lu cancels, refused:", acc, back, canc);
	for (unsigned w = 0; w < S_WORKERS; w++)
		printf(" %lu", prod[w].refused);
	printf("\n");
	CHECK(acc >= S_WORKERS * S_ACCEPT && canc > 500, "the stress did little: %lu jobs, %lu cancels", acc, canc);
	lfe_offload_free(o);
}

int main(void)
{
	test_cfg();
	test_bounds();
	test_cancel();
	test_free();
	test_fairness();
	test_stress();
	return check_done();
}
