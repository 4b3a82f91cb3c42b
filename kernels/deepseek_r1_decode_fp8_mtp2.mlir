// Multi-token prediction: 2 query tokens per sequence (1 verified draft),
// causal as FlashMLA's causal=True (token i sees keys [0, L - 2 + i]). One
// stage-1 program per (sequence, split) holds both tokens' 32 rows
// (block_m = 32: two MFMA row blocks share every K and V fragment, and
// each token's rows are masked at its own causal edge); gfx950 KV loop
// 52.3 wave-instructions per KV token against 2 x 38.1 for one program per
// token.
// Same as deepseek_r1_decode_fp8.mlir otherwise (its comments give the choices):
//
//   mla-compile kernels/deepseek_r1_decode_fp8_mtp2.mlir --chip=...
mla.decode @deepseek_r1_decode_fp8_mtp2 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 2,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_m = 32, block_n = 64, num_warps = 4   // splits absent: auto
}
