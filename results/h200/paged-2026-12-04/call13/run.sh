#!/usr/bin/env bash
# Call 13 of issue 14: T = 259f726 (select_sm90 v12: BF16 with two warpgroups a CTA on one Q tile,
# 24 warps an SM) against M = eb127bc (main: v11, and the re-read's host-side changes, whose
# gpu_kernels and gpu_pooled_cache run first). T's GPU tests and a g = 3 check (Q by cp.async);
# chunked at 128K in 8K chunks M T M T; ncu of the BF16 select, M and T, at 32K one pass and
# chunk 0; then on the faster (chunked+cache index, one-pass select no slower than 1 %):
# gpu_check.sh (T only: M's kernels ran it in call 11), the perf regress and the chunked records.
set -u
[ -x .carry/d4/T/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-560}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
for v in M T; do for t in gpu_kernels gpu_pooled_cache; do step $t-$v 40 .carry/d4/$v/$t; done; done
step check-g3-T 60 .carry/d4/T/fp2bench check --backend gpu --kernel sm90 --len 2k+77,8k --heads 24:8 --dtype bf16 --rows 256
for v in M T M T; do
  step chunked-$v-${SECONDS} 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed
for v in M T; do
  step ncu-$v 60 ncu --clock-control none --csv --page raw -k regex:select_sm90 --launch-skip 1 --launch-count 2 --metrics $M \
    .carry/d4/$v/fp2bench chunked --backend gpu --len 32k --chunk 8k --trials 1
done
win=$(python3 - "$W" <<'PY'
import glob, json, sys
t = {}
for f in glob.glob(sys.argv[1] + "/chunked-*.json"):
    v = f.split("/")[-1].split("-")[1]
    rows = {x["mode"]: x for x in json.load(open(f))["rows"]}
    a = t.setdefault(v, [0, 0])
    a[0] += rows["chunked+cache"]["index_ms"]; a[1] += rows["one-pass"]["select_ms"]
print("T" if t["T"][0] < t["M"][0] and t["T"][1] <= 1.01 * t["M"][1] else "M")
PY
)
echo "faster: ${win:-none}" | tee -a $W/steps.txt
X=.carry/d4/${win:-M}/fp2bench
[ "$win" = T ] && step gpu_check 170 bash tests/gpu_check.sh $X
step perf_regress 60 bash tests/perf_regress.sh $X
step chunked 60 $X chunked --backend gpu --out $W/chunked.json
step chunked-128k 90 $X chunked --backend gpu --len 128k --chunk 8k,16k --out $W/chunked-128k.json
cat $W/steps.txt
for t in gpu_kernels-M gpu_pooled_cache-M gpu_kernels-T gpu_pooled_cache-T check-g3-T gpu_check; do [ -f $W/$t.log ] && tail -1 $W/$t.log | cut -c1-150; done
python3 - "$W" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/chunked-[MT]-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    for x in json.load(open(f))["rows"]:
        print(f.split("/")[-1][8:-5], x["mode"], "index %.3f pool %.3f select %.3f attend %.2f" % (
            x["index_ms"], x["pool_ms"], x["select_ms"], x["attend_ms"]), "ratio %.3f" % x.get("index_vs_uncached", 0))
PY
grep -hE "SLOWER|FASTER|UNCLEAR|cannot" $W/perf_regress.log | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
