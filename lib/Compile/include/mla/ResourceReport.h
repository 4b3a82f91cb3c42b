//===- mla/ResourceReport.h - what the backends say about a kernel -*- C++
//-*-===//
//
// The compile report's inputs, parsed: `ptxas -v` for sm_90, the AMDHSA
// metadata (amdhsa.kernels) and the assembly for gfx950 / gfx942; and the
// occupancy each chip's resources allow. compileForChip writes these into
// the manifest's "resources" (docs/Manifest.md) and prints them.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RESOURCEREPORT_H
#define MLA_RESOURCEREPORT_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace mlir::mla {

/// One entry function's figures from `ptxas -v`; -1 where ptxas said none.
struct PtxasResources {
  int64_t registers = -1;
  int64_t spillStoreBytes = -1;
  int64_t stackBytes = -1;
};

/// The figures of every entry function in a `ptxas -v` report, by name.
std::map<std::string, PtxasResources> parsePtxasReport(llvm::StringRef report);

/// One kernel's record of the AMDHSA metadata; -1 where a key is absent.
struct AmdhsaResources {
  int64_t vgprs = -1, agprs = -1, sgprs = -1;
  int64_t vgprSpills = -1, sgprSpills = -1;
  int64_t scratchBytes = -1;   ///< .private_segment_fixed_size
  int64_t ldsStaticBytes = -1; ///< .group_segment_fixed_size
};

/// The amdhsa.kernels records of AMDGPU assembly (the YAML block the code
/// object's note carries), by kernel name.
std::map<std::string, AmdhsaResources> parseAmdhsaMetadata(llvm::StringRef isa);

/// Programs resident per SM on Hopper (64K registers, 228 KiB of shared
/// memory of which each block also reserves 1 KiB, 2048 threads, 32
/// blocks): the split rule's concurrency. `registers` < 1 counts as 255.
int64_t sm90ProgramsPerSm(int64_t registers, int64_t threads,
                          int64_t sharedBytes);

/// Occupancy on CDNA3 / CDNA4: 512 registers per lane per SIMD, VGPRs and
/// AGPRs sharing them, in granules of 8, at most 8 waves per SIMD; a
/// workgroup's waves spread over the 4 SIMDs of a CU; LDS limits the
/// workgroups per CU.
struct CdnaOccupancy {
  int64_t wavesPerSimd;
  int64_t programsPerCu;
};
CdnaOccupancy cdnaOccupancy(int64_t vgprs, int64_t agprs, int64_t threads,
                            int64_t waveSize, int64_t sharedBytes,
                            int64_t ldsBytesPerCu);

/// The compile report's figure of merit for an AMDGPU stage-1 kernel:
/// {instructions, MFMAs} of the innermost loop (a backward branch's range)
/// of `kernel` in the assembly `isa` that holds every MFMA of the kernel;
/// {0, 0} when there is none.
std::pair<int64_t, int64_t> kvLoopInstructions(llvm::StringRef isa,
                                               llvm::StringRef kernel);

} // namespace mlir::mla

#endif // MLA_RESOURCEREPORT_H
