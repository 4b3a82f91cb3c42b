//===- SplitCostModelTest.cpp - the split-count cost model ----------------===//
#include "mla/SplitCostModel.h"

#include "gtest/gtest.h"

using namespace mlir::mla;

namespace {

int64_t choose(int64_t batch, int64_t kv, int64_t cus, int64_t blockN = 64) {
  return chooseSplits({batch, kv, blockN, cus, {}});
}

TEST(SplitCostModel, FullMachineNeedsNoSplit) {
  // As many sequences as compute units: splitting only adds stage 2.
  EXPECT_EQ(choose(256, 8192, 256), 1);
  EXPECT_EQ(choose(304, 8192, 304), 1);
  EXPECT_EQ(choose(256, 8192, 132), 1);
}

TEST(SplitCostModel, FewLongSequencesSplitWide) {
  // 4 sequences cannot fill 256 CUs: split wide, though not to the last
  // candidate (64 splits of 2 tiles pay more in stage 2 than they save).
  EXPECT_EQ(choose(4, 8192, 256), 32);
  EXPECT_GE(choose(4, 8192, 132), 16);
}

TEST(SplitCostModel, ShortSequencesDoNotSplit) {
  // One tile of work: a split saves nothing and costs a stage-2 launch.
  EXPECT_EQ(choose(4, 1, 256), 1);
  EXPECT_EQ(choose(4, 64, 256), 1);
  EXPECT_EQ(choose(1, 0, 256), 1);
}

TEST(SplitCostModel, MoreComputeUnitsNeverMeansFewerSplits) {
  for (int64_t batch : {1, 4, 32, 64, 256})
    for (int64_t kv : {1024, 8192})
      EXPECT_LE(choose(batch, kv, 132), choose(batch, kv, 304))
          << "batch " << batch << " kv " << kv;
}

TEST(SplitCostModel, LongerSequencesNeverMeanFewerSplits) {
  for (int64_t batch : {1, 4, 32, 64})
    EXPECT_LE(choose(batch, 1024, 256), choose(batch, 8192, 256))
        << "batch " << batch;
}

TEST(SplitCostModel, CostFormula) {
  SplitProblem p{4, 8192, 64, 256, {}};
  // One split: 128 tiles + 2 overhead, one round, no stage 2.
  EXPECT_DOUBLE_EQ(estimateSplitCost(p, 1), 130.0);
  // 64 splits: 2 tiles + 2, one round; stage 2: 6 + 0.05 x 64 splits +
  // 4 x 256 / 256 partials.
  EXPECT_DOUBLE_EQ(estimateSplitCost(p, 64), 4.0 + 6.0 + 3.2 + 4.0);
  // Two rounds once programs exceed the CUs.
  SplitProblem q{256, 8192, 64, 256, {}};
  EXPECT_DOUBLE_EQ(estimateSplitCost(q, 2), 2 * (64.0 + 2.0) + 6.0 + 0.1 + 8.0);
}

TEST(SplitCostModel, MeasuredH200Choices) {
  // The fastest split count of every task shape in the H200 sweep of
  // 2026-11-30 (bench/sweep_splits.py, docs/PerformanceLog.md), with 264
  // programs at once (132 SMs x 2).
  const int64_t want[4][2] = {{16, 32}, {4, 8}, {4, 4}, {1, 1}};
  const int64_t batches[4] = {4, 32, 64, 256};
  for (int b = 0; b < 4; ++b)
    for (int k = 0; k < 2; ++k)
      EXPECT_EQ(choose(batches[b], k ? 8192 : 1024, 264), want[b][k])
          << "bs " << batches[b] << " kv " << (k ? 8192 : 1024);
}

/// The split counts of the 8 task shapes (bs 4, 32, 64, 256 x kv 1024,
/// 8192) for a spec's tile, with `cus` programs at once.
std::vector<int64_t> taskChoices(int64_t cus, int64_t blockN,
                                 int64_t kvRowBytes, int64_t blockM) {
  std::vector<int64_t> out;
  for (int64_t batch : {4, 32, 64, 256})
    for (int64_t kv : {1024, 8192}) {
      SplitProblem p{batch, kv, blockN, cus, {}};
      p.kvRowBytes = kvRowBytes;
      p.blockM = blockM;
      out.push_back(chooseSplits(p));
    }
  return out;
}

TEST(SplitCostModel, TilesCountByTokens) {
  // 128-token fp8 tiles against 16 rows (fp8 Q / P spec): two units.
  SplitProblem p{4, 8192, 128, 256, {}};
  EXPECT_DOUBLE_EQ(tileUnits(p), 2.0);
  EXPECT_DOUBLE_EQ(estimateSplitCost(p, 1), 130.0);
  // A partial tile is walked whole: 4 tokens of a 128-token tile cost 2.
  SplitProblem q{1, 4, 128, 256, {}};
  EXPECT_DOUBLE_EQ(estimateSplitCost(q, 1), 2.0 + 2.0);
  // A 32-token tile still counts one (the mxfp4_n32 spec's sweep: priced
  // at half, bs 4 / kv 8192 took 32 splits, 52.0 us, where 64 run in 42.4).
  SplitProblem r{4, 8192, 32, 396, {}};
  r.kvRowBytes = 288 + 18;
  EXPECT_DOUBLE_EQ(tileUnits(r), 1.0);
  EXPECT_DOUBLE_EQ(estimateSplitCost(r, 1), 256.0 + 2.0);
  EXPECT_EQ(chooseSplits(r), 64);
}

TEST(SplitCostModel, TilesCountByBytes) {
  // sm_90a's bf16 spec: 64-token tiles of 1152-byte rows, one program per
  // SM (132 at once). Its H200 sweep of 2026-12-02 (bench/sweep_splits.py,
  // docs/PerformanceLog.md): the fastest count of every task shape but
  // 256 x 8192 (2 splits, 612.6 us; the model keeps 1, 629.9). Priced as one
  // unit the model took 8 splits at bs 4 / kv 1024 (14.5 us; 16 run in
  // 14.1) and 1 at bs 64 / kv 1024 (42.2; 2: 39.2).
  SplitProblem p{4, 8192, 64, 132, {}};
  p.kvRowBytes = 1152;
  EXPECT_DOUBLE_EQ(tileUnits(p), 2.0);
  EXPECT_DOUBLE_EQ(estimateSplitCost(p, 1), 256.0 + 2.0);
  EXPECT_EQ(taskChoices(132, 64, 1152, 16),
            (std::vector<int64_t>{16, 32, 4, 4, 2, 2, 1, 1}));
  // The same tile with 32 rows (bf16 MTP 2 on sm_90a): bytes weigh as much
  // as the doubled dots; its sweep's fastest count on all 8 shapes.
  EXPECT_EQ(taskChoices(132, 64, 1152, 32),
            (std::vector<int64_t>{16, 32, 4, 4, 2, 2, 1, 1}));
}

TEST(SplitCostModel, TilesCountByMatrixWork) {
  // sm_90a's fp8 MTP 2 spec: 128-token fp8 tiles against 32 query rows (two
  // tokens of 16 heads), one program per SM. Its H200 sweeps of 2026-12-02
  // (bench/sweep_splits.py --q-seq-len 2): the fastest count of every task
  // shape. By its tokens alone (2 units) the model took 1 split at bs 64 /
  // kv 1024 (52.1 us) where 2 run in 42.0; by whole tiles (1 unit), 1 at
  // bs 4 / kv 1024 (47.6 us) where 8 run in 16.8.
  SplitProblem p{64, 1024, 128, 132, {}};
  p.blockM = 32;
  EXPECT_DOUBLE_EQ(tileUnits(p), 4.0);
  EXPECT_EQ(taskChoices(132, 128, 576, 32),
            (std::vector<int64_t>{8, 32, 4, 4, 2, 2, 1, 1}));
  EXPECT_EQ(taskChoices(132, 128, 576, 16)[4], 1);
}

TEST(SplitCostModel, RespectsCandidates) {
  std::vector<int64_t> only{1, 2};
  EXPECT_EQ(chooseSplits({4, 8192, 64, 256, only}), 2);
  std::vector<int64_t> odd{7};
  EXPECT_EQ(chooseSplits({4, 8192, 64, 256, odd}), 7);
}

// Row groups (several query tokens or head tiles per sequence) are
// programs of their own: 64 sequences of 2 groups fill the GPU like 128
// sequences of one, so they take the split count 128 sequences take, and
// 8 groups (128 heads) need no split at 64 x 8192.
TEST(SplitCostModel, RowGroupsCountAsPrograms) {
  auto withGroups = [](int64_t batch, int64_t groups, int64_t kv) {
    SplitProblem p;
    p.batch = batch;
    p.groups = groups;
    p.kvLen = kv;
    p.computeUnits = 264;
    return chooseSplits(p);
  };
  for (int64_t kv : {1024, 8192}) {
    EXPECT_EQ(withGroups(64, 2, kv), choose(128, kv, 264)) << kv;
    EXPECT_EQ(withGroups(32, 8, kv), choose(256, kv, 264)) << kv;
  }
  EXPECT_LT(withGroups(64, 2, 8192), choose(64, 8192, 264));
}

TEST(SplitCostModel, CandidatesForDivisor) {
  EXPECT_EQ(splitCandidatesForDivisor(8192, 64),
            (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(splitCandidatesForDivisor(1024, 64),
            (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_TRUE(splitCandidatesForDivisor(1000, 64).empty());
  EXPECT_EQ(splitCandidatesForDivisor(0, 64), defaultSplitCandidates());
}

} // namespace
