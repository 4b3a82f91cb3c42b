// mla-lower-to-gpu's page-entries-ahead option (sm_90a's
// ChipTuning::pageEntriesAhead, off by default: faster on the H100, slower
// on the H200): a paged fp8 KV tile within one page (64-row pages, 64-row
// tiles), loaded a tile ahead into registers, takes its page entry from the
// loop-carried value loaded one iteration earlier still, so the tile's byte
// loads do not wait for a table read. By default (the BYTES prefix) each
// tile reads its entry with its bytes. fp8 MTP 2's 128-row tiles of two
// 64-row pages read their entries with their bytes either way (the MTP2
// prefix; both entries ahead ran slower on the H100).
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a page-entries-ahead" %kernels/deepseek_r1_decode_fp8_qp16_sm90a_paged64.mlir | FileCheck %s
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a page-entries-ahead" %kernels/deepseek_r1_decode_fp8_qp16_sm90a_mtp2_paged64.mlir | FileCheck %s --check-prefix=MTP2
// RUN: mla-opt --mla-to-tiles --mla-lower-to-gpu="chip=sm_90a" %kernels/deepseek_r1_decode_fp8_qp16_sm90a_paged64.mlir | FileCheck %s --check-prefix=BYTES

// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp16_sm90a_paged64_stage1_masked
// Before the loop: the first tile's entry (no table read where the split
// has no tile), its bytes from the page's row (entry x 64 + start mod 64),
// each chunk guarded by the rows left in the page and the cache.
// CHECK: %[[E0:[0-9]+]] = scf.if %{{[0-9]+}} -> (index) {
// CHECK: memref.load %{{.*}} : memref<?xi32>
// CHECK: } else {
// CHECK: scf.yield %c-1 : index
// CHECK: scf.if %{{[0-9]+}} -> (vector<16xi8>,
// CHECK: arith.muli %[[E0]], %c64
// CHECK: vector.load %{{.*}} : memref<?xi8>, vector<16xi8>
// The second tile's entry, carried into the loop.
// CHECK: %[[E1:[0-9]+]] = scf.if %{{[0-9]+}} -> (index) {
// CHECK: memref.load %{{.*}} : memref<?xi32>
// CHECK: scf.for %[[IV:arg[0-9]+]] = %{{[0-9]+}} to %[[UB:[0-9]+]] step %{{.*}} iter_args({{.*}}, %[[AHEAD:arg[0-9]+]] = %[[E1]]) -> ({{.*}}, vector<16xi8>, index) {
// In the loop, the next tile's bytes from the carried entry, with no table
// read before them; then the entry of the tile after it (iv + 128; read
// where that tile starts below the loop's end and the load's bound), yielded.
// CHECK-NOT: memref<?xi32>
// CHECK: %[[N1:[0-9]+]] = arith.addi %[[IV]], %c64{{.*}} : index
// CHECK-NOT: memref<?xi32>
// CHECK: arith.muli %[[AHEAD]], %c64
// CHECK-NOT: memref<?xi32>
// CHECK: vector.load %{{.*}} : memref<?xi8>, vector<16xi8>
// CHECK-NOT: memref<?xi32>
// CHECK: %[[N2:[0-9]+]] = arith.addi %[[N1]], %c64{{.*}} : index
// CHECK-NEXT: %[[P2:[0-9]+]] = arith.cmpi slt, %[[N2]], %[[UB]] : index
// CHECK-NEXT: %[[Q2:[0-9]+]] = arith.cmpi slt, %[[N2]], %{{[0-9]+}} : index
// CHECK-NEXT: %[[R2:[0-9]+]] = arith.andi %[[P2]], %[[Q2]] : i1
// CHECK-NEXT: %[[NEXT:[0-9]+]] = scf.if %[[R2]] -> (index) {
// CHECK: arith.divui %[[N2]], %c64
// CHECK-NEXT: arith.addi
// CHECK-NEXT: memref.load %{{.*}} : memref<?xi32>
// CHECK: scf.yield {{.*}}, %[[NEXT]] : f32,
// The mask-free kernel the same way.
// CHECK-LABEL: gpu.func @deepseek_r1_decode_fp8_qp16_sm90a_paged64_stage1_mask_free
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<16xi8>, index) {

// BYTES-LABEL: gpu.func @deepseek_r1_decode_fp8_qp16_sm90a_paged64_stage1_masked
// BYTES: scf.for {{.*}} -> ({{.*}}, vector<16xi8>) {
// BYTES: %[[N1:[0-9]+]] = arith.addi %arg10, %c64{{.*}} : index
// BYTES: scf.if %{{[0-9]+}} -> (vector<16xi8>,
// BYTES: memref.load %{{.*}} : memref<?xi32>
// BYTES: vector.load %{{.*}} : memref<?xi8>, vector<16xi8>

// MTP2-LABEL: gpu.func @deepseek_r1_decode_fp8_qp16_sm90a_mtp2_paged64_stage1_masked
// MTP2: scf.for {{.*}} -> ({{.*}}, vector<16xi8>) {
// MTP2: memref.load %{{.*}} : memref<?xi32>
// MTP2: arith.select %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : index
// MTP2: vector.load %{{.*}} : memref<?xi8>, vector<16xi8>
