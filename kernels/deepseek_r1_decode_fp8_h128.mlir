// 128 query heads (DeepSeek-R1 with tensor parallelism 1) against the one
// latent KV head: each (sequence, split) runs 4 stage-1 programs of 32
// heads (block_m = 32: two MFMA row blocks share every K and V fragment;
// gfx950 KV loop 52.1 wave-instructions per KV token for 32 rows against
// 2 x 38.1 for two 16-row programs, same occupancy), adjacent in launch
// order, which walk the same KV tiles and share them through L2.
// Same as deepseek_r1_decode_fp8.mlir otherwise (its comments give the choices):
//
//   mla-compile kernels/deepseek_r1_decode_fp8_h128.mlir --chip=...
mla.decode @deepseek_r1_decode_fp8_h128 {
  num_heads = 128, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_m = 32, block_n = 64, num_warps = 4   // splits absent: auto
}
