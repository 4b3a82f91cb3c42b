//===- MLALowerToGPU.cpp - tile kernels -> per-lane GPU code --------------===//
//
// Walks each kernel body in program order and gives every tile value a
// placement (see the pass description in Passes.td):
//
//   Smem      a row-major view of dynamic shared memory (+ row/col offsets)
//   Expr      an elementwise function of a Smem/Expr tile, evaluated on read
//   Acc       registers in the matrix instruction's accumulator layout; the
//             tile's columns are split evenly across the warps
//   RowSlice  a rank-1 row vector held in the accumulator's row layout: one
//             register per distinct row offset of the lane's elements
//   RowPartial  a row sum not yet summed across lanes and warps: one
//             register per row offset holding this lane's share (the online
//             softmax's running sum, completed once by the finalize)
//   Blocked   registers, runs of R adjacent elements round-robin over the
//             threads (R = 1: element e on thread e % T, register e / T)
//
// Target differences come from the chip descriptor (ChipInfo) and the
// matrix-instruction descriptor (MatrixInstr): lane layouts, wave size,
// element types. The few target-specific instructions are emitted in
// `GpuTarget` below, nowhere else.
//
//===----------------------------------------------------------------------===//
#include "mla/MLAOps.h"
#include "mla/MatrixInstr.h"
#include "mla/Passes.h"
#include "mla/Target.h"

#include "ScalarCodegen.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <limits>
#include <memory>

namespace mlir::mla {
#define GEN_PASS_DEF_MLALOWERTOGPU
#include "mla/Passes.h.inc"
} // namespace mlir::mla

using namespace mlir;
using namespace mlir::mla;

namespace {

constexpr float kLog2E = 1.44269504088896340736f;
/// The element type of `o`'s (tensor) result.
Type resultElt(Operation *o) {
  return cast<RankedTensorType>(o->getResult(0).getType()).getElementType();
}

/// Most rounds of 16-byte chunks per thread that a tile copy outside the KV
/// loop issues as straight-line loads before its stores (registers: 4 per
/// round).
constexpr int64_t kMaxStraightRounds = 16;

/// Bytes added to every shared-memory tile row (see Lowering::allocSmem).
constexpr int64_t kRowPadBytes = 16;

//===----------------------------------------------------------------------===//
// Target hooks: the only target-specific instructions.
//===----------------------------------------------------------------------===//

/// The bits of scalar `x` as a vector of type `t` (same width).
Value bitcastToVector(OpBuilder &b, Location loc, Value x, VectorType t) {
  Value one = vector::FromElementsOp::create(b, loc, VectorType::get({1}, x.getType()),
                                            ValueRange{x});
  return vector::BitCastOp::create(b, loc, t, one);
}

struct GpuTarget {
  const ChipInfo *chip;
  const MatrixInstr *mma;
  bool nvidia;

  /// Picks the bf16 matrix instruction with the deepest K of the chip.
  static FailureOr<GpuTarget> get(StringRef name, Operation *diagOp) {
    const ChipInfo *chip = lookupChip(name);
    if (!chip) {
      diagOp->emitError() << "unknown chip '" << name
                          << "' (known: " << knownChipNames() << ")";
      return failure();
    }
    const MatrixInstr *best = nullptr;
    for (const MatrixInstr *mi : chip->matrixInstrs())
      if (mi->abType == MatrixElem::BF16 && (!best || mi->k > best->k))
        best = mi;
    if (!best) {
      diagOp->emitError() << "chip '" << name
                          << "' has no bf16 matrix instruction to lower mla.dot";
      return failure();
    }
    if (chip->waveSize < 32) {
      diagOp->emitError() << "chip '" << name << "' is not a GPU";
      return failure();
    }
    return GpuTarget{chip, best, name.starts_with("sm_")};
  }

  /// The matrix instruction for a dot of `lhs` x `rhs` element types: an
  /// fp8 instruction of the operands' own format when both are that fp8
  /// type and the chip has one with the bf16 instruction's M, N and
  /// accumulator layout (so the accumulator tiles keep their layout) and at
  /// most 8 elements per lane (what amdgpu.mfma takes); else the bf16 one,
  /// operands converted.
  const MatrixInstr *instrFor(Type lhs, Type rhs) const {
    // The chip's deepest instruction with operands of type `want` and the
    // bf16 instruction's shape and accumulator layout.
    auto deepest = [&](MatrixElem want) -> const MatrixInstr * {
      const MatrixInstr *best = nullptr;
      for (const MatrixInstr *mi : chip->matrixInstrs())
        if (mi->abType == want && mi->m == mma->m && mi->n == mma->n &&
            mi->a.elemsPerLane() <= 8 && mi->b.elemsPerLane() <= 8 &&
            mi->c.laneBases == mma->c.laneBases && mi->c.elemBases == mma->c.elemBases &&
            (!best || mi->k > best->k))
          best = mi;
      return best ? best : mma;
    };
    // f16 Q / P against f16 or fp8 K / V (qp_type = f16): the chip's f16
    // instruction, fp8 converted to f16.
    if (lhs.isF16() && (rhs.isF16() || isFp8(rhs)))
      return deepest(MatrixElem::F16);
    if (lhs != rhs || !isa<Float8E4M3FNType, Float8E4M3FNUZType>(lhs))
      return mma;
    return deepest(isa<Float8E4M3FNUZType>(lhs) ? MatrixElem::F8E4M3FNUZ
                                                : MatrixElem::F8E4M3FN);
  }

  /// Four bytes of the 8-byte concatenation lo:hi (lo = bytes 0-3, both
  /// i32) picked by `sel` (indices 0-7) as one i32: one prmt.b32 on sm_90
  /// (from a 4-byte vector shuffle, which NVPTX selects as prmt) and one
  /// v_perm_b32 on CDNA (llvm.amdgcn.perm: src0 holds bytes 4-7; the
  /// AMDGPU backend would otherwise build byte shuffles from shifts).
  Value bytePerm(OpBuilder &b, Location loc, Value lo, Value hi,
                 std::array<int64_t, 4> sel) const {
    Type i32 = b.getI32Type();
    if (nvidia) {
      auto v4 = VectorType::get({4}, b.getI8Type());
      Value v = vector::ShuffleOp::create(b, loc, bitcastToVector(b, loc, lo, v4),
                                          bitcastToVector(b, loc, hi, v4), sel);
      Value w = vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), v);
      return vector::ExtractOp::create(b, loc, w, ArrayRef<int64_t>{0});
    }
    int64_t code = sel[0] | sel[1] << 8 | sel[2] << 16 | sel[3] << 24;
    return LLVM::CallIntrinsicOp::create(b, loc, i32, b.getStringAttr("llvm.amdgcn.perm"),
                                         ValueRange{hi, lo, cstI32(b, loc, code)})
        .getResult(0);
  }

  Attribute moduleTarget(MLIRContext *ctx) const {
    if (nvidia)
      return NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3,
                                       "nvptx64-nvidia-cuda", chip->name);
    return ROCDL::ROCDLTargetAttr::get(ctx, /*optLevel=*/3, "amdgcn-amd-amdhsa",
                                       chip->name);
  }

  Value intrinsic(OpBuilder &b, Location loc, StringRef name, Value x) const {
    return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                         b.getStringAttr(name), ValueRange{x})
        .getResult(0);
  }
  Value exp2(OpBuilder &b, Location loc, Value x) const {
    return intrinsic(b, loc,
                     nvidia ? "llvm.nvvm.ex2.approx.ftz.f" : "llvm.amdgcn.exp2.f32",
                     x);
  }
  Value log2(OpBuilder &b, Location loc, Value x) const {
    return intrinsic(b, loc,
                     nvidia ? "llvm.nvvm.lg2.approx.ftz.f" : "llvm.amdgcn.log.f32",
                     x);
  }

  /// A buffer resource of `numRecords` bytes from global address `base`
  /// (i64) whose loads past its size return zeros
  /// (ChipInfo::boundsCheckedLoads; CDNA: raw mode, stride 0, where the
  /// hardware checks every load's offset against num_records). The flag
  /// word is CDNA's: data format 32-bit / float (must be nonzero, ignored
  /// by raw loads), no swizzle, no thread-ID add.
  static Value boundedBuffer(OpBuilder &b, Location loc, Value base, Value numRecords) {
    auto global = LLVM::LLVMPointerType::get(b.getContext(), 1);
    auto rsrc = LLVM::LLVMPointerType::get(b.getContext(), 8);
    Value ptr = LLVM::IntToPtrOp::create(b, loc, global, base);
    Value stride = arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(0));
    Value flags = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr((7 << 12) | (4 << 15)));
    return ROCDL::MakeBufferRsrcOp::create(b, loc, rsrc, ptr, stride, numRecords, flags);
  }

  /// 16 bytes at byte `offset` (i32) of buffer `rsrc` (boundedBuffer) as a
  /// vector of type `t`: buffer_load_dwordx4, zeros past the buffer's end.
  static Value boundedLoad16(OpBuilder &b, Location loc, Value rsrc, Value offset, VectorType t) {
    Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
    Value v = ROCDL::RawPtrBufferLoadOp::create(b, loc, VectorType::get({4}, b.getI32Type()),
                                                rsrc, offset, zero, zero, nullptr, nullptr,
                                                nullptr);
    return vector::BitCastOp::create(b, loc, t, v);
  }

  /// The high half of an f32 as stored bf16 (i16): exact for fp8 values.
  static Value f32HighHalf(OpBuilder &b, Location loc, Value x) {
    Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
    bits = arith::ShRUIOp::create(b, loc, bits, cstI32(b, loc, 16));
    return arith::TruncIOp::create(b, loc, b.getI16Type(), bits);
  }

  /// An f32 holding an fp8 value as stored `op` (bf16 or f16; i16): exact.
  static Value f32ToOperand(OpBuilder &b, Location loc, Value x, Type op) {
    if (op.isF16())
      return arith::BitcastOp::create(b, loc, b.getI16Type(),
                                      arith::TruncFOp::create(b, loc, b.getF16Type(), x).getResult());
    return f32HighHalf(b, loc, x);
  }

  /// A stored fp8 element (i8 of float type `elt`) as a stored operand of
  /// type `op` (bf16 or f16; i16) with the chip's conversion instruction
  /// (v_cvt_f32_fp8); std::nullopt where the chip decodes in software.
  std::optional<Value> fp8ToOperand(OpBuilder &b, Location loc, Value stored, Type elt,
                                    Type op) const {
    if (chip->fp8Decode == Fp8Decode::Software)
      return std::nullopt;
    if (chip->fp8Decode == Fp8Decode::PackedToF16)
      return f16PairToOperand(b, loc, arith::ExtUIOp::create(b, loc, b.getI16Type(), stored),
                              op)
          .first;
    Value f8 = arith::BitcastOp::create(b, loc, elt, stored);
    Value f = amdgpu::ExtPackedFp8Op::create(b, loc, b.getF32Type(), f8, /*index=*/0);
    return f32ToOperand(b, loc, f, op);
  }

  /// Two e4m3 codes packed in an i16 (low byte first) through
  /// cvt.rn.f16x2.e4m3x2: as is for an f16 operand, else widened and cut to
  /// bf16 (exact).
  static std::pair<Value, Value> f16PairToOperand(OpBuilder &b, Location loc, Value packed,
                                                  Type op) {
    Value h2 = LLVM::CallIntrinsicOp::create(b, loc, VectorType::get({2}, b.getF16Type()),
                                             b.getStringAttr("llvm.nvvm.e4m3x2.to.f16x2.rn"),
                                             ValueRange{packed})
                   .getResult(0);
    if (op.isF16()) {
      Value bits = vector::BitCastOp::create(b, loc, VectorType::get({2}, b.getI16Type()), h2);
      return {vector::ExtractOp::create(b, loc, bits, ArrayRef<int64_t>{0}),
              vector::ExtractOp::create(b, loc, bits, ArrayRef<int64_t>{1})};
    }
    auto half = [&](int64_t i) {
      Value h = vector::ExtractOp::create(b, loc, h2, ArrayRef<int64_t>{i});
      return f32HighHalf(b, loc, arith::ExtFOp::create(b, loc, b.getF32Type(), h));
    };
    return {half(0), half(1)};
  }

  /// A pair of stored fp8 elements (vector<2 x i8> of float type `elt`) as
  /// two stored operands of type `op` (bf16 or f16; i16) with the chip's
  /// pair conversion; std::nullopt where the chip decodes in software.
  std::optional<std::pair<Value, Value>> fp8PairToOperand(OpBuilder &b, Location loc,
                                                          Value pair, Type elt,
                                                          Type op) const {
    if (chip->fp8Decode == Fp8Decode::Software)
      return std::nullopt;
    if (chip->fp8Decode == Fp8Decode::PackedToF16) {
      Value w = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI16Type()), pair);
      return f16PairToOperand(
          b, loc, vector::ExtractOp::create(b, loc, w, ArrayRef<int64_t>{0}), op);
    }
    Value f8 = vector::BitCastOp::create(b, loc, VectorType::get({2}, elt), pair);
    auto extract = [&](Value v, int64_t i) {
      return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i}).getResult();
    };
    if (chip->fp8Decode == Fp8Decode::PackedToBf16) {
      // v_cvt_scalef32_pk_{bf16,f16}_fp8 (scale 1).
      Value h = amdgpu::ScaledExtPackedOp::create(b, loc, VectorType::get({2}, op), f8,
                                                  cstF32(b, loc, 1.0f), /*index=*/0);
      Value bits = vector::BitCastOp::create(b, loc, VectorType::get({2}, b.getI16Type()), h);
      return std::make_pair(extract(bits, 0), extract(bits, 1));
    }
    Value f = amdgpu::ExtPackedFp8Op::create(b, loc, VectorType::get({2}, b.getF32Type()), f8,
                                             /*index=*/0);
    return std::make_pair(f32ToOperand(b, loc, extract(f, 0), op),
                          f32ToOperand(b, loc, extract(f, 1), op));
  }

  /// f32 values `x`, `y` rounded to fp8 type `elt` as stored codes (i8)
  /// with the chip's pair conversion (v_cvt_pk_fp8_f32 through
  /// amdgpu.packed_trunc_2xfp8), after a clamp to the largest finite value
  /// (the software rounding saturates; the instruction would give NaN past
  /// it; NaN stays NaN through the clamp); std::nullopt where the chip
  /// rounds in software.
  std::optional<std::array<Value, 2>> f32PairToFp8(OpBuilder &b, Location loc, Value x,
                                                   Value y, Type elt) const {
    if (!chip->fp8PairEncode)
      return std::nullopt;
    float maxVal = isa<Float8E4M3FNUZType>(elt) ? 240.0f : 448.0f;
    auto clamp = [&](Value v) -> Value {
      v = arith::MaximumFOp::create(b, loc, v, cstF32(b, loc, -maxVal));
      return arith::MinimumFOp::create(b, loc, v, cstF32(b, loc, maxVal));
    };
    Value packed = amdgpu::PackedTrunc2xFp8Op::create(
        b, loc, VectorType::get({4}, elt), clamp(x), clamp(y), /*wordIndex=*/0,
        /*existing=*/Value());
    Value bytes = vector::BitCastOp::create(b, loc, VectorType::get({4}, b.getI8Type()), packed);
    return std::array<Value, 2>{
        vector::ExtractOp::create(b, loc, bytes, ArrayRef<int64_t>{0}).getResult(),
        vector::ExtractOp::create(b, loc, bytes, ArrayRef<int64_t>{1}).getResult()};
  }

  /// One instruction `mi`: `a`, `b` are the lane's operand elements as
  /// stored values of `elt` (bf16: i16, fp8: i8), `c` its f32 accumulator
  /// elements; returns D.
  SmallVector<Value> matrixOp(OpBuilder &b, Location loc, const MatrixInstr *mi,
                              Type elt, ArrayRef<Value> a, ArrayRef<Value> bv,
                              ArrayRef<Value> c) const {
    Type f32 = b.getF32Type();
    if (!nvidia) {
      // MFMA takes the lane's operand elements as one vector, element i in
      // position i.
      auto operand = [&](ArrayRef<Value> elems) -> Value {
        int64_t n = elems.size();
        Value v = vector::FromElementsOp::create(
            b, loc, VectorType::get({n}, storageType(elt)), elems);
        return vector::BitCastOp::create(b, loc, VectorType::get({n}, elt), v);
      };
      auto accT = VectorType::get({static_cast<int64_t>(c.size())}, f32);
      Value acc = vector::FromElementsOp::create(b, loc, accT, c);
      auto i32 = [&](int64_t v) { return b.getI32IntegerAttr(v); };
      Value d = amdgpu::MFMAOp::create(b, loc, accT, i32(mi->m), i32(mi->n),
                                       i32(mi->k), i32(1), operand(a),
                                       operand(bv), acc);
      SmallVector<Value> out;
      for (size_t i = 0; i < c.size(); ++i)
        out.push_back(vector::ExtractOp::create(b, loc, d, ArrayRef<int64_t>{
                                                               (int64_t)i}));
      return out;
    }
    // mma.sync takes bf16 / f16 pairs packed in 32-bit registers, element
    // 2r in the low half of register r.
    auto pack = [&](ArrayRef<Value> elems) {
      SmallVector<Value> regs;
      if (elt.isF16()) { // NVVM spells f16 registers vector<2 x f16>
        for (size_t i = 0; i + 1 < elems.size(); i += 2) {
          Value v = vector::FromElementsOp::create(
              b, loc, VectorType::get({2}, b.getI16Type()), ValueRange{elems[i], elems[i + 1]});
          regs.push_back(
              vector::BitCastOp::create(b, loc, VectorType::get({2}, b.getF16Type()), v));
        }
        return regs;
      }
      for (size_t i = 0; i + 1 < elems.size(); i += 2) {
        Value lo = arith::ExtUIOp::create(b, loc, b.getI32Type(), elems[i]);
        Value hi = arith::ExtUIOp::create(b, loc, b.getI32Type(), elems[i + 1]);
        hi = arith::ShLIOp::create(b, loc, hi, cstI32(b, loc, 16));
        regs.push_back(arith::OrIOp::create(b, loc, lo, hi));
      }
      return regs;
    };
    auto resT = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(c.size(), f32));
    assert((elt.isBF16() || elt.isF16()) && "mma.sync takes bf16 or f16 operands here");
    NVVM::MMATypes ty = elt.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
    auto op = NVVM::MmaOp::create(
        b, loc, resT, pack(a), pack(bv), c, {mi->m, mi->n, mi->k},
        std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{ty, ty},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> d;
    for (size_t i = 0; i < c.size(); ++i)
      d.push_back(LLVM::ExtractValueOp::create(b, loc, op, ArrayRef<int64_t>{
                                                              (int64_t)i}));
    return d;
  }
};

