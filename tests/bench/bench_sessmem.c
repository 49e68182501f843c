/* tests/bench/bench_sessmem.c — resident bytes of the LDAP side of N held
 * connections, laid out as the daemon lays them out (worker.c): session
 * slots of 128 B header + lfe_session_size() rounded to 64 B in one lazily
 * backed mapping, and a DN pool of LFE_DN_POOL_PER_CONN (128) B per slot
 * plus a maximal DN per verifier job (verify_queue 1024).
 *
 *   bench_sessmem [N]     (default 1048576)
 *
 * Phases, each an RSS delta divided by N: N sessions opened (idle); each
 * bound once through lfe_session_process with a 43-byte DN
 * (bound-but-quiet); then every session binds again with a 1,000-byte DN
 * the backend refuses (an unauthenticated flood: no chunk may stay), and
 * 1,024 of them with a slow bind left pending (what the verifier queue can
 * hold). The backend is a stub (no store, no hash): this measures memory,
 * not binds. Add bench_tcp hold N's figure for the TCP side.
 *
 * Figures, not a test: run it by hand.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ldap/dnpool.h"
#include "ldap/session.h"

#define SLOT_HDR 128u          /* dataplane/worker.h LFE_SLOT_HDR */
#define DN_PER_CONN 128u       /* dataplane/worker.h LFE_DN_POOL_PER_CONN */
#define VERIFY_QUEUE 1024u     /* [workers] verify_queue default */

static int pending_mode;

static enum lfe_be_verdict stub_bind(void *ctx, uint64_t token, const char *ndn, size_t ndn_len,
				     const uint8_t *dn, size_t dn_len, const uint8_t *pw, size_t pw_len)
{
	(void)ctx; (void)token; (void)ndn; (void)dn; (void)dn_len; (void)pw; (void)pw_len;
	if (pending_mode)
		return LFE_BE_PENDING;
	return ndn_len < 100 ? LFE_BE_OK : LFE_BE_INVALID;
}

static const struct lfe_backend_ops ops = { .bind = stub_bind };

static long rss_bytes(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * sysconf(_SC_PAGESIZE);
}

/* Append tag, minimal length and content to b (cap 2048). */
static size_t tlv(uint8_t *b, size_t n, uint8_t tag, const void *c, size_t len)
{
	if (n + 4 + len > 2048)
		abort();
	b[n++] = tag;
	if (len < 128) {
		b[n++] = (uint8_t)len;
	} else if (len < 256) {
		b[n++] = 0x81, b[n++] = (uint8_t)len;
	} else {
		b[n++] = 0x82, b[n++] = (uint8_t)(len >> 8), b[n++] = (uint8_t)len;
	}
	memmove(b + n, c, len);
	return n + len;
}

/* A BindRequest (messageID 1, simple, password "pw") for dn into b. */
static size_t bind_pdu(uint8_t *b, const char *dn)
{
	static uint8_t op[2048], msg[2048];
	size_t o = tlv(op, 0, 0x02, "\x03", 1);
	o = tlv(op, o, 0x04, dn, strlen(dn));
	o = tlv(op, o, 0x80, "pw", 2);
	size_t m = tlv(msg, 0, 0x02, "\x01", 1);
	m = tlv(msg, m, 0x60, op, o);
	return tlv(b, 0, 0x30, msg, m);
}

static void run(struct lfe_session *s, const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
	struct lfe_session_io io = { .in = in, .in_len = len, .out = out, .out_cap = cap };
	if (lfe_session_process(s, &io) != 0 || io.in_used != len) {
		fprintf(stderr, "bench_sessmem: the bind was not taken\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1048576;
	if (n <= 0 || n > (1l << 24))
		return 2;
	size_t slot = (SLOT_HDR + lfe_session_size() + 63u) & ~(size_t)63u;
	static uint8_t out[4096], pdu[2048];
	long rss0 = rss_bytes();
	uint8_t *mem = mmap(NULL, slot * (size_t)n, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct lfe_dnpool *dns = lfe_dnpool_new((size_t)n * DN_PER_CONN +
						(VERIFY_QUEUE + 7u) * LFE_DNPOOL_CHUNK_MAX);
	if (mem == MAP_FAILED || dns == NULL)
		return 1;
	struct lfe_session_cfg cfg = { .allow_anonymous = true, .be = &ops, .dns = dns };
	struct lfe_session **s = malloc(sizeof *s * (size_t)n);
	if (!s)
		return 1;
	memset(s, 0, sizeof *s * (size_t)n);   /* ours, not the daemon's: before rss1 */
	long rss1 = rss_bytes();
	for (long i = 0; i < n; i++)
		s[i] = lfe_session_init(mem + (size_t)i * slot + SLOT_HDR, &cfg);
	long rss_idle = rss_bytes();
	char dn[1100];
	for (long i = 0; i < n; i++) {
		snprintf(dn, sizeof dn, "uid=user%07ld,ou=people,dc=example,dc=com", i % 10000000);
		run(s[i], pdu, bind_pdu(pdu, dn), out, sizeof out);
	}
	long rss_bound = rss_bytes();
	struct lfe_dnpool_stats ds;
	lfe_dnpool_stats(dns, &ds);
	printf("bench_sessmem %ld: session %zu B, slot %zu B; resident per connection: idle %.0f B, "
	       "bound (43-byte DN) %.0f B; DN pool %llu chunks, %llu B, %llu of %llu pages\n",
	       n, lfe_session_size(), slot, (double)(rss_idle - rss1) / (double)n,
	       (double)(rss_bound - rss1) / (double)n, (unsigned long long)ds.chunks,
	       (unsigned long long)ds.bytes, (unsigned long long)ds.pages, (unsigned long long)ds.pages_max);

	/* The flood: every connection binds with a 1,000-byte DN and fails. */
	memset(dn, 'a', sizeof dn);
	memcpy(dn, "cn=", 3);
	strcpy(dn + 1000 - 19, ",dc=example,dc=com");
	size_t fl = bind_pdu(pdu, dn);
	for (long i = 0; i < n; i++)
		run(s[i], pdu, fl, out, sizeof out);
	long rss_flood = rss_bytes();
	lfe_dnpool_stats(dns, &ds);
	printf("bench_sessmem %ld: after a failed 1,000-byte-DN bind on each: %.0f B per connection, "
	       "DN pool %llu chunks (%llu refused dry)\n", n, (double)(rss_flood - rss1) / (double)n,
	       (unsigned long long)ds.chunks, (unsigned long long)ds.dry);
	pending_mode = 1;
	long np = n < VERIFY_QUEUE ? n : VERIFY_QUEUE;
	for (long i = 0; i < np; i++)
		run(s[i], pdu, fl, out, sizeof out);
	lfe_dnpool_stats(dns, &ds);
	printf("bench_sessmem %ld: %ld slow binds of 1,000-byte DNs pending: DN pool %llu B in %llu chunks "
	       "(%llu refused dry); process RSS %.1f MiB (%.1f at start)\n", n, np,
	       (unsigned long long)ds.bytes, (unsigned long long)ds.chunks, (unsigned long long)ds.dry,
	       (double)rss_bytes() / (1 << 20), (double)rss0 / (1 << 20));
	for (long i = 0; i < n; i++)
		lfe_session_fini(s[i]);
	lfe_dnpool_stats(dns, &ds);
	if (ds.chunks != 0)
		fprintf(stderr, "bench_sessmem: %llu DN chunks left after fini\n", (unsigned long long)ds.chunks);
	lfe_dnpool_free(dns);
	munmap(mem, slot * (size_t)n);
	free(s);
	return 0;
}
