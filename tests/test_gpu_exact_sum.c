/* The GPU's exact sums give the CPU's bits: full arrays, rows, columns, segments and axes, every
 * float input and output dtype, SUM_EXACT and MEAN_EXACT, on adversarial data (exact_patterns.h)
 * at misaligned starts, and 2^26 elements of tiles that leave the fast path; running states
 * split into chunks, streams and combined states; rows into states; f64 pairs at the edge of the
 * flush's window; random states rounded on both; and more than 2^32 elements.
 *
 * CUREDUCE_TEST_MAX_N caps the sizes (the sanitizer runs use it to stay within time). CTest
 * runs it in parts (tests/CMakeLists.txt): `test_gpu_exact_sum TEST [DTYPE]` runs the tests
 * that match TEST (a cmocka filter, `*` matching anything), for one input dtype if named;
 * `test_gpu_exact_sum --skip TEST` all the others. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "exact_patterns.h"
#include "gpu_util.h"

static const cureduce_dtype INPUTS[] = {CUREDUCE_F32,  CUREDUCE_F64,     CUREDUCE_F16,
                                        CUREDUCE_BF16, CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2};
static int g_only_input = -1; /* the one input dtype named on the command line; -1: all */

static int input_wanted(cureduce_dtype d) { return g_only_input < 0 || (int)d == g_only_input; }
static const cureduce_op OPS[] = {CUREDUCE_SUM_EXACT, CUREDUCE_MEAN_EXACT};
static const uint64_t SIZES[] = {0, 1, 2, 15, 17, 255, 257, 4097, 65537, 1000003, 4194305};
static const unsigned OFFSETS[] = {0, 1, 3}; /* elements from a 256-byte aligned start */
#define MAX_SIZE 4194305u

static cureduce_handle g_handle;
static void *g_in, *g_out, *g_host, *g_want, *g_got;
static uint64_t g_max_n;

static uint64_t max_n(void) {
  const uint64_t n = gpu_test_max_n(MAX_SIZE);
  return n < MAX_SIZE ? n : MAX_SIZE;
}

/* The outputs of an exact sum of in: F64, F32 and in itself. */
static int outputs_of(cureduce_dtype in, cureduce_dtype out[3]) {
  out[0] = CUREDUCE_F64;
  out[1] = CUREDUCE_F32;
  if (in == CUREDUCE_F64 || in == CUREDUCE_F32)
    return 2;
  out[2] = in;
  return 3;
}

static unsigned long long g_compared; /* results expect_same compared: a run that compared none fails */
static int g_tests_run;               /* tests run, and of them those that compare no result */
static int g_checks_only;

static void expect_same(const void *got, const void *want, size_t bytes, const char *what) {
  ++g_compared;
  if (memcmp(got, want, bytes) != 0) {
    char g[64] = "", w[64] = "";
    for (size_t k = 0; k < bytes && k < 8; ++k) {
      snprintf(g + 2 * k, 3, "%02x", ((const unsigned char *)got)[bytes - 1 - k]);
      snprintf(w + 2 * k, 3, "%02x", ((const unsigned char *)want)[bytes - 1 - k]);
    }
    fail_msg("%s: GPU 0x%s, CPU 0x%s", what, g, w);
  }
}

/* One full-array exact sum and mean into every output, against the CPU; `data` names the input. */
static void check_full(cureduce_dtype in, uint64_t n, unsigned offset, const char *data) {
  const size_t size = cureduce_dtype_size(in);
  char *d_in = (char *)g_in + offset * size;
  CUDA_OK(cudaMemcpy(d_in, g_host, n * size, cudaMemcpyHostToDevice));
  cureduce_dtype outs[3];
  const int nout = outputs_of(in, outs);
  for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o) {
    for (int k = 0; k < nout; ++k) {
      unsigned char want[8] = {0}, got[8], poison[8];
      memset(poison, 0xAB, sizeof poison);
      CUDA_OK(cudaMemcpy(g_out, poison, 8, cudaMemcpyHostToDevice));
      const cureduce_status ws = cureduce_cpu_reduce(OPS[o], in, g_host, n, outs[k], want);
      const cureduce_status gs = cureduce_reduce(g_handle, OPS[o], in, d_in, n, outs[k], g_out, NULL);
      CUDA_OK(cudaDeviceSynchronize());
      CUDA_OK(cudaMemcpy(got, g_out, 8, cudaMemcpyDeviceToHost));
      char what[160];
      snprintf(what, sizeof what, "%s %s->%s n=%llu offset=%u %s", cureduce_op_name(OPS[o]),
               cureduce_dtype_name(in), cureduce_dtype_name(outs[k]), (unsigned long long)n, offset, data);
      if (gs != ws || (n > 0 && ws != CUREDUCE_SUCCESS)) /* both refusing would compare nothing */
        fail_msg("%s: status %d, CPU %d", what, gs, ws);
      const size_t bytes = gs == CUREDUCE_SUCCESS ? cureduce_dtype_size(outs[k]) : 0;
      if (bytes)
        expect_same(got, want, bytes, what);
      if (memcmp(got + bytes, poison + bytes, 8 - bytes) != 0)
        fail_msg("%s: wrote past its output", what);
    }
  }
}

static void full_arrays_should_match_cpu(void **state) {
  (void)state;
  uint64_t rng = tu_seed();
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d)
    for (int p = 0; p < EX_PATTERN_COUNT && input_wanted(INPUTS[d]); ++p)
      for (size_t s = 0; s < sizeof SIZES / sizeof *SIZES && SIZES[s] <= g_max_n; ++s) {
        ex_fill(INPUTS[d], g_host, SIZES[s], (ex_pattern)p, &rng);
        for (size_t o = 0; o < sizeof OFFSETS / sizeof *OFFSETS; ++o)
          if (o == 0 || SIZES[s] < 100000) /* misalignment matters at the edges, not in bulk */
            check_full(INPUTS[d], SIZES[s], OFFSETS[o], EX_PATTERN_NAMES[p]);
      }
}

/* Full arrays whose every f32 and bf16 tile leaves the fast path for the threads' own limbs (each
   f32 vector holds two smallest subnormals beside two large values, each bf16 vector one), each
   large value adding almost 2^55 (f32) to one limb, all of one sign: with 2^27 f32 elements a
   thread adds several hundred of them, more than a limb takes without a carry
   (exact_lane_limbs). Then the same sizes of random bits over every exponent. */
static void full_arrays_of_declined_tiles_should_match_cpu(void **state) {
  (void)state;
  if (getenv("CUREDUCE_TEST_MAX_N")) /* capped runs (the sanitizers) leave these sizes out */
    skip();
  /* largest significands at exponent fields 227 (f32) and 243 (bf16): the lowest bit 31 bits
     into its limb; `tiny` of every `per` elements the smallest subnormal */
  static const struct {
    cureduce_dtype in;
    uint64_t n, big, per, tiny;
  } CASES[] = {{CUREDUCE_F32, (1ull << 27) + 5, 0x71ffffffu, 4, 2},
               {CUREDUCE_BF16, (1ull << 26) + 5, 0x79ffu, 8, 1}};
  const uint64_t bytes = ((1ull << 27) + 5) * 4;
  void *host = malloc(bytes), *d_in = NULL;
  assert_non_null(host);
  CUDA_OK(cudaMalloc(&d_in, bytes));
  uint64_t rng = tu_seed() + 5;
  for (size_t c = 0; c < sizeof CASES / sizeof *CASES; ++c) {
    const cureduce_dtype in = CASES[c].in;
    const uint64_t n = CASES[c].n;
    if (!input_wanted(in))
      continue;
    for (int pat = 0; pat < 2; ++pat) {
      if (pat == 0)
        for (uint64_t i = 0; i < n; ++i)
          ex_store(in, host, i, i % CASES[c].per >= CASES[c].per - CASES[c].tiny ? 1 : CASES[c].big);
      else
        ex_fill(in, host, n, EX_ALL_EXPONENTS, &rng);
      CUDA_OK(cudaMemcpy(d_in, host, n * cureduce_dtype_size(in), cudaMemcpyHostToDevice));
      cureduce_dtype outs[3];
      const int nout = outputs_of(in, outs);
      for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
        for (int k = 0; k < nout; ++k) {
          unsigned char want[8] = {0}, got[8] = {0};
          assert_int_equal(cureduce_cpu_reduce(OPS[o], in, host, n, outs[k], want), 0);
          assert_int_equal(cureduce_reduce(g_handle, OPS[o], in, d_in, n, outs[k], g_out, NULL), 0);
          CUDA_OK(cudaMemcpy(got, g_out, 8, cudaMemcpyDeviceToHost));
          char what[128];
          snprintf(what, sizeof what, "%s %s->%s n=%llu %s", cureduce_op_name(OPS[o]),
                   cureduce_dtype_name(in), cureduce_dtype_name(outs[k]), (unsigned long long)n,
                   pat == 0 ? "declined tiles of one sign" : "all exponents");
          expect_same(got, want, cureduce_dtype_size(outs[k]), what);
        }
    }
  }
  CUDA_OK(cudaFree(d_in));
  free(host);
}

/* The exact sum of g_host's first n elements of `in`, built to be exactly zero, on the GPU into
   every output: +0.0 on the CPU (the construction) and the same bits on the GPU. */
