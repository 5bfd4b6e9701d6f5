// One 16-byte vector of any element type, and how its elements fold into a running result.
// Layer: device primitives. Every kernel that loads 16-byte vectors (full array, rows, columns,
// segments) folds them here, so each fast path is written once.
#pragma once

#include "compensated_sum.cuh"
#include "dtype_traits.cuh"
#include "op_traits.cuh"

#include <stdint.h>
#include <string.h>
#include <type_traits>

namespace cr {

// Elements of one byte are held as four 32-bit words: the load is one ld.global.v4.u32 and
// the packed instructions (fp8x2 conversions, s16x2 min/max, dp4a) take the words as they are.
// Held as an array of 16 bytes, they were split into single bytes by the compiler and put back
// together for each packed instruction: about 40 extra instructions per vector of i8 or fp8.
// Wider elements stay an array of T: held as words, the f32 and bf16 chunked row kernels
// spilled registers (ptxas -v: 44 and 24 bytes), and their elements need no unpacking.
template <class T> struct alignas(16) vec16 {
  static constexpr int N = 16 / sizeof(T);
  static constexpr bool WORDS = sizeof(T) == 1;
  typename std::conditional<WORDS, unsigned[4], T[N]>::type s;

  // Element i (i a constant after unrolling: shifts and moves in registers).
  __device__ __forceinline__ T operator[](int i) const {
    if constexpr (WORDS) {
      const unsigned char b = (unsigned char)(s[i / 4] >> (8 * (i % 4)));
      T t;
      memcpy(&t, &b, 1);
      return t;
    } else {
      return s[i];
    }
  }
  // 32-bit word k of the vector (used for one-byte elements).
  __device__ __forceinline__ unsigned word(int k) const {
    static_assert(WORDS, "word() is for one-byte elements");
    return s[k];
  }
};

// fp8 elements 2k and 2k + 1 of a vector as an f16x2 pair: one conversion
// instruction (cvt.rn.f16x2.e4m3x2 / e5m2x2) per two elements, exact.
template <cureduce_dtype IN>
__device__ __forceinline__ __half2 fp8_pair(const vec16<storage_t<IN>> &x, int k) {
  constexpr __nv_fp8_interpretation_t KIND = IN == CUREDUCE_F8_E4M3 ? __NV_E4M3 : __NV_E5M2;
  const __nv_fp8x2_storage_t pair = (__nv_fp8x2_storage_t)(x.word(k / 2) >> (16 * (k % 2)));
  return __half2(__nv_cvt_fp8x2_to_halfraw2(pair, KIND));
}

// f(pair) for each pair of elements of U fp8 vectors, as an exact float2.
template <cureduce_dtype IN, int U, class F>
__device__ __forceinline__ void each_fp8_pair(const vec16<storage_t<IN>> *x, F f) {
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int k = 0; k < 8; ++k)
      f(__half22float2(fp8_pair<IN>(x[u], k)));
}

// The plain f32 sum of U fp8 vectors, in two chains (even and odd elements): exact wherever
// the caller knows every partial sum to fit f32's 24 bits.
template <cureduce_dtype IN, int U>
__device__ __forceinline__ float fp8_tile_sum(const vec16<storage_t<IN>> *x) {
  float s0 = -0.0f, s1 = -0.0f;
  each_fp8_pair<IN, U>(x, [&](float2 f) {
    s0 = __fadd_rn(s0, f.x);
    s1 = __fadd_rn(s1, f.y);
  });
  return __fadd_rn(s0, s1);
}

// Whether all values of U e5m2 vectors lie below 4 in magnitude (NaN and infinities do not).
// A byte's magnitude (its low 7 bits) is at least 0x44 (exponent field 17 and up) exactly when
// adding 0x3c sets its top bit, with no carry out.
template <int U> __device__ __forceinline__ bool e5m2_below_4(const vec16<storage_t<CUREDUCE_F8_E5M2>> *x) {
  unsigned wide = 0u;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    unsigned w[4];
    memcpy(w, &x[u], 16);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      wide |= (w[j] & 0x7f7f7f7fu) + 0x3c3c3c3cu;
  }
  return !(wide & 0x80808080u);
}

