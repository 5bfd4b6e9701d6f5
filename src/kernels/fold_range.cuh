// A group of threads (a warp, or a whole block) folding one contiguous range of elements.
// Layer: kernels (a building block of the row and segment kernels).
//
// The range is cut like the full-array kernel's input: scalar head up to the first 16-byte
// boundary, 16-byte vectors, scalar tail. Vector v goes to the thread of rank v % size, which
// loads UNROLL of its vectors before folding any. Each thread meets its elements in increasing
// index order (head, then its vectors, then tail), which the arg ops' fold relies on. The
// partition depends only on the range's address and length and on `size`, so the result's
// bits do too.
#pragma once

#include "../device/vector_fold.cuh"

#include <stdint.h>

namespace cr {

// One round: vectors body[v], body[v + size], ... (UNROLL of them) are all loaded before any is
// folded, so UNROLL * 16 bytes per thread are in flight. I is the index type (int where the
// caller knows the range is small: fewer instructions). first(u): index of x[u]'s first element.
template <int UNROLL, class Folder, class V, class I, class First>
__device__ __forceinline__ void fold_round(Folder &f, const V *body, I v, I size, First first) {
  V x[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    x[u] = body[v + (I)u * size];
  f.vectors(x, first);
}

// Fold in[begin, end) (element offsets from `in`) into one value per thread; element p has
// index p - origin (the position within its row or segment). The caller reduces the threads'
// values over the group.
template <cureduce_dtype IN, class Op, int UNROLL>
__device__ __forceinline__ typename Op::T fold_range(const storage_t<IN> *__restrict__ in, int64_t begin,
                                                     int64_t end, int64_t origin, int rank, int size) {
  using V = vec16<storage_t<IN>>;
  constexpr int ELEM = (int)sizeof(storage_t<IN>);
  vector_folder<IN, Op, UNROLL> f;

  const unsigned misalign = (unsigned)(reinterpret_cast<uintptr_t>(in + begin) % 16);
  int64_t head = misalign ? (16 - misalign) / ELEM : 0;
  head = head < end - begin ? head : end - begin;
  for (int64_t e = begin + rank; e < begin + head; e += size)
    f.scalar(0, widen<IN>(in[e]), e - origin);

  const int64_t body_begin = begin + head;
  const int64_t vectors = (end - body_begin) / V::N;
  const V *body = reinterpret_cast<const V *>(in + body_begin);
  int64_t v = rank;
  for (; v + (int64_t)(UNROLL - 1) * size < vectors; v += (int64_t)UNROLL * size)
    fold_round<UNROLL>(f, body, v, (int64_t)size,
                       [&](int u) { return body_begin + (v + (int64_t)u * size) * V::N - origin; });
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int64_t w = v + (int64_t)u * size;
    if (w < vectors) {
      const V x = body[w]; // one 16-byte load, not a load per word
      f.vector(u, x, body_begin + w * V::N - origin);
    }
  }

  for (int64_t e = body_begin + vectors * V::N + rank; e < end; e += size)
    f.scalar(UNROLL - 1, widen<IN>(in[e]), e - origin);
  return f.result();
}

// fold_range for a range that starts on a 16-byte boundary and holds exactly rounds * UNROLL *
// size whole vectors: no head, no tail, no last partial round. The thread of rank r gets the
// same vectors in the same order, through the same calls to the folder, as from fold_range,
// so the result has the same bits. It exists for speed: fold_range's head, remainder and tail
// code runs for every row even when it has nothing to do, about as many instructions again as
// the loads and adds of a 512-byte row, and short rows whose data sits in L2 are limited by
// instructions, not by memory.
template <cureduce_dtype IN, class Op, int UNROLL>
__device__ __forceinline__ typename Op::T fold_rounds(const storage_t<IN> *__restrict__ row, int rounds,
                                                      int rank, int size) {
  using V = vec16<storage_t<IN>>;
  vector_folder<IN, Op, UNROLL> f;
  const V *body = reinterpret_cast<const V *>(row);
#pragma unroll 1 // one round's UNROLL loads in flight, as in fold_range (more would cost registers)
  for (int k = 0; k < rounds; ++k) {
    const int v = rank + k * UNROLL * size; // < 2^31: a row here is at most 16 KiB
    fold_round<UNROLL>(f, body, v, size, [&](int u) { return (int64_t)(v + u * size) * V::N; });
  }
  return f.result();
}

} // namespace cr
