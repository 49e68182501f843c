/* backend/pwscheme.c — userPassword schemes of OpenLDAP and 389-ds.
 *
 * Fast/slow threshold. The class decides whether a bind is verified inline on
 * a poll-mode core or handed to a verifier thread. The salted SHA family
 * costs a fraction of a microsecond (one to four hash blocks, base64, a
 * lookup); the cheapest slow scheme ({CRYPT}$1$, 1000 MD5 rounds) costs
 * some 300 times more, the usual ones ms (tests/bench/bench_pwscheme; the
 * table is in docs/BENCHMARKS.md). The line sits between them: inline, the
 * SHA family still lets a core verify millions a second, while 0.1 ms
 * would cap it at 10k and stall every other connection of the core
 * meanwhile.
 *
 * Denial-of-service limits. A stored value chooses its own cost, and the
 * store may be written by an import of foreign data, so verification refuses
 * (-EINVAL) parameters beyond these, each at most about a second of work
 * (bench_pwscheme's rates) while every real default sits far below:
 *   PBKDF2: iterations x output blocks <= 2,000,000, ~0.9 s for SHA-512
 *           (389-ds default 100k, OpenLDAP 10k; legacy {PBKDF2_SHA256} has
 *           8 blocks, so 250k iterations)
 *   sha-crypt: rounds <= 1,000,000, ~0.3 s (default 5000)
 *   bcrypt: cost 4..14, ~0.9 s at 14 (mkpasswd default 5)
 *   yescrypt: 128*N*r <= 256 MiB, ~1.1 s, and that times p*(t+1) <= 512 MiB
 *           (default j9T: 16 MiB)
 *   Argon2: m <= 256 MiB, m*t <= 512 MiB, p <= 16 (OpenLDAP 4 MiB t=3,
 *           389-ds 64 MiB t=2, RFC 9106 64 MiB t=3); i and id only
 * Salts are capped at 256 bytes (SHA family, PBKDF2) or 128 (Argon2): real
 * tools use 4-64.
 *
 * Empty passwords never verify (RFC 4513 5.1.2 makes them unauthenticated
 * binds); the hash is still computed so the cost does not reveal it.
 */

/* The low-level SHA*_Init/Update/Final API is deprecated in OpenSSL 3 but is
 * the only stateless path without a provider fetch: EVP_DigestInit with
 * EVP_sha1() re-fetches the implementation on every call (~300 ns against
 * ~55 ns for the whole {SSHA} digest), and caching a fetched EVP_MD would need
 * a global. */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "backend/pwscheme.h"

#include <argon2.h>
#include <crypt.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#define PW_SALT_MAX        256
#define PW_SCHEME_NAME_MAX 32

#define PBKDF2_WORK_MAX    2000000u
#define SHACRYPT_ROUNDS_MAX 1000000u
#define BCRYPT_COST_MAX    14u
#define YESCRYPT_MEM_MAX   (256ull << 20)
#define YESCRYPT_WORK_MAX  (512ull << 20)
#define ARGON2_M_MAX       (256u << 10) /* KiB */
#define ARGON2_MT_MAX      (512ull << 10)
#define ARGON2_P_MAX       16u
#define ARGON2_SALT_MAX    128u
#define ARGON2_HASH_MAX    128u

/* Parameters of the values lfe_pw_hash writes. {SSHA*}: 8-byte salts as
 * 389-ds and OpenLDAP's pw-sha2 use (slappasswd's {SSHA} uses 4). {CRYPT}: $6$
 * at libxcrypt's default 5000 rounds (~1.2 ms). {PBKDF2-*}: OpenLDAP's
 * pw-pbkdf2 format, which 389-ds also reads, with its 16-byte salt but
 * 389-ds's 100k iterations (OpenLDAP's 10k is below every current advice;
 * ~46 ms for SHA-512). {ARGON2}: argon2id at OWASP's minimum, 19 MiB, t=2,
 * p=1 (~21 ms); RFC 9106's 64 MiB would cost a verifier thread 3x more for
 * every bind. */
#define HASH_SSHA_SALT     8
#define HASH_PBKDF2_ITER   100000u
#define HASH_PBKDF2_SALT   16
#define HASH_ARGON2_T      2u
#define HASH_ARGON2_M      19456u /* KiB */
#define HASH_ARGON2_P      1u
#define HASH_ARGON2_SALT   16u
#define HASH_ARGON2_LEN    32u

enum pw_kind { K_CLEAR, K_SHA, K_SSHA, K_CRYPT, K_PBKDF2, K_PBKDF2_389, K_ARGON2 };
enum pw_dig { D_NONE, D_SHA1, D_SHA256, D_SHA384, D_SHA512 };

struct pw_scheme {
	const char *name; /* without braces, canonical spelling */
	uint8_t len;
	uint8_t kind;
	uint8_t dig;
	const char *dummy; /* value lfe_pw_dummy_verify spends its work on */
};

/* Dummy values: password "lfe-dummy-9f3c1ab7", parameters of lfe_pw_hash's
 * defaults (or of the format's only producer), generated with the same tools
 * as tests/backend/pw-vectors.txt. */
