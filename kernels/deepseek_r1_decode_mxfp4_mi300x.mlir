// DeepSeek-R1 MLA decode (forward_absorb), mxfp4 KV (issue #18), sized for
// MI300X (gfx942): block_n 16 keeps the packed tile, its bf16 decoding and Q
// within 64 KiB of LDS (block_n 32 needs 66.5 KiB), and 1 wave per workgroup
// keeps 16 score columns per wave (one MFMA wide).
//
// The task's third cache format: every KV row is 288 bytes of e2m1 values,
// two per byte (the even element in the low nibble), with one e8m0 scale
// per block of 32 values in a separate [rows, blocks] byte array whose row
// stride is the array's own (the task's quantiser pads it). Rope dims are
// quantised like the rest. Each KV tile is dequantised to bf16
// (mla.dequant, exact), so Q and P stay bf16 as in the bf16 spec; the KV
// bytes read from memory are 306 per row against fp8's 576.
//
//   mla-opt --mla-expand-decode kernels/deepseek_r1_decode_mxfp4_mi300x.mlir
mla.decode @deepseek_r1_decode_mxfp4_mi300x {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f4E2M1FN, out_type = bf16,
  kv_scale = "block32_e8m0",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  block_n = 16, num_warps = 1           // splits absent: auto
}