static void expect_zero_sum(cureduce_dtype in, uint64_t n, const char *label) {
  CUDA_OK(cudaMemcpy(g_in, g_host, n * cureduce_dtype_size(in), cudaMemcpyHostToDevice));
  cureduce_dtype outs[3];
  const int nout = outputs_of(in, outs);
  for (int k = 0; k < nout; ++k) {
    unsigned char want[8] = {0}, got[8] = {0}, zero[8] = {0};
    assert_int_equal(cureduce_cpu_reduce(CUREDUCE_SUM_EXACT, in, g_host, n, outs[k], want), 0);
    assert_memory_equal(want, zero, sizeof zero); /* the construction: an exact zero */
    assert_int_equal(cureduce_reduce(g_handle, CUREDUCE_SUM_EXACT, in, g_in, n, outs[k], g_out, NULL), 0);
    CUDA_OK(cudaMemcpy(got, g_out, cureduce_dtype_size(outs[k]), cudaMemcpyDeviceToHost));
    char what[160];
    snprintf(what, sizeof what, "sum_exact %s->%s n=%llu: %s", cureduce_dtype_name(in),
             cureduce_dtype_name(outs[k]), (unsigned long long)n, label);
    expect_same(got, want, cureduce_dtype_size(outs[k]), what);
  }
}

/* Full arrays of f32 and bf16 tiles at the edge of exact_tile's check: every 16-byte vector
   holds its largest value at exponent field F and its smallest at F - S, for spreads S on both
   sides of each bound (f32: 18 fields in the full-array kernel's groups of 8 elements; bf16: 12
   for the plain f32 sum and 32 for the split, groups of 16), with random significands whose
   lowest bit is set, of one sign per 16 elements, and F in the middle of the range or at its
   top (where groups of values from 2^(F - 127) decline). The second half holds the first
   half's values negated, one element further on, so that no tile meets its own negation: the
   exact sum is +0.0, and tiles summed inexactly almost surely leave a nonzero result (their
   errors, multiples of one last bit, could cancel: the probes below cannot). */
static void tiles_at_the_check_bound_should_cancel_to_zero(void **state) {
  (void)state;
  static const struct {
    cureduce_dtype in;
    int top_field, spreads[6];
  } CASES[] = {{CUREDUCE_F32, 250, {16, 17, 18, 19, 20, 0}}, {CUREDUCE_BF16, 249, {12, 13, 31, 32, 33, 0}}};
  const uint64_t n = g_max_n < (1u << 20) ? g_max_n & ~(uint64_t)31 : 1u << 20, half = n / 2;
  if (n < 2 * 8192) /* fewer than two whole tiles of bf16: no tile check to test */
    skip();
  uint64_t rng = tu_seed() + 11;
  for (size_t c = 0; c < sizeof CASES / sizeof *CASES; ++c) {
    const cureduce_dtype in = CASES[c].in;
    if (!input_wanted(in))
      continue;
    const ex_format fmt = ex_format_of(in);
    const int mant = fmt.bits - 1 - fmt.ebits, lanes = 16 / (int)cureduce_dtype_size(in);
    const int fields[] = {140, CASES[c].top_field, CASES[c].top_field + 1};
    for (size_t f = 0; f < sizeof fields / sizeof *fields; ++f)
      for (const int *sp = CASES[c].spreads; *sp; ++sp) {
        uint64_t *vals = malloc(half * sizeof *vals);
        assert_non_null(vals);
        for (uint64_t i = 0; i < half; ++i) {
          const int lane = (int)(i % (uint64_t)lanes);
          const int field = lane == 0           ? fields[f]
                            : lane == lanes - 1 ? fields[f] - *sp
                                                : fields[f] - (int)(tu_next(&rng) % (uint64_t)(*sp + 1));
          const uint64_t sign = (i / 16) % 2 ? ex_sign(in) : 0;
          vals[i] = sign | (uint64_t)field << mant | (tu_next(&rng) & ex_mask(mant)) | 1;
        }
        for (uint64_t i = 0; i < half; ++i) {
          ex_store(in, g_host, i, vals[i]);
          ex_store(in, g_host, half + i, vals[(i + 1) % half] ^ ex_sign(in));
        }
        free(vals);
        char label[64];
        snprintf(label, sizeof label, "fields %d and %d", fields[f], fields[f] - *sp);
        expect_zero_sum(in, n, label);
      }
  }
}

/* One group of thread 0's first tile in the full-array kernel (vectors 0 and 256: blocks of 256
   threads) holds `count` values (bits of `in`), and each value, negated, lies alone in a vector
   of another thread, whose group then sums exactly: the exact sum is +0.0, and if the probe
   group were summed inexactly its error alone would be the result. Four tiles, zeros elsewhere. */
static void check_probe_group(cureduce_dtype in, const uint64_t *bits, int count, const char *name) {
  const int lanes = 16 / (int)cureduce_dtype_size(in);
  const uint64_t n = 4ull * 1024 * (uint64_t)lanes;
  if (n > g_max_n) /* capped below four tiles: reported skipped, not passed */
    skip();
  memset(g_host, 0, n * cureduce_dtype_size(in));
  for (int k = 0; k < count; ++k) {
    ex_store(in, g_host, k < lanes ? (uint64_t)k : 256ull * lanes + (uint64_t)(k - lanes), bits[k]);
    ex_store(in, g_host, (uint64_t)(k + 1) * lanes, bits[k] ^ ex_sign(in));
  }
  expect_zero_sum(in, n, name);
}

/* Groups whose sums need every bit the tile check allows, at each bound and one field past it,
   where a check one field too wide would sum them inexactly (their f32 sums checked off the GPU
   with the kernel's order of additions): f32 groups of 8 (bound 18 fields), bf16's plain f32
   sum (12) and its split (32), groups of 16. Field F = 140. */
static void probe_groups_at_the_check_bound_should_cancel_to_zero(void **state) {
  (void)state;
  const int F = 140;
  for (int past = 0; past <= 1; ++past) {
    char name[96];
    if (input_wanted(CUREDUCE_F32)) {
      /* seven values (2j + 1/2) u at field F, u = 2^(F - 146) their split's unit, whose lo parts
         are u / 2 each; one at F - 18 - past with an odd significand */
      uint64_t b[8];
      for (int k = 0; k < 7; ++k)
        b[k] = (uint64_t)F << 23 | ((4ull * (262144 + 17 * (uint64_t)k) + 1) << 3 & 0x7fffff);
      b[7] = (uint64_t)(F - 18 - past) << 23 | 0x2aaaab;
      snprintf(name, sizeof name, "f32 group of fields %d and %d", F, F - 18 - past);
      check_probe_group(CUREDUCE_F32, b, 8, name);
    }
    if (input_wanted(CUREDUCE_BF16)) {
      /* the plain sum: fifteen largest significands at F, one last bit at F - 12 - past */
      uint64_t b[16];
      for (int k = 0; k < 15; ++k)
        b[k] = (uint64_t)F << 7 | 0x7f;
      b[15] = (uint64_t)(F - 12 - past) << 7 | 1;
      snprintf(name, sizeof name, "bf16 group of fields %d and %d (plain sum)", F, F - 12 - past);
      check_probe_group(CUREDUCE_BF16, b, 16, name);
      /* the split: one value at F, fourteen just below half its unit, one last bit at F - 32 - past */
      b[0] = (uint64_t)F << 7 | 0x40;
      for (int k = 1; k < 15; ++k)
        b[k] = (uint64_t)(F - 20) << 7 | 0x7f;
      b[15] = (uint64_t)(F - 32 - past) << 7 | 1;
      snprintf(name, sizeof name, "bf16 group of fields %d and %d (split)", F, F - 32 - past);
      check_probe_group(CUREDUCE_BF16, b, 16, name);
    }
  }
}

/* A matrix of rows x cols elements, ld apart, in g_host and g_in (the same bits), reduced along
   its rows (axis 0), columns (1), its first rows * cols elements cut into nseg segments at
   offsets (2; d_offsets the device's copy) or the middle axis of rows x (ld / inner) x inner
   (3). */
typedef struct {
  uint64_t rows, cols, ld, inner, nseg;
  const int64_t *offsets, *d_offsets;
  unsigned start; /* the matrix's first element, in elements from g_in's 256-byte aligned start */
} axis_case;

/* One reduction of such a matrix on the GPU and the CPU, into `out`: both must succeed (a
   refusal on both sides would compare nothing), and the results match bit for bit. */
static void check_axis_call(cureduce_op op, cureduce_dtype in, cureduce_dtype out, int axis,
                            const axis_case *m, const char *pattern) {
  const uint64_t count = axis == 0 ? m->rows : axis == 1 ? m->cols : axis == 2 ? m->nseg : m->rows * m->inner;
  const uint64_t length = m->ld / m->inner;
  const void *d_in = (const char *)g_in + m->start * cureduce_dtype_size(in);
  const size_t bytes = count * cureduce_dtype_size(out);
  memset(g_want, 0xAB, bytes);
  CUDA_OK(cudaMemcpy(g_out, g_want, bytes, cudaMemcpyHostToDevice));
  cureduce_status ws, gs;
  if (axis == 0) {
    ws = cureduce_cpu_reduce_rows(op, in, g_host, m->rows, m->cols, m->ld, out, g_want);
    gs = cureduce_reduce_rows(g_handle, op, in, d_in, m->rows, m->cols, m->ld, out, g_out, NULL);
  } else if (axis == 1) {
    ws = cureduce_cpu_reduce_cols(op, in, g_host, m->rows, m->cols, m->ld, out, g_want);
    gs = cureduce_reduce_cols(g_handle, op, in, d_in, m->rows, m->cols, m->ld, out, g_out, NULL);
  } else if (axis == 2) {
    ws = cureduce_cpu_reduce_segments(op, in, g_host, m->nseg, m->offsets, out, g_want);
    gs = cureduce_reduce_segments(g_handle, op, in, d_in, m->nseg, m->d_offsets, out, g_out, NULL);
  } else {
    ws = cureduce_cpu_reduce_axis(op, in, g_host, m->rows, length, m->inner, out, g_want);
    gs = cureduce_reduce_axis(g_handle, op, in, d_in, m->rows, length, m->inner, out, g_out, NULL);
  }
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(g_got, g_out, bytes, cudaMemcpyDeviceToHost));
  char what[160];
  snprintf(what, sizeof what, "%s %s->%s %s %llux%llu ld %llu %s", cureduce_op_name(op),
           cureduce_dtype_name(in), cureduce_dtype_name(out),
           axis == 0   ? "rows"
           : axis == 1 ? "cols"
           : axis == 2 ? "segments"
                       : "axis",
           (unsigned long long)m->rows, (unsigned long long)m->cols, (unsigned long long)m->ld, pattern);
  if (ws != CUREDUCE_SUCCESS || gs != CUREDUCE_SUCCESS)
    fail_msg("%s: status %d, CPU %d", what, gs, ws);
  expect_same(g_got, g_want, bytes, what);
}

