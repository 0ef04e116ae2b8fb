/* A batch of mixed lengths and chunked requests, as --requests spells it and source_build makes
   it, on the cpu backend (the oracle): each request's slice of the batch's pooled vectors,
   index and output is what the same request gives alone, and a chunk (its queries the last LQ
   of LK keys) gives exactly the last LQ rows of its whole prompt, which a whole prompt of LQ
   tokens does not. A batch description read wrong (offsets, segments, which keys a chunk
   sees) fails one of these. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error.h"
#include "pipeline.h"
#include "source.h"
#include "testing.h"

static fp2_params params(void) {
  fp2_params p = {.hq = 8, .hkv = 2, .dim = 16, .block = 128, .qtile = 128, .alpha = 0.1f,
                  .sink = 2, .window = 4, .recent = 2, .correction = 1, .dtype = FP2_BF16};
  return p;
}

/* The oracle in the kernels' precision (what check --backend cpu runs), every row. */
static void run(const problem *pb, pipeline_result *r) {
  pipeline_config cfg = {.density = -1, .attend = 1, .pooled = POOLED_ROUNDED, .prob = PROB_EMULATED};
  cpu_pipeline(pb, &cfg, r);
}

static void parse_and_format(void) {
  request_list r;
  char err[ERR_LEN], text[256];
  EXPECT(parse_request_list("1000,2x300,512/2k,128/700,4k+77", &r, err) == 0);
  EXPECT(r.n == 6);
  const int64_t lq[] = {1000, 300, 300, 512, 128, 4173}, lk[] = {1000, 300, 300, 2048, 700, 4173};
  for (int b = 0; b < 6 && b < r.n; b++) EXPECT_MSG(r.lq[b] == lq[b] && r.lk[b] == lk[b], "request %d", b);
  requests_format(text, sizeof text, &r);
  EXPECT_MSG(strcmp(text, "1000,2x300,512/2k,128/700,4173") == 0, "formatted as '%s'", text);
  EXPECT(requests_total_q(&r) == 1000 + 600 + 512 + 128 + 4173);
  EXPECT(requests_total_k(&r) == 1000 + 600 + 2048 + 700 + 4173);
  const char *bad[] = {"", "1k,", "x1k", "0x1k", "3x", "1k/", "/1k", "1k/2k/3k", "1k,,2k", "257x1", "-1k", "1q"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    EXPECT_MSG(parse_request_list(bad[i], &r, err) != 0, "'%s' parsed", bad[i]);
  /* Ranges are opts_validate's. */
  fp2_opts o;
  opts_defaults(&o);
  const char *invalid[] = {"2k/1k", "0", "17m"};
  for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
    EXPECT(parse_request_list(invalid[i], &o.shape.requests, err) == 0);
    EXPECT_MSG(opts_validate(&o, err) != 0, "'%s' validated", invalid[i]);
  }
  EXPECT(parse_request_list("1k,512/2k", &o.shape.requests, err) == 0);
  EXPECT(opts_validate(&o, err) == 0);
  o.shape.batch = 2;
  EXPECT(opts_validate(&o, err) != 0); /* --requests is the batch */
}

static int64_t segment_differences(const pipeline_result *a, int seg_a, const pipeline_result *b, int seg_b) {
  const int na = a->index.offsets[seg_a + 1] - a->index.offsets[seg_a];
  const int nb = b->index.offsets[seg_b + 1] - b->index.offsets[seg_b];
  if (na != nb) return 1;
  return memcmp(a->index.indices + a->index.offsets[seg_a], b->index.indices + b->index.offsets[seg_b],
                sizeof(int) * (size_t)na) != 0;
}

