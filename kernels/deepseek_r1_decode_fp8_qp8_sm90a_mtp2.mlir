// DeepSeek-R1 MLA decode, fp8 KV with Q and P quantised to fp8, MTP 2
// (q_seq_len = 2, causal as FlashMLA's causal=True), for sm_90a's e4m3 wgmma
// (issues #17, #19): deepseek_r1_decode_fp8_qp8_sm90a's loop (the fp8 tile
// by the tensor memory accelerator, read by S^T = K Q^T as it is, V^T
// transposed out of it by byte permutes, O^T = V^T P^T on e4m3) with both
// tokens' 32 rows in one program (block_m = 32: N = 32, the KV tile read
// once for both tokens). Two warpgroups on 128-token tiles: each scores 64
// of the tokens and accumulates half of O^T's 512 columns; one warpgroup on
// 64-token tiles needs 255 registers and, at 128.5 KiB, runs one program per
// SM: 1.17x slower on the H200 (docs/Performance.md). Opt-in with the qp8
// family (MLA_SPEC_FP8=deepseek_r1_decode_fp8_qp8_sm90a picks it for
// q_seq_len 2): ~3e-2 relative error against ~2e-3 for the f16 Q / P specs.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp8_sm90a_mtp2.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_fp8_qp8_sm90a_mtp2 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 2,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f8E4M3FN,
  block_m = 32, block_n = 128, num_warps = 8   // splits absent: auto
}
