/* Row, column, axis and segment reductions on the GPU (the op named on the command line, every
 * supported input and accumulator pair) agree with the CPU reference, result by result, on edge
 * shapes: one row, one column, cols = 1 .. 33, a leading dimension larger than cols (also one
 * that keeps short rows 16-byte aligned), starts that are not 16-byte aligned, rows long enough
 * to cross the chunked kernel's chunks, columns long enough to be cut into slices (one group of
 * slices, and several: 65536x1 and 135000x1 are the smallest, for the sanitizer runs), column
 * plans of narrower tiles and their slices (520x128 and 1040x64 cut into 2 slices, small enough
 * for the sanitizer runs at 70000 elements; 16384x256; 4096x1024, where 8-byte types get the
 * longer slices of cols_policy::MIN_ROWS_PER_THREAD), rows enough that the lane-group kernel's
 * warps take several row sets each (98304x39 with ld 40: 4- and 8-byte types have 12288 and
 * 24576 row sets against 4224 to 6336 warps a wave on a 132-SM GPU, so the grid is one wave
 * and its warps take one to six sets each),
 * rows of 16 to 64 KiB, whole warps each when there are 2048 rows or more (2048x2100 f64 from
 * an odd start, 2048x3072 aligned),
 * long rows reduced as full arrays (ROWS_FULL, every row at the same 16-byte phase, or one
 * row): 3x16400 takes every type there within the sanitizer runs' cap, and so does one row
 * of 20003 from an odd start (ld * element size not a multiple of 16 for any type) (one block a row up to
 * 2-byte types, several from 4 bytes, with a partial last tile); one block a row (8x5000, 4-
 * and 8-byte types, also within the cap; 500x4100
 * from an odd start, 4- and 8-byte types, more rows than the 4-byte arg ops' grid cap of 384,
 * so f32 and i32 argmin and argmax take the chunked kernel; 5x32768 with ld 32784, 1- and 2-byte
 * types), several blocks a row (2x33000 from an odd start, so every row has a scalar head and
 * a partial last tile, 2- to 8-byte types; 5x32768, 4- and 8-byte types, whole tiles;
 * 1x100000, any type; 2x300000), f64 rows of 3x70001 from an odd start,
 * columns cut into 32 to 78 slices (32768x128, aligned, and 40000x100 from an odd start, one
 * column a thread), columns in 4-byte packs of 1- and 2-byte elements (500x6, 600x12, and
 * 700x20 with ld 24 from a 4-byte but not 16-byte boundary for 2-byte elements),
 * segment mixes with empty, tiny and huge segments,
 * and axes of outer x length x inner arrays: inner 2, 3, 7 (one column a thread or 4-byte
 * packs, several outer slabs in one tile's warps; 33x2048x2, and 6x200x2 from an odd start),
 * 8 and 128 (packs), long axes cut into slices (4x70001x4,
 * 2x520x128), more tiles than tickets (10000x65x2: no slices), a warp per matrix (10000x65x2,
 * 9000x5x32 from an odd start, 8192x100x8, 9000x1x3; 8192x100x8 and 9000x16x8 in narrower
 * packs, for their few rows a lane), inner 1 and outer 1 (rows and columns),
 * length 1 and 0.
 * Each call also runs twice and must give the same bits.
 *
 * CUREDUCE_TEST_MAX_N caps the elements of one case (the sanitizer runs use it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "per_op_test.h"

typedef struct shape {
  uint64_t rows, cols, ld_extra; /* ld = cols + ld_extra; for an axis: length, inner, 0 */
  unsigned offset;               /* elements from a 256-byte aligned start */
  uint64_t outer;                /* an axis only: outer slabs */
} shape;

static const shape FIXED_SHAPES[] = {
    {1, 1, 0, 0},       {1, 1000, 0, 3},    {1, 100000, 0, 0},  {3, 70001, 5, 1},   {1000, 32, 0, 0},
    {4096, 8, 0, 0},    {33, 513, 7, 2},    {300, 4097, 0, 0},  {2, 0, 0, 0},       {0, 5, 0, 0},
    {1000, 7, 0, 0},    {5000, 128, 0, 0},  {70001, 3, 2, 1},   {100, 1000, 24, 0}, {8, 5000, 0, 0},
    {20000, 64, 0, 0},  {2, 300000, 0, 0},  {300, 16, 8, 0},    {65536, 1, 0, 0},   {135000, 1, 0, 1},
    {520, 128, 0, 0},   {1040, 64, 0, 0},   {16384, 256, 0, 0}, {4096, 1024, 0, 0}, {98304, 39, 1, 0},
    {32768, 128, 0, 0}, {40000, 100, 0, 1}, {500, 6, 0, 0},     {700, 20, 4, 2},    {600, 12, 0, 0},
    {2048, 2100, 3, 1}, {2048, 3072, 0, 0}, {2, 33000, 0, 3},   {5, 32768, 16, 0},  {500, 4100, 0, 1},
    {3, 16400, 0, 0},   {1, 20003, 0, 3}};

