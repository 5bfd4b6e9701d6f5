// Device-side facts about each dtype: its storage type, and how one element becomes an
// accumulator value. Layer: device primitives. Kernels are written once over these traits.
#pragma once

#include "cureduce.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace cr {

// Storage type of each input dtype. fp8 is kept as its raw byte: the conversion below says how
// to read it, and raw bytes keep 16-byte vector loads trivially copyable.
template <cureduce_dtype D> struct storage;
template <> struct storage<CUREDUCE_F32> { using type = float; };
template <> struct storage<CUREDUCE_F64> { using type = double; };
template <> struct storage<CUREDUCE_F16> { using type = __half; };
template <> struct storage<CUREDUCE_BF16> { using type = __nv_bfloat16; };
template <> struct storage<CUREDUCE_F8_E4M3> { using type = __nv_fp8_storage_t; };
template <> struct storage<CUREDUCE_F8_E5M2> { using type = __nv_fp8_storage_t; };
template <> struct storage<CUREDUCE_I8> { using type = int8_t; };
template <> struct storage<CUREDUCE_I32> { using type = int32_t; };
template <> struct storage<CUREDUCE_I64> { using type = int64_t; };

template <cureduce_dtype D> using storage_t = typename storage<D>::type;

// Every input element is first widened to a "wide" value that holds it exactly: float for the
// narrow float formats and f32, double for f64, int64 for integers. The accumulator then
// converts from the wide value (exactly, or rounding once where it is narrower, as f16 from
// fp8 never needs to).
template <cureduce_dtype D> __device__ __forceinline__ auto widen(storage_t<D> x) {
  if constexpr (D == CUREDUCE_F16) {
    return __half2float(x);
  } else if constexpr (D == CUREDUCE_BF16) {
    return __bfloat162float(x);
  } else if constexpr (D == CUREDUCE_F8_E4M3) {
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(x, __NV_E4M3)));
  } else if constexpr (D == CUREDUCE_F8_E5M2) {
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(x, __NV_E5M2)));
  } else if constexpr (D == CUREDUCE_I8 || D == CUREDUCE_I32 || D == CUREDUCE_I64) {
    return static_cast<int64_t>(x);
  } else {
    return x; // f32, f64
  }
}

} // namespace cr
