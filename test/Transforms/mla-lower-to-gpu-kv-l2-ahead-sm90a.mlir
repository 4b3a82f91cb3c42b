// mla-lower-to-gpu's kv-l2-ahead option (sm_90a's ChipTuning::kvL2Ahead,
// off by default): where an fp8-Q-and-P KV tile goes by tensor-map copies
// into a single buffer, sent once its last reader is done (the e4m3 spec),
// each send of tile t + 1 is followed by a bulk tensor prefetch of tile
// t + 2 into the L2 from thread 0, where that tile starts below the loop's
// end, under the copies' L2 policy: one more tile's bytes on their way from
// DRAM without a second buffer. The first tile's copy at the Q load is
// followed by the second tile's prefetch. Without the option: no prefetch.
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a kv-l2-ahead" %kernels/deepseek_r1_decode_fp8_qp8_sm90a.mlir | FileCheck %s
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_fp8_qp8_sm90a.mlir | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp8_sm90a_stage1_masked
// CHECK-SAME: %[[MAP:arg[0-9]+]]: !llvm.ptr)
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: scf.if
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[MAP]], box[
// CHECK: %[[LOOP:[0-9]+]]:{{[0-9]+}} = scf.for %[[IV:arg[0-9]+]] = %{{[0-9]+}} to %[[UB:[0-9]+]] step
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %{{.*}}, box[%{{.*}}] l2_cache_hint = %[[POL:[0-9]+]] predicate
// CHECK-NEXT: %c64{{.*}} = arith.constant 64 : index
// CHECK-NEXT: %[[AFTER:[0-9]+]] = arith.addi %{{[0-9]+}}, %c64{{.*}} : index
// CHECK: %[[T0:[0-9]+]] = arith.cmpi eq, %thread_id_x, %c0{{.*}} : index
// CHECK-NEXT: %[[IN:[0-9]+]] = arith.cmpi slt, %[[AFTER]], %[[UB]] : index
// CHECK-NEXT: %[[GO:[0-9]+]] = arith.andi %[[IN]], %[[T0]] : i1
// CHECK-NEXT: scf.if %[[GO]] {
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[MAP]], box[%{{.*}}] l2_cache_hint = %[[POL]] : !llvm.ptr
// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp8_sm90a_stage1_mask_free
// CHECK: nvvm.cp.async.bulk.tensor.prefetch

// OFF-NOT: nvvm.cp.async.bulk.tensor.prefetch