#define S(n) n, sizeof(n) - 1
static const struct pw_scheme pw_schemes[] = {
	{ S("SSHA"), K_SSHA, D_SHA1,
	  "{SSHA}byEEFHUByC68xUOgdBnzDyHZ0BvMruqlyM/9Og==" },
	{ S("SHA"), K_SHA, D_SHA1,
	  "{SHA}vALiJJdFMffgm6WKObNGJkuV9x0=" },
	{ S("SSHA256"), K_SSHA, D_SHA256,
	  "{SSHA256}5erTsx6RTscvPep7gpxjtdXDABa5HYkEdkletd0rvkLzYE9uPD4TKw==" },
	{ S("SSHA384"), K_SSHA, D_SHA384,
	  "{SSHA384}UzNriE5I5PJVEs5m9YZvr18w7bSu3XBq8NfO7Id24l2iFPt+QQwnByQYI4MQcqCJp4xu7aV"
	  "W8rA=" },
	{ S("SSHA512"), K_SSHA, D_SHA512,
	  "{SSHA512}s0kjz03pJrQiEQfC/q5ObzDvSjJ1/3HyEJkQk/o/4KwGX/UYqbcS94I+RPQ1mzYQrfMFVck"
	  "hyMdqEdYeSRvGxh2V/Sk7wxsA" },
	{ S("SHA256"), K_SHA, D_SHA256,
	  "{SHA256}FYj6NkDXHf95ID97vM2xvmUErLq1BOoV6/IePf6Vw00=" },
	{ S("SHA384"), K_SHA, D_SHA384,
	  "{SHA384}vl3YrnkycQyUJ+k4woiQcSTMYWgHfLMmq7nhbK/YgyAsA2NgAGTcD13M2bTU8j9i" },
	{ S("SHA512"), K_SHA, D_SHA512,
	  "{SHA512}+1B4ZmZrX0wRBfMMS++CkRY0z4rhCzYxm8e9i6DbReu62Din1qKp3zxab8GsIMMQOfQ8mEGW"
	  "LGjnvPdq5ygRVA==" },
	{ S("CRYPT"), K_CRYPT, D_NONE,
	  "{CRYPT}$6$VLTsbUhbjAcY5Jb0$c7uXHAC/Eo2ttMtqomr3L4Efglj24S26dQCVY2xMeZUX76oY.G5mA"
	  "UAhyiMITFjgtn5l5ydlb.H/vXXJWS5Ox." },
	{ S("PBKDF2"), K_PBKDF2, D_SHA1,
	  "{PBKDF2}100000$uOsxfK/5NnX1BIufGbuAAw$UQQX1EVLHrsouNDTu1NxMLAczhw" },
	{ S("PBKDF2-SHA1"), K_PBKDF2, D_SHA1,
	  "{PBKDF2-SHA1}100000$uOsxfK/5NnX1BIufGbuAAw$UQQX1EVLHrsouNDTu1NxMLAczhw" },
	{ S("PBKDF2-SHA256"), K_PBKDF2, D_SHA256,
	  "{PBKDF2-SHA256}100000$0L4ntEa1iqP4ueWJ2bqIkA$LvVYxmPWEv9Jf.zBE9fuvUHrHH0/PYNx4e8"
	  "ii3uDrvg" },
	{ S("PBKDF2-SHA512"), K_PBKDF2, D_SHA512,
	  "{PBKDF2-SHA512}100000$Lm0u6Jij0bXBy9oWFTW9fQ$MqhDsiEyWZ40ghLefS2QA7iA2yYnJAoIHNr"
	  "yCcnRxBs33/WF2nizVC1MIm.e14oCw27Tuzs.e3JtDP8JP32Bfg" },
	{ S("PBKDF2_SHA256"), K_PBKDF2_389, D_SHA256, NULL /* ds389_dummy */ },
	{ S("ARGON2"), K_ARGON2, D_NONE,
	  "{ARGON2}$argon2id$v=19$m=19456,t=2,p=1$WU9Takwvc3hNRTBaN2U5Kw$D7iT55NyrV0gR207MI"
	  "yan2Ykzx9nP7VxBZQ/bXz5c2w" },
	{ S("CLEARTEXT"), K_CLEAR, D_NONE, "{CLEARTEXT}lfe-dummy-9f3c1ab7" },
	{ S("CLEAR"), K_CLEAR, D_NONE, "{CLEARTEXT}lfe-dummy-9f3c1ab7" },
};
#undef S

bool lfe_ct_equal(const void *a, const void *b, size_t len)
{
	return CRYPTO_memcmp(a, b, len) == 0;
}

/* ---- scheme prefix ------------------------------------------------------ */

static bool scheme_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.';
}

/* Length of the "{NAME}" prefix, 0 when the value has none. A value that
 * merely starts with '{' is cleartext, as in OpenLDAP. */
static size_t prefix_len(const char *s, size_t n)
{
	if (n < 3 || s[0] != '{')
		return 0;
	size_t lim = n < PW_SCHEME_NAME_MAX + 2 ? n : PW_SCHEME_NAME_MAX + 2;
	for (size_t i = 1; i < lim; i++) {
		if (s[i] == '}')
			return i > 1 ? i + 1 : 0;
		if (!scheme_char((unsigned char)s[i]))
			return 0;
	}
	return 0;
}

static const struct pw_scheme *scheme_find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(pw_schemes) / sizeof(pw_schemes[0]); i++)
		if (pw_schemes[i].len == len && strncasecmp(pw_schemes[i].name, name, len) == 0)
			return &pw_schemes[i];
	return NULL;
}

/* ---- base64 ------------------------------------------------------------- */

enum {
	B64_PAD_REQUIRED = 0, /* RFC 4648 with '=' padding: the {SHA} family */
	B64_PAD_OPTIONAL = 1, /* PBKDF2: OpenLDAP writes none, 389-ds pads */
	B64_PAD_NONE = 2,     /* Argon2's PHC strings */
	B64_DOT62 = 4,        /* passlib's "adapted" alphabet: '.' for '+' */
};

/* Sextet + 1 of each base64 character, 0 where the byte is not one (so the
 * table needs no initializer for the invalid bytes). '.' stands for 62 only
 * in the adapted alphabet (B64_DOT62), which has a table of its own. */
