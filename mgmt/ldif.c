/* mgmt/ldif.c — strict LDIF reader and RFC 2849 writer (see ldif.h).
 *
 * libldap has an LDIF reader (ldif_read_record), but it fetches ":<" URLs
 * from the file system, reports only the line where a record starts, and
 * guesses around bad base64; an import must refuse those with the exact
 * line, so this reader is our own and small.
 */
#include "mgmt/ldif.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldap/attr.h"

enum { LL_END = 0, LL_BLANK = 1, LL_LINE = 2 };

static int fail(struct lfe_ldif_err *err, unsigned line, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct lfe_ldif_err *err, unsigned line, int rc, const char *fmt, ...)
{
	va_list ap;

	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return rc;
}

void lfe_ldif_reader_init(struct lfe_ldif_reader *r, const uint8_t *p, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->len = len;
}

void lfe_ldif_reader_free(struct lfe_ldif_reader *r)
{
	free(r->scratch);
	r->scratch = NULL;
	r->scratch_cap = 0;
}

void lfe_ldif_entry_free(struct lfe_ldif_entry *e)
{
	if (!e)
		return;
	free(e->buf);
	free(e->av);
	memset(e, 0, sizeof(*e));
}

/* Grow *buf so that it holds need bytes. Sizes are bounded by
 * LFE_LDIF_MAX_LINE per line, so doubling cannot overflow before the
 * caller's own limit check trips. */
