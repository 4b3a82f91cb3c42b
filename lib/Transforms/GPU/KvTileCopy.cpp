//===- KvTileCopy.cpp - the KV tile straight to shared memory -------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h). The copies
// that bypass registers: sm_90's cp.async (per-thread 16-byte copies,
// commit groups) and gfx950's LDS DMA loads (per-wave 1 KiB runs of the
// padded tile), and the KV loop's double buffer over either (the first
// tile sent before the loop, the next one each iteration).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

/// The i64 shared address of the mbarrier of tile `t`'s buffer.
static Value mbarAt(Lowering &l, const Prefetch &p, Value t) {
  Value smem =
      memref::ExtractAlignedPointerAsIndexOp::create(l.b, l.loc(), l.smemBase);
  Value slot = arith::RemUIOp::create(l.b, l.loc(), t,
                                      l.idx(Lowering::KvTileStream::stages));
  return arith::IndexCastOp::create(
      l.b, l.loc(), l.b.getI64Type(),
      l.add(l.addc(smem, p.mbarOffset), l.mul(slot, 8)));
}

Value Lowering::smemElemOffset(bool swz, Value r, Value c, int64_t rows,
                               int64_t rowElems, int64_t elemBytes) {
  if (!swz)
    return add(mul(r, rowElems), c);
  SmallVector<Value> i = swizzledIndices(b, loc(), r, c, elemBytes);
  return add(add(mul(i[0], rows * 64), mul(i[1], 64)), i[2]);
}

Value Lowering::rematAt(Value v, KvLoopOp loop, Value iv, IRMapping &m) {
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

Value Lowering::kvReadPolicy(LoadOp op, KvLoopOp loop, Value lower,
                             Value upper) {
  int64_t few = target.chip.tuning.kvEvictFirstTiles;
  // A paged tile's reads take none: with a policy its register loads ran
  // 1.5 % slower at 64 and 256 x 8192 (evict-normal there; H100,
  // docs/PerformanceLog.md, 2026-12-06, twenty-fourth session).
  if (few <= 0 || op.isPaged())
    return Value();
  return target.l2ReadPolicy(
      b, loc(),
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::sle,
                            arith::SubIOp::create(b, loc(), upper, lower),
                            idx(few * loop.getStep())));
}

/// The bytes of an mxfp4 tile decoded into e4m3 (mla.dequant with
/// exponents) where the products read fp8 tiles: one buffer whose next tile
/// is sent once the decode has read it (Prefetch::earlySend), so that two
/// programs still fit beside each other and the copy overlaps the dots.
static bool sendsEarly(LoadOp op) {
  if (!op->hasOneUse())
    return false;
  auto dq = dyn_cast<DequantOp>(*op->getUsers().begin());
  return dq && dq.getData() == op.getResult() && dq.getExponents();
}

