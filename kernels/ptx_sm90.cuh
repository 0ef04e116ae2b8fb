/* Thin inline-PTX wrappers for the Hopper (sm_90a) instructions, one per instruction and
   named after it: mbarriers, TMA tensor loads, wgmma and its fences, setmaxnreg. Only code
   compiled for sm_90a may call them (see FP2_SM90_DEVICE). */
#ifndef FP2_PTX_SM90_CUH
#define FP2_PTX_SM90_CUH

#include <cstdint>

#include "ptx.cuh"

/* True while compiling device code for sm_90a, the only target with wgmma and setmaxnreg. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FP2_SM90_DEVICE 1
#else
#define FP2_SM90_DEVICE 0
#endif

namespace fp2 {

/* ---- mbarrier: a 64-bit shared-memory barrier with a phase bit and a transaction count. */

__device__ __forceinline__ void mbarrier_init(uint64_t *bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}

/* Makes the initialised barriers visible to the async proxy (TMA) and the other threads. */
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* One arrival that also announces `bytes` of TMA transactions the phase must wait for. */
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

/* Spins until the phase with the given parity has completed. */
__device__ __forceinline__ void mbarrier_wait(uint64_t *bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

/* Makes this thread's ordinary shared-memory writes visible to the async proxy (wgmma and
   TMA), before a barrier hands the data to a reader there. */
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* ---- TMA: tiled tensor loads into shared memory, completing on an mbarrier. `map` is the
   address of a __grid_constant__ CUtensorMap kernel parameter; coordinates innermost first. */

__device__ __forceinline__ void prefetch_tensormap(const void *map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

__device__ __forceinline__ void tma_load_2d(void *dst, const void *map, int c0, int c1, uint64_t *bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

__device__ __forceinline__ void tma_load_3d(void *dst, const void *map, int c0, int c1, int c2, uint64_t *bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar))
      : "memory");
}

/* tma_load_3d under an L2 policy (l2_evict_first_policy). */
__device__ __forceinline__ void tma_load_3d_hinted(void *dst, const void *map, int c0, int c1, int c2, uint64_t *bar,
                                                   uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, "
      "%3, %4}], [%5], %6;\n" ::"r"(smem_addr(dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
}

/* ---- setmaxnreg: move registers between the warpgroups of a warp-specialised CTA. */

template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* ---- wgmma: warpgroup MMA, asynchronous; operands in shared memory are named by
   descriptors (smem_desc_sw128), accumulators stay in registers across the async window. */

/* Shared-memory matrix descriptor for a 128-byte-swizzled operand whose swizzle atoms (8
   rows of 128 bytes) start at 1024-byte-aligned addresses. lbo / sbo in bytes: for a
   K-major operand sbo is the stride between 8-row groups and lbo is unused; for an
   MN-major one lbo is the stride between 64-element groups along M or N and sbo the
   stride between 8-row groups along K (PTX ISA, "matrix descriptor", canonical layouts). */
__device__ __forceinline__ uint64_t smem_desc_sw128(const void *p, uint32_t lbo, uint32_t sbo) {
  const uint64_t addr = smem_addr(p);
  return ((addr & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 62);
}

/* Orders this thread's register and shared-memory accesses before the warpgroup's next
   wgmma (required before the first wgmma and whenever its registers were touched). */
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Keeps the compiler from moving accumulator reads or writes across the async window. */
template <int N>
__device__ __forceinline__ void wgmma_hold(float (&d)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; i++)
    asm volatile("" : "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])::"memory");
}

/* Keeps A fragments in their registers, unmoved, until the wgmma reading them has completed
   (call after wgmma_wait): the compiler sees their last use only at the issue. */
template <int N>
__device__ __forceinline__ void wgmma_hold_a(uint32_t (&a)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; i++) asm volatile("" : "+r"(a[i][0]), "+r"(a[i][1]), "+r"(a[i][2]), "+r"(a[i][3])::"memory");
}

#define FP2_WGMMA_D_REGS                                                                                       \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
  "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "  \
  "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define FP2_WGMMA_D4(i) "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])
