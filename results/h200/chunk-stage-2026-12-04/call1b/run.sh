#!/usr/bin/env bash
# Call 1b (planned 2026-12-05; no device was lent in the session that wrote it): select v17, V
# (branch select-turns, 700c245: BF16 with two warpgroups a CTA taking turns at the tensor
# cores), against its base C (csr-one-kernel, e157101); both built by ../build.sh into
# .carry/d4, the same carry as call 1. Run it after call 1, as device time allows.
# V's GPU tests; checks on what v17 changes: an odd number of items with pairs that straddle
# two tiles (12:3 at 13k+77, hkv odd: the two warpgroups' stage counts differ, and the last
# CTA's second warpgroup has no item), Q by cp.async (24:8), a mixed batch, FP8 (its kernel
# is recompiled around the same code); synccheck and racecheck of the named barriers; chunked
# at 128K in 8K chunks alternated C V twice (one-pass select and the ratio); ncu of the one-
# pass select at 128K (tensor pipe, XU, issue, registers). Nothing here is a record.
source results/h200/chunk-stage-2026-12-04/steps.sh
V=.carry/d4/V
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t-V 40 $V/$t; done
step check-odd-V 60 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 13k+77 --rows 256
step check-g3-V 60 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 24:8 --len 16k --rows 256
step check-requests-V 60 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --requests 8k/64k,3x4k,1k/16k+77 --rows 256
step check-fp8-V 90 $V/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --len 32k --rows 256
step synccheck-V 90 compute-sanitizer --tool synccheck --error-exitcode 9 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 2k+77 --rows 256
step racecheck-V 90 compute-sanitizer --tool racecheck --error-exitcode 9 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 2k+77 --rows 256
for v in C V C V; do
  step chunked-$v-$SECONDS 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for v in C V; do
  step ncu-$v 40 ncu --clock-control none --csv --page raw -k regex:select_sm90_kernel --launch-count 1 --metrics $M \
    .carry/d4/$v/fp2bench run --backend gpu --dtype bf16 --len 128k --rows 1 --trials 1
done
finish