bool Lowering::canPrefetch(LoadOp op, KvLoopOp loop, int64_t reserve) {
  bool dma = ldsDmaCopies(op);
  if ((!target.chip.facts.asyncTileCopy && !dma) || !contiguousRows(op))
    return false;
  // Staged in place: the region is both the copy's and the conversion's.
  if (stagesInPlace(op))
    return false;
  auto t = op.getResult().getType();
  int64_t eltBytes = storedBytes(t.getElementType());
  int64_t rowBytes = t.getDimSize(1) * eltBytes;
  if (!dma && (rowBytes % 16 || (t.getDimSize(0) * rowBytes / 16) % threads))
    return false;
  // Only where two programs still fit beside each other. On sm_90 a
  // second buffer that halves the programs per SM (bf16 KV: 2 x 74 KiB)
  // measured slower than the overlap gains. On CDNA4 the same holds by
  // Little's law: the loop is latency-bound (llvm-mca: ~0.5k cycles of
  // work per 64-token tile against a memory latency of several thousand),
  // so a CU moves bytes at the rate of the tiles it has in flight; two
  // single-buffered programs keep up to two tiles in flight, one
  // double-buffered program one (plus the one it computes on). 4 KiB
  // stands for what is allocated later (P, the row-reduction arrays).
  int64_t tileBytes =
      smemTileBytes(t.getDimSize(0), t.getDimSize(1), t.getElementType());
  // Swizzled regions start 1024-byte aligned: P's and the reductions'
  // alignment on top.
  int64_t later = 4096 + (target.mma->smemOperands ? 2 * 1023 : 0);
  int64_t perSM = target.chip.facts.sharedMemBytes;
  auto fits = [&](int64_t programs, int64_t buffers) {
    return programs * (smem.bytes() + reserve + buffers * tileBytes + later) <=
           perSM;
  };
  // Where one program fills the SM's shared memory already, a second
  // buffer costs no occupancy (ChipTuning::prefetchWhenAlone).
  bool alone = target.chip.tuning.prefetchWhenAlone && !fits(2, 1) &&
               fits(1, kvTiles.stages);
  // Tiles sent by tensor-map copies cost the threads nothing to issue, so
  // one program with a tile in flight beats two that wait for theirs: bf16
  // on sm_90a (H200, one process) 65.1 against 67.0 µs on the task's
  // geomean, 25.5 against 28.8 at 4 x 8192 (1-4 % slower at 4 and
  // 64 x 1024); with cp.async the same choice had measured slower (679
  // against 602 µs at 256 x 8192).
  if (tensorMapCopies(op) && fits(1, kvTiles.stages))
    alone = true;
  // Not so for a tile that wgmma reads as fp8 (fp8Operands): V^T and fp8 Q
  // come on top, and two single-buffered programs per SM measured faster
  // than one double-buffered (H200, fp8 Q and P: 61.9 against 67.7 us on
  // the task's geomean, 498 against 593 us at 256 x 8192; the loop is
  // latency-bound there, docs/Performance.md).
  // Unless its V^T is transposed into the tile's own atoms
  // (e4m3DoubleBuffered, vtInPlace): then two buffers where two programs
  // still fit (V^T's region, otherwise allocated later, is none).
  if (e4m3DoubleBuffered(op) && fits(2, kvTiles.stages))
    return computableAhead(op, loop);
  if (fp8Operands)
    return sendsEarly(op) && !dma && fits(2, 1) && computableAhead(op, loop);
  if (!fits(2, kvTiles.stages) && !alone)
    return false;
  return computableAhead(op, loop);
}

bool Lowering::computableAhead(LoadOp op, KvLoopOp loop) {
  std::function<bool(Value)> ok = [&](Value v) {
    if (v == loop.getBody().getArgument(0))
      return true;
    Operation *def = v.getDefiningOp();
    if (!def)
      return !loop->isAncestor(v.getParentBlock()->getParentOp());
    if (!loop->isProperAncestor(def))
      return true;
    return def->getDialect() ==
               b.getContext()->getLoadedDialect<arith::ArithDialect>() &&
           def->getNumRegions() == 0 && llvm::all_of(def->getOperands(), ok);
  };
  return llvm::all_of(op.getIndices(), ok) &&
         (!op.getBound() || ok(op.getBound())) &&
         (!op.getTableOffset() || ok(op.getTableOffset()));
}

