#!/usr/bin/env bash
# select-v2 step 2 on the H200: candidate A (ea76f19) checked first; old (main d9997c5), A and
# B (A with 3 CTAs/SM and both 32-key parts unrolled, ea76f19+dirty) timed in the same call;
# the faster of A and B is checked and profiled. Every step under a deadline.
set -u
export LD_LIBRARY_PATH=$PWD/.carry
B=.carry/select L=$OUT/select-v2-step2
old=$B/fp2bench-main A=$B/fp2bench Bb=$B/fp2bench-b
mkdir -p "$L"
start=$SECONDS
left() { local l=$(( ${1} - (SECONDS - start) )); [ "$l" -gt "$2" ] && l=$2; [ "$l" -lt 1 ] && l=1; echo "$l"; }
step() { # step NAME CAP_S DEADLINE_S cmd...
  local name=$1 cap=$2 dl=$3; shift 3
  local t0=$SECONDS; timeout "$(left "$dl" "$cap")" "$@" >"$L/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s" | tee -a "$L/steps.txt"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$L/gpu.txt" 2>&1
step check-portable-A 70 70 $A check --backend gpu --kernel portable --len 1k,2k+77,16k --rows 512 --out "$L/check-portable-A.json"
for dt in bf16 fp8; do
  for v in old A B; do
    bin=$A; [ $v = old ] && bin=$old; [ $v = B ] && bin=$Bb
    step breakdown-$v-$dt 30 170 $bin breakdown --backend gpu --len 32k,128k --dtype $dt --trials 3 --out "$L/breakdown-$v-$dt.json"
  done
done
win=$(python3 - "$L" <<'PY'
import json, sys
def sel(v):
    try: return sum(r["select"]["median_ms"] for dt in ("bf16", "fp8") for r in json.load(open(f"{sys.argv[1]}/breakdown-{v}-{dt}.json"))["rows"] if r["len"] == 131072)
    except Exception: return float("inf")
print("B" if sel("B") < 0.97 * sel("A") else "A")
PY
)
echo "faster: $win" | tee -a "$L/steps.txt"
W=$A; [ "$win" = B ] && W=$Bb
[ "$win" = B ] && step check-portable-B 60 185 $Bb check --backend gpu --kernel portable --len 1k,2k+77,16k --rows 512 --out "$L/check-portable-B.json"
step check-sm90-$win 25 210 $W check --backend gpu --kernel sm90 --dtype bf16 --len 1k,2k+77,16k --rows 512 --out "$L/check-sm90-$win.json"
step ncu-$win-bf16 18 230 ncu --clock-control none -k regex:select_kernel --launch-count 1 --section SpeedOfLight \
  --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
  --metrics sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
  $W run --backend gpu --len 128k --rows 1 --trials 1
tar czf "$OUT/select-v2-step2.tgz" -C "$OUT" select-v2-step2
{
  cat "$L/steps.txt"
  for f in "$L"/check-*.log; do echo "$(basename "$f"): $(grep -E 'cases passed|mismatch' "$f" | tail -2)"; done
  python3 - "$L" <<'PY'
import json, os, sys
d = sys.argv[1]
print(f"{'ver':4} {'dtype':5} {'len':>7} {'quant':>7} {'pool':>7} {'select med':>10} {'min':>7} {'max':>7} {'attend':>8} {'density':>8}")
for dt in ("bf16", "fp8"):
    for v in ("old", "A", "B"):
        f = os.path.join(d, f"breakdown-{v}-{dt}.json")
        try: rows = json.load(open(f))["rows"]
        except Exception as e: print(v, dt, "no result:", e); continue
        for r in rows:
            s = r["select"]
            print(f"{v:4} {dt:5} {int(r['len']):7d} {r['quantise']['median_ms']:7.3f} {r['pool']['median_ms']:7.3f} "
                  f"{s['median_ms']:10.3f} {s['min_ms']:7.3f} {s['max_ms']:7.3f} {r['attend_corrected']['median_ms']:8.2f} {100*r['density']:7.2f}%")
PY
  grep -hE "Duration|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc Active|pipe_xu|hmma|mem_shared|inst_executed.sum|highest-utilized|Warp Cycles Per Issued" "$L"/ncu-*.log | head -16
} | tee "$OUT/summary.txt"
