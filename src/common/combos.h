/* The one list of supported (input dtype, accumulator dtype) pairs.
 *
 * Every reduction op is offered for every pair below (but MEAN with an integer accumulator). The C API checks
 * requests against it, the GPU dispatch instantiates one kernel per (op, pair) from it, and the CPU reference
 * accepts exactly the same set. To offer a new pair, add one line here.
 *
 * X(input, accumulator) with the suffixes of the cureduce_dtype enumerators. */
#ifndef CUREDUCE_COMBOS_H
#define CUREDUCE_COMBOS_H

#define CUREDUCE_FOR_EACH_PAIR(X)                                                                            \
  X(F32, F32)                                                                                                \
  X(F32, F64)                                                                                                \
  X(F64, F64)                                                                                                \
  X(F16, F32)                                                                                                \
  X(F16, F16)                                                                                                \
  X(F16, F64)                                                                                                \
  X(BF16, F32)                                                                                               \
  X(BF16, BF16)                                                                                              \
  X(BF16, F64)                                                                                               \
  X(F8_E4M3, F32)                                                                                            \
  X(F8_E4M3, F16)                                                                                            \
  X(F8_E4M3, F64)                                                                                            \
  X(F8_E5M2, F32)                                                                                            \
  X(F8_E5M2, F16)                                                                                            \
  X(F8_E5M2, F64)                                                                                            \
  X(I8, I64)                                                                                                 \
  X(I8, I32)                                                                                                 \
  X(I8, F64)                                                                                                 \
  X(I32, I64)                                                                                                \
  X(I32, F64)                                                                                                \
  X(I64, I64)                                                                                                \
  X(I64, F64)

/* The one list of ops: X(suffix of the cureduce_op enumerator, name). The names
   (cureduce_op_name), the dispatch switches, the per-op translation units and the per-op tests
   (CMake reads this line) all follow from it; adding an op means a line here, its enumerator
   in cureduce.h and its semantics (op_traits.cuh, cpu/reduce.c). MEAN is not offered with an
   integer accumulator (cureduce_supported refuses it; the dispatch skips it). */
#define CUREDUCE_FOR_EACH_OP(X)                                                                              \
  X(SUM, sum)                                                                                                \
  X(MIN, min) X(MAX, max) X(ABSMAX, absmax) X(SUMSQ, sumsq) X(ARGMIN, argmin) X(ARGMAX, argmax) X(MEAN, mean)

/* The exact sums: their own kernels (kernels/exact_*.cuh), float inputs only, and the
   accumulator is the output dtype: F64, F32 or the input's own (cureduce_supported). */
#define CUREDUCE_FOR_EACH_EXACT_OP(X) X(SUM_EXACT, sum_exact) X(MEAN_EXACT, mean_exact)

#endif
