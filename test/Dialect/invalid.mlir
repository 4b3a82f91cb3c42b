// Every verifier message of the mla dialect, triggered once at least.
// RUN: mla-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{'num_heads' must be positive, got 0}}
mla.decode @bad {num_heads = 0, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{'page_size' must be positive, got -1}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = -1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{'rope_dim' must be non-negative, got -1}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = -1, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{qk_dim (576) must equal v_dim (500) + rope_dim (64): values are the latent part of the key rows}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 500, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{num_heads (16) must be a multiple of num_kv_heads (3)}}
mla.decode @bad {num_heads = 16, num_kv_heads = 3, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{only num_kv_heads = 1 (absorbed MLA) is supported, got 2}}
mla.decode @bad {num_heads = 16, num_kv_heads = 2, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{num_heads (8) must be a multiple of 16, the head-tile height}}
mla.decode @bad {num_heads = 8, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{qk_dim (560) and v_dim (496) must be multiples of 32}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 560, v_dim = 496, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{page_size 64 needs kv_layout = "block_table" ("contiguous" addresses single tokens)}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 64, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{page_size 16 needs kv_layout = "block_table" ("token_indices" addresses single tokens)}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 16, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, kv_layout = "token_indices"}

// -----

// expected-error @+1 {{page_size must be a power of two up to 4096 with a block table, got 48}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 48, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, kv_layout = "block_table"}

// -----

// expected-error @+1 {{kv_layout must be "contiguous", "token_indices" or "block_table", got "paged"}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, kv_layout = "paged"}

// -----

// expected-error @+1 {{q_seq_len must be at most 64, got 65}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 65, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{block_m (24) must be a multiple of 16 that divides num_heads (16) or a multiple of num_heads that divides q_seq_len x num_heads (32): a program's rows are whole tokens or part of one}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 2, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, block_m = 24}

// -----

// expected-error @+1 {{block_m (48) must be a multiple of 16 that divides num_heads (16) or a multiple of num_heads that divides q_seq_len x num_heads (32): a program's rows are whole tokens or part of one}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 2, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, block_m = 48}

// -----

// expected-error @+1 {{q_type must be bf16 or f32, got 'f16'}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = f16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{kv_type must be bf16, f8E4M3FN, f8E4M3FNUZ or f4E2M1FN, got 'f8E5M2'}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E5M2, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{qp_type must be bf16, f16 or the fp8 kv_type, got 'f32'}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, qp_type = f32}

// -----

// expected-error @+1 {{qp_type f16 needs an fp8 kv_type, got 'bf16': every e4m3 value is an f16 value, a bf16 one is not}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "none", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, qp_type = f16}

// -----

// expected-error @+1 {{qp_type 'f8E4M3FNUZ' must equal kv_type ('f8E4M3FN'): both operands of each matrix product share one fp8 format}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, qp_type = f8E4M3FNUZ}

// -----

// expected-error @+1 {{qp_type 'f8E4M3FNUZ' with mxfp4 KV must be bf16 or f8E4M3FN: the tile is decoded per row into e4m3fn for fp8 products}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f4E2M1FN, out_type = bf16, kv_scale = "block32_e8m0", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, qp_type = f8E4M3FNUZ}

// -----

// expected-error @+1 {{qp_type 'f8E4M3FN' must equal kv_type ('bf16'): both operands of each matrix product share one fp8 format}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "none", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, qp_type = f8E4M3FN}

// -----

// expected-error @+1 {{out_type must be bf16 or f32, got 'f16'}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = f16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{kv_scale must be "none", "per_tensor" or "block32_e8m0", got "per_token"}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_token", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{fp8 KV ('f8E4M3FN') needs kv_scale = "per_tensor"}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "none", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{softmax_scale must be positive and finite, got -1}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = -1.0 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{block_n must be a power of two between 16 and 256, got 48}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 48, num_warps = 4}

// -----

// expected-error @+1 {{num_warps must be 1, 2, 4 or 8, got 3}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 3}

// -----

// expected-error @+1 {{splits must be between 1 and 256, got 0}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, splits = 0}

// -----

// expected-error @+1 {{one_launch = true needs more than one split, but splits = 1 (stage 1 then writes the output itself)}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "none", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, splits = 1, one_launch = true}

// -----

// expected-error @+1 {{kv_len must be non-negative, got -5}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, kv_len = -5}

// -----

