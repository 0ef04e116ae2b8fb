/* fp2bench's side of the torch peers' contract, against a stand-in script: the input file it
   writes, the timings, pairs and skips it reads back, FP2_PYTHON as a bare name, and the skip when
   torch is absent. */
#include <stdlib.h>
#include <string.h>

#include "peer_torch.h"
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
  peer_torch_run(&pb, &idx, 3, out, &nout, skipped, &nskipped);
  EXPECT_MSG(nout == 2 && strcmp(out[0].name, "fa2") == 0 && out[0].trials == 3 && out[0].trials_ms[1] == 1.0 &&
                 strcmp(out[1].name, "flex") == 0,
             "got %d timings", nout);
  EXPECT_MSG(nskipped == 1 && strcmp(skipped[0].name, "sdpa_cudnn") == 0 && strstr(skipped[0].why, "fake"),
             "got %d skips: %s", nskipped, nskipped ? skipped[0].why : "");
  /* Flex computes the index's pairs (no correction), fa2 every causal pair: their TFLOP/s. */
  density_stats d;
  density_measure(&pb, &idx, 1, &d);
  EXPECT(nout == 2 && !out[0].sparse && out[1].sparse);
  EXPECT(nout == 2 && peer_flops(&out[0], &d) == flops_dense(&d) && peer_flops(&out[1], &d) == flops_sparse(&d) &&
         flops_sparse(&d) < flops_dense(&d));
  density_free(&d);
  for (int i = 0; i < nout; i++) free(out[i].trials_ms);

  /* FP2_PYTHON as env takes it: a bare name is looked up on PATH. */
  setenv("FP2_PYTHON", "python3", 1);
  nout = nskipped = 0;
  peer_torch_run(&pb, &idx, 3, out, &nout, skipped, &nskipped);
  EXPECT_MSG(nout == 2 && nskipped == 1, "FP2_PYTHON=python3: %d timings, skip: %s", nout,
             nskipped ? skipped[0].why : "");
  for (int i = 0; i < nout; i++) free(out[i].trials_ms);
  setenv("FP2_PYTHON", "fp2-no-such-python", 1);
  nout = nskipped = 0;
  peer_torch_run(&pb, &idx, 3, out, &nout, skipped, &nskipped);
  EXPECT_MSG(nout == 0 && nskipped == 1 && strstr(skipped[0].why, "'fp2-no-such-python' not found"), "skip: %s",
             nskipped ? skipped[0].why : "");
  unsetenv("FP2_PYTHON");

  setenv("FP2_FAKE_PEERS", "absent", 1);
  nout = nskipped = 0;
  peer_torch_run(&pb, &idx, 3, out, &nout, skipped, &nskipped);
  EXPECT(nout == 0 && nskipped == 1 && strcmp(skipped[0].name, "torch") == 0 && strstr(skipped[0].why, "no torch"));

  setenv("FP2_EXPERIMENTS_DIR", "/nonexistent", 1);
  nout = nskipped = 0;
  peer_torch_run(&pb, &idx, 3, out, &nout, skipped, &nskipped);
  EXPECT(nskipped == 1 && strstr(skipped[0].why, "cannot read"));
  csr_free(&idx);
  problem_free(&pb);
  return test_result("test_peer_torch");
}
