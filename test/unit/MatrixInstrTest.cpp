//===- MatrixInstrTest.cpp - lane layouts against a model of the hardware -===//
//
// For every descriptor: (1) every matrix element is held by exactly one
// (lane, element) pair; (2) its maps equal the ISA / PTX formulas, written
// here independently as arithmetic; (3) a CPU model of the instruction fed
// through the descriptor's maps — operands packed into 32-bit registers as
// the compiler would, unpacked and placed by the model's own formulas —
// equals a plain matrix product, exactly, on small integers.
//
//===----------------------------------------------------------------------===//
#include "mla/MatrixInstr.h"
#include "mla/Reference.h"
#include "mla/Target.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <set>

using namespace mlir::mla;

namespace {

using Formula = std::function<Coord(int64_t lane, int64_t elem)>;

/// The hardware's view of one instruction, from the ISA / PTX text.
struct HardwareModel {
  Formula a, b, c;
};

// CDNA3/CDNA4 ISA 7.1.4 general rule for 16 x 16 x K (K_L = K / 4 items per
// lane): A lane m + 16 * (k / K_L) holds item k % K_L of row m.
Formula mfmaA(int64_t kl) {
  return [kl](int64_t l, int64_t i) {
    return Coord{l % 16, kl * (l / 16) + i};
  };
}
Formula mfmaB(int64_t kl) {
  return [kl](int64_t l, int64_t i) {
    return Coord{kl * (l / 16) + i, l % 16};
  };
}
// ACC16: m = 4 * (l / 16) + i, n = l % 16.
Coord acc16(int64_t l, int64_t i) { return {4 * (l / 16) + i, l % 16}; }
// CDNA4 ISA 7.1.5.1 FP8 table of 16x16x128: VGPRs 0-3 hold K 16g..16g+15,
// VGPRs 4-7 hold K 64+16g.., g = l / 16.
Coord f8f6f4A(int64_t l, int64_t i) {
  return {l % 16, 16 * (l / 16) + i % 16 + 64 * (i / 16)};
}
Coord f8f6f4B(int64_t l, int64_t i) {
  return {16 * (l / 16) + i % 16 + 64 * (i / 16), l % 16};
}
// PTX ISA, mma.m16n8k16 fragments (g = l >> 2, t = l & 3).
Coord nvA(int64_t l, int64_t i) {
  return {(l >> 2) + 8 * ((i >> 1) & 1), 2 * (l & 3) + (i & 1) + 8 * (i >> 2)};
}
Coord nvB(int64_t l, int64_t i) {
  return {2 * (l & 3) + (i & 1) + 8 * (i >> 1), l >> 2};
}
Coord nvC(int64_t l, int64_t i) {
  return {(l >> 2) + 8 * (i >> 1), 2 * (l & 3) + (i & 1)};
}

HardwareModel modelOf(const MatrixInstr &mi) {
  if (mi.name.starts_with("mma.sync"))
    return {nvA, nvB, nvC};
  if (mi.name == "v_mfma_f32_16x16x128_f8f6f4")
    return {f8f6f4A, f8f6f4B, acc16};
  return {mfmaA(mi.k / 4), mfmaB(mi.k / 4), acc16};
}

/// Encodes a small integer in the element type (exact for |v| <= 8).
uint32_t encode(MatrixElem t, double v) {
  switch (t) {
  case MatrixElem::BF16:
    return mla_ref::floatToBf16(static_cast<float>(v));
  case MatrixElem::F16:
    return mla_ref::floatToF16(static_cast<float>(v));
  case MatrixElem::F8E4M3FN:
    return mla_ref::encodeFp8(v, mla_ref::Fp8Format::E4M3FN);
  case MatrixElem::F8E4M3FNUZ:
    return mla_ref::encodeFp8(v, mla_ref::Fp8Format::E4M3FNUZ);
  case MatrixElem::F32: {
    float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  }
  return 0;
}

double decode(MatrixElem t, uint32_t bits) {
  switch (t) {
  case MatrixElem::BF16:
    return mla_ref::bf16ToFloat(static_cast<uint16_t>(bits));
  case MatrixElem::F16:
    return mla_ref::f16ToFloat(static_cast<uint16_t>(bits));
  case MatrixElem::F8E4M3FN:
    return mla_ref::decodeFp8(static_cast<uint8_t>(bits),
                              mla_ref::Fp8Format::E4M3FN);
  case MatrixElem::F8E4M3FNUZ:
    return mla_ref::decodeFp8(static_cast<uint8_t>(bits),
                              mla_ref::Fp8Format::E4M3FNUZ);
  case MatrixElem::F32: {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  }
  return 0;
}

using Matrix = std::vector<std::vector<double>>;
using Registers = std::vector<std::vector<uint32_t>>; // [lane][register]

Matrix randomMatrix(int64_t rows, int64_t cols, std::mt19937 &rng) {
  std::uniform_int_distribution<int> d(-3, 3);
  Matrix m(rows, std::vector<double>(cols));
  for (auto &r : m)
    for (double &v : r)
      v = d(rng);
  return m;
}

/// Compiler side: packs matrix `m` into per-lane registers with layout `l`.
Registers pack(const LaneLayout &l, MatrixElem t, const Matrix &m) {
  unsigned bits = bitWidth(t);
  int64_t regs = (l.elemsPerLane() * bits + 31) / 32;
  Registers r(l.lanes(), std::vector<uint32_t>(regs, 0));
  for (int64_t lane = 0; lane < l.lanes(); ++lane)
    for (int64_t i = 0; i < l.elemsPerLane(); ++i) {
      Coord c = l.map(lane, i);
      uint32_t v =
          encode(t, m[c.row][c.col]) & (bits == 32 ? ~0u : ((1u << bits) - 1));
      r[lane][i * bits / 32] |= v << ((i * bits) % 32);
    }
  return r;
}

/// Hardware side: unpacks registers and places elements by formula `f`.
Matrix unpack(const Registers &r, MatrixElem t, const Formula &f, int64_t rows,
              int64_t cols, int64_t elemsPerLane) {
  unsigned bits = bitWidth(t);
  Matrix m(rows, std::vector<double>(cols, NAN));
  for (size_t lane = 0; lane < r.size(); ++lane)
    for (int64_t i = 0; i < elemsPerLane; ++i) {
      uint32_t word = r[lane][i * bits / 32] >> ((i * bits) % 32);
      if (bits < 32)
        word &= (1u << bits) - 1;
      Coord c = f(lane, i);
      m[c.row][c.col] = decode(t, word);
    }
  return m;
}

/// Block scales for the SCALE form of f8f6f4: exponent per (row or column,
/// 32-wide K block).
struct Scales {
  std::vector<std::vector<int>> a, b; // [m][k / 32], [n][k / 32]
};

/// The instruction: D = C + sum_k A[m][k] B[k][n] (* 2^(sa + sb) per block).
Matrix execute(const Matrix &a, const Matrix &b, const Matrix &c,
               const Scales *scales) {
  Matrix d = c;
  for (size_t m = 0; m < d.size(); ++m)
    for (size_t n = 0; n < d[0].size(); ++n)
      for (size_t k = 0; k < b.size(); ++k) {
        double s =
            scales
                ? std::ldexp(1.0, scales->a[m][k / 32] + scales->b[n][k / 32])
                : 1;
        d[m][n] += a[m][k] * b[k][n] * s;
      }
  return d;
}

/// Runs `mi` through the compiler's maps (`desc`) and the hardware model,
/// returns max |D - expected|.
double roundTrip(const MatrixInstr &mi, const LaneLayout &descA,
                 const LaneLayout &descB, const Scales *scales, uint32_t seed) {
  std::mt19937 rng(seed);
  HardwareModel hw = modelOf(mi);
  Matrix a = randomMatrix(mi.m, mi.k, rng), b = randomMatrix(mi.k, mi.n, rng);
  Matrix c = randomMatrix(mi.m, mi.n, rng);
  Matrix ha = unpack(pack(descA, mi.abType, a), mi.abType, hw.a, mi.m, mi.k,
                     descA.elemsPerLane());
  Matrix hb = unpack(pack(descB, mi.abType, b), mi.abType, hw.b, mi.k, mi.n,
                     descB.elemsPerLane());
  Matrix hc = unpack(pack(mi.c, mi.accType, c), mi.accType, hw.c, mi.m, mi.n,
                     mi.c.elemsPerLane());
  Matrix hd = execute(ha, hb, hc, scales);
  // Hardware writes D through its C formula; the compiler reads it back
  // through the descriptor.
  Registers dRegs(mi.c.lanes(), std::vector<uint32_t>(mi.c.elemsPerLane()));
  for (int64_t lane = 0; lane < mi.c.lanes(); ++lane)
    for (int64_t i = 0; i < mi.c.elemsPerLane(); ++i) {
      Coord co = hw.c(lane, i);
      dRegs[lane][i] = encode(MatrixElem::F32, hd[co.row][co.col]);
    }
  Matrix expected = execute(a, b, c, scales);
  double worst = 0;
  for (int64_t lane = 0; lane < mi.c.lanes(); ++lane)
    for (int64_t i = 0; i < mi.c.elemsPerLane(); ++i) {
      Coord co = mi.c.map(lane, i);
      worst =
          std::max(worst, std::fabs(decode(MatrixElem::F32, dRegs[lane][i]) -
                                    expected[co.row][co.col]));
    }
  return worst;
}

class Descriptors : public ::testing::TestWithParam<const MatrixInstr *> {};

TEST_P(Descriptors, EveryElementHeldOnce) {
  const MatrixInstr &mi = *GetParam();
  EXPECT_EQ(mi.a.lanes(), mi.waveSize);
  EXPECT_EQ(mi.b.lanes(), mi.waveSize);
  EXPECT_EQ(mi.c.lanes(), mi.waveSize);
  for (const LaneLayout *l : {&mi.a, &mi.b, &mi.c}) {
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t lane = 0; lane < l->lanes(); ++lane)
      for (int64_t i = 0; i < l->elemsPerLane(); ++i) {
        Coord c = l->map(lane, i);
        ASSERT_GE(c.row, 0);
        ASSERT_LT(c.row, l->rows);
        ASSERT_GE(c.col, 0);
        ASSERT_LT(c.col, l->cols);
        EXPECT_TRUE(seen.insert({c.row, c.col}).second)
            << "(" << c.row << ", " << c.col << ") held twice";
      }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), l->rows * l->cols);
  }
  EXPECT_EQ(mi.a.rows, mi.m);
  EXPECT_EQ(mi.a.cols, mi.k);
  EXPECT_EQ(mi.b.rows, mi.k);
  EXPECT_EQ(mi.b.cols, mi.n);
}