// expected-error @+1 {{kv_len_multiple_of must be positive, got 0}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, kv_len_multiple_of = 0}

// -----

// expected-error @+1 {{kv_len (1000) is not a multiple of kv_len_multiple_of (64)}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, kv_len = 1000, kv_len_multiple_of = 64}

// -----

// expected-error @+1 {{kernels return no values, got 1 result(s)}}
mla.kernel @k() -> index attributes {grid = ["batch"], num_warps = 4 : i64} {
  mla.return
}

// -----

// expected-error @+1 {{grid must have 1 to 3 dimensions, got 0}}
mla.kernel @k() attributes {grid = [], num_warps = 4 : i64} {
  mla.return
}

// -----

// expected-error @+1 {{unknown grid dimension 'x' (expected "batch", "splits", "heads", "rows" or "batch_row_groups")}}
mla.kernel @k() attributes {grid = ["x"], num_warps = 4 : i64} {
  mla.return
}

// -----

// expected-error @+1 {{num_warps must be 1, 2, 4 or 8, got 16}}
mla.kernel @k() attributes {grid = ["batch"], num_warps = 16 : i64} {
  mla.return
}

// -----

// expected-error @+1 {{block_n must be a power of two between 16 and 256, got 512}}
mla.kernel @k() attributes {grid = ["batch"], num_warps = 4 : i64, block_n = 512 : i64} {
  mla.return
}

// -----

// expected-error @+1 {{variant must be "masked" or "mask_free", got "fast"}}
mla.kernel @k() attributes {grid = ["batch"], num_warps = 4 : i64, variant = "fast"} {
  mla.return
}

// -----

// expected-error @+1 {{'dispatch_kv_multiple' is only meaningful on a mask_free variant}}
mla.kernel @k() attributes {grid = ["batch"], num_warps = 4 : i64, variant = "masked", dispatch_kv_multiple = 64 : i64} {
  mla.return
}

// -----

// expected-error @+1 {{'causal' is only meaningful on a masked variant}}
mla.kernel @k() attributes {grid = ["batch"], num_warps = 4 : i64, variant = "mask_free", causal} {
  mla.return
}

// -----

// expected-error @+1 {{split_candidates must be non-empty and positive}}
mla.kernel @k() attributes {grid = ["batch"], num_warps = 4 : i64, split_candidates = array<i64: 1, 0>} {
  mla.return
}

// -----

func.func @f() {
  // expected-error @+1 {{must be inside an mla.kernel}}
  %0 = mla.program_id 0
  return
}

// -----

mla.kernel @k() attributes {grid = ["batch", "splits"], num_warps = 4 : i64} {
  // expected-error @+1 {{dim 2 is outside the 2-dimensional grid of the enclosing kernel}}
  %0 = mla.program_id 2
  mla.return
}

// -----

mla.kernel @k(%m: memref<?x576xf8E4M3FN>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  // expected-error @+1 {{expected 2 indices for a rank-2 buffer, got 1}}
  %t = mla.load %m[%i] : memref<?x576xf8E4M3FN> -> tensor<64x576xf8E4M3FN>
  mla.return
}

// -----

mla.kernel @k(%m: memref<?x576xf8E4M3FN>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  // expected-error @+1 {{tile rank (3) exceeds buffer rank (2)}}
  %t = mla.load %m[%i, %i] : memref<?x576xf8E4M3FN> -> tensor<1x64x576xf8E4M3FN>
  mla.return
}

// -----

mla.kernel @k(%m: memref<?x576xf8E4M3FN>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  // expected-error @+1 {{tile dimension 1 (600) exceeds buffer dimension 1 (576)}}
  %t = mla.load %m[%i, %i] : memref<?x576xf8E4M3FN> -> tensor<64x600xf8E4M3FN>
  mla.return
}

// -----

mla.kernel @k(%m: memref<?x576xf8E4M3FN>, %t: memref<?xi32>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  // expected-error @+1 {{a page table needs all of table, table_offset and page_size}}
  %x = "mla.load"(%m, %i, %i, %t) {operandSegmentSizes = array<i32: 1, 2, 0, 1, 0>, page_size = 64 : i64} : (memref<?x576xf8E4M3FN>, index, index, memref<?xi32>) -> tensor<64x576xf8E4M3FN>
  mla.return
}

// -----

