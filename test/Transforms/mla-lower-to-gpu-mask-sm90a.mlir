// mla.mask on the GPU lowering. On sm_90a (ChipTuning::maskWholeTiles) one
// uniform test per tile: offset + the tile's extent against the bound (and,
// causal, against row 0's edge), the registers as they are where it holds,
// else a compare and a select per register. gfx950 (PERREG) selects per
// register on every tile.
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90a" %s --split-input-file | FileCheck %s
// RUN: mla-opt --mla-lower-to-gpu="chip=gfx950" %s --split-input-file | FileCheck %s --check-prefix=PERREG

// CHECK-LABEL: gpu.func @mask_tokens
// CHECK: %[[END:.*]] = arith.addi %arg2, %c64{{.*}} : index
// CHECK-NEXT: %[[WHOLE:.*]] = arith.cmpi sle, %[[END]], %arg3 : index
// CHECK-NEXT: %[[R:.*]]:8 = scf.if %[[WHOLE]] -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT: scf.yield %{{.*}} : f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-NEXT: } else {
// CHECK: %[[FILL:.*]] = arith.constant 0xFF800000 : f32
// CHECK-COUNT-8: arith.select %{{.*}}, %[[FILL]], %{{.*}} : f32
// CHECK-NEXT: scf.yield
// CHECK-NOT: arith.select
// CHECK: memref.store %[[R]]#0

// PERREG-LABEL: gpu.func @mask_tokens
// PERREG-NOT: scf.if {{.*}} -> (f32
// PERREG: arith.select
mla.kernel @mask_tokens(%q: memref<?x64xbf16>, %kv: memref<?x64xbf16>, %start: index,
                        %n: index, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %qt = mla.load %q[%c0, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %k = mla.load %kv[%start, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
  %m = mla.mask %s, %start, %n {dim = 1 : i64, fill = 0xFF800000 : f32} : tensor<16x64xf32>
  mla.store %m, %out[%c0, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// Causal (several query tokens, rows token-major, 16 heads each): whole
// when the tile also ends at or before row 0's edge.
// CHECK-LABEL: gpu.func @mask_causal
// CHECK: %[[END:.*]] = arith.addi %arg2, %c64{{.*}} : index
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi sle, %[[END]], %arg3 : index
// CHECK-NEXT: %[[LEFT:.*]] = arith.cmpi sle, %[[END]], %arg4 : index
// CHECK-NEXT: %[[WHOLE:.*]] = arith.andi %[[IN]], %[[LEFT]] : i1
// CHECK-NEXT: scf.if %[[WHOLE]] -> (
// CHECK: } else {
// CHECK: arith.divui
// CHECK: arith.ori
// CHECK: arith.select

// PERREG-LABEL: gpu.func @mask_causal
// PERREG-NOT: scf.if {{.*}} -> (f32
// PERREG: arith.ori
// PERREG: arith.select
mla.kernel @mask_causal(%q: memref<?x64xbf16>, %kv: memref<?x64xbf16>, %start: index,
                        %n: index, %edge: index, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %qt = mla.load %q[%c0, %c0] : memref<?x64xbf16> -> tensor<32x64xbf16>
  %k = mla.load %kv[%start, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<32x64xbf16>, tensor<64x64xbf16> -> tensor<32x64xf32>
  %m = mla.mask %s, %start, %n causal %edge every 16 {dim = 1 : i64, fill = 0xFF800000 : f32} : tensor<32x64xf32>
  mla.store %m, %out[%c0, %c0] : tensor<32x64xf32> -> memref<?x64xf32>
  mla.return
}
