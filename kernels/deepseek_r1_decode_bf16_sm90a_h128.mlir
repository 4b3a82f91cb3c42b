// DeepSeek-R1 MLA decode, bf16 KV, 128 heads (TP 1), for sm_90a's wgmma
// (issue #17 / #19): 32 heads a program (block_m = 32; the accumulator of
// O^T for 128 heads would be 512 f32 a thread), four programs per KV tile,
// which read it through L2; each runs its 32 rows as the instructions' N.
// Double-buffered KV tile (one program per SM either way).
//
//   mla-compile kernels/deepseek_r1_decode_bf16_sm90a_h128.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_bf16_sm90a_h128 {
  num_heads = 128, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = bf16, out_type = bf16,
  kv_scale = "none",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_m = 32, block_n = 64, num_warps = 4           // splits absent: auto
}
