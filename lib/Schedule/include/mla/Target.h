//===- Target.h - per-chip facts --------------------------------*- C++ -*-===//
//
// One descriptor per chip the compiler knows. Passes read target differences
// from here instead of testing chip names.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TARGET_H
#define MLA_TARGET_H

#include "mla/MatrixInstr.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mla {

/// How a chip's fp8 e4m3 operands are encoded.
enum class Fp8Flavor { None, E4M3FN, E4M3FNUZ };

/// How a chip turns a pair of stored fp8 operand elements into the bf16
/// pair its matrix instruction reads.
enum class Fp8Decode {
  /// Integer arithmetic on the code (exact; any chip).
  Software,
  /// v_cvt_pk_f32_fp8 (CDNA3/4: amdgpu.ext_packed_fp8), then the high half
  /// of each f32 (exact: every e4m3 value is a bf16 value).
  PackedToF32,
  /// v_cvt_scalef32_pk_bf16_fp8 (CDNA4: amdgpu.scaled_ext_packed, scale 1).
  PackedToBf16,
  /// cvt.rn.f16x2.e4m3x2 (sm_89+), widened to f32, then the high half
  /// (exact: every e4m3 value is an f16 and a bf16 value).
  PackedToF16,
};

/// How a chip decodes mxfp4 values (e2m1 codes times an e8m0 block scale)
/// into bf16 where every product is a normal bf16 (the exact decode of the
/// other scales is ScalarCodegen's on every chip).
enum class Mxfp4Decode {
  /// Integer arithmetic on each code (ScalarCodegen's mxfp4ToBf16Normal,
  /// about 10 operations a value).
  Software,
  /// Two codes of a byte times the scale to a bf16 pair in one
  /// instruction (CDNA4: v_cvt_scalef32_pk_bf16_fp4).
  ScaledPairConvert,
  /// Byte-table lookups by the codes: the low and the high bytes of the 8
  /// magnitudes' bf16 values, the signs or-ed in, bytes interleaved into
  /// pairs. sm_90: prmt on nibble selectors, then one mul.rn.bf16x2 a pair
  /// by the scale (about 2.6 operations a value); CDNA3: v_perm_b32 on byte
  /// selectors, the scale added to the tables' exponents first (about 3.6).
  ByteTables,
};

/// Whose instruction set a chip runs: picks the target conversions (ROCDL
/// or NVVM), the binary format and the launcher backend.
enum class Vendor { Host, AMD, NVIDIA };