TEST_P(Descriptors, MapsEqualTheISAFormulas) {
  const MatrixInstr &mi = *GetParam();
  HardwareModel hw = modelOf(mi);
  for (int64_t lane = 0; lane < mi.waveSize; ++lane) {
    for (int64_t i = 0; i < mi.a.elemsPerLane(); ++i)
      EXPECT_EQ(mi.a.map(lane, i), hw.a(lane, i))
          << "A lane " << lane << " elem " << i;
    for (int64_t i = 0; i < mi.b.elemsPerLane(); ++i)
      EXPECT_EQ(mi.b.map(lane, i), hw.b(lane, i))
          << "B lane " << lane << " elem " << i;
    for (int64_t i = 0; i < mi.c.elemsPerLane(); ++i)
      EXPECT_EQ(mi.c.map(lane, i), hw.c(lane, i))
          << "C lane " << lane << " elem " << i;
  }
}

TEST_P(Descriptors, CpuModelEqualsMatrixProduct) {
  const MatrixInstr &mi = *GetParam();
  for (uint32_t seed = 1; seed <= 3; ++seed)
    EXPECT_EQ(roundTrip(mi, mi.a, mi.b, nullptr, seed), 0.0) << "seed " << seed;
}

// Grouped K steps (groupKSteps): the grouped layouts hold every element of
// the (m, steps * k) and (steps * k, n) operands once; feeding step j the
// grouped elements j * E .. j * E + E - 1 through the hardware model and
// summing over the steps gives the plain product (A and B permuted alike);
// each lane's B elements are runs of kRun adjacent along K.
TEST_P(Descriptors, GroupedKStepsKeepTheProduct) {
  const MatrixInstr &mi = *GetParam();
  HardwareModel hw = modelOf(mi);
  for (int64_t steps : {1, 2, 4, 8}) {
    SCOPED_TRACE("steps " + std::to_string(steps));
    std::optional<GroupedOperands> g = groupKSteps(mi, steps);
    ASSERT_TRUE(g.has_value());
    LaneLayout ga = g->a(), gb = g->b();
    ASSERT_EQ(ga.elemsPerLane(), steps * mi.a.elemsPerLane());
    ASSERT_EQ(gb.elemsPerLane(), steps * mi.b.elemsPerLane());
    for (const LaneLayout *l : {&ga, &gb}) {
      std::set<std::pair<int64_t, int64_t>> seen;
      for (int64_t lane = 0; lane < l->lanes(); ++lane)
        for (int64_t i = 0; i < l->elemsPerLane(); ++i) {
          Coord c = l->map(lane, i);
          ASSERT_TRUE(c.row >= 0 && c.row < l->rows && c.col >= 0 &&
                      c.col < l->cols);
          EXPECT_TRUE(seen.insert({c.row, c.col}).second);
        }
      EXPECT_EQ(static_cast<int64_t>(seen.size()), l->rows * l->cols);
    }
    for (int64_t lane = 0; lane < gb.lanes(); ++lane) {
      std::set<int64_t> ks;
      for (int64_t i = 0; i < gb.elemsPerLane(); ++i)
        ks.insert(gb.map(lane, i).row);
      for (int64_t k0 : ks) {
        if (k0 % g->kRun != 0)
          continue;
        for (int64_t d = 0; d < g->kRun; ++d) {
          EXPECT_TRUE(ks.count(k0 + d)) << "lane " << lane << " k " << k0 + d;
        }
      }
      EXPECT_EQ(static_cast<int64_t>(ks.size()) % g->kRun, 0);
    }
    std::mt19937 rng(steps);
    Matrix a = randomMatrix(mi.m, g->k, rng), b = randomMatrix(g->k, mi.n, rng);
    Matrix c = randomMatrix(mi.m, mi.n, rng), d = c;
    int64_t ea = mi.a.elemsPerLane(), eb = mi.b.elemsPerLane();
    for (int64_t j = 0; j < steps; ++j) {
      Matrix aj(mi.m, std::vector<double>(mi.k, NAN)),
          bj(mi.k, std::vector<double>(mi.n, NAN));
      for (int64_t lane = 0; lane < mi.waveSize; ++lane) {
        for (int64_t i = 0; i < ea; ++i) {
          Coord hc = hw.a(lane, i), src = ga.map(lane, j * ea + i);
          aj[hc.row][hc.col] = a[src.row][src.col];
        }
        for (int64_t i = 0; i < eb; ++i) {
          Coord hc = hw.b(lane, i), src = gb.map(lane, j * eb + i);
          bj[hc.row][hc.col] = b[src.row][src.col];
        }
      }
      d = execute(aj, bj, d, nullptr);
    }
    Matrix expected = execute(a, b, c, nullptr);
    for (int64_t r = 0; r < mi.m; ++r)
      for (int64_t col = 0; col < mi.n; ++col)
        EXPECT_EQ(d[r][col], expected[r][col])
            << "(" << r << ", " << col << ")";
  }
  EXPECT_FALSE(groupKSteps(mi, 3).has_value());
}

