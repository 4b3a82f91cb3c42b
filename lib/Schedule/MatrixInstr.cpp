//===- MatrixInstr.cpp - matrix-instruction descriptors -------------------===//
//
// Lane layouts of ../shared/notes/matrix-layouts.md written as linear-layout
// bases. Sources per instruction are listed there (CDNA3/CDNA4 ISA guides,
// PTX ISA); test/unit/MatrixInstrTest.cpp checks every descriptor against an
// independently written model of the instruction.
//
//===----------------------------------------------------------------------===//
#include "mla/MatrixInstr.h"

#include <map>

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir::mla;

unsigned mlir::mla::bitWidth(MatrixElem e) {
  switch (e) {
  case MatrixElem::BF16:
  case MatrixElem::F16:
    return 16;
  case MatrixElem::F8E4M3FN:
  case MatrixElem::F8E4M3FNUZ:
    return 8;
  case MatrixElem::F32:
    return 32;
  }
  return 0;
}

Coord LaneLayout::map(int64_t lane, int64_t elem) const {
  Coord c{0, 0};
  for (size_t j = 0; j < laneBases.size(); ++j)
    if (lane >> j & 1) {
      c.row += laneBases[j].row;
      c.col += laneBases[j].col;
    }
  for (size_t j = 0; j < elemBases.size(); ++j)
    if (elem >> j & 1) {
      c.row += elemBases[j].row;
      c.col += elemBases[j].col;
    }
  return c;
}

namespace {

// Shared 16x16 accumulator (ACC16): m = 4 * (l / 16) + i, n = l % 16.
const Coord kAcc16Lane[] = {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {4, 0}, {8, 0}};
const Coord kAcc16Elem[] = {{1, 0}, {2, 0}};

// MFMA 16x16xK with K/4 contiguous elements per lane (K_L = K / 4):
// A: m = l % 16, k = K_L * (l / 16) + i;  B: k as A, n = l % 16.
const Coord kA16x16x16Lane[] = {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 4}, {0, 8}};
const Coord kA16x16x16Elem[] = {{0, 1}, {0, 2}};
const Coord kB16x16x16Lane[] = {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {4, 0}, {8, 0}};
const Coord kB16x16x16Elem[] = {{1, 0}, {2, 0}};

const Coord kA16x16x32Lane[] = {{1, 0}, {2, 0}, {4, 0},
                                {8, 0}, {0, 8}, {0, 16}};
const Coord kA16x16x32Elem[] = {{0, 1}, {0, 2}, {0, 4}};
const Coord kB16x16x32Lane[] = {{0, 1}, {0, 2}, {0, 4},
                                {0, 8}, {8, 0}, {16, 0}};
const Coord kB16x16x32Elem[] = {{1, 0}, {2, 0}, {4, 0}};

// f8f6f4 16x16x128 with FP8 operands: interleaved K,
// k = 16 * (l / 16) + i % 16 + 64 * (i / 16).
const Coord kA16x16x128Lane[] = {{1, 0}, {2, 0},  {4, 0},
                                 {8, 0}, {0, 16}, {0, 32}};
const Coord kA16x16x128Elem[] = {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 64}};
const Coord kB16x16x128Lane[] = {{0, 1}, {0, 2},  {0, 4},
                                 {0, 8}, {16, 0}, {32, 0}};
const Coord kB16x16x128Elem[] = {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {64, 0}};

// NVIDIA mma.sync m16n8k16 (g = l >> 2, t = l & 3):
// A: m = g + 8 * ((i >> 1) & 1), k = 2t + (i & 1) + 8 * (i >> 2)
// B: k = 2t + (i & 1) + 8 * (i >> 1), n = g
// C: m = g + 8 * (i >> 1), n = 2t + (i & 1)
const Coord kNvALane[] = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
const Coord kNvAElem[] = {{0, 1}, {8, 0}, {0, 8}};
const Coord kNvBLane[] = {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}};
const Coord kNvBElem[] = {{1, 0}, {8, 0}};
const Coord kNvCLane[] = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
const Coord kNvCElem[] = {{0, 1}, {8, 0}};

