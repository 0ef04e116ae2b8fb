#!/usr/bin/env bash
# Not run: the session's device time left (436 s) could not start a machine. The next
# session's first call, after VARIANTS="M HEAD" ../../chunk-stage-2026-12-04/build.sh.
# Call 4 of the paged attention (issue 14, 2026-12-05), with the device time left: ncu of the
# BF16 sm90 attention at 32K (HEAD = the landed hybrid, as call 3's) contiguous, with pages of
# 64 (the attention reads them: kPaged, a TMA box a page) and of 16 (the pool's copy, the
# contiguous kernel), for where the direct path's 5 % goes; then HEAD's speedup records again.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
for pg in 0 64 16; do
  paged=; [ $pg != 0 ] && paged="--paged $pg"
  step ncu-attend-$pg 40 ncu --clock-control none --csv --page raw -k regex:attend_sm90_kernel --launch-count 1 \
    --metrics $M,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum $HB run --backend gpu --dtype bf16 --len 32k --rows 1 --trials 1 $paged
done
S="speedup --backend gpu --peers none --len 32k,64k,128k --dtype both"
step speedup-HEAD-16 80 $HB $S --paged 16 --out $W/res/speedup-paged-16.json
step speedup-HEAD-0 80 $HB $S --out $W/res/speedup-paged-contiguous.json
step speedup-HEAD-64 80 $HB $S --paged 64 --out $W/res/speedup-paged-64.json
python3 results/h200/chunk-stage-2026-12-04/summary.py $W
paged_finish
