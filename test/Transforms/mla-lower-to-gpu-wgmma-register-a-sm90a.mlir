// sm_90a's ChipTuning::wgmmaRegisterA (on by default): S^T = K Q^T takes
// the fp8 KV tile, loaded a tile ahead into registers, as wgmma's register
// A. With mla-lower-to-gpu's wgmma-smem-a option the same kernel reads the
// converted tile from shared memory for both dots (OFF).
// ChipTuning::wgmmaRegisterV (opt-in: wgmma-register-v; REGV, REGVPLACE):
// O^T = V^T P^T takes V as register A too, from V's bytes stored in paired
// columns (PairedVMap) and read by ldmatrix.trans, where by default it
// reads V's converted 16-bit copy from shared memory (CHECK, PLACE).
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90a report-placements" %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLACE
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90a wgmma-register-v report-placements" %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=REGVPLACE
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90a" %s | FileCheck %s
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90a wgmma-register-v" %s | FileCheck %s --check-prefix=REGV
// RUN: mla-opt --mla-lower-to-gpu="chip=sm_90a wgmma-smem-a wgmma-register-v report-placements" %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF

// REGV-LABEL: gpu.func @registerA
// REGV: scf.for
// REGV: gpu.barrier
// REGV-NOT: gpu.barrier
// Atom 0 (V's): its chunks converted for S^T and their bytes stored in
// paired columns (two byte permutes a half, one 16-byte store each) into
// the fp8 tile in the 64-byte swizzle; no 16-bit copy.
// REGV: nvvm.prmt <default> %c20800_i32
// REGV: nvvm.prmt <default> %c29538_i32
// REGV: vector.store {{.*}} : memref<2x64x64xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// REGV-NOT: vector.store {{.*}} vector<8xi16>
// REGV: nvvm.wgmma.fence.aligned
// REGV-COUNT-4: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0
// REGV: nvvm.wgmma.wait.group.sync.aligned 1
// REGV-NOT: vector.store {{.*}} vector<16xi8>
// REGV: nvvm.wgmma.wait.group.sync.aligned 0
// REGV: nvvm.barrier #nvvm.reduction<or>
// P's barrier, then O^T: per two K steps one ldmatrix.x4.trans at the
// thread's address plus the steps' constant (16 rows: 1024 bytes), one
// byte permute (0x3120) and two conversions a register, a fence and two
// register-A wgmmas with P's descriptor plus the step's offset, one group.
// REGV: gpu.barrier
// REGV-NOT: nvvm.wgmma.mma_async
// REGV: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4+0];
// REGV: nvvm.prmt <default> %c12576_i32
// REGV: llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"
// REGV: nvvm.wgmma.fence.aligned
// REGV: add.s64 desc, $12, 0;\0Awgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16
// REGV: add.s64 desc, $12, 2;
// REGV: nvvm.wgmma.commit.group.sync.aligned
// REGV-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// REGV: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4+2048];
// REGV: add.s64 desc, $12, 4;
// REGV: add.s64 desc, $12, 6;
// REGV-NOT: nvvm.wgmma.mma_async
// REGV: scf.yield

