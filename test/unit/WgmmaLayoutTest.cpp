//===- WgmmaLayoutTest.cpp - sm_90a's shared-memory operand layouts -------===//
//
// wgmma reads both operands from shared memory through matrix descriptors.
// These tests model the tensor cores' address walk for each layout the
// compiler stores (the 128-byte swizzle of 16-bit tiles, the 64-byte one of
// fp8 tiles) and check it against smemSwizzledOffset, the accumulator
// against the PTX fragment, and the fp8 transpose's lane map
// (Fp8TransposeMap) for coverage and bank conflicts.
//
//===----------------------------------------------------------------------===//
#include "mla/MatrixInstr.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

using namespace mlir::mla;

namespace {

// wgmma m64nNk16's accumulator (PTX ISA, "Register fragment: matrix D" of
// wgmma .m64nNk16): thread t = 32 w + 4 g + q, register i holds D[m][n],
// m = 16 w + g + 8 ((i >> 1) & 1), n = 2 q + (i & 1) + 8 (i >> 2). The
// descriptor is one warp's view of one 16-row N block, transposed (its
// row = n, its column = m - 16 w): register 8 b + e of an instruction with
// N = 16 B is element e of block b.
TEST(Wgmma, AccumulatorIsTheTransposedPtxFragment) {
  for (llvm::StringRef name :
       {"wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16"}) {
    const MatrixInstr *mi = lookupMatrixInstr(name);
    ASSERT_NE(mi, nullptr) << name.str();
    EXPECT_TRUE(mi->smemOperands);
    EXPECT_EQ(mi->warpsPerInstr, 4);
    EXPECT_EQ(mi->c.elemsPerLane(), 8);
    for (int64_t n16 : {16, 32, 64}) // N = heads x query tokens
      for (int64_t t = 0; t < 128; ++t)
        for (int64_t i = 0; i < n16 / 2; ++i) {
          int64_t w = t / 32, g = (t % 32) / 4, q = t % 4;
          int64_t m = 16 * w + g + 8 * ((i >> 1) & 1);
          int64_t n = 2 * q + (i & 1) + 8 * (i >> 2);
          Coord got = mi->c.map(t % 32, i % 8);
          EXPECT_EQ(got.row + 16 * (i / 8), n) << name.str() << " t " << t;
          EXPECT_EQ(got.col + 16 * w, m) << name.str() << " t " << t;
        }
  }
}

// The canonical layouts in the 128-byte swizzle (PTX ISA, "Shared Memory
// Matrix Layout"; CUTLASS's make_gmma_desc, B128), modelled as the tensor
// cores' address walk: a logical byte address from the descriptor's start
// and offsets, then bits 4-6 xor bits 7-9 (Swizzle<3,4,3>):
//   K-major:  row mn at (mn % 8) * 128 + (mn / 8) * SBO, element k of the
//             row's 128 bytes at 2 k (LBO unused);
//   MN-major: element mn at 2 (mn % 64) + (mn / 64) * LBO, row k at
//             (k % 8) * 128 + (k / 8) * SBO.
// For every element of one m64 x k16 (A) or n x k16 (B) operand the byte
// read must be the one the compiler stored (smemSwizzledOffset), for both
// uses of a KV tile: K-major as K in S^T = K Q^T, MN-major as V^T in
// O^T = V^T P^T, and for Q and P as B.
static int64_t swizzle128(int64_t addr) {
  return addr ^ (((addr >> 7) & 7) << 4);
}
static int64_t kMajorByte(int64_t start, int64_t mn, int64_t k, int64_t sbo) {
  return swizzle128(start + (mn % 8) * 128 + (mn / 8) * sbo + k * 2);
}
static int64_t mnMajorByte(int64_t start, int64_t mn, int64_t k, int64_t lbo,
                           int64_t sbo) {
  return swizzle128(start + (mn % 64) * 2 + (mn / 64) * lbo + (k % 8) * 128 +
                    (k / 8) * sbo);
}

TEST(Wgmma, SwizzledTilesAreBothOperandLayouts) {
  const int64_t rows = 64, cols = 576; // a KV tile: tokens x (512 + 64)
  // Every element once, 16-byte runs of 8 consecutive columns, atoms of
  // rows x 128 bytes.
  std::set<int64_t> seen;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int64_t at = smemSwizzledOffset(r, c, rows);
      EXPECT_TRUE(seen.insert(at).second);
      EXPECT_EQ(at / (rows * 128), c / 64);
      if (c % 8) {
        EXPECT_EQ(at, smemSwizzledOffset(r, c - 1, rows) + 2);
      }
    }
  EXPECT_EQ(*seen.rbegin(), rows * cols * 2 - 2);
  // S^T = K Q^T: A = K, M = tokens, K = dims; step s at columns 16 s:
  // the start moves 32 bytes within an atom, to the next atom every 4.
  for (int64_t s = 0; s < cols / 16; ++s) {
    int64_t start = (16 * s / 64) * rows * 128 + (16 * s % 64) * 2;
    for (int64_t m = 0; m < 64; ++m)
      for (int64_t k = 0; k < 16; ++k)
        ASSERT_EQ(kMajorByte(start, m, k, 1024),
                  smemSwizzledOffset(m, 16 * s + k, rows))
            << "step " << s << " m " << m << " k " << k;
  }
  // O^T = V^T P^T: A = V^T, M = value dims (block j: atom j), K = tokens
  // (step s: rows 16 s ..).
  for (int64_t j = 0; j < 8; ++j)
    for (int64_t s = 0; s < rows / 16; ++s) {
      int64_t start = j * rows * 128 + 16 * s * 128;
      for (int64_t m = 0; m < 64; ++m)
        for (int64_t k = 0; k < 16; ++k)
          ASSERT_EQ(mnMajorByte(start, m, k, rows * 128, 1024),
                    smemSwizzledOffset(16 * s + k, 64 * j + m, rows))
              << "block " << j << " step " << s << " m " << m << " k " << k;
    }
  // B = Q (16 heads x 576) and P (16 heads x 64 tokens), K-major, N = heads.
  for (int64_t kCols : {576, 64})
    for (int64_t s = 0; s < kCols / 16; ++s) {
      int64_t start = (16 * s / 64) * 16 * 128 + (16 * s % 64) * 2;
      for (int64_t n = 0; n < 16; ++n)
        for (int64_t k = 0; k < 16; ++k)
          ASSERT_EQ(kMajorByte(start, n, k, 1024),
                    smemSwizzledOffset(n, 16 * s + k, 16));
    }
}

