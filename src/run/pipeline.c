#include "pipeline.h"

int backend_pipeline(int backend, const problem *pb, const pipeline_config *cfg, int trials, pipeline_result *out,
                     char *err) {
  if (backend == BACKEND_GPU) return gpu_pipeline(pb, cfg, trials, out, err);
  cpu_pipeline(pb, cfg, out);
  return 0;
}

int backend_pipeline_correction(int backend, const problem *pb, int correction, const pipeline_config *cfg, int trials,
                                pipeline_result *out, char *err) {
  problem pass = *pb; /* shares pb's storage; only the parameters differ */
  pass.p.correction = correction;
  return backend_pipeline(backend, &pass, cfg, trials, out, err);
}
