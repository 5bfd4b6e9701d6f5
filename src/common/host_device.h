/* CR_HD marks the small functions that host C and CUDA code share (exact states, the IEEE
 * minimum and maximum, the multi-GPU combine): inline on both sides. */
#ifndef CUREDUCE_COMMON_HOST_DEVICE_H
#define CUREDUCE_COMMON_HOST_DEVICE_H

#if defined(__CUDACC__)
#define CR_HD __host__ __device__ __forceinline__
#else
#define CR_HD static inline
#endif

#endif
