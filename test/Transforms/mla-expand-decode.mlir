// Expansion of both shipped specs into stage-1 and stage-2 kernels, and of
// specs with fixed splits and divisibility facts.
// RUN: mla-opt --mla-expand-decode %kernels/deepseek_r1_decode_fp8.mlir | FileCheck %s --check-prefix=FP8
// RUN: mla-opt --mla-expand-decode %kernels/deepseek_r1_decode_bf16.mlir | FileCheck %s --check-prefix=BF16
// RUN: mla-opt --mla-expand-decode %kernels/deepseek_r1_decode_fp8_qp8.mlir | FileCheck %s --check-prefix=QP8
// RUN: mla-opt --mla-expand-decode %kernels/deepseek_r1_decode_fp8_qp16.mlir | FileCheck %s --check-prefix=QP16
// RUN: mla-opt --mla-expand-decode %kernels/deepseek_r1_decode_fp8_e4m3x2_sm90a.mlir | FileCheck %s --check-prefix=TERMS
// RUN: mla-opt --mla-expand-decode %s | FileCheck %s

// qp_type = f8E4M3FN: Q is multiplied by the power of two that fits the
// program's Q to e4m3's range (mla.quant_scale) and rounded to fp8, the
// scores are scaled by the one folded factor times its inverse after the
// fp8 product, P is rounded to fp8.
// QP8-LABEL: mla.kernel @deepseek_r1_decode_fp8_qp8_stage1_masked
// QP8: %[[C:.*]] = arith.constant 0.0601122938 : f32
// QP8: %[[KS:.*]] = memref.load
// QP8: %[[QKS:.*]] = arith.mulf %[[C]], %[[KS]] : f32
// QP8: %[[QF:.*]] = mla.cast %{{.*}} : tensor<16x576xbf16> -> tensor<16x576xf32>
// QP8: %[[FIT:.*]], %[[INV:.*]] = mla.quant_scale %[[QF]] to f8E4M3FN : tensor<16x576xf32>
// QP8: %[[QS:.*]] = mla.scale %[[QF]], %[[FIT]] : tensor<16x576xf32>
// QP8: %[[QKI:.*]] = arith.mulf %[[QKS]], %[[INV]] : f32
// QP8: %[[Q8:.*]] = mla.cast %[[QS]] : tensor<16x576xf32> -> tensor<16x576xf8E4M3FN>
// QP8: mla.kv_loop
// QP8: %[[SC:.*]] = mla.dot %[[Q8]], %{{.*}} {transpose_rhs} : tensor<16x576xf8E4M3FN>, tensor<128x576xf8E4M3FN> -> tensor<16x128xf32>
// QP8: %[[SS:.*]] = mla.scale %[[SC]], %[[QKI]] : tensor<16x128xf32>
// QP8: %[[SM:.*]] = mla.mask %[[SS]]
// QP8: %[[P:.*]], %{{.*}}, %{{.*}}, %[[A:.*]] = mla.online_softmax %[[SM]]
// QP8: %[[P8:.*]] = mla.cast %[[P]] : tensor<16x128xf32> -> tensor<16x128xf8E4M3FN>
// QP8: mla.dot %[[P8]], %{{.*}} acc(%[[A]] : tensor<16x512xf32>) : tensor<16x128xf8E4M3FN>, tensor<128x512xf8E4M3FN> -> tensor<16x512xf32>

