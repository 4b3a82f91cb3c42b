// mla-lower-to-gpu's e4m3-double-buffer option (sm_90a's
// ChipTuning::e4m3DoubleBuffer, off by default): a KV tile that wgmma reads
// as e4m3 (fp8 Q and P) and tensor-map copies send gets two buffers (tile
// t + 1 sent once tile t's wait is over) instead of one sent after S^T, and
// O^T's V^T is transposed into V's own atoms instead of a region of its
// own, so that two programs still fit an SM: once S^T's wgmma is done, at
// the tile's own (per-iteration) offset, each round of the transpose reading
// its atoms before a barrier and writing them after it. Without the
// option: one buffer, V^T at a fixed offset of its own.
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a e4m3-double-buffer" %kernels/deepseek_r1_decode_fp8_qp8_sm90a.mlir | FileCheck %s
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_fp8_qp8_sm90a.mlir | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp8_sm90a_stage1_mask_free
// CHECK: memref.view %{{.*}}[%c9216][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<9x64x64xi8
// CHECK: memref.view %{{.*}}[%c46080][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<9x64x64xi8
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: gpu.barrier
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: %[[TILE:view_[0-9]+]] = memref.view %[[SMEM:[0-9]+]][%[[AT:[0-9]+]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<9x64x64xi8
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: %[[VT:view_[0-9]+]] = memref.view %[[SMEM]][%[[AT]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x512x64xi8
// CHECK: scf.for
// CHECK: vector.load %[[TILE]]
// CHECK: gpu.barrier
// CHECK: nvvm.prmt
// CHECK: vector.store %{{.*}}, %[[VT]]
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: arith.addf
// CHECK: nvvm.wgmma.mma_async
// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp8_sm90a_stage2

// OFF-LABEL: gpu.func @deepseek_r1_decode_fp8_qp8_sm90a_stage1_mask_free
// OFF: memref.view %{{.*}}[%c9216][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<9x64x64xi8
// OFF-NOT: to memref<9x64x64xi8
// OFF: memref.view %{{.*}}[%c47104][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x512x64xi8
// OFF-LABEL: gpu.func @deepseek_r1_decode_fp8_qp8_sm90a_stage2
