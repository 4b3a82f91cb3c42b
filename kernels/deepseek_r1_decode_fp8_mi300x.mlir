// DeepSeek-R1 MLA decode (forward_absorb), fp8 KV in MI300X (gfx942) format.
//
// 16 query heads share one latent KV head. A KV row holds 576 values:
// 512 latent + 64 rope. Keys use all 576 dims and values are the first 512
// dims of the same row. Q is bf16, KV is fp8 e4m3fnuz (gfx942's format) with one f32
// per-tensor scale, the output is bf16. Page size 1 (token-contiguous
// cache); sequence lengths come from kv_indptr at launch time, so the
// compiler emits a masked and a mask-free stage 1 and the launcher picks.
//
//   mla-opt --mla-expand-decode kernels/deepseek_r1_decode_fp8_mi300x.mlir
mla.decode @deepseek_r1_decode_fp8_mi300x {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FNUZ, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_n = 64, num_warps = 4           // splits absent: auto
}
