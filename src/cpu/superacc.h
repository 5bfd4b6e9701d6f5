/* A superaccumulator: a fixed-point integer wide enough to hold any sum of doubles exactly.
 *
 * Bit 0 of limb 0 weighs 2^-1074 (the smallest subnormal double), and the limbs reach past
 * 2^1024 with 64 bits to spare for carries, so the sum of up to 2^64 doubles is exact.
 * Each limb holds a 32-bit digit in an int64, so additions need no carry propagation until
 * 2^29 of them have been made (each adds less than 2^33 to a limb). */
#ifndef CUREDUCE_CPU_SUPERACC_H
#define CUREDUCE_CPU_SUPERACC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SA_LIMBS 72
#define SA_LIMB_BITS 32
#define SA_LSB_EXP (-1074)

typedef struct superacc {
  int64_t limb[SA_LIMBS];
  uint32_t adds_since_normalize;
  int nan, pos_inf, neg_inf;
  int only_negative_zeros; /* every value added so far was -0.0 (IEEE: their sum is -0.0) */
  uint64_t count;
} superacc;

void sa_init(superacc *sa);

/* Add x exactly (NaN and inf are recorded). */
void sa_add(superacc *sa, double x);

/* The sum rounded to nearest even once, to `precision` significant bits, with no bit below
   2^lsb_min_exp (subnormals) and overflow to inf above max_finite. For double:
   (53, -1074, DBL_MAX); for float: (24, -149, FLT_MAX). */
double sa_round(const superacc *sa, int precision, int lsb_min_exp, double max_finite);

#ifdef __cplusplus
}
#endif

#endif
