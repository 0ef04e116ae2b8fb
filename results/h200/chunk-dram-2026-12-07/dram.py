#!/usr/bin/env python3
"""Reads the log of call*/run.sh's ncu step (--csv --page raw, mixed with fp2bench's own output)
and prints one line a pool or select launch, in launch order: the kernel, its grid, its time
(us), the DRAM bytes it read and wrote (MB) and their sum over its time (TB/s)."""
import csv
import sys

rows, header = [], None
for rec in csv.reader(line for line in open(sys.argv[1]) if line.startswith('"')):
    if rec[0] == "ID":
        header = rec
    elif header and len(rec) == len(header) and rec[0].isdigit():
        rows.append(dict(zip(header, rec)))

def number(r, name):
    return float(r[name].replace(",", ""))

print("launch kernel grid time_us read_MB write_MB TB/s")
for r in rows:
    t = number(r, "gpu__time_duration.sum") / 1e3  # ns to us (--print-units base)
    rd = number(r, "dram__bytes_read.sum") / 1e6
    wr = number(r, "dram__bytes_write.sum") / 1e6
    name = "pool" if "pool_kernel" in r["Kernel Name"] else "select"
    print("%s %s %s %.1f %.1f %.1f %.2f" % (r["ID"], name, r["launch__grid_size"], t, rd, wr, (rd + wr) / t))  # MB/us = TB/s
