//===- TargetTest.cpp - the chip table ------------------------------------===//
#include "mla/Target.h"

#include "gtest/gtest.h"

using namespace mlir::mla;

TEST(Target, KnownChips) {
  const ChipInfo *gfx950 = lookupChip("gfx950");
  ASSERT_NE(gfx950, nullptr);
  EXPECT_EQ(gfx950->computeUnits, 256);
  EXPECT_EQ(gfx950->waveSize, 64);
  EXPECT_EQ(gfx950->sharedMemBytes, 160 * 1024);
  EXPECT_EQ(gfx950->fp8, Fp8Flavor::E4M3FN);
  EXPECT_EQ(gfx950->fp8Decode, Fp8Decode::PackedToBf16);

  const ChipInfo *gfx942 = lookupChip("gfx942");
  ASSERT_NE(gfx942, nullptr);
  EXPECT_EQ(gfx942->computeUnits, 304);
  EXPECT_EQ(gfx942->sharedMemBytes, 64 * 1024);
  EXPECT_EQ(gfx942->fp8, Fp8Flavor::E4M3FNUZ);
  EXPECT_EQ(gfx942->fp8Decode, Fp8Decode::PackedToF32);

  const ChipInfo *h200 = lookupChip("sm_90");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(h200->computeUnits, 132);
  EXPECT_EQ(h200->waveSize, 32);
  EXPECT_EQ(h200->fp8Decode, Fp8Decode::PackedToF16);
  EXPECT_EQ(lookupChip("host")->fp8Decode, Fp8Decode::Software);
}

TEST(Target, CopyStrategies) {
  // The KV tile: bounds-checked buffer loads on CDNA (the masked variant's
  // rows past the bound read as zeros), async copies on sm_90 (double
  // buffer, with the split-K across warp pairs and dependent launch that
  // were measured there); exactly one of the two per GPU chip.
  for (const char *chip : {"gfx950", "gfx942"}) {
    const ChipInfo *c = lookupChip(chip);
    EXPECT_TRUE(c->boundsCheckedLoads) << chip;
    EXPECT_FALSE(c->asyncTileCopy) << chip;
    EXPECT_TRUE(c->unrollTileLoops) << chip;
  }
  const ChipInfo *h200 = lookupChip("sm_90");
  EXPECT_FALSE(h200->boundsCheckedLoads);
  EXPECT_TRUE(h200->asyncTileCopy);
  EXPECT_FALSE(h200->unrollTileLoops);
  EXPECT_TRUE(h200->splitKAcrossWarps);
  EXPECT_TRUE(h200->dependentLaunch);
  EXPECT_FALSE(lookupChip("host")->boundsCheckedLoads);
}

TEST(Target, UnknownChip) {
  EXPECT_EQ(lookupChip("gfx90a"), nullptr);
  EXPECT_EQ(knownChipNames(), "gfx950, gfx942, sm_90, host");
}

TEST(Target, EveryChipNamesItsVendor) {
  using mlir::mla::Vendor;
  EXPECT_EQ(Vendor::AMD, mlir::mla::lookupChip("gfx950")->vendor);
  EXPECT_EQ(Vendor::AMD, mlir::mla::lookupChip("gfx942")->vendor);
  EXPECT_EQ(Vendor::NVIDIA, mlir::mla::lookupChip("sm_90")->vendor);
  EXPECT_EQ(Vendor::Host, mlir::mla::lookupChip("host")->vendor);
}
