// The ladder's registry: every rung, in teaching order, with what it supports.
#pragma once

#include "rung.cuh"

namespace ladder {

void run_01(const rung_ctx &);
void run_02(const rung_ctx &);
void run_03(const rung_ctx &);
void run_04(const rung_ctx &);
void run_05(const rung_ctx &);
void run_06(const rung_ctx &);
void run_07(const rung_ctx &);
void run_08(const rung_ctx &);
void run_09(const rung_ctx &);
void run_10(const rung_ctx &);
void run_11(const rung_ctx &);
void run_12a(const rung_ctx &);
void run_12b(const rung_ctx &);
void run_13(const rung_ctx &);

struct rung_info {
  const char *id;    // "01" ... "13"
  const char *name;  // the file name without number and extension
  bool atomics;      // combines blocks' results with atomics (float sums not reproducible)
  bool float_minmax; // offers min/max for f32 (no float atomicMin/Max in hardware)
  bool f32;          // offers f32 at all (rung 13 is integer only)
  void (*run)(const rung_ctx &);
};

inline constexpr rung_info RUNGS[] = {
    {"01", "atomic_naive", true, false, true, run_01},
    {"02", "interleaved_divergent", false, true, true, run_02},
    {"03", "interleaved_strided", false, true, true, run_03},
    {"04", "sequential", false, true, true, run_04},
    {"05", "first_add_on_load", false, true, true, run_05},
    {"06", "unroll_last_warp", false, true, true, run_06},
    {"07", "complete_unroll", false, true, true, run_07},
    {"08", "grid_stride", false, true, true, run_08},
    {"09", "warp_shuffle", false, true, true, run_09},
    {"10", "shuffle_atomic_per_block", true, false, true, run_10},
    {"11", "vector_loads", false, true, true, run_11},
    {"12a", "single_pass_last_block", false, true, true, run_12a},
    {"12b", "single_pass_grid_sync", false, true, true, run_12b},
    {"13", "i32_reduce_add_sync", false, false, false, run_13},
};
inline constexpr int RUNG_COUNT = sizeof(RUNGS) / sizeof(RUNGS[0]);

inline bool rung_supports(const rung_info &r, cureduce_dtype d, cureduce_op op) {
  if (d == CUREDUCE_F32)
    return r.f32 && (op == CUREDUCE_SUM || r.float_minmax);
  return d == CUREDUCE_I32;
}

// Whether two runs on the same data must give the same bits: everything but float sums
// combined with atomics (integer sums are exact in any order; min and max are order-free).
inline bool rung_reproducible(const rung_info &r, cureduce_dtype d, cureduce_op op) {
  return !(r.atomics && d == CUREDUCE_F32 && op == CUREDUCE_SUM);
}

} // namespace ladder
