"""Where a kernel's warps wait, from ncu's source page per SASS instruction (argv[1]: the CSV of
`ncu -i REP --page source --csv --print-source sass`): the sampled stalls summed by opcode, then
the instructions that hold the most samples, each with its share."""
import csv
import re
import sys
from collections import Counter


def number(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


lines = open(sys.argv[1], errors="replace").read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"#') or l.startswith('"Address'))
table = list(csv.reader(lines[start:]))
head, rows = table[0], table[1:]
src = next(i for i, h in enumerate(head) if h == "Source")
samples = next(i for i, h in enumerate(head) if h.startswith("Warp Stall Sampling (All"))
total = sum(number(r[samples]) for r in rows if len(r) > samples) or 1.0
by_op = Counter()
for r in rows:
    if len(r) > samples:
        op = re.sub(r"^@!?U?P\w+\s+", "", r[src].strip()).split(" ")[0]
        by_op[op] += number(r[samples])
print("samples %d; by opcode:" % total)
for op, n in by_op.most_common(14):
    print("  %-28s %5.1f %%" % (op, 100 * n / total))
print("top instructions:")
for r in sorted((r for r in rows if len(r) > samples), key=lambda r: -number(r[samples]))[:22]:
    print("  %5.1f %%  %s  %s" % (100 * number(r[samples]) / total, r[0], r[src].strip()[:80]))
