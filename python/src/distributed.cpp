#include "distributed.h"

#include "cureduce.h"
#include "launch.h"
#include "reduce_call.h"

#include <cstdint>
#include <string>

namespace nb = nanobind;

namespace cureduce_py {

namespace {

template <typename T> T *at(uintptr_t address) { return reinterpret_cast<T *>(address); }

// Adds row i of the rows x cols matrix of dtype at data (ld elements apart) to state i at
// states (rows states of CUREDUCE_EXACT_STATE_WORDS int64 words).
void exact_accumulate_rows(int dtype, uintptr_t data, uint64_t rows, uint64_t cols, uint64_t ld,
                           uintptr_t states, int device, uintptr_t stream) {
  on_gpu_or_raise(device, stream, "cureduce.distributed: exact states", [&](cureduce_handle h, void *s) {
    return cureduce_exact_accumulate_rows(h, static_cast<cureduce_dtype>(dtype), at<const void>(data), rows,
                                          cols, ld, at<int64_t>(states), s);
  });
}

// Rounds each of rows states into one element of out_dtype at out (op SUM_EXACT or MEAN_EXACT).
void exact_finish_rows(int op, uintptr_t states, uint64_t rows, int out_dtype, uintptr_t out, int device,
                       uintptr_t stream) {
  on_gpu_or_raise(device, stream, "cureduce.distributed: exact rounding", [&](cureduce_handle h, void *s) {
    return cureduce_exact_finish_rows(h, static_cast<cureduce_op>(op), at<const int64_t>(states), rows,
                                      static_cast<cureduce_dtype>(out_dtype), at<void>(out), s);
  });
}

// This rank's partials of rows rows (count elements each, ld apart at data) from its local
// results at local, into mine (rows partials of CR_DIST_PARTIAL_WORDS int64 words).
void pack(int op, int dtype, int acc, uintptr_t data, uint64_t rows, uint64_t ld, int64_t count,
          uintptr_t local, uintptr_t mine, int device, uintptr_t stream) {
  on_gpu_or_raise(device, stream, "cureduce.distributed: pack", [&](cureduce_handle, void *s) {
    return cr_dist_launch_pack(static_cast<cureduce_op>(op), static_cast<cureduce_dtype>(dtype),
                               static_cast<cureduce_dtype>(acc), at<const void>(data), rows, ld, count,
                               nullptr, at<const void>(local), at<cr_dist_partial>(mine), s);
  });
}

// out[i] = the rank-order combine of the world partials of row i (rank r's at parts[r * rows + i]).
void combine(int op, int acc, uintptr_t parts, int world, uint64_t rows, uintptr_t out, int device,
             uintptr_t stream) {
  on_gpu_or_raise(device, stream, "cureduce.distributed: combine", [&](cureduce_handle, void *s) {
    return cr_dist_launch_combine(static_cast<cureduce_op>(op), static_cast<cureduce_dtype>(acc),
                                  at<const cr_dist_partial>(parts), world, rows, at<void>(out), s);
  });
}

} // namespace

void bind_distributed(nb::module_ &m) {
  m.def("exact_accumulate_rows", &exact_accumulate_rows, nb::arg("dtype"), nb::arg("data"), nb::arg("rows"),
        nb::arg("cols"), nb::arg("ld"), nb::arg("states"), nb::arg("device"), nb::arg("stream"));
  m.def("exact_finish_rows", &exact_finish_rows, nb::arg("op"), nb::arg("states"), nb::arg("rows"),
        nb::arg("out_dtype"), nb::arg("out"), nb::arg("device"), nb::arg("stream"));
  m.def("dist_pack", &pack, nb::arg("op"), nb::arg("dtype"), nb::arg("acc"), nb::arg("data"), nb::arg("rows"),
        nb::arg("ld"), nb::arg("count"), nb::arg("local"), nb::arg("mine"), nb::arg("device"),
        nb::arg("stream"));
  m.def("dist_combine", &combine, nb::arg("op"), nb::arg("acc"), nb::arg("parts"), nb::arg("world"),
        nb::arg("rows"), nb::arg("out"), nb::arg("device"), nb::arg("stream"));
  m.def(
      "dist_local_op",
      [](int op, int acc) {
        return static_cast<int>(
            cr_dist_local_op(static_cast<cureduce_op>(op), static_cast<cureduce_dtype>(acc)));
      },
      nb::arg("op"), nb::arg("acc"), "The op each rank runs on its shard (src/dist/combine.h).");
  m.attr("EXACT_STATE_WORDS") = CUREDUCE_EXACT_STATE_WORDS;
  m.attr("PARTIAL_WORDS") = CR_DIST_PARTIAL_WORDS;
}

} // namespace cureduce_py
