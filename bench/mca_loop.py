#!/usr/bin/env python3
"""llvm-mca's estimate of the stage-1 KV loop of AMD specs (issue #21 item 5).
No GPU: runs here, on the assembly mla-compile writes beside the code object.

For each spec and stage-1 kernel: the KV loop is the region from a label to
the last branch back to it that holds the most MFMA instructions (the compile
report's rule, lib/Compile/ResourceReport.cpp). Its instructions go to
`llvm-mca -mcpu=<chip>` (LLVM's AMDGPU scheduling model: one wave issuing in
order, no memory latency, no other waves), which gives cycles per iteration;
divided by the tile's tokens: cycles per KV token for one wave. The waves of
a workgroup run on the CU's 4 SIMDs at once, so a CU moves a tile's bytes in
about that many cycles if nothing waits on memory; the bytes per cycle a CU
then asks for are set against what the chip's bandwidth gives each CU.

  python3 bench/mca_loop.py [--build build] [--json out.json] [--only NAME]
"""
import argparse, json, os, re, subprocess, sys, tempfile

SPECS = [("deepseek_r1_decode_fp8", "gfx950"), ("deepseek_r1_decode_bf16", "gfx950"),
         ("deepseek_r1_decode_fp8_qp8", "gfx950"), ("deepseek_r1_decode_fp8_mi300x", "gfx942"),
         ("deepseek_r1_decode_bf16_mi300x", "gfx942"),
         ("deepseek_r1_decode_fp8_qp8_mi300x", "gfx942")]
# Product sheets: HBM bandwidth, compute units, peak engine clock.
CHIPS = {"gfx950": dict(tbps=8.0, cus=256, ghz=2.4),
         "gfx942": dict(tbps=5.3, cus=304, ghz=2.1)}
MCA = "/usr/lib/llvm-22/bin/llvm-mca"


def kernels(asm):
    """{kernel name: its lines} from an .s file."""
    out, cur = {}, None
    for line in asm.splitlines():
        m = re.match(r"^([A-Za-z_][\w.]*):\s*(;.*)?$", line)
        if m and not m.group(1).startswith(".L"):
            cur = m.group(1)
            out[cur] = []
        elif cur:
            out[cur].append(line)
            if line.strip().startswith(".Lfunc_end"):
                cur = None
    return out


def kv_loop(lines):
    """The instructions of the loop with the most MFMAs."""
    labels = {}
    for i, line in enumerate(lines):
        m = re.match(r"^(\.L\w+):", line)
        if m:
            labels[m.group(1)] = i
    best = None
    for i, line in enumerate(lines):
        m = re.match(r"^\s+s_cbranch_\w+\s+(\.L\w+)", line)
        if not m or m.group(1) not in labels or labels[m.group(1)] >= i:
            continue
        start = labels[m.group(1)]
        # The last branch back to this header closes the loop.
        if any(re.match(r"^\s+s_cbranch_\w+\s+" + re.escape(m.group(1)) + r"\b", l)
               for l in lines[i + 1:]):
            continue
        body = [l.split(";")[0].rstrip() for l in lines[start + 1:i + 1]]
        body = [l for l in body if l.strip() and not l.strip().startswith((".", "s_nop 0 ;"))
                and not re.match(r"^\.L\w+:", l.strip())]
        mfma = sum(1 for l in body if "v_mfma" in l)
        if best is None or mfma > best[0]:
            best = (mfma, body)
    return best


def mca(chip, body):
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(body) + "\n")
        path = f.name
    try:
        out = subprocess.run([MCA, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={chip}",
                              "-iterations=100", path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    if out.returncode != 0:
        sys.exit(f"llvm-mca: {out.stderr}")
    cycles = int(re.search(r"Total Cycles:\s+(\d+)", out.stdout).group(1))
    return cycles / 100.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--json")
    ap.add_argument("--only")
    args = ap.parse_args()
    rows = []
    print("| spec | chip | kernel | instructions | MFMA | cycles / iteration | tokens | "
          "cycles per KV token | bytes per cycle per CU asked | at full bandwidth |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for spec, chip in SPECS:
            if args.only and args.only not in spec:
                continue
            out = subprocess.run([f"{args.build}/bin/mla-compile", f"kernels/{spec}.mlir",
                                  f"--chip={chip}", "-o", tmp], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{spec}: {out.stdout}{out.stderr}")
            manifest = json.load(open(f"{tmp}/{spec}.json"))
            tokens = manifest["block_n"]
            kv_bytes = 576 * (2 if "bf16" in spec else 1)
            c = CHIPS[chip]
            share = c["tbps"] * 1e12 / c["cus"] / (c["ghz"] * 1e9)
            for name, lines in kernels(open(f"{tmp}/{spec}.s").read()).items():
                if "stage1" not in name:
                    continue
                found = kv_loop(lines)
                if not found:
                    continue
                mfma, body = found
                cyc = mca(chip, body)
                per_token = cyc / tokens
                asked = kv_bytes / per_token
                row = dict(spec=spec, chip=chip, kernel=name, instructions=len(body), mfma=mfma,
                           cycles=cyc, tokens=tokens, cycles_per_token=per_token,
                           bytes_per_cycle_asked=asked, bytes_per_cycle_share=share)
                rows.append(row)
                print(f"| {spec} | {chip} | {name.split('_stage1_')[1]} | {len(body)} | {mfma} | "
                      f"{cyc:.0f} | {tokens} | {per_token:.2f} | {asked:.0f} | {share:.1f} |")
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
