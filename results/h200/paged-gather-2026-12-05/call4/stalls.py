"""Where a kernel's warps wait, from ncu's source page per SASS instruction (argv[1]: the CSV, or
its .xz, of `ncu -i REP --page source --csv --print-source sass`): the sampled stalls summed by
opcode; the waits on each mbarrier (a TRYWAIT and the branch after it that reads its result,
named by the barrier's shared-memory offset); the instructions that hold the most samples.
Shares are of all samples: the sm90 attention's 12 warps are 4 producer and 8 consumer ones."""
import csv
import lzma
import re
import sys
from collections import Counter


def number(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


path = sys.argv[1]
lines = (lzma.open if path.endswith(".xz") else open)(path, "rt", errors="replace").read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"Address'))
table = list(csv.reader(lines[start:]))
head = table[0]
rows = [r for r in table[1:] if len(r) == len(head)]
src = head.index("Source")
samples = head.index("Warp Stall Sampling (All Samples)")
total = sum(number(r[samples]) for r in rows) or 1.0


def share(r):
    return 100 * number(r[samples]) / total


by_op = Counter()
for r in rows:
    by_op[re.sub(r"^@!?U?P\w+\s+", "", r[src].strip()).split(" ")[0]] += share(r)
print("samples %d; by opcode:" % total)
for op, s in by_op.most_common(12):
    print("  %-28s %5.1f %%" % (op, s))

waits = Counter()
for i, r in enumerate(rows):
    m = re.search(r"TRYWAIT P(\d), \[[^\]]*\+(0x[0-9a-f]+)\]", r[src])
    if m:
        branch = next((x for x in rows[i + 1:i + 8] if re.match(r"@!P%s\s+BRA" % m.group(1), x[src].strip())), None)
        waits[m.group(2)] += share(r) + (share(branch) if branch else 0)
print("mbarrier waits (shared offset: share):")
for off, s in sorted(waits.items()):
    if s >= 0.05:
        print("  %s %5.2f %%" % (off, s))

print("top instructions:")
for r in sorted(rows, key=lambda r: -number(r[samples]))[:20]:
    print("  %5.2f %%  %s  %s" % (share(r), r[0][-6:], r[src].strip()[:80]))
