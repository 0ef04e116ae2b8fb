#include "event_timing.h"

#include "cuda_host.h"

int gpu_time_runs(gpu_run_fn run, void *ctx, cudaStream_t stream, int warmup, int trials, void *flush, double *ms,
                  char *err) {
  int rc = -1;
  cudaEvent_t ev[2] = {NULL, NULL};
  CUDA_GOTO(cudaEventCreate(&ev[0]), done);
  CUDA_GOTO(cudaEventCreate(&ev[1]), done);
  for (int i = 0; i < warmup; i++)
    if (run(ctx, stream, err) != 0) goto done;
  CUDA_GOTO(cudaStreamSynchronize(stream), done);
  for (int t = 0; t < trials; t++) {
    if (flush) CUDA_GOTO(cudaMemsetAsync(flush, 0, FLUSH_BYTES, stream), done);
    CUDA_GOTO(cudaEventRecord(ev[0], stream), done);
    if (run(ctx, stream, err) != 0) goto done;
    CUDA_GOTO(cudaEventRecord(ev[1], stream), done);
    CUDA_GOTO(cudaEventSynchronize(ev[1]), done);
    float elapsed = 0;
    CUDA_GOTO(cudaEventElapsedTime(&elapsed, ev[0], ev[1]), done);
    ms[t] = elapsed;
  }
  rc = 0;
done:
  for (int i = 0; i < 2; i++)
    if (ev[i]) cudaEventDestroy(ev[i]);
  return rc;
}
