#!/usr/bin/env python3
"""call5's breakdowns (argv[1]/bd-NAME-SECONDS.json) run by run, in the order they ran: each
length's pool and select (median ms), and each build's median select per length over its runs."""
import glob
import json
import statistics
import sys

runs = sorted(glob.glob(sys.argv[1] + "/bd-*.json"), key=lambda f: int(f.rsplit("-", 1)[1][:-5]))
selects = {}
for f in runs:
    name = f.rsplit("/", 1)[1].split("-")[1]
    rows = json.load(open(f))["rows"]
    print(name, " ".join("%dK %.3f/%.3f" % (r["len"] // 1024, r["pool"]["median_ms"], r["select"]["median_ms"])
                         for r in rows))
    for r in rows:
        selects.setdefault(name, {}).setdefault(r["len"], []).append(r["select"]["median_ms"])
for name, by_len in selects.items():
    print(name, "median select:", " ".join("%dK %.4f" % (n // 1024, statistics.median(v)) for n, v in by_len.items()))