constexpr LaneLayout acc16{kAcc16Lane, kAcc16Elem, 16, 16};

const MatrixInstr kMfma16x16x16Bf16{"v_mfma_f32_16x16x16_bf16",
                                    16,
                                    16,
                                    16,
                                    64,
                                    MatrixElem::BF16,
                                    MatrixElem::F32,
                                    {kA16x16x16Lane, kA16x16x16Elem, 16, 16},
                                    {kB16x16x16Lane, kB16x16x16Elem, 16, 16},
                                    acc16};
const MatrixInstr kMfma16x16x32Bf16{"v_mfma_f32_16x16x32_bf16",
                                    16,
                                    16,
                                    32,
                                    64,
                                    MatrixElem::BF16,
                                    MatrixElem::F32,
                                    {kA16x16x32Lane, kA16x16x32Elem, 16, 32},
                                    {kB16x16x32Lane, kB16x16x32Elem, 32, 16},
                                    acc16};
// The f16 forms share their bf16 twins' lane layouts (same ISA tables).
const MatrixInstr kMfma16x16x16F16{"v_mfma_f32_16x16x16_f16",
                                   16,
                                   16,
                                   16,
                                   64,
                                   MatrixElem::F16,
                                   MatrixElem::F32,
                                   {kA16x16x16Lane, kA16x16x16Elem, 16, 16},
                                   {kB16x16x16Lane, kB16x16x16Elem, 16, 16},
                                   acc16};
const MatrixInstr kMfma16x16x32F16{"v_mfma_f32_16x16x32_f16",
                                   16,
                                   16,
                                   32,
                                   64,
                                   MatrixElem::F16,
                                   MatrixElem::F32,
                                   {kA16x16x32Lane, kA16x16x32Elem, 16, 32},
                                   {kB16x16x32Lane, kB16x16x32Elem, 32, 16},
                                   acc16};
const MatrixInstr kMfma16x16x32Fp8Fn{"v_mfma_f32_16x16x32_fp8_fp8",
                                     16,
                                     16,
                                     32,
                                     64,
                                     MatrixElem::F8E4M3FN,
                                     MatrixElem::F32,
                                     {kA16x16x32Lane, kA16x16x32Elem, 16, 32},
                                     {kB16x16x32Lane, kB16x16x32Elem, 32, 16},
                                     acc16};
const MatrixInstr kMfma16x16x32Fp8Fnuz{"v_mfma_f32_16x16x32_fp8_fp8 (FNUZ)",
                                       16,
                                       16,
                                       32,
                                       64,
                                       MatrixElem::F8E4M3FNUZ,
                                       MatrixElem::F32,
                                       {kA16x16x32Lane, kA16x16x32Elem, 16, 32},
                                       {kB16x16x32Lane, kB16x16x32Elem, 32, 16},
                                       acc16};
const MatrixInstr kMfma16x16x128F8f6f4{
    "v_mfma_f32_16x16x128_f8f6f4",
    16,
    16,
    128,
    64,
    MatrixElem::F8E4M3FN,
    MatrixElem::F32,
    {kA16x16x128Lane, kA16x16x128Elem, 16, 128},
    {kB16x16x128Lane, kB16x16x128Elem, 128, 16},
    acc16};
const MatrixInstr kMmaSyncM16n8k16Bf16{
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    16,
    8,
    16,
    32,
    MatrixElem::BF16,
    MatrixElem::F32,
    {kNvALane, kNvAElem, 16, 16},
    {kNvBLane, kNvBElem, 16, 8},
    {kNvCLane, kNvCElem, 16, 8},
    /*aByLdmatrix=*/true};
