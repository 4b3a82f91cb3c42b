//===- Target.cpp - per-chip facts and tuning -----------------------------===//
#include "mla/Target.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::mla;

// Compute units and LDS: CDNA3 (MI300X) and CDNA4 (MI355X) product sheets;
// SMs and shared memory: H200 (GH100) as lent here.
static const llvm::StringRef kGfx950Instrs[] = {
    "v_mfma_f32_16x16x16_bf16",    "v_mfma_f32_16x16x32_bf16",
    "v_mfma_f32_16x16x16_f16",     "v_mfma_f32_16x16x32_f16",
    "v_mfma_f32_16x16x32_fp8_fp8", "v_mfma_f32_16x16x128_f8f6f4"};
static const llvm::StringRef kGfx942Instrs[] = {
    "v_mfma_f32_16x16x16_bf16", "v_mfma_f32_16x16x16_f16",
    "v_mfma_f32_16x16x32_fp8_fp8 (FNUZ)"};
static const llvm::StringRef kSm90Instrs[] = {
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"};

// sm_90a: the same SMs with Hopper's architecture-specific instructions
// (PTX target sm_90a): wgmma reads B from shared memory, A from shared
// memory or (16-bit types) registers (MatrixInstr::aRegisters). The
// mma.sync forms stay listed for the instrFor of dots wgmma does not take.
static const llvm::StringRef kSm90aInstrs[] = {
    "wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16",
    "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16",
    "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3"};

static const ChipInfo kChips[] = {
    {.name = "gfx950",
     .vendor = Vendor::AMD,
     .description = "AMD Instinct MI355X (CDNA4)",
     .facts = {.computeUnits = 256,
               .waveSize = 64,
               .sharedMemBytes = 160 * 1024,
               .fp8 = Fp8Flavor::E4M3FN,
               .fp8Decode = Fp8Decode::PackedToBf16,
               .fp8PairEncode = true,
               .matrixInstrNames = kGfx950Instrs,
               .boundsCheckedLoads = true,
               .transposedLdsReads = true,
               .ldsDmaLoads16 = true,
               .mxfp4Decode = Mxfp4Decode::ScaledPairConvert},
     .tuning = {.unrollTileLoops = true, .rowMaxIgnoresNaN = true}},
    {.name = "gfx942",
     .vendor = Vendor::AMD,
     .description = "AMD Instinct MI300X (CDNA3)",
     .facts = {.computeUnits = 304,
               .waveSize = 64,
               .sharedMemBytes = 64 * 1024,
               .fp8 = Fp8Flavor::E4M3FNUZ,
               .fp8Decode = Fp8Decode::PackedToF32,
               .fp8PairEncode = true,
               .matrixInstrNames = kGfx942Instrs,
               .boundsCheckedLoads = true,
               .mxfp4Decode = Mxfp4Decode::ByteTables},
     .tuning = {.unrollTileLoops = true, .rowMaxIgnoresNaN = true}},
    // sm_90 has no fp8 -> bf16 conversion: cvt.rn.f16x2.e4m3x2, widened,
    // is exact and, once shared-memory bank conflicts were gone, measured
    // 1.6x faster than the integer decode at 256 x 8192 on the H200.
    {.name = "sm_90",
     .vendor = Vendor::NVIDIA,
     .description = "NVIDIA H200 (Hopper)",
     .facts = {.computeUnits = 132,
               .waveSize = 32,
               .sharedMemBytes = 227 * 1024,
               .fp8 = Fp8Flavor::E4M3FN,
               .fp8Decode = Fp8Decode::PackedToF16,
               .fp8PairEncode = true,
               .matrixInstrNames = kSm90Instrs,
               .asyncTileCopy = true,
               .dependentLaunch = true,
               .clusterPrograms = 16,
               .mxfp4Decode = Mxfp4Decode::ByteTables},
     .tuning = {.splitKAcrossWarps = true, .rescaleSlackLog2 = 8}},
    // H200 with sm_90a's wgmma (issue #19): every dot on warpgroup MMAs,
    // B from shared memory, A from shared memory too except an fp8 KV
    // tile's Sᵀ, which takes it from registers (docs/Design.md, "sm_90a:
    // wgmma").
    {.name = "sm_90a",
     .vendor = Vendor::NVIDIA,
     .description = "NVIDIA H200 (Hopper, sm_90a: wgmma)",
     .facts = {.computeUnits = 132,
               .waveSize = 32,
               .sharedMemBytes = 227 * 1024,
               .fp8 = Fp8Flavor::E4M3FN,
               .fp8Decode = Fp8Decode::PackedToF16,
               .fp8PairEncode = true,
               .matrixInstrNames = kSm90aInstrs,
               .asyncTileCopy = true,
               .bulkTensorCopies = true,
               .dependentLaunch = true,
               .clusterPrograms = 16,
               .mxfp4Decode = Mxfp4Decode::ByteTables},
     .tuning = {.prefetchWhenAlone = true,
                .rescaleSlackLog2 = 8,
                .wgmmaRegisterA = true,
                .maskWholeTiles = true,
                .aheadLoadsFirst = true,
                .kvEvictFirstTiles = 16}},
    {.name = "host",
     .vendor = Vendor::Host,
     .description = "host CPU (reference execution)",
     .facts = {.computeUnits = 1,
               .waveSize = 1,
               .sharedMemBytes = 1 << 30,
               .matrixInstrNames = {}},
     .tuning = {}},
};

std::vector<const MatrixInstr *> ChipInfo::matrixInstrs() const {
  std::vector<const MatrixInstr *> out;
  for (llvm::StringRef name : facts.matrixInstrNames)
    out.push_back(lookupMatrixInstr(name));
  return out;
}

llvm::ArrayRef<ChipInfo> mlir::mla::knownChips() { return kChips; }

const ChipInfo *mlir::mla::lookupChip(llvm::StringRef name) {
  for (const ChipInfo &c : kChips)
    if (c.name == name)
      return &c;
  return nullptr;
}

std::string mlir::mla::knownChipNames() {
  std::string s;
  for (const ChipInfo &c : kChips) {
    if (!s.empty())
      s += ", ";
    s += c.name.str();
  }
  return s;
}
