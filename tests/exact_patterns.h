/* Adversarial inputs for the exact sums, written as raw element bits of any float dtype:
 * every exponent, cancellation to zero, huge cancellations, rounding ties and near-ties,
 * subnormals, overflow, NaN and infinity mixes, signed zeros. */
#ifndef CUREDUCE_TEST_EXACT_PATTERNS_H
#define CUREDUCE_TEST_EXACT_PATTERNS_H

#include "test_util.h"

typedef enum ex_pattern {
  EX_UNIFORM,        /* uniform [-1, 1): the common case */
  EX_ALL_EXPONENTS,  /* random finite bits: every exponent and sign, subnormals included */
  EX_RANDOM_BITS,    /* random bits: NaN and infinities too */
  EX_CANCEL,         /* x and -x for random finite x, in random order: the sum is exactly zero */
  EX_HUGE_CANCEL,    /* +-the largest finite value alternating, with small values between */
  EX_TIES,           /* integers near the output's precision: many sums fall on a midpoint */
  EX_NEAR_TIES,      /* the same plus one smallest subnormal: just off the midpoint */
  EX_SUBNORMALS,     /* subnormals only */
  EX_OVERFLOW,       /* the largest finite value, repeated: overflows every format's range */
  EX_INF_NAN,        /* finite values with +inf, -inf and NaN sprinkled in */
  EX_NEG_ZEROS,      /* -0.0 only: the sum is -0.0 */
  EX_SIGNED_ZEROS,   /* -0.0 and +0.0: the sum is +0.0 */
  EX_MAGNITUDE_RUNS, /* runs of 16 KiB, each of one of three magnitudes far apart */
  EX_PATTERN_COUNT
} ex_pattern;

static const char *const EX_PATTERN_NAMES[EX_PATTERN_COUNT] = {
    "uniform",    "all-exponents", "random-bits", "cancel",    "huge-cancel",  "ties",          "near-ties",
    "subnormals", "overflow",      "inf-nan",     "neg-zeros", "signed-zeros", "magnitude-runs"};

/* The layout of a float dtype's bits. */
typedef struct ex_format {
  int bits, ebits;
} ex_format;

static inline ex_format ex_format_of(cureduce_dtype d) {
  switch (d) {
  case CUREDUCE_F64: return (ex_format){64, 11};
  case CUREDUCE_F32: return (ex_format){32, 8};
  case CUREDUCE_F16: return (ex_format){16, 5};
  case CUREDUCE_BF16: return (ex_format){16, 8};
  case CUREDUCE_F8_E4M3: return (ex_format){8, 4};
  default: return (ex_format){8, 5}; /* e5m2 */
  }
}

static inline uint64_t ex_mask(int bits) { return bits == 64 ? ~0ull : (1ull << bits) - 1; }

/* Whether raw bits u are finite in d (e4m3: all but S.1111.111). */
static inline int ex_finite(cureduce_dtype d, uint64_t u) {
  const ex_format f = ex_format_of(d);
  const int fbits = f.bits - 1 - f.ebits;
  const uint64_t e = (u >> fbits) & ex_mask(f.ebits);
  if (d == CUREDUCE_F8_E4M3)
    return (u & 0x7f) != 0x7f;
  return e != ex_mask(f.ebits);
}

static inline uint64_t ex_sign(cureduce_dtype d) { return 1ull << (ex_format_of(d).bits - 1); }

/* The largest finite value's bits. */
static inline uint64_t ex_max_finite(cureduce_dtype d) {
  if (d == CUREDUCE_F8_E4M3)
    return 0x7e;
  const ex_format f = ex_format_of(d);
  const int fbits = f.bits - 1 - f.ebits;
  return ((ex_mask(f.ebits) - 1) << fbits) | ex_mask(fbits);
}

static inline uint64_t ex_random_finite(cureduce_dtype d, uint64_t *rng) {
  const uint64_t mask = ex_mask(ex_format_of(d).bits);
  for (;;) {
    const uint64_t u = tu_next(rng) & mask;
    if (ex_finite(d, u))
      return u;
  }
}