const MatrixInstr kMmaSyncM16n8k16F16{
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    16,
    8,
    16,
    32,
    MatrixElem::F16,
    MatrixElem::F32,
    {kNvALane, kNvAElem, 16, 16},
    {kNvBLane, kNvBElem, 16, 8},
    {kNvCLane, kNvCElem, 16, 8},
    /*aByLdmatrix=*/true};

// NVIDIA wgmma m64nNk16 (sm_90a), one warp's view, transposed (see
// MatrixInstr::smemOperands). The instruction's accumulator: thread
// t = 32 w + 4 g + q, register i holds D[m][n] with
// m = 16 w + g + 8 ((i >> 1) & 1), n = 2 q + (i & 1) + 8 (i >> 2)
// (PTX ISA, "Register fragment: matrix D", m64nNk16). Transposed, the
// lowering's row is n and its column m - 16 w: a warp holds 16 columns.
const Coord kWgCLane[] = {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}};
const Coord kWgCElem[] = {{1, 0}, {0, 8}, {8, 0}};
const MatrixInstr kWgmmaM64k16Bf16{
    "wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16",
    16,
    16,
    16,
    32,
    MatrixElem::BF16,
    MatrixElem::F32,
    {{}, {}, 16, 16},
    {{}, {}, 16, 16},
    {kWgCLane, kWgCElem, 16, 16},
    /*aByLdmatrix=*/false,
    /*warpsPerInstr=*/4,
    /*smemOperands=*/true,
    /*aRegisters=*/{kNvALane, kNvAElem, 16, 16}};
const MatrixInstr kWgmmaM64k16F16{
    "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16",
    16,
    16,
    16,
    32,
    MatrixElem::F16,
    MatrixElem::F32,
    {{}, {}, 16, 16},
    {{}, {}, 16, 16},
    {kWgCLane, kWgCElem, 16, 16},
    /*aByLdmatrix=*/false,
    /*warpsPerInstr=*/4,
    /*smemOperands=*/true,
    /*aRegisters=*/{kNvALane, kNvAElem, 16, 16}};

// wgmma m64nNk32 with e4m3 (OCP) operands: K = 32 bytes a step, both
// operands K-major (the PTX ISA allows no MN-major fp8), in the 64-byte
// swizzle (smemSwizzledOffset with 1-byte elements); the accumulator is the
// 16-bit forms' (PTX ISA, "Register fragment: matrix D").
const MatrixInstr kWgmmaM64k32E4m3{
    "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3",
    16,
    16,
    32,
    32,
    MatrixElem::F8E4M3FN,
    MatrixElem::F32,
    {{}, {}, 16, 32},
    {{}, {}, 32, 16},
    {kWgCLane, kWgCElem, 16, 16},
    /*aByLdmatrix=*/false,
    /*warpsPerInstr=*/4,
    /*smemOperands=*/true};

const MatrixInstr *const kAll[] = {
    &kMfma16x16x16Bf16,    &kMfma16x16x32Bf16,    &kMfma16x16x16F16,
    &kMfma16x16x32F16,     &kMfma16x16x32Fp8Fn,   &kMfma16x16x32Fp8Fnuz,
    &kMfma16x16x128F8f6f4, &kMmaSyncM16n8k16Bf16, &kMmaSyncM16n8k16F16,
    &kWgmmaM64k16Bf16,     &kWgmmaM64k16F16,      &kWgmmaM64k32E4m3};

} // namespace

