/* tests/bench/bench_pwscheme.c — cost of one lfe_pw_verify per scheme: the
 * median of 5 runs of thread CPU time, ns for the fast class and ms for the
 * slow one. The figures
 * back the fast/slow threshold documented at the top of backend/pwscheme.c.
 *
 *   bench_pwscheme [scale]   scale multiplies the iteration counts (default 1)
 */
#include "backend/pwscheme.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 5

/* Thread CPU time: the cost of a verification is the CPU it takes, and other
 * processes on the machine then do not inflate it. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct row {
	const char *label;
	const char *value; /* stored value, or NULL: lfe_pw_hash(gen) */
	const char *gen;
};

/* Values from tests/backend/pw-vectors.txt (password "secret") for the
 * schemes lfe_pw_hash does not write, and at the parameters their producers
 * use by default. */
static const struct row rows[] = {
	{ "{SHA}", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", NULL },
	{ "{SSHA} (4-byte salt)", "{SSHA}4dvFtXHglEirsMSdN7NkDyrqntwV2GSv", NULL },
	{ "{SSHA} (lfe_pw_hash)", NULL, "{SSHA}" },
	{ "{SHA256}", "{SHA256}K7gNU3sdo+OL0wNhqoVWhr3g6s1xYv72ol/pe/Unols=", NULL },
	{ "{SSHA256}", NULL, "{SSHA256}" },
	{ "{SHA384}", "{SHA384}WKd1ukESvjAFrkQHznV9iP2nHUBJe7gCbsrFTU4//HIyzo3jq1rLMK45dg/ufFPt", NULL },
	{ "{SSHA384}", NULL, "{SSHA384}" },
	{ "{SHA512}",
	  "{SHA512}vSsar3708Jvp9Szi2NWZZ02Bqp1qRCFpbcTZPdBhnWgs5WtNZKnvCXdhztmeD2cmW192CF5bDufKRpayrW/isg==",
	  NULL },
	{ "{SSHA512}", NULL, "{SSHA512}" },
	{ "{CLEARTEXT}", "{CLEARTEXT}secret", NULL },
	{ "{CRYPT}$1$ md5crypt", "{CRYPT}$1$paq.frIM$G/6v/0.SqeIufG5UhPiXi/", NULL },
	{ "{CRYPT}$5$ 5000", "{CRYPT}$5$f13ic.3eFrYjgoAU$j8DRObEL3bSauKX8YMSLpnl/qV/uRN6I1vbNr4/szI8", NULL },
	{ "{CRYPT}$6$ 5000", NULL, "{CRYPT}" },
	{ "{CRYPT}$2b$05$", "{CRYPT}$2b$05$9bhrR4v4Nb1g8RRdXHDHhuMj.RU53lT5arAK3q1crR8URsW3TiCIy", NULL },
	{ "{CRYPT}$y$j9T$", "{CRYPT}$y$j9T$avkA/v2iBYY0WVgwEPIOo/$Yzdg44hBJ1bV1Cgs/7Agro/i2ms2PmGGotK4a0ppWV5",
	  NULL },
	{ "{PBKDF2-SHA1} 10k", "{PBKDF2-SHA1}10000$0d4k7eDBk3WG9AylgRWi4w$Dq0GKldr/D1YWfIEtCWERDYkZQk", NULL },
	{ "{PBKDF2-SHA256} 10k",
	  "{PBKDF2-SHA256}10000$FBPS5Thys22JCq0aVdG/LQ$FY8Ddgm2GOcAqHqdfiAc3FRTrwjP8c4o35OgxmeRGfI", NULL },
	{ "{PBKDF2-SHA512} 10k",
	  "{PBKDF2-SHA512}10000$sIXQba2jhG2RBljKS3zhkg$oYCkH2y6/rR0vcxk6p6Ba655JreUC1vpJ1mC4qVA2gjh.KBk0mAADDuDOB6VbGn.UKzPC1F3NtvLzd6Lkez2uw",
	  NULL },
	{ "{PBKDF2-SHA1} 100k", NULL, "{PBKDF2-SHA1}" },
	{ "{PBKDF2-SHA256} 100k", NULL, "{PBKDF2-SHA256}" },
	{ "{PBKDF2-SHA512} 100k", NULL, "{PBKDF2-SHA512}" },
	{ "{PBKDF2_SHA256} 389 8192",
	  "{PBKDF2_SHA256}AAAgAAAh9tDEapnvs19cD4xza/y8xXBP58OYeilpgSkRRpCkWJemFixNy68G8nsw9scx8bNe4bv"
	  "R1xRtIOmh9QRwKAlVpoXyn+5b6aowWpb3xTJGO64Bu9e434kclZjHv9FmwMM8fjo0iN7M8z1xiRPpTSnKOyb3gVgF1"
	  "W8PFsCRrJCR3KX5s2vtPhlA0fSAsvDtFGfc+y0TK49XVaXoUI9Nr/KiEJlQ1AWWdeLvwQpvArOVPaWPS3XsYquLUtq"
	  "F0wt3q9pnXaum84N4nbBDSfjIgsjBTSgQiiTDwz+npk7HSUNpwzvJWlMxfv6unD6WCvXdYXtnP3Ahqoo7Clp966rXy"
	  "s2VYtKR7Po725Nfgrdr7PK4Uiqp0VIMzU2dIlnYNBzUGDIm2E5swgexT0LzmOqEhksXyah4JNbeVByFrRJ+A2dY",
	  NULL },
	{ "{ARGON2} i m=4M t=3", "{ARGON2}$argon2i$v=19$m=4096,t=3,p=1$VVEwUmlwQmhWb0JlOE9RRA$ps1ly2mKOjGzM2SJ5+ebQqCJVh405lElSag7uQNnNSs",
	  NULL },
	{ "{ARGON2} id m=19M t=2", NULL, "{ARGON2}" },
};

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	if (scale <= 0)
		scale = 1.0;
	static const uint8_t pw[] = "secret";
	printf("CPU time per lfe_pw_verify, median of %d runs\n", RUNS);
	printf("%-26s %6s %12s %12s %12s\n", "scheme", "class", "median", "min", "max");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[600];
		const char *v = rows[i].value;
		if (v == NULL) {
			if (lfe_pw_hash(rows[i].gen, pw, sizeof(pw) - 1, buf, sizeof(buf)) < 0) {
				fprintf(stderr, "hash %s failed\n", rows[i].gen);
				return 1;
			}
			v = buf;
		}
		size_t vl = strlen(v);
		enum lfe_pw_class cls = lfe_pw_class_of(v, vl);
		int rc = lfe_pw_verify(v, vl, pw, sizeof(pw) - 1, LFE_PW_ALLOW_CLEARTEXT);
		if (rc != 0) {
			fprintf(stderr, "%s: verify %d\n", rows[i].label, rc);
			return 1;
		}
		/* Calibrate so one run lasts about 50 ms. */
		long iters = 1;
		double t0 = now();
		(void)lfe_pw_verify(v, vl, pw, sizeof(pw) - 1, LFE_PW_ALLOW_CLEARTEXT);
		double one = now() - t0;
		if (one < 0.05)
			iters = (long)(0.05 / (one > 1e-8 ? one : 1e-8));
		iters = (long)((double)iters * scale);
		if (iters < 1)
			iters = 1;

		double per[RUNS];
		for (int r = 0; r < RUNS; r++) {
			double t = now();
			for (long k = 0; k < iters; k++)
				(void)lfe_pw_verify(v, vl, pw, sizeof(pw) - 1, LFE_PW_ALLOW_CLEARTEXT);
			per[r] = (now() - t) / (double)iters;
		}
		qsort(per, RUNS, sizeof(per[0]), cmp_double);
		bool fast = cls == LFE_PW_FAST;
		double u = fast ? 1e9 : 1e3;
		const char *unit = fast ? "ns" : "ms";
		printf("%-26s %6s %9.*f %s %9.*f %s %9.*f %s\n", rows[i].label, fast ? "fast" : "slow",
		       fast ? 0 : 2, per[RUNS / 2] * u, unit, fast ? 0 : 2, per[0] * u, unit,
		       fast ? 0 : 2, per[RUNS - 1] * u, unit);
	}

	/* Dummy verification for unknown DNs, fast schemes. */
	double per[RUNS];
	long iters = (long)(200000 * scale);
	for (int r = 0; r < RUNS; r++) {
		double t = now();
		for (long k = 0; k < iters; k++)
			(void)lfe_pw_dummy_verify("{SSHA}", pw, sizeof(pw) - 1);
		per[r] = (now() - t) / (double)iters;
	}
	qsort(per, RUNS, sizeof(per[0]), cmp_double);
	printf("%-26s %6s %9.0f ns %9.0f ns %9.0f ns\n", "dummy {SSHA}", "fast", per[RUNS / 2] * 1e9,
	       per[0] * 1e9, per[RUNS - 1] * 1e9);
	return 0;
}
