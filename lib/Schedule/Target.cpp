//===- Target.cpp - per-chip facts ----------------------------------------===//
#include "mla/Target.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::mla;

// Compute units and LDS: CDNA3 (MI300X) and CDNA4 (MI355X) product sheets;
// SMs and shared memory: H200 (GH100) as lent here.
static const ChipInfo kChips[] = {
    {"gfx950", "AMD Instinct MI355X (CDNA4)", 256, 64, 160 * 1024,
     Fp8Flavor::E4M3FN},
    {"gfx942", "AMD Instinct MI300X (CDNA3)", 304, 64, 64 * 1024,
     Fp8Flavor::E4M3FNUZ},
    {"sm_90", "NVIDIA H200 (Hopper)", 132, 32, 227 * 1024, Fp8Flavor::E4M3FN},
    {"host", "host CPU (reference execution)", 1, 1, 1 << 30,
     Fp8Flavor::None},
};

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
