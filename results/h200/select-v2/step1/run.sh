#!/usr/bin/env bash
# select-v2 on the H200: correctness of the candidate first, then old (main d9997c5) and new
# select timed in the same call, then ncu of the new kernel. Every step under a deadline.
set -u
export LD_LIBRARY_PATH=$PWD/.carry
B=.carry/select new=$B/fp2bench old=$B/fp2bench-main L=$OUT/select-v2
mkdir -p "$L"
start=$SECONDS
left() { local l=$(( ${1} - (SECONDS - start) )); [ "$l" -gt "$2" ] && l=$2; [ "$l" -lt 1 ] && l=1; echo "$l"; }
step() { # step NAME CAP_S DEADLINE_S cmd...
  local name=$1 cap=$2 dl=$3; shift 3
  local t0=$SECONDS; timeout "$(left "$dl" "$cap")" "$@" >"$L/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s" | tee -a "$L/steps.txt"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$L/gpu.txt" 2>&1
step check-portable 80 80 $new check --backend gpu --kernel portable --len 1k,2k+77,16k --rows 512 --out "$L/check-portable.json"
for dt in bf16 fp8; do
  for v in new old; do
    bin=$new; [ $v = old ] && bin=$old
    step breakdown-$v-$dt 35 200 $bin breakdown --backend gpu --len 32k,128k --dtype $dt --trials 3 --out "$L/breakdown-$v-$dt.json"
  done
done
step check-sm90 30 205 $new check --backend gpu --kernel sm90 --dtype bf16 --len 1k,2k+77,16k --rows 512 --out "$L/check-sm90.json"
step check-d64 8 212 $new check --backend gpu --kernel portable --dim 64 --len 2k+77 --rows 256
step ncu-bf16 25 232 ncu --clock-control none -k regex:select_kernel --launch-count 1 --section SpeedOfLight \
  --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
  --metrics sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed \
  $new run --backend gpu --len 128k --rows 1 --trials 1
tar czf "$OUT/select-v2.tgz" -C "$OUT" select-v2
{
  cat "$L/steps.txt"
  for c in portable sm90; do echo "check-$c: $(grep -E 'cases passed|FAIL|mismatch' "$L/check-$c.log" | tail -3)"; done
  echo "check-d64: $(tail -1 "$L/check-d64.log")"
  python3 - "$L" <<'PY'
import json, os, sys
d = sys.argv[1]
print(f"{'ver':4} {'dtype':5} {'len':>7} {'quant':>7} {'pool':>7} {'select med':>10} {'min':>7} {'max':>7} {'attend':>8} {'density':>8}")
for dt in ("bf16", "fp8"):
    for v in ("old", "new"):
        f = os.path.join(d, f"breakdown-{v}-{dt}.json")
        try: rows = json.load(open(f))["rows"]
        except Exception as e: print(v, dt, "no result:", e); continue
        for r in rows:
            s = r["select"]
            print(f"{v:4} {dt:5} {int(r['len']):7d} {r['quantise']['median_ms']:7.3f} {r['pool']['median_ms']:7.3f} "
                  f"{s['median_ms']:10.3f} {s['min_ms']:7.3f} {s['max_ms']:7.3f} {r['attend_corrected']['median_ms']:8.2f} {100*r['density']:7.2f}%")
PY
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Executed Ipc Active|pipe_xu|hmma|mem_shared|highest-utilized|Block Limit" "$L/ncu-bf16.log" | head -24
} | tee "$OUT/summary.txt"