// The e4m3 form (K = 32 bytes a step) reads fp8 tiles K-major in the
// 64-byte swizzle (mode 2): 8 rows of 64 bytes a core group, SBO 512, the
// swizzle XORing address bits 4-5 with bits 7-8 (CUTLASS's Swizzle<2,4,3>).
static int64_t swizzle64(int64_t addr) {
  return addr ^ (((addr >> 7) & 3) << 4);
}

TEST(Wgmma, Fp8SwizzledTilesAreKMajorOperands) {
  const int64_t rows = 64, cols = 576;
  std::set<int64_t> seen;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int64_t at = smemSwizzledOffset(r, c, rows, 1);
      EXPECT_TRUE(seen.insert(at).second);
      EXPECT_EQ(at / (rows * 64), c / 64);
      if (c % 16) {
        EXPECT_EQ(at, smemSwizzledOffset(r, c - 1, rows, 1) + 1);
      }
    }
  EXPECT_EQ(*seen.rbegin(), rows * cols - 1);
  // A = K (tokens x 576 bytes) and B = Q (16 heads x 576 bytes): step s at
  // columns 32 s, the start 32 bytes on within an atom, the next atom every
  // 2 steps.
  for (int64_t tileRows : {rows, int64_t(16)})
    for (int64_t s = 0; s < cols / 32; ++s) {
      int64_t start = (32 * s / 64) * tileRows * 64 + 32 * s % 64;
      for (int64_t m = 0; m < std::min<int64_t>(tileRows, 64); ++m)
        for (int64_t k = 0; k < 32; ++k)
          ASSERT_EQ(swizzle64(start + (m % 8) * 64 + (m / 8) * 512 + k),
                    smemSwizzledOffset(m, 32 * s + k, tileRows, 1))
              << "rows " << tileRows << " step " << s << " m " << m << " k "
              << k;
    }
  EXPECT_EQ(wgmmaDescriptor(0x200, 16, 512, 64),
            uint64_t(0x20) | uint64_t(1) << 16 | uint64_t(32) << 32 |
                uint64_t(2) << 62);
  // The instruction: sm_90a's, K = 32, the 16-bit forms' accumulator.
  const MatrixInstr *e4m3 =
      lookupMatrixInstr("wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3");
  const MatrixInstr *bf16 =
      lookupMatrixInstr("wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16");
  ASSERT_TRUE(e4m3 && bf16);
  EXPECT_EQ(e4m3->k, 32);
  EXPECT_EQ(e4m3->abType, MatrixElem::F8E4M3FN);
  EXPECT_TRUE(e4m3->smemOperands);
  EXPECT_EQ(e4m3->c.laneBases, bf16->c.laneBases);
  EXPECT_EQ(e4m3->c.elemBases, bf16->c.elemBases);
}

