// DeepSeek-R1 MLA decode, bf16 KV, MTP 2 (q_seq_len = 2, causal), for
// sm_90a's wgmma (issue #17 / #19): both query tokens' 32 rows in one
// program (block_m = 32), so S^T = K Q^T and O^T = V^T P^T run N = 32 on
// the same instructions a single token's N = 16 takes: the KV tile is read
// once and the tensor work per tile hardly grows. 117 KiB of shared memory
// with one KV buffer is one program per SM, so the tile is double-buffered
// (ChipTuning::prefetchWhenAlone). The Python entry picks it for
// q_seq_len 2 when deepseek_r1_decode_bf16_sm90a is its bf16 spec.
//
//   mla-compile kernels/deepseek_r1_decode_bf16_sm90a_mtp2.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_bf16_sm90a_mtp2 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = bf16, out_type = bf16,
  kv_scale = "none",
  page_size = 1, q_seq_len = 2,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_m = 32, block_n = 64, num_warps = 4           // splits absent: auto
}
