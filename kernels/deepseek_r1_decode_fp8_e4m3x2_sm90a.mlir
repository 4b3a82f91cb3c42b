// DeepSeek-R1 MLA decode, fp8 KV with Q and P each as two e4m3 terms, for
// sm_90a: the e4m3 spec's program (deepseek_r1_decode_fp8_qp8_sm90a: both
// products on wgmma's e4m3 form, no 16-bit copy of the KV tile) at about
// bf16's precision instead of e4m3's. Q (after its power-of-two scale) and
// P are rounded to hi = e4m3(x) and lo = e4m3(x - hi) (`qp_terms = 2`,
// mla.split_terms), stacked by rows: each product reads 32 rows of B (one
// wgmma's N doubled, the KV operand read once) and the terms' products are
// added in f32 (mla.sum_terms: the scores every tile, the output once).
// Error ~4e-3 against ~3e-2 for one e4m3 term (docs/Design.md, "fp8 Q and
// P on the e4m3 form"; times in docs/Performance.md).
//
//   mla-compile kernels/deepseek_r1_decode_fp8_e4m3x2_sm90a.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_fp8_e4m3x2_sm90a {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f8E4M3FN, qp_terms = 2,
  block_n = 64, num_warps = 4           // splits absent: auto
}