// qp_terms = 2: the scaled Q and P each split into two e4m3 terms stacked
// by rows (mla.split_terms); both dots take 32 rows, the scores' terms are
// summed before the scale, the accumulator keeps 32 rows through the loop
// (the online softmax rescales both terms' rows) and its terms are summed
// before the finalize.
// TERMS-LABEL: mla.kernel @deepseek_r1_decode_fp8_e4m3x2_sm90a_stage1_masked
// TERMS: %[[QS:.*]] = mla.scale %{{.*}}, %{{.*}} : tensor<16x576xf32>
// TERMS: %[[Q2:.*]] = mla.split_terms %[[QS]] : tensor<16x576xf32> -> tensor<32x576xf8E4M3FN>
// TERMS: %[[A0:.*]] = mla.fill 0.000000e+00 : tensor<32x512xf32>
// TERMS: mla.kv_loop {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<32x512xf32>)
// TERMS: %[[S2:.*]] = mla.dot %[[Q2]], %{{.*}} {transpose_rhs} : tensor<32x576xf8E4M3FN>, tensor<64x576xf8E4M3FN> -> tensor<32x64xf32>
// TERMS: %[[S:.*]] = mla.sum_terms %[[S2]] : tensor<32x64xf32> -> tensor<16x64xf32>
// TERMS: mla.scale %[[S]], %{{.*}} : tensor<16x64xf32>
// TERMS: %[[P:.*]], %{{.*}}, %{{.*}}, %[[A:.*]] = mla.online_softmax {{.*}} : tensor<16x64xf32>, tensor<16xf32>, tensor<32x512xf32>
// TERMS: %[[P2:.*]] = mla.split_terms %[[P]] : tensor<16x64xf32> -> tensor<32x64xf8E4M3FN>
// TERMS: mla.dot %[[P2]], %{{.*}} acc(%[[A]] : tensor<32x512xf32>) : tensor<32x64xf8E4M3FN>, tensor<64x512xf8E4M3FN> -> tensor<32x512xf32>
// TERMS: %[[O:.*]] = mla.sum_terms %{{.*}} : tensor<32x512xf32> -> tensor<16x512xf32>
// TERMS: mla.softmax_finalize %[[O]]

// qp_type = f16: the same shape as fp8 Q / P (Q rounded unscaled: scaled
// by a small KV scale it would fall among f16's subnormals), in f16.
// QP16-LABEL: mla.kernel @deepseek_r1_decode_fp8_qp16_stage1_masked
// QP16: %[[QKS:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// QP16-NOT: mla.scale
// QP16: %[[Q16:.*]] = mla.cast %{{.*}} : tensor<16x576xf32> -> tensor<16x576xf16>
// QP16: mla.kv_loop
// QP16: %[[SC:.*]] = mla.dot %[[Q16]], %{{.*}} {transpose_rhs} : tensor<16x576xf16>, tensor<64x576xf8E4M3FN> -> tensor<16x64xf32>
// QP16: %[[SS:.*]] = mla.scale %[[SC]], %[[QKS]] : tensor<16x64xf32>
// QP16: %[[P:.*]], %{{.*}}, %{{.*}}, %[[A:.*]] = mla.online_softmax
// QP16: %[[P16:.*]] = mla.cast %[[P]] : tensor<16x64xf32> -> tensor<16x64xf16>
// QP16: mla.dot %[[P16]], %{{.*}} acc(%[[A]] : tensor<16x512xf32>) : tensor<16x64xf16>, tensor<64x512xf8E4M3FN> -> tensor<16x512xf32>

