/* dataplane/log.c — see log.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "dataplane/log.h"

static const char *const level_names[] = { "err", "warn", "info", "debug" };

int lfe_log_parse_dest(const char *s, enum lfe_log_dest *out)
{
	if (strcmp(s, "stderr") == 0)
		*out = LFE_LOG_STDERR;
	else if (strcmp(s, "syslog") == 0)
		*out = LFE_LOG_SYSLOG;
	else
		return -EINVAL;
	return 0;
}

int lfe_log_parse_level(const char *s, enum lfe_log_level *out)
{
	for (unsigned i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum lfe_log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *lfe_log_level_name(enum lfe_log_level l)
{
	return (unsigned)l < sizeof(level_names) / sizeof(level_names[0]) ? level_names[l] : "?";
}

void lfe_log_init(struct lfe_log *lg, enum lfe_log_dest dest, enum lfe_log_level level)
{
	*lg = (struct lfe_log){ .dest = dest, .level = level, .fd = STDERR_FILENO, .burst = 10, .per_s = 1 };
	if (dest == LFE_LOG_SYSLOG)
		openlog("ldapfe", LOG_PID, LOG_DAEMON);
}

void lfe_log_write(const struct lfe_log *lg, enum lfe_log_level level, const char *line, size_t len)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

	if (lg->dest == LFE_LOG_SYSLOG) {
		syslog(prio[(unsigned)level < 4 ? level : LFE_LOG_DEBUG], "%.*s", (int)len, line);
		return;
	}
	/* One write per line, newline included, so lines of different
	 * threads never interleave inside a line. */
	char buf[LFE_LOG_LINE_MAX + 8];
	static const char pfx[] = "ldapfe: ";
	size_t n = sizeof(pfx) - 1;
	if (len > LFE_LOG_LINE_MAX)
		len = LFE_LOG_LINE_MAX;
	memcpy(buf, pfx, n);
	memcpy(buf + n, line, len);
	n += len;
	buf[n++] = '\n';
	for (size_t off = 0; off < n;) {
		ssize_t w = write(lg->fd, buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

uint64_t lfe_log_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void lfe_log_src_init(struct lfe_log_src *src, const struct lfe_log *lg, struct lfe_log_ring *ring)
{
	memset(src, 0, sizeof(*src));
	src->lg = lg;
	src->ring = ring;
	src->b[LFE_LOG_KINDS].tokens_milli = lg->burst * 1000u;   /* the shared bucket */
	if (ring)
		memset(ring, 0, sizeof(*ring));
}

/* ------------------------------------------------------------ rate limit */

/* A new kind's bucket starts full. */
static struct lfe_log_bucket *bucket_of(struct lfe_log_src *src, const char *event, uint64_t now_us)
{
	uint32_t h = 2166136261u;
	for (const char *p = event; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	for (uint32_t i = 0; i < LFE_LOG_KINDS; i++) {
		struct lfe_log_bucket *b = &src->b[(h + i) % LFE_LOG_KINDS];
		if (b->event == NULL) {
			b->event = event;
			b->last_us = now_us;
			b->tokens_milli = src->lg->burst * 1000u;
			return b;
		}
		if (b->event == event || strcmp(b->event, event) == 0)
			return b;
	}
	return &src->b[LFE_LOG_KINDS];   /* the table is full: one shared bucket */
}

/* Token bucket: starts full (burst), refills per_s a second. */
static bool take(const struct lfe_log *lg, struct lfe_log_bucket *b, uint64_t now_us)
{
	uint64_t cap = (uint64_t)lg->burst * 1000u;

	if (now_us > b->last_us) {
		/* widened: a long quiet spell must not overflow */
		uint64_t add = (now_us - b->last_us) * lg->per_s / 1000u;
		uint64_t t = b->tokens_milli + (add > cap ? cap : add);
		b->tokens_milli = (uint32_t)(t > cap ? cap : t);
	}
	b->last_us = now_us;
	if (b->tokens_milli < 1000u) {
		b->suppressed++;
		return false;
	}
	b->tokens_milli -= 1000u;
	return true;
}

/* ------------------------------------------------------------- formatting */

static bool bare_ok(const char *v, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c <= 0x20 || c >= 0x7f || c == '"' || c == '=' || c == '\\')
			return false;
	}
	return true;
}

size_t lfe_log_escape(char *out, size_t cap, const char *v, size_t n)
{
	size_t o = 0;

	if (cap == 0)
		return 0;
	if (bare_ok(v, n)) {
		o = n < cap - 1 ? n : cap - 1;
		memcpy(out, v, o);
		out[o] = '\0';
		return o;
	}
	if (cap < 3) {
		out[0] = '\0';
		return 0;
	}
	out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		char e[5];
		size_t k;
		if (c == '"' || c == '\\')
			k = (size_t)snprintf(e, sizeof(e), "\\%c", c);
		else if (c == '\n')
			k = (size_t)snprintf(e, sizeof(e), "\\n");
		else if (c == '\r')
			k = (size_t)snprintf(e, sizeof(e), "\\r");
		else if (c == '\t')
			k = (size_t)snprintf(e, sizeof(e), "\\t");
		else if (c < 0x20 || c >= 0x7f)
			k = (size_t)snprintf(e, sizeof(e), "\\x%02x", c);
		else
			e[0] = (char)c, k = 1;
		if (o + k + 2 > cap)   /* room for the closing quote and NUL */
			break;
		memcpy(out + o, e, k);
		o += k;
	}
	out[o++] = '"';
	out[o] = '\0';
	return o;
}

