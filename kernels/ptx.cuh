/* Thin inline-PTX wrappers, one per instruction and named after it. The portable path
   (sm_80+) uses mma.sync, ldmatrix, cp.async, ex2 and named barriers; Hopper's own are in
   ptx_sm90.cuh. */
#ifndef FP2_PTX_CUH
#define FP2_PTX_CUH

#include <cstdint>

namespace fp2 {

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/* cp.async of 16 bytes; src_bytes < 16 zero-fills the rest (0: a pure zero fill). */
__device__ __forceinline__ void cp_async_16(void *smem, const void *gmem, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem), "r"(src_bytes));
}

/* An L2 policy that puts the lines a load brings in first in line for eviction: for data read
   once, so that its misses evict each other and not what other kernels left in L2 (dirty
   lines, whose write-back costs DRAM time). */
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

/* cp_async_16 under an L2 policy (l2_evict_first_policy). */
__device__ __forceinline__ void cp_async_16_hinted(void *smem, const void *gmem, int src_bytes, uint64_t policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(smem_addr(smem)),
               "l"(gmem), "r"(src_bytes), "l"(policy));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/* ldmatrix: four 8x8 b16 matrices; each lane gives the row address of matrix lane / 8. */
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void *smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem)));
}

/* 2^x on the special-function unit, subnormals flushed: one MUFU op, where exp2f adds a
   range fix-up around it. ex2(-inf) = 0. */
__device__ __forceinline__ float ex2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

/* log2(x) on the special-function unit: one MUFU op. lg2(0) = -inf. */
__device__ __forceinline__ float lg2_approx(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

/* Named barriers (ids 1-15; 0 is __syncthreads): `threads` in all, a multiple of 32, of
   which the arriving ones go on at once and the syncing ones wait for the count. */
__device__ __forceinline__ void bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* D = A * B + D, m16n8k16, f32 accumulators: mma_m16n8k16_bf16 (bf16 inputs) and
   mma_m16n8k16_f16 (f16 inputs, which the index stage's FP8 codes convert to exactly). */
#define FP2_MMA_M16N8K16(name, type)                                                                          \
  __device__ __forceinline__ void name(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {     \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." type "." type ".f32 {%0, %1, %2, %3}, "            \
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"                                            \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                            \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));                            \
  }
FP2_MMA_M16N8K16(mma_m16n8k16_bf16, "bf16")
FP2_MMA_M16N8K16(mma_m16n8k16_f16, "f16")
#undef FP2_MMA_M16N8K16

}  // namespace fp2

#endif