// FP8-NOT: mla.decode
// FP8-LABEL: mla.kernel @deepseek_r1_decode_fp8_stage1_masked
// FP8-SAME: (%[[Q:.*]]: memref<?x16x576xbf16>, %[[KV:.*]]: memref<?x576xf8E4M3FN>, %[[SCALE:.*]]: memref<1xf32>, %[[QO:.*]]: memref<?xi32>, %[[KVI:.*]]: memref<?xi32>, %[[NS:.*]]: index, %[[PART:.*]]: memref<?x?x16x512xf32>, %[[LSE:.*]]: memref<?x?x16xf32>, %[[OUT:.*]]: memref<?x16x512xbf16>)
// FP8-SAME: block_n = 64
// FP8-SAME: grid = ["batch", "splits"]
// FP8-SAME: split_candidates = array<i64: 1, 2, 4, 8, 16, 32, 64>
// FP8-SAME: variant = "masked"
// FP8: %[[B:.*]] = mla.program_id 0
// FP8: %[[S:.*]] = mla.program_id 1
// The indptrs are checked against the buffers' rows before they address
// anything (issue #16). The output row: 0 <= qo_indptr[b] < rows of q and
// of out; an invalid one reads Q row 0 and stores nothing.
// FP8: %[[QR:.*]] = arith.index_cast %{{.*}} : i32 to index
// FP8: %[[QGE:.*]] = arith.cmpi sge, %[[QR]], %[[C0:.*]] : index
// FP8: %[[QROWS:.*]] = memref.dim %[[Q]], %{{.*}} : memref<?x16x576xbf16>
// FP8: arith.cmpi slt, %[[QR]], %[[QROWS]] : index
// FP8: %[[OROWS:.*]] = memref.dim %[[OUT]], %{{.*}} : memref<?x16x512xbf16>
// FP8: %[[QOK:.*]] = arith.andi
// FP8: %[[QROW:.*]] = arith.select %[[QOK]], %[[QR]], %[[C0]] : index
// The KV range: 0 <= begin <= end <= rows of kv, else empty.
// FP8: %[[BEGIN:.*]] = arith.index_cast %{{.*}} : i32 to index
// FP8: %[[END:.*]] = arith.index_cast %{{.*}} : i32 to index
// FP8: %[[KVROWS:.*]] = memref.dim %[[KV]], %{{.*}} : memref<?x576xf8E4M3FN>
// FP8: arith.cmpi sge, %[[BEGIN]], %{{.*}} : index
// FP8: arith.cmpi sle, %[[BEGIN]], %[[END]] : index
// FP8: arith.cmpi sle, %[[END]], %[[KVROWS]] : index
// FP8: %[[KVOK:.*]] = arith.andi
// FP8: %[[LEN:.*]] = arith.subi %[[END]], %[[BEGIN]] : index
// FP8: %[[FIRST:.*]] = arith.select %[[KVOK]], %[[BEGIN]], %{{.*}} : index
// FP8: %[[GLEN:.*]] = arith.select %[[KVOK]], %[[LEN]], %{{.*}} : index
// FP8: %[[LO:.*]], %[[HI:.*]] = mla.split_range %[[GLEN]], %[[S]], %[[NS]] block_n 64{{$}}
// The softmax scale times log2(e) (0.0417 * 1.4427), then the KV scale:
// FP8: %[[C:.*]] = arith.constant 0.0601122938 : f32
// FP8: %[[KS:.*]] = memref.load %[[SCALE]]
// FP8: %[[QKS:.*]] = arith.mulf %[[C]], %[[KS]] : f32
// FP8: %[[QT:.*]] = mla.load %[[Q]][%[[QROW]],
// FP8: %[[QF:.*]] = mla.cast %[[QT]] : tensor<16x576xbf16> -> tensor<16x576xf32>
// FP8: %[[QS:.*]] = mla.scale %[[QF]], %[[QKS]]
// FP8: %[[QB:.*]] = mla.cast %[[QS]] : tensor<16x576xf32> -> tensor<16x576xbf16>
// FP8: mla.kv_loop %[[N:.*]] = %[[LO]] to %[[HI]] step 64 iter_args
// FP8: %[[K:.*]] = mla.load %[[KV]][%{{.*}}, %{{.*}}] bound %{{.*}} : memref<?x576xf8E4M3FN> -> tensor<64x576xf8E4M3FN>
// FP8: %[[SC:.*]] = mla.dot %[[QB]], %[[K]] {transpose_rhs} : tensor<16x576xbf16>, tensor<64x576xf8E4M3FN> -> tensor<16x64xf32>
// FP8: %[[SM:.*]] = mla.mask %[[SC]], %[[N]], %[[HI]]
// FP8: %[[P:.*]], %[[M:.*]], %[[L:.*]], %[[A:.*]] = mla.online_softmax %[[SM]]
// FP8: %[[PB:.*]] = mla.cast %[[P]] : tensor<16x64xf32> -> tensor<16x64xbf16>
// FP8: %[[V:.*]] = mla.slice %[[K]] [0, 0] : tensor<64x576xf8E4M3FN> -> tensor<64x512xf8E4M3FN>
// FP8: %[[O:.*]] = mla.dot %[[PB]], %[[V]] acc(%[[A]] : tensor<16x512xf32>)
// FP8: mla.yield %[[M]], %[[L]], %[[O]]
// The V scale is applied once, at the end:
// FP8: mla.softmax_finalize %{{.*}} scale %[[KS]]
// FP8: scf.if
// FP8-NEXT: scf.if %[[QOK]] {
// FP8-NEXT: mla.store %{{.*}}, %[[OUT]][%[[QROW]],
// FP8: } else {
// FP8: mla.store %{{.*}}, %[[PART]][%[[B]], %[[S]]
// FP8: mla.store %{{.*}}, %[[LSE]][%[[B]], %[[S]]
// Where the launcher ran the splits as one cluster, they combine their
// partials themselves. 8 splits: split s takes rows 2s, 2s + 1 in one
// round of 8; 16: row s (those leave a thread of 4 warps at most 8
// values); any other count: row pairs s, s + n, ... of 8, at most 16
// splits (a cluster's programs):
// FP8: %[[ALL:.*]] = mla.split_cluster_sync %[[NS:[^ ]*]]
// FP8-NEXT: scf.if %[[ALL]] {
// FP8: %[[IS8:.*]] = arith.cmpi eq, %[[NS]], %c8
// FP8-NEXT: scf.if %[[IS8]] {
// FP8: %[[R8:.*]] = arith.muli %[[S]], %c2
// FP8: %[[H8:.*]] = arith.addi %{{.*}}, %[[R8]]
// FP8: mla.split_k_reduce %[[PART]], %[[LSE]][%[[B]], %[[H8]]] splits %[[NS]] {max_splits = 8 : i64} : {{.*}} -> tensor<2x512xf32>
// FP8: scf.if %[[QOK]] {
// FP8: } else {
// FP8: %[[IS16:.*]] = arith.cmpi eq, %[[NS]], %c16
// FP8-NEXT: scf.if %[[IS16]] {
// FP8: mla.split_k_reduce %[[PART]], %[[LSE]][%[[B]], %{{.*}}] splits %[[NS]] {max_splits = 16 : i64} : {{.*}} -> tensor<1x512xf32>
// FP8: } else {
// FP8: scf.for %[[U:.*]] = %[[S]] to %c8{{(_[0-9]+)?}} step %[[NS]] {
// FP8: %[[R2:.*]] = arith.muli %[[U]], %c2
// FP8: %[[HR:.*]] = arith.addi %{{.*}}, %[[R2]]
// FP8: %[[C:.*]] = mla.split_k_reduce %[[PART]], %[[LSE]][%[[B]], %[[HR]]] splits %[[NS]] {max_splits = 16 : i64} : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<2x512xf32>
// FP8: scf.if %[[QOK]] {
// FP8: mla.store %[[C]], %[[OUT]][%[[QROW]], %{{.*}}, %{{.*}}] : tensor<2x512xf32> -> memref<?x16x512xbf16>
// FP8: mla.return
// FP8-LABEL: mla.kernel @deepseek_r1_decode_fp8_stage2
// FP8-SAME: grid = ["batch", "rows"]
// FP8: %[[B2:.*]] = mla.program_id 0
// FP8: %[[H2:.*]] = mla.program_id 1
// FP8: %[[QOK2:.*]] = arith.andi
// FP8: %[[QROW2:.*]] = arith.select %[[QOK2]]
// FP8: %[[R:.*]] = mla.split_k_reduce %{{.*}}, %{{.*}}[%[[B2]], %[[H2]]] splits %{{.*}} : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<1x512xf32>
// FP8: scf.if %[[QOK2]] {
// FP8-NEXT: mla.store %[[R]], %{{.*}}[%[[QROW2]], %[[H2]], %{{.*}}] : tensor<1x512xf32> -> memref<?x16x512xbf16>

