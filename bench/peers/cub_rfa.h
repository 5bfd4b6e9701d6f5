/* CUB's float sums built against newer CCCL headers than the toolkit's (bench/peers/CMakeLists.txt):
 * the reproducible gpu_to_gpu sum (RFA) and the default sum, as benchmark peers. A C interface so that
 * no CCCL type crosses into code built with the toolkit's CCCL. */
#ifndef CUREDUCE_BENCH_PEERS_CUB_RFA_H
#define CUREDUCE_BENCH_PEERS_CUB_RFA_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CR_PEER_API __attribute__((visibility("default")))
#else
#define CR_PEER_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the peer library is linked. */
CR_PEER_API int cr_peer_rfa_available(void);

/* CCCL_VERSION of the headers the peer was built with (major * 1000000 + minor * 1000 + patch). */
CR_PEER_API int cr_peer_cccl_version(void);

/* Both sums take n floats (is_f64 = 0) or doubles (is_f64 = 1) at d_in and write their sum, of the same
 * type, to d_out on `stream` (a cudaStream_t). With d_temp NULL they only write the temporary storage
 * needed, for this n on the current device, to *temp_bytes. Otherwise d_temp holds *temp_bytes bytes
 * and they launch without allocating. Return 0 or the cudaError_t. */

/* cub::DeviceReduce::Sum under cuda::execution::determinism::gpu_to_gpu: the same bits on any GPU. */
CR_PEER_API int cr_peer_rfa_sum(int is_f64, const void *d_in, uint64_t n, void *d_out, void *d_temp,
                                size_t *temp_bytes, void *stream);

/* cub::DeviceReduce::Sum with its default guarantee (run_to_run), from the same headers. */
CR_PEER_API int cr_peer_cub_sum(int is_f64, const void *d_in, uint64_t n, void *d_out, void *d_temp,
                                size_t *temp_bytes, void *stream);

#ifdef __cplusplus
}
#endif

#endif
