// The CPU conversions of f16, bf16 and both fp8 formats agree bit for bit with CUDA's own
// host-callable conversions: decoding every bit pattern, and encoding a sweep of all float
// bit patterns plus every rounding boundary (each midpoint between neighbours, and the floats
// just either side of it). Compiled by nvcc, runs on the CPU: no GPU needed.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" { // cmocka 1.1's header has no C++ guards
#include <cmocka.h>
}

#include "../src/common/convert.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <math.h>

static float cuda_f16_to_float(uint16_t b) {
  __half_raw r;
  r.x = b;
  return __half2float(__half(r));
}
static float cuda_bf16_to_float(uint16_t b) {
  __nv_bfloat16_raw r;
  r.x = b;
  return __bfloat162float(__nv_bfloat16(r));
}
static float cuda_e4m3_to_float(uint8_t b) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(b, __NV_E4M3)));
}
static float cuda_e5m2_to_float(uint8_t b) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(b, __NV_E5M2)));
}
static uint16_t cuda_float_to_f16(float f) { return __half_raw(__float2half_rn(f)).x; }
static uint16_t cuda_float_to_bf16(float f) { return __nv_bfloat16_raw(__float2bfloat16_rn(f)).x; }

typedef struct format {
  const char *name;
  int bits;
  float (*ours_decode)(uint32_t);
  float (*cuda_decode)(uint32_t);
  uint32_t (*ours_encode)(float);
  uint32_t (*cuda_encode)(float);
} format;

#define WRAP_DECODE(NAME, FN, T)                                                                             \
  static float NAME(uint32_t b) { return FN((T)b); }
WRAP_DECODE(od_f16, cr_f16_to_float, uint16_t)
WRAP_DECODE(cd_f16, cuda_f16_to_float, uint16_t)
WRAP_DECODE(od_bf16, cr_bf16_to_float, uint16_t)
WRAP_DECODE(cd_bf16, cuda_bf16_to_float, uint16_t)
WRAP_DECODE(od_e4m3, cr_e4m3_to_float, uint8_t)
WRAP_DECODE(cd_e4m3, cuda_e4m3_to_float, uint8_t)
WRAP_DECODE(od_e5m2, cr_e5m2_to_float, uint8_t)
WRAP_DECODE(cd_e5m2, cuda_e5m2_to_float, uint8_t)
static uint32_t oe_f16(float f) { return cr_float_to_f16(f); }
static uint32_t ce_f16(float f) { return cuda_float_to_f16(f); }
static uint32_t oe_bf16(float f) { return cr_float_to_bf16(f); }
static uint32_t ce_bf16(float f) { return cuda_float_to_bf16(f); }
static uint32_t oe_e4m3_sat(float f) { return cr_float_to_e4m3(f, 1); }
static uint32_t ce_e4m3_sat(float f) { return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3); }
static uint32_t oe_e4m3_nosat(float f) { return cr_float_to_e4m3(f, 0); }
static uint32_t ce_e4m3_nosat(float f) { return __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E4M3); }
static uint32_t oe_e5m2_sat(float f) { return cr_float_to_e5m2(f, 1); }
static uint32_t ce_e5m2_sat(float f) { return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2); }
static uint32_t oe_e5m2_nosat(float f) { return cr_float_to_e5m2(f, 0); }
static uint32_t ce_e5m2_nosat(float f) { return __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E5M2); }

static const format FORMATS[] = {
    {"f16", 16, od_f16, cd_f16, oe_f16, ce_f16},
    {"bf16", 16, od_bf16, cd_bf16, oe_bf16, ce_bf16},
    {"e4m3 satfinite", 8, od_e4m3, cd_e4m3, oe_e4m3_sat, ce_e4m3_sat},
    {"e4m3 nosat", 8, od_e4m3, cd_e4m3, oe_e4m3_nosat, ce_e4m3_nosat},
    {"e5m2 satfinite", 8, od_e5m2, cd_e5m2, oe_e5m2_sat, ce_e5m2_sat},
    {"e5m2 nosat", 8, od_e5m2, cd_e5m2, oe_e5m2_nosat, ce_e5m2_nosat},
};

static void decoding_every_bit_pattern_should_match_cuda(void **state) {
  (void)state;
  for (const format &f : FORMATS) {
    for (uint32_t b = 0; b < (1u << f.bits); ++b) {
      const uint32_t ours = cr_float_bits(f.ours_decode(b)), cuda = cr_float_bits(f.cuda_decode(b));
      if (ours != cuda)
        fail_msg("%s decode of 0x%x: ours 0x%08x, CUDA 0x%08x", f.name, b, ours, cuda);
    }
  }
}

static void expect_encode(const format &f, float x) {
  const uint32_t ours = f.ours_encode(x), cuda = f.cuda_encode(x);
  if (ours != cuda)
    fail_msg("%s encode of %a (0x%08x): ours 0x%x, CUDA 0x%x", f.name, (double)x, cr_float_bits(x), ours,
             cuda);
}

static void encoding_a_sweep_of_all_floats_should_match_cuda(void **state) {
  (void)state;
  for (const format &f : FORMATS)
    for (uint64_t u = 0; u < (1ull << 32); u += 4099) /* 4099 is prime: every low-bit pattern */
      expect_encode(f, cr_bits_float((uint32_t)u));
}

static void encoding_every_rounding_boundary_should_match_cuda(void **state) {
  (void)state;
  for (const format &f : FORMATS) {
    const uint32_t count = 1u << f.bits, sign = 1u << (f.bits - 1);
    for (uint32_t b = 0; b < sign; ++b) {
      const float lo = f.cuda_decode(b), hi = f.cuda_decode(b + 1);
      if (!isfinite(lo))
        continue;
      /* past the largest finite value the "neighbour" is inf or NaN: probe far beyond instead */
      const float mid = isfinite(hi) ? lo + (hi - lo) / 2 : lo * 1.0625f;
      const float probes[] = {lo, mid, nextafterf(mid, -INFINITY), nextafterf(mid, INFINITY)};
      for (float p : probes) {
        expect_encode(f, p);
        expect_encode(f, -p);
      }
    }
    (void)count;
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, 3.4e38f};
    for (float s : specials)
      expect_encode(f, s);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decoding_every_bit_pattern_should_match_cuda),
      cmocka_unit_test(encoding_a_sweep_of_all_floats_should_match_cuda),
      cmocka_unit_test(encoding_every_rounding_boundary_should_match_cuda),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
