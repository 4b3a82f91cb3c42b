// Multi-token prediction: 2 query tokens per sequence (1 verified draft),
// causal as FlashMLA's causal=True (token i sees keys [0, L - 2 + i]). Each
// (sequence, token, split) is one stage-1 program of 16 head rows; both
// tokens' programs walk the same KV tiles side by side and share them
// through L2.
// Same as deepseek_r1_decode_fp8_mi300x.mlir otherwise (its comments give the choices):
//
//   mla-compile kernels/deepseek_r1_decode_fp8_mi300x_mtp2.mlir --chip=...
mla.decode @deepseek_r1_decode_fp8_mi300x_mtp2 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FNUZ, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 2,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_n = 64, num_warps = 4           // splits absent: auto
}
