// Rung 11: 16-byte vectorised loads. Each thread loads four elements with one instruction
// (float4 / int4 width), so the memory system sees a quarter of the requests for the same
// bytes, and each thread keeps more bytes in flight. Unaligned starts get a scalar head, and
// n not a multiple of 4 a scalar tail (vec4_load.cuh).
// Slow: still two launches: the partials of the first go to a second, one-block launch, and
// at small n the second launch's fixed cost is as large as the work.
// Next: rung 12 finishes in the same launch, deterministically.
#include "ladder.h"
#include "rung.cuh"
#include "vec4_load.cuh"

#include "../src/device/block_reduce.cuh"

namespace ladder {

template <class T, class Op> __global__ void vector_loads(const T *in, uint64_t n, T *out) {
  T v = thread_share_vec4<T, Op>(in, n);
  v = cr::block_reduce<Op, BLOCK>(v);
  if (threadIdx.x == 0)
    out[blockIdx.x] = v;
}

struct rung11 {
  template <class T, class Op> static void run(const rung_ctx &c) {
    reduce_passes<T>(c, 16 * BLOCK, 1024, [&](const T *in, uint64_t n, T *out, unsigned blocks) {
      vector_loads<T, Op><<<blocks, BLOCK, 0, c.stream>>>(in, n, out);
    });
  }
};

void run_11(const rung_ctx &c) { dispatch<rung11>(c); }

} // namespace ladder