// t = the exact sum of U <= 4 e5m2 vectors (up to 64 values), and whether it is finite. e5m2
// values are multiples of 2^-16. When all lie below 4 in magnitude (most tiles of most data),
// they sum below 2^8: exact in f32, one addition an element. Otherwise two f32 sums: |x| >= 1
// (multiples of 2^-2 below 2^16) and |x| < 1 (multiples of 2^-16), each holding 64 terms
// exactly in 24 bits. NaN and infinities leave t non-finite.
template <int U>
__device__ __forceinline__ bool e5m2_exact_sum(const vec16<storage_t<CUREDUCE_F8_E5M2>> *x, double &t) {
  static_assert(U <= 4, "64 e5m2 values at most");
  if (e5m2_below_4<U>(x)) {
    t = (double)fp8_tile_sum<CUREDUCE_F8_E5M2, U>(x);
    return true;
  }
  float big = -0.0f, small = -0.0f;
  each_fp8_pair<CUREDUCE_F8_E5M2, U>(x, [&](float2 f) {
    const float b0 = fabsf(f.x) >= 1.0f ? f.x : 0.0f, b1 = fabsf(f.y) >= 1.0f ? f.y : 0.0f;
    big = __fadd_rn(__fadd_rn(big, b0), b1);
    small = __fadd_rn(__fadd_rn(small, __fadd_rn(f.x, -b0)), __fadd_rn(f.y, -b1));
  });
  t = __dadd_rn((double)big, (double)small);
  return isfinite(t);
}

// Bytes 0 and 2 (HIGH = false) or 1 and 3 of w, sign-extended into the two 16-bit lanes of the
// result, by one prmt. A selector nibble of 8 + i copies the sign of byte i into all 8 bits;
// __byte_perm masks that bit off, hence the asm.
template <bool HIGH> __device__ __forceinline__ unsigned sign_extended_pairs(unsigned w) {
  unsigned r;
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(r) : "r"(w), "n"(HIGH ? 0xB391 : 0xA280));
  return r;
}

