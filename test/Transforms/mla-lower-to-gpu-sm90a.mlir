// The per-op GPU lowering for sm_90a (wgmma: warpgroup MMAs reading both
// operands from shared memory through matrix descriptors) on small
// hand-written tile kernels. Every 16-bit shared tile of whole atoms is
// stored in the 128-byte swizzle (memref<C/64 x R x 64>); both dots run transposed (the
// dot's columns are the instruction's M). report-placements shows the
// decisions (PLACE); the IR checks the target ops (CHECK). The whole specs:
// test/tools/mla-compile-sm90a.mlir. wgmma-smem-a: an fp8 KV tile's S^T
// reads the converted tile from shared memory too (@fp8loop; the option
// changes nothing else); its default, the tile as wgmma's register A, is
// mla-lower-to-gpu-wgmma-register-a-sm90a.mlir.
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90a wgmma-smem-a report-placements" %s --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLACE
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90a wgmma-smem-a" %s --split-input-file | FileCheck %s
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90a wgmma-smem-a kv-tile-first" %s --split-input-file | FileCheck %s --check-prefix=KVFIRST

// CHECK: gpu.module @mla_kernels [#nvvm.target<O = 3, chip = "sm_90a">]
// CHECK-LABEL: gpu.func @attention
// Q and the KV tile in the 128-byte swizzle (views [atoms][rows][64]);
// S^T = K Q^T on 4 wgmma (K = 64), O^T = V^T P^T on 4 (64 columns x 4 K
// steps of 16 tokens).
// Q's loads, then the KV tile's two buffers and its first copies, then
// (after a barrier) Q's stores (ChipTuning::aheadLoadsFirst); in the
// loop the next copies, then this tile's view.
// CHECK: memref.view {{.*}} to memref<1x16x64xi16, #gpu.address_space<workgroup>>
// CHECK: vector.load {{.*}} : memref<?xi16>, vector<8xi16>
// (kv-tile-first, the earlier order: the KV tile's buffers and copies
// first, then Q's copy, a barrier before its loads.)
// KVFIRST-LABEL: gpu.func @attention
// KVFIRST: memref.view {{.*}} to memref<1x64x64xi16, #gpu.address_space<workgroup>>
// KVFIRST: nvvm.cp.async.shared.global
// KVFIRST: memref.view {{.*}} to memref<1x16x64xi16, #gpu.address_space<workgroup>>
// KVFIRST-NEXT: nvvm.fence.proxy
// KVFIRST-NEXT: gpu.barrier
// KVFIRST: vector.load {{.*}} : memref<?xi16>, vector<8xi16>
// KVFIRST: vector.store {{.*}} : memref<1x16x64xi16, #gpu.address_space<workgroup>>, vector<8xi16>
// CHECK: memref.view {{.*}} to memref<1x64x64xi16, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.shared.global
// CHECK: gpu.barrier
// CHECK: vector.store {{.*}} : memref<1x16x64xi16, #gpu.address_space<workgroup>>, vector<8xi16>
// Threads' shared-memory writes, then the tensor cores' reads: an
// async-proxy fence before each barrier.
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: scf.for
// CHECK: nvvm.cp.async.shared.global
// CHECK: memref.view {{.*}} to memref<1x64x64xi16, #gpu.address_space<workgroup>>
// S^T: one rolled iteration per 64-column atom of K, its 4 steps into 4
// independent accumulator chains (summed after the wait).
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: scf.for
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: scf.yield
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-8: arith.addf
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// O^T: one K step of 16 tokens an iteration, A = V^T MN-major (col).
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.yield
mla.kernel @attention(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>, %n: index,
                      %out: memref<?x64xf32>, %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:9: remark: placement: smem
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x64xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16, transposed: A = rhs (K-major), B = lhs^T (K-major), descriptors from shared memory
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xbf16>
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16, transposed: A = rhs^T (MN-major), B = lhs^T (K-major), descriptors from shared memory
    %o = mla.dot %pb, %k acc(%a1 : tensor<16x64xf32>) : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x64xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.store %e, %lse[%b] : tensor<16xf32> -> memref<?xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @fp8kv
// fp8 KV meets f16 Q and P (qp_type = f16): the stored tile is converted
// once to an f16 swizzled tile (cvt.rn.f16x2.e4m3x2 pairs), which both
// dots read: S^T = K Q^T (K-major) and O^T = V^T P^T (MN-major).
// CHECK: memref.view {{.*}} to memref<1x64x64xi16, #gpu.address_space<workgroup>>
// CHECK: llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-NOT: e4m3x2.to.f16x2
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<f16>, <one>, <col>], B[<f16>, <one>, <col>]
mla.kernel @fp8kv(%kv: memref<?x64xf8E4M3FN>, %q: memref<?x64xf16>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  %qt = mla.load %q[%b, %c0] : memref<?x64xf16> -> tensor<16x64xf16>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16, transposed: A = rhs (K-major), B = lhs^T (K-major), descriptors from shared memory
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xf16>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
  %p = mla.cast %s : tensor<16x64xf32> -> tensor<16x64xf16>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16, transposed: A = rhs^T (MN-major), B = lhs^T (K-major), descriptors from shared memory
  %o = mla.dot %p, %k : tensor<16x64xf16>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @fp8qp
// fp8 Q and P (qp_type = f8E4M3FN): the fp8 tiles are stored in the 64-byte
// swizzle (views [atoms][rows][64] of i8) and both dots run on the e4m3
// form: S^T = K Q^T straight from them (K = 32 bytes a step, 2 steps of one
// 64-byte atom). The e4m3 form reads A K-major only, so for O^T = V^T P^T
// the KV tile is transposed while S^T runs (4-byte reads, two rounds of
// byte permutes, 16-byte writes; spare half-warps skip the one task here)
// into V^T [64 dims][64 tokens], and P is written as fp8.
// CHECK-DAG: memref.view {{.*}} to memref<1x64x64xi8, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.view {{.*}} to memref<1x16x64xi8, #gpu.address_space<workgroup>>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: scf.for
// CHECK-COUNT-2: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: memref.view {{.*}} to memref<1x64x64xi8, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK-COUNT-16: vector.load {{.*}} : memref<1x64x64xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK-COUNT-32: nvvm.prmt <default>
// CHECK-COUNT-4: vector.store {{.*}} : memref<1x64x64xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: e4m3x2.to.f16x2
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
mla.kernel @fp8qp(%kv: memref<?x64xf8E4M3FN>, %q: memref<?x64xf8E4M3FN>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  %qt = mla.load %q[%b, %c0] : memref<?x64xf8E4M3FN> -> tensor<16x64xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3, transposed: A = rhs (K-major), B = lhs^T (K-major), descriptors from shared memory
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
  %p = mla.cast %s : tensor<16x64xf32> -> tensor<16x64xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3, transposed: A = rhs^T (transposed into a K-major fp8 tile), B = lhs^T (K-major), descriptors from shared memory
  %o = mla.dot %p, %k : tensor<16x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @fp8terms
// Q and P as two e4m3 terms (qp_terms = 2, mla.split_terms): bf16 Q's hi
// and lo terms are rounded in registers on their way from global memory,
// each thread's 16-byte load giving two 8-byte stores, rows r and 16 + r of
// a 32-row fp8 tile; both dots run with N = 32 (the KV operand read once);
// the scores' terms are summed in registers (mla.sum_terms: 16 of the 32
// rows' registers), P's two terms are written as 32 rows of fp8.
// CHECK: memref.view {{.*}} to memref<1x32x64xi8, #gpu.address_space<workgroup>>
// CHECK-COUNT-8: llvm.nvvm.ff.to.e4m3x2.rn
// CHECK: vector.store {{.*}} : memref<1x32x64xi8, #gpu.address_space<workgroup>>, vector<8xi8>
// CHECK: vector.store {{.*}} : memref<1x32x64xi8, #gpu.address_space<workgroup>>, vector<8xi8>
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: memref.view {{.*}} to memref<1x32x64xi8, #gpu.address_space<workgroup>>
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
mla.kernel @fp8terms(%kv: memref<?x64xf8E4M3FN>, %q: memref<?x64xbf16>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:9: remark: placement: rounded to fp8 in registers on its way to shared memory
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %qf = mla.cast %qt : tensor<16x64xbf16> -> tensor<16x64xf32>
  %q2 = mla.split_terms %qf : tensor<16x64xf32> -> tensor<32x64xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:9: remark: placement: acc (16 registers per lane); wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3, transposed: A = rhs (K-major), B = lhs^T (K-major), descriptors from shared memory
  %s2 = mla.dot %q2, %k {transpose_rhs} : tensor<32x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<32x64xf32>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (8 registers per lane)
  %s = mla.sum_terms %s2 : tensor<32x64xf32> -> tensor<16x64xf32>
  // PLACE: :[[@LINE+1]]:9: remark: placement: acc (16 registers per lane)
  %p2 = mla.split_terms %s : tensor<16x64xf32> -> tensor<32x64xf8E4M3FN>
  %o2 = mla.dot %p2, %k : tensor<32x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<32x64xf32>
  %o = mla.sum_terms %o2 : tensor<32x64xf32> -> tensor<16x64xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @fp8loop
// In a KV loop the fp8 tile is loaded into registers a tile ahead: the
// first tile's 16-byte chunks ahead of the Q load (zeros from the bound
// on), carried by the loop; each iteration converts its chunks into the
// swizzled f16 tile (two 16-byte stores a chunk), then loads the next
// tile's before the dots. No asynchronous copy, no fp8 in shared memory.
// CHECK-NOT: x{{[0-9]+}}xi8, #gpu.address_space<workgroup>>
// CHECK: scf.if %{{.*}} -> (vector<16xi8>, vector<16xi8>)
// CHECK: llvm.inline_asm has_side_effects {{.*}}"ld.global.L2::cache_hint.v4.b32
// CHECK: vector.store {{.*}} : memref<1x16x64xi16, #gpu.address_space<workgroup>>, vector<8xi16>
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<16xi8>, vector<16xi8>)
// CHECK: memref.view {{.*}} to memref<1x64x64xi16, #gpu.address_space<workgroup>>
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"
// CHECK: vector.store {{.*}} : memref<1x64x64xi16, #gpu.address_space<workgroup>>, vector<8xi16>
// CHECK: scf.if %{{.*}} -> (vector<16xi8>, vector<16xi8>)
// CHECK: llvm.inline_asm has_side_effects {{.*}}"ld.global.L2::cache_hint.v4.b32
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK-NOT: e4m3x2.to.f16x2
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<f16>, <one>, <col>], B[<f16>, <one>, <col>]
// CHECK: scf.yield {{.*}}, {{.*}} : {{.*}}, vector<16xi8>, vector<16xi8>
// CHECK-NOT: cp.async
// CHECK: gpu.return
mla.kernel @fp8loop(%kv: memref<?x64xf8E4M3FN>, %q: memref<?x64xf16>, %n: index,
                    %out: memref<?x64xf32>, %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %qt = mla.load %q[%b, %c0] : memref<?x64xf16> -> tensor<16x64xf16>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x64xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
    // PLACE: :[[@LINE+1]]:10: remark: placement: smem; loaded into registers a tile ahead, converted into a swizzled f16 tile
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xf16>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xf16>
    %o = mla.dot %pb, %k acc(%a1 : tensor<16x64xf32>) : tensor<16x64xf16>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x64xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.store %e, %lse[%b] : tensor<16xf32> -> memref<?xf32>
  mla.return
}

// -----

// mxfp4 in a KV loop: the data and scale bytes a tile ahead in registers
// (one 16-byte chunk, 32 values, and its scale a thread and round; scale
// 127 where a row is absent), decoded by the byte tables into the swizzled
// bf16 tile (four 16-byte stores a chunk) when every scale of the thread
// is normal, else by the exact decode in a rolled loop; then both dots on
// wgmma. No shared-memory copy of the bytes.
// CHECK-LABEL: gpu.func @mxfp4loop
// CHECK-NOT: x{{[0-9]+}}xi8, #gpu.address_space<workgroup>>
// CHECK: scf.if %{{.*}} -> (vector<16xi8>, i32)
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<16xi8>, i32)
// CHECK: memref.view {{.*}} to memref<1x64x64xi16, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK: nvvm.prmt
// CHECK-COUNT-4: vector.store {{.*}} : memref<1x64x64xi16, #gpu.address_space<workgroup>>, vector<8xi16>
// CHECK: } else {
// CHECK: scf.for
// CHECK-COUNT-4: vector.store {{.*}} : memref<1x64x64xi16, #gpu.address_space<workgroup>>, vector<8xi16>
// CHECK: scf.if %{{.*}} -> (vector<16xi8>, i32)
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// CHECK: scf.yield {{.*}} : {{.*}}, vector<16xi8>, i32
// CHECK-NOT: cp.async
// CHECK: gpu.return
mla.kernel @mxfp4loop(%kv: memref<?x32xi8>, %scales: memref<?x?xi8>, %q: memref<?x64xbf16>,
                      %n: index, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x64xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
    %d = mla.load %kv[%i, %c0] bound %n : memref<?x32xi8> -> tensor<64x32xi8>
    %s = mla.load %scales[%i, %c0] bound %n : memref<?x?xi8> -> tensor<64x2xi8>
    // PLACE: :[[@LINE+1]]:10: remark: placement: smem; decoded from registers loaded a tile ahead into a swizzled bf16 tile
    %k = mla.dequant %d, %s format "mxfp4" : tensor<64x32xi8>, tensor<64x2xi8> -> tensor<64x64xbf16>
    %sc = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    %p, %m1, %l1, %a1 = mla.online_softmax %sc, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xbf16>
    %o = mla.dot %pb, %k acc(%a1 : tensor<16x64xf32>) : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x64xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @twoWarpgroups
// Two warpgroups (8 warps) on a 128-token tile with 32 rows (N = 32, the
// fp8 MTP 2 spec's shape): each warpgroup's S^T is one instruction tile of
// 64 tokens, its 4 steps an iteration into 2 accumulator chains (about 64
// columns of N in flight), so 16 sums after the wait, not 48.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: scf.for
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-16: arith.addf %{{[0-9]+}}#
// CHECK-NOT: arith.addf %{{[0-9]+}}#
// The row maxima (ChipTuning::rescaleSlackLog2): each thread compares its
// scores with its rows' running maxima + 8, one voting barrier, and only
// a tile where some score was above reduces maxima over lanes and warps
// and rescales (the exchange's barrier inside the branch; nothing else).
// CHECK: arith.constant 8.000000e+00 : f32
// CHECK: arith.cmpf ogt
// CHECK: nvvm.fence.proxy
// CHECK: %[[ANY:.*]] = nvvm.barrier #nvvm.reduction<or> %{{.*}} -> i32
// CHECK: %[[VOTE:.*]] = arith.cmpi ne, %[[ANY]]
// CHECK: scf.if %[[VOTE]] -> (f32,
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: } else {
// CHECK-NOT: gpu.barrier
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: scf.yield
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// O^T: each warpgroup 64 of the 128 columns, over all 128 tokens.
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
mla.kernel @twoWarpgroups(%kv: memref<?x128xbf16>, %q: memref<?x128xbf16>, %n: index,
                          %out: memref<?x128xf32>, %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 8 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %qt = mla.load %q[%b, %c0] : memref<?x128xbf16> -> tensor<32x128xbf16>
  %m0 = mla.fill 0xFF800000 : tensor<32xf32>
  %l0 = mla.fill 0.0 : tensor<32xf32>
  %a0 = mla.fill 0.0 : tensor<32x128xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 128 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>) {
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x128xbf16> -> tensor<128x128xbf16>
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (16 registers per lane); wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16, transposed: A = rhs (K-major), B = lhs^T (K-major), descriptors from shared memory
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<32x128xbf16>, tensor<128x128xbf16> -> tensor<32x128xf32>
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<32x128xf32>, tensor<32xf32>, tensor<32x128xf32>
    %pb = mla.cast %p : tensor<32x128xf32> -> tensor<32x128xbf16>
    %o = mla.dot %pb, %k acc(%a1 : tensor<32x128xf32>) : tensor<32x128xbf16>, tensor<128x128xbf16> -> tensor<32x128xf32>
    mla.yield %m1, %l1, %o : tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>
  }
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<32x128xf32>, tensor<32xf32>
  mla.store %o, %out[%b, %c0] : tensor<32x128xf32> -> memref<?x128xf32>
  mla.store %e, %lse[%b] : tensor<32xf32> -> memref<?xf32>
  mla.return
}

