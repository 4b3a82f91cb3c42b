//===- SplitCostModel.h - choosing the KV split count -----------*- C++ -*-===//
//
// Stage 1 gives every (sequence, split) pair one program. More splits fill
// more compute units but shorten each program's KV walk (fixed costs weigh
// more) and make stage 2 read more partial outputs. The model below prices
// those three effects in units of "one 64-token fp8 KV tile walked by one
// program of 16 query rows" (a tile of other bytes or rows counts as the
// larger of its byte and matrix-work ratios to that, at least 1); see
// docs/Design.md, "Choosing the split count".
//
//===----------------------------------------------------------------------===//
#ifndef MLA_SPLITCOSTMODEL_H
#define MLA_SPLITCOSTMODEL_H

#include "llvm/ADT/ArrayRef.h"
#include <cstdint>
#include <vector>

namespace mlir::mla {

struct SplitCostParams {
  /// Fixed work of a program (Q load, finalize, partial store), in tiles.
  double programOverhead = 2.0;
  /// Launching stage 2 at all, in tiles.
  double combineLaunch = 6.0;
  /// One partial output (written by stage 1, read by stage 2), in tiles,
  /// spread over all CUs. Refitted to the H200 sweep of 2026-11-30 (fourth
  /// session, docs/PerformanceLog.md), after stage 1 got faster: with 8 and 1
  /// bs 32 / kv 1024 took 8 splits (27.0 us) where 4 run in 24.3 us. These
  /// values pick the fastest count on all 8 task shapes; only
  /// combinePerPartial = 4 does with this form of the model (3.5 keeps
  /// bs 32 / kv 1024 at 8, 5 moves bs 4 / kv 1024 to 8).
  double combinePerPartial = 4.0;
  /// Each stage-2 thread walks all splits of its sequence (8 loads in
  /// flight): per split, in tiles. Fitted to the H200 sweep of every split
  /// count (docs/PerformanceLog.md): without it bs 4 / kv 8192 took 64 splits
  /// (37.3 us) where 32 run in 33.8 us.
  double combinePerSplit = 0.05;
};

struct SplitProblem {
  int64_t batch = 1;
  int64_t kvLen = 0; ///< the longest sequence
  int64_t blockN = 64;
  /// Programs that run at once: compute units x programs resident per unit.
  int64_t computeUnits = 256;
  /// Split counts to choose from; empty means defaultSplitCandidates().
  llvm::ArrayRef<int64_t> candidates = {};
  /// Stage-1 programs per (sequence, split): q_seq_len x heads / block_m
  /// row groups, each walking the split's tiles.
  int64_t groups = 1;
  /// Bytes of one KV row (all qk_dim values, with their block scales):
  /// 576 for fp8, the unit the parameters were fitted in; 1152 for bf16.
  int64_t kvRowBytes = 576;
  /// Query rows one program multiplies with each tile (block_m).
  int64_t blockM = 16;
};

/// What one tile of `p` costs in the model's unit (a 64-token fp8 tile
/// against 16 query rows): the larger of its bytes and its matrix work
/// (block_n x block_m) against the unit's, at least 1.
double tileUnits(const SplitProblem &p);

/// The most splits stage 1 combines itself, in one thread-block cluster
/// (docs/Design.md, "One launch for small batches"): 16, the largest
/// cluster sm_90 schedules (non-portable size). A chip's own limit is in
/// its ChipFacts::clusterPrograms; the kernel descriptor carries the
/// smaller of the two.
constexpr int64_t kMaxClusterPrograms = 16;

/// 1, 2, 4, ..., 64.
std::vector<int64_t> defaultSplitCandidates();

/// The default candidates S for which every length that is a multiple of
/// `divisor` is also a multiple of S * blockN (divisor 0: every length is 0,
/// so all). Empty when none is.
std::vector<int64_t> splitCandidatesForDivisor(int64_t divisor, int64_t blockN);

/// Modelled time of one decode with `splits` splits, in tile units.
double estimateSplitCost(const SplitProblem &p, int64_t splits,
                         const SplitCostParams &params = {});

/// The candidate with the least modelled time (ties: fewer splits).
int64_t chooseSplits(const SplitProblem &p, const SplitCostParams &params = {});

} // namespace mlir::mla

#endif // MLA_SPLITCOSTMODEL_H
