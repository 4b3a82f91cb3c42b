//===- RegisterTileMapTest.cpp - KV bytes a tile ahead in registers -------===//
//
// RegisterTileMap (lib/Schedule/MatrixInstr.h): where sm_90a's threads hold
// a KV tile's 16-byte chunks and where the 16-bit pieces they convert to go
// in the 128-byte swizzle. Checked: every chunk and every slot of the tile
// exactly once, a warp's stores conflict-free (each bank group equally), its
// global reads whole sectors, and that the row-wise layout it replaced would
// fail the conflict check.
//
//===----------------------------------------------------------------------===//
#include "mla/MatrixInstr.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <set>
#include <vector>

using namespace mlir::mla;

namespace {
/// The shipped shapes: fp8 (64 x 576 bytes, atoms of 64 bytes) and mxfp4
/// (64 x 288, atoms of 32), one warpgroup; fp8 over two warpgroups, and
/// mxfp4 with twice the rows.
std::vector<RegisterTileMap> registerMaps() {
  return {
      {64, 576, 64, 4}, {64, 288, 32, 4}, {64, 576, 64, 8}, {128, 288, 32, 4}};
}
} // namespace

TEST(RegisterTileMap, CoversEveryChunkOnce) {
  for (const RegisterTileMap &m : registerMaps()) {
    ASSERT_TRUE(m.valid());
    EXPECT_EQ(m.rounds() * 16 * m.warps * m.wave, m.rows * m.rowBytes);
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t w = 0; w < m.warps; ++w)
      for (int64_t l = 0; l < m.wave; ++l)
        for (int64_t r = 0; r < m.rounds(); ++r) {
          int64_t row = m.baseRow(w, l) + m.roundRow(r);
          int64_t byte = m.baseByte(l) + m.roundByte(r);
          ASSERT_LT(row, m.rows);
          ASSERT_LT(byte, m.rowBytes);
          ASSERT_EQ(byte % 16, 0);
          // The chunk lies within one atom (its values convert together).
          ASSERT_EQ(byte / m.atomBytes, (byte + 15) / m.atomBytes);
          EXPECT_TRUE(seen.insert({row, byte}).second) << row << "," << byte;
        }
    EXPECT_EQ(int64_t(seen.size()), m.rows * m.rowBytes / 16);
  }
}

TEST(RegisterTileMap, PiecesFillTheSwizzledTileOnce) {
  for (const RegisterTileMap &m : registerMaps()) {
    // The 16-bit tile: rows x (rowBytes * 64 / atomBytes) values.
    int64_t bytes = m.rows * m.rowBytes * 128 / m.atomBytes;
    std::set<int64_t> slots;
    for (int64_t row = 0; row < m.rows; ++row)
      for (int64_t byte = 0; byte < m.rowBytes; byte += 16)
        for (int64_t p = 0; p < m.piecesPerChunk(); ++p) {
          int64_t off = m.pieceOffset(row, byte, p);
          ASSERT_EQ(off % 16, 0);
          ASSERT_LT(off, bytes);
          EXPECT_TRUE(slots.insert(off).second);
        }
    EXPECT_EQ(int64_t(slots.size()) * 16, bytes);
  }
}

// The property the layout exists for: a warp's 16-byte stores of one
// piece of one round hit each of shared memory's 8 bank groups (16 bytes
// each, 128 bytes a wavefront) exactly wave / 8 times: 4 wavefronts for
// 512 bytes, the minimum. And its global reads of one round are whole
// 32-byte sectors.
TEST(RegisterTileMap, StoresAreConflictFreeAndReadsWholeSectors) {
  for (const RegisterTileMap &m : registerMaps())
    for (int64_t w = 0; w < m.warps; ++w)
      for (int64_t r = 0; r < m.rounds(); ++r) {
        for (int64_t p = 0; p < m.piecesPerChunk(); ++p) {
          std::vector<int> group(8, 0);
          for (int64_t l = 0; l < m.wave; ++l)
            ++group[m.pieceOffset(m.baseRow(w, l) + m.roundRow(r),
                                  m.baseByte(l) + m.roundByte(r), p) /
                    16 % 8];
          for (int g = 0; g < 8; ++g)
            EXPECT_EQ(group[g], m.wave / 8)
                << "atom bytes " << m.atomBytes << " warp " << w << " round "
                << r << " piece " << p << " bank group " << g;
        }
        std::set<int64_t> sectors;
        for (int64_t l = 0; l < m.wave; ++l) {
          int64_t at = (m.baseRow(w, l) + m.roundRow(r)) * m.rowBytes +
                       m.baseByte(l) + m.roundByte(r);
          sectors.insert(at / 32);
          sectors.insert((at + 15) / 32);
        }
        EXPECT_EQ(int64_t(sectors.size()) * 32, m.wave * 16);
      }
}

// The layout a warp's chunks along one row would have (the first version):
// every lane on the same row mod 8, 8-way conflicts; the test above would
// see it.
TEST(RegisterTileMap, ChunksAlongOneRowWouldConflict) {
  RegisterTileMap m{64, 576, 64, 4};
  std::vector<int> group(8, 0);
  for (int64_t l = 0; l < m.wave; ++l)
    ++group[m.pieceOffset(/*row=*/5, /*byte=*/l * 16, /*p=*/0) / 16 % 8];
  EXPECT_EQ(*std::max_element(group.begin(), group.end()), 8);
}

TEST(RegisterTileMap, RejectsShapesItCannotCover) {
  EXPECT_FALSE((RegisterTileMap{48, 576, 64, 4}.valid()));  // 6 row blocks
  EXPECT_FALSE((RegisterTileMap{64, 570, 64, 4}.valid()));  // partial atom
  EXPECT_FALSE((RegisterTileMap{64, 576, 24, 4}.valid()));  // not 16-byte
  EXPECT_FALSE((RegisterTileMap{64, 576, 256, 4}.valid())); // > 128-byte row
}
