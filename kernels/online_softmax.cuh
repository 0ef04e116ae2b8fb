/* The online softmax of the attention kernels, on the accumulator layout that mma.sync
   m16n8 and wgmma m64nN share: each warp holds 16 rows, a thread rows lane/4 and lane/4 + 8
   (r = 0, 1) and, in column group i, columns 8i + 2 (lane % 4) + {0, 1}; s[i][e] is row
   e >> 1, column 8i + 2 (lane % 4) + (e & 1). The portable and the Hopper kernels both call
   it, so both apply one definition of masking, rescaling and the FP8 probability rounding. */
#ifndef FP2_ONLINE_SOFTMAX_CUH
#define FP2_ONLINE_SOFTMAX_CUH

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "tile_mma.cuh"
#include "transpose_values.h"

namespace fp2 {

/* Running maximum (log2 units) and sum of the thread's two rows. */
struct SoftmaxRows {
  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.0f, 0.0f};
};

/* Values in the accumulator layout (columns 0 .. 8 NC - 1) as bf16 pairs in the A-operand
   layout of the next product (mma.sync m16n8k16 and wgmma with A from registers share it):
   p[k] covers columns 16k .. 16k + 15. */
template <int NC>
__device__ __forceinline__ void pack_a_fragments(const float (&s)[NC][4], uint32_t (&p)[NC / 2][4]) {
#pragma unroll
  for (int nt = 0; nt < NC; nt++) {
    p[nt / 2][(nt % 2) * 2 + 0] = pack_bf16(s[nt][0], s[nt][1]);
    p[nt / 2][(nt % 2) * 2 + 1] = pack_bf16(s[nt][2], s[nt][3]);
  }
}

/* Four values as e4m3 codes in one register, the first in the lowest byte: rounded to
   nearest, saturating, as softmax_exp rounds FP8 probabilities. */
__device__ __forceinline__ uint32_t pack_e4m3x4(float a, float b, float c, float d) {
  uint16_t lo, hi;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(b), "f"(a)); /* the first operand: high byte */
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(d), "f"(c));
  return (uint32_t)lo | ((uint32_t)hi << 16);
}

/* The key (0 .. 31, within its group of 32) whose probability sits at position `slot` of a
   row's e4m3 A fragment (pack_a_fragments_e4m3): slot 16 h + 4 q + e of lane q holds key
   16 h + 8 (e / 2) + 2 q + e % 2. */
__host__ __device__ constexpr int fp8_slot_key(int slot) {
  return 16 * (slot / 16) + 8 * ((slot % 4) / 2) + 2 * ((slot % 16) / 4) + slot % 2;
}
/* Its inverse: the slot of key (0 .. 31) key. */
__host__ __device__ constexpr int fp8_key_slot(int key) { return FP2_FP8_KEY_SLOT(key); }
__host__ __device__ constexpr bool fp8_slots_invert() {
  for (int slot = 0; slot < 32; slot++)
    if (fp8_key_slot(fp8_slot_key(slot)) != slot) return false;
  return true;
}
static_assert(fp8_slots_invert(), "fp8_key_slot inverts fp8_slot_key");

/* Four 4-byte words turned around: byte i of out[j] is byte j of w[i] (a 4 x 4 byte
   transpose in six byte permutes), as the transposed values are made from rows of codes. */
__device__ __forceinline__ void transpose_4x4_bytes(const uint32_t (&w)[4], uint32_t (&out)[4]) {
  const uint32_t lo01 = __byte_perm(w[0], w[1], 0x5140), lo23 = __byte_perm(w[2], w[3], 0x5140);
  const uint32_t hi01 = __byte_perm(w[0], w[1], 0x7362), hi23 = __byte_perm(w[2], w[3], 0x7362);
  out[0] = __byte_perm(lo01, lo23, 0x5410);
  out[1] = __byte_perm(lo01, lo23, 0x7632);
  out[2] = __byte_perm(hi01, hi23, 0x5410);
  out[3] = __byte_perm(hi01, hi23, 0x7632);
}

/* FP8 probabilities in the accumulator layout (columns 0 .. 8 NC - 1) as the e4m3 A operand
   of the next wgmma (k = 32): p[k] covers the 32 columns 32k .. 32k + 31, but in the order a
   thread holds them, columns 8i + 2 (lane % 4) + {0, 1} for i = 4k .. 4k + 3. The B operand
   (V transposed) stores its keys in the same order (fp8_slot_key), so no register moves
   between lanes. */
template <int NC>
__device__ __forceinline__ void pack_a_fragments_e4m3(const float (&s)[NC][4], uint32_t (&p)[NC / 4][4]) {
#pragma unroll
  for (int k = 0; k < NC / 4; k++)
#pragma unroll
    for (int half = 0; half < 2; half++) {
      const int i = 4 * k + 2 * half;
      p[k][2 * half + 0] = pack_e4m3x4(s[i][0], s[i][1], s[i + 1][0], s[i + 1][1]);
      p[k][2 * half + 1] = pack_e4m3x4(s[i][2], s[i][3], s[i + 1][2], s[i + 1][3]);
    }
}