// Every byte of a 64-token x 512-dim fp8 tile lands once at its transposed
// place, and a warp's reads and writes hit each bank as rarely as their
// bytes allow: 128-byte reads in one wavefront, 512-byte writes in four.
TEST(Fp8TransposeMap, CoversTheTileWithoutBankConflicts) {
  for (int64_t cols : {512, 64}) {
    Fp8TransposeMap m{64, cols, 128};
    std::set<int64_t> written;
    std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> reads, writes;
    for (int64_t r = 0; r < m.rounds(); ++r)
      for (int64_t t = 0; t < m.threads; ++t) {
        int64_t h = t % 32 / 16, j = t % 16, u = r * m.halfWarps() + t / 16;
        if (u >= m.tasks())
          continue;
        for (int64_t k = 0; k < 16; ++k) {
          int64_t at = smemSwizzledOffset(m.rowOf(u, h, j, k), m.dim0(u, j),
                                          m.rows, 1);
          reads[{r * 8 + t / 32, k}].push_back(at);
        }
        for (int64_t i = 0; i < 4; ++i) {
          int64_t d = m.dimOf(u, h, j, i);
          int64_t tok = m.group(u) * 64 + m.tokenBlock(u, j) * 16;
          // Byte q of the write is token tok + q of dim d (column writeOrder(h, j, i) of
          // the lane's 4 dims, rows k ^ h undone by the permutes).
          int64_t at = smemSwizzledOffset(d, tok % 64, m.cols, 1) +
                       tok / 64 * m.cols * 64;
          auto &w = writes[{r * 8 + t / 32, i}];
          w.resize(32, -1);
          w[t % 32] = at;
          for (int64_t q = 0; q < 16; ++q) {
            EXPECT_TRUE(written.insert(at + q).second);
            // The byte read for (token tok + q, dim d) is the one a read
            // of this lane fetched (column d - dim0 of its 4-byte words).
            bool fetched = false;
            for (int64_t k = 0; k < 16; ++k)
              fetched |= m.rowOf(u, h, j, k) == tok + q;
            EXPECT_TRUE(fetched && d / 4 == m.dim0(u, j) / 4);
          }
        }
      }
    EXPECT_EQ(int64_t(written.size()), m.rows * m.cols);
    // Wavefronts of one warp-wide access as the hardware serves them
    // (Nsight Compute's "L1 Wavefronts Shared" per instruction on the
    // H200): 4-byte accesses in one phase of 32 lanes, 16-byte ones in
    // four phases of 8 consecutive lanes; a phase takes as many wavefronts
    // as the most distinct words it needs from one bank.
    auto wavefronts = [](const std::vector<int64_t> &starts, int64_t bytes) {
      int64_t lanesPerPhase = 128 / bytes, total = 0;
      for (size_t p = 0; p < starts.size(); p += lanesPerPhase) {
        std::map<int64_t, std::set<int64_t>> bank;
        for (size_t l = p; l < std::min(starts.size(), p + lanesPerPhase); ++l)
          for (int64_t w = 0; starts[l] >= 0 && w < bytes; w += 4)
            bank[(starts[l] + w) / 4 % 32].insert((starts[l] + w) / 4);
        size_t most = 0;
        for (auto &[b, words] : bank)
          most = std::max(most, words.size());
        total += int64_t(most);
      }
      return total;
    };
    for (auto &[key, starts] : reads)
      EXPECT_EQ(wavefronts(starts, 4), 1) << "read " << key.second;
    for (auto &[key, starts] : writes)
      EXPECT_EQ(wavefronts(starts, 16), 4) << "write " << key.second;
  }
}

