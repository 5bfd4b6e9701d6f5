// Device-side accumulator types: the arithmetic a reduction does in each accumulator dtype.
// Layer: device primitives.
//
// Each accumulator says how to add (rounded once, to nearest even, in its own precision, or
// modulo 2^bits for integers), how to compare, and its special values. Integer addition is
// done in unsigned arithmetic so that wrapping is defined, as the API promises.
#pragma once

#include "cureduce.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace cr {

template <cureduce_dtype A> struct acc;

template <> struct acc<CUREDUCE_F32> {
  using type = float;
  static constexpr bool is_float = true;
  __device__ static float from(float x) { return x; }
  __device__ static float from(double x) { return __double2float_rn(x); }
  __device__ static float from(int64_t x) { return __ll2float_rn(x); }
  __device__ static float from_double(double x) { return __double2float_rn(x); }
  __device__ static double to_double(float a) { return a; }
  __device__ static float add(float a, float b) { return __fadd_rn(a, b); } // never contracted
  __device__ static float mul(float a, float b) { return __fmul_rn(a, b); }
  __device__ static float abs(float a) { return fabsf(a); }
  // IEEE 754-2019 minimum/maximum in one instruction: PTX min.NaN/max.NaN give NaN if either
  // input is NaN and order -0.0 below +0.0 (PTX ISA, "Floating Point Instructions: min").
  __device__ static float min_ieee(float a, float b) {
    float d;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
    return d;
  }
  __device__ static float max_ieee(float a, float b) {
    float d;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
    return d;
  }
  __device__ static bool less(float a, float b) { return a < b; }
  __device__ static bool is_nan(float a) { return isnan(a); }
  __device__ static bool sign_bit(float a) { return signbit(a); }
  __device__ static float zero() { return 0.0f; }
  __device__ static float neg_zero() { return -0.0f; }
  __device__ static float highest() { return __int_as_float(0x7f800000); }
  __device__ static float lowest() { return __int_as_float(static_cast<int>(0xff800000u)); }
};

template <> struct acc<CUREDUCE_F64> {
  using type = double;
  static constexpr bool is_float = true;
  __device__ static double from(float x) { return x; }
  __device__ static double from(double x) { return x; }
  __device__ static double from(int64_t x) { return __ll2double_rn(x); }
  __device__ static double from_double(double x) { return x; }
  __device__ static double to_double(double a) { return a; }
  __device__ static double add(double a, double b) { return __dadd_rn(a, b); }
  __device__ static double mul(double a, double b) { return __dmul_rn(a, b); }
  __device__ static double abs(double a) { return fabs(a); }
  // No min.NaN for f64: NaN first (a's if both), then -0.0 below +0.0, by hand. One select on
  // predicates combined with bitwise & and |: a NaN branch here (if / ||) would put each
  // shuffle of the warp trees that call it behind its own branch (docs/design.md#accumulators).
  __device__ static double min_ieee(double a, double b) {
    return (isnan(a) | (a < b) | ((a == b) & signbit(a))) ? a : b; // b NaN: neither test holds
  }
  __device__ static double max_ieee(double a, double b) {
    return (isnan(a) | (a > b) | ((a == b) & signbit(b))) ? a : b;
  }
  __device__ static bool less(double a, double b) { return a < b; }
  __device__ static bool is_nan(double a) { return isnan(a); }
  __device__ static bool sign_bit(double a) { return signbit(a); }
  __device__ static double zero() { return 0.0; }
  __device__ static double neg_zero() { return -0.0; }
  __device__ static double highest() { return __longlong_as_double(0x7ff0000000000000ll); }
  __device__ static double lowest() {
    return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));
  }
};