//===----------------------------------------------------------------------===//
// Placements
//===----------------------------------------------------------------------===//

enum class Kind { Smem, Expr, Acc, RowSlice, RowPartial, Blocked };

struct Tile {
  Kind kind;
  RankedTensorType type;
  // Smem: the view holds storage elements of `type`'s element type.
  Value view;
  int64_t rowOff = 0, colOff = 0;
  // Expr: f32 element = fn(f32 element of src).
  std::shared_ptr<Tile> src;
  std::function<Value(OpBuilder &, Location, Value)> fn;
  // Acc / RowSlice / Blocked: f32 values (rounded to `type`'s element type).
  SmallVector<Value> regs;
  // Blocked: thread t holds runs of blockRun adjacent elements, run k of
  // them at element (t + k * threads) * blockRun (register k * blockRun +
  // j holds element j of run k).
  int64_t blockRun = 1;
  // Acc of a narrow element type made by a cast: the stored form of each
  // register (what ensureShared writes; saves re-rounding).
  SmallVector<Value> stored;
  // Smem holding the A operand of grouped dots in their K order: column L
  // holds the source's column kPerm->physicalK(L), so that the grouped
  // steps' A fragments are the instruction's own layout at column L (read
  // with ldmatrix; see kOrderFor).
  std::shared_ptr<const GroupedOperands> kPerm;
};

/// The accumulator layout of a rows x cols tile over `warps` warps.
struct AccLayout {
  const MatrixInstr *mi;
  int64_t cols, colsPerWarp, tiles, elems;
  SmallVector<int64_t> rowGroups; ///< distinct static row offsets
  int64_t size() const { return tiles * elems; }
  int64_t elemRow(int64_t i) const { return mi->c.map(0, i).row; }
  int64_t elemCol(int64_t i) const { return mi->c.map(0, i).col; }
  int64_t group(int64_t i) const {
    return llvm::find(rowGroups, elemRow(i)) - rowGroups.begin();
  }
};

struct Lowering {
  OpBuilder &b;
  const GpuTarget &target;
  int64_t warps, wave, threads;
  Value tid, lane, warp;
  // Runtime lane offsets of the A, B and C layouts.
  Value aRow, aCol, bRow, bCol, cRow, cCol;
  Value smemBase;
  int64_t smemBytes = 0;
  int64_t lastSmemOffset = 0; ///< byte offset of the last allocSmem region
  /// The KV loop's tile load that is double-buffered with async copies
  /// (ChipInfo::asyncTileCopy), set while its loop body is lowered.
  struct Prefetch {
    LoadOp load;
    KvLoopOp loop;
    /// Buffers of the tile (kvStages of them, back to back): tile t of the
    /// loop lands in buffer t % kvStages.
    SmallVector<int64_t> offsets;
    int64_t bufferBytes = 0;
    MemRefType viewType;
    Value lower, step, upper, iv;
  };
  std::optional<Prefetch> prefetch;
  /// Buffers of the KV loop's async tile copy: double-buffered, one tile
  /// in flight while one is computed. Measured on the H200 (qp16, 8 warps):
  /// 3 or 4 buffers fit only one program per SM, and 8 warps with 2 or 3
  /// tiles in flight ran 256 x 8192 at 1.95 / 1.87 us per tile and SM
  /// against 1.6 with two programs of one tile in flight each.
  static constexpr int64_t kvStages = 2;
  /// KV loops whose double buffer startPrefetch set up ahead of the loop.
  DenseMap<Operation *, Prefetch> started;
  bool asyncCopies = false; ///< some KV loop double-buffers its tile
  /// The KV loop body being lowered, and whether a barrier runs straight
  /// in it before the current point (see barrierBeforeRewrite).
  Block *kvBody = nullptr;
  bool kvBodyBarrier = false;
  IRMapping scalars;
  DenseMap<Value, std::shared_ptr<Tile>> tiles;
  /// Elementwise ops a tile load already applied (lowerLoad, foldableChain).
  DenseSet<Operation *> folded;
  Operation *diagOp = nullptr;

  Lowering(OpBuilder &b, const GpuTarget &t, int64_t warps)
      : b(b), target(t), warps(warps), wave(t.chip->waveSize),
        threads(warps * t.chip->waveSize) {}

  Location loc() { return diagOp ? diagOp->getLoc() : b.getUnknownLoc(); }

  Value idx(int64_t v) { return cstIndex(b, loc(), v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc(), x, y); }
  Value addc(Value x, int64_t c) { return c ? add(x, idx(c)) : x; }
  Value mul(Value x, int64_t c) {
    if (c == 1)
      return x;
    return arith::MulIOp::create(b, loc(), x, idx(c));
  }

  /// sum_j bit_j(lane) * (row or col of base j).
  Value laneOffset(Value laneV, ArrayRef<Coord> bases, bool row) {
    Value sum = idx(0);
    for (auto [j, c] : llvm::enumerate(bases)) {
      int64_t v = row ? c.row : c.col;
      if (!v)
        continue;
      Value bit = arith::AndIOp::create(
          b, loc(), arith::ShRUIOp::create(b, loc(), laneV, idx(j)), idx(1));
      sum = add(sum, mul(bit, v));
    }
    return sum;
  }