/* Rows, columns, segments and the middle axis of one input against the CPU, for each pattern.
   A shape: rows, cols, ld, and the inner extent of the same rows * ld elements seen as
   rows x (ld / inner) x inner. 5 x 99999 (ld a multiple of 16 bytes) takes the split rows'
   grid of blocks per row, with a scalar tail. 3 x 70000 and 12 x 16380 columns (and the
   latter's 12 x 8 x 2048 axis) take a thread a column: one column each (odd ld), and 4-byte
   words of narrow columns, padded rows and a partial last block. 3 x 16386 does so below the
   sanitizer runs' size cap (scripts/gpu-check); 2 x 280000 has more columns (or words) than
   the grid has threads, so threads take a second one. 2400 x 1028 has rows enough for a warp
   each on GPUs of up to 150 SMs, f64 rows of more than 512 vectors among them, and 33
   groups of columns cut into 16 slices: 528 items, more than the 512 aimed at. 4000 x 3 cuts
   its one group of columns into 63 slices, added in sets of 16 (the last of 15), then the
   sets; 1100 x 33 two groups (one of a single column) into 18, sets of 16 and 2; 1050 x 3 its
   group into 17, sets of 16 and 1. The fifth number is the matrix's first element, in
   elements from an aligned start (0 where a shape's path depends on its alignment). */
static void check_axes(cureduce_dtype in, ex_pattern pat, uint64_t *rng) {
  static const uint64_t SHAPES[][5] = {{1, 1, 1, 1, 0},
                                       {7, 33, 40, 5, 1},
                                       {300, 5, 5, 5, 3},
                                       {3, 70000, 70001, 7, 0},
                                       {5, 99999, 100016, 16, 0},
                                       {1000, 64, 64, 4, 1},
                                       {12, 16380, 16384, 2048, 0},
                                       {3, 16386, 16388, 4, 0},
                                       {2, 280000, 280000, 10, 0},
                                       {2400, 1028, 1028, 4, 3},
                                       {4000, 3, 3, 3, 1},
                                       {1100, 33, 33, 3, 3},
                                       {1050, 3, 3, 3, 0}};
  const size_t size = cureduce_dtype_size(in);
  cureduce_dtype outs[3];
  const int nout = outputs_of(in, outs);
  for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; ++s) {
    const uint64_t rows = SHAPES[s][0], cols = SHAPES[s][1], ld = SHAPES[s][2], total = rows * ld;
    const uint64_t inner = SHAPES[s][3];
    if (total > g_max_n)
      continue;
    ex_fill(in, g_host, total, pat, rng);
    const unsigned start = (unsigned)SHAPES[s][4];
    CUDA_OK(cudaMemcpy((char *)g_in + start * size, g_host, total * size, cudaMemcpyHostToDevice));
    /* Segments: random cuts of the first rows * cols elements, some empty. */
    const uint64_t nseg = rows + 3;
    int64_t offsets[4004]; /* nseg + 1 for the most rows, 4000 */
    if (nseg + 1 > sizeof offsets / sizeof *offsets)
      fail_msg("shape %llu x %llu: %llu segments do not fit the offsets", (unsigned long long)rows,
               (unsigned long long)cols, (unsigned long long)nseg);
    offsets[0] = 0;
    for (uint64_t k = 1; k < nseg; ++k)
      offsets[k] = k % 4 == 1 ? offsets[k - 1] : (int64_t)(tu_next(rng) % (rows * cols + 1));
    offsets[nseg] = (int64_t)(rows * cols);
    for (uint64_t k = 1; k <= nseg; ++k) /* sorted */
      for (uint64_t j = k; j > 0 && offsets[j] < offsets[j - 1]; --j) {
        const int64_t t = offsets[j];
        offsets[j] = offsets[j - 1];
        offsets[j - 1] = t;
      }
    int64_t *d_offsets;
    CUDA_OK(cudaMalloc((void **)&d_offsets, sizeof offsets));
    CUDA_OK(cudaMemcpy(d_offsets, offsets, (nseg + 1) * sizeof *offsets, cudaMemcpyHostToDevice));
    const axis_case m = {rows, cols, ld, inner, nseg, offsets, d_offsets, start};
    for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
      for (int k = 0; k < nout; ++k)
        for (int axis = 0; axis < 4; ++axis)
          check_axis_call(OPS[o], in, outs[k], axis, &m, EX_PATTERN_NAMES[pat]);
    CUDA_OK(cudaFree(d_offsets));
  }
}

static void rows_cols_segments_axes_should_match_cpu(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 1;
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d)
    for (int p = 0; p < EX_PATTERN_COUNT && input_wanted(INPUTS[d]); ++p)
      check_axes(INPUTS[d], (ex_pattern)p, &rng);
}

/* The middle axis of 2048 or more small matrices (2 to 16 columns, no gaps) takes a warp a
   matrix, whose lanes share a column by teams: 16 lanes for 2 columns, 10 for 3, 6 for 5, 5
   for 6, 4 for 8, 3 for 9 and 2 for 11. Matrices of one row, of fewer elements than lanes
   (2048 x 6 x 3, within the sanitizer runs' size cap), of a partial tile a lane and of more
   than a tile a lane. Every pattern, so columns whose pairs push or whose mean is near a
   boundary take the warp's slow path. 2050 x 33 x 16 has few rows and many columns: a thread
   a column. */
static void check_small_matrices(cureduce_dtype in, ex_pattern pat, uint64_t *rng) {
  static const uint64_t SHAPES[][3] = {{2048, 1, 5},   {2048, 6, 3},    {2100, 40, 3},
                                       {2049, 129, 2}, {2048, 129, 6},  {2048, 129, 8},
                                       {2048, 129, 9}, {2048, 129, 11}, {2050, 33, 16}};
  cureduce_dtype outs[3];
  const int nout = outputs_of(in, outs);
  for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; ++s) {
    const uint64_t outer = SHAPES[s][0], length = SHAPES[s][1], inner = SHAPES[s][2];
    const uint64_t total = outer * length * inner;
    if (total > g_max_n)
      continue;
    ex_fill(in, g_host, total, pat, rng);
    CUDA_OK(cudaMemcpy(g_in, g_host, total * cureduce_dtype_size(in), cudaMemcpyHostToDevice));
    const axis_case m = {outer, length * inner, length * inner, inner, 0, NULL, NULL, 0};
    for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
      for (int k = 0; k < nout; ++k)
        check_axis_call(OPS[o], in, outs[k], 3, &m, EX_PATTERN_NAMES[pat]);
  }
}

static void middle_axis_of_many_small_matrices_should_match_cpu(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 11;
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d)
    for (int p = 0; p < EX_PATTERN_COUNT && input_wanted(INPUTS[d]); ++p)
      check_small_matrices(INPUTS[d], (ex_pattern)p, &rng);
}

/* Many rows of 33 to 512 16-byte vectors (at least 128 rows an SM, 96 for the types that run
   3 blocks an SM) take teams of 4 lanes (8 rows a warp) instead of a warp a row: 128 rows an
   SM (at least 19200) of 1040 bytes, ld 7
   elements longer so that the rows start at every alignment. About 20M elements, above
   MAX_SIZE (they fit the buffers by bytes), so capped runs (the sanitizers') skip it. */
static void rows_in_teams_of_four_should_match_cpu(void **state) {
  (void)state;
  if (g_max_n < MAX_SIZE)
    skip();
  static const ex_pattern PATTERNS[] = {EX_UNIFORM, EX_ALL_EXPONENTS, EX_INF_NAN, EX_NEAR_TIES, EX_NEG_ZEROS};
  int device = 0, sms = 0;
  CUDA_OK(cudaGetDevice(&device));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const uint64_t rows = 128 * (uint64_t)sms > 19200 ? 128 * (uint64_t)sms : 19200;
  if (rows * 1096 > (MAX_SIZE + 64) * 8) { /* the longest rows: f64 ld 137, 1096 bytes */
    print_message("%d SMs need more rows than the buffers hold\n", sms);
    skip();
  }
  uint64_t rng = tu_seed() + 6;
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d) {
    const cureduce_dtype in = INPUTS[d];
    const size_t size = cureduce_dtype_size(in);
    const uint64_t cols = 1040 / size, ld = cols + 7, total = rows * ld;
    if (!input_wanted(in))
      continue;
    cureduce_dtype outs[3];
    const int nout = outputs_of(in, outs);
    for (size_t p = 0; p < sizeof PATTERNS / sizeof *PATTERNS; ++p) {
      ex_fill(in, g_host, total, PATTERNS[p], &rng);
      CUDA_OK(cudaMemcpy(g_in, g_host, total * size, cudaMemcpyHostToDevice));
      const axis_case m = {rows, cols, ld, 1, 0, NULL, NULL, 0};
      for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
        for (int k = 0; k < nout; ++k)
          check_axis_call(OPS[o], in, outs[k], 0, &m, EX_PATTERN_NAMES[PATTERNS[p]]);
    }
  }
}

