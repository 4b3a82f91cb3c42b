// Mask elision: dynamic lengths give a masked and a mask-free stage 1 with
// the dispatch rule; proven divisibility gives only the mask-free one; a
// length that never divides gives only the masked one.
// RUN: mla-opt --mla-expand-decode --mla-elide-masks %kernels/deepseek_r1_decode_fp8.mlir | FileCheck %s --check-prefix=DYN
// RUN: mla-opt --mla-expand-decode --mla-elide-masks %s | FileCheck %s

// DYN-LABEL: mla.kernel @deepseek_r1_decode_fp8_stage1_masked
// DYN-SAME: variant = "masked"
// DYN: mla.split_range %{{.*}} block_n 64{{$}}
// DYN: mla.kv_loop
// DYN: mla.load %{{.*}} bound %{{.*}} : memref<?x576xf8E4M3FN>
// DYN: mla.mask
// DYN: mla.yield
// DYN-LABEL: mla.kernel @deepseek_r1_decode_fp8_stage1_mask_free
// DYN-SAME: dispatch_kv_multiple = 64
// DYN-SAME: variant = "mask_free"
// DYN: mla.split_range %{{.*}} block_n 64 exact
// DYN: mla.kv_loop
// DYN-NOT: bound
// DYN-NOT: mla.mask
// DYN: mla.yield
// DYN-LABEL: mla.kernel @deepseek_r1_decode_fp8_stage2

// CHECK-NOT: @proven_stage1_masked
// CHECK-LABEL: mla.kernel @proven_stage1_mask_free
// CHECK-NOT: dispatch_kv_multiple
// CHECK-SAME: variant = "mask_free"
// CHECK: mla.split_range %{{.*}} block_n 64 exact
// CHECK: mla.kv_loop
// CHECK-NOT: bound
// CHECK-NOT: mla.mask
// CHECK: mla.yield
// CHECK-LABEL: mla.kernel @proven_stage2
mla.decode @proven {
  num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  block_n = 64, num_warps = 4, kv_len = 8192}

// CHECK-LABEL: mla.kernel @fixed_splits_stage1_mask_free
// CHECK-SAME: split_candidates = array<i64: 4>
// CHECK-NOT: mla.mask
// CHECK-LABEL: mla.kernel @fixed_splits_stage2
mla.decode @fixed_splits {
  num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "none",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  block_n = 32, num_warps = 4, splits = 4, kv_len_multiple_of = 128}

// CHECK-LABEL: mla.kernel @never_stage1_masked
// CHECK: mla.mask
// CHECK-NOT: @never_stage1_mask_free
// CHECK-LABEL: mla.kernel @never_stage2
mla.decode @never {
  num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
  q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "none",
  page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
  block_n = 64, num_warps = 4, kv_len = 1000}