void Lowering::emitAsyncTileCopy(LoadOp op, Value row0, Value col0, Value bound,
                                 Value dstOffset, Value table,
                                 Value tableOffset, bool wholeTiles) {
  if (target.chip.facts.ldsDmaLoads16) {
    assert(!table && "LDS DMA copies are contiguous (ldsDmaCopies)");
    emitLdsDmaTileCopy(op, row0, col0, bound, dstOffset);
    return;
  }
  auto t = op.getResult().getType();
  auto src = cast<MemRefType>(op.getSource().getType());
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  Type st = storageType(t.getElementType());
  int64_t eltBytes = storedBytes(st);
  int64_t vec = 16 / eltBytes;
  // The tile's place as allocSmem laid it out, or as staged in place
  // (stagesInPlace: fp8 atoms of 64 columns).
  bool swz = swizzled(rows, cols, t.getElementType()) ||
             static_cast<bool>(stagesInPlace(op));
  int64_t padded = paddedRowBytes(cols * eltBytes) / eltBytes;
  int64_t chunks = rows * cols / vec;
  Type i64 = b.getI64Type();
  auto toI64 = [&](Value x) {
    return arith::IndexCastOp::create(b, loc(), i64, x).getResult();
  };
  Value source = scalars.lookup(op.getSource());
  Value srcBase =
      toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), source));
  if (table && tilesWithinOnePage(op)) {
    bool masked = static_cast<bool>(bound);
    std::tie(row0, bound) = onePageRange(
        op, source, row0, bound, pageEntry(op, row0, table, tableOffset));
    if (!masked && wholeTiles) {
      // A tile of the mask-free stage 1 is whole; it only needs the bound
      // where its page is not (wholly) in the cache. The usual case copies
      // as the contiguous mask-free tile, with no per-copy compare and
      // select (on the H200 they cost bf16's 36 copies per thread up to 5 %
      // at 256 x 8192; the prefetched fp8 tile measured 2 % slower with the
      // branch than without it, so it keeps the selects).
      Value whole = arith::CmpIOp::create(
          b, loc(), arith::CmpIPredicate::eq,
          arith::SubIOp::create(b, loc(), bound, row0), idx(rows));
      auto ifOp = scf::IfOp::create(b, loc(), whole, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      emitAsyncTileCopy(op, row0, col0, Value(), dstOffset);
      b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
      emitAsyncTileCopy(op, row0, col0, bound, dstOffset);
      return;
    }
    table = Value();
  }
  std::optional<PagedRows> paged;
  if (table)
    paged = pagedRows(op, source, row0, bound, table, tableOffset);
  Value dstBase = toI64(
      add(memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), smemBase),
          dstOffset));
  // A chunk's address is the tile's first byte (the same for every
  // thread) plus the chunk's 32-bit offset in the tile, which does not
  // change from one tile to the next (hoisted out of the KV loop): one
  // 64-bit add per chunk instead of a 64-bit multiply-add of its row.
  Value tileBase = arith::AddIOp::create(
      b, loc(), srcBase,
      toI64(mul(add(mul(row0, src.getDimSize(1)), col0), eltBytes)));
  // A rolled loop over the thread's chunks (as lowerLoad's on chips that
  // do not unroll): unrolled, the per-chunk addresses stay live across
  // the KV loop and cost registers.
  auto rounds =
      scf::ForOp::create(b, loc(), idx(0), idx(chunks / threads), idx(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(rounds.getBody());
  {
    auto [r, col] =
        chunkCoord(add(tid, mul(rounds.getInductionVar(), threads)), vec, cols);
    Value off = arith::IndexCastUIOp::create(
        b, loc(), b.getI32Type(),
        mul(add(mul(r, src.getDimSize(1)), col), eltBytes));
    Value size;
    Value srcAddr;
    if (paged) {
      // A gathered row: its own 64-bit address; a row that is not there
      // copies nothing from the cache's first row (size 0).
      auto [row, ok] = pagedRow(*paged, r);
      srcAddr = arith::AddIOp::create(
          b, loc(), srcBase,
          toI64(
              mul(add(add(mul(row, src.getDimSize(1)), col0), col), eltBytes)));
      size = arith::SelectOp::create(b, loc(), ok, cstI32(b, loc(), 16),
                                     cstI32(b, loc(), 0));
    } else if (bound) {
      Value in = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt,
                                       add(row0, r), bound);
      off = arith::SelectOp::create(b, loc(), in, off, cstI32(b, loc(), 0));
      size = arith::SelectOp::create(b, loc(), in, cstI32(b, loc(), 16),
                                     cstI32(b, loc(), 0));
    }
    if (!paged)
      srcAddr = arith::AddIOp::create(
          b, loc(), tileBase, arith::ExtUIOp::create(b, loc(), i64, off));
    Value dstElem = smemElemOffset(swz, r, col, rows, padded, eltBytes);
    Value dstAddr =
        arith::AddIOp::create(b, loc(), dstBase, toI64(mul(dstElem, eltBytes)));
    target.asyncCopy16(b, loc(), dstAddr, srcAddr, size);
  }
}