/* One segment of 4000000 elements, summed in chunks by many blocks: the largest finite value
   with every 64th element the smallest subnormal (bits 1), then magnitude runs. The first
   passes the bound below which e5m2 and f16 pairs add in plain f64 (exact_plain_log2: 2^37,
   reached when the chunks' pairs are added up, and 2^29, by a chunk's), so the pairs hand over
   to TwoSum with the subnormals' bits still to keep; e4m3's 2^44 is out of reach. */
static void rows_segment_past_the_plain_bound_should_match_cpu(void **state) {
  (void)state;
  const uint64_t n = 4000000;
  if (g_max_n < n)
    skip();
  const int64_t offsets[2] = {0, (int64_t)n};
  int64_t *d_offsets;
  CUDA_OK(cudaMalloc((void **)&d_offsets, sizeof offsets));
  CUDA_OK(cudaMemcpy(d_offsets, offsets, sizeof offsets, cudaMemcpyHostToDevice));
  uint64_t rng = tu_seed() + 7;
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d) {
    const cureduce_dtype in = INPUTS[d];
    const size_t size = cureduce_dtype_size(in);
    if (!input_wanted(in))
      continue;
    cureduce_dtype outs[3];
    const int nout = outputs_of(in, outs);
    for (int fill = 0; fill < 2; ++fill) {
      ex_fill(in, g_host, n, fill == 0 ? EX_OVERFLOW : EX_MAGNITUDE_RUNS, &rng);
      const uint64_t smallest = 1; /* little-endian: the low byte of every format */
      for (uint64_t i = 63; fill == 0 && i < n; i += 64)
        memcpy((char *)g_host + i * size, &smallest, size);
      CUDA_OK(cudaMemcpy(g_in, g_host, n * size, cudaMemcpyHostToDevice));
      const axis_case m = {1, n, n, 1, 1, offsets, d_offsets, 0};
      for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
        for (int k = 0; k < nout; ++k)
          check_axis_call(OPS[o], in, outs[k], 2, &m,
                          fill == 0 ? "largest values and subnormals" : "magnitude-runs");
    }
  }
  CUDA_OK(cudaFree(d_offsets));
}

static int compare_offsets(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* 20000 segments over 3000 elements (most empty, starting 5 elements in): more segments than
   chunks can spread, so a warp takes each segment (exact_chunked's many-segments path). */
static void rows_many_segments_over_few_elements_should_match_cpu(void **state) {
  (void)state;
  enum { NSEG = 20000, FIRST = 5, LAST = 3005 };
  static const ex_pattern PATTERNS[] = {EX_UNIFORM, EX_ALL_EXPONENTS, EX_INF_NAN, EX_NEAR_TIES, EX_NEG_ZEROS};
  static int64_t offsets[NSEG + 1];
  uint64_t rng = tu_seed() + 8;
  offsets[0] = FIRST;
  offsets[NSEG] = LAST;
  for (int k = 1; k < NSEG; ++k)
    offsets[k] = FIRST + (int64_t)(tu_next(&rng) % (LAST - FIRST + 1));
  qsort(offsets + 1, NSEG - 1, sizeof *offsets, compare_offsets);
  int64_t *d_offsets;
  CUDA_OK(cudaMalloc((void **)&d_offsets, sizeof offsets));
  CUDA_OK(cudaMemcpy(d_offsets, offsets, sizeof offsets, cudaMemcpyHostToDevice));
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d) {
    const cureduce_dtype in = INPUTS[d];
    if (!input_wanted(in))
      continue;
    cureduce_dtype outs[3];
    const int nout = outputs_of(in, outs);
    for (size_t p = 0; p < sizeof PATTERNS / sizeof *PATTERNS; ++p) {
      ex_fill(in, g_host, LAST, PATTERNS[p], &rng);
      CUDA_OK(cudaMemcpy(g_in, g_host, LAST * cureduce_dtype_size(in), cudaMemcpyHostToDevice));
      const axis_case m = {1, LAST, LAST, 1, NSEG, offsets, d_offsets, 0};
      for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
        for (int k = 0; k < nout; ++k)
          check_axis_call(OPS[o], in, outs[k], 2, &m, EX_PATTERN_NAMES[PATTERNS[p]]);
    }
  }
  CUDA_OK(cudaFree(d_offsets));
}

/* A state's words with every limb carried: the form two equal states share. */
static void canonical(int64_t *w) {
  const int64_t zero[CUREDUCE_EXACT_STATE_WORDS] = {0};
  (void)cureduce_cpu_exact_combine(w, zero);
}

/* A GPU state against the CPU's, both made canonical: the same words, flags alike. */
static void expect_same_state(int64_t *got, int64_t *want, const char *what) {
  canonical(got);
  canonical(want);
  for (int i = 0; i < CUREDUCE_EXACT_STATE_WORDS; ++i) {
    const int flag = i >= 72 && i < 76; /* flags mean "positive" */
    if (flag ? (got[i] > 0) != (want[i] > 0) : got[i] != want[i])
      fail_msg("%s: state word %d: GPU %lld, CPU %lld", what, i, (long long)got[i], (long long)want[i]);
  }
}

/* Chunks on one stream, chunks on two streams into one state at once, and a second state
   combined in: the same bits as one call, and the same state as the CPU's. */
static void split_states_should_give_one_call_bits(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 2;
  const uint64_t n = g_max_n < 1000003 ? g_max_n : 1000003;
  cudaStream_t s1, s2;
  CUDA_OK(cudaStreamCreate(&s1));
  CUDA_OK(cudaStreamCreate(&s2));
  cureduce_handle h2;
  assert_int_equal(cureduce_create(&h2), CUREDUCE_SUCCESS);
  int64_t *d_a, *d_b;
  const size_t state_bytes = CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);
  CUDA_OK(cudaMalloc((void **)&d_a, state_bytes));
  CUDA_OK(cudaMalloc((void **)&d_b, state_bytes));
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d)
    for (int p = 0; p < EX_PATTERN_COUNT && input_wanted(INPUTS[d]); ++p) {
      const cureduce_dtype in = INPUTS[d];
      const size_t size = cureduce_dtype_size(in);
      ex_fill(in, g_host, n, (ex_pattern)p, &rng);
      CUDA_OK(cudaMemcpy(g_in, g_host, n * size, cudaMemcpyHostToDevice));
      const char *base = (const char *)g_in;
      const uint64_t c1 = n / 7, c2 = n / 2 + 1, c3 = n - n / 5;
      CUDA_OK(cudaMemset(d_a, 0, state_bytes));
      CUDA_OK(cudaMemset(d_b, 0, state_bytes));
      CUDA_OK(cudaDeviceSynchronize());
      /* a: [0, c1) then [c1, c2) on s1 while [c2, c3) goes in on s2 (its own handle) */
      assert_int_equal(cureduce_exact_accumulate(g_handle, in, base, c1, d_a, s1), CUREDUCE_SUCCESS);
      assert_int_equal(cureduce_exact_accumulate(g_handle, in, base + c1 * size, c2 - c1, d_a, s1), 0);
      assert_int_equal(cureduce_exact_accumulate(h2, in, base + c2 * size, c3 - c2, d_a, s2), 0);
      /* b: [c3, n), combined into a */
      assert_int_equal(cureduce_exact_accumulate(h2, in, base + c3 * size, n - c3, d_b, s2), 0);
      CUDA_OK(cudaDeviceSynchronize());
      assert_int_equal(cureduce_exact_combine(g_handle, d_a, d_b, NULL), CUREDUCE_SUCCESS);
      CUDA_OK(cudaDeviceSynchronize());

      int64_t gpu_state[CUREDUCE_EXACT_STATE_WORDS], cpu_state[CUREDUCE_EXACT_STATE_WORDS] = {0};
      CUDA_OK(cudaMemcpy(gpu_state, d_a, state_bytes, cudaMemcpyDeviceToHost));
      assert_int_equal(cureduce_cpu_exact_accumulate(in, g_host, n, cpu_state), CUREDUCE_SUCCESS);
      char what[96];
      snprintf(what, sizeof what, "%s n=%llu %s", cureduce_dtype_name(in), (unsigned long long)n,
               EX_PATTERN_NAMES[p]);
      expect_same_state(gpu_state, cpu_state, what);
      cureduce_dtype outs[3];
      const int nout = outputs_of(in, outs);
      for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
        for (int k = 0; k < nout; ++k) {
          unsigned char one[8] = {0}, split[8] = {0};
          assert_int_equal(cureduce_reduce(g_handle, OPS[o], in, g_in, n, outs[k], g_out, NULL), 0);
          CUDA_OK(cudaMemcpy(one, g_out, 8, cudaMemcpyDeviceToHost));
          assert_int_equal(cureduce_exact_finish(g_handle, OPS[o], d_a, outs[k], g_out, NULL), 0);
          CUDA_OK(cudaMemcpy(split, g_out, 8, cudaMemcpyDeviceToHost));
          char w2[160];
          snprintf(w2, sizeof w2, "%s %s->%s split", what, cureduce_op_name(OPS[o]),
                   cureduce_dtype_name(outs[k]));
          expect_same(split, one, cureduce_dtype_size(outs[k]), w2);
        }
    }
  CUDA_OK(cudaFree(d_a));
  CUDA_OK(cudaFree(d_b));
  assert_int_equal(cureduce_destroy(h2), CUREDUCE_SUCCESS);
  CUDA_OK(cudaStreamDestroy(s1));
  CUDA_OK(cudaStreamDestroy(s2));
}

