#!/usr/bin/env bash
# Issue 14's H200 records on main as it stands (HEAD of ../chunk-stage-2026-12-04/build.sh; its
# kernels are 7b54a38's): HEAD's GPU tests and checks; chunked at 128K (8K and 16K chunks, with
# and without the pooled cache), 8K again and with pages of 64; the speedup records contiguous and
# with pages of 16 and 64 (32K-128K, both dtypes); the same-run peers at 128K BF16; breakdown at
# 128K. The SM clock, power and temperature are logged every 500 ms beside them (clocks.csv). On
# any GPU but an H200 it stops at once: these are H200 records.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: $gpu" | tee $W/device.txt
case "$gpu" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 500 > $W/clocks.csv &
smi=$!
head_checks
step chunked-128k 60 $HB chunked --backend gpu --len 128k --chunk 8k,16k --out $W/res/chunked-128k.json
step chunked-8k-r2 40 $HB chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-8k-r2.json
step chunked-8k-paged64 40 $HB chunked --backend gpu --len 128k --chunk 8k --paged 64 --out $W/chunked-8k-paged64.json
S="speedup --backend gpu --peers none --len 32k,64k,128k --dtype both"
step speedup-paged-contiguous 80 $HB $S --out $W/res/speedup-paged-contiguous.json
step speedup-paged-16 80 $HB $S --paged 16 --out $W/res/speedup-paged-16.json
step speedup-paged-64 80 $HB $S --paged 64 --out $W/res/speedup-paged-64.json
step speedup-peers-128k-bf16 150 $HB speedup --backend gpu --len 128k --dtype bf16 --peers cudnn,torch --trials 3 \
  --out $W/speedup-peers-128k-bf16.json
step breakdown 40 $HB breakdown --backend gpu --dtype bf16 --len 128k --out $W/res/breakdown.json
kill $smi
paged_finish
