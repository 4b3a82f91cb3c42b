//===- TargetTest.cpp - the chip table ------------------------------------===//
#include "mla/Target.h"

#include "gtest/gtest.h"

using namespace mlir::mla;

TEST(Target, KnownChips) {
  const ChipInfo *gfx950 = lookupChip("gfx950");
  ASSERT_NE(gfx950, nullptr);
  EXPECT_EQ(gfx950->facts.computeUnits, 256);
  EXPECT_EQ(gfx950->facts.waveSize, 64);
  EXPECT_EQ(gfx950->facts.sharedMemBytes, 160 * 1024);
  EXPECT_EQ(gfx950->facts.fp8, Fp8Flavor::E4M3FN);
  EXPECT_EQ(gfx950->facts.fp8Decode, Fp8Decode::PackedToBf16);

  const ChipInfo *gfx942 = lookupChip("gfx942");
  ASSERT_NE(gfx942, nullptr);
  EXPECT_EQ(gfx942->facts.computeUnits, 304);
  EXPECT_EQ(gfx942->facts.sharedMemBytes, 64 * 1024);
  EXPECT_EQ(gfx942->facts.fp8, Fp8Flavor::E4M3FNUZ);
  EXPECT_EQ(gfx942->facts.fp8Decode, Fp8Decode::PackedToF32);

  const ChipInfo *h200 = lookupChip("sm_90");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(h200->facts.computeUnits, 132);
  EXPECT_EQ(h200->facts.waveSize, 32);
  EXPECT_EQ(h200->facts.fp8Decode, Fp8Decode::PackedToF16);
  EXPECT_EQ(lookupChip("host")->facts.fp8Decode, Fp8Decode::Software);
}

TEST(Target, CopyStrategies) {
  // The KV tile: bounds-checked buffer loads on CDNA (the masked variant's
  // rows past the bound read as zeros), async copies on sm_90 (double
  // buffer, with the split-K across warp pairs and dependent launch that
  // were measured there); exactly one of the two per GPU chip.
  for (const char *chip : {"gfx950", "gfx942"}) {
    const ChipInfo *c = lookupChip(chip);
    EXPECT_TRUE(c->facts.boundsCheckedLoads) << chip;
    EXPECT_FALSE(c->facts.asyncTileCopy) << chip;
    EXPECT_TRUE(c->tuning.unrollTileLoops) << chip;
  }
  const ChipInfo *h200 = lookupChip("sm_90");
  EXPECT_FALSE(h200->facts.boundsCheckedLoads);
  EXPECT_TRUE(h200->facts.asyncTileCopy);
  EXPECT_FALSE(h200->tuning.unrollTileLoops);
  EXPECT_TRUE(h200->tuning.splitKAcrossWarps);
  EXPECT_TRUE(h200->facts.dependentLaunch);
  EXPECT_FALSE(lookupChip("host")->facts.boundsCheckedLoads);
}

TEST(Target, UnknownChip) {
  EXPECT_EQ(lookupChip("gfx90a"), nullptr);
  EXPECT_EQ(knownChipNames(), "gfx950, gfx942, sm_90, sm_90a, host");
}

TEST(Target, EveryChipNamesItsVendor) {
  using mlir::mla::Vendor;
  EXPECT_EQ(Vendor::AMD, mlir::mla::lookupChip("gfx950")->vendor);
  EXPECT_EQ(Vendor::AMD, mlir::mla::lookupChip("gfx942")->vendor);
  EXPECT_EQ(Vendor::NVIDIA, mlir::mla::lookupChip("sm_90")->vendor);
  EXPECT_EQ(Vendor::Host, mlir::mla::lookupChip("host")->vendor);
}

TEST(Target, KvEvictFirstBound) {
  // sm_90a's measured bound (docs/PerformanceLog.md, 2026-12-06); no other
  // chip sets one. An override of -1 keeps the chip's, 0 turns it off.
  for (const char *chip : {"gfx950", "gfx942", "sm_90", "host"})
    EXPECT_EQ(lookupChip(chip)->tuning.kvEvictFirstTiles, 0) << chip;
  ChipTuning t = lookupChip("sm_90a")->tuning;
  EXPECT_EQ(t.kvEvictFirstTiles, 16);
  TuningOverrides{}.applyTo(t);
  EXPECT_EQ(t.kvEvictFirstTiles, 16);
  TuningOverrides{.kvEvictFirstTiles = 0}.applyTo(t);
  EXPECT_EQ(t.kvEvictFirstTiles, 0);
  TuningOverrides{.kvEvictFirstTiles = 1 << 20}.applyTo(t);
  EXPECT_EQ(t.kvEvictFirstTiles, 1 << 20);
}
