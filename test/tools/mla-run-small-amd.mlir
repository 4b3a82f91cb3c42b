// A small spec (128 = 64 + 64 dims, 64 values) on both AMD emulators: Q is
// one 16-byte chunk per thread, and LLVM folds the softmax scale into Q's
// copy with v_pk_mul_f32 whose destination is its scale operand. The
// emulator once wrote the low half of D before reading the high half's
// source (fixed in PackedOps.cpp; InstructionTest checks the instruction):
// every such run failed at ~0.5 relative error although the code was right.
// RUN: mla-run %s --chip=gfx950 --kv-lens=0,1,17,63,64,65,1000,4099 | FileCheck %s
// RUN: mla-run %s --chip=gfx942 --kv-lens=0,1,17,63,64,65,1000,4099 | FileCheck %s
// RUN: mla-run %s --chip=gfx950 --kv-lens=8192,8192 | FileCheck %s --check-prefix=EXACT
mla.decode @small_amd {
  num_heads = 16, num_kv_heads = 1, qk_dim = 128, v_dim = 64, rope_dim = 64,
  q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0883883476 : f32,
  block_n = 64, num_warps = 4}

// CHECK: stage 1   @small_amd_stage1_masked
// CHECK: rel. Frobenius error vs float64 reference: {{[0-9.]+}}e-0{{[3-9]}}
// CHECK: OK
// EXACT: stage 1   @small_amd_stage1_mask_free
// EXACT: OK
