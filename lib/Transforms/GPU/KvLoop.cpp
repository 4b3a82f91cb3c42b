//===- KvLoop.cpp - the KV loop ------------------------------------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h). mla.kv_loop
// as an scf.for carrying its tiles' registers, and the set-up of its KV
// tile's copy a tile ahead: asynchronous copies into a second buffer
// (KvTileCopy.cpp) or loads into registers (KvTileRegisters.cpp).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

LogicalResult Lowering::lowerKvLoop(KvLoopOp op) {
  // Lazy tiles defined outside and read inside would be re-evaluated on
  // every read of every iteration: evaluate them once, here.
  op.getBody().walk([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      auto t = tiles.lookup(v);
      if (t && t->kind == Kind::Expr &&
          !op->isAncestor(v.getParentBlock()->getParentOp()))
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
        llvm::all_of(
            t->regs,
            [](Value r) { return matchPattern(r, m_AnyZeroFloat()); }) &&
        llvm::all_of(arg.getUses(), [](OpOperand &u) {
          auto sm = dyn_cast<OnlineSoftmaxOp>(u.getOwner());
          return sm &&
                 u.getOperandNumber() == sm.getSumMutable().getOperandNumber();
        }))
      t = regTile(Kind::RowPartial, t->type, t->regs);
    initTiles.push_back(t);
    inits.append(t->regs.begin(), t->regs.end());
  }
  // The KV tile's copy, double-buffered where the chip copies
  // asynchronously: the first tile's copies went out before the loop
  // (earlier still where startPrefetch ran at the Q load).
  // Or (first choice) its fp8 tile / mxfp4 bytes a tile ahead in
  // registers, carried by the loop (the first one loaded at the Q load,
  // where it could be).
  std::optional<RegPrefetch> rp;
  if (auto it = kvTiles.regStarted.find(op); it != kvTiles.regStarted.end())
    rp = it->second;
  else if (!kvTiles.started.count(op))
    rp = startRegisterPrefetch(op);
  std::optional<Prefetch> pf;
  if (auto it = kvTiles.started.find(op); it != kvTiles.started.end())
    pf = it->second;
  else if (!rp)
    pf = startPrefetch(op, 0);
  Value lowerV = scalars.lookup(op.getLower()),
        upperV = scalars.lookup(op.getUpper());
  if (pf) {
    pf->lower = lowerV;
    pf->upper = upperV;
    pf->step = idx(op.getStep());
  }
  size_t rpAt = inits.size(), rpChunks = rp ? rp->cur.size() : 0;
  if (rp) {
    inits.append(rp->cur);
    if (rp->pageAhead)
      inits.push_back(rp->pageAhead);
  }
  auto loop =
      scf::ForOp::create(b, loc(), lowerV, upperV, idx(op.getStep()), inits);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Block &body = op.getBody().front();
  scalars.map(body.getArgument(0), loop.getInductionVar());
  KvLoopFrame outer = kvLoop;
  kvLoop = {loop.getBody(), /*bodyBarrier=*/false, lowerV, loop.getStep()};
  llvm::scope_exit restoreBody([&] { kvLoop = outer; });
  if (pf) {
    pf->iv = loop.getInductionVar();
    kvTiles.prefetch = pf;
    kvTiles.asyncCopies = true;
  }
  if (rp) {
    rp->cur.assign(loop.getRegionIterArgs().begin() + rpAt,
                   loop.getRegionIterArgs().begin() + rpAt + rpChunks);
    if (rp->pageAhead)
      rp->pageAhead = loop.getRegionIterArgs()[rpAt + rpChunks];
    rp->loop = op;
    rp->iv = loop.getInductionVar();
    rp->upper = upperV;
    kvTiles.regPrefetch = rp;
  }
  llvm::scope_exit clearPrefetch([&] {
    kvTiles.prefetch.reset();
    kvTiles.regPrefetch.reset();
  });
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
  if (rp) {
    if (kvTiles.regPrefetch->next.size() != kvTiles.regPrefetch->cur.size())
      return fail("the KV tile loaded ahead was not loaded in the loop "
                  "(internal error)");
    next.append(kvTiles.regPrefetch->next.begin(),
                kvTiles.regPrefetch->next.end());
    if (!kvTiles.regPrefetch->pageAheadNext != !kvTiles.regPrefetch->pageAhead)
      return fail("the page entry loaded ahead was not loaded in the loop "
                  "(internal error)");
    if (kvTiles.regPrefetch->pageAheadNext)
      next.push_back(kvTiles.regPrefetch->pageAheadNext);
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

} // namespace mlir::mla::gpulower
