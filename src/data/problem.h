/* The inputs of one forward pass on the host: a batch of sequences (varlen), their
   source Q/K/V as a model produced them, and the operands a backend computes on. */
#ifndef FP2_PROBLEM_H
#define FP2_PROBLEM_H

#include <stdint.h>

#include "fp2.h"

#define NIAH_MAX_NEEDLES 8

/* Needles planted by synth:niah in one sequence, and the question rows that look for them. */
typedef struct niah_info {
  int n;
  int start[NIAH_MAX_NEEDLES], len[NIAH_MAX_NEEDLES]; /* key positions of each needle */
  int question_begin, question_len; /* query positions; part k asks for needle k */
} niah_info;

/* Which needle the query at position pos asks for, or -1. */
int niah_needle_of(const niah_info *ni, int pos);

/* A view of Q/K/V values with their per-tensor dequantisation scales (1 unless FP8). */
typedef struct qkv_view {
  const float *q; /* [total_q, hq, dim] */
  const float *k; /* [total_k, hkv, dim] */
  const float *v; /* [total_k, hkv, dim] */
  double sq, sk, sv;
} qkv_view;

typedef struct problem {
  fp2_params p;
  int kernel_auto;       /* --kernel auto: the gpu backend picks p.kernel for its GPU */
  int batch;
  int *lq, *lk;          /* [batch] queries are the last lq of lk positions */
  int64_t *cu_q, *cu_k;  /* [batch+1] first row of each sequence in Q and in K/V */
  int *cu_tiles;         /* [batch+1] prefix of query tiles per KV head */
  int *cu_blocks;        /* [batch+1] prefix of key blocks */
  int64_t total_q, total_k;
  float *q, *k, *v;      /* source values, f32 */
  int borrowed;          /* q, k, v belong to another problem (problem_chunk) */
  niah_info *niah;       /* [batch] for synth:niah, else NULL */
  /* Operands (problem_prepare): bf16-rounded source for BF16, e4m3 code values for FP8. */
  float *q_op, *k_op, *v_op;
  float sq, sk, sv;
} problem;

/* Sets up geometry for the given sequence lengths and allocates source storage. */
void problem_init(problem *pb, const fp2_params *p, int batch, const int *lq, const int *lk);
void problem_free(problem *pb);

/* Queries [first, first + count) of a one-sequence problem against keys [0, first + count):
   one chunk of a chunked prefill. Borrows the source tensors of `full` (which must outlive
   it); problem_prepare then gives it its own operands. */
void problem_chunk(const problem *full, int first, int count, problem *out);

/* Request b of a batch as a problem of its own (a batch of one), borrowing the batch's source
   tensors (the batch must outlive it); problem_prepare then gives it its own operands. */
void problem_request(const problem *batch, int b, problem *out);

/* Segments (batch, KV head, tile) of the index. */
static inline int problem_num_segments(const problem *pb) { return pb->p.hkv * pb->cu_tiles[pb->batch]; }
static inline int problem_segment(const problem *pb, int b, int h, int t) {
  return fp2_segment(&pb->p, pb->cu_tiles[b], pb->cu_tiles[b + 1] - pb->cu_tiles[b], h, t);
}

/* The tile of query i (within sequence b) of query head `head`, and that row's segment. */
static inline int problem_row_tile(const problem *pb, int i, int head) {
  const int g = fp2_group(&pb->p);
  return (i * g + head % g) / pb->p.qtile;
}
static inline int problem_row_segment(const problem *pb, int b, int i, int head) {
  return problem_segment(pb, b, head / fp2_group(&pb->p), problem_row_tile(pb, i, head));
}

/* Fills the operands: bf16_operands = 1 rounds BF16 operands to bf16 (what the GPU computes
   on); 0 keeps the source values (the fp64 definition on the data as given). FP8 always
   quantises: per-tensor scale amax/448, x/scale rounded to e4m3. */
void problem_prepare(problem *pb, int bf16_operands);

qkv_view problem_source(const problem *pb);
qkv_view problem_operands(const problem *pb);

/* Largest key-block count of any sequence. */
int problem_max_blocks(const problem *pb);

#endif
