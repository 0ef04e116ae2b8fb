/* cuDNN's fused flash-attention forward (SDPA) as a peer: dense causal attention with
   GQA on one sequence, BF16 (and FP8 e4m3) in, timed with CUDA events.

   cuDNN is loaded at run time (dlopen), so that the program builds and runs where it is
   missing: FP2_CUDNN_LIB names libcudnn.so.9 or the directory holding it (python3's
   site-packages/nvidia/cudnn/lib, for instance); without it the default library path is
   tried, then the usual pip locations. The headers are used for types and enums only;
   built without them, every call reports "built without cuDNN headers".

   The graph is the one cuDNN 9 recognises as its flash-attention pattern, built with
   the backend API (the descriptors cudnn-frontend's composite SDPA node creates):

     S  = Q · Kᵀ              matmul, f32           [1, Hq, L, L] (virtual)
     S' = S · scale           pointwise MUL, scale = 1/sqrt(D) passed by value
     (FP8: S' · descale_q · descale_k)
     S" = row >= col ? S' : -inf   GEN_INDEX(axis 2), GEN_INDEX(axis 3), CMP_GE, BINARY_SELECT
     M  = max_j S"            reduction MAX        [1, Hq, L, 1]
     E  = exp(S" − M)         pointwise SUB, EXP
     Z  = Σ_j E               reduction ADD
     stats = M + log Z        pointwise LOG, ADD (virtual, or an output)
     P  = E / Z               pointwise DIV, bf16 (FP8: amax_s, P · scale_s as e4m3)
     O  = P · V               matmul (FP8: · descale_s · descale_v, amax_o, · scale_o)

   Q is [L, Hq, D], K and V [L, Hkv, D], O [L, Hq, D] (positions first, DESIGN.md's Data flow); the
   logical [b, h, s, d] dimensions carry strides over that layout, Kᵀ swaps its last two. */
#ifndef FP2_PEER_CUDNN_H
#define FP2_PEER_CUDNN_H

#include <stddef.h>
#include <stdint.h>

#include "fp2.h"

/* 1 when cuDNN 9 could be loaded (the first success is kept for the process); 0 with the
   reason in why (ERR_LEN bytes, may be NULL), e.g. "cuDNN not found (set FP2_CUDNN_LIB
   to libcudnn.so.9 or its directory)". */
int peer_cudnn_available(char *why);

/* The version cudnnGetVersion reports (91900 for 9.19.0), 0 when not loaded. */
long peer_cudnn_version(void);

/* The file the library was loaded from ("" when not loaded). */
const char *peer_cudnn_path(void);

/* Dense causal attention of one sequence of len positions with p->hq, p->hkv, p->dim
   (64 or 128) and scale 1/sqrt(dim). q, k, v, o are device pointers, all bf16: q and o
   [len, hq, dim], k and v [len, hkv, dim] (p->dtype must be FP2_BF16). One untimed run,
   then `trials` runs, each timed with CUDA events on a stream of its own, into
   ms_per_trial[trials]. 0, or -1 with err naming the call that failed (with cuDNN's own
   last error text). Builds the graph and plan on every call (not on the timed path). */
int peer_cudnn_attention(const fp2_params *p, int len, const void *q, const void *k, const void *v, void *o,
                         int trials, double *ms_per_trial, char *err);

/* The same in FP8: q, k, v are e4m3 codes with per-tensor dequantisation scales
   (scales: a device float[3], q, k, v, as fp2.h's); P is scaled by 2^8 before its e4m3
   rounding and descaled after the second matmul; o receives e4m3 codes of O (scale_o = 1,
   so each code is O rounded to e4m3). */
int peer_cudnn_attention_fp8(const fp2_params *p, int len, const void *q, const void *k, const void *v,
                             const float *scales, void *o, int trials, double *ms_per_trial, char *err);

/* What the last successful peer_cudnn_attention (or peer_cudnn_plan_offline) ran: cuDNN
   version, engine, workspace and whether stats were an output, for provenance. */
const char *peer_cudnn_plan_note(void);

/* Builds the same graph and finalises an execution plan for a described device, without
   a GPU: device_json is cuDNN's device-properties JSON (CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR,
   cuDNN 9.8 or later); p->dtype picks the BF16 or FP8 graph. cuDNN compiles its attention
   kernels (NVRTC) while finalising and loads them through libcuda: 0 when a plan was
   built; 1 when an engine accepted the graph and compiled it but no driver could load it
   (only the toolkit's stub libcuda is present); -1 with err when no engine takes the
   graph. peer_cudnn_plan_note() then names the engine. Lets a machine without a GPU check
   that cuDNN recognises the graph as its fused attention. */
int peer_cudnn_plan_offline(const fp2_params *p, int len, const char *device_json, char *err);

/* ---- pure parts, exposed for tests ---- */

/* A tensor of the graph: logical dimensions and strides, in elements. */
typedef struct cudnn_tensor_shape {
  int64_t dim[4], stride[4];
} cudnn_tensor_shape;

typedef struct peer_cudnn_layout {
  cudnn_tensor_shape q;     /* [1, Hq, L, D] over [L, Hq, D] */
  cudnn_tensor_shape kt;    /* [1, Hkv, D, L] over [L, Hkv, D]: K transposed */
  cudnn_tensor_shape v;     /* [1, Hkv, L, D] over [L, Hkv, D] */
  cudnn_tensor_shape o;     /* [1, Hq, L, D] over [L, Hq, D] */
  cudnn_tensor_shape s;     /* [1, Hq, L, L] scores, dense (virtual) */
  cudnn_tensor_shape stats; /* [1, Hq, L, 1] row statistics */
  cudnn_tensor_shape scalar; /* [1, 1, 1, 1] scales and amax values */
} peer_cudnn_layout;

/* The graph's tensor shapes for p and len; -1 with err for a shape the peer does not run
   (hq not a multiple of hkv, a head dimension other than 64 or 128, len < 1, or sizes
   beyond 2^31 elements per tensor). */
int peer_cudnn_layout_of(const fp2_params *p, int len, peer_cudnn_layout *out, char *err);

/* The file to dlopen for a FP2_CUDNN_LIB value: a directory gives DIR/libcudnn.so.9, a
   file itself. 0, or -1 when the result would not fit `len`. */
int peer_cudnn_lib_path(const char *spec, char *buf, size_t len);

#endif
