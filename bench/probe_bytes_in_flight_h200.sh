#!/bin/bash
# Whether more bytes in flight bring the e4m3 loops to DRAM's pace on the
# H200 (issue 19; docs/Design.md, "More bytes in flight"): the fp8 sm_90a
# specs beside their `_db` (two tiles in flight, --e4m3-double-buffer) and
# `_l2a` (an L2 prefetch of the tile after next, --kv-l2-ahead) twins, one
# process, then again in the reverse order; then the idle-slot and L2-pace
# probes. The H100 runs these loops at its copy rate already (2.9 against
# 3.0 TB/s at 256 x 8192), so it cannot answer: on any other card this
# stops before timing.
# The next step is in docs/Performance.md ("More bytes in flight"): `_db`
# clearly ahead makes e4m3x2_db the fp8 entry's default; `_l2a` behind
# removes the option.
#
#   OUT=... bash bench/probe_bytes_in_flight_h200.sh    # after make artifacts
set -u
OUT=${OUT:-/tmp/mla-out}
mkdir -p "$OUT"
export MLA_ARTIFACTS=${MLA_ARTIFACTS:-artifacts} PYTHONPATH=python PYTHONUNBUFFERED=1
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $name"
case "$name" in
*H200*) ;;
*) echo "not an H200: nothing timed" && exit 0 ;;
esac
p=deepseek_r1_decode_fp8_
specs=${p}qp16_sm90a,${p}qp8_sm90a,${p}qp8_db_sm90a,${p}e4m3x2_sm90a,${p}e4m3x2_db_sm90a
specs=$specs,${p}e4m3x2_l2a_sm90a,${p}qp8_l2a_sm90a
reversed=$(echo "$specs" | tr , '\n' | tac | paste -sd, -)
status=0
python3 bench/wgmma_h200.py --specs "$specs" --reps 20 --json "$OUT/bif-forward.json" \
  >"$OUT/bif-forward.log" 2>&1 || status=1
grep -E "geomean|256x8192:|failed" "$OUT/bif-forward.log" | tail -4
python3 bench/wgmma_h200.py --specs "$reversed" --reps 20 --no-check \
  --json "$OUT/bif-reverse.json" >"$OUT/bif-reverse.log" 2>&1 || status=1
grep -E "geomean|256x8192:" "$OUT/bif-reverse.log" | tail -3
python3 bench/probe_idle_slots.py >"$OUT/bif-idle-slots.log" 2>&1 || status=1
grep -E "^forward|^reverse" "$OUT/bif-idle-slots.log"
python3 bench/probe_l2_pace.py >"$OUT/bif-l2-pace.log" 2>&1 || status=1
grep -E "^aliased|^distinct" "$OUT/bif-l2-pace.log"
exit $status
