#!/usr/bin/env python3
"""Executed vs static wave-instructions per KV token of every AMD spec, on
the ISA emulator (docs/Emulator.md). No GPU: runs here.

For each spec and stage-1 variant, two runs of 4 sequences whose lengths
differ by 4096 tokens with the same split count; the difference of the
executed stage-1 counts over the difference of tokens is the marginal
(KV-loop) cost, comparable to the compile report's static KV-loop figure.

  python3 bench/emulator_counters.py [--build build] [--json out.json] [--only NAME]
"""
import argparse, json, re, subprocess, sys

SPECS = [("deepseek_r1_decode_fp8", "gfx950"), ("deepseek_r1_decode_bf16", "gfx950"),
         ("deepseek_r1_decode_fp8_qp8", "gfx950"), ("deepseek_r1_decode_fp8_mi300x", "gfx942"),
         ("deepseek_r1_decode_bf16_mi300x", "gfx942"),
         ("deepseek_r1_decode_fp8_qp8_mi300x", "gfx942"),
         # Serving shapes (issue 17): causal MTP 2 (masked stage 1 only) and
         # 128 heads (8 row groups per sequence).
         ("deepseek_r1_decode_fp8_mtp2", "gfx950"), ("deepseek_r1_decode_fp8_h128", "gfx950"),
         ("deepseek_r1_decode_fp8_mi300x_mtp2", "gfx942"),
         ("deepseek_r1_decode_fp8_mi300x_h128", "gfx942"),
         # Paged KV (issue 17): a block table of 64-row pages, a token list.
         ("deepseek_r1_decode_fp8_paged64", "gfx950"), ("deepseek_r1_decode_fp8_kvindices", "gfx950"),
         ("deepseek_r1_decode_fp8_mi300x_paged64", "gfx942"),
         ("deepseek_r1_decode_fp8_mi300x_kvindices", "gfx942"),
         # mxfp4 KV (issue 18): packed e2m1 rows, e8m0 block scales.
         ("deepseek_r1_decode_mxfp4", "gfx950"), ("deepseek_r1_decode_mxfp4_mi300x", "gfx942")]
VARIANTS = {"mask_free": (4096, 8192), "masked": (4095, 8191)}


def run(build, spec, chip, length):
    out = subprocess.run([f"{build}/bin/mla-run", f"kernels/{spec}.mlir", f"--chip={chip}",
                          f"--kv-lens={','.join([str(length)] * 4)}", "--stats", "--seed=1",
                          "--tolerance=5e-2"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{spec} {chip} {length}: {out.stdout}{out.stderr}")
    text = out.stdout
    stage1 = re.search(r"stage 1   @(\S+)", text).group(1)
    block = text[text.index("  " + stage1 + "\n"):]
    total = int(re.search(r"wave-instructions (\d+):", block).group(1))
    conflicts = int(re.search(r"LDS bank-conflict cycles (\d+)", block).group(1))
    static = float(re.search(r"static KV loop: ([0-9.]+)", block).group(1))
    splits = int(re.search(r"splits    (\d+)", text).group(1))
    err = float(re.search(r"reference: ([0-9.e+-]+)", text).group(1))
    return dict(stage1=stage1, total=total, conflicts=conflicts, static=static,
                splits=splits, error=err, tokens=4 * length)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--json")
    ap.add_argument("--only", help="run the specs whose name contains this")
    args = ap.parse_args()
    rows = []
    print("| spec | chip | variant | splits | static KV loop | executed per KV token "
          "(marginal) | LDS bank-conflict cycles per KV token | rel. error |")
    print("|---|---|---|---|---|---|---|---|")
    for spec, chip in SPECS:
        if args.only and args.only not in spec:
            continue
        # Several query tokens: only a masked stage 1 exists.
        variants = {k: v for k, v in VARIANTS.items() if "_mtp" not in spec or k == "masked"}
        for variant, (short, long) in variants.items():
            a, b = run(args.build, spec, chip, short), run(args.build, spec, chip, long)
            while a["splits"] != b["splits"]:  # step on to two lengths with one split count
                short, long = long, long + 4096
                a, b = b, run(args.build, spec, chip, long)
            assert a["stage1"] == b["stage1"] and a["stage1"].endswith(variant), (a, b)
            d = b["tokens"] - a["tokens"]
            row = dict(spec=spec, chip=chip, variant=variant, splits=a["splits"],
                       static=a["static"], executed=(b["total"] - a["total"]) / d,
                       conflicts=(b["conflicts"] - a["conflicts"]) / d,
                       error=max(a["error"], b["error"]))
            rows.append(row)
            print(f"| {spec} | {chip} | {variant} | {row['splits']} | {row['static']:.1f} | "
                  f"{row['executed']:.1f} | {row['conflicts']:.2f} | {row['error']:.1e} |",
                  flush=True)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
