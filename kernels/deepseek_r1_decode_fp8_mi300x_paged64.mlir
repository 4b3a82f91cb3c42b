// DeepSeek-R1 MLA decode, fp8 (e4m3fnuz) KV in a paged cache with a block table, as
// FlashMLA and vLLM keep it: the cache is [num_pages, 64, 1, 576], sequence
// b has cache_seqlens[b] tokens and its token t is in page
// block_table[b][t / 64], row t % 64. A 64-token KV tile is one page (the
// split boundaries are multiples of block_n = 64), so each tile costs two
// table reads per thread, not one per row; otherwise the kernels are
// gfx942 deepseek_r1_decode_fp8_mi300x's contiguous ones. A table entry that names no page of the cache
// reads as zeros (MLA_DECODE_VALIDATE refuses it instead).
//
//   mla-compile kernels/deepseek_r1_decode_fp8_mi300x_paged64.mlir --chip=<chip> -o out
mla.decode @deepseek_r1_decode_fp8_mi300x_paged64 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FNUZ, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 64, q_seq_len = 1, kv_layout = "block_table",
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_n = 64, num_warps = 4           // splits absent: auto
}
