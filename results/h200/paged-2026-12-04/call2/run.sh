#!/usr/bin/env bash
# Call 2 of paged K/V (issue 14), P = paged-land: check --paged against the oracle (call 1's
# steps called a shell function through timeout and did not run), then the records: speedup
# without peers, contiguous, --paged 16, --paged 64 and contiguous again, 32K-128K, both dtypes.
set -u
[ -x .carry/d4/P/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
P=.carry/d4/P/fp2bench
step check-paged16-sm90 60 $P check --backend gpu --rows 512 --kernel sm90 --paged 16 --requests 1k,2x300/2k+77,640/4k+77,77
step check-paged64-fp8 60 $P check --backend gpu --rows 512 --kernel sm90 --paged 64 --dtype fp8 --requests 8k/64k,3x4k,1k/16k+77 --heads 28:4
step check-paged256-portable 60 $P check --backend gpu --rows 512 --kernel portable --paged 256 --len 2k+77 --batch 2 --heads 28:4
step check-paged128-fp8-128k 60 $P check --backend gpu --rows 128 --kernel sm90 --paged 128 --dtype fp8 --len 128k --heads 8:8
for v in 0 16 64 0b; do pg=; [ ${v%b} != 0 ] && pg="--paged ${v%b}"
  step speedup-$v 100 $P speedup --backend gpu --peers none --dtype both --len 32k,64k,128k $pg --out $W/speedup-$v.json; done
cat $W/steps.txt
python3 - "$W" <<'PY' | tee $W/table.txt
import json, sys
w = sys.argv[1]
print(json.dumps(json.load(open(f"{w}/speedup-0.json"))["rows"][0])[:1500])
PY
for f in check-paged16-sm90 check-paged64-fp8 check-paged256-portable check-paged128-fp8-128k; do echo "== $f"; tail -2 $W/$f.log | cut -c1-160; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
