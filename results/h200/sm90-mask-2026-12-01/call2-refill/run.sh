#!/usr/bin/env bash
# Session 13, call 2: sm90-mask + the A-fragment refill (is the wait after the softmax now?),
# checked and timed against main; the mask-only build timed once more in the same call.
set -u
tar xJf .carry/s14/bins.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments FP2_PLOTS_DIR=$PWD/plots
W=/tmp/w; mkdir -p $W
start=$SECONDS
timeout 300 bash .gpu_mask_check.sh $W/mask build build-refill > $W/mask.log 2>&1
echo "mask rc=$? at $((SECONDS - start))s" >> $W/steps.txt
timeout 40 build-mask/fp2bench speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/mask/time-maskonly.json > $W/time-maskonly.log 2>&1
echo "maskonly rc=$? at $((SECONDS - start))s" >> $W/steps.txt
tar czf $OUT/call2.tgz -C $W .
cat $W/steps.txt $W/mask/steps.txt; grep -E "^(base|cand|base2) " $W/mask.log
python3 - $W/mask/time-maskonly.json <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    g = lambda k, m="median_ms": r[k][m] if r.get(k) else float("nan")
    print(f"maskonly {r['len']:6d} {r['dtype']:4} attend {g('attend'):8.3f} nocorr {g('attend_nocorr'):8.3f} dense {g('dense'):8.3f} (min {g('dense', 'min_ms'):8.3f})")
PY
