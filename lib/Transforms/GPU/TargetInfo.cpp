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

/// The operand type of the chip's instructions a dot of `lhs` x `rhs`
/// runs on (see instrFor), or nullopt for the bf16 instruction.
static std::optional<MatrixElem> operandElem(Type lhs, Type rhs) {
  // f16 Q / P against f16 or fp8 K / V (qp_type = f16): the chip's f16
  // instruction, fp8 converted to f16.
  if (lhs.isF16() && (rhs.isF16() || isFp8(rhs)))
    return MatrixElem::F16;
  if (lhs != rhs || !isa<Float8E4M3FNType, Float8E4M3FNUZType>(lhs))
    return std::nullopt;
  return isa<Float8E4M3FNUZType>(lhs) ? MatrixElem::F8E4M3FNUZ
                                      : MatrixElem::F8E4M3FN;
}

/// The chip's deepest instruction with operands of type `want`, the bf16
/// instruction's shape and accumulator layout and a K that `fits`.
static const MatrixInstr *deepest(const ChipInfo &chip, const MatrixInstr *mma,
                                  MatrixElem want,
                                  function_ref<bool(int64_t)> fits) {
  const MatrixInstr *best = nullptr;
  for (const MatrixInstr *mi : chip.matrixInstrs())
    if (mi->abType == want && mi->m == mma->m && mi->n == mma->n &&
        fits(mi->k) && mi->c.laneBases == mma->c.laneBases &&
        mi->c.elemBases == mma->c.elemBases && (!best || mi->k > best->k))
      best = mi;
  return best;
}

const MatrixInstr *TargetInfo::instrFor(Type lhs, Type rhs, int64_t k) const {
  auto want = operandElem(lhs, rhs);
  if (!want)
    return mma;
  const MatrixInstr *mi =
      deepest(chip, mma, *want, [&](int64_t ik) { return k % ik == 0; });
  return mi ? mi : mma;
}

