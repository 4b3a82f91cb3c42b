// The per-op GPU lowering for sm_90 (warp 32, mma.sync m16n8k16, cp.async,
// ldmatrix, programmatic dependent launch; fp8 through cvt.rn.f16x2.e4m3x2)
// on small hand-written tile kernels, one op family per kernel.
// report-placements makes each tile op remark its result's placement and
// the lowering's decisions (PLACE); the IR checks show the target
// instructions (CHECK). The whole specs: mla-lower-to-gpu-sm90-spec.mlir.
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90 report-placements" %s --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLACE
// RUN: mla-opt --mla-lower-to-gpu=chip=sm_90 %s --split-input-file | FileCheck %s

// CHECK: gpu.module @mla_kernels [#nvvm.target<O = 3, chip = "sm_90">]
// CHECK-LABEL: gpu.func @qk
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// Outside a KV loop the tiles are copied through registers.
// CHECK-NOT: nvvm.cp.async
// CHECK: nvvm.mma.sync
mla.kernel @qk(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>, %n: index, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:8: remark: placement: smem
  %k = mla.load %kv[%c0, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
  // PLACE: :[[@LINE+1]]:9: remark: placement: smem
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (8 registers per lane); mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32; K steps grouped 2 per operand load; K split across warp pairs
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
  mla.store %s, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @attention
// The KV tile double-buffered with cp.async (two buffers: the first tile's
// copies before the loop, the next one's in each iteration).
// CHECK-SAME: nvvm.minctasm
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.mma.sync
// The row maxima (ChipTuning::rescaleSlackLog2): the program votes in one
// barrier whether a score exceeds its row's running max + 8; only then
// the exchange across warps (its own barrier) and the rescale.
// CHECK: arith.cmpf ogt
// CHECK: nvvm.barrier #nvvm.reduction<or>
// CHECK: scf.if
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: } else {
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: nvgpu.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
mla.kernel @attention(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>, %n: index,
                      %out: memref<?x64xf32>, %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:9: remark: placement: smem (columns in the grouped dots' K order)
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  // PLACE: :[[@LINE+1]]:9: remark: placement: row-slice (2 registers per lane)
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  // PLACE: :[[@LINE+1]]:9: remark: placement: acc (8 registers per lane)
  %a0 = mla.fill 0.0 : tensor<16x64xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
    // PLACE: :[[@LINE+1]]:10: remark: placement: smem; asynchronous copies, 2 buffers over the KV loop
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (8 registers per lane); mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32; K steps grouped 2 per operand load; K split across warp pairs
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    // The running sum stays a per-lane share inside the loop (row-partial).
    // PLACE: :[[@LINE+1]]:25: remark: placement: acc (8 registers per lane); row-slice (2 registers per lane); row-partial (2 registers per lane); acc (8 registers per lane)
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xbf16>
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (8 registers per lane); mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32; A by ldmatrix.x4
    %o = mla.dot %pb, %k acc(%a1 : tensor<16x64xf32>) : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  // PLACE: :[[@LINE+1]]:12: remark: placement: acc (8 registers per lane); row-slice (2 registers per lane)
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x64xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.store %e, %lse[%b] : tensor<16xf32> -> memref<?xf32>
  mla.return
}

// -----

// One warp: no exchange across warps, so no barrier to vote in: the row
// maxima stay exact (shuffles only), with no branch.
// CHECK-LABEL: gpu.func @attentionOneWarp
// CHECK: scf.for
// CHECK-NOT: nvvm.barrier
// CHECK-NOT: scf.if {{.*}} -> (f32
// CHECK: gpu.shuffle xor
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: scf.yield
mla.kernel @attentionOneWarp(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>, %n: index,
                             %out: memref<?x64xf32>, %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x64xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
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

// CHECK-LABEL: gpu.func @combine
// Launched as the previous kernel's dependent: waits for its stores first.
// CHECK-SAME: mla.dependent_launch
// CHECK: nvvm.griddepcontrol wait
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
mla.kernel @combine(%part: memref<?x?x16x512xf32>, %lse: memref<?x?x16xf32>, %n: index,
                    %out: memref<?x16x512xbf16>)
    attributes {grid = ["batch", "heads"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %h = mla.program_id 1
  // PLACE: :[[@LINE+1]]:8: remark: placement: blocked (4 registers per lane) (runs of 4)
  %o = mla.split_k_reduce %part, %lse[%b, %h] splits %n : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<1x512xf32>
  mla.store %o, %out[%b, %h, %c0] : tensor<1x512xf32> -> memref<?x16x512xbf16>
  mla.return
}

// -----

// The single-launch combine: true only where all num_splits programs run
// as one cluster (%cluster_nctarank), after the cluster barrier (arrive:
// release, wait: acquire); the combine in the loop keeps one width of 8
// splits (max_splits) and waits for no prerequisite grid.
// CHECK-LABEL: gpu.func @cluster_combine
// CHECK-NOT: mla.dependent_launch
// CHECK: %[[SIZE:.*]] = nvvm.read.ptx.sreg.cluster.nctarank : i32
// CHECK: %[[SZ:.*]] = arith.index_castui %[[SIZE]] : i32 to index
// CHECK: %[[MANY:.*]] = arith.cmpi ugt, %[[N:.*]], %c1
// CHECK: %[[ALL:.*]] = arith.cmpi eq, %[[SZ]], %[[N]]
// CHECK: %[[BOTH:.*]] = arith.andi %[[MANY]], %[[ALL]]
// CHECK: scf.if %[[BOTH]] {
// CHECK-NEXT: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK: scf.if %[[BOTH]] {
// CHECK: scf.for
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: scf.for %{{.*}} = %c0{{(_[0-9]+)?}} to %{{.*}} step %c8{{(_[0-9]+)?}} iter_args
// CHECK-NOT: step %c16
// CHECK: gpu.return
mla.kernel @cluster_combine(%part: memref<?x?x16x512xf32>, %lse: memref<?x?x16xf32>,
                            %n: index, %out: memref<?x16x512xbf16>)
    attributes {grid = ["batch", "splits"], num_warps = 8 : i64} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %b = mla.program_id 0
  %s = mla.program_id 1
  %all = mla.split_cluster_sync %n
  scf.if %all {
    scf.for %u = %s to %c8 step %n {
      %h = arith.muli %u, %c2 : index
      // PLACE: :[[@LINE+1]]:12: remark: placement: blocked (4 registers per lane) (runs of 4)
      %o = mla.split_k_reduce %part, %lse[%b, %h] splits %n {max_splits = 16 : i64} : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<2x512xf32>
      mla.store %o, %out[%b, %h, %c0] : tensor<2x512xf32> -> memref<?x16x512xbf16>
    }
  }
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @fp8
// fp8 pairs to f16 pairs (cvt.rn.f16x2.e4m3x2), then bf16; no fp8 matrix
// instruction: P is rounded to fp8 in software and widened back.
// CHECK: llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"
// CHECK: nvvm.mma.sync
// CHECK-NOT: amdgpu.
mla.kernel @fp8(%kv: memref<?x64xf8E4M3FN>, %q: memref<?x64xbf16>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (8 registers per lane); mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32; K steps grouped 4 per operand load
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
  %p = mla.cast %s : tensor<16x64xf32> -> tensor<16x64xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (8 registers per lane); mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
  %o = mla.dot %p, %k : tensor<16x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// mxfp4 (issue 18): the packed tile and its 18-byte scale rows copied as
// bytes, then decoded into a bf16 tile in shared memory, 8 values a lane
// per 4-byte read: three byte-table prmt a 4 values (low bytes, sign
// bytes, high bytes of the bf16 magnitudes), two interleaving them, one
// bf16 pair multiply by 2^(scale - 127) (the e8m0 code in both exponent
// fields); the exact integer decode only for batches with extreme scales.
// CHECK-LABEL: gpu.func @mxfp4
// CHECK: scf.if
// CHECK: vector.load {{.*}} : memref<64x304xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK: %[[SC:.*]] = arith.muli %{{.*}}, %c8388736_i32 : i32
// CHECK: %[[LO:.*]] = nvvm.prmt <default> %[[M:.*]], %c-1065353216_i32, %c-1065336832_i32 : i32
// CHECK: %[[S:.*]] = nvvm.prmt <default> %{{.*}}, %c32768_i32, %c0_i32 : i32
// CHECK: %[[HI:.*]] = nvvm.prmt <default> %[[M]], %c1061109504_i32, %c1077952576_i32 : i32
// CHECK: %[[HS:.*]] = arith.ori %[[HI]], %[[S]] : i32
// CHECK: nvvm.prmt <default> %c20800_i32, %[[LO]], %[[HS]] : i32
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<2xbf16>
// CHECK: nvvm.prmt <default> %c29538_i32, %[[LO]], %[[HS]] : i32
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<2xbf16>
// CHECK: vector.store {{.*}}, vector<8xi16>
// CHECK: nvvm.mma.sync
mla.kernel @mxfp4(%kv: memref<?x288xi8>, %scales: memref<?x?xi8>, %q: memref<?x576xbf16>, %n: index, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %d = mla.load %kv[%c0, %c0] bound %n : memref<?x288xi8> -> tensor<64x288xi8>
  %s = mla.load %scales[%c0, %c0] bound %n : memref<?x?xi8> -> tensor<64x18xi8>
  // PLACE: :[[@LINE+1]]:8: remark: placement: smem; decoded into a bf16 tile in shared memory
  %k = mla.dequant %d, %s format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xbf16>
  %qt = mla.load %q[%b, %c0] : memref<?x576xbf16> -> tensor<16x576xbf16>
  %sc = mla.dot %qt, %k {transpose_rhs} : tensor<16x576xbf16>, tensor<64x576xbf16> -> tensor<16x64xf32>
  mla.store %sc, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// fp8 Q scaled per program (mla.quant_scale), folded into the straight-line
// copy of the Q tile: the loaded registers' magnitudes, a tree of maxima,
// 16-lane butterflies, one word a 16-lane group through shared memory and a
// barrier, then the scale and the pair rounding into the fp8 tile; the
// inverse reaches the scores' scale.
// (16 x 64 bf16: one 16-byte chunk a thread, 8 magnitudes, 7 maxima.)
// CHECK-LABEL: gpu.func @qscale_folded
// CHECK: vector.load {{.*}} : memref<?xi16>, vector<8xi16>
// CHECK-NOT: arith.mulf
// CHECK-COUNT-7: llvm.intr.maxnum
// CHECK-NOT: arith.mulf
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: memref.store {{.*}} : memref<1x12xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-2: vector.load {{.*}} : memref<1x12xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: arith.shrui
// CHECK-COUNT-8: arith.mulf
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ff.to.e4m3x2.rn"
mla.kernel @qscale_folded(%q: memref<?x64xbf16>, %kv: memref<?x64xf8E4M3FN>,
                          %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:9: remark: placement: its largest magnitude reduced over the program on the way; rounded to fp8 in registers on its way to shared memory
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %qf = mla.cast %qt : tensor<16x64xbf16> -> tensor<16x64xf32>
  %fit, %inv = mla.quant_scale %qf to f8E4M3FN : tensor<16x64xf32>
  %qs = mla.scale %qf, %fit : tensor<16x64xf32>
  %q8 = mla.cast %qs : tensor<16x64xf32> -> tensor<16x64xf8E4M3FN>
  %k = mla.load %kv[%c0, %c0] : memref<?x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  %s = mla.dot %q8, %k {transpose_rhs} : tensor<16x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
  %ss = mla.scale %s, %inv : tensor<16x64xf32>
  mla.store %ss, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// mla.quant_scale of a tile no load folds (Q's load feeds a dot as well):
// a strided loop over the tile's elements, then the same program-wide
// maximum; its inverse scales the scores.
// CHECK-LABEL: gpu.func @qscale_alone
// CHECK: scf.for {{.*}} iter_args
// CHECK: llvm.intr.maxnum
// CHECK: scf.yield
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: gpu.barrier
// CHECK: arith.shrui
mla.kernel @qscale_alone(%q: memref<?x64xbf16>, %kv: memref<?x64xbf16>,
                         %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:9: remark: placement: smem
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %qf = mla.cast %qt : tensor<16x64xbf16> -> tensor<16x64xf32>
  %fit, %inv = mla.quant_scale %qf to f16 : tensor<16x64xf32>
  %k = mla.load %kv[%c0, %c0] : memref<?x64xbf16> -> tensor<64x64xbf16>
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
  %ss = mla.scale %s, %inv : tensor<16x64xf32>
  mla.store %ss, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}