// bf16 KV: no scale argument, no scale load, finalize without scale.
// BF16-LABEL: mla.kernel @deepseek_r1_decode_bf16_stage1_masked
// BF16-SAME: (%{{.*}}: memref<?x16x576xbf16>, %{{.*}}: memref<?x576xbf16>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi32>, %{{.*}}: index,
// BF16-NOT: memref.load %{{.*}}[%c0] : memref<1xf32>
// BF16: mla.dot %{{.*}}, %{{.*}} {transpose_rhs} : tensor<16x576xbf16>, tensor<64x576xbf16> -> tensor<16x64xf32>
// BF16: mla.softmax_finalize %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x512xf32>, tensor<16xf32>
// BF16-LABEL: mla.kernel @deepseek_r1_decode_bf16_stage2

// CHECK-LABEL: mla.kernel @one_split_stage1_masked
// CHECK-SAME: split_candidates = array<i64: 1>
// CHECK-NOT: mla.kernel @one_split_stage2
mla.decode @one_split {
  num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "none",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  block_n = 64, num_warps = 4, splits = 1}

// A divisor of every length keeps only the split counts that give full
// tiles: 1024 / 64 = 16.
// CHECK-LABEL: mla.kernel @facts_stage1_masked
// CHECK-SAME: kv_len_multiple_of = 1024
// CHECK-SAME: split_candidates = array<i64: 1, 2, 4, 8, 16>
// CHECK-LABEL: mla.kernel @facts_stage2
mla.decode @facts {
  num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FNUZ, out_type = bf16, kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  block_n = 64, num_warps = 4, kv_len_multiple_of = 1024}

