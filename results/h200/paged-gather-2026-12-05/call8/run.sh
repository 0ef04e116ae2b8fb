#!/usr/bin/env bash
# Call 8 (2026-12-06, second session), on the carry of call 6: why HEAD's attention runs slower
# at 128K contiguous than with pages of 64 (13.12-13.42 ms against 13.02-13.04 in call 6, and
# 518-533 TF/s against 590 at 32K). ncu's memory counters of the sm90 attention for HEAD at
# 32K and 128K contiguous and at 128K in pages of 64 and 16 (the copy), one launch each.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size
for c in "32k 0" "128k 0" "128k 64" "128k 16"; do
  set -- $c; p=""; [ $2 = 0 ] || p="--paged $2"
  step ncu-$1-$2 60 ncu --clock-control none --csv --page raw -k regex:attend_sm90_kernel --launch-skip 1 --launch-count 1 \
    --metrics $M $H/fp2bench run --backend gpu --dtype bf16 --len $1 --rows 1 --trials 2 $p
done
python3 results/h200/chunk-stage-2026-12-04/summary.py $W "$M"
paged_finish
