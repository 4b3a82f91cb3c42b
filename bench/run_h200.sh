#!/usr/bin/env bash
# Everything the H200 checks and times in one device call (see
# docs/Performance.md, "Method"). Run from the repository root with the
# artifacts that `make artifacts` wrote (and, for the seed port and the
# embedded-launcher example, artifacts/seed_triton_nv.py and
# artifacts/embed/embed-cuda copied there):
#
#   OUT=/tmp/out bash bench/run_h200.sh
#
# Writes $OUT/log.txt and $OUT/results.json, which holds every step's JSON
# under its name (h200: checks + timings, seed port beside ours; fast:
# custom_kernel with and without mla_torch_fast; floor: the read floor;
# wgmma, serving, paged, mxfp4, qmag, l2pace, idleslots, single): two
# files, as the device tool returns at most eight. Prints a summary last. Exits
# non-zero if any check fails.
set -u
OUT=${OUT:-/tmp/mla-out}
mkdir -p "$OUT"
RAW=$(mktemp -d) # the steps' JSON files until results.json bundles them
trap 'rm -rf "$RAW"' EXIT
export MLA_ARTIFACTS=${MLA_ARTIFACTS:-artifacts} PYTHONPATH=python PYTHONUNBUFFERED=1
status=0
summary=()
step() { # name, command...
  local name=$1
  shift
  echo "== $name" | tee -a "$OUT/log.txt"
  if "$@" >>"$OUT/log.txt" 2>&1; then
    summary+=("ok    $name")
  else
    summary+=("FAIL  $name")
    status=1
  fi
}
baseline=()
[ -f artifacts/seed_triton_nv.py ] && baseline=(--baseline artifacts/seed_triton_nv.py)
# custom_kernel's remembered calls in C++ (python/mla_torch_fast.cpp), built
# for this torch first, so that every step below runs custom_kernel as a
# caller with it does; then checked and timed against the Python path alone.
step "build mla_torch_fast" python3 python/build_torch_fast.py
step "mla_torch_fast against the Python path" python3 bench/probe_torch_fast.py --reps 30 \
  --json "$RAW/fast.json"
# (a) + (b): 30 checks (fp8 and bf16 KV) and the 8 task shapes timed.
step "checks + timing" python3 bench/bench_h200.py "${baseline[@]}" --reps 30 --json "$RAW/h200.json"
# What any fp8 decode must take on the task shapes under this method: one
# launch that only reads the KV bytes, beside ours (issue 19's bound).
step "read floor" python3 bench/probe_read_floor.py --reps 30 --json "$RAW/floor.json"
# custom_kernel's two sm_90a fp8 specs (e4m3x2_db for calls of 16K KV
# tokens or more, qp16 for shorter ones) each on every check case.
step "e4m3x2_db spec checks" env MLA_SPEC_FP8=deepseek_r1_decode_fp8_e4m3x2_db_sm90a \
  python3 bench/bench_h200.py --formats fp8 --skip-timing
step "qp16 sm_90a spec checks" env MLA_SPEC_FP8=deepseek_r1_decode_fp8_qp16_sm90a \
  python3 bench/bench_h200.py --formats fp8 --skip-timing
# custom_kernel's fallbacks for fp8 KV where no sm_90a spec is compiled:
# sm_90's qp16 spec, then the bf16 Q and P one.
step "sm_90 qp16 spec checks" env MLA_SPEC_FP8=deepseek_r1_decode_fp8_qp16 \
  python3 bench/bench_h200.py --formats fp8 --skip-timing
step "default fp8 spec checks" env MLA_SPEC_FP8=deepseek_r1_decode_fp8 \
  python3 bench/bench_h200.py --formats fp8 --skip-timing
# The fp8 Q / P spec (128-token tiles since issue 21's gfx950 work): the
# fp8 checks at the CPU tests' tolerance for it, and under memcheck.
step "qp8 spec checks" env MLA_SPEC_FP8=deepseek_r1_decode_fp8_qp8 \
  python3 bench/bench_h200.py --formats fp8 --skip-timing --tol 5e-2
step "memcheck (qp8 spec)" env MLA_SPEC_FP8=deepseek_r1_decode_fp8_qp8 \
  compute-sanitizer --tool memcheck --error-exitcode 3 python3 bench/bench_h200.py --memcheck-case --tol 5e-2
