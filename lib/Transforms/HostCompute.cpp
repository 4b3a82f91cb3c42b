//===- HostCompute.cpp - the host lowering's compute ops -----------------===//
//
// Part of mla-lower-to-loops (HostLoops.h): mla.dot, mla.online_softmax,
// mla.softmax_finalize, mla.split_k_reduce and mla.quant_scale as loops
// over scalars in f32, with the rounding points the ops define.
//
//===----------------------------------------------------------------------===//
#include "HostLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::mla::hostloops {
namespace {

struct QuantScaleLowering : TilePattern<QuantScaleOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(QuantScaleOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ArrayRef<int64_t> shape = op.getSource().getType().getShape();
    Type elt = op.getSource().getType().getElementType();
    // The largest magnitude, one loop per dimension.
    SmallVector<Value> iv;
    std::function<Value(size_t, Value)> over = [&](size_t d, Value acc) {
      return reduceLoop(rw, loc, cstIndex(rw, loc, shape[d]), acc,
                        [&](Value i, Value inner) -> Value {
                          iv.push_back(i);
                          Value r =
                              d + 1 == shape.size()
                                  ? arith::MaxNumFOp::create(
                                        rw, loc, inner,
                                        magnitude(rw, loc,
                                                  toF32(rw, loc,
                                                        load(rw, loc,
                                                             a.getSource(),
                                                             iv),
                                                        elt)))
                                  : over(d + 1, inner);
                          iv.pop_back();
                          return r;
                        });
    };
    Value amax = over(0, cstF32(rw, loc, 0));
    auto [scale, inverse] =
        emitQuantScale(rw, loc, amax, op.getTopExponent());
    rw.replaceOp(op, {scale, inverse});
    return success();
  }
};

struct DotLowering : TilePattern<DotOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(DotOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resT = op.getResult().getType();
    int64_t k = op.getLhs().getType().getDimSize(1);
    bool trans = op.getTransposeRhs();
    Type lhsElt = op.getLhs().getType().getElementType();
    Type rhsElt = op.getRhs().getType().getElementType();
    Value out = alloc(rw, loc, convert(resT));
    loopNest(rw, loc, resT.getShape(), [&](ValueRange mn) {
      Value init =
          a.getAcc() ? load(rw, loc, a.getAcc(), mn) : cstF32(rw, loc, 0);
      Value sum = reduceLoop(
          rw, loc, cstIndex(rw, loc, k), init, [&](Value kk, Value acc) {
            Value x =
                toF32(rw, loc, load(rw, loc, a.getLhs(), {mn[0], kk}), lhsElt);
            Value y = toF32(
                rw, loc,
                load(rw, loc, a.getRhs(),
                     trans ? ValueRange{mn[1], kk} : ValueRange{kk, mn[1]}),
                rhsElt);
            return arith::AddFOp::create(rw, loc, acc,
                                         arith::MulFOp::create(rw, loc, x, y));
          });
      store(rw, loc, sum, out, mn);
    });
    rw.replaceOp(op, out);
    return success();
  }
};

struct OnlineSoftmaxLowering : TilePattern<OnlineSoftmaxOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(OnlineSoftmaxOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto sT = op.getScores().getType();
    auto accT = op.getAcc().getType();
    Value probs = alloc(rw, loc, convert(sT));
    Value newMax = alloc(rw, loc, convert(op.getMax().getType()));
    Value newSum = alloc(rw, loc, convert(op.getSum().getType()));
    Value newAcc = alloc(rw, loc, convert(accT));
    Value n = cstIndex(rw, loc, sT.getDimSize(1));
    // Score j of row r, and (col_exp) its column's exponent e: x = s * 2^e
    // + e, whose row sum term is exp2(x - e - ref) (see the op).
    auto score = [&](Value r, Value j) -> std::pair<Value, Value> {
      Value s = load(rw, loc, a.getScores(), {r, j});
      if (!a.getColExp())
        return {s, Value()};
      Value e = load(rw, loc, a.getColExp(), {j});
      return {arith::AddFOp::create(
                  rw, loc,
                  arith::MulFOp::create(rw, loc, s, pow2F32(rw, loc, e)),
                  arith::SIToFPOp::create(rw, loc, rw.getF32Type(), e)),
              e};
    };
    loopNest(rw, loc, {sT.getDimSize(0)}, [&](ValueRange r) {
      Value oldMax = load(rw, loc, a.getMax(), r);
      Value mx = reduceLoop(rw, loc, n, oldMax, [&](Value j, Value acc) {
        return arith::MaximumFOp::create(rw, loc, acc, score(r[0], j).first);
      });
      Value ref = finiteOrZero(rw, loc, mx);
      Value alpha = math::Exp2Op::create(
          rw, loc, arith::SubFOp::create(rw, loc, oldMax, ref));
      Value rowSum =
          reduceLoop(rw, loc, n, cstF32(rw, loc, 0), [&](Value j, Value acc) {
            auto [x, e] = score(r[0], j);
            Value p = math::Exp2Op::create(
                rw, loc, arith::SubFOp::create(rw, loc, x, ref));
            store(rw, loc, p, probs, {r[0], j});
            if (e)
              p = math::Exp2Op::create(
                  rw, loc,
                  arith::SubFOp::create(
                      rw, loc,
                      arith::SubFOp::create(
                          rw, loc, x,
                          arith::SIToFPOp::create(rw, loc, rw.getF32Type(), e)),
                      ref));
            return arith::AddFOp::create(rw, loc, acc, p);
          });
      Value oldSum = load(rw, loc, a.getSum(), r);
      store(rw, loc, mx, newMax, r);
      store(rw, loc,
            arith::AddFOp::create(
                rw, loc, arith::MulFOp::create(rw, loc, oldSum, alpha), rowSum),
            newSum, r);
      // Every accumulator row of this score row: r, and with terms stacked
      // by rows (mla.split_terms) r + R, r + 2R, ...
      int64_t rows = sT.getDimSize(0);
      for (int64_t t = 0; t < accT.getDimSize(0) / rows; ++t) {
        Value ar = arith::AddIOp::create(rw, loc, r[0],
                                         cstIndex(rw, loc, t * rows));
        loopNest(rw, loc, {accT.getDimSize(1)}, [&](ValueRange d) {
          Value v = load(rw, loc, a.getAcc(), {ar, d[0]});
          store(rw, loc, arith::MulFOp::create(rw, loc, v, alpha), newAcc,
                {ar, d[0]});
        });
      }
    });
    rw.replaceOp(op, {probs, newMax, newSum, newAcc});
    return success();
  }
};

