#!/usr/bin/env bash
# Ran on an NVIDIA H200 late in the sixth session of 2026-12-05 (three starts refused before),
# after `VARIANTS="HEAD T G D16" ../../chunk-stage-2026-12-04/build.sh` (HEAD = d104a61).
# Call 5 of the paged attention (issue 14): T (the page table read before the stage is free),
# G (T, and pages of 16 gathered by cp.async instead of copied; registers 56 / 224) and D16 (T,
# and pages of 16 a TMA box each) against HEAD. Gates: the paged tests of each variant and their
# checks against the oracle with pages of 16 and 64. Then BF16 speedup without peers at 32K-128K,
# alternated; the Python binding's GPU test (its paged and pooled cases new) on HEAD's and G's
# library; memcheck of G's paged tests; chunked 128K in 8K chunks with pages of 64 (HEAD, T, G)
# and of 16 (G: with the cache); speedup at 128K again, to the deadline. The table printed last.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
for v in T G D16; do
  step gpu_paged-$v 40 .carry/d4/$v/gpu_paged
  step gpu_pooled_cache-$v 40 .carry/d4/$v/gpu_pooled_cache
  step check-paged16-$v 60 .carry/d4/$v/fp2bench check --backend gpu --rows 512 --kernel sm90 --paged 16 \
    --requests 1k,2x300/2k+77,640/4k+77,77
done
step gpu_kernels-G 40 .carry/d4/G/gpu_kernels
step check-paged64-G 60 .carry/d4/G/fp2bench check --backend gpu --rows 256 --kernel sm90 --paged 64 --heads 24:8 \
  --len 16k+77
passed() { grep -q "^gpu_paged-$1 rc=0" $W/steps.txt && grep -q "^check-paged16-$1 rc=0" $W/steps.txt; }
# Round r of the speedup runs: HEAD contiguous and in pages, then each variant that passed.
speedups() {
  local r=$1 S="speedup --backend gpu --peers none --dtype bf16 --len $2"
  step speedup-HEAD-0-$r 40 $HB $S --out $W/speedup-HEAD-0-$r.json
  step speedup-HEAD-64-$r 40 $HB $S --paged 64 --out $W/speedup-HEAD-64-$r.json
  step speedup-HEAD-16-$r 40 $HB $S --paged 16 --out $W/speedup-HEAD-16-$r.json
  for v in T G D16; do
    passed $v || continue
    for pg in 64 16; do
      [ $v = D16 ] && [ $pg = 64 ] && continue # D16's pages of 64 are T's
      step speedup-$v-$pg-$r 40 .carry/d4/$v/fp2bench $S --paged $pg --out $W/speedup-$v-$pg-$r.json
    done
  done
}
speedups 1 32k,64k,128k
for v in HEAD G; do
  step gpu_binding-$v 90 env FP2_LIB=.carry/d4/$v/libfp2.so python3 tests/gpu_binding.py
done
step memcheck-paged-G 60 compute-sanitizer --tool memcheck --error-exitcode 9 .carry/d4/G/gpu_paged
step memcheck-pooled-G 60 compute-sanitizer --tool memcheck --error-exitcode 9 .carry/d4/G/gpu_pooled_cache
C="chunked --backend gpu --len 128k --chunk 8k"
step chunked-HEAD-64 50 $HB $C --paged 64 --out $W/chunked-HEAD-64.json
for v in T G; do passed $v && step chunked-$v-64 50 .carry/d4/$v/fp2bench $C --paged 64 --out $W/chunked-$v-64.json; done
passed G && step chunked-G-16 50 .carry/d4/G/fp2bench $C --paged 16 --out $W/chunked-G-16.json
speedups 2 128k
paged_finish
