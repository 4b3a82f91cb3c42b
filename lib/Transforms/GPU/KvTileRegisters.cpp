//===- KvTileRegisters.cpp - KV bytes loaded a tile ahead -----------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h). On a chip
// whose matrix instruction reads shared memory (sm_90a's wgmma), a KV
// loop's fp8 tile, or its mxfp4 bytes and scales, are loaded into
// registers one iteration ahead, while the previous tile's dots run, and
// converted / decoded from the registers into the 16-bit swizzled tile
// both dots read (docs/Design.md, "sm_90a: wgmma", fp8 KV and mxfp4 KV).
// Neither the memory latency nor a copy of the bytes in shared memory sits
// between two tiles' dots. A paged fp8 tile reads each row's page entry
// (PagedRows.cpp) with the bytes, so a tile may span pages; with
// ChipTuning::pageEntriesAhead (opt-in: mla-lower-to-gpu's
// page-entries-ahead) a tile within one page takes its entry, loaded a tile
// earlier still, from the loop (pageEntryAt). A tile whose rows all lie
// below the load's bound loads its chunks without a test each.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

namespace {
/// A thread's 16-byte chunk of a tile loaded into registers: row rowBase +
/// rowConst, source bytes colBase + colConst ... + 15, where colBase lies
/// within an atom's source bytes and colConst is a whole number of them
/// (the chunk's values fall into atom colConst / atomBytes of the
/// swizzled 16-bit tile).
struct RegChunk {
  Value rowBase;
  int64_t rowConst;
  Value colBase;
  int64_t colConst;
};

/// The chunks each thread loads, in rounds, as RegisterTileMap places
/// them (lib/Schedule/MatrixInstr.h): a warp's round is one atom of 8
/// (fp8) or 16 (mxfp4) rows, so its global reads are whole sectors and the
/// 16-byte pieces they convert to cover every bank group 4 times (4
/// wavefronts for 512 bytes, conflict-free; a warp's chunks along one row
/// would all share row mod 8: 8-way conflicts, and fp8 on sm_90a is bound
/// by its shared-memory traffic). Rows and columns are per-thread bases
/// plus constants, so global and shared addresses are per-tile bases plus
/// immediates (few registers across the KV loop).
/// The thread's chunk of round 0 (RegisterTileMap::baseRow / baseByte).
RegChunk baseChunk(Lowering &L, const RegisterTileMap &map) {
  OpBuilder &b = L.b;
  Value rowBase = L.add(
      L.mul(L.warp, map.warpRowStride()),
      arith::DivUIOp::create(b, L.loc(), L.lane, L.idx(map.lanesPerRow())));
  Value colBase = L.mul(
      arith::RemUIOp::create(b, L.loc(), L.lane, L.idx(map.lanesPerRow())), 16);
  return {rowBase, 0, colBase, 0};
}

SmallVector<RegChunk> chunksOf(Lowering &L, const RegisterTileMap &map) {
  RegChunk c0 = baseChunk(L, map);
  SmallVector<RegChunk> out;
  for (int64_t r = 0; r < map.rounds(); ++r)
    out.push_back({c0.rowBase, map.roundRow(r), c0.colBase, map.roundByte(r)});
  return out;
}

/// Whether `map` is one the lowering takes: valid, one chunk a thread and
/// round, at most kMaxRegisterRounds rounds (4 registers each).
bool mapFits(const Lowering &L, const RegisterTileMap &map) {
  return map.valid() && L.wave == map.wave &&
         map.rounds() * 16 * L.threads == map.rows * map.rowBytes &&
         map.rounds() <= Lowering::kMaxRegisterRounds;
}

/// A rank-2 load of a rank-2 source straight in `loop` whose indices are
/// computable for another iteration; paged only where `paged` (the fp8
/// tile: its rows' page entries are read with the tile, a tile ahead).
bool aheadable(Lowering &L, LoadOp op, KvLoopOp loop, bool paged = false) {
  return op && (paged || !op.isPaged()) &&
         op->getParentOp() == loop.getOperation() &&
         op.getResult().getType().getRank() == 2 &&
         cast<MemRefType>(op.getSource().getType()).getRank() == 2 &&
         L.computableAhead(op, loop);
}
} // namespace

