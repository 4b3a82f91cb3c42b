//===- Passes.td - passes of the mla compiler --------------*- tablegen -*-===//
#ifndef MLA_PASSES_TD
#define MLA_PASSES_TD

include "mlir/Pass/PassBase.td"

def MLAExpandDecode : Pass<"mla-expand-decode", "::mlir::ModuleOp"> {
  let summary = "Expand `mla.decode` specs into stage-1 and stage-2 kernels";
  let description = [{
    Replaces every `mla.decode` spec with tile-level kernels:

    * `@<spec>_stage1_masked`, grid batch × splits: each program walks its
      split's KV range in `block_n` tiles (S = Q·Kᵀ over nope + rope with the
      softmax scale, log2(e) and the KV scale folded into Q once; online
      softmax with exp2; O += P·V over the first `v_dim` columns) and writes
      the partial output and LSE; with one split it writes the final output
      directly. After the partial stores, `mla.split_cluster_sync`: where
      the launcher ran a sequence's splits as one thread-block cluster (the
      single launch for small batches), the splits then combine their
      partials themselves, row pairs dealt round-robin, and stage 2 is not
      launched.
    * `@<spec>_stage2`, grid batch × heads: the LSE-weighted combine. Not
      emitted when the spec fixes `splits = 1`.

    The split cost model's candidate set for `splits = auto` is restricted by
    the spec's divisibility facts and recorded on stage 1.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def MLAElideMasks : Pass<"mla-elide-masks", "::mlir::ModuleOp"> {
  let summary = "Remove stage-1 tile masks where lengths divide evenly";
  let description = [{
    A stage-1 kernel is mask-free when every sequence length is a multiple of
    `num_splits * block_n`: then every split range is exact and every KV tile
    is full. The pass proves this from the kernel's facts (a known divisor of
    the lengths and the split counts a launcher may choose). Proven: the
    kernel is rewritten into its mask-free form in place. Not proven: a
    mask-free clone is added beside the masked kernel, with the dispatch
    rule (`dispatch_kv_multiple`) that a launcher checks at run time.

    Within a mask-free kernel, a `bound` on a load of rows `[base + n, base +
    n + block_n)` with bound `base + hi`, and an `mla.mask` of offset `n` and
    bound `hi`, are removed when `n` is the induction variable of an
    `mla.kv_loop` from an exact split range to `hi` with step `block_n`.

    Kernels marked `causal` (several query tokens per sequence) are left
    masked: each token's KV range ends at its causal edge, which lies inside
    a tile for any length.
  }];
}

