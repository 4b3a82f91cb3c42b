// DeepSeek-R1 MLA decode, fp8 KV with Q and P in f16, MTP 2 (q_seq_len = 2,
// causal), for sm_90a's wgmma (issue #17): both query tokens' 32 rows in one
// program (block_m = 32), so S^T = K Q^T and O^T = V^T P^T run N = 32 and
// the KV tile is read once for both tokens. Two warpgroups per program and
// 128-token tiles: each warpgroup scores 64 of the tokens (S^T's M) and
// accumulates half of O^T's 512 columns over all 128, and the 256 threads
// share the fp8 bytes held a tile ahead; S^T takes them, converted, as
// wgmma's register A (254 registers, no spills; one warpgroup on 64-token
// tiles spilled). 192 KiB of shared memory: one program per SM. On the H200
// (docs/Performance.md, 2026-12-05) 1.30x the time of the one-token spec at
// 64 x 8192 (sm_90's own MTP 2 spec: 1.8x); the Python entry picks it for
// fp8 KV with q_seq_len 2.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp16_sm90a_mtp2.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_fp8_qp16_sm90a_mtp2 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 2,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f16,
  block_m = 32, block_n = 128, num_warps = 8   // splits absent: auto
}
