//===- DecodeRunner.h - host launcher for the decode kernels ----*- C++ -*-===//
//
// Runs the decode kernels on the host through the C launcher (lib/Launcher:
// split choice, mask-free dispatch, workspaces, stage 2 only with several
// splits; docs/Design.md states the rules) with a backend that calls the
// host-compiled kernels (HostBackend.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_DECODERUNNER_H
#define MLA_DECODERUNNER_H

#include "mla/HostRunner.h"
#include "mla/Reference.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir::mla {

/// What a launcher needs to know about the kernels of one spec, read from
/// the kernels' attributes.
struct DecodeKernels {
  std::string spec;           ///< the spec's name (the kernels' prefix)
  std::string stage1Masked;   ///< empty when the facts made it unnecessary
  std::string stage1MaskFree; ///< empty when none was emitted
  std::string stage2;         ///< empty when splits = 1 was fixed
  int64_t blockN = 0, blockM = 0;
  int64_t heads = 0, qkDim = 0, vDim = 0;
  int64_t qSeqLen = 1;                 ///< query tokens per sequence
  std::string kvLayout = "contiguous"; ///< the spec's kv_layout
  int64_t pageSize = 1;                ///< rows per page (block_table)
  Type kvType; ///< f4E2M1FN for mxfp4 (whose kv rows are packed bytes)
  bool hasKVScale = false;
  bool mxfp4 = false; ///< packed e2m1 rows with e8m0 block scales
  std::vector<int64_t> splitCandidates;
  /// The mask-free kernel was proven for every allowed split count
  /// (no masked kernel) rather than dispatched at run time.
  bool maskFreeProven = false;
  /// The kernels' manifest entries (describeKernel), for the launcher.
  llvm::json::Array kernelManifest;
};

/// Finds the kernels expanded from spec `spec` in `module`.
llvm::Expected<DecodeKernels> findDecodeKernels(ModuleOp module,
                                                llvm::StringRef spec);

/// Host inputs of one decode: q as bf16 bits (total_q x heads x qkDim), KV
/// as raw element bytes (fp8 codes or bf16 bits, kvRows x qkDim). Contiguous
/// KV: sequence b is rows kvIndptr[b] .. kvIndptr[b+1]. token_indices:
/// kvIndptr indexes kvIndices, a list of rows. block_table: cacheSeqlens
/// gives the lengths (kvIndptr is unused) and blockTable (batch x
/// blockTableCols) the pages.
struct DecodeInputs {
  int64_t batch = 0;
  std::vector<int32_t> qoIndptr, kvIndptr;
  std::vector<int32_t> kvIndices, blockTable, cacheSeqlens;
  int64_t blockTableCols = 0;
  int64_t kvRows = -1; ///< rows of kv; -1: kvIndptr[batch] (contiguous)
  std::vector<uint16_t> q;
  std::vector<uint8_t> kv;
  float kvScale = 1.0f;
  /// mxfp4: kv rows are qkDim / 2 bytes; kvScales holds kvRows rows of
  /// kvScalesStride e8m0 bytes (the first qkDim / 32 of each used).
  std::vector<uint8_t> kvScales;
  int64_t kvScalesStride = 0;
};

struct DecodeRun {
  std::vector<uint16_t> out; ///< bf16 bits, total_q x heads x vDim
  int64_t splits = 0;
  std::string stage1; ///< the stage-1 kernel that ran
  bool ranStage2 = false;
};

/// Runs stage 1 (+ stage 2) on the host. `splits` = 0 chooses with the split
/// cost model for `computeUnits`; otherwise that count is used. Outputs and
/// workspaces are poisoned with NaN first, so anything left unwritten shows.
llvm::Expected<DecodeRun> runDecode(HostModule &host, const DecodeKernels &k,
                                    const DecodeInputs &in, int64_t splits,
                                    int64_t computeUnits);

/// Fresh random inputs for sequences of `lengths`: q ~ N(0, 1) rounded to
/// bf16; KV ~ N(0, 1), quantised per tensor to the kernels' fp8 format
/// (scale = amax / fp8 max) or rounded to bf16. `problem`, `q` and `kv`
/// describe the same inputs for the float64 reference (dequantised), with
/// the sequences' KV rows back to back. Paged kernels get those rows
/// scattered over a cache in shuffled pages (token_indices: shuffled
/// rows), every other row and table entry poisoned (NaN rows, entries
/// outside the cache), so that a row read from the wrong place shows.
struct RandomDecode {
  DecodeInputs inputs;
  mla_ref::DecodeProblem problem;
  std::vector<double> q, kv;
};
llvm::Expected<RandomDecode> makeRandomDecode(const DecodeKernels &k,
                                              llvm::ArrayRef<int64_t> lengths,
                                              double softmaxScale,
                                              uint64_t seed);

/// Multiplies the random Q by 2^log2Factor, in both its bf16 inputs and the
/// reference's copy (exact: a power of two, refused where a bf16 entry
/// would overflow or become subnormal). A run that also divides the spec's
/// softmax scale by the factor sees the scores of the plain case: how a
/// kernel copes with Q's magnitude alone (fp8 Q's per-program scale).
llvm::Error scaleQueries(RandomDecode &r, int log2Factor);

/// Relative Frobenius error of a run's output against the float64
/// reference (NaN if the output holds a NaN).
double errorAgainstReference(const RandomDecode &r, const DecodeRun &run);

} // namespace mlir::mla

#endif // MLA_DECODERUNNER_H
