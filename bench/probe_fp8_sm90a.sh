#!/bin/bash
# Three questions about fp8 sm_90a's stage 1 (deepseek_r1_decode_fp8_qp16_sm90a,
# bank-bound: docs/Performance.md, "what bounds the sm_90a loops, counted"):
#
#   residency  Do its converted-tile stores cost more with two programs per
#              SM than with one? The spec at 132 x 8192 and 264 x 8192 with
#              one split (one and two programs per SM), and an 8-warp,
#              128-token variant (_w8, one program per SM), under Nsight
#              Compute (bank accesses, wavefronts, instructions) and timed.
#   loadcache  Does a cache qualifier on its tile-ahead loads spare the L1
#              round trip of the fp8 bytes? The spec's PTX with every
#              ld.global.v4.b32 qualified (_na L1::no_allocate, _nc nc,
#              _cg cg, _cs cs, _lu L1::evict_first; _pf: each followed by
#              an L2 prefetch one tile further; fp8 MTP 2 with
#              L1::no_allocate and _pf), timed twice interleaved; ncu
#              bank accesses for the base, _na and _cg.
#   stalls     Where the warps wait: Nsight's stall reasons per issued
#              instruction for fp8 MTP 2 (64 x 8192), the one-token fp8
#              spec (256 x 8192) and bf16 MTP 2 (64 x 8192), all sm_90a.
#   l2ahead    Are the short calls (one program per SM, a few tiles each)
#              waiting on the tile-ahead loads' DRAM latency? The masked
#              stage 1 with thread 0 sending an L2 bulk prefetch
#              (cp.async.bulk.prefetch.L2, 36 KiB) of the tile after each
#              whole tile it loads, where that tile lies whole before the
#              sequence's end: _bp always, _bpg only where the grid has
#              at most %nsmid programs (one per SM). Checked and timed
#              beside the spec by bench/wgmma_h200.py (8 task shapes).
#
# LLVM 22's NVPTX back end emits none of these qualifiers for a plain load
# (it drops !nontemporal), so the variants are PTX edits, not compiler
# output: an experiment, not a spec.
#
#   bash bench/probe_fp8_sm90a.sh prepare        # here, after make artifacts
#   OUT=... bash bench/probe_fp8_sm90a.sh residency|loadcache|stalls|l2ahead   # on the H200
set -u
S=deepseek_r1_decode_fp8_qp16_sm90a
A=${MLA_ARTIFACTS:-artifacts}
case "${1:-}" in
prepare)
  BUILD=${BUILD:-build}; PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
  mkdir -p "$BUILD/variants"
  finish_variant() {  # spec, suffix: assemble build/variants/spec_suffix.ptx, write its manifest
    PTXAS="$PTXAS" PTX="$BUILD/variants/${1}_$2.ptx" bash bench/snapshot_spec.sh "$1" "$2" > /dev/null 2>&1 ||
      { echo "ptxas failed on ${1}_$2"; exit 1; }
  }
  sed -e "s/@$S /@${S}_w8 /" -e 's/block_n = 64, num_warps = 4 /block_n = 128, num_warps = 8 /' \
    kernels/$S.mlir > "$BUILD/variants/${S}_w8.mlir"
  "$BUILD/bin/mla-compile" "$BUILD/variants/${S}_w8.mlir" --chip=sm_90a --ptxas="$PTXAS" -o "$A" || exit 1
  for v in $S:na:L1::no_allocate $S:nc:nc $S:cg:cg $S:cs:cs $S:lu:L1::evict_first \
           ${S}_mtp2:na:L1::no_allocate; do
    s=${v%%:*} v=${v#*:}; n=${v%%:*} q=${v#*:}
    sed -e "s/${s}_/${s}_${n}_/g" -e "s/ld\.global\.v4\.b32/ld.global.$q.v4.b32/" "$A/$s.ptx" \
      > "$BUILD/variants/${s}_$n.ptx"
    finish_variant "$s" "$n"
  done
  # _pf: each tile-ahead load of the KV loop (after the loop's first
  # conversion, before its next barrier) followed by an L2 prefetch of the
  # same bytes one tile further on.
  for v in ${S}_mtp2:73728 $S:36864; do
    s=${v%%:*} stride=${v#*:}
    python3 - "$A" "$s" "$stride" "$BUILD/variants/${s}_pf.ptx" <<'PY'
import re, sys
a, s, stride, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines, state = [], 0
for l in open(f"{a}/{s}.ptx").read().split("\n"):
    if ".entry" in l:
        state = 0
    if state == 0 and "cvt.rn.f16x2.e4m3x2" in l:
        state = 1
    if state == 1 and "bar.sync" in l:
        state = 2
    lines.append(l.replace(s + "_", s + "_pf_"))
    if state == 1 and "ld.global.v4.b32" in l:
        m = re.search(r"\[(%rd\d+)(\+(-?\d+))?\]", l)
        lines.append(f"\tprefetch.global.L2 [{m.group(1)}+{int(m.group(3) or 0) + stride}];")
open(out, "w").write("\n".join(lines))
PY
    finish_variant "$s" pf
  done
  # _bp / _bpg (l2ahead): the prefetch after the first load of each whole-tile
  # block (the prologue's and the loop's), gated on the tile after it lying
  # whole before the bound (the block's remaining-rows register >= 128).
  for v in bp:0 bpg:1; do
    n=${v%%:*} gated=${v#*:}
    python3 - "$A/$S.ptx" "$S" "$n" "$gated" "$BUILD/variants/${S}_$n.ptx" <<'PY'
import re, sys
src, spec, suffix, gated, out_path = sys.argv[1:]
tile = 64 * 576
lines, out, entry, sites = open(src).read().split("\n"), [], None, 0
for i, l in enumerate(lines):
    l = l.replace(spec + "_", f"{spec}_{suffix}_")
    out.append(l)
    if ".entry" in l:
        entry = "masked" if "stage1_masked" in l else None
    if entry == "masked" and l.strip() == "{":
        out += ["\t.reg .pred %pbp<4>;", "\t.reg .b32 %rbp<6>;",
                "\tmov.u32 %rbp0, %tid.x;", "\tsetp.eq.u32 %pbp0, %rbp0, 0;"]
        if gated == "1":
            out += ["\tmov.u32 %rbp1, %nctaid.x;", "\tmov.u32 %rbp2, %nctaid.y;",
                    "\tmul.lo.u32 %rbp1, %rbp1, %rbp2;", "\tmov.u32 %rbp2, %nctaid.z;",
                    "\tmul.lo.u32 %rbp1, %rbp1, %rbp2;", "\tmov.u32 %rbp3, %nsmid;",
                    "\tsetp.le.u32 %pbp1, %rbp1, %rbp3;", "\tand.pred %pbp0, %pbp0, %pbp1;"]
        entry = "body"
    m = re.match(r"\s*ld\.global\.v4\.b32\s+\{[^}]*\}, \[(%rd\d+)\];", l)
    if entry == "body" and m and i + 1 < len(lines) and f"[{m.group(1)}+64]" in lines[i + 1]:
        # thread 0's first chunk is its tile's first byte; the block's
        # remaining rows: the 'setp.lt.s64 %p, %rdX, 64' that chose it
        rem = next(mm.group(1) for k in range(len(out) - 1, max(0, len(out) - 40), -1)
                   if (mm := re.match(r"\s*setp\.lt\.s64\s+%p\d+, (%rd\d+), 64;", out[k])))
        out += [f"\tsetp.ge.s64 %pbp2, {rem}, 128;", "\tand.pred %pbp2, %pbp2, %pbp0;",
                f"\t@%pbp2 cp.async.bulk.prefetch.L2.global [{m.group(1)}+{tile}], {tile};"]
        sites += 1
assert sites == 2, f"expected the prologue's and the loop's whole-tile loads, found {sites}"
open(out_path, "w").write("\n".join(out))
PY
    finish_variant "$S" "$n"
  done
  exit 0;;
l2ahead)
  export MLA_ARTIFACTS=$A PYTHONPATH=${PYTHONPATH:-python}
  python3 bench/wgmma_h200.py --specs $S,${S}_bp,${S}_bpg --json "$OUT/l2ahead.json"
  exit $?;;
residency|loadcache|stalls) ;;
*) echo "usage: $0 prepare|residency|loadcache|stalls|l2ahead" >&2; exit 2;;
esac
export MLA_ARTIFACTS=$A PYTHONPATH=${PYTHONPATH:-python}
M=gpu__time_duration.sum,sm__cycles_elapsed.avg,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,l1tex__data_bank_reads.sum,l1tex__data_bank_writes.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
ncu_run() {  # metrics, csv name, probe_kernels arguments...: the stage-1 kernel of one call
  local metrics=$1 csv=$2
  shift 2
  timeout 200 ncu --csv --metrics "$metrics" --kernel-name regex:stage1 --launch-skip 2 --launch-count 1 \
    python3 bench/probe_kernels.py "$@" > "$OUT/$csv.csv" 2> "$OUT/$csv.err" ||
    { echo "ncu failed" >&2; tail -3 "$OUT/$csv.err" >&2; }
  python3 bench/probe_kernels.py --summarize "$OUT/$csv.csv" | tr ' ' '\n' | grep =
}
ncu_case() {  # spec, shape, csv name
  ncu_run "$M" "$3" --format fp8 --shapes "$2" --splits 1 --spec "$1"
}
if [ "$1" = stalls ]; then
  stalls() {  # name, probe_kernels arguments...
    local name=$1; shift
    echo "== $name"
    # reasons of at least 0.05 cycles per issued instruction
    ncu_run 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,sm__cycles_elapsed.avg' \
      "stalls-$name" "$@" |
      sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active//' |
      awk -F= '{v = $2; gsub(",", "", v); if (v + 0 >= 0.05) print}'
  }
  stalls fp8-mtp2-sm90a-64x8192 --format fp8 --q-seq-len 2 --shapes 64x8192 --spec ${S}_mtp2
  stalls fp8-sm90a-256x8192 --format fp8 --shapes 256x8192 --spec $S
  stalls bf16-sm90a-mtp2-64x8192 --format bf16 --q-seq-len 2 --shapes 64x8192 \
    --spec deepseek_r1_decode_bf16_sm90a_mtp2
