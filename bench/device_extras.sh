#!/usr/bin/env bash
# What bench/run_h200.sh runs beside our kernels, put into the artifacts
# folder so that one carried folder holds a complete full run (run by
# `make device-extras`, after `make artifacts` and `make test`):
#   - the seed port, ../shared/anchors/seed_triton_nv.py (the bench's
#     --baseline), where that folder exists;
#   - the embedded-launcher example, built by `make test` into
#     $BUILD/examples/embed-cuda (test/examples/build-examples.sh);
#   - FlashMLA's dense decode sources (../shared/anchors/flashmla), where
#     FLASHMLA_GIT and CUTLASS_GIT name the git dirs the search tool's
#     fetch gave; run_h200.sh builds them on the device (about 100 s).
# Prints what is there and what is missing; exits 0 either way (each
# missing piece only drops its steps or columns from the run).
#   bash bench/device_extras.sh [BUILD] [ARTIFACTS]
set -u
build=${1:-build} out=${2:-artifacts}
anchors=../shared/anchors
mkdir -p "$out"
if [ -f "$anchors/seed_triton_nv.py" ]; then
  cp "$anchors/seed_triton_nv.py" "$out/" && echo "seed port: $out/seed_triton_nv.py"
else
  echo "seed port: $anchors/seed_triton_nv.py not found (the seed columns are left out)"
fi
if [ -x "$build/examples/embed-cuda/embed-cuda" ]; then
  mkdir -p "$out/embed" && cp "$build/examples/embed-cuda/embed-cuda" "$out/embed/" &&
    echo "embed-cuda: $out/embed/embed-cuda"
else
  echo "embed-cuda: not built ($build/examples/embed-cuda; make test builds it where CUDA is installed)"
fi
if [ -f "$out/flashmla/setup_dense.py" ]; then
  echo "FlashMLA: $out/flashmla (assembled before)"
elif [ -n "${FLASHMLA_GIT:-}" ] && [ -n "${CUTLASS_GIT:-}" ]; then
  bash "$anchors/flashmla/assemble.sh" "$FLASHMLA_GIT" "$CUTLASS_GIT" "$out/flashmla"
else
  echo "FlashMLA: set FLASHMLA_GIT and CUTLASS_GIT (git dirs of deepseek-ai/FlashMLA and NVIDIA/cutlass, the search tool's fetch) to assemble $out/flashmla"
fi
du -sh "$out" | sed 's/^/artifacts in all (the device tool carries 64 MiB): /'