SmallVector<TargetInfo::KRange, 2> TargetInfo::kRanges(Type lhs, Type rhs,
                                                       int64_t k) const {
  const MatrixInstr *whole = instrFor(lhs, rhs, k);
  SmallVector<KRange, 2> one{{whole, 0, k}};
  auto want = operandElem(lhs, rhs);
  if (!want || whole == mma)
    return one;
  const MatrixInstr *deep =
      deepest(chip, mma, *want, [&](int64_t ik) { return ik <= k; });
  int64_t split = k / deep->k * deep->k;
  if (deep == whole || split == k)
    return one;
  // instrFor's choice for the rest divides it; the bf16 one (no
  // instruction of the operands' type does) cannot share the accumulators'
  // operand conversion.
  const MatrixInstr *tail = instrFor(lhs, rhs, k - split);
  if (tail->abType != *want)
    return one;
  // Fewer instructions than the whole dot on `whole`, or no split.
  if (split / deep->k + (k - split) / tail->k >= k / whole->k)
    return one;
  return {{deep, 0, split}, {tail, split, k}};
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

void TargetInfo::asyncProxyFence(OpBuilder &, Location) const {
  missing("an async-proxy fence");
}
void TargetInfo::warpgroupFence(OpBuilder &, Location) const {
  missing("a warpgroup MMA fence");
}
SmallVector<Value> TargetInfo::warpgroupMma(OpBuilder &, Location,
                                            const MatrixInstr *, int64_t, Value,
                                            bool, Value,
                                            ArrayRef<Value>) const {
  missing("a warpgroup MMA");
}
SmallVector<Value> TargetInfo::warpgroupMmaRegisterA(OpBuilder &, Location,
                                                     const MatrixInstr *,
                                                     int64_t, ArrayRef<Value>,
                                                     Value, int64_t,
                                                     ArrayRef<Value>) const {
  missing("a warpgroup MMA with A in registers");
}
Value TargetInfo::bytePermute(OpBuilder &, Location, Value, Value,
                               Value) const {
  missing("a byte permute");
}

void TargetInfo::warpgroupCommitAndWait(OpBuilder &, Location, int64_t) const {
  missing("a warpgroup MMA wait");
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
void TargetInfo::ldsDmaLoad16(OpBuilder &, Location, Value, Value, Value,
                              int64_t) const {
  missing("an LDS DMA load");
}
void TargetInfo::ldsOnlyBarrier(OpBuilder &, Location) const {
  missing("a barrier for LDS alone");
}
Value TargetInfo::waveUniform(OpBuilder &, Location, Value) const {
  missing("a wave-uniform value");
}
void TargetInfo::asyncCommitGroup(OpBuilder &, Location) const {
  missing("an asynchronous copy group");
}
void TargetInfo::asyncWaitGroups(OpBuilder &, Location, int64_t) const {
  missing("an asynchronous copy wait");
}
void TargetInfo::mbarrierInit(OpBuilder &, Location, Value, Value) const {
  missing("an mbarrier");
}
void TargetInfo::tensorTileCopy(OpBuilder &, Location, Value, Value, ValueRange,
                                Value, Value, Value) const {
  missing("a tensor-map copy");
}
void TargetInfo::mbarrierExpectBytes(OpBuilder &, Location, Value, int64_t,
                                     Value) const {
  missing("an mbarrier");
}
void TargetInfo::mbarrierWait(OpBuilder &, Location, Value, Value) const {
  missing("an mbarrier");
}
Value TargetInfo::transposedRead(OpBuilder &, Location, Value, Value, Value,
                                 unsigned) const {
  missing("a transposing LDS read");
}
SmallVector<Value> TargetInfo::ldmatrixX4(OpBuilder &, Location, Value, Value,
                                          Value, Type) const {
  missing("ldmatrix");
}
SmallVector<Value> TargetInfo::ldmatrixX4Trans(OpBuilder &, Location, Value,
                                               int64_t) const {
  missing("a transposing ldmatrix");
}
Value TargetInfo::l2ReadPolicy(OpBuilder &, Location, Value) const {
  return Value();
}
Value TargetInfo::globalLoadWithPolicy(OpBuilder &, Location, VectorType, Value,
                                       int64_t, Value) const {
  missing("a load with an L2 cache policy");
}
Value TargetInfo::mxfp4WordToBf16(OpBuilder &, Location, Value, Value) const {
  missing("an mxfp4 decode instruction sequence");
}
std::pair<Value, Value> TargetInfo::mxfp4WordToE4m3(OpBuilder &b, Location loc,
                                                    Value word, Value lo,
                                                    Value hi) const {
  auto c = [&](int64_t v) { return cstI32(b, loc, v); };
  Value out[2];
  for (int64_t half = 0; half < 2; ++half) {
    Value acc = c(0);
    for (int64_t j = 0; j < 4; ++j) {
      int64_t n = 4 * half + j;
      Value code = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, word, c(4 * n)), c(0xF));
      Value m = arith::AndIOp::create(b, loc, code, c(7));
      Value table = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, m, c(4)), lo,
          hi);
      Value byte = arith::AndIOp::create(
          b, loc,
          arith::ShRUIOp::create(
              b, loc, table,
              arith::ShLIOp::create(
                  b, loc, arith::AndIOp::create(b, loc, m, c(3)), c(3))),
          c(0x7F));
      // The sign: bit 3 of the code to bit 7 of the byte.
      byte = arith::OrIOp::create(
          b, loc, byte,
          arith::ShLIOp::create(
              b, loc, arith::AndIOp::create(b, loc, code, c(8)), c(4)));
      acc = arith::OrIOp::create(b, loc, acc,
                                 arith::ShLIOp::create(b, loc, byte, c(8 * j)));
    }
    out[half] = acc;
  }
  return {out[0], out[1]};
}
void TargetInfo::waitForPrerequisiteGrid(OpBuilder &, Location) const {
  missing("a dependent-launch wait");
}
void TargetInfo::launchDependents(OpBuilder &, Location) const {
  missing("a dependent-launch signal");
}
Value TargetInfo::clusterPrograms(OpBuilder &, Location) const {
  missing("thread-block clusters");
}
void TargetInfo::clusterBarrier(OpBuilder &, Location) const {
  missing("a cluster barrier");
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

Value bf16PairsToVector8(OpBuilder &b, Location loc, ArrayRef<Value> pairs) {
  assert(pairs.size() == 4 && "four bf16 pairs");
  return vector::BitCastOp::create(
      b, loc, VectorType::get({8}, b.getI16Type()),
      vector::FromElementsOp::create(
          b, loc, VectorType::get({4}, b.getI32Type()), pairs));
}

} // namespace mlir::mla::gpulower
