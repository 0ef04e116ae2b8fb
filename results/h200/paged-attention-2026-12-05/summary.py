"""The times of a paged-attention call's folder (argv[1]): speedup's BF16 rows (index + attention, ms)
per build and page size, breakdown's pool and attention at 128K, chunked's index with and
without the pooled cache."""
import glob
import json
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
runs = [(f.split("/")[-1][8:-5], f) for f in sorted(glob.glob(w + "/speedup-*.json"))]
runs += [("HEAD-" + f.split("-")[-1][:-5], f) for f in sorted(glob.glob(w + "/res/speedup-paged-*.json"))]
for name, f in runs:
    for r in rows(f):
        print("speedup %-18s %-4s %4dK index %.3f total %.3f attend %.1f TF/s" %
              (name, r["dtype"], r["len"] // 1024, r["index_ms"], r["total_ms"], r["attend_tflops"]))
for f in sorted(glob.glob(w + "/breakdown-*.json")):
    for r in rows(f):
        print(f.split("/")[-1][:-5], "%dK pool %.3f select %.3f attend %.3f total %.3f" %
              (r["len"] // 1024, r["pool"]["median_ms"], r["select"]["median_ms"], r["attend_corrected"]["median_ms"], r["total_ms"]))
for f in sorted(glob.glob(w + "/chunked-*.json")):
    for r in rows(f):
        if r["mode"] != "one-pass":
            print(f.split("/")[-1][:-5], "%-13s index %.3f pool %.3f select %.3f attend %.3f total %.3f %s" %
                  (r["mode"], r["index_ms"], r["pool_ms"], r["select_ms"], r["attend_ms"], r["total_ms"],
                   "ratio %.3f" % r["index_vs_uncached"] if "index_vs_uncached" in r else ""))