Type Lowering::stagesInPlace(LoadOp op) {
  auto t = op.getResult().getType();
  if (!target.mma->smemOperands || !target.chip.facts.asyncTileCopy ||
      !isFp8(t.getElementType()) || t.getRank() != 2 ||
      !op->getParentOfType<KvLoopOp>() || !contiguousRows(op))
    return Type();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  SmallVector<Value> uses = {op.getResult()};
  while (!uses.empty()) {
    Value v = uses.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (auto sl = dyn_cast<SliceOp>(user)) {
        uses.push_back(sl.getResult());
        continue;
      }
      auto d = dyn_cast<DotOp>(user);
      if (!d)
        continue;
      Type lhs = d.getLhs().getType().getElementType();
      Type rhs = d.getRhs().getType().getElementType();
      const MatrixInstr *mi =
          target.instrFor(lhs, rhs, d.getLhs().getType().getDimSize(1));
      // Read as fp8 (fp8Operands): stored as it is, swizzled.
      if (bitWidth(mi->abType) == 8)
        return Type();
      Type to = sixteenBitOperand(b, mi);
      if (!mi->smemOperands || !swizzled(rows, cols, to) ||
          (rows * 64 / 16) % threads)
        return Type();
      return to;
    }
  }
  return Type();
}

bool Lowering::ldsDmaCopies(LoadOp op) {
  if (!target.chip.facts.ldsDmaLoads16 || op.isPaged() || !contiguousRows(op))
    return false;
  auto t = op.getResult().getType();
  int64_t rowBytes = t.getDimSize(1) * storedBytes(t.getElementType());
  int64_t waveSize = target.chip.facts.waveSize;
  return rowBytes % 16 == 0 && kRowPadBytes % 16 == 0 &&
         (t.getDimSize(0) * paddedRowBytes(rowBytes) / 16) % waveSize == 0 &&
         threads % waveSize == 0 && !kOrderFor(op) && foldableChain(op).empty();
}

