// The fp8-Q/P variant of deepseek_r1_decode_fp8_qp8.mlir for MI300X
// (gfx942): KV, Q and P in e4m3fnuz, both products on
// v_mfma_f32_16x16x32_fp8_fp8. Q is rounded to fp8 in place of its bf16
// copy, so the tiles fit gfx942's 64 KiB of LDS at block_n 64.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp8_mi300x.mlir --chip=gfx942 -o out
mla.decode @deepseek_r1_decode_fp8_qp8_mi300x {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FNUZ, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f8E4M3FNUZ,
  block_n = 64, num_warps = 4
}