std::optional<GroupedOperands> Lowering::registerAGrouping(DotOp d) {
  auto lhsT = d.getLhs().getType(), rhsT = d.getRhs().getType();
  int64_t k = lhsT.getDimSize(1), rows = rhsT.getDimSize(0);
  if (!target.chip.tuning.wgmmaRegisterA || !target.mma->smemOperands ||
      !d.getTransposeRhs() || !isFp8(rhsT.getElementType()))
    return std::nullopt;
  const MatrixInstr *mi =
      target.instrFor(lhsT.getElementType(), rhsT.getElementType(), k);
  if (!mi || !mi->smemOperands || mi->aRegisters.laneBases.empty() ||
      sixteenBitOperand(b, mi) != lhsT.getElementType())
    return std::nullopt;
  // A KV loop's tile, one instruction tile (64 rows) per warpgroup, whose
  // chunks the warps can hold in the instruction's rows.
  auto ld = d.getRhs().getDefiningOp<LoadOp>();
  auto loop = ld ? dyn_cast<KvLoopOp>(ld->getParentOp()) : KvLoopOp();
  RegisterTileMap map{rows, k, 64, warps, wave, /*warpRows=*/true};
  if (!loop || d->getParentOp() != loop.getOperation() ||
      rows != 64 * (warps / mi->warpsPerInstr) || !mapFits(*this, map))
    return std::nullopt;
  // The K steps of one 64-byte atom (a thread's 16 bytes of it in each of
  // its two rows) grouped: element i of step j comes from byte
  // g.a().map(0, 8 j + i).col of the row g.a().map(...).row / 8 chunk.
  auto g = groupKSteps(*mi, 64 / mi->k);
  if (!g || g->k != 64 || k % 64)
    return std::nullopt;
  return g;
}

std::optional<RegPrefetch> Lowering::registerPrefetchOf(LoadOp op,
                                                        KvLoopOp loop) {
  if (!target.mma->smemOperands ||
      !(op.isPaged() ? static_cast<bool>(stagesInPlace(op))
                     : contiguousRows(op)) ||
      !aheadable(*this, op, loop, /*paged=*/true))
    return std::nullopt;
  auto t = op.getResult().getType();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  RegPrefetch rp;
  rp.load = op;
  rp.warps = warps;
  // fp8 KV read by dots (through slices) as 16-bit tiles.
  if (Type to = stagesInPlace(op)) {
    rp.to = to;
    rp.atomBytes = 64;
    for (Operation *user : op->getUsers())
      if (auto d = dyn_cast<DotOp>(user);
          d && d.getRhs() == op.getResult() && registerAGrouping(d))
        rp.kRegisters = true;
    if (!mapFits(*this, rp.map()))
      return std::nullopt;
    return rp;
  }
  // mxfp4: i8 data (2 values a byte) whose one reader is its dequant, and
  // the scales' tile (one per 16 data bytes), loaded the same way.
  if (!op->hasOneUse())
    return std::nullopt;
  auto dq = dyn_cast<DequantOp>(*op->getUsers().begin());
  // (Decoded into e4m3 against row exponents: from shared memory.)
  if (!dq || dq.getData() != op.getResult() || dq.getFormat() != "mxfp4" ||
      dq.getExponents())
    return std::nullopt;
  auto sc = dq.getScales().getDefiningOp<LoadOp>();
  auto out = dq.getResult().getType();
  if (!aheadable(*this, sc, loop) || !sc->hasOneUse() ||
      sc.getResult().getType().getDimSize(0) != rows ||
      sc.getResult().getType().getDimSize(1) * 16 != cols ||
      out.getDimSize(1) != 2 * cols ||
      !mapFits(*this, {rows, cols, 32, warps, wave}) ||
      !swizzled(rows, 2 * cols, out.getElementType()))
    return std::nullopt;
  rp.to = out.getElementType();
  rp.atomBytes = 32;
  rp.dequant = dq;
  rp.scales = sc;
  return rp;
}

