//===- LowerLoad.cpp - tile loads
//------------------------------------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

SmallVector<Operation *> Lowering::foldableChain(LoadOp op, bool toFp8) {
  SmallVector<Operation *> chain;
  Value v = op.getResult();
  while (!v.use_empty()) {
    // One user, or two: an mla.quant_scale of `v` and the mla.scale of `v`
    // by its scale.
    SmallVector<Operation *, 2> users(v.getUsers());
    QuantScaleOp fit;
    if (users.size() == 2 && isa<QuantScaleOp>(users[1]))
      std::swap(users[0], users[1]);
    if (users.size() == 2)
      if ((fit = dyn_cast<QuantScaleOp>(users[0])))
        users.erase(users.begin());
    if (users.size() != 1 || !v.hasNUses(fit ? 2 : 1))
      break;
    Operation *user = users[0];
    // Two terms of the chain's value (qp_terms = 2) end it: both rows of
    // each element come from its loaded register.
    if (isa<SplitTermsOp>(user) && !fit) {
      chain.push_back(user);
      break;
    }
    auto sc = dyn_cast<ScaleOp>(user);
    if (fit && !(sc && sc.getFactor() == fit.getScale()))
      break;
    if (!isa<CastOp>(user) &&
        !(sc && (fit || scalars.contains(sc.getFactor()))))
      break;
    if (fit)
      chain.push_back(fit);
    chain.push_back(user);
    v = user->getResult(0);
  }
  Type st = storageType(op.getType().getElementType());
  while (!chain.empty() &&
         (isa<QuantScaleOp>(chain.back()) ||
          (toFp8 ? !isFp8(resultElt(chain.back()))
                 : storageType(resultElt(chain.back())) != st)))
    chain.pop_back();
  return chain;
}

