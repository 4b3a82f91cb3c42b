#!/usr/bin/env bash
# Compiles the spec variants the benches time beside the specs in kernels/
# (`make artifacts` runs it): each line of the table below derives one
# variant from kernels/deepseek_r1_decode_<spec>.mlir by renaming its
# `mla.decode @` symbol to deepseek_r1_decode_<variant>, applying the
# line's sed expression where it has one, and compiling the result for the
# line's chip with its mla-compile flags. The derived spec files stay in
# <variant dir> (bench/q_magnitude_specs.sh compiles one of them again).
# A line whose rename or sed expression matches nothing in its spec stops
# the script: a spec edited under the table must not give a variant that
# silently equals its source. MLA_COMPILE_FLAGS, when set, goes to every
# compile; MLA_KERNELS names another folder of specs
# (test/tools/spec-variants.test uses both).
#
#   [PTXAS=path] [MLA_COMPILE_FLAGS=...] [MLA_KERNELS=dir] bash bench/spec_variants.sh <mla-compile> <variant dir> <out dir>
set -euo pipefail
compiler=$1 dir=$2 out=$3
kernels=${MLA_KERNELS:-$(cd "$(dirname "$0")/.." && pwd)/kernels}
mkdir -p "$dir" "$out"

# spec | variant | chip | mla-compile flags | sed expression after the rename
table=$(cat <<'EOF'
# An mxfp4 schedule variant that bench/mxfp4_h200.py times beside the
# specs: 8 warps.
mxfp4 | mxfp4_w8 | sm_90 | | s/num_warps = 4 /num_warps = 8 /
# sm_90a with S^T reading the converted fp8 K tile from shared memory
# (--wgmma-smem-a; the path before register A): the fp8 one-token and
# MTP 2 specs, which bench/run_h200.sh's wgmma step checks and times
# beside the defaults.
fp8_qp16_sm90a      | fp8_qp16_smema_sm90a      | sm_90a | --wgmma-smem-a |
fp8_qp16_sm90a_mtp2 | fp8_qp16_smema_sm90a_mtp2 | sm_90a | --wgmma-smem-a |
# sm_90a's e4m3 specs double-buffered with V^T in place
# (--e4m3-double-buffer: 1-2 % slower on the H100, faster on the H200):
# e4m3x2_db is custom_kernel's fp8 default for calls of 16K KV tokens or
# more (python/mla_torch.py); bench/run_h200.sh's wgmma step checks and
# times both beside the others.
fp8_qp8_sm90a    | fp8_qp8_db_sm90a    | sm_90a | --e4m3-double-buffer |
fp8_e4m3x2_sm90a | fp8_e4m3x2_db_sm90a | sm_90a | --e4m3-double-buffer |
# The paged fp8 one-token spec with each tile's page entry loaded a tile
# before its bytes (--page-entries-ahead: faster on the H100, slower on
# the H200), which bench/paged_h200.py checks and times beside the
# default.
fp8_qp16_sm90a_paged64 | fp8_qp16_pgahead_sm90a_paged64 | sm_90a | --page-entries-ahead |
# Block-table twins (pages of 64 rows): the e4m3 and two-term ones, which
# bench/probe_l2_pace.py times beside the paged default with every
# sequence's pages aliased into a few L2-resident ones (each spec's
# compute pace at 256 x 8192 without DRAM's bound), and e4m3x2_db's, which
# mla_with_kvcache takes for fp8 calls of 16K KV tokens or more as
# custom_kernel takes e4m3x2_db (python/mla_torch.py, _MIN_KV_TOKENS;
# bench/paged_h200.py checks it).
fp8_qp8_sm90a    | fp8_qp8_sm90a_paged64       | sm_90a | | s/page_size = 1,/page_size = 64, kv_layout = "block_table",/
fp8_e4m3x2_sm90a | fp8_e4m3x2_sm90a_paged64    | sm_90a | | s/page_size = 1,/page_size = 64, kv_layout = "block_table",/
fp8_e4m3x2_sm90a | fp8_e4m3x2_db_sm90a_paged64 | sm_90a | --e4m3-double-buffer | s/page_size = 1,/page_size = 64, kv_layout = "block_table",/
EOF
)

trim() { local x=$1; x=${x#"${x%%[![:space:]]*}"}; printf '%s' "${x%"${x##*[![:space:]]}"}"; }

while IFS='|' read -r s v chip flags expr; do
  s=$(trim "$s")
  case $s in ''|'#'*) continue ;; esac
  v=$(trim "$v") chip=$(trim "$chip") flags=$(trim "$flags") expr=$(trim "${expr:-}")
  src=$kernels/deepseek_r1_decode_$s.mlir dst=$dir/deepseek_r1_decode_$v.mlir
  sed -e "s/^mla.decode @deepseek_r1_decode_$s /mla.decode @deepseek_r1_decode_$v /" "$src" > "$dst"
  grep -q "^mla.decode @deepseek_r1_decode_$v " "$dst" ||
    { echo "$src: no 'mla.decode @deepseek_r1_decode_$s ' to rename to $v" >&2; exit 1; }
  if [ -n "$expr" ]; then
    sed -i.renamed -e "$expr" "$dst"
    if cmp -s "$dst" "$dst.renamed"; then
      echo "$src: '$expr' changes nothing (variant $v)" >&2; exit 1
    fi
    rm -f "$dst.renamed"
  fi
  # shellcheck disable=SC2086 # flags are words
  "$compiler" "$dst" --chip="$chip" ${PTXAS:+--ptxas="$PTXAS"} $flags \
    ${MLA_COMPILE_FLAGS:-} -o "$out" < /dev/null
done <<< "$table"
