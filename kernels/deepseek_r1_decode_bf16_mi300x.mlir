// DeepSeek-R1 MLA decode (forward_absorb), bf16 KV, sized for MI300X (gfx942):
// block_n 32 keeps the bf16 KV tile and Q within its 64 KiB of LDS, and 2
// waves per workgroup keep 16 score columns per wave (one MFMA wide).
//
// 16 query heads share one latent KV head. A KV row holds 576 values:
// 512 latent + 64 rope. Keys use all 576 dims and values are the first 512
// dims of the same row. Q, KV and the output are bf16 (no KV scale). Page
// size 1 (token-contiguous
// cache); sequence lengths come from kv_indptr at launch time, so the
// compiler emits a masked and a mask-free stage 1 and the launcher picks.
//
//   mla-opt --mla-expand-decode kernels/deepseek_r1_decode_bf16_mi300x.mlir
mla.decode @deepseek_r1_decode_bf16_mi300x {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = bf16, out_type = bf16,
  kv_scale = "none",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_n = 32, num_warps = 2           // splits absent: auto
}
