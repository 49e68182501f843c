/* gen/dist.c — see dist.h. The rejection-inversion sampler follows the
 * formulation of Apache Commons RNG's RejectionInversionZipfSampler
 * (h(x) = x^-s, H its integral, with the expm1/log1p helpers that keep
 * s near 1 exact). */
#include "gen/dist.h"

#include <errno.h>
#include <math.h>

/* log1p(x)/x, continuous at 0. */
static double helper1(double x)
{
	return fabs(x) > 1e-8 ? log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

/* expm1(x)/x, continuous at 0. */
static double helper2(double x)
{
	return fabs(x) > 1e-8 ? expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

static double h(double s, double x)
{
	return exp(-s * log(x));
}

/* H(x) = ((x^(1-s)) - 1) / (1 - s), or log(x) for s = 1. */
static double h_int(double s, double x)
{
	double lx = log(x);
	return helper2((1.0 - s) * lx) * lx;
}

static double h_int_inv(double s, double x)
{
	double t = x * (1.0 - s);
	if (t < -1.0)
		t = -1.0;   /* rounding at the lower end */
	return exp(helper1(t) * x);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

int lfe_gen_dist_init(struct lfe_gen_dist *d, enum lfe_gen_dist_kind kind, uint32_t n, double s)
{
	if (n == 0 || (kind == LFE_DIST_ZIPF && !(s > 0 && s <= 100)) ||
	    (kind != LFE_DIST_ZIPF && kind != LFE_DIST_UNIFORM))
		return -EINVAL;
	*d = (struct lfe_gen_dist){ .kind = kind, .n = n, .s = s, .stride = 1 };
	if (kind == LFE_DIST_ZIPF) {
		d->h_x1 = h_int(s, 1.5) - 1.0;
		d->h_n = h_int(s, (double)n + 0.5);
		d->cut = 2.0 - h_int_inv(s, h_int(s, 2.5) - h(s, 2.0));
		/* A stride near n/φ coprime to n: consecutive ranks land far apart. */
		uint64_t st = (uint64_t)((double)n * 0.6180339887498949) | 1u;
		while (n > 1 && gcd64(st, n) != 1)
			st++;
		d->stride = n > 1 ? st % n : 0;
		d->offset = n / 3u;
	}
	return 0;
}

uint32_t lfe_gen_dist_rank(const struct lfe_gen_dist *d, uint64_t (*next)(void *), void *rng)
{
	if (d->kind == LFE_DIST_UNIFORM)
		return lfe_gen_dist_rank_uniform(d, next(rng));
	for (;;) {
		/* 53 random bits → [0, 1). */
		double r = (double)(next(rng) >> 11) * 0x1.0p-53;
		double u = d->h_n + r * (d->h_x1 - d->h_n);
		double x = h_int_inv(d->s, u);
		double kd = floor(x + 0.5);
		if (kd < 1.0)
			kd = 1.0;
		else if (kd > (double)d->n)
			kd = (double)d->n;
		if (kd - x <= d->cut || u >= h_int(d->s, kd + 0.5) - h(d->s, kd))
			return (uint32_t)kd;
	}
}
