// 128 query heads (DeepSeek-R1 with tensor parallelism 1) against the one
// latent KV head: each (sequence, split) runs 8 stage-1 programs of 16
// heads, adjacent in launch order, which walk the same KV tiles and share
// them through L2.
// Same as deepseek_r1_decode_fp8_qp16.mlir otherwise (its comments give the choices):
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp16_h128.mlir --chip=...
mla.decode @deepseek_r1_decode_fp8_qp16_h128 {
  num_heads = 128, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f16,
  block_n = 64, num_warps = 8           // splits absent: auto
}
