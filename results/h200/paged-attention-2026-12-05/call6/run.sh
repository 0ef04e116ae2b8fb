#!/usr/bin/env bash
# Call 6 of the paged attention (issue 14, sixth session of 2026-12-05), call 5's builds: T's
# pages of 64 against HEAD's at 128K, alternated three times (call 5 had T faster at 32K and 64K
# but slower at 128K, by more than HEAD's own spread); then HEAD's speedup records in both dtypes
# (contiguous, pages of 16 copied, pages of 64 read by the attention), to the deadline.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
S="speedup --backend gpu --peers none --dtype bf16 --len 128k --paged 64"
for r in 1 2 3; do
  for v in HEAD T; do step speedup-$v-64-r$r 30 .carry/d4/$v/fp2bench $S --out $W/speedup-$v-64-r$r.json; done
done
S="speedup --backend gpu --peers none --len 32k,64k,128k --dtype both"
step speedup-paged-contiguous 80 $HB $S --out $W/res/speedup-paged-contiguous.json
step speedup-paged-16 80 $HB $S --paged 16 --out $W/res/speedup-paged-16.json
step speedup-paged-64 80 $HB $S --paged 64 --out $W/res/speedup-paged-64.json
paged_finish
