#!/usr/bin/env bash
# Call 11 of issue 14 (the chunk's index stage): S = 031d86d (select_sm90 v11: BF16 on half-tile
# products at 4 CTAs per SM, over N's CSR in two launches) against N = ff77ad2 (call 10). S's GPU
# tests; chunked at 128K in 8K chunks N S N S (its one-pass row is the 128K select); ncu of the
# BF16 select kernel, N and S, at 32K one pass and at chunk 0 of 32K in 8K chunks; then on the
# faster (chunked+cache index, with the one-pass select no slower than 1 %): gpu_check.sh, the
# perf baselines' regress, and check at 128K BF16 against the oracle.
set -u
[ -x .carry/d4/S/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-560}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
S=.carry/d4/S
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t 40 $S/$t; done
for v in N S N S; do
  step chunked-$v-${SECONDS} 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed
for v in N S; do
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
print("S" if t["S"][0] < t["N"][0] and t["S"][1] <= 1.01 * t["N"][1] else "N")
PY
)
echo "faster: ${win:-none}" | tee -a $W/steps.txt
X=.carry/d4/${win:-N}/fp2bench
step gpu_check 170 bash tests/gpu_check.sh $X
step perf_regress 120 bash tests/perf_regress.sh $X
step check-bf16-128k 120 $X check --backend gpu --rows 128 --kernel sm90 --len 128k --data synth:llm
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan gpu_check check-bf16-128k; do tail -1 $W/$t.log | cut -c1-150; done
grep -hE "SLOWER|FASTER|SAME|UNCLEAR" $W/perf_regress.log | cut -c1-150 | head -20
python3 - "$W" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    for x in json.load(open(f))["rows"]:
        print(f.split("/")[-1][8:-5], x["mode"], "index %.3f pool %.3f select %.3f attend %.2f" % (
            x["index_ms"], x["pool_ms"], x["select_ms"], x["attend_ms"]), "ratio %.3f" % x.get("index_vs_uncached", 0))
PY
for v in N S; do echo "== ncu $v"; grep -E '^"[0-9]' $W/ncu-$v.log | awk -F'","' '{print $1, $(NF-8), $(NF-7), $(NF-6), $(NF-5), $(NF-4), $(NF-3), $(NF-2), $(NF-1), $NF}' | cut -c1-200; head -c 0 /dev/null; grep -E '^"ID"' $W/ncu-$v.log | awk -F'","' '{for(i=NF-8;i<=NF;i++) printf "%s | ", $i; print ""}' | cut -c1-400; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
