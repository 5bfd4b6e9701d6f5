/* Host conversions between float and the narrow float formats (f16, bf16, fp8 e4m3/e5m2).
 *
 * They agree bit for bit with CUDA's own host-callable conversions (cuda_fp16.h, cuda_bf16.h,
 * cuda_fp8.h), NaN encodings included; tests/test_convert_matches_cuda.cu checks every bit
 * pattern of each narrow format and every rounding boundary. They are plain C so the CPU
 * reference, the CLI and the tests can use them without a CUDA compiler. */
#ifndef CUREDUCE_COMMON_CONVERT_H
#define CUREDUCE_COMMON_CONVERT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

float cr_f16_to_float(uint16_t h);
float cr_bf16_to_float(uint16_t b);
float cr_e4m3_to_float(uint8_t x);
float cr_e5m2_to_float(uint8_t x);

/* Round to nearest even. Overflow gives inf (f16, bf16). NaN gives the canonical NaN that CUDA
   gives (0x7fff). */
uint16_t cr_float_to_f16(float f);
uint16_t cr_float_to_bf16(float f);

/* x rounded to odd into f32: truncated, with the last bit set where that dropped any. f32 has
   more than p + 2 bits for f16, bf16 and fp8, so rounding this to nearest even into any of them
   rounds x once, as __double2half and __double2bfloat16 do on the GPU; rounding x to nearest
   into f32 first could round twice (1 + 2^-11 + 2^-24 into f16: 1, not 1 + 2^-10). */
float cr_float_round_to_odd(double x);

/* x rounded once to nearest even into f16 or bf16 (through cr_float_round_to_odd). */
uint16_t cr_double_to_f16(double x);
uint16_t cr_double_to_bf16(double x);

/* Round to nearest even. With saturate, overflow gives the largest finite value (CUDA's
   __NV_SATFINITE); without it, overflow gives NaN for e4m3 and inf for e5m2 (__NV_NOSAT). */
uint8_t cr_float_to_e4m3(float f, int saturate);
uint8_t cr_float_to_e5m2(float f, int saturate);

/* Bit views. */
uint32_t cr_float_bits(float f);
float cr_bits_float(uint32_t u);
uint64_t cr_double_bits(double d);

#ifdef __cplusplus
}
#endif

#endif