#define B64_RUN(c0, n, v0) [c0 + n] = v0 + n + 1
#define B64_ROW(c0, v0) B64_RUN(c0, 0, v0), B64_RUN(c0, 1, v0), B64_RUN(c0, 2, v0), \
	B64_RUN(c0, 3, v0), B64_RUN(c0, 4, v0), B64_RUN(c0, 5, v0), B64_RUN(c0, 6, v0), \
	B64_RUN(c0, 7, v0), B64_RUN(c0, 8, v0), B64_RUN(c0, 9, v0)
#define B64_ALPHABET \
	B64_ROW('A', 0), B64_ROW('A' + 10, 10), B64_RUN('A' + 20, 0, 20), B64_RUN('A' + 20, 1, 20), \
	B64_RUN('A' + 20, 2, 20), B64_RUN('A' + 20, 3, 20), B64_RUN('A' + 20, 4, 20), \
	B64_RUN('A' + 20, 5, 20), \
	B64_ROW('a', 26), B64_ROW('a' + 10, 36), B64_RUN('a' + 20, 0, 46), B64_RUN('a' + 20, 1, 46), \
	B64_RUN('a' + 20, 2, 46), B64_RUN('a' + 20, 3, 46), B64_RUN('a' + 20, 4, 46), \
	B64_RUN('a' + 20, 5, 46), \
	B64_ROW('0', 52), ['+'] = 63, ['/'] = 64
static const uint8_t b64_tab[256] = { B64_ALPHABET };
static const uint8_t b64_tab_dot62[256] = { B64_ALPHABET, ['.'] = 63 };
#undef B64_ALPHABET
#undef B64_ROW
#undef B64_RUN

/* invalid characters give UINT_MAX, above any sextet */
static inline unsigned b64_val(const uint8_t *tab, unsigned char c)
{
	return (unsigned)tab[c] - 1;
}

/* Strict decoder: no whitespace, padding only as flags allow and only where it
 * belongs, unused trailing bits must be zero (one value, one encoding).
 * Whole quanta go four characters at a time: {SSHA} verification decodes one
 * value per bind. */
static ssize_t b64_decode(const char *in, size_t len, uint8_t *out, size_t cap, unsigned flags)
{
	size_t pad = 0;
	while (pad < 2 && len > 0 && in[len - 1] == '=') {
		len--;
		pad++;
	}
	unsigned mode = flags & 3;
	if (pad && mode == B64_PAD_NONE)
		return -EINVAL;
	if ((pad || mode == B64_PAD_REQUIRED) && (len + pad) % 4 != 0)
		return -EINVAL;
	if (len % 4 == 1)
		return -EINVAL;
	size_t full = len / 4, tail = len % 4;
	if (full * 3 + (tail ? tail - 1 : 0) > cap)
		return -EINVAL;

	const unsigned char *p = (const unsigned char *)in;
	const uint8_t *tab = (flags & B64_DOT62) ? b64_tab_dot62 : b64_tab;
	size_t o = 0;
	for (size_t q = 0; q < full; q++, p += 4) {
		unsigned a = b64_val(tab, p[0]), b = b64_val(tab, p[1]);
		unsigned c = b64_val(tab, p[2]), d = b64_val(tab, p[3]);
		if ((a | b | c | d) > 63)
			return -EINVAL;
		uint32_t v = a << 18 | b << 12 | c << 6 | d;
		out[o++] = (uint8_t)(v >> 16);
		out[o++] = (uint8_t)(v >> 8);
		out[o++] = (uint8_t)v;
	}
	if (tail) {
		unsigned a = b64_val(tab, p[0]), b = b64_val(tab, p[1]);
		unsigned c = tail == 3 ? b64_val(tab, p[2]) : 0;
		if ((a | b | c) > 63)
			return -EINVAL;
		uint32_t v = a << 18 | b << 12 | c << 6;
		out[o++] = (uint8_t)(v >> 16);
		if (tail == 3)
			out[o++] = (uint8_t)(v >> 8);
		/* the bits below the last whole byte must be zero */
		if (tail == 2 ? (v & 0xffff) : (v & 0xff))
			return -EINVAL;
	}
	return (ssize_t)o;
}

/* Encoded length, NUL excluded. */
static size_t b64_len(size_t n, bool pad)
{
	return pad ? (n + 2) / 3 * 4 : n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

static size_t b64_encode(const uint8_t *in, size_t n, char *out, bool ab64)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0, i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = tab[(v >> 6) & 63];
		out[o++] = tab[v & 63];
	}
	if (n - i) {
		uint32_t v = (uint32_t)in[i] << 16 | (n - i == 2 ? (uint32_t)in[i + 1] << 8 : 0);
		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		if (n - i == 2)
			out[o++] = tab[(v >> 6) & 63];
		else if (!ab64)
			out[o++] = '=';
		if (!ab64)
			out[o++] = '=';
	}
	if (ab64)
		for (size_t k = 0; k < o; k++)
			if (out[k] == '+')
				out[k] = '.';
	return o;
}

/* ---- SHA family --------------------------------------------------------- */

static size_t dig_len(enum pw_dig d)
{
	switch (d) {
	case D_SHA1: return SHA_DIGEST_LENGTH;
	case D_SHA256: return SHA256_DIGEST_LENGTH;
	case D_SHA384: return SHA384_DIGEST_LENGTH;
	case D_SHA512: return SHA512_DIGEST_LENGTH;
	default: return 0;
	}
}