// physicalK names the permutation the grouped layouts apply: element i of
// step j sits at the grouped K index physicalK(j * k + its K index in the
// instruction's own layout), for A and B alike, and it is a bijection.
TEST_P(Descriptors, GroupedKStepsPhysicalK) {
  const MatrixInstr &mi = *GetParam();
  for (int64_t steps : {1, 2, 4, 8}) {
    auto g = groupKSteps(mi, steps);
    ASSERT_TRUE(g.has_value());
    LaneLayout ga = g->a(), gb = g->b();
    int64_t ea = mi.a.elemsPerLane(), eb = mi.b.elemsPerLane();
    for (int64_t lane = 0; lane < mi.waveSize; ++lane)
      for (int64_t j = 0; j < steps; ++j) {
        for (int64_t i = 0; i < ea; ++i) {
          EXPECT_EQ(ga.map(lane, j * ea + i).col,
                    g->physicalK(j * mi.k + mi.a.map(lane, i).col));
          EXPECT_EQ(ga.map(lane, j * ea + i).row, mi.a.map(lane, i).row);
        }
        for (int64_t i = 0; i < eb; ++i)
          EXPECT_EQ(gb.map(lane, j * eb + i).row,
                    g->physicalK(j * mi.k + mi.b.map(lane, i).row));
      }
    std::set<int64_t> seen;
    for (int64_t l = 0; l < 2 * g->k; ++l)
      seen.insert(g->physicalK(l));
    EXPECT_EQ(static_cast<int64_t>(seen.size()), 2 * g->k);
    EXPECT_EQ(*seen.rbegin(), 2 * g->k - 1);
  }
}

