#!/usr/bin/env bash
# Call 7 (2026-12-06, second session), on the carry of call 6: what the gather (G4) and the
# pool's copy (HEAD) cost a serving engine's chunked prefill with pages of 16 (128K in 8K
# chunks; the copy re-copies each chunk's whole prefix and has no pooled cache, the gather
# reads the pages in place and keeps the cache), alternated twice beside HEAD contiguous; then
# racecheck of HEAD's paged test, left out by the calls before.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
C="chunked --backend gpu --len 128k --chunk 8k"
for r in 1 2; do
  step chunked-HEAD-16-$r 60 $H/fp2bench $C --paged 16 --out $W/chunked-HEAD-16-$r.json
  step chunked-G4-16-$r 60 .carry/d4/G4/fp2bench $C --paged 16 --out $W/chunked-G4-16-$r.json
  step chunked-HEAD-0-$r 60 $H/fp2bench $C --out $W/chunked-HEAD-0-$r.json
done
step racecheck-paged-HEAD 200 compute-sanitizer --tool racecheck --error-exitcode 9 $H/gpu_paged
paged_finish