mla.kernel @k(%m: memref<?x16x576xf8E4M3FN>, %t: memref<?xi32>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  // expected-error @+1 {{a paged load gathers rows of a rank-2 buffer into a rank-2 tile, got ranks 3 and 2}}
  %x = mla.load %m[%i, %i, %i] pages %t[%i] page_size 64 : memref<?x16x576xf8E4M3FN> -> tensor<16x576xf8E4M3FN>
  mla.return
}

// -----

mla.kernel @k(%m: memref<?x576xf8E4M3FN>, %t: memref<?xi32>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  // expected-error @+1 {{page_size must be a power of two up to 4096, got 8192}}
  %x = mla.load %m[%i, %i] pages %t[%i] page_size 8192 : memref<?x576xf8E4M3FN> -> tensor<64x576xf8E4M3FN>
  mla.return
}

// -----

mla.kernel @k(%m: memref<?x576xf8E4M3FN>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  // expected-error @+1 {{tile element type 'bf16' differs from buffer element type 'f8E4M3FN' (convert with mla.cast)}}
  %t = mla.load %m[%i, %i] : memref<?x576xf8E4M3FN> -> tensor<64x576xbf16>
  mla.return
}

// -----

mla.kernel @k(%m: memref<?x576xf8E4M3FN>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %t = mla.fill 0.0 : tensor<64x576xf32>
  // expected-error @+1 {{cannot store a tile of 'f32' into a buffer of 'f8E4M3FN' (stores may only round f32 to bf16)}}
  mla.store %t, %m[%i, %i] : tensor<64x576xf32> -> memref<?x576xf8E4M3FN>
  mla.return
}

// -----

mla.kernel @k(%m: memref<?x16xf32>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %t = mla.fill 0.0 : tensor<32xf32>
  // expected-error @+1 {{tile dimension 0 (32) exceeds buffer dimension 1 (16)}}
  mla.store %t, %m[%i, %i] : tensor<32xf32> -> memref<?x16xf32>
  mla.return
}

// -----

func.func @f(%t: tensor<16x64xf32>) {
  // expected-error @+1 {{unsupported conversion from 'f32' to 'f8E5M2' (supported: any float to f32, f32 to bf16, f16, f8E4M3FN or f8E4M3FNUZ)}}
  %0 = mla.cast %t : tensor<16x64xf32> -> tensor<16x64xf8E5M2>
  return
}

// -----

func.func @f(%t: tensor<16x64xf32>) {
  // expected-error @+1 {{'to' must be f8E4M3FN, f8E4M3FNUZ, f16 or bf16, got 'f8E5M2'}}
  %s, %inv = mla.quant_scale %t to f8E5M2 : tensor<16x64xf32>
  return
}

// -----

func.func @f(%t: tensor<64x576xbf16>) {
  // expected-error @+1 {{result rank (1) differs from source rank (2)}}
  %0 = mla.slice %t [0, 0] : tensor<64x576xbf16> -> tensor<64xbf16>
  return
}

// -----

func.func @f(%t: tensor<64x576xbf16>) {
  // expected-error @+1 {{expected 2 offsets, got 1}}
  %0 = mla.slice %t [0] : tensor<64x576xbf16> -> tensor<64x512xbf16>
  return
}

// -----

func.func @f(%t: tensor<64x576xbf16>) {
  // expected-error @+1 {{result element type 'f32' differs from source element type 'bf16'}}
  %0 = mla.slice %t [0, 0] : tensor<64x576xbf16> -> tensor<64x512xf32>
  return
}

// -----

func.func @f(%t: tensor<64x576xbf16>) {
  // expected-error @+1 {{slice [500, 600) of dimension 1 exceeds the source size 576}}
  %0 = mla.slice %t [0, 500] : tensor<64x576xbf16> -> tensor<64x100xbf16>
  return
}

// -----

func.func @f(%t: tensor<16x64xf32>, %i: index) {
  // expected-error @+1 {{dim 2 is out of range for a rank-2 tile}}
  %0 = mla.mask %t, %i, %i {dim = 2 : i64, fill = 0.0 : f32} : tensor<16x64xf32>
  return
}

// -----

func.func @f(%t: tensor<16x64xf32>, %i: index) {
  // expected-error @+1 {{a causal edge and its row period come together}}
  %0 = "mla.mask"(%t, %i, %i, %i) {dim = 1 : i64, fill = 0.0 : f32} : (tensor<16x64xf32>, index, index, index) -> tensor<16x64xf32>
  return
}

// -----

