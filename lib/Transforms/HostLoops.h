//===- HostLoops.h - shared pieces of the host lowering -------*- C++ -*-===//
//
// mla-lower-to-loops (MLALowerToLoops.cpp: the pass, tile memory, element-
// wise ops and control; HostCompute.cpp: products, softmax, the split-K
// combine, largest magnitudes): loop builders over scalars and the base of
// its conversion patterns, whose tiles are heap buffers.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TRANSFORMS_HOSTLOOPS_H
#define MLA_TRANSFORMS_HOSTLOOPS_H

#include "mla/MLAOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include "ScalarCodegen.h"

namespace mlir::mla::hostloops {

/// Emits `for i0 in [0, shape0) ... for iN in [0, shapeN)` and calls `body`
/// with the induction variables inside the innermost loop.
inline void loopNest(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
              function_ref<void(ValueRange)> body) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> ivs;
  Value zero = cstIndex(b, loc, 0), one = cstIndex(b, loc, 1);
  for (int64_t extent : shape) {
    auto loop = scf::ForOp::create(b, loc, zero, cstIndex(b, loc, extent), one);
    b.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
  }
  body(ivs);
}

/// `for i in [0, n)` carrying one f32 accumulator.
inline Value reduceLoop(OpBuilder &b, Location loc, Value n, Value init,
                 function_ref<Value(Value iv, Value acc)> body) {
  auto loop = scf::ForOp::create(
      b, loc, cstIndex(b, loc, 0), n, cstIndex(b, loc, 1), ValueRange{init},
      [&](OpBuilder &nb, Location l, Value iv, ValueRange iters) {
        scf::YieldOp::create(nb, l, body(iv, iters[0]));
      });
  return loop.getResult(0);
}

inline Value load(OpBuilder &b, Location loc, Value mem, ValueRange idx) {
  return memref::LoadOp::create(b, loc, mem, idx);
}

inline void store(OpBuilder &b, Location loc, Value v, Value mem, ValueRange idx) {
  memref::StoreOp::create(b, loc, v, mem, idx);
}

inline Value alloc(OpBuilder &b, Location loc, Type t) {
  return memref::AllocOp::create(b, loc, cast<MemRefType>(t));
}

template <typename Op> struct TilePattern : public OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<Op>::OpAdaptor;

  Type convert(Type t) const {
    return this->getTypeConverter()->convertType(t);
  }

  /// Replaces `op` by a fresh buffer of `type` whose element at `iv` is
  /// `element(iv)`.
  void replaceByElements(Op op, RankedTensorType type,
                         ConversionPatternRewriter &rw,
                         function_ref<Value(ValueRange)> element) const {
    Location loc = op.getLoc();
    Value out = alloc(rw, loc, convert(type));
    loopNest(rw, loc, type.getShape(),
             [&](ValueRange iv) { store(rw, loc, element(iv), out, iv); });
    rw.replaceOp(op, out);
  }
};

/// The products, the online softmax and its finalize, the split-K combine
/// and mla.quant_scale (HostCompute.cpp).
void populateComputePatterns(const TypeConverter &types,
                             RewritePatternSet &patterns);

} // namespace mlir::mla::hostloops

#endif // MLA_TRANSFORMS_HOSTLOOPS_H
