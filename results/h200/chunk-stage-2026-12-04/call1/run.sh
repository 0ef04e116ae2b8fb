#!/usr/bin/env bash
# Call 1 (planned 2026-12-04; no device was lent in the session that wrote it). Four builds,
# made by ../build.sh into .carry/d4: N = main (3a44014: chunked times the index stage as one
# range beside the stage-by-stage passes), S = select v16 (branch select-persistent), C = the
# CSR in one kernel (branch csr-one-kernel), SC = both (branch select-persistent-csr).
# The GPU tests of S, C and SC; checks with many items a CTA and many CSR groups (16K at 24:8,
# Q by cp.async; a mixed batch; 40 requests of 4K, 1280 groups, two rounds of the CSR's
# look-back; FP8 at 32K, 256 groups); chunked at 128K in 8K chunks
# alternated N C S SC twice; memcheck and racecheck of SC; last, as time allows, ncu of the
# select stage's kernels at one chunk. Nothing here is a record: call 2 writes the winner's.
source results/h200/chunk-stage-2026-12-04/steps.sh
for v in SC C S; do
  for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t-$v 40 .carry/d4/$v/$t; done
done
step check-g3-16k-SC 60 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --len 16k --heads 24:8 --rows 256
step check-requests-SC 60 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --requests 8k/64k,3x4k,1k/16k+77 --rows 256
step check-40x4k-SC 90 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --requests 40x4k --rows 256
step check-32k-C 90 .carry/d4/C/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --len 32k --rows 256
for v in N C S SC N C S SC; do
  step chunked-$v-$SECONDS 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
step memcheck-SC 60 compute-sanitizer --tool memcheck --error-exitcode 9 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --len 8k --heads 24:8 --dtype bf16 --rows 256
step racecheck-SC 90 compute-sanitizer --tool racecheck --error-exitcode 9 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --len 4k --dtype bf16 --rows 256
M=gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size
# Chunk 8 of 72K in 8K chunks with the cache: 3 passes a pipeline call (warm-up, staged, whole),
# 54 before it (the one pass, 8 chunks twice, chunk 8 without the cache); N runs 3 matching
# kernels a pass (select, compact, place), SC 2 (select, csr).
for v in N:162:3 SC:108:2; do IFS=: read -r n skip count <<< "$v"
  step ncu-$n 60 ncu --clock-control none --csv --page raw -k regex:'select_sm90|compact|place|csr' --launch-skip $skip \
    --launch-count $count --metrics $M .carry/d4/$n/fp2bench chunked --backend gpu --len 72k --chunk 8k --trials 1
done
finish
