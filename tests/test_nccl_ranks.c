/* The multi-GPU API over K ranks, one process per GPU.
 *
 *   test_nccl_ranks K         forks K ranks on GPUs 0 .. K-1 (exit 77, skipped, when there are
 *                             fewer), which meet through an ncclUniqueId passed in a file;
 *   test_nccl_ranks --rank R --world K --id-file PATH
 *                             runs rank R alone, for a launcher that starts the processes itself
 *                             (rank 0 writes PATH, the others wait for it; every rank needs the
 *                             same CUREDUCE_TEST_SEED, 1 when unset).
 *
 * Every rank makes the same arrays from the same seed and the same random shardings (empty
 * shards included), reduces its shard with cureduce_dist_reduce (its block of columns with
 * cureduce_dist_reduce_rows, its pieces of segments with cureduce_dist_reduce_segments), and checks the
 * result against its own GPU's single-GPU results (dist_gpu_util.h): the whole array's bits where the
 * sharding cannot matter (MIN, MAX, ABSMAX, the arg ops, the exact sums, integer sums), else the rank-order
 * combine of each shard's result. Each rank prints one line; the program exits 0 only when every rank passed.
 * Start it with NCCL_NVLS_ENABLE=0 (CTest does). */
#include "../bench/nccl_id_file.h"
#include "cureduce_nccl.h"
#include "dist_gpu_util.h"

#include <nccl.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_N ((1u << 20) + 3)
#define MAX_ROWS 64
#define RANK_TIME_LIMIT_S 900 /* a rank whose peers died would wait in NCCL for ever */

