// What sm_90a's warpgroup MMAs (wgmma) cannot take gets a diagnostic.
// RUN: mla-opt --mla-lower-to-gpu=chip=sm_90a %s --split-input-file --verify-diagnostics

// wgmma takes fp8 only as both operands fp8 (K-major, the e4m3 form): an
// fp8 Q tile against a bf16 K would have to be converted to bf16, which the
// lowering does for whole 16-byte rounds of the threads only (16 x 64 bytes
// are 64 chunks for 128 threads), so it is refused by name.
mla.kernel @fp8q(%kv: memref<?x64xbf16>, %q: memref<?x64xf8E4M3FN>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xbf16> -> tensor<64x64xbf16>
  %qt = mla.load %q[%b, %c0] : memref<?x64xf8E4M3FN> -> tensor<16x64xf8E4M3FN>
  // expected-error @+1 {{wgmma (wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16) reads bf16 operands; the left operand is f8E4M3FN (convert it to a tile of that type first)}}
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xf8E4M3FN>, tensor<64x64xbf16> -> tensor<16x64xf32>
  mla.store %s, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// A warpgroup is 4 warps: 2 are refused.
mla.kernel @twowarps(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 2 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xbf16> -> tensor<64x64xbf16>
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<16x64xbf16>
  // expected-error @+1 {{wgmma needs the warps in whole warpgroups of 4, got 2}}
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
  mla.store %s, %out[%b, %c0] : tensor<16x64xf32> -> memref<?x64xf32>
  mla.return
}

// -----

// 272 rows (17 blocks of 16 heads) exceed wgmma's N of 256.
mla.kernel @rows(%kv: memref<?x64xbf16>, %q: memref<?x64xbf16>, %out: memref<?x64xf32>)
    attributes {grid = ["batch"], num_warps = 4 : i64} {
  %c0 = arith.constant 0 : index
  %b = mla.program_id 0
  %k = mla.load %kv[%c0, %c0] : memref<?x64xbf16> -> tensor<64x64xbf16>
  %qt = mla.load %q[%b, %c0] : memref<?x64xbf16> -> tensor<272x64xbf16>
  // expected-error @+1 {{wgmma takes N = 16 .. 256 rows in steps of 16, got 272}}
  %s = mla.dot %qt, %k {transpose_rhs} : tensor<272x64xbf16>, tensor<64x64xbf16> -> tensor<272x64xf32>
  mla.store %s, %out[%b, %c0] : tensor<272x64xf32> -> memref<?x64xf32>
  mla.return
}