namespace {
/// Whether `p`'s tiles take their page entry a tile ahead
/// (RegPrefetch::pageAhead): where the chip's tuning asks and each tile
/// lies within one page. A tile of two whole pages (fp8 MTP 2's 128 rows
/// on 64-row pages) reads its entries with its bytes: with both entries
/// ahead it ran 1.28x slower on the H100 (docs/PerformanceLog.md,
/// 2026-12-05, eighteenth session).
bool entryAhead(Lowering &L, const RegPrefetch &p) {
  return L.target.chip.tuning.pageEntriesAhead && L.tilesWithinOnePage(p.load);
}

/// The page entry of `p`'s tile at iteration `iv` (Lowering::pageEntry);
/// -1 without a table read where the tile starts at or past `upper` or the
/// load's bound (its entry may lie past the sequence's table row).
Value pageEntryAt(Lowering &L, const RegPrefetch &p, Value iv, Value upper) {
  OpBuilder &b = L.b;
  LoadOp op = p.load;
  IRMapping m;
  Value start = L.rematAt(op.getIndices()[0], p.loop, iv, m);
  Value offset = L.rematAt(op.getTableOffset(), p.loop, iv, m);
  Value there = arith::CmpIOp::create(b, L.loc(), arith::CmpIPredicate::slt,
                                      start, upper);
  if (op.getBound())
    there = arith::AndIOp::create(
        b, L.loc(), there,
        arith::CmpIOp::create(b, L.loc(), arith::CmpIPredicate::slt, start,
                              L.rematAt(op.getBound(), p.loop, iv, m)));
  Value table = L.scalars.lookup(op.getTable());
  auto ifOp = scf::IfOp::create(
      b, L.loc(), there,
      [&](OpBuilder &nb, Location l) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, l, L.pageEntry(op, start, table, offset));
      },
      [&](OpBuilder &nb, Location l) {
        scf::YieldOp::create(nb, l,
                             Value(arith::ConstantIndexOp::create(nb, l, -1)));
      });
  return ifOp.getResult(0);
}
} // namespace

