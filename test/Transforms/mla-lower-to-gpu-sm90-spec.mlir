// Per-lane lowering for sm_90 (mma.sync m16n8k16 bf16, warp 32).
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu=chip=sm_90 %kernels/deepseek_r1_decode_fp8.mlir | FileCheck %s
// RUN: mla-opt --mla-to-tiles --mla-to-gpu=chip=sm_90 %kernels/deepseek_r1_decode_bf16.mlir | FileCheck %s --check-prefix=NVVM

// CHECK-LABEL: gpu.module @mla_kernels [#nvvm.target<O = 3, chip = "sm_90">]
// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_stage1_masked
// Narrow floats travel as integers: bf16 as i16, fp8 as i8.
// CHECK-SAME: (%{{.*}}: memref<?x16x576xi16>, %{{.*}}: memref<?x576xi8>, %{{.*}}: memref<1xf32>,
// CHECK-SAME: kernel
// 4 warps of 32 lanes:
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// Shared memory, every row padded by 16 bytes (a 576- or 1152-byte row
// would put one column of consecutive rows into one bank): two KV tiles
// 64 x (576 + 16) fp8 (double-buffered: sm_90 copies asynchronously), Q
// 16 x (576 + 8) bf16, P 16 x (64 + 8) bf16, two 16 x 4 f32 reduction
// arrays (a row's shares of the 4 warps in one 16-byte read, rows not
// padded) and the S exchange between warp pairs, 4 warps x 8 accumulators
// x (32 + 4) lanes of f32: 2 x 37888 + 18688 + 2304 + 512 + 4608 = 101888;
// two programs fit an SM, and ptxas is told to keep registers within that
// (nvvm.minctasm).
// CHECK-SAME: mla.shared_bytes = 101888
// CHECK-SAME: nvvm.minctasm = 2
// CHECK: gpu.dynamic_shared_memory
// The two KV buffers and the first tile's copies (2304 chunks of 16 bytes,
// 18 per thread; rows past the bound zero-filled by a copy size of 0) come
// first, as one group, so that their memory latency overlaps Q's copy.
// CHECK: %[[BUF0:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x592xi8, #gpu.address_space<workgroup>>
// CHECK: %[[BUF1:.*]] = memref.view %{{.*}}[%c37888{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x592xi8, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %{{.*}} to %c18
// CHECK: %[[SIZE:.*]] = arith.select %{{.*}}, %c16{{.*}}, %c0{{.*}} : i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// Q: 16 x 576 bf16 in 16-byte chunks (1152 of them, 9 per thread) through
// the flat view of the row-major q (the tile's origin plus the chunk's
// offset in the tile): the 9 loads straight-line, then each chunk scaled
// and rounded in registers and stored; no second pass over the tile.
// CHECK: %[[QVIEW:.*]] = memref.view %{{.*}}[%c75776{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x584xi16, #gpu.address_space<workgroup>>
// CHECK: %[[QFLAT:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<?x16x576xi16> to memref<?xi16>
// CHECK-COUNT-9: vector.load %[[QFLAT]][%{{.*}}] {alignment = 16 : i64} : memref<?xi16>, vector<8xi16>
// CHECK-NOT: vector.load
// CHECK: arith.mulf
// CHECK: vector.store %{{.*}}, %[[QVIEW]]
// CHECK-NOT: memref.load %[[QVIEW]]
// CHECK: gpu.barrier
// The KV loop carries 64 accumulator registers (16 x 512 over 128 lanes)
// and the row max and sum (2 rows per lane each). Each iteration waits for
// this tile's copies (the only group in flight), then one barrier (every
// thread's copies landed, every warp done with the other buffer), then
// starts the next tile's copies into the other buffer (a commit every
// iteration, empty past the end, keeps the group count uniform) and reads
// this tile's buffer: byte (iteration % 2) x 37888.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32,
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: %[[SLOT:.*]] = arith.remui %{{.*}}, %c2{{.*}} : index
// CHECK: %[[AT:.*]] = arith.muli %[[SLOT]], %c37888{{.*}} : index
// CHECK-NEXT: memref.view %{{.*}}[%[[AT]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x592xi8, #gpu.address_space<workgroup>>
// S = Q.K^T in groups of 4 K steps (64 dims: one 16-byte K load per lane
// and tile, groupKSteps), K split across warp pairs
// (ChipInfo::splitKAcrossWarps): warps 2p and 2p + 1 walk dims 0-319 and
// 320-575 (5 and 4 groups) for the 32 columns of both (4 tiles of 8, 16
// accumulators, 16 mma.sync per group): 4 groups each straight-line (a
// static walk, unrolled), the fifth for the even warp under a warp-uniform
// branch. Then each stores its partner's half in shared memory and adds
// its own. No barrier before the stores: the loop body's first barrier
// already separates them from the previous iteration's loads
// (barrierBeforeRewrite).
// CHECK: %[[ODD:.*]] = arith.cmpi ne
// CHECK: arith.select %[[ODD]], %c320{{.*}}, %c0{{.*}} : index
// CHECK-NOT: scf.for
// CHECK-COUNT-64: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-NOT: scf.for
// CHECK: scf.if %[[ODD]] -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } else {
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: %[[XCHG:.*]] = memref.view {{.*}} to memref<32x36xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-8: memref.store {{.*}}, %[[XCHG]]
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-8: memref.load %[[XCHG]]
// Masked scores, then the row max: shuffles over the 2 column bits of the
// lane, for each of the lane's 2 rows, then across warps in shared memory
// (one barrier between the stores and the loads; none before the stores),
// stored [row][warp] so that a lane reads a row's 4 shares in one 16-byte
// load.
// CHECK: arith.cmpi sge
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-2: memref.store {{.*}} : memref<16x4xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-2: vector.load %{{.*}} : memref<16x4xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// The running row sum stays per lane (RowPartial): no other shuffle or
// exchange in the loop; the finalize sums it across lanes and warps once.
// CHECK-NOT: gpu.shuffle
// P.V: P through shared memory, 16 mma.sync (128 columns per warp) per
// K step of 16 tokens.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK-NOT: gpu.shuffle
// CHECK: scf.yield
// CHECK-NOT: gpu.shuffle
// CHECK: scf.yield
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_stage1_mask_free
// The indptr guards compare scalars (the Q row and the KV range's first row
// against 0); after them no mask compares anything:
// CHECK-COUNT-2: arith.cmpi sge, %{{.*}}, %c0{{.*}} : index
// CHECK-NOT: vector.broadcast
// CHECK-NOT: arith.cmpi sge
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_stage2
// CHECK-SAME: mla.shared_bytes = 0
// CHECK: scf.for
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"

// After mla-to-gpu only LLVM / NVVM ops remain in the GPU module.
// NVVM-LABEL: gpu.module @mla_kernels
// NVVM-NOT: scf.
// NVVM-NOT: memref.
// NVVM-NOT: vector.load
// NVVM-NOT: gpu.shuffle
// NVVM: llvm.func @deepseek_r1_decode_bf16_stage1_masked
// NVVM: nvvm.shfl.sync bfly
// NVVM: nvvm.mma.sync
// NVVM: nvvm.barrier0
