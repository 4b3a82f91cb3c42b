// The per-op GPU lowering for gfx942 (CDNA3: wave 64, MFMA 16x16x16 bf16,
// bounds-checked buffer loads, fp8 E4M3FNUZ decoded through f32) on small
// hand-written tile kernels, one op family per kernel. report-placements
// makes each tile op remark its result's placement and the lowering's
// decisions (PLACE); the IR checks show the target instructions (CHECK).
// Whole specs: test/tools/mla-compile-gfx942.mlir, mla-run-gfx942.test.
// RUN: mla-opt --mla-lower-to-gpu="chip=gfx942 report-placements" %s --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLACE
// RUN: mla-opt --mla-lower-to-gpu=chip=gfx942 %s --split-input-file | FileCheck %s

// CHECK: gpu.module @mla_kernels [#rocdl.target<O = 3, chip = "gfx942">]
// CHECK-LABEL: gpu.func @qk
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: rocdl.make.buffer.rsrc
// CHECK: rocdl.raw.ptr.buffer.load
// CHECK: amdgpu.mfma 16x16x16
mla.kernel @qk(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>, %n: index, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:8: remark: placement: smem; bounds-checked buffer loads
  %k = mla.load %kv[%c0, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
  // PLACE: :[[@LINE+1]]:9: remark: placement: smem; bounds-checked buffer loads
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x16_bf16; K steps grouped 2 per operand load
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
  mla.store %s, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @attention
// CHECK: scf.for
// CHECK: amdgpu.mfma 16x16x16
// CHECK: llvm.call_intrinsic "llvm.amdgcn.exp2.f32"
// CHECK: amdgpu.mfma 16x16x16
// CHECK: scf.yield
// CHECK: llvm.call_intrinsic "llvm.amdgcn.log.f32"
mla.kernel @attention(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>, %n: index,
                      %out: memref<?x64xf32>, %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:9: remark: placement: smem; bounds-checked buffer loads
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  // PLACE: :[[@LINE+1]]:9: remark: placement: row-slice (4 registers per lane)
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  // PLACE: :[[@LINE+1]]:9: remark: placement: acc (4 registers per lane)
  %a0 = mla.fill 0.0 : tensor<16x64xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
    // PLACE: :[[@LINE+1]]:10: remark: placement: smem; bounds-checked buffer loads
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x16_bf16; K steps grouped 2 per operand load
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    // The running sum stays a per-lane share inside the loop (row-partial).
    // PLACE: :[[@LINE+1]]:25: remark: placement: acc (4 registers per lane); row-slice (4 registers per lane); row-partial (4 registers per lane); acc (4 registers per lane)
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xbf16>
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x16_bf16
    %o = mla.dot %pb, %k acc(%a1 : tensor<16x64xf32>) : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  // PLACE: :[[@LINE+1]]:12: remark: placement: acc (4 registers per lane); row-slice (4 registers per lane)
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x64xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.store %e, %lse[%b] : tensor<16xf32> -> memref<?xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @combine
// CHECK-NOT: griddepcontrol
// CHECK: llvm.call_intrinsic "llvm.amdgcn.exp2.f32"
mla.kernel @combine(%part: memref<?x?x16x512xf32>, %lse: memref<?x?x16xf32>, %n: index,
                    %out: memref<?x16x512xbf16>)
    attributes {grid = ["batch", "heads"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %h = mla.program_id 1
  // PLACE: :[[@LINE+1]]:8: remark: placement: blocked (2 registers per lane) (runs of 1)
  %o = mla.split_k_reduce %part, %lse[%b, %h] splits %n : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<1x512xf32>
  mla.store %o, %out[%b, %h, %c0] : tensor<1x512xf32> -> memref<?x16x512xbf16>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @fp8
// K decoded pairwise to f32 (v_cvt_pk_f32_fp8) and cut to bf16; P to
// FNUZ fp8 pairwise, then the FNUZ fp8 MFMA.
// CHECK: amdgpu.ext_packed_fp8
// CHECK: amdgpu.mfma 16x16x16
// CHECK: amdgpu.packed_trunc_2xfp8
// CHECK: amdgpu.mfma 16x16x32 {{.*}} : vector<8xf8E4M3FNUZ>, vector<8xf8E4M3FNUZ>, vector<4xf32>
mla.kernel @fp8(%kv: memref<?x64xf8E4M3FNUZ>, %q: memref<?x64xbf16>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xf8E4M3FNUZ> -> tensor<64x64xf8E4M3FNUZ>
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x16_bf16; K steps grouped 4 per operand load
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xf8E4M3FNUZ> -> tensor<16x64xf32>
  %p = mla.cast %s : tensor<16x64xf32> -> tensor<16x64xf8E4M3FNUZ>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x32_fp8_fp8 (FNUZ)
  %o = mla.dot %p, %k : tensor<16x64xf8E4M3FNUZ>, tensor<64x64xf8E4M3FNUZ> -> tensor<16x64xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// mxfp4 (issue 18): no fp4 conversion on CDNA3. Per item of 8 values: the
// bf16 values of the 8 e2m1 magnitudes with the block's scale added to
// their exponent fields ((scale - 127) << 7 in both halves; magnitude 0
// stays 0), split into a low-byte and a high-byte table; v_perm_b32 looks
// up the even and the odd codes' bytes (one selector byte each), the signs
// are or-ed into the high bytes, and eight more perms interleave them into
// pairs in order.
// CHECK-LABEL: gpu.func @mxfp4
// CHECK: %[[A2:.*]] = arith.muli %{{.*}}, %c65537_i32 : i32
// CHECK: %[[T0:.*]] = arith.addi %c1056964608_i32, %{{.*}} : i32
// CHECK: %[[T1:.*]] = arith.addi %c1069563776_i32, %[[A2]] : i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.perm"(%[[T1]], %[[T0]], %c100925952_i32)
// CHECK: llvm.call_intrinsic "llvm.amdgcn.perm"(%[[T1]], %[[T0]], %c117768961_i32)
// CHECK: %[[E:.*]] = arith.andi %{{.*}}, %c117901063_i32 : i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.perm"(%{{.*}}, %{{.*}}, %[[E]])
// CHECK: arith.andi %{{.*}}, %c-2139062144_i32 : i32
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.amdgcn.perm"(%{{.*}}, %{{.*}}, %c{{83952640|117638658}}_i32
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.amdgcn.perm"(%{{.*}}, %{{.*}}, %c{{84148480|117834498}}_i32
// CHECK: vector.store {{.*}}, vector<8xi16>
// CHECK: amdgpu.mfma 16x16x16
mla.kernel @mxfp4(%kv: memref<?x288xi8>, %scales: memref<?x?xi8>, %q: memref<?x576xbf16>, %n: index, %out: memref<?x16xf32>)
    attributes {grid = ["batch"], num_warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %d = mla.load %kv[%c0, %c0] bound %n : memref<?x288xi8> -> tensor<16x288xi8>
  %s = mla.load %scales[%c0, %c0] bound %n : memref<?x?xi8> -> tensor<16x18xi8>
  %k = mla.dequant %d, %s format "mxfp4" : tensor<16x288xi8>, tensor<16x18xi8> -> tensor<16x576xbf16>
  %qt = mla.load %q[%b, %c0] : memref<?x576xbf16> -> tensor<16x576xbf16>
  %sc = mla.dot %qt, %k {transpose_rhs} : tensor<16x576xbf16>, tensor<16x576xbf16> -> tensor<16x16xf32>
  mla.store %sc, %out[%b, %c0] : tensor<16x16xf32> -> memref<?x16xf32>
  mla.return
}