// A static length that no split count divides into full tiles keeps every
// candidate.
// CHECK-LABEL: mla.kernel @ragged_stage1_masked
// CHECK-SAME: kv_len_multiple_of = 1000
// CHECK-SAME: split_candidates = array<i64: 1, 2, 4, 8, 16, 32, 64>
mla.decode @ragged {
  num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = f32, kv_type = bf16, out_type = f32, kv_scale = "none",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  block_n = 64, num_warps = 4, kv_len = 1000}

// Two query tokens (multi-token prediction, causal), block_m = 16 (gfx942):
// stage-1 programs per (sequence x row group, split) with the group fastest; token i's walk ends
// at clamp(L - (q_seq_len - 1 - i), lo, hi), which also bounds the loads and
// the mask; the kernel is marked causal and stays masked.
// RUN: mla-opt --mla-to-tiles %kernels/deepseek_r1_decode_fp8_mi300x_mtp2.mlir | FileCheck %s --check-prefix=MTP
// MTP-LABEL: mla.kernel @deepseek_r1_decode_fp8_mi300x_mtp2_stage1_masked(
// MTP-SAME: %[[Q:[a-z0-9]+]]: memref<?x16x576xbf16>
// MTP-SAME: memref<?x?x32x512xf32>, %{{.*}}: memref<?x?x32xf32>, %{{.*}}: memref<?x16x512xbf16>)
// MTP-SAME: block_m = 16 : i64
// MTP-SAME: causal
// MTP-SAME: grid = ["batch_row_groups", "splits"]
// MTP: %[[PID:.*]] = mla.program_id 0
// MTP: %[[SEQ:.*]] = arith.divui %[[PID]], %c2
// MTP: %[[GRP:.*]] = arith.remui %[[PID]], %c2
// MTP: %[[ROW0:.*]] = arith.muli %[[GRP]], %c16
// MTP: %[[TOK:.*]] = arith.divui %[[ROW0]], %c16
// MTP: %[[LO:.*]], %[[HI:.*]] = mla.split_range %[[LEN:[0-9]+]],
// MTP: %[[BACK:.*]] = arith.subi %c1{{.*}}, %[[TOK]]
// MTP: %[[EDGE:.*]] = arith.subi %[[LEN]], %[[BACK]]
// MTP: %[[AT_LEAST_LO:.*]] = arith.maxsi %[[EDGE]], %[[LO]]
// MTP: %[[END:.*]] = arith.minsi %[[HI]], %[[AT_LEAST_LO]]
// MTP: mla.load %[[Q]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x16x576xbf16> -> tensor<16x576xbf16>
// MTP: mla.kv_loop %[[N:.*]] = %[[LO]] to %[[END]] step 64
// MTP: mla.load %{{.*}} bound %{{.*}} : memref<?x576xf8E4M3FNUZ> -> tensor<64x576xf8E4M3FNUZ>
// MTP: mla.mask %{{.*}}, %[[N]], %[[END]]
// MTP-NOT: mla.kernel @deepseek_r1_decode_fp8_mi300x_mtp2_stage1_mask_free
// MTP-LABEL: mla.kernel @deepseek_r1_decode_fp8_mi300x_mtp2_stage2(
// MTP-SAME: grid = ["batch", "rows"]
// MTP: %[[ROW:.*]] = mla.program_id 1
// MTP: arith.divui %[[ROW]], %c16
// MTP: arith.remui %[[ROW]], %c16

