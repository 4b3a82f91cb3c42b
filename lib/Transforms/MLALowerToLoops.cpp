//===- MLALowerToLoops.cpp - tile kernels -> host loops -------------------===//
//
// The host lowering is the executable semantics of the tile ops: every op
// becomes a plain loop nest over scalars, in f32, with the rounding points
// the ops define (bf16 casts, stores). It is what the CPU numerics tests run
// against the float64 reference, so it stays simple rather than fast. The
// products, the softmax, the split-K combine and mla.quant_scale are in
// HostCompute.cpp, the loop builders and the patterns' base in HostLoops.h.
//
//===----------------------------------------------------------------------===//
#include "mla/MLAOps.h"
#include "mla/Passes.h"

#include "HostLoops.h"
#include "ScalarCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::mla {
#define GEN_PASS_DEF_MLALOWERTOLOOPS
#include "mla/Passes.h.inc"
} // namespace mlir::mla

using namespace mlir;
using namespace mlir::mla;
using namespace mlir::mla::hostloops;

namespace {

/// Storage of a tile element in host buffers.
using mla::mxfp4ToBf16;
using mla::storageType;

//===----------------------------------------------------------------------===//
// Patterns: tile memory, element-wise ops, control (the compute ops:
// HostCompute.cpp)
//===----------------------------------------------------------------------===//

struct FillLowering : TilePattern<FillOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(FillOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    Value v = arith::ConstantOp::create(rw, op.getLoc(), op.getValueAttr());
    replaceByElements(op, op.getType(), rw, [&](ValueRange) { return v; });
    return success();
  }
};

/// Indices into the buffer of tile element `iv`: the leading indices as
/// given, the trailing ones offset by `iv`.
SmallVector<Value> bufferIndices(OpBuilder &b, Location loc, ValueRange base,
                                 ValueRange iv) {
  SmallVector<Value> idx(base.begin(), base.end());
  size_t lead = base.size() - iv.size();
  for (size_t d = 0; d < iv.size(); ++d)
    idx[lead + d] = arith::AddIOp::create(b, loc, base[lead + d], iv[d]);
  return idx;
}

struct LoadLowering : TilePattern<LoadOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(LoadOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto tileT = op.getResult().getType();
    Type elt = tileT.getElementType();
    Value out = alloc(rw, loc, convert(tileT));
    loopNest(rw, loc, tileT.getShape(), [&](ValueRange iv) {
      SmallVector<Value> idx = bufferIndices(rw, loc, a.getIndices(), iv);
      size_t rowDim = idx.size() - iv.size();
      // Where `ok`, what `then` stores; else zero. Each branch stores: no
      // value of the (possibly narrow) element type flows through a select
      // or phi, which hosts without bf16 / fp8 arithmetic would promote
      // through a library call.
      auto storeOrZero = [&](OpBuilder &b, Location l, Value ok,
                             function_ref<void(OpBuilder &, Location)> then) {
        scf::IfOp::create(
            b, l, ok,
            [&](OpBuilder &nb, Location nl) {
              then(nb, nl);
              scf::YieldOp::create(nb, nl);
            },
            [&](OpBuilder &nb, Location nl) {
              store(nb, nl, storedZero(nb, nl, elt), out, iv);
              scf::YieldOp::create(nb, nl);
            });
      };
      if (op.isPaged()) {
        // Row x is table[offset + x / P] * P + x % P where the entry names
        // a row of the source; the table is read for rows below the bound.
        Value x = idx[rowDim];
        int64_t p = static_cast<int64_t>(*op.getPageSize());
        auto gather = [&](OpBuilder &b, Location l) {
          using P = arith::CmpIPredicate;
          Value cp = arith::ConstantIndexOp::create(b, l, p);
          Value at = arith::AddIOp::create(b, l, a.getTableOffset(),
                                           arith::DivUIOp::create(b, l, x, cp));
          Value e = arith::IndexCastOp::create(
              b, l, b.getIndexType(),
              memref::LoadOp::create(b, l, a.getTable(), ValueRange{at}));
          Value row =
              arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, e, cp),
                                    arith::RemUIOp::create(b, l, x, cp));
          Value c0 = arith::ConstantIndexOp::create(b, l, 0);
          Value rows = memref::DimOp::create(b, l, a.getSource(), 0);
          Value ok = arith::AndIOp::create(
              b, l, arith::CmpIOp::create(b, l, P::sge, e, c0),
              arith::CmpIOp::create(b, l, P::slt, row, rows));
          SmallVector<Value> phys = idx;
          phys[rowDim] = row;
          storeOrZero(b, l, ok, [&](OpBuilder &nb, Location nl) {
            store(nb, nl, load(nb, nl, a.getSource(), phys), out, iv);
          });
        };
        if (!a.getBound()) {
          gather(rw, loc);
          return;
        }
        Value in = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::slt, x,
                                         a.getBound());
        storeOrZero(rw, loc, in, gather);
        return;
      }
      if (!a.getBound()) {
        store(rw, loc, load(rw, loc, a.getSource(), idx), out, iv);
        return;
      }
      Value inRange = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::slt,
                                            idx[rowDim], a.getBound());
      storeOrZero(rw, loc, inRange, [&](OpBuilder &b, Location l) {
        store(b, l, load(b, l, a.getSource(), idx), out, iv);
      });
    });
    rw.replaceOp(op, out);
    return success();
  }
};

