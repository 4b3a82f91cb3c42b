// Chips and tiles the GPU lowering cannot handle get diagnostics, not crashes.
// RUN: not mla-opt --mla-lower-to-gpu=chip=gfx90a %s 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not mla-opt --mla-lower-to-gpu=chip=host %s 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: mla-opt --mla-lower-to-gpu=chip=sm_90 %s --split-input-file --verify-diagnostics

// CHIP: error: unknown chip 'gfx90a' (known: gfx950, gfx942, sm_90, sm_90a, host)
// HOST: error: chip 'host' has no bf16 matrix instruction to lower mla.dot

mla.kernel @cols(%out: memref<?x16x48xf32>) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a tile of 48 columns cannot be split across 4 warps of 8-column instructions}}
  %t = mla.fill 0.0 : tensor<16x48xf32>
  mla.store %t, %out[%c0, %c0, %c0] : tensor<16x48xf32> -> memref<?x16x48xf32>
  mla.return
}

// -----

mla.kernel @rows(%out: memref<?x24x64xf32>) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a register tile must have a positive multiple of 16 rows (the matrix instruction's M), got 24}}
  %t = mla.fill 0.0 : tensor<24x64xf32>
  mla.store %t, %out[%c0, %c0, %c0] : tensor<24x64xf32> -> memref<?x24x64xf32>
  mla.return
}

// -----

mla.kernel @rank1(%in: memref<?xf32>) attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{the GPU lowering loads rank-2 tiles only}}
  %t = mla.load %in[%c0] : memref<?xf32> -> tensor<64xf32>
  mla.return
}

// -----

// expected-error @below {{mla.decode specs must be expanded before mla-lower-to-gpu (run mla-expand-decode)}}
module {
  mla.decode @spec {
    num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512, rope_dim = 64,
    q_type = bf16, kv_type = bf16, out_type = bf16, kv_scale = "none",
    page_size = 1, q_seq_len = 1, softmax_scale = 0.0416666679 : f32,
    block_n = 64, num_warps = 4}
}

// -----

// mla.quant_scale of a register tile (a dot's accumulator): the lowering
// reduces tiles in shared memory only.
mla.kernel @quant_scale_of_registers(%q: memref<?x64xbf16>, %kv: memref<?x64xbf16>,
                                     %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  %k = mla.load %kv[%c0, %c0] : memref<?x64xbf16> -> tensor<64x64xbf16>
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
  // expected-error @+1 {{the GPU lowering takes the largest magnitude of rank-2 tiles in shared memory only}}
  %fit, %inv = mla.quant_scale %s to f8E4M3FN : tensor<16x64xf32>
  %ss = mla.scale %s, %fit : tensor<16x64xf32>
  mla.store %ss, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}
