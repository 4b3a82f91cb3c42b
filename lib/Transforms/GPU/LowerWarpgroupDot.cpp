//===- LowerWarpgroupDot.cpp - mla.dot on sm_90a's wgmma --------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h). The dots of a
// chip whose matrix instruction reads both operands from shared memory
// (MatrixInstr::smemOperands: wgmma), transposed, and the fp8 tiles they
// read converted or transposed (Fp8Tiles.cpp; docs/Design.md, "sm_90a:
// wgmma").
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

/// The shared address (i64) of a tile's first byte: its view's place in
/// dynamic shared memory.
static Value sharedAddress(OpBuilder &b, Location loc, const Tile &t) {
  auto view = t.view.getDefiningOp<memref::ViewOp>();
  assert(view && "tiles are views of dynamic shared memory");
  Type i64 = b.getI64Type();
  return arith::AddIOp::create(
      b, loc,
      arith::IndexCastOp::create(b, loc, i64,
                                 memref::ExtractAlignedPointerAsIndexOp::create(
                                     b, loc, view.getSource())),
      arith::IndexCastOp::create(b, loc, i64, view.getByteShift()));
}

/// Instruction tile j of the accumulator copy that starts at `chain` in
/// `cur` through one wgmma (`mma`): its registers gathered (element i of M
/// block mb at mb * elems + i), the results written back.
static void mmaOnTile(SmallVectorImpl<Value> &cur, const AccLayout &l,
                      int64_t chain, int64_t j,
                      function_ref<SmallVector<Value>(ArrayRef<Value>)> mma) {
  SmallVector<Value> d;
  for (int64_t mb = 0; mb < l.mBlocks; ++mb)
    for (int64_t i = 0; i < l.elems; ++i)
      d.push_back(cur[chain + l.reg(mb, j, i)]);
  d = mma(d);
  for (int64_t mb = 0; mb < l.mBlocks; ++mb)
    for (int64_t i = 0; i < l.elems; ++i)
      cur[chain + l.reg(mb, j, i)] = d[mb * l.elems + i];
}