static const EVP_MD *dig_md(enum pw_dig d)
{
	switch (d) {
	case D_SHA1: return EVP_sha1();
	case D_SHA256: return EVP_sha256();
	case D_SHA384: return EVP_sha384();
	case D_SHA512: return EVP_sha512();
	default: return NULL;
	}
}

/* H(a || b) without copying the password next to the salt; out holds the
 * digest of d. */
static void dig2(enum pw_dig d, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
		 uint8_t *out)
{
	union {
		SHA_CTX s1;
		SHA256_CTX s256;
		SHA512_CTX s512;
	} c;
	switch (d) {
	case D_SHA1:
		SHA1_Init(&c.s1);
		SHA1_Update(&c.s1, a, alen);
		SHA1_Update(&c.s1, b, blen);
		SHA1_Final(out, &c.s1);
		break;
	case D_SHA256:
		SHA256_Init(&c.s256);
		SHA256_Update(&c.s256, a, alen);
		SHA256_Update(&c.s256, b, blen);
		SHA256_Final(out, &c.s256);
		break;
	case D_SHA384:
		SHA384_Init(&c.s512);
		SHA384_Update(&c.s512, a, alen);
		SHA384_Update(&c.s512, b, blen);
		SHA384_Final(out, &c.s512);
		break;
	default:
		SHA512_Init(&c.s512);
		SHA512_Update(&c.s512, a, alen);
		SHA512_Update(&c.s512, b, blen);
		SHA512_Final(out, &c.s512);
		break;
	}
	explicit_bzero(&c, sizeof(c));
}

static int verify_sha(const struct pw_scheme *sc, const char *v, size_t n, const uint8_t *pw,
		      size_t pw_len)
{
	uint8_t raw[SHA512_DIGEST_LENGTH + PW_SALT_MAX];
	uint8_t h[SHA512_DIGEST_LENGTH];
	size_t dl = dig_len(sc->dig);
	ssize_t rl = b64_decode(v, n, raw, sizeof(raw), B64_PAD_REQUIRED);
	if (rl < 0)
		return -EINVAL;
	if (sc->kind == K_SHA ? (size_t)rl != dl : (size_t)rl <= dl)
		return -EINVAL;
	dig2(sc->dig, pw, pw_len, raw + dl, (size_t)rl - dl, h);
	bool ok = lfe_ct_equal(h, raw, dl);
	explicit_bzero(h, sizeof(h));
	return ok && pw_len ? 0 : -EACCES;
}

/* ---- cleartext ---------------------------------------------------------- */

/* Compares digests so neither the content nor the position of the first
 * difference shows in the timing; only the cost of hashing the lengths does. */
static int verify_clear(const char *v, size_t n, const uint8_t *pw, size_t pw_len)
{
	uint8_t a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
	dig2(D_SHA256, (const uint8_t *)v, n, NULL, 0, a);
	dig2(D_SHA256, pw, pw_len, NULL, 0, b);
	bool ok = lfe_ct_equal(a, b, sizeof(a)) & (n == pw_len);
	explicit_bzero(a, sizeof(a));
	explicit_bzero(b, sizeof(b));
	return ok && pw_len ? 0 : -EACCES;
}

/* ---- crypt(3) ----------------------------------------------------------- */

