//===- KvTileTensorMap.cpp - the KV tile by tensor-map copies -------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h). On a chip
// with the tensor memory accelerator (ChipFacts::bulkTensorCopies: sm_90a)
// the KV tile, double-buffered (KvTileCopy.cpp: one mbarrier per buffer) or
// copied and waited for at once (lowerLoad), is sent by one thread as one
// box per 64-column atom of a tensor map over the KV cache, straight into
// the 128-byte swizzled layout the warpgroup MMAs read; the copies complete
// on an mbarrier that every thread waits on. Against the per-thread
// cp.async copies (36 per thread and tile for bf16, each with its address
// and bound) this leaves the threads nothing to issue but one wait, which
// is why such a tile is double-buffered wherever one program holds two
// (canPrefetch).
//
// The map (128 bytes) is the kernel's last parameter, passed by value as a
// grid constant (mla-nvvm-grid-constants); the launcher builds it per call
// from the kv pointer and its rows (mla_arg_desc MLA_ARG_TENSOR_MAP), so its
// row extent is the cache's: rows past the cache are zeros, never read. The
// rows of another sequence that a masked tile's box covers are zeroed in
// shared memory after the wait (their probabilities are exactly 0, but a
// NaN or Inf there would still reach O through 0 x V).
//
// A paged tile (block table) goes the same way where it lies within one
// page (tilesWithinOnePage: its rows divide the page size): its box starts
// at the page's row, read from the table by every thread just before the
// copy. An entry that is not in the cache (negative, or past its rows)
// sends the box from the map's row extent, wholly outside it, which the
// copy fills with zeros: the rows a cp.async copy of size 0 leaves zero.
// Such a tile takes no L2 policy (as the register-loaded paged tile).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

/// Whether KV tile `op` is sent by the tensor memory accelerator.
bool Lowering::tensorMapCopies(LoadOp op) {
  if (!target.chip.facts.bulkTensorCopies || !func ||
      (op.isPaged() && !tilesWithinOnePage(op)) || !contiguousRows(op))
    return false;
  auto t = op.getResult().getType();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  if (!swizzled(rows, cols, t.getElementType()) || rows > 256 || cols % 64 ||
      cols / 64 > 256 || (kvTiles.mapRows && kvTiles.mapRows != rows) ||
      (kvTiles.mapBoxes && kvTiles.mapBoxes != cols / 64))
    return false;
  // The kernel's `kv` argument itself (the launcher builds its map).
  auto kernel = op->getParentOfType<KernelOp>();
  auto arg = dyn_cast<BlockArgument>(op.getSource());
  auto names = b.getContext()
                   ->getLoadedDialect<MLADialect>()
                   ->getArgNamesAttrHelper()
                   .getAttr(kernel);
  if (!arg || arg.getOwner() != &kernel.getBody().front() || !names ||
      arg.getArgNumber() >= names.size() ||
      cast<StringAttr>(names[arg.getArgNumber()]).getValue() != "kv")
    return false;
  // An mbarrier's phase follows the loop's iteration count: a loop straight
  // in the kernel runs once per program, and loads the tile every iteration.
  auto loop = dyn_cast<KvLoopOp>(op->getParentOp());
  return loop && loop->getParentOp() == kernel.getOperation();
}

/// Whether `op` is an e4m3 S^T's single buffer, which gets its next tile
/// after that dot (sendNextTileEarly) and its first at the Q load
/// (startEarlySend).
bool Lowering::earlySendable(LoadOp op) {
  if (!fp8Operands || !tensorMapCopies(op))
    return false;
  for (Operation *user : op->getUsers())
    if (auto d = dyn_cast<DotOp>(user);
        d && d.getRhs() == op.getResult() && d.getTransposeRhs() &&
        bitWidth(target
                     .instrFor(d.getLhs().getType().getElementType(),
                               d.getRhs().getType().getElementType(),
                               d.getLhs().getType().getDimSize(1))
                     ->abType) == 8)
      return true;
  return false;
}