#define CUDA_CHECK(call)                                                                                     \
  do {                                                                                                       \
    const cudaError_t e_ = (call);                                                                           \
    if (e_ != cudaSuccess) {                                                                                 \
      printf("%s failed: %s\n", #call, cudaGetErrorString(e_));                                              \
      fflush(stdout);                                                                                        \
      _exit(1);                                                                                              \
    }                                                                                                        \
  } while (0)

#define MAX_SEGMENTS 40

typedef struct rank_ctx {
  int rank, world;
  cureduce_handle h;
  cureduce_dist d;
  cudaStream_t stream;
  void *host, *dev, *out;
  void *h_piece, *d_piece; /* a rank's pieces of the segments, on the host and the device */
  int64_t *d_offsets;
  long checks, failures;
} rank_ctx;

static void check(rank_ctx *c, int ok, const char *what, const dg_combo *k, uint64_t n) {
  c->checks++;
  if (ok)
    return;
  if (++c->failures <= 20)
    printf("rank %d: FAIL %s: %s %s->%s, n %llu\n", c->rank, what, cureduce_op_name(k->op),
           cureduce_dtype_name(k->in), cureduce_dtype_name(k->acc), (unsigned long long)n);
}

/* One combo over n elements at c->dev (c->host on the host), split at cut. */
static void check_full(rank_ctx *c, const dg_combo *k, uint64_t n, const uint64_t *cut) {
  const size_t size = cureduce_dtype_size(k->in);
  const uint64_t m = cut[c->rank + 1] - cut[c->rank];
  const void *shard = m > 0 ? (const char *)c->dev + cut[c->rank] * size : NULL;
  unsigned char got[8], want[8];
  memset(got, 0x5a, sizeof got);
  memset(want, 0x5a, sizeof want);
  CUDA_CHECK(cudaMemcpy(c->out, got, 8, cudaMemcpyHostToDevice));
  const cureduce_status st = cureduce_dist_reduce(c->d, k->op, k->in, shard, m, n, k->acc, c->out, c->stream);
  CUDA_CHECK(cudaStreamSynchronize(c->stream));
  CUDA_CHECK(cudaMemcpy(got, c->out, 8, cudaMemcpyDeviceToHost));
  const cureduce_status want_st =
      dg_expected(c->h, k->op, k->in, k->acc, c->host, c->dev, n, cut, c->world, want);
  check(c, st == want_st, "status", k, n);
  check(c, st != CUREDUCE_SUCCESS || dg_same_result(k->op, k->acc, got, want), "result", k, n);
}

/* One combo over a rows x cols matrix at c->dev whose columns are split at cut: this rank's
   block is the view of its columns, with ld = cols. */
static void check_rows(rank_ctx *c, const dg_combo *k, uint64_t rows, uint64_t cols, const uint64_t *cut) {
  const size_t size = cureduce_dtype_size(k->in), rsize = cureduce_result_size(k->op, k->acc);
  const uint64_t m = cut[c->rank + 1] - cut[c->rank];
  const char *block = (const char *)c->dev + cut[c->rank] * size;
  unsigned char got[MAX_ROWS * 8], want[MAX_ROWS * 8];
  const cureduce_status st =
      cureduce_dist_reduce_rows(c->d, k->op, k->in, block, rows, m, cols, cols, k->acc, c->out, c->stream);
  CUDA_CHECK(cudaStreamSynchronize(c->stream));
  check(c, st == CUREDUCE_SUCCESS, "rows status", k, cols);
  CUDA_CHECK(cudaMemcpy(got, c->out, rows * rsize, cudaMemcpyDeviceToHost));
  if (dg_split_invariant(k->op, k->acc) || c->world == 1) {
    check(c, cureduce_reduce_rows(c->h, k->op, k->in, c->dev, rows, cols, cols, k->acc, c->out, NULL) == 0,
          "whole rows", k, cols);
    CUDA_CHECK(cudaMemcpy(want, c->out, rows * rsize, cudaMemcpyDeviceToHost));
  } else {
    unsigned char local[DU_MAX_RANKS][MAX_ROWS * 8];
    for (int r = 0; r < c->world; ++r)
      if (cut[r + 1] > cut[r]) {
        check(c,
              cureduce_reduce_rows(c->h, cr_dist_local_op(k->op, k->acc), k->in,
                                   (const char *)c->dev + cut[r] * size, rows, cut[r + 1] - cut[r], cols,
                                   k->acc, c->out, NULL) == 0,
              "shard rows", k, cols);
        CUDA_CHECK(cudaMemcpy(local[r], c->out, rows * rsize, cudaMemcpyDeviceToHost));
      }
    for (uint64_t row = 0; row < rows; ++row) {
      cr_dist_partial p[DU_MAX_RANKS];
      for (int r = 0; r < c->world; ++r)
        p[r] = du_partial(k->op, k->in, k->acc, (const char *)c->host + (row * cols + cut[r]) * size,
                          cut[r + 1] - cut[r], local[r] + row * rsize);
      cr_dist_combine(k->op, k->acc, p, c->world, 1, want + row * rsize);
    }
  }
  for (uint64_t row = 0; row < rows; ++row)
    check(c, dg_same_result(k->op, k->acc, got + row * rsize, want + row * rsize), "row", k, cols);
}

/* Segments: segment s of the array at c->host is [g[s], g[s + 1]), split over the ranks at
   cut[s]. Rank r's buffer holds its pieces of the segments in order: made at c->h_piece and
   uploaded to c->d_piece, its offsets (segs + 1) at c->d_offsets. */
static void upload_pieces(rank_ctx *c, cureduce_dtype in, const int64_t *g, uint64_t segs,
                          uint64_t (*cut)[DU_MAX_RANKS + 1], int r, int64_t *offsets) {
  const size_t size = cureduce_dtype_size(in);
  uint64_t at = 0;
  for (uint64_t s = 0; s < segs; ++s) {
    const uint64_t m = cut[s][r + 1] - cut[s][r];
    offsets[s] = (int64_t)at;
    memcpy((char *)c->h_piece + at * size, (const char *)c->host + ((uint64_t)g[s] + cut[s][r]) * size,
           m * size);
    at += m;
  }
  offsets[segs] = (int64_t)at;
  CUDA_CHECK(cudaMemcpy(c->d_piece, c->h_piece, at * size, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(c->d_offsets, offsets, (segs + 1) * 8, cudaMemcpyHostToDevice));
}

/* One combo over segments split over the ranks (see upload_pieces), against one GPU's
   cureduce_reduce_segments over the whole array, or the rank-order combine of each rank's
   pieces where float sums depend on the split. Outputs start poisoned: an empty segment's
   output must stay so, but for SUM, SUMSQ and SUM_EXACT (zero) and MEAN_EXACT (NaN). */
static void check_segments(rank_ctx *c, const dg_combo *k, const int64_t *g, uint64_t segs,
                           uint64_t (*cut)[DU_MAX_RANKS + 1]) {
  const size_t size = cureduce_dtype_size(k->in), rsize = cureduce_result_size(k->op, k->acc);
  unsigned char got[MAX_SEGMENTS * 8], want[MAX_SEGMENTS * 8], local[MAX_SEGMENTS * 8];
  int64_t offsets[MAX_SEGMENTS + 1], *d_global = c->d_offsets + MAX_SEGMENTS + 1;
  memset(want, 0x5a, sizeof want);
  CUDA_CHECK(cudaMemcpy(c->out, want, sizeof want, cudaMemcpyHostToDevice));
  upload_pieces(c, k->in, g, segs, cut, c->rank, offsets);
  const cureduce_status st = cureduce_dist_reduce_segments(c->d, k->op, k->in, c->d_piece, segs, c->d_offsets,
                                                           k->acc, c->out, c->stream);
  CUDA_CHECK(cudaStreamSynchronize(c->stream));
  check(c, st == CUREDUCE_SUCCESS, "segments status", k, segs);
  CUDA_CHECK(cudaMemcpy(got, c->out, segs * rsize, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(c->out, want, sizeof want, cudaMemcpyHostToDevice));
  if (dg_split_invariant(k->op, k->acc) || c->world == 1) {
    CUDA_CHECK(cudaMemcpy(d_global, g, (segs + 1) * 8, cudaMemcpyHostToDevice));
    check(c, cureduce_reduce_segments(c->h, k->op, k->in, c->dev, segs, d_global, k->acc, c->out, NULL) == 0,
          "whole segments", k, segs);
    CUDA_CHECK(cudaMemcpy(want, c->out, segs * rsize, cudaMemcpyDeviceToHost));
    if (k->op == CUREDUCE_MEAN_EXACT)
      for (uint64_t s = 0; s < segs; ++s)
        if (g[s + 1] == g[s])
          (void)cureduce_from_double(k->acc, NAN, want + s * rsize);
  } else {
    cr_dist_partial p[MAX_SEGMENTS][DU_MAX_RANKS];
    for (int r = 0; r < c->world; ++r) {
      upload_pieces(c, k->in, g, segs, cut, r, offsets);
      check(c,
            cureduce_reduce_segments(c->h, cr_dist_local_op(k->op, k->acc), k->in, c->d_piece, segs,
                                     c->d_offsets, k->acc, c->out, NULL) == 0,
            "piece segments", k, segs);
      CUDA_CHECK(cudaMemcpy(local, c->out, segs * rsize, cudaMemcpyDeviceToHost));
      for (uint64_t s = 0; s < segs; ++s)
        p[s][r] = du_partial(k->op, k->in, k->acc, (const char *)c->h_piece + offsets[s] * size,
                             (uint64_t)(offsets[s + 1] - offsets[s]), local + s * rsize);
    }
    for (uint64_t s = 0; s < segs; ++s)
      cr_dist_combine(k->op, k->acc, p[s], c->world, 1, want + s * rsize);
  }
  for (uint64_t s = 0; s < segs; ++s)
    check(c, dg_same_result(k->op, k->acc, got + s * rsize, want + s * rsize), "segment", k, segs);
}

/* Random segments over n elements (about one in five empty), each split at its own cut. */
static void make_segments(uint64_t n, uint64_t segs, int world, uint64_t *rng, int64_t *g,
                          uint64_t (*cut)[DU_MAX_RANKS + 1]) {
  uint64_t c[MAX_SEGMENTS + 1];
  du_split(n, (int)segs, rng, c);
  for (uint64_t s = 0; s <= segs; ++s)
    g[s] = (int64_t)c[s];
  for (uint64_t s = 0; s < segs; ++s)
    du_split((uint64_t)(g[s + 1] - g[s]), world, rng, cut[s]);
}

static void run_checks(rank_ctx *c, uint64_t seed) {
  static const uint64_t sizes[] = {0, 1, 33, 4099, MAX_N};
  static const tu_pattern patterns[] = {TU_RANDOM, TU_SPECIALS};
  static const uint64_t shapes[][2] = {{5, 1000}, {MAX_ROWS, 4099}};
  static const uint64_t segment_shapes[][2] = {{1, 3000}, {MAX_SEGMENTS, 300007}};
  dg_combo combos[512];
  const int count = dg_combos(combos, 512);
  uint64_t rng = seed; /* the same sequence on every rank: the same data and shardings */
  { /* counts whose low halves carry, a total of 2^64 - 1, and one of 2^64: refused on every rank */
    const uint64_t others = (uint64_t)(c->world - 1);
    const uint64_t firsts[3] = {0xffffffffull, UINT64_MAX - others, UINT64_MAX - others + 1};
    const uint64_t wants[3] = {0xffffffffull + others, UINT64_MAX, 0};
    for (int k = 0; k < (c->world > 1 ? 3 : 2); ++k) { /* one rank cannot pass 2^64 - 1 */
      uint64_t total = 7;
      const cureduce_status st = cureduce_dist_count(c->d, c->rank == 0 ? firsts[k] : 1, &total, c->stream);
      check(c,
            k < 2 ? st == CUREDUCE_SUCCESS && total == wants[k]
                  : st == CUREDUCE_ERROR_INVALID_VALUE && total == 7,
            "count near 2^64", &combos[0], firsts[k]);
    }
  }
  for (int in = 0; in < CUREDUCE_DTYPE_COUNT; ++in)
    for (size_t t = 0; t < sizeof patterns / sizeof *patterns; ++t) {
      for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
        const uint64_t n = sizes[s];
        tu_fill((cureduce_dtype)in, c->host, n, patterns[t], 3, &rng);
        CUDA_CHECK(
            cudaMemcpy(c->dev, c->host, n * cureduce_dtype_size((cureduce_dtype)in), cudaMemcpyHostToDevice));
        uint64_t cut[DU_MAX_RANKS + 1];
        du_split(n, c->world, &rng, cut);
        uint64_t total = 0;
        check(c,
              cureduce_dist_count(c->d, cut[c->rank + 1] - cut[c->rank], &total, c->stream) == 0 &&
                  total == n,
              "count", &combos[0], n);
        for (int i = 0; i < count; ++i)
          if (combos[i].in == (cureduce_dtype)in)
            check_full(c, &combos[i], n, cut);
      }
      for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s) {
        const uint64_t rows = shapes[s][0], cols = shapes[s][1];
        tu_fill((cureduce_dtype)in, c->host, rows * cols, patterns[t], 3, &rng);
        CUDA_CHECK(cudaMemcpy(c->dev, c->host, rows * cols * cureduce_dtype_size((cureduce_dtype)in),
                              cudaMemcpyHostToDevice));
        uint64_t cut[DU_MAX_RANKS + 1];
        du_split(cols, c->world, &rng, cut);
        for (int i = 0; i < count; ++i)
          if (combos[i].in == (cureduce_dtype)in)
            check_rows(c, &combos[i], rows, cols, cut);
      }
      for (size_t s = 0; s < sizeof segment_shapes / sizeof *segment_shapes; ++s) {
        const uint64_t segs = segment_shapes[s][0], n = segment_shapes[s][1];
        tu_fill((cureduce_dtype)in, c->host, n, patterns[t], 3, &rng);
        CUDA_CHECK(
            cudaMemcpy(c->dev, c->host, n * cureduce_dtype_size((cureduce_dtype)in), cudaMemcpyHostToDevice));
        int64_t g[MAX_SEGMENTS + 1];
        uint64_t cut[MAX_SEGMENTS][DU_MAX_RANKS + 1];
        make_segments(n, segs, c->world, &rng, g, cut);
        for (int i = 0; i < count; ++i)
          if (combos[i].in == (cureduce_dtype)in)
            check_segments(c, &combos[i], g, segs, cut);
      }
    }
}

/* 0 when every check passed, 77 when there are too few GPUs, else 1. */
static int run_rank(int rank, int world, const char *id_path, uint64_t seed) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < world) {
    printf("skipped: %d ranks need %d GPUs, found %d\n", world, world, devices);
    return TEST_SKIP_CODE;
  }
  rank_ctx c = {rank, world, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0};
  ncclUniqueId id;
  ncclComm_t comm;
  if (cudaSetDevice(rank) != cudaSuccess)
    return 1;
  if (rank == 0 && (ncclGetUniqueId(&id) != ncclSuccess || nccl_id_publish(id_path, &id) != 0)) {
    printf("rank 0: could not make or publish the NCCL id at %s\n", id_path);
    return 1;
  }
  if (rank != 0 && nccl_id_wait(id_path, &id) != 0) {
    printf("rank %d: no NCCL id at %s\n", rank, id_path);
    return 1;
  }
  if (ncclCommInitRank(&comm, world, id, rank) != ncclSuccess || cureduce_create(&c.h) != CUREDUCE_SUCCESS ||
      cureduce_dist_create(&c.d, comm, c.h) != CUREDUCE_SUCCESS ||
      cureduce_dist_reserve_rows(c.d, MAX_ROWS) != CUREDUCE_SUCCESS ||
      cudaStreamCreate(&c.stream) != cudaSuccess || !(c.host = malloc(MAX_N * 8)) ||
      cudaMalloc(&c.dev, MAX_N * 8) != cudaSuccess || cudaMalloc(&c.out, MAX_ROWS * 8) != cudaSuccess ||
      !(c.h_piece = malloc(MAX_N * 8)) || cudaMalloc(&c.d_piece, MAX_N * 8) != cudaSuccess ||
      cudaMalloc((void **)&c.d_offsets, 2 * (MAX_SEGMENTS + 1) * 8) != cudaSuccess) {
    printf("rank %d: set-up failed\n", rank);
    return 1;
  }
  run_checks(&c, seed);
  printf("rank %d of %d: %ld checks, %ld failed\n", rank, world, c.checks, c.failures);
  const int clean = cureduce_dist_destroy(c.d) == CUREDUCE_SUCCESS &&
                    cureduce_destroy(c.h) == CUREDUCE_SUCCESS && ncclCommDestroy(comm) == ncclSuccess;
  return c.failures == 0 && clean ? 0 : 1;
}

