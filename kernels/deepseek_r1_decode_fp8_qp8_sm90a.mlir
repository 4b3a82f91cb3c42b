// DeepSeek-R1 MLA decode, fp8 KV with Q and P quantised to fp8 (qp_type, as
// the task's reference quantises Q for AITER's a8w8 kernel), for sm_90a:
// both products on wgmma's e4m3 form (m64nNk32) with no 16-bit copy of the
// KV tile. The tensor memory accelerator copies the fp8 tile into wgmma's
// 64-byte swizzle (one buffer, two programs per SM; the first tile sent
// before Q's copy, each next one as soon as this one has been read);
// S^T = K Q^T reads it as it is; V^T, which the e4m3 form takes K-major
// only, is transposed out of it by byte permutes while S^T runs; O^T =
// V^T P^T reads V^T and P as fp8. Opt-in, like every qp8 spec: ~3e-2
// relative error against ~2e-3 for the f16 Q / P path (docs/Design.md,
// "fp8 Q and P on the e4m3 form"; times in docs/Performance.md).
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