struct StoreLowering : TilePattern<StoreOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(StoreOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto tileT = op.getValue().getType();
    Type dstElt = op.getDest().getType().getElementType();
    loopNest(rw, loc, tileT.getShape(), [&](ValueRange iv) {
      SmallVector<Value> idx = bufferIndices(rw, loc, a.getIndices(), iv);
      auto write = [&](OpBuilder &b) {
        Value v = load(b, loc, a.getValue(), iv);
        Type tileElt = tileT.getElementType();
        if (tileElt != dstElt)
          v = fromF32(b, loc, toF32(b, loc, v, tileElt), dstElt);
        store(b, loc, v, a.getDest(), idx);
      };
      if (!a.getBound()) {
        write(rw);
        return;
      }
      size_t rowDim = idx.size() - iv.size();
      Value inRange = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::slt,
                                            idx[rowDim], a.getBound());
      scf::IfOp::create(rw, loc, inRange, [&](OpBuilder &b, Location l) {
        write(b);
        scf::YieldOp::create(b, l);
      });
    });
    rw.eraseOp(op);
    return success();
  }
};

struct CastLowering : TilePattern<CastOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(CastOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resT = op.getResult().getType();
    replaceByElements(op, resT, rw, [&](ValueRange iv) {
      Value v = toF32(rw, loc, load(rw, loc, a.getSource(), iv),
                      op.getSource().getType().getElementType());
      return fromF32(rw, loc, v, resT.getElementType());
    });
    return success();
  }
};

struct SplitTermsLowering : TilePattern<SplitTermsOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SplitTermsOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resT = op.getResult().getType();
    Type to = resT.getElementType();
    Value half = cstIndex(rw, loc, op.getSource().getType().getDimSize(0));
    // Row i < R: hi = round(x); row R + r: lo = round(x - hi), x = source[r].
    replaceByElements(op, resT, rw, [&](ValueRange iv) {
      Value lower =
          arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ult, iv[0], half);
      Value r = arith::RemUIOp::create(rw, loc, iv[0], half);
      Value x = load(rw, loc, a.getSource(), {r, iv[1]});
      Value hi = fromF32(rw, loc, x, to);
      Value lo = fromF32(
          rw, loc, arith::SubFOp::create(rw, loc, x, toF32(rw, loc, hi, to)),
          to);
      return arith::SelectOp::create(rw, loc, lower, hi, lo).getResult();
    });
    return success();
  }
};

struct SumTermsLowering : TilePattern<SumTermsOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SumTermsOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resT = op.getResult().getType();
    Value half = cstIndex(rw, loc, resT.getDimSize(0));
    replaceByElements(op, resT, rw, [&](ValueRange iv) {
      Value hi = load(rw, loc, a.getSource(), {iv[0], iv[1]});
      Value lo = load(rw, loc, a.getSource(),
                      {arith::AddIOp::create(rw, loc, iv[0], half), iv[1]});
      return arith::AddFOp::create(rw, loc, hi, lo).getResult();
    });
    return success();
  }
};