// -----

// A KV tile copied and waited for at once (two buffers of 128 KiB do not
// fit) of the argument the launcher names kv: the tensor memory
// accelerator. The map is a new last argument (mla.kv_tensor_map: its box,
// 128 rows x 64 columns, 8 of them along the row in one copy); the
// mbarrier is initialised by thread 0 at entry; per tile thread 0 expects
// 128 KiB and sends the tile in one copy (coordinates: column in the box,
// row, box), every thread waits on the iteration's parity, rows from the bound
// on are then zeroed (under a branch: only a partial tile has them); no
// per-thread asynchronous copies.
// CHECK-LABEL: gpu.func @tensorMap
// CHECK-SAME: %[[MAP:[a-z0-9]+]]: !llvm.ptr)
// CHECK-SAME: mla.kv_tensor_map = array<i64: 128, 64, 8>
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32, predicate = %{{.*}} : !llvm.ptr<3>, i32, i1
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %[[IV:.*]] = %[[LO:.*]] to %[[HI:.*]] step %c128
// The copies' L2 policy, one a program (kv-evict-first-tiles: sm_90a's 16):
// the KV lines as the L2's first victims where the program spans at most
// 16 tiles of 128 rows, else normal.
// CHECK: %[[SPAN:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK-NEXT: %[[FEW:.*]] = arith.cmpi sle, %[[SPAN]], %c2048 : index
// CHECK-NEXT: %[[NORMAL:.*]] = llvm.mlir.constant(1152921504606846976 : i64) : i64
// CHECK-NEXT: %[[EF:.*]] = llvm.mlir.constant(1364590687093260288 : i64) : i64
// CHECK-NEXT: %[[POL:.*]] = arith.select %[[FEW]], %[[EF]], %[[NORMAL]] : i64
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c131072_i32, predicate = %[[FIRST:.*]] : !llvm.ptr<3>, i32, i1
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] l2_cache_hint = %[[POL]] predicate = %[[FIRST]]
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.if
// CHECK: scf.for
// CHECK: vector.store %{{.*}} : memref<8192x4xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.cp.async.shared.global
mla.kernel @tensorMap(%kv: memref<?x512xbf16>, %q: memref<?x512xbf16>, %n: index,
                      %out: memref<?x512xf32>, %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64,
                mla.arg_names = ["kv", "q", "n", "out", "lse"]} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %qt = mla.load %q[%b, %c0] : memref<?x512xbf16> -> tensor<16x512xbf16>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x512xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 128 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x512xf32>) {
    // PLACE: :[[@LINE+1]]:10: remark: placement: smem; tensor-map copies on an mbarrier, waited for at once
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x512xbf16> -> tensor<128x512xbf16>
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x512xbf16>, tensor<128x512xbf16> -> tensor<16x128xf32>
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x128xf32>, tensor<16xf32>, tensor<16x512xf32>
    %pb = mla.cast %p : tensor<16x128xf32> -> tensor<16x128xbf16>
    %o = mla.dot %pb, %k acc(%a1 : tensor<16x512xf32>) : tensor<16x128xbf16>, tensor<128x512xbf16> -> tensor<16x512xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x512xf32>
  }
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x512xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x512xf32> -> memref<?x512xf32>
  mla.store %e, %lse[%b] : tensor<16xf32> -> memref<?xf32>
  mla.return
}

