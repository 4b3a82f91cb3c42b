//===- OpWalk.cpp - barriers, control flow, the op walk -------------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

Value Lowering::barrier(Value anyOf, bool asyncFence) {
  // With LDS DMA loads in flight (a double-buffered KV tile on CDNA4),
  // one that does not wait for them; the lowering's barriers only order
  // LDS (waves never exchange data through global memory).
  // Shared memory that warpgroup MMAs read (async proxy) was written by
  // threads (generic proxy): each thread's fence before the barrier.
  if (target.mma->smemOperands && asyncFence)
    target.asyncProxyFence(b, loc());
  Value any;
  if (anyOf)
    any = target.barrierAny(b, loc(), anyOf);
  else if (target.chip.facts.ldsDmaLoads16 &&
           (kvTiles.prefetch || !kvTiles.started.empty()))
    target.ldsOnlyBarrier(b, loc());
  else
    gpu::BarrierOp::create(b, loc());
  if (kvLoop.body && b.getInsertionBlock() == kvLoop.body)
    kvLoop.bodyBarrier = true;
  return any;
}

LogicalResult Lowering::lowerIf(scf::IfOp op) {
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

LogicalResult Lowering::lowerFor(scf::ForOp op) {
  if (op.getNumResults() != 0)
    return fail("scf.for with iter_args is not supported in kernels");
  auto loop = scf::ForOp::create(b, loc(), scalars.lookup(op.getLowerBound()),
                                 scalars.lookup(op.getUpperBound()),
                                 scalars.lookup(op.getStep()));
  scalars.map(op.getInductionVar(), loop.getInductionVar());
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  for (Operation &inner : op.getBody()->without_terminator())
    if (failed(lowerOp(&inner)))
      return failure();
  return success();
}

void Lowering::reportPlacement(Operation *op) {
  static const char *const kinds[] = {"smem",      "expr",        "acc",
                                      "row-slice", "row-partial", "blocked"};
  SmallVector<std::string> parts;
  for (Value r : op->getResults()) {
    auto it = tiles.find(r);
    if (it == tiles.end())
      continue;
    const Tile &t = *it->second;
    std::string s = kinds[static_cast<int>(t.kind)];
    if (!t.regs.empty())
      s += " (" + std::to_string(t.regs.size()) + " registers per lane)";
    if (t.kind == Kind::Blocked)
      s += " (runs of " + std::to_string(t.blockRun) + ")";
    if (t.kPerm)
      s += " (columns in the grouped dots' K order)";
    parts.push_back(s);
  }
  for (const std::string &n : notes.lookup(op))
    parts.push_back(n);
  if (parts.empty())
    return;
  InFlightDiagnostic d = op->emitRemark("placement: ");
  llvm::interleave(
      parts, [&](const std::string &p) { d << p; }, [&] { d << "; "; });
}

LogicalResult Lowering::lowerOp(Operation *op) {
  Operation *saved = diagOp;
  diagOp = op;
  llvm::scope_exit restore([&] { diagOp = saved; });
  LogicalResult lowered = lowerOpByKind(op);
  if (succeeded(lowered) && reportPlacements &&
      op->getDialect() == b.getContext()->getLoadedDialect<MLADialect>())
    reportPlacement(op);
  return lowered;
}

LogicalResult Lowering::lowerOpByKind(Operation *op) {
  if (folded.contains(op)) // applied by a tile load (foldableChain)
    return success();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ProgramIdOp p) {
        static const gpu::Dimension dims[] = {
            gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z};
        scalars.map(p.getResult(),
                    gpu::BlockIdOp::create(b, loc(), dims[p.getDim()]));
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
      .Case([&](CastOp o) { return lowerCast(o); })
      .Case([&](ScaleOp o) { return lowerScale(o); })
      .Case([&](QuantScaleOp o) { return lowerQuantScale(o); })
      .Case([&](SplitTermsOp o) { return lowerSplitTerms(o); })
      .Case([&](SumTermsOp o) { return lowerSumTerms(o); })
      .Case([&](SliceOp o) { return lowerSlice(o); })
      .Case([&](DequantOp o) { return lowerDequant(o); })
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
        if (target.chip.facts.dependentLaunch)
          target.launchDependents(b, loc());
        return success();
      })
      .Case([&](SplitClusterSyncOp o) { return lowerSplitClusterSync(o); })
      .Case([&](scf::IfOp o) { return lowerIf(o); })
      .Case([&](scf::ForOp o) { return lowerFor(o); })
      .Case([&](memref::CollapseShapeOp c) {
        // q / out as [rows x heads, dim]: the same collapse of the
        // argument in its storage type.
        scalars.map(c.getResult(), memref::CollapseShapeOp::create(
                                       b, loc(), scalars.lookup(c.getSrc()),
                                       c.getReassociationIndices()));
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        if (other->getDialect() ==
                b.getContext()->getLoadedDialect<MLADialect>() ||
            other->getNumRegions() != 0)
          return fail("is not supported by the GPU lowering");
        b.clone(*other, scalars);
        return success();
      });
}

} // namespace mlir::mla::gpulower
