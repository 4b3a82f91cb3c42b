#!/usr/bin/env python3
"""Opcode histogram of a kernel's loops from `cuobjdump -sass` text.

    cuobjdump -sass -fun KERNEL x.cubin > k.sass
    python3 bench/sass_loops.py k.sass [--top N]

Every backward branch closes a loop: its body is the instructions from the
branch's target label to the branch. Prints the loops, longest first, and
the opcode counts (without predicate and modifiers after the first dot
kept as the mnemonic's family, e.g. HGMMA, UIADD3, LDS) of the longest N.
"""
import argparse
import collections
import re


def parse(path):
    ins, labels = [], {}
    for line in open(path):
        m = re.match(r"\s*(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m:
            labels[hex(int(m.group(1), 16))] = len(ins)  # BRA 0x460
            ins.append(m.group(2))
    return ins, labels


def opcode(text):
    t = re.sub(r"^@!?U?P[T0-9]+\s+", "", text)
    return t.split()[0].split(".")[0] if t else "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sass")
    ap.add_argument("--top", type=int, default=2)
    a = ap.parse_args()
    ins, labels = parse(a.sass)
    print(f"instructions {len(ins)}")
    loops = []
    for i, t in enumerate(ins):
        m = re.search(r"BRA\s+(?:`\()?(\.L_x_\d+|0x[0-9a-f]+)", t)
        target = m and (m.group(1) if m.group(1).startswith(".") else
                        hex(int(m.group(1), 16)))
        if target in labels and labels[target] <= i:
            loops.append((i - labels[target] + 1, labels[target], i))
    loops.sort(reverse=True)
    for n, s, e in loops[:8]:
        print(f"loop [{s}, {e}]: {n} instructions")
    for n, s, e in loops[: a.top]:
        c = collections.Counter(opcode(t) for t in ins[s : e + 1])
        print(f"-- loop [{s}, {e}], {n} instructions:")
        print("   " + ", ".join(f"{k} {v}" for k, v in c.most_common()))


if __name__ == "__main__":
    main()
