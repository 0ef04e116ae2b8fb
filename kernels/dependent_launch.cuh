/* Programmatic dependent launch (sm_90+): a kernel launched with launch_dependent starts
   while the kernel before it in the stream drains, runs what reads only its inputs and the
   plan, then waits for that kernel's writes (grid_dependency_wait). A kernel lets the next
   one start with grid_dependents_launch, after its own wait if it was launched so: a kernel
   that has started early then never outruns the one two places before it. Elsewhere (sm_80)
   both are no-ops and the launch is an ordinary one. */
#ifndef FP2_DEPENDENT_LAUNCH_CUH
#define FP2_DEPENDENT_LAUNCH_CUH

#include <cuda_runtime.h>

namespace fp2 {

/* Until the grid before this one has completed and its writes are visible. */
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

/* The next grid may start once every CTA of this one has called this or exited. */
__device__ __forceinline__ void grid_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

/* kernel<<<grid, block, smem, stream>>>(args...), allowed to start early where the code that
   runs was compiled for sm_90 or later, i.e. has its grid_dependency_wait (not, say, code
   JIT-compiled from compute_80 PTX on a later GPU: it would then outrun the kernel before). */
template <typename... Params, typename... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                             Args... args) {
  cudaFuncAttributes fa;
  const cudaError_t err = cudaFuncGetAttributes(&fa, kernel);
  if (err != cudaSuccess) return err;
  cudaLaunchAttribute early;
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &early;
  cfg.numAttrs = fa.ptxVersion >= 90 ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<Params>(args)...);
}

}  // namespace fp2

#endif
