"""The times of a paged-attention call's folder (argv[1]): speedup's rows (index + attention, ms)
per build and page size, with the records' total against contiguous and any peers timed beside;
breakdown's pool and attention at 128K; chunked's index with and without the pooled cache, per
chunk size; the SM clock and power where the call logged them (clocks.csv, nvidia-smi's csv)."""
import csv
import glob
import json
import statistics
import sys

w = sys.argv[1]


def rows(f):
    try:
        return json.load(open(f))["rows"]
    except (OSError, ValueError, KeyError) as e:
        print(f, e)
        return []


# speedup-BUILD-PAGES[-ROUND].json (calls 1-3: M's; call 5: every build's), then the records
# res/speedup-paged-{16,contiguous,64}.json (HEAD's).
runs = [(f.split("/")[-1][8:-5], f, False) for f in sorted(glob.glob(w + "/speedup-*.json"))]
records = sorted(glob.glob(w + "/res/speedup-paged-*.json"))
runs += [("HEAD-" + f.split("-")[-1][:-5], f, True) for f in records]
contiguous = {(r["len"], r["dtype"]): r["total_ms"]
              for f in records if f.endswith("-contiguous.json") for r in rows(f)}
PEERS = ("cudnn", "sdpa_cudnn", "fa2", "flex", "fpv2", "fpv2_kernel", "hpc")  # those timed beside ours (--peers)
for name, f, record in runs:
    for r in rows(f):
        line = "speedup %-18s %-4s %4dK index %.3f total %.3f attend %.1f TF/s" % (
            name, r["dtype"], r["len"] // 1024, r["index_ms"], r["total_ms"], r["attend_tflops"])
        if record and (r["len"], r["dtype"]) in contiguous:
            line += " | contiguous/this %.3f" % (contiguous[(r["len"], r["dtype"])] / r["total_ms"])
        line += "".join(" | %s %.2f ms %.0f TF/s" % (p, r[p]["median_ms"], r[p + "_tflops"]) for p in PEERS if p in r)
        print(line)
for f in sorted(glob.glob(w + "/breakdown-*.json") + glob.glob(w + "/res/breakdown*.json")):
    for r in rows(f):
        print(f.split("/")[-1][:-5], "%dK pool %.3f select %.3f attend %.3f total %.3f" %
              (r["len"] // 1024, r["pool"]["median_ms"], r["select"]["median_ms"], r["attend_corrected"]["median_ms"], r["total_ms"]))
for f in sorted(glob.glob(w + "/chunked-*.json") + glob.glob(w + "/res/chunked*.json")):
    for r in rows(f):
        if r["mode"] != "one-pass":
            print(f.split("/")[-1][:-5], "%3dK %-13s index %.3f pool %.3f select %.3f attend %.3f total %.3f %s" %
                  (r["chunk"] // 1024, r["mode"], r["index_ms"], r["pool_ms"], r["select_ms"], r["attend_ms"], r["total_ms"],
                   "ratio %.3f" % r["index_vs_uncached"] if "index_vs_uncached" in r else ""))
try:
    with open(w + "/clocks.csv") as f:
        samples = [r for r in list(csv.reader(f))[1:] if len(r) > 3]
    sm = [float(r[1].split()[0]) for r in samples]
    watts = [float(r[3].split()[0]) for r in samples if r[3].split()[0] != "[N/A]"]
    print("clocks: %d samples, SM MHz min %.0f median %.0f max %.0f; power max %.0f W" %
          (len(sm), min(sm), statistics.median(sm), max(sm), max(watts)))
except OSError:
    pass  # the call logged no clocks
except (ValueError, IndexError) as e:
    print("clocks.csv", e)
