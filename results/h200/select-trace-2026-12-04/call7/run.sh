#!/usr/bin/env bash
# Call 7: F = select-fused-halves (c950dfd: BF16's unmasked stage scored in one pass, no vote
# between its halves) against V = 5c19f0a (main's kernels). F's gpu_kernels and
# gpu_pooled_cache; ncu of the BF16 select at 128K one pass, V and F; chunked at 128K in 8K
# chunks V F V F; then F's other GPU tests, gpu_check.sh and memcheck of a g = 3 check.
set -u
[ -x .carry/d4/F/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-330}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
F=.carry/d4/F
for t in gpu_kernels gpu_pooled_cache; do step $t 40 $F/$t; done
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for v in V F; do
  step ncu128-$v 30 ncu --clock-control none --csv --page raw -k regex:select_sm90 --launch-skip 1 --launch-count 1 --metrics $M \
    .carry/d4/$v/fp2bench breakdown --backend gpu --len 128k --trials 1
done
for v in V F V F; do
  step chunked-$v-${SECONDS} 35 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
for t in gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t 40 $F/$t; done
step gpu_check 150 bash tests/gpu_check.sh $F/fp2bench
step memcheck-g3 60 compute-sanitizer --tool memcheck --error-exitcode 9 $F/fp2bench check --backend gpu --kernel sm90 --len 2k+77 --heads 24:8 --dtype bf16
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan gpu_check memcheck-g3; do
  echo "$t: $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|cases' $W/$t.log | tail -2 | tr '\n' ' ' | cut -c1-200)"; done
python3 - "$W" <<'PY'
import glob, json, sys, csv
for f in sorted(glob.glob(sys.argv[1] + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    for x in json.load(open(f))["rows"]:
        print(f.split("/")[-1][8:-5], x["mode"], "index %.3f pool %.3f select %.3f" % (x["index_ms"], x["pool_ms"], x["select_ms"]), "ratio %.3f" % x.get("index_vs_uncached", 0))
for f in sorted(glob.glob(sys.argv[1] + "/ncu*.log")):
    rows = [r for r in csv.reader(open(f)) if r]
    h = next(i for i, r in enumerate(rows) if r[0] == "ID")
    m = dict(zip(rows[h], rows[h + 2]))
    print(f.split("/")[-1], {k.split("__")[1][:28]: m[k] for k in m if k.endswith((".sum", ".avg.pct_of_peak_sustained_active", "registers_per_thread"))})
PY
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
