#!/usr/bin/env bash
# Call 1 (2026-12-07, eighth session): where the DRAM time of a chunk's index stage goes. ncu
# (one pass of metrics: the duration and DRAM bytes read and written, caches and clocks left as
# they are, so that each launch meets the memset flush's dirty lines as it does untimed) of
# every pool and sm90 select launch of `chunked` at 128K in 8K chunks, main's build (HEAD of
# `VARIANTS="HEAD ..." ../../chunk-stage-2026-12-04/build.sh`). ncu serialises the launches, so
# no launch overlaps the one before. dram.py reads the log into the table printed last.
source results/h200/chunk-stage-2026-12-04/steps.sh
step ncu-dram 400 ncu --clock-control none --cache-control none --csv --page raw --print-units base \
  -k 'regex:pool_kernel|select_sm90_kernel' \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size \
  $H/fp2bench chunked --backend gpu --len 128k --chunk 8k --trials 1
verdicts
python3 results/h200/chunk-dram-2026-12-07/dram.py $W/ncu-dram.log | tee $W/dram.txt
pack
