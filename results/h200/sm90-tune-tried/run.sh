#!/usr/bin/env bash
# Call 2: sm90 tuning variants (checks + timing against main in one call), synth:llm v4 density
# seeds 5-8 and the alpha slope at 64K over seeds 1-4 (issue 18), the binding's overheads (issue 13).
set -u
tar xJf .carry/c2/bins.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments FP2_SOURCE_DIR=$PWD FP2_PLOTS_DIR=$PWD/plots
export FP2_PYTHON=$(command -v python3)
W=/tmp/w R=$W/h200; mkdir -p $R $W/t
start=$SECONDS
left() { local l=$(( $1 - (SECONDS - start) )); [ "$l" -gt "$2" ] && l=$2; [ "$l" -lt 1 ] && l=1; echo "$l"; }
step() { local name=$1 cap=$2 dl=$3; shift 3; local t0=$SECONDS
  timeout "$(left "$dl" "$cap")" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $W/gpu.txt 2>&1
bin() { [ $1 = base ] && echo build/fp2bench || echo build-$1/fp2bench; }
dl=0
for v in D E; do
  step check-$v-bf16 25 $((dl += 25)) $(bin $v) check --backend gpu --kernel sm90 --len 1k,2k+77 --rows 256
  step check-$v-fp8 25 $((dl += 25)) $(bin $v) check --backend gpu --kernel sm90 --dtype fp8 --len 1k,2k+77 --rows 256
done
for v in A B C; do step check-$v-fp8 12 $((dl += 12)) $(bin $v) check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --rows 128; done
for v in base A B C D E; do
  step time-$v 30 $((dl += 27)) $(bin $v) speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/t/time-$v.json
done
step time-base2 30 $((dl += 27)) build/fp2bench speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/t/time-base2.json
t0=$SECONDS
for s in 5 6 7 8; do
  timeout $(left 430 90) build/fp2bench density --backend gpu --seed $s --rows 256 --out $R/density-llm-v4-seed$s.json > $W/density-s$s.log 2>&1 &
done
wait
for s in 1 2 3 4; do for a in 0.2 0.05 0.025 0.0125; do
  timeout $(left 480 50) build/fp2bench density --backend gpu --len 64k --alpha $a --seed $s --rows 64 --out $R/density-llm-v4-64k-alpha$a-seed$s.json > $W/density-64k-a$a-s$s.log 2>&1 &
done; done
wait; echo "density $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt
FP2_LIB=build/libfp2.so step binding 40 525 python3 experiments/binding_overhead.py --out $R/binding-overhead.json
tar czf $OUT/call2.tgz -C $W .
cat $W/steps.txt
python3 - $W/t <<'PY'
import json, sys, os
d = sys.argv[1]
print(f"{'v':6} {'len':>6} {'dt':4} {'attend':>8} {'nocorr':>8} {'dense':>8} {'dmin':>8}")
for v in ["base", "A", "B", "C", "D", "E", "base2"]:
    f = os.path.join(d, f"time-{v}.json")
    if not os.path.exists(f): print(v, "missing"); continue
    for r in json.load(open(f))["rows"]:
        g = lambda k, m="median_ms": r[k][m] if k in r and r[k] else float("nan")
        print(f"{v:6} {r['len']:6d} {r['dtype']:4} {g('attend'):8.3f} {g('attend_nocorr'):8.3f} {g('dense'):8.3f} {g('dense','min_ms'):8.3f}")
PY
tail -3 $W/binding.log; grep -h "^ *[0-9]" $W/density-s*.log | sort -n | awk '{print $1, $2, $7}' | head -30