func.func @f(%t: tensor<16x64xf32>, %i: index) {
  // expected-error @+1 {{row period must be positive, got 0}}
  %0 = mla.mask %t, %i, %i causal %i every 0 {dim = 1 : i64, fill = 0.0 : f32} : tensor<16x64xf32>
  return
}

// -----

func.func @f(%t: tensor<16x64xf32>, %i: index) {
  // expected-error @+1 {{a causal edge masks the columns (dim 1) of a rank-2 tile}}
  %0 = mla.mask %t, %i, %i causal %i every 16 {dim = 0 : i64, fill = 0.0 : f32} : tensor<16x64xf32>
  return
}

// -----

func.func @f(%a: tensor<16xbf16>, %b: tensor<16x64xbf16>) {
  // expected-error @+1 {{operands and result must be rank-2 tiles}}
  %0 = mla.dot %a, %b : tensor<16xbf16>, tensor<16x64xbf16> -> tensor<16x64xf32>
  return
}

// -----

func.func @f(%a: tensor<16x576xbf16>, %b: tensor<64x512xbf16>) {
  // expected-error @+1 {{contraction sizes differ: lhs has K = 576, rhs has K = 512}}
  %0 = mla.dot %a, %b {transpose_rhs} : tensor<16x576xbf16>, tensor<64x512xbf16> -> tensor<16x64xf32>
  return
}

// -----

func.func @f(%a: tensor<16x64xbf16>, %b: tensor<64x512xbf16>) {
  // expected-error @+1 {{result shape 16x32 does not match lhs rows x rhs columns (16x512)}}
  %0 = mla.dot %a, %b : tensor<16x64xbf16>, tensor<64x512xbf16> -> tensor<16x32xf32>
  return
}

// -----

func.func @f(%a: tensor<16x64xbf16>, %b: tensor<64x512xbf16>, %c: tensor<32x512xf32>) {
  // expected-error @+1 {{accumulator type 'tensor<32x512xf32>' differs from the result type 'tensor<16x512xf32>'}}
  %0 = mla.dot %a, %b acc(%c : tensor<32x512xf32>) : tensor<16x64xbf16>, tensor<64x512xbf16> -> tensor<16x512xf32>
  return
}

// -----

func.func @f(%s: tensor<16xf32>, %m: tensor<16xf32>, %a: tensor<16x512xf32>) {
  // expected-error @+1 {{scores must be a rank-2 tile}}
  %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %m, %a : tensor<16xf32>, tensor<16xf32>, tensor<16x512xf32>
  return
}

// -----

func.func @f(%s: tensor<16x64xf32>, %m: tensor<16x1xf32>, %a: tensor<16x512xf32>) {
  // expected-error @+1 {{row max and sum must be rank-1 tiles}}
  %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %m, %a : tensor<16x64xf32>, tensor<16x1xf32>, tensor<16x512xf32>
  return
}

// -----

func.func @f(%s: tensor<16x64xf32>, %m: tensor<16xf32>, %a: tensor<16x4x8xf32>) {
  // expected-error @+1 {{accumulator must be a rank-2 tile}}
  %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %m, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<16x4x8xf32>
  return
}

// -----

func.func @f(%s: tensor<16x64xf32>, %m: tensor<8xf32>, %a: tensor<16x512xf32>) {
  // expected-error @+1 {{row count mismatch: scores has 16 rows, max has 8, accumulator has 16}}
  %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %m, %a : tensor<16x64xf32>, tensor<8xf32>, tensor<16x512xf32>
  return
}

// -----

func.func @f(%s: tensor<16x64xf32>, %m: tensor<16xf32>, %a: tensor<16x512xf32>, %e: tensor<16xi32>) {
  // expected-error @+1 {{col_exp must have one entry per score column (64), got 'tensor<16xi32>'}}
  %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %m, %a col_exp %e : tensor<16x64xf32>, tensor<16xf32>, tensor<16x512xf32>, tensor<16xi32>
  return
}

// -----

func.func @f(%a: tensor<16x512xf32>, %m: tensor<8xf32>) {
  // expected-error @+1 {{row count mismatch: accumulator has 16 rows, max has 8}}
  %o, %l = mla.softmax_finalize %a, %m, %m : tensor<16x512xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%p: memref<?x16x512xf32>, %l: memref<?x?x16xf32>, %i: index) {
  // expected-error @+1 {{partial must be a rank-4 buffer (batch x splits x heads x dim), got rank 3}}
  %0 = mla.split_k_reduce %p, %l[%i, %i] splits %i : memref<?x16x512xf32>, memref<?x?x16xf32> -> tensor<1x512xf32>
  return
}

