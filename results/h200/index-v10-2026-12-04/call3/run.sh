#!/usr/bin/env bash
# Call 3 of index v10: the CSR's energies read once. G (2207384): call 2's winner and FP8
# record; H (8582264): G with the compact pass writing each segment's kept blocks to the front
# of its scratch (and offsets[0]: no memset), the copy pass moving them. Breakdown FP8 twice
# in mirrored order; H's checks (it changes the CSR of every kernel); H's FP8 record where H
# is faster.
set -u
tar xJf .carry/d3/variants.tar.xz -C .carry/d3
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=575; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
declare -A DIR=([G]=.carry/d3/G [H]=.carry/d3/H)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
bd() { local dt=$1 n=$2 r=1; [ -e $W/bd-$dt-$n-1.json ] && r=2
  step bd-$dt-$n-$r 45 ${DIR[$n]}/fp2bench breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n-$r.json; }
for n in G H H G; do bd fp8 $n; done
python3 - "$W" <<'PY' | tee $W/table.txt
import json, os, sys
w = sys.argv[1]
def row(dt, n, r, L):
    for x in json.load(open(f"{w}/bd-{dt}-{n}-{r}.json"))["rows"]:
        if x["len"] == L: return x
def ms(x, k): return x[k]["median_ms"]
t = {}
print("fp8: 128K quantise / pool / select / index (rounds 1, 2) | 32K index")
for n in ("G", "H"):
    try:
        rs = [row("fp8", n, r, 131072) for r in (1, 2)]; ss = [row("fp8", n, r, 32768) for r in (1, 2)]
    except Exception as e:
        print(n, "missing", e); continue
    idx = [sum(ms(x, k) for k in ("quantise", "pool", "select")) for x in rs]
    idx32 = [sum(ms(x, k) for k in ("quantise", "pool", "select")) for x in ss]
    print(n, " / ".join(f"{ms(rs[0],k):.3f} {ms(rs[1],k):.3f}" for k in ("quantise", "pool", "select")),
          f"| {idx[0]:.3f} {idx[1]:.3f} | {idx32[0]:.3f} {idx32[1]:.3f}")
    t[n] = sum(idx)
print("winner", "H" if "H" in t and "G" in t and t["H"] < t["G"] else "G")
PY
X=${DIR[H]}/fp2bench
step gpu-kernels 60 ${DIR[H]}/gpu_kernels || bad=1
for dt in fp8 bf16; do
  step check-$dt-128k 60 $X check --backend gpu --rows 128 --kernel sm90 --dtype $dt --len 128k --data synth:llm --heads 8:8 || bad=1; done
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $X check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 --rows 64 || bad=1
step gpu-check 150 bash tests/gpu_check.sh $X || bad=1
echo "checks of H bad=$bad" | tee -a $W/steps.txt
if [ $bad = 0 ] && grep -q "^winner H" $W/table.txt; then
  step reproduce-2 250 bash results/refresh.sh reproduce-2 ${DIR[H]} results/h200 &&
    cp results/h200/speedup-llm-fp8.json results/h200/reproduce-2.log results/h200/REPORT.md $W/
fi
cat $W/steps.txt
tail -1 $W/gpu-kernels.log; tail -2 $W/gpu-check.log | cut -c1-120
for dt in fp8 bf16; do tail -2 $W/check-$dt-128k.log | cut -c1-140; done
grep -h "ERROR SUMMARY" $W/san-*.log
tail -3 $W/reproduce-2.log 2>/dev/null | cut -c1-150
cat $W/table.txt
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