LogicalResult Lowering::dotOnWarpgroups(DotOp op, const AccLayout &l) {
  Type lhsElt = op.getLhs().getType().getElementType();
  Type rhsElt = op.getRhs().getType().getElementType();
  int64_t k = op.getLhs().getType().getDimSize(1);
  bool trans = op.getTransposeRhs();
  const MatrixInstr *mi = target.instrFor(lhsElt, rhsElt, k);
  // The fp8 form reads both operands K-major: for O^T = V^T P^T, V (a
  // swizzled fp8 tile) is transposed first (transposedTile), or where it
  // cannot be, the dot runs on the f16 form, both operands converted
  // (exactly).
  bool fp8 = bitWidth(mi->abType) == 8;
  // A from registers instead of shared memory: S^T's K converted from the
  // registers it was loaded into (registerAGrouping; dotRegisterA), or
  // O^T's V read from its fp8 bytes (PairedVMap; dotRegisterV).
  bool regA = trans && kvTiles.regPrefetch && kvTiles.regPrefetch->pending &&
              op.getRhs().getDefiningOp<LoadOp>() == kvTiles.regPrefetch->load;
  std::shared_ptr<Tile> vt, vBytes;
  if (!trans)
    if (std::shared_ptr<Tile> v = get(op.getRhs()); v && v->pairedColumns)
      vBytes = v;
  if (fp8 && !trans && !vBytes) {
    std::shared_ptr<Tile> v = get(op.getRhs());
    if (v && v->kind == Kind::Smem)
      vt = transposedTile(*v);
    if (!vt) {
      mi = target.instrFor(b.getF16Type(), b.getF16Type(), k);
      fp8 = false;
    }
  }
  bool aK = trans || vt; // A K-major
  if (!mi->smemOperands)
    return fail("the warpgroup lowering takes only matrix instructions that "
                "read shared memory (internal error)");
  Type want = fp8 ? lhsElt : sixteenBitOperand(b, mi);
  int64_t eb = fp8 ? 1 : 2; // bytes an element: atoms of 64 x eb bytes
  auto cstI64 = [](OpBuilder &nb, Location l, int64_t v) -> Value {
    return arith::ConstantIntOp::create(nb, l, v, 64);
  };
  auto typeName = [](Type t) {
    std::string str;
    llvm::raw_string_ostream os(str);
    t.print(os);
    return str;
  };
  // Both operands as swizzled tiles in shared memory, of the
  // instruction's own type (wgmma converts nothing).
  auto operand = [&](Value v, StringRef which) -> FailureOr<Tile> {
    FailureOr<std::shared_ptr<Tile>> t = get(v);
    std::shared_ptr<Tile> tile = *t;
    Type elt = tile->type.getElementType();
    // fp8 registers (P rounded to fp8) as the 16-bit operand: the same
    // values, which f16 holds exactly.
    if (tile->kind == Kind::Acc && isFp8(elt) && !isFp8(want)) {
      tile = std::make_shared<Tile>(*tile);
      tile->type = RankedTensorType::get(tile->type.getShape(), want);
      tile->stored.clear();
      elt = want;
    }
    t = ensureShared(tile);
    if (failed(t))
      return failure();
    tile = *t;
    if (tile->kind == Kind::Expr)
      tile = materialize(v, tile);
    elt = tile->type.getElementType();
    // fp8 (KV) as the instruction's type: one conversion of the whole
    // stored tile per tile, which both dots then read (wgmma takes fp8 only
    // as both operands fp8).
    if (isFp8(elt) && !isFp8(want) && tile->kind == Kind::Smem)
      if (auto conv = convertedTile(*tile, want)) {
        tile = conv;
        elt = want;
      }
    if (elt != want)
      return fail(Twine("wgmma (") + mi->name + ") reads " + typeName(want) +
                  " operands; the " + which +
                  " operand is " + typeName(elt) +
                  " (convert it to a tile of that type first)");
    if (!isSwizzledView(tile->view) || tile->rowOff % 8 || tile->colOff % 64)
      return fail(Twine("the ") + which +
                  " operand is not a shared-memory tile in the 128-byte "
                  "swizzle (internal error)");
    return *tile;
  };
  auto lhs = operand(op.getLhs(), "left");
  if (failed(lhs))
    return failure();
  int64_t group = mi->warpsPerInstr;
  if (warps % group)
    return fail("wgmma needs the warps in whole warpgroups of " + Twine(group) +
                ", got " + Twine(warps));
  int64_t n = l.rows(); // the instruction's N: every row of the dot
  if (n > 256 || n % 16)
    return fail("wgmma takes N = 16 .. 256 rows in steps of 16, got " +
                Twine(n));
  if (k % mi->k)
    return fail("contraction size " + Twine(k) + " is not a multiple of " +
                "the matrix instruction's K (" + Twine(mi->k) + ")");
  Type i64 = b.getI64Type();
  auto tileBase = [&](const Tile &t) { return sharedAddress(b, loc(), t); };
  auto storedRows = [](const Tile &t) {
    return cast<MemRefType>(t.view.getType()).getDimSize(1);
  };
  // The descriptor of an operand at `base` plus runtime byte offset `dyn`
  // plus static byte offset `off` (unswizzled addresses, as the tensor
  // cores take them: they apply the swizzle), in two parts: the base's
  // (its address field and the constant fields, once per dot) and the
  // offsets' (address >> 4). A shared address is below 2^18 (228 KiB), so
  // its field never carries into the next one and the descriptor of every
  // step is the base's plus an add: what was a shift, a mask and an or of
  // 64-bit values per instruction (about 10 uniform-datapath instructions
  // beside each wgmma in the SASS of the bf16 sm_90a spec) is one add.
  auto baseDescriptor = [&](Value base, int64_t leading) -> Value {
    return arith::AddIOp::create(
        b, loc(), arith::ShRUIOp::create(b, loc(), base, cstI64(b, loc(), 4)),
        cstI64(b, loc(), int64_t(wgmmaDescriptor(0, leading, 8 * 64 * eb,
                                                 64 * eb))));
  };
  auto descriptor = [&](Value baseDesc, Value dyn, int64_t off) -> Value {
    assert(off % 16 == 0 && "operands are 16-byte aligned");
    Value steps =
        arith::ShRUIOp::create(b, loc(), dyn, cstI64(b, loc(), 4));
    return arith::AddIOp::create(
        b, loc(), baseDesc,
        arith::AddIOp::create(b, loc(), steps, cstI64(b, loc(), off / 16)));
  };
  auto toI64 = [&](Value x) -> Value {
    return arith::IndexCastOp::create(b, loc(), i64, x);
  };
  SmallVector<Value> acc;
  if (op.getAcc())
    acc = get(op.getAcc())->regs;
  else
    acc.assign(l.size(), cstF32(b, loc(), 0.0f));
  // The K steps in a rolled loop, `unroll` steps an iteration (K-major A:
  // one 64-column atom; MN-major A: one step of 16 rows): its descriptors
  // follow the induction variable, where unrolled LLVM hoisted every
  // loop-invariant one out of the KV loop (254 registers and spills). All
  // of a dot's instructions form one group, waited for after the loop.
  int64_t steps = k / mi->k;
  int64_t unroll = 1; // fp8 S^T: 18 steps, 6 an iteration
  for (int64_t u : {4, 6, 3, 2})
    if (aK && unroll == 1 && steps % u == 0)
      unroll = u;
  // Independent accumulator chains: a dot of one instruction tile per
  // warpgroup (S^T = K Q^T: 36 steps into one tile) runs step u of each
  // iteration into its own copy of the accumulators, summed after the
  // wait, so that the tensor cores overlap `chains` instructions instead of
  // waiting for each result (O^T's 8 tiles are 8 chains already).
  // About 64 columns of N in flight: 4 chains at N = 16, 2 at N = 32 (an
  // instruction twice as long, and 4 copies of its accumulators spilled
  // the fp8 MTP 2 program of two warpgroups: 255 registers).
  int64_t chains = l.tiles == 1 ? std::clamp<int64_t>(64 / n, 1, unroll) : 1;
  SmallVector<Value> init = acc;
  for (int64_t c = 1; c < chains; ++c)
    init.append(l.size(), cstF32(b, loc(), 0.0f));
  // (Register A: with V in registers too, K's tile is V's bytes, which
  // S^T does not read.)
  if (regA)
    return dotRegisterA(op, l, mi, *lhs, baseDescriptor(tileBase(*lhs), 16),
                        init);
  if (vBytes)
    return dotRegisterV(op, l, mi, *lhs, *vBytes,
                        baseDescriptor(tileBase(*lhs), 16), acc);
  auto rhs = vt ? FailureOr<Tile>(*vt) : operand(op.getRhs(), "right");
  if (failed(rhs))
    return failure();
  note(op, Twine(mi->name) + ", transposed: A = " +
               (trans ? "rhs (K-major)"
                : vt  ? "rhs^T (transposed into a K-major fp8 tile)"
                      : "rhs^T (MN-major)") +
               ", B = lhs^T (K-major), descriptors from shared memory");
  Value aBase = tileBase(*rhs), bBase = tileBase(*lhs);
  int64_t aRows = storedRows(*rhs), bRows = storedRows(*lhs);
  // This warpgroup's first column of the dot: its instruction tiles cover
  // group x colsPerWarp columns, 64 (the instruction's M) per tile. In
  // bytes of A: rhs rows when transposed (64 eb bytes each), else rhs
  // columns (whole atoms of aRows x 128 bytes).
  int64_t mInstr = mi->n * group;
  Value wgCol = mul(arith::DivUIOp::create(b, loc(), warp, idx(group)),
                    l.colsPerWarp * group);
  Value wgA =
      aK ? mul(wgCol, 64 * eb)
         : mul(arith::DivUIOp::create(b, loc(), wgCol, idx(64)), aRows * 128);
  aBase = arith::AddIOp::create(b, loc(), aBase, toI64(wgA));
  Value aDesc = baseDescriptor(aBase, aK ? 16 : aRows * 128),
        bDesc = baseDescriptor(bBase, 16);
  target.warpgroupFence(b, loc());
  auto loop = scf::ForOp::create(b, loc(), idx(0), idx(steps / unroll), idx(1),
                                 ValueRange(init));
  // Rolled through to the PTX (`.pragma "nounroll"`, which ptxas keeps):
  // an LLVM-unrolled loop's descriptors are KV-loop invariants that LICM
  // hoists (the fp8 MTP 2 program: 255 registers and spills).
  MLIRContext *ctx = b.getContext();
  auto noUnroll = LLVM::LoopUnrollAttr::get(
      ctx, /*disable=*/b.getBoolAttr(true), /*count=*/{}, /*runtimeDisable=*/{},
      /*full=*/{}, /*followupUnrolled=*/{}, /*followupRemainder=*/{},
      /*followupAll=*/{});
  loop->setAttr("loop_annotation",
                LLVM::LoopAnnotationAttr::get(
                    ctx, /*disableNonforced=*/{}, /*vectorize=*/{},
                    /*interleave=*/{}, noUnroll, /*unrollAndJam=*/{},
                    /*licm=*/{}, /*distribute=*/{}, /*pipeline=*/{},
                    /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
                    /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
                    /*parallelAccesses=*/{}));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> cur(loop.getRegionIterArgs());
    Value k0 = mul(loop.getInductionVar(), unroll * mi->k);
    // The start of K column kk of a K-major tile of `rows` rows: its atom
    // and its 32-byte step within the atom's rows.
    auto kMajor = [&](Value kk, int64_t rows) {
      return toI64(add(
          mul(arith::DivUIOp::create(b, loc(), kk, idx(64)), rows * 64 * eb),
          mul(arith::RemUIOp::create(b, loc(), kk, idx(64)), eb)));
    };
    for (int64_t u = 0; u < unroll; ++u) {
      Value kk = addc(k0, u * mi->k);
      int64_t chain = (u % chains) * l.size();
      // A: K-major rows j * 64 .. of rhs (S^T = K Q^T), or MN-major
      // columns j * 64 .. of rhs over its rows kk .. (O^T = V^T P^T).
      Value dynA = aK ? kMajor(kk, aRows) : toI64(mul(kk, 128));
      Value descB =
          descriptor(bDesc, kMajor(kk, bRows),
                     smemSwizzledOffset(lhs->rowOff, lhs->colOff, bRows, eb));
      for (int64_t j = 0; j < l.tiles; ++j) {
        Value descA = descriptor(
            aDesc, dynA,
            aK ? smemSwizzledOffset(j * mInstr + rhs->rowOff, rhs->colOff,
                                       aRows, eb)
                  : smemSwizzledOffset(rhs->rowOff, j * mInstr + rhs->colOff,
                                       aRows));
        mmaOnTile(cur, l, chain, j, [&](ArrayRef<Value> d) {
          return target.warpgroupMma(b, loc(), mi, n, descA,
                                     /*aMnMajor=*/!aK, descB, d);
        });
      }
    }
    scf::YieldOp::create(b, loc(), cur);
  }
  // fp8 S^T = K Q^T: the columns of K that a later dot reads as V (in
  // O^T = V^T P^T) are transposed (that dot on the e4m3 form) or converted
  // (on a 16-bit form) while the tensor cores run this one.
  // The transpose's barrier waits for this dot's instructions below: the one
  // barrier there (sendNextTileEarly's, or its own) makes V^T visible to
  // the next dot and says that no warp still reads K, where a barrier of
  // its own right after the transpose took a second one a tile.
  bool transposed = false;
  auto ld = op.getRhs().getDefiningOp<LoadOp>();
  // In place, V^T overwrites the K this dot reads: once it is done.
  bool inPlace = fp8 && trans && vtInPlace(ld);
  if (inPlace)
    target.warpgroupCommitAndWait(b, loc(), 0);
  if (fp8 && trans) {
    auto early = [&](Value v, const Tile &part) {
      for (Operation *reader : v.getUsers())
        if (auto d = dyn_cast<DotOp>(reader);
            d && d.getRhs() == v && !d.getTransposeRhs()) {
          const MatrixInstr *next =
              target.instrFor(d.getLhs().getType().getElementType(),
                              part.type.getElementType(),
                              part.type.getDimSize(0));
          if (bitWidth(next->abType) == 8 &&
              transposedTile(part, /*barrierAfter=*/false, inPlace))
            transposed = true;
          else
            (void)convertedTile(part, b.getF16Type());
          return;
        }
    };
    early(op.getRhs(), *rhs);
    for (Operation *user : op.getRhs().getUsers())
      if (auto sl = dyn_cast<SliceOp>(user)) {
        Tile part = *rhs;
        part.type = sl.getResult().getType();
        part.rowOff += sl.getOffsets()[0];
        part.colOff += sl.getOffsets()[1];
        early(sl.getResult(), part);
      }
  }
  if (!inPlace)
    target.warpgroupCommitAndWait(b, loc(), 0);
  if (fp8 && trans && ld && earlySends.count(ld))
    sendNextTileEarly(ld); // its barrier first
  else if (transposed)
    barrier();
  for (int64_t r = 0; r < l.size(); ++r) {
    acc[r] = loop.getResult(r);
    for (int64_t c = 1; c < chains; ++c)
      acc[r] = arith::AddFOp::create(b, loc(), acc[r],
                                     loop.getResult(c * l.size() + r));
  }
  tiles[op] = regTile(Kind::Acc, op.getResult().getType(), std::move(acc));
  return success();
}

