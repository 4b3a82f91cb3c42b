//===- SharedMemoryPlanTest.cpp - shared-memory byte placement -----------===//
//
// The offsets Lowering::allocSmem hands out: row padding, alignment, and the
// 16-byte regions that go into the gaps a 1024-byte alignment leaves.
//
//===----------------------------------------------------------------------===//

#include "mla/SharedMemoryPlan.h"

#include <gtest/gtest.h>

using mlir::mla::kRowPadBytes;
using mlir::mla::paddedRowBytes;
using mlir::mla::SharedMemoryPlan;

TEST(SharedMemoryPlan, RowPadding) {
  // Tile rows get 16 bytes more: 576 fp8 values, 1 152 bf16 bytes.
  EXPECT_EQ(paddedRowBytes(576), 576 + kRowPadBytes);
  EXPECT_EQ(paddedRowBytes(1152), 1168);
  EXPECT_EQ(paddedRowBytes(32), 48);
  // The 4-warp reduction rows (4 floats, one 16-byte vector) stay unpadded;
  // 8-warp ones (32 bytes) are padded.
  EXPECT_EQ(paddedRowBytes(16), 16);
  EXPECT_EQ(paddedRowBytes(8), 24);
}

TEST(SharedMemoryPlan, AppendsInOrderWithAlignment) {
  SharedMemoryPlan plan;
  EXPECT_EQ(plan.place(100, 16), 0);
  EXPECT_EQ(plan.place(64, 16), 112); // gap [100, 112)
  EXPECT_EQ(plan.bytes(), 176);
  EXPECT_EQ(plan.place(16, 16), 176);
  EXPECT_EQ(plan.bytes(), 192);
  // Any alignment leaves a gap: 8 bytes at 8 fit the one before 112.
  EXPECT_EQ(plan.place(8, 8), 104);
  EXPECT_EQ(plan.place(4, 4), 192);
  EXPECT_EQ(plan.bytes(), 196);
}

// The fp8 sm_90a layout that mla-compile-sm90a.mlir checks (95 232 bytes):
// the finalize's 256 bytes of row sums go into the gap the 1024-aligned P
// atoms left after the 256-byte row-max array.
TEST(SharedMemoryPlan, SmallRegionFillsAlignmentGap) {
  SharedMemoryPlan plan;
  EXPECT_EQ(plan.place(18432, 1024), 0);     // Q
  EXPECT_EQ(plan.place(73728, 1024), 18432); // KV stages
  EXPECT_EQ(plan.place(256, 16), 92160);     // row max
  EXPECT_EQ(plan.place(2048, 1024), 93184);  // P atoms; gap [92416, 93184)
  EXPECT_EQ(plan.bytes(), 95232);
  EXPECT_EQ(plan.place(256, 16), 92416); // row sums, in the gap
  EXPECT_EQ(plan.bytes(), 95232);
  // The gap's rest (512 bytes) takes the next small region too...
  EXPECT_EQ(plan.place(512, 16), 92672);
  // ...and then it is full: the next one goes to the end.
  EXPECT_EQ(plan.place(16, 16), 95232);
  EXPECT_EQ(plan.bytes(), 95248);
}

TEST(SharedMemoryPlan, TooLargeOrStrictlyAlignedRegionsGoToTheEnd) {
  SharedMemoryPlan plan;
  plan.place(16, 16);
  EXPECT_EQ(plan.place(1024, 1024), 1024); // gap [16, 1024)
  // Larger than the gap.
  EXPECT_EQ(plan.place(2000, 16), 2048);
  // An alignment above 16 never takes a gap, even one it would fit.
  EXPECT_EQ(plan.place(64, 64), 4096);
  // The gap is still whole for a region that fits it.
  EXPECT_EQ(plan.place(1008, 16), 16);
}

TEST(SharedMemoryPlan, AppendNeverUsesAGap) {
  SharedMemoryPlan plan;
  plan.place(16, 16);
  plan.place(1024, 1024); // gap [16, 1024)
  EXPECT_EQ(plan.append(8, 8), 2048);
  EXPECT_EQ(plan.bytes(), 2056);
  // The gap is kept for a later place().
  EXPECT_EQ(plan.place(16, 16), 16);
}

TEST(SharedMemoryPlan, GapStartIsAlignedForTheRegion) {
  SharedMemoryPlan plan;
  plan.place(4, 4);
  plan.place(64, 1024); // gap [4, 1024)
  // A 16-byte-aligned region starts at 16, not 4.
  EXPECT_EQ(plan.place(32, 16), 16);
  // A 4-byte one uses what follows it.
  EXPECT_EQ(plan.place(4, 4), 48);
}
