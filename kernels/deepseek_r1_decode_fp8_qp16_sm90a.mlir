// DeepSeek-R1 MLA decode, fp8 KV with Q and P in f16 (the qp16 spec), for
// sm_90a's wgmma (issue #19): wgmma reads fp8 only as both operands fp8 and
// K-major, so each KV tile is loaded into registers a tile ahead (during the
// previous tile's dots) and converted from there (cvt.rn.f16x2.e4m3x2):
// S^T = K Q^T takes the converted pairs as wgmma's register A, and only V's
// 512 columns go to a swizzled f16 tile, which O^T = V^T P^T reads. One
// warpgroup, 94 KiB, two programs per SM. On the H200 (docs/Performance.md)
// faster than sm_90's mma.sync spec on every task shape: custom_kernel's
// first choice for fp8 KV where compiled (python/mla_torch.py).
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_fp8_qp16_sm90a {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f16,
  block_n = 64, num_warps = 4           // splits absent: auto
}
