"""From a half-tile timeline trace (timeline_phases.py says its format): the share of SM 0's
time spent with P CTAs waiting on a product and E CTAs in their exponentials, and how long
one product or one exponential phase lasts against what runs beside it.
Usage: timeline_overlap.py TRACE"""
import collections, sys

from timeline_phases import load

a = [r for r in load(sys.argv[1]) if (r[0] >> 48) == 0]
# intervals: kind P (product wait), E (exps), O (other)
iv = []
for r in a:
    nn = min((r[0] >> 32) & 0xffff, 20)
    for c in range(nn):
        st = r[3 + 6 * c: 9 + 6 * c]
        iv += [(st[0], st[1], 'P'), (st[1], st[2], 'E'), (st[2], st[3], 'P'), (st[4], st[5], 'E')]
ev = []
for s, e, k in iv:
    ev += [(s, 1, k), (e, -1, k)]
ev.sort()
cnt = collections.Counter(); hist = collections.Counter(); last = ev[0][0]
for t, d, k in ev:
    hist[(cnt['P'], cnt['E'])] += t - last
    cnt[k] += d; last = t
tot = sum(hist.values())
print("time share by (#CTAs in product, #CTAs in exps):")
for k in sorted(hist): 
    if hist[k] / tot > 0.005: print("  P=%d E=%d  %.1f%%" % (k[0], k[1], 100 * hist[k] / tot))
pe = sum(v for k, v in hist.items() if k[0] > 0 and k[1] > 0); p = sum(v for k, v in hist.items() if k[0] > 0); e = sum(v for k, v in hist.items() if k[1] > 0)
print("some product %.1f%%, some exps %.1f%%, both %.1f%%, neither %.1f%%" % (100*p/tot, 100*e/tot, 100*pe/tot, 100*hist[(0,0)]/tot))
import random
random.seed(1)

def conc(t):
    """CTAs in their exponentials and in a product at time t."""
    return sum(1 for s, e, k in iv if s <= t < e and k == 'E'), sum(1 for s, e, k in iv if s <= t < e and k == 'P')

def durations(kind, title):
    """400 sampled phases of a kind, their length by what runs beside them at their midpoint."""
    byc = collections.defaultdict(list)
    for s, e, k in random.sample([x for x in iv if x[2] == kind], 400):
        byc[conc(s + (e - s) // 2)].append(e - s)
    print(title)
    for k in sorted(byc):
        v = byc[k]
        if len(v) >= 5: print("  E=%d P=%d n=%3d mean %.0f min %d" % (k[0], k[1], len(v), sum(v) / len(v), min(v)))

durations('E', "exps phase duration by (#E, #P) at its midpoint (incl. itself):")
durations('P', "product phase duration by (#E, #P):")