std::optional<TransposedReads>
mlir::mla::transposedReads(const LaneLayout &layout, unsigned elemBits) {
  if (elemBits != 8 && elemBits != 16)
    return std::nullopt;
  // Rows of the block (= elements per read), and lanes whose 8 bytes make
  // one of them.
  int64_t rows = 64 / elemBits, perRow = 16 / rows;
  int64_t runBits = llvm::Log2_64(rows);
  if (layout.elemsPerLane() % rows || layout.laneBases.size() < 4)
    return std::nullopt;
  for (size_t e = 0; e < layout.elemBases.size(); ++e) {
    Coord c = layout.elemBases[e];
    if (int64_t(e) < runBits ? !(c == Coord{int64_t(1) << e, 0}) : c.col != 0)
      return std::nullopt;
  }
  for (size_t j = 0; j < layout.laneBases.size(); ++j) {
    Coord c = layout.laneBases[j];
    if (j < 4 ? !(c == Coord{0, int64_t(1) << j}) : c.col != 0)
      return std::nullopt;
  }
  TransposedReads t;
  t.perRead = rows;
  // Within a group: lane i addresses block row i / perRow (K) and the
  // (i mod perRow)-th 8 bytes of it (N: `rows` elements each).
  for (int64_t j = 0; j < 4; ++j) {
    int64_t bit = int64_t(1) << j;
    t.laneBases.push_back(bit < perRow ? Coord{0, bit * rows}
                                       : Coord{bit / perRow, 0});
  }
  for (size_t j = 4; j < layout.laneBases.size(); ++j)
    t.laneBases.push_back(layout.laneBases[j]);
  for (int64_t r = 0; r < layout.elemsPerLane() / rows; ++r)
    t.runOffsets.push_back(layout.map(0, r * rows));
  return t;
}

int64_t mlir::mla::smemSwizzledOffset(int64_t row, int64_t col, int64_t rows,
                                      int64_t elemBytes) {
  if (elemBytes == 1)
    return (col / 64) * rows * 64 + row * 64 +
           (((col % 64) / 16) ^ ((row / 2) % 4)) * 16 + col % 16;
  return (col / 64) * rows * 128 + row * 128 +
         (((col % 64) / 8) ^ (row % 8)) * 16 + (col % 8) * 2;
}

bool mlir::mla::RegisterTileMap::valid() const {
  if (atomBytes < 16 || atomBytes % 16 || 128 % atomBytes || wave <= 0 ||
      wave % lanesPerRow() || warps <= 0 || rowBytes % atomBytes)
    return false;
  if (warpRows && (rowsPerRound() != 8 || rows != 16 * warps))
    return false;
  return rowsPerRound() % 8 == 0 && rows % (rowsPerRound() * warps) == 0;
}

uint64_t mlir::mla::wgmmaDescriptor(uint32_t addr, int64_t leadingBytes,
                                    int64_t strideBytes, int64_t swizzleBytes) {
  auto field = [](uint64_t bytes) { return (bytes >> 4) & 0x3FFF; };
  uint64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : 3;
  return field(addr) | field(uint64_t(leadingBytes)) << 16 |
         field(uint64_t(strideBytes)) << 32 | mode << 62;
}

llvm::ArrayRef<const MatrixInstr *> mlir::mla::knownMatrixInstrs() {
  return kAll;
}

static bool mutateLayoutsForTesting = false;

void mlir::mla::setMatrixLayoutMutationForTesting(bool on) {
  mutateLayoutsForTesting = on;
}

/// The test mutation of an AMD descriptor: B's first two lane bases
/// swapped (columns n = 1 and n = 2 of every B operand trade lanes). Still
/// one lane per element, so the lowering accepts it; the product is wrong.
static const MatrixInstr *mutated(const MatrixInstr *mi) {
  static std::map<const MatrixInstr *,
                  std::pair<MatrixInstr, std::vector<Coord>>>
      copies;
  auto it = copies.find(mi);
  if (it == copies.end()) {
    std::vector<Coord> lanes(mi->b.laneBases.begin(), mi->b.laneBases.end());
    std::swap(lanes[0], lanes[1]);
    it = copies.emplace(mi, std::make_pair(*mi, std::move(lanes))).first;
    it->second.first.b.laneBases = it->second.second;
  }
  return &it->second.first;
}

const MatrixInstr *mlir::mla::lookupMatrixInstr(llvm::StringRef name) {
  for (const MatrixInstr *mi : kAll)
    if (mi->name == name)
      return mutateLayoutsForTesting && mi->waveSize == 64 ? mutated(mi) : mi;
  return nullptr;
}