// -----

// The same kernel without argument names (or a tile of another argument):
// no map, the per-thread asynchronous copies.
// CHECK-LABEL: gpu.func @noMap
// CHECK-NOT: !llvm.ptr)
// CHECK: nvvm.cp.async.shared.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.cp.async.wait.group 0
mla.kernel @noMap(%kv: memref<?x512xbf16>, %q: memref<?x512xbf16>, %n: index,
                  %out: memref<?x512xf32>, %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %qt = mla.load %q[%b, %c0] : memref<?x512xbf16> -> tensor<16x512xbf16>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x512xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x512xf32>) {
    // PLACE: :[[@LINE+1]]:10: remark: placement: smem; zero-filling asynchronous copies, waited for at once
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x512xbf16> -> tensor<64x512xbf16>
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x512xbf16>, tensor<64x512xbf16> -> tensor<16x64xf32>
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x512xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xbf16>
    %o = mla.dot %pb, %k acc(%a1 : tensor<16x512xf32>) : tensor<16x64xbf16>, tensor<64x512xbf16> -> tensor<16x512xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x512xf32>
  }
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x512xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x512xf32> -> memref<?x512xf32>
  mla.store %e, %lse[%b] : tensor<16xf32> -> memref<?xf32>
  mla.return
}

// -----

