// DeepSeek-R1 MLA decode, fp8 KV gathered token by token (SGLang / AITER's
// page size 1: sequence b's tokens are the cache rows
// kv_indices[kv_indptr[b] .. kv_indptr[b+1]]), for sm_90a's wgmma: otherwise
// deepseek_r1_decode_fp8_qp16_sm90a.mlir. The tile's bytes are loaded into
// registers a tile ahead anyway, so each thread looks its rows up in
// kv_indices there; a listed row outside the cache reads as zeros.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp16_sm90a_kvindices.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_fp8_qp16_sm90a_kvindices {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, kv_layout = "token_indices",
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f16,
  block_n = 64, num_warps = 4           // splits absent: auto
}
