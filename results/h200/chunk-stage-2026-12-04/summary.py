"""The chunked runs and ncu rows of a call's folder (argv[1]), one line each, in run order. argv[2]
(optional): the comma list of metrics the ncu steps asked for, the only columns then printed
(ncu's raw page adds every launch__ attribute and each metric's other rollups)."""
import csv
import glob
import json
import sys

folder = sys.argv[1]
ASKED = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
METRIC_UNITS = ("sm", "smsp", "gpu", "launch", "dram", "lts")  # without argv[2]: not ncu's device attributes


def printed(column):
    return column in ASKED if ASKED else column.split("__")[0] in METRIC_UNITS


for f in sorted(glob.glob(folder + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    try:
        rows = {r["mode"]: r for r in json.load(open(f))["rows"]}
    except (OSError, ValueError, KeyError) as e:
        print(f, e)
        continue
    u, c = rows["chunked"], rows["chunked+cache"]
    staged = lambda r: r.get("index_staged_ms", r["index_ms"])  # builds before 0606022 time only the stages
    print(f.split("/")[-1][8:-5], "one-pass select %.3f" % rows["one-pass"]["select_ms"],
          "| uncached %.3f (staged %.3f)" % (u["index_ms"], staged(u)),
          "| cached %.3f (staged %.3f: pool %.3f select %.3f)" % (c["index_ms"], staged(c), c["pool_ms"],
                                                                 c["select_ms"]),
          "| ratio %.3f (staged %.3f)" % (c["index_vs_uncached"], staged(c) / staged(u)))
for f in sorted(glob.glob(folder + "/ncu-*.log")):
    try:
        rows = [r for r in csv.reader(open(f)) if r]
        h = next(i for i, r in enumerate(rows) if r[0] == "ID")
        for r in rows[h + 2:]:
            m = dict(zip(rows[h], r))
            print(f.split("/")[-1], m["Kernel Name"][:40],
                  " ".join("%s=%s" % (k, m[k]) for k in rows[h] if printed(k)))
    except (OSError, StopIteration, KeyError) as e:
        print(f, e)