LogicalResult Lowering::dotRegisterA(DotOp op, const AccLayout &l,
                                     const MatrixInstr *mi, const Tile &q,
                                     Value bDesc, ArrayRef<Value> init) {
  RegPrefetch &p = *kvTiles.regPrefetch;
  std::optional<GroupedOperands> g = registerAGrouping(op);
  if (!g || !p.kRegisters || !q.kPerm ||
      q.kPerm->logicalBitTo != g->logicalBitTo)
    return fail("the K tile in registers needs Q stored in its K order "
                "(internal error)");
  RegisterTileMap map = p.map();
  int64_t chains = init.size() / l.size();
  int64_t bRows = cast<MemRefType>(q.view.getType()).getDimSize(1);
  Type fp8 = op.getRhs().getType().getElementType();
  int64_t atoms = map.atoms(), rowRounds = map.rounds() / atoms;
  // The columns that other readers of the tile take (V: a slice, read by
  // O^T from the 16-bit tile): the atoms stored.
  SmallVector<bool> stored(atoms, false);
  for (OpOperand &use : op.getRhs().getUses()) {
    if (use.getOwner() == op.getOperation())
      continue;
    int64_t lo = 0, hi = atoms * 64;
    if (auto sl = dyn_cast<SliceOp>(use.getOwner())) {
      lo = sl.getOffsets()[1];
      hi = lo + sl.getResult().getType().getDimSize(1);
    }
    for (int64_t a = lo / 64; a < atoms && a * 64 < hi; ++a)
      stored[a] = true;
  }
  // Q's K-major descriptor at K column kk: Q's plus the offset (>> 4) of
  // kk's atom and 32-byte step, which the instruction adds (36 descriptors
  // hoisted out of the KV loop spilled the MTP 2 program).
  int64_t qOff = smemSwizzledOffset(q.rowOff, q.colOff, bRows, 2);
  auto descBOffset = [&](int64_t kk) {
    return (kk / 64 * bRows * 128 + kk % 64 * 2 + qOff) / 16;
  };
  int64_t n = l.rows(), perStep = int64_t(1) << mi->aRegisters.elemBases.size();
  SmallVector<Value> cur(init);
  auto i32x4 = VectorType::get({4}, b.getI32Type());
  for (int64_t a = 0; a < atoms; ++a) {
    // This thread's 16 bytes of atom a in each of its row rounds, as 16-bit
    // words in byte order; the atoms V needs stored as well.
    SmallVector<SmallVector<Value>> words(rowRounds);
    for (int64_t h = 0; h < rowRounds; ++h) {
      int64_t chunk = h * atoms + a;
      SmallVector<Value, 2> pieces = convertedPieces(p.cur[chunk], fp8, p.to);
      if (stored[a] && p.pending->pairedColumns)
        storeChunkPaired(*p.pending, p, chunk, p.cur[chunk]);
      else if (stored[a])
        storeChunkPieces(*p.pending, p, idx(chunk), pieces);
      for (Value piece : pieces) {
        Value w = vector::BitCastOp::create(b, loc(), i32x4, piece);
        for (int64_t e = 0; e < 4; ++e)
          words[h].push_back(
              vector::ExtractOp::create(b, loc(), w, ArrayRef<int64_t>{e}));
      }
    }
    target.warpgroupFence(b, loc());
    for (int64_t s = 0; s < g->steps; ++s) {
      SmallVector<Value> regs;
      for (int64_t e = 0; e < perStep; e += 2) {
        Coord c = g->a().map(0, s * perStep + e);
        regs.push_back(words[c.row / 8][c.col / 2]);
      }
      int64_t chain = ((a * g->steps + s) % chains) * l.size();
      mmaOnTile(cur, l, chain, 0, [&](ArrayRef<Value> d) {
        return target.warpgroupMmaRegisterA(b, loc(), mi, n, regs, bDesc,
                                            descBOffset(a * 64 + s * mi->k), d);
      });
    }
    // One group per atom; at most two in flight, so that the registers of
    // the older ones are free again.
    target.warpgroupCommitAndWait(b, loc(), 1);
  }
  // The next tile's loads, in flight during this tile's softmax and O^T.
  loadNextTileToRegisters(p);
  p.pending.reset();
  target.warpgroupCommitAndWait(b, loc(), 0);
  SmallVector<Value> acc(cur.begin(), cur.begin() + l.size());
  for (int64_t r = 0; r < l.size(); ++r)
    for (int64_t c = 1; c < chains; ++c)
      acc[r] = arith::AddFOp::create(b, loc(), acc[r], cur[c * l.size() + r]);
  note(op, Twine(mi->name) + ", transposed: A = rhs from registers (" +
               Twine(g->steps) + " K steps an atom), B = lhs^T (K-major)");
  tiles[op] = regTile(Kind::Acc, op.getResult().getType(), std::move(acc));
  return success();
}

