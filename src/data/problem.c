#include "problem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "numeric.h"

int niah_needle_of(const niah_info *ni, int pos) {
  if (!ni || ni->n == 0 || pos < ni->question_begin || pos >= ni->question_begin + ni->question_len)
    return -1;
  int part = ni->question_len / ni->n;
  int k = (pos - ni->question_begin) / (part > 0 ? part : 1);
  return k < ni->n ? k : ni->n - 1;
}

/* Lengths, prefix sums and totals (the library's, fp2_plan_prefixes, so that host tensors are
   laid out as the plan lays out the device's); no tensor storage. */
static void problem_geometry(problem *pb, const fp2_params *p, int batch, const int *lq, const int *lk) {
  memset(pb, 0, sizeof *pb);
  pb->p = *p;
  pb->batch = batch;
  pb->lq = xmalloc(sizeof(int) * (size_t)batch);
  pb->lk = xmalloc(sizeof(int) * (size_t)batch);
  pb->cu_q = xmalloc(sizeof(int64_t) * (size_t)(batch + 1));
  pb->cu_k = xmalloc(sizeof(int64_t) * (size_t)(batch + 1));
  pb->cu_tiles = xmalloc(sizeof(int) * (size_t)(batch + 1));
  pb->cu_blocks = xmalloc(sizeof(int) * (size_t)(batch + 1));
  int *rows = xmalloc(sizeof(int) * 3 * (size_t)(batch + 1)); /* cu_q, cu_k, cu_chunks */
  if (fp2_plan_prefixes(p, batch, lq, lk, rows, rows + batch + 1, pb->cu_tiles, pb->cu_blocks,
                        rows + 2 * (batch + 1)) != FP2_OK) {
    fail("%s", fp2_error_message());
    exit(EXIT_USAGE);
  }
  memcpy(pb->lq, lq, sizeof(int) * (size_t)batch);
  memcpy(pb->lk, lk, sizeof(int) * (size_t)batch);
  for (int b = 0; b <= batch; b++) {
    pb->cu_q[b] = rows[b];
    pb->cu_k[b] = rows[batch + 1 + b];
  }
  free(rows);
  pb->total_q = pb->cu_q[batch];
  pb->total_k = pb->cu_k[batch];
  pb->sq = pb->sk = pb->sv = 1.0f;
}

void problem_init(problem *pb, const fp2_params *p, int batch, const int *lq, const int *lk) {
  problem_geometry(pb, p, batch, lq, lk);
  pb->q = xmalloc(sizeof(float) * (size_t)pb->total_q * (size_t)p->hq * (size_t)p->dim);
  pb->k = xmalloc(sizeof(float) * (size_t)pb->total_k * (size_t)p->hkv * (size_t)p->dim);
  pb->v = xmalloc(sizeof(float) * (size_t)pb->total_k * (size_t)p->hkv * (size_t)p->dim);
}

/* One sequence of lq queries from row q_row of src and lk keys from row k_row, borrowing
   src's source tensors. */
static void problem_borrow(const problem *src, int64_t q_row, int64_t k_row, int lq, int lk, problem *out) {
  problem_geometry(out, &src->p, 1, &lq, &lk);
  out->kernel_auto = src->kernel_auto;
  out->borrowed = 1;
  out->q = src->q + (size_t)q_row * src->p.hq * src->p.dim;
  out->k = src->k + (size_t)k_row * src->p.hkv * src->p.dim;
  out->v = src->v + (size_t)k_row * src->p.hkv * src->p.dim;
}

void problem_chunk(const problem *full, int first, int count, problem *out) {
  problem_borrow(full, first, 0, count, first + count, out);
}

void problem_request(const problem *batch, int b, problem *out) {
  problem_borrow(batch, batch->cu_q[b], batch->cu_k[b], batch->lq[b], batch->lk[b], out);
}

static void free_operands(problem *pb) {
  if (pb->q_op != pb->q) free(pb->q_op);
  if (pb->k_op != pb->k) free(pb->k_op);
  if (pb->v_op != pb->v) free(pb->v_op);
  pb->q_op = pb->k_op = pb->v_op = NULL;
}

void problem_free(problem *pb) {
  free_operands(pb);
  if (!pb->borrowed) {
    free(pb->q);
    free(pb->k);
    free(pb->v);
  }
  free(pb->lq);
  free(pb->lk);
  free(pb->cu_q);
  free(pb->cu_k);
  free(pb->cu_tiles);
  free(pb->cu_blocks);
  free(pb->niah);
  memset(pb, 0, sizeof *pb);
}

static float amax_of(const float *x, size_t n) {
  float m = 0.0f;
  for (size_t i = 0; i < n; i++) {
    float a = fabsf(x[i]);
    if (a > m) m = a; /* NaN never compares greater: amax of the finite values */
  }
  return m;
}

/* e4m3 code values of x (e4m3_quantize); the scale is amax / 448 as DESIGN.md's Definitions
   fixes. */
static float *quantize_e4m3(const float *x, size_t n, float *scale) {
  float *out = xmalloc(sizeof(float) * n);
  *scale = fp8_scale_from_amax(amax_of(x, n));
  const float s = *scale;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) out[i] = e4m3_quantize(x[i], s);
  return out;
}

/* bf16 copy, or the source itself when every value is already a bf16 value. */
static float *round_bf16(float *x, size_t n) {
  size_t i = 0;
  while (i < n && (bf16_round(x[i]) == x[i] || isnan(x[i]))) i++;
  if (i == n) return x;
  float *out = xmalloc(sizeof(float) * n);
#pragma omp parallel for schedule(static)
  for (size_t j = 0; j < n; j++) out[j] = bf16_round(x[j]);
  return out;
}

void problem_prepare(problem *pb, int bf16_operands) {
  free_operands(pb);
  size_t nq = (size_t)pb->total_q * (size_t)pb->p.hq * (size_t)pb->p.dim;
  size_t nk = (size_t)pb->total_k * (size_t)pb->p.hkv * (size_t)pb->p.dim;
  pb->sq = pb->sk = pb->sv = 1.0f;
  pb->q_op = bf16_operands ? round_bf16(pb->q, nq) : pb->q;
  pb->k_op = bf16_operands ? round_bf16(pb->k, nk) : pb->k;
  pb->v_op = bf16_operands ? round_bf16(pb->v, nk) : pb->v;
  if (pb->p.dtype != FP2_FP8) return;
  /* FP8 quantises what the model handed over (bf16 on the GPU path). */
  float *bq = pb->q_op, *bk = pb->k_op, *bv = pb->v_op;
  pb->q_op = quantize_e4m3(bq, nq, &pb->sq);
  pb->k_op = quantize_e4m3(bk, nk, &pb->sk);
  pb->v_op = quantize_e4m3(bv, nk, &pb->sv);
  if (bq != pb->q) free(bq);
  if (bk != pb->k) free(bk);
  if (bv != pb->v) free(bv);
}

qkv_view problem_source(const problem *pb) {
  qkv_view v = {pb->q, pb->k, pb->v, 1.0, 1.0, 1.0};
  return v;
}

qkv_view problem_operands(const problem *pb) {
  qkv_view v = {pb->q_op, pb->k_op, pb->v_op, pb->sq, pb->sk, pb->sv};
  return v;
}

int problem_max_blocks(const problem *pb) {
  int m = 0;
  for (int b = 0; b < pb->batch; b++)
    if (pb->cu_blocks[b + 1] - pb->cu_blocks[b] > m) m = pb->cu_blocks[b + 1] - pb->cu_blocks[b];
  return m;
}
