/* dataplane/unmapguard.c — see unmapguard.h. */
#include "dataplane/unmapguard.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct lfe_unmap_guard_slot lfe_unmap_guard_slots[LFE_UNMAP_GUARD_SLOTS];
_Atomic bool lfe_unmap_guard_fenced = true;   /* until set_filter finds membarrier */

static bool (*_Atomic guard_filter)(void);
static _Atomic unsigned slots_hi;   /* 1 + the highest slot ever entered */
static _Atomic uint64_t n_waits, n_timeouts;

static long membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0u, 0);
}

void lfe_unmap_guard_set_filter(bool (*applies)(void))
{
	const char *e = getenv("LFE_UNMAP_GUARD_FENCED");
	bool fenced = (e && strcmp(e, "1") == 0) ||
		      membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0;
	atomic_store(&lfe_unmap_guard_fenced, fenced);
	atomic_store_explicit(&guard_filter, applies, memory_order_release);
}

int lfe_unmap_guard_enter(unsigned slot, uint64_t *turn)
{
	if (slot >= LFE_UNMAP_GUARD_SLOTS)
		return -EINVAL;
	*turn = 1;
	atomic_store_explicit(&lfe_unmap_guard_slots[slot].turn, 1, memory_order_seq_cst);
	unsigned hi = atomic_load(&slots_hi);
	while (hi < slot + 1 && !atomic_compare_exchange_weak(&slots_hi, &hi, slot + 1))
		;
	return 0;
}

void lfe_unmap_guard_leave(unsigned slot)
{
	if (slot < LFE_UNMAP_GUARD_SLOTS)
		atomic_store_explicit(&lfe_unmap_guard_slots[slot].turn, 0, memory_order_seq_cst);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void lfe_unmap_guard_wait(void)
{
	uint64_t seen[LFE_UNMAP_GUARD_SLOTS];
	/* What the caller cleared before (the port's CONNECTED flag) is visible
	 * before the turns are read, and every worker's marks so far with it
	 * (membarrier: a full barrier on each of the process's threads); a
	 * turn marked after this read sees the flag cleared. */
	atomic_thread_fence(memory_order_seq_cst);
	uint64_t need = 1;
	if (!atomic_load(&lfe_unmap_guard_fenced) && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
		/* Registered, yet refused now (never seen): marks are fenced from
		 * here on, and a worker must mark twice, the second time fenced. */
		atomic_store(&lfe_unmap_guard_fenced, true);
		need = 2;
	}
	unsigned hi = atomic_load(&slots_hi);
	for (unsigned i = 0; i < hi; i++)
		seen[i] = atomic_load(&lfe_unmap_guard_slots[i].turn);
	uint64_t deadline = mono_ns() + LFE_UNMAP_GUARD_WAIT_NS;
	bool late = false;
	for (unsigned i = 0; i < hi && !late; i++) {
		uint64_t t;
		/* 0: offline (left, or never entered); a new enter restarts at 1 */
		while (seen[i] && (t = atomic_load(&lfe_unmap_guard_slots[i].turn)) != 0 &&
		       t - seen[i] < need) {
			if (mono_ns() >= deadline) {
				late = true;
				break;
			}
			/* a worker turn is µs; a stuck one costs no CPU here */
			nanosleep(&(struct timespec){ .tv_nsec = 10000 }, NULL);
		}
	}
	atomic_fetch_add(&n_waits, 1);
	if (late)
		atomic_fetch_add(&n_timeouts, 1);
}

void lfe_unmap_guard_counts(uint64_t *waits, uint64_t *timeouts)
{
	*waits = atomic_load(&n_waits);
	*timeouts = atomic_load(&n_timeouts);
}

/* The process's munmap: libc's own is this system call and nothing else.
 * Shared objects that call munmap (the memif PMD) reach this one when the
 * executable exports it. */
bool lfe_unmap_guard_selected(void)
{
	bool (*f)(void) = atomic_load_explicit(&guard_filter, memory_order_acquire);
	return f && f();
}

int munmap(void *addr, size_t len)
{
	if (lfe_unmap_guard_selected())
		lfe_unmap_guard_wait();
	return (int)syscall(SYS_munmap, addr, len);
}