LogicalResult Lowering::dotRegisterV(DotOp op, const AccLayout &l,
                                     const MatrixInstr *mi, const Tile &p,
                                     const Tile &v, Value bDesc,
                                     ArrayRef<Value> init) {
  int64_t group = mi->warpsPerInstr, n = l.rows();
  int64_t k = op.getLhs().getType().getDimSize(1);  // tokens
  auto bytesT = cast<MemRefType>(v.view.getType()); // [atoms][rows][64] i8
  int64_t rows = bytesT.getRank() == 3 ? bytesT.getDimSize(1) : 0;
  if (mi->aRegisters.laneBases.empty() || mi->k != 16 || k % 32 ||
      v.rowOff + k > rows || v.rowOff % 16 || v.colOff % 64)
    return fail("V as wgmma's register A needs whole pairs of 16-token K "
                "steps of a swizzled fp8 tile (internal error)");
  // ldmatrix.x4.trans of K steps s, s + 1 (PairedVMap): lane l addresses
  // row (token) rowOff + 16 s + l; matrix l / 8 is tokens 8 (l / 8) .. + 7.
  // Warp w of its warpgroup reads the 16 columns 16 w .. + 15 of each
  // instruction tile (64 columns: tileColumnOf), the 16-byte chunk w of
  // the atom's row, swizzled by (row / 2) mod 4 = (l / 2) mod 4 for every
  // s: a per-thread address, and per tile and step a constant (atom j:
  // rows x 64 bytes; 16 rows: 1024).
  assert(PairedVMap::ldmatrixRow(1) == 1 && "lane l reads token row l");
  Type i64 = b.getI64Type();
  Value wl = arith::RemUIOp::create(b, loc(), warp, idx(group));
  Value atom0 = add(idx(v.colOff / 64),
                    mul(arith::DivUIOp::create(b, loc(), warp, idx(group)),
                        l.colsPerWarp * group / 64));
  Value row0 = addc(lane, v.rowOff);
  Value chunk = arith::XOrIOp::create(
      b, loc(), wl,
      arith::RemUIOp::create(
          b, loc(), arith::DivUIOp::create(b, loc(), row0, idx(2)), idx(4)));
  Value threadAddr = arith::AddIOp::create(
      b, loc(), sharedAddress(b, loc(), v),
      arith::IndexCastOp::create(
          b, loc(), i64,
          add(add(mul(atom0, rows * 64), mul(row0, 64)), mul(chunk, 16))));
  // P^T's K-major descriptor at K column kk, added by the instruction.
  int64_t bRows = cast<MemRefType>(p.view.getType()).getDimSize(1);
  int64_t pOff = smemSwizzledOffset(p.rowOff, p.colOff, bRows, 2);
  auto descBOffset = [&](int64_t kk) {
    return (kk / 64 * bRows * 128 + kk % 64 * 2 + pOff) / 16;
  };
  Type i32 = b.getI32Type(), i16 = b.getI16Type();
  Type fp8 = v.type.getElementType(), f16 = sixteenBitOperand(b, mi);
  auto i16x2 = VectorType::get({2}, i16);
  // One lane register of ldmatrix.trans: bytes (token 2c: dims d, d + 8),
  // (token 2c + 1: d, d + 8); permuted to (d: 2c, 2c + 1), (d + 8: ...),
  // each pair converted: the fragment's registers for rows d and d + 8.
  auto fragment = [&](Value x) {
    Value y = target.bytePermute(
        b, loc(), x, cstI32(b, loc(), 0),
        cstI32(b, loc(), int64_t(PairedVMap::fragmentSelector)));
    SmallVector<Value, 2> out;
    for (int64_t h = 0; h < 2; ++h) {
      Value half = arith::TruncIOp::create(
          b, loc(), i16,
          h ? arith::ShRUIOp::create(b, loc(), y, cstI32(b, loc(), 16))
                  .getResult()
            : y);
      auto [lo, hi] =
          pairToOperand(bitcastToVector(b, loc(), half,
                                        VectorType::get({2}, storageType(fp8))),
                        fp8, f16);
      Value pair =
          vector::FromElementsOp::create(b, loc(), i16x2, ValueRange{lo, hi});
      out.push_back(vector::ExtractOp::create(
          b, loc(),
          vector::BitCastOp::create(b, loc(), VectorType::get({1}, i32), pair),
          ArrayRef<int64_t>{0}));
    }
    return out;
  };
  SmallVector<Value> cur(init);
  int64_t steps = k / mi->k;
  for (int64_t j = 0; j < l.tiles; ++j)
    for (int64_t s0 = 0; s0 < steps; s0 += 2) {
      // Two K steps of tile j: their fragments (4 registers each) from one
      // ldmatrix, then their instructions: one group, at most two in flight,
      // so that the registers of the older ones are free again.
      SmallVector<SmallVector<Value>> a(steps);
      SmallVector<Value> x = target.ldmatrixX4Trans(
          b, loc(), threadAddr, j * rows * 64 + 16 * s0 * 64);
      for (int64_t q = 0; q < 4; ++q)
        llvm::append_range(a[s0 + q / 2], fragment(x[q]));
      target.warpgroupFence(b, loc());
      for (int64_t s = s0; s < s0 + 2; ++s)
        mmaOnTile(cur, l, /*chain=*/0, j, [&](ArrayRef<Value> d) {
          return target.warpgroupMmaRegisterA(b, loc(), mi, n, a[s], bDesc,
                                              descBOffset(s * mi->k), d);
        });
      target.warpgroupCommitAndWait(b, loc(), 1);
    }
  target.warpgroupCommitAndWait(b, loc(), 0);
  note(op, Twine(mi->name) +
               ", transposed: A = rhs^T from registers "
               "(ldmatrix.trans of its fp8 bytes, " +
               Twine(steps) + " K steps a tile), B = lhs^T (K-major)");
  tiles[op] = regTile(Kind::Acc, op.getResult().getType(), std::move(cur));
  return success();
}

} // namespace mlir::mla::gpulower