  void init(Location l) {
    tid = gpu::ThreadIdOp::create(b, l, gpu::Dimension::x);
    lane = arith::RemUIOp::create(b, l, tid, idx(wave));
    warp = arith::DivUIOp::create(b, l, tid, idx(wave));
    const MatrixInstr *mi = target.mma;
    aRow = laneOffset(lane, mi->a.laneBases, true);
    aCol = laneOffset(lane, mi->a.laneBases, false);
    bRow = laneOffset(lane, mi->b.laneBases, true);
    bCol = laneOffset(lane, mi->b.laneBases, false);
    cRow = laneOffset(lane, mi->c.laneBases, true);
    cCol = laneOffset(lane, mi->c.laneBases, false);
    auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                         gpu::AddressSpace::Workgroup);
    smemBase = gpu::DynamicSharedMemoryOp::create(
        b, l, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr, wg));
  }

  /// A fresh shared-memory region holding a rows x cols tile of `elt`,
  /// row-major with every row padded by 16 bytes: tile rows are mostly a
  /// multiple of 128 bytes long (576 fp8, 1 152 bf16), so without it the
  /// same column of consecutive rows falls into the same bank, and operand
  /// reads that walk rows (K's tokens, Q's and P's heads) conflict 4- to
  /// 8-way. 16 bytes keep every row start 16-byte aligned for the chunked
  /// copies. The view's shape is the padded one; tiles index it in range.
  Value allocSmem(int64_t rows, int64_t cols, Type elt) {
    Type st = storageType(elt);
    int64_t eltBytes = storedBytes(elt);
    int64_t padded = cols + kRowPadBytes / eltBytes;
    int64_t bytes = rows * padded * eltBytes;
    int64_t offset = (smemBytes + 15) / 16 * 16;
    smemBytes = offset + bytes;
    lastSmemOffset = offset;
    auto wg = gpu::AddressSpaceAttr::get(b.getContext(),
                                         gpu::AddressSpace::Workgroup);
    return memref::ViewOp::create(b, loc(),
                                  MemRefType::get({rows, padded}, st, nullptr, wg),
                                  smemBase, idx(offset), ValueRange{});
  }

  void barrier() {
    gpu::BarrierOp::create(b, loc());
    if (kvBody && b.getInsertionBlock() == kvBody)
      kvBodyBarrier = true;
  }

  /// The barrier before overwriting a shared-memory region that the
  /// previous execution of the same code may still be reading. Every region
  /// belongs to one op (allocSmem never hands one out twice), so that
  /// previous execution is the previous iteration of the enclosing KV loop,
  /// if any; a barrier already placed straight in the loop body (not under
  /// a condition or in an inner loop) before this point separates the two,
  /// and code outside the loop runs once.
  void barrierBeforeRewrite() {
    if (kvBody && !kvBodyBarrier)
      barrier();
  }

  LogicalResult fail(const Twine &msg) { return diagOp->emitOpError(msg); }

  //===--------------------------------------------------------------------===//
  // Layouts
  //===--------------------------------------------------------------------===//

  FailureOr<AccLayout> accLayout(RankedTensorType t) {
    const MatrixInstr *mi = target.mma;
    if (t.getRank() != 2 || t.getDimSize(0) != mi->m)
      return fail("a register tile must have " + Twine(mi->m) +
                  " rows (the matrix instruction's M), got " +
                  Twine(t.getRank() == 2 ? t.getDimSize(0) : 0));
    int64_t cols = t.getDimSize(1);
    if (cols % (warps * mi->n) != 0)
      return fail("a tile of " + Twine(cols) + " columns cannot be split across " +
                  Twine(warps) + " warps of " + Twine(mi->n) + "-column instructions");
    AccLayout l{mi, cols, cols / warps, cols / warps / mi->n,
                mi->c.elemsPerLane(), {}};
    for (int64_t i = 0; i < l.elems; ++i)
      if (!llvm::is_contained(l.rowGroups, l.elemRow(i)))
        l.rowGroups.push_back(l.elemRow(i));
    return l;
  }

  /// The layout whose rows a RowSlice of `rows` entries follows: that of
  /// any Acc tile with those rows (the row distribution does not depend on
  /// the column count).
  FailureOr<AccLayout> rowLayout(int64_t rows) {
    return accLayout(RankedTensorType::get({rows, warps * target.mma->n},
                                           b.getF32Type()));
  }

  /// Row and column of register r of an Acc tile in this lane.
  ///
  /// Columns are interleaved across a warp's instruction tiles: column n of
  /// the instruction in tile j is the tile's column warpCol + n * tiles + j
  /// (not warpCol + j * N + n). A lane then holds the same instruction
  /// column of every tile in adjacent tile columns, so the B operand of a
  /// dot that produces this tile, read along its columns (V in O += P V),
  /// comes in one wide load per row for all tiles instead of one element
  /// per tile (see lowerDot). Rows and row reductions are unaffected.
  std::pair<Value, Value> accCoord(const AccLayout &l, int64_t r) {
    int64_t j = r / l.elems, i = r % l.elems;
    return {addc(cRow, l.elemRow(i)), tileColumn(l, addc(cCol, l.elemCol(i)), j)};
  }

  /// The tile column of this warp's instruction column `n` in tile `j`.
  Value tileColumn(const AccLayout &l, Value n, int64_t j) {
    return tileColumnOf(l, warp, n, j);
  }
  /// The same for warp `w`'s columns.
  Value tileColumnOf(const AccLayout &l, Value w, Value n, int64_t j) {
    return add(mul(w, l.colsPerWarp), addc(mul(n, l.tiles), j));
  }
  /// The other warp of this warp's pair (2p, 2p + 1).
  Value partnerWarp() { return arith::XOrIOp::create(b, loc(), warp, idx(1)); }

  //===--------------------------------------------------------------------===//
  // Reading tiles
  //===--------------------------------------------------------------------===//

  /// Element (r, c) of a Smem / Expr tile as f32.
  Value readF32(const Tile &t, Value r, Value c) {
    if (t.kind == Kind::Expr)
      return t.fn(b, loc(), readF32(*t.src, r, c));
    Value v = memref::LoadOp::create(
        b, loc(), t.view, ValueRange{addc(r, t.rowOff), addc(c, t.colOff)});
    return toF32(b, loc(), v, t.type.getElementType());
  }

  /// A stored element of float type `elt` as a stored operand of type
  /// `op` (bf16 or f16; i16): as is when the types agree; fp8 exactly
  /// (every e4m3 value is a bf16 and an f16 value); anything else rounded.
  Value storedToOperand(Value stored, Type elt, Type op) {
    if (elt == op)
      return stored;
    if (isFp8(elt))
      if (auto hw = target.fp8ToOperand(b, loc(), stored, elt, op))
        return *hw;
    Value f = toF32(b, loc(), stored, elt);
    if (!isFp8(elt) || op.isF16())
      return fromF32(b, loc(), f, op);
    Value bits = arith::BitcastOp::create(b, loc(), b.getI32Type(), f);
    bits = arith::ShRUIOp::create(b, loc(), bits, cstI32(b, loc(), 16));
    return arith::TruncIOp::create(b, loc(), b.getI16Type(), bits);
  }

  /// Element (r, c) as a stored operand of type `op` (i16).
  Value readAs(const Tile &t, Value r, Value c, Type op) {
    if (t.kind != Kind::Smem)
      return fromF32(b, loc(), readF32(t, r, c), op);
    Value v = memref::LoadOp::create(
        b, loc(), t.view, ValueRange{addc(r, t.rowOff), addc(c, t.colOff)});
    return storedToOperand(v, t.type.getElementType(), op);
  }

  /// A pair of stored elements of type `elt` (vector<2 x storage>) as two
  /// stored operands of type `op`: fp8 through the chip's pair conversion
  /// where it has one, else element by element.
  std::array<Value, 2> pairToOperand(Value pair, Type elt, Type op) {
    if (isFp8(elt))
      if (auto hw = target.fp8PairToOperand(b, loc(), pair, elt, op))
        return {hw->first, hw->second};
    auto one = [&](int64_t i) {
      return storedToOperand(vector::ExtractOp::create(b, loc(), pair, ArrayRef<int64_t>{i}),
                             elt, op);
    };
    return {one(0), one(1)};
  }

  /// Bytes between consecutive rows of a stored tile's view.
  static int64_t rowStrideBytes(const Tile &t) {
    auto mt = cast<MemRefType>(t.view.getType());
    return mt.getDimSize(1) * storedBytes(mt.getElementType());
  }

  /// Elements (r, c) … (r, c + w - 1) of a stored tile as stored operands
  /// of type `op`, with one w-element shared-memory load (fp8 pairs through
  /// the chip's pair conversion where it has one). The caller makes sure
  /// the load is aligned: `c` + the tile's column offset a multiple of w,
  /// row starts a multiple of w elements apart.
  SmallVector<Value> readRun(const Tile &t, Value r, Value c, int64_t w, Type op) {
    Type elt = t.type.getElementType();
    Type st = storageType(elt);
    int64_t bytes = storedBytes(elt);
    Value run = vector::LoadOp::create(
        b, loc(), VectorType::get({w}, st), t.view,
        ValueRange{addc(r, t.rowOff), addc(c, t.colOff)}, /*nontemporal=*/false,
        llvm::MaybeAlign(w * bytes));
    SmallVector<Value> out;
    for (int64_t j = 0; j < w; j += 2) {
      Value pair = w == 2 ? run
                          : vector::ShuffleOp::create(b, loc(), run, run,
                                                      ArrayRef<int64_t>{j, j + 1})
                                .getResult();
      llvm::append_range(out, pairToOperand(pair, elt, op));
    }
    return out;
  }

  /// The lane's operand elements of one matrix instruction grouped into
  /// runs that one aligned load fetches: element indices whose coordinates
  /// lie next to each other in a stored row (whichever indices hold them),
  /// in row order, of the first of `widths` that fits (else single
  /// elements). `transposed` says that the layout's rows run along the
  /// stored columns. A run needs every lane's start (lane bases, tile
  /// offset, row stride) to be a multiple of its length.
  SmallVector<SmallVector<int64_t>> operandRuns(const Tile &t, const LaneLayout &layout,
                                                bool transposed, ArrayRef<int64_t> widths) {
    int64_t n = layout.elemsPerLane();
    int64_t bytes = storedBytes(t.type.getElementType());
    auto along = [&](Coord c) { return transposed ? c.row : c.col; };
    auto step = [&](Coord c, int64_t j) {
      return transposed ? Coord{c.row + j, c.col} : Coord{c.row, c.col + j};
    };
    auto indexOf = [&](Coord c) -> int64_t {
      for (int64_t i = 0; i < n; ++i)
        if (layout.map(0, i) == c)
          return i;
      return -1;
    };
    SmallVector<SmallVector<int64_t>> runs;
    SmallVector<bool> done(n, false);
    for (int64_t i = 0; i < n; ++i) {
      if (done[i])
        continue;
      Coord c = layout.map(0, i);
      SmallVector<int64_t> ids{i};
      for (int64_t w : widths) {
        if (t.kind != Kind::Smem || along(c) % w || t.colOff % w ||
            rowStrideBytes(t) % (w * bytes) ||
            !llvm::all_of(layout.laneBases, [&](Coord base) { return along(base) % w == 0; }))
          continue;
        SmallVector<int64_t> run{i};
        for (int64_t j = 1; j < w; ++j) {
          int64_t e = indexOf(step(c, j));
          if (e < 0 || done[e])
            break;
          run.push_back(e);
        }
        if (static_cast<int64_t>(run.size()) == w) {
          ids = run;
          break;
        }
      }
      for (int64_t e : ids)
        done[e] = true;
      runs.push_back(ids);
    }
    return runs;
  }

  /// The lane's operand elements of one matrix instruction as stored
  /// operands of type `op` (bf16 or f16): element i at `at(i)` (row,
  /// column) of `t`, runs of up to 16 bytes of contiguous stored elements
  /// read with one load.
  SmallVector<Value> readOperand(const Tile &t, const LaneLayout &layout,
                                 bool transposed, Type op,
                                 function_ref<std::pair<Value, Value>(Coord)> at) {
    Type elt = t.type.getElementType();
    SmallVector<int64_t> widths;
    if (elt.isBF16() || elt.isF16() || isFp8(elt))
      for (int64_t w = 16 / storedBytes(elt); w > 1; w /= 2)
        widths.push_back(w);
    SmallVector<Value> out(layout.elemsPerLane());
    for (const SmallVector<int64_t> &run : operandRuns(t, layout, transposed, widths)) {
      auto [row, col] = at(layout.map(0, run.front()));
      if (run.size() == 1) {
        out[run.front()] = readAs(t, row, col, op);
        continue;
      }
      for (auto [e, v] : llvm::zip(run, readRun(t, row, col, run.size(), op)))
        out[e] = v;
    }
    return out;
  }

  /// The lane's operand elements of one matrix instruction as stored
  /// values (no conversion), for instructions that read the tile's own
  /// element type; runs of up to 16 bytes of contiguous stored elements
  /// read with one load.
  SmallVector<Value> readOperandRaw(const Tile &t, const LaneLayout &layout,
                                    bool transposed,
                                    function_ref<std::pair<Value, Value>(Coord)> at) {
    Type elt = t.type.getElementType();
    Type st = storageType(elt);
    int64_t bytes = storedBytes(elt);
    SmallVector<int64_t> widths;
    for (int64_t w = 16 / bytes; w > 1; w /= 2)
      widths.push_back(w);
    SmallVector<Value> out(layout.elemsPerLane());
    for (const SmallVector<int64_t> &run : operandRuns(t, layout, transposed, widths)) {
      auto [row, col] = at(layout.map(0, run.front()));
      if (t.kind != Kind::Smem) {
        out[run.front()] = fromF32(b, loc(), readF32(t, row, col), elt);
        continue;
      }
      Value r = addc(row, t.rowOff), c = addc(col, t.colOff);
      if (run.size() == 1) {
        out[run.front()] = memref::LoadOp::create(b, loc(), t.view, ValueRange{r, c});
        continue;
      }
      int64_t w = run.size();
      Value v = vector::LoadOp::create(b, loc(), VectorType::get({w}, st), t.view,
                                       ValueRange{r, c}, /*nontemporal=*/false,
                                       llvm::MaybeAlign(w * bytes));
      for (auto [j, e] : llvm::enumerate(run))
        out[e] = vector::ExtractOp::create(b, loc(), v, ArrayRef<int64_t>{(int64_t)j});
    }
    return out;
  }

  /// readAcrossTiles for 1-byte elements: the byte transpose from "one
  /// vector per element, one byte per tile" to "per tile its elements",
  /// with byte permutes of i32 words (GpuTarget::bytePerm): rows e, e + 1 of
  /// tiles j .. j + 3 interleave into the pairs of tiles j, j + 1 and
  /// j + 2, j + 3; a second level joins pairs of rows e .. e + 3. Pairs go
  /// through the chip's fp8 pair conversion unless `raw`.
  SmallVector<SmallVector<Value>> transposeBytes(ArrayRef<SmallVector<Value>> loads,
                                                 int64_t n, int64_t tiles, int64_t w,
                                                 bool raw, Type elt, Type op) {
    auto extract = [&](Value v, int64_t i) -> Value {
      return vector::ExtractOp::create(b, loc(), v, ArrayRef<int64_t>{i});
    };
    auto perm = [&](Value x, Value y, std::array<int64_t, 4> sel) {
      return target.bytePerm(b, loc(), x, y, sel);
    };
    // An i32 word as a vector of i8 or i16.
    auto split = [&](Value word, Type t) -> Value {
      return bitcastToVector(b, loc(), word,
                             VectorType::get({32 / t.getIntOrFloatBitWidth()}, t));
    };
    SmallVector<SmallVector<Value>> words(n); // words[e][c]: bytes 4c .. 4c + 3
    for (int64_t e = 0; e < n; ++e)
      for (Value v : loads[e]) {
        Value ws = vector::BitCastOp::create(b, loc(), VectorType::get({w / 4}, b.getI32Type()), v);
        for (int64_t c = 0; c < w / 4; ++c)
          words[e].push_back(extract(ws, c));
      }
    SmallVector<SmallVector<Value>> out(tiles);
    for (int64_t j0 = 0; j0 < tiles; j0 += 4) {
      // lo[e / 2]: rows e, e + 1 interleaved: {tiles j0, j0+1 | j0+2, j0+3}.
      SmallVector<std::array<Value, 2>> lo(n / 2);
      for (int64_t e = 0; e < n; e += 2) {
        Value x = words[e][j0 / 4], y = words[e + 1][j0 / 4];
        lo[e / 2] = {perm(x, y, {0, 4, 1, 5}), perm(x, y, {2, 6, 3, 7})};
      }
      for (int64_t t = 0; t < 4; ++t) {
        SmallVector<Value> &dst = out[j0 + t];
        if (raw && n % 4 == 0) {
          for (int64_t e = 0; e < n; e += 4) {
            Value x = lo[e / 2][t / 2], y = lo[e / 2 + 1][t / 2];
            Value v = split(t % 2 ? perm(x, y, {2, 3, 6, 7}) : perm(x, y, {0, 1, 4, 5}),
                            b.getI8Type());
            for (int64_t i = 0; i < 4; ++i)
              dst.push_back(extract(v, i));
          }
          continue;
        }
        for (int64_t e = 0; e < n; e += 2) {
          Value half = extract(split(lo[e / 2][t / 2], b.getI16Type()), t % 2);
          Value pair = bitcastToVector(b, loc(), half, VectorType::get({2}, b.getI8Type()));
          if (raw)
            dst.append({extract(pair, 0), extract(pair, 1)});
          else
            llvm::append_range(dst, pairToOperand(pair, elt, op));
        }
      }
    }
    return out;
  }

  /// The lane's A elements of one 16x16 step (rows 0-15, columns kk ..
  /// kk + 15 of `t`) with one ldmatrix.x4: lane l addresses row
  /// (l mod 8) + 8 ((l / 8) mod 2), column kk + 8 (l / 16), i.e. row l mod 8
  /// of matrix l / 8; register j, half h is A element 2j + h (checked
  /// against the descriptor by MatrixInstrTest.LdmatrixX4MatchesALayout).
  SmallVector<Value> readAByLdmatrix(const Tile &t, Value kk) {
    Value l8 = arith::AndIOp::create(b, loc(), lane, idx(7));
    Value half = arith::AndIOp::create(b, loc(), arith::ShRUIOp::create(b, loc(), lane, idx(3)),
                                       idx(1));
    Value row = add(l8, mul(half, 8));
    Value col = add(kk, mul(arith::ShRUIOp::create(b, loc(), lane, idx(4)), 8));
    Type st = storageType(t.type.getElementType());
    Value m = nvgpu::LdMatrixOp::create(b, loc(), VectorType::get({4, 2}, st), t.view,
                                        ValueRange{addc(row, t.rowOff), addc(col, t.colOff)},
                                        /*transpose=*/false, /*numTiles=*/4);
    SmallVector<Value> out;
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t h = 0; h < 2; ++h)
        out.push_back(vector::ExtractOp::create(b, loc(), m, ArrayRef<int64_t>{j, h}));
    return out;
  }

  /// The lane's B operand elements of one K step for all `tiles`
  /// instruction tiles of a dot, read along the tile's rows: element e of
  /// tile j sits at `at(coord of e)` + (0, j), so each element is one
  /// w-element load per w tiles (w up to 16 bytes). Returns per tile the
  /// elements as stored (`raw`) or as stored operands of type `op`, fp8
  /// pairs of consecutive elements through the chip's pair conversion;
  /// empty when the tile is not in shared memory or the loads would be
  /// misaligned (the caller then reads tile by tile).
  SmallVector<SmallVector<Value>>
  readAcrossTiles(const Tile &t, const LaneLayout &layout, int64_t tiles, bool raw, Type op,
                  function_ref<std::pair<Value, Value>(Coord)> at) {
    if (t.kind != Kind::Smem || tiles < 2)
      return {};
    Type elt = t.type.getElementType();
    Type st = storageType(elt);
    int64_t bytes = storedBytes(elt);
    int64_t w = 1;
    while (tiles % (2 * w) == 0 && 2 * w * bytes <= 16 && t.colOff % (2 * w) == 0 &&
           rowStrideBytes(t) % (2 * w * bytes) == 0)
      w *= 2;
    if (w == 1)
      return {};
    int64_t n = layout.elemsPerLane();
    // loads[e][s]: element e of tiles s * w ... s * w + w - 1.
    SmallVector<SmallVector<Value>> loads(n);
    for (int64_t e = 0; e < n; ++e) {
      auto [row, col] = at(layout.map(0, e));
      for (int64_t s = 0; s < tiles; s += w)
        loads[e].push_back(vector::LoadOp::create(
            b, loc(), VectorType::get({w}, st), t.view,
            ValueRange{addc(row, t.rowOff), addc(col, t.colOff + s)},
            /*nontemporal=*/false, llvm::MaybeAlign(w * bytes)));
    }
    SmallVector<SmallVector<Value>> out(tiles);
    if (bytes == 1 && w % 4 == 0 && n % 2 == 0 && (raw || isFp8(elt)))
      return transposeBytes(loads, n, tiles, w, raw, elt, op);
    SmallVector<SmallVector<Value>> stored(n);
    for (int64_t e = 0; e < n; ++e)
      for (Value v : loads[e])
        for (int64_t j = 0; j < w; ++j)
          stored[e].push_back(vector::ExtractOp::create(b, loc(), v, ArrayRef<int64_t>{j}));
    for (int64_t j = 0; j < tiles; ++j) {
      for (int64_t e = 0; e < n; ++e) {
        if (raw || elt == op) {
          out[j].push_back(stored[e][j]);
        } else if (isFp8(elt) && e + 1 < n) {
          Value pair = vector::FromElementsOp::create(
              b, loc(), VectorType::get({2}, st), ValueRange{stored[e][j], stored[e + 1][j]});
          llvm::append_range(out[j], pairToOperand(pair, elt, op));
          ++e;
        } else {
          out[j].push_back(storedToOperand(stored[e][j], elt, op));
        }
      }
    }
    return out;
  }

  /// The shared tile an elementwise chain ending in `v` reads, if nothing
  /// else reads it or any link of the chain: then the chain can be evaluated
  /// in place.
  std::shared_ptr<Tile> soleRoot(Value v) {
    Operation *def = v.getDefiningOp();
    while (def && isa<CastOp, ScaleOp>(def)) {
      Value src = def->getOperand(0);
      if (!src.hasOneUse())
        return nullptr;
      v = src;
      def = v.getDefiningOp();
    }
    auto root = tiles.lookup(v);
    if (!root || root->kind != Kind::Smem || root->rowOff || root->colOff)
      return nullptr;
    return root;
  }

  /// Evaluates a lazy Smem/Expr tile `v` into shared memory (cooperative,
  /// one element per thread per step): into its root's region when the
  /// root is dead afterwards, else into a new region. With the root's
  /// element type each thread reads and writes the same element, so no
  /// barrier is needed between; with a narrower one (Q rounded to fp8) the
  /// elements move, so every thread reads all of its elements first.
  std::shared_ptr<Tile> materialize(Value v, const std::shared_ptr<Tile> &t) {
    int64_t rows = t->type.getDimSize(0), cols = t->type.getDimSize(1);
    Type elt = t->type.getElementType();
    auto out = std::make_shared<Tile>();
    out->kind = Kind::Smem;
    out->type = t->type;
    auto root = soleRoot(v);
    // Element-wise evaluation keeps every element's place, so a K order
    // (kOrderFor) carries over.
    if (root)
      out->kPerm = root->kPerm;
    auto bits = [](Type e) { return storageType(e).getIntOrFloatBitWidth(); };
    // In place also when only the element type changes within one storage
    // type (bf16 Q rounded to f16 for qp_type = f16): the same i16 view.
    bool inPlace = root && root->type.getShape() == t->type.getShape() &&
                   storageType(root->type.getElementType()) == storageType(elt);
    bool narrowing = root && !inPlace && root->view.getDefiningOp<memref::ViewOp>() &&
                     root->type.getShape() == t->type.getShape() &&
                     bits(elt) < bits(root->type.getElementType()) &&
                     (rows * cols) % threads == 0;
    if (inPlace) {
      out->view = root->view;
    } else if (narrowing) {
      // The same bytes of shared memory, read as the narrower type.
      auto def = root->view.getDefiningOp<memref::ViewOp>();
      auto memT = cast<MemRefType>(root->view.getType());
      out->view = memref::ViewOp::create(
          b, loc(), MemRefType::get(memT.getShape(), storageType(elt), nullptr,
                                    memT.getMemorySpace()),
          def.getSource(), def.getByteShift(), ValueRange{});
    } else {
      out->view = allocSmem(rows, cols, elt);
    }
    auto coord = [&](Value e) {
      return std::pair(arith::DivUIOp::create(b, loc(), e, idx(cols)).getResult(),
                       arith::RemUIOp::create(b, loc(), e, idx(cols)).getResult());
    };
    if (narrowing) {
      // Rounds of `group` elements per thread in increasing element order:
      // the narrow bytes a round writes overlap only wide elements of this
      // or earlier rounds, which were read before the round's barrier.
      int64_t perThread = rows * cols / threads;
      int64_t group = perThread % 4 == 0 ? 4 : 1;
      auto rounds = scf::ForOp::create(b, loc(), idx(0), idx(perThread / group), idx(1));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(rounds.getBody());
      Value first = mul(rounds.getInductionVar(), group * threads);
      SmallVector<std::pair<Value, Value>> at;
      SmallVector<Value> vals;
      for (int64_t j = 0; j < group; ++j) {
        auto [r, c] = coord(add(first, addc(tid, j * threads)));
        at.push_back({r, c});
        vals.push_back(fromF32(b, loc(), readF32(*t, r, c), elt));
      }
      barrier();
      for (auto [rc, val] : llvm::zip(at, vals))
        memref::StoreOp::create(b, loc(), val, out->view, ValueRange{rc.first, rc.second});
      b.setInsertionPointAfter(rounds);
      barrier();
      return out;
    }
    auto loop = scf::ForOp::create(b, loc(), tid, idx(rows * cols), idx(threads));
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      auto [r, c] = coord(loop.getInductionVar());
      memref::StoreOp::create(b, loc(), fromF32(b, loc(), readF32(*t, r, c), elt),
                              out->view, ValueRange{r, c});
    }
    barrier();
    return out;
  }

  /// Makes a register tile readable as a matrix operand: writes it to a
  /// new shared region in its element type.
  FailureOr<std::shared_ptr<Tile>> ensureShared(std::shared_ptr<Tile> t) {
    if (t->kind == Kind::Smem || t->kind == Kind::Expr)
      return t;
    if (t->kind != Kind::Acc) {
      (void)fail("unsupported operand placement");
      return failure();
    }
    auto l = accLayout(t->type);
    if (failed(l))
      return failure();
    Type elt = t->type.getElementType();
    auto out = std::make_shared<Tile>();
    out->kind = Kind::Smem;
    out->type = t->type;
    out->view = allocSmem(t->type.getDimSize(0), t->type.getDimSize(1), elt);
    barrierBeforeRewrite();
    for (int64_t r = 0; r < l->size(); ++r) {
      auto [row, col] = accCoord(*l, r);
      Value v = t->stored.empty() ? fromF32(b, loc(), t->regs[r], elt) : t->stored[r];
      memref::StoreOp::create(b, loc(), v, out->view, ValueRange{row, col});
    }
    barrier();
    return out;
  }

  //===--------------------------------------------------------------------===//
  // Reductions over the rows of an Acc tile
  //===--------------------------------------------------------------------===//

  /// Reduces `regs` (Acc layout) per row with `combine`; returns one value
  /// per row group, identical in every lane and warp that holds the row.
  SmallVector<Value> rowReduce(const AccLayout &l, ArrayRef<Value> regs,
                               float identity,
                               function_ref<Value(Value, Value)> combine) {
    return acrossLanesAndWarps(l, laneRowReduce(l, regs, identity, combine), identity,
                               combine);
  }

  /// This lane's share of each row: its own elements of `regs` (Acc
  /// layout) combined per row group.
  SmallVector<Value> laneRowReduce(const AccLayout &l, ArrayRef<Value> regs,
                                   float identity,
                                   function_ref<Value(Value, Value)> combine) {
    SmallVector<Value> part(l.rowGroups.size(), cstF32(b, loc(), identity));
    for (int64_t r = 0; r < l.size(); ++r) {
      int64_t g = l.group(r % l.elems);
      part[g] = combine(part[g], regs[r]);
    }
    return part;
  }

  /// Per-lane shares of each row group (`part`) combined over the lanes and
  /// warps that hold the row.
  SmallVector<Value> acrossLanesAndWarps(const AccLayout &l, SmallVector<Value> part,
                                         float identity,
                                         function_ref<Value(Value, Value)> combine) {
    // Lanes that differ only in column bits hold the same rows.
    for (auto [j, base] : llvm::enumerate(l.mi->c.laneBases)) {
      if (base.row != 0)
        continue;
      for (Value &p : part) {
        auto shfl = gpu::ShuffleOp::create(
            b, loc(), p, cstI32(b, loc(), int64_t(1) << j),
            cstI32(b, loc(), wave), gpu::ShuffleMode::XOR);
        p = combine(p, shfl.getShuffleResult());
      }
    }
    if (warps == 1)
      return part;
    // Across warps through shared memory: red[row][warp], so that a lane
    // reads a row's shares of all warps with 16-byte loads (8 warps: two
    // instead of eight; rows padded to 16-byte multiples by allocSmem).
    Value red = allocSmem(l.mi->m, warps, b.getF32Type());
    barrierBeforeRewrite();
    for (auto [g, p] : llvm::enumerate(part))
      memref::StoreOp::create(b, loc(), p, red,
                              ValueRange{addc(cRow, l.rowGroups[g]), warp});
    barrier();
    int64_t vec = warps % 4 == 0 ? 4 : 1;
    SmallVector<Value> out;
    for (auto [g, p] : llvm::enumerate(part)) {
      Value row = addc(cRow, l.rowGroups[g]);
      Value acc = cstF32(b, loc(), identity);
      for (int64_t w = 0; w < warps; w += vec) {
        if (vec == 1) {
          acc = combine(acc, memref::LoadOp::create(b, loc(), red, ValueRange{row, idx(w)}));
          continue;
        }
        Value v = vector::LoadOp::create(b, loc(), VectorType::get({vec}, b.getF32Type()), red,
                                         ValueRange{row, idx(w)}, /*nontemporal=*/false,
                                         llvm::MaybeAlign(16));
        for (int64_t j = 0; j < vec; ++j)
          acc = combine(acc, vector::ExtractOp::create(b, loc(), v, ArrayRef<int64_t>{j}));
      }
      out.push_back(acc);
    }
    return out;
  }

  //===--------------------------------------------------------------------===//
  // Ops
  //===--------------------------------------------------------------------===//

  std::shared_ptr<Tile> regTile(Kind k, RankedTensorType t,
                                SmallVector<Value> regs) {
    auto tile = std::make_shared<Tile>();
    tile->kind = k;
    tile->type = t;
    tile->regs = std::move(regs);
    return tile;
  }

  std::shared_ptr<Tile> get(Value v) { return tiles.lookup(v); }

  LogicalResult lowerFill(FillOp op) {
    auto t = op.getType();
    Value c = arith::ConstantOp::create(b, loc(), op.getValueAttr());
    if (t.getRank() == 1) {
      auto l = rowLayout(t.getDimSize(0));
      if (failed(l))
        return failure();
      tiles[op] = regTile(Kind::RowSlice, t,
                          SmallVector<Value>(l->rowGroups.size(), c));
      return success();
    }
    auto l = accLayout(t);
    if (failed(l))
      return failure();
    tiles[op] = regTile(Kind::Acc, t, SmallVector<Value>(l->size(), c));
    return success();
  }

  /// Row and column (in elements) of 16-byte chunk `chunk` (of `vec`
  /// elements) of a tile with `cols` columns: chunks run row by row.
  std::pair<Value, Value> chunkCoord(Value chunk, int64_t vec, int64_t cols) {
    Value e = mul(chunk, vec);
    return {arith::DivUIOp::create(b, loc(), e, idx(cols)),
            arith::RemUIOp::create(b, loc(), e, idx(cols))};
  }

  /// The elementwise ops that only re-round or scale `op`'s loaded tile:
  /// the longest chain of single-use mla.cast / mla.scale ops from it (with
  /// scale factors already lowered) that ends in an element type of the
  /// loaded one's storage width (bf16 Q -> f32 -> scaled -> bf16, or
  /// -> f16 for qp_type = f16). lowerLoad applies them to the loaded
  /// registers.
  SmallVector<Operation *> foldableChain(LoadOp op) {
    SmallVector<Operation *> chain;
    Value v = op.getResult();
    while (v.hasOneUse()) {
      Operation *user = *v.getUsers().begin();
      auto sc = dyn_cast<ScaleOp>(user);
      if (!isa<CastOp>(user) && !(sc && scalars.contains(sc.getFactor())))
        break;
      chain.push_back(user);
      v = user->getResult(0);
    }
    Type st = storageType(op.getType().getElementType());
    while (!chain.empty() && storageType(resultElt(chain.back())) != st)
      chain.pop_back();
    return chain;
  }

  LogicalResult lowerLoad(LoadOp op) {
    if (prefetch && prefetch->load == op)
      return lowerPrefetchedLoad(op);
    auto t = op.getResult().getType();
    if (t.getRank() != 2)
      return fail("the GPU lowering loads rank-2 tiles only");
    int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
    Type elt = t.getElementType();
    // A tile loaded ahead of a KV loop (Q): the loop's first KV tile is
    // sent first, so that its memory latency overlaps this copy and what
    // follows it instead of starting after them.
    if (!kvBody && target.chip->asyncTileCopy)
      for (Operation *n = op->getNextNode(); n; n = n->getNextNode())
        if (auto loop = dyn_cast<KvLoopOp>(n)) {
          if (!started.count(loop))
            if (auto pf = startPrefetch(loop, rows * (cols * storedBytes(elt) + kRowPadBytes)))
              started[loop] = *pf;
          break;
        }
    auto tile = std::make_shared<Tile>();
    tile->kind = Kind::Smem;
    tile->type = t;
    tile->view = allocSmem(rows, cols, elt);
    Value src = scalars.lookup(op.getSource());
    SmallVector<Value> base;
    for (Value i : op.getIndices())
      base.push_back(scalars.lookup(i));
    size_t rowDim = base.size() - 2;
    Value bound = op.getBound() ? scalars.lookup(op.getBound()) : Value();
    // Where the chip checks a buffer's size (ChipInfo::boundsCheckedLoads)
    // a row-major rank-2 source (the KV tile) is read through a buffer that
    // starts at the tile's first row and ends at the bound's row (or the
    // tile's last): rows from the bound on read as zeros by themselves, so
    // no chunk needs a compare or a branch (a 16-byte chunk never straddles
    // two rows: it is wholly in or wholly out), and a chunk's address is a
    // 32-bit offset from the per-tile base, not a 64-bit add. Sized per
    // tile, the buffer stays far below the resource's 32-bit size and
    // offsets whatever the size of the KV cache.
    Value rsrc;
    auto srcMemT = cast<MemRefType>(src.getType());
    int64_t srcRowBytes = srcMemT.getRank() == 2 && !srcMemT.isDynamicDim(1)
                              ? srcMemT.getDimSize(1) * storedBytes(elt)
                              : 0;
    if (target.chip->boundsCheckedLoads && srcRowBytes &&
        srcMemT.getLayout().isIdentity() && (cols * storedBytes(elt)) % 16 == 0) {
      Type i64 = b.getI64Type();
      auto toI64 = [&](Value x) { return arith::IndexCastOp::create(b, loc(), i64, x).getResult(); };
      Value first = add(mul(base[0], srcRowBytes), mul(base[1], storedBytes(elt)));
      Value addr = arith::AddIOp::create(
          b, loc(),
          toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), src)), toI64(first));
      Value limit = idx(rows);
      if (bound)
        limit = arith::MinSIOp::create(
            b, loc(),
            arith::MaxSIOp::create(b, loc(), arith::SubIOp::create(b, loc(), bound, base[0]),
                                   idx(0)),
            limit);
      rsrc = GpuTarget::boundedBuffer(b, loc(), addr, toI64(mul(limit, srcRowBytes)));
      bound = Value();
    }

    barrier(); // the region may still be read from the previous iteration
    // Copy in 16-byte chunks when rows are whole chunks (every KV and Q row
    // here), else element by element. A chunk never straddles two rows, so
    // the row mask applies per chunk.
    Type st = storageType(elt);
    int64_t eltBytes = storedBytes(st);
    int64_t vec = (cols * eltBytes) % 16 == 0 ? 16 / eltBytes : 1;
    int64_t chunks = rows * cols / vec;
    auto vecT = VectorType::get({vec}, st);
    auto align = vec > 1 ? llvm::MaybeAlign(16) : llvm::MaybeAlign();
    // Stored in a grouped dot's K order (kOrderFor): pieces of `piece`
    // consecutive columns (the low K bits the order keeps) each go to their
    // place.
    std::optional<GroupedOperands> order = kOrderFor(op);
    int64_t piece = vec;
    if (order) {
      piece = 1;
      while (piece < vec && order->logicalBitTo[llvm::Log2_64(piece)] == piece)
        piece *= 2;
      tile->kPerm = std::make_shared<const GroupedOperands>(*order);
    }
    // With whole rounds of chunks, every thread copies chunks / threads of
    // them: a loop with a static trip count, unrolled below.
    bool even = chunks % threads == 0;
    // A row-major source is read through its flat view: the tile's origin
    // (the same for all threads) plus the chunk's offset in the tile, which
    // does not change from one KV tile to the next. LLVM hoists the latter
    // out of the KV loop, so a chunk's address is one add instead of a
    // 64-bit multiply-add of its row index (CDNA: 5 -> 1 instructions per
    // 16-byte load).
    auto srcT = cast<MemRefType>(src.getType());
    Value flat, origin, rowStride;
    if (srcT.getLayout().isIdentity() && !bound && !rsrc) {
      SmallVector<Value> strides(srcT.getRank());
      strides.back() = idx(1);
      for (int64_t d = srcT.getRank() - 2; d >= 0; --d) {
        int64_t n = srcT.getDimSize(d + 1);
        Value dim = ShapedType::isDynamic(n)
                        ? memref::DimOp::create(b, loc(), src, d + 1).getResult()
                        : idx(n);
        strides[d] = arith::MulIOp::create(b, loc(), strides[d + 1], dim);
      }
      origin = idx(0);
      for (auto [i, st] : llvm::zip(base, strides))
        origin = add(origin, arith::MulIOp::create(b, loc(), i, st));
      rowStride = strides[rowDim];
      Value dim0 = ShapedType::isDynamic(srcT.getDimSize(0))
                       ? memref::DimOp::create(b, loc(), src, 0).getResult()
                       : idx(srcT.getDimSize(0));
      Value numel = arith::MulIOp::create(b, loc(), strides[0], dim0);
      flat = memref::ReinterpretCastOp::create(
          b, loc(), MemRefType::get({ShapedType::kDynamic}, srcT.getElementType(),
                                    MemRefLayoutAttrInterface(), srcT.getMemorySpace()),
          src, /*offset=*/OpFoldResult(b.getIndexAttr(0)), ArrayRef<OpFoldResult>{numel},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    }
    // One chunk's 16 bytes from global memory (zeros where `guard` or the
    // row bound says the chunk is not there), and its store to the tile.
    auto loadChunk = [&](Value r, Value c, Value guard) -> Value {
      SmallVector<Value> at = base;
      at[rowDim] = add(base[rowDim], r);
      at[rowDim + 1] = add(base[rowDim + 1], c);
      auto read = [&](OpBuilder &nb, Location l) -> Value {
        if (rsrc) {
          Value off = arith::AddIOp::create(nb, l, arith::MulIOp::create(nb, l, r, idx(srcRowBytes)),
                                            arith::MulIOp::create(nb, l, c, idx(eltBytes)));
          return GpuTarget::boundedLoad16(
              nb, l, rsrc, arith::IndexCastOp::create(nb, l, nb.getI32Type(), off), vecT);
        }
        if (flat) {
          Value inTile = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, r, rowStride), c);
          return vector::LoadOp::create(nb, l, vecT, flat,
                                        ValueRange{arith::AddIOp::create(nb, l, origin, inTile)},
                                        /*nontemporal=*/false, align);
        }
        return vector::LoadOp::create(nb, l, vecT, src, at, /*nontemporal=*/false, align);
      };
      if (bound) {
        Value in = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, at[rowDim], bound);
        guard = guard ? arith::AndIOp::create(b, loc(), guard, in).getResult() : in;
      }
      if (!guard)
        return read(b, loc());
      return scf::IfOp::create(
                 b, loc(), guard,
                 [&](OpBuilder &nb, Location l) { scf::YieldOp::create(nb, l, read(nb, l)); },
                 [&](OpBuilder &nb, Location l) {
                   Value z = vector::BroadcastOp::create(nb, l, vecT, storedZero(nb, l, elt));
                   scf::YieldOp::create(nb, l, z);
                 })
          .getResult(0);
    };
    auto storeChunk = [&](Value v, Value r, Value c) {
      if (order) {
        for (int64_t j = 0; j < vec; j += piece) {
          Value part = v;
          if (piece < vec)
            part = vector::ShuffleOp::create(
                b, loc(), v, v, llvm::to_vector(llvm::seq<int64_t>(j, j + piece)));
          vector::StoreOp::create(b, loc(), part, tile->view,
                                  ValueRange{r, storedColumn(*order, addc(c, j))},
                                  /*nontemporal=*/false, llvm::MaybeAlign(piece * eltBytes));
        }
      } else {
        vector::StoreOp::create(b, loc(), v, tile->view, ValueRange{r, c},
                                /*nontemporal=*/false, align);
      }
    };
    // Outside the KV loop (Q), and inside it on chips that unroll tile
    // loops (CDNA's KV tile), the copy is straight-line in two phases:
    // every round's load, then every round's store. A rolled loop, or one
    // unrolled with each store right behind its load, waits one memory
    // round trip per round; this waits one in all (the backend does not
    // move buffer loads above LDS stores by itself). A chain of casts that
    // only re-rounds the tile into the same storage width (bf16 Q to f16)
    // is applied to the loaded registers in between, instead of a second
    // pass over shared memory after the copy.
    int64_t rounds = llvm::divideCeil(chunks, threads);
    if ((!kvBody || (even && target.chip->unrollTileLoops)) && vec > 1 &&
        rounds <= kMaxStraightRounds) {
      SmallVector<Operation *> chain = foldableChain(op);
      // Through f32 and back to the loaded type is exact: nothing to do.
      bool identity = !chain.empty() && resultElt(chain.back()) == elt &&
                      llvm::all_of(ArrayRef(chain).drop_back(), [&](Operation *o) {
                        return isa<CastOp>(o) && resultElt(o).isF32();
                      });
      // Per round: the loaded chunk, its row and column, and (last round
      // only, where not every thread has a chunk) whether this thread has one.
      SmallVector<std::array<Value, 4>> got;
      for (int64_t i = 0; i < rounds; ++i) {
        Value chunk = addc(tid, i * threads);
        auto [r, c] = chunkCoord(chunk, vec, cols);
        Value guard;
        if ((i + 1) * threads > chunks)
          guard = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, chunk, idx(chunks));
        got.push_back({loadChunk(r, c, guard), r, c, guard});
      }
      for (const auto &g : got) {
        Value v = g[0];
        if (!chain.empty() && !identity) {
          SmallVector<Value> elems;
          for (int64_t e = 0; e < vec; ++e) {
            // As lowerCast and lowerScale evaluate them: f32 values rounded
            // to each cast's type.
            // (the last cast's rounding is its stored form).
            Value f = toF32(b, loc(), vector::ExtractOp::create(b, loc(), v, e), elt);
            for (auto [k, o] : llvm::enumerate(chain)) {
              if (auto sc = dyn_cast<ScaleOp>(o))
                f = arith::MulFOp::create(b, loc(), f, scalars.lookup(sc.getFactor()));
              else if (k + 1 < chain.size())
                f = toF32(b, loc(), fromF32(b, loc(), f, resultElt(o)), resultElt(o));
            }
            elems.push_back(fromF32(b, loc(), f, resultElt(chain.back())));
          }
          v = vector::FromElementsOp::create(b, loc(), vecT, elems);
        }
        if (Value guard = g[3]) {
          auto ifOp = scf::IfOp::create(b, loc(), guard, /*withElseRegion=*/false);
          OpBuilder::InsertionGuard ig(b);
          b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
          storeChunk(v, g[1], g[2]);
        } else {
          storeChunk(v, g[1], g[2]);
        }
      }
      barrier();
      tiles[op] = tile;
      for (Operation *o : chain) {
        auto t2 = std::make_shared<Tile>(*tile);
        t2->type = cast<RankedTensorType>(o->getResult(0).getType());
        tiles[o->getResult(0)] = t2;
        folded.insert(o);
      }
      return success();
    }
    auto loop = even ? scf::ForOp::create(b, loc(), idx(0), idx(chunks / threads), idx(1))
                     : scf::ForOp::create(b, loc(), tid, idx(chunks), idx(threads));
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value chunk = even ? add(tid, mul(loop.getInductionVar(), threads))
                         : loop.getInductionVar();
      auto [r, c] = chunkCoord(chunk, vec, cols);
      storeChunk(loadChunk(r, c, Value()), r, c);
    }
    // Straight-line code: the loads of one tile issue back to back, and the
    // KV loop body has a static instruction count (mla-compile reports it).
    if (even && target.chip->unrollTileLoops)
      (void)loopUnrollFull(loop);
    barrier();
    tiles[op] = tile;
    return success();
  }

  /// A tile-IR index value re-evaluated with the KV loop's induction
  /// variable replaced by `iv`: the arith ops between it and the induction
  /// variable are cloned, values from outside the loop taken as lowered.
  Value rematAt(Value v, KvLoopOp loop, Value iv, IRMapping &m) {
    if (Value done = m.lookupOrNull(v))
      return done;
    if (v == loop.getBody().getArgument(0))
      return iv;
    Operation *def = v.getDefiningOp();
    if (!def || !loop->isProperAncestor(def))
      return scalarNow(v, m);
    for (Value o : def->getOperands())
      m.map(o, rematAt(o, loop, iv, m));
    Operation *c = b.clone(*def, m);
    return c->getResult(cast<OpResult>(v).getResultNumber());
  }

  /// Whether the KV loop's tile load `op` can be double-buffered with async
  /// copies: a rank-2 source with identity layout and static rows of whole
  /// 16-byte chunks, indices computed from the induction variable by arith
  /// ops only, chunks a multiple of the threads.
  bool canPrefetch(LoadOp op, KvLoopOp loop, int64_t reserve) {
    if (!target.chip->asyncTileCopy)
      return false;
    auto src = cast<MemRefType>(op.getSource().getType());
    auto t = op.getResult().getType();
    if (src.getRank() != 2 || !src.getLayout().isIdentity() || src.isDynamicDim(1) ||
        t.getRank() != 2)
      return false;
    int64_t eltBytes = storedBytes(t.getElementType());
    int64_t rowBytes = t.getDimSize(1) * eltBytes;
    if (rowBytes % 16 || (t.getDimSize(0) * rowBytes / 16) % threads)
      return false;
    // Only where two programs still fit beside each other: a second buffer
    // that halves the programs per SM (bf16 KV: 2 x 74 KiB) costs more than
    // the overlap gains. 4 KiB stands for what is allocated later (P, the
    // row-reduction arrays).
    int64_t tileBytes = t.getDimSize(0) * (rowBytes + kRowPadBytes);
    if (2 * (smemBytes + reserve + kvStages * tileBytes + 4096) > target.chip->sharedMemBytes)
      return false;
    std::function<bool(Value)> ok = [&](Value v) {
      if (v == loop.getBody().getArgument(0))
        return true;
      Operation *def = v.getDefiningOp();
      if (!def)
        return !loop->isAncestor(v.getParentBlock()->getParentOp());
      if (!loop->isProperAncestor(def))
        return true;
      return def->getDialect() == b.getContext()->getLoadedDialect<arith::ArithDialect>() &&
             def->getNumRegions() == 0 && llvm::all_of(def->getOperands(), ok);
    };
    return llvm::all_of(op.getIndices(), ok) && (!op.getBound() || ok(op.getBound()));
  }

  /// Async copies (cp.async, 16 bytes each, bypassing L1) of the tile of
  /// `op` at the lowered indices `at` into the shared region at byte
  /// `dstOffset` (padded rows as allocSmem lays them out); rows at or past
  /// the bound are zero-filled (copy size 0, source clamped to the tile's
  /// first chunk, which exists whenever the loop runs).
  void emitAsyncTileCopy(LoadOp op, Value row0, Value col0, Value bound, Value dstOffset) {
    auto t = op.getResult().getType();
    auto src = cast<MemRefType>(op.getSource().getType());
    int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
    Type st = storageType(t.getElementType());
    int64_t eltBytes = storedBytes(st);
    int64_t vec = 16 / eltBytes;
    int64_t padded = cols + kRowPadBytes / eltBytes;
    int64_t chunks = rows * cols / vec;
    Type i64 = b.getI64Type();
    auto toI64 = [&](Value x) { return arith::IndexCastOp::create(b, loc(), i64, x).getResult(); };
    Value srcBase = toI64(memref::ExtractAlignedPointerAsIndexOp::create(
        b, loc(), scalars.lookup(op.getSource())));
    Value dstBase = toI64(add(memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), smemBase),
                              dstOffset));
    auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    // A chunk's address is the tile's first byte (the same for every
    // thread) plus the chunk's 32-bit offset in the tile, which does not
    // change from one tile to the next (hoisted out of the KV loop): one
    // 64-bit add per chunk instead of a 64-bit multiply-add of its row.
    Value tileBase = arith::AddIOp::create(
        b, loc(), srcBase, toI64(mul(add(mul(row0, src.getDimSize(1)), col0), eltBytes)));
    // A rolled loop over the thread's chunks (as lowerLoad's on chips that
    // do not unroll): unrolled, the per-chunk addresses stay live across
    // the KV loop and cost registers.
    auto rounds = scf::ForOp::create(b, loc(), idx(0), idx(chunks / threads), idx(1));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(rounds.getBody());
    {
      auto [r, col] = chunkCoord(add(tid, mul(rounds.getInductionVar(), threads)), vec, cols);
      Value off = arith::IndexCastUIOp::create(
          b, loc(), b.getI32Type(), mul(add(mul(r, src.getDimSize(1)), col), eltBytes));
      Value size;
      if (bound) {
        Value in = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, add(row0, r), bound);
        off = arith::SelectOp::create(b, loc(), in, off, cstI32(b, loc(), 0));
        size = arith::SelectOp::create(b, loc(), in, cstI32(b, loc(), 16), cstI32(b, loc(), 0));
      }
      Value srcAddr =
          arith::AddIOp::create(b, loc(), tileBase, arith::ExtUIOp::create(b, loc(), i64, off));
      Value dstElem = add(mul(r, padded), col);
      Value dstAddr = arith::AddIOp::create(b, loc(), dstBase, toI64(mul(dstElem, eltBytes)));
      NVVM::CpAsyncOp::create(b, loc(), LLVM::IntToPtrOp::create(b, loc(), sharedPtr, dstAddr),
                              LLVM::IntToPtrOp::create(b, loc(), globalPtr, srcAddr),
                              b.getI32IntegerAttr(16),
                              NVVM::LoadCacheModifierKindAttr::get(
                                  b.getContext(), NVVM::LoadCacheModifierKind::CG),
                              size);
    }
  }

  /// `v` as a lowered scalar at the current point: its lowering if it has
  /// one, else a clone of the pure arith ops that compute it from lowered
  /// values (null where that is not possible). Lets code that the tile IR
  /// places later start earlier (startPrefetch).
  Value scalarNow(Value v, IRMapping &m) {
    if (Value done = scalars.lookupOrNull(v))
      return done;
    if (Value done = m.lookupOrNull(v))
      return done;
    Operation *def = v.getDefiningOp();
    if (!def || def->getDialect() != b.getContext()->getLoadedDialect<arith::ArithDialect>() ||
        def->getNumRegions() != 0)
      return Value();
    for (Value o : def->getOperands())
      if (Value x = scalarNow(o, m))
        m.map(o, x);
      else
        return Value();
    return b.clone(*def, m)->getResult(cast<OpResult>(v).getResultNumber());
  }

  /// Sets up the double buffer of KV loop `loop`'s tile (if it has one
  /// canPrefetch accepts) and sends the first tile's async copies, at the
  /// current point. `reserve` bytes of shared memory are counted as
  /// allocated already (a tile the caller is about to allocate). Called at
  /// the Q load, the first tile's memory latency overlaps Q's copy; null
  /// if the loop's bounds or the tile's indices cannot be computed yet.
  std::optional<Prefetch> startPrefetch(KvLoopOp loop, int64_t reserve) {
    std::optional<Prefetch> pf;
    loop.getBody().walk([&](LoadOp ld) {
      if (!pf && canPrefetch(ld, loop, reserve))
        pf = Prefetch{ld, loop, {}, 0, {}, {}, {}, {}, {}};
    });
    if (!pf)
      return std::nullopt;
    IRMapping outer;
    Value lowerV = scalarNow(loop.getLower(), outer);
    Value upperV = scalarNow(loop.getUpper(), outer);
    Value bound;
    if (pf->load.getBound() && !(bound = scalarNow(pf->load.getBound(), outer)))
      return std::nullopt;
    if (!lowerV || !upperV)
      return std::nullopt;
    // The start indices: in-loop arith on the induction variable (rematAt)
    // over values computable now.
    std::function<bool(Value)> ready = [&](Value v) {
      if (v == loop.getBody().getArgument(0))
        return true;
      Operation *def = v.getDefiningOp();
      if (def && loop->isProperAncestor(def))
        return llvm::all_of(def->getOperands(), ready);
      return bool(scalarNow(v, outer));
    };
    if (!llvm::all_of(pf->load.getIndices(), ready))
      return std::nullopt;
    auto t = pf->load.getResult().getType();
    for (int64_t i = 0; i < kvStages; ++i) {
      Value v = allocSmem(t.getDimSize(0), t.getDimSize(1), t.getElementType());
      pf->viewType = cast<MemRefType>(v.getType());
      pf->offsets.push_back(lastSmemOffset);
    }
    pf->bufferBytes = pf->offsets.size() > 1 ? pf->offsets[1] - pf->offsets[0] : 0;
    // The first kvStages - 1 tiles, one commit group each (empty past the
    // loop's end, so that every iteration finds the same count in flight).
    for (int64_t i = 0; i + 1 < kvStages; ++i) {
      Value start = addc(lowerV, i * loop.getStep());
      Value any = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, start, upperV);
      auto first = scf::IfOp::create(b, loc(), any, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(first.thenBlock()->getTerminator());
        IRMapping m = outer;
        Value row0 = rematAt(pf->load.getIndices()[0], loop, start, m);
        Value col0 = rematAt(pf->load.getIndices()[1], loop, start, m);
        emitAsyncTileCopy(pf->load, row0, col0, bound, idx(pf->offsets[i]));
      }
      NVVM::CpAsyncCommitGroupOp::create(b, loc());
    }
    return pf;
  }

  /// The multi-buffered tile load inside the KV loop (kvStages buffers,
  /// kvStages - 1 tiles in flight): wait for this tile's copies, start
  /// tile t + kvStages - 1's into the buffer the previous iteration read,
  /// and read this one.
  LogicalResult lowerPrefetchedLoad(LoadOp op) {
    Prefetch &p = *prefetch;
    Value bound = op.getBound() ? scalars.lookup(op.getBound()) : Value();
    Value iter = arith::DivUIOp::create(b, loc(), arith::SubIOp::create(b, loc(), p.iv, p.lower),
                                        p.step);
    auto bufferAt = [&](Value i) -> Value {
      return addc(mul(arith::RemUIOp::create(b, loc(), i, idx(kvStages)), p.bufferBytes),
                  p.offsets[0]);
    };
    // Groups committed so far: kvStages - 1 before the loop and one per
    // iteration, tile t's being group t. Waiting until at most
    // kvStages - 2 are pending means this thread's copies of this tile have
    // landed; the barrier then says every thread's have, and that every
    // warp is done with the previous iteration, whose buffer the new copies
    // overwrite.
    NVVM::CpAsyncWaitGroupOp::create(b, loc(), kvStages - 2);
    barrier();
    Value next = add(p.iv, mul(p.step, kvStages - 1));
    Value hasNext = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, next, p.upper);
    auto ifOp = scf::IfOp::create(b, loc(), hasNext, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      IRMapping m;
      Value row0 = rematAt(op.getIndices()[0], p.loop, next, m);
      Value col0 = rematAt(op.getIndices()[1], p.loop, next, m);
      emitAsyncTileCopy(op, row0, col0, bound, bufferAt(addc(iter, kvStages - 1)));
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc());
    auto tile = std::make_shared<Tile>();
    tile->kind = Kind::Smem;
    tile->type = op.getResult().getType();
    tile->view = memref::ViewOp::create(b, loc(), p.viewType, smemBase, bufferAt(iter),
                                        ValueRange{});
    tiles[op] = tile;
    return success();
  }

  LogicalResult lowerElementwise(Value result, Value source,
                                 std::function<Value(OpBuilder &, Location, Value)> fn) {
    auto src = get(source);
    auto t = cast<RankedTensorType>(result.getType());
    if (src->kind == Kind::Smem || src->kind == Kind::Expr) {
      auto e = std::make_shared<Tile>();
      e->kind = Kind::Expr;
      e->type = t;
      e->src = src;
      e->fn = fn;
      tiles[result] = e;
      return success();
    }
    SmallVector<Value> regs;
    for (Value r : src->regs)
      regs.push_back(fn(b, loc(), r));
    tiles[result] = regTile(src->kind, t, std::move(regs));
    return success();
  }

  LogicalResult lowerCast(CastOp op) {
    Type to = op.getResult().getType().getElementType();
    auto src = get(op.getSource());
    if (src && src->kind == Kind::Acc && !to.isF32()) {
      // Keep the rounded stored values beside their f32 reading: a dot
      // operand (P) is written to shared memory as is.
      SmallVector<Value> regs, stored;
      for (size_t i = 0; i < src->regs.size(); ++i) {
        // Pairs of registers through the chip's fp8 pair rounding where it
        // has one.
        if (isFp8(to) && i + 1 < src->regs.size())
          if (auto hw = target.f32PairToFp8(b, loc(), src->regs[i], src->regs[i + 1], to)) {
            stored.append(hw->begin(), hw->end());
            ++i;
            continue;
          }
        stored.push_back(fromF32(b, loc(), src->regs[i], to));
      }
      for (Value v : stored)
        regs.push_back(toF32(b, loc(), v, to));
      auto t = regTile(Kind::Acc, op.getResult().getType(), std::move(regs));
      t->stored = std::move(stored);
      tiles[op] = t;
      return success();
    }
    return lowerElementwise(op.getResult(), op.getSource(),
                            [to](OpBuilder &nb, Location l, Value v) {
                              // Registers hold f32 rounded to the type.
                              return toF32(nb, l, fromF32(nb, l, v, to), to);
                            });
  }

  LogicalResult lowerScale(ScaleOp op) {
    Value factor = scalars.lookup(op.getFactor());
    return lowerElementwise(op.getResult(), op.getSource(),
                            [factor](OpBuilder &nb, Location l, Value v) {
                              return arith::MulFOp::create(nb, l, v, factor).getResult();
                            });
  }

  LogicalResult lowerSlice(SliceOp op) {
    auto src = get(op.getSource());
    if (src->kind != Kind::Smem)
      return fail("the GPU lowering slices shared-memory tiles only");
    auto t = std::make_shared<Tile>(*src);
    t->type = op.getResult().getType();
    t->rowOff += op.getOffsets()[0];
    t->colOff += op.getOffsets()[1];
    tiles[op] = t;
    return success();
  }

  LogicalResult lowerMask(MaskOp op) {
    auto src = get(op.getSource());
    if (src->kind != Kind::Acc)
      return fail("the GPU lowering masks register tiles only");
    auto l = accLayout(src->type);
    if (failed(l))
      return failure();
    Value off = scalars.lookup(op.getOffset()), bound = scalars.lookup(op.getBound());
    Value fill = arith::ConstantOp::create(b, loc(), op.getFillAttr());
    SmallVector<Value> regs;
    for (int64_t r = 0; r < l->size(); ++r) {
      auto [row, col] = accCoord(*l, r);
      Value pos = add(off, op.getDim() == 0 ? row : col);
      Value out = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::sge, pos, bound);
      regs.push_back(arith::SelectOp::create(b, loc(), out, fill, src->regs[r]));
    }
    tiles[op] = regTile(Kind::Acc, op.getType(), std::move(regs));
    return success();
  }

  /// The grouping of K steps for a dot of `mi` over K = `k` whose B is
  /// stored as `rhsElt` and read along K: as many steps as keep a lane's B
  /// bytes within one 16-byte load and divide K.
  static std::optional<GroupedOperands> groupingFor(const MatrixInstr *mi, Type rhsElt,
                                                    int64_t k) {
    int64_t bBytes = storedBytes(rhsElt);
    for (int64_t steps = 8; steps > 1; steps /= 2) {
      auto g = groupKSteps(*mi, steps);
      if (g && g->kRun * bBytes <= 16 && k % g->k == 0)
        return g;
    }
    return std::nullopt;
  }

  /// The K order a loaded tile is stored in (Tile::kPerm): where the
  /// tile, through element-wise casts / scales read only by each other, is
  /// the A operand of grouped dots inside a KV loop (and nothing else) whose
  /// instruction reads A with ldmatrix (sm_90), it is stored in the
  /// grouping's K order; each step's A fragment is then one ldmatrix.x4
  /// instead of 16-byte loads of rows g and g + 8 that the fragment
  /// interleaves with register moves. The order is applied by the copy
  /// itself (4-byte pieces of each 16-byte chunk), so it costs no pass.
  std::optional<GroupedOperands> kOrderFor(LoadOp ld) {
    Value v = ld.getResult();
    while (v.hasOneUse() && isa<CastOp, ScaleOp>(*v.getUsers().begin()))
      v = v.getUsers().begin()->getResult(0);
    auto t = cast<RankedTensorType>(v.getType());
    if (v.use_empty() || t.getRank() != 2)
      return std::nullopt;
    std::optional<GroupedOperands> order;
    for (Operation *user : v.getUsers()) {
      auto d = dyn_cast<DotOp>(user);
      auto loop = d ? d->getParentOfType<KvLoopOp>() : KvLoopOp();
      if (!d || d.getLhs() != v || d.getRhs() == v || !d.getTransposeRhs() || !loop ||
          loop->isAncestor(ld))
        return std::nullopt;
      const MatrixInstr *mi =
          target.instrFor(t.getElementType(), d.getRhs().getType().getElementType());
      bool asStored = (mi->abType == MatrixElem::F16 && t.getElementType().isF16()) ||
                      (mi->abType == MatrixElem::BF16 && t.getElementType().isBF16());
      if (!mi->aByLdmatrix || !asStored)
        return std::nullopt;
      auto g = groupingFor(mi, d.getRhs().getType().getElementType(), t.getDimSize(1));
      if (!g || (order && order->logicalBitTo != g->logicalBitTo))
        return std::nullopt;
      order = std::move(g);
    }
    return order;
  }

  /// The column a kPerm tile stores source column `col` at: the inverse of
  /// GroupedOperands::physicalK (which only moves bits, so its inverse moves
  /// them back).
  Value storedColumn(const GroupedOperands &g, Value col) {
    Value in = arith::RemUIOp::create(b, loc(), col, idx(g.k));
    Value out = arith::SubIOp::create(b, loc(), col, in);
    for (auto [i, to] : llvm::enumerate(g.logicalBitTo)) {
      int64_t from = llvm::Log2_64(to);
      Value bit = arith::AndIOp::create(
          b, loc(), arith::ShRUIOp::create(b, loc(), in, idx(from)), idx(1));
      out = add(out, mul(bit, int64_t(1) << i));
    }
    return out;
  }

  LogicalResult lowerDot(DotOp op) {
    auto resT = op.getResult().getType();
    // fp8 x fp8 on a chip with an fp8 instruction of that format: the
    // operands go in as stored; f16 x (f16 | fp8): as f16; else as bf16
    // (the accumulator layout is the bf16 instruction's either way, see
    // instrFor).
    Type lhsElt = op.getLhs().getType().getElementType();
    const MatrixInstr *mi =
        target.instrFor(lhsElt, op.getRhs().getType().getElementType());
    bool raw = bitWidth(mi->abType) == 8;
    Type operandElt = raw                               ? lhsElt
                      : mi->abType == MatrixElem::F16 ? Type(b.getF16Type())
                                                      : Type(b.getBF16Type());
    auto l = accLayout(resT);
    if (failed(l))
      return failure();
    auto lhs = ensureShared(get(op.getLhs()));
    auto rhs = ensureShared(get(op.getRhs()));
    if (failed(lhs) || failed(rhs))
      return failure();
    int64_t k = op.getLhs().getType().getDimSize(1);
    if (k % mi->k != 0)
      return fail("contraction size " + Twine(k) + " is not a multiple of the " +
                  "matrix instruction's K (" + Twine(mi->k) + ")");
    bool trans = op.getTransposeRhs();
    SmallVector<Value> init;
    if (op.getAcc())
      init = get(op.getAcc())->regs;
    else
      init.assign(l->size(), cstF32(b, loc(), 0.0f));

    // Lane offsets of this instruction's operand layouts (init() computed
    // those of the bf16 instruction).
    Value aRowI = aRow, aColI = aCol, bRowI = bRow, bColI = bCol;
    if (mi != target.mma) {
      aRowI = laneOffset(lane, mi->a.laneBases, true);
      aColI = laneOffset(lane, mi->a.laneBases, false);
      bRowI = laneOffset(lane, mi->b.laneBases, true);
      bColI = laneOffset(lane, mi->b.laneBases, false);
    }
    auto read = [&](const Tile &t, const LaneLayout &layout, bool transposed,
                    function_ref<std::pair<Value, Value>(Coord)> at) {
      return raw ? readOperandRaw(t, layout, transposed, at)
                 : readOperand(t, layout, transposed, operandElt, at);
    };
    // Where both operands run along K in shared memory (A rows, B stored
    // transposed: S = Q K^T), consecutive K steps are grouped with K
    // permuted alike in A and B (groupKSteps): a lane's B elements of all
    // the steps are one 16-byte load (m16n8k16 fp8 K: 4 steps in one load
    // instead of eight 2-byte loads; 16x16x32 MFMA: 2 steps per load).
    std::optional<GroupedOperands> grouped;
    if (trans && (*lhs)->kind == Kind::Smem && (*rhs)->kind == Kind::Smem)
      grouped = groupingFor(mi, (*rhs)->type.getElementType(), k);
    if (const auto &perm = (*lhs)->kPerm;
        perm && (!grouped || perm->steps != grouped->steps || perm->k != grouped->k ||
                 perm->logicalBitTo != grouped->logicalBitTo))
      return fail("reads an operand stored in another K order (internal error)");
    // A through ldmatrix.x4 where the instruction allows it and A is
    // stored as the operand type, rows 16-byte aligned.
    bool aByLdmatrix = false;
    if (mi->aByLdmatrix && !raw && !grouped) {
      const Tile &t = **lhs;
      aByLdmatrix = t.kind == Kind::Smem && t.type.getElementType() == operandElt &&
                    rowStrideBytes(t) % 16 == 0 && t.colOff % 8 == 0;
    }
    int64_t kStep = grouped ? grouped->k : mi->k;
    // K split across warp pairs (ChipInfo::splitKAcrossWarps): warps 2p and
    // 2p + 1 both compute the columns of both, warp 2p over the first
    // ceil(groups / 2) K groups and 2p + 1 over the rest, and swap the
    // partial sums of each other's columns through shared memory. A warp
    // then reads about half of A per tile instead of all of it (S = Q K^T
    // with 8 warps: every warp re-reading Q's 18 KB was 46 % of the KV
    // loop's shared-memory traffic on sm_90), for one exchange of its own
    // accumulators.
    int64_t kSplit = 1, splitAt = k;
    if (grouped && target.chip->splitKAcrossWarps && !op.getAcc() && warps % 2 == 0 &&
        k / kStep >= 2) {
      kSplit = 2;
      splitAt = (k / kStep + 1) / 2 * kStep;
      init.append(l->size(), cstF32(b, loc(), 0.0f));
    }
    Value kLo = idx(0), odd;
    if (kSplit == 2) {
      odd = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ne,
                                  arith::AndIOp::create(b, loc(), warp, idx(1)), idx(0));
      kLo = arith::SelectOp::create(b, loc(), odd, idx(splitAt), idx(0));
    }
    // One K group of a grouped dot at column kk: its operand reads and
    // matrix instructions on `acc` (all accumulators).
    auto emitGroup = [&](Value kk, SmallVector<Value> acc) {
      LaneLayout ga = grouped->a(), gb = grouped->b();
      Value aRowG = laneOffset(lane, ga.laneBases, true);
      Value aColG = laneOffset(lane, ga.laneBases, false);
      Value bRowG = laneOffset(lane, gb.laneBases, true);
      Value bColG = laneOffset(lane, gb.laneBases, false);
      // A in the grouping's K order already (kOrderFor): each step's
      // fragment with ldmatrix at its logical columns.
      const auto &perm = (*lhs)->kPerm;
      bool aPermuted = perm && perm->steps == grouped->steps && perm->k == grouped->k &&
                       perm->logicalBitTo == grouped->logicalBitTo;
      SmallVector<Value> a;
      if (aPermuted) {
        for (int64_t s = 0; s < grouped->steps; ++s)
          llvm::append_range(a, readAByLdmatrix(**lhs, addc(kk, s * mi->k)));
      } else {
        a = read(**lhs, ga, /*transposed=*/false, [&](Coord c) {
          return std::pair(addc(aRowG, c.row), add(kk, addc(aColG, c.col)));
        });
      }
      // Tiles 0 .. l->tiles - 1 are this warp's, the rest (K split) its
      // partner's.
      SmallVector<SmallVector<Value>> bs;
      for (int64_t j = 0; j < l->tiles * kSplit; ++j)
        bs.push_back(read(**rhs, gb, /*transposed=*/true, [&](Coord c) {
          Value n = addc(bColG, c.col);
          Value col = j < l->tiles ? tileColumn(*l, n, j)
                                   : tileColumnOf(*l, partnerWarp(), n, j - l->tiles);
          return std::pair(col, add(kk, addc(bRowG, c.row)));
        }));
      int64_t ea = mi->a.elemsPerLane(), eb = mi->b.elemsPerLane();
      for (int64_t s = 0; s < grouped->steps; ++s)
        for (int64_t j = 0; j < l->tiles * kSplit; ++j) {
          auto d = target.matrixOp(b, loc(), mi, operandElt,
                                   ArrayRef<Value>(a).slice(s * ea, ea),
                                   ArrayRef<Value>(bs[j]).slice(s * eb, eb),
                                   ArrayRef<Value>(acc).slice(j * l->elems, l->elems));
          llvm::copy(d, acc.begin() + j * l->elems);
        }
      return acc;
    };
    // K split across a warp pair: both walk the same number of whole groups
    // (a loop with a static trip count, unrolled: the rolled walk of 5 or 4
    // groups spent about 12 instructions a group on its loop), and the warp
    // with the extra group of an odd count takes it under a warp-uniform
    // branch.
    if (kSplit == 2) {
      int64_t each = (k / kStep) / 2;
      auto walk = scf::ForOp::create(b, loc(), idx(0), idx(each), idx(1), init);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(walk.getBody());
        Value kk = add(kLo, mul(walk.getInductionVar(), kStep));
        scf::YieldOp::create(b, loc(),
                             emitGroup(kk, SmallVector<Value>(walk.getRegionIterArgs())));
      }
      SmallVector<Value> acc = unrollFully(walk);
      if ((k / kStep) % 2) {
        // The first warp of the pair walks ceil(groups / 2) (splitAt).
        auto extra = scf::IfOp::create(b, loc(), TypeRange(ValueRange(acc)), odd,
                                       /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(extra.thenBlock());
          scf::YieldOp::create(b, loc(), acc);
          b.setInsertionPointToStart(extra.elseBlock());
          scf::YieldOp::create(b, loc(), emitGroup(add(kLo, idx(each * kStep)), acc));
        }
        acc.assign(extra.getResults().begin(), extra.getResults().end());
      }
      finishDot(op, *l, kSplit, std::move(acc), resT);
      return success();
    }
    auto loop = scf::ForOp::create(b, loc(), kLo, idx(k), idx(kStep), init);
    if (grouped) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      scf::YieldOp::create(b, loc(),
                           emitGroup(loop.getInductionVar(),
                                     SmallVector<Value>(loop.getRegionIterArgs())));
    } else {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value kk = loop.getInductionVar();
      // A (m, k) is row m, column kk + k of lhs.
      SmallVector<Value> a =
          aByLdmatrix ? readAByLdmatrix(**lhs, kk)
                      : read(**lhs, mi->a, /*transposed=*/false,
                             [&](Coord c) -> std::pair<Value, Value> {
                               return {addc(aRowI, c.row), add(kk, addc(aColI, c.col))};
                             });
      SmallVector<Value> acc(loop.getRegionIterArgs());
      SmallVector<Value> next;
      // B (k, n) of tile j is rhs[kk + k][col] or, transposed,
      // rhs[col][kk + k] (then consecutive k are adjacent in a row), with
      // col = tileColumn(n, j) (interleaved, see accCoord).
      SmallVector<SmallVector<Value>> bAll;
      if (!trans)
        bAll = readAcrossTiles(**rhs, mi->b, l->tiles, raw, operandElt, [&](Coord c) {
          return std::pair(add(kk, addc(bRowI, c.row)), tileColumn(*l, addc(bColI, c.col), 0));
        });
      for (int64_t j = 0; j < l->tiles; ++j) {
        SmallVector<Value> bv =
            !bAll.empty() ? bAll[j]
                          : read(**rhs, mi->b, /*transposed=*/trans,
                                 [&](Coord c) -> std::pair<Value, Value> {
                                   Value kr = add(kk, addc(bRowI, c.row));
                                   Value col = tileColumn(*l, addc(bColI, c.col), j);
                                   return trans ? std::pair(col, kr) : std::pair(kr, col);
                                 });
        auto d = target.matrixOp(b, loc(), mi, operandElt, a, bv,
                                 ArrayRef<Value>(acc).slice(j * l->elems, l->elems));
        next.append(d.begin(), d.end());
      }
      scf::YieldOp::create(b, loc(), next);
    }
    // The K steps of one dot, unrolled (see lowerLoad).
    SmallVector<Value> results =
        target.chip->unrollTileLoops ? unrollFully(loop) : SmallVector<Value>(loop.getResults());
    finishDot(op, *l, kSplit, std::move(results), resT);
    return success();
  }

  /// Unrolls `loop` (static trip count) and returns the values that replace
  /// its results: unrolling replaces them, so they are held through a
  /// placeholder use meanwhile.
  SmallVector<Value> unrollFully(scf::ForOp loop) {
    auto hold = UnrealizedConversionCastOp::create(b, loc(), TypeRange(loop.getResultTypes()),
                                                   loop.getResults());
    (void)loopUnrollFull(loop);
    SmallVector<Value> out(hold.getInputs());
    hold.erase();
    return out;
  }

  /// The dot's result from its accumulators: with K split across warp pairs
  /// (kSplit 2), `results` holds this warp's columns and then its
  /// partner's, and the pair swaps the partner halves through shared
  /// memory: row block w of `slots` holds, lane-major, the partial sums of
  /// warp w's columns computed by its partner.
  void finishDot(DotOp op, const AccLayout &l, int64_t kSplit, SmallVector<Value> results,
                 RankedTensorType resT) {
    if (kSplit == 2) {
      int64_t n = l.size();
      Value slots = allocSmem(warps * n, wave, b.getF32Type());
      barrierBeforeRewrite();
      for (int64_t r = 0; r < n; ++r)
        memref::StoreOp::create(b, loc(), results[n + r], slots,
                                ValueRange{addc(mul(partnerWarp(), n), r), lane});
      barrier();
      for (int64_t r = 0; r < n; ++r)
        results[r] = arith::AddFOp::create(
            b, loc(), results[r],
            memref::LoadOp::create(b, loc(), slots, ValueRange{addc(mul(warp, n), r), lane}));
      results.resize(n);
    }
    tiles[op] = regTile(Kind::Acc, resT, results);
  }

  LogicalResult lowerOnlineSoftmax(OnlineSoftmaxOp op) {
    auto s = get(op.getScores()), m = get(op.getMax()), lsum = get(op.getSum());
    auto acc = get(op.getAcc());
    if (s->kind != Kind::Acc || acc->kind != Kind::Acc || m->kind != Kind::RowSlice ||
        (lsum->kind != Kind::RowSlice && lsum->kind != Kind::RowPartial))
      return fail("unsupported placements for online softmax");
    auto ls = accLayout(s->type), la = accLayout(acc->type);
    if (failed(ls) || failed(la))
      return failure();
    auto maxf = [&](Value x, Value y) -> Value {
      return arith::MaximumFOp::create(b, loc(), x, y);
    };
    auto addf = [&](Value x, Value y) -> Value {
      return arith::AddFOp::create(b, loc(), x, y);
    };
    SmallVector<Value> tileMax =
        rowReduce(*ls, s->regs, -std::numeric_limits<float>::infinity(), maxf);
    SmallVector<Value> newMax, ref, alpha;
    for (auto [g, old] : llvm::enumerate(m->regs)) {
      newMax.push_back(maxf(old, tileMax[g]));
      ref.push_back(finiteOrZero(b, loc(), newMax.back()));
      alpha.push_back(target.exp2(
          b, loc(), arith::SubFOp::create(b, loc(), old, ref.back())));
    }
    SmallVector<Value> probs;
    for (int64_t r = 0; r < ls->size(); ++r) {
      int64_t g = ls->group(r % ls->elems);
      probs.push_back(target.exp2(
          b, loc(), arith::SubFOp::create(b, loc(), s->regs[r], ref[g])));
    }
    // A running sum kept per lane (RowPartial) takes this lane's share of
    // the tile's row sums: the sum over lanes and warps is linear in it, so
    // it is formed once, in the finalize, instead of every tile (shuffles,
    // a shared-memory exchange and a barrier).
    SmallVector<Value> rowSum = lsum->kind == Kind::RowPartial
                                    ? laneRowReduce(*ls, probs, 0.0f, addf)
                                    : rowReduce(*ls, probs, 0.0f, addf);
    SmallVector<Value> newSum;
    for (auto [g, old] : llvm::enumerate(lsum->regs))
      newSum.push_back(
          addf(arith::MulFOp::create(b, loc(), old, alpha[g]), rowSum[g]));
    SmallVector<Value> newAcc;
    for (int64_t r = 0; r < la->size(); ++r)
      newAcc.push_back(arith::MulFOp::create(
          b, loc(), acc->regs[r], alpha[la->group(r % la->elems)]));
    tiles[op.getProbs()] = regTile(Kind::Acc, s->type, probs);
    tiles[op.getNewMax()] = regTile(Kind::RowSlice, m->type, newMax);
    tiles[op.getNewSum()] = regTile(lsum->kind, lsum->type, newSum);
    tiles[op.getNewAcc()] = regTile(Kind::Acc, acc->type, newAcc);
    return success();
  }

  LogicalResult lowerFinalize(SoftmaxFinalizeOp op) {
    auto acc = get(op.getAcc()), m = get(op.getMax()), lsum = get(op.getSum());
    auto la = accLayout(acc->type);
    if (failed(la))
      return failure();
    if (lsum->kind != Kind::RowSlice && lsum->kind != Kind::RowPartial)
      return fail("unsupported placement of the row sum");
    Value scale = op.getScale() ? scalars.lookup(op.getScale()) : cstF32(b, loc(), 1.0f);
    Value zero = cstF32(b, loc(), 0.0f), one = cstF32(b, loc(), 1.0f);
    SmallVector<Value> sums = lsum->regs;
    if (lsum->kind == Kind::RowPartial) {
      // Complete the per-lane shares.
      auto l = rowLayout(lsum->type.getDimSize(0));
      if (failed(l))
        return failure();
      sums = acrossLanesAndWarps(*l, sums, 0.0f, [&](Value x, Value y) -> Value {
        return arith::AddFOp::create(b, loc(), x, y);
      });
    }
    SmallVector<Value> factor, empty, lse;
    for (auto [g, sum] : llvm::enumerate(sums)) {
      Value e = arith::CmpFOp::create(b, loc(), arith::CmpFPredicate::OEQ, sum, zero);
      Value safe = arith::SelectOp::create(b, loc(), e, one, sum);
      empty.push_back(e);
      factor.push_back(arith::DivFOp::create(b, loc(), scale, safe));
      Value l2 = arith::AddFOp::create(b, loc(), m->regs[g],
                                       target.log2(b, loc(), safe));
      Value ln = arith::MulFOp::create(b, loc(), l2, cstF32(b, loc(), 1.0f / kLog2E));
      lse.push_back(arith::SelectOp::create(
          b, loc(), e, cstF32(b, loc(), -std::numeric_limits<float>::infinity()), ln));
    }
    SmallVector<Value> out;
    for (int64_t r = 0; r < la->size(); ++r) {
      int64_t g = la->group(r % la->elems);
      Value v = arith::MulFOp::create(b, loc(), acc->regs[r], factor[g]);
      out.push_back(arith::SelectOp::create(b, loc(), empty[g], zero, v));
    }
    tiles[op.getOut()] = regTile(Kind::Acc, acc->type, out);
    tiles[op.getLse()] = regTile(Kind::RowSlice, m->type, lse);
    return success();
  }

  /// Stage 2: out = sum_s w_s * partial_s / sum_s w_s, w_s = exp(lse_s -
  /// max lse). One pass over the splits with a running max (the online
  /// softmax rescaling), `width` splits per iteration: their loads are
  /// independent, so a thread has that many in flight instead of waiting
  /// for each (a loop over 64 splits with one load at a time took 17.6 us
  /// on the H200). Past the last split the index is clamped to it and its
  /// weight forced to zero: no branches around the loads. All of a thread's
  /// elements share the loop.
  LogicalResult lowerSplitKReduce(SplitKReduceOp op) {
    auto t = op.getResult().getType();
    int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
    int64_t numel = rows * cols;
    Value part = scalars.lookup(op.getPartial()), lse = scalars.lookup(op.getLse());
    Value bIdx = scalars.lookup(op.getBatch()), h0 = scalars.lookup(op.getHead());
    Value n = scalars.lookup(op.getNumSplits());
    // Launched as stage 1's dependent (ChipInfo::dependentLaunch), the
    // combine waits here, before its first read of stage 1's results,
    // until all of stage 1's stores are visible; reads of inputs placed
    // before it in the kernel (the output row from qo_indptr) overlap the
    // wait. Launched normally, the wait returns at once.
    if (target.chip->dependentLaunch)
      NVVM::GriddepcontrolOp::create(b, loc(), NVVM::GridDepActionKind::wait);
    float negInfF = -std::numeric_limits<float>::infinity();
    Value negInf = cstF32(b, loc(), negInfF);
    Value zero = cstF32(b, loc(), 0.0f);
    // A thread combines runs of `run` adjacent columns of one head (Blocked
    // with blockRun): one 16-byte load per split and run, and one set of
    // split weights per run, where the columns divide into whole rounds of
    // runs; else single elements.
    int64_t run = 4;
    auto partT = cast<MemRefType>(part.getType());
    if (cols % run || numel % (threads * run) || !partT.getElementType().isF32() ||
        !partT.getLayout().isIdentity())
      run = 1;
    int64_t perThread = (numel + threads * run - 1) / (threads * run);
    SmallVector<Value> heads, colIdx;
    for (int64_t k = 0; k < perThread; ++k) {
      Value e = mul(addc(tid, k * threads), run);
      if (numel % (threads * run) != 0) // threads past the end compute element 0
        e = arith::SelectOp::create(
            b, loc(), arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, e, idx(numel)), e,
            idx(0));
      heads.push_back(add(h0, arith::DivUIOp::create(b, loc(), e, idx(cols))));
      colIdx.push_back(arith::RemUIOp::create(b, loc(), e, idx(cols)));
    }
    // Per run: running max and sum of weights, and the weighted sum of
    // each of its elements.
    int64_t per = 2 + run;
    SmallVector<Value> init;
    for (int64_t k = 0; k < perThread; ++k) {
      init.append({negInf, zero});
      init.append(run, zero);
    }
    Value last = arith::SubIOp::create(b, loc(), n, idx(1));
    auto vecT = VectorType::get({run}, b.getF32Type());
    auto combineLoop = [&](int64_t width) -> SmallVector<Value> {
      auto loop = scf::ForOp::create(b, loc(), idx(0), n, idx(width), init);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(loop.getBody());
        Value s0 = loop.getInductionVar();
        SmallVector<Value> in, at;
        for (int64_t u = 0; u < width; ++u) {
          Value su = addc(s0, u);
          in.push_back(arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, su, n));
          at.push_back(arith::SelectOp::create(b, loc(), in.back(), su, last));
        }
        SmallVector<Value> next;
        for (int64_t k = 0; k < perThread; ++k) {
          SmallVector<Value> l;
          SmallVector<SmallVector<Value>> p;
          for (int64_t u = 0; u < width; ++u) {
            Value v = memref::LoadOp::create(b, loc(), lse, ValueRange{bIdx, at[u], heads[k]});
            l.push_back(arith::SelectOp::create(b, loc(), in[u], v, negInf));
            SmallVector<Value, 4> idxs{bIdx, at[u], heads[k], colIdx[k]};
            SmallVector<Value> elems;
            if (run == 1) {
              elems.push_back(memref::LoadOp::create(b, loc(), part, idxs));
            } else {
              Value vec = vector::LoadOp::create(b, loc(), vecT, part, idxs,
                                                 /*nontemporal=*/false, llvm::MaybeAlign(run * 4));
              for (int64_t j = 0; j < run; ++j)
                elems.push_back(vector::ExtractOp::create(b, loc(), vec, ArrayRef<int64_t>{j}));
            }
            p.push_back(std::move(elems));
          }
          ValueRange args = loop.getRegionIterArgs().slice(per * k, per);
          Value m = args[0], den = args[1];
          SmallVector<Value> acc(args.drop_front(2));
          Value mNew = m;
          for (Value v : l)
            mNew = arith::MaximumFOp::create(b, loc(), mNew, v);
          Value ref = finiteOrZero(b, loc(), mNew);
          auto weight = [&](Value x) {
            return target.exp2(b, loc(),
                               arith::MulFOp::create(b, loc(),
                                                     arith::SubFOp::create(b, loc(), x, ref),
                                                     cstF32(b, loc(), kLog2E)));
          };
          Value c = weight(m);
          den = arith::MulFOp::create(b, loc(), den, c);
          for (Value &a : acc)
            a = arith::MulFOp::create(b, loc(), a, c);
          for (int64_t u = 0; u < width; ++u) {
            Value w = weight(l[u]);
            den = arith::AddFOp::create(b, loc(), den, w);
            for (int64_t j = 0; j < run; ++j)
              acc[j] = arith::AddFOp::create(b, loc(), acc[j],
                                             arith::MulFOp::create(b, loc(), w, p[u][j]));
          }
          next.append({mNew, den});
          next.append(acc.begin(), acc.end());
        }
        scf::YieldOp::create(b, loc(), next);
      }
      return SmallVector<Value>(loop.getResults());
    };
    // The loop's width: 8 splits per iteration where that covers them,
    // else 16, else 32, so that up to 32 splits are one round of loads in
    // flight instead of several in turn (H200, 32 splits, the combine alone
    // after an L2 flush: 11.6 us in 4 rounds of 8, 9.2 in 2 of 16, 8.3 in
    // one of 32; the whole decode at bs 4 / kv 8192 26.9 -> 22.4 us). The
    // kernel keeps the registers of its widest loop (sm_90: 32 -> 168),
    // which cut the combine programs resident per SM from 16 to 3; the
    // whole decode of the 4-split shapes did not change beyond noise.
    const int64_t widths[] = {8, 16, 32};
    // if (n <= 8) loop(8) else if (n <= 16) loop(16) else loop(32)
    SmallVector<Value> results;
    {
      OpBuilder::InsertionGuard g(b);
      for (auto [i, width] : llvm::enumerate(widths)) {
        bool last = i + 1 == std::size(widths);
        scf::IfOp ifOp;
        SmallVector<Value> vals;
        if (last) {
          vals = combineLoop(width);
        } else {
          Value fits = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ule, n, idx(width));
          ifOp = scf::IfOp::create(b, loc(), TypeRange(ValueRange(init)), fits,
                                   /*withElseRegion=*/true);
          vals.assign(ifOp.getResults().begin(), ifOp.getResults().end());
          b.setInsertionPointToStart(ifOp.thenBlock());
          scf::YieldOp::create(b, loc(), combineLoop(width));
          b.setInsertionPointAfter(ifOp);
        }
        if (i == 0)
          results = vals; // the outermost branch (or the only loop)
        else
          scf::YieldOp::create(b, loc(), vals); // the enclosing else branch
        if (!last)
          b.setInsertionPointToStart(ifOp.elseBlock());
      }
    }
    SmallVector<Value> regs;
    for (int64_t k = 0; k < perThread; ++k) {
      Value den = results[per * k + 1];
      Value empty = arith::CmpFOp::create(b, loc(), arith::CmpFPredicate::OEQ, den, zero);
      Value safe = arith::SelectOp::create(b, loc(), empty, cstF32(b, loc(), 1.0f), den);
      for (int64_t j = 0; j < run; ++j)
        regs.push_back(arith::SelectOp::create(
            b, loc(), empty, zero,
            arith::DivFOp::create(b, loc(), results[per * k + 2 + j], safe)));
    }
    auto tile = regTile(Kind::Blocked, t, std::move(regs));
    tile->blockRun = run;
    tiles[op] = tile;
    return success();
  }

  LogicalResult lowerStore(StoreOp op) {
    auto t = get(op.getValue());
    Value dst = scalars.lookup(op.getDest());
    Type dstElt = op.getDest().getType().getElementType();
    SmallVector<Value> base;
    for (Value i : op.getIndices())
      base.push_back(scalars.lookup(i));
    int64_t rank = t->type.getRank();
    size_t lead = base.size() - rank;
    Value bound = op.getBound() ? scalars.lookup(op.getBound()) : Value();

    // Stores `vals` (f32, rounded to the destination type) at `coord`
    // and the columns after it: one element, or one vector of them
    // (aligned by the caller).
    auto emit = [&](ArrayRef<Value> coord, ArrayRef<Value> vals, Value pred) {
      SmallVector<Value> at = base;
      for (int64_t d = 0; d < rank; ++d)
        at[lead + d] = add(base[lead + d], coord[d]);
      if (bound) {
        Value in = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, at[lead], bound);
        pred = pred ? arith::AndIOp::create(b, loc(), pred, in).getResult() : in;
      }
      SmallVector<Value> stored;
      for (Value v : vals)
        stored.push_back(fromF32(b, loc(), v, dstElt));
      auto store = [&](OpBuilder &nb, Location l) {
        if (stored.size() == 1) {
          memref::StoreOp::create(nb, l, stored[0], dst, at);
          return;
        }
        int64_t w = stored.size();
        Value vec = vector::FromElementsOp::create(
            nb, l, VectorType::get({w}, storageType(dstElt)), stored);
        vector::StoreOp::create(nb, l, vec, dst, at, /*nontemporal=*/false,
                                llvm::MaybeAlign(w * storedBytes(dstElt)));
      };
      if (!pred) {
        store(b, loc());
        return;
      }
      scf::IfOp::create(b, loc(), pred, [&](OpBuilder &nb, Location l) {
        store(nb, l);
        scf::YieldOp::create(nb, l);
      });
    };

    switch (t->kind) {
    case Kind::Acc: {
      auto l = accLayout(t->type);
      if (failed(l))
        return failure();
      // The interleaved columns (accCoord) put a lane's registers of one
      // instruction element in adjacent columns, tile after tile: store
      // them w at a time (up to 16 bytes) where the destination row and the
      // column base allow it, so a warp writes whole sectors.
      auto dstT = cast<MemRefType>(op.getDest().getType());
      int64_t bytes = storedBytes(dstElt);
      std::optional<int64_t> colBase = getConstantIntValue(op.getIndices()[lead + 1]);
      int64_t w = 1;
      while (l->tiles % (2 * w) == 0 && 2 * w * bytes <= 16 && colBase &&
             *colBase % (2 * w) == 0 && !dstT.isDynamicDim(dstT.getRank() - 1) &&
             dstT.getDimSize(dstT.getRank() - 1) % (2 * w) == 0 &&
             dstT.getLayout().isIdentity())
        w *= 2;
      for (int64_t r = 0; r < l->size(); ++r) {
        if ((r / l->elems) % w)
          continue;
        auto [row, col] = accCoord(*l, r);
        SmallVector<Value> vals;
        for (int64_t jj = 0; jj < w; ++jj)
          vals.push_back(t->regs[r + jj * l->elems]);
        emit({row, col}, vals, Value());
      }
      return success();
    }
    case Kind::RowSlice: {
      auto l = rowLayout(t->type.getDimSize(0));
      if (failed(l))
        return failure();
      // Every lane of a row holds the value: warp 0's column-0 lanes store.
      Value first = arith::AndIOp::create(
          b, loc(),
          arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, warp, idx(0)),
          arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, cCol, idx(0)));
      for (auto [g, v] : llvm::enumerate(t->regs))
        emit({addc(cRow, l->rowGroups[g])}, v, first);
      return success();
    }
    case Kind::Blocked: {
      int64_t cols = t->type.getDimSize(rank - 1);
      int64_t numel = t->type.getNumElements();
      int64_t run = t->blockRun;
      for (auto [k, v] : llvm::enumerate(t->regs)) {
        Value e = addc(mul(addc(tid, int64_t(k) / run * threads), run), int64_t(k) % run);
        Value pred;
        if (numel % (threads * run) != 0)
          pred = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, e,
                                       idx(numel));
        if (rank == 2)
          emit({arith::DivUIOp::create(b, loc(), e, idx(cols)),
                arith::RemUIOp::create(b, loc(), e, idx(cols))},
               v, pred);
        else
          emit({e}, v, pred);
      }
      return success();
    }
    default:
      return fail("the GPU lowering stores register tiles only");
    }
  }

  LogicalResult lowerKvLoop(KvLoopOp op) {
    // Lazy tiles defined outside and read inside would be re-evaluated on
    // every read of every iteration: evaluate them once, here.
    op.getBody().walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        auto t = tiles.lookup(v);
        if (t && t->kind == Kind::Expr && !op->isAncestor(v.getParentBlock()->getParentOp()))
          tiles[v] = materialize(v, t);
      }
    });
    SmallVector<Value> inits;
    SmallVector<std::shared_ptr<Tile>> initTiles;
    Block &bodyBlock = op.getBody().front();
    for (auto [i, v] : llvm::enumerate(op.getInits())) {
      auto t = get(v);
      if (!t || (t->kind != Kind::Acc && t->kind != Kind::RowSlice))
        return fail("loop-carried tiles must be register tiles");
      // A running row sum that starts at zero and is only ever the sum
      // operand of the online softmax is carried per lane (RowPartial):
      // zeros are a valid share for every lane.
      BlockArgument arg = bodyBlock.getArgument(i + 1);
      if (t->kind == Kind::RowSlice && !arg.use_empty() &&
          llvm::all_of(t->regs, [](Value r) { return matchPattern(r, m_AnyZeroFloat()); }) &&
          llvm::all_of(arg.getUses(), [](OpOperand &u) {
            auto sm = dyn_cast<OnlineSoftmaxOp>(u.getOwner());
            return sm && u.getOperandNumber() == sm.getSumMutable().getOperandNumber();
          }))
        t = regTile(Kind::RowPartial, t->type, t->regs);
      initTiles.push_back(t);
      inits.append(t->regs.begin(), t->regs.end());
    }
    // The KV tile's copy, double-buffered where the chip copies
    // asynchronously: the first tile's copies went out before the loop
    // (earlier still where startPrefetch ran at the Q load).
    std::optional<Prefetch> pf;
    if (auto it = started.find(op); it != started.end())
      pf = it->second;
    else
      pf = startPrefetch(op, 0);
    Value lowerV = scalars.lookup(op.getLower()), upperV = scalars.lookup(op.getUpper());
    if (pf) {
      pf->lower = lowerV;
      pf->upper = upperV;
      pf->step = idx(op.getStep());
    }
    auto loop = scf::ForOp::create(b, loc(), lowerV, upperV, idx(op.getStep()), inits);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Block &body = op.getBody().front();
    scalars.map(body.getArgument(0), loop.getInductionVar());
    Block *outerBody = kvBody;
    bool outerBarrier = kvBodyBarrier;
    kvBody = loop.getBody();
    kvBodyBarrier = false;
    llvm::scope_exit restoreBody([&] {
      kvBody = outerBody;
      kvBodyBarrier = outerBarrier;
    });
    if (pf) {
      pf->iv = loop.getInductionVar();
      prefetch = pf;
      asyncCopies = true;
    }
    llvm::scope_exit clearPrefetch([&] { prefetch.reset(); });
    unsigned pos = 0;
    for (auto [i, t] : llvm::enumerate(initTiles)) {
      SmallVector<Value> regs;
      for (size_t r = 0; r < t->regs.size(); ++r)
        regs.push_back(loop.getRegionIterArgs()[pos++]);
      tiles[body.getArgument(i + 1)] = regTile(t->kind, t->type, regs);
    }
    for (Operation &inner : body.without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> next;
    for (auto [v, init] : llvm::zip(yield.getValues(), initTiles)) {
      auto t = get(v);
      if (!t || t->kind != init->kind || t->regs.size() != init->regs.size())
        return fail("a yielded tile changed placement across the loop");
      next.append(t->regs.begin(), t->regs.end());
    }
    scf::YieldOp::create(b, loc(), next);
    pos = 0;
    for (auto [i, t] : llvm::enumerate(initTiles)) {
      SmallVector<Value> regs;
      for (size_t r = 0; r < t->regs.size(); ++r)
        regs.push_back(loop.getResult(pos++));
      tiles[op.getResult(i)] = regTile(t->kind, t->type, regs);
    }
    return success();
  }

  LogicalResult lowerIf(scf::IfOp op) {
    if (op.getNumResults() != 0)
      return fail("scf.if with results is not supported in kernels");
    auto ifOp = scf::IfOp::create(b, loc(), scalars.lookup(op.getCondition()),
                                  !op.getElseRegion().empty());
    OpBuilder::InsertionGuard g(b);
    auto lowerRegion = [&](Region &from, Block *to) -> LogicalResult {
      b.setInsertionPointToStart(to);
      for (Operation &inner : from.front().without_terminator())
        if (failed(lowerOp(&inner)))
          return failure();
      return success();
    };
    if (failed(lowerRegion(op.getThenRegion(), ifOp.thenBlock())))
      return failure();
    if (!op.getElseRegion().empty() &&
        failed(lowerRegion(op.getElseRegion(), ifOp.elseBlock())))
      return failure();
    return success();
  }

  LogicalResult lowerOp(Operation *op) {
    Operation *saved = diagOp;
    diagOp = op;
    llvm::scope_exit restore([&] { diagOp = saved; });
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](ProgramIdOp p) {
          static const gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                                gpu::Dimension::z};
          scalars.map(p.getResult(), gpu::BlockIdOp::create(b, loc(), dims[p.getDim()]));
          return success();
        })
        .Case([&](SplitRangeOp r) {
          auto [lo, hi] = emitSplitRange(b, loc(), scalars.lookup(r.getLength()),
                                         scalars.lookup(r.getSplit()),
                                         scalars.lookup(r.getNumSplits()),
                                         r.getBlockN(), r.getExact());
          scalars.map(r.getLo(), lo);
          scalars.map(r.getHi(), hi);
          return success();
        })
        .Case([&](FillOp o) { return lowerFill(o); })
        .Case([&](LoadOp o) { return lowerLoad(o); })
        .Case([&](StoreOp o) { return lowerStore(o); })
        .Case([&](CastOp o) { return folded.contains(o) ? success() : lowerCast(o); })
        .Case([&](ScaleOp o) { return folded.contains(o) ? success() : lowerScale(o); })
        .Case([&](SliceOp o) { return lowerSlice(o); })
        .Case([&](MaskOp o) { return lowerMask(o); })
        .Case([&](DotOp o) { return lowerDot(o); })
        .Case([&](OnlineSoftmaxOp o) { return lowerOnlineSoftmax(o); })
        .Case([&](SoftmaxFinalizeOp o) { return lowerFinalize(o); })
        .Case([&](SplitKReduceOp o) { return lowerSplitKReduce(o); })
        .Case([&](KvLoopOp o) {
          if (failed(lowerKvLoop(o)))
            return failure();
          // Kernels launched as this one's dependents (the split-K
          // combine) may be scheduled once every program is past its KV
          // loop: their launch overlaps this kernel's tail. They still wait
          // for all of its stores (griddepcontrol.wait), so this placement
          // is about timing only.
          if (target.chip->dependentLaunch)
            NVVM::GriddepcontrolOp::create(b, loc(),
                                           NVVM::GridDepActionKind::launch_dependents);
          return success();
        })
        .Case([&](scf::IfOp o) { return lowerIf(o); })
        .Default([&](Operation *other) -> LogicalResult {
          if (other->getDialect() == b.getContext()->getLoadedDialect<MLADialect>() ||
              other->getNumRegions() != 0)
            return fail("is not supported by the GPU lowering");
          b.clone(*other, scalars);
          return success();
        });
  }
};