// -----

func.func @f(%p: memref<?x?x16x512xf32>, %l: memref<?x16xf32>, %i: index) {
  // expected-error @+1 {{lse must be a rank-3 buffer (batch x splits x heads), got rank 2}}
  %0 = mla.split_k_reduce %p, %l[%i, %i] splits %i : memref<?x?x16x512xf32>, memref<?x16xf32> -> tensor<1x512xf32>
  return
}

// -----

func.func @f(%p: memref<?x?x16x512xbf16>, %l: memref<?x?x16xf32>, %i: index) {
  // expected-error @+1 {{partial and lse buffers must hold f32}}
  %0 = mla.split_k_reduce %p, %l[%i, %i] splits %i : memref<?x?x16x512xbf16>, memref<?x?x16xf32> -> tensor<1x512xf32>
  return
}

// -----

func.func @f(%p: memref<?x?x16x512xf32>, %l: memref<?x?x16xf32>, %i: index) {
  // expected-error @+1 {{result must be a rank-2 tile (heads x dim)}}
  %0 = mla.split_k_reduce %p, %l[%i, %i] splits %i : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<512xf32>
  return
}

// -----

func.func @f(%p: memref<?x?x16x512xf32>, %l: memref<?x?x16xf32>, %i: index) {
  // expected-error @+1 {{result has 64 columns but partial rows have 512}}
  %0 = mla.split_k_reduce %p, %l[%i, %i] splits %i : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @f(%p: memref<?x?x16x512xf32>, %l: memref<?x?x16xf32>, %i: index) {
  // expected-error @+1 {{result has 32 heads but the partial buffer only 16}}
  %0 = mla.split_k_reduce %p, %l[%i, %i] splits %i : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<32x512xf32>
  return
}

// -----

func.func @f(%p: memref<?x?x16x512xf32>, %l: memref<?x?x16xf32>, %i: index) {
  // expected-error @+1 {{attribute 'max_splits' failed to satisfy constraint}}
  %0 = mla.split_k_reduce %p, %l[%i, %i] splits %i {max_splits = 0 : i64} : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<2x512xf32>
  return
}

// -----

func.func @f(%i: index) {
  // expected-error @+1 {{block_n must be positive, got 0}}
  %lo, %hi = mla.split_range %i, %i, %i block_n 0
  return
}

// -----

func.func @f(%i: index) {
  // expected-error @+1 {{step must be positive, got 0}}
  mla.kv_loop %n = %i to %i step 0 {
    mla.yield
  }
  return
}

// -----

func.func @f(%i: index) {
  // expected-error @+1 {{iter_args and result types differ in number}}
  mla.kv_loop %n = %i to %i step 16 iter_args(%a = %i) -> (index, index) {
    mla.yield %a : index
  }
  return
}

// -----

func.func @f(%i: index) {
  // expected-error @+1 {{body must take the induction variable and one argument per iter_arg}}
  "mla.kv_loop"(%i, %i) ({
  ^bb0:
    "mla.yield"() : () -> ()
  }) {step = 16 : i64} : (index, index) -> ()
  return
}

// -----

func.func @f(%i: index) {
  // expected-error @+1 {{induction variable must be an index}}
  "mla.kv_loop"(%i, %i) ({
  ^bb0(%n: i32):
    "mla.yield"() : () -> ()
  }) {step = 16 : i64} : (index, index) -> ()
  return
}

// -----

func.func @f(%i: index, %x: f32) {
  // expected-error @+1 {{iter_args types must equal the result types}}
  %r = "mla.kv_loop"(%i, %i, %x) ({
  ^bb0(%n: index, %a: f32):
    "mla.yield"(%a) : (f32) -> ()
  }) {step = 16 : i64} : (index, index, f32) -> (index)
  return
}

// -----

func.func @f(%i: index, %x: f32) {
  // expected-error @+1 {{body argument type 'index' differs from iter_arg type 'f32'}}
  %r = "mla.kv_loop"(%i, %i, %x) ({
  ^bb0(%n: index, %a: index):
    "mla.yield"(%x) : (f32) -> ()
  }) {step = 16 : i64} : (index, index, f32) -> (f32)
  return
}

// -----

func.func @f(%i: index, %x: f32) {
  // expected-error @+1 {{mla.yield operand types must equal the result types}}
  %r = "mla.kv_loop"(%i, %i, %x) ({
  ^bb0(%n: index, %a: f32):
    "mla.yield"(%n) : (index) -> ()
  }) {step = 16 : i64} : (index, index, f32) -> (f32)
  return
}

// -----

func.func @f(%i: index) {
  // expected-error @+1 {{body must end in mla.yield}}
  "mla.kv_loop"(%i, %i) ({
  ^bb0(%n: index):
    "func.return"() : () -> ()
  }) {step = 16 : i64} : (index, index) -> ()
  return
}

// -----

// The dialect's discardable attributes (MLADialect.td) are checked wherever
// they appear; any other `mla.` attribute is refused.
// expected-error @+1 {{'mla.shared_bytes' must be a non-negative i64}}
func.func @f() attributes {mla.shared_bytes = -1 : i64} {
  return
}

// -----

// expected-error @+1 {{'mla.block_threads' must be a positive i64}}
func.func @f() attributes {mla.block_threads = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{'mla.grid' must be an array of grid dimensions (batch, splits, heads, rows, batch_row_groups, one)}}
func.func @f() attributes {mla.grid = ["cols"]} {
  return
}

// -----

// expected-error @+1 {{'mla.arg_names' must be an array of strings}}
func.func @f() attributes {mla.arg_names = [1]} {
  return
}

// -----

// expected-error @+1 {{'mla.dependent_launch' must be a unit attribute}}
func.func @f() attributes {mla.dependent_launch = true} {
  return
}

// -----

// expected-error @+1 {{'mla.variant' must be "masked" or "mask_free"}}
func.func @f() attributes {mla.variant = "fast"} {
  return
}

// -----

// expected-error @+1 {{'mla.split_candidates' must be an array<i64>}}
func.func @f() attributes {mla.split_candidates = [1, 2]} {
  return
}

// -----

// expected-error @+1 {{'mla.kv_tensor_map' must be an array<i64> of a box's rows and columns (and the boxes a copy takes along a row), each 1 to 256}}
func.func @f() attributes {mla.kv_tensor_map = array<i64: 64, 512>} {
  return
}

// -----

// expected-error @+1 {{'mla.kv_tensor_map' must be an array<i64> of a box's rows and columns (and the boxes a copy takes along a row), each 1 to 256}}
func.func @f() attributes {mla.kv_tensor_map = array<i64: 64, 64, 9, 1>} {
  return
}

// -----

// expected-error @+1 {{'mla.shared_byte' is not an attribute of the mla dialect}}
func.func @f() attributes {mla.shared_byte = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{kv_scale = "block32_e8m0" goes with kv_type = f4E2M1FN (mxfp4) and only with it, got kv_type 'f4E2M1FN' and kv_scale "none"}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f4E2M1FN, out_type = bf16, kv_scale = "none", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

// expected-error @+1 {{kv_scale = "block32_e8m0" goes with kv_type = f4E2M1FN (mxfp4) and only with it, got kv_type 'bf16' and kv_scale "block32_e8m0"}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "block32_e8m0", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<64x18xi8>
  // expected-error @+1 {{format must be "mxfp4", got "nvfp4"}}
  %k = mla.dequant %dt, %st format "nvfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xbf16>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<64x18xi8>
  // expected-error @+1 {{result element type must be bf16 or f8E4M3FN, got 'f32'}}
  %k = mla.dequant %dt, %st format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xf32>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<64x18xi8>
  // expected-error @+1 {{an f8E4M3FN result needs the exponents result (one i32 per row)}}
  %k = mla.dequant %dt, %st format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xf8E4M3FN>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<64x18xi8>
  // expected-error @+1 {{a bf16 result takes no exponents result}}
  %k, %e = mla.dequant %dt, %st format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xbf16>, tensor<64xi32>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<64x18xi8>
  // expected-error @+1 {{exponents must have one entry per row (64), got 'tensor<32xi32>'}}
  %k, %e = mla.dequant %dt, %st format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xf8E4M3FN>, tensor<32xi32>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<32x18xi8>
  // expected-error @+1 {{data (64) and scales (32) must have the result's rows (64)}}
  %k = mla.dequant %dt, %st format "mxfp4" : tensor<64x288xi8>, tensor<32x18xi8> -> tensor<64x576xbf16>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x16xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<64x1xi8>
  // expected-error @+1 {{result columns (40) must be whole blocks of 32}}
  %k = mla.dequant %dt, %st format "mxfp4" : tensor<64x16xi8>, tensor<64x1xi8> -> tensor<64x40xbf16>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<64x18xi8>
  // expected-error @+1 {{data holds two values per byte: 512 columns need 256 bytes, got 288}}
  %k = mla.dequant %dt, %st format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x512xbf16>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x288xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<64x16xi8>
  // expected-error @+1 {{one scale per block of 32: 576 columns need 18 scales, got 16}}
  %k = mla.dequant %dt, %st format "mxfp4" : tensor<64x288xi8>, tensor<64x16xi8> -> tensor<64x576xbf16>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x288xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i] : memref<?x288xi8> -> tensor<64x288xi8>
  // expected-error @+1 {{operand #0 must be statically shaped tensor of floating-point values}}
  %c = mla.cast %dt : tensor<64x288xi8> -> tensor<64x288xf32>
  mla.return
}