std::optional<GroupedOperands> mlir::mla::groupKSteps(const MatrixInstr &mi,
                                                      int64_t steps) {
  if (steps < 1 || !llvm::isPowerOf2_64(steps))
    return std::nullopt;
  // K weights of an operand's element and lane bits (A: columns, B: rows);
  // every basis must lie along K or across it.
  auto kWeights = [](llvm::ArrayRef<Coord> bases, bool kIsCol,
                     std::vector<int64_t> &out) {
    for (Coord c : bases) {
      int64_t along = kIsCol ? c.col : c.row, across = kIsCol ? c.row : c.col;
      if (along && across)
        return false;
      if (along)
        out.push_back(along);
    }
    llvm::sort(out);
    return true;
  };
  // (wgmma: A in registers; B from shared memory, in any K order.)
  const LaneLayout &a = mi.smemOperands ? mi.aRegisters : mi.a;
  std::vector<int64_t> aElem, aLane, bElem, bLane;
  if (a.laneBases.empty() || !kWeights(a.elemBases, true, aElem) ||
      !kWeights(a.laneBases, true, aLane))
    return std::nullopt;
  if (mi.smemOperands) {
    bElem = aElem;
    bLane = aLane;
  } else if (!kWeights(mi.b.elemBases, false, bElem) ||
             !kWeights(mi.b.laneBases, false, bLane)) {
    return std::nullopt;
  }
  if (aElem != bElem || aLane != bLane)
    return std::nullopt;
  // The K bits must be distinct powers of two covering 0 .. k - 1.
  int64_t covered = 0;
  for (int64_t w : llvm::concat<int64_t>(aElem, aLane)) {
    if (!llvm::isPowerOf2_64(w) || (covered & w))
      return std::nullopt;
    covered |= w;
  }
  if (covered != mi.k - 1)
    return std::nullopt;
  // New K weights: element bits first (runs of kRun / steps), then the step
  // bits, then lane bits (which lane holds which run).
  int64_t run = int64_t(1) << aElem.size();
  auto remap = [&](int64_t w) -> int64_t {
    for (auto [i, e] : llvm::enumerate(aElem))
      if (e == w)
        return int64_t(1) << i;
    for (auto [i, e] : llvm::enumerate(aLane))
      if (e == w)
        return run * steps << i;
    return 0;
  };
  auto mapBases = [&](llvm::ArrayRef<Coord> bases, bool kIsCol) {
    std::vector<Coord> out;
    for (Coord c : bases) {
      int64_t &along = kIsCol ? c.col : c.row;
      along = remap(along);
      out.push_back(c);
    }
    return out;
  };
  GroupedOperands g;
  g.steps = steps;
  g.m = mi.m;
  g.n = mi.n;
  g.k = mi.k * steps;
  g.kRun = run * steps;
  g.aLane = mapBases(a.laneBases, true);
  g.aElem = mapBases(a.elemBases, true);
  if (!mi.smemOperands) {
    g.bLane = mapBases(mi.b.laneBases, false);
    g.bElem = mapBases(mi.b.elemBases, false);
  }
  for (int64_t s = 1; s < steps; s *= 2) {
    g.aElem.push_back({0, run * s});
    if (!mi.smemOperands)
      g.bElem.push_back({run * s, 0});
  }
  for (int64_t w = 1; w < mi.k; w *= 2)
    g.logicalBitTo.push_back(remap(w));
  for (int64_t s = 1; s < steps; s *= 2)
    g.logicalBitTo.push_back(run * s);
  return g;
}

int64_t GroupedOperands::physicalK(int64_t logical) const {
  int64_t in = logical % k, out = logical - in;
  for (auto [i, to] : llvm::enumerate(logicalBitTo))
    if (in >> i & 1)
      out += to;
  return out;
}