/* Decimal without sign or leading zeros, at most 10 digits. Advances *p. */
static int parse_u32(const char **p, const char *end, uint32_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	size_t k = 0;
	while (s + k < end && s[k] >= '0' && s[k] <= '9' && k < 11) {
		v = v * 10 + (uint64_t)(s[k] - '0');
		k++;
	}
	if (k == 0 || k > 10 || (k > 1 && s[0] == '0') || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	*p = s + k;
	return 0;
}

static int itoa64_val(unsigned char c)
{
	if (c == '.' || c == '/')
		return c == '.' ? 0 : 1;
	if (c >= '0' && c <= '9')
		return c - '0' + 2;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 12;
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 38;
	return -1;
}

/* yescrypt's variable-length little-endian integer encoding (decode64_uint32
 * in yescrypt-common.c): the first character tells how many follow. */
static int yes_u32(const char **p, const char *end, uint32_t min, uint32_t *out)
{
	const char *s = *p;
	if (s >= end)
		return -EINVAL;
	int c = itoa64_val((unsigned char)*s++);
	if (c < 0)
		return -EINVAL;
	uint64_t v = min;
	uint32_t start = 0, stop = 47, chars = 1, bits = 0;
	while ((uint32_t)c > stop) {
		v += (uint64_t)(stop + 1 - start) << bits;
		start = stop + 1;
		stop = start + (62 - stop) / 2;
		chars++;
		bits += 6;
	}
	v += (uint64_t)((uint32_t)c - start) << bits;
	while (--chars) {
		if (s >= end || (c = itoa64_val((unsigned char)*s++)) < 0)
			return -EINVAL;
		v += (uint64_t)c << bits;
		bits += 6;
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	*p = s;
	return 0;
}

static int yescrypt_limits(const char *s, const char *end)
{
	uint32_t flavor, n_log2, r, have, p = 1, t = 0, g;
	if (yes_u32(&s, end, 0, &flavor) || yes_u32(&s, end, 1, &n_log2) ||
	    yes_u32(&s, end, 1, &r))
		return -EINVAL;
	if (s < end && *s != '$') {
		if (yes_u32(&s, end, 1, &have))
			return -EINVAL;
		if (have & ~7u)
			return -ENOTSUP; /* ROM-based hashes need a ROM we do not have */
		if ((have & 1) && yes_u32(&s, end, 2, &p))
			return -EINVAL;
		if ((have & 2) && yes_u32(&s, end, 1, &t))
			return -EINVAL;
		if ((have & 4) && yes_u32(&s, end, 1, &g))
			return -EINVAL;
	}
	if (s >= end || *s != '$')
		return -EINVAL;
	/* Checked piecewise so that nothing overflows: 128 * r * 2^N_log2. */
	if (n_log2 > 21 || r > (YESCRYPT_MEM_MAX / 128) >> n_log2)
		return -EINVAL;
	uint64_t mem = (uint64_t)128 * r << n_log2;
	if (p > YESCRYPT_WORK_MAX / mem || mem * p > YESCRYPT_WORK_MAX / ((uint64_t)t + 1))
		return -EINVAL;
	return 0;
}

/* Only the hashes the brief's producers write; DES, NT, scrypt, SunMD5 and
 * friends are refused rather than verified with unknown cost. */
static int crypt_limits(const char *v, size_t n)
{
	const char *end = v + n;
	if (n >= 3 && v[0] == '$' && v[1] == '1' && v[2] == '$')
		return 0;
	if (n >= 3 && v[0] == '$' && (v[1] == '5' || v[1] == '6') && v[2] == '$') {
		static const char rk[] = "rounds=";
		const char *s = v + 3;
		if ((size_t)(end - s) >= sizeof(rk) - 1 && memcmp(s, rk, sizeof(rk) - 1) == 0) {
			uint32_t rounds;
			s += sizeof(rk) - 1;
			if (parse_u32(&s, end, &rounds) || s >= end || *s != '$' ||
			    rounds > SHACRYPT_ROUNDS_MAX)
				return -EINVAL;
		}
		return 0;
	}
	if (n >= 4 && v[0] == '$' && v[1] == '2' && (v[2] == 'b' || v[2] == 'a' || v[2] == 'y') &&
	    v[3] == '$') {
		if (n < 7 || v[4] < '0' || v[4] > '9' || v[5] < '0' || v[5] > '9' || v[6] != '$')
			return -EINVAL;
		unsigned cost = (unsigned)(v[4] - '0') * 10 + (unsigned)(v[5] - '0');
		return cost >= 4 && cost <= BCRYPT_COST_MAX ? 0 : -EINVAL;
	}
	if (n >= 3 && v[0] == '$' && v[1] == 'y' && v[2] == '$')
		return yescrypt_limits(v + 3, end);
	return -ENOTSUP;
}

static int verify_crypt(const char *v, size_t n, const uint8_t *pw, size_t pw_len)
{
	if (n == 0 || n >= CRYPT_OUTPUT_SIZE || memchr(v, '\0', n))
		return -EINVAL;
	int rc = crypt_limits(v, n);
	if (rc)
		return rc;
	/* crypt takes C strings: a password with a NUL cannot be what was
	 * hashed, and libxcrypt refuses longer phrases. */
	if (pw_len >= CRYPT_MAX_PASSPHRASE_SIZE || memchr(pw, '\0', pw_len))
		return -EACCES;

	char setting[CRYPT_OUTPUT_SIZE];
	char phrase[CRYPT_MAX_PASSPHRASE_SIZE];
	struct crypt_data cd;
	memcpy(setting, v, n);
	setting[n] = '\0';
	memcpy(phrase, pw, pw_len);
	phrase[pw_len] = '\0';
	memset(&cd, 0, sizeof(cd));

	const char *h = crypt_rn(phrase, setting, &cd, (int)sizeof(cd));
	if (h == NULL || h[0] == '*') {
		rc = -EINVAL;
	} else {
		/* crypt returns setting and hash; a stored value of another
		 * length was a bare setting or carried an over-long salt, and
		 * can match no password. */
		if (strnlen(h, CRYPT_OUTPUT_SIZE) != n)
			rc = -EINVAL;
		else
			rc = lfe_ct_equal(h, v, n) && pw_len ? 0 : -EACCES;
	}
	explicit_bzero(&cd, sizeof(cd));
	explicit_bzero(phrase, sizeof(phrase));
	return rc;
}

/* ---- PBKDF2 ------------------------------------------------------------- */

static int pbkdf2_run(enum pw_dig d, const uint8_t *pw, size_t pw_len, const uint8_t *salt,
		      size_t salt_len, uint32_t iter, uint8_t *out, size_t out_len)
{
	uint8_t empty = 0;
	if (pw_len > INT_MAX || iter > INT_MAX)
		return -EINVAL;
	/* OpenSSL refuses a NULL key even with length 0. */
	if (PKCS5_PBKDF2_HMAC((const char *)(pw_len ? pw : &empty), (int)pw_len, salt,
			      (int)salt_len, (int)iter, dig_md(d), (int)out_len, out) != 1)
		return -EIO;
	return 0;
}

static int pbkdf2_check(enum pw_dig d, const uint8_t *pw, size_t pw_len, const uint8_t *salt,
			size_t salt_len, uint32_t iter, const uint8_t *want, size_t want_len)
{
	uint8_t h[256];
	size_t hl = dig_len(d);
	if (iter == 0 || want_len == 0 || want_len > sizeof(h) ||
	    (uint64_t)iter * ((want_len + hl - 1) / hl) > PBKDF2_WORK_MAX)
		return -EINVAL;
	int rc = pbkdf2_run(d, pw, pw_len, salt, salt_len, iter, h, want_len);
	if (rc == 0)
		rc = lfe_ct_equal(h, want, want_len) && pw_len ? 0 : -EACCES;
	explicit_bzero(h, sizeof(h));
	return rc;
}

/* OpenLDAP pw-pbkdf2 and 389-ds pwdchan: "<iter>$<salt>$<dk>", the salt and
 * dk in passlib's adapted base64 (OpenLDAP) or padded RFC 4648 (389-ds); the
 * dk is one digest long. */
static int verify_pbkdf2(const struct pw_scheme *sc, const char *v, size_t n, const uint8_t *pw,
			 size_t pw_len)
{
	const char *end = v + n, *s = v;
	uint32_t iter;
	if (parse_u32(&s, end, &iter) || s >= end || *s++ != '$')
		return -EINVAL;
	const char *d = memchr(s, '$', (size_t)(end - s));
	if (d == NULL)
		return -EINVAL;
	uint8_t salt[PW_SALT_MAX], dk[SHA512_DIGEST_LENGTH];
	ssize_t sl = b64_decode(s, (size_t)(d - s), salt, sizeof(salt), B64_PAD_OPTIONAL | B64_DOT62);
	ssize_t kl = b64_decode(d + 1, (size_t)(end - d - 1), dk, sizeof(dk),
				B64_PAD_OPTIONAL | B64_DOT62);
	if (sl <= 0 || kl < 0 || (size_t)kl != dig_len(sc->dig))
		return -EINVAL;
	return pbkdf2_check(sc->dig, pw, pw_len, salt, (size_t)sl, iter, dk, (size_t)kl);
}

/* 389-ds legacy {PBKDF2_SHA256} (pbkdf2_pwd.c): base64 of a 4-byte big-endian
 * iteration count, a 64-byte salt and a 256-byte PBKDF2-HMAC-SHA256 output. */
#define DS389_SALT 64
#define DS389_HASH 256
static int verify_pbkdf2_389(const char *v, size_t n, const uint8_t *pw, size_t pw_len)
{
	uint8_t raw[4 + DS389_SALT + DS389_HASH];
	ssize_t rl = b64_decode(v, n, raw, sizeof(raw), B64_PAD_REQUIRED);
	if (rl != (ssize_t)sizeof(raw))
		return -EINVAL;
	uint32_t iter = (uint32_t)raw[0] << 24 | (uint32_t)raw[1] << 16 | (uint32_t)raw[2] << 8 | raw[3];
	return pbkdf2_check(D_SHA256, pw, pw_len, raw + 4, DS389_SALT, iter, raw + 4 + DS389_SALT,
			    DS389_HASH);
}

/* ---- Argon2 ------------------------------------------------------------- */

static int expect(const char **p, const char *end, const char *lit)
{
	size_t l = strlen(lit);
	if ((size_t)(end - *p) < l || memcmp(*p, lit, l) != 0)
		return -EINVAL;
	*p += l;
	return 0;
}

/* PHC string as libargon2 and OpenLDAP's pw-argon2 write it:
 * $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>, base64 without
 * padding; v= is absent in version 1.0 strings. Parsed here rather than by
 * argon2_verify so the cost limits apply before any memory is allocated. */
static int verify_argon2(const char *v, size_t n, const uint8_t *pw, size_t pw_len)
{
	const char *s = v, *end = v + n;
	argon2_type type;
	if (expect(&s, end, "$argon2id$") == 0)
		type = Argon2_id;
	else if (expect(&s, end, "$argon2i$") == 0)
		type = Argon2_i;
	else if (expect(&s, end, "$argon2d$") == 0)
		return -ENOTSUP; /* data-dependent: not for passwords */
	else
		return -EINVAL;

	uint32_t ver = ARGON2_VERSION_10, m, t, p;
	if (expect(&s, end, "v=") == 0) {
		if (parse_u32(&s, end, &ver) || (ver != ARGON2_VERSION_10 && ver != ARGON2_VERSION_13) ||
		    expect(&s, end, "$"))
			return -EINVAL;
	}
	if (expect(&s, end, "m=") || parse_u32(&s, end, &m) || expect(&s, end, ",t=") ||
	    parse_u32(&s, end, &t) || expect(&s, end, ",p=") || parse_u32(&s, end, &p) ||
	    expect(&s, end, "$"))
		return -EINVAL;
	if (t < 1 || p < 1 || p > ARGON2_P_MAX || m < 8 * p || m > ARGON2_M_MAX ||
	    (uint64_t)m * t > ARGON2_MT_MAX)
		return -EINVAL;

	const char *d = memchr(s, '$', (size_t)(end - s));
	if (d == NULL)
		return -EINVAL;
	uint8_t salt[ARGON2_SALT_MAX], want[ARGON2_HASH_MAX], h[ARGON2_HASH_MAX];
	ssize_t sl = b64_decode(s, (size_t)(d - s), salt, sizeof(salt), B64_PAD_NONE);
	ssize_t hl = b64_decode(d + 1, (size_t)(end - d - 1), want, sizeof(want), B64_PAD_NONE);
	if (sl < (ssize_t)ARGON2_MIN_SALT_LENGTH || hl < (ssize_t)ARGON2_MIN_OUTLEN)
		return -EINVAL;
	if (pw_len > ARGON2_MAX_PWD_LENGTH)
		return -EACCES;

	int rc, ar = argon2_hash(t, m, p, pw, pw_len, salt, (size_t)sl, h, (size_t)hl, NULL, 0, type,
				 ver);
	if (ar == ARGON2_OK)
		rc = lfe_ct_equal(h, want, (size_t)hl) && pw_len ? 0 : -EACCES;
	else if (ar == ARGON2_MEMORY_ALLOCATION_ERROR || ar == ARGON2_THREAD_FAIL)
		rc = -ENOMEM;
	else
		rc = -EINVAL;
	explicit_bzero(h, sizeof(h));
	return rc;
}

/* ---- public ------------------------------------------------------------- */

int lfe_pw_verify(const char *stored, size_t stored_len, const uint8_t *pw, size_t pw_len,
		  unsigned flags)
{
	if (stored == NULL || (pw == NULL && pw_len))
		return -EINVAL;
	if (pw == NULL)
		pw = (const uint8_t *)"";
	size_t pl = prefix_len(stored, stored_len);
	if (pl == 0)
		return flags & LFE_PW_ALLOW_CLEARTEXT ? verify_clear(stored, stored_len, pw, pw_len)
						      : -ENOTSUP;
	const struct pw_scheme *sc = scheme_find(stored + 1, pl - 2);
	if (sc == NULL)
		return -ENOTSUP;
	const char *v = stored + pl;
	size_t n = stored_len - pl;
	switch (sc->kind) {
	case K_SHA:
	case K_SSHA: return verify_sha(sc, v, n, pw, pw_len);
	case K_CRYPT: return verify_crypt(v, n, pw, pw_len);
	case K_PBKDF2: return verify_pbkdf2(sc, v, n, pw, pw_len);
	case K_PBKDF2_389: return verify_pbkdf2_389(v, n, pw, pw_len);
	case K_ARGON2: return verify_argon2(v, n, pw, pw_len);
	default:
		return flags & LFE_PW_ALLOW_CLEARTEXT ? verify_clear(v, n, pw, pw_len) : -ENOTSUP;
	}
}

enum lfe_pw_class lfe_pw_class_of(const char *stored, size_t stored_len)
{
	size_t pl = stored ? prefix_len(stored, stored_len) : 0;
	const struct pw_scheme *sc = pl ? scheme_find(stored + 1, pl - 2) : NULL;
	if (sc == NULL)
		return LFE_PW_FAST;
	switch (sc->kind) {
	case K_CRYPT:
	case K_PBKDF2:
	case K_PBKDF2_389:
	case K_ARGON2: return LFE_PW_SLOW;
	default: return LFE_PW_FAST;
	}
}

/* 389-ds legacy dummy: 8192 iterations (its built-in default), salt and hash
 * of the dummy password; kept apart because the value is 432 characters. */
static const char ds389_dummy[] =
	"{PBKDF2_SHA256}AAAgAG6N0hUG4H1anplJOlF1jZ0SkNOvLOU0LQ5qXuTYWwuGSRAmFidWS1pi4f3vc"
	"sRyJU1D/hYrK/JiiUwP0hT3rVRr6It8/86u3dBC1g+7TZTWtGSfCxrJDoRZVVx3Mn4DyN4yndXEtfjkr"
	"E4BtET9/ysq78vDnaK6g/kgoSC4wa9nWHqlBa3S9iffJY0Gs92w2uWs7vHmIX0asiOMf2B8eb06guocw"
	"gFps7dQy9riUNjY3+n31+4bgnuO1Ekb12Jv6DqgjLlqqTvGeqDL6iUjRzJYRJX9Rm334GqKnooUOCLy1"
	"wm24cMLdxlud1MkI3oPJFd+B4wzW3zOjK41HVrUN5wtfJutO5Xd8vXkn8EMH/Cs/1r+Ax3HXeTcRsIqL"
	"P3BVznhhbRdUjaj6AJ6qL56eNSYokO4mSh1azyjfiBIbSaD";

int lfe_pw_dummy_verify(const char *scheme, const uint8_t *pw, size_t pw_len)
{
	const char *value = pw_schemes[0].dummy;
	size_t slen = scheme ? strnlen(scheme, 4096) : 0;
	size_t pl = scheme ? prefix_len(scheme, slen) : 0;
	if (pl && pl < slen) {
		/* A full stored value: mirror its own parameters (a store whose
		 * PBKDF2 values use 10k iterations should not pay 100k for the
		 * unknown DNs, nor the other way round). */
		value = scheme;
	} else if (pl) {
		const struct pw_scheme *sc = scheme_find(scheme + 1, pl - 2);
		if (sc)
			value = sc->kind == K_PBKDF2_389 ? ds389_dummy : sc->dummy;
	}
	if (pw == NULL && pw_len)
		pw_len = 0;
	(void)lfe_pw_verify(value, value == scheme ? slen : strlen(value), pw, pw_len,
			    LFE_PW_ALLOW_CLEARTEXT);
	return -EACCES;
}

ssize_t lfe_pw_scheme_name(const char *stored, size_t stored_len, char *out, size_t cap)
{
	size_t pl = stored ? prefix_len(stored, stored_len) : 0;
	const struct pw_scheme *sc = pl ? scheme_find(stored + 1, pl - 2) : NULL;
	char tmp[PW_SCHEME_NAME_MAX + 3];
	size_t n;
	if (pl == 0) {
		memcpy(tmp, "{CLEARTEXT}", n = 11);
	} else if (sc) {
		tmp[0] = '{';
		memcpy(tmp + 1, sc->name, sc->len);
		tmp[sc->len + 1] = '}';
		n = sc->len + 2u;
	} else {
		for (n = 0; n < pl; n++) {
			char c = stored[n];
			tmp[n] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
		}
	}
	if (out == NULL || cap <= n)
		return -ENOSPC;
	memcpy(out, tmp, n);
	out[n] = '\0';
	return (ssize_t)n;
}

/* ---- hashing ------------------------------------------------------------ */

static ssize_t put_prefix(const struct pw_scheme *sc, char *out, size_t cap, size_t body)
{
	if (cap < (size_t)sc->len + 3 + body)
		return -ENOSPC;
	out[0] = '{';
	memcpy(out + 1, sc->name, sc->len);
	out[sc->len + 1] = '}';
	return sc->len + 2;
}

static ssize_t hash_ssha(const struct pw_scheme *sc, const uint8_t *pw, size_t pw_len, char *out,
			 size_t cap)
{
	uint8_t raw[SHA512_DIGEST_LENGTH + HASH_SSHA_SALT];
	size_t dl = dig_len(sc->dig);
	ssize_t o = put_prefix(sc, out, cap, b64_len(dl + HASH_SSHA_SALT, true));
	if (o < 0)
		return o;
	if (RAND_bytes(raw + dl, HASH_SSHA_SALT) != 1)
		return -EIO;
	dig2(sc->dig, pw, pw_len, raw + dl, HASH_SSHA_SALT, raw);
	o += (ssize_t)b64_encode(raw, dl + HASH_SSHA_SALT, out + o, false);
	out[o] = '\0';
	explicit_bzero(raw, sizeof(raw));
	return o;
}

static ssize_t hash_crypt(const struct pw_scheme *sc, const uint8_t *pw, size_t pw_len, char *out,
			  size_t cap)
{
	if (pw_len >= CRYPT_MAX_PASSPHRASE_SIZE || memchr(pw, '\0', pw_len))
		return -ENOTSUP; /* crypt cannot represent it */
	uint8_t rnd[16];
	char setting[CRYPT_GENSALT_OUTPUT_SIZE], phrase[CRYPT_MAX_PASSPHRASE_SIZE];
	struct crypt_data cd;
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return -EIO;
	if (crypt_gensalt_rn("$6$", 0, (const char *)rnd, sizeof(rnd), setting, sizeof(setting)) == NULL)
		return -EIO;
	memcpy(phrase, pw, pw_len);
	phrase[pw_len] = '\0';
	memset(&cd, 0, sizeof(cd));
	ssize_t o;
	const char *h = crypt_rn(phrase, setting, &cd, (int)sizeof(cd));
	if (h == NULL || h[0] == '*') {
		o = -EIO;
	} else {
		size_t hl = strlen(h);
		o = put_prefix(sc, out, cap, hl);
		if (o >= 0) {
			memcpy(out + o, h, hl + 1);
			o += (ssize_t)hl;
		}
	}
	explicit_bzero(&cd, sizeof(cd));
	explicit_bzero(phrase, sizeof(phrase));
	return o;
}

static ssize_t hash_pbkdf2(const struct pw_scheme *sc, const uint8_t *pw, size_t pw_len, char *out,
			   size_t cap)
{
	uint8_t salt[HASH_PBKDF2_SALT], dk[SHA512_DIGEST_LENGTH];
	size_t dl = dig_len(sc->dig);
	char num[12];
	int nl = snprintf(num, sizeof(num), "%u$", HASH_PBKDF2_ITER);
	ssize_t o = put_prefix(sc, out, cap,
			       (size_t)nl + b64_len(sizeof(salt), false) + 1 + b64_len(dl, false));
	if (o < 0)
		return o;
	if (RAND_bytes(salt, sizeof(salt)) != 1)
		return -EIO;
	if (pbkdf2_run(sc->dig, pw, pw_len, salt, sizeof(salt), HASH_PBKDF2_ITER, dk, dl))
		return -EIO;
	memcpy(out + o, num, (size_t)nl);
	o += nl;
	o += (ssize_t)b64_encode(salt, sizeof(salt), out + o, true);
	out[o++] = '$';
	o += (ssize_t)b64_encode(dk, dl, out + o, true);
	out[o] = '\0';
	explicit_bzero(dk, sizeof(dk));
	return o;
}

static ssize_t hash_argon2(const struct pw_scheme *sc, const uint8_t *pw, size_t pw_len, char *out,
			   size_t cap)
{
	uint8_t salt[HASH_ARGON2_SALT];
	size_t el = argon2_encodedlen(HASH_ARGON2_T, HASH_ARGON2_M, HASH_ARGON2_P, sizeof(salt),
				      HASH_ARGON2_LEN, Argon2_id);
	ssize_t o = put_prefix(sc, out, cap, el - 1);
	if (o < 0)
		return o;
	if (pw_len > ARGON2_MAX_PWD_LENGTH)
		return -ENOTSUP;
	if (RAND_bytes(salt, sizeof(salt)) != 1)
		return -EIO;
	int ar = argon2id_hash_encoded(HASH_ARGON2_T, HASH_ARGON2_M, HASH_ARGON2_P, pw, pw_len, salt,
				       sizeof(salt), HASH_ARGON2_LEN, out + o, cap - (size_t)o);
	if (ar != ARGON2_OK)
		return ar == ARGON2_ENCODING_FAIL ? -ENOSPC : -EIO;
	return o + (ssize_t)strlen(out + o);
}

ssize_t lfe_pw_hash(const char *scheme, const uint8_t *pw, size_t pw_len, char *out, size_t cap)
{
	if (scheme == NULL || out == NULL || (pw == NULL && pw_len))
		return -EINVAL;
	if (pw == NULL)
		pw = (const uint8_t *)"";
	size_t slen = strnlen(scheme, PW_SCHEME_NAME_MAX + 3);
	size_t pl = prefix_len(scheme, slen);
	const struct pw_scheme *sc = pl == slen && pl ? scheme_find(scheme + 1, pl - 2) : NULL;
	if (sc == NULL)
		return -ENOTSUP;
	switch (sc->kind) {
	case K_SSHA: return hash_ssha(sc, pw, pw_len, out, cap);
	case K_CRYPT: return hash_crypt(sc, pw, pw_len, out, cap);
	case K_PBKDF2: return hash_pbkdf2(sc, pw, pw_len, out, cap);
	case K_ARGON2: return hash_argon2(sc, pw, pw_len, out, cap);
	default: return -ENOTSUP; /* unsalted and cleartext are for import only */
	}
}
