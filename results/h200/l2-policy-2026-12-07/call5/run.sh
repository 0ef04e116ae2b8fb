#!/usr/bin/env bash
# Call 5 (2026-12-07, eighth session): FP8's bf16 Q read under the evict-first policy in the
# select's conversion (E3 = 963365a + ../chunk-stage-2026-12-04/evict-q-fp8.patch) against main
# (HEAD), alternated three times, where call 3 had one run each and a sign that turned with the
# length. Builds: `VARIANTS="HEAD E3" ../chunk-stage-2026-12-04/build.sh`.
# - E3's gates: `gpu_kernels` (FP8's select among them) and FP8 `check` at 16K (64:8, the
#   converted Q) and at 13K+77 (12:3);
# - `breakdown --dtype fp8` (4K-128K) in the order HEAD E3 E3 HEAD HEAD E3, into
#   $W/bd-NAME-SECONDS.json; breakdown_fp8.py prints each length's pool and select, run by run.
source results/h200/chunk-stage-2026-12-04/steps.sh
step gpu_kernels-E3 40 .carry/d4/E3/gpu_kernels
step check-fp8-E3 60 .carry/d4/E3/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --len 16k --rows 256
step check-fp8-odd-E3 60 .carry/d4/E3/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --heads 12:3 --len 13k+77 --rows 256
if passed gpu_kernels-E3 check-fp8-E3 check-fp8-odd-E3; then
  runs_each bd 60 "breakdown --backend gpu --dtype fp8" HEAD E3 E3 HEAD HEAD E3
fi
verdicts
python3 results/h200/l2-policy-2026-12-07/breakdown_fp8.py $W | tee $W/breakdown_fp8.txt
pack
