/* Helpers shared by the tests: a seeded random stream (the seed is printed so a failure can be
 * replayed with CUREDUCE_TEST_SEED=...), data patterns, and the GPU skip rule. */
#ifndef CUREDUCE_TEST_UTIL_H
#define CUREDUCE_TEST_UTIL_H

#include "cureduce.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CTest treats this exit code as "skipped" (SKIP_RETURN_CODE). */
#define TEST_SKIP_CODE 77

static inline uint64_t tu_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double tu_uniform(uint64_t *state) { return (double)(tu_next(state) >> 11) * 0x1.0p-53; }

/* The run's seed: CUREDUCE_TEST_SEED if set, else the clock. Printed once. */
static inline uint64_t tu_seed(void) {
  static uint64_t seed;
  static int have;
  if (!have) {
    const char *env = getenv("CUREDUCE_TEST_SEED");
    seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    have = 1;
    printf("# random seed %llu (replay with CUREDUCE_TEST_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
  }
  return seed;
}

static inline int tu_is_float(cureduce_dtype d) {
  return d != CUREDUCE_I8 && d != CUREDUCE_I32 && d != CUREDUCE_I64;
}

/* Data patterns. */
typedef enum tu_pattern {
  TU_INTEGERS,  /* small integers: every float sum is exact while partials stay small */
  TU_RANDOM,    /* uniform [-1, 1) for floats; wide range for integers */
  TU_SPECIALS,  /* random, with NaN, +-inf, -0.0 and subnormals sprinkled in (floats) */
  TU_NEG_ZEROS, /* all -0.0 (floats) */
  TU_CONSTANT,  /* one value repeated */
  TU_SPREAD     /* random signs and exponents over the float input's range, subnormals in */
} tu_pattern;

/* The exponents TU_SPREAD draws for a float dtype: from its smallest subnormal's up to one
   below its largest finite value's (the wide ones capped at 2^+-30, so sums stay finite). */
static inline void tu_spread_exponents(cureduce_dtype d, int *lo, int *hi) {
  switch (d) {
  case CUREDUCE_F16: *lo = -24, *hi = 14; break;
  case CUREDUCE_F8_E5M2: *lo = -16, *hi = 14; break;
  case CUREDUCE_F8_E4M3: *lo = -9, *hi = 7; break;
  default: *lo = -30, *hi = 30; break;
  }
}

/* Fill n elements of dtype at p with pattern; `small` bounds integer magnitudes. */
static inline void tu_fill(cureduce_dtype d, void *p, uint64_t n, tu_pattern pat, int small, uint64_t *rng) {
  const size_t size = cureduce_dtype_size(d);
  for (uint64_t i = 0; i < n; ++i) {
    double x;
    const double u = tu_uniform(rng);
    switch (pat) {
    case TU_INTEGERS: x = floor(u * (2 * small + 1)) - small; break;
    case TU_RANDOM:
      if (d == CUREDUCE_I8)
        x = floor(u * 256) - 128;
      else if (!tu_is_float(d))
        x = floor(u * 2e9) - 1e9;
      else
        x = 2 * u - 1;
      break;
    case TU_SPECIALS: {
      const uint64_t r = tu_next(rng) % 64;
      x = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : r == 3 ? -0.0 : r == 4 ? 1e-40 : 2 * u - 1;
      break;
    }
    case TU_NEG_ZEROS: x = -0.0; break;
    case TU_SPREAD: {
      int lo, hi;
      tu_spread_exponents(d, &lo, &hi);
      const int e = lo + (int)(tu_next(rng) % (uint64_t)(hi - lo + 1));
      x = ldexp((tu_next(rng) & 1 ? -1 : 1) * (1 + u), e);
      break;
    }
    default: x = 3; break;
    }
    (void)cureduce_from_double(d, x, (char *)p + i * size);
  }
}

/* Bitwise or NaN-equal comparison of two values of dtype. */
static inline int tu_same_value(cureduce_dtype d, const void *a, const void *b) {
  double x, y;
  (void)cureduce_to_double(d, a, &x);
  (void)cureduce_to_double(d, b, &y);
  if (isnan(x) || isnan(y))
    return isnan(x) && isnan(y);
  if (tu_is_float(d))
    return x == y && signbit(x) == signbit(y);
  return memcmp(a, b, cureduce_dtype_size(d)) == 0;
}

#endif