TEST(Descriptors, GroupedKStepsOfMmaSyncAreSixteenBytes) {
  // The case the sm_90 lowering uses: 4 steps of m16n8k16, lane t = l % 4
  // holds K 16t .. 16t + 15 of B column l / 4 (one 16-byte fp8 load).
  const MatrixInstr *mi =
      lookupMatrixInstr("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  ASSERT_NE(mi, nullptr);
  auto g = groupKSteps(*mi, 4);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->kRun, 16);
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t i = 0; i < 16; ++i)
      EXPECT_EQ(g->b().map(lane, i), (Coord{16 * (lane % 4) + i, lane / 4}));
}

/// The instructions whose operands come from registers (every one but
/// wgmma, whose descriptors the Wgmma tests below check).
static std::vector<const MatrixInstr *> registerOperandInstrs() {
  std::vector<const MatrixInstr *> out;
  for (const MatrixInstr *mi : knownMatrixInstrs())
    if (!mi->smemOperands)
      out.push_back(mi);
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllInstrs, Descriptors,
                         ::testing::ValuesIn(registerOperandInstrs()),
                         [](const auto &info) {
                           std::string s;
                           for (char ch : info.param->name)
                             s += std::isalnum(static_cast<unsigned char>(ch))
                                      ? ch
                                      : '_';
                           return s;
                         });