#define FP2_WGMMA_D_OPERANDS                                                                                  \
  FP2_WGMMA_D4(0), FP2_WGMMA_D4(1), FP2_WGMMA_D4(2), FP2_WGMMA_D4(3), FP2_WGMMA_D4(4), FP2_WGMMA_D4(5),       \
      FP2_WGMMA_D4(6), FP2_WGMMA_D4(7), FP2_WGMMA_D4(8), FP2_WGMMA_D4(9), FP2_WGMMA_D4(10), FP2_WGMMA_D4(11), \
      FP2_WGMMA_D4(12), FP2_WGMMA_D4(13), FP2_WGMMA_D4(14), FP2_WGMMA_D4(15)

/* D (64 x 128, f32; d[i] holds columns 8i..8i+7 in the mma.sync C layout of each warp's 16
   rows) = A B (+ D when accumulate), m64n128k16, bf16; A and B K-major in shared memory. */
__device__ __forceinline__ void wgmma_m64n128k16_bf16_ss(float (&d)[16][4], uint64_t a_desc, uint64_t b_desc,
                                                         int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " FP2_WGMMA_D_REGS ", %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : FP2_WGMMA_D_OPERANDS
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}

/* D += A B, m64n128k16, bf16: A from registers (the mma.sync A layout of each warp's 16
   rows), B MN-major in shared memory (transposed on the fly). */
__device__ __forceinline__ void wgmma_m64n128k16_bf16_rs_tb(float (&d)[16][4], const uint32_t (&a)[4],
                                                            uint64_t b_desc) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " FP2_WGMMA_D_REGS
      ", {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n"
      "}\n"
      : FP2_WGMMA_D_OPERANDS
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "n"(1));
}

/* D = A B (+ D when accumulate), m64n128k32, e4m3 in, f32 out; A and B K-major in shared
   memory (8-bit wgmma reads both K-major only). */
__device__ __forceinline__ void wgmma_m64n128k32_e4m3_ss(float (&d)[16][4], uint64_t a_desc, uint64_t b_desc,
                                                         int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " FP2_WGMMA_D_REGS ", %64, %65, p, 1, 1;\n"
      "}\n"
      : FP2_WGMMA_D_OPERANDS
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}

/* D += A B, m64n128k32, e4m3: A from registers (per warp's 16 rows, register i holds row
   lane/4 + 8 (i % 2), columns 16 (i / 2) + 4 (lane % 4) + 0..3, lowest byte first), B
   K-major in shared memory. */
__device__ __forceinline__ void wgmma_m64n128k32_e4m3_rs(float (&d)[16][4], const uint32_t (&a)[4], uint64_t b_desc) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " FP2_WGMMA_D_REGS
      ", {%64, %65, %66, %67}, %68, p, 1, 1;\n"
      "}\n"
      : FP2_WGMMA_D_OPERANDS
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "n"(1));
}

#define FP2_WGMMA_D_REGS_N64                                                                                    \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
  "%23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define FP2_WGMMA_D_OPERANDS_N64                                                                        \
  FP2_WGMMA_D4(0), FP2_WGMMA_D4(1), FP2_WGMMA_D4(2), FP2_WGMMA_D4(3), FP2_WGMMA_D4(4), FP2_WGMMA_D4(5), \
      FP2_WGMMA_D4(6), FP2_WGMMA_D4(7)

/* D = A B (+ D when accumulate), m64n64k32, e4m3 (d[i]: columns 8i..8i+7, i < 8): half a
   128-row tile. A and B K-major in shared memory. */
__device__ __forceinline__ void wgmma_m64n64k32_e4m3_ss(float (&d)[8][4], uint64_t a_desc, uint64_t b_desc,
                                                        int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 " FP2_WGMMA_D_REGS_N64 ", %32, %33, p, 1, 1;\n"
      "}\n"
      : FP2_WGMMA_D_OPERANDS_N64
      : "l"(a_desc), "l"(b_desc), "r"(accumulate));
}

#undef FP2_WGMMA_D4
#undef FP2_WGMMA_D_REGS
#undef FP2_WGMMA_D_OPERANDS
#undef FP2_WGMMA_D_REGS_N64
#undef FP2_WGMMA_D_OPERANDS_N64

}  // namespace fp2

#endif