/* The f64 full-array kernel flushes a warp's pairs as one integer when every value's lowest set
   bit lies in a 120-bit window below the warp's largest (exact_push_warp_window), else the
   other way. Thread t's chain c takes elements 2t + c + 512u of each tile of 2048 (u < 4):
   lane 0 of each warp holds +-2^60 from tile 0 (signs alternating by warp, so they cancel),
   putting the window's lowest bit at 2^-59, and the other lanes values whose lowest bits sit
   exactly there, in a0 (2^-59, 2^-7 + 2^-59) or in a1 (1 + 2^-59), or one bit below (2^-60,
   1 + 2^-60), warp by warp. A bit lost or misplaced shows in the state, which is compared
   word by word with the CPU's; the rounded sums and means too. One block (two tiles) and
   many (tile 0 in block 0 only). */
static void f64_pairs_at_the_flush_window_edge_should_match_cpu(void **state) {
  (void)state;
  if (!input_wanted(CUREDUCE_F64))
    return;
  static const uint64_t SIZES_HERE[] = {4096, 1u << 20};
  const size_t state_bytes = CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);
  int64_t *d_state;
  CUDA_OK(cudaMalloc((void **)&d_state, state_bytes));
  double *x = (double *)g_host;
  for (size_t k = 0; k < sizeof SIZES_HERE / sizeof *SIZES_HERE && SIZES_HERE[k] <= g_max_n; ++k) {
    const uint64_t n = SIZES_HERE[k];
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t tile = i / 2048, u = i % 2048 / 512, t = i % 512 / 2, c = i % 2;
      const unsigned warp = (unsigned)(t / 32), lane = (unsigned)(t % 32);
      double v;
      if (lane == 0 && c == 0 && u == 0)
        v = tile == 0 ? (warp % 2 ? -0x1p60 : 0x1p60) : 0.5;
      else if (warp % 4 == 0) /* lowest bits at the window's bottom, in a0 */
        v = u % 2 ? 0x1p-59 : 0x1.0000000000001p-7;
      else if (warp % 4 == 1) /* one value a bit below it (in tile 0 alone, so that no second
                                 one brings the thread's sum back to 2^-59) */
        v = u == 3 && lane == 5 && tile == 0 ? 0x1p-60 : 0x1p-59;
      else if (warp % 4 == 2) /* a1 = +-2^-59 */
        v = u == 0 ? 1.0 : u == 1 && tile == 0 ? 0x1p-59 : 0.0;
      else /* a1 an odd multiple of 2^-60 */
        v = u == 0 ? 1.0 : u == 1 ? (tile == 0 ? 0x1p-60 : 0x1p-59) : 0.0;
      x[i] = (lane + u + c) % 3 == 0 ? -v : v;
    }
    CUDA_OK(cudaMemcpy(g_in, g_host, n * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(d_state, 0, state_bytes));
    assert_int_equal(cureduce_exact_accumulate(g_handle, CUREDUCE_F64, g_in, n, d_state, NULL),
                     CUREDUCE_SUCCESS);
    int64_t got[CUREDUCE_EXACT_STATE_WORDS], want[CUREDUCE_EXACT_STATE_WORDS] = {0};
    CUDA_OK(cudaMemcpy(got, d_state, state_bytes, cudaMemcpyDeviceToHost));
    assert_int_equal(cureduce_cpu_exact_accumulate(CUREDUCE_F64, g_host, n, want), CUREDUCE_SUCCESS);
    char what[64];
    snprintf(what, sizeof what, "f64 n=%llu window edge", (unsigned long long)n);
    expect_same_state(got, want, what);
    check_full(CUREDUCE_F64, n, 0, "window edge");
  }
  CUDA_OK(cudaFree(d_state));
}

/* Rows into states (cureduce_exact_accumulate_rows), in two column chunks added one after the
   other, rounded by cureduce_exact_finish_rows: each row's state and bits those of the CPU's
   exact sum of that row. Rows start unaligned to each other (ld), a block a row (more rows than
   blocks too) or (the long rows) a grid a row. */
static void row_states_should_match_cpu(void **state) {
  (void)state;
  static const uint64_t SHAPES[][3] = {
      {3, 1000, 1003}, {70, 517, 519}, {1200, 33, 35}, {1, 60000, 60000}, {2, 300000, 300003}};
  enum { MAX_ROWS = 1200 };
  uint64_t rng = tu_seed() + 7;
  const size_t state_bytes = CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);
  int64_t *d_states, *h_states = malloc(MAX_ROWS * state_bytes), *cpu = malloc(MAX_ROWS * state_bytes);
  assert_non_null(h_states);
  assert_non_null(cpu);
  CUDA_OK(cudaMalloc((void **)&d_states, MAX_ROWS * state_bytes));
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d)
    for (size_t sh = 0; sh < sizeof SHAPES / sizeof *SHAPES && input_wanted(INPUTS[d]); ++sh) {
      const cureduce_dtype in = INPUTS[d];
      const size_t size = cureduce_dtype_size(in);
      const uint64_t rows = SHAPES[sh][0], cols = SHAPES[sh][1], ld = SHAPES[sh][2], split = cols / 3;
      if (rows * ld + 1 > g_max_n)
        continue;
      for (int p = 0; p < EX_PATTERN_COUNT; ++p) {
        ex_fill(in, g_host, rows * ld, (ex_pattern)p, &rng);
        const char *x = (const char *)g_in + size; /* one element past an aligned start */
        CUDA_OK(cudaMemcpy((char *)g_in + size, g_host, rows * ld * size, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(d_states, 0, rows * state_bytes));
        assert_int_equal(cureduce_exact_accumulate_rows(g_handle, in, x, rows, split, ld, d_states, NULL),
                         CUREDUCE_SUCCESS);
        assert_int_equal(cureduce_exact_accumulate_rows(g_handle, in, x + split * size, rows, cols - split,
                                                        ld, d_states, NULL),
                         CUREDUCE_SUCCESS);
        CUDA_OK(cudaMemcpy(h_states, d_states, rows * state_bytes, cudaMemcpyDeviceToHost));
        char what[160];
        memset(cpu, 0, rows * state_bytes);
        for (uint64_t r = 0; r < rows; ++r) {
          int64_t *want = cpu + r * CUREDUCE_EXACT_STATE_WORDS,
                  *got = h_states + r * CUREDUCE_EXACT_STATE_WORDS;
          assert_int_equal(
              cureduce_cpu_exact_accumulate(in, (const char *)g_host + r * ld * size, cols, want),
              CUREDUCE_SUCCESS);
          snprintf(what, sizeof what, "%s %llux%llu %s row %llu", cureduce_dtype_name(in),
                   (unsigned long long)rows, (unsigned long long)cols, EX_PATTERN_NAMES[p],
                   (unsigned long long)r);
          expect_same_state(got, want, what);
        }
        cureduce_dtype outs[3];
        const int nout = outputs_of(in, outs);
        for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
          for (int k = 0; k < nout; ++k) {
            const size_t osize = cureduce_dtype_size(outs[k]);
            CUDA_OK(cudaMemset(g_out, 0xab, rows * osize)); /* a row not written shows */
            assert_int_equal(
                cureduce_exact_finish_rows(g_handle, OPS[o], d_states, rows, outs[k], g_out, NULL),
                CUREDUCE_SUCCESS);
            CUDA_OK(cudaMemcpy(g_got, g_out, rows * osize, cudaMemcpyDeviceToHost));
            for (uint64_t r = 0; r < rows; ++r) {
              unsigned char want[8] = {0};
              assert_int_equal(
                  cureduce_cpu_sum_exact(in, (const char *)g_host + r * ld * size, cols, outs[k], want),
                  CUREDUCE_SUCCESS);
              if (OPS[o] == CUREDUCE_MEAN_EXACT)
                assert_int_equal(
                    cureduce_cpu_exact_finish(OPS[o], cpu + r * CUREDUCE_EXACT_STATE_WORDS, outs[k], want),
                    CUREDUCE_SUCCESS);
              snprintf(what, sizeof what, "%s %llux%llu %s row %llu %s->%s", cureduce_dtype_name(in),
                       (unsigned long long)rows, (unsigned long long)cols, EX_PATTERN_NAMES[p],
                       (unsigned long long)r, cureduce_op_name(OPS[o]), cureduce_dtype_name(outs[k]));
              expect_same((const char *)g_got + r * osize, want, osize, what);
            }
          }
      }
    }
  CUDA_OK(cudaFree(d_states));
  free(h_states);
  free(cpu);
}

/* Segments into states (cureduce_exact_accumulate_segments), added onto states already
   holding a first pass over the same segments, rounded by cureduce_exact_finish_rows: each
   state that of the CPU's twin (cureduce_cpu_exact_accumulate_segments) and each result the
   CPU's exact sum of the segment counted twice. Random lengths, about one segment in five
   empty, from an unaligned start; one segment, a few long ones, more segments than blocks, many
   segments of a few elements, and one segment of almost all the elements among 500 or 3000
   short ones (the first offset 7, the cuts in the first and last 64th: the kernel's chunks
   must share it among blocks), and one segment between runs of 30000 empty ones.
   (more_than_2pow32_elements_should_match_cpu has a segment beyond 2^32 among empty ones.) */