struct DequantLowering : TilePattern<DequantOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(DequantOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type i32 = rw.getI32Type();
    auto resT = op.getResult().getType();
    // Into e4m3fn: first each row's reference (the largest scale code, at
    // least kMxfp4E4m3MinRef) and its exponent.
    Value exps;
    if (op.getExponents()) {
      exps = alloc(rw, loc, convert(op.getExponents().getType()));
      int64_t blocks = op.getScales().getType().getDimSize(1);
      loopNest(rw, loc, {resT.getDimSize(0)}, [&](ValueRange r) {
        Value ref = reduceLoop(
            rw, loc, cstIndex(rw, loc, blocks),
            cstI32(rw, loc, kMxfp4E4m3MinRef), [&](Value j, Value acc) {
              Value e = arith::ExtUIOp::create(
                  rw, loc, i32, load(rw, loc, a.getScales(), {r[0], j}));
              return arith::MaxSIOp::create(rw, loc, acc, e);
            });
        store(rw, loc,
              arith::SubIOp::create(rw, loc, ref,
                                    cstI32(rw, loc, kMxfp4E4m3ExpOffset)),
              exps, r);
      });
    }
    Value out = alloc(rw, loc, convert(resT));
    loopNest(rw, loc, resT.getShape(), [&](ValueRange iv) {
      Value r = iv[0], col = iv[1];
      Value byteCol =
          arith::DivUIOp::create(rw, loc, col, cstIndex(rw, loc, 2));
      Value blockCol =
          arith::DivUIOp::create(rw, loc, col, cstIndex(rw, loc, 32));
      Value byte = arith::ExtUIOp::create(
          rw, loc, i32, load(rw, loc, a.getData(), {r, byteCol}));
      // Element 2j in the low nibble of byte j, 2j + 1 in the high one.
      Value shift = arith::IndexCastOp::create(
          rw, loc, i32,
          arith::MulIOp::create(
              rw, loc,
              arith::RemUIOp::create(rw, loc, col, cstIndex(rw, loc, 2)),
              cstIndex(rw, loc, 4)));
      Value code = arith::AndIOp::create(
          rw, loc, arith::ShRUIOp::create(rw, loc, byte, shift),
          cstI32(rw, loc, 0xF));
      Value scale = arith::ExtUIOp::create(
          rw, loc, i32, load(rw, loc, a.getScales(), {r, blockCol}));
      Value v;
      if (exps) {
        Value ref = arith::AddIOp::create(rw, loc, load(rw, loc, exps, {r}),
                                          cstI32(rw, loc, kMxfp4E4m3ExpOffset));
        v = mxfp4ToE4m3(rw, loc, code, scale, ref);
      } else {
        v = mxfp4ToBf16(rw, loc, code, scale);
      }
      store(rw, loc, v, out, iv);
    });
    if (exps)
      rw.replaceOp(op, {out, exps});
    else
      rw.replaceOp(op, out);
    return success();
  }
};

struct ScaleLowering : TilePattern<ScaleOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ScaleOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    replaceByElements(op, op.getType(), rw, [&](ValueRange iv) -> Value {
      return arith::MulFOp::create(rw, loc, load(rw, loc, a.getSource(), iv),
                                   a.getFactor());
    });
    return success();
  }
};

struct SliceLowering : TilePattern<SliceOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SliceOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    replaceByElements(op, op.getResult().getType(), rw, [&](ValueRange iv) {
      SmallVector<Value> src;
      for (auto [d, i] : llvm::enumerate(iv))
        src.push_back(arith::AddIOp::create(
            rw, loc, i, cstIndex(rw, loc, op.getOffsets()[d])));
      return load(rw, loc, a.getSource(), src);
    });
    return success();
  }
};

struct MaskLowering : TilePattern<MaskOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(MaskOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value fill = arith::ConstantOp::create(rw, loc, op.getFillAttr());
    replaceByElements(op, op.getType(), rw, [&](ValueRange iv) -> Value {
      Value pos =
          arith::AddIOp::create(rw, loc, a.getOffset(), iv[op.getDim()]);
      Value outside = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::sge,
                                            pos, a.getBound());
      if (a.getRowEdge()) {
        // Causal rows: row r's bound is edge + r floordiv period.
        Value step = arith::DivUIOp::create(
            rw, loc, iv[0],
            cstIndex(rw, loc, static_cast<int64_t>(*op.getRowPeriod())));
        Value edge = arith::AddIOp::create(rw, loc, a.getRowEdge(), step);
        outside = arith::OrIOp::create(
            rw, loc, outside,
            arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::sge, pos,
                                  edge));
      }
      return arith::SelectOp::create(rw, loc, outside, fill,
                                     load(rw, loc, a.getSource(), iv));
    });
    return success();
  }
};

struct SplitRangeLowering : TilePattern<SplitRangeOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SplitRangeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto [lo, hi] =
        emitSplitRange(rw, loc, a.getLength(), a.getSplit(), a.getNumSplits(),
                       op.getBlockN(), op.getExact());
    rw.replaceOp(op, {lo, hi});
    return success();
  }
};

/// Programs run one after another here, never as a cluster: stage 2
/// combines (the op's launched-otherwise result).
struct SplitClusterSyncLowering : TilePattern<SplitClusterSyncOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SplitClusterSyncOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, arith::ConstantIntOp::create(rw, op.getLoc(), 0, 1));
    return success();
  }
};

