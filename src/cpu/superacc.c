/* The superaccumulator. See superacc.h. */
#include "superacc.h"

#include <math.h>
#include <string.h>

#define DIGIT ((int64_t)1 << SA_LIMB_BITS)
#define NORMALIZE_EVERY (1u << 29)

void sa_init(superacc *sa) {
  memset(sa, 0, sizeof *sa);
  sa->only_negative_zeros = 1;
}

/* Carry-propagate so that every limb but the top one is a digit in [0, 2^32). The value
   sum(limb[i] * 2^(32 i)) is unchanged; the top limb keeps the sign. */
static void normalize(int64_t *limb) {
  for (int i = 0; i < SA_LIMBS - 1; ++i) {
    const int64_t carry = limb[i] >> SA_LIMB_BITS; /* arithmetic shift: floor division */
    limb[i] -= carry * DIGIT;
    limb[i + 1] += carry;
  }
}

void sa_add(superacc *sa, double x) {
  sa->count++;
  if (!(x == 0.0 && signbit(x)))
    sa->only_negative_zeros = 0;
  if (isnan(x)) {
    sa->nan = 1;
    return;
  }
  if (isinf(x)) {
    if (x > 0)
      sa->pos_inf = 1;
    else
      sa->neg_inf = 1;
    return;
  }
  if (x == 0.0)
    return;
  /* |x| = mant * 2^exp, read from the bits: a normal double has the implicit bit and exponent
     field - 1075, a subnormal its fraction at 2^-1074 (SA_LSB_EXP). (frexp and ldexp here
     took a third of the test oracle's time.) */
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  const int field = (int)((bits >> 52) & 0x7ffu);
  uint64_t mant = bits & (((uint64_t)1 << 52) - 1);
  int exp = SA_LSB_EXP;
  if (field != 0) {
    mant |= (uint64_t)1 << 52;
    exp = field - 1075;
  }
  const int offset = exp - SA_LSB_EXP;
  const int k = offset / SA_LIMB_BITS, s = offset % SA_LIMB_BITS;
  const uint64_t lo = (mant & 0xffffffffu) << s; /* < 2^63 */
  const uint64_t hi = (mant >> 32) << s;         /* < 2^52 */
  const int64_t sign = x < 0 ? -1 : 1;
  sa->limb[k] += sign * (int64_t)(lo & 0xffffffffu);
  sa->limb[k + 1] += sign * (int64_t)((lo >> 32) + (hi & 0xffffffffu));
  sa->limb[k + 2] += sign * (int64_t)(hi >> 32);
  if (++sa->adds_since_normalize == NORMALIZE_EVERY) {
    normalize(sa->limb);
    sa->adds_since_normalize = 0;
  }
}

static int bit_at(const int64_t *limb, int pos) {
  return (int)((limb[pos / SA_LIMB_BITS] >> (pos % SA_LIMB_BITS)) & 1);
}

/* Whether any bit below position pos is set. */
static int any_below(const int64_t *limb, int pos) {
  const int k = pos / SA_LIMB_BITS, s = pos % SA_LIMB_BITS;
  for (int i = 0; i < k; ++i)
    if (limb[i])
      return 1;
  return s > 0 && (limb[k] & ((DIGIT - 1) >> (SA_LIMB_BITS - s))) != 0;
}

double sa_round(const superacc *sa, int precision, int lsb_min_exp, double max_finite) {
  if (sa->nan || (sa->pos_inf && sa->neg_inf))
    return NAN;
  if (sa->pos_inf || sa->neg_inf)
    return sa->pos_inf ? INFINITY : -INFINITY;

  int64_t limb[SA_LIMBS];
  memcpy(limb, sa->limb, sizeof limb);
  normalize(limb);
  double sign = 1.0;
  if (limb[SA_LIMBS - 1] < 0) { /* negate every limb, then renormalize: the value negates */
    for (int i = 0; i < SA_LIMBS; ++i)
      limb[i] = -limb[i];
    normalize(limb);
    sign = -1.0;
  }
  int top = SA_LIMBS - 1;
  while (top >= 0 && limb[top] == 0)
    --top;
  if (top < 0) /* an exact zero: -0.0 only when every addend was -0.0 */
    return (sa->count > 0 && sa->only_negative_zeros) ? -0.0 : 0.0;

  int msb = top * SA_LIMB_BITS + SA_LIMB_BITS - 1;
  while (!bit_at(limb, msb))
    --msb;
  /* Keep bits [lsb, msb]: `precision` of them, fewer in the subnormal range. */
  int lsb = msb - (precision - 1);
  if (lsb < lsb_min_exp - SA_LSB_EXP)
    lsb = lsb_min_exp - SA_LSB_EXP;
  uint64_t mant = 0;
  for (int pos = msb; pos >= lsb; --pos)
    mant = (mant << 1) | (uint64_t)bit_at(limb, pos);
  if (lsb > 0) {
    const int round = bit_at(limb, lsb - 1);
    const int sticky = any_below(limb, lsb - 1);
    if (round && (sticky || (mant & 1)))
      ++mant; /* may carry to 2^precision: still exact in a double */
  }
  const double v = ldexp((double)mant, lsb + SA_LSB_EXP);
  return sign * (v > max_finite ? INFINITY : v);
}
