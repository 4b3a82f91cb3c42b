// DeepSeek-R1 MLA decode, mxfp4 KV (issue #18) on sm_90a's e4m3 wgmma:
// Q and P quantised to fp8 (qp_type, as in the fp8 qp8 specs), and each
// KV tile decoded in shared memory into an e4m3 tile against a power of two
// per token (mla.dequant's exponents: the token's largest block in e4m3's
// top binades), which the online softmax applies to the scores and folds
// into the probabilities' exponent (docs/Design.md, mxfp4 KV, "the e4m3
// route"). Both products then run on the e4m3 form with no 16-bit copy of
// the tile. Opt-in, like every qp8 spec: ~3e-2 relative error against the
// dequantised cache (the qp8 rounding of Q and P; the decode itself is
// exact for blocks within 2^14 of their token's largest).
//
//   mla-compile kernels/deepseek_r1_decode_mxfp4_qp8_sm90a.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_mxfp4_qp8_sm90a {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f4E2M1FN, out_type = bf16,
  kv_scale = "block32_e8m0",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f8E4M3FN,
  block_n = 64, num_warps = 4           // splits absent: auto
}
