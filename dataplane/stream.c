/* dataplane/stream.c — the byte stream between a session and TCP (stream.h).
 *
 * Why the session's contract makes this loop short: a call of
 * lfe_session_process either writes at least one response, or consumes
 * input without writing (a partial PDU gathered), or stops because the
 * room cannot take the next answer. In the first case the session may have
 * stopped before a request that needs an empty output (a search, or a
 * request gathered from split input), so it is called again with the
 * scratch emptied; in the other cases there is nothing more to do until
 * more bytes or more room arrive. The room offered is never more than what
 * the send ring can queue, so every response written is queued whole.
 */
#include "stream.h"

#include <errno.h>

void lfe_stream_init(struct lfe_stream *st, struct lfe_tcp_conn *c)
{
	st->c = c;
}

size_t lfe_stream_room(const struct lfe_stream *st)
{
	return lfe_tcp_send_free(st->c);
}

int lfe_stream_write(struct lfe_stream *st, const void *p, size_t n)
{
	if (n > lfe_stream_room(st))
		return -ENOBUFS;
	return lfe_tcp_send(st->c, p, n) == n ? 0 : -ENOBUFS;
}

static size_t out_cap(const struct lfe_stream *st, size_t cap)
{
	size_t room = lfe_stream_room(st);
	return room < cap ? room : cap;
}

size_t lfe_stream_deliver(struct lfe_stream *st, struct lfe_session *s, const uint8_t *data,
			  size_t len, uint8_t *scratch, size_t cap, unsigned *flags)
{
	size_t used = 0;

	*flags = 0;
	for (;;) {
		struct lfe_session_io io = { .in = data + used, .in_len = len - used,
					     .out = scratch, .out_cap = out_cap(st, cap) };
		int rc = lfe_session_process(s, &io);
		used += io.in_used;
		if (rc == 0 && io.out_len > 0 && lfe_stream_write(st, scratch, io.out_len) < 0)
			rc = -ENOBUFS;   /* cannot happen: out_cap was the room */
		if (rc < 0 || (io.flags & LFE_SESS_ABORT)) {
			*flags |= LFE_SESS_ABORT;
			lfe_tcp_abort(st->c);
			return len;
		}
		if (io.flags & LFE_SESS_CLOSE) {
			*flags |= LFE_SESS_CLOSE;
			lfe_tcp_close(st->c);
			return len;   /* nothing after an unbind or a protocol error counts */
		}
		if (io.flags & LFE_SESS_PENDING) {
			*flags |= LFE_SESS_PENDING;
			return used;
		}
		if (io.out_len == 0)
			return used;   /* all taken, or the rest waits for room */
	}
}

int lfe_stream_bind_done(struct lfe_stream *st, struct lfe_session *s, uint64_t token,
			 enum lfe_be_verdict v, uint8_t *scratch, size_t cap)
{
	struct lfe_session_io io = { .out = scratch, .out_cap = out_cap(st, cap) };
	int rc = lfe_session_bind_done(s, token, v, &io);

	if (rc == -ESTALE)
		return rc;
	if (rc == 0 && lfe_stream_write(st, scratch, io.out_len) < 0)
		rc = -ENOBUFS;
	if (rc < 0)
		lfe_tcp_abort(st->c);
	return rc;
}

void lfe_stream_on_writable(struct lfe_stream *st, struct lfe_tcp *t, uint64_t now_us)
{
	lfe_tcp_conn_kick(t, st->c, now_us);
}