/* Forks the K ranks before anything touches CUDA (a child may not use a parent's CUDA). */
static int run_all(int world, uint64_t seed) {
  char dir[] = "/tmp/cureduce-nccl-XXXXXX";
  if (!mkdtemp(dir))
    return 1;
  char path[sizeof dir + 8];
  snprintf(path, sizeof path, "%s/id", dir);
  fflush(stdout);
  pid_t pids[DU_MAX_RANKS];
  for (int r = 0; r < world; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) {
      alarm(RANK_TIME_LIMIT_S);
      const int rc = run_rank(r, world, path, seed);
      fflush(stdout);
      _exit(rc);
    }
  }
  int passed = 0, failed = 0, skipped = 0;
  for (int r = 0; r < world; ++r) {
    int status = 0;
    const int rc =
        pids[r] > 0 && waitpid(pids[r], &status, 0) == pids[r] && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    passed += rc == 0;
    skipped += rc == TEST_SKIP_CODE;
    failed += rc != 0 && rc != TEST_SKIP_CODE;
  }
  unlink(path);
  rmdir(dir);
  if (skipped == world)
    return TEST_SKIP_CODE;
  printf("%d passed, %d failed\n", passed, failed + skipped);
  return failed + skipped == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 2) {
    const int world = atoi(argv[1]);
    if (world < 1 || world > DU_MAX_RANKS) {
      fprintf(stderr, "%s: K must be 1 .. %d\n", argv[0], DU_MAX_RANKS);
      return 2;
    }
    return run_all(world, tu_seed());
  }
  if (argc == 7 && strcmp(argv[1], "--rank") == 0 && strcmp(argv[3], "--world") == 0 &&
      strcmp(argv[5], "--id-file") == 0) {
    const int rank = atoi(argv[2]), world = atoi(argv[4]);
    if (world < 1 || world > DU_MAX_RANKS || rank < 0 || rank >= world) {
      fprintf(stderr, "%s: need 0 <= R < K <= %d\n", argv[0], DU_MAX_RANKS);
      return 2;
    }
    const char *env = getenv("CUREDUCE_TEST_SEED");
    return run_rank(rank, world, argv[6], env ? strtoull(env, NULL, 0) : 1);
  }
  fprintf(stderr, "usage: %s K | --rank R --world K --id-file PATH\n", argv[0]);
  return 2;
}
