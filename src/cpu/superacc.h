/* A host-side running exact sum: an exact state (common/exact_state.h) that carries its limbs
 * often enough never to overflow them. */
#ifndef CUREDUCE_CPU_SUPERACC_H
#define CUREDUCE_CPU_SUPERACC_H

#include "../common/exact_state.h"

#include <stdint.h>
#include <string.h>

/* Each addition adds less than 2^32 to a limb: 2^29 of them keep a carried limb below 2^62. */
#define SA_CARRY_EVERY (1u << 29)

typedef struct superacc {
  int64_t w[CUREDUCE_EXACT_STATE_WORDS];
  uint32_t adds; /* since the last carry */
} superacc;

static inline void sa_init(superacc *sa) { memset(sa, 0, sizeof *sa); }

/* Carry every limb: afterwards all but the top one are digits in [0, 2^32). */
static inline void sa_carry(superacc *sa) {
  cr_exact_carry(sa->w, 0, CR_EXACT_LIMBS - 1);
  sa->adds = 0;
}

/* Add one element x exactly (NaN and infinities are recorded). */
static inline void sa_add(superacc *sa, double x) {
  cr_exact_add(sa->w, x);
  sa->w[CR_EXACT_COUNT]++;
  if (++sa->adds == SA_CARRY_EVERY)
    sa_carry(sa);
}

/* Add another accumulator's elements. */
static inline void sa_merge(superacc *into, const superacc *from) {
  for (int i = 0; i < CUREDUCE_EXACT_STATE_WORDS; ++i)
    into->w[i] += from->w[i];
  sa_carry(into);
}

/* The sum rounded once to the format of dtype d, as a double. */
static inline double sa_round(const superacc *sa, cureduce_dtype d) {
  return cr_exact_value(sa->w, 0, cr_exact_format_of(d));
}

#endif