static inline void ex_store(cureduce_dtype d, void *p, uint64_t i, uint64_t u) {
  switch (ex_format_of(d).bits) {
  case 64: memcpy((char *)p + 8 * i, &u, 8); break;
  case 32: {
    const uint32_t v = (uint32_t)u;
    memcpy((char *)p + 4 * i, &v, 4);
    break;
  }
  case 16: {
    const uint16_t v = (uint16_t)u;
    memcpy((char *)p + 2 * i, &v, 2);
    break;
  }
  default: ((uint8_t *)p)[i] = (uint8_t)u; break;
  }
}

/* x rounded into d's bits (through cureduce_from_double; fp8 saturates). */
static inline uint64_t ex_bits_of(cureduce_dtype d, double x) {
  uint64_t u = 0;
  (void)cureduce_from_double(d, x, &u);
  return u;
}

/* n elements of pattern pat in d at p (host memory). */
static inline void ex_fill(cureduce_dtype d, void *p, uint64_t n, ex_pattern pat, uint64_t *rng) {
  const uint64_t sign = ex_sign(d), maxf = ex_max_finite(d);
  const ex_format f = ex_format_of(d);
  const int fbits = f.bits - 1 - f.ebits;
  /* Integers up to 2^(p + 2) for the ties, p the input's precision (so the sums pass the
     precision of every output narrower than the input or equal to it). */
  const double tie_range = ldexp(1.0, fbits + 3);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t u = 0;
    const double r = tu_uniform(rng);
    switch (pat) {
    case EX_UNIFORM: u = ex_bits_of(d, 2 * r - 1); break;
    case EX_ALL_EXPONENTS: u = ex_random_finite(d, rng); break;
    case EX_RANDOM_BITS: u = tu_next(rng) & ex_mask(f.bits); break;
    case EX_CANCEL: u = ex_random_finite(d, rng); break; /* negated copies placed below */
    case EX_HUGE_CANCEL:
      u = i % 3 == 2 ? ex_random_finite(d, rng) & ~(ex_mask(f.ebits - 1) << (fbits + 1))
                     : maxf | (i % 6 < 3 ? sign : 0);
      break;
    case EX_TIES:
    case EX_NEAR_TIES: u = ex_bits_of(d, floor((2 * r - 1) * tie_range)); break;
    case EX_SUBNORMALS: u = (tu_next(rng) & ex_mask(fbits)) | (tu_next(rng) & 1 ? sign : 0); break;
    case EX_OVERFLOW: u = maxf; break;
    case EX_INF_NAN: {
      const uint64_t k = tu_next(rng) % 1000;
      u = k == 0   ? ex_bits_of(d, INFINITY)
          : k == 1 ? ex_bits_of(d, -INFINITY)
          : k == 2 ? ex_bits_of(d, NAN)
                   : ex_random_finite(d, rng);
      break;
    }
    case EX_NEG_ZEROS: u = sign; break;
    case EX_MAGNITUDE_RUNS: {
      /* 2^(e/2), 1 or 2^(-e/2), e the largest exponent: a thread's tile of one run sums into
         a pair of doubles, the three magnitudes together do not (f32, bf16, f64), so the
         pairs push when teams and blocks add them up, not before */
      const int e = (int)ex_mask(f.ebits - 1), run = (int)((i * (uint64_t)(f.bits / 8)) / 16384 % 3);
      u = ex_bits_of(d, ldexp((r < 0.5 ? -1 : 1) * (1 + tu_uniform(rng)), (1 - run) * (e / 2)));
      break;
    }
    default: u = tu_next(rng) & 1 ? sign : 0; break; /* EX_SIGNED_ZEROS */
    }
    ex_store(d, p, i, u);
  }
  if (pat == EX_CANCEL) { /* the second half negates the first, in a shuffled order */
    const uint64_t half = n / 2;
    for (uint64_t i = 0; i < half; ++i) {
      uint64_t u = 0;
      memcpy(&u, (char *)p + (size_t)(f.bits / 8) * i, (size_t)f.bits / 8);
      ex_store(d, p, n - 1 - ((i * 7919) % half), u ^ sign);
    }
    if (n % 2)
      ex_store(d, p, half, 0);
  }
  if (pat == EX_NEAR_TIES && n > 0)
    ex_store(d, p, n / 2, 1 | (tu_next(rng) & 1 ? sign : 0)); /* the smallest subnormal */
}

#endif
