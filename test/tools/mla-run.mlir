// mla-run: expand, JIT and run a spec on the CPU against the reference.
// RUN: mla-run %s --kv-lens=3,70,128 --splits=2 | FileCheck %s
// RUN: mla-run %s --batch=2 --kv-len=256 --splits=auto --chip=sm_90 | FileCheck %s --check-prefix=AUTO
// RUN: not mla-run %s --chip=gfx90a 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not mla-run %s --splits=zero 2>&1 | FileCheck %s --check-prefix=SPLITS
// RUN: not mla-run %s --spec=large 2>&1 | FileCheck %s --check-prefix=NAMED
// RUN: not mla-run %S/Inputs/no-decode.mlir 2>&1 | FileCheck %s --check-prefix=NONE
// Problems the host cannot hold get a sentence, not an out-of-memory abort:
// RUN: not mla-run %s --batch=100000000 --kv-len=100000000 2>&1 | FileCheck %s --check-prefix=INT32
// RUN: not mla-run %s --batch=2000 --kv-len=200000 2>&1 | FileCheck %s --check-prefix=MEMORY

// A small spec (64 latent + 32 rope dims) keeps the run short.
mla.decode @small {
  num_heads = 16, num_kv_heads = 1, qk_dim = 96, v_dim = 64, rope_dim = 32,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.102062076 : f32,
  block_n = 32, num_warps = 4}

// CHECK: spec      small (KV f8E4M3FN)
// CHECK: batch     3, kv lengths 3, 70, 128
// CHECK: splits    2 (given)
// CHECK: stage 1   @small_stage1_masked
// CHECK: stage 2   @small_stage2
// CHECK: rel. Frobenius error vs float64 reference: {{[0-9.]+}}e-0{{[3-9]}}
// CHECK: OK

// 256 tokens, block 32, 132 SMs: 8 splits leave full tiles, so the
// mask-free kernel runs.
// AUTO: splits    {{[0-9]+}} (auto, sm_90 with 132 CUs, the C launcher's rule)
// AUTO: stage 1   @small_stage1_mask_free
// AUTO: OK

// CHIP: mla-run: error: unknown chip 'gfx90a' (known: gfx950, gfx942, sm_90, sm_90a, host)
// SPLITS: mla-run: error: --splits must be 'auto' or a positive count, got 'zero'
// NAMED: mla-run: error: no mla.decode named 'large' in {{.*}}mla-run.mlir
// NONE: mla-run: error: no mla.decode in {{.*}}no-decode.mlir
// INT32: mla-run: error: the KV lengths add up to more than 2^31 - 1 tokens, past the int32 kv_indptr range
// MEMORY: mla-run: error: batch 2000 with 400000000 KV tokens needs about {{[0-9.]+}} GiB of host memory