/// What the hardware is and has: read from product sheets and ISA guides,
/// never tuned. A pass asks these before it emits an instruction through
/// the target interface (lib/Transforms/GPU/TargetInfo.h).
struct ChipFacts {
  int64_t computeUnits = 1;        ///< CUs / SMs: programs resident at once
  int64_t waveSize = 1;            ///< lanes per wave / warp
  int64_t sharedMemBytes = 0;      ///< LDS / shared memory per workgroup
  Fp8Flavor fp8 = Fp8Flavor::None; ///< the e4m3 encoding it reads
  Fp8Decode fp8Decode = Fp8Decode::Software; ///< fp8 -> bf16 operand conversion
  /// Two f32 values round to a pair of fp8 codes in one instruction
  /// (CDNA3/4: v_cvt_pk_fp8_f32, round to nearest even, after a clamp to the
  /// largest finite value, which the software rounding saturates to;
  /// Hopper: cvt.rn.satfinite.e4m3x2.f32, the same rounding).
  bool fp8PairEncode = false;
  /// Names of the matrix instructions the chip has (see MatrixInstr.h).
  llvm::ArrayRef<llvm::StringRef> matrixInstrNames;
  /// Global -> shared copies that do not pass through registers and are
  /// waited for by group (sm_90: cp.async): the KV loop's tile copy is then
  /// double-buffered, the next tile in flight while this one is computed.
  bool asyncTileCopy = false;
  /// Tile copies by the tensor memory accelerator (sm_90's
  /// cp.async.bulk.tensor): one thread sends a whole box of the KV cache,
  /// described by a tensor map the launcher builds, into the 128-byte
  /// swizzled layout, and the copy completes on an mbarrier. Only where the
  /// tile is stored in that layout (sm_90a's wgmma operands).
  bool bulkTensorCopies = false;
  /// A kernel may be started while the kernel before it in the stream
  /// finishes (sm_90: programmatic dependent launch, `griddepcontrol`): the
  /// split-K combine then waits for stage 1 in-kernel instead of behind a
  /// launch boundary, and stage 1 signals once its KV loop is done.
  bool dependentLaunch = false;
  /// The most programs a thread-block cluster holds, whose threads meet at
  /// one barrier (sm_90: 16, the non-portable maximum; 0: no clusters).
  /// Stage 1 then combines its splits itself when the launcher runs them as
  /// one cluster (docs/Design.md, "One launch for small batches").
  int64_t clusterPrograms = 0;
  /// Loads through a buffer resource whose size the hardware checks: a
  /// load past it returns zeros (CDNA: buffer_load with num_records, raw
  /// mode). A tile load with a row bound then reads through a buffer of the
  /// bound's rows, with no per-chunk compare or branch.
  bool boundsCheckedLoads = false;
  /// LDS reads that hand each lane a column of a 16-lane group's 8-byte
  /// rows (CDNA4: ds_read_b64_tr_b8 / _b16; lane map: MatrixInstr.h,
  /// transposedReads): an fp8 or bf16 B operand stored K-major (V in
  /// O += P V) comes in one or two reads per instruction tile and K step
  /// instead of row reads and a byte or half-word transpose.
  bool transposedLdsReads = false;
  /// Buffer loads of 16 bytes a lane straight into LDS, not through
  /// registers (CDNA4: buffer_load_dwordx4 ... lds): lane l's bytes land
  /// at a wave-uniform LDS address (M0 + offset) + 16 l, and complete on
  /// vmcnt. The KV loop's tile is then copied without a VGPR round trip,
  /// double-buffered where two programs still fit beside each other in
  /// LDS (canPrefetch). gfx942's LDS DMA moves 4 bytes a lane: four times
  /// the instructions of its dwordx4 loads.
  bool ldsDmaLoads16 = false;
  /// How the mxfp4 decode turns e2m1 codes into bf16 where the block scale
  /// keeps every product a normal bf16 (e8m0 codes 2 .. 252).
  Mxfp4Decode mxfp4Decode = Mxfp4Decode::Software;
};

