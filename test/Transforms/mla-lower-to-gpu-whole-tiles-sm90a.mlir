// sm_90a's fp8 tile loaded a tile ahead into registers, in the masked
// stage 1 (a bound on the KV rows): one uniform test per tile that all its
// 64 rows lie below the bound, then its 18 chunk loads with no test of
// their own (every tile of a sequence but its last); otherwise the chunks
// one by one, each row tested (absent rows read as zeros). The mask-free
// kernel has no bound and no such test.
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_fp8_qp16_sm90a.mlir | FileCheck %s

// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp16_sm90a_stage1_masked
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<16xi8>) {
// The next tile, where there is one: the rows left below the bound.
// CHECK: scf.if %{{[0-9]+}} -> (vector<16xi8>, {{.*}}) {
// CHECK: %[[LIMIT:[0-9]+]] = arith.subi
// CHECK-NEXT: %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT: %[[FULL:[0-9]+]] = arith.cmpi sle, %[[C64]], %[[LIMIT]] : index
// CHECK-NEXT: scf.if %[[FULL]] -> (vector<16xi8>, {{.*}}) {
// CHECK-NOT: scf.if
// CHECK-COUNT-18: llvm.inline_asm has_side_effects {{.*}}"ld.global.L2::cache_hint.v4.b32
// CHECK-NOT: scf.if
// CHECK: } else {
// CHECK-NEXT: arith.cmpi slt, %{{[0-9]+}}, %[[LIMIT]] : index
// CHECK-NEXT: scf.if %{{[0-9]+}} -> (vector<16xi8>) {
// CHECK: llvm.inline_asm has_side_effects {{.*}}"ld.global.L2::cache_hint.v4.b32
// CHECK: } else {
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK-NEXT: vector.broadcast %[[ZERO]] : i8 to vector<16xi8>

// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp16_sm90a_stage1_mask_free
// CHECK-NOT: arith.cmpi sle, %c64
// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp16_sm90a_stage2