// A double-buffered KV tile (two buffers fit beside two programs) of the
// argument named kv: tensor-map copies on one mbarrier per buffer. The
// first tile's box before the loop (on mbarrier 0); in the loop the wait on
// tile t's mbarrier (t mod 2) in phase t / 2 mod 2, the barrier, then tile
// t + 1's box into the other buffer on its mbarrier; no cp.async.
// CHECK-LABEL: gpu.func @tensorMapTwoBuffers
// CHECK-SAME: mla.kv_tensor_map = array<i64: 64, 64, 1>
// CHECK-COUNT-2: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: scf.for %[[IV:.*]] = %[[LO:[a-z0-9_]+]] to
// CHECK: %[[SUB:.*]] = arith.subi %[[IV]], %[[LO]]
// CHECK: %[[ITER:.*]] = arith.divui %[[SUB]], %c64
// CHECK: arith.remui %[[ITER]], %c2
// CHECK: %[[PH:.*]] = arith.divui %[[ITER]], %c2
// CHECK: arith.andi %[[PH]], %c1
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.shared.global
mla.kernel @tensorMapTwoBuffers(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>,
                                %n: index, %out: memref<?x64xf32>,
                                %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64,
                mla.arg_names = ["kv", "q", "n", "out", "lse"]} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x64xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
    // PLACE: :[[@LINE+1]]:10: remark: placement: smem; tensor-map copies on mbarriers, 2 buffers over the KV loop
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xbf16>
    %o = mla.dot %pb, %k acc(%a1 : tensor<16x64xf32>) : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x64xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.store %e, %lse[%b] : tensor<16xf32> -> memref<?xf32>
  mla.return
}