// The minimum (or maximum) of one vector's elements, or of their magnitudes (ABS), as a value
// of accumulator A, with IEEE 754-2019 semantics (NaN wins, -0.0 < +0.0). Exact: every input
// value is exact in the formats the trees work in. 16-bit and fp8 inputs reduce as packed pairs
// (one min.NaN.f16x2 / bf16x2 per two elements). i8 inputs reduce as sign-extended 16-bit
// pairs (one max.s16x2 / min.s16x2 per two bytes on sm_90): __vmaxs4 on four bytes has no
// instruction there and costs about ten integer instructions, enough to make i8 min/max
// instruction-bound.
template <cureduce_dtype IN, class A, bool IS_MAX, bool ABS>
__device__ __forceinline__ typename A::type vector_extreme(const vec16<storage_t<IN>> &x) {
  constexpr int N = vec16<storage_t<IN>>::N;
  if constexpr (IN == CUREDUCE_F16 || IN == CUREDUCE_BF16 || IN == CUREDUCE_F8_E4M3 ||
                IN == CUREDUCE_F8_E5M2) {
    using P = typename std::conditional<IN == CUREDUCE_BF16, __nv_bfloat162, __half2>::type;
    constexpr int PAIRS = N / 2;
    P p[PAIRS];
    if constexpr (IN == CUREDUCE_F16 || IN == CUREDUCE_BF16) {
      memcpy(p, x.s, 16);
    } else {
#pragma unroll
      for (int k = 0; k < PAIRS; ++k)
        p[k] = fp8_pair<IN>(x, k);
    }
#pragma unroll
    for (int k = 0; k < PAIRS; ++k)
      if (ABS)
        p[k] = __habs2(p[k]);
#pragma unroll
    for (int width = PAIRS / 2; width > 0; width /= 2)
#pragma unroll
      for (int k = 0; k < width; ++k)
        p[k] = IS_MAX ? __hmax2_nan(p[k], p[k + width]) : __hmin2_nan(p[k], p[k + width]);
    if constexpr (std::is_same<typename A::type, __half>::value && std::is_same<P, __half2>::value) {
      // An f16 accumulator takes the pair's halves as they are (no round trip through f32).
      const __half lo = __low2half(p[0]), hi = __high2half(p[0]);
      return IS_MAX ? A::max_ieee(lo, hi) : A::min_ieee(lo, hi);
    } else {
      const auto lo = __low2float(p[0]), hi = __high2float(p[0]);
      return IS_MAX ? A::max_ieee(A::from(lo), A::from(hi)) : A::min_ieee(A::from(lo), A::from(hi));
    }
  } else if constexpr (IN == CUREDUCE_I8) {
    unsigned h[8]; // the 16 bytes as eight pairs of 16-bit lanes
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      h[2 * k] = sign_extended_pairs<false>(x.word(k));
      h[2 * k + 1] = sign_extended_pairs<true>(x.word(k));
    }
    auto bytes_extreme = [&](bool want_max) {
      auto op2 = [&](unsigned a, unsigned b) { return want_max ? __vmaxs2(a, b) : __vmins2(a, b); };
      unsigned m[8];
#pragma unroll
      for (int k = 0; k < 8; ++k)
        m[k] = h[k];
#pragma unroll
      for (int width = 4; width > 0; width /= 2)
#pragma unroll
        for (int k = 0; k < width; ++k)
          m[k] = op2(m[k], m[k + width]);
      m[0] = op2(m[0], m[0] >> 16); // lane 0 against lane 1
      return A::from((int64_t)(int16_t)(m[0] & 0xffff));
    };
    if constexpr (ABS) // |x| in the accumulator: |-128| is 128 there, not a wrapped byte
      return A::max_ieee(A::abs(bytes_extreme(true)), A::abs(bytes_extreme(false)));
    else
      return bytes_extreme(IS_MAX);
  } else if constexpr (!(ABS && (IN == CUREDUCE_I32 || IN == CUREDUCE_I64))) {
    // f32, f64, i32, i64: the extreme in the input's own type (one min.NaN.f32 per element for
    // f32, one integer min for i32), converted to A once. Every conversion used here is exact
    // or rounds monotonically (i64 -> f64), so the extreme of the converted values is the
    // converted extreme; converting each element first would cost f32 -> f64 and i32 -> f64
    // min/max a conversion and a hand-written f64 min per element.
    using W = acc<IN>; // the input's own arithmetic (acc<IN> exists for these four)
    typename W::type m = ABS ? W::abs(x[0]) : x[0];
#pragma unroll
    for (int i = 1; i < N; ++i) {
      const typename W::type v = ABS ? W::abs(x[i]) : x[i];
      m = IS_MAX ? W::max_ieee(m, v) : W::min_ieee(m, v);
    }
    if constexpr (W::is_float)
      return A::from(m);
    else
      return A::from((int64_t)m);
  } else if constexpr (IN == CUREDUCE_I32) {
    // i32 magnitudes as u32 (|INT32_MIN| = 2^31 fits): one abs and one unsigned max an element,
    // where the i64 compare type's abs and max take two or three each. The i64 magnitude
    // holds 2^31, so this is the value it would have taken.
    static_assert(std::is_same<A, acc<CUREDUCE_I64>>::value, "i32 absmax compares in i64");
    auto magnitude = [](int32_t v) { return v < 0 ? 0u - (uint32_t)v : (uint32_t)v; };
    uint32_t m = magnitude(x[0]);
#pragma unroll
    for (int i = 1; i < N; ++i)
      m = max(m, magnitude(x[i]));
    return A::from((int64_t)m);
  } else {
    // i64 magnitudes in the accumulator, element by element: |INT64_MIN| wraps there exactly
    // as the CPU reference says (acc_traits.cuh), which a min/max shortcut would not keep.
    auto value = [&](int i) { return A::abs(A::from(widen<IN>(x[i]))); };
    typename A::type m = value(0);
#pragma unroll
    for (int i = 1; i < N; ++i)
      m = A::max_ieee(m, value(i));
    return m;
  }
}

template <class Op> constexpr bool is_arg_op = is_arg_kind(Op::kind);

// The arg ops' result for a vector whose extreme m beats the running best: the first element
// equal to m (-0.0 and +0.0 are equal), or the first NaN when m is NaN.
template <cureduce_dtype IN, class Op>
__device__ __forceinline__ typename Op::T first_equal(const vec16<storage_t<IN>> &x,
                                                      typename Op::acc_type::type m, int64_t first) {
  using A = typename Op::acc_type;
  constexpr int N = vec16<storage_t<IN>>::N;
  // m is one of the elements, so the last one is the answer when no earlier one is. Constant
  // indices only: x[k] with k known at run time would put the vector in local memory.
  int k = N - 1;
  typename A::type v = A::from(widen<IN>(x[N - 1]));
#pragma unroll
  for (int i = N - 2; i >= 0; --i) {
    const typename A::type xi = A::from(widen<IN>(x[i]));
    if (A::is_nan(m) ? A::is_nan(xi) : !(A::less(xi, m) || A::less(m, xi))) {
      k = i;
      v = xi;
    }
  }
  return typename Op::T{v, first + k};
}

