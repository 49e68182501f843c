/* dpdk/unmapguard.c — see unmapguard.h. */
#include "dpdk/unmapguard.h"

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

static int (*_Atomic guard_filter)(void);
static _Atomic uint64_t n_waits, n_timeouts;

static long membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0u, 0);
}

void lfe_unmap_guard_set_filter(int (*applies)(void))
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

/* Wait until every worker online now has begun a turn after this call
 * (offline ones are skipped), or LFE_UNMAP_GUARD_WAIT_NS. */
static void guard_wait(void)
{
	uint64_t seen[LFE_UNMAP_GUARD_SLOTS];
	/* What the caller cleared before (the port's CONNECTED flag) is visible
	 * before the turns are read, and every worker's marks so far with it
	 * (membarrier: a full barrier on each of the process's threads; once
	 * registered it cannot fail); a turn marked after this read sees the
	 * flag cleared. */
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load(&lfe_unmap_guard_fenced))
		(void)membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	for (unsigned i = 0; i < LFE_UNMAP_GUARD_SLOTS; i++)
		seen[i] = atomic_load(&lfe_unmap_guard_slots[i].turn);
	uint64_t deadline = mono_ns() + LFE_UNMAP_GUARD_WAIT_NS;
	bool late = false;
	for (unsigned i = 0; i < LFE_UNMAP_GUARD_SLOTS && !late; i++) {
		/* any change will do: a new turn, offline (0), or re-entered (1) */
		while (seen[i] && atomic_load(&lfe_unmap_guard_slots[i].turn) == seen[i]) {
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
int munmap(void *addr, size_t len)
{
	int (*f)(void) = atomic_load_explicit(&guard_filter, memory_order_acquire);
	if (f && f())
		guard_wait();
	return (int)syscall(SYS_munmap, addr, len);
}
