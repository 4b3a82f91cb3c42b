// DeepSeek-R1 MLA decode for the H200 with both serving features at once:
// 2 causal query tokens (multi-token prediction) over a block table of
// 64-row pages (FlashMLA / vLLM), i.e. deepseek_r1_decode_fp8_qp16_mtp2's
// kernels with deepseek_r1_decode_fp8_qp16_paged64's KV gather. What
// mla_torch.mla_with_kvcache picks for q [batch, 2, 16, 576] and a cache of
// 64-row pages; bench/paged_h200.py checks it.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp16_mtp2_paged64.mlir --chip=sm_90 -o out
mla.decode @deepseek_r1_decode_fp8_qp16_mtp2_paged64 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 64, q_seq_len = 2, kv_layout = "block_table",
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f16,
  block_n = 64, num_warps = 8           // splits absent: auto
}
