#!/usr/bin/env bash
# Compiles the spec variants bench/q_magnitude_h200.py checks: for each
# spec file, `<name>_qbig` (softmax scale / 2^10) and `<name>_qsmall`
# (softmax scale * 2^12), with an optional suffix after them (`_prev` for
# an earlier compiler's build); MLA_COMPILE_FLAGS, when set, goes to every
# compile (e.g. --e4m3-double-buffer for the _db specs).
#
#   [PTXAS=path] [MLA_COMPILE_FLAGS=...] bash bench/q_magnitude_specs.sh <mla-compile> <chip> <out dir> <suffix or ""> spec.mlir...
set -euo pipefail
compiler=$1 chip=$2 out=$3 suffix=${4:-}
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for spec in "$@"; do
  name=$(sed -n 's/^mla.decode @\([A-Za-z0-9_]*\) .*/\1/p' "$spec")
  grep -q 'softmax_scale = 0.0416666679 : f32' "$spec" ||
    { echo "$spec: no softmax_scale = 0.0416666679 : f32 to rescale" >&2; exit 1; }
  for v in "_qbig 4.06901054e-05" "_qsmall 170.666672"; do
    set -- $v
    sed -e "s/^mla.decode @$name /mla.decode @$name$1$suffix /" \
        -e "s/softmax_scale = 0.0416666679 : f32/softmax_scale = $2 : f32/" \
        "$spec" > "$tmp/$name$1$suffix.mlir"
    "$compiler" "$tmp/$name$1$suffix.mlir" --chip="$chip" ${PTXAS:+--ptxas="$PTXAS"} \
      ${MLA_COMPILE_FLAGS:-} -o "$out" > /dev/null
  done
done
