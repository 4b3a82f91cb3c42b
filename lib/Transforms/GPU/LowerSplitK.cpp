//===- LowerSplitK.cpp - the split-K combine
//--------------------------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

LogicalResult Lowering::lowerSplitKReduce(SplitKReduceOp op) {
  auto t = op.getResult().getType();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  int64_t numel = rows * cols;
  Value part = scalars.lookup(op.getPartial()),
        lse = scalars.lookup(op.getLse());
  Value bIdx = scalars.lookup(op.getBatch()), h0 = scalars.lookup(op.getHead());
  Value n = scalars.lookup(op.getNumSplits());
  // Launched as stage 1's dependent (ChipInfo::dependentLaunch: a combine
  // at the kernel's top level, stage 2), the combine waits here, before its
  // first read of stage 1's results, until all of stage 1's stores are visible;
  // reads of inputs placed before it in the kernel (the output row from
  // qo_indptr) overlap the wait. Launched normally, the wait returns at once.
  if (target.chip.facts.dependentLaunch && isa<KernelOp>(op->getParentOp()))
    target.waitForPrerequisiteGrid(b, loc());
  float negInfF = -std::numeric_limits<float>::infinity();
  Value negInf = cstF32(b, loc(), negInfF);
  Value zero = cstF32(b, loc(), 0.0f);
  // A thread combines runs of `run` adjacent columns of one head (Blocked
  // with blockRun): one 16-byte load per split and run, and one set of
  // split weights per run, where the columns divide into whole rounds of
  // runs; else single elements.
  int64_t run = 4;
  auto partT = cast<MemRefType>(part.getType());
  if (cols % run || numel % (threads * run) ||
      !partT.getElementType().isF32() || !partT.getLayout().isIdentity())
    run = 1;
  int64_t perThread = (numel + threads * run - 1) / (threads * run);
  SmallVector<Value> heads, colIdx;
  for (int64_t k = 0; k < perThread; ++k) {
    Value e = mul(addc(tid, k * threads), run);
    if (numel % (threads * run) != 0) // threads past the end compute element 0
      e = arith::SelectOp::create(
          b, loc(),
          arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, e,
                                idx(numel)),
          e, idx(0));
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
        in.push_back(
            arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, su, n));
        at.push_back(arith::SelectOp::create(b, loc(), in.back(), su, last));
      }
      SmallVector<Value> next;
      for (int64_t k = 0; k < perThread; ++k) {
        SmallVector<Value> l;
        SmallVector<SmallVector<Value>> p;
        for (int64_t u = 0; u < width; ++u) {
          Value v = memref::LoadOp::create(b, loc(), lse,
                                           ValueRange{bIdx, at[u], heads[k]});
          l.push_back(arith::SelectOp::create(b, loc(), in[u], v, negInf));
          SmallVector<Value, 4> idxs{bIdx, at[u], heads[k], colIdx[k]};
          SmallVector<Value> elems;
          if (run == 1) {
            elems.push_back(memref::LoadOp::create(b, loc(), part, idxs));
          } else {
            Value vec = vector::LoadOp::create(b, loc(), vecT, part, idxs,
                                               /*nontemporal=*/false,
                                               llvm::MaybeAlign(run * 4));
            for (int64_t j = 0; j < run; ++j)
              elems.push_back(vector::ExtractOp::create(b, loc(), vec,
                                                        ArrayRef<int64_t>{j}));
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
          return target.exp2(
              b, loc(),
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
            acc[j] = arith::AddFOp::create(
                b, loc(), acc[j], arith::MulFOp::create(b, loc(), w, p[u][j]));
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
  // With max_splits (the cluster combine at the end of stage 1): one width,
  // the widest power of two up to max_splits whose loads are at most 64
  // values a thread (all max_splits splits in one round where they fit); a
  // wider loop's registers would be stage 1's peak.
  SmallVector<int64_t, 3> widths{8, 16, 32};
  if (auto most = op.getMaxSplits()) {
    int64_t w = 1;
    while (w * 2 <= static_cast<int64_t>(*most) &&
           w * 2 * perThread * (run + 1) <= 64)
      w *= 2;
    widths = {w};
  }
  // if (n <= 8) loop(8) else if (n <= 16) loop(16) else loop(32)
  SmallVector<Value> results;
  {
    OpBuilder::InsertionGuard g(b);
    for (auto [i, width] : llvm::enumerate(widths)) {
      bool last = i + 1 == widths.size();
      scf::IfOp ifOp;
      SmallVector<Value> vals;
      if (last) {
        vals = combineLoop(width);
      } else {
        Value fits = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ule,
                                           n, idx(width));
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
    Value empty =
        arith::CmpFOp::create(b, loc(), arith::CmpFPredicate::OEQ, den, zero);
    Value safe =
        arith::SelectOp::create(b, loc(), empty, cstF32(b, loc(), 1.0f), den);
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

LogicalResult Lowering::lowerSplitClusterSync(SplitClusterSyncOp op) {
  Value n = scalars.lookup(op.getNumSplits());
  if (!target.chip.facts.clusterPrograms) {
    scalars.map(op.getAll(), arith::ConstantIntOp::create(b, loc(), 0, 1));
    return success();
  }
  // All splits in this program's cluster: the launcher's single launch
  // (cluster dims 1 x num_splits). The condition is uniform over the
  // cluster, so every thread of it reaches the barrier or none does.
  Value size = target.clusterPrograms(b, loc());
  Value many =
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ugt, n, idx(1));
  Value whole =
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, size, n);
  Value all = arith::AndIOp::create(b, loc(), many, whole);
  scf::IfOp::create(b, loc(), all, [&](OpBuilder &nb, Location l) {
    target.clusterBarrier(nb, l);
    scf::YieldOp::create(nb, l);
  });
  scalars.map(op.getAll(), all);
  return success();
}

} // namespace mlir::mla::gpulower
