// DeepSeek-R1 MLA decode, fp8 KV gathered token by token, as SGLang and
// AITER keep it (page size 1): sequence b's tokens are the cache rows
// kv_indices[kv_indptr[b] .. kv_indptr[b+1]]. Every row of a tile is looked
// up in kv_indices; a listed row outside the cache reads as zeros
// (MLA_DECODE_VALIDATE refuses it instead). Otherwise gfx950's contiguous
// spec.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_kvindices.mlir --chip=<chip> -o out
mla.decode @deepseek_r1_decode_fp8_kvindices {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, kv_layout = "token_indices",
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_n = 64, num_warps = 4           // splits absent: auto
}
