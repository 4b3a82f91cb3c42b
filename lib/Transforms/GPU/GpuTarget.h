//===- GpuTarget.h - target instructions of the GPU lowering ----*- C++ -*-===//
//
// Part of mla-lower-to-gpu (lib/Transforms/MLALowerToGPU.cpp): the chip's
// target-specific instructions, emitted here and nowhere else in GPU/, and
// the constants the lowering's files share.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TRANSFORMS_GPU_GPUTARGET_H
#define MLA_TRANSFORMS_GPU_GPUTARGET_H

#include "mla/MLAOps.h"
#include "mla/MatrixInstr.h"
#include "mla/Passes.h"
#include "mla/Target.h"

#include "../ScalarCodegen.h"

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

namespace mlir::mla::gpulower {

constexpr float kLog2E = 1.44269504088896340736f;
/// The element type of `o`'s (tensor) result.
inline Type resultElt(Operation *o) {
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
inline Value bitcastToVector(OpBuilder &b, Location loc, Value x, VectorType t) {
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
    return GpuTarget{chip, best, chip->vendor == Vendor::NVIDIA};
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


} // namespace mlir::mla::gpulower

#endif // MLA_TRANSFORMS_GPU_GPUTARGET_H