# fp8 Q at any magnitude (the _qbig / _qsmall variants make artifacts compiles).
step "qp8 specs, Q times 2^10 and 2^-12" python3 bench/q_magnitude_h200.py \
  --specs deepseek_r1_decode_fp8_qp8,deepseek_r1_decode_fp8_qp8_sm90a,deepseek_r1_decode_fp8_e4m3x2_sm90a,deepseek_r1_decode_fp8_e4m3x2_db_sm90a \
  --json "$RAW/qmag.json"
# Bad inputs (issue #16's table, the rows Python answers): an error naming
# the argument, nothing launched.
step "bad inputs refused" python3 bench/check_inputs.py
# Malformed indptr contents (decreasing, negative, past the cache, output
# rows outside out, a lying host copy): no access outside the buffers, the
# bad rows defined, the others correct; validate=True refuses each.
step "memcheck (malformed indptrs)" compute-sanitizer --tool memcheck --error-exitcode 3 \
  python3 bench/indptr_battery.py
# Out-of-bounds accesses on a ragged batch with a zero-length sequence.
step "memcheck (ragged)" compute-sanitizer --tool memcheck --error-exitcode 3 \
  python3 bench/bench_h200.py --memcheck-case
# The C launcher through the generated header (one split and several).
if [ -x artifacts/embed/embed-cuda ]; then
  step "memcheck embed-cuda 4x1024" compute-sanitizer --tool memcheck --error-exitcode 3 \
    artifacts/embed/embed-cuda 4 1024
  step "embed-cuda 64x1000" artifacts/embed/embed-cuda 64 1000
fi
# Serving shapes (issue 17): MTP 2 and 128 heads checked against a causal
# float32 reference and timed beside q_seq_len 1 and, when
# artifacts/flashmla holds FlashMLA's sources (../shared/anchors/flashmla),
# FlashMLA built here from source (about 100 s).
flashmla=()
if [ -f artifacts/flashmla/setup_dense.py ]; then
  ls artifacts/flashmla/flash_mla/cuda.*.so >/dev/null 2>&1 ||
    step "build FlashMLA" bash -c "cd artifacts/flashmla && python3 setup_dense.py build_ext --inplace"
  flashmla=(--flashmla artifacts/flashmla)
fi
# Schedule variants compiled into the artifacts beside the chosen specs
# (e.g. block_m = 32 copies, named <spec>_m32), checked and timed too.
extra=$(cd artifacts && ls *_m32.json 2>/dev/null | sed 's/\.json$//' | paste -sd, -)
step "serving shapes" python3 bench/serving_h200.py "${flashmla[@]}" "${baseline[@]}" --extra-specs "$extra" \
  --reps 30 --json "$RAW/serving.json"
step "memcheck (serving shapes)" compute-sanitizer --tool memcheck --error-exitcode 3 \
  python3 bench/serving_h200.py --memcheck-case
# (fp8 MTP 2 runs on two warpgroups that share shared memory: racecheck.)
step "racecheck (serving shapes)" compute-sanitizer --tool racecheck --error-exitcode 3 \
  python3 bench/serving_h200.py --memcheck-case
# Paged KV (issue 17): block tables of 64-row pages and token lists against
# the float32 reference, malformed tables, and page 64 timed beside
# contiguous KV and FlashMLA's paged decode.
step "paged KV" python3 bench/paged_h200.py "${flashmla[@]}" --reps 30 --json "$RAW/paged.json"
step "memcheck (paged KV)" compute-sanitizer --tool memcheck --error-exitcode 3 \
  python3 bench/paged_h200.py --memcheck-case
# (e4m3x2_db's block-table twin, mla_with_kvcache's choice from 16K KV tokens, runs
# two KV buffers on mbarriers)
step "racecheck (paged KV)" compute-sanitizer --tool racecheck --error-exitcode 3 \
  python3 bench/paged_h200.py --memcheck-case
# mxfp4 KV (issue 18): the task's third format against the float32
# reference on the dequantised cache, timed beside fp8 (and the schedule
# variants make artifacts compiles).
mx=$(cd artifacts && ls deepseek_r1_decode_mxfp4*.json 2>/dev/null | sed 's/\.json$//' | paste -sd, -)
step "mxfp4 KV" python3 bench/mxfp4_h200.py --variants "$mx" --reps 30 --json "$RAW/mxfp4.json"
step "memcheck (mxfp4 KV)" compute-sanitizer --tool memcheck --error-exitcode 3 \
  python3 bench/mxfp4_h200.py --memcheck-case