// t[0] + ... + t[W - 1] as a tree (element k with element k + W/2, and so on). The width is a
// template argument: a loop halving it at run time was left rolled by nvcc for W = 16, with t[]
// in local memory (ptxas -v: a 64-byte stack frame).
template <int W> __device__ __forceinline__ float tree_sum_f32(float *t) {
  if constexpr (W == 1) {
    return t[0];
  } else {
#pragma unroll
    for (int k = 0; k < W / 2; ++k)
      t[k] = __fadd_rn(t[k], t[k + W / 2]);
    return tree_sum_f32<W / 2>(t);
  }
}

// The terms of one vector as f32 values: the elements, or their squares rounded in f32.
template <cureduce_dtype IN, class Op, int N>
__device__ __forceinline__ void vector_terms_f32(const vec16<storage_t<IN>> &x, float (&t)[N]) {
  if constexpr (IN == CUREDUCE_F8_E4M3 || IN == CUREDUCE_F8_E5M2) {
#pragma unroll
    for (int k = 0; k < N / 2; ++k) { // one conversion instruction per two elements
      const float2 f = __half22float2(fp8_pair<IN>(x, k));
      t[2 * k] = Op::lift(f.x, 0);
      t[2 * k + 1] = Op::lift(f.y, 0);
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      t[i] = Op::lift(widen<IN>(x[i]), 0);
  }
}

// Compensated sums (compensated_sum.cuh) whose tiles' plain sums are exact.
template <cureduce_dtype IN, class Op> constexpr bool exact_compensated_tiles = false;
template <cureduce_dtype IN, class Base>
constexpr bool exact_compensated_tiles<IN, compensated_op<Base>> = exact_tile_sums_f32<IN, Base>;

// The sum of one vector's terms in f32, element by element (exact where exact_tile_sums_f32).
template <cureduce_dtype IN, class Op>
__device__ __forceinline__ float vector_sum_f32(const vec16<storage_t<IN>> &x) {
  float t[vec16<storage_t<IN>>::N];
  vector_terms_f32<IN, Op>(x, t);
  float s = t[0];
#pragma unroll
  for (int i = 1; i < vec16<storage_t<IN>>::N; ++i)
    s = __fadd_rn(s, t[i]);
  return s;
}

// Fold one vector's elements, whose first has index `first`, into acc, in element order.
// Min, max, absmax and the arg ops reduce the vector first (vector_extreme). Two element types
// get a faster path for the sums that computes the same result:
//  - fp8: pairs are converted by one instruction (e4m3x2/e5m2x2 -> f16x2), then to f32;
//  - i8 sums, sums of squares and means: __dp4a adds (or squares and adds) four bytes in one
//    instruction, and the vector's sum joins the accumulator once. Integer accumulators are
//    exact in any grouping; so is f64, whose partial sums here stay integers below 2^53 (at
//    most 2^14 per element, so below 2^39 elements, more than a GPU holds): the bits do not
//    change, and an i8 mean no longer converts every element to double.
template <cureduce_dtype IN, class Op>
__device__ __forceinline__ typename Op::T fold_vector(typename Op::T acc, const vec16<storage_t<IN>> &x,
                                                      int64_t first) {
  constexpr int N = vec16<storage_t<IN>>::N;
  if constexpr (exact_tile_sums_f32<IN, Op> && std::is_same<typename Op::T, double>::value) {
    // e4m3 into f64: the vector's f32 sum is exact (exact_tile_sums_f32), so one conversion to
    // double per vector instead of 16 (F2F.F64 runs on a narrow pipe), and the running f64 sum
    // sees the same exact values while it stays below 2^44 (n < 2^35 elements). The f32 sum
    // starts from the first term, so a vector of -0.0 stays -0.0, as element by element.
    return Op::combine(acc, (double)vector_sum_f32<IN, op<Op::kind, cr::acc<CUREDUCE_F32>>>(x));
  } else if constexpr ((IN == CUREDUCE_F8_E4M3 || IN == CUREDUCE_F8_E5M2) && Op::is_sum) {
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      const float2 f = __half22float2(fp8_pair<IN>(x, i / 2));
      acc = Op::fold(acc, f.x, first + i);
      acc = Op::fold(acc, f.y, first + i + 1);
    }
    return acc;
  } else if constexpr (Op::kind == CUREDUCE_MIN || Op::kind == CUREDUCE_MAX || Op::kind == CUREDUCE_ABSMAX) {
    return Op::combine(
        acc,
        vector_extreme<IN, typename Op::acc_type, Op::kind != CUREDUCE_MIN, Op::kind == CUREDUCE_ABSMAX>(x));
  } else if constexpr (is_arg_op<Op>) {
    // The vector's extreme first; only when it beats the running best (rare once the best is
    // good), look for the first element equal to it, or the first NaN.
    const typename Op::acc_type::type m = vector_extreme<IN, typename Op::acc_type, Op::is_max, false>(x);
    return Op::beats(m, acc) ? first_equal<IN, Op>(x, m, first) : acc;
  } else if constexpr (IN == CUREDUCE_I8 && Op::is_sum &&
                       (!std::is_floating_point<typename Op::T>::value ||
                        std::is_same<typename Op::T, double>::value)) {
    int s = 0; // at most 16 * 128^2 = 2^18: no overflow
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int word = (int)x.word(k);
      s = Op::kind == CUREDUCE_SUMSQ ? __dp4a(word, word, s) : __dp4a(word, 0x01010101, s);
    }
    return Op::combine(acc, static_cast<typename Op::T>(s));
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      acc = Op::fold(acc, widen<IN>(x[i]), first + i);
    return acc;
  }
}

