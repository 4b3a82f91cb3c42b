// DeepSeek-R1 MLA decode, fp8 KV, with Q and P rounded to f16 instead of
// bf16 (qp_type = f16): every e4m3 value is an f16 value, so K and V reach
// the chip's f16 matrix instruction with one pair conversion each
// (sm_90: cvt.rn.f16x2.e4m3x2, which yields f16 directly; gfx950:
// v_cvt_scalef32_pk_f16_fp8) and no repacking to bf16. Q is rounded
// unscaled (softmax scale, log2 e and the KV scale multiply the scores), P
// lies in [0, 1]; both keep 3 more mantissa bits than in bf16. Contract:
// Q entries within f16's range (|q| <= 65504).
//
// 8 warps per program: on sm_90 (where python/mla_torch.py loads this spec)
// 16 warps per SM beat 12 measured on the H200 (bench geomean 99 -> 88 us).
// CDNA's 16-column MFMAs cannot split a 64-token S tile over 8 waves: for
// gfx950 / gfx942 use num_warps = 4 (the lowering says so otherwise).
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp16.mlir --chip=sm_90 -o out
mla.decode @deepseek_r1_decode_fp8_qp16 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f16,
  block_n = 64, num_warps = 8           // splits absent: auto
}