SmallVector<Value> Lowering::loadTileToRegisters(const RegPrefetch &p, Value iv,
                                                 Value present, Value entry) {
  LoadOp op = p.load, sc = p.scales;
  auto t = op.getResult().getType();
  Value src = scalars.lookup(op.getSource());
  auto srcT = cast<MemRefType>(src.getType());
  int64_t srcCols = srcT.getDimSize(1);
  Type elt = t.getElementType();
  auto vecT = VectorType::get({16}, storageType(elt));
  SmallVector<RegChunk> chunks = chunksOf(*this, p.map());
  IRMapping m;
  Value row0 = rematAt(op.getIndices()[0], p.loop, iv, m);
  Value col0 = rematAt(op.getIndices()[1], p.loop, iv, m);
  Value bound = op.getBound() ? rematAt(op.getBound(), p.loop, iv, m) : Value();
  // A paged tile's rows: each chunk's row through its page's entry
  // (Lowering::pagedRow: an entry that names no page of the source, or a
  // row past the bound, is an absent row).
  Value table, tableOffset;
  if (op.isPaged() && !entry) {
    table = scalars.lookup(op.getTable());
    tableOffset = rematAt(op.getTableOffset(), p.loop, iv, m);
  }
  Value scales, srow0, scol0;
  if (sc) {
    scales = scalars.lookup(sc.getSource());
    srow0 = rematAt(sc.getIndices()[0], p.loop, iv, m);
    scol0 = rematAt(sc.getIndices()[1], p.loop, iv, m);
  }
  // The source as one run of elements: a chunk is the tile's origin plus a
  // per-thread offset plus a constant.
  Value numel = mul(memref::DimOp::create(b, loc(), src, 0), srcCols);
  Value flat = memref::ReinterpretCastOp::create(
      b, loc(),
      MemRefType::get({ShapedType::kDynamic}, srcT.getElementType(),
                      MemRefLayoutAttrInterface(), srcT.getMemorySpace()),
      src, OpFoldResult(b.getIndexAttr(0)), ArrayRef<OpFoldResult>{numel},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  Type i32 = b.getI32Type();
  // With a cache policy: the loads by generic address (bytes), the
  // source's first element at `flat`'s.
  int64_t eltBytes = vecT.getElementType().getIntOrFloatBitWidth() / 8;
  Value srcAddr =
      p.l2Policy
          ? arith::IndexCastOp::create(
                b, loc(), b.getI64Type(),
                memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), src))
                .getResult()
          : Value();
  // An absent row's chunk: zero data (a garbage byte could be a NaN that
  // P = 0 would not cancel) and scale 127 (2^0, a normal one).
  auto absent = [&](OpBuilder &nb, Location l) {
    return std::pair<Value, Value>{
        vector::BroadcastOp::create(nb, l, vecT, storedZero(nb, l, elt)),
        sc ? cstI32(nb, l, 127) : Value()};
  };
  // No tile (past the loop's end): no address is formed from its rows.
  auto ifOp = scf::IfOp::create(
      b, loc(), present,
      [&](OpBuilder &nb, Location l) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value origin = add(mul(row0, srcCols), col0);
        Value limit =
            bound ? arith::SubIOp::create(b, loc(), bound, row0).getResult()
                  : Value();
        // A one-page tile with its entry loaded ahead: the contiguous tile
        // at the page's row, its rows below the bound and in the cache.
        // Otherwise each row through its page's entry (pagedRow).
        std::optional<PagedRows> pages;
        if (entry) {
          auto [first, last] = onePageRange(op, src, row0, bound, entry);
          origin = add(mul(first, srcCols), col0);
          limit = arith::SubIOp::create(b, loc(), last, first);
        } else if (table) {
          pages = pagedRows(op, src, row0, bound, table, tableOffset);
        }
        // The chunks' values, absent rows read as zeros: a paged row always
        // tested (its entry), a contiguous or one-page row against the
        // limit where `guard`.
        auto chunkValues = [&](bool guard) {
          SmallVector<Value> data, scale;
          for (const RegChunk &c : chunks) {
            Value row = addc(c.rowBase, c.rowConst);
            // Whether the row is present, and a paged row's address.
            Value in, pagedAt;
            if (pages) {
              auto [srcRow, ok] = pagedRow(*pages, row);
              pagedAt = addc(add(add(mul(srcRow, srcCols), col0), c.colBase),
                             c.colConst);
              in = ok;
            } else if (limit && guard) {
              in = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt,
                                         row, limit);
            }
            // The loads through `rb` (into the guarded branch), the address
            // arithmetic through `b` (ahead of the guard).
            auto read = [&](OpBuilder &rb, Location rl) -> SmallVector<Value> {
              // The element offset: a run-time part and a constant.
              Value dyn = pagedAt ? pagedAt
                                  : add(add(origin, mul(c.rowBase, srcCols)),
                                        c.colBase);
              int64_t cst = pagedAt ? 0 : c.rowConst * srcCols + c.colConst;
              SmallVector<Value> got;
              if (p.l2Policy)
                got.push_back(target.globalLoadWithPolicy(
                    rb, rl, vecT,
                    arith::AddIOp::create(
                        b, loc(), srcAddr,
                        arith::IndexCastOp::create(b, loc(), b.getI64Type(),
                                                   mul(dyn, eltBytes))),
                    cst * eltBytes, p.l2Policy));
              else
                got.push_back(vector::LoadOp::create(
                    rb, rl, vecT, flat, ValueRange{addc(dyn, cst)},
                    /*nontemporal=*/false, llvm::MaybeAlign(16)));
              if (scales) {
                Value blk =
                    addc(arith::DivUIOp::create(b, loc(), c.colBase, idx(16)),
                         c.colConst / 16);
                got.push_back(arith::ExtUIOp::create(
                    rb, rl, i32,
                    memref::LoadOp::create(
                        rb, rl, scales,
                        ValueRange{add(srow0, row), add(scol0, blk)})));
              }
              return got;
            };
            SmallVector<Value> got;
            if (!in) {
              got = read(b, loc());
            } else {
              auto guarded = scf::IfOp::create(
                  b, loc(), in,
                  [&](OpBuilder &rb, Location rl) {
                    scf::YieldOp::create(rb, rl, read(rb, rl));
                  },
                  [&](OpBuilder &rb, Location rl) {
                    auto [zero, one] = absent(rb, rl);
                    SmallVector<Value> z = {zero};
                    if (one)
                      z.push_back(one);
                    scf::YieldOp::create(rb, rl, z);
                  });
              got.assign(guarded.getResults().begin(),
                         guarded.getResults().end());
            }
            data.push_back(got[0]);
            if (scales)
              scale.push_back(got[1]);
          }
          data.append(scale);
          return data;
        };
        // A contiguous or one-page tile whose rows all lie below the limit
        // (every tile of a sequence but its last): its chunks unguarded, as
        // in the mask-free kernel, behind one uniform branch, instead of a
        // test per chunk (a compare, a predicated load and its zeros). On
        // the H200 this took fp8 MTP 2 from 1.30x to 1.26x its one token;
        // the one-token masked / mask-free gap it was aimed at stayed, and
        // was the score mask's (lowerMask, ChipTuning::maskWholeTiles;
        // docs/PerformanceLog.md, 2026-12-05, twentieth session).
        if (!limit || pages) {
          scf::YieldOp::create(b, loc(), chunkValues(/*guard=*/true));
          return;
        }
        Value full = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::sle,
                                           idx(t.getDimSize(0)), limit);
        auto whole = scf::IfOp::create(
            b, loc(), full,
            [&](OpBuilder &wb, Location) {
              OpBuilder::InsertionGuard wg(b);
              b.setInsertionPoint(wb.getInsertionBlock(),
                                  wb.getInsertionPoint());
              scf::YieldOp::create(b, loc(), chunkValues(/*guard=*/false));
            },
            [&](OpBuilder &wb, Location) {
              OpBuilder::InsertionGuard wg(b);
              b.setInsertionPoint(wb.getInsertionBlock(),
                                  wb.getInsertionPoint());
              scf::YieldOp::create(b, loc(), chunkValues(/*guard=*/true));
            });
        scf::YieldOp::create(b, loc(), SmallVector<Value>(whole.getResults()));
      },
      [&](OpBuilder &nb, Location l) {
        auto [zero, one] = absent(nb, l);
        SmallVector<Value> z(chunks.size(), zero);
        if (one)
          z.append(chunks.size(), one);
        scf::YieldOp::create(nb, l, z);
      });
  return SmallVector<Value>(ifOp.getResults());
}