TEST(Descriptors, RegisterCounts) {
  // Operand sizes from the notes: bf16 16x16x32 is 4 VGPRs, fp8 16x16x32 is
  // 2, f8f6f4 16x16x128 is 8, mma.sync A is 4 and B 2 registers.
  auto regs = [](const MatrixInstr *mi, const LaneLayout &l) {
    return l.elemsPerLane() * bitWidth(mi->abType) / 32;
  };
  const MatrixInstr *bf16x32 = lookupMatrixInstr("v_mfma_f32_16x16x32_bf16");
  const MatrixInstr *fp8x32 = lookupMatrixInstr("v_mfma_f32_16x16x32_fp8_fp8");
  const MatrixInstr *f8x128 = lookupMatrixInstr("v_mfma_f32_16x16x128_f8f6f4");
  const MatrixInstr *nv =
      lookupMatrixInstr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
  ASSERT_TRUE(bf16x32 && fp8x32 && f8x128 && nv);
  EXPECT_EQ(regs(bf16x32, bf16x32->a), 4);
  EXPECT_EQ(regs(fp8x32, fp8x32->a), 2);
  EXPECT_EQ(regs(f8x128, f8x128->a), 8);
  EXPECT_EQ(regs(nv, nv->a), 4);
  EXPECT_EQ(regs(nv, nv->b), 2);
  EXPECT_EQ(nv->c.elemsPerLane(), 4);
}

