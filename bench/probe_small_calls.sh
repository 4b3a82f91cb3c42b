#!/bin/bash
# Where a short fp8 call's fixed cost goes. The split sweep (1326be9's H200
# run, 4 x 8192) fits time = F + tiles a program x t with t = 1.6 us and
# F = 12 us, against 4.4 us for two empty kernels: the short task shapes
# (4 x 8192, 32 x 1024: four tiles a program, one program per SM) spend
# more than half their time outside the KV loop. This takes, for the
# default fp8 spec's stage 1 and stage 2 at those shapes, Nsight Compute's
# duration at the card's own clocks and its warp-state samples per SASS
# line (a report each, its source page as CSV, the lines summed by
# bench/ncu_stall_lines.py), and the empty-kernel floor and the call's
# graph-replay time without the profiler.
#
#   OUT=... bash bench/probe_small_calls.sh     # on the H200, after make artifacts
set -u
OUT=${OUT:-/tmp/mla-out}
mkdir -p "$OUT"
export MLA_ARTIFACTS=${MLA_ARTIFACTS:-artifacts} PYTHONPATH=python
log=$OUT/small-calls.log
python3 bench/probe_kernels.py --floor | tee -a "$log"
python3 bench/probe_kernels.py --format fp8 --shapes 4x8192,32x1024,4x1024 --time | tee -a "$log"
for shape in 4x8192 32x1024; do
  for k in stage1 stage2; do
    rep=$OUT/small-$shape-$k
    # The third call of the shape (probe_kernels runs three, two kernels each).
    ncu --clock-control none --import-source no --section SourceCounters \
        --section WarpStateStats --section SpeedOfLight --section LaunchStats \
        --section Occupancy --kernel-name regex:$k --launch-skip 2 --launch-count 1 \
        -f -o "$rep" python3 bench/probe_kernels.py --format fp8 --shapes $shape \
        > "$rep.out" 2>&1 || { echo "ncu failed: $shape $k"; tail -3 "$rep.out"; }
    echo "== $shape $k" | tee -a "$log"
    ncu --import "$rep.ncu-rep" --print-summary none --page details 2>/dev/null |
      grep -E "Duration|Elapsed Cycles|SM Frequency|Registers Per|Achieved Occupancy|Grid Size|Block Size|Warp Cycles Per Issued|Issued Ipc" |
      tee -a "$log"
    ncu --import "$rep.ncu-rep" --page source --csv --print-source sass > "$rep.csv" 2>/dev/null
    python3 bench/ncu_stall_lines.py "$rep.csv" 30 | tee -a "$log"
  done
done