template <> struct acc<CUREDUCE_F16> {
  using type = __half;
  static constexpr bool is_float = true;
  __device__ static __half from(float x) { return __float2half_rn(x); }
  __device__ static __half from_double(double x) { return __double2half(x); }
  __device__ static double to_double(__half a) { return __half2float(a); }
  __device__ static __half add(__half a, __half b) { return __hadd_rn(a, b); }
  __device__ static __half mul(__half a, __half b) { return __hmul_rn(a, b); }
  __device__ static __half abs(__half a) { return __habs(a); }
  __device__ static __half min_ieee(__half a, __half b) { return __hmin_nan(a, b); }
  __device__ static __half max_ieee(__half a, __half b) { return __hmax_nan(a, b); }
  __device__ static bool less(__half a, __half b) { return __hlt(a, b); }
  __device__ static bool is_nan(__half a) { return __hisnan(a); }
  __device__ static bool sign_bit(__half a) { return (__half_as_ushort(a) & 0x8000u) != 0; }
  __device__ static __half zero() { return __ushort_as_half(0x0000u); }
  __device__ static __half neg_zero() { return __ushort_as_half(0x8000u); }
  __device__ static __half highest() { return __ushort_as_half(0x7c00u); }
  __device__ static __half lowest() { return __ushort_as_half(0xfc00u); }
};

template <> struct acc<CUREDUCE_BF16> {
  using type = __nv_bfloat16;
  static constexpr bool is_float = true;
  __device__ static __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
  __device__ static __nv_bfloat16 from_double(double x) { return __double2bfloat16(x); }
  __device__ static double to_double(__nv_bfloat16 a) { return __bfloat162float(a); }
  __device__ static __nv_bfloat16 add(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd_rn(a, b); }
  __device__ static __nv_bfloat16 mul(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul_rn(a, b); }
  __device__ static __nv_bfloat16 abs(__nv_bfloat16 a) { return __habs(a); }
  __device__ static __nv_bfloat16 min_ieee(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmin_nan(a, b); }
  __device__ static __nv_bfloat16 max_ieee(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmax_nan(a, b); }
  __device__ static bool less(__nv_bfloat16 a, __nv_bfloat16 b) { return __hlt(a, b); }
  __device__ static bool is_nan(__nv_bfloat16 a) { return __hisnan(a); }
  __device__ static bool sign_bit(__nv_bfloat16 a) { return (__bfloat16_as_ushort(a) & 0x8000u) != 0; }
  __device__ static __nv_bfloat16 zero() { return __ushort_as_bfloat16(0x0000u); }
  __device__ static __nv_bfloat16 neg_zero() { return __ushort_as_bfloat16(0x8000u); }
  __device__ static __nv_bfloat16 highest() { return __ushort_as_bfloat16(0x7f80u); }
  __device__ static __nv_bfloat16 lowest() { return __ushort_as_bfloat16(0xff80u); }
};

template <class T, class U> struct integer_acc {
  using type = T;
  static constexpr bool is_float = false;
  __device__ static T from(int64_t x) { return static_cast<T>(static_cast<U>(x)); }
  __device__ static T add(T a, T b) { return static_cast<T>(static_cast<U>(a) + static_cast<U>(b)); }
  __device__ static T mul(T a, T b) { return static_cast<T>(static_cast<U>(a) * static_cast<U>(b)); }
  __device__ static T min_ieee(T a, T b) { return a < b ? a : b; }
  __device__ static T max_ieee(T a, T b) { return a > b ? a : b; }
  // |a| with wrapping: |INT_MIN| stays INT_MIN, as the CPU reference does.
  __device__ static T abs(T a) { return a < 0 ? static_cast<T>(U(0) - static_cast<U>(a)) : a; }
  __device__ static bool less(T a, T b) { return a < b; }
  __device__ static bool is_nan(T) { return false; }
  __device__ static bool sign_bit(T) { return false; }
  __device__ static T zero() { return 0; }
  __device__ static T neg_zero() { return 0; }
  __device__ static T highest() { return static_cast<T>(static_cast<U>(~U(0)) >> 1); }
  __device__ static T lowest() { return static_cast<T>(~(static_cast<U>(~U(0)) >> 1)); }
};

template <> struct acc<CUREDUCE_I32> : integer_acc<int32_t, uint32_t> {};
template <> struct acc<CUREDUCE_I64> : integer_acc<int64_t, uint64_t> {};

} // namespace cr