void Lowering::emitLdsDmaTileCopy(LoadOp op, Value row0, Value col0,
                                  Value bound, Value dstOffset) {
  auto t = op.getResult().getType();
  auto srcT = cast<MemRefType>(op.getSource().getType());
  int64_t rows = t.getDimSize(0);
  int64_t eltBytes = storedBytes(t.getElementType());
  int64_t rowBytes = t.getDimSize(1) * eltBytes;
  int64_t srcRowBytes = srcT.getDimSize(1) * eltBytes;
  int64_t dataChunks = rowBytes / 16;
  int64_t rowChunks = paddedRowBytes(rowBytes) / 16;
  int64_t waveSize = target.chip.facts.waveSize;
  int64_t loads = rows * rowChunks / waveSize, waves = threads / waveSize;
  int64_t each = loads / waves, extra = loads % waves;
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  auto toI64 = [&](Value x) {
    return arith::IndexCastOp::create(b, loc(), i64, x).getResult();
  };
  auto toI32 = [&](Value x) {
    return arith::IndexCastOp::create(b, loc(), i32, x).getResult();
  };
  // The buffer over the tile's rows that are there (as lowerLoad's
  // bounds-checked loads: the KV range is clamped to the cache's rows).
  Value source = scalars.lookup(op.getSource());
  Value addr = arith::AddIOp::create(
      b, loc(),
      toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), source)),
      toI64(add(mul(row0, srcRowBytes), mul(col0, eltBytes))));
  Value limit = idx(rows);
  if (bound)
    limit = arith::MinSIOp::create(
        b, loc(),
        arith::MaxSIOp::create(
            b, loc(), arith::SubIOp::create(b, loc(), bound, row0), idx(0)),
        limit);
  // This wave's first wave-load: warp * each + min(warp, extra). The LDS
  // side is kept in scalar registers: the tile's address and this first
  // wave-load are wave-uniform, and four consecutive wave-loads (4 KiB)
  // share one M0, the instruction offset (< 4 KiB) adding 1 KiB each. The
  // instruction adds that offset to the buffer offset too, so each lane's
  // offset is its chunk's minus it, plus a bias of 4 KiB that keeps it
  // from going negative (a chunk of the tile's first rows can lie below
  // its instruction offset): the buffer starts that much before the tile
  // and is that much longer, and its first 4 KiB are never addressed.
  constexpr int64_t kPerM0 = 4; // wave-loads per M0 value
  int64_t bias = kPerM0 * waveSize * 16;
  Value rsrc = target.boundedBuffer(
      b, loc(),
      arith::SubIOp::create(
          b, loc(), addr,
          arith::ConstantOp::create(b, loc(), b.getI64IntegerAttr(bias))),
      toI64(addc(mul(limit, srcRowBytes), bias)));
  // The lanes' chunks take the same first wave-load from the wave index as
  // it is (not the readfirstlane copy below): LLVM hoists their offsets,
  // the same for every tile, out of the KV loop only from the former
  // (from the uniform copy: +14 wave-instructions per token, qp8).
  Value firstLoad =
      add(mul(warp, each), arith::MinUIOp::create(b, loc(), warp, idx(extra)));
  Value ldsTile = toI32(
      add(memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), smemBase),
          dstOffset));
  Value w = target.waveUniform(b, loc(), toI32(warp));
  Value firstU = arith::AddIOp::create(
      b, loc(), arith::MulIOp::create(b, loc(), w, cstI32(b, loc(), each)),
      arith::MinUIOp::create(b, loc(), w, cstI32(b, loc(), extra)));
  Value ldsWave = arith::AddIOp::create(
      b, loc(), ldsTile,
      arith::MulIOp::create(b, loc(), firstU, cstI32(b, loc(), waveSize * 16)));
  auto emit = [&](int64_t i) {
    int64_t instOffset = (i % kPerM0) * waveSize * 16;
    Value c = add(mul(addc(firstLoad, i), waveSize), lane);
    Value r = arith::DivUIOp::create(b, loc(), c, idx(rowChunks));
    Value cc = arith::RemUIOp::create(b, loc(), c, idx(rowChunks));
    Value data = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, cc,
                                       idx(dataChunks));
    Value off = arith::SelectOp::create(
        b, loc(), data,
        toI32(addc(add(mul(r, srcRowBytes), mul(cc, 16)), bias - instOffset)),
        cstI32(b, loc(), int32_t(0x80000000u)));
    Value base = arith::AddIOp::create(
        b, loc(), ldsWave,
        cstI32(b, loc(), i / kPerM0 * kPerM0 * waveSize * 16));
    target.ldsDmaLoad16(b, loc(), rsrc, off, base, instOffset);
  };
  for (int64_t i = 0; i < each; ++i)
    emit(i);
  if (extra) {
    Value more = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult,
                                       warp, idx(extra));
    auto ifOp = scf::IfOp::create(b, loc(), more, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    emit(each);
  }
}

Value Lowering::scalarNow(Value v, IRMapping &m) {
  if (Value done = scalars.lookupOrNull(v))
    return done;
  if (Value done = m.lookupOrNull(v))
    return done;
  Operation *def = v.getDefiningOp();
  if (!def ||
      def->getDialect() !=
          b.getContext()->getLoadedDialect<arith::ArithDialect>() ||
      def->getNumRegions() != 0)
    return Value();
  for (Value o : def->getOperands())
    if (Value x = scalarNow(o, m))
      m.map(o, x);
    else
      return Value();
  return b.clone(*def, m)->getResult(cast<OpResult>(v).getResultNumber());
}