void Lowering::startEarlySend(KvLoopOp loop) {
  LoadOp ld;
  loop.getBody().walk([&](LoadOp l) {
    if (!ld && earlySendable(l) && !stagesInPlace(l))
      ld = l;
  });
  IRMapping m;
  Value lowerV = ld ? scalarNow(loop.getLower(), m) : Value();
  Value upperV = ld ? scalarNow(loop.getUpper(), m) : Value();
  if (!lowerV || !upperV || earlySends.count(ld) ||
      !llvm::all_of(ld.getIndices(),
                    [&](Value v) { return readyAhead(v, loop, m); }) ||
      (ld.isPaged() && !readyAhead(ld.getTableOffset(), loop, m)))
    return;
  auto t = ld.getResult().getType();
  Value view = allocSmem(t.getDimSize(0), t.getDimSize(1), t.getElementType());
  Value smem =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), smemBase);
  Value tileAt = addc(smem, lastSmemOffset);
  Value mbar = arith::IndexCastOp::create(
      b, loc(), b.getI64Type(), addc(smem, tensorMapBarriers(ld, 1)));
  // Sent only where the loop runs: a program leaves no copy in flight.
  auto ifOp = scf::IfOp::create(
      b, loc(),
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, lowerV,
                            upperV),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    sendTensorMapTile(
        ld, rematAt(ld.getIndices()[0], loop, lowerV, m),
        rematAt(ld.getIndices()[1], loop, lowerV, m), tileAt, mbar,
        kvReadPolicy(ld, loop, lowerV, upperV),
        ld.isPaged() ? rematAt(ld.getTableOffset(), loop, lowerV, m) : Value());
  }
  earlySends[ld] = {view, tileAt, mbar};
}

void Lowering::sendNextTileEarly(LoadOp op) {
  auto [view, tileAt, mbar] = earlySends.lookup(op);
  auto loop = cast<KvLoopOp>(op->getParentOp());
  // Every thread's reads of the tile (the dot's, the transpose's) are done
  // and ordered before the copy's async-proxy writes.
  barrier();
  Value next = addc(scalars.lookup(loop.getBody().getArgument(0)),
                    loop.getStep());
  auto ifOp = scf::IfOp::create(
      b, loc(),
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, next,
                            scalars.lookup(loop.getUpper())),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  IRMapping m;
  Value policy = kvReadPolicy(op, loop, scalars.lookup(loop.getLower()),
                              scalars.lookup(loop.getUpper()));
  sendTensorMapTile(
      op, rematAt(op.getIndices()[0], loop, next, m),
      rematAt(op.getIndices()[1], loop, next, m), tileAt, mbar, policy,
      op.isPaged() ? rematAt(op.getTableOffset(), loop, next, m) : Value());
}

/// The i32 box coordinates {0, row, col0 / 64} of the map's three
/// dimensions, for a copy from map row `row`.
SmallVector<Value, 3> Lowering::tensorMapBox(Value row, Value col0) {
  auto toI32 = [&](Value x) {
    return arith::IndexCastOp::create(b, loc(), b.getI32Type(), x).getResult();
  };
  return {toI32(idx(0)), toI32(row),
          toI32(arith::DivUIOp::create(b, loc(), col0, idx(64)))};
}

/// `count` mbarriers, set up at entry; returns their byte offset.
int64_t Lowering::tensorMapBarriers(LoadOp op, int64_t count) {
  // One map per kernel: its last argument.
  if (!kvTiles.map) {
    unsigned n = func.getNumArguments();
    (void)func.insertArgument(n, LLVM::LLVMPointerType::get(b.getContext()),
                              DictionaryAttr(), loc());
    kvTiles.map = func.getArgument(n);
    kvTiles.mapRows = op.getResult().getType().getDimSize(0);
    kvTiles.mapBoxes = op.getResult().getType().getDimSize(1) / 64;
  }
  int64_t offset = smem.append(8 * count, 8);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointAfter(smemBase.getDefiningOp());
  Value base =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), smemBase);
  Value first =
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, tid, idx(0));
  for (int64_t i = 0; i < count; ++i)
    target.mbarrierInit(b, loc(),
                        arith::IndexCastOp::create(b, loc(), b.getI64Type(),
                                                   addc(base, offset + 8 * i)),
                        first);
  gpu::BarrierOp::create(b, loc());
  return offset;
}

