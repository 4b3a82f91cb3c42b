//===- SplitCostModel.cpp - choosing the KV split count -------------------===//
#include "mla/SplitCostModel.h"

#include <algorithm>
#include <cassert>

using namespace mlir::mla;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<int64_t> mlir::mla::defaultSplitCandidates() {
  return {1, 2, 4, 8, 16, 32, 64};
}

std::vector<int64_t> mlir::mla::splitCandidatesForDivisor(int64_t divisor,
                                                          int64_t blockN) {
  std::vector<int64_t> out;
  for (int64_t s : defaultSplitCandidates())
    if (divisor % (s * blockN) == 0)
      out.push_back(s);
  return out;
}

double mlir::mla::tileUnits(const SplitProblem &p) {
  // A tile is priced like a roofline: by its bytes or by its matrix work,
  // whichever weighs more against the unit the parameters were fitted in (a
  // 64-token fp8 tile against 16 query rows, two programs per SM). Against
  // a heavier tile the fixed costs weigh less, so the model splits more.
  // Measured on the H200 (bench/sweep_splits.py, docs/PerformanceLog.md):
  // - bytes: sm_90a's bf16 spec (64-token tiles of 1152-byte rows, one
  //   program per SM) priced as 1 took 1 split at 64 x 1024 (42.2 us)
  //   where 2 run in 39.2, and 8 at 4 x 1024 (14.5) where 16 run in 14.1;
  // - tokens: sm_90a's fp8 MTP 2 spec (128-token tiles) priced as 1 took 1
  //   split at 4 x 1024 (47.6 us) where 8 run in 16.8;
  // - rows: the same spec's 32 query rows (two tokens of 16 heads) double
  //   each tile's dots; priced by its bytes alone it took 1 split at 64 x
  //   1024 (52.1 us) where 2 run in 42.0.
  // A smaller tile still counts one: its barriers and row reductions are a
  // 64-token tile's (the 32-token mxfp4 spec priced at half a unit took 32
  // splits at 4 x 8192, 52.0 us, where 64 run in 42.4).
  constexpr double unitBytes = 64.0 * 576.0, unitWork = 64.0 * 16.0;
  double bytes = static_cast<double>(p.blockN * p.kvRowBytes) / unitBytes;
  double work = static_cast<double>(p.blockN * p.blockM) / unitWork;
  return std::max({1.0, bytes, work});
}

double mlir::mla::estimateSplitCost(const SplitProblem &p, int64_t splits,
                                    const SplitCostParams &params) {
  assert(splits >= 1 && p.blockN > 0 && p.computeUnits > 0 &&
         p.kvRowBytes > 0 && p.blockM > 0);
  // Each split walks roundup(ceildiv(L, S), block_n) tokens
  // (mla.split_range).
  double tiles =
      static_cast<double>(ceilDiv(ceilDiv(p.kvLen, splits), p.blockN)) *
      tileUnits(p);
  // Programs run in rounds of `computeUnits` at a time; a sequence's row
  // groups are programs of their own (and partials stage 2 combines).
  int64_t programs = p.batch * p.groups * splits;
  int64_t rounds = ceilDiv(programs, p.computeUnits);
  double stage1 =
      static_cast<double>(rounds) * (tiles + params.programOverhead);
  if (splits == 1)
    return stage1;
  double stage2 = params.combineLaunch +
                  params.combinePerSplit * static_cast<double>(splits) +
                  params.combinePerPartial * static_cast<double>(programs) /
                      static_cast<double>(p.computeUnits);
  return stage1 + stage2;
}

int64_t mlir::mla::chooseSplits(const SplitProblem &p,
                                const SplitCostParams &params) {
  std::vector<int64_t> defaults;
  llvm::ArrayRef<int64_t> cands = p.candidates;
  if (cands.empty()) {
    defaults = defaultSplitCandidates();
    cands = defaults;
  }
  int64_t best = cands.front();
  double bestCost = estimateSplitCost(p, best, params);
  for (int64_t s : cands.drop_front()) {
    double c = estimateSplitCost(p, s, params);
    if (c < bestCost || (c == bestCost && s < best)) {
      best = s;
      bestCost = c;
    }
  }
  return best;
}
