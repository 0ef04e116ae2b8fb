// Throughput of ex2 flavours on one SM: results per clock per SM.
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <int V> __device__ __forceinline__ unsigned op(unsigned x) {
  unsigned y;
  if (V == 0) asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=r"(y) : "r"(x));
  if (V == 1) asm volatile("ex2.approx.f16x2 %0, %1;" : "=r"(y) : "r"(x));
  if (V == 2) asm volatile("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(y) : "r"(x));
  return y;
}
template <int V> __global__ void k(unsigned *out, long long *clk, int iters) {
  unsigned a[8];
  for (int i = 0; i < 8; i++) a[i] = 0x3c003c00u ^ (threadIdx.x + i);
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < iters; it++)
#pragma unroll
    for (int i = 0; i < 8; i++) a[i] = op<V>(a[i]) ^ 0x00010001u;
  __syncthreads();
  long long t1 = clock64();
  unsigned s = 0;
  for (int i = 0; i < 8; i++) s ^= a[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) clk[blockIdx.x] = t1 - t0;
}
template <int V> void run(const char *name, int per) {
  unsigned *out; long long *clk; int iters = 4096;
  cudaMalloc(&out, 132 * 1024 * 4); cudaMalloc(&clk, 132 * 8);
  k<V><<<132, 1024>>>(out, clk, iters); cudaDeviceSynchronize();
  k<V><<<132, 1024>>>(out, clk, iters); cudaError_t e = cudaDeviceSynchronize();
  long long c[132]; cudaMemcpy(c, clk, sizeof c, cudaMemcpyDeviceToHost);
  double r = 1024.0 * 8 * iters * per / (double)c[0];
  printf("%-24s %s  %.2f results/clk/SM (%.2f instr/clk/SM)\n", name, cudaGetErrorString(e), r, r / per);
}
int main() { run<0>("ex2.approx.ftz.f32", 1); run<1>("ex2.approx.f16x2", 2); run<2>("ex2.approx.ftz.bf16x2", 2); }
