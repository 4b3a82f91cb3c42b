"""The SASS lines where a kernel's warps were sampled most, from Nsight
Compute's source page (a report taken with --section SourceCounters
--section WarpStateStats, exported by `ncu -i REPORT --page source --csv
--print-source sass`): share of all samples, address, instruction and its
two largest stall reasons.

    python3 bench/ncu_stall_lines.py SASS.csv [COUNT]
"""
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next(i for i, r in enumerate(rows) if "Source" in r)
h, body = rows[head], rows[head + 1:]
k = h.index("Warp Stall Sampling (All Samples)")
reasons = [c for c in h if c.startswith("stall_") and "Not Issued" not in c]
num = lambda r, c: float((r[h.index(c)] or "0").replace(",", "")) if len(r) > h.index(c) else 0.0
tot = sum(num(r, h[k]) for r in body)
print("total samples", tot)
for r in sorted(body, key=lambda r: num(r, h[k]), reverse=True)[:int(sys.argv[2]) if len(sys.argv) > 2 else 25]:
    top = sorted(((num(r, c), c[6:]) for c in reasons), reverse=True)[:2]
    print(f"{num(r, h[k]) / tot * 100:5.1f}%  {r[0][-5:]}  {r[1][:60]:60s} {top}")