// block_m = 32 (gfx950): both tokens' rows in one program, q and out read as
// [rows x heads, dim], the walk ends at the last token's edge and each
// token's rows are masked at their own (edge0 + row / 16).
// RUN: mla-opt --mla-to-tiles %kernels/deepseek_r1_decode_fp8_mtp2.mlir | FileCheck %s --check-prefix=MTP32
// MTP32-LABEL: mla.kernel @deepseek_r1_decode_fp8_mtp2_stage1_masked(
// MTP32-SAME: block_m = 32 : i64
// MTP32-SAME: causal
// MTP32-SAME: grid = ["batch", "splits"]
// MTP32: %[[QF:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<?x16x576xbf16> into memref<?x576xbf16>
// MTP32: %[[OF:.*]] = memref.collapse_shape %arg8 {{\[}}[0, 1], [2]] : memref<?x16x512xbf16> into memref<?x512xbf16>
// MTP32: %[[LO:.*]], %[[HI:.*]] = mla.split_range %[[LEN:[0-9]+]],
// MTP32: %[[EDGE0:.*]] = arith.subi %[[LEN]], %c1
// MTP32: %[[LAST:.*]] = arith.maxsi %[[LEN]], %[[LO]]
// MTP32: %[[END:.*]] = arith.minsi %[[HI]], %[[LAST]]
// MTP32: mla.load %[[QF]][%{{.*}}, %c0] : memref<?x576xbf16> -> tensor<32x576xbf16>
// MTP32: mla.kv_loop %[[N:.*]] = %[[LO]] to %[[END]] step 64
// MTP32: mla.mask %{{.*}}, %[[N]], %[[END]] causal %[[EDGE0]] every 16
// MTP32: mla.store %{{.*}}, %[[OF]][%{{.*}}, %c0] : tensor<32x512xf32> -> memref<?x512xbf16>

// Paged KV, FlashMLA's block table: lengths from cache_seqlens (0 where
// negative, past the table row's pages, for a sequence past the
// table's rows, or for every sequence of a cache with no rows), the
// table row's first entry b x cols in the flattened
// table, and the KV tile gathered through it from logical token n on,
// masked at the split's end (not at a cache row).
// RUN: mla-opt --mla-expand-decode %kernels/deepseek_r1_decode_fp8_paged64.mlir | FileCheck %s --check-prefix=PAGED
// PAGED-LABEL: mla.kernel @deepseek_r1_decode_fp8_paged64_stage1_masked(
// PAGED-SAME: %[[SEQLENS:[^:]*]]: memref<?xi32>, %[[TABLE:[^:]*]]: memref<?x?xi32>, %{{[^:]*}}: index,
// PAGED-SAME: mla.arg_names = ["q", "kv", "kv_scale", "qo_indptr", "cache_seqlens", "block_table", "num_splits", "partial", "lse", "out"]
// PAGED: %[[B:.*]] = mla.program_id 0
// PAGED: %[[L:.*]] = memref.load %[[SEQLENS]][%[[B]]] : memref<?xi32>
// PAGED: %[[LEN:.*]] = arith.index_cast %[[L]] : i32 to index
// PAGED: %[[ROWS:.*]] = memref.dim %[[TABLE]], %c0
// PAGED: %[[COLS:.*]] = memref.dim %[[TABLE]], %c1
// PAGED: %[[CAP:.*]] = arith.muli %[[COLS]], %c64
// PAGED: arith.cmpi sge, %[[LEN]], %c0
// PAGED: arith.cmpi sle, %[[LEN]], %[[CAP]]
// PAGED: arith.cmpi slt, %[[B]], %[[ROWS]]
// PAGED: %[[CACHE:.*]] = memref.dim %arg1, %c0
// PAGED-NEXT: arith.cmpi sgt, %[[CACHE]], %c0
// PAGED: %[[SAFE:.*]] = arith.select %{{.*}}, %[[LEN]], %c0
// PAGED: %[[FIRST:.*]] = arith.muli %[[B]], %[[COLS]]
// PAGED: %[[FLAT:.*]] = memref.collapse_shape %[[TABLE]] {{\[}}[0, 1]] : memref<?x?xi32> into memref<?xi32>
// PAGED: %[[LO:.*]], %[[HI:.*]] = mla.split_range %[[SAFE]],
// PAGED: mla.kv_loop %[[N:.*]] = %[[LO]] to %[[HI]] step 64
// PAGED: mla.load %arg1[%[[N]], %c0] pages %[[FLAT]][%[[FIRST]]] page_size 64 bound %[[HI]] : memref<?x576xf8E4M3FN> -> tensor<64x576xf8E4M3FN>
// PAGED-LABEL: mla.kernel @deepseek_r1_decode_fp8_paged64_stage2(