#define MAX_ELEMS (1u << 23)
#define MAX_OUTPUTS (1u << 20)

static cureduce_handle g_handle;
static void *g_in, *g_out;
static unsigned char *g_host, *g_got, *g_again, *g_want, *g_gather;
static int64_t *g_offsets, *g_d_offsets;
static uint64_t g_max_n;

/* outer x length x inner: {length, inner, 0, offset, outer} */
static const shape AXIS_SHAPES[] = {
    {1000, 2, 0, 0, 3},   {37, 3, 0, 1, 5},     {1000, 7, 0, 0, 64}, {65, 2, 0, 0, 10000},
    {300, 8, 0, 0, 9},    {520, 128, 0, 0, 2},  {70001, 4, 0, 0, 4}, {4097, 33, 0, 3, 3},
    {300, 1, 0, 0, 2},    {300, 12, 0, 0, 1},   {1, 5, 0, 0, 7},     {0, 4, 0, 0, 3},
    {4096, 16, 0, 0, 17}, {64, 1024, 0, 0, 40}, {200, 2, 0, 1, 6},   {2048, 2, 0, 0, 33},
    {5, 32, 0, 1, 9000},  {100, 8, 0, 0, 8192}, {1, 3, 0, 0, 9000},  {16, 8, 0, 0, 9000}};

enum { ROWS, COLS, SEGMENTS, AXIS };
/* Also the parts a CTest entry may run alone (per_op_test.h). */
static const char *const KIND_NAME[] = {"rows", "cols", "segments", "axis", NULL};

/* Under a size cap (the sanitizer runs) fewer cases: one data pattern, fewer widths, no
   second run. */
static int capped(void) { return g_max_n < MAX_ELEMS; }

/* One GPU call of `kind` into g_out (poisoned first); the result copied to `dst`. */
static cureduce_status gpu_call(int kind, const combo *c, const void *d_in, const shape *s, uint64_t segments,
                                size_t out_bytes, unsigned char *dst) {
  CUDA_OK(cudaMemset(g_out, 0xAB, out_bytes + 16));
  const uint64_t ld = s->cols + s->ld_extra;
  cureduce_status st;
  if (kind == ROWS)
    st = cureduce_reduce_rows(g_handle, c->op, c->in, d_in, s->rows, s->cols, ld, c->acc, g_out, NULL);
  else if (kind == COLS)
    st = cureduce_reduce_cols(g_handle, c->op, c->in, d_in, s->rows, s->cols, ld, c->acc, g_out, NULL);
  else if (kind == AXIS)
    st = cureduce_reduce_axis(g_handle, c->op, c->in, d_in, s->outer, s->rows, s->cols, c->acc, g_out, NULL);
  else
    st = cureduce_reduce_segments(g_handle, c->op, c->in, d_in, segments, g_d_offsets, c->acc, g_out, NULL);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(dst, g_out, out_bytes + 16, cudaMemcpyDeviceToHost));
  return st;
}

/* The elements of output i, gathered into g_gather; returns their count. */
static uint64_t gather(int kind, const combo *c, const shape *s, uint64_t i) {
  const size_t size = cureduce_dtype_size(c->in);
  const uint64_t ld = s->cols + s->ld_extra;
  if (kind == ROWS) {
    memcpy(g_gather, g_host + i * ld * size, s->cols * size);
    return s->cols;
  }
  if (kind == COLS) {
    for (uint64_t r = 0; r < s->rows; ++r)
      memcpy(g_gather + r * size, g_host + (r * ld + i) * size, size);
    return s->rows;
  }
  if (kind == AXIS) {
    const uint64_t o = i / s->cols, j = i % s->cols;
    for (uint64_t k = 0; k < s->rows; ++k)
      memcpy(g_gather + k * size, g_host + ((o * s->rows + k) * s->cols + j) * size, size);
    return s->rows;
  }
  const uint64_t n = (uint64_t)(g_offsets[i + 1] - g_offsets[i]);
  memcpy(g_gather, g_host + g_offsets[i] * size, n * size);
  return n;
}

