#!/usr/bin/env bash
# Call 4 (2026-12-05; it replaces call 1b, V against C, which never ran): selects v17 and v18 on
# main, built by ../build.sh (its default, N LV HEAD) into .carry/d4:
# N = main's code (3a44014);
# LV = v17 (v17.patch on N: BF16 on CTAs of two warpgroups taking turns at the
#   tensor cores, without C's CSR, which call 3 found no faster; V's and land-V's commits were
#   lost, and v17 was written again from the NOTES);
# HEAD = v18 on LV (v18.patch: the heaviest items halved, one per SM, so that a chunk's waves of
#   equal items load Q half an item apart), main with both patches committed (as c5fb0e1 did,
#   reverted since; LW in ../build.sh is the same code on N's commit). Call 5 replaces this
#   call and call 2 with one: use it.
# HEAD's GPU tests and the checks on what v17 and v18 change (odd item counts with hkv odd and
# halved items, Q by cp.async, a mixed batch, FP8); synccheck with halved items and racecheck
# of the named barriers; chunked at 128K in 8K chunks alternated N LV HEAD twice; ncu of the
# one-pass select at 128K; then ncu's warp states of the select at the chunk of 8K queries
# after 64K keys. LV shares every path of HEAD's but the halving (HEAD with no items halved),
# so HEAD's checks stand for it. Nothing here is a record: call 2 writes HEAD's, right after
# on the same machine if HEAD passes and wins.
source results/h200/chunk-stage-2026-12-04/steps.sh
V=.carry/d4/HEAD
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t-HEAD 40 $V/$t; done
step check-odd-HEAD 60 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 13k+77 --rows 256
step check-g3-HEAD 60 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 24:8 --len 16k --rows 256
step check-requests-HEAD 70 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --requests 8k/64k,3x4k,1k/16k+77 --rows 256
step check-fp8-HEAD 60 $V/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --len 16k --rows 256
step synccheck-HEAD 60 compute-sanitizer --tool synccheck --error-exitcode 9 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 12k+77 --rows 64
step racecheck-HEAD 60 compute-sanitizer --tool racecheck --error-exitcode 9 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 2k+77 --rows 256
for v in N LV HEAD N LV HEAD; do
  step chunked-$v-$SECONDS 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for v in N HEAD; do
  step ncu-$v 40 ncu --clock-control none --csv --page raw -k regex:select_sm90_kernel --launch-count 1 --metrics $M \
    .carry/d4/$v/fp2bench run --backend gpu --dtype bf16 --len 128k --rows 1 --trials 1
done
# chunked --trials 1 scores three times a pass (warm-up, the index alone, the whole pass), and
# each chunk runs without the cache, then with it: the one pass takes launches 0-2, chunk c
# 3 + 6c to 5 + 6c and then 6 + 6c to 8 + 6c, so skip 52 is chunk 8's index alone without the
# cache (8K queries, 64K keys before them; call 20's chunk 8, then skip 35 at two a pass).
# 72K ends at that chunk: the same kernel as 128K's chunk 8, without 128K's one pass and seven
# chunks more run under ncu. ncu counts only the launches -k matches.
for v in N HEAD; do
  step ncu-chunk8-$v 60 ncu --clock-control none --csv --page raw --section WarpStateStats -k regex:select_sm90_kernel \
    --launch-skip 52 --launch-count 1 --metrics $M .carry/d4/$v/fp2bench chunked --backend gpu --len 72k --chunk 8k \
    --trials 1
done
finish
