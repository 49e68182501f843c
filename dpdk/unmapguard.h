/* dpdk/unmapguard.h — a grace period before memory that the workers'
 * port bursts may be reading is unmapped.
 *
 * Why: DPDK 22.11's memif PMD, when its peer goes, clears the port's
 * CONNECTED flag and then, in the EAL interrupt thread, munmaps the shared
 * regions at once. A worker that passed the flag check in eth_memif_rx just
 * before (preempted between the check and its ring read) then reads unmapped
 * memory: SIGSEGV in librte_net_memif (seen when a benchmark's generator
 * exited). The PMD offers no hook between the two, so the daemon defines
 * munmap itself (exported to the PMD: dpdk/ldapfe.dynlist) and, when the
 * caller is a thread the filter selects (the interrupt thread), first waits
 * until every online worker has begun a new turn. A turn begun after the
 * flag was cleared no longer enters the rings.
 *
 * Process-global by necessity: munmap has no context. Thread rules: each
 * slot is written by its own worker only; a waiting munmap reads them
 * all. A wait is bounded (LFE_UNMAP_GUARD_WAIT_NS): a worker that is stopped
 * (a debugger) delays an unmap, it cannot hang the caller for ever.
 */
#ifndef LFE_UNMAPGUARD_H
#define LFE_UNMAPGUARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define LFE_UNMAP_GUARD_SLOTS 128
#define LFE_UNMAP_GUARD_WAIT_NS 1000000000ull

struct lfe_unmap_guard_slot {
	_Alignas(64) _Atomic uint64_t turn;   /* 0: offline; else the turn begun */
};
extern struct lfe_unmap_guard_slot lfe_unmap_guard_slots[LFE_UNMAP_GUARD_SLOTS];

/* Which callers of munmap wait: those for which applies() is nonzero (NULL,
 * the default: none, munmap is the plain system call). The daemon and the
 * generator pass rte_thread_is_intr. Call it before the workers start: it
 * also picks how their turn marks are ordered (lfe_unmap_guard_turn). */
void lfe_unmap_guard_set_filter(int (*applies)(void));

/* The marks' order: with the kernel's membarrier (PRIVATE_EXPEDITED, Linux
 * 4.14+, registered by set_filter) a waiter makes every thread of the
 * process execute a full barrier, so a worker's mark is a plain store; where
 * the system call is refused (a seccomp filter) the mark itself is a full
 * barrier. LFE_UNMAP_GUARD_FENCED=1 in the environment asks for the latter
 * (tests). */
extern _Atomic bool lfe_unmap_guard_fenced;

/* A worker comes online in slot (< LFE_UNMAP_GUARD_SLOTS) and goes offline;
 * *turn is the worker's own counter, set by enter. 0, or -EINVAL for a slot
 * out of range (that worker is then not guarded). */
int lfe_unmap_guard_enter(unsigned slot, uint64_t *turn);
void lfe_unmap_guard_leave(unsigned slot);

/* A worker begins a turn (between turns it holds nothing of a port's).
 * The turn's loads of a port's flags must not be seen before the mark: the
 * waiter's membarrier orders them, or, fenced, the store itself (x86: one
 * locked exchange). The compiler barrier keeps the compiler from moving the
 * turn's accesses above the mark either way. */
static inline void lfe_unmap_guard_turn(unsigned slot, uint64_t *turn)
{
	if (slot >= LFE_UNMAP_GUARD_SLOTS)
		return;
	if (atomic_load_explicit(&lfe_unmap_guard_fenced, memory_order_relaxed))
		atomic_store_explicit(&lfe_unmap_guard_slots[slot].turn, ++*turn, memory_order_seq_cst);
	else
		atomic_store_explicit(&lfe_unmap_guard_slots[slot].turn, ++*turn, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}

/* Waits made, and of them the ones that ran out of time. */
void lfe_unmap_guard_counts(uint64_t *waits, uint64_t *timeouts);

#endif
