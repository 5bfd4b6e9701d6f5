/* The multi-GPU C API (include/cureduce_nccl.h): validation, the dist object and its buffers,
 * and the order of the steps: local reduction with the single-GPU call, pack, all-gather,
 * combine (or, for the exact sums, accumulate, all-reduce, finish). Every argument is checked
 * before anything is launched or any collective is entered. */
#include "cureduce_nccl.h"

#include "../common/gpu_args.h"
#include "../common/matrix_shape.h"
#include "launch.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdlib.h>

struct cureduce_dist_s {
  ncclComm_t comm;
  cureduce_handle handle;
  int rank, world;
  uint64_t row_capacity;  /* rows the buffers below hold (1 at creation: a full array) */
  void *d_local;          /* row_capacity local results, 8 bytes each */
  cr_dist_partial *d_all; /* world x row_capacity partials, rank-major: the all-gather's buffer */
  int64_t *d_exact;       /* row_capacity exact states */
  uint64_t *d_count;      /* cureduce_dist_count's two words: the counts' high and low halves */
};

static cureduce_status nccl_status(ncclResult_t r) {
  return r == ncclSuccess ? CUREDUCE_SUCCESS : CUREDUCE_ERROR_CUDA;
}

#define STATE_BYTES (CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t))

/* 0, or the first failure's error. */
static cudaError_t free_rows(struct cureduce_dist_s *d) {
  const cudaError_t a = cudaFree(d->d_local), b = cudaFree(d->d_all), c = cudaFree(d->d_exact);
  d->d_local = NULL;
  d->d_all = NULL;
  d->d_exact = NULL;
  d->row_capacity = 0;
  return a != cudaSuccess ? a : b != cudaSuccess ? b : c;
}

/* The row buffers for `rows` rows: 8 bytes of local result, world partials and an exact state
   per row. They replace d's only when all are allocated: a failure leaves d's as they were. */