/* The statistics half of one step over NC * 8 columns of raw scores s: drops the logits that
   keep(column, r) rejects (-INFINITY), then takes the row maximum on the raw scores and moves
   the running maximum (log2 units) to max(m, max(s) * scale + shift), scale > 0, so that the
   exponent of every element is one FFMA: p = 2^(s * scale + bias). Leaves in alpha the factor
   that rescales the output and the row sums (done here for the sums), and in bias
   shift - m. A row that has seen nothing keeps m = -INFINITY and takes bias = shift. */
template <int NC, typename Keep>
__device__ __forceinline__ void softmax_max(float (&s)[NC][4], SoftmaxRows &st, Keep keep, float scale, float shift,
                                            float (&alpha)[2], float (&bias)[2]) {
  const int lane = threadIdx.x % 32;
  float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int nt = 0; nt < NC; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) {
      if (!keep(nt * 8 + (lane % 4) * 2 + (e & 1), e >> 1)) s[nt][e] = -INFINITY;
      mx[e >> 1] = fmaxf(mx[e >> 1], s[nt][e]);
    }
#pragma unroll
  for (int r = 0; r < 2; r++) {
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
    const float m_new = fmaxf(st.m[r], fmaf(mx[r], scale, shift));
    const float m_use = m_new == -INFINITY ? 0.0f : m_new;
    alpha[r] = ex2_approx(st.m[r] - m_use);
    bias[r] = shift - m_use;
    st.m[r] = m_new;
    st.l[r] *= alpha[r];
  }
}

/* The exponential half: s becomes p = 2^(s * scale + bias), added to the row sums. FP8:
   probabilities are scaled by 2^8 and rounded to e4m3 (exact in bf16); the row sum takes
   them unrounded, as the oracle does. kRound = false leaves the rounding to the caller's
   e4m3 packing (pack_a_fragments_e4m3 rounds the same way, to nearest, saturating). */
template <int NC, bool kFp8, bool kRound = kFp8>
__device__ __forceinline__ void softmax_exp(float (&s)[NC][4], SoftmaxRows &st, float scale, const float (&bias)[2]) {
  const float p_scale = kFp8 ? 256.0f : 1.0f;
#pragma unroll
  for (int nt = 0; nt < NC; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) {
      float pr = ex2_approx(fmaf(s[nt][e], scale, bias[e >> 1])) * p_scale;
      st.l[e >> 1] += pr;
      if constexpr (kFp8 && kRound)
        pr = __half2float(
            __half(__nv_cvt_fp8_to_halfraw(__nv_cvt_float_to_fp8(pr, __NV_SATFINITE, __NV_E4M3), __NV_E4M3)));
      s[nt][e] = pr;
    }
}

/* o (ND groups of 8 columns) scaled row by row by alpha. */
template <int ND>
__device__ __forceinline__ void rescale_output(float (&o)[ND][4], const float (&alpha)[2]) {
#pragma unroll
  for (int nd = 0; nd < ND; nd++) {
    o[nd][0] *= alpha[0];
    o[nd][1] *= alpha[0];
    o[nd][2] *= alpha[1];
    o[nd][3] *= alpha[1];
  }
}

/* One whole step, for a kernel that does not overlap it with the products: the statistics,
   the output rescaled, the probabilities left in p as bf16 pairs in the A layout of the PV
   product (p[k] covers columns 16k .. 16k + 15). */
template <int NC, int ND, bool kFp8, typename Keep>
__device__ __forceinline__ void softmax_step(float (&s)[NC][4], float (&o)[ND][4], SoftmaxRows &st, Keep keep,
                                             float scale, float shift, uint32_t (&p)[NC / 2][4]) {
  float alpha[2], bias[2];
  softmax_max<NC>(s, st, keep, scale, shift, alpha, bias);
  rescale_output<ND>(o, alpha);
  softmax_exp<NC, kFp8>(s, st, scale, bias);
  pack_a_fragments<NC>(s, p);
}

/* The epilogue: row sums over the four lanes of each row, o normalised (and multiplied by
   sv, the FP8 value scale) and written as bf16. row0: the packed row of the thread's first
   row within the sequence (lane / 4 included); rows at or past row_end are not written. */
template <int ND>
__device__ __forceinline__ void softmax_store(const float (&o)[ND][4], const SoftmaxRows &st, float sv,
                                              const fp2_params &p, int cu_q, int h, int row0, int row_end,
                                              __nv_bfloat16 *out) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int r = 0; r < 2; r++) {
    float l = st.l[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const int row = row0 + r * 8;
    if (row >= row_end) continue;
    const float inv = l > 0.0f ? sv / l : 0.0f;
    __nv_bfloat16 *dst = out + packed_row_offset(p, cu_q, h, row);
#pragma unroll
    for (int nd = 0; nd < ND; nd++)
      *reinterpret_cast<__nv_bfloat162 *>(dst + nd * 8 + (lane % 4) * 2) =
          __floats2bfloat162_rn(o[nd][r * 2] * inv, o[nd][r * 2 + 1] * inv);
  }
}

}  // namespace fp2

#endif