/// How the compiler chooses to use the chip: settings measured per chip
/// (docs/PerformanceLog.md), which a facts-only change must not move.
struct ChipTuning {
  /// Fully unroll the static inner loops of a tile program (K steps of a
  /// dot, rounds of a tile copy). On CDNA it gives a straight-line KV loop
  /// at no spill cost; on sm_90 ptxas doubles the registers (128 -> 252)
  /// and spills with bf16 KV, so it stays off there.
  bool unrollTileLoops = false;
  /// A dot whose operands both run along K in shared memory (S = Q K^T)
  /// splits K across warp pairs that swap partial sums: each warp reads
  /// about half of A per tile. For chips whose KV loop is bound by
  /// shared-memory traffic (sm_90 with 8 warps, measured:
  /// docs/PerformanceLog.md).
  bool splitKAcrossWarps = false;
  /// The online softmax's row maxima with maxnum (a NaN score drops out of
  /// the maximum) instead of the NaN-propagating maximum. Outputs are the
  /// same: a NaN score still makes its probability, the row sum and the
  /// output NaN. On CDNA (IEEE mode off, TargetCDNA's kernelHints) maxnum
  /// is one v_max_f32 that folds a DPP permute; the NaN-propagating
  /// maximum is a max plus NaN checks (gfx942) or v_maximum3_f32, which
  /// takes no DPP (gfx950). sm_90 has both in one instruction.
  bool rowMaxIgnoresNaN = false;
  /// Double-buffer the KV loop's tile also where a program fits the SM
  /// alone with one buffer (the second then costs no occupancy). sm_90a:
  /// bf16 MTP 2 (32 rows, 117 KiB with one buffer) ran 1.20x the time of
  /// one query token with it (docs/PerformanceLog.md). Where two programs
  /// fit with one buffer, they stay: two single-buffered bf16 programs
  /// beat one double-buffered (602 vs 679 us at 256 x 8192).
  bool prefetchWhenAlone = false;
  /// The online softmax keeps its running row maximum while no score of
  /// the tile exceeds it by more than 2^slack (log2 units; 0: an exact
  /// maximum every tile). Probabilities then reach 2^slack, and the one
  /// barrier the row maximum needs across warps also votes whether any
  /// thread saw such a score (TargetInfo::barrierAny): only then does the
  /// tile reduce its maxima over lanes and warps and rescale the running
  /// sum and the accumulators. The finalize divides by the sum formed with
  /// the same reference, so outputs and LSE do not change. The P operand
  /// types take 2^8: f16 (65504), bf16, e4m3fn (448). Set where the target
  /// implements barrierAny (sm_90: bar.red.or).
  int64_t rescaleSlackLog2 = 0;
  /// sm_90a, fp8 KV with 16-bit Q and P: Sᵀ = K Qᵀ takes the KV tile as
  /// wgmma's register A (converted from the bytes loaded a tile ahead,
  /// Lowering::registerAGrouping) instead of reading the converted tile
  /// from shared memory; only V's columns are stored, and no barrier
  /// separates the conversion from Sᵀ. Set on sm_90a: on the H200 4-14 %
  /// faster than the shared-memory A on the task's shapes from 32 x 8192
  /// up, within 0.9 µs below (docs/Design.md, "sm_90a: wgmma", register
  /// A). mla-lower-to-gpu's `wgmma-smem-a` option (mla-compile
  /// --wgmma-smem-a) turns it off.
  bool wgmmaRegisterA = false;
  /// A paged KV tile loaded a tile ahead into registers (sm_90a) that lies
  /// within one page: its page entry is loaded one tile earlier still and
  /// carried by the KV loop, so the tile's byte loads do not wait for it
  /// (RegPrefetch::pageAhead). Set on no chip: on the H100 page 64 /
  /// contiguous at 64 x 8192 took 1.023x instead of 1.051x, on the H200
  /// 1.091x instead of 1.060x (docs/Design.md, Paged KV). mla-lower-to-gpu's
  /// `page-entries-ahead` option (mla-compile --page-entries-ahead) turns it
  /// on.
  bool pageEntriesAhead = false;
  /// mla.mask tests once per tile whether the whole tile lies inside its
  /// bound (and, causal, left of its first row's edge) and then takes the
  /// tile as it is; only the other tiles (a sequence's last) compare and
  /// select per register. Set on sm_90a: its fp8 masked stage 1 issued 4 %
  /// more instructions than the mask-free one, 2.2 % after (Nsight
  /// Compute, 256 x 8192, docs/PerformanceLog.md 2026-12-05). Off on
  /// CDNA, where the mask costs 0.3 wave-instructions a KV token and the
  /// branch took gfx950's fp8 masked stage 1 from 150 to 180 VGPRs, and
  /// on sm_90 (not measured there).
  bool maskWholeTiles = false;
  /// A tile copied ahead of a KV loop in straight-line code (Q) issues
  /// its global loads first, then sends the loop's first KV tile, then
  /// waits at the barrier before its shared-memory stores; without it the
  /// first KV tile goes out before the copy and the barrier before the
  /// loads. Set on sm_90a: the short calls (one program per SM, a few
  /// tiles each) waited there for Q's loads queued behind the tile's
  /// 36 KiB (Nsight Compute, 4 x 8192: 12 % of stage 1's warp samples on
  /// Q's first use; docs/PerformanceLog.md, 2026-12-05, twenty-first
  /// session). CDNA and sm_90 keep the old order (not measured there).
  /// mla-lower-to-gpu's `kv-tile-first` option (mla-compile
  /// --kv-tile-first) turns it off.
  bool aheadLoadsFirst = false;
  /// sm_90a, fp8 KV with 16-bit Q and P where Sᵀ takes K as register A:
  /// Oᵀ = Vᵀ Pᵀ takes V as wgmma's register A too. Sᵀ's conversion
  /// stores V's raw bytes (16 a chunk, byte-permuted so that a 16-bit
  /// pair holds dims d and d + 8) into an fp8 tile in the 64-byte swizzle,
  /// and Oᵀ reads each fragment with ldmatrix.trans, one byte permute and
  /// two conversions a register (Lowering::dotRegisterV): V passes the
  /// banks as 512 written and 512 read bytes a token instead of a 16-bit
  /// copy written and read by the tensor cores (1 024 each). Set on no
  /// chip: on the H100 it is about 2 % slower on the task's geomean; on
  /// the H200 level on the geomean, 2 % faster masked and 5 % mask-free
  /// at 256 x 8192, 0.6 us slower on the smallest call; its masked stage
  /// 1 takes 255 registers (docs/Design.md, "V as wgmma's register A").
  /// mla-lower-to-gpu's `wgmma-register-v` option (mla-compile
  /// --wgmma-register-v) turns it on.
  bool wgmmaRegisterV = false;
  /// The KV tile's reads (fp8 KV loaded into registers a tile ahead,
  /// tensor-map copies; not a paged tile, not mxfp4's) carry an L2
  /// evict-first cache hint where their program's KV range spans at most
  /// this many tiles, an evict-normal one otherwise (0: no hint; one
  /// policy register a program, chosen at run time): the streamed lines
  /// then become the L2's first victims instead of the lines already
  /// there, which after the benches' zeroing flush are dirty and cost a
  /// write-back each. On the H100 the hint on every program made the calls
  /// of 4 to 16 tiles a program 1-10 % faster and those of 32 and 128
  /// tiles 2-6 % slower, fp8 and bf16 alike (docs/PerformanceLog.md,
  /// 2026-12-06), hence the bound. Set on sm_90a. mla-lower-to-gpu's
  /// `kv-evict-first-tiles` option (mla-compile --kv-evict-first-tiles)
  /// sets another bound.
  int64_t kvEvictFirstTiles = 0;
  /// A KV tile that wgmma reads as e4m3 (fp8 Q and P) and tensor-map
  /// copies send: two buffers, tile t + 1 sent when tile t's wait is over,
  /// where two programs still fit an SM because Oᵀ's Vᵀ is transposed into
  /// V's own atoms once Sᵀ has read them (Lowering::vtInPlace) instead of
  /// into a region of its own: two tiles in flight a program instead of
  /// one, sent after Sᵀ. Set on no chip: correct, and on the H100 (DRAM
  /// already at 90 % of its peak) 1-2 % slower at 64 and 256 x 8192
  /// (docs/PerformanceLog.md, 2026-12-07). mla-lower-to-gpu's
  /// `e4m3-double-buffer` option (mla-compile --e4m3-double-buffer) turns
  /// it on.
  bool e4m3DoubleBuffer = false;
};