// In place (ChipTuning::e4m3DoubleBuffer, Lowering::vtInPlace) V^T takes
// the tile's own atoms, with a barrier between each round's reads and its
// writes: sound because a round writes exactly the bytes it read, so no
// round overwrites a byte that another round has still to read.
TEST(Fp8TransposeMap, EachRoundWritesTheBytesItRead) {
  // (64 columns leave half-warps idle in their round: not in place.)
  for (int64_t cols : {512, 128}) {
    Fp8TransposeMap m{64, cols, 128};
    ASSERT_EQ(m.halfWarps() % 4, 0); // whole atoms a round (vtInPlace)
    ASSERT_EQ(m.tasks() % m.halfWarps(), 0);
    for (int64_t r = 0; r < m.rounds(); ++r) {
      std::set<int64_t> read, written;
      for (int64_t t = 0; t < m.threads; ++t) {
        int64_t h = t % 32 / 16, j = t % 16, u = r * m.halfWarps() + t / 16;
        for (int64_t k = 0; k < 16; ++k)
          for (int64_t q = 0; q < 4; ++q)
            read.insert(smemSwizzledOffset(m.rowOf(u, h, j, k), m.dim0(u, j),
                                           m.rows, 1) +
                        q);
        for (int64_t i = 0; i < 4; ++i) {
          int64_t tok = m.group(u) * 64 + m.tokenBlock(u, j) * 16;
          int64_t at = smemSwizzledOffset(m.dimOf(u, h, j, i), tok % 64,
                                          m.cols, 1) +
                       tok / 64 * m.cols * 64;
          for (int64_t q = 0; q < 16; ++q)
            written.insert(at + q);
        }
      }
      EXPECT_EQ(read.size(), size_t(m.halfWarps() / 4 * 64 * 64)) << r;
      EXPECT_TRUE(read == written) << "round " << r;
    }
  }
}

TEST(Wgmma, DescriptorBits) {
  // Start address, leading and stride byte offsets >> 4 at bits 0, 16, 32;
  // swizzle mode 1 (128 bytes) at bits 62-63.
  EXPECT_EQ(wgmmaDescriptor(0x400, 16, 1024),
            uint64_t(0x40) | uint64_t(1) << 16 | uint64_t(64) << 32 |
                uint64_t(1) << 62);
  EXPECT_EQ(wgmmaDescriptor(0x3FFF0, 16, 16) & 0x3FFF, 0x3FFFu);
  EXPECT_EQ(wgmmaDescriptor(0, 0, 0), uint64_t(1) << 62);
}

} // namespace

// wgmma m64nNk16 with A in registers (PTX ISA, "Register fragment: matrix
// A" of wgmma .m64nNk16, 16-bit types): thread t = 32 w + 4 g + q holds
// four 32-bit registers, element i (two a register) at A[m][k] with
// m = 16 w + g + 8 ((i >> 1) & 1), k = 2 q + (i & 1) + 8 (i >> 2).
// aRegisters is one warp's part (rows 16 w ..); e4m3 has none. CUTLASS
// spells the same map ALayout_64x16 (mma_traits_sm90_gmma.hpp): thread
// strides (128, 1, 16) over (q, g, w), value strides (64, 8, 512), M-major.
TEST(Wgmma, RegisterAIsThePtxFragment) {
  for (llvm::StringRef name :
       {"wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16"}) {
    const MatrixInstr *mi = lookupMatrixInstr(name);
    ASSERT_NE(mi, nullptr) << name.str();
    const LaneLayout &a = mi->aRegisters;
    ASSERT_EQ(a.lanes(), 32);
    ASSERT_EQ(a.elemsPerLane(), 8);
    for (int64_t l = 0; l < 32; ++l)
      for (int64_t i = 0; i < 8; ++i) {
        int64_t g = l / 4, q = l % 4;
        EXPECT_EQ(a.map(l, i), (Coord{g + 8 * ((i >> 1) & 1),
                                      2 * q + (i & 1) + 8 * (i >> 2)}))
            << name.str() << " lane " << l << " element " << i;
      }
  }
  const MatrixInstr *e4m3 =
      lookupMatrixInstr("wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3");
  ASSERT_NE(e4m3, nullptr);
  EXPECT_TRUE(e4m3->aRegisters.laneBases.empty());
  EXPECT_FALSE(groupKSteps(*e4m3, 4).has_value());
}