static void check_case(int kind, const combo *c, const shape *s, uint64_t segments, uint64_t elements,
                       tu_pattern pat, uint64_t *rng) {
  const size_t size = cureduce_dtype_size(c->in), out_size = cureduce_result_size(c->op, c->acc);
  const uint64_t outputs = kind == ROWS   ? s->rows
                           : kind == COLS ? s->cols
                           : kind == AXIS ? s->outer * s->cols
                                          : segments;
  const size_t out_bytes = outputs * out_size;
  tu_fill(c->in, g_host, elements, pat, 8, rng);
  const char *d_in = (const char *)g_in + s->offset * size;
  CUDA_OK(cudaMemcpy((void *)d_in, g_host, elements * size, cudaMemcpyHostToDevice));

  memset(g_want, 0xAB, out_bytes + 16);
  const uint64_t ld = s->cols + s->ld_extra;
  const cureduce_status want_st =
      kind == ROWS   ? cureduce_cpu_reduce_rows(c->op, c->in, g_host, s->rows, s->cols, ld, c->acc, g_want)
      : kind == COLS ? cureduce_cpu_reduce_cols(c->op, c->in, g_host, s->rows, s->cols, ld, c->acc, g_want)
      : kind == AXIS
          ? cureduce_cpu_reduce_axis(c->op, c->in, g_host, s->outer, s->rows, s->cols, c->acc, g_want)
          : cureduce_cpu_reduce_segments(c->op, c->in, g_host, segments, g_offsets, c->acc, g_want);
  const cureduce_status got_st = gpu_call(kind, c, d_in, s, segments, out_bytes, g_got);

  char where[160];
  snprintf(where, sizeof where, "%s %llux%llux%llu ld+%llu offset=%u segments=%llu", KIND_NAME[kind],
           (unsigned long long)s->outer, (unsigned long long)s->rows, (unsigned long long)s->cols,
           (unsigned long long)s->ld_extra, s->offset, (unsigned long long)segments);
  if (got_st != want_st)
    fail_msg("%s %s->%s %s: status %d, CPU %d", cureduce_op_name(c->op), cureduce_dtype_name(c->in),
             cureduce_dtype_name(c->acc), where, got_st, want_st);
  if (memcmp(g_got + out_bytes, g_want + out_bytes, 16) != 0)
    fail_msg("%s: wrote past its %llu outputs", where, (unsigned long long)outputs);
  if (got_st != CUREDUCE_SUCCESS) {
    if (memcmp(g_got, g_want, out_bytes) != 0)
      fail_msg("%s: status %d must leave the outputs untouched", where, got_st);
    return;
  }
  for (uint64_t i = 0; i < outputs; ++i) {
    const uint64_t n = gather(kind, c, s, i);
    char at[200];
    snprintf(at, sizeof at, "%s output %llu", where, (unsigned long long)i);
    if (n == 0 || memcmp(g_got + i * out_size, g_want + i * out_size, out_size) == 0) {
      if (memcmp(g_got + i * out_size, g_want + i * out_size, out_size) != 0)
        fail_msg("%s: empty, GPU and CPU wrote different bytes", at);
      continue;
    }
    rc_check(c, g_gather, n, pat, g_got + i * out_size, g_want + i * out_size, at);
  }
  /* The same call again: the same bits. */
  if (capped())
    return;
  (void)gpu_call(kind, c, d_in, s, segments, out_bytes, g_again);
  if (memcmp(g_got, g_again, out_bytes) != 0)
    fail_msg("%s: a second run gave different bits", where);
}

/* Segment lengths: a mix of empty, tiny, medium and a few huge ones (crossing many chunks). */
static uint64_t make_segments(uint64_t *rng, uint64_t budget, uint64_t base) {
  uint64_t count = 0, at = base;
  g_offsets[0] = (int64_t)base;
  while (count + 1 < MAX_OUTPUTS) {
    const double u = tu_uniform(rng);
    uint64_t len = u < 0.1    ? 0
                   : u < 0.7  ? tu_next(rng) % 40
                   : u < 0.97 ? tu_next(rng) % 5000
                              : 100000 + tu_next(rng) % 200000;
    if (at + len > base + budget)
      break;
    at += len;
    g_offsets[++count] = (int64_t)at;
  }
  return count;
}

static void patterns(int kind, const combo *c, const shape *s, uint64_t segments, uint64_t elements,
                     uint64_t *rng) {
  const int floats = tu_is_float(c->in) || tu_is_float(c->acc);
  if (!capped()) {
    check_case(kind, c, s, segments, elements, TU_INTEGERS, rng);
    check_case(kind, c, s, segments, elements, TU_RANDOM, rng);
  }
  if (!capped() && tu_is_float(c->in))
    check_case(kind, c, s, segments, elements, TU_SPREAD, rng);
  if (floats)
    check_case(kind, c, s, segments, elements, TU_SPECIALS, rng);
  else if (capped())
    check_case(kind, c, s, segments, elements, TU_RANDOM, rng);
}

