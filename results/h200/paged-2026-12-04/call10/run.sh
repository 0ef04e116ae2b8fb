#!/usr/bin/env bash
# Call 10 of issue 14 (the chunk's index stage): N = ff77ad2 (the CSR in two launches, the
# pooled cache's prefix copy inside the pool kernel) against B0 = 5a54111 (main). N's GPU
# tests and memcheck of gpu_pooled_cache; chunked at 128K in 8K chunks, B0 N B0 N; ncu's
# durations of N's index kernels at 32K in 8K chunks; ncu's full sections of the sm90 select
# kernel at chunk 0 and chunk 3 of that run (what bounds its fixed cost).
set -u
[ -x .carry/d4/N/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-400}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
N=.carry/d4/N B=.carry/d4/B0
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t 40 $N/$t; done
step memcheck-gpu_pooled_cache 90 compute-sanitizer --tool memcheck --error-exitcode 9 $N/gpu_pooled_cache
for v in B0 N B0 N; do
  step chunked-$v-${SECONDS} 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
step ncu-32k 60 ncu --clock-control none --csv --page raw --metrics gpu__time_duration.sum,launch__grid_size \
  -k regex:"select|compact|place|copy_kernel|Scan|pool|cached_means" $N/fp2bench chunked --backend gpu --len 32k --chunk 8k --trials 1
for skip in 2 14; do
  step ncu-select-$skip 90 ncu --clock-control none --set full -k regex:select_sm90 --launch-skip $skip --launch-count 1 \
    $N/fp2bench chunked --backend gpu --len 32k --chunk 8k --trials 1
done
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan memcheck-gpu_pooled_cache; do tail -1 $W/$t.log; done
python3 - "$W" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    for x in json.load(open(f))["rows"]:
        print(f.split("/")[-1][8:-5], x["mode"], "index %.3f pool %.3f select %.3f attend %.2f" % (
            x["index_ms"], x["pool_ms"], x["select_ms"], x["attend_ms"]), "ratio %.3f" % x.get("index_vs_uncached", 0))
PY
grep -E '^"[0-9]' $W/ncu-32k.log | awk -F'","' '{print $1, $5, $(NF-1), $NF}' | cut -c1-110 | head -40
for skip in 2 14; do grep -E "Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Waves Per SM|Compute \(SM\) Throughput" $W/ncu-select-$skip.log | head -12; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