static void segment_states_should_match_cpu(void **state) {
  (void)state;
  static const uint64_t SHAPES[][3] = {{1, 60000, 0},      {2000, 60000, 0},   {5, 600001, 0},
                                       {37, 100003, 0},    {70000, 140000, 0}, {500, 150000, 1},
                                       {3000, 2000003, 1}, {60000, 100000, 2}};
  enum { MAX_SEGMENTS = 70000 };
  uint64_t rng = tu_seed() + 11;
  const size_t state_bytes = CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);
  int64_t *d_states, *d_offsets, *h_states = malloc(MAX_SEGMENTS * state_bytes),
                                 *cpu = malloc(MAX_SEGMENTS * state_bytes),
                                 *offsets = malloc((MAX_SEGMENTS + 1) * sizeof(int64_t));
  assert_non_null(h_states);
  assert_non_null(cpu);
  assert_non_null(offsets);
  CUDA_OK(cudaMalloc((void **)&d_states, MAX_SEGMENTS * state_bytes));
  CUDA_OK(cudaMalloc((void **)&d_offsets, (MAX_SEGMENTS + 1) * sizeof(int64_t)));
  for (size_t d = 0; d < sizeof INPUTS / sizeof *INPUTS; ++d)
    for (size_t sh = 0; sh < sizeof SHAPES / sizeof *SHAPES && input_wanted(INPUTS[d]); ++sh) {
      const cureduce_dtype in = INPUTS[d];
      const size_t size = cureduce_dtype_size(in);
      const uint64_t segs = SHAPES[sh][0], n = SHAPES[sh][1], edge = n / 64;
      if (n + 1 > g_max_n)
        continue;
      offsets[0] = SHAPES[sh][2] ? 7 : 0;   /* the skewed shapes leave out the first elements */
      for (uint64_t s = 1; s < segs; ++s) { /* random cuts, sorted, about one in five repeated */
        const uint64_t r = tu_next(&rng);
        const int64_t end = (r >> 40) % 2 == 0 ? (int64_t)(7 + r % edge) : (int64_t)(n - r % edge);
        offsets[s] = SHAPES[sh][2] == 0   ? (int64_t)(r % (n + 1))
                     : SHAPES[sh][2] == 1 ? end
                                          : (end < (int64_t)(n / 2) ? 7 : (int64_t)n); /* runs of empties */
      }
      offsets[segs] = (int64_t)n;
      if (segs > 1)
        qsort(offsets + 1, segs - 1, sizeof *offsets, compare_offsets);
      for (uint64_t s = 1; s < segs; ++s)
        if (tu_next(&rng) % 5 == 0)
          offsets[s] = offsets[s - 1];
      CUDA_OK(cudaMemcpy(d_offsets, offsets, (segs + 1) * sizeof *offsets, cudaMemcpyHostToDevice));
      for (int p = 0; p < EX_PATTERN_COUNT; ++p) {
        ex_fill(in, g_host, n, (ex_pattern)p, &rng);
        const char *x = (const char *)g_in + size; /* one element past an aligned start */
        CUDA_OK(cudaMemcpy((char *)g_in + size, g_host, n * size, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(d_states, 0, segs * state_bytes));
        memset(cpu, 0, segs * state_bytes);
        for (int pass = 0; pass < 2; ++pass) {
          assert_int_equal(
              cureduce_exact_accumulate_segments(g_handle, in, x, segs, d_offsets, d_states, NULL),
              CUREDUCE_SUCCESS);
          assert_int_equal(cureduce_cpu_exact_accumulate_segments(in, g_host, segs, offsets, cpu),
                           CUREDUCE_SUCCESS);
        }
        CUDA_OK(cudaMemcpy(h_states, d_states, segs * state_bytes, cudaMemcpyDeviceToHost));
        char what[160];
        for (uint64_t s = 0; s < segs; ++s) {
          int64_t want[CUREDUCE_EXACT_STATE_WORDS];
          memcpy(want, cpu + s * CUREDUCE_EXACT_STATE_WORDS, sizeof want);
          snprintf(what, sizeof what, "%s %llu segments of %llu %s segment %llu", cureduce_dtype_name(in),
                   (unsigned long long)segs, (unsigned long long)n, EX_PATTERN_NAMES[p],
                   (unsigned long long)s);
          expect_same_state(h_states + s * CUREDUCE_EXACT_STATE_WORDS, want, what);
        }
        cureduce_dtype outs[3];
        const int nout = outputs_of(in, outs);
        for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
          for (int k = 0; k < nout; ++k) {
            const size_t osize = cureduce_dtype_size(outs[k]);
            CUDA_OK(cudaMemset(g_out, 0xab, segs * osize));
            assert_int_equal(
                cureduce_exact_finish_rows(g_handle, OPS[o], d_states, segs, outs[k], g_out, NULL),
                CUREDUCE_SUCCESS);
            CUDA_OK(cudaMemcpy(g_got, g_out, segs * osize, cudaMemcpyDeviceToHost));
            assert_int_equal(cureduce_cpu_exact_finish_rows(OPS[o], cpu, segs, outs[k], g_want),
                             CUREDUCE_SUCCESS);
            for (uint64_t s = 0; s < segs; ++s) {
              snprintf(what, sizeof what, "%s %llu segments %s segment %llu %s->%s", cureduce_dtype_name(in),
                       (unsigned long long)segs, EX_PATTERN_NAMES[p], (unsigned long long)s,
                       cureduce_op_name(OPS[o]), cureduce_dtype_name(outs[k]));
              expect_same((const char *)g_got + s * osize, (const char *)g_want + s * osize, osize, what);
            }
          }
      }
    }
  CUDA_OK(cudaFree(d_states));
  CUDA_OK(cudaFree(d_offsets));
  free(h_states);
  free(cpu);
  free(offsets);
}

/* A random state: limbs over a span of 1 to 40 (the GPU rounds spans up to about 22 with a
   whole warp and wider ones with one thread), of either sign (so the rounding carries,
   borrows and negates), sometimes zero; counts from 1 to 2^63 - 1 (a mean divides by them;
   2^32 and more take the one-thread path); now and then a flag. Half the states have limbs
   below 2^34 in magnitude, as carried states hold; the other half limbs of up to 2^62, as an
   integer sum of up to 2^30 states or a one-block call's uncarried copies hold, with the top
   limb below 69, as any sum's. */
static void random_state(int64_t *w, uint64_t *rng) {
  memset(w, 0, CUREDUCE_EXACT_STATE_WORDS * sizeof *w);
  const int wide = tu_next(rng) % 8 == 0, big = tu_next(rng) % 2 == 0;
  const int span = 1 + (int)(tu_next(rng) % (wide ? 40 : 8));
  const int bottom = (int)(tu_next(rng) % (uint64_t)((big ? 69 : 72) - span + 1));
  const int64_t scale = (int64_t)1 << (tu_next(rng) % (big ? 63 : 35));
  for (int i = bottom; i < bottom + span; ++i)
    if (tu_next(rng) % 4 != 0)
      w[i] = (int64_t)(tu_next(rng) % (uint64_t)scale) * (tu_next(rng) % 3 == 0 ? -1 : 1);
  if (tu_next(rng) % 16 == 0) /* cancels to exactly zero, or to one unit */
    for (int i = bottom; i < bottom + span; ++i)
      w[i] = 0;
  const uint64_t counts[] = {1, 3, 1000, 0xffffffffu, 0x100000000u, 0x7fffffffffffffffu};
  w[76] = (int64_t)(tu_next(rng) % 2 ? counts[tu_next(rng) % 6] : 1 + tu_next(rng) % 100000);
  w[75] = (int64_t)(tu_next(rng) % 2); /* not only -0.0 */
  if (tu_next(rng) % 32 == 0)
    w[72 + tu_next(rng) % 3] = 1; /* NaN, +inf or -inf */
}

/* Random states (random_state) rounded by the GPU (cureduce_exact_finish) and the CPU: every
   float output, sums and means. */
static void random_states_should_round_as_on_the_cpu(void **state) {
  (void)state;
  static const cureduce_dtype OUTS[] = {CUREDUCE_F64,  CUREDUCE_F32,     CUREDUCE_F16,
                                        CUREDUCE_BF16, CUREDUCE_F8_E4M3, CUREDUCE_F8_E5M2};
  enum { NOUT = sizeof OUTS / sizeof *OUTS };
  const int STATES = g_max_n < MAX_SIZE ? 300 : 4000; /* a capped run (sanitizers) rounds fewer */
  uint64_t rng = tu_seed() + 5;
  const size_t state_bytes = CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);
  int64_t *h_states = malloc(STATES * state_bytes), *d_states;
  assert_non_null(h_states);
  for (int s = 0; s < STATES; ++s)
    random_state(h_states + (size_t)s * CUREDUCE_EXACT_STATE_WORDS, &rng);
  CUDA_OK(cudaMalloc((void **)&d_states, STATES * state_bytes));
  CUDA_OK(cudaMemcpy(d_states, h_states, STATES * state_bytes, cudaMemcpyHostToDevice));
  unsigned char *d_out = g_out, *got = g_got;
  /* a narrow output fills only the start of its 8-byte slot: clear the rest before the copy back */
  CUDA_OK(cudaMemset(d_out, 0, (size_t)STATES * NOUT * 8));
  for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o) {
    for (int s = 0; s < STATES; ++s)
      for (int k = 0; k < NOUT; ++k)
        assert_int_equal(cureduce_exact_finish(g_handle, OPS[o],
                                               d_states + (size_t)s * CUREDUCE_EXACT_STATE_WORDS, OUTS[k],
                                               d_out + ((size_t)s * NOUT + k) * 8, NULL),
                         CUREDUCE_SUCCESS);
    CUDA_OK(cudaMemcpy(got, d_out, (size_t)STATES * NOUT * 8, cudaMemcpyDeviceToHost));
    for (int s = 0; s < STATES; ++s)
      for (int k = 0; k < NOUT; ++k) {
        const int64_t *w = h_states + (size_t)s * CUREDUCE_EXACT_STATE_WORDS;
        unsigned char want[8] = {0};
        assert_int_equal(cureduce_cpu_exact_finish(OPS[o], w, OUTS[k], want), CUREDUCE_SUCCESS);
        char what[160];
        int b = -1, t = -1;
        for (int i = 0; i < 72; ++i)
          if (w[i] != 0) {
            b = b < 0 ? i : b;
            t = i;
          }
        snprintf(what, sizeof what, "state %d (limbs %d..%d, count %lld) %s->%s", s, b, t, (long long)w[76],
                 cureduce_op_name(OPS[o]), cureduce_dtype_name(OUTS[k]));
        expect_same(got + ((size_t)s * NOUT + k) * 8, want, cureduce_dtype_size(OUTS[k]), what);
      }
  }
  CUDA_OK(cudaFree(d_states));
  free(h_states);
}

