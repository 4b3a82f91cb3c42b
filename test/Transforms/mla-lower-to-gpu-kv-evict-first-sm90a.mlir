// sm_90a's fp8 tile loaded a tile ahead into registers, with an L2 cache
// policy on its loads (ChipTuning::kvEvictFirstTiles): once a program,
// evict first (CUTLASS's EVICT_FIRST, 0x12F0000000000000) where the
// program's KV range (upper - lower) spans at most the bound's tiles of
// 64 rows, else normal (EVICT_NORMAL, 0x1000000000000000); each 16-byte
// load carries it (ld.global.L2::cache_hint, its constant offset added by
// the instruction). sm_90a's bound is 16 tiles, 1024 rows; the option sets
// another, 0 keeps plain loads. mxfp4's register tile (a dequant reads it)
// takes no policy, and bf16's TMA copies keep their own hint
// (test/tools/mla-compile-sm90a.mlir).
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir | FileCheck %s --check-prefixes=CHECK,B16
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a kv-evict-first-tiles=4" %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir | FileCheck %s --check-prefixes=CHECK,B4
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a kv-evict-first-tiles=0" %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir | FileCheck %s --check-prefix=OFF
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_mxfp4_sm90a.mlir | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp16_sm90a_stage1_masked
// B16: %[[FEW:[0-9]+]] = arith.cmpi sle, %{{[0-9]+}}, %c1024{{(_[0-9]+)?}} : index
// B4: %[[FEW:[0-9]+]] = arith.cmpi sle, %{{[0-9]+}}, %c256{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[NORMAL:[0-9]+]] = llvm.mlir.constant(1152921504606846976 : i64) : i64
// CHECK-NEXT: %[[FIRST:[0-9]+]] = llvm.mlir.constant(1364590687093260288 : i64) : i64
// CHECK-NEXT: %[[POL:[0-9]+]] = arith.select %[[FEW]], %[[FIRST]], %[[NORMAL]] : i64
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4+0], $5;", "=r,=r,=r,=r,l,l" %{{[0-9]+}}, %[[POL]] : (i64, i64) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "ld.global.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4+64], $5;", "=r,=r,=r,=r,l,l" %{{[0-9]+}}, %[[POL]]
// The loop's next tile takes the same policy.
// CHECK: scf.for
// CHECK: llvm.inline_asm has_side_effects {{.*}}"ld.global.L2::cache_hint.v4.b32 {{.*}}, %[[POL]]
// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp16_sm90a_stage1_mask_free
// CHECK: arith.select %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : i64
// CHECK: llvm.inline_asm has_side_effects {{.*}}"ld.global.L2::cache_hint.v4.b32

// OFF-NOT: cache_hint
// OFF: vector.load %{{.*}} : memref<?xi8>, vector<16xi8>
// OFF-NOT: cache_hint