// SGLang / AITER's token list: kv_indptr indexes kv_indices (its range
// checked against kv_indices' length, not the cache's rows), every row a
// page of one.
// RUN: mla-opt --mla-expand-decode %kernels/deepseek_r1_decode_fp8_kvindices.mlir | FileCheck %s --check-prefix=INDICES
// INDICES-LABEL: mla.kernel @deepseek_r1_decode_fp8_kvindices_stage1_masked(
// INDICES-SAME: %[[KVP:[^:]*]]: memref<?xi32>, %[[IDX:[^:]*]]: memref<?xi32>, %{{[^:]*}}: index,
// INDICES-SAME: mla.arg_names = ["q", "kv", "kv_scale", "qo_indptr", "kv_indptr", "kv_indices", "num_splits", "partial", "lse", "out"]
// INDICES: %[[B0:.*]] = memref.load %[[KVP]][
// INDICES-NEXT: %[[BEGIN:.*]] = arith.index_cast %[[B0]] : i32 to index
// INDICES: memref.dim %[[IDX]], %c0
// INDICES: %[[FIRST:.*]] = arith.select %{{.*}}, %[[BEGIN]], %c0
// INDICES: mla.kv_loop %[[T:.*]] = %[[LO:.*]] to %[[HI:.*]] step 64
// INDICES: mla.load %arg1[%[[T]], %c0] pages %[[IDX]][%[[FIRST]]] page_size 1 bound %[[HI]]

// mxfp4 KV (issue 18): kv rows are 288 bytes of packed e2m1 pairs and the
// e8m0 scales a [rows, blocks] byte array of its own stride. A scale array
// with fewer than 18 columns, or fewer rows than the range needs, makes
// the sequence empty (no read outside it). Each tile's data and scales are
// loaded with the same bound and decoded to bf16; V is its first 512
// columns.
// RUN: mla-opt --mla-expand-decode %kernels/deepseek_r1_decode_mxfp4.mlir | FileCheck %s --check-prefix=MXFP4
// MXFP4-LABEL: mla.kernel @deepseek_r1_decode_mxfp4_stage1_masked(
// MXFP4-SAME: %{{[^:]*}}: memref<?x288xi8>, %[[SC:[^:]*]]: memref<?x?xi8>,
// MXFP4-SAME: mla.arg_names = ["q", "kv", "kv_scales", "qo_indptr", "kv_indptr", "num_splits", "partial", "lse", "out"]
// MXFP4: memref.dim %arg1, %{{.*}} : memref<?x288xi8>
// MXFP4: %[[FIRST:.*]] = arith.select %{{.*}}, %{{.*}}, %c0
// MXFP4: %[[LEN:.*]] = arith.select %{{.*}}, %{{.*}}, %c0
// MXFP4: %[[COLS:.*]] = memref.dim %[[SC]], %c1 : memref<?x?xi8>
// MXFP4: %[[WIDE:.*]] = arith.cmpi sge, %[[COLS]], %c18
// MXFP4: %[[END:.*]] = arith.addi %[[FIRST]], %[[LEN]]
// MXFP4: %[[ROWS:.*]] = memref.dim %[[SC]], %c0 : memref<?x?xi8>
// MXFP4: %[[IN:.*]] = arith.cmpi sle, %[[END]], %[[ROWS]]
// MXFP4: %[[OK:.*]] = arith.andi %[[WIDE]], %[[IN]]
// MXFP4: %[[SAFE:.*]] = arith.select %[[OK]], %[[LEN]], %c0
// MXFP4: mla.split_range %[[SAFE]],
// MXFP4: mla.kv_loop
// MXFP4: %[[D:.*]] = mla.load %arg1[%{{.*}}, %c0] bound %[[B:.*]] : memref<?x288xi8> -> tensor<64x288xi8>
// MXFP4: %[[S:.*]] = mla.load %[[SC]][%{{.*}}, %c0] bound %[[B]] : memref<?x?xi8> -> tensor<64x18xi8>
// MXFP4: %[[K:.*]] = mla.dequant %[[D]], %[[S]] format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xbf16>
// MXFP4: mla.dot %{{.*}}, %[[K]] {transpose_rhs} : tensor<16x576xbf16>, tensor<64x576xbf16>
// MXFP4: mla.slice %[[K]] [0, 0] : tensor<64x576xbf16> -> tensor<64x512xbf16>
// MXFP4-LABEL: mla.kernel @deepseek_r1_decode_mxfp4_stage2(