// ldmatrix.x4 (PTX ISA, "Warp-level matrix load instruction: ldmatrix"):
// lanes 8j .. 8j + 7 address the rows of matrix j, and lane l receives
// row l / 4, elements 2 (l mod 4) and + 1 of every matrix j in register j.
// The compiler places matrix j at rows 8 (j mod 2), columns 8 (j / 2) of
// the A tile; for a descriptor that says aByLdmatrix, element e = 2j + h of
// its A layout must be exactly what ldmatrix puts in register j, half h.
TEST(Descriptors, LdmatrixX4MatchesALayout) {
  int flagged = 0;
  for (const MatrixInstr *mi : knownMatrixInstrs()) {
    if (!mi->aByLdmatrix)
      continue;
    ++flagged;
    EXPECT_EQ(bitWidth(mi->abType), 16u) << mi->name.str();
    ASSERT_EQ(mi->a.lanes(), 32) << mi->name.str();
    ASSERT_EQ(mi->a.elemsPerLane(), 8) << mi->name.str();
    for (int64_t l = 0; l < 32; ++l)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t h = 0; h < 2; ++h) {
          Coord ld{l / 4 + 8 * (j % 2), 2 * (l % 4) + h + 8 * (j / 2)};
          Coord got = mi->a.map(l, 2 * j + h);
          EXPECT_TRUE(got == ld)
              << mi->name.str() << " lane " << l << " register " << j;
        }
  }
  EXPECT_EQ(flagged, 2); // mma.sync m16n8k16 bf16 and f16
}

// The interleaved K of the FP8 f8f6f4 form matters only with block scales:
// a contiguous-K placement (k = 32 * (l / 16) + i, as IREE has it) relabels
// K consistently for A and B, so it passes unscaled and fails scaled.
TEST(Descriptors, F8f6f4InterleavedKMattersWithScales) {
  const MatrixInstr &mi = *lookupMatrixInstr("v_mfma_f32_16x16x128_f8f6f4");
  static const Coord contigALane[] = {{1, 0}, {2, 0},  {4, 0},
                                      {8, 0}, {0, 32}, {0, 64}};
  static const Coord contigAElem[] = {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}};
  static const Coord contigBLane[] = {{0, 1}, {0, 2},  {0, 4},
                                      {0, 8}, {32, 0}, {64, 0}};
  static const Coord contigBElem[] = {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {16, 0}};
  LaneLayout contigA{contigALane, contigAElem, 16, 128};
  LaneLayout contigB{contigBLane, contigBElem, 128, 16};

  Scales scales;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> e(-2, 2);
  scales.a.assign(16, std::vector<int>(4));
  scales.b.assign(16, std::vector<int>(4));
  for (auto &r : scales.a)
    for (int &v : r)
      v = e(rng);
  for (auto &r : scales.b)
    for (int &v : r)
      v = e(rng);

  EXPECT_EQ(roundTrip(mi, contigA, contigB, nullptr, 11), 0.0);
  EXPECT_GT(roundTrip(mi, contigA, contigB, &scales, 11), 0.0);
  EXPECT_EQ(roundTrip(mi, mi.a, mi.b, &scales, 11), 0.0);
}