/// Switches that turn one of a chip's tuning choices the other way, for
/// comparisons in one process (mla-lower-to-gpu's options of the same
/// names, mla-compile's flags): the chip keeps its defaults otherwise.
struct TuningOverrides {
  bool wgmmaSmemA = false;       ///< ChipTuning::wgmmaRegisterA off
  bool wgmmaRegisterV = false;   ///< ChipTuning::wgmmaRegisterV on
  bool pageEntriesAhead = false; ///< ChipTuning::pageEntriesAhead on
  bool kvTileFirst = false;      ///< ChipTuning::aheadLoadsFirst off
  int64_t kvEvictFirstTiles = -1; ///< ChipTuning's bound (-1: the chip's)
  bool e4m3DoubleBuffer = false;  ///< ChipTuning::e4m3DoubleBuffer on
  void applyTo(ChipTuning &t) const {
    if (wgmmaSmemA)
      t.wgmmaRegisterA = false;
    if (wgmmaRegisterV)
      t.wgmmaRegisterV = true; // (only where K is in registers too)
    if (pageEntriesAhead)
      t.pageEntriesAhead = true;
    if (kvTileFirst)
      t.aheadLoadsFirst = false;
    if (kvEvictFirstTiles >= 0)
      t.kvEvictFirstTiles = kvEvictFirstTiles;
    if (e4m3DoubleBuffer)
      t.e4m3DoubleBuffer = true;
  }
};

struct ChipInfo {
  llvm::StringRef name; ///< "gfx950", "gfx942", "sm_90", "host"
  Vendor vendor = Vendor::Host;
  llvm::StringRef description; ///< the product, for reports
  ChipFacts facts;
  ChipTuning tuning;

  /// The descriptors of `facts.matrixInstrNames`.
  std::vector<const MatrixInstr *> matrixInstrs() const;
};

/// All chips, in a stable order.
llvm::ArrayRef<ChipInfo> knownChips();
/// The chip called `name`, or null.
const ChipInfo *lookupChip(llvm::StringRef name);
/// "gfx950, gfx942, sm_90, host": for diagnostics.
std::string knownChipNames();

} // namespace mlir::mla

#endif // MLA_TARGET_H