step "racecheck (mxfp4 KV)" compute-sanitizer --tool racecheck --error-exitcode 3 \
  python3 bench/mxfp4_h200.py --memcheck-case
# sm_90a's wgmma path (issue 19) beside sm_90's mma.sync one and FlashMLA:
# the bf16 specs checked (task shapes, edge lengths, MTP 2) and timed, one
# case under memcheck and racecheck.
# (mxfp4's sm_90a spec is the mxfp4 step's default.)
wg=$(cd artifacts && ls *_sm90a.json 2>/dev/null | grep -v mxfp4 | sed 's/\.json$//' | paste -sd, -)
if [ -n "$wg" ]; then
  step "wgmma (sm_90a)" python3 bench/wgmma_h200.py "${flashmla[@]}" --specs "$wg" --reps 30 \
    --json "$RAW/wgmma.json"
  step "memcheck (sm_90a)" compute-sanitizer --tool memcheck --error-exitcode 3 \
    python3 bench/wgmma_h200.py --specs "$wg" --memcheck-case
  step "racecheck (sm_90a)" compute-sanitizer --tool racecheck --error-exitcode 3 \
    python3 bench/wgmma_h200.py --specs "$wg" --memcheck-case
fi
# The fp8 sm_90a specs' loop pace with the KV L2-resident (block-table
# twins on aliased pages) beside their DRAM-bound time, 256 x 8192.
if [ -f artifacts/deepseek_r1_decode_fp8_e4m3x2_sm90a_paged64.json ]; then
  step "L2 pace (fp8 sm_90a)" python3 bench/probe_l2_pace.py --json "$RAW/l2pace.json"
fi
# Whether the program slots 256 x 8192 leaves idle are capacity: the fp8
# sm_90a specs at 248 / 256 / 264 sequences of 8192.
step "idle slots (fp8 sm_90a)" python3 bench/probe_idle_slots.py --json "$RAW/idleslots.json"
# The single launch for small batches (issue 19 item 2): stage 1 combining
# its splits in one cluster against stage 2, checked and timed.
step "single launch" python3 bench/single_launch_h200.py --reps 30 --json "$RAW/single.json"
step "memcheck (single launch)" compute-sanitizer --tool memcheck --error-exitcode 3 \
  python3 bench/single_launch_h200.py --memcheck-case
step "racecheck (single launch)" compute-sanitizer --tool racecheck --error-exitcode 3 \
  python3 bench/single_launch_h200.py --memcheck-case
# Host time of a call and its layers.
step "host time" python3 bench/probe_host.py
# Every split count of every task shape beside the cost model's choice,
# timed as the task times a call (queued; graph replays after a
# synchronised flush had favoured other counts on the H100).
step "split sweep" python3 bench/sweep_splits.py --queued
grep -E "^ +[0-9]+/[0-9]+|paged checks|mxfp4 checks|refusal|^geomean (fp8|deepseek)|paged 64 /|pgahead|malformed table|^[0-9]+x8192 (fp8|bf16): contiguous|^[0-9]+x[0-9]+: call|serving checks|MTP 2 /|FlashMLA =|_m32:|bf16 task|^task [0-9]|^[0-9]+x8192 .*q_seq_len|geomean|memory bandwidth|failed|memcheck case|^time |^memcheck |ERROR SUMMARY|RACECHECK SUMMARY|^mtp |relative error|chosen|bad inputs refused|indptr battery|^FAIL|^aliased|^distinct|^check deepseek|^forward |^reverse " "$OUT/log.txt" |
  grep -v " ok$" | tail -40
python3 - "$RAW" "$OUT/results.json" <<'PY'
import glob, json, os, sys
raw, out = sys.argv[1:]
with open(out, "w") as f:
    json.dump({os.path.basename(p)[:-5]: json.load(open(p))
               for p in sorted(glob.glob(os.path.join(raw, "*.json")))}, f, indent=1)
PY
printf '%s\n' "${summary[@]}"
exit $status