static cureduce_status alloc_rows(struct cureduce_dist_s *d, uint64_t rows) {
  if (rows > SIZE_MAX / sizeof(cr_dist_partial) / (uint64_t)d->world || rows > SIZE_MAX / STATE_BYTES)
    return CUREDUCE_ERROR_INVALID_VALUE;
  struct cureduce_dist_s fresh = *d;
  fresh.d_local = NULL;
  fresh.d_all = NULL;
  fresh.d_exact = NULL;
  if (cudaMalloc(&fresh.d_local, (size_t)rows * 8) != cudaSuccess ||
      cudaMalloc((void **)&fresh.d_all, (size_t)rows * (size_t)d->world * sizeof(cr_dist_partial)) !=
          cudaSuccess ||
      cudaMalloc((void **)&fresh.d_exact, (size_t)rows * STATE_BYTES) != cudaSuccess) {
    (void)cudaGetLastError();
    free_rows(&fresh);
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  }
  (void)free_rows(d);
  fresh.row_capacity = rows;
  *d = fresh;
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_dist_create(cureduce_dist *dist, void *nccl_comm, cureduce_handle handle) {
  if (!dist)
    return CUREDUCE_ERROR_NULL_POINTER;
  *dist = NULL;
  if (!handle)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  if (!nccl_comm)
    return CUREDUCE_ERROR_NULL_POINTER;
  const ncclComm_t comm = (ncclComm_t)nccl_comm;
  int rank = 0, world = 0, comm_device = -1, device = -1;
  if (ncclCommUserRank(comm, &rank) != ncclSuccess || ncclCommCount(comm, &world) != ncclSuccess ||
      ncclCommCuDevice(comm, &comm_device) != ncclSuccess)
    return CUREDUCE_ERROR_CUDA;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return CUREDUCE_ERROR_NO_DEVICE;
  }
  if (device != comm_device || world < 1)
    return CUREDUCE_ERROR_INVALID_VALUE;
  struct cureduce_dist_s *d = calloc(1, sizeof *d);
  if (!d)
    return CUREDUCE_ERROR_OUT_OF_MEMORY;
  d->comm = comm;
  d->handle = handle;
  d->rank = rank;
  d->world = world;
  cureduce_status st = alloc_rows(d, 1);
  if (st == CUREDUCE_SUCCESS && cudaMalloc((void **)&d->d_count, 2 * sizeof(uint64_t)) != cudaSuccess) {
    (void)cudaGetLastError();
    st = CUREDUCE_ERROR_OUT_OF_MEMORY;
  }
  if (st != CUREDUCE_SUCCESS) {
    (void)cureduce_dist_destroy(d);
    return st;
  }
  *dist = d;
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_dist_destroy(cureduce_dist dist) {
  if (!dist)
    return CUREDUCE_SUCCESS;
  const cudaError_t sync = cudaDeviceSynchronize();
  const cudaError_t freed = free_rows(dist);
  const cudaError_t freed_count = cudaFree(dist->d_count);
  free(dist);
  return sync == cudaSuccess && freed == cudaSuccess && freed_count == cudaSuccess ? CUREDUCE_SUCCESS
                                                                                   : CUREDUCE_ERROR_CUDA;
}

cureduce_status cureduce_dist_rank(cureduce_dist dist, int *rank, int *world) {
  if (!dist)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  if (!rank || !world)
    return CUREDUCE_ERROR_NULL_POINTER;
  *rank = dist->rank;
  *world = dist->world;
  return CUREDUCE_SUCCESS;
}

cureduce_status cureduce_dist_reserve_rows(cureduce_dist dist, uint64_t max_rows) {
  if (!dist)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  if (max_rows <= dist->row_capacity)
    return CUREDUCE_SUCCESS;
  if (cudaDeviceSynchronize() != cudaSuccess) /* the old buffers may still be in use */
    return CUREDUCE_ERROR_CUDA;
  return alloc_rows(dist, max_rows); /* keeps the old buffers when it fails */
}

cureduce_status cureduce_dist_count(cureduce_dist dist, uint64_t n_local, uint64_t *n_global, void *stream) {
  if (!dist)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  if (!n_global)
    return CUREDUCE_ERROR_NULL_POINTER;
  /* The high and low 32 bits summed apart cannot wrap (fewer than 2^31 ranks), so a total of
     2^64 or more is seen, and refused alike on every rank. */
  cureduce_status st = cr_dist_launch_store_u64(dist->d_count, n_local >> 32, stream);
  if (st == CUREDUCE_SUCCESS)
    st = cr_dist_launch_store_u64(dist->d_count + 1, n_local & 0xffffffffu, stream);
  if (st != CUREDUCE_SUCCESS)
    return st;
  st = nccl_status(
      ncclAllReduce(dist->d_count, dist->d_count, 2, ncclUint64, ncclSum, dist->comm, (cudaStream_t)stream));
  if (st != CUREDUCE_SUCCESS)
    return st;
  uint64_t halves[2] = {0, 0};
  if (cudaMemcpyAsync(halves, dist->d_count, sizeof halves, cudaMemcpyDeviceToHost, (cudaStream_t)stream) !=
          cudaSuccess ||
      cudaStreamSynchronize((cudaStream_t)stream) != cudaSuccess)
    return CUREDUCE_ERROR_CUDA;
  const uint64_t high = halves[0] + (halves[1] >> 32);
  if (high >> 32)
    return CUREDUCE_ERROR_INVALID_VALUE;
  *n_global = (high << 32) + (halves[1] & 0xffffffffu);
  return CUREDUCE_SUCCESS;
}

/* The checks every rank makes before any collective, in cureduce.h's order: the dist object,
   then cr_check_gpu_args. `elements` says whether this rank's d_in will be read, `outputs`
   whether d_out will be written. */
static cureduce_status validate(cureduce_dist dist, cureduce_op op, cureduce_dtype in_dtype, const void *d_in,
                                int elements, cureduce_dtype *acc, const void *d_out, int outputs) {
  if (!dist)
    return CUREDUCE_ERROR_INVALID_HANDLE;
  return cr_check_gpu_args(op, in_dtype, d_in, elements, acc, d_out, outputs);
}

/* Exact sums: every rank's exact states, one a row (a full array is one row of cols elements)
   or, where d_offsets is not NULL, one a segment, summed as integers over the ranks, each
   rounded once. */
static cureduce_status reduce_exact(cureduce_dist dist, cureduce_op op, cureduce_dtype in_dtype,
                                    const void *d_in, uint64_t rows, uint64_t cols, uint64_t ld,
                                    const int64_t *d_offsets, cureduce_dtype out_dtype, void *d_out,
                                    void *stream) {
  if (cudaMemsetAsync(dist->d_exact, 0, rows * STATE_BYTES, (cudaStream_t)stream) != cudaSuccess)
    return CUREDUCE_ERROR_CUDA;
  cureduce_status st = d_offsets ? cureduce_exact_accumulate_segments(dist->handle, in_dtype, d_in, rows,
                                                                      d_offsets, dist->d_exact, stream)
                                 : cureduce_exact_accumulate_rows(dist->handle, in_dtype, d_in, rows, cols,
                                                                  ld, dist->d_exact, stream);
  if (st != CUREDUCE_SUCCESS)
    return st;
  st = nccl_status(ncclAllReduce(dist->d_exact, dist->d_exact, rows * CUREDUCE_EXACT_STATE_WORDS, ncclInt64,
                                 ncclSum, dist->comm, (cudaStream_t)stream));
  if (st != CUREDUCE_SUCCESS)
    return st;
  return cureduce_exact_finish_rows(dist->handle, op, dist->d_exact, rows, out_dtype, d_out, stream);
}

/* After the local results are in d_local (where count > 0, or for segments): pack, all-gather,
   combine. */
static cureduce_status gather_and_combine(cureduce_dist dist, cureduce_op op, cureduce_dtype in_dtype,
                                          cureduce_dtype acc, const void *d_in, uint64_t rows, uint64_t ld,
                                          uint64_t count, const int64_t *d_offsets, void *d_out,
                                          void *stream) {
  cr_dist_partial *mine = dist->d_all + (uint64_t)dist->rank * rows;
  cureduce_status st = cr_dist_launch_pack(op, in_dtype, acc, d_in, rows, ld, (int64_t)count, d_offsets,
                                           dist->d_local, mine, stream);
  if (st != CUREDUCE_SUCCESS)
    return st;
  /* In place: rank r's rows partials land at d_all + r * rows on every rank. */
  st = nccl_status(ncclAllGather(mine, dist->d_all, rows * CR_DIST_PARTIAL_WORDS, ncclInt64, dist->comm,
                                 (cudaStream_t)stream));
  if (st != CUREDUCE_SUCCESS)
    return st;
  return cr_dist_launch_combine(op, acc, dist->d_all, dist->world, rows, d_out, stream);
}

cureduce_status cureduce_dist_reduce(cureduce_dist dist, cureduce_op op, cureduce_dtype in_dtype,
                                     const void *d_in, uint64_t n_local, uint64_t n_global,
                                     cureduce_dtype acc_dtype, void *d_out, void *stream) {
  cureduce_status st = validate(dist, op, in_dtype, d_in, n_local > 0, &acc_dtype, d_out, 1);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (n_local > n_global || n_global > (uint64_t)INT64_MAX ||
      !cr_extent_ok(n_local, cureduce_dtype_size(in_dtype)))
    return CUREDUCE_ERROR_INVALID_VALUE;
  /* The same on every rank: the library's empty rule, no communication. One rank's result is
     cureduce_reduce's (its shard is the whole array): no pack, collective or combine. */
  if (n_global == 0 || dist->world == 1)
    return cureduce_reduce(dist->handle, op, in_dtype, d_in, n_local, acc_dtype, d_out, stream);
  if (op == CUREDUCE_SUM_EXACT || op == CUREDUCE_MEAN_EXACT)
    return reduce_exact(dist, op, in_dtype, d_in, 1, n_local, n_local, NULL, acc_dtype, d_out, stream);
  if (n_local > 0) {
    st = cureduce_reduce(dist->handle, cr_dist_local_op(op, acc_dtype), in_dtype, d_in, n_local, acc_dtype,
                         dist->d_local, stream);
    if (st != CUREDUCE_SUCCESS)
      return st;
  }
  return gather_and_combine(dist, op, in_dtype, acc_dtype, d_in, 1, 0, n_local, NULL, d_out, stream);
}

cureduce_status cureduce_dist_reduce_rows(cureduce_dist dist, cureduce_op op, cureduce_dtype in_dtype,
                                          const void *d_in, uint64_t rows, uint64_t cols_local, uint64_t ld,
                                          uint64_t cols_global, cureduce_dtype acc_dtype, void *d_out,
                                          void *stream) {
  cureduce_status st =
      validate(dist, op, in_dtype, d_in, rows > 0 && cols_local > 0, &acc_dtype, d_out, rows > 0);
  if (st != CUREDUCE_SUCCESS)
    return st;
  const uint64_t size = cureduce_dtype_size(in_dtype);
  if (!cr_matrix_shape_ok(rows, cols_local, ld, size) || cols_local > cols_global ||
      cols_global > (uint64_t)INT64_MAX || rows > dist->row_capacity ||
      cr_overlaps_matrix(d_out, rows * cureduce_result_size(op, acc_dtype), d_in, rows, cols_local, ld, size))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (rows == 0)
    return CUREDUCE_SUCCESS;
  if (cols_global == 0 || dist->world == 1) /* every row empty, or one rank: the library's call */
    return cureduce_reduce_rows(dist->handle, op, in_dtype, d_in, rows, cols_local, ld, acc_dtype, d_out,
                                stream);
  if (op == CUREDUCE_SUM_EXACT || op == CUREDUCE_MEAN_EXACT)
    return reduce_exact(dist, op, in_dtype, d_in, rows, cols_local, ld, NULL, acc_dtype, d_out, stream);
  if (cols_local > 0) {
    st = cureduce_reduce_rows(dist->handle, cr_dist_local_op(op, acc_dtype), in_dtype, d_in, rows, cols_local,
                              ld, acc_dtype, dist->d_local, stream);
    if (st != CUREDUCE_SUCCESS)
      return st;
  }
  return gather_and_combine(dist, op, in_dtype, acc_dtype, d_in, rows, ld, cols_local, NULL, d_out, stream);
}

cureduce_status cureduce_dist_reduce_segments(cureduce_dist dist, cureduce_op op, cureduce_dtype in_dtype,
                                              const void *d_in, uint64_t num_segments,
                                              const int64_t *d_offsets, cureduce_dtype acc_dtype, void *d_out,
                                              void *stream) {
  const int any = num_segments > 0;
  cureduce_status st = validate(dist, op, in_dtype, d_in, any, &acc_dtype, d_out, any);
  if (st != CUREDUCE_SUCCESS)
    return st;
  if (any && !d_offsets)
    return CUREDUCE_ERROR_NULL_POINTER;
  if ((uintptr_t)d_offsets % sizeof(int64_t) != 0 || num_segments > dist->row_capacity ||
      cr_overlaps_offsets(d_out, num_segments * cureduce_result_size(op, acc_dtype), d_offsets, num_segments))
    return CUREDUCE_ERROR_INVALID_VALUE;
  if (any && !cr_is_device_pointer(d_offsets))
    return CUREDUCE_ERROR_HOST_POINTER;
  if (!any)
    return CUREDUCE_SUCCESS;
  /* One rank: the library's call, but for MEAN_EXACT, whose empty segments get NaN (a rounded
     empty state) with any number of ranks. */
  if (dist->world == 1 && op != CUREDUCE_MEAN_EXACT)
    return cureduce_reduce_segments(dist->handle, op, in_dtype, d_in, num_segments, d_offsets, acc_dtype,
                                    d_out, stream);
  if (op == CUREDUCE_SUM_EXACT || op == CUREDUCE_MEAN_EXACT)
    return reduce_exact(dist, op, in_dtype, d_in, num_segments, 0, 0, d_offsets, acc_dtype, d_out, stream);
  st = cureduce_reduce_segments(dist->handle, cr_dist_local_op(op, acc_dtype), in_dtype, d_in, num_segments,
                                d_offsets, acc_dtype, dist->d_local, stream);
  if (st != CUREDUCE_SUCCESS)
    return st;
  return gather_and_combine(dist, op, in_dtype, acc_dtype, d_in, num_segments, 0, 0, d_offsets, d_out,
                            stream);
}
