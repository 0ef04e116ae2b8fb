#!/usr/bin/env bash
# Call 3: the last 5 % of FP8's 128K select. A (4d078f1): call 2's v3; B (740fd0f): A without
# the warp skip past the last scored key; C (596c92b): A with the second batch of Q's rows
# prefetched into L2 (a line a thread: call 2's bulk prefetch through the copy engine lost
# 0.017 ms); D (4f1c030): C without the warp skip. Breakdown FP8 twice in mirrored order, then
# BF16 for A and the FP8 winner by 128K index; the winner's checks (gpu_kernels, 128K in both
# dtypes, memcheck), its FP8 record (reproduce-2, copied out only when its step succeeded) and
# the check grid last.
set -u
tar xJf .carry/c3/build.tar.xz; tar xJf .carry/c3/variants.tar.xz -C .carry/c3
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=575; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
declare -A DIR=([A]=.carry/c3/A [B]=.carry/c3/B [C]=.carry/c3/C [D]=build)
declare -A KER=([A]=.carry/c3/A/gpu_kernels [B]=.carry/c3/B/gpu_kernels [C]=.carry/c3/C/gpu_kernels [D]=build/tests/gpu_kernels)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
bd() { local dt=$1 n=$2 r=1; [ -e $W/bd-$dt-$n-1.json ] && r=2
  step bd-$dt-$n-$r 45 ${DIR[$n]}/fp2bench breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n-$r.json; }
for n in A B C D D C B A; do bd fp8 $n; done
win=$(python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
def idx(n, r):
    row = json.load(open(f"{w}/bd-fp8-{n}-{r}.json"))["rows"][-1]
    return sum(row[k]["median_ms"] for k in ("quantise", "pool", "select"))
t = {n: idx(n, 1) + idx(n, 2) for n in "ABCD"}
print(min(t, key=t.get))
PY
)
echo "faster: ${win:-none}" | tee -a $W/steps.txt
[ -n "$win" ] || win=A
[ $win != A ] && for n in A $win $win A; do bd bf16 $n; done
X=${DIR[$win]}/fp2bench
step gpu-kernels 60 ${KER[$win]} || bad=1
for dt in fp8 bf16; do
  step check-$dt-128k 60 $X check --backend gpu --rows 128 --kernel sm90 --dtype $dt --len 128k --data synth:llm --heads 8:8 || bad=1; done
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $X check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 --rows 64 || bad=1
echo "checks bad=$bad" | tee -a $W/steps.txt
if [ $bad = 0 ]; then
  step reproduce-2 250 bash results/refresh.sh reproduce-2 ${DIR[$win]} results/h200 &&
    cp results/h200/speedup-llm-fp8.json results/h200/reproduce-2.log results/h200/REPORT.md $W/
fi
step gpu-check 150 bash tests/gpu_check.sh $X
cat $W/steps.txt
tail -1 $W/gpu-kernels.log; tail -2 $W/gpu-check.log | cut -c1-120
for dt in fp8 bf16; do tail -2 $W/check-$dt-128k.log | cut -c1-140; done
grep -h "ERROR SUMMARY" $W/san-*.log
for f in $W/bd-*-*.log; do echo "== $(basename $f .log)"; grep -E "^ +(32768|131072) " $f | cut -c1-100; done
tail -3 $W/reproduce-2.log 2>/dev/null | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
