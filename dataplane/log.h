/* dataplane/log.h — event log lines: one line per event, a level and
 * key=value fields, rate-limited per kind.
 *
 *   level=warn event=verifier_busy core=1 peer=10.0.0.2 suppressed=16
 *
 * A value is written bare when it is non-empty printable ASCII without
 * space, '"', '=' or '\'; otherwise quoted, with \" \\ \n \r \t and \xNN for
 * every other byte below 0x20 or from 0x7f (so a client-chosen string can
 * neither split a line nor forge a field). Never pass a password or a hash
 * as a value; no event of the daemon carries a DN.
 *
 * Rate limit: a token bucket per event kind (the event name) per producer
 * (one lfe_log_src per thread): `burst` lines at once, then `per_s` lines a
 * second. A refused line costs a level check, a small hash-table probe and
 * a counter; the count is reported as suppressed=N on the next line of that
 * kind that passes.
 *
 * Where lines go: a producer without a ring (main thread, control thread)
 * writes each line itself (stderr: one write(2); syslog: syslog(3)). A
 * worker core must not make a syscall, and a write to a full stderr pipe
 * (journald behind) would block it, so a worker's src has a ring: the line
 * is formatted into the next free slot (no heap, no lock; single producer,
 * single consumer) and the control thread writes it out on its next pass
 * (lfe_log_drain, every 200 ms). A full ring drops the line and counts it;
 * the drainer reports the count as event=log_dropped.
 *
 * Thread rules: struct lfe_log is read-only after lfe_log_init and shared;
 * a lfe_log_src and a lfe_log_line belong to one thread; a ring has one
 * producer (its src's thread) and one consumer (the drainer). No globals.
 */
#ifndef LFE_DATAPLANE_LOG_H
#define LFE_DATAPLANE_LOG_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum lfe_log_level { LFE_LOG_ERR, LFE_LOG_WARN, LFE_LOG_INFO, LFE_LOG_DEBUG };
enum lfe_log_dest { LFE_LOG_STDERR, LFE_LOG_SYSLOG };

#define LFE_LOG_LINE_MAX 512u     /* a longer line is cut and ends in "truncated=1" */
#define LFE_LOG_KINDS    32u      /* event kinds a src tells apart; more share one bucket */
#define LFE_LOG_RING     64u      /* lines a worker's ring holds between drains */
_Static_assert((LFE_LOG_RING & (LFE_LOG_RING - 1)) == 0, "ring size is a power of two");

/* Parse "stderr"|"syslog" and "err"|"warn"|"info"|"debug". 0 or -EINVAL. */
int lfe_log_parse_dest(const char *s, enum lfe_log_dest *out);
int lfe_log_parse_level(const char *s, enum lfe_log_level *out);
const char *lfe_log_level_name(enum lfe_log_level l);

/* The sink, shared read-only by every producer once initialised. */
struct lfe_log {
	enum lfe_log_dest dest;
	enum lfe_log_level level;   /* lines above it (less severe) are not made */
	int fd;                     /* LFE_LOG_STDERR: where lines go (2; a test's pipe) */
	uint32_t burst, per_s;      /* rate limit of every kind */
};
/* stderr, info, fd 2, burst 10, 1 a second. syslog: openlog("ldapfe",
 * LOG_PID, LOG_DAEMON) here (the daemon calls it once at start). */
void lfe_log_init(struct lfe_log *lg, enum lfe_log_dest dest, enum lfe_log_level level);

/* Write one finished line (no newline) at its level: the sink's syscall. */
void lfe_log_write(const struct lfe_log *lg, enum lfe_log_level level, const char *line, size_t len);

struct lfe_log_ring {
	_Atomic uint32_t head, tail;     /* head: producer, tail: consumer */
	_Atomic uint64_t dropped;        /* lines lost to a full ring */
	uint64_t dropped_told;           /* consumer only */
	struct {
		uint8_t level;
		uint16_t len;
		char text[LFE_LOG_LINE_MAX];
	} slot[LFE_LOG_RING];
};

/* Token bucket of one kind (internal; in the header for the src's size). */
struct lfe_log_bucket {
	const char *event;          /* the kind's name (a string literal); NULL = free */
	uint64_t last_us;
	uint32_t tokens_milli;      /* tokens x 1000 */
	uint64_t suppressed;
};

/* One producer: its rate limit and (for a worker) its ring. */
struct lfe_log_src {
	const struct lfe_log *lg;
	struct lfe_log_ring *ring;  /* NULL: write directly */
	struct lfe_log_bucket b[LFE_LOG_KINDS + 1];   /* +1: kinds beyond LFE_LOG_KINDS */
};
/* ring may be NULL; it is zeroed here. */
void lfe_log_src_init(struct lfe_log_src *src, const struct lfe_log *lg, struct lfe_log_ring *ring);

/* A line being built. */
struct lfe_log_line {
	struct lfe_log_src *src;
	enum lfe_log_level level;
	uint64_t suppressed;
	size_t len;
	bool cut;
	char buf[LFE_LOG_LINE_MAX];
};

/* Start a line of kind event (a string literal: its name identifies the
 * kind) at time now_us (any monotonic µs clock: the worker's, or a test's).
 * Returns false (and builds nothing) when the level is filtered out or the
 * kind's bucket is empty; then the caller adds no fields. */
bool lfe_log_start(struct lfe_log_line *l, struct lfe_log_src *src, enum lfe_log_level level,
		   const char *event, uint64_t now_us);
/* Add key=value; the value is printf-formatted, then escaped. Keys are the
 * caller's literals ([a-z0-9_]), written as given. */
void lfe_log_kv(struct lfe_log_line *l, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Finish: appends suppressed=N when earlier lines of the kind were refused,
 * then writes the line or queues it on the src's ring. */
void lfe_log_end(struct lfe_log_line *l);

/* One-shot for producers without fields beyond a message: start, msg=..., end. */
void lfe_log_msg(struct lfe_log_src *src, enum lfe_log_level level, const char *event, uint64_t now_us,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Consumer: write every queued line of ring to lg (and a log_dropped line
 * when lines were lost). Returns the lines written. */
unsigned lfe_log_drain(struct lfe_log_ring *ring, const struct lfe_log *lg);

/* Escape v[0..n) as a value into out (cap bytes, NUL-terminated, cut at a
 * character boundary when it does not fit). Returns the length written. */
size_t lfe_log_escape(char *out, size_t cap, const char *v, size_t n);

/* A monotonic µs clock for producers without one of their own. */
uint64_t lfe_log_now_us(void);

#endif