/// Chunk `chunk`'s (an index) 16-byte pieces into swizzled tile `dst`.
void Lowering::storeChunkPieces(const Tile &dst, const RegPrefetch &p,
                                Value chunk, ArrayRef<Value> pieces) {
  RegisterTileMap map = p.map();
  RegChunk c0 = baseChunk(*this, map);
  // Chunk j (round j: row block j / atoms, atom j mod atoms). The
  // swizzle's row term (row mod 8) is the base's (the constants are whole
  // 8-row blocks); the pieces' 16-byte positions in the atom's row follow
  // the chunk's source bytes.
  Value atom, row;
  if (auto j = getConstantIntValue(chunk)) {
    atom = idx(map.roundByte(*j) / p.atomBytes);
    row = addc(c0.rowBase, map.roundRow(*j));
  } else {
    atom = arith::RemUIOp::create(b, loc(), chunk, idx(map.atoms()));
    row = add(c0.rowBase,
              mul(arith::DivUIOp::create(b, loc(), chunk, idx(map.atoms())),
                  map.roundRowStride()));
  }
  Value rm = arith::RemUIOp::create(b, loc(), c0.rowBase, idx(8));
  Value first = mul(arith::DivUIOp::create(b, loc(), c0.colBase, idx(16)),
                    int64_t(pieces.size()));
  for (auto [k, piece] : llvm::enumerate(pieces))
    vector::StoreOp::create(
        b, loc(), piece, dst.view,
        ValueRange{atom, row,
                   mul(arith::XOrIOp::create(b, loc(), addc(first, k), rm), 8)},
        /*nontemporal=*/false, llvm::MaybeAlign(16));
}

