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

TEST(Target, UnknownChip) {
  EXPECT_EQ(lookupChip("gfx90a"), nullptr);
  EXPECT_EQ(knownChipNames(), "gfx950, gfx942, sm_90, host");
}