LogicalResult Lowering::lowerLoad(LoadOp op) {
  if (kvTiles.prefetch && kvTiles.prefetch->load == op) {
    note(op,
         (kvTiles.prefetch->mbarOffset >= 0 ? "tensor-map copies on mbarriers, "
                                            : "asynchronous copies, ") +
             Twine(kvTiles.stages) + " buffers over the KV loop");
    return lowerPrefetchedLoad(op);
  }
  if (kvTiles.regPrefetch &&
      (kvTiles.regPrefetch->load == op || kvTiles.regPrefetch->scales == op))
    return lowerRegisterPrefetched(op);
  auto t = op.getResult().getType();
  if (t.getRank() != 2)
    return fail("the GPU lowering loads rank-2 tiles only");
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  Type elt = t.getElementType();
  // The copy's shape (16-byte chunks where rows are whole chunks, else
  // elements) and whether it is straight-line code (below). With whole
  // rounds of chunks (even), every thread copies chunks / threads of them.
  Type st = storageType(elt);
  int64_t eltBytes = storedBytes(st);
  int64_t vec = (cols * eltBytes) % 16 == 0 ? 16 / eltBytes : 1;
  int64_t chunks = rows * cols / vec;
  int64_t rounds = llvm::divideCeil(chunks, threads);
  bool even = chunks % threads == 0;
  bool straight = (!kvLoop.body ||
                   (even && target.chip.tuning.unrollTileLoops) || vec == 1) &&
                  rounds <= kMaxStraightRounds;
  // A tile loaded ahead of a KV loop (Q): the loop's first KV tile is
  // sent early, so that its memory latency overlaps this copy and what
  // follows it instead of starting after them: before the copy, or, where
  // the chip's tuning says so (ChipTuning::aheadLoadsFirst), between the
  // straight-line copy's loads and its stores.
  // (The copy's own tile is placed first where it loads first: then it
  // is in the prefetch's count of shared memory already, not a reserve.)
  auto startKvLoop = [&](int64_t reserve) {
    if (kvLoop.body ||
        !(target.chip.facts.asyncTileCopy || target.chip.facts.ldsDmaLoads16))
      return;
    for (Operation *n = op->getNextNode(); n; n = n->getNextNode())
      if (auto loop = dyn_cast<KvLoopOp>(n)) {
        if (!kvTiles.started.count(loop) && !kvTiles.regStarted.count(loop))
          if (auto rp = startRegisterPrefetch(loop))
            kvTiles.regStarted[loop] = *rp;
        if (!kvTiles.started.count(loop) && !kvTiles.regStarted.count(loop))
          if (auto pf = startPrefetch(loop, reserve))
            kvTiles.started[loop] = *pf;
        if (!kvTiles.started.count(loop) && !kvTiles.regStarted.count(loop))
          startEarlySend(loop); // a single buffer of e4m3 tiles
        break;
      }
  };
  bool aheadFirst =
      !kvLoop.body && straight && target.chip.tuning.aheadLoadsFirst;
  if (!aheadFirst)
    startKvLoop(smemTileBytes(rows, cols, elt));
  auto tile = std::make_shared<Tile>();
  tile->kind = Kind::Smem;
  tile->type = t;
  bool sent = earlySends.count(op); // its first tile at the Q load
  // A 16-bit tile ahead of the KV loop whose casts end in fp8 (bf16 Q for
  // the e4m3 form): rounded in pairs in registers on its way from global
  // memory (the straight-line copy below) and stored as fp8 only, with no
  // 16-bit copy in shared memory and no second pass over one (materialize).
  SmallVector<Operation *> toFp8;
  if (!kvLoop.body && !op.isPaged() && storedBytes(storageType(elt)) == 2 &&
      cols % 8 == 0 && rows * cols / 8 <= kMaxStraightRounds * threads &&
      !kOrderFor(op))
    toFp8 = foldableChain(op, /*toFp8=*/true);
  if (sent) {
    tile->view = std::get<0>(earlySends[op]);
  } else if (!toFp8.empty()) {
    // (Two terms stacked by rows: twice the rows.)
    tile->view = allocSmem(
        cast<RankedTensorType>(toFp8.back()->getResult(0).getType())
            .getDimSize(0),
        cols, resultElt(toFp8.back()));
  } else if (Type to = stagesInPlace(op)) {
    // fp8 staged in the upper half of its converted tile's region, atoms
    // of 64 columns (stagesInPlace).
    tile->convertInto = allocSmem(rows, cols, to);
    lastSmemOffset += rows * cols;
    tile->view = swizzledViewAt(idx(lastSmemOffset), rows, cols, elt);
  } else {
    tile->view = allocSmem(rows, cols, elt);
  }
  Value src = scalars.lookup(op.getSource());
  SmallVector<Value> base;
  for (Value i : op.getIndices())
    base.push_back(scalars.lookup(i));
  size_t rowDim = base.size() - 2;
  Value bound = op.getBound() ? scalars.lookup(op.getBound()) : Value();
  bool paged = op.isPaged();
  if (paged && tilesWithinOnePage(op))
    note(op, "one page per tile");
  // A KV tile on a chip with asynchronous copies that does not prefetch it
  // (sm_90, bf16 KV: a second buffer would halve the programs per SM): one
  // group of 16-byte copies straight to shared memory (rows from a bound
  // on filled with zeros, source size 0), waited for at once. The
  // synchronous copy below goes through registers and, masked, branches
  // around every chunk's load: the H200 measured the masked stage 1 at
  // 1.7-1.8x the mask-free one that way (bf16 KV, 64 and 256 x 8192), and
  // at 0.81-0.86x of it with these copies.
  {
    int64_t rowBytes = cols * storedBytes(elt);
    // CDNA4's LDS DMA loads the same way (ldsDmaCopies), where the tile
    // is not double-buffered (two do not fit in LDS beside the rest).
    bool dma = kvLoop.body && ldsDmaCopies(op);
    if (dma || (kvLoop.body && target.chip.facts.asyncTileCopy &&
                !target.chip.facts.boundsCheckedLoads && contiguousRows(op) &&
                rowBytes % 16 == 0 && (rows * rowBytes / 16) % threads == 0 &&
                !kOrderFor(op) && foldableChain(op).empty())) {
      bool early = earlySendable(op);
      if (!early)
        barrier(); // the region may still be read from the previous iteration
      if (tensorMapCopies(op)) {
        // Iteration i of the loop waits for phase i of its mbarrier.
        Value tileAt, mbar;
        if (sent) {
          std::tie(std::ignore, tileAt, mbar) = earlySends[op];
        } else {
          Value smem = memref::ExtractAlignedPointerAsIndexOp::create(
              b, loc(), smemBase);
          tileAt = addc(smem, lastSmemOffset);
          mbar = arith::IndexCastOp::create(
              b, loc(), b.getI64Type(), addc(smem, tensorMapBarriers(op, 1)));
        }
        Value iv = scalars.lookup(
            cast<KvLoopOp>(op->getParentOp()).getBody().getArgument(0));
        Value iter = arith::DivUIOp::create(
            b, loc(), arith::SubIOp::create(b, loc(), iv, kvLoop.lower),
            kvLoop.step);
        Value parity = arith::IndexCastOp::create(
            b, loc(), b.getI32Type(),
            arith::AndIOp::create(b, loc(), iter, idx(1)));
        if (!sent) {
          auto loop = cast<KvLoopOp>(op->getParentOp());
          Value policy = kvReadPolicy(op, loop, kvLoop.lower,
                                      scalars.lookup(loop.getUpper()));
          // Early: the first tile here (unless sent at the Q load), every
          // later one right after the previous tile's last reader
          // (sendNextTileEarly).
          OpBuilder::InsertionGuard g(b);
          if (early)
            b.setInsertionPoint(
                scf::IfOp::create(b, loc(),
                                  arith::CmpIOp::create(
                                      b, loc(), arith::CmpIPredicate::eq,
                                      iter, idx(0)),
                                  /*withElseRegion=*/false)
                    .thenBlock()
                    ->getTerminator());
          sendTensorMapTile(op, base[0], base[1], tileAt, mbar, policy,
                            op.isPaged()
                                ? scalars.lookup(op.getTableOffset())
                                : Value());
        }
        awaitTensorMapTile(op, mbar, parity, base[0], bound, tileAt);
        barrier();
        if (early && !sent)
          earlySends[op] = {tile->view, tileAt, mbar};
        note(op, early
                     ? "tensor-map copies on an mbarrier, the next tile sent "
                       "after this one's last reader"
                     : "tensor-map copies on an mbarrier, waited for at once");
        tiles[op] = tile;
        return success();
      }
      emitAsyncTileCopy(op, base[0], base[1], bound, idx(lastSmemOffset),
                        paged ? scalars.lookup(op.getTable()) : Value(),
                        paged ? scalars.lookup(op.getTableOffset()) : Value(),
                        /*wholeTiles=*/true);
      target.asyncCommitGroup(b, loc());
      target.asyncWaitGroups(b, loc(), 0);
      barrier();
      note(op, dma ? "LDS DMA loads, waited for at once"
                   : "zero-filling asynchronous copies, waited for at once");
      tiles[op] = tile;
      return success();
    }
  }
  // A paged tile within one page is the contiguous tile at the page's row
  // (the asynchronous copies above do the same in emitAsyncTileCopy).
  if (paged && tilesWithinOnePage(op)) {
    std::tie(base[rowDim], bound) =
        onePageRange(op, src, base[rowDim], bound,
                     pageEntry(op, base[rowDim], scalars.lookup(op.getTable()),
                               scalars.lookup(op.getTableOffset())));
    paged = false;
  }
  // Where the chip checks a buffer's size (ChipInfo::boundsCheckedLoads)
  // a row-major rank-2 source (the KV tile) is read through a buffer that
  // starts at the tile's first row and ends at the bound's row (or the
  // tile's last): rows from the bound on read as zeros by themselves, so
  // no chunk needs a compare or a branch (a 16-byte chunk never straddles
  // two rows: it is wholly in or wholly out), and a chunk's address is a
  // 32-bit offset from the per-tile base, not a 64-bit add. Sized per
  // tile, the buffer stays far below the resource's 32-bit size and
  // offsets whatever the size of the KV cache. It stays inside the cache
  // because the rows it covers do: stage 1 clamps its KV range to the
  // cache's rows before any tile is addressed (MLAExpandDecode's
  // guardedKvRange), so a bound, or a mask-free tile of an exact range,
  // never passes them.
  Value rsrc;
  auto srcMemT = cast<MemRefType>(src.getType());
  int64_t srcRowBytes = srcMemT.getRank() == 2 && !srcMemT.isDynamicDim(1)
                            ? srcMemT.getDimSize(1) * storedBytes(elt)
                            : 0;
  // A paged tile's rows are not one range: plain loads, each row guarded
  // by its page entry (pagedRow).
  if (target.chip.facts.boundsCheckedLoads && srcRowBytes && !paged &&
      srcMemT.getLayout().isIdentity() && (cols * storedBytes(elt)) % 16 == 0) {
    Type i64 = b.getI64Type();
    auto toI64 = [&](Value x) {
      return arith::IndexCastOp::create(b, loc(), i64, x).getResult();
    };
    Value first =
        add(mul(base[0], srcRowBytes), mul(base[1], storedBytes(elt)));
    Value addr = arith::AddIOp::create(
        b, loc(),
        toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), src)),
        toI64(first));
    Value limit = idx(rows);
    if (bound)
      limit = arith::MinSIOp::create(
          b, loc(),
          arith::MaxSIOp::create(
              b, loc(), arith::SubIOp::create(b, loc(), bound, base[0]),
              idx(0)),
          limit);
    rsrc = target.boundedBuffer(b, loc(), addr, toI64(mul(limit, srcRowBytes)));
    note(op, "bounds-checked buffer loads");
    bound = Value();
  }

  // The region may still be read from the previous iteration (with
  // aheadFirst: at the stores, once the loads are out).
  if (!aheadFirst)
    barrier();
  // Copy in 16-byte chunks when rows are whole chunks (every KV and Q row
  // here), else element by element. A chunk never straddles two rows, so
  // the row mask applies per chunk.
  auto vecT = VectorType::get({vec}, st);
  auto align = vec > 1 ? llvm::MaybeAlign(16) : llvm::MaybeAlign();
  // Stored in a grouped dot's K order (kOrderFor): pieces of `piece`
  // consecutive columns (the low K bits the order keeps) each go to their
  // place.
  std::optional<GroupedOperands> order = kOrderFor(op);
  int64_t piece = vec;
  if (order) {
    piece = 1;
    while (piece < vec && order->logicalBitTo[llvm::Log2_64(piece)] == piece)
      piece *= 2;
    tile->kPerm = std::make_shared<const GroupedOperands>(*order);
  }
  // A row-major source is read through its flat view: the tile's origin
  // (the same for all threads) plus the chunk's offset in the tile, which
  // does not change from one KV tile to the next. LLVM hoists the latter
  // out of the KV loop, so a chunk's address is one add instead of a
  // 64-bit multiply-add of its row index (CDNA: 5 -> 1 instructions per
  // 16-byte load).
  auto srcT = cast<MemRefType>(src.getType());
  Value flat, origin, rowStride;
  if (srcT.getLayout().isIdentity() && !bound && !rsrc && !paged) {
    SmallVector<Value> strides(srcT.getRank());
    strides.back() = idx(1);
    for (int64_t d = srcT.getRank() - 2; d >= 0; --d) {
      int64_t n = srcT.getDimSize(d + 1);
      Value dim = ShapedType::isDynamic(n)
                      ? memref::DimOp::create(b, loc(), src, d + 1).getResult()
                      : idx(n);
      strides[d] = arith::MulIOp::create(b, loc(), strides[d + 1], dim);
    }
    origin = idx(0);
    for (auto [i, st] : llvm::zip(base, strides))
      origin = add(origin, arith::MulIOp::create(b, loc(), i, st));
    rowStride = strides[rowDim];
    Value dim0 = ShapedType::isDynamic(srcT.getDimSize(0))
                     ? memref::DimOp::create(b, loc(), src, 0).getResult()
                     : idx(srcT.getDimSize(0));
    Value numel = arith::MulIOp::create(b, loc(), strides[0], dim0);
    flat = memref::ReinterpretCastOp::create(
        b, loc(),
        MemRefType::get({ShapedType::kDynamic}, srcT.getElementType(),
                        MemRefLayoutAttrInterface(), srcT.getMemorySpace()),
        src, /*offset=*/OpFoldResult(b.getIndexAttr(0)),
        ArrayRef<OpFoldResult>{numel},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  }
  // One chunk's 16 bytes from global memory (zeros where `guard` or the
  // row bound says the chunk is not there), and its store to the tile.
  std::optional<PagedRows> pagedMap;
  if (paged)
    pagedMap =
        pagedRows(op, src, base[rowDim], bound, scalars.lookup(op.getTable()),
                  scalars.lookup(op.getTableOffset()));
  auto loadChunk = [&](Value r, Value c, Value guard) -> Value {
    SmallVector<Value> at = base;
    at[rowDim] = add(base[rowDim], r);
    at[rowDim + 1] = add(base[rowDim + 1], c);
    Value pageOk;
    if (pagedMap)
      std::tie(at[rowDim], pageOk) = pagedRow(*pagedMap, r);
    auto read = [&](OpBuilder &nb, Location l) -> Value {
      if (rsrc) {
        Value off = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, r, idx(srcRowBytes)),
            arith::MulIOp::create(nb, l, c, idx(eltBytes)));
        return target.boundedLoad16(
            nb, l, rsrc,
            arith::IndexCastOp::create(nb, l, nb.getI32Type(), off), vecT);
      }
      if (flat) {
        Value inTile = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, r, rowStride), c);
        return vector::LoadOp::create(
            nb, l, vecT, flat,
            ValueRange{arith::AddIOp::create(nb, l, origin, inTile)},
            /*nontemporal=*/false, align);
      }
      return vector::LoadOp::create(nb, l, vecT, src, at, /*nontemporal=*/false,
                                    align);
    };
    if (bound && !pagedMap) {
      Value in = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt,
                                       at[rowDim], bound);
      guard =
          guard ? arith::AndIOp::create(b, loc(), guard, in).getResult() : in;
    }
    if (pageOk)
      guard = guard ? arith::AndIOp::create(b, loc(), guard, pageOk).getResult()
                    : pageOk;
    if (!guard)
      return read(b, loc());
    return scf::IfOp::create(
               b, loc(), guard,
               [&](OpBuilder &nb, Location l) {
                 scf::YieldOp::create(nb, l, read(nb, l));
               },
               [&](OpBuilder &nb, Location l) {
                 Value z = vector::BroadcastOp::create(nb, l, vecT,
                                                       storedZero(nb, l, elt));
                 scf::YieldOp::create(nb, l, z);
               })
        .getResult(0);
  };
  auto storeChunk = [&](Value v, Value r, Value c) {
    if (order) {
      for (int64_t j = 0; j < vec; j += piece) {
        Value part = v;
        if (piece < vec)
          part = vector::ShuffleOp::create(
              b, loc(), v, v,
              llvm::to_vector(llvm::seq<int64_t>(j, j + piece)));
        vector::StoreOp::create(
            b, loc(), part, tile->view,
            smemAt(tile->view, r, storedColumn(*order, addc(c, j))),
            /*nontemporal=*/false, llvm::MaybeAlign(piece * eltBytes));
      }
    } else {
      vector::StoreOp::create(b, loc(), v, tile->view, smemAt(tile->view, r, c),
                              /*nontemporal=*/false, align);
    }
  };
  // Outside the KV loop (Q), and inside it on chips that unroll tile
  // loops (CDNA's KV tile), the copy is straight-line in two phases:
  // every round's load, then every round's store. A rolled loop, or one
  // unrolled with each store right behind its load, waits one memory
  // round trip per round; this waits one in all (the backend does not
  // move buffer loads above LDS stores by itself). A chain of casts that
  // only re-rounds the tile into the same storage width (bf16 Q to f16)
  // is applied to the loaded registers in between, instead of a second
  // pass over shared memory after the copy.
  // A small tile of rows that are not whole chunks (mxfp4's 18 scale bytes
  // a row, at the array's own stride) is copied element by element; in a
  // KV loop a rolled copy would wait one memory round trip per element
  // round (9 per tile on sm_90, measured 5.7x fp8's time at 256 x 8192;
  // gfx950's 4.5 rounds a 64-row tile, rolled, waited 5), so it is
  // straight-line there too, the last round guarded where the threads do
  // not divide the elements.
  if (straight) {
    SmallVector<Operation *> chain = toFp8.empty() ? foldableChain(op) : toFp8;
    // Through f32 and back to the loaded type is exact: nothing to do.
    bool identity =
        !chain.empty() && resultElt(chain.back()) == elt &&
        llvm::all_of(ArrayRef(chain).drop_back(), [&](Operation *o) {
          return isa<CastOp>(o) && resultElt(o).isF32();
        });
    // Per round: the loaded chunk, its row and column, and (last round
    // only, where not every thread has a chunk) whether this thread has one.
    SmallVector<std::array<Value, 4>> got;
    for (int64_t i = 0; i < rounds; ++i) {
      Value chunk = addc(tid, i * threads);
      auto [r, c] = chunkCoord(chunk, vec, cols);
      Value guard;
      if ((i + 1) * threads > chunks)
        guard = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult,
                                      chunk, idx(chunks));
      got.push_back({loadChunk(r, c, guard), r, c, guard});
    }
    if (aheadFirst) {
      startKvLoop(/*reserve=*/0);
      barrier();
    }
    // Chain ops [from, to) on an f32 element, as lowerCast and lowerScale
    // evaluate them: f32 values rounded to each cast's type (the last
    // cast's rounding is its stored form).
    auto apply = [&](Value f, size_t from, size_t to) {
      for (size_t k = from; k < to; ++k) {
        Operation *o = chain[k];
        if (auto sc = dyn_cast<ScaleOp>(o))
          f = arith::MulFOp::create(b, loc(), f,
                                    scalars.lookup(sc.getFactor()));
        else if (isa<CastOp>(o) && k + 1 < chain.size())
          f = toF32(b, loc(), fromF32(b, loc(), f, resultElt(o)),
                    resultElt(o));
      }
      return f;
    };
    // The elements as the chain's mla.quant_scale sees them (none: as
    // loaded), their largest magnitude over the program, and its scale
    // (the tile's threads with no chunk in the last round hold zeros).
    size_t fitAt = 0;
    SmallVector<SmallVector<Value>> before(got.size());
    for (auto [k, o] : llvm::enumerate(chain))
      if (auto fit = dyn_cast<QuantScaleOp>(o)) {
        fitAt = k + 1;
        SmallVector<Value> mags;
        for (auto [g, vals] : llvm::zip(got, before))
          for (int64_t e = 0; e < vec; ++e) {
            vals.push_back(apply(
                toF32(b, loc(), vector::ExtractOp::create(b, loc(), g[0], e),
                      elt),
                0, k));
            mags.push_back(magnitude(b, loc(), vals.back()));
          }
        // A tree of pairs, not a chain: 7 dependent steps for 72 values.
        while (mags.size() > 1) {
          SmallVector<Value> next;
          for (size_t i = 0; i + 1 < mags.size(); i += 2)
            next.push_back(maxNum(mags[i], mags[i + 1]));
          if (mags.size() % 2)
            next.push_back(mags.back());
          mags = std::move(next);
        }
        auto [scale, inverse] =
            emitQuantScale(b, loc(), programMax(mags[0]), fit.getTopExponent());
        scalars.map(fit.getScale(), scale);
        scalars.map(fit.getInverse(), inverse);
        note(op, "its largest magnitude reduced over the program on the way");
      }
    for (size_t gi = 0; gi < got.size(); ++gi) {
      const auto &g = got[gi];
      Value v = g[0], lo;
      if (!chain.empty() && !identity) {
        SmallVector<Value> fs, elems;
        for (int64_t e = 0; e < vec; ++e)
          fs.push_back(fitAt ? apply(before[gi][e], fitAt, chain.size())
                             : apply(toF32(b, loc(),
                                           vector::ExtractOp::create(
                                               b, loc(), v, e),
                                           elt),
                                     0, chain.size()));
        // (fp8 in pairs through the chip's pair rounding where it has one)
        // Two terms (mla.split_terms): lo = round(x - hi) in row rows + r.
        Type to = resultElt(chain.back());
        SmallVector<Value> loElems;
        if (isa<SplitTermsOp>(chain.back()))
          std::tie(elems, loElems) = target.roundedToTerms(b, loc(), fs, to);
        else
          elems = target.roundedToStored(b, loc(), fs, to);
        auto pack = [&](ArrayRef<Value> xs) -> Value {
          return vector::FromElementsOp::create(
              b, loc(), VectorType::get({vec}, xs[0].getType()), xs);
        };
        v = pack(elems);
        if (!loElems.empty())
          lo = pack(loElems);
      }
      auto store = [&] {
        if (toFp8.empty())
          return storeChunk(v, g[1], g[2]);
        vector::StoreOp::create(b, loc(), v, tile->view,
                                smemAt(tile->view, g[1], g[2]),
                                /*nontemporal=*/false, llvm::MaybeAlign(vec));
        if (lo)
          vector::StoreOp::create(b, loc(), lo, tile->view,
                                  smemAt(tile->view, addc(g[1], rows), g[2]),
                                  /*nontemporal=*/false, llvm::MaybeAlign(vec));
      };
      if (Value guard = g[3]) {
        auto ifOp =
            scf::IfOp::create(b, loc(), guard, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard ig(b);
        b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
        store();
      } else {
        store();
      }
    }
    barrier();
    // The fp8 tile is only the last cast's: the 16-bit values it was
    // rounded from are nowhere (each op of the chain has one use, the next).
    if (!toFp8.empty()) {
      tile->type = cast<RankedTensorType>(chain.back()->getResult(0).getType());
      tiles[chain.back()->getResult(0)] = tile;
      folded.insert(chain.begin(), chain.end());
      note(op, "rounded to fp8 in registers on its way to shared memory");
      return success();
    }
    tiles[op] = tile;
    for (Operation *o : chain) {
      folded.insert(o);
      if (isa<QuantScaleOp>(o))
        continue;
      auto t2 = std::make_shared<Tile>(*tile);
      t2->type = cast<RankedTensorType>(o->getResult(0).getType());
      tiles[o->getResult(0)] = t2;
    }
    return success();
  }
  auto loop =
      even ? scf::ForOp::create(b, loc(), idx(0), idx(chunks / threads), idx(1))
           : scf::ForOp::create(b, loc(), tid, idx(chunks), idx(threads));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value chunk = even ? add(tid, mul(loop.getInductionVar(), threads))
                       : loop.getInductionVar();
    auto [r, c] = chunkCoord(chunk, vec, cols);
    storeChunk(loadChunk(r, c, Value()), r, c);
  }
  // Straight-line code: the loads of one tile issue back to back, and the
  // KV loop body has a static instruction count (mla-compile reports it).
  if (even && target.chip.tuning.unrollTileLoops)
    (void)loopUnrollFull(loop);
  barrier();
  tiles[op] = tile;
  return success();
}

} // namespace mlir::mla::gpulower
