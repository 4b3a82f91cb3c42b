// The per-op GPU lowering for gfx950 (CDNA4: wave 64, MFMA 16x16x32,
// bounds-checked buffer loads, fp8 E4M3FN with packed conversions) on small
// hand-written tile kernels, one op family per kernel. report-placements
// makes each tile op remark its result's placement and the lowering's
// decisions (PLACE); the IR checks show the target instructions (CHECK).
// Whole specs: test/tools/mla-compile-gfx950.mlir, mla-run-gfx950.test.
// RUN: mla-opt --mla-lower-to-gpu="chip=gfx950 report-placements" %s --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLACE
// RUN: mla-opt --mla-lower-to-gpu=chip=gfx950 %s --split-input-file | FileCheck %s

// CHECK: gpu.module @mla_kernels [#rocdl.target<O = 3, chip = "gfx950">]
// CHECK-LABEL: gpu.func @qk
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// The KV tile through a buffer whose size ends at the bound's row (the
// smaller of the bound and the tile's rows): rows past it read as zeros,
// with no compare per chunk.
// CHECK: arith.minsi
// CHECK: rocdl.make.buffer.rsrc
// CHECK: rocdl.raw.ptr.buffer.load
// CHECK: amdgpu.mfma 16x16x32
mla.kernel @qk(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>, %n: index, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:8: remark: placement: smem; bounds-checked buffer loads
  %k = mla.load %kv[%c0, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
  // PLACE: :[[@LINE+1]]:9: remark: placement: smem; bounds-checked buffer loads
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x32_bf16
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
  mla.store %s, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @attention
// The KV tile (64 x 64 bf16, 9 KiB padded) is double-buffered where two
// programs still fit in LDS: LDS DMA loads (buffer_load_dwordx4 ... lds,
// 16 bytes a lane at M0 + offset + 16 lane) fill the padded rows, 9
// wave-loads a tile (3, 2, 2, 2 per wave), four to an M0 value; the first
// tile goes out before the loop. In the loop: wait for this tile's loads
// (s_waitcnt vmcnt(0) = 3952), a barrier that orders LDS alone (fences of
// the compiler only, lgkmcnt(0) = 49279, s_barrier: gpu.barrier's fence
// would wait for the next tile's loads too), then the next tile's loads.
// CHECK: rocdl.readfirstlane
// CHECK: rocdl.raw.ptr.buffer.load.lds {{.*}}, %c0_i32{{.*}}, %c0_i32
// CHECK: rocdl.raw.ptr.buffer.load.lds {{.*}}, %c1024_i32
// CHECK: scf.if
// CHECK: rocdl.raw.ptr.buffer.load.lds {{.*}}, %c2048_i32
// CHECK: scf.for
// CHECK: rocdl.s.waitcnt 3952
// CHECK-NEXT: llvm.fence syncscope("singlethread") seq_cst
// CHECK-NEXT: rocdl.s.waitcnt 49279
// CHECK-NEXT: rocdl.s.barrier
// CHECK-NEXT: llvm.fence syncscope("singlethread") seq_cst
// CHECK-NOT: gpu.barrier
// CHECK: rocdl.raw.ptr.buffer.load.lds
// CHECK: amdgpu.mfma 16x16x32
// The row maxima across the 16 lanes of a row: DPP lane permutes (XOR 1,
// XOR 2, the other quad, the other half-row), no shuffle through LDS; maxnum
// (ChipTuning::rowMaxIgnoresNaN), which v_max_f32 does with the permute
// folded in.
// CHECK-NOT: gpu.shuffle
// CHECK: amdgpu.dpp {{.*}} quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32])
// CHECK: arith.maxnumf
// CHECK: amdgpu.dpp {{.*}} quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32])
// CHECK: amdgpu.dpp {{.*}} row_half_mirror
// CHECK: amdgpu.dpp {{.*}} row_mirror
// CHECK: llvm.call_intrinsic "llvm.amdgcn.exp2.f32"
// V's bf16 B operand (8 tokens of one column per lane) in two transposing
// reads of 4 (ds_read_b64_tr_b16), per K step of 32 tokens:
// CHECK: amdgpu.transpose_load %{{.*}} : memref<64x72xi16, #gpu.address_space<workgroup>> -> vector<4xi16>
// CHECK-NEXT: vector.extract
// CHECK: amdgpu.transpose_load %{{.*}} : memref<64x72xi16, #gpu.address_space<workgroup>> -> vector<4xi16>
// CHECK: amdgpu.mfma 16x16x32
// CHECK: scf.yield
// The finalize's natural-log LSE: v_log_f32.
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
    // PLACE: :[[@LINE+1]]:10: remark: placement: smem; asynchronous copies, 2 buffers over the KV loop
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x64xbf16> -> tensor<64x64xbf16>
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x32_bf16
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
    // The running sum stays a per-lane share inside the loop (row-partial).
    // PLACE: :[[@LINE+1]]:25: remark: placement: acc (4 registers per lane); row-slice (4 registers per lane); row-partial (4 registers per lane); acc (4 registers per lane)
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xbf16>
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x32_bf16; B by transposing read
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
// No dependent launches on CDNA.
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

// CDNA has no thread-block clusters: the sync is false and nothing waits
// (stage 2 combines).
// CHECK-LABEL: gpu.func @cluster_sync
// CHECK: %[[F:.*]] = arith.constant false
// CHECK-NEXT: scf.if %[[F]] {
// CHECK-NOT: rocdl.barrier
// CHECK: gpu.return
mla.kernel @cluster_sync(%part: memref<?x?x16x512xf32>, %lse: memref<?x?x16xf32>,
                         %n: index, %out: memref<?x16x512xbf16>)
    attributes {grid = ["batch", "splits"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %all = mla.split_cluster_sync %n
  scf.if %all {
    %o = mla.split_k_reduce %part, %lse[%b, %c0] splits %n {max_splits = 16 : i64} : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<2x512xf32>
    mla.store %o, %out[%b, %c0, %c0] : tensor<2x512xf32> -> memref<?x16x512xbf16>
  }
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @fp8
// K to bf16 pairwise (v_cvt_scalef32_pk_bf16_fp8), P to fp8 pairwise
// (v_cvt_pk_fp8_f32), then the fp8 MFMA on fp8 operands.
// CHECK: amdgpu.scaled_ext_packed
// CHECK: amdgpu.mfma 16x16x32
// CHECK: amdgpu.packed_trunc_2xfp8
// K as V (B read along its rows, K steps of 32 tokens): one transposing
// LDS read (ds_read_b64_tr_b8) per step hands each lane its column's 8
// tokens as stored, for the fp8 MFMA as they are.
// CHECK: amdgpu.transpose_load %{{.*}} : memref<64x80xi8, #gpu.address_space<workgroup>> -> vector<8xi8>
// CHECK: amdgpu.mfma 16x16x32 {{.*}} : vector<8xf8E4M3FN>, vector<8xf8E4M3FN>, vector<4xf32>
// CHECK: amdgpu.transpose_load
// CHECK: amdgpu.mfma 16x16x32 {{.*}} : vector<8xf8E4M3FN>, vector<8xf8E4M3FN>, vector<4xf32>
// CHECK-NOT: amdgpu.transpose_load
mla.kernel @fp8(%kv: memref<?x64xf8E4M3FN>, %q: memref<?x64xbf16>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x32_bf16; K steps grouped 2 per operand load
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
  %p = mla.cast %s : tensor<16x64xf32> -> tensor<16x64xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x32_fp8_fp8; B by transposing read
  %o = mla.dot %p, %k : tensor<16x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// P V over 128 tokens, fp8 x fp8: the 16x16x128 f8f6f4 instruction (K =
// 128 divides the contraction; 32 operand bytes per lane). Its B operand,
// 32 tokens of one column per lane in K-interleaved runs of 8 (MatrixInstr
// transposedReads), in four transposing reads; A (P) in two 16-byte runs.
// CHECK-LABEL: gpu.func @f8f6f4
// CHECK-COUNT-4: amdgpu.transpose_load %{{.*}} -> vector<8xi8>
// CHECK: amdgpu.mfma 16x16x128 {{.*}} : vector<32xf8E4M3FN>, vector<32xf8E4M3FN>, vector<4xf32>
// CHECK-NOT: amdgpu.mfma
// CHECK: gpu.return
mla.kernel @f8f6f4(%kv: memref<?x64xf8E4M3FN>, %ps: memref<?x128xf8E4M3FN>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %v = mla.load %kv[%c0, %c0] : memref<?x64xf8E4M3FN> -> tensor<128x64xf8E4M3FN>
  %p = mla.load %ps[%b, %c0] : memref<?x128xf8E4M3FN> -> tensor<16x128xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x128_f8f6f4; B by transposing read
  %o = mla.dot %p, %v : tensor<16x128xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<16x64xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// Q K^T over 192 = 1.5 x 128, fp8 x fp8: no instruction deeper than the
// 16x16x32 fp8 one divides the contraction, so it is split
// (TargetInfo::kRanges): the first 128 on the 16x16x128 f8f6f4 instruction
// (A and B each as two 16-byte runs of a row), the last 64 on two 16x16x32
// fp8 ones (their K steps grouped 2 per operand load), into the same
// accumulators: 3 instructions per tile instead of 6.
// CHECK-LABEL: gpu.func @qk_split
// CHECK-COUNT-4: vector.load {{.*}} : memref<{{16|64}}x208xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// CHECK: amdgpu.mfma 16x16x128 {{.*}} : vector<32xf8E4M3FN>, vector<32xf8E4M3FN>, vector<4xf32>
// CHECK-COUNT-2: vector.load {{.*}} : memref<{{16|64}}x208xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// CHECK: amdgpu.mfma 16x16x32 {{.*}} : vector<8xf8E4M3FN>, vector<8xf8E4M3FN>, vector<4xf32>
// CHECK: amdgpu.mfma 16x16x32 {{.*}} : vector<8xf8E4M3FN>, vector<8xf8E4M3FN>, vector<4xf32>
// CHECK-NOT: amdgpu.mfma
// CHECK: gpu.return
mla.kernel @qk_split(%kv: memref<?x192xf8E4M3FN>, %qs: memref<?x192xf8E4M3FN>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x192xf8E4M3FN> -> tensor<64x192xf8E4M3FN>
  %q = mla.load %qs[%b, %c0] : memref<?x192xf8E4M3FN> -> tensor<16x192xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (4 registers per lane); v_mfma_f32_16x16x128_f8f6f4; v_mfma_f32_16x16x32_fp8_fp8; K steps grouped 2 per operand load
  %s = mla.dot %q, %k {transpose_rhs} : tensor<16x192xf8E4M3FN>, tensor<64x192xf8E4M3FN> -> tensor<16x64xf32>
  mla.store %s, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// mxfp4 (issue 18): the packed tile and its scales are copied as bytes (the
// data through the per-tile bounds-checked buffer, the 18-byte scale rows
// element by element), then decoded into a bf16 tile in LDS, 8 values a
// lane per 4-byte read and 16-byte write, a byte (two values) a scaled
// conversion whose f32 scale is the e8m0 code in the exponent field; a
// branch per batch of rounds takes the exact integer decode only for
// extreme scales.
// The scale rows (64 x 18 bytes over 256 lanes: 4.5 rounds) are copied
// straight-line, all five loads before the first store (one wait), the
// last round guarded; no loop.
// CHECK-LABEL: gpu.func @mxfp4
// CHECK: rocdl.raw.ptr.buffer.load
// CHECK-NOT: scf.for
// CHECK-COUNT-5: vector.load %arg1[{{.*}}] : memref<?x?xi8>, vector<1xi8>
// CHECK-NOT: scf.for
// CHECK-COUNT-4: vector.store {{.*}} : memref<64x34xi8, #gpu.address_space<workgroup>>, vector<1xi8>
// CHECK: scf.if
// CHECK-NEXT: vector.store {{.*}} : memref<64x34xi8, #gpu.address_space<workgroup>>, vector<1xi8>
// CHECK: memref.load {{.*}} : memref<64x34xi8, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK: vector.load {{.*}} : memref<64x304xi8, #gpu.address_space<workgroup>>, vector<4xi8>
// CHECK: %[[W:.*]] = vector.bitcast %{{.*}} : vector<1xi32> to vector<8xf4E2M1FN>
// CHECK: %[[SH:.*]] = arith.shli %{{.*}}, %c23_i32 : i32
// CHECK: %[[SC:.*]] = arith.bitcast %[[SH]] : i32 to f32
// CHECK: amdgpu.scaled_ext_packed %[[W]][0], %[[SC]] : vector<8xf4E2M1FN> to vector<2xbf16>
// CHECK: amdgpu.scaled_ext_packed %[[W]][1], %[[SC]]
// CHECK: amdgpu.scaled_ext_packed %[[W]][2], %[[SC]]
// CHECK: amdgpu.scaled_ext_packed %[[W]][3], %[[SC]] : vector<8xf4E2M1FN> to vector<2xbf16>
// CHECK: vector.store {{.*}} : memref<64x584xi16, #gpu.address_space<workgroup>>, vector<8xi16>
// CHECK: amdgpu.mfma 16x16x32
mla.kernel @mxfp4(%kv: memref<?x288xi8>, %scales: memref<?x?xi8>, %q: memref<?x576xbf16>, %n: index, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:8: remark: placement: smem; bounds-checked buffer loads
  %d = mla.load %kv[%c0, %c0] bound %n : memref<?x288xi8> -> tensor<64x288xi8>
  // PLACE: :[[@LINE+1]]:8: remark: placement: smem
  %s = mla.load %scales[%c0, %c0] bound %n : memref<?x?xi8> -> tensor<64x18xi8>
  // PLACE: :[[@LINE+1]]:8: remark: placement: smem; decoded into a bf16 tile in shared memory
  %k = mla.dequant %d, %s format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xbf16>
  %qt = mla.load %q[%b, %c0] : memref<?x576xbf16> -> tensor<16x576xbf16>
  %sc = mla.dot %qt, %k {transpose_rhs} : tensor<16x576xbf16>, tensor<64x576xbf16> -> tensor<16x64xf32>
  mla.store %sc, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// CHECK-LABEL: gpu.func @fp8terms
// Q and P as two e4m3 terms (mla.split_terms, mla.sum_terms), the same
// kernel as mla-lower-to-gpu-sm90a.mlir's: Q's terms rounded in pairs in
// registers on the copy's way to LDS, the hi terms read back by the scaled
// pair conversion to f16 (exact for e4m3) for the lo terms, both stored as
// 8-byte runs into rows r and 16 + r of a 32-row fp8 tile; both dots on
// the fp8 MFMA with 32 rows, the terms' sums in registers.
// CHECK-COUNT-4: amdgpu.packed_trunc_2xfp8
// CHECK-COUNT-4: amdgpu.scaled_ext_packed {{.*}} : vector<2xf8E4M3FN> to vector<2xf16>
// CHECK-COUNT-4: amdgpu.packed_trunc_2xfp8
// CHECK: vector.store {{.*}} : memref<32x80xi8, #gpu.address_space<workgroup>>, vector<8xi8>
// CHECK: vector.store {{.*}} : memref<32x80xi8, #gpu.address_space<workgroup>>, vector<8xi8>
// CHECK: amdgpu.mfma 16x16x32 {{.*}} : vector<8xf8E4M3FN>, vector<8xf8E4M3FN>, vector<4xf32>
mla.kernel @fp8terms(%kv: memref<?x64xf8E4M3FN>, %q: memref<?x64xbf16>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:9: remark: placement: bounds-checked buffer loads; rounded to fp8 in registers on its way to shared memory
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %qf = mla.cast %qt : tensor<16x64xbf16> -> tensor<16x64xf32>
  %q2 = mla.split_terms %qf : tensor<16x64xf32> -> tensor<32x64xf8E4M3FN>
  // PLACE: :[[@LINE+1]]:9: remark: placement: acc (8 registers per lane); v_mfma_f32_16x16x32_fp8_fp8
  %s2 = mla.dot %q2, %k {transpose_rhs} : tensor<32x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<32x64xf32>
  // PLACE: :[[@LINE+1]]:8: remark: placement: acc (4 registers per lane)
  %s = mla.sum_terms %s2 : tensor<32x64xf32> -> tensor<16x64xf32>
  // PLACE: :[[@LINE+1]]:9: remark: placement: acc (8 registers per lane)
  %p2 = mla.split_terms %s : tensor<16x64xf32> -> tensor<32x64xf8E4M3FN>
  %o2 = mla.dot %p2, %k : tensor<32x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<32x64xf32>
  %o = mla.sum_terms %o2 : tensor<32x64xf32> -> tensor<16x64xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}
