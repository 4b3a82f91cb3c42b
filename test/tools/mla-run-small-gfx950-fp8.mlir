// A small fp8 spec (96 = 64 + 32 dims: three K steps of 32, not grouped)
// on the gfx950 emulator: K reaches the bf16 MFMA through byte shuffles
// LLVM writes with v_bitop3_b16 (InstructionTest: Bitop3AsLlvmSelectsIt),
// and Q is less than one 16-byte chunk per thread.
// RUN: mla-run %s --chip=gfx950 --kv-lens=0,1,17,63,64,65,1000,4099 | FileCheck %s
// RUN: mla-run %s --chip=gfx950 --kv-lens=8192,8192 | FileCheck %s --check-prefix=EXACT
mla.decode @small_fp8 {
  num_heads = 16, num_kv_heads = 1, qk_dim = 96, v_dim = 64, rope_dim = 32,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.102062076 : f32,
  block_n = 64, num_warps = 4}

// CHECK: stage 1   @small_fp8_stage1_masked
// CHECK: rel. Frobenius error vs float64 reference: {{[0-9.]+}}e-0{{[3-9]}}
// CHECK: OK
// EXACT: stage 1   @small_fp8_stage1_mask_free
// EXACT: OK