struct KvLoopLowering : TilePattern<KvLoopOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(KvLoopOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto loop =
        scf::ForOp::create(rw, loc, a.getLower(), a.getUpper(),
                           cstIndex(rw, loc, op.getStep()), a.getInits());
    Block *generated = loop.getBody();
    rw.inlineRegionBefore(op.getBody(), loop.getRegion(),
                          loop.getRegion().begin());
    rw.eraseBlock(generated);
    if (failed(rw.convertRegionTypes(&loop.getRegion(), *getTypeConverter())))
      return failure();
    rw.replaceOp(op, loop.getResults());
    return success();
  }
};

/// `memref.dim` of a kernel argument (the indptr guards' buffer rows): the
/// same dim of the argument in its storage type.
struct DimLowering : OpConversionPattern<memref::DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(memref::DimOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<memref::DimOp>(op, a.getSource(), a.getIndex());
    return success();
  }
};

/// `memref.collapse_shape` of a kernel argument (q and out read as
/// [rows x heads, dim]): the same collapse of the argument in its storage
/// type.
struct CollapseShapeLowering : OpConversionPattern<memref::CollapseShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(memref::CollapseShapeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<memref::CollapseShapeOp>(
        op, a.getSrc(), op.getReassociationIndices());
    return success();
  }
};

struct YieldLowering : TilePattern<YieldOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(YieldOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<scf::YieldOp>(op, a.getValues());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Kernels -> functions
//===----------------------------------------------------------------------===//

/// Replaces `kernel` by `func.func @name(%pid0, %pid1, %pid2, args...)`.
void kernelToFunc(KernelOp kernel) {
  OpBuilder b(kernel);
  Location loc = kernel.getLoc();
  SmallVector<Type> inputs(3, b.getIndexType());
  llvm::append_range(inputs, kernel.getArgumentTypes());
  auto func = func::FuncOp::create(b, loc, kernel.getSymName(),
                                   b.getFunctionType(inputs, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  func->getContext()
      ->getLoadedDialect<MLADialect>()
      ->getGridAttrHelper()
      .setAttr(func, kernel.getGrid());
  func.getBody().takeBody(kernel.getBody());
  Block &entry = func.getBody().front();
  for (unsigned i = 0; i < 3; ++i)
    entry.insertArgument(i, b.getIndexType(), loc);
  func.walk([&](ProgramIdOp pid) {
    pid.getResult().replaceAllUsesWith(entry.getArgument(pid.getDim()));
    pid.erase();
  });
  func.walk([&](ReturnOp ret) {
    OpBuilder rb(ret);
    func::ReturnOp::create(rb, ret.getLoc());
    ret.erase();
  });
  kernel.erase();
}

struct MLALowerToLoops
    : public mla::impl::MLALowerToLoopsBase<MLALowerToLoops> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    if (!module.getOps<DecodeOp>().empty()) {
      module.emitError("mla.decode specs must be expanded before "
                       "mla-lower-to-loops (run mla-expand-decode)");
      return signalPassFailure();
    }
    for (KernelOp k : llvm::make_early_inc_range(module.getOps<KernelOp>()))
      kernelToFunc(k);

    TypeConverter types;
    types.addConversion([](Type t) { return t; });
    types.addConversion([](RankedTensorType t) -> Type {
      return MemRefType::get(t.getShape(), storageType(t.getElementType()));
    });
    types.addConversion([](MemRefType t) -> Type {
      return MemRefType::get(t.getShape(), storageType(t.getElementType()),
                             t.getLayout(), t.getMemorySpace());
    });

    ConversionTarget target(*ctx);
    target.addIllegalDialect<MLADialect>();
    target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                           math::MathDialect, memref::MemRefDialect,
                           scf::SCFDialect>();
    RewritePatternSet patterns(ctx);
    scf::populateSCFStructuralTypeConversionsAndLegality(types, patterns,
                                                         target);
    // Kernel arguments change storage type too (same bytes, same ABI).
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   types);
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return types.isSignatureLegal(f.getFunctionType());
    });
    target.addDynamicallyLegalOp<memref::DimOp>([&](memref::DimOp d) {
      return types.isLegal(d.getSource().getType());
    });
    target.addDynamicallyLegalOp<memref::CollapseShapeOp>(
        [&](memref::CollapseShapeOp c) {
          return types.isLegal(c.getSrc().getType());
        });
    patterns.add<DimLowering, CollapseShapeLowering>(types, ctx);
    patterns.add<FillLowering, LoadLowering, StoreLowering, CastLowering,
                 SplitTermsLowering, SumTermsLowering, DequantLowering, ScaleLowering, SliceLowering, MaskLowering,
                 SplitRangeLowering, KvLoopLowering, SplitClusterSyncLowering,
                 YieldLowering>(types, ctx);
    populateComputePatterns(types, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
