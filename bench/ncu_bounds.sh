#!/bin/bash
# What bounds the sm_90a stage 1 against FlashMLA's kernel: Nsight Compute
# counters of the stage-1 kernels of one call each (ncu's cache control:
# cold L2) at 256 x 8192 and, for two query tokens, 64 x 8192, FlashMLA on
# the same bf16 KV in the same process. Shared-memory traffic is counted in
# data-bank accesses (4 bytes each) and in wavefronts by kind: ld / st from
# threads, gmma (wgmma's operand reads). On the H200, with FlashMLA's sources
# in artifacts/flashmla (built here if needed):
#   OUT=... bash bench/ncu_bounds.sh
# ONLY=<regex> runs only the cases whose heading matches (FlashMLA is built
# only for a case that runs it). Writes $OUT/ncu-bounds.log (one line per kernel under a heading per case)
# and $OUT/ncu-bounds.csv (ncu's raw output, all cases).
set -u
export MLA_ARTIFACTS=${MLA_ARTIFACTS:-artifacts} PYTHONPATH=${PYTHONPATH:-python}
FM=${FM:-artifacts/flashmla}
flashmla() {  # builds FlashMLA's dense decode in $FM once
  (cd "$FM" && python3 -c "import flash_mla" 2>/dev/null) ||
    (cd "$FM" && python3 setup_dense.py build_ext --inplace > /tmp/flashmla-build.log 2>&1) ||
    { echo "FlashMLA build failed"; tail -5 /tmp/flashmla-build.log; return 1; }
}
M=gpu__time_duration.sum,sm__cycles_elapsed.avg,dram__bytes_read.sum
M=$M,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,l1tex__data_bank_reads.sum,l1tex__data_bank_writes.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum
M=$M,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum
M=$M,l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum
: > "$OUT/ncu-bounds.csv"
run() {  # name, probe_kernels arguments...
  local name=$1; shift
  [[ "$name" =~ ${ONLY:-.} ]] || return 0
  [[ " $* " != *" --flashmla "* ]] || flashmla || return 1
  echo "== $name" | tee -a "$OUT/ncu-bounds.log"
  ncu --csv --metrics "$M" --kernel-name regex:"stage1|splitkv" --launch-skip 2 \
      --launch-count 2 python3 bench/probe_kernels.py "$@" > /tmp/ncu.csv 2> /tmp/ncu.err ||
    { echo "ncu failed"; tail -5 /tmp/ncu.err /tmp/ncu.csv; }
  cat /tmp/ncu.csv >> "$OUT/ncu-bounds.csv"
  python3 bench/probe_kernels.py --summarize /tmp/ncu.csv | sed -E 's/<.*>+//' |
    tee -a "$OUT/ncu-bounds.log"
}
run "bf16 sm_90a + FlashMLA, 256 x 8192" --format bf16 --shapes 256x8192 \
  --spec deepseek_r1_decode_bf16_sm90a --flashmla "$FM"
run "fp8 sm_90a (K as register A), 256 x 8192" --format fp8 --shapes 256x8192 \
  --spec deepseek_r1_decode_fp8_qp16_sm90a
run "fp8 sm_90a --wgmma-smem-a, 256 x 8192" --format fp8 --shapes 256x8192 \
  --spec deepseek_r1_decode_fp8_qp16_smema_sm90a
run "fp8 sm_90 (mma.sync), 256 x 8192" --format fp8 --shapes 256x8192 \
  --spec deepseek_r1_decode_fp8_qp16
run "fp8 e4m3 sm_90a (fp8 Q and P), 256 x 8192" --format fp8 --shapes 256x8192 \
  --spec deepseek_r1_decode_fp8_qp8_sm90a
run "mxfp4 sm_90a (bf16 tile), 256 x 8192" --format mxfp4 --shapes 256x8192 \
  --spec deepseek_r1_decode_mxfp4_sm90a
run "mxfp4 e4m3 sm_90a (fp8 Q and P), 256 x 8192" --format mxfp4 --shapes 256x8192 \
  --spec deepseek_r1_decode_mxfp4_qp8_sm90a
run "fp8 sm_90a MTP 2 + FlashMLA MTP 2, 64 x 8192" --format fp8 --q-seq-len 2 \
  --shapes 64x8192 --spec deepseek_r1_decode_fp8_qp16_sm90a_mtp2 --flashmla "$FM"
run "fp8 sm_90a --wgmma-smem-a MTP 2, 64 x 8192" --format fp8 --q-seq-len 2 \
  --shapes 64x8192 --spec deepseek_r1_decode_fp8_qp16_smema_sm90a_mtp2
run "fp8 sm_90 one token, 64 x 8192" --format fp8 --shapes 64x8192 \
  --spec deepseek_r1_decode_fp8_qp16
