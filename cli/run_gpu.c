/* See run_gpu.h. The reduction is timed on a stream of its own with one event pair per call,
 * so each sample is GPU time of that call alone, free of host launch gaps between calls. The
 * results printed are those of the last timed call (the GPU results are deterministic). */
#include "run_gpu.h"

#include "args.h"
#include "cuda_probe.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct gpu_state {
  int dev;
  cureduce_handle h;
  cudaStream_t stream;
  void *d_in, *d_out;
  cudaEvent_t ev[2 * GPU_TIMED_CALLS];
  int events;
} gpu_state;

static void gpu_release(gpu_state *g) {
  for (int i = 0; i < g->events; ++i)
    (void)cudaEventDestroy(g->ev[i]);
  (void)cudaFree(g->d_in);
  (void)cudaFree(g->d_out);
  if (g->stream)
    (void)cudaStreamDestroy(g->stream);
  (void)cureduce_destroy(g->h);
}

static int cuda_failed(cudaError_t e, const char *what) {
  if (e == cudaSuccess)
    return 0;
  fprintf(stderr, "%s run: %s failed: %s\n", CLI_NAME, what, cudaGetErrorString(e));
  return 1;
}

static int gpu_alloc(const gpu_state *g, void **p, size_t bytes, const char *what) {
  if (cudaMalloc(p, bytes ? bytes : 1) == cudaSuccess)
    return 0;
  *p = NULL;
  (void)cudaGetLastError();
  size_t free_b = 0, total_b = 0;
  (void)cudaMemGetInfo(&free_b, &total_b);
  char need[32], fr[32], tot[32];
  fprintf(stderr, "%s run: cannot allocate %s for the %s on GPU %d (%s free of %s)\n", CLI_NAME,
          format_bytes((double)bytes, need, sizeof need), what, g->dev,
          format_bytes((double)free_b, fr, sizeof fr), format_bytes((double)total_b, tot, sizeof tot));
  return 1;
}

/* The handle, the stream and the device line; -1 when cureduce finds no usable GPU. */
static int gpu_open(gpu_state *g, char *why, size_t len) {
  const cureduce_status st = cureduce_create(&g->h);
  if (st == CUREDUCE_ERROR_NO_DEVICE) {
    snprintf(why, len, "no CUDA GPU usable by this build (%s)", cureduce_status_string(st));
    return GPU_NONE;
  }
  if (st != CUREDUCE_SUCCESS) {
    fprintf(stderr, "%s run: cannot start on the GPU: %s\n", CLI_NAME, cureduce_status_string(st));
    return 1;
  }
  struct cudaDeviceProp prop;
  if (cuda_failed(cudaGetDevice(&g->dev), "cudaGetDevice") ||
      cuda_failed(cudaGetDeviceProperties(&prop, g->dev), "cudaGetDeviceProperties") ||
      cuda_failed(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking), "cudaStreamCreate"))
    return 1;
  printf("device: GPU %d, %s\n", g->dev, prop.name);
  return 0;
}

/* A failed call: CUREDUCE_EMPTY passes through for the caller's message; others print. */
static int reduce_failed(cureduce_status st) {
  if (st == CUREDUCE_SUCCESS)
    return 0;
  if (st == CUREDUCE_EMPTY)
    return GPU_EMPTY;
  fprintf(stderr, "%s run: the reduction failed on the GPU: %s\n", CLI_NAME, cureduce_status_string(st));
  return 1;
}

static cureduce_status launch(const gpu_state *g, const gpu_job *j) {
  return plan_run_gpu(g->h, j->plan, j->op, j->dtype, j->acc, g->d_in, g->d_out, (void *)g->stream);
}

static int compare_float(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Call i between its own pair of events. */
static int timed_call(const gpu_state *g, const gpu_job *j, int i) {
  if (cuda_failed(cudaEventRecord(g->ev[2 * i], g->stream), "cudaEventRecord"))
    return 1;
  const int rc = reduce_failed(launch(g, j));
  if (rc)
    return rc;
  return cuda_failed(cudaEventRecord(g->ev[2 * i + 1], g->stream), "cudaEventRecord");
}

/* GPU_TIMED_CALLS calls, or as few as 3 when one call takes more than 50 ms (an exact sum of
   adversarial data, or a huge array), to stay near a second in all. */
static int calls_for(float first_ms) {
  if (first_ms <= 50.0f)
    return GPU_TIMED_CALLS;
  const int fit = (int)(1000.0f / first_ms);
  return fit < 3 ? 3 : fit > GPU_TIMED_CALLS ? GPU_TIMED_CALLS : fit;
}

/* One warm-up call (it also checks the arguments), then the timed calls; their median. */
static int time_calls(gpu_state *g, const gpu_job *j, gpu_timing *t) {
  int rc = reduce_failed(launch(g, j));
  if (rc || cuda_failed(cudaStreamSynchronize(g->stream), "the warm-up reduction"))
    return rc ? rc : 1;
  for (; g->events < 2 * GPU_TIMED_CALLS; ++g->events)
    if (cuda_failed(cudaEventCreate(&g->ev[g->events]), "cudaEventCreate"))
      return 1;
  float ms[GPU_TIMED_CALLS];
  t->calls = GPU_TIMED_CALLS;
  for (int i = 0; i < t->calls; ++i) {
    if ((rc = timed_call(g, j, i)) != 0)
      return rc;
    if (i == 0) {
      if (cuda_failed(cudaEventSynchronize(g->ev[1]), "the first timed reduction") ||
          cuda_failed(cudaEventElapsedTime(&ms[0], g->ev[0], g->ev[1]), "cudaEventElapsedTime"))
        return 1;
      t->calls = calls_for(ms[0]);
    }
  }
  if (cuda_failed(cudaStreamSynchronize(g->stream), "the timed reductions"))
    return 1;
  for (int i = 1; i < t->calls; ++i)
    if (cuda_failed(cudaEventElapsedTime(&ms[i], g->ev[2 * i], g->ev[2 * i + 1]), "cudaEventElapsedTime"))
      return 1;
  qsort(ms, (size_t)t->calls, sizeof ms[0], compare_float);
  t->median_us = 1e3 * 0.5 * ((double)ms[(t->calls - 1) / 2] + (double)ms[t->calls / 2]);
  return 0;
}

static int gpu_work(gpu_state *g, const gpu_job *j, gpu_timing *t) {
  if (gpu_alloc(g, &g->d_in, j->in_bytes, "input") || gpu_alloc(g, &g->d_out, j->out_bytes, "results"))
    return 1;
  /* Copies on the reduction's own stream: ordered with it, whatever the default stream does. */
  if (cuda_failed(cudaMemcpyAsync(g->d_in, j->h_in, j->in_bytes, cudaMemcpyHostToDevice, g->stream),
                  "copying the input to the GPU"))
    return 1;
  const int rc = time_calls(g, j, t);
  if (rc)
    return rc;
  t->bytes = (double)j->in_bytes;
  if (cuda_failed(cudaMemcpyAsync(j->h_out, g->d_out, j->out_bytes, cudaMemcpyDeviceToHost, g->stream),
                  "copying the results from the GPU") ||
      cuda_failed(cudaStreamSynchronize(g->stream), "copying the results from the GPU"))
    return 1;
  return 0;
}

int gpu_run(const gpu_job *job, gpu_timing *t, char *why, size_t len) {
  if (cuda_probe(why, len) == 0)
    return GPU_NONE;
  gpu_state g = {0};
  int rc = gpu_open(&g, why, len);
  if (rc == 0)
    rc = gpu_work(&g, job, t);
  gpu_release(&g);
  return rc;
}