void Lowering::storeChunkPaired(const Tile &dst, const RegPrefetch &p,
                                int64_t chunk, Value bytes) {
  RegisterTileMap map = p.map();
  RegChunk c0 = baseChunk(*this, map);
  // The chunk's 16 columns in pairs (c, c + 8): each stored word a byte
  // permute of two source words (PairedVMap).
  Type i32 = b.getI32Type();
  auto i32x4 = VectorType::get({4}, i32);
  Value w = vector::BitCastOp::create(b, loc(), i32x4, bytes);
  auto word = [&](int64_t i) {
    return vector::ExtractOp::create(b, loc(), w, ArrayRef<int64_t>{i})
        .getResult();
  };
  SmallVector<Value> out;
  for (int64_t k = 0; k < 4; ++k) {
    int64_t lo = PairedVMap::sourceLo(k);
    out.push_back(target.bytePermute(
        b, loc(), word(lo), word(lo + 2),
        cstI32(b, loc(), int64_t(PairedVMap::storeSelector(k)))));
  }
  Value paired = vector::BitCastOp::create(
      b, loc(), bytes.getType(),
      vector::FromElementsOp::create(b, loc(), i32x4, out));
  Value row = addc(c0.rowBase, map.roundRow(chunk));
  Value col = add(c0.colBase, idx(map.roundByte(chunk) / p.atomBytes * 64));
  vector::StoreOp::create(b, loc(), paired, dst.view,
                          smemAt(dst.view, row, col),
                          /*nontemporal=*/false, llvm::MaybeAlign(16));
}

/// Whether every reader of KV tile `op` other than S^T (the dot that takes
/// it transposed) is O^T = V^T P^T through a slice of whole atoms that
/// Lowering::dotRegisterV can take (ChipTuning::wgmmaRegisterV).
static bool registerVReaders(Lowering &L, LoadOp op) {
  OpBuilder &b = L.b;
  auto t = op.getResult().getType();
  int64_t rows = t.getDimSize(0);
  bool any = false;
  for (Operation *user : op->getUsers()) {
    if (auto d = dyn_cast<DotOp>(user);
        d && d.getRhs() == op.getResult() && d.getTransposeRhs())
      continue; // S^T (dotRegisterA)
    auto sl = dyn_cast<SliceOp>(user);
    if (!sl || sl.getOffsets()[0] != 0 || sl.getOffsets()[1] % 64 ||
        sl.getResult().getType().getDimSize(0) != rows ||
        sl.getResult().getType().getDimSize(1) % 64)
      return false;
    for (Operation *reader : sl->getUsers()) {
      auto d = dyn_cast<DotOp>(reader);
      if (!d || d.getRhs() != sl.getResult() || d.getTransposeRhs() ||
          d.getLhs() == sl.getResult())
        return false;
      Type pElt = d.getLhs().getType().getElementType();
      const MatrixInstr *mi = L.target.instrFor(pElt, t.getElementType(), rows);
      if (!mi || !mi->smemOperands || mi->aRegisters.laneBases.empty() ||
          bitWidth(mi->abType) != 16 || sixteenBitOperand(b, mi) != pElt ||
          rows % (2 * mi->k))
        return false;
      any = true;
    }
  }
  return any;
}

