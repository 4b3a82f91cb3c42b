#!/bin/bash
# Two questions about sm_90a's e4m3 path (deepseek_r1_decode_fp8_qp8_sm90a,
# docs/PerformanceLog.md "fp8 Q and P on sm_90a's e4m3 wgmma"):
#
#   mtp2       Is fp8 MTP 2 on the e4m3 form within issue #17's 1.3x of one
#              token? Its spec (_mtp2: two warpgroups on 128-token tiles)
#              and a one-warpgroup variant on 64-token tiles (_mtp2_n64),
#              checked and timed at 64 x 8192 by serving_h200.py beside
#              the chosen specs.
#   conflicts  Where its 25 M shared-memory bank conflicts come from: Nsight
#              Compute's source counters of one stage-1 call (256 x 8192,
#              splits 1), per SASS instruction, the instructions with
#              excess shared wavefronts first.
#   stalls     What its warps wait for: Nsight's stall reasons per issued
#              instruction (at least 0.05 cycles) and the issue rate, one
#              stage-1 call at 256 x 8192, splits 1.
#   small      Where a small call's warps wait, line by line: the sampled
#              SASS lines of one stage-1 call at 4 x 1024 (the launcher's
#              splits), this spec and sm_90a's qp16 spec
#              (bench/ncu_stall_lines.py).
#
#   bash bench/probe_qp8_sm90a.sh prepare            # here, after make artifacts
#   OUT=... bash bench/probe_qp8_sm90a.sh mtp2|conflicts|stalls|small   # on the H200
set -u
S=deepseek_r1_decode_fp8_qp8_sm90a
A=${MLA_ARTIFACTS:-artifacts}
case "${1:-}" in
prepare)
  BUILD=${BUILD:-build}; PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
  mkdir -p "$BUILD/variants"
  for v in n64:64:4; do
    n=${v%%:*} v=${v#*:}; bn=${v%%:*} w=${v#*:}
    sed -e "s/@$S /@${S}_mtp2_$n /" -e 's/q_seq_len = 1,/q_seq_len = 2,/' \
      -e "s/block_n = 64, num_warps = 4 /block_m = 32, block_n = $bn, num_warps = $w /" \
      kernels/$S.mlir > "$BUILD/variants/${S}_mtp2_$n.mlir"
    grep -q "q_seq_len = 2" "$BUILD/variants/${S}_mtp2_$n.mlir" || { echo "sed missed"; exit 1; }
    "$BUILD/bin/mla-compile" "$BUILD/variants/${S}_mtp2_$n.mlir" --chip=sm_90a --ptxas="$PTXAS" \
      -o "$A" || exit 1
  done
  exit 0;;
mtp2|conflicts|stalls|small) ;;
*) echo "usage: $0 prepare|mtp2|conflicts|stalls|small" >&2; exit 2;;
esac
export MLA_ARTIFACTS=$A PYTHONPATH=${PYTHONPATH:-python}
if [ "$1" = mtp2 ]; then
  python3 bench/serving_h200.py --extra-specs ${S}_mtp2,${S}_mtp2_n64 --json "$OUT/mtp2.json"
  exit $?
fi
if [ "$1" = small ]; then
  for s in $S deepseek_r1_decode_fp8_qp16_sm90a; do
    timeout 200 ncu --section SourceCounters --section WarpStateStats --kernel-name regex:stage1 \
      --launch-skip 2 --launch-count 1 -o "$OUT/small-$s" python3 bench/probe_kernels.py \
      --format fp8 --shapes 4x1024 --spec $s > /dev/null 2>&1 || echo "ncu failed on $s"
    ncu -i "$OUT/small-$s.ncu-rep" --page source --csv --print-source sass > "$OUT/small-$s.csv"
    echo "== $s"
    python3 bench/ncu_stall_lines.py "$OUT/small-$s.csv" 22
    rm -f "$OUT/small-$s.ncu-rep"
  done
  exit 0
fi
if [ "$1" = stalls ]; then
  M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
  M=$M,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum
  timeout 300 ncu --csv --metrics "$M" --kernel-name regex:stage1 --launch-skip 2 --launch-count 1 \
    python3 bench/probe_kernels.py --format fp8 --shapes 256x8192 --splits 1 --spec $S \
    > "$OUT/stalls.csv" 2> "$OUT/stalls.err" || { echo "ncu failed"; tail -3 "$OUT/stalls.err"; }
  python3 bench/probe_kernels.py --summarize "$OUT/stalls.csv" | tr ' ' '\n' | grep = |
    sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active//' |
    awk -F= '{v = $2; gsub(",", "", v); if ($1 ~ /__/ || v + 0 >= 0.05) print}'
  exit 0
fi
timeout 300 ncu --section SourceCounters --kernel-name regex:stage1 --launch-skip 2 --launch-count 1 \
  -o "$OUT/conflicts" python3 bench/probe_kernels.py --format fp8 --shapes 256x8192 --splits 1 \
  --spec $S > "$OUT/conflicts.log" 2>&1 || { echo "ncu failed"; tail -5 "$OUT/conflicts.log"; }
ncu -i "$OUT/conflicts.ncu-rep" --page source --csv --print-source sass > "$OUT/conflicts-sass.csv" 2>&1
python3 - "$OUT/conflicts-sass.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next(i for i, r in enumerate(rows) if "Source" in r)
h, body = rows[head], rows[head + 1:]
print("columns:", " | ".join(h))
key = next((c for c in h if "Shared Excessive" in c), None)
if key is None:
    sys.exit("no excessive-wavefront column")
k, src = h.index(key), h.index("Source")
num = lambda r: float((r[k] or "0").replace(",", "")) if len(r) > k else 0.0
tot = sum(num(r) for r in body)
print(f"{key}: total {tot:.0f}")
for r in sorted(body, key=num, reverse=True)[:25]:
    print(f"{num(r):12.0f}  {r[0]}  {r[src]}")
PY