// -----

mla.kernel @k(%d: memref<?x16x288xi8>, %s: memref<?x?xi8>, %i: index) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %dt = mla.load %d[%i, %i, %i] : memref<?x16x288xi8> -> tensor<1x16x288xi8>
  %st = mla.load %s[%i, %i] : memref<?x?xi8> -> tensor<16x18xi8>
  // expected-error @+1 {{data, scales and result must be rank-2 tiles}}
  %k = mla.dequant %dt, %st format "mxfp4" : tensor<1x16x288xi8>, tensor<16x18xi8> -> tensor<16x576xbf16>
  mla.return
}

// -----

// expected-error @+1 {{qp_terms must be 1 or 2, got 3}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, qp_type = f8E4M3FN, qp_terms = 3}

// -----

// expected-error @+1 {{qp_terms = 2 needs fp8 KV and qp_type equal to kv_type (two fp8 terms of Q and P), got kv_type 'f8E4M3FN' and qp_type 'f16'}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16, kv_scale = "per_tensor", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, qp_type = f16, qp_terms = 2}

// -----

// expected-error @+1 {{qp_terms = 2 needs fp8 KV and qp_type equal to kv_type (two fp8 terms of Q and P), got kv_type 'bf16' and qp_type 'bf16'}}
mla.decode @bad {num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64, q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "none", page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4, qp_terms = 2}