/// The map row of logical row `row0`: a paged tile within one page is sent
/// from its page's rows, `tableOffset` the sequence's place in the block
/// table.
Value Lowering::tensorMapRow(LoadOp op, Value row0, Value tableOffset) {
  if (!op.isPaged())
    return row0;
  // The page's rows as every copy path takes them (onePageRange: an empty
  // range where the entry names no row of the cache); an empty one sends
  // the box from the map's row extent instead.
  Value source = scalars.lookup(op.getSource());
  auto [first, last] = onePageRange(
      op, source, row0, Value(),
      pageEntry(op, row0, scalars.lookup(op.getTable()), tableOffset));
  Value some = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt,
                                     first, last);
  return arith::SelectOp::create(b, loc(), some, first,
                                 memref::DimOp::create(b, loc(), source, 0));
}

/// One tile's copy to `dst` on `mbar` under `policy` (kvReadPolicy's).
void Lowering::sendTensorMapTile(LoadOp op, Value row0, Value col0, Value dst,
                                 Value mbar, Value policy, Value tableOffset) {
  row0 = tensorMapRow(op, row0, tableOffset);
  auto t = op.getResult().getType();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  int64_t eltBytes = storedBytes(t.getElementType());
  Value first =
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, tid, idx(0));
  // One copy of `atoms` boxes of rows x 64 columns (128 bytes a row, fp8:
  // 64): the map is 3-D, {64 columns, rows, the row's 64-column pieces},
  // so the box's pieces land one after another, atom a's rows x 64
  // elements at a * rows * 64 (allocSmem's layout). One instruction a tile
  // where a box a piece took 9 (576 columns), each with its address,
  // coordinates and elect on the issuing warp, which every wgmma of the
  // warpgroup waited for.
  int64_t atoms = cols / 64, atomBytes = rows * 64 * eltBytes;
  target.mbarrierExpectBytes(b, loc(), mbar, atoms * atomBytes, first);
  target.tensorTileCopy(
      b, loc(), arith::IndexCastOp::create(b, loc(), b.getI64Type(), dst),
      kvTiles.map, tensorMapBox(row0, col0), mbar, first, policy);
}

/// The wait for `mbar`'s phase `parity`, then rows from `bound` (if any)
/// zeroed.
void Lowering::awaitTensorMapTile(LoadOp op, Value mbar, Value parity,
                                  Value row0, Value bound, Value dst) {
  target.mbarrierWait(b, loc(), mbar, parity);
  if (!bound)
    return;
  // Rows from the bound on: zeros, as the other copies leave them. A row is
  // 64 elements in every atom (128 or 64 bytes: the swizzle permutes chunks
  // within a row), so its 16-byte chunks are zeroed wherever they are.
  auto t = op.getResult().getType();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  int64_t eltBytes = storedBytes(t.getElementType());
  int64_t chunks = rows * cols * eltBytes / 16, perRow = 4 * eltBytes;
  Type i32 = b.getI32Type();
  Value valid = arith::SubIOp::create(b, loc(), bound, row0);
  Value partial = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt,
                                        valid, idx(rows));
  auto ifOp = scf::IfOp::create(b, loc(), partial, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  Value base =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), smemBase);
  Value view = smemViewAt(arith::SubIOp::create(b, loc(), dst, base),
                          {chunks, 4}, i32);
  Value zero = arith::ConstantOp::create(
      b, loc(),
      DenseElementsAttr::get(VectorType::get({4}, i32),
                             b.getI32IntegerAttr(0).getValue()));
  auto rounds = scf::ForOp::create(
      b, loc(), idx(0), idx((chunks + threads - 1) / threads), idx(1));
  b.setInsertionPointToStart(rounds.getBody());
  Value c = add(tid, mul(rounds.getInductionVar(), threads));
  Value r = arith::RemUIOp::create(
      b, loc(), arith::DivUIOp::create(b, loc(), c, idx(perRow)), idx(rows));
  Value out = arith::AndIOp::create(
      b, loc(),
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::sge, r, valid),
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, c,
                            idx(chunks)));
  auto store = scf::IfOp::create(b, loc(), out, /*withElseRegion=*/false);
  b.setInsertionPoint(store.thenBlock()->getTerminator());
  vector::StoreOp::create(b, loc(), zero, view, ValueRange{c, idx(0)});
}

} // namespace mlir::mla::gpulower
