/* Host conversions between float and the narrow float formats. See convert.h.
 *
 * Decoding builds the value arithmetically (exact in float for every narrow format). Encoding
 * uses one generic round-to-nearest-even over (mantissa bits, exponent range), done in double,
 * where every float and every quantum of the narrow formats is exact, so rint() rounds once.
 * Exponents come from the bits and scalings are products with exact powers of two. */
#include "convert.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define CANONICAL_NAN_F32 0x7fffffffu

uint32_t cr_float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

float cr_bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

uint64_t cr_double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

/* 2^k for -1022 <= k <= 1023, built from its bits. Scaling by it is exact wherever the result
   stays a normal double, as every scaling below does (it replaced ldexp and frexp, which took
   most of the CPU reference's time in the tests). */
static double pow2(int k) {
  const uint64_t u = (uint64_t)(k + 1023) << 52;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* e with a = f * 2^e, f in [1, 2), for a positive normal double a (every float is one). */
static int exponent_of(double a) { return (int)((cr_double_bits(a) >> 52) & 0x7ffu) - 1023; }

/* A narrow IEEE-like format: sign, ebits of exponent with the given bias, mbits of mantissa. */
typedef struct narrow_format {
  int mbits;
  int bias;
  int emax;          /* exponent of the largest finite value */
  double max_finite; /* the largest finite value */
} narrow_format;

static const narrow_format F16 = {10, 15, 15, 65504.0};
static const narrow_format BF16 = {7, 127, 127, 3.38953138925153547590470800371487867e38};
static const narrow_format E4M3 = {3, 7, 8, 448.0};
static const narrow_format E5M2 = {2, 15, 15, 57344.0};

/* Decode the magnitude bits (exponent field e, mantissa field m) of a finite narrow value. */
static float decode_finite(const narrow_format *fmt, unsigned e, unsigned m) {
  const int emin = 1 - fmt->bias;
  if (e == 0) /* subnormal or zero: m * 2^(emin - mbits) */
    return (float)((double)m * pow2(emin - fmt->mbits));
  return (float)((double)((1u << fmt->mbits) | m) * pow2((int)e - fmt->bias - fmt->mbits));
}

float cr_f16_to_float(uint16_t h) {
  const unsigned e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
  if (e == 0x1fu)
    return m ? cr_bits_float(CANONICAL_NAN_F32) : sign * INFINITY;
  return sign * decode_finite(&F16, e, m);
}

float cr_bf16_to_float(uint16_t b) {
  /* bf16 is the top half of a float: CUDA keeps NaN payloads here, and so do we. */
  return cr_bits_float((uint32_t)b << 16);
}

float cr_e4m3_to_float(uint8_t x) {
  const unsigned e = (x >> 3) & 0xfu, m = x & 0x7u;
  const float sign = (x & 0x80u) ? -1.0f : 1.0f;
  if ((x & 0x7fu) == 0x7fu) /* e4m3 has no inf; S.1111.111 is its only NaN */
    return cr_bits_float(CANONICAL_NAN_F32);
  return sign * decode_finite(&E4M3, e, m);
}

float cr_e5m2_to_float(uint8_t x) {
  /* e5m2 is the top byte of an f16. */
  return cr_f16_to_float((uint16_t)(x << 8));
}

/* Round the finite, non-zero magnitude a (a float's) to fmt. Returns the rounded magnitude,
   which may exceed max_finite (the caller decides what overflow means). */
static double round_magnitude(const narrow_format *fmt, double a) {
  const int emin = 1 - fmt->bias;
  int e = exponent_of(a); /* a = f * 2^e, f in [1, 2) */
  if (e < emin)
    e = emin; /* subnormal range: fixed quantum */
  const double quanta = a * pow2(fmt->mbits - e);
  return rint(quanta) * pow2(e - fmt->mbits); /* rint: the default mode rounds half to even */
}

/* Encode a finite magnitude v (already a value of fmt, v <= max_finite) as exponent|mantissa. */
static unsigned encode_magnitude(const narrow_format *fmt, double v) {
  const int emin = 1 - fmt->bias;
  if (v == 0.0)
    return 0;
  const int e = exponent_of(v);
  if (e < emin)
    return (unsigned)(v * pow2(fmt->mbits - emin));
  const unsigned m = (unsigned)(v * pow2(fmt->mbits - e)) - (1u << fmt->mbits);
  return ((unsigned)(e + fmt->bias) << fmt->mbits) | m;
}

/* IEEE-like formats with inf (f16, bf16): total bits = 1 + ebits + mbits. */
static unsigned encode_ieee(const narrow_format *fmt, int total_bits, float f) {
  const unsigned sign = (cr_float_bits(f) >> 31) << (total_bits - 1);
  const unsigned inf = ((1u << (total_bits - 1 - fmt->mbits)) - 1u) << fmt->mbits;
  if (isnan(f))
    return (1u << (total_bits - 1)) - 1u; /* CUDA's canonical NaN: all ones but the sign */
  if (isinf(f))
    return sign | inf;
  const double v = round_magnitude(fmt, fabs((double)f));
  if (v > fmt->max_finite)
    return sign | inf;
  return sign | encode_magnitude(fmt, v);
}

uint16_t cr_float_to_f16(float f) { return (uint16_t)encode_ieee(&F16, 16, f); }

uint16_t cr_float_to_bf16(float f) { return (uint16_t)encode_ieee(&BF16, 16, f); }

/* fp8 follows cuda_fp8.hpp: any NaN becomes 0x7f (CUDA canonicalizes the float first), inf
   counts as an overflow, and with saturate an overflow gives the largest finite value. */
static uint8_t encode_fp8(const narrow_format *fmt, float f, int saturate, unsigned overflow_bits) {
  const unsigned sign = (cr_float_bits(f) >> 31) << 7;
  if (isnan(f))
    return 0x7fu;
  const double v = isinf(f) ? INFINITY : round_magnitude(fmt, fabs((double)f));
  if (v > fmt->max_finite)
    return (uint8_t)(sign | (saturate ? encode_magnitude(fmt, fmt->max_finite) : overflow_bits));
  return (uint8_t)(sign | encode_magnitude(fmt, v));
}

uint8_t cr_float_to_e4m3(float f, int saturate) { return encode_fp8(&E4M3, f, saturate, 0x7fu); }

uint8_t cr_float_to_e5m2(float f, int saturate) { return encode_fp8(&E5M2, f, saturate, 0x7cu); }

float cr_float_round_to_odd(double x) {
  float f = (float)x;
  if (isnan(x) || (double)f == x)
    return f;
  if (isinf(f))
    f = copysignf(FLT_MAX, f); /* x finite: truncated, the largest f32 (its last bit set) */
  else if (fabs((double)f) > fabs(x))
    f = nextafterf(f, 0.0f);
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  u |= 1u;
  memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t cr_double_to_f16(double x) { return cr_float_to_f16(cr_float_round_to_odd(x)); }

uint16_t cr_double_to_bf16(double x) { return cr_float_to_bf16(cr_float_round_to_odd(x)); }