static void run_combo(const combo *c) {
  uint64_t rng = tu_seed() ^ ((uint64_t)c->op << 40) ^ ((uint64_t)c->in << 32) ^ (uint64_t)c->acc;
  for (int kind = ROWS; kind <= COLS; ++kind) {
    if (g_part >= 0 && kind != g_part)
      continue;
    shape shapes[sizeof FIXED_SHAPES / sizeof FIXED_SHAPES[0] + 66];
    size_t count = 0;
    for (uint64_t cols = 1; cols <= 33; ++cols) {
      shapes[count++] = (shape){kind == ROWS ? 5 : 37, cols, 0, 0};
      shapes[count++] = (shape){kind == ROWS ? 3 : 35, cols, 3, 1};
    }
    for (size_t i = 0; i < sizeof FIXED_SHAPES / sizeof FIXED_SHAPES[0]; ++i)
      shapes[count++] = FIXED_SHAPES[i];
    for (size_t i = 0; i < count; ++i) {
      const shape *s = &shapes[i];
      const uint64_t elements = s->rows ? (s->rows - 1) * (s->cols + s->ld_extra) + s->cols : 0;
      if (elements > g_max_n || elements > MAX_ELEMS || (capped() && s->cols <= 33 && s->cols % 4 == 2))
        continue;
      patterns(kind, c, s, 0, elements, &rng);
    }
  }
  /* Axes of 3-d arrays. */
  if (g_part < 0 || g_part == AXIS)
    for (size_t i = 0; i < sizeof AXIS_SHAPES / sizeof AXIS_SHAPES[0]; ++i) {
      const shape *s = &AXIS_SHAPES[i];
      const uint64_t elements = s->outer * s->rows * s->cols;
      if (elements <= g_max_n && elements <= MAX_ELEMS)
        patterns(AXIS, c, s, 0, elements, &rng);
    }
  /* Segments: a mix, one segment, all empty, none; starts away from element 0. */
  if (g_part >= 0 && g_part != SEGMENTS)
    return;
  const uint64_t budget = g_max_n < 2000000 ? g_max_n : 2000000;
  for (int t = 0; t < 4; ++t) {
    uint64_t segments;
    if (t == 0)
      segments = make_segments(&rng, budget, 5);
    else if (t == 1)
      segments = 1, g_offsets[0] = 3, g_offsets[1] = 3 + (int64_t)(budget < 150001 ? budget : 150001);
    else if (t == 2)
      segments = 3, g_offsets[0] = g_offsets[1] = g_offsets[2] = g_offsets[3] = 7;
    else
      segments = 0, g_offsets[0] = 0;
    CUDA_OK(cudaMemcpy(g_d_offsets, g_offsets, (segments + 1) * sizeof(int64_t), cudaMemcpyHostToDevice));
    const shape s = {0, 0, 0, (unsigned)(t & 1)};
    const uint64_t elements = (uint64_t)g_offsets[segments];
    patterns(SEGMENTS, c, &s, segments, elements, &rng);
  }
}

static int setup(void **state) {
  (void)state;
  g_max_n = gpu_test_max_n(UINT64_MAX);
  if (cureduce_create(&g_handle) != CUREDUCE_SUCCESS)
    return -1;
  const size_t in_bytes = ((size_t)MAX_ELEMS + 64) * 8, out_bytes = (size_t)MAX_OUTPUTS * 8 + 64;
  if (cudaMalloc(&g_in, in_bytes) != cudaSuccess || cudaMalloc(&g_out, out_bytes) != cudaSuccess ||
      cudaMalloc((void **)&g_d_offsets, (MAX_OUTPUTS + 1) * sizeof(int64_t)) != cudaSuccess)
    return -1;
  g_host = malloc(in_bytes);
  g_gather = malloc(in_bytes);
  g_got = malloc(out_bytes);
  g_again = malloc(out_bytes);
  g_want = malloc(out_bytes);
  g_offsets = malloc((MAX_OUTPUTS + 1) * sizeof(int64_t));
  return g_host && g_gather && g_got && g_again && g_want && g_offsets ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  (void)cudaFree(g_in);
  (void)cudaFree(g_out);
  (void)cudaFree(g_d_offsets);
  free(g_host), free(g_gather), free(g_got), free(g_again), free(g_want), free(g_offsets);
  return cureduce_destroy(g_handle) == CUREDUCE_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv) { return run_per_op_tests(argc, argv, KIND_NAME, setup, teardown); }