bool Lowering::readyAhead(Value v, KvLoopOp loop, IRMapping &m) {
  if (v == loop.getBody().getArgument(0))
    return true;
  Operation *def = v.getDefiningOp();
  if (def && loop->isProperAncestor(def))
    return llvm::all_of(def->getOperands(),
                        [&](Value o) { return readyAhead(o, loop, m); });
  return bool(scalarNow(v, m));
}

std::optional<Prefetch> Lowering::startPrefetch(KvLoopOp loop,
                                                int64_t reserve) {
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
  if (!llvm::all_of(pf->load.getIndices(),
                    [&](Value v) { return readyAhead(v, loop, outer); }))
    return std::nullopt;
  auto t = pf->load.getResult().getType();
  pf->earlySend = fp8Operands && sendsEarly(pf->load);
  for (int64_t i = 0; i < (pf->earlySend ? 1 : kvTiles.stages); ++i) {
    Value v = allocSmem(t.getDimSize(0), t.getDimSize(1), t.getElementType());
    pf->viewType = cast<MemRefType>(v.getType());
    pf->offsets.push_back(lastSmemOffset);
  }
  pf->bufferBytes =
      pf->offsets.size() > 1 ? pf->offsets[1] - pf->offsets[0] : 0;
  // sm_90a: the buffers filled by tensor-map copies, one mbarrier each
  // (tile t on mbarrier t % stages, in its phase t / stages).
  if (tensorMapCopies(pf->load))
    pf->mbarOffset = tensorMapBarriers(pf->load, kvTiles.stages);
  Value smem =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), smemBase);
  // The first stages - 1 tiles, one commit group each (empty past the
  // loop's end, so that every iteration finds the same count in flight).
  for (int64_t i = 0; i + 1 < kvTiles.stages; ++i) {
    Value start = addc(lowerV, i * loop.getStep());
    Value any = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt,
                                      start, upperV);
    auto first = scf::IfOp::create(b, loc(), any, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(first.thenBlock()->getTerminator());
      IRMapping m = outer;
      Value row0 = rematAt(pf->load.getIndices()[0], loop, start, m);
      Value col0 = rematAt(pf->load.getIndices()[1], loop, start, m);
      Value table, tableOffset;
      if (pf->load.isPaged()) {
        table = scalars.lookup(pf->load.getTable());
        tableOffset = rematAt(pf->load.getTableOffset(), loop, start, m);
      }
      if (pf->mbarOffset >= 0)
        sendTensorMapTile(pf->load, row0, col0, addc(smem, pf->offsets[i]),
                          mbarAt(*this, *pf, idx(i)),
                          kvReadPolicy(pf->load, loop, lowerV, upperV),
                          tableOffset);
      else
        emitAsyncTileCopy(pf->load, row0, col0, bound, idx(pf->offsets[i]),
                          table, tableOffset);
    }
    if (pf->mbarOffset < 0)
      target.asyncCommitGroup(b, loc());
  }
  return pf;
}

