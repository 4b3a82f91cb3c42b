// Every mla op prints in a form that parses back to the same IR.
// RUN: mla-opt %s | mla-opt | FileCheck %s
// RUN: mla-opt %s --mlir-print-op-generic | mla-opt | FileCheck %s

// CHECK-LABEL: mla.decode @spec_auto
// CHECK-SAME: kv_scale = "per_tensor"
// CHECK-SAME: kv_type = f8E4M3FN
// CHECK-NOT: splits
mla.decode @spec_auto {
  num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  block_n = 64, num_warps = 4}

// CHECK-LABEL: mla.decode @spec_facts
// CHECK-SAME: kv_len = 8192
// CHECK-SAME: kv_len_multiple_of = 1024
// CHECK-SAME: splits = 8
mla.decode @spec_facts {
  num_heads = 32, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = f32, kv_type = bf16, out_type = f32, kv_scale = "none",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  block_n = 32, num_warps = 8, splits = 8, kv_len = 8192,
  kv_len_multiple_of = 1024}

// CHECK-LABEL: mla.decode @spec_mxfp4
// CHECK-SAME: kv_scale = "block32_e8m0"
// CHECK-SAME: kv_type = f4E2M1FN
mla.decode @spec_mxfp4 {
  num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f4E2M1FN, out_type = bf16, kv_scale = "block32_e8m0",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  block_n = 64, num_warps = 4}

// CHECK-LABEL: mla.kernel @mxfp4_tile
// CHECK: %[[D:.*]] = mla.load %{{.*}}[%{{.*}}, %{{.*}}] bound %{{.*}} : memref<?x288xi8> -> tensor<64x288xi8>
// CHECK: %[[S:.*]] = mla.load %{{.*}}[%{{.*}}, %{{.*}}] bound %{{.*}} : memref<?x?xi8> -> tensor<64x18xi8>
// CHECK: mla.dequant %[[D]], %[[S]] format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xbf16>
mla.kernel @mxfp4_tile(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index, %n: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] bound %n : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] bound %n : memref<?x?xi8> -> tensor<64x18xi8>
  %k = mla.dequant %dt, %st format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xbf16>
  mla.return
}

// CHECK-LABEL: mla.kernel @mxfp4_e4m3_tile
// CHECK: %[[K8:.*]], %[[E:.*]] = mla.dequant %{{.*}}, %{{.*}} format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xf8E4M3FN>, tensor<64xi32>
// CHECK: mla.online_softmax %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} col_exp %[[E]] : tensor<16x64xf32>, tensor<16xf32>, tensor<16x512xf32>, tensor<64xi32>
mla.kernel @mxfp4_e4m3_tile(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index, %n: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] bound %n : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] bound %n : memref<?x?xi8> -> tensor<64x18xi8>
  %k, %e = mla.dequant %dt, %st format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xf8E4M3FN>, tensor<64xi32>
  %sc = mla.fill 0.0 : tensor<16x64xf32>
  %m = mla.fill 0.0 : tensor<16xf32>
  %acc = mla.fill 0.0 : tensor<16x512xf32>
  %p, %nm, %nl, %na = mla.online_softmax %sc, %m, %m, %acc col_exp %e : tensor<16x64xf32>, tensor<16xf32>, tensor<16x512xf32>, tensor<64xi32>
  mla.return
}

// CHECK-LABEL: mla.decode @spec_terms
// CHECK-SAME: qp_terms = 2
mla.decode @spec_terms {
  num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  qp_type = f8E4M3FN, qp_terms = 2, block_n = 64, num_warps = 4}

// CHECK-LABEL: mla.kernel @terms_tile
// CHECK: %[[Q2:.*]] = mla.split_terms %{{.*}} : tensor<16x576xf32> -> tensor<32x576xf8E4M3FN>
// CHECK: %[[S2:.*]] = mla.dot %[[Q2]], %{{.*}} {transpose_rhs} : tensor<32x576xf8E4M3FN>, tensor<64x576xf8E4M3FN> -> tensor<32x64xf32>
// CHECK: %[[S:.*]] = mla.sum_terms %[[S2]] : tensor<32x64xf32> -> tensor<16x64xf32>
// CHECK: mla.online_softmax %[[S]], %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<16xf32>, tensor<32x512xf32>
mla.kernel @terms_tile(%kv: memref<?x576xf8E4M3FN>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %k = mla.load %kv[%i, %i] : memref<?x576xf8E4M3FN> -> tensor<64x576xf8E4M3FN>
  %q = mla.fill 1.0 : tensor<16x576xf32>
  %q2 = mla.split_terms %q : tensor<16x576xf32> -> tensor<32x576xf8E4M3FN>
  %s2 = mla.dot %q2, %k {transpose_rhs} : tensor<32x576xf8E4M3FN>, tensor<64x576xf8E4M3FN> -> tensor<32x64xf32>
  %s = mla.sum_terms %s2 : tensor<32x64xf32> -> tensor<16x64xf32>
  %m = mla.fill 0.0 : tensor<16xf32>
  %acc = mla.fill 0.0 : tensor<32x512xf32>
  %p, %nm, %nl, %na = mla.online_softmax %s, %m, %m, %acc : tensor<16x64xf32>, tensor<16xf32>, tensor<32x512xf32>
  mla.return
}

