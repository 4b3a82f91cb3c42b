// DeepSeek-R1 MLA decode, fp8 KV with Q and P in f16, KV in 64-row pages
// (block table, FlashMLA / vLLM convention), for sm_90a's wgmma (issue #17 /
// #19): the paged twin of deepseek_r1_decode_fp8_qp16_sm90a.mlir, so that
// paged fp8 KV runs on the same kernels as contiguous (a 64-token tile is
// one page: its bytes are loaded a tile ahead into registers, each row
// through the page entry read with them; an entry that names no page of
// the cache gives zero rows). The Python entry (mla_with_kvcache) picks it
// for fp8 KV with one query token and 64-row pages.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp16_sm90a_paged64.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_fp8_qp16_sm90a_paged64 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 64, q_seq_len = 1, kv_layout = "block_table",
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f16,
  block_n = 64, num_warps = 4           // splits absent: auto
}
