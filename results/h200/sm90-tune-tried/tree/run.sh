#!/usr/bin/env bash
# Call 5: the softmax's maximum and row sums in four partial chains per row (FP2_TRY_TREE,
# branch sm90-tune), checked and timed against main in one call.
set -u
tar xJf .carry/c5/bins.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments
W=/tmp/w; mkdir -p $W/t
start=$SECONDS
left() { local l=$(( $1 - (SECONDS - start) )); [ "$l" -gt "$2" ] && l=$2; [ "$l" -lt 1 ] && l=1; echo "$l"; }
step() { local name=$1 cap=$2 dl=$3; shift 3; local t0=$SECONDS
  timeout "$(left "$dl" "$cap")" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
step check-F-bf16 20 20 build-F/fp2bench check --backend gpu --kernel sm90 --len 1k,2k+77 --rows 256
step check-F-fp8 20 40 build-F/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --len 1k,2k+77 --rows 256
step time-base 32 75 build/fp2bench speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/t/time-base.json
step time-F 32 110 build-F/fp2bench speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/t/time-F.json
step time-base2 32 145 build/fp2bench speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/t/time-base2.json
tar czf $OUT/call5.tgz -C $W .
cat $W/steps.txt; tail -2 $W/check-F-bf16.log $W/check-F-fp8.log
python3 - $W/t <<'PY'
import json, sys, os
for v in ["base", "F", "base2"]:
    f = os.path.join(sys.argv[1], f"time-{v}.json")
    if not os.path.exists(f): print(v, "missing"); continue
    for r in json.load(open(f))["rows"]:
        g = lambda k, m="median_ms": r[k][m] if k in r and r[k] else float("nan")
        print(f"{v:6} {r['len']:6d} {r['dtype']:4} {g('attend'):8.3f} {g('attend_nocorr'):8.3f} {g('dense'):8.3f} {g('dense','min_ms'):8.3f}")
PY