// The 4 K steps of a 64-column atom grouped (what Q is stored in and the
// K tile's chunks are read in with ChipTuning::wgmmaRegisterA): lane l
// holds K 16 (l % 4) .. + 15 of its rows, so one 16-byte fp8 chunk a row
// and atom; the logical K index's bits (element, lane, row-half, step)
// land at 1, 16, 32, 2, 4, 8. B comes from shared memory: no layout.
TEST(Wgmma, RegisterAGroupedOverAnAtom) {
  const MatrixInstr *mi =
      lookupMatrixInstr("wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16");
  ASSERT_NE(mi, nullptr);
  std::optional<GroupedOperands> g = groupKSteps(*mi, 4);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->k, 64);
  EXPECT_EQ(g->kRun, 16);
  EXPECT_EQ(g->logicalBitTo, (std::vector<int64_t>{1, 16, 32, 2, 4, 8}));
  EXPECT_TRUE(g->bLane.empty() && g->bElem.empty());
  LaneLayout a = g->a();
  for (int64_t l = 0; l < 32; ++l) {
    std::set<int64_t> cols;
    for (int64_t i = 0; i < a.elemsPerLane(); ++i) {
      Coord c = a.map(l, i);
      EXPECT_EQ(c.row % 8, l / 4);
      cols.insert(c.col);
      // Step s's element i is the instruction's element i at logical K
      // 16 s + its k, which the grouping moves to column physicalK.
      int64_t s = i / 8, e = i % 8;
      Coord ptx = mi->aRegisters.map(l, e);
      EXPECT_EQ(c.row, ptx.row);
      EXPECT_EQ(c.col, g->physicalK(16 * s + ptx.col));
    }
    EXPECT_EQ(*cols.begin(), 16 * (l % 4));
    EXPECT_EQ(*cols.rbegin(), 16 * (l % 4) + 15);
  }
}

// V as wgmma's register A (ChipTuning::wgmmaRegisterV, PairedVMap): V's
// bytes stored in paired columns in the 64-byte swizzle, read by
// ldmatrix.x4.trans (PTX ISA: lane l addresses row l % 8 of matrix l / 8;
// with .trans lane l receives elements (2 (l % 4), l / 4) and
// (2 (l % 4) + 1, l / 4) of each 8 x 8 matrix of 16-bit words, the first
// in the low half), then one prmt: every fragment element must be
// V[token][dim] at the PTX fragment's (row = dim, column = token).
namespace {
uint32_t prmt(uint32_t lo, uint32_t hi, uint32_t sel) {
  uint64_t bytes = uint64_t(hi) << 32 | lo;
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i)
    out |= uint32_t(bytes >> (8 * ((sel >> (4 * i)) & 7)) & 0xFF) << (8 * i);
  return out;
}
} // namespace