def MLALowerToLoops : Pass<"mla-lower-to-loops", "::mlir::ModuleOp"> {
  let summary = "Lower tile kernels to host loops on buffers (CPU execution)";
  let description = [{
    Turns every `mla.kernel` into a `func.func` that runs one program of the
    grid: the program ids become the first three `index` arguments. Tiles
    become heap buffers (`memref.alloc`, freed later by the buffer
    deallocation pipeline) and tile ops become `scf.for` loop nests over
    scalars. Narrow floats (bf16, fp8) stay integers in buffers and are
    converted with integer arithmetic that the GPU lowering shares, so the
    host needs no bf16 or fp8 support. The functions get
    `llvm.emit_c_interface` so that a runner can call them through the
    ExecutionEngine.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def MLALowerToGPU : Pass<"mla-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower tile kernels to per-lane GPU code for one chip";
  let description = [{
    Turns every `mla.kernel` into a `gpu.func` inside one `gpu.module`
    (`@mla_kernels`, with the chip's NVVM or ROCDL target) that runs one
    program per workgroup of `num_warps` x wave-size lanes. Each tile value
    gets a placement:

    * loads land in shared memory (row-major, cooperative copies); casts,
      scales and slices of shared tiles stay lazy expressions evaluated
      where they are read;
    * `mla.dot` results live in registers in the accumulator lane layout of
      the chip's matrix instruction (MatrixInstr.h), the columns split
      across warps; operands are read from shared memory in the A / B lane
      layouts of the same descriptor;
    * row statistics (max, sum, LSE) live in registers in the row layout of
      that accumulator; row reductions use shuffles across the lanes of a
      row, then shared memory across warps. The online softmax's running
      sum inside the KV loop stays a per-lane share, reduced once by the
      finalize.

    The only target-specific pieces (the matrix instruction: `mma.sync` on
    sm_90, `amdgpu.mfma` on gfx950 / gfx942; exp2 / log2; the module target)
    come from the chip descriptor. fp8 tiles must use the chip's fp8 format. The dynamic shared
    memory a kernel needs is recorded as `mla.shared_bytes`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "chip to generate code for (see Target.h)">,
    Option<"reportPlacements", "report-placements", "bool", /*default=*/"false",
           "emit a remark per tile op naming its result's placement and the "
           "lowering's decisions (copy path, matrix instruction)">,
    Option<"wgmmaSmemA", "wgmma-smem-a", "bool", /*default=*/"false",
           "sm_90a, fp8 KV with 16-bit Q and P: S^T reads the converted KV "
           "tile from shared memory instead of taking it as wgmma's register "
           "A (ChipTuning::wgmmaRegisterA off; the earlier path, kept for "
           "comparison)">,
    Option<"wgmmaRegisterV", "wgmma-register-v", "bool", /*default=*/"false",
           "sm_90a, fp8 KV with 16-bit Q and P, K as register A: O^T takes "
           "V as wgmma's register A too, read from V's bytes by "
           "ldmatrix.trans, instead of a converted 16-bit copy in shared "
           "memory (ChipTuning::wgmmaRegisterV on; slower on the H100, kept "
           "for comparison)">,
    Option<"pageEntriesAhead", "page-entries-ahead", "bool",
           /*default=*/"false",
           "sm_90a, a paged fp8 KV tile within one page loaded a tile ahead "
           "into registers takes its page entry, loaded a tile earlier "
           "still, from the KV loop instead of reading it with its bytes "
           "(ChipTuning::pageEntriesAhead on: faster on the H100, slower on "
           "the H200; kept for comparison)">,
    Option<"kvTileFirst", "kv-tile-first", "bool", /*default=*/"false",
           "sm_90a: a KV loop's first tile goes out before the straight-line "
           "copy of the tile loaded ahead of the loop (Q), and that copy "
           "waits at a barrier before its loads (ChipTuning::aheadLoadsFirst "
           "off; the earlier order, kept for comparison)">,
    Option<"kvEvictFirstTiles", "kv-evict-first-tiles", "int64_t",
           /*default=*/"-1",
           "sm_90a, the KV tile's reads (fp8 loads into registers a tile "
           "ahead, tensor-map copies; not paged, not mxfp4) carry an L2 "
           "evict-first hint in programs of at most this many KV tiles, an "
           "evict-normal one in longer programs (ChipTuning::"
           "kvEvictFirstTiles; -1: the chip's bound, 0: no hint)">,
    Option<"e4m3DoubleBuffer", "e4m3-double-buffer", "bool",
           /*default=*/"false",
           "sm_90a, a KV tile read as e4m3 (fp8 Q and P) and sent by "
           "tensor-map copies: two buffers, V^T transposed into V's own "
           "atoms so that two programs still fit an SM "
           "(ChipTuning::e4m3DoubleBuffer on)">
  ];
  let dependentDialects = ["::mlir::amdgpu::AMDGPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::ROCDL::ROCDLDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def MLALdsDmaScopes : Pass<"mla-lds-dma-scopes", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Tell LLVM that no LDS access overlaps an LDS DMA load in flight";
  let description = [{
    Runs on the LLVM dialect of a ROCDL `gpu.module`. A kernel whose KV
    tile arrives by LDS DMA loads (`rocdl.raw.ptr.buffer.load.lds`,
    ChipFacts::ldsDmaLoads16) waits for each tile's loads itself
    (`s_waitcnt vmcnt(0)`, then a barrier) before any wave touches the
    tile, and starts the next tile's loads into the other buffer while the
    current one is read. LLVM cannot tell the two buffers apart (both are
    views of one dynamic shared-memory block), so its wait insertion puts
    an `s_waitcnt vmcnt(0)` before the first LDS read after the loads,
    waiting for the tile that was meant to arrive while this one is
    computed.

    This pass gives every LDS DMA load the alias scope `lds dma`, and
    every other operation that accesses LDS (`llvm.load` / `llvm.store`
    through an address-space-3 pointer, transposing reads) the scope
    `lds access` and `noalias` on `lds dma`. LLVM's wait insertion then
    only waits for DMA loads an access may alias, that is for none. The
    claim holds by the lowering's construction, and the emulator checks it
    on every run: an LDS access to bytes of a load not yet retired by its
    wave's `s_waitcnt` stops the dispatch (docs/Emulator.md). Functions
    without LDS DMA loads are left alone.

    ```mlir
    rocdl.raw.ptr.buffer.load.lds %rsrc, %lds, %c16, %off, %c0, %c0, %c0
        {alias_scopes = [#dma]}
    %v = llvm.load %p {alias_scopes = [#access], noalias_scopes = [#dma]}
        : !llvm.ptr<3> -> vector<4xi32>
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def MLANvvmGridConstants
    : Pass<"mla-nvvm-grid-constants", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass a kernel's tensor map by value, as a grid constant";
  let description = [{
    Runs on the LLVM dialect of an NVVM `gpu.module`. A kernel whose KV
    tile is copied by the tensor memory accelerator (sm_90a,
    `Lowering::sendTensorMapTile`) takes the tensor map as its last
    argument, an `!llvm.ptr` that the copies read. The map must be a
    kernel parameter in its own right: 128 bytes, 64-byte aligned,
    `__grid_constant__`, so that the copy addresses it in parameter space
    (`cvta.param`) instead of a copy in local memory. The GPU-to-NVVM
    conversion drops argument attributes, so this pass gives the last
    argument of every `llvm.func` carrying `mla.kv_tensor_map`
    `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and
    `nvvm.grid_constant`; the PTX parameter becomes
    `.param .align 64 .b8 name[128]`, which the launcher fills with the
    map it builds per call (MLA_ARG_TENSOR_MAP). A function whose last
    argument is not a pointer is an error.

    ```mlir
    llvm.func @k(..., %map: !llvm.ptr {llvm.align = 64 : i64,
                 llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
        attributes {mla.kv_tensor_map = array<i64: 64, 64>, nvvm.kernel}
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // MLA_PASSES_TD
