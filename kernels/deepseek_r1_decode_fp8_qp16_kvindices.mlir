// DeepSeek-R1 MLA decode, fp8 KV gathered token by token (SGLang / AITER's
// page size 1: sequence b's tokens are the cache rows
// kv_indices[kv_indptr[b] .. kv_indptr[b+1]]), for the H200: otherwise the
// spec deepseek_r1_decode_fp8_qp16 (Q and P in f16, 8 warps). Each 16-byte
// copy looks its row up in kv_indices (an L1 hit after the first of the
// row); a listed row outside the cache reads as zeros.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp16_kvindices.mlir --chip=sm_90 -o out
mla.decode @deepseek_r1_decode_fp8_qp16_kvindices {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, kv_layout = "token_indices",
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f16,
  block_n = 64, num_warps = 8           // splits absent: auto
}