TEST(PairedV, LdmatrixTransFeedsTheRegisterAFragment) {
  const MatrixInstr *mi =
      lookupMatrixInstr("wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16");
  ASSERT_NE(mi, nullptr);
  const int64_t tokens = 64, dims = 512;
  // A byte's identity: (token, dim) in 8 + 8 bits would not fit a byte,
  // so the smem model holds the identity and bytes are its index.
  std::vector<int64_t> smem(tokens * dims, -1);
  // The stores: one 16-byte chunk per (token, group of 16 dims), each
  // source word lo / lo + 2 permuted by storeSelector.
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t g = 0; g < dims / 16; ++g) {
      uint32_t src[4], ids[16];
      for (int64_t c = 0; c < 16; ++c)
        ids[c] = uint32_t(c);
      for (int64_t w = 0; w < 4; ++w)
        src[w] = ids[4 * w] | ids[4 * w + 1] << 8 | ids[4 * w + 2] << 16 |
                 ids[4 * w + 3] << 24;
      for (int64_t w = 0; w < 4; ++w) {
        int64_t lo = PairedVMap::sourceLo(w);
        uint32_t word =
            prmt(src[lo], src[lo + 2], PairedVMap::storeSelector(w));
        for (int64_t k = 0; k < 4; ++k) {
          int64_t c = (word >> (8 * k)) & 0xFF;
          EXPECT_EQ(PairedVMap::storedByte(c), 4 * w + k);
          smem[smemSwizzledOffset(t, 16 * g, tokens, 1) + 4 * w + k] =
              t * dims + 16 * g + c;
        }
      }
    }
  for (int64_t v : smem)
    ASSERT_GE(v, 0);
  // The reads: warp w, instruction tile j, K steps s, s + 1.
  for (int64_t w = 0; w < 4; ++w)
    for (int64_t j = 0; j < dims / 64; ++j)
      for (int64_t s = 0; s < tokens / 16; s += 2) {
        int64_t addr[32];
        for (int64_t l = 0; l < 32; ++l)
          addr[l] = smemSwizzledOffset(16 * s + PairedVMap::ldmatrixRow(l),
                                       64 * j + 16 * w, tokens, 1);
        // Each matrix's 8 rows hit 8 different 16-byte bank groups.
        for (int64_t q = 0; q < 4; ++q) {
          std::set<int64_t> groups;
          for (int64_t r = 0; r < 8; ++r)
            groups.insert(addr[8 * q + r] / 16 % 8);
          EXPECT_EQ(groups.size(), 8u) << "w " << w << " j " << j;
        }
        for (int64_t l = 0; l < 32; ++l)
          for (int64_t q = 0; q < 4; ++q) {
            // Register q of lane l: two words, bytes as identities.
            int64_t byteIds[4];
            for (int64_t h = 0; h < 2; ++h)
              for (int64_t e = 0; e < 2; ++e)
                byteIds[2 * h + e] =
                    smem[addr[8 * q + 2 * (l % 4) + h] + 2 * (l / 4) + e];
            uint32_t lo = 0 | 1 << 8 | 2 << 16 | 3u << 24;
            uint32_t y = prmt(lo, 0, PairedVMap::fragmentSelector);
            for (int64_t half = 0; half < 2; ++half)
              for (int64_t e = 0; e < 2; ++e) {
                int64_t id = byteIds[(y >> (8 * (2 * half + e))) & 0xFF];
                // Fragment register 2 (q % 2) + half of step s + q / 2,
                // element e of it.
                int64_t elem = 2 * (2 * (q % 2) + half) + e;
                Coord want = mi->aRegisters.map(l, elem);
                EXPECT_EQ(id / dims, 16 * (s + q / 2) + want.col)
                    << "lane " << l << " q " << q;
                EXPECT_EQ(id % dims, 64 * j + 16 * w + want.row)
                    << "lane " << l << " q " << q;
              }
          }
      }
  // The stores of a warp's round (RegisterTileMap, warpRows: lanes 4 r ..
  // 4 r + 3 one row's atom, rows 16 w + l / 4): each quarter-warp's 8
  // chunks hit 8 different 16-byte bank groups.
  RegisterTileMap map{tokens, 576, 64, 4, 32, /*warpRows=*/true};
  for (int64_t w = 0; w < 4; ++w)
    for (int64_t r = 0; r < map.rounds(); ++r)
      for (int64_t quarter = 0; quarter < 4; ++quarter) {
        std::set<int64_t> groups;
        for (int64_t l = 8 * quarter; l < 8 * quarter + 8; ++l) {
          int64_t row = map.baseRow(w, l) + map.roundRow(r);
          int64_t col = map.roundByte(r) + map.baseByte(l);
          groups.insert(smemSwizzledOffset(row, col, tokens, 1) / 16 % 8);
        }
        EXPECT_EQ(groups.size(), 8u) << "w " << w << " round " << r;
      }
}