/// Sends the tile of `p.load` that starts at induction value `next`, if
/// that is still in the loop, into the shared byte offset `buffer()`: by a
/// tensor-map copy completing on `mbar()` (shared memory at `smem`), or by
/// cp.async copies where `mbar` is null.
static void sendTileAt(Lowering &L, const Prefetch &p, Value next,
                       function_ref<Value()> buffer, function_ref<Value()> mbar,
                       Value smem) {
  OpBuilder &b = L.b;
  LoadOp op = p.load;
  Value bound = op.getBound() ? L.scalars.lookup(op.getBound()) : Value();
  Value hasNext = arith::CmpIOp::create(b, L.loc(), arith::CmpIPredicate::slt,
                                        next, p.upper);
  auto ifOp = scf::IfOp::create(b, L.loc(), hasNext, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  IRMapping m;
  Value row0 = L.rematAt(op.getIndices()[0], p.loop, next, m);
  Value col0 = L.rematAt(op.getIndices()[1], p.loop, next, m);
  if (mbar) {
    L.sendTensorMapTile(
        op, row0, col0, L.add(smem, buffer()), mbar(),
        L.kvReadPolicy(op, p.loop, p.lower, p.upper),
        op.isPaged() ? L.rematAt(op.getTableOffset(), p.loop, next, m)
                     : Value());
    return;
  }
  L.emitAsyncTileCopy(op, row0, col0, bound, buffer(),
                      op.isPaged() ? L.scalars.lookup(op.getTable()) : Value(),
                      op.isPaged() ? L.scalars.lookup(op.getTableOffset())
                                   : Value());
}

LogicalResult Lowering::lowerPrefetchedLoad(LoadOp op) {
  Prefetch &p = *kvTiles.prefetch;
  Value bound = op.getBound() ? scalars.lookup(op.getBound()) : Value();
  Value iter = arith::DivUIOp::create(
      b, loc(), arith::SubIOp::create(b, loc(), p.iv, p.lower), p.step);
  auto bufferAt = [&](Value i) -> Value {
    if (p.earlySend)
      return idx(p.offsets[0]);
    return addc(mul(arith::RemUIOp::create(b, loc(), i, idx(kvTiles.stages)),
                    p.bufferBytes),
                p.offsets[0]);
  };
  // Groups committed so far: stages - 1 before the loop and one per
  // iteration, tile t's being group t. Waiting until at most
  // stages - 2 are pending means this thread's copies of this tile have
  // landed; the barrier then says every thread's have, and that every
  // warp is done with the previous iteration, whose buffer the new copies
  // overwrite. (Tensor-map copies: the wait on tile t's mbarrier phase.)
  bool tma = p.mbarOffset >= 0;
  Value smem =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), smemBase);
  if (tma)
    awaitTensorMapTile(
        op, mbarAt(*this, p, iter),
        arith::IndexCastOp::create(
            b, loc(), b.getI32Type(),
            arith::AndIOp::create(
                b, loc(),
                arith::DivUIOp::create(b, loc(), iter, idx(kvTiles.stages)),
                idx(1))),
        scalars.lookup(op.getIndices()[0]), bound, add(smem, bufferAt(iter)));
  else
    target.asyncWaitGroups(b, loc(), kvTiles.stages - 2);
  barrier();
  auto ahead = [&] { return bufferAt(addc(iter, kvTiles.stages - 1)); };
  auto aheadMbar = [&] {
    return mbarAt(*this, p, addc(iter, kvTiles.stages - 1));
  };
  if (p.earlySend) { // sendEarlyTile, once the decode has read the buffer
    p.sendNext = true;
  } else {
    sendTileAt(*this, p, add(p.iv, mul(p.step, kvTiles.stages - 1)), ahead,
               tma ? function_ref<Value()>(aheadMbar) : nullptr, smem);
    if (!tma)
      target.asyncCommitGroup(b, loc());
  }
  auto tile = std::make_shared<Tile>();
  tile->kind = Kind::Smem;
  tile->type = op.getResult().getType();
  tile->view = smemViewAt(bufferAt(iter), p.viewType.getShape(),
                          p.viewType.getElementType());
  tiles[op] = tile;
  return success();
}

void Lowering::sendEarlyTile() {
  if (!kvTiles.prefetch || !kvTiles.prefetch->earlySend ||
      !kvTiles.prefetch->sendNext)
    return;
  Prefetch &p = *kvTiles.prefetch;
  p.sendNext = false;
  sendTileAt(
      *this, p, add(p.iv, p.step), [&] { return idx(p.offsets[0]); }, nullptr,
      Value());
  target.asyncCommitGroup(b, loc());
}

} // namespace mlir::mla::gpulower
