// Spec -> tile kernels -> LLVM dialect for the host, end to end.
// RUN: mla-opt --mla-to-tiles --mla-to-host %kernels/deepseek_r1_decode_fp8.mlir | FileCheck %s

// Only the LLVM dialect is left, and each kernel has its C interface.
// CHECK-NOT: mla.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-DAG: llvm.func @deepseek_r1_decode_fp8_stage1_masked(
// CHECK-DAG: llvm.func @_mlir_ciface_deepseek_r1_decode_fp8_stage1_masked(
// CHECK-DAG: llvm.func @deepseek_r1_decode_fp8_stage1_mask_free(
// CHECK-DAG: llvm.func @_mlir_ciface_deepseek_r1_decode_fp8_stage1_mask_free(
// CHECK-DAG: llvm.func @_mlir_ciface_deepseek_r1_decode_fp8_stage2(
// CHECK-DAG: llvm.intr.exp2
// CHECK-DAG: llvm.call @free
