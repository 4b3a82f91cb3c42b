// DeepSeek-R1 MLA decode, mxfp4 KV (issue #18) on 32-token tiles: the spec
// python/mla_torch.py loads on the H200.
//
// The same kernel as deepseek_r1_decode_mxfp4.mlir with half the tile: the
// decoded bf16 tile (the largest shared-memory buffer) halves, so 3
// programs share an SM instead of 1 (71 KiB of shared memory each against
// 142 KiB). Measured on the H200 (docs/PerformanceLog.md, 2026-12-02): geomean
// of the task's 8 shapes 112.1 us against 122.6, faster on 6 of them
// (256 x 8192: 1120 against 1371 us), slower at 4 x 8192 and 32 x 1024.
// CDNA's 16-column MFMAs split a 32-token tile over 2 waves only: for
// gfx950 / gfx942 take deepseek_r1_decode_mxfp4.mlir (or num_warps = 2;
// the lowering says so otherwise).
//
//   mla-compile kernels/deepseek_r1_decode_mxfp4_n32.mlir --chip=sm_90 -o out
mla.decode @deepseek_r1_decode_mxfp4_n32 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f4E2M1FN, out_type = bf16,
  kv_scale = "block32_e8m0",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_n = 32, num_warps = 4           // splits absent: auto
}
