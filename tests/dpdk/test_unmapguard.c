/* tests/dataplane/test_unmapguard.c — dpdk/unmapguard.c with real
 * threads and a real mapping: the memif PMD's race, played out.
 *
 * A "worker" thread marks its turns as ldapfe's worker does; in one turn it
 * checks a CONNECTED flag, is held between that check and its read of the
 * shared page (what a preemption does to eth_memif_rx), then reads the page.
 * A "control" thread, selected by the filter as the interrupt thread is in
 * the daemon, clears the flag and munmaps the page meanwhile. With the guard
 * the munmap waits for the worker's next turn and the read succeeds; without
 * it (filter NULL) the read faults and the test dies with SIGSEGV. Run twice:
 * marks ordered by the waiter's membarrier, and fenced marks
 * (LFE_UNMAP_GUARD_FENCED=1, what a system without membarrier gets).
 * Also: an offline worker is not waited for; a worker that never begins a
 * turn delays the unmap by LFE_UNMAP_GUARD_WAIT_NS and no longer; callers
 * the filter does not select never wait. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "dpdk/unmapguard.h"
#include "tests/check.h"

static _Thread_local bool is_control;
static int control_only(void) { return is_control; }

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static bool mapped(void *p)
{
	unsigned char v;
	return mincore(p, 4096, &v) == 0;
}

struct race {
	volatile uint32_t *page;      /* the "ring", shared */
	_Atomic int connected;        /* the PMD's flag */
	_Atomic int in_window;        /* the worker is between check and read */
	_Atomic int stop;
	uint32_t read_value;
	unsigned slot;
	unsigned hold_ms;
	bool never_turn;              /* stuck in the window: no read, no turn */
};

static void *worker(void *arg)
{
	struct race *r = arg;
	uint64_t turn;
	lfe_unmap_guard_enter(r->slot, &turn);
	for (int i = 0; i < 100000 && !atomic_load(&r->stop); i++) {
		lfe_unmap_guard_turn(r->slot, &turn);
		if (atomic_load(&r->connected) && !atomic_load(&r->in_window)) {
			atomic_store(&r->in_window, 1);
			sleep_ms(r->hold_ms);              /* preempted here */
			if (r->never_turn)
				break;                     /* stuck: no read, no turn */
			r->read_value = r->page[1];        /* the ring read */
			atomic_store(&r->in_window, 2);
		}
		sleep_ms(1);
	}
	lfe_unmap_guard_leave(r->slot);
	return NULL;
}

/* The control side: flag cleared, then the unmap; ms it took. */
static uint64_t disconnect(struct race *r)
{
	is_control = true;
	for (int i = 0; i < 5000 && atomic_load(&r->in_window) != 1; i++)
		sleep_ms(1);
	CHECK(atomic_load(&r->in_window) == 1, "worker never entered its window");
	atomic_store(&r->connected, 0);
	uint64_t t0 = now_ms();
	CHECK(munmap((void *)r->page, 4096) == 0, "munmap: %s", strerror(errno));
	uint64_t took = now_ms() - t0;
	is_control = false;
	return took;
}

static struct race *race_new(unsigned slot, unsigned hold_ms)
{
	struct race *r = calloc(1, sizeof(*r));
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!r || p == MAP_FAILED) {
		perror("race_new");
		exit(1);
	}
	r->page = p;
	r->page[1] = 0xfeedu;
	atomic_store(&r->connected, 1);
	r->slot = slot;
	r->hold_ms = hold_ms;
	return r;
}

/* The race itself: the unmap waits for the worker's next turn. */
static void test_race(void)
{
	lfe_unmap_guard_set_filter(control_only);
	struct race *r = race_new(3, 200);
	pthread_t th;
	pthread_create(&th, NULL, worker, r);
	uint64_t took = disconnect(r);
	CHECK(atomic_load(&r->in_window) == 2, "the unmap came before the worker's read");
	CHECK(r->read_value == 0xfeedu, "read 0x%x", r->read_value);
	CHECK(took >= 100, "munmap returned after %llu ms: it did not wait", (unsigned long long)took);
	CHECK(!mapped((void *)r->page), "page still mapped");
	atomic_store(&r->stop, 1);
	pthread_join(th, NULL);
	free(r);
}

/* A worker gone offline is not waited for; callers outside the filter
 * never wait; NULL filter: the plain system call. */
static void test_no_wait(void)
{
	lfe_unmap_guard_set_filter(control_only);
	uint64_t turn;
	CHECK(lfe_unmap_guard_enter(5, &turn) == 0, "enter");
	lfe_unmap_guard_leave(5);
	CHECK(lfe_unmap_guard_enter(LFE_UNMAP_GUARD_SLOTS, &turn) == -EINVAL, "slot out of range");

	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	is_control = true;
	uint64_t t0 = now_ms();
	CHECK(munmap(p, 4096) == 0 && !mapped(p), "offline: unmapped");
	CHECK(now_ms() - t0 < 100, "offline worker waited for");
	is_control = false;

	/* an online worker that never turns, but the caller is not selected */
	CHECK(lfe_unmap_guard_enter(6, &turn) == 0, "enter");
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t0 = now_ms();
	CHECK(munmap(p, 4096) == 0 && !mapped(p), "not selected: unmapped");
	CHECK(now_ms() - t0 < 100, "unselected caller waited");
	lfe_unmap_guard_set_filter(NULL);
	is_control = true;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	t0 = now_ms();
	CHECK(munmap(p, 4096) == 0 && !mapped(p), "no filter: unmapped");
	CHECK(now_ms() - t0 < 100, "no filter, yet waited");
	is_control = false;
	lfe_unmap_guard_leave(6);

	/* errors are munmap's own */
	errno = 0;
	CHECK(munmap((void *)1, 4096) == -1 && errno == EINVAL, "unaligned: errno %d", errno);
}

/* A worker stuck in one turn delays the unmap by the bound, no more. */
static void test_bound(void)
{
	lfe_unmap_guard_set_filter(control_only);
	uint64_t w0, t0;
	lfe_unmap_guard_counts(&w0, &t0);
	struct race *r = race_new(9, 1500);
	r->never_turn = true;
	pthread_t th;
	pthread_create(&th, NULL, worker, r);
	uint64_t took = disconnect(r);
	uint64_t w1, t1;
	lfe_unmap_guard_counts(&w1, &t1);
	CHECK(took >= LFE_UNMAP_GUARD_WAIT_NS / 1000000u - 50 && took < 2500, "took %llu ms",
	      (unsigned long long)took);
	CHECK(w1 == w0 + 1 && t1 == t0 + 1, "counts: waits %llu -> %llu, timeouts %llu -> %llu",
	      (unsigned long long)w0, (unsigned long long)w1, (unsigned long long)t0, (unsigned long long)t1);
	/* (the worker, once awake, leaves without reading: its read would
	 * fault now, as in the daemon a worker stopped for a second would) */
	atomic_store(&r->stop, 1);
	pthread_join(th, NULL);
	free(r);
}

int main(void)
{
	lfe_unmap_guard_set_filter(control_only);
	const char *e = getenv("LFE_UNMAP_GUARD_FENCED");
	bool want_fenced = e && strcmp(e, "1") == 0;
	CHECK(!want_fenced || atomic_load(&lfe_unmap_guard_fenced), "asked fenced, got membarrier");
	printf("test_unmapguard: marks %s\n",
	       atomic_load(&lfe_unmap_guard_fenced) ? "fenced (a locked store a turn)" : "plain, membarrier in the waiter");
	test_no_wait();
	test_race();
	test_bound();
	lfe_unmap_guard_set_filter(NULL);
	return check_done();
}
