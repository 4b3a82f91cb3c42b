// DeepSeek-R1 MLA decode, fp8 KV with Q and P quantised to fp8 (qp_type, as
// the task's reference quantises Q for AITER's a8w8 kernel), for sm_90a:
// S^T = K Q^T runs on wgmma's e4m3 form (m64nNk32) straight from the fp8 KV
// tile, which the tensor memory accelerator copies into wgmma's 64-byte
// swizzle; O^T = V^T P^T reads V^T MN-major, which the e4m3 form does not
// take, so V (512 of the 576 columns) is converted to f16 in shared memory
// and P's fp8 values go in as f16 (exact). Opt-in, like every qp8 spec: ~3e-2
// relative error against ~2.5e-3 for the f16 Q / P path (docs/Design.md,
// "sm_90a: wgmma").
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp8_sm90a.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_fp8_qp8_sm90a {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f8E4M3FN,
  block_n = 64, num_warps = 4           // splits absent: auto
}
