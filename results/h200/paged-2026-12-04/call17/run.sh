#!/usr/bin/env bash
# Call 17 of issue 14 (the chunk's index stage): V = 8b96d46 (select_sm90 v13: BF16 keys as
# wgmma's A in registers, the stage released under the first product) against M = 3eb5061 (main,
# v11). V's GPU tests and a g = 3 check under memcheck; chunked at 128K in 8K chunks M V M V; ncu
# of the BF16 select, M and V, at 32K one pass and chunk 0 of 32K in 8K chunks; gpu_check.sh and
# check at 128K BF16 against the oracle on V.
set -u
[ -x .carry/d4/V/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
V=.carry/d4/V
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t 40 $V/$t; done
step memcheck-g3 60 compute-sanitizer --tool memcheck --error-exitcode 9 $V/fp2bench check --backend gpu --kernel sm90 \
  --len 2k+77,8k --heads 24:8 --dtype bf16 --rows 256
for v in M V M V; do
  step chunked-$v-${SECONDS} 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed
for v in M V; do
  step ncu-$v 60 ncu --clock-control none --csv --page raw -k regex:select_sm90 --launch-skip 1 --launch-count 2 --metrics $M \
    .carry/d4/$v/fp2bench chunked --backend gpu --len 32k --chunk 8k --trials 1
done
step gpu_check 170 bash tests/gpu_check.sh $V/fp2bench
step check-bf16-128k 120 $V/fp2bench check --backend gpu --rows 128 --kernel sm90 --len 128k --data synth:llm
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan memcheck-g3 gpu_check check-bf16-128k; do
  echo "$t: $(grep -E 'ERROR SUMMARY|passed|failed|ok|FAIL' $W/$t.log | tail -2 | tr '\n' ' ' | cut -c1-200)"; done
python3 - "$W" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    for x in json.load(open(f))["rows"]:
        print(f.split("/")[-1][8:-5], x["mode"], "index %.3f pool %.3f select %.3f attend %.2f" % (
            x["index_ms"], x["pool_ms"], x["select_ms"], x["attend_ms"]), "ratio %.3f" % x.get("index_vs_uncached", 0))
PY
for v in M V; do echo "== ncu $v"; python3 - $W/ncu-$v.log <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
h = next(i for i, r in enumerate(rows) if r[0] == "ID")
for r in rows[h + 2:]:
    m = dict(zip(rows[h], r))
    print(m.get("Grid Size"), " ".join("%s=%s" % (k.split("__")[1][:22], m[k]) for k in rows[h] if "__" in k))
PY
done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