/* Rows [first_a, +n) of a's output against rows [first_b, +n) of b's: how many values differ. */
static int64_t row_differences(const problem *pa, const pipeline_result *a, int64_t first_a, const pipeline_result *b,
                               int64_t first_b, int64_t n) {
  const size_t w = (size_t)pa->p.hq * pa->p.dim;
  int64_t diff = 0;
  for (size_t i = 0; i < (size_t)n * w; i++) diff += a->output[first_a * w + i] != b->output[first_b * w + i];
  return diff;
}

/* Each request of a batch built from --requests against the same request alone. */
static void requests_alone(void) {
  char err[ERR_LEN];
  request_list list;
  EXPECT(parse_request_list("300,2x100/1k,640/1k+77,129", &list, err) == 0);
  const source_request rq = {.p = params(), .batch = 1, .len = 1, .requests = &list, .seed = 5};
  data_source src;
  EXPECT(source_parse("synth:llm", &src, err) == 0);
  problem pb;
  if (source_build(&src, &rq, &pb, err) != 0) {
    EXPECT_MSG(0, "source_build: %s", err);
    return;
  }
  EXPECT(pb.batch == 5 && pb.lq[1] == 100 && pb.lk[1] == 1024 && pb.lq[3] == 640 && pb.lk[3] == 1101);
  problem_prepare(&pb, 1);
  pipeline_result all;
  run(&pb, &all);
  const fp2_params *p = &pb.p;
  for (int b = 0; b < pb.batch; b++) {
    problem one;
    problem_request(&pb, b, &one);
    problem_prepare(&one, 1);
    pipeline_result r;
    run(&one, &r);
    const int nblk = one.cu_blocks[1], ntiles = one.cu_tiles[1];
    for (int h = 0; h < p->hkv; h++) {
      const size_t at = ((size_t)h * pb.cu_blocks[pb.batch] + pb.cu_blocks[b]) * p->dim, n = (size_t)nblk * p->dim;
      EXPECT_MSG(memcmp(all.k_mean + at, r.k_mean + (size_t)h * n, n * sizeof(float)) == 0 &&
                     memcmp(all.v_mean + at, r.v_mean + (size_t)h * n, n * sizeof(float)) == 0,
                 "request %d, KV head %d: pooled means differ from the request alone", b, h);
      int64_t seg_diff = 0;
      for (int t = 0; t < ntiles; t++)
        seg_diff += segment_differences(&all, problem_segment(&pb, b, h, t), &r, problem_segment(&one, 0, h, t));
      EXPECT_MSG(seg_diff == 0, "request %d, KV head %d: %lld segments differ from the request alone", b, h,
                 (long long)seg_diff);
    }
    const int64_t diff = row_differences(&pb, &all, pb.cu_q[b], &r, 0, pb.lq[b]);
    EXPECT_MSG(diff == 0, "request %d: %lld output values differ from the request alone", b, (long long)diff);
    pipeline_result_free(&r);
    problem_free(&one);
  }
  pipeline_result_free(&all);
  problem_free(&pb);
}

/* A chunk 512/2k in a batch gives the last 512 rows of the whole 2k prompt exactly (its tiles
   fall on the prompt's: 1536 positions of 4 rows are 48 tiles of 128), and not what a whole
   512-token prompt of its keys gives. */