// -----

// A paged KV tile within one page (pages of 64 rows, tiles of 64 from a
// split's range): the same tensor-map copies, each box from its page's row,
// read from the block table just before the copy (entry x 64 + start mod
// 64; the page's rows as the other copy paths take them, an empty range
// where the entry is negative or past the cache). An empty range sends the
// box from the cache's row extent (memref.dim), wholly outside the map, so
// its rows arrive as zeros. No L2 policy on a paged tile (as on its
// register loads).
// CHECK-LABEL: gpu.func @tensorMapPaged
// CHECK-SAME: %[[TABLE:[a-z0-9]+]]: memref<?xi32>, %[[MAP:[a-z0-9]+]]: !llvm.ptr)
// CHECK: %[[E:.*]] = memref.load %[[TABLE]][%{{.*}}] : memref<?xi32>
// CHECK-NEXT: %[[EI:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK: %[[IN:.*]] = arith.remui %{{.*}}, %c64{{(_[0-9]+)?}} : index
// CHECK: %[[PR:.*]] = arith.muli %[[EI]], %c64{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[PR]], %[[IN]] : index
// CHECK: %[[EXT:.*]] = memref.dim %arg0, %c0{{(_[0-9]+)?}} : memref<?x64xi16>
// CHECK-NEXT: %[[INC:.*]] = arith.cmpi slt, %[[ROW]], %[[EXT]] : index
// CHECK: %[[NN:.*]] = arith.cmpi sge, %[[EI]], %c0{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[OK:.*]] = arith.andi %[[NN]], %[[INC]] : i1
// CHECK: %[[FIRST:.*]] = arith.select %[[OK]], %[[ROW]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[LAST:.*]] = arith.select %[[OK]], %{{.*}}, %c0{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[SOME:.*]] = arith.cmpi slt, %[[FIRST]], %[[LAST]] : index
// CHECK: %[[EXT2:.*]] = memref.dim %arg0, %c0{{(_[0-9]+)?}} : memref<?x64xi16>
// CHECK-NEXT: %[[R:.*]] = arith.select %[[SOME]], %[[FIRST]], %[[EXT2]] : index
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: %[[R32:.*]] = arith.index_cast %[[R]] : index to i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %{{.*}}, box[%{{.*}}, %[[R32]], %{{.*}}] predicate =
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: memref.load %[[TABLE]][%{{.*}}] : memref<?xi32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] predicate =
// CHECK-NOT: nvvm.cp.async.shared.global
mla.kernel @tensorMapPaged(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>,
                           %n: index, %out: memref<?x64xf32>,
                           %lse: memref<?xf32>, %table: memref<?xi32>)
    attributes {grid = ["batch", "splits"], num_warps = 4 : i64, block_n = 64 : i64,
                mla.arg_names = ["kv", "q", "n", "out", "lse", "table"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = mla.program_id 0
  %sp = mla.program_id 1
  %lo, %hi = mla.split_range %n, %sp, %c1 block_n 64
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x64xf32>
  %r:3 = mla.kv_loop %i = %lo to %hi step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
    // PLACE: :[[@LINE+1]]:10: remark: placement: smem; tensor-map copies on mbarriers, 2 buffers over the KV loop
    %k = mla.load %kv[%i, %c0] pages %table[%b] page_size 64 bound %hi : memref<?x64xbf16> -> tensor<64x64xbf16>
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xbf16>
    %o = mla.dot %pb, %k acc(%a1 : tensor<16x64xf32>) : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x64xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.store %e, %lse[%b] : tensor<16xf32> -> memref<?xf32>
  mla.return
}