/* 2^32 + 4099 elements: a block of 2^20 finite values repeated, whose CPU state is scaled by
   the number of repeats (integer words multiply exactly). e4m3 and bf16. */
static void more_than_2pow32_elements_should_match_cpu(void **state) {
  (void)state;
  const uint64_t block = 1u << 20, reps = 4096, tail = 4099, n = block * reps + tail;
  static const cureduce_dtype BIG[] = {CUREDUCE_F8_E4M3, CUREDUCE_BF16};
  if (getenv("CUREDUCE_TEST_MAX_N")) /* capped runs (the sanitizers) leave the 4 GiB case out */
    skip();
  uint64_t rng = tu_seed() + 3;
  for (size_t d = 0; d < sizeof BIG / sizeof *BIG; ++d) {
    const cureduce_dtype in = BIG[d];
    const size_t size = cureduce_dtype_size(in);
    char *d_big = NULL;
    if (cudaMalloc((void **)&d_big, n * size) != cudaSuccess) {
      (void)cudaGetLastError();
      skip(); /* reported as skipped, with the test's name */
    }
    ex_fill(in, g_host, block, EX_ALL_EXPONENTS, &rng);
    CUDA_OK(cudaMemcpy(d_big, g_host, block * size, cudaMemcpyHostToDevice));
    for (uint64_t r = 1; r < reps; r *= 2) /* doubling copies */
      CUDA_OK(cudaMemcpy(d_big + r * block * size, d_big, (r * 2 <= reps ? r : reps - r) * block * size,
                         cudaMemcpyDeviceToDevice));
    CUDA_OK(cudaMemcpy(d_big + reps * block * size, d_big, tail * size, cudaMemcpyDeviceToDevice));

    int64_t w[CUREDUCE_EXACT_STATE_WORDS] = {0}, t[CUREDUCE_EXACT_STATE_WORDS] = {0};
    assert_int_equal(cureduce_cpu_exact_accumulate(in, g_host, block, w), 0);
    for (int i = 0; i < CUREDUCE_EXACT_STATE_WORDS; ++i)
      w[i] *= (int64_t)reps;
    assert_int_equal(cureduce_cpu_exact_accumulate(in, g_host, tail, t), 0);
    assert_int_equal(cureduce_cpu_exact_combine(w, t), 0);
    cureduce_dtype outs[3];
    const int nout = outputs_of(in, outs);
    for (size_t o = 0; o < sizeof OPS / sizeof *OPS; ++o)
      for (int k = 0; k < nout; ++k) {
        unsigned char want[8] = {0}, got[8] = {0};
        assert_int_equal(cureduce_cpu_exact_finish(OPS[o], w, outs[k], want), 0);
        assert_int_equal(cureduce_reduce(g_handle, OPS[o], in, d_big, n, outs[k], g_out, NULL), 0);
        CUDA_OK(cudaMemcpy(got, g_out, 8, cudaMemcpyDeviceToHost));
        char what[96];
        snprintf(what, sizeof what, "%s %s->%s n=2^32+%llu", cureduce_op_name(OPS[o]),
                 cureduce_dtype_name(in), cureduce_dtype_name(outs[k]),
                 (unsigned long long)(n - (1ull << 32)));
        expect_same(got, want, cureduce_dtype_size(outs[k]), what);
      }
    /* The same array as the first of 600 segments (the others empty), into a state: its pieces
       from every chunk of the grid, each added to the same state. */
    enum { SEGS = 600 };
    int64_t offsets[SEGS + 1], *d_offsets, *d_states;
    const size_t state_bytes = CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);
    offsets[0] = 0;
    for (int s = 1; s <= SEGS; ++s)
      offsets[s] = (int64_t)n;
    CUDA_OK(cudaMalloc((void **)&d_offsets, sizeof offsets));
    CUDA_OK(cudaMalloc((void **)&d_states, SEGS * state_bytes));
    CUDA_OK(cudaMemcpy(d_offsets, offsets, sizeof offsets, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(d_states, 0, SEGS * state_bytes));
    assert_int_equal(cureduce_exact_accumulate_segments(g_handle, in, d_big, SEGS, d_offsets, d_states, NULL),
                     0);
    int64_t *h_states = malloc(SEGS * state_bytes);
    assert_non_null(h_states);
    CUDA_OK(cudaMemcpy(h_states, d_states, SEGS * state_bytes, cudaMemcpyDeviceToHost));
    int64_t want_state[CUREDUCE_EXACT_STATE_WORDS];
    memcpy(want_state, w, sizeof want_state);
    char what[96];
    snprintf(what, sizeof what, "%s segment of 2^32+%llu among %d", cureduce_dtype_name(in),
             (unsigned long long)(n - (1ull << 32)), SEGS);
    expect_same_state(h_states, want_state, what);
    for (size_t i = CUREDUCE_EXACT_STATE_WORDS; i < SEGS * (size_t)CUREDUCE_EXACT_STATE_WORDS; ++i)
      if (h_states[i] != 0)
        fail_msg("%s: an empty segment's state word %zu is %lld", what, i, (long long)h_states[i]);
    ++g_compared;
    free(h_states);
    CUDA_OK(cudaFree(d_offsets));
    CUDA_OK(cudaFree(d_states));
    CUDA_OK(cudaFree(d_big));
  }
}

/* Captured in a CUDA graph (one-call sum, and accumulate + finish), replayed twice: the same
   bits as a direct call, and the one-call state is clean again after every replay. */
static void graph_capture_should_replay_exactly(void **state) {
  (void)state;
  uint64_t rng = tu_seed() + 4;
  const uint64_t n = g_max_n < 100003 ? g_max_n : 100003;
  ex_fill(CUREDUCE_F32, g_host, n, EX_ALL_EXPONENTS, &rng);
  CUDA_OK(cudaMemcpy(g_in, g_host, n * 4, cudaMemcpyHostToDevice));
  double direct = 0, replayed[2] = {0, 0};
  assert_int_equal(
      cureduce_reduce(g_handle, CUREDUCE_SUM_EXACT, CUREDUCE_F32, g_in, n, CUREDUCE_F64, g_out, NULL), 0);
  CUDA_OK(cudaMemcpy(&direct, g_out, 8, cudaMemcpyDeviceToHost));
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  int64_t *d_state;
  CUDA_OK(cudaMalloc((void **)&d_state, CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t)));
  char *out = (char *)g_out;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  assert_int_equal(cureduce_reduce(g_handle, CUREDUCE_SUM_EXACT, CUREDUCE_F32, g_in, n, CUREDUCE_F64, out, s),
                   0);
  assert_int_equal(cudaMemsetAsync(d_state, 0, CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t), s), cudaSuccess);
  assert_int_equal(cureduce_exact_accumulate(g_handle, CUREDUCE_F32, g_in, n / 3, d_state, s), 0);
  assert_int_equal(
      cureduce_exact_accumulate(g_handle, CUREDUCE_F32, (const float *)g_in + n / 3, n - n / 3, d_state, s),
      0);
  assert_int_equal(cureduce_exact_finish(g_handle, CUREDUCE_SUM_EXACT, d_state, CUREDUCE_F64, out + 8, s), 0);
  CUDA_OK(cudaStreamEndCapture(s, &graph));
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < 2; ++r) {
    CUDA_OK(cudaMemset(g_out, 0, 16));
    CUDA_OK(cudaGraphLaunch(exec, s));
    CUDA_OK(cudaStreamSynchronize(s));
    CUDA_OK(cudaMemcpy(replayed, g_out, 16, cudaMemcpyDeviceToHost));
    expect_same(&replayed[0], &direct, 8, "graph replay, one call");
    expect_same(&replayed[1], &direct, 8, "graph replay, accumulate and finish");
  }
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
  CUDA_OK(cudaFree(d_state));
  CUDA_OK(cudaStreamDestroy(s));
}

