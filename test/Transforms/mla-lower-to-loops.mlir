// The host lowering: kernels become one function per program, tiles become
// heap buffers, narrow floats are stored as integers and decoded with
// integer arithmetic.
// RUN: mla-opt --mla-lower-to-loops %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @dot_fp8
// CHECK-SAME: (%[[PX:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[KV:.*]]: memref<?x64xi8>, %[[Q:.*]]: memref<?x64xi16>, %[[OUT:.*]]: memref<?x16xf32>)
// CHECK-SAME: llvm.emit_c_interface
// CHECK-SAME: mla.grid = ["batch"]
// The load of 16 fp8 rows, masked against the bound:
// CHECK: %[[K:.*]] = memref.alloc() : memref<16x64xi8>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: memref.load %[[KV]]
// CHECK: } else {
// CHECK: arith.constant 0 : i8
// The dot: bf16 widened by a shift; fp8 moved into f32 bits 31, 26..20 and
// multiplied by 2^120 (E4M3FN), NaN at S.1111.111.
// CHECK: memref.alloc() : memref<16x16xf32>
// CHECK: scf.for %{{.*}} iter_args
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.constant 20 : i32
// CHECK: arith.constant 1.329228E+36 : f32
// CHECK: arith.constant 133169152 : i32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return
mla.kernel @dot_fp8(%kv: memref<?x64xf8E4M3FN>, %q: memref<?x64xbf16>, %out: memref<?x16xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%b, %c0] bound %c5 : memref<?x64xf8E4M3FN> -> tensor<16x64xf8E4M3FN>
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<16x64xf8E4M3FN> -> tensor<16x16xf32>
  mla.store %s, %out[%b, %c0] : tensor<16x16xf32> -> memref<?x16xf32>
  mla.return
}

// -----

// The loop carries buffers; the split range becomes index arithmetic.
// CHECK-LABEL: func.func @loop
// CHECK: arith.ceildivui
// CHECK: arith.minui
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}) -> (memref<16xf32>) {
// CHECK: scf.yield %{{.*}} : memref<16xf32>
// Rounding to bf16 on store: nearest even, NaN kept.
// CHECK: arith.constant 32767 : i32
// CHECK: arith.cmpf uno
// CHECK: arith.trunci %{{.*}} : i32 to i16
mla.kernel @loop(%n: index, %out: memref<?x16xbf16>) attributes {grid = ["batch", "splits"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %s = mla.program_id 1
  %lo, %hi = mla.split_range %n, %s, %n block_n 64
  %m0 = mla.fill 0.0 : tensor<16xf32>
  %r = mla.kv_loop %i = %lo to %hi step 64 iter_args(%m = %m0) -> (tensor<16xf32>) {
    mla.yield %m : tensor<16xf32>
  }
  mla.store %r, %out[%c0, %c0] : tensor<16xf32> -> memref<?x16xbf16>
  mla.return
}

// -----

// An exact split range: per = length / splits, and a length that is not a
// multiple of splits * block_n (per * splits != length, or per % 64 != 0)
// gives the empty range instead of full tiles past the sequence's end.
// memref.dim of a kernel argument follows it into its storage type.
// CHECK-LABEL: func.func @exact
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: index, %[[NS:[a-z0-9]+]]: index, %[[KV:[a-z0-9]+]]: memref<?x576xi8>
// CHECK: memref.dim %[[KV]], %{{.*}} : memref<?x576xi8>
// CHECK: %[[PER:.*]] = arith.divui %[[LEN]], %[[NS]] : index
// CHECK: %[[BACK:.*]] = arith.muli %[[PER]], %[[NS]] : index
// CHECK: %[[WHOLE:.*]] = arith.cmpi eq, %[[BACK]], %[[LEN]] : index
// CHECK: %[[REM:.*]] = arith.remui %[[PER]], %{{.*}} : index
// CHECK: %[[FULL:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : index
// CHECK: %[[OK:.*]] = arith.andi %[[WHOLE]], %[[FULL]] : i1
// CHECK: %[[P:.*]] = arith.select %[[OK]], %[[PER]], %{{.*}} : index
// CHECK: %[[LO:.*]] = arith.muli %{{.*}}, %[[P]] : index
// CHECK: arith.addi %[[LO]], %[[P]] : index
mla.kernel @exact(%len: index, %ns: index, %kv: memref<?x576xf8E4M3FN>, %out: memref<?xi32>) attributes {grid = ["batch", "splits"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %kv, %c0 : memref<?x576xf8E4M3FN>
  %s = mla.program_id 1
  %lo, %hi = mla.split_range %len, %s, %ns block_n 64 exact
  %sum = arith.addi %hi, %rows : index
  %v = arith.index_cast %sum : index to i32
  memref.store %v, %out[%lo] : memref<?xi32>
  mla.return
}

// -----

// expected-error @+1 {{mla.decode specs must be expanded before mla-lower-to-loops (run mla-expand-decode)}}
module {
  mla.decode @spec {
    num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
    q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "none",
    page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
    block_n = 64, num_warps = 4}
}

// -----

// Programs run one after another on the host, never as a cluster: the
// sync is false, stage 2 combines.
// CHECK-LABEL: func.func @cluster_sync
// CHECK: %[[F:.*]] = arith.constant false
// CHECK: scf.if %[[F]] {
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

// mla.quant_scale: the largest magnitude in a loop per dimension (the sign
// bit cleared, maxnum: NaN ignored), then 2^k and 2^-k from its exponent
// field, k = 7 - floor(log2 amax) for e4m3fn (E = 8), clamped to
// [-126, 126].
// CHECK-LABEL: func.func @quant_scale
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.andi %{{.*}}, %c2147483647_i32
// CHECK: arith.maxnumf
// CHECK: arith.shrui %{{.*}}, %c23_i32
// CHECK: arith.subi %c134_i32
// CHECK: arith.minsi %{{.*}}, %c126_i32
// CHECK: arith.maxsi %{{.*}}, %c-126_i32
// CHECK: arith.mulf
mla.kernel @quant_scale(%x: memref<?x64xf32>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %t = mla.load %x[%b, %c0] : memref<?x64xf32> -> tensor<16x64xf32>
  %fit, %inv = mla.quant_scale %t to f8E4M3FN : tensor<16x64xf32>
  %ts = mla.scale %t, %fit : tensor<16x64xf32>
  %tt = mla.scale %ts, %inv : tensor<16x64xf32>
  mla.store %tt, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}
