// sm_90a's KV tile streamed with an L2 cache policy on its reads
// (ChipTuning::kvEvictFirstTiles, Lowering::kvReadPolicy): once a program,
// evict first (CUTLASS's EVICT_FIRST, 0x12F0000000000000) where the
// program's KV range (upper - lower) spans at most the bound's tiles of
// 64 rows, else normal (EVICT_NORMAL, 0x1000000000000000). The fp8 tile
// loaded a tile ahead into registers carries it on each 16-byte load
// (ld.global.L2::cache_hint, its constant offset added by the
// instruction); the bf16 tile's tensor-map copies on each copy
// (l2_cache_hint). sm_90a's bound is 16 tiles, 1024 rows; the option sets
// another, 0 keeps plain loads and copies without a hint. mxfp4's register
// tile (a dequant reads it) and a paged tile (slower with a policy) take
// none.
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir | FileCheck %s --check-prefixes=CHECK,B16
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a kv-evict-first-tiles=4" %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir | FileCheck %s --check-prefixes=CHECK,B4
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a kv-evict-first-tiles=0" %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir | FileCheck %s --check-prefix=OFF
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_mxfp4_sm90a.mlir | FileCheck %s --check-prefix=OFF
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_fp8_qp16_sm90a_paged64.mlir | FileCheck %s --check-prefix=OFF
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_bf16_sm90a.mlir | FileCheck %s --check-prefix=TMA
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a kv-evict-first-tiles=0" %kernels/deepseek_r1_decode_bf16_sm90a.mlir | FileCheck %s --check-prefix=TMA-OFF

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

// The bf16 tile's copies: the same choice, each copy under it (the first
// before the loop, the next ones in it).
// TMA-LABEL: gpu.func @deepseek_r1_decode_bf16_sm90a_stage1_masked
// TMA: %[[FEW:[0-9]+]] = arith.cmpi sle, %{{[0-9]+}}, %c1024{{(_[0-9]+)?}} : index
// TMA-NEXT: %[[NORMAL:[0-9]+]] = llvm.mlir.constant(1152921504606846976 : i64) : i64
// TMA-NEXT: %[[FIRST:[0-9]+]] = llvm.mlir.constant(1364590687093260288 : i64) : i64
// TMA-NEXT: %[[POL:[0-9]+]] = arith.select %[[FEW]], %[[FIRST]], %[[NORMAL]] : i64
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} l2_cache_hint = %[[POL]] predicate
// TMA: scf.for
// TMA: %[[POL2:[0-9]+]] = arith.select %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : i64
// TMA: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} l2_cache_hint = %[[POL2]] predicate
// TMA-LABEL: gpu.func @deepseek_r1_decode_bf16_sm90a_stage1_mask_free
// TMA: l2_cache_hint

// TMA-OFF-NOT: l2_cache_hint
// TMA-OFF: nvvm.cp.async.bulk.tensor.shared.cluster.global
// TMA-OFF-NOT: l2_cache_hint