struct SoftmaxFinalizeLowering : TilePattern<SoftmaxFinalizeOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SoftmaxFinalizeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto accT = op.getAcc().getType();
    Value out = alloc(rw, loc, convert(accT));
    Value lse = alloc(rw, loc, convert(op.getMax().getType()));
    Value scale = a.getScale() ? a.getScale() : cstF32(rw, loc, 1.0f);
    loopNest(rw, loc, {accT.getDimSize(0)}, [&](ValueRange r) {
      Value sum = load(rw, loc, a.getSum(), r);
      Value mx = load(rw, loc, a.getMax(), r);
      Value empty = arith::CmpFOp::create(rw, loc, arith::CmpFPredicate::OEQ,
                                          sum, cstF32(rw, loc, 0));
      // Empty rows divide by 1 and are then replaced: no inf/NaN appears.
      Value safeSum =
          arith::SelectOp::create(rw, loc, empty, cstF32(rw, loc, 1), sum);
      Value factor = arith::DivFOp::create(rw, loc, scale, safeSum);
      Value zero = cstF32(rw, loc, 0);
      loopNest(rw, loc, {accT.getDimSize(1)}, [&](ValueRange d) {
        Value v = arith::MulFOp::create(
            rw, loc, load(rw, loc, a.getAcc(), {r[0], d[0]}), factor);
        store(rw, loc, arith::SelectOp::create(rw, loc, empty, zero, v), out,
              {r[0], d[0]});
      });
      Value l2 = arith::AddFOp::create(rw, loc, mx,
                                       math::Log2Op::create(rw, loc, safeSum));
      Value ln = arith::MulFOp::create(rw, loc, l2,
                                       cstF32(rw, loc, 0.6931471805599453f));
      Value negInf = cstF32(rw, loc, -std::numeric_limits<float>::infinity());
      store(rw, loc, arith::SelectOp::create(rw, loc, empty, negInf, ln), lse,
            r);
    });
    rw.replaceOp(op, {out, lse});
    return success();
  }
};

struct SplitKReduceLowering : TilePattern<SplitKReduceOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SplitKReduceOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resT = op.getResult().getType();
    int64_t dim = resT.getDimSize(1);
    Value out = alloc(rw, loc, convert(resT));
    Value zero = cstF32(rw, loc, 0);
    Value negInf = cstF32(rw, loc, -std::numeric_limits<float>::infinity());
    loopNest(rw, loc, {resT.getDimSize(0)}, [&](ValueRange hIv) {
      Value h = arith::AddIOp::create(rw, loc, a.getHead(), hIv[0]);
      loopNest(rw, loc, {dim}, [&](ValueRange d) {
        store(rw, loc, zero, out, {hIv[0], d[0]});
      });
      Value mx = reduceLoop(
          rw, loc, a.getNumSplits(), negInf, [&](Value s, Value acc) {
            Value l = load(rw, loc, a.getLse(), {a.getBatch(), s, h});
            return arith::MaximumFOp::create(rw, loc, acc, l);
          });
      Value ref = finiteOrZero(rw, loc, mx);
      Value wsum =
          reduceLoop(rw, loc, a.getNumSplits(), zero, [&](Value s, Value acc) {
            Value l = load(rw, loc, a.getLse(), {a.getBatch(), s, h});
            Value w = math::ExpOp::create(
                rw, loc, arith::SubFOp::create(rw, loc, l, ref));
            loopNest(rw, loc, {dim}, [&](ValueRange d) {
              Value p =
                  load(rw, loc, a.getPartial(), {a.getBatch(), s, h, d[0]});
              Value o = load(rw, loc, out, {hIv[0], d[0]});
              store(rw, loc,
                    arith::AddFOp::create(rw, loc, o,
                                          arith::MulFOp::create(rw, loc, w, p)),
                    out, {hIv[0], d[0]});
            });
            return arith::AddFOp::create(rw, loc, acc, w);
          });
      Value empty =
          arith::CmpFOp::create(rw, loc, arith::CmpFPredicate::OEQ, wsum, zero);
      Value inv = arith::DivFOp::create(
          rw, loc, cstF32(rw, loc, 1),
          arith::SelectOp::create(rw, loc, empty, cstF32(rw, loc, 1), wsum));
      loopNest(rw, loc, {dim}, [&](ValueRange d) {
        Value o = load(rw, loc, out, {hIv[0], d[0]});
        store(rw, loc, arith::MulFOp::create(rw, loc, o, inv), out,
              {hIv[0], d[0]});
      });
    });
    rw.replaceOp(op, out);
    return success();
  }
};

} // namespace

void populateComputePatterns(const TypeConverter &types,
                             RewritePatternSet &patterns) {
  patterns.add<DotLowering, OnlineSoftmaxLowering, SoftmaxFinalizeLowering,
               SplitKReduceLowering, QuantScaleLowering>(types,
                                                         patterns.getContext());
}

} // namespace mlir::mla::hostloops
