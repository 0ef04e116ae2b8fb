/* Timing of a GPU operation with CUDA events, shared by everything that times a kernel one
   call at a time (ceilings, the cuDNN peer): warm-up runs, then each trial between two
   events, optionally after flushing the L2 as the gpu backend and peers.py do. */
#ifndef FP2_EVENT_TIMING_H
#define FP2_EVENT_TIMING_H

#include <cuda_runtime_api.h>
#include <stddef.h>

/* Bytes zeroed before every timed run so that no input stays in the L2 (several times the
   L2 of current GPUs; H200: 60 MB). */
#define FLUSH_BYTES ((size_t)256 << 20)

/* One run of the operation on stream; 0, or -1 with err. */
typedef int (*gpu_run_fn)(void *ctx, cudaStream_t stream, char *err);

/* `warmup` untimed runs, then `trials` runs each between two events recorded on stream, ms[t]
   the elapsed time of trial t. With flush (FLUSH_BYTES of device memory) it is zeroed on the
   stream before each timed run, outside the events. 0, or -1 with err. */
int gpu_time_runs(gpu_run_fn run, void *ctx, cudaStream_t stream, int warmup, int trials, void *flush, double *ms,
                  char *err);

#endif
