// DeepSeek-R1 MLA decode, fp8 KV with Q and P in f16, 128 heads (TP 1), for
// sm_90a's wgmma (issue #17): 32 heads a program (block_m = 32, as the bf16
// _h128 spec), four programs per KV tile, which read it through L2. The
// schedule of the fp8 MTP 2 spec: two warpgroups and 128-token tiles, each
// warpgroup scoring 64 of the tokens (S^T's M, N = the 32 rows) and
// accumulating half of O^T's 512 columns over all 128, the fp8 bytes a tile
// ahead shared by the 256 threads, S^T taking them as wgmma's register A (no
// spills; one warpgroup on 64-token tiles spilled). On the H200 at 64 x 8192:
// 443 us (docs/Performance.md, 2026-12-05; 589-596 us on 2026-12-03 against
// 773-781 us for sm_90's fp8 _h128 spec); the Python entry picks it for fp8
// KV with 128 heads.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp16_sm90a_h128.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_fp8_qp16_sm90a_h128 {
  num_heads = 128, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f16,
  block_m = 32, block_n = 128, num_warps = 8   // splits absent: auto
}