elif [ "$1" = residency ]; then
  M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  M=$M,smsp__sass_inst_executed_op_shared_st.sum,smsp__sass_inst_executed_op_shared_ld.sum
  M=$M,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum
  for s in $S ${S}_w8; do
    for sh in 132x8192 264x8192; do
      echo "== $s $sh splits 1"
      timeout 150 python3 bench/probe_kernels.py --time --format fp8 --shapes $sh --splits 1 --spec $s | tail -1
      ncu_case $s $sh residency-$s-$sh
    done
  done
else
  M=$M,l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum
  for round in 1 2; do
    for v in "" _na _nc _cg _cs _lu _pf; do
      echo "== $S$v round $round: $(timeout 100 python3 bench/probe_kernels.py --time --format fp8 \
        --shapes 256x8192,64x8192 --spec $S$v | grep call | tr '\n' ' ')"
    done
    for v in "" _na _pf; do
      echo "== ${S}_mtp2$v round $round: $(timeout 100 python3 bench/probe_kernels.py --time --format fp8 \
        --q-seq-len 2 --shapes 64x8192 --spec ${S}_mtp2$v | grep call | tr '\n' ' ')"
    done
  done
  for v in "" _na _cg; do
    echo "== ncu $S$v 256x8192"
    ncu_case $S$v 256x8192 ncu-loadcache$v
  done
fi
