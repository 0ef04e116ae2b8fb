"""The table run.sh prints last: chunked (index, pool, select, ratio), the paged speedups against
contiguous (total and attention TF/s), the same-run peers at 128K, and the SM clock and power
over the call.  python3 summary.py W"""
import csv
import json
import os
import statistics
import sys

w = sys.argv[1]


def rows(path):
    try:
        return json.load(open(os.path.join(w, path)))["rows"]
    except (OSError, ValueError, KeyError) as e:
        print(f"{path}: none ({e.__class__.__name__})")
        return []


for f in ["res/chunked-128k.json", "chunked-8k-r2.json", "chunked-8k-paged64.json"]:
    for x in rows(f):
        print(f"{f.split('/')[-1][:22]:22} {x['mode']:13} {x['chunk']:6} index {x['index_ms']:.3f} pool {x['pool_ms']:.3f}"
              f" select {x['select_ms']:.3f} ratio {x.get('index_vs_uncached', float('nan')):.3f}")

base = {(x["len"], x["dtype"]): x for x in rows("res/speedup-paged-contiguous.json")}
for page in ["contiguous", "16", "64"]:
    for x in rows(f"res/speedup-paged-{page}.json"):
        b = base.get((x["len"], x["dtype"]))
        of = f"{b['total_ms'] / x['total_ms']:.3f}" if b else "-"
        print(f"paged {page:10} {x['len']:7} {x['dtype']:4} total {x['total_ms']:.3f} ms (contiguous/this {of})"
              f" attend {x['attend_tflops']:.0f} TF/s index {x['index_ms']:.3f}")

for x in rows("speedup-peers-128k-bf16.json"):
    line = f"peers {x['len']} {x['dtype']}: ours {x['total_ms']:.2f} ms (attend {x['attend_tflops']:.0f} TF/s)"
    for p in ["dense", "cudnn", "sdpa_cudnn", "fa2", "flex"]:
        if p in x:
            line += f"; {p} {x[p]['median_ms']:.2f} ms ({x.get(p + '_tflops', 0):.0f} TF/s)"
    print(line)

try:
    with open(os.path.join(w, "clocks.csv")) as f:
        r = list(csv.reader(f))[1:]
    sm = [float(x[1].split()[0]) for x in r if len(x) > 3]
    pw = [float(x[3].split()[0]) for x in r if len(x) > 3 and x[3].split()[0] not in ("[N/A]",)]
    print(f"clocks: {len(sm)} samples, SM MHz min {min(sm):.0f} median {statistics.median(sm):.0f} max {max(sm):.0f};"
          f" power W max {max(pw):.0f}")
except (OSError, ValueError, IndexError) as e:
    print(f"clocks: none ({e.__class__.__name__})")