// -----

func.func @f(%x: tensor<16x64xf32>) {
  // expected-error @+1 {{terms of type 'bf16' are not supported (f8E4M3FN or f8E4M3FNUZ)}}
  %t = mla.split_terms %x : tensor<16x64xf32> -> tensor<32x64xbf16>
  return
}

// -----

func.func @f(%x: tensor<16x64xf32>) {
  // expected-error @+1 {{the stacked terms (result) must be two of 'tensor<16x64xf32>' by rows (32x64), got 'tensor<16x64xf8E4M3FN>'}}
  %t = mla.split_terms %x : tensor<16x64xf32> -> tensor<16x64xf8E4M3FN>
  return
}

// -----

func.func @f(%x: tensor<32x64xf32>) {
  // expected-error @+1 {{the stacked terms (source) must be two of 'tensor<16x32xf32>' by rows (32x32), got 'tensor<32x64xf32>'}}
  %t = mla.sum_terms %x : tensor<32x64xf32> -> tensor<16x32xf32>
  return
}

// -----

func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{terms are stacked by rows of 2-d tiles, got 'tensor<f32>' and 'tensor<f8E4M3FN>'}}
  %t = mla.split_terms %x : tensor<f32> -> tensor<f8E4M3FN>
  return
}

// -----

func.func @f(%x: tensor<32xf32>) {
  // expected-error @+1 {{terms are stacked by rows of 2-d tiles, got 'tensor<16x32xf32>' and 'tensor<32xf32>'}}
  %t = mla.sum_terms %x : tensor<32xf32> -> tensor<16x32xf32>
  return
}

// -----

func.func @f(%s: tensor<16x64xf32>, %m: tensor<16xf32>, %a: tensor<24x512xf32>) {
  // expected-error @+1 {{accumulator rows (24) must be a whole multiple of the scores' rows (16)}}
  %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %m, %a : tensor<16x64xf32>, tensor<16xf32>, tensor<24x512xf32>
  return
}
