// DeepSeek-R1 MLA decode, fp8 KV, with Q and P quantised to fp8 as well
// (qp_type): both matrix products run on fp8 operands where the chip has
// fp8 matrix instructions (gfx950: v_mfma_f32_16x16x32_fp8_fp8 and
// v_mfma_f32_16x16x128_f8f6f4), with softmax scale, log2 e and the KV
// scale applied to the scores as one scalar. Opt-in: it trades accuracy for instructions. Measured on the CPU
// against the float64 reference (docs/PerformanceLog.md): ~3e-2 relative
// error on random inputs, against ~2.5e-3 for the bf16 default
// (deepseek_r1_decode_fp8.mlir).
//
// block_n = 128: gfx950 then runs P V on v_mfma_f32_16x16x128_f8f6f4 (K =
// 128 tokens) and Q K^T's first 512 of 576 on it too (the last 64 on the
// 16x16x32 fp8 one), and the loop's fixed work (row maxima across waves,
// barriers, waits) is spread over twice the tokens: 11.0 / 11.7
// wave-instructions per KV token against 15.8 / 16.8 at 64 before Q K^T
// moved (docs/PerformanceLog.md, 2026-12-01), 9.2 / 10.0 with the tile
// arriving by LDS DMA loads as well. The
// 74 KiB tile takes 97.8 KiB of gfx950's 160 KiB LDS: one workgroup (one
// wave per SIMD) per CU, the same bytes in flight per CU as two at 64.
//
//   mla-compile kernels/deepseek_r1_decode_fp8_qp8.mlir --chip=gfx950 -o out
mla.decode @deepseek_r1_decode_fp8_qp8 {
  num_heads = 16, num_kv_heads = 1,
  qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
  kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1,
  softmax_scale = 0.0416666679 : f32,   // 1 / sqrt(576)
  qp_type = f8E4M3FN,
  block_n = 128, num_warps = 4          // splits absent: auto
}