// The arg ops' running best over whole vectors: the best vector extreme seen so far, the index
// of its vector's first element, and a copy of that vector. Taking a vector is a compare and
// a few selects, with no branch; the element search (first_equal) runs once, at the end. This
// gives the same answer as searching at every improvement, because vectors come in increasing
// index order and a later vector must be strictly better. Searching at every improvement
// branches often while the running best is still poor, which is most of the time when a
// thread has few tiles.
template <cureduce_dtype IN, class Op, bool ENABLED = is_arg_op<Op>> struct vector_best {};
template <cureduce_dtype IN, class Op> struct vector_best<IN, Op, true> {
  using V = vec16<storage_t<IN>>;
  typename Op::T best = Op::identity(); // {extreme, first index of its vector}
  V x = {};
  __device__ __forceinline__ void take(const V &v, int64_t first) {
    take(vector_extreme<IN, typename Op::acc_type, Op::is_max, false>(v), v, first);
  }
  // The same for U vectors loaded together: every extreme first, and one branch, taken only
  // when one of them beats the running best (rare once the best is good). Without the branch,
  // the selects of the best vector make ptxas reuse the load registers: each load is issued
  // only after the previous vector's selects, one 16-byte load in flight per thread.
  template <int U, class First> __device__ __forceinline__ void take(const V (&v)[U], First first) {
    typename Op::acc_type::type m[U];
    bool any = false;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      m[u] = vector_extreme<IN, typename Op::acc_type, Op::is_max, false>(v[u]);
      any |= Op::beats(m[u], best);
    }
    if (any) {
#pragma unroll
      for (int u = 0; u < U; ++u)
        take(m[u], v[u], first(u));
    }
  }
  __device__ __forceinline__ void take(typename Op::acc_type::type m, const V &v, int64_t first) {
    if (Op::beats(m, best)) { // a select, not a branch: nothing here is expensive
      best = typename Op::T{m, first};
      x = v;
    }
  }
  __device__ __forceinline__ typename Op::T result() const {
    return best.i == INT64_MAX ? best : first_equal<IN, Op>(x, best.v, best.i);
  }
};