static int reserve(uint8_t **buf, size_t *cap, size_t need)
{
	size_t ncap;
	uint8_t *nb;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 256;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	nb = realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

/* The physical line at off: its bytes without LF / CRLF, and where the
 * next one starts. */
static void peek_line(const struct lfe_ldif_reader *r, size_t off,
		      const uint8_t **s, size_t *n, size_t *next)
{
	const uint8_t *nl = memchr(r->p + off, '\n', r->len - off);
	size_t end = nl ? (size_t)(nl - r->p) : r->len;

	*s = r->p + off;
	*n = end - off;
	*next = nl ? end + 1 : end;
	if (*n > 0 && (*s)[*n - 1] == '\r')
		(*n)--;
}

static int check_bytes(const uint8_t *s, size_t n, unsigned line, struct lfe_ldif_err *err)
{
	if (memchr(s, '\0', n))
		return fail(err, line, -EBADMSG, "NUL byte in line (binary data must be base64, written \"attr:: ...\")");
	if (memchr(s, '\r', n))
		return fail(err, line, -EBADMSG, "stray carriage return inside a line");
	return 0;
}

/* One logical line (a physical line and its continuations, comments
 * skipped) into r->scratch. */
static int logical_line(struct lfe_ldif_reader *r, size_t *len, unsigned *lineno,
			struct lfe_ldif_err *err)
{
	for (;;) {
		const uint8_t *s;
		size_t n, next, total;
		bool comment;
		int rc;

		if (r->off >= r->len)
			return LL_END;
		peek_line(r, r->off, &s, &n, &next);
		r->off = next;
		r->line++;
		if ((rc = check_bytes(s, n, r->line, err)) < 0)
			return rc;
		if (n == 0)
			return LL_BLANK;
		if (s[0] == ' ')
			return fail(err, r->line, -EBADMSG,
				    "continuation line (starting with a space) with no line to continue");
		comment = s[0] == '#';
		*lineno = r->line;
		total = 0;
		if (!comment) {
			if (n > LFE_LDIF_MAX_LINE)
				goto too_long;
			if (reserve(&r->scratch, &r->scratch_cap, n) < 0)
				return fail(err, r->line, -ENOMEM, "out of memory");
			memcpy(r->scratch, s, n);
			total = n;
		}
		while (r->off < r->len) {
			peek_line(r, r->off, &s, &n, &next);
			if (n == 0 || s[0] != ' ')
				break;
			r->off = next;
			r->line++;
			if ((rc = check_bytes(s, n, r->line, err)) < 0)
				return rc;
			if (comment)
				continue;
			if (n - 1 > LFE_LDIF_MAX_LINE - total)
				goto too_long;
			if (reserve(&r->scratch, &r->scratch_cap, total + n - 1) < 0)
				return fail(err, r->line, -ENOMEM, "out of memory");
			memcpy(r->scratch + total, s + 1, n - 1);
			total += n - 1;
		}
		if (comment)
			continue;
		*len = total;
		return LL_LINE;
	}
too_long:
	return fail(err, r->line, -E2BIG, "line longer than %u bytes", LFE_LDIF_MAX_LINE);
}

static bool is_alpha(uint8_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* RFC 4512 AttributeDescription: (descr / numericoid) *(";" option). */
static bool valid_attr_desc(const uint8_t *t, size_t n)
{
	size_t i = 0, start;

	if (n == 0)
		return false;
	if (is_alpha(t[0])) {
		while (i < n && (is_alpha(t[i]) || is_digit(t[i]) || t[i] == '-'))
			i++;
	} else {
		for (;;) {
			start = i;
			while (i < n && is_digit(t[i]))
				i++;
			if (i == start || (t[start] == '0' && i - start > 1))
				return false;
			if (i < n && t[i] == '.') {
				i++;
				continue;
			}
			break;
		}
	}
	while (i < n) {
		if (t[i++] != ';')
			return false;
		start = i;
		while (i < n && (is_alpha(t[i]) || is_digit(t[i]) || t[i] == '-'))
			i++;
		if (i == start)
			return false;
	}
	return true;
}

static int8_t b64_val(uint8_t c)
{
	if (c >= 'A' && c <= 'Z') return (int8_t)(c - 'A');
	if (c >= 'a' && c <= 'z') return (int8_t)(c - 'a' + 26);
	if (c >= '0' && c <= '9') return (int8_t)(c - '0' + 52);
	if (c == '+') return 62;
	if (c == '/') return 63;
	return -1;
}

ssize_t lfe_b64_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
	size_t o = 0;

	if (len % 4 != 0 || len / 4 * 3 > cap)
		return -EBADMSG;
	for (size_t i = 0; i < len; i += 4) {
		bool last = i + 4 == len;
		int8_t v[4];
		unsigned pad = 0;
		uint32_t w;

		for (unsigned k = 0; k < 4; k++) {
			if (last && k >= 2 && in[i + k] == '=') {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad)      /* data after '=' */
				return -EBADMSG;
			v[k] = b64_val(in[i + k]);
			if (v[k] < 0)
				return -EBADMSG;
		}
		w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		/* Bits below the last full byte must be zero: two encodings of one
		 * value would otherwise both be accepted. */
		if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
			return -EBADMSG;
		out[o++] = (uint8_t)(w >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(w >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)w;
	}
	return (ssize_t)o;
}

enum vkind { V_PLAIN, V_B64, V_URL };

struct line_parts {
	const uint8_t *type;
	size_t type_len;
	enum vkind kind;
	const uint8_t *val;
	size_t val_len;
};

static int split_line(const uint8_t *s, size_t n, unsigned line, struct line_parts *lp,
		      struct lfe_ldif_err *err)
{
	const uint8_t *colon = memchr(s, ':', n);
	size_t i;

	if (!colon)
		return fail(err, line, -EBADMSG, "missing ':' after the attribute name");
	lp->type = s;
	lp->type_len = (size_t)(colon - s);
	if (!valid_attr_desc(lp->type, lp->type_len))
		return fail(err, line, -EBADMSG, "invalid attribute name \"%.*s\"",
			    (int)(lp->type_len > 64 ? 64 : lp->type_len), (const char *)lp->type);
	i = lp->type_len + 1;
	lp->kind = V_PLAIN;
	if (i < n && s[i] == ':') {
		lp->kind = V_B64;
		i++;
	} else if (i < n && s[i] == '<') {
		lp->kind = V_URL;
		i++;
	}
	while (i < n && s[i] == ' ')
		i++;
	lp->val = s + i;
	lp->val_len = n - i;
	return 0;
}

static bool type_is(const struct line_parts *lp, const char *name)
{
	return lfe_attr_type_eq(lp->type, lp->type_len, (const uint8_t *)name, strlen(name));
}

/* Append the decoded value to e->buf; its offset and length go to *off, *len. */
static int store_value(struct lfe_ldif_entry *e, const struct line_parts *lp, unsigned line,
		       size_t *off, size_t *len, struct lfe_ldif_err *err)
{
	if (lp->kind == V_URL)
		return fail(err, line, -ENOTSUP,
			    "URL values (\"%.*s:<\") are not supported; put the value inline or base64 (\"::\")",
			    (int)(lp->type_len > 64 ? 64 : lp->type_len), (const char *)lp->type);
	if (lp->kind == V_PLAIN) {
		if (reserve(&e->buf, &e->buf_cap, e->buf_len + lp->val_len) < 0)
			return fail(err, line, -ENOMEM, "out of memory");
		if (lp->val_len)
			memcpy(e->buf + e->buf_len, lp->val, lp->val_len);
		*off = e->buf_len;
		*len = lp->val_len;
		e->buf_len += lp->val_len;
		return 0;
	}
	size_t room = lp->val_len / 4 * 3;
	ssize_t dn;

	if (reserve(&e->buf, &e->buf_cap, e->buf_len + room) < 0)
		return fail(err, line, -ENOMEM, "out of memory");
	dn = lfe_b64_decode(lp->val, lp->val_len, e->buf + e->buf_len, room);
	if (dn < 0)
		return fail(err, line, -EBADMSG, "invalid base64 value of \"%.*s\"",
			    (int)(lp->type_len > 64 ? 64 : lp->type_len), (const char *)lp->type);
	*off = e->buf_len;
	*len = (size_t)dn;
	e->buf_len += (size_t)dn;
	return 0;
}

static int add_av(struct lfe_ldif_entry *e, const struct line_parts *lp, unsigned line,
		  struct lfe_ldif_err *err)
{
	struct lfe_ldif_av *av;
	int rc;

	if (e->n >= LFE_LDIF_MAX_VALUES)
		return fail(err, line, -E2BIG, "more than %u values in one entry", LFE_LDIF_MAX_VALUES);
	if (e->n == e->av_cap) {
		uint32_t ncap = e->av_cap ? e->av_cap * 2 : 32;
		struct lfe_ldif_av *na = realloc(e->av, (size_t)ncap * sizeof(*na));

		if (!na)
			return fail(err, line, -ENOMEM, "out of memory");
		e->av = na;
		e->av_cap = ncap;
	}
	av = &e->av[e->n];
	memset(av, 0, sizeof(*av));
	av->line = line;
	if (reserve(&e->buf, &e->buf_cap, e->buf_len + lp->type_len) < 0)
		return fail(err, line, -ENOMEM, "out of memory");
	memcpy(e->buf + e->buf_len, lp->type, lp->type_len);
	av->t_off = e->buf_len;
	av->t_len = lp->type_len;
	e->buf_len += lp->type_len;
	if ((rc = store_value(e, lp, line, &av->v_off, &av->v_len, err)) < 0)
		return rc;
	e->n++;
	return 0;
}

int lfe_ldif_next(struct lfe_ldif_reader *r, struct lfe_ldif_entry *e, struct lfe_ldif_err *err)
{
	struct line_parts lp;
	size_t len = 0, dn_len = 0;
	unsigned lineno = 0;
	bool in_record = false, seen_attr = false;
	int ll, rc;

	e->n = 0;
	e->buf_len = 0;
	e->dn.p = NULL;
	e->dn.len = 0;
	/* Slices of empty values still point into a real buffer. */
	if (reserve(&e->buf, &e->buf_cap, 1) < 0)
		return fail(err, r->line, -ENOMEM, "out of memory");
	for (;;) {
		ll = logical_line(r, &len, &lineno, err);
		if (ll < 0)
			return ll;
		if (ll != LL_LINE) {
			if (!in_record) {
				if (ll == LL_END)
					return 0;
				continue;
			}
			break;
		}
		if ((rc = split_line(r->scratch, len, lineno, &lp, err)) < 0)
			return rc;
		if (!r->started) {
			r->started = true;
			if (type_is(&lp, "version")) {
				if (lp.kind != V_PLAIN || lp.val_len != 1 || lp.val[0] != '1')
					return fail(err, lineno, -ENOTSUP,
						    "unsupported LDIF version (only \"version: 1\")");
				continue;
			}
		}
		if (type_is(&lp, "version"))
			return fail(err, lineno, -EBADMSG,
				    "\"version:\" is only allowed as the first line of the file");
		if (!in_record) {
			if (!type_is(&lp, "dn"))
				return fail(err, lineno, -EBADMSG,
					    "a record must start with \"dn:\" (found \"%.*s:\")",
					    (int)(lp.type_len > 64 ? 64 : lp.type_len), (const char *)lp.type);
			if ((rc = store_value(e, &lp, lineno, &e->dn_off, &dn_len, err)) < 0)
				return rc;
			if (dn_len > 0 && memchr(e->buf + e->dn_off, '\0', dn_len))
				return fail(err, lineno, -EBADMSG, "NUL byte in DN");
			e->line = lineno;
			in_record = true;
			continue;
		}
		if (type_is(&lp, "dn"))
			return fail(err, lineno, -EBADMSG,
				    "second \"dn:\" in one record (records are separated by an empty line)");
		if (!seen_attr && (type_is(&lp, "changetype") || type_is(&lp, "control")))
			return fail(err, lineno, -ENOTSUP,
				    "changetype records are not supported; import content records");
		seen_attr = true;
		if ((rc = add_av(e, &lp, lineno, err)) < 0)
			return rc;
	}
	/* buf may have moved while growing: resolve offsets only now. */
	e->dn.p = e->buf + e->dn_off;
	e->dn.len = dn_len;
	for (uint32_t i = 0; i < e->n; i++) {
		struct lfe_ldif_av *av = &e->av[i];

		av->type.p = e->buf + av->t_off;
		av->type.len = av->t_len;
		av->val.p = e->buf + av->v_off;
		av->val.len = av->v_len;
	}
	return 1;
}

bool lfe_ldif_needs_b64(const uint8_t *v, size_t len)
{
	if (len == 0)
		return false;
	if (v[0] == ' ' || v[0] == ':' || v[0] == '<' || v[len - 1] == ' ')
		return true;
	for (size_t i = 0; i < len; i++)
		if (v[i] == 0 || v[i] == '\n' || v[i] == '\r' || v[i] > 0x7f)
			return true;
	return false;
}

/* Emits bytes and folds at LFE_LDIF_FOLD columns. */
struct folder {
	FILE *f;
	size_t col;
};

static void emit(struct folder *fo, const void *p, size_t n)
{
	const char *s = p;

	while (n > 0) {
		size_t room, k;

		if (fo->col == LFE_LDIF_FOLD) {
			fputs("\n ", fo->f);
			fo->col = 1;
		}
		room = LFE_LDIF_FOLD - fo->col;
		k = n < room ? n : room;
		fwrite(s, 1, k, fo->f);
		fo->col += k;
		s += k;
		n -= k;
	}
}

static const char b64_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int lfe_ldif_put(FILE *f, const char *type, const uint8_t *v, size_t len, bool force_b64)
{
	struct folder fo = { f, 0 };
	bool b64 = force_b64 || lfe_ldif_needs_b64(v, len);

	emit(&fo, type, strlen(type));
	emit(&fo, b64 ? "::" : ":", b64 ? 2 : 1);
	if (len > 0)
		emit(&fo, " ", 1);
	if (!b64) {
		emit(&fo, v, len);
	} else {
		for (size_t i = 0; i < len; i += 3) {
			uint32_t w = (uint32_t)v[i] << 16;
			char q[4];

			if (i + 1 < len)
				w |= (uint32_t)v[i + 1] << 8;
			if (i + 2 < len)
				w |= v[i + 2];
			q[0] = b64_chars[(w >> 18) & 63];
			q[1] = b64_chars[(w >> 12) & 63];
			q[2] = i + 1 < len ? b64_chars[(w >> 6) & 63] : '=';
			q[3] = i + 2 < len ? b64_chars[w & 63] : '=';
			emit(&fo, q, 4);
		}
	}
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}
