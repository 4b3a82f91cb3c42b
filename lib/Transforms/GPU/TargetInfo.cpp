//===- TargetInfo.cpp - the target interface's shared part ----------------===//
//
// TargetInfo::create picks the vendor implementation; the matrix-instruction
// choice and the defaults of the capability hooks (abort: the lowering must
// ask ChipInfo's facts first) live here.
//
//===----------------------------------------------------------------------===//
#include "TargetInfo.h"

#include "llvm/Support/ErrorHandling.h"

namespace mlir::mla::gpulower {

FailureOr<std::unique_ptr<TargetInfo>> TargetInfo::create(const ChipInfo &chip,
                                                          Operation *diagOp) {
  const MatrixInstr *best = nullptr;
  for (const MatrixInstr *mi : chip.matrixInstrs())
    if (mi->abType == MatrixElem::BF16 && (!best || mi->k > best->k))
      best = mi;
  if (!best) {
    diagOp->emitError() << "chip '" << chip.name
                        << "' has no bf16 matrix instruction to lower mla.dot";
    return failure();
  }
  if (chip.vendor != Vendor::AMD && chip.vendor != Vendor::NVIDIA) {
    diagOp->emitError() << "chip '" << chip.name << "' is not a GPU";
    return failure();
  }
  if (chip.vendor == Vendor::AMD)
    return createCdnaTargetInfo(chip, best);
  return createSm90TargetInfo(chip, best);
}

const MatrixInstr *TargetInfo::instrFor(Type lhs, Type rhs, int64_t k) const {
  // The chip's deepest instruction with operands of type `want`, a K that
  // divides the dot's, and the bf16 instruction's shape and accumulator
  // layout.
  auto deepest = [&](MatrixElem want) -> const MatrixInstr * {
    const MatrixInstr *best = nullptr;
    for (const MatrixInstr *mi : chip.matrixInstrs())
      if (mi->abType == want && mi->m == mma->m && mi->n == mma->n &&
          k % mi->k == 0 && mi->c.laneBases == mma->c.laneBases &&
          mi->c.elemBases == mma->c.elemBases && (!best || mi->k > best->k))
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

Value TargetInfo::unaryF32Intrinsic(OpBuilder &b, Location loc, StringRef name,
                                    Value x) {
  return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                       b.getStringAttr(name), ValueRange{x})
      .getResult(0);
}

void TargetInfo::missing(StringRef what) const {
  llvm::report_fatal_error(llvm::Twine("mla-lower-to-gpu: ") + what +
                           " asked of " + chip.name +
                           ", which has none (check ChipInfo's facts first)");
}

Value TargetInfo::boundedBuffer(OpBuilder &, Location, Value, Value) const {
  missing("a bounds-checked buffer");
}
Value TargetInfo::boundedLoad16(OpBuilder &, Location, Value, Value,
                                VectorType) const {
  missing("a bounds-checked load");
}
void TargetInfo::asyncCopy16(OpBuilder &, Location, Value, Value, Value) const {
  missing("an asynchronous copy");
}
void TargetInfo::asyncCommitGroup(OpBuilder &, Location) const {
  missing("an asynchronous copy group");
}
void TargetInfo::asyncWaitGroups(OpBuilder &, Location, int64_t) const {
  missing("an asynchronous copy wait");
}
Value TargetInfo::transposedRead(OpBuilder &, Location, Value, Value, Value,
                                 unsigned) const {
  missing("a transposing LDS read");
}
SmallVector<Value> TargetInfo::ldmatrixX4(OpBuilder &, Location, Value, Value,
                                          Value, Type) const {
  missing("ldmatrix");
}
void TargetInfo::waitForPrerequisiteGrid(OpBuilder &, Location) const {
  missing("a dependent-launch wait");
}
void TargetInfo::launchDependents(OpBuilder &, Location) const {
  missing("a dependent-launch signal");
}

Value f32HighHalf(OpBuilder &b, Location loc, Value x) {
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  bits = arith::ShRUIOp::create(b, loc, bits, cstI32(b, loc, 16));
  return arith::TruncIOp::create(b, loc, b.getI16Type(), bits);
}

Value f32ToOperand(OpBuilder &b, Location loc, Value x, Type op) {
  if (op.isF16())
    return arith::BitcastOp::create(
        b, loc, b.getI16Type(),
        arith::TruncFOp::create(b, loc, b.getF16Type(), x).getResult());
  return f32HighHalf(b, loc, x);
}

} // namespace mlir::mla::gpulower