// gfx950's transposing LDS reads (ds_read_b64_tr_b8 / _b16; the lane map
// of docs/Emulator.md): each group of 16 lanes reads 8 bytes per lane at
// the lane's own address, the 128 bytes lane after lane being a row-major
// block of 16 columns, and lane i receives column i, row r in element r.
// Modelled here on a K x N matrix stored row-major: wherever
// transposedReads accepts a B layout, the lanes reading at its addresses
// (plus each read's run offset) must receive exactly that layout's
// elements.
TEST(Descriptors, TransposedReadsGiveTheBLayout) {
  int fits = 0;
  for (const MatrixInstr *mi : registerOperandInstrs())
    for (unsigned bits : {8u, 16u}) {
      auto t = transposedReads(mi->b, bits);
      int64_t rows = 64 / bits;
      bool expected = mi->waveSize == 64 && mi->b.elemsPerLane() % rows == 0;
      EXPECT_EQ(t.has_value(), expected) << mi->name.str() << " " << bits;
      if (!t)
        continue;
      ++fits;
      EXPECT_EQ(t->perRead, rows);
      ASSERT_EQ(int64_t(t->runOffsets.size()), mi->b.elemsPerLane() / rows);
      LaneLayout addr{t->laneBases, {}, mi->b.rows, mi->b.cols};
      for (size_t run = 0; run < t->runOffsets.size(); ++run)
        for (int64_t g = 0; g < mi->b.lanes(); g += 16) {
          // block[r][c]: the (K, N) coordinate the group's reads put there.
          std::vector<Coord> block(rows * 16);
          for (int64_t i = 0; i < 16; ++i) {
            Coord first = addr.map(g + i, 0);
            first.row += t->runOffsets[run].row;
            first.col += t->runOffsets[run].col;
            for (int64_t e = 0; e < rows; ++e) // 8 bytes along N
              block[i * rows + e] = Coord{first.row, first.col + e};
          }
          for (int64_t i = 0; i < 16; ++i)
            for (int64_t r = 0; r < rows; ++r)
              EXPECT_TRUE(block[r * 16 + i] ==
                          mi->b.map(g + i, int64_t(run) * rows + r))
                  << mi->name.str() << " " << bits << "-bit lane " << g + i
                  << " element " << run * rows + r;
        }
    }
  // 16x16x32 B with 8-bit (one read) and 16-bit elements (two), 16x16x16
  // B with 16-bit ones, f8f6f4 16x16x128 B with 8-bit ones (four).
  EXPECT_GE(fits, 9);
  auto f8 =
      transposedReads(lookupMatrixInstr("v_mfma_f32_16x16x128_f8f6f4")->b, 8);
  ASSERT_TRUE(f8);
  EXPECT_EQ(f8->runOffsets.size(), 4u);
  EXPECT_FALSE(transposedReads(
      lookupMatrixInstr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")
          ->b,
      16));
}

TEST(Descriptors, ChipsListTheirInstructions) {
  for (const ChipInfo &chip : knownChips())
    for (const MatrixInstr *mi : chip.matrixInstrs()) {
      ASSERT_NE(mi, nullptr) << chip.name.str();
      EXPECT_EQ(mi->waveSize, chip.facts.waveSize) << chip.name.str();
    }
  auto has = [](llvm::StringRef chip, llvm::StringRef instr) {
    for (const MatrixInstr *mi : lookupChip(chip)->matrixInstrs())
      if (mi->name == instr)
        return true;
    return false;
  };
  EXPECT_TRUE(has("gfx950", "v_mfma_f32_16x16x32_fp8_fp8"));
  EXPECT_FALSE(has("gfx942", "v_mfma_f32_16x16x32_fp8_fp8"));
  EXPECT_TRUE(has("gfx942", "v_mfma_f32_16x16x32_fp8_fp8 (FNUZ)"));
  EXPECT_FALSE(has("gfx942", "v_mfma_f32_16x16x32_bf16"));
  EXPECT_FALSE(has("gfx942", "v_mfma_f32_16x16x32_f16"));
  for (llvm::StringRef chip : {"gfx950", "gfx942", "sm_90"}) {
    bool f16 = false;
    for (const MatrixInstr *mi : lookupChip(chip)->matrixInstrs())
      f16 |= mi->abType == MatrixElem::F16;
    EXPECT_TRUE(f16) << chip.str() << " has an f16 matrix instruction";
  }
  // The fp8 operand type of each chip's fp8 MFMA is the chip's flavour.
  for (llvm::StringRef chip : {"gfx950", "gfx942"})
    for (const MatrixInstr *mi : lookupChip(chip)->matrixInstrs()) {
      if (bitWidth(mi->abType) != 8)
        continue;
      EXPECT_EQ(mi->abType, lookupChip(chip)->facts.fp8 == Fp8Flavor::E4M3FN
                                ? MatrixElem::F8E4M3FN
                                : MatrixElem::F8E4M3FNUZ);
    }
}

} // namespace
