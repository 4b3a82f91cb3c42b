// DeepSeek-R1 MLA decode, mxfp4 KV (issue #18), for sm_90a's wgmma
// (issue #19): the mxfp4 spec's tile IR unchanged. Each KV tile's bytes are
// copied asynchronously (double-buffered: the decoded tile leaves room for
// one program per SM only), mla.dequant decodes them into a bf16 tile that
// sm_90a stores in wgmma's 128-byte swizzle, and both dots run on wgmma
// from shared memory (docs/Design.md, "sm_90a: wgmma"). make artifacts
// compiles it for --chip=sm_90a; python/mla_torch.py loads it first for
// mxfp4 KV where it is there.
//
//   mla-compile kernels/deepseek_r1_decode_mxfp4_sm90a.mlir --chip=sm_90a -o out
mla.decode @deepseek_r1_decode_mxfp4_sm90a {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f4E2M1FN, out_type = bf16,
  kv_scale = "block32_e8m0",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_n = 64, num_warps = 4           // splits absent: auto
}