std::optional<RegPrefetch> Lowering::startRegisterPrefetch(KvLoopOp loop) {
  std::optional<RegPrefetch> rp;
  loop.getBody().walk([&](LoadOp l) {
    if (!rp)
      rp = registerPrefetchOf(l, loop);
  });
  if (!rp)
    return std::nullopt;
  IRMapping outer;
  Value lowerV = scalarNow(loop.getLower(), outer);
  Value upperV = scalarNow(loop.getUpper(), outer);
  SmallVector<Value> needed(rp->load.getIndices());
  if (rp->load.getBound())
    needed.push_back(rp->load.getBound());
  if (rp->load.isPaged())
    needed.push_back(rp->load.getTableOffset());
  if (rp->scales)
    llvm::append_range(needed, rp->scales.getIndices());
  if (!lowerV || !upperV || !llvm::all_of(needed, [&](Value v) {
        return readyAhead(v, loop, outer);
      }))
    return std::nullopt;
  rp->loop = loop;
  Value any = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, lowerV,
                                    upperV);
  // fp8 bytes only (and not paged: kvReadPolicy). With a policy mxfp4's
  // (dequantised) loads were level on the geomean and 0.5-1.4 % slower at
  // 256 x 8192 (H100, docs/PerformanceLog.md, 2026-12-06, twenty-fifth
  // session).
  if (!rp->dequant)
    rp->l2Policy = kvReadPolicy(rp->load, loop, lowerV, upperV);
  bool ahead = entryAhead(*this, *rp);
  Value first = ahead ? pageEntryAt(*this, *rp, lowerV, upperV) : Value();
  rp->cur = loadTileToRegisters(*rp, lowerV, any, first);
  if (ahead)
    rp->pageAhead =
        pageEntryAt(*this, *rp, addc(lowerV, loop.getStep()), upperV);
  return rp;
}

LogicalResult Lowering::lowerRegisterPrefetched(Operation *op) {
  RegPrefetch &p = *kvTiles.regPrefetch;
  // The loads themselves: their bytes are p.cur (the dequant decodes them).
  if (p.dequant && op != p.dequant.getOperation())
    return success();
  auto t = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  if (p.kRegisters && target.chip.tuning.wgmmaRegisterV &&
      registerVReaders(*this, p.load)) {
    // V's bytes for O^T's register A (dotRegisterV), stored by S^T's
    // conversion (dotRegisterA); no 16-bit copy of the tile.
    auto bytes = std::make_shared<Tile>();
    bytes->kind = Kind::Smem;
    bytes->type = t;
    bytes->view = allocSmem(rows, cols, t.getElementType(), /*swizzle=*/true);
    bytes->pairedColumns = true;
    barrierBeforeRewrite(); // the previous tile's O^T read the region
    p.pending = bytes;
    tiles[op->getResult(0)] = bytes;
    note(op, "loaded into registers a tile ahead, the A operand of the dot "
             "that reads it transposed (converted there); V's bytes stored "
             "in paired columns for the dot that reads them as register A");
    return success();
  }
  auto whole = std::make_shared<Tile>();
  whole->kind = Kind::Smem;
  whole->type = RankedTensorType::get({rows, cols}, p.to);
  whole->view = allocSmem(rows, cols, p.to);
  barrierBeforeRewrite(); // the previous tile's dots read the region
  if (p.kRegisters) {
    // wgmma's register A: the dot (dotRegisterA) converts, stores the
    // columns others read and loads the next tile.
    p.pending = whole;
  } else {
    if (p.dequant)
      decodeMxfp4Chunks(*whole, p);
    else
      for (auto [i, bytes] : llvm::enumerate(p.cur))
        storeChunkPieces(*whole, p, idx(i),
                         convertedPieces(bytes, t.getElementType(), p.to));
    loadNextTileToRegisters(p); // in flight during this tile's dots
    barrier();
    if (p.dequant) {
      tiles[op->getResult(0)] = whole;
      note(op, "decoded from registers loaded a tile ahead into a swizzled "
               "bf16 tile");
      return success();
    }
  }
  // The fp8 tile is its converted copy (convertedTile finds it): the dots
  // are its only readers (stagesInPlace).
  auto tile = std::make_shared<Tile>();
  tile->kind = Kind::Smem;
  tile->type = t;
  tile->view = whole->view;
  convertedTiles[{whole->view.getAsOpaquePointer(),
                  p.to.getAsOpaquePointer()}] = whole;
  tiles[op->getResult(0)] = tile;
  if (p.kRegisters)
    note(op, "loaded into registers a tile ahead, the A operand of the dot "
             "that reads it transposed (converted there)");
  else
    note(op, "loaded into registers a tile ahead, converted into a swizzled " +
                 Twine(p.to.isF16() ? "f16" : "bf16") + " tile");
  return success();
}