// One thread's running result over U independent slots (the adds of one slot do not wait on
// another's). Kernels feed it scalars and whole vectors in increasing index order per thread
// and read result() at the end. The arg ops keep one vector_best for all vectors (the slots
// meet vectors in index order too) and use the slots for scalars only; sums into f32 hand their
// pair or f64 sum f32 terms (compensated_vector); e5m2 sums into f64 fold whole tiles into
// slot 0; everything else folds each vector into its slot (fold_vector).
template <cureduce_dtype IN, class Op, int U> struct vector_folder {
  using T = typename Op::T;
  using V = vec16<storage_t<IN>>;
  T acc[U];
  vector_best<IN, Op> best;

  __device__ __forceinline__ vector_folder() {
#pragma unroll
    for (int u = 0; u < U; ++u)
      acc[u] = Op::identity();
  }

  template <class W> __device__ __forceinline__ void scalar(int u, W w, int64_t i) {
    acc[u] = Op::fold(acc[u], w, i);
  }

  __device__ __forceinline__ void vector(int u, const V &x, int64_t first) {
    if constexpr (is_arg_op<Op>)
      best.take(x, first);
    else if constexpr (adds_f32_terms<Op>)
      compensated_vector(acc[u], x);
    else
      acc[u] = fold_vector<IN, Op>(acc[u], x, first);
  }

  // f32 inputs put every term through TwoSum (the pair keeps each rounding error): adding each
  // vector's plain sum once would leave the roundings inside the vectors, which matter for
  // data of both signs. Narrower inputs add one plain sum per vector: a TwoSum per term costs
  // them bandwidth for an accuracy no target asks of them (docs/design.md#accumulators).
  // (Where the tiles are not exact, narrow floats add it to an f64 sum: widened_op,
  // compensated_sum.cuh.)
  __device__ __forceinline__ void compensated_vector(T &a, const V &x) const {
    if constexpr (IN != CUREDUCE_F32) {
      a = Op::add(a, vector_sum_f32<IN, typename Op::base>(x));
    } else {
      float t[V::N];
      vector_terms_f32<IN, typename Op::base>(x, t);
#pragma unroll
      for (int i = 0; i < V::N; ++i)
        a = Op::add(a, t[i]);
    }
  }

  // U vectors loaded together, slot u taking x[u] whose first element has index first(u).
  template <class First> __device__ __forceinline__ void vectors(const V (&x)[U], First first) {
    if constexpr (is_arg_op<Op>) {
      best.take(x, first);
    } else if constexpr (exact_compensated_tiles<IN, Op>) {
      // The tile's plain sum is exact: one TwoSum per tile.
      float t[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        t[u] = vector_sum_f32<IN, typename Op::base>(x[u]);
      acc[0] = Op::add(acc[0], tree_sum_f32<U>(t));
    } else if constexpr (IN == CUREDUCE_F8_E5M2 && (Op::kind == CUREDUCE_SUM || Op::kind == CUREDUCE_MEAN) &&
                         std::is_same<T, double>::value && !is_widened<Op>) {
      // e5m2 into f64: a tile of values below 4 (most tiles of most data) sums exactly in f32,
      // as in e5m2_exact_sum, and joins one f64 chain with one conversion instead of 64
      // (F2F.F64 runs on a narrow pipe). While a thread's magnitudes add up to less than
      // 2^37, where every multiple of 2^-16 is a double, this chain holds the exact sum, as
      // the slots did element by element: the same bits. Other tiles go element by element,
      // in the same chain (e5m2_exact_sum's split, or more chains, spill at 32 registers:
      // docs/design.md#accumulators).
      static_assert(U <= 4, "64 e5m2 values at most");
      if (e5m2_below_4<U>(x)) {
        acc[0] = Op::combine(acc[0], (double)fp8_tile_sum<IN, U>(x));
      } else {
#pragma unroll
        for (int u = 0; u < U; ++u)
          acc[0] = fold_vector<IN, Op>(acc[0], x[u], first(u));
      }
    } else if constexpr (is_widened<Op>) {
      // One f64 chain for the whole tile: a DADD a vector is cheap, and three fewer live
      // doubles let ptxas issue all U loads before the first is used (with U chains, under 32
      // registers, it issued the last load only after the first had arrived; SASS, sm_90).
#pragma unroll
      for (int u = 0; u < U; ++u)
        acc[0] = Op::add(acc[0], vector_sum_f32<IN, typename Op::base>(x[u]));
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u)
        vector(u, x[u], first(u));
    }
  }

  __device__ __forceinline__ T result() const {
    T r = acc[0];
#pragma unroll
    for (int u = 1; u < U; ++u)
      r = Op::combine(r, acc[u]);
    if constexpr (is_arg_op<Op>)
      r = Op::combine(r, best.result());
    return r;
  }
};

// A load through L2 only (ld.global.cg) of any 2, 4, 8 or 16-byte T: partials written by other
// SMs are never stale in our L1.
template <class T> __device__ __forceinline__ T load_cg(const T *p) {
  T v;
  if constexpr (sizeof(T) == 16) {
    const int4 w = __ldcg(reinterpret_cast<const int4 *>(p));
    memcpy(&v, &w, 16);
  } else if constexpr (sizeof(T) == 8) {
    const long long w = __ldcg(reinterpret_cast<const long long *>(p));
    memcpy(&v, &w, 8);
  } else if constexpr (sizeof(T) == 4) {
    const int w = __ldcg(reinterpret_cast<const int *>(p));
    memcpy(&v, &w, 4);
  } else {
    const short w = __ldcg(reinterpret_cast<const short *>(p));
    memcpy(&v, &w, 2);
  }
  return v;
}

} // namespace cr
