// DeepSeek-R1 MLA decode, bf16 KV, for sm_90a's wgmma (issue #19): the
// bf16 spec (deepseek_r1_decode_bf16.mlir) under its own name, so that the
// H200 bench loads it beside the sm_90 one. Compiled for sm_90a, both dots
// run on warpgroup MMAs from shared memory, transposed (S^T = K Q^T,
// O^T = V^T P^T; docs/Design.md, "sm_90a: wgmma"); one warpgroup of 4
// warps per program, 64-token tiles. one_launch: where a sequence's
// splits fit one thread-block cluster (small batches), stage 1 combines
// them itself and stage 2 is not launched; on the H200 2-3 % faster at
// 4 x 1024 and 64 x 1024 (docs/PerformanceLog.md, "one launch for bf16
// sm_90a's small batches"; the fp8 specs measured slower with it and keep
// two launches).
//
//   mla-compile kernels/deepseek_r1_decode_bf16_sm90a.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_bf16_sm90a {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = bf16, out_type = bf16,
  kv_scale = "none",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_n = 64, num_warps = 4,          // splits absent: auto
  one_launch = true
}
