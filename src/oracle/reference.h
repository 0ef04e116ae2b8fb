/* The CPU oracle: the definitions of kernels/README.md in plain C with fp64 accumulation. Every test,
   `check` and the cpu backend call these functions; nothing else re-derives them.

   Pooled vectors, the block index and attention rows are computed per sequence of a
   problem (problem.h). Long sequences are evaluated on chosen tiles and rows only. */
#ifndef FP2_REFERENCE_H
#define FP2_REFERENCE_H

#include <stdint.h>

#include "problem.h"

/* A block index over all segments (batch, KV head, tile) of a problem: ascending key-block
   ids per segment. Segments that were not evaluated (tile subsets) are empty and have
   evaluated[seg] == 0. */
typedef struct csr_index {
  int nseg;
  int *offsets;            /* [nseg+1] */
  int *indices;            /* [nnz] */
  int64_t nnz;
  unsigned char *evaluated; /* [nseg] */
} csr_index;

void csr_free(csr_index *c);
void csr_copy(const csr_index *src, csr_index *out);
/* The same segments and, in each, the same blocks (evaluated is not compared). */
int csr_same(const csr_index *a, const csr_index *b);

/* Pooled means over the operands (dequantised), per KV head and key block of every sequence:
   [hkv, cu_blocks[batch], dim], f32 of fp64 sums; the last block of a sequence may be partial. */
void ref_pool(const problem *pb, float *k_mean, float *v_mean);

/* How pooled vectors enter scoring and correction. EXACT keeps the f32 means (the fp64
   definition); ROUNDED applies the kernels' rounding: bf16 for BF16, and for FP8 the
   e4m3 code of the mean in the tensor's own scale (e4m3_quantize), so that values stay
   code values.
   Returns the scale that dequantises `out`. */
typedef enum { POOLED_EXACT, POOLED_ROUNDED } pooled_mode;
double ref_pooled_operands(fp2_dtype dt, pooled_mode mode, float scale, const float *mean, float *out, size_t n);

/* The scores of one tile: energies E[J] = sum over counted rows of exp(s - M) for the
   scored blocks J < tile.nscored, with M the tile maximum; the selected block list. */
typedef struct tile_selection {
  fp2_tile tile;
  double m_tile;   /* -inf when nothing was scored */
  double e_max;    /* max E (0 when nothing was scored) */
  double threshold; /* alpha * e_max: a scored block is kept when its E reaches it */
  double *energy;  /* [nscored] */
  int nkept;
  int *kept;       /* ascending, [last_k + 1] capacity */
} tile_selection;

/* kbar: pooled key operands [hkv, cu_blocks[batch], dim] with their scale (1 unless FP8). */
void ref_select_tile(const problem *pb, const float *kbar, double kbar_scale, int b, int h, int t,
                     tile_selection *out);
void tile_selection_free(tile_selection *s);

/* The index of the whole problem, or of the segments with want[seg] != 0 (want may be NULL).
   score (optional, NULL to skip) receives Score[T,J] = E / (sum E + 1e-6) as rows of
   cu_blocks-sized stride per segment: score[seg * max_blocks + J], max_blocks the largest
   block count of any sequence. */
void ref_select(const problem *pb, const float *kbar, double kbar_scale, const unsigned char *want,
                csr_index *out, float *score, int max_blocks);

/* The always-kept blocks plus random blocks up to a forced density X of the causal blocks
   of each tile (README.md: --density), reproducible from the seed. */
void ref_forced_index(const problem *pb, double density, uint64_t seed, csr_index *out);

/* Every causal block of every tile: the dense index. */
void ref_dense_index(const problem *pb, csr_index *out);

/* How probabilities reach the PV product. EXACT: fp64 throughout. EMULATED: the kernels'
   rounding: P rounded to bf16 (BF16) or P * 2^8 rounded to e4m3 (FP8) from the final row
   maximum, the row sum from the unrounded P, and the output rounded to bf16. */
typedef enum { PROB_EXACT, PROB_EMULATED } prob_mode;

/* Pooled vectors for correction: operands [hkv, cu_blocks[batch], dim] and scales. */
typedef struct pooled_view {
  const float *k, *v;
  double sk, sv;
} pooled_view;

/* One output row: query i (0-based within sequence b) of query head `head`, attending to the
   keys of the listed blocks (ascending) of its tile's segment, causal; with `pooled` non-NULL,
   every block fully visible to the whole tile and not listed enters as one virtual key with
   logit q.kbar/sqrt(D) + ln|B_J|. A row with no visible key gets zeros and lse = -inf. */
void ref_attend_row(const problem *pb, qkv_view x, int b, int i, int head, const int *blocks, int nblocks,
                    const pooled_view *pooled, prob_mode mode, double *out, double *lse);

/* Full causal attention of one row on the given values (quality reference), and (block_mass
   not NULL) the share of its softmax mass in each key block it reaches, [pos / block + 1]. */
void ref_full_row(const problem *pb, qkv_view x, int b, int i, int head, double *out, double *block_mass);

/* Work of one tile (all its packed rows) for a block list, counted in (row, key) pairs. */
typedef struct tile_counts {
  double causal;    /* pairs under the causal mask */
  double computed;  /* pairs inside the listed blocks that the causal mask keeps */
  double scored;    /* (row, pooled key) pairs the index stage scores */
  double corrected; /* (row, virtual key) pairs of the mean correction */
} tile_counts;

void ref_tile_counts(const problem *pb, int b, int t, const int *blocks, int nblocks, tile_counts *out);

#endif