void Lowering::loadNextTileToRegisters(RegPrefetch &p) {
  Value next = addc(p.iv, p.loop.getStep());
  Value hasNext =
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, next, p.upper);
  p.next = loadTileToRegisters(p, next, hasNext, p.pageAhead);
  if (p.pageAhead)
    p.pageAheadNext =
        pageEntryAt(*this, p, addc(next, p.loop.getStep()), p.upper);
}

void Lowering::decodeMxfp4Chunks(const Tile &dst, const RegPrefetch &p) {
  size_t n = p.cur.size() / 2;
  ArrayRef<Value> data = ArrayRef(p.cur).take_front(n),
                  scale = ArrayRef(p.cur).drop_front(n);
  Type i32 = b.getI32Type(), i16 = b.getI16Type();
  auto v8 = VectorType::get({8}, i16);
  // A chunk: 32 values (one scale block) in 4 words of 8 -> 4 pieces of
  // 8 bf16 values; `word` decodes word w.
  auto chunk = [&](Value bytes, Value j,
                   function_ref<Value(Value word)> decodeWord) {
    Value words =
        vector::BitCastOp::create(b, loc(), VectorType::get({4}, i32), bytes);
    SmallVector<Value> pieces;
    for (int64_t w = 0; w < 4; ++w)
      pieces.push_back(decodeWord(
          vector::ExtractOp::create(b, loc(), words, ArrayRef<int64_t>{w})));
    storeChunkPieces(dst, p, j, pieces);
  };
  auto perCode = [&](Value word, function_ref<Value(Value code)> decode) {
    SmallVector<Value> out;
    for (int64_t v = 0; v < 8; ++v)
      out.push_back(decode(arith::AndIOp::create(
          b, loc(),
          arith::ShRUIOp::create(b, loc(), word, cstI32(b, loc(), 4 * v)),
          cstI32(b, loc(), 0xF))));
    return vector::FromElementsOp::create(b, loc(), v8, out).getResult();
  };
  // One branch a thread and tile (as lowerDequant's per batch): every
  // scale 2 .. 252 takes the chip's short decode in straight-line code;
  // else (which real caches never take) the exact decode, in a rolled loop
  // over the chunks (each picked by selects), which keeps the cold path's
  // registers few.
  Value allNormal;
  for (Value s : scale) {
    Value ok = mxfp4ScaleIsNormal(b, loc(), s);
    allNormal = allNormal
                    ? arith::AndIOp::create(b, loc(), allNormal, ok).getResult()
                    : ok;
  }
  auto ifOp = scf::IfOp::create(b, loc(), allNormal, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  for (size_t i = 0; i < n; ++i) {
    Value s = scale[i];
    if (target.chip.facts.mxfp4Decode != Mxfp4Decode::Software) {
      chunk(data[i], idx(i), [&](Value word) {
        return target.mxfp4WordToBf16(b, loc(), word, s);
      });
      continue;
    }
    Value base = mxfp4Base(b, loc(), s);
    chunk(data[i], idx(i), [&](Value word) {
      return perCode(word, [&](Value code) -> Value {
        return arith::TruncIOp::create(b, loc(), i16,
                                       mxfp4ToBf16Normal(b, loc(), code, base));
      });
    });
  }
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  auto loop = scf::ForOp::create(b, loc(), idx(0), idx(n), idx(1));
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  Value bytes = data[0], s = scale[0];
  for (size_t i = 1; i < n; ++i) {
    Value is =
        arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, j, idx(i));
    bytes = arith::SelectOp::create(b, loc(), is, data[i], bytes);
    s = arith::SelectOp::create(b, loc(), is, scale[i], s);
  }
  chunk(bytes, j, [&](Value word) {
    return perCode(word,
                   [&](Value code) { return mxfp4ToBf16(b, loc(), code, s); });
  });
}

} // namespace mlir::mla::gpulower