static void append(struct lfe_log_line *l, const char *s, size_t n)
{
	/* Keep room for " truncated=1" so a cut line says so. */
	const size_t limit = LFE_LOG_LINE_MAX - 16;
	if (l->cut || l->len + n > limit) {
		l->cut = true;
		return;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

bool lfe_log_start(struct lfe_log_line *l, struct lfe_log_src *src, enum lfe_log_level level,
		   const char *event, uint64_t now_us)
{
	if (level > src->lg->level)
		return false;
	struct lfe_log_bucket *b = bucket_of(src, event, now_us);
	if (!take(src->lg, b, now_us))
		return false;
	l->src = src;
	l->level = level;
	l->suppressed = b->suppressed;
	b->suppressed = 0;
	l->len = 0;
	l->cut = false;
	const char *ln = lfe_log_level_name(level);
	append(l, "level=", 6);
	append(l, ln, strlen(ln));
	char ev[64];
	size_t n = lfe_log_escape(ev, sizeof(ev), event, strlen(event));
	append(l, " event=", 7);
	append(l, ev, n);
	return true;
}

void lfe_log_kv(struct lfe_log_line *l, const char *key, const char *fmt, ...)
{
	char raw[LFE_LOG_LINE_MAX], esc[LFE_LOG_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	size_t rl = (size_t)n < sizeof(raw) ? (size_t)n : sizeof(raw) - 1;
	size_t el = lfe_log_escape(esc, sizeof(esc), raw, rl);
	append(l, " ", 1);
	append(l, key, strlen(key));
	append(l, "=", 1);
	append(l, esc, el);
}

static void ring_put(struct lfe_log_ring *r, enum lfe_log_level level, const char *s, size_t n)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (head - tail >= LFE_LOG_RING) {
		atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
		return;
	}
	uint32_t i = head & (LFE_LOG_RING - 1);
	r->slot[i].level = (uint8_t)level;
	r->slot[i].len = (uint16_t)n;
	memcpy(r->slot[i].text, s, n);
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

void lfe_log_end(struct lfe_log_line *l)
{
	if (l->suppressed) {
		char v[32];
		int n = snprintf(v, sizeof(v), " suppressed=%llu", (unsigned long long)l->suppressed);
		append(l, v, (size_t)n);
	}
	if (l->cut) {
		l->cut = false;
		append(l, " truncated=1", 12);
	}
	if (l->src->ring)
		ring_put(l->src->ring, l->level, l->buf, l->len);
	else
		lfe_log_write(l->src->lg, l->level, l->buf, l->len);
}

void lfe_log_msg(struct lfe_log_src *src, enum lfe_log_level level, const char *event, uint64_t now_us,
		 const char *fmt, ...)
{
	struct lfe_log_line l;
	char msg[LFE_LOG_LINE_MAX];
	va_list ap;

	if (!lfe_log_start(&l, src, level, event, now_us))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lfe_log_kv(&l, "msg", "%s", msg);
	lfe_log_end(&l);
}

unsigned lfe_log_drain(struct lfe_log_ring *r, const struct lfe_log *lg)
{
	unsigned n = 0;
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);

	for (; tail != head; tail++, n++) {
		uint32_t i = tail & (LFE_LOG_RING - 1);
		lfe_log_write(lg, (enum lfe_log_level)r->slot[i].level, r->slot[i].text, r->slot[i].len);
	}
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	uint64_t dropped = atomic_load_explicit(&r->dropped, memory_order_relaxed);
	if (dropped != r->dropped_told) {
		char line[96];
		int k = snprintf(line, sizeof(line), "level=warn event=log_dropped count=%llu",
				 (unsigned long long)(dropped - r->dropped_told));
		r->dropped_told = dropped;
		lfe_log_write(lg, LFE_LOG_WARN, line, (size_t)k);
		n++;
	}
	return n;
}