/* Bad arguments to the state calls get their status and launch nothing. */
static void state_calls_should_refuse_bad_arguments(void **state) {
  (void)state;
  int64_t *d_state, host_state[CUREDUCE_EXACT_STATE_WORDS] = {0};
  const size_t bytes = CUREDUCE_EXACT_STATE_WORDS * sizeof(int64_t);
  CUDA_OK(cudaMalloc((void **)&d_state, bytes + 8));
  CUDA_OK(cudaMemset(d_state, 0, bytes + 8));
  CUDA_OK(cudaMemset(g_out, 0x5a, 16)); /* the refused finishes must leave it */
  const char *in = (const char *)g_in;
  assert_int_equal(cureduce_exact_accumulate(NULL, CUREDUCE_F32, in, 4, d_state, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_exact_accumulate(g_handle, CUREDUCE_I32, in, 4, d_state, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_exact_accumulate(g_handle, (cureduce_dtype)77, in, 4, d_state, NULL),
                   CUREDUCE_ERROR_INVALID_DTYPE);
  assert_int_equal(cureduce_exact_accumulate(g_handle, CUREDUCE_F32, in, 4, NULL, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_exact_accumulate(g_handle, CUREDUCE_F32, in, 4, host_state, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(
      cureduce_exact_accumulate(g_handle, CUREDUCE_F32, in, 4, (int64_t *)((char *)d_state + 4), NULL),
      CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate(g_handle, CUREDUCE_F32, in + 1, 4, d_state, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate(g_handle, CUREDUCE_F32, g_host, 4, d_state, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_exact_combine(g_handle, d_state, host_state, NULL), CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_exact_combine(g_handle, d_state, NULL, NULL), CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_exact_combine(g_handle, d_state, d_state, NULL), CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_combine(g_handle, d_state + 1, d_state, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_finish(g_handle, CUREDUCE_SUM, d_state, CUREDUCE_F64, g_out, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_exact_finish(g_handle, CUREDUCE_SUM_EXACT, d_state, CUREDUCE_I64, g_out, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_exact_finish(g_handle, CUREDUCE_SUM_EXACT, d_state, CUREDUCE_F64, g_host, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(
      cureduce_exact_finish(g_handle, CUREDUCE_SUM_EXACT, d_state, CUREDUCE_F64, (char *)g_out + 4, NULL),
      CUREDUCE_ERROR_INVALID_VALUE);
  /* rows */
  assert_int_equal(cureduce_exact_accumulate_rows(NULL, CUREDUCE_F32, in, 2, 4, 4, d_state, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_I8, in, 1, 4, 4, d_state, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, in, 1, 4, 4, NULL, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, NULL, 1, 4, 4, d_state, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, in, 1, 4, 3, d_state, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* ld < cols */
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, in + 2, 1, 4, 4, d_state, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, in, 1, 4, 4,
                                                  (int64_t *)((char *)d_state + 4), NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, in, 1, 4, 4, host_state, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, g_host, 1, 4, 4, d_state, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, in, 0, 4, 4, NULL, NULL),
                   CUREDUCE_SUCCESS); /* no rows: nothing to do */
  assert_int_equal(cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, NULL, 1, 0, 0, d_state, NULL),
                   CUREDUCE_SUCCESS); /* no columns: nothing read */
  assert_int_equal(
      cureduce_exact_accumulate_rows(g_handle, CUREDUCE_F32, in, UINT64_MAX / 320, 0, 0, d_state, NULL),
      CUREDUCE_ERROR_INVALID_VALUE); /* more states than memory can address */
  /* segments (the offsets' device memory is never read: every call is refused first) */
  const int64_t *offs = (const int64_t *)g_out;
  assert_int_equal(cureduce_exact_accumulate_segments(NULL, CUREDUCE_F32, in, 1, offs, d_state, NULL),
                   CUREDUCE_ERROR_INVALID_HANDLE);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_I64, in, 1, offs, d_state, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, NULL, 1, offs, d_state, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, in, 1, NULL, d_state, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, in, 1, offs, NULL, NULL),
                   CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, in + 2, 1, offs, d_state, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, in, 1,
                                                      (const int64_t *)((const char *)offs + 4), d_state,
                                                      NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, in, 1, offs,
                                                      (int64_t *)((char *)d_state + 4), NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, in, 1, offs, host_state, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(
      cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, in, 1, host_state, d_state, NULL),
      CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, g_host, 1, offs, d_state, NULL),
                   CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, NULL, 0, NULL, NULL, NULL),
                   CUREDUCE_SUCCESS); /* no segments: nothing to do */
  assert_int_equal(
      cureduce_exact_accumulate_segments(g_handle, CUREDUCE_F32, in, UINT64_MAX / 320, offs, d_state, NULL),
      CUREDUCE_ERROR_INVALID_VALUE); /* more states than memory can address */
  assert_int_equal(cureduce_exact_finish_rows(g_handle, CUREDUCE_MAX, d_state, 1, CUREDUCE_F64, g_out, NULL),
                   CUREDUCE_ERROR_UNSUPPORTED);
  assert_int_equal(
      cureduce_exact_finish_rows(g_handle, CUREDUCE_SUM_EXACT, NULL, 1, CUREDUCE_F64, g_out, NULL),
      CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(
      cureduce_exact_finish_rows(g_handle, CUREDUCE_SUM_EXACT, d_state, 1, CUREDUCE_F64, NULL, NULL),
      CUREDUCE_ERROR_NULL_POINTER);
  assert_int_equal(
      cureduce_exact_finish_rows(g_handle, CUREDUCE_SUM_EXACT, d_state, 1, CUREDUCE_F64, g_host, NULL),
      CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(
      cureduce_exact_finish_rows(g_handle, CUREDUCE_SUM_EXACT, host_state, 1, CUREDUCE_F64, g_out, NULL),
      CUREDUCE_ERROR_HOST_POINTER);
  assert_int_equal(cureduce_exact_finish_rows(g_handle, CUREDUCE_SUM_EXACT, d_state, 1, CUREDUCE_F32,
                                              (char *)g_out + 2, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE);
  assert_int_equal(cureduce_exact_finish_rows(g_handle, CUREDUCE_SUM_EXACT, d_state, UINT64_MAX / 320,
                                              CUREDUCE_F64, g_out, NULL),
                   CUREDUCE_ERROR_INVALID_VALUE); /* more states than memory can address */
  CUDA_OK(cudaDeviceSynchronize());
  int64_t after[CUREDUCE_EXACT_STATE_WORDS + 1];
  CUDA_OK(cudaMemcpy(after, d_state, bytes + 8, cudaMemcpyDeviceToHost));
  for (int i = 0; i <= CUREDUCE_EXACT_STATE_WORDS; ++i)
    if (after[i] != 0)
      fail_msg("a refused call changed state word %d", i);
  unsigned char out_after[16];
  CUDA_OK(cudaMemcpy(out_after, g_out, sizeof out_after, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < sizeof out_after; ++i)
    if (out_after[i] != 0x5a)
      fail_msg("a refused finish wrote output byte %zu", i);
  CUDA_OK(cudaFree(d_state));
}

/* Per-test setups that count the tests run: a run that compared no result passes only if
   every test it ran compares none (the argument checks alone). */
static int count_test(void **state) {
  (void)state;
  ++g_tests_run;
  return 0;
}

static int count_checks_only(void **state) {
  ++g_checks_only;
  return count_test(state);
}

static int setup(void **state) {
  (void)state;
  g_max_n = max_n();
  const size_t bytes = (MAX_SIZE + 64) * 8;
  if (cureduce_create(&g_handle) != CUREDUCE_SUCCESS || cudaMalloc(&g_in, bytes) != cudaSuccess ||
      cudaMalloc(&g_out, bytes) != cudaSuccess)
    return -1;
  g_host = malloc(bytes);
  g_want = malloc(bytes);
  g_got = malloc(bytes);
  return g_host && g_want && g_got ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  free(g_host);
  free(g_want);
  free(g_got);
  (void)cudaFree(g_in);
  (void)cudaFree(g_out);
  return cureduce_destroy(g_handle) == CUREDUCE_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv) {
  const int skip = argc == 3 && strcmp(argv[1], "--skip") == 0;
  cureduce_dtype only = CUREDUCE_F32;
  int known = argc < 3 || skip;
  for (size_t d = 0; argc == 3 && !skip && d < sizeof INPUTS / sizeof *INPUTS; ++d)
    known |= cureduce_dtype_from_name(argv[2], &only) == CUREDUCE_SUCCESS && only == INPUTS[d];
  if (argc > 3 || !known || (argc >= 2 && argv[1][0] == '-' && !skip)) {
    fprintf(stderr,
            "usage: %s [TEST [DTYPE] | --skip TEST] (TEST: a cmocka filter such as 'rows*'; DTYPE: f32, "
            "f64, f16, bf16, e4m3 or e5m2)\n",
            argv[0]);
    return 2;
  }
  if (skip) {
    cmocka_set_skip_filter(argv[2]);
  } else {
    if (argc == 3)
      g_only_input = (int)only;
    if (argc >= 2)
      cmocka_set_test_filter(argv[1]);
  }
  gpu_require_device();
  (void)tu_seed();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(full_arrays_should_match_cpu, count_test),
      cmocka_unit_test_setup(full_arrays_of_declined_tiles_should_match_cpu, count_test),
      cmocka_unit_test_setup(tiles_at_the_check_bound_should_cancel_to_zero, count_test),
      cmocka_unit_test_setup(probe_groups_at_the_check_bound_should_cancel_to_zero, count_test),
      cmocka_unit_test_setup(rows_cols_segments_axes_should_match_cpu, count_test),
      cmocka_unit_test_setup(middle_axis_of_many_small_matrices_should_match_cpu, count_test),
      cmocka_unit_test_setup(rows_in_teams_of_four_should_match_cpu, count_test),
      cmocka_unit_test_setup(rows_segment_past_the_plain_bound_should_match_cpu, count_test),
      cmocka_unit_test_setup(rows_many_segments_over_few_elements_should_match_cpu, count_test),
      cmocka_unit_test_setup(split_states_should_give_one_call_bits, count_test),
      cmocka_unit_test_setup(row_states_should_match_cpu, count_test),
      cmocka_unit_test_setup(f64_pairs_at_the_flush_window_edge_should_match_cpu, count_test),
      cmocka_unit_test_setup(segment_states_should_match_cpu, count_test),
      cmocka_unit_test_setup(random_states_should_round_as_on_the_cpu, count_test),
      cmocka_unit_test_setup(graph_capture_should_replay_exactly, count_test),
      cmocka_unit_test_setup(state_calls_should_refuse_bad_arguments, count_checks_only),
      cmocka_unit_test_setup(more_than_2pow32_elements_should_match_cpu, count_test),
  };
  const int failed = cmocka_run_group_tests(tests, setup, teardown);
  if (g_compared == 0 && (g_tests_run == 0 || g_tests_run > g_checks_only)) { /* no test, or none compared */
    fprintf(stderr, "no GPU result was compared with the CPU's: check the test filter\n");
    return 1;
  }
  return failed;
}
