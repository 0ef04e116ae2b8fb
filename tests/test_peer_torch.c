/* fp2bench's side of the peers.py contract, against a stand-in script: the input file it
   writes, the timings, pairs and skips it reads back, the block-sparse peers' counted pairs and
   the ratios and fields each gets in a result row, our peer names mapped to the script's,
   FP2_PYTHON as a bare name, and the skip when torch is absent. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "peer_torch.h"
#include "peers.h"
#include "report.h"
#include "pipeline.h"
#include "synth.h"
#include "testing.h"

int main(void) {
  setenv("FP2_EXPERIMENTS_DIR", test_source_path("tests/fixtures/peers"), 1);
  fp2_params p = {.hq = 8, .hkv = 2, .dim = 16, .block = 128, .qtile = 128, .alpha = 0.1f, .sink = 1, .window = 1,
                  .recent = 1, .correction = 1, .dtype = FP2_BF16}; /* few always-kept blocks: a sparse index */
  int len = 700;
  char err[320];
  problem pb;
  problem_init(&pb, &p, 1, &len, &len);
  EXPECT(synth_fill(&pb, SYNTH_LLM, 3, err) == 0);
  problem_prepare(&pb, 1);
  csr_index idx;
  ref_forced_index(&pb, 0.5, 1, &idx);

  peer_timing out[PEERS_MAX];
  peer_skip skipped[PEERS_MAX];
  int nout = 0, nskipped = 0;
  peer_torch_run(&pb, &idx, 3, "fa2,sdpa_cudnn,flex", "torch", out, &nout, skipped, &nskipped);
  EXPECT_MSG(nout == 2 && strcmp(out[0].name, "fa2") == 0 && out[0].trials == 3 && out[0].trials_ms[1] == 1.0 &&
                 strcmp(out[1].name, "flex") == 0,
             "got %d timings", nout);
  EXPECT_MSG(nskipped == 1 && strcmp(skipped[0].name, "sdpa_cudnn") == 0 && strstr(skipped[0].why, "fake"),
             "got %d skips: %s", nskipped, nskipped ? skipped[0].why : "");
  /* Flex computes the index's pairs (no correction), fa2 every causal pair: their TFLOP/s. */
  density_stats d;
  density_measure(&pb, &idx, 1, &d);
  EXPECT(nout == 2 && out[0].pairs == PAIRS_CAUSAL && out[1].pairs == PAIRS_INDEX && out[1].versus == VERSUS_TOTAL);
  EXPECT(nout == 2 && peer_flops(&out[0], &d) == flops_dense(&d) && peer_flops(&out[1], &d) == flops_sparse(&d) &&
         flops_sparse(&d) < flops_dense(&d));
  for (int i = 0; i < nout; i++) free(out[i].trials_ms);

  /* Our names to the script's (torch: three peers, fpv2: its pass and its kernel, hpc); hpc is
     FP8 only, so skipped on this bf16 run. */
  nout = nskipped = 0;
  nout = peers_run("torch,fpv2,hpc", &pb, &idx, 3, out, skipped, &nskipped);
  EXPECT_MSG(nout == 4 && strcmp(out[2].name, "fpv2") == 0 && strcmp(out[3].name, "fpv2_kernel") == 0, "%d timings",
             nout);
  EXPECT_MSG(nskipped == 2 && strcmp(skipped[1].name, "hpc") == 0 && strstr(skipped[1].why, "FP8 only"), "%d skips",
             nskipped);
  /* A row's fields: the pass against the total, the kernels against attend_nocorr, flex against both. */
  const double total = 2.0, nocorr = 0.5;
  cJSON *row = cJSON_CreateObject();
  for (int i = 0; i < nout; i++) peer_put(row, &out[i], &d, total, nocorr);
  const peer_timing *pass = &out[2], *kernel = &out[3];
  EXPECT(nout == 4 && pass->pairs == PAIRS_COUNTED && pass->pairs_count == 1e6 && pass->density == 0.25 &&
         pass->versus == VERSUS_TOTAL && peer_flops(pass, &d) == 4.0 * d.dim * 1e6);
  EXPECT(nout == 4 && kernel->pairs == PAIRS_INDEX && kernel->versus == VERSUS_NOCORR);
  struct { const char *key; double want; } fields[] = {
      {"speedup_fpv2", 0.4 / total}, {"fpv2_density", 0.25}, {"fpv2_tflops", 4.0 * d.dim * 1e6 / 0.4 / 1e9},
      {"speedup_fpv2_kernel", 0.2 / nocorr}, {"speedup_flex", 0.5 / total}, {"speedup_flex_kernel", 0.5 / nocorr},
      {"speedup_fa2", 1.5 / total}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(row, fields[i].key);
    EXPECT_MSG(cJSON_IsNumber(x) && fabs(x->valuedouble - fields[i].want) < 1e-12 * fields[i].want, "%s: %g, want %g",
               fields[i].key, cJSON_IsNumber(x) ? x->valuedouble : NAN, fields[i].want);
  }
  EXPECT(!cJSON_GetObjectItemCaseSensitive(row, "speedup_fpv2_kernel_kernel") &&
         !cJSON_GetObjectItemCaseSensitive(row, "speedup_fa2_kernel") &&
         cJSON_GetObjectItemCaseSensitive(row, "fpv2_kernel") && !cJSON_GetObjectItemCaseSensitive(row, "fpv2_kernel_density"));
  cJSON_Delete(row);
  for (int i = 0; i < nout; i++) free(out[i].trials_ms);

  /* FP8: hpc is timed, with its mask's counted pairs, against attend_nocorr. */
  pb.p.dtype = FP2_FP8;
  nout = nskipped = 0;
  nout = peers_run("hpc", &pb, &idx, 3, out, skipped, &nskipped);
  EXPECT_MSG(nout == 1 && strcmp(out[0].name, "hpc") == 0 && out[0].pairs == PAIRS_COUNTED &&
                 out[0].versus == VERSUS_NOCORR && out[0].density == 0.5 && nskipped == 0,
             "%d timings, %d skips", nout, nskipped);
  for (int i = 0; i < nout; i++) free(out[i].trials_ms);
  pb.p.dtype = FP2_BF16;
  density_free(&d);

  /* FP2_PYTHON as env takes it: a bare name is looked up on PATH. */
  setenv("FP2_PYTHON", "python3", 1);
  nout = nskipped = 0;
  peer_torch_run(&pb, &idx, 3, "fa2,sdpa_cudnn,flex", "torch", out, &nout, skipped, &nskipped);
  EXPECT_MSG(nout == 2 && nskipped == 1, "FP2_PYTHON=python3: %d timings, skip: %s", nout,
             nskipped ? skipped[0].why : "");
  for (int i = 0; i < nout; i++) free(out[i].trials_ms);
  setenv("FP2_PYTHON", "fp2-no-such-python", 1);
  nout = nskipped = 0;
  peer_torch_run(&pb, &idx, 3, "fa2,sdpa_cudnn,flex", "torch", out, &nout, skipped, &nskipped);
  EXPECT_MSG(nout == 0 && nskipped == 1 && strstr(skipped[0].why, "'fp2-no-such-python' not found"), "skip: %s",
             nskipped ? skipped[0].why : "");
  unsetenv("FP2_PYTHON");

  setenv("FP2_FAKE_PEERS", "absent", 1);
  nout = nskipped = 0;
  peer_torch_run(&pb, &idx, 3, "fa2,sdpa_cudnn,flex", "torch", out, &nout, skipped, &nskipped);
  EXPECT(nout == 0 && nskipped == 1 && strcmp(skipped[0].name, "torch") == 0 && strstr(skipped[0].why, "no torch"));
  nout = nskipped = 0;
  nout = peers_run("fpv2,hpc", &pb, &idx, 3, out, skipped, &nskipped);
  EXPECT_MSG(nout == 0 && nskipped == 1 && strcmp(skipped[0].name, "fpv2,hpc") == 0, "skip '%s'",
             nskipped ? skipped[0].name : "");

  setenv("FP2_EXPERIMENTS_DIR", "/nonexistent", 1);
  nout = nskipped = 0;
  peer_torch_run(&pb, &idx, 3, "fa2,sdpa_cudnn,flex", "torch", out, &nout, skipped, &nskipped);
  EXPECT(nskipped == 1 && strstr(skipped[0].why, "cannot read"));
  csr_free(&idx);
  problem_free(&pb);
  return test_result("test_peer_torch");
}