// CHECK-LABEL: gpu.func @registerA
// Q is stored in the grouped K order of an atom (4-byte pieces: the copy
// writes element pairs to their columns).
// CHECK: vector.store {{.*}} : memref<2x16x64xi16, #gpu.address_space<workgroup>>, vector<2xi16>
// CHECK: scf.for
// The barrier at the top of the iteration (the previous O^T read the tile)
// and none between the conversion and S^T: per atom, the chunks of rows g
// and g + 8 converted, atom 0's stored for V (it is the slice's), a fence
// and four register-A wgmmas into 4 chains, one group.
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"
// CHECK: vector.store {{.*}} : memref<2x64x64xi16, #gpu.address_space<workgroup>>, vector<8xi16>
// CHECK: nvvm.wgmma.fence.aligned
// Each adds its step's offset to Q's one descriptor itself ($12, the atom's
// 2048 bytes and the step's 32 >> 4), so that LLVM hoists no descriptor.
// CHECK: llvm.inline_asm has_side_effects {{.*}}add.s64 desc, $12, 0;\0Awgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}, {$8, $9, $10, $11}, desc, p, 1, 1, 0;
// CHECK: llvm.inline_asm has_side_effects {{.*}}add.s64 desc, $12, 2;
// CHECK: llvm.inline_asm has_side_effects {{.*}}add.s64 desc, $12, 4;
// CHECK: llvm.inline_asm has_side_effects {{.*}}add.s64 desc, $12, 6;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// Atom 1 (the rope-like columns nobody else reads): converted, not stored.
// CHECK-NOT: gpu.barrier
// CHECK-NOT: vector.store {{.*}} vector<8xi16>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: add.s64 desc, $12, 128;
// CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// Then the next tile's loads, the last wait, the softmax's vote with no
// async-proxy fence (it would wait for those loads; P's barrier carries
// the fence V's stores need); O^T from the stored tile (descriptors)
// after P's barrier.
// CHECK: llvm.inline_asm has_side_effects {{.*}}"ld.global.L2::cache_hint.v4.b32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.fence.proxy
// CHECK: nvvm.barrier #nvvm.reduction<or>
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<f16>, <one>, <col>], B[<f16>, <one>, <col>]
// CHECK: scf.yield
// CHECK: gpu.return
mla.kernel @registerA(%kv: memref<?x128xf8E4M3FN>, %q: memref<?x128xf16>, %n: index,
                      %out: memref<?x64xf32>, %lse: memref<?xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  // PLACE: :[[@LINE+1]]:9: remark: placement: smem (columns in the grouped dots' K order)
  %qt = mla.load %q[%b, %c0] : memref<?x128xf16> -> tensor<16x128xf16>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x64xf32>
  %r:3 = mla.kv_loop %i = %c0 to %n step 64 iter_args(%m = %m0, %l = %l0, %a = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) {
    // REGVPLACE: :[[@LINE+3]]:10: remark: placement: smem; loaded into registers a tile ahead, the A operand of the dot that reads it transposed (converted there); V's bytes stored in paired columns for the dot that reads them as register A
    // PLACE: :[[@LINE+2]]:10: remark: placement: smem; loaded into registers a tile ahead, the A operand of the dot that reads it transposed (converted there){{$}}
    // OFF: :[[@LINE+1]]:10: remark: placement: smem; loaded into registers a tile ahead, converted into a swizzled f16 tile
    %k = mla.load %kv[%i, %c0] bound %n : memref<?x128xf8E4M3FN> -> tensor<64x128xf8E4M3FN>
    // PLACE: :[[@LINE+2]]:10: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16, transposed: A = rhs from registers (4 K steps an atom), B = lhs^T (K-major)
    // OFF: :[[@LINE+1]]:10: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16, transposed: A = rhs (K-major), B = lhs^T (K-major), descriptors from shared memory
    %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x128xf16>, tensor<64x128xf8E4M3FN> -> tensor<16x64xf32>
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x64xf32>
    %pb = mla.cast %p : tensor<16x64xf32> -> tensor<16x64xf16>
    %v = mla.slice %k [0, 0] : tensor<64x128xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
    // REGVPLACE: :[[@LINE+2]]:10: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16, transposed: A = rhs^T from registers (ldmatrix.trans of its fp8 bytes, 4 K steps a tile), B = lhs^T (K-major)
    // PLACE: :[[@LINE+1]]:10: remark: placement: acc (8 registers per lane); wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16, transposed: A = rhs^T (MN-major), B = lhs^T (K-major), descriptors from shared memory
    %o = mla.dot %pb, %v acc(%a1 : tensor<16x64xf32>) : tensor<16x64xf16>, tensor<64x64xf8E4M3FN> -> tensor<16x64xf32>
    mla.yield %m1, %l1, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %o, %e = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x64xf32>, tensor<16xf32>
  mla.store %o, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.store %e, %lse[%b] : tensor<16xf32> -> memref<?xf32>
  mla.return
}
