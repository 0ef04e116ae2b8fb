#!/usr/bin/env bash
# Ran once, 2026-12-06, on an H100 (w-h100/: its logs and JSONs; kernels/NOTES.md, "F: the fresh blocks pooled by the select's own CTAs", what it found).
# Call 1 (2026-12-06, third session): F (HEAD with ../chunk-stage-2026-12-04/fresh-pool.patch:
# with a pooled cache, the sm90 select's CTAs pool the chunk's fresh blocks by ticket, the
# pool's launch only copies the prefix) against HEAD, built by
# `VARIANTS="HEAD F" results/h200/chunk-stage-2026-12-04/build.sh`. In order of what each step
# decides: the card; F's GPU tests (gpu_pooled_cache holds the cached passes to the uncached
# ones bit for bit, sm90 with pages of 64 and 128 included); chunked at 128K in 8K chunks
# alternated HEAD F three times; 32K chunks (more fresh tasks than resident CTAs: the tickets
# must not deadlock) and pages of 64, once each; the sanitizers on F's pooled-cache test; ncu of
# the selects of chunk 8 of 72K in 8K chunks (launches 51-56: the one pass takes 0-2, chunk c
# 3 + 6c to 8 + 6c, without the cache and with it; F's fused ones name kFresh in the kernel).
source results/h200/chunk-stage-2026-12-04/steps.sh
F=.carry/d4/F
for t in gpu_pooled_cache gpu_kernels gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t-F 40 $F/$t; done
step check-g3-F 60 $F/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 24:8 --len 16k --rows 256
C="chunked --backend gpu --len 128k"
if grep -q "^gpu_pooled_cache-F rc=0" $W/steps.txt; then
  for v in HEAD F HEAD F HEAD F; do
    step chunked-$v-$SECONDS 50 .carry/d4/$v/fp2bench $C --chunk 8k --out $W/chunked-$v-$SECONDS.json
  done
  for v in HEAD F; do
    step chunked32k-$v-$SECONDS 50 .carry/d4/$v/fp2bench $C --chunk 32k --out $W/chunked-32k$v-$SECONDS.json
    step chunked64-$v-$SECONDS 50 .carry/d4/$v/fp2bench $C --chunk 8k --paged 64 --out $W/chunked-p64$v-$SECONDS.json
  done
fi
for tool in memcheck synccheck racecheck; do
  step $tool-pooled-F 60 compute-sanitizer --tool $tool --error-exitcode 9 $F/gpu_pooled_cache
done
for v in HEAD F; do
  step ncu-chunk8-$v 40 ncu --clock-control none --csv --page raw -k regex:select_sm90_kernel --launch-skip 51 \
    --launch-count 6 --metrics $M .carry/d4/$v/fp2bench chunked --backend gpu --len 72k --chunk 8k --trials 1
done
finish