static void chunk_is_its_prompt_tail(void) {
  const fp2_params p = params();
  const int len = 2048, first = 1536, count = len - first;
  char err[ERR_LEN];
  problem whole;
  problem_init(&whole, &p, 1, &len, &len);
  EXPECT(synth_fill(&whole, SYNTH_LLM, 9, err) == 0);
  const int lq[2] = {300, count}, lk[2] = {300, len};
  problem pb;
  problem_init(&pb, &p, 2, lq, lk);
  EXPECT(synth_fill(&pb, SYNTH_RANDOM, 3, err) == 0); /* request 0: other data */
  const size_t qw = (size_t)p.hq * p.dim, kw = (size_t)p.hkv * p.dim;
  memcpy(pb.q + pb.cu_q[1] * qw, whole.q + (size_t)first * qw, sizeof(float) * count * qw);
  memcpy(pb.k + pb.cu_k[1] * kw, whole.k, sizeof(float) * len * kw);
  memcpy(pb.v + pb.cu_k[1] * kw, whole.v, sizeof(float) * len * kw);
  problem tail; /* the chunk read as a whole prompt of its own 512 positions (lq = lk) */
  problem_init(&tail, &p, 1, &count, &count);
  memcpy(tail.q, whole.q + (size_t)first * qw, sizeof(float) * count * qw);
  memcpy(tail.k, whole.k + (size_t)first * kw, sizeof(float) * count * kw);
  memcpy(tail.v, whole.v + (size_t)first * kw, sizeof(float) * count * kw);
  problem_prepare(&whole, 1);
  problem_prepare(&pb, 1);
  problem_prepare(&tail, 1);
  pipeline_result rw, rb, rt;
  run(&whole, &rw);
  run(&pb, &rb);
  run(&tail, &rt);
  const int tile0 = first * fp2_group(&p) / p.qtile, ntiles = pb.cu_tiles[2] - pb.cu_tiles[1];
  int64_t seg_diff = 0;
  for (int h = 0; h < p.hkv; h++)
    for (int t = 0; t < ntiles; t++)
      seg_diff += segment_differences(&rb, problem_segment(&pb, 1, h, t), &rw, problem_segment(&whole, 0, h, tile0 + t));
  EXPECT_MSG(seg_diff == 0, "%lld segments of the chunk differ from its prompt's", (long long)seg_diff);
  int64_t diff = row_differences(&pb, &rb, pb.cu_q[1], &rw, first, count);
  EXPECT_MSG(diff == 0, "%lld output values of the chunk differ from its prompt's last rows", (long long)diff);
  diff = row_differences(&pb, &rb, pb.cu_q[1], &rt, 0, count);
  EXPECT_MSG(diff > (int64_t)count * (int64_t)qw / 2, "the chunk reads like a 512-token prompt: %lld values differ",
             (long long)diff);
  pipeline_result_free(&rw);
  pipeline_result_free(&rb);
  pipeline_result_free(&rt);
  problem_free(&tail);
  problem_free(&pb);
  problem_free(&whole);
}

/* A batch's offsets are the library's (fp2_plan_prefixes, as the device plan holds them):
   rows, tiles of g packed rows per query (g = 4 here) and key blocks, each request's rounded
   up; a batch of more than 2^31 rows is refused, not wrapped. */
static void geometry_is_the_plans(void) {
  const fp2_params p = params();
  const int lq[2] = {300, 77}, lk[2] = {1000, 77};
  problem pb;
  problem_init(&pb, &p, 2, lq, lk);
  EXPECT(pb.cu_q[1] == 300 && pb.cu_q[2] == 377 && pb.total_q == 377);
  EXPECT(pb.cu_k[1] == 1000 && pb.cu_k[2] == 1077 && pb.total_k == 1077);
  EXPECT_MSG(pb.cu_tiles[1] == 10 && pb.cu_tiles[2] == 13, "tiles %d, %d", pb.cu_tiles[1], pb.cu_tiles[2]);
  EXPECT_MSG(pb.cu_blocks[1] == 8 && pb.cu_blocks[2] == 9, "blocks %d, %d", pb.cu_blocks[1], pb.cu_blocks[2]);
  problem_free(&pb);

  int huge[9], cu[5][10]; /* 9 * 2^28 rows; each request's 4 * 2^28 packed rows still fit an int */
  for (int b = 0; b < 9; b++) huge[b] = 1 << 28;
  EXPECT(fp2_plan_prefixes(&p, 9, huge, huge, cu[0], cu[1], cu[2], cu[3], cu[4]) == FP2_ERR_ARG);
}

int main(void) {
  geometry_is_the_plans();
  parse_and_format();
  requests_alone();
  chunk_is_its_prompt_tail();
  return test_result("test_batch");
}
