//===- RegisterTileMapTest.cpp - KV bytes a tile ahead in registers -------===//
//
// RegisterTileMap (lib/Schedule/MatrixInstr.h): where sm_90a's threads hold
// a KV tile's 16-byte chunks and where the 16-bit pieces they convert to go
// in the 128-byte swizzle. Checked: every chunk and every slot of the tile
// exactly once, a warp's stores conflict-free (each bank group equally), its
// global reads whole sectors, that the row-wise layout it replaced would
// fail the conflict check, and that the warpRows variant hands each thread
// the elements of wgmma's register A for S^T = K Q^T.
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
/// With warpRows (wgmma's register A): one and two warpgroups.
std::vector<RegisterTileMap> registerMaps() {
  return {{64, 576, 64, 4},           {64, 288, 32, 4},
          {64, 576, 64, 8},           {128, 288, 32, 4},
          {64, 576, 64, 4, 32, true}, {128, 576, 64, 8, 32, true}};
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

// warpRows: what the lowering (Lowering::dotRegisterA) feeds wgmma's
// register A from. For every thread, atom and K step, register r's element
// e is grouped element 8 s + 2 r + e of the atom's grouping (groupKSteps
// over MatrixInstr::aRegisters), taken from the thread's chunk of row round
// row / 8, byte col. That must be the K tile's element at the PTX
// fragment's row (16 w + g + 8 (r % 2) of the program's tile: warpgroup
// w / 4's instruction tile, warp w % 4 of it) and at the K column that Q's
// stored column 64 atom + 16 s + k holds (physicalK), k the fragment's.
TEST(RegisterTileMap, WarpRowsHoldTheRegisterAOperand) {
  const MatrixInstr *mi =
      lookupMatrixInstr("wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16");
  ASSERT_NE(mi, nullptr);
  std::optional<GroupedOperands> g = groupKSteps(*mi, 4);
  ASSERT_TRUE(g.has_value());
  LaneLayout ga = g->a();
  for (const RegisterTileMap &m : registerMaps()) {
    if (!m.warpRows)
      continue;
    ASSERT_TRUE(m.valid());
    ASSERT_EQ(m.rounds() / m.atoms(), 2); // rows g and g + 8
    for (int64_t w = 0; w < m.warps; ++w)
      for (int64_t l = 0; l < m.wave; ++l)
        for (int64_t atom = 0; atom < m.atoms(); ++atom)
          for (int64_t s = 0; s < 4; ++s)
            for (int64_t r = 0; r < 4; ++r)
              for (int64_t e = 0; e < 2; ++e) {
                Coord c = ga.map(0, 8 * s + 2 * r + e);
                int64_t round = c.row / 8 * m.atoms() + atom;
                int64_t row = m.baseRow(w, l) + m.roundRow(round);
                int64_t byte = m.baseByte(l) + m.roundByte(round) + c.col;
                Coord ptx = mi->aRegisters.map(l, 2 * r + e);
                EXPECT_EQ(row, 16 * w + ptx.row)
                    << "warp " << w << " lane " << l;
                EXPECT_EQ(byte, g->physicalK(64 * atom + 16 * s + ptx.col))
                    << "warp " << w << " lane " << l << " atom " << atom
                    << " step " << s << " register " << r;
              }
  }
}