// CHECK-LABEL: mla.kernel @tiles
// CHECK-SAME: (%[[Q:.*]]: memref<?x16x64xbf16>, %[[KV:.*]]: memref<?x64xf8E4M3FN>, %[[PART:.*]]: memref<?x?x16x32xf32>, %[[LSE:.*]]: memref<?x?x16xf32>, %[[N:.*]]: index, %[[OUT:.*]]: memref<?x16x32xbf16>, %{{.*}}: memref<?xi32>)
// CHECK-SAME: block_n = 16
// CHECK-SAME: dispatch_kv_multiple = 16
// CHECK-SAME: grid = ["batch", "splits"]
// CHECK-SAME: split_candidates = array<i64: 1, 2>
// CHECK-SAME: variant = "mask_free"
mla.kernel @tiles(%q: memref<?x16x64xbf16>, %kv: memref<?x64xf8E4M3FN>,
                  %part: memref<?x?x16x32xf32>, %lse: memref<?x?x16xf32>,
                  %n: index, %out: memref<?x16x32xbf16>, %table: memref<?xi32>)
    attributes {grid = ["batch", "splits"], num_warps = 4 : i64, block_n = 16 : i64,
                variant = "mask_free", dispatch_kv_multiple = 16 : i64,
                kv_len_multiple_of = 64 : i64, split_candidates = array<i64: 1, 2>} {
  %c0 = arith.constant 0 : index
  %scale = arith.constant 0.5 : f32
  // CHECK: %[[B:.*]] = mla.program_id 0
  // CHECK: %[[S:.*]] = mla.program_id 1
  %b = mla.program_id 0
  %s = mla.program_id 1
  // CHECK: %[[LO:.*]], %[[HI:.*]] = mla.split_range %{{.*}}, %[[S]], %[[N]] block_n 16 exact
  %lo, %hi = mla.split_range %n, %s, %n block_n 16 exact
  // CHECK: %[[LO2:.*]], %[[HI2:.*]] = mla.split_range %{{.*}} block_n 16{{$}}
  %lo2, %hi2 = mla.split_range %n, %s, %n block_n 16
  // CHECK: %{{.*}} = mla.split_cluster_sync %[[N]]{{$}}
  %all = mla.split_cluster_sync %n
  // CHECK: %[[QT:.*]] = mla.load %[[Q]][%[[B]], %{{.*}}, %{{.*}}] : memref<?x16x64xbf16> -> tensor<16x64xbf16>
  %qt = mla.load %q[%b, %c0, %c0] : memref<?x16x64xbf16> -> tensor<16x64xbf16>
  // CHECK: %[[QF:.*]] = mla.cast %[[QT]] : tensor<16x64xbf16> -> tensor<16x64xf32>
  %qf = mla.cast %qt : tensor<16x64xbf16> -> tensor<16x64xf32>
  // CHECK: %[[QS:.*]] = mla.scale %[[QF]], %{{.*}} : tensor<16x64xf32>
  %qs = mla.scale %qf, %scale : tensor<16x64xf32>
  // CHECK: %{{.*}}, %{{.*}} = mla.quant_scale %[[QF]] to f8E4M3FN : tensor<16x64xf32>
  %q8s, %q8inv = mla.quant_scale %qf to f8E4M3FN : tensor<16x64xf32>
  // CHECK: %[[M0:.*]] = mla.fill 0xFF800000 : tensor<16xf32>
  %m0 = mla.fill 0xFF800000 : tensor<16xf32>
  %l0 = mla.fill 0.0 : tensor<16xf32>
  %a0 = mla.fill 0.0 : tensor<16x32xf32>
  // CHECK: %[[R:.*]]:3 = mla.kv_loop %[[IV:.*]] = %[[LO]] to %[[HI]] step 16 iter_args(%[[M:.*]] = %[[M0]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>) {
  %r:3 = mla.kv_loop %it = %lo to %hi step 16 iter_args(%m = %m0, %l = %l0, %acc = %a0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>) {
    // CHECK: %[[K:.*]] = mla.load %[[KV]][%[[IV]], %{{.*}}] bound %[[HI]] : memref<?x64xf8E4M3FN> -> tensor<16x64xf8E4M3FN>
    %k = mla.load %kv[%it, %c0] bound %hi : memref<?x64xf8E4M3FN> -> tensor<16x64xf8E4M3FN>
    // CHECK: mla.load %[[KV]][%[[IV]], %{{.*}}] pages %{{.*}}[%[[B]]] page_size 16 bound %[[HI]] : memref<?x64xf8E4M3FN> -> tensor<16x64xf8E4M3FN>
    %kp = mla.load %kv[%it, %c0] pages %table[%b] page_size 16 bound %hi : memref<?x64xf8E4M3FN> -> tensor<16x64xf8E4M3FN>
    // CHECK: %[[SC:.*]] = mla.dot %[[QS]], %[[K]] {transpose_rhs} : tensor<16x64xf32>, tensor<16x64xf8E4M3FN> -> tensor<16x16xf32>
    %sc = mla.dot %qs, %k {transpose_rhs} : tensor<16x64xf32>, tensor<16x64xf8E4M3FN> -> tensor<16x16xf32>
    // CHECK: %[[SM:.*]] = mla.mask %[[SC]], %[[IV]], %[[HI]] {dim = 1 : i64, fill = 0xFF800000 : f32} : tensor<16x16xf32>
    %sm = mla.mask %sc, %it, %hi {dim = 1 : i64, fill = 0xFF800000 : f32} : tensor<16x16xf32>
    // CHECK: %[[P:.*]], %[[NM:.*]], %[[NL:.*]], %[[NA:.*]] = mla.online_softmax %[[SM]], %[[M]], %{{.*}}, %{{.*}} : tensor<16x16xf32>, tensor<16xf32>, tensor<16x32xf32>
    %p, %nm, %nl, %na = mla.online_softmax %sm, %m, %l, %acc : tensor<16x16xf32>, tensor<16xf32>, tensor<16x32xf32>
    // CHECK: %[[PB:.*]] = mla.cast %[[P]] : tensor<16x16xf32> -> tensor<16x16xbf16>
    %pb = mla.cast %p : tensor<16x16xf32> -> tensor<16x16xbf16>
    // CHECK: %[[V:.*]] = mla.slice %[[K]] [0, 0] : tensor<16x64xf8E4M3FN> -> tensor<16x32xf8E4M3FN>
    %v = mla.slice %k [0, 0] : tensor<16x64xf8E4M3FN> -> tensor<16x32xf8E4M3FN>
    // CHECK: %[[O:.*]] = mla.dot %[[PB]], %[[V]] acc(%[[NA]] : tensor<16x32xf32>) : tensor<16x16xbf16>, tensor<16x32xf8E4M3FN> -> tensor<16x32xf32>
    %o = mla.dot %pb, %v acc(%na : tensor<16x32xf32>) : tensor<16x16xbf16>, tensor<16x32xf8E4M3FN> -> tensor<16x32xf32>
    // CHECK: mla.yield %[[NM]], %[[NL]], %[[O]] : tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>
    mla.yield %nm, %nl, %o : tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>
  }
  // CHECK: %[[FO:.*]], %[[FL:.*]] = mla.softmax_finalize %[[R]]#2, %[[R]]#0, %[[R]]#1 scale %{{.*}} : tensor<16x32xf32>, tensor<16xf32>
  %fo, %fl = mla.softmax_finalize %r#2, %r#0, %r#1 scale %scale : tensor<16x32xf32>, tensor<16xf32>
  // CHECK: %[[F2:.*]], %{{.*}} = mla.softmax_finalize %[[R]]#2, %[[R]]#0, %[[R]]#1 : tensor<16x32xf32>, tensor<16xf32>
  %f2, %l2 = mla.softmax_finalize %r#2, %r#0, %r#1 : tensor<16x32xf32>, tensor<16xf32>
  // CHECK: mla.store %[[FO]], %[[PART]][%[[B]], %[[S]], %{{.*}}, %{{.*}}] : tensor<16x32xf32> -> memref<?x?x16x32xf32>
  mla.store %fo, %part[%b, %s, %c0, %c0] : tensor<16x32xf32> -> memref<?x?x16x32xf32>
  // CHECK: mla.store %[[FL]], %[[LSE]][%[[B]], %[[S]], %{{.*}}] bound %[[HI]] : tensor<16xf32> -> memref<?x?x16xf32>
  mla.store %fl, %lse[%b, %s, %c0] bound %hi : tensor<16xf32> -> memref<?x?x16xf32>
  // CHECK: %[[CMB:.*]] = mla.split_k_reduce %[[PART]], %[[LSE]][%[[B]], %{{.*}}] splits %[[N]] : memref<?x?x16x32xf32>, memref<?x?x16xf32> -> tensor<2x32xf32>
  %cmb = mla.split_k_reduce %part, %lse[%b, %c0] splits %n : memref<?x?x16x32xf32>, memref<?x?x16xf32> -> tensor<2x32xf32>
  // CHECK: mla.store %[[CMB]], %[[OUT]]
  mla.store %cmb, %out[%b, %c0, %c0] : tensor<2x32xf32> -> memref<?x16x32xbf16>
  // CHECK: mla.return
  mla.return
}

// CHECK-LABEL: mla.kernel @no_iter_args
// CHECK: mla.kv_loop %{{.*}} = %{{.*}} to %{{.*}} step 32 {
// CHECK-NEXT: mla.yield
// CHECK-NEXT: }
mla.kernel @no_iter_args(%n: index) attributes {grid = ["heads"], num_warps = 1 : i64} {
  %c0 = arith.constant 0 : index
  mla.kv_loop %i = %c0 to %n step 32 {
    mla.yield
  }
  mla.return
}
