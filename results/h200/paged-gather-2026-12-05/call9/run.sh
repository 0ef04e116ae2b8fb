#!/usr/bin/env bash
# Call 9 (2026-12-06, second session): why 128K trials slow down within a run (call 6: HEAD's
# attention 11.3 ms at its first trial, 12.2 at its fifth; the dense run's likewise). The SM
# clock, power, temperature and throttle reasons sampled every 100 ms by nvidia-smi while HEAD's
# BF16 speedup runs at 128K, then per second: the clock's range and the reasons seen.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > $W/clocks.csv 2> $W/clocks.err &
smi=$!
sleep 1
step speedup-HEAD-0-128k 90 $H/fp2bench speedup --backend gpu --peers none --dtype bf16 --len 128k --out $W/speedup-HEAD-0-128k.json
sleep 1; kill $smi
python3 - $W/clocks.csv <<'PY'
import sys, collections
by_s = collections.OrderedDict()
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    if len(f) < 7: continue
    by_s.setdefault(f[0][:19], []).append(f)
for s, rows in by_s.items():
    clk = [int(r[1].split()[0]) for r in rows]
    pw = [float(r[3].split()[0]) for r in rows if r[3][0].isdigit()]
    print(s, "sm %4d-%4d MHz" % (min(clk), max(clk)), "power %5.0f-%5.0f W of %s" % (min(pw or [0]), max(pw or [0]), rows[0][4]),
          "temp %s C" % rows[-1][5], "reasons", sorted(set(r[6] for r in rows)))
PY
python3 -c "
import json; d = json.load(open('$W/speedup-HEAD-0-128k.json'))
for r in d['rows']: print('attend trials', r['attend']['trials_ms'], 'dense trials', r['dense']['trials_ms'])"
cat $W/clocks.err | head -3
paged_finish
