#!/usr/bin/env bash
# Call C: the candidate (main + sm90 select + FP8 softmax cut) checked first, then timed
# against main's binary in the same call; corners, sanitizers, ncu and SASS; about 580 s.
set -u
export LD_LIBRARY_PATH=$PWD/.carry
export FP2_EXPERIMENTS_DIR=$PWD/experiments
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
export FP2_PYTHON=$(command -v python3)
W=/tmp/w R=$W/h200; mkdir -p $R $W/t
C=.carry/s8 BASE=.carry/s7/bin/fp2bench CAND=$C/cand/fp2bench
start=$SECONDS
left() { local l=$(( $1 - (SECONDS - start) )); [ "$l" -gt "$2" ] && l=$2; [ "$l" -lt 1 ] && l=1; echo "$l"; }
step() { local name=$1 cap=$2 dl=$3; shift 3
  local t0=$SECONDS; timeout "$(left "$dl" "$cap")" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $W/gpu.txt 2>&1
smoke() { # smoke NAME BIN: both dtypes at 1k+77 on the sm90 kernels, 20 s each
  step smoke-$1-bf16 20 120 $2 check --backend gpu --kernel sm90 --dtype bf16 --len 1k+77 --rows 256 &&
  step smoke-$1-fp8 20 140 $2 check --backend gpu --kernel sm90 --dtype fp8 --len 1k+77 --rows 256; }
step tile 20 25 $C/cand/gpu_tile_sm90
if smoke cand $CAND; then :
elif smoke sel $C/sel/fp2bench; then CAND=$C/sel/fp2bench
elif smoke fp8 $C/fp8/fp2bench; then CAND=$C/fp8/fp2bench
else CAND=; fi
echo "candidate: ${CAND:-none}" | tee -a $W/steps.txt
if [ -n "$CAND" ]; then
  step check-bf16 45 220 $CAND check --backend gpu --kernel sm90 --dtype bf16 --len 1k,2k+77,16k --rows 512 --out $W/t/check-bf16.json
  step check-fp8 45 265 $CAND check --backend gpu --kernel sm90 --dtype fp8 --len 1k,2k+77,16k --rows 512 --out $W/t/check-fp8.json
  [ $CAND = $C/cand/fp2bench ] && { step gpu-kernels 25 290 $C/cand/gpu_kernels; step gpu-neighbour-nan 15 305 $C/cand/gpu_neighbour_nan; }
  step speedup-base 45 350 $BASE speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/t/speedup-base.json
  step speedup-cand 45 395 $CAND speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/t/speedup-cand.json
  step batch2 12 407 $CAND check --backend gpu --kernel sm90 --len 2k+77 --batch 2 --rows 256
  step g3 10 417 $CAND check --backend gpu --kernel sm90 --len 2k+77 --heads 24:8 --rows 256
  step g5-fp8 10 427 $CAND check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --heads 40:8 --rows 256
  step g7 10 437 $CAND check --backend gpu --kernel sm90 --len 2k+77 --heads 28:4 --rows 256
  step alpha0-fp8 8 445 $CAND check --backend gpu --kernel sm90 --dtype fp8 --len 4k --alpha 0 --data synth:llm --rows 256
  step alpha1 8 453 $CAND check --backend gpu --kernel sm90 --len 4k --alpha 1 --data synth:llm --rows 256
  step d64 10 463 $CAND check --backend gpu --kernel auto --dim 64 --len 2k+77 --rows 256
  step portable 12 475 $CAND check --backend gpu --kernel portable --dtype fp8 --len 2k+77 --rows 256
  dl=475
  for tool in memcheck racecheck synccheck; do
    dl=$((dl + 20))
    step san-$tool 20 $dl compute-sanitizer --tool $tool --error-exitcode 1 $CAND check --backend gpu --kernel sm90 --dtype bf16 --len 300 --heads 8:2 --rows 64
  done
  step san-memcheck-fp8 18 530 compute-sanitizer --tool memcheck --error-exitcode 1 $CAND check --backend gpu --kernel sm90 --dtype fp8 --len 300 --heads 6:2 --rows 64
  step ncu-fp8-dense 20 550 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats -k regex:attend_sm90 --launch-count 1 $CAND run --backend gpu --kernel sm90 --dtype fp8 --len 32k --density 1 --trials 1
  step ncu-select 15 565 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats -k regex:select_sm90 --launch-count 1 $CAND run --backend gpu --kernel sm90 --len 128k --trials 1
  step sass 12 577 bash -c "cuobjdump -sass $BASE | python3 $C/sass_loop.py > $W/sass-base.txt; cuobjdump -sass $CAND | python3 $C/sass_loop.py > $W/sass-cand.txt"
fi
tar czf $OUT/c.tgz -C $W .
cat $W/steps.txt
python3 - $W/t/speedup-base.json $W/t/speedup-cand.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    try: rows = json.load(open(f))["rows"]
    except Exception as e: print(f, e); continue
    for r in rows:
        g = lambda k: r[k]["median_ms"] if isinstance(r.get(k), dict) else float("nan")
        print(f.split("-")[-1][:4], r["len"], r["dtype"], "sel %.3f idx %.3f att %.3f nocorr %.3f dense %.2f (%d TF)" % (g("select"), r["index_ms"], g("attend"), g("attend_nocorr"), g("dense"), r.get("dense_tflops", 0)))
PY
