#!/usr/bin/env bash
# The consumer side of docs/Embedding.md, as a test: install this build into
# a scratch prefix, then configure, build and run the examples against that
# installed package only (find_package(MLACompiler) + mla_add_kernels).
#   build-examples.sh <build dir> <source dir>
set -euo pipefail
build=$1 src=$2
prefix=$build/examples/prefix
rm -rf "$prefix" "$build/examples/embed-hip" "$build/examples/embed-cuda"
cmake --install "$build" --prefix "$prefix" >/dev/null
echo "installed into $prefix"

# embed-hip: always (Debian's libamdhip64-dev); with no AMD GPU it reports
# the missing device, launches nothing and exits 0.
cmake -G Ninja -S "$src/examples/embed-hip" -B "$build/examples/embed-hip" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/examples/embed-hip"
out=$("$build/examples/embed-hip/embed-hip")
echo "$out"
grep -q -E "nothing launched|\(ok\)" <<<"$out"
if grep -q "nothing launched" <<<"$out"; then
  grep -q "MLA_ERROR_NO_DEVICE" <<<"$out"
fi

# embed-cuda: where a CUDA toolkit is present. Built only: the machine that
# builds it may have no driver (run it on the H200; docs/Embedding.md).
if [ -e /usr/local/cuda/include/cuda.h ]; then
  cmake -G Ninja -S "$src/examples/embed-cuda" -B "$build/examples/embed-cuda" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build/examples/embed-cuda"
  test -x "$build/examples/embed-cuda/embed-cuda"
  echo "built $build/examples/embed-cuda/embed-cuda"
else
  echo "no /usr/local/cuda: embed-cuda not built"
fi
