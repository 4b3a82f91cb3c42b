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

double mlir::mla::estimateSplitCost(const SplitProblem &p, int64_t splits,
                                    const SplitCostParams &params) {
  assert(splits >= 1 && p.blockN > 0 && p.computeUnits > 0);
  // Each split walks roundup(ceildiv(L, S), block_n) tokens (mla.split_range),
  // priced in 64-token tiles (the unit the parameters were fitted in): a
  // 128-token tile is twice the work, so the fixed costs weigh half as much
  // against it (the H200 sweep of the 128-token fp8 MTP 2 spec: 4 x 1024
  // took 1 split, 47.6 us, where 8 run in 16.8). A smaller tile still
  // counts one: its barriers and row reductions are a 64-token tile's (the
  // 32-token mxfp4 spec priced at half a unit took 32 splits at 4 x 8192,
  // 52.0 us, where 64 run in 42.4).
  double tiles =
      static_cast<double>(ceilDiv(ceilDiv(p.kvLen, splits), p.blockN)) *
      std::max(1.0, static_cast<double>(p.blockN) / 64.0);
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