struct MLALowerToGPU : public mla::impl::MLALowerToGPUBase<MLALowerToGPU> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto target = GpuTarget::get(chip, module);
    if (failed(target))
      return signalPassFailure();
    if (!module.getOps<DecodeOp>().empty()) {
      module.emitError("mla.decode specs must be expanded before "
                       "mla-lower-to-gpu (run mla-expand-decode)");
      return signalPassFailure();
    }
    // fp8 operands must be in the chip's encoding (its conversion and matrix
    // instructions read that one); a mismatch would be silently wrong.
    bool flavourOk = true;
    module.walk([&](Operation *op) {
      for (Type t : op->getResultTypes()) {
        auto tt = dyn_cast<RankedTensorType>(t);
        if (!tt || !isFp8(tt.getElementType()))
          continue;
        Type elt = tt.getElementType();
        bool fnuz = isa<Float8E4M3FNUZType>(elt);
        Fp8Flavor want = target->chip->fp8;
        if ((want == Fp8Flavor::E4M3FN && fnuz) ||
            (want == Fp8Flavor::E4M3FNUZ && !fnuz)) {
          op->emitError() << "fp8 type " << elt << " does not match " << chip
                          << "'s fp8 format "
                          << (want == Fp8Flavor::E4M3FN ? "f8E4M3FN" : "f8E4M3FNUZ");
          flavourOk = false;
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (!flavourOk)
      return signalPassFailure();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(ctx));
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(
        mb, module.getLoc(), "mla_kernels",
        ArrayAttr::get(ctx, {target->moduleTarget(ctx)}));

    for (KernelOp kernel : llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      SmallVector<Type> argTypes;
      for (Type t : kernel.getArgumentTypes()) {
        if (auto mt = dyn_cast<MemRefType>(t))
          t = MemRefType::get(mt.getShape(), storageType(mt.getElementType()));
        argTypes.push_back(t);
      }
      OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
      auto func = gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getSymName(),
                                         b.getFunctionType(argTypes, {}));
      func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
      int64_t warps = kernel.getNumWarps();
      int64_t threads = warps * target->chip->waveSize;
      func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
          {static_cast<int32_t>(threads), 1, 1}));
      b.setInsertionPointToStart(&func.getBody().front());

      Lowering low(b, *target, warps);
      low.diagOp = kernel;
      low.init(kernel.getLoc());
      for (auto [from, to] : llvm::zip(kernel.getBody().getArguments(),
                                       func.getArguments()))
        low.scalars.map(from, to);
      // A kernel that combines another kernel's partial results may be
      // launched before that kernel ends (programmatic dependent launch).
      // (lowerSplitKReduce places the griddepcontrol.wait.)
      if (target->chip->dependentLaunch && !kernel.getBody().getOps<SplitKReduceOp>().empty())
        func->setAttr("mla.dependent_launch", b.getUnitAttr());
      for (Operation &op : kernel.getBody().front().without_terminator())
        if (failed(low.lowerOp(&op)))
          return signalPassFailure();
      gpu::ReturnOp::create(b, kernel.getLoc());
      if (low.smemBytes > target->chip->sharedMemBytes) {
        kernel.emitError() << "needs " << low.smemBytes
                           << " bytes of shared memory per workgroup; "
                           << target->chip->name << " has "
                           << target->chip->sharedMemBytes
                           << " (use a smaller block_n)";
        return signalPassFailure();
      }
      // With the double-buffered KV tile, registers should not cut occupancy
      // below what shared memory allows: ask ptxas to fit that many programs
      // per SM (nvvm.minctasm). It leaves room for 2 programs of 8 warps on
      // sm_90, which 134 registers per thread would halve (measured: the
      // hint costs 24 B of spills in the masked variant, nothing else).
      if (target->nvidia && low.asyncCopies) {
        int64_t programs = target->chip->sharedMemBytes / (low.smemBytes + 1024);
        if (programs >= 2)
          func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(std::min<int64_t>(programs, 32)));
      }
      func->setAttr("mla.shared_bytes", b.getI64IntegerAttr(low.smemBytes));
      func->setAttr("mla.block_threads", b.getI64IntegerAttr(threads));
      func->setAttr("mla.grid", kernel.getGrid());
      for (StringRef name : {"variant", "block_n", "dispatch_kv_multiple",
                             "split_candidates", "kv_len_multiple_of"})
        if (Attribute a = kernel->getAttr(name))
          func->setAttr(("mla." + name).str(), a);
      kernel.erase();
    }
  }
};

} // namespace
