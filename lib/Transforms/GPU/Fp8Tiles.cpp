//===- Fp8Tiles.cpp - fp8 tiles for warpgroup MMAs -------------------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h). What sm_90a's
// wgmma needs done to an fp8 tile in shared memory that it cannot read as
// it is (docs/Design.md, "sm_90a: wgmma"): converted to a 16-bit swizzled
// tile (its 16-bit forms), or transposed into an fp8 tile (its e4m3 form
// reads both operands K-major only).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

void Lowering::storeConverted(Value bytes, Type elt, const Tile &dst, Value r,
                              Value c) {
  for (auto [h, piece] :
       llvm::enumerate(convertedPieces(bytes, elt, dst.type.getElementType())))
    vector::StoreOp::create(b, loc(), piece, dst.view,
                            smemAt(dst.view, r, addc(c, 8 * h)),
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
}

SmallVector<Value, 2> Lowering::convertedPieces(Value bytes, Type elt,
                                                Type to) {
  auto v8 = VectorType::get({8}, storageType(to));
  SmallVector<Value> out;
  for (int64_t e = 0; e < 16; e += 2) {
    Value pair = vector::ShuffleOp::create(b, loc(), bytes, bytes,
                                           ArrayRef<int64_t>{e, e + 1});
    llvm::append_range(out, pairToOperand(pair, elt, to));
  }
  return {
      vector::FromElementsOp::create(b, loc(), v8, ArrayRef(out).take_front(8)),
      vector::FromElementsOp::create(b, loc(), v8,
                                     ArrayRef(out).drop_front(8))};
}

std::shared_ptr<Tile> Lowering::convertedTile(const Tile &t, Type to) {
  Type elt = t.type.getElementType();
  if (!isFp8(elt))
    return nullptr;
  auto key =
      std::make_pair(t.view.getAsOpaquePointer(), to.getAsOpaquePointer());
  std::shared_ptr<Tile> whole = convertedTiles.lookup(key);
  if (!whole) {
    whole = t.convertInto ? convertInPlace(t, to) : convertToNewTile(t, to);
    if (!whole)
      return nullptr;
    convertedTiles[key] = whole;
  }
  // A conversion of a column range starts at -colOff of the stored tile.
  int64_t col = t.colOff + whole->colOff;
  if (col < 0 || col + t.type.getDimSize(1) > whole->type.getDimSize(1))
    return nullptr;
  auto out = std::make_shared<Tile>(*whole);
  out->type = RankedTensorType::get(t.type.getShape(), to);
  out->rowOff = t.rowOff;
  out->colOff = col;
  return out;
}

std::shared_ptr<Tile> Lowering::convertToNewTile(const Tile &t, Type to) {
  auto mt = cast<MemRefType>(t.view.getType());
  if (isSwizzledView(t.view))
    return convertSwizzledColumns(t, to);
  Type elt = t.type.getElementType();
  int64_t rows = mt.getDimSize(0);
  int64_t cols = mt.getDimSize(1) - kRowPadBytes / storedBytes(elt);
  if (!isFp8(elt) || storedBytes(elt) != 1 || rows % 8 || cols % 16 ||
      (rows * cols / 16) % threads || !swizzled(rows, cols, to))
    return nullptr;
  auto whole = std::make_shared<Tile>();
  whole->kind = Kind::Smem;
  whole->type = RankedTensorType::get({rows, cols}, to);
  whole->view = allocSmem(rows, cols, to);
  barrierBeforeRewrite();
  // 16 stored bytes a thread and round, row by row: 8 threads read 128
  // contiguous bytes, and write 4 swizzled chunks each of two atoms.
  int64_t groups = cols / 16, rounds = rows * cols / 16 / threads;
  // A rolled loop (two rounds an iteration): unrolled, LLVM issued every
  // round's load first and the registers ran out.
  int64_t per = rounds % 2 == 0 ? 2 : 1;
  auto loop = scf::ForOp::create(b, loc(), idx(0), idx(rounds / per), idx(1));
  OpBuilder::InsertionGuard ig(b);
  b.setInsertionPointToStart(loop.getBody());
  for (int64_t i = 0; i < per; ++i) {
    Value q = add(tid, mul(addc(mul(loop.getInductionVar(), per), i), threads));
    Value r = arith::DivUIOp::create(b, loc(), q, idx(groups));
    Value c = mul(arith::RemUIOp::create(b, loc(), q, idx(groups)), 16);
    Value bytes = vector::LoadOp::create(
        b, loc(), VectorType::get({16}, storageType(elt)), t.view,
        ValueRange{r, c}, /*nontemporal=*/false, llvm::MaybeAlign(16));
    storeConverted(bytes, elt, *whole, r, c);
  }
  b.setInsertionPointAfter(loop);
  barrier();
  return whole;
}

std::shared_ptr<Tile> Lowering::convertSwizzledColumns(const Tile &t,
                                                       Type to) {
  // An fp8 operand tile (fp8Operands) whose other reader takes 16 bits
  // (V in O^T = V^T P^T): only the columns of `t` (whole atoms), into a new
  // tile that starts at them.
  auto mt = cast<MemRefType>(t.view.getType());
  Type elt = t.type.getElementType();
  int64_t rows = mt.getDimSize(1), c0 = t.colOff, cols = t.type.getDimSize(1);
  int64_t chunks = rows * cols / 16;
  if (!isFp8(elt) || storedBytes(elt) != 1 || c0 % 64 || cols % 64 ||
      rows % 8 || chunks % threads || !swizzled(rows, cols, to))
    return nullptr;
  auto whole = std::make_shared<Tile>();
  whole->kind = Kind::Smem;
  whole->type = RankedTensorType::get({rows, cols}, to);
  whole->view = allocSmem(rows, cols, to);
  whole->colOff = -c0;
  barrierBeforeRewrite();
  // A warp's round: one atom of 8 rows, 4 lanes a row. Its 16-byte reads
  // are 512 contiguous bytes of the fp8 atom, and each row's converted
  // pieces land on 8 different rows of the 16-bit atom (chunk xor row
  // mod 8): no bank conflicts either way.
  int64_t atoms = cols / 64, rounds = chunks / threads;
  int64_t per = rounds % 2 == 0 ? 2 : 1; // rolled, two rounds an iteration
  auto loop = scf::ForOp::create(b, loc(), idx(0), idx(rounds / per), idx(1));
  OpBuilder::InsertionGuard ig(b);
  b.setInsertionPointToStart(loop.getBody());
  for (int64_t i = 0; i < per; ++i) {
    Value q = add(tid, mul(addc(mul(loop.getInductionVar(), per), i), threads));
    Value blk = arith::DivUIOp::create(b, loc(), q, idx(32));
    Value r = add(mul(arith::DivUIOp::create(b, loc(), blk, idx(atoms)), 8),
                  arith::RemUIOp::create(
                      b, loc(), arith::DivUIOp::create(b, loc(), q, idx(4)),
                      idx(8)));
    Value c = add(mul(arith::RemUIOp::create(b, loc(), blk, idx(atoms)), 64),
                  mul(arith::RemUIOp::create(b, loc(), q, idx(4)), 16));
    Value bytes = vector::LoadOp::create(
        b, loc(), VectorType::get({16}, storageType(elt)), t.view,
        smemAt(t.view, r, addc(c, c0)), /*nontemporal=*/false,
        llvm::MaybeAlign(16));
    storeConverted(bytes, elt, *whole, r, c);
  }
  b.setInsertionPointAfter(loop);
  barrier();
  return whole;
}

std::shared_ptr<Tile> Lowering::convertInPlace(const Tile &t, Type to) {
  auto region = cast<MemRefType>(t.convertInto.getType());
  int64_t rows = region.getDimSize(1), atoms = region.getDimSize(0);
  int64_t cols = atoms * 64;
  Type elt = t.type.getElementType();
  if (region.getElementType() != storageType(to))
    return nullptr;
  auto whole = std::make_shared<Tile>();
  whole->kind = Kind::Smem;
  whole->type = RankedTensorType::get({rows, cols}, to);
  whole->view = t.convertInto;
  barrierBeforeRewrite();
  // Atom by atom: f16 atom a fills bytes [a, a + 1) x rows x 128 of the
  // region, the fp8 atom a' sits at rows x cols + [a', a' + 1) x rows x
  // 64. An atom's writes wait (barrier) only for the threads' reads of
  // the staged atoms they overwrite; the last atom overwrites its own,
  // so its bytes are all read first.
  auto overlaps = [&](int64_t a, int64_t staged) {
    int64_t w0 = a * rows * 128, w1 = w0 + rows * 128;
    int64_t s0 = rows * cols + staged * rows * 64, s1 = s0 + rows * 64;
    return w0 < s1 && s0 < w1;
  };
  int64_t rounds = rows * 4 / threads; // 16-byte fp8 chunks an atom
  int64_t readBefore = 0; // staged atoms below this are read by all
  for (int64_t a = 0; a < atoms; ++a) {
    bool self = overlaps(a, a);
    for (int64_t sa = readBefore; sa < a; ++sa)
      if (overlaps(a, sa)) {
        barrier();
        readBefore = a;
        break;
      }
    SmallVector<std::array<Value, 3>> got; // bytes, row, column
    for (int64_t i = 0; i < rounds; ++i) {
      Value q = addc(tid, i * threads);
      Value r = arith::DivUIOp::create(b, loc(), q, idx(4));
      Value c =
          addc(mul(arith::RemUIOp::create(b, loc(), q, idx(4)), 16), a * 64);
      got.push_back({vector::LoadOp::create(
                         b, loc(), VectorType::get({16}, storageType(elt)),
                         t.view, smemAt(t.view, r, c),
                         /*nontemporal=*/false, llvm::MaybeAlign(16)),
                     r, c});
    }
    if (self) {
      barrier();
      readBefore = a + 1;
    }
    for (auto &[bytes, r, c] : got) {
      storeConverted(bytes, elt, *whole, r, c);
    }
  }
  barrier();
  return whole;
}

/// Whether the dot that reads `ld` as K transposes its V columns in place
/// (ChipTuning::e4m3DoubleBuffer: the double-buffered e4m3 tile, whose V^T
/// overwrites V's atoms once S^T has read them). The caller waits for
/// every reader of the tile first; transposedTile then takes the source's
/// own atoms where it can (64 rows, rounds of the lane map that cover whole
/// atoms), each round reading its atoms wholly before it writes them.
bool Lowering::vtInPlace(LoadOp ld) {
  return ld && kvTiles.prefetch && kvTiles.prefetch->load == ld &&
         e4m3DoubleBuffered(ld);
}

/// Whether the KV tile `ld` is the e4m3 form's double-buffered one
/// (ChipTuning::e4m3DoubleBuffer): fp8 operands, tensor-map copies, 64 rows
/// (the in-place transpose's atoms). canPrefetch gives it two buffers where
/// two programs still fit; vtInPlace then transposes V into its own atoms.
bool Lowering::e4m3DoubleBuffered(LoadOp ld) {
  return target.chip.tuning.e4m3DoubleBuffer && fp8Operands &&
         tensorMapCopies(ld) && ld.getResult().getType().getDimSize(0) == 64;
}

std::shared_ptr<Tile> Lowering::transposedTile(const Tile &t,
                                               bool barrierAfter,
                                               bool inPlace) {
  Type elt = t.type.getElementType();
  auto key = std::make_pair(t.view.getAsOpaquePointer(),
                            elt.getAsOpaquePointer());
  std::shared_ptr<Tile> whole = convertedTiles.lookup(key);
  int64_t rows = t.type.getDimSize(0), cols = t.type.getDimSize(1);
  if (!whole) {
    // Columns [c0, c0 + cols) of every row of the stored tile (in the
    // 64-byte swizzle, rows x 64 bytes an atom) become rows of a new one.
    if (!isFp8(elt) || !isSwizzledView(t.view) || t.rowOff || t.colOff % 64 ||
        cols % 64 || rows % 64 || !swizzled(cols, rows, elt))
      return nullptr;
    // The lane map is Fp8TransposeMap's (mla/MatrixInstr.h, tested there
    // for coverage and bank conflicts), in IR.
    Fp8TransposeMap map{rows, cols, threads};
    int64_t atoms = cols / 64, halves = map.halfWarps(), tasks = map.tasks();
    if (threads % 32)
      return nullptr;
    int64_t c0 = t.colOff;
    whole = std::make_shared<Tile>();
    whole->kind = Kind::Smem;
    whole->type = RankedTensorType::get({cols, rows}, elt);
    auto tileView = t.view.getDefiningOp<memref::ViewOp>();
    if (inPlace && tileView && rows == 64 && halves % 4 == 0 &&
        tasks % halves == 0) {
      // Atom a of V^T (dims 64 a ..) is atom a of the tile (its columns
      // 64 a ..), 4 KiB either way: each round of the loop below reads its
      // two atoms whole before it writes them.
      whole->view = swizzledViewAt(
          addc(tileView.getByteShift(), c0 / 64 * rows * 64), cols, rows, elt);
    } else {
      inPlace = false;
      whole->view = allocSmem(cols, rows, elt);
      barrierBeforeRewrite();
    }
    whole->colOff = -c0;
    // A half-warp's task: 64 of the source's columns (an atom a) of 32 of
    // its rows (token blocks T and T ^ 1 of 16 rows in group g: lanes j < 8
    // take columns 4 j .. of one, lanes j >= 8 those of the other). A lane
    // reads 16 rows x 4 bytes (row k ^ h at its k-th read: half-warp h = 1
    // on the other parity, i.e. the other 64 bytes of the banks), transposes
    // them in 4 x 4 blocks (two rounds of byte permutes whose selectors
    // undo that order) and writes 4 rows x 16 bytes, its column i ^ e at
    // its i-th write, e = h ^ ((j / 2) mod 4) (Fp8TransposeMap::writeOrder):
    // a warp's reads hit 32 banks once, and each quarter-warp's writes
    // (the phases of a 16-byte store) 8 different 16-byte bank groups.
    Value lane = arith::RemUIOp::create(b, loc(), tid, idx(32));
    Value h = arith::DivUIOp::create(b, loc(), lane, idx(16));
    Value j = arith::RemUIOp::create(b, loc(), lane, idx(16));
    Value hi = arith::DivUIOp::create(b, loc(), j, idx(8));
    Value half = arith::DivUIOp::create(b, loc(), tid, idx(16));
    Type i32 = b.getI32Type();
    Value e = arith::XOrIOp::create(
        b, loc(), h,
        arith::RemUIOp::create(b, loc(),
                               arith::DivUIOp::create(b, loc(), j, idx(2)),
                               idx(4)));
    Value e1 = arith::DivUIOp::create(b, loc(), e, idx(2));
    auto is1 = [&](Value x) -> Value {
      return arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ne, x,
                                   idx(0));
    };
    auto sel = [&](Value cond, uint32_t no, uint32_t yes) -> Value {
      return arith::SelectOp::create(
          b, loc(), cond, arith::ConstantIntOp::create(b, loc(), yes, 32),
          arith::ConstantIntOp::create(b, loc(), no, 32));
    };
    // Round 1 pairs rows 2m, 2m + 1 byte by byte (h = 1 holds them
    // swapped) into columns {0, 1} (p0, p2) and {2, 3} (p1, p3), the pairs
    // exchanged for bit 1 of e; round 2 makes column i ^ e's word of 4 rows
    // (the halves of a pair exchanged for bit 0 of e).
    Value odd = is1(h), swapPairs = is1(e1),
          swapHalves = is1(arith::RemUIOp::create(b, loc(), e, idx(2)));
    Value r1a = sel(odd, 0x5140, 0x1504), r1b = sel(odd, 0x7362, 0x3726);
    Value s1a = arith::SelectOp::create(b, loc(), swapPairs, r1b, r1a);
    Value s1b = arith::SelectOp::create(b, loc(), swapPairs, r1a, r1b);
    Value s2a = sel(swapHalves, 0x5410, 0x7632),
          s2b = sel(swapHalves, 0x7632, 0x5410);
    // Indices into the views ([atom][row][64], the 64-byte swizzle: chunk
    // xor (row / 2) mod 4) without per-access swizzle arithmetic. A lane
    // reads column 4 j of its atom at rows row0 + (k ^ h), row0 a multiple
    // of 16: the row term is (k / 2) mod 4 whatever h; it writes rows
    // 4 j + (i ^ e) of V^T (row term (2 j + ((i / 2) ^ (e / 2))) mod 4) at
    // chunk tb.
    SmallVector<Value, 4> readCol;
    Value jChunk = arith::DivUIOp::create(b, loc(), j, idx(4));
    Value jByte = mul(arith::RemUIOp::create(b, loc(), j, idx(4)), 4);
    for (int64_t sw = 0; sw < 4; ++sw)
      readCol.push_back(
          add(mul(arith::XOrIOp::create(b, loc(), jChunk, idx(sw)), 16),
              jByte));
    SmallVector<Value, 4> writeRow;
    SmallVector<Value, 2> writeTerm;
    for (int64_t i = 0; i < 4; ++i)
      writeRow.push_back(arith::XOrIOp::create(b, loc(), e, idx(i)));
    for (int64_t i2 = 0; i2 < 2; ++i2)
      writeTerm.push_back(arith::RemUIOp::create(
          b, loc(),
          add(mul(j, 2), arith::XOrIOp::create(b, loc(), e1, idx(i2))),
          idx(4)));
    auto loop =
        scf::ForOp::create(b, loc(), idx(0), idx(map.rounds()), idx(1));
    OpBuilder::InsertionGuard ig(b);
    b.setInsertionPointToStart(loop.getBody());
    Value u = add(mul(loop.getInductionVar(), halves), half);
    if (tasks % halves) { // the last round's spare half-warps do nothing
      auto inRange = scf::IfOp::create(
          b, loc(),
          arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, u,
                                idx(tasks)),
          /*withElseRegion=*/false);
      b.setInsertionPoint(inRange.thenBlock()->getTerminator());
    }
    Value v = arith::RemUIOp::create(b, loc(), u, idx(2));
    Value t2 = mul(arith::RemUIOp::create(
                       b, loc(), arith::DivUIOp::create(b, loc(), u, idx(2)),
                       idx(2)),
                   2);
    Value rest = arith::DivUIOp::create(b, loc(), u, idx(4));
    Value a = arith::RemUIOp::create(b, loc(), rest, idx(atoms));
    Value g = arith::DivUIOp::create(b, loc(), rest, idx(atoms));
    Value tb = add(t2, arith::XOrIOp::create(b, loc(), v, hi));
    Value row0 = add(mul(g, 64), mul(tb, 16));
    Value col = add(mul(a, 64), mul(j, 4));
    Value srcAtom = addc(a, c0 / 64);
    auto v4 = VectorType::get({4}, storageType(elt));
    SmallVector<Value> w;
    for (int64_t k = 0; k < 16; ++k) {
      Value r = add(row0, arith::XOrIOp::create(b, loc(), h, idx(k)));
      Value x = vector::LoadOp::create(
          b, loc(), v4, t.view, ValueRange{srcAtom, r, readCol[(k / 2) % 4]},
          /*nontemporal=*/false, llvm::MaybeAlign(4));
      w.push_back(vector::ExtractOp::create(
          b, loc(),
          vector::BitCastOp::create(b, loc(), VectorType::get({1}, i32), x),
          ArrayRef<int64_t>{0}));
    }
    if (inPlace)
      barrier(); // every lane's reads of the round's atoms
    SmallVector<SmallVector<Value>> out(4); // out[i][q]: column i, rows 4q..
    for (int64_t q = 0; q < 4; ++q) {
      Value *x = &w[4 * q];
      Value p0 = target.bytePermute(b, loc(), x[0], x[1], s1a);
      Value p1 = target.bytePermute(b, loc(), x[0], x[1], s1b);
      Value p2 = target.bytePermute(b, loc(), x[2], x[3], s1a);
      Value p3 = target.bytePermute(b, loc(), x[2], x[3], s1b);
      out[0].push_back(target.bytePermute(b, loc(), p0, p2, s2a));
      out[1].push_back(target.bytePermute(b, loc(), p0, p2, s2b));
      out[2].push_back(target.bytePermute(b, loc(), p1, p3, s2a));
      out[3].push_back(target.bytePermute(b, loc(), p1, p3, s2b));
    }
    for (int64_t i = 0; i < 4; ++i) {
      Value words = vector::FromElementsOp::create(
          b, loc(), VectorType::get({4}, i32), out[i]);
      Value bytes = vector::BitCastOp::create(
          b, loc(), VectorType::get({16}, storageType(elt)), words);
      Value r = add(col, writeRow[i]);
      Value chunk = arith::XOrIOp::create(b, loc(), tb, writeTerm[i / 2]);
      vector::StoreOp::create(b, loc(), bytes, whole->view,
                              ValueRange{g, r, mul(chunk, 16)},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    }
    b.setInsertionPointAfter(loop);
    if (barrierAfter)
      barrier();
    convertedTiles[key] = whole;
  }
  int64_t row = t.colOff + whole->colOff;
  if (row < 0 || row + cols > whole->type.getDimSize(0) || t.rowOff ||
      rows != whole->type.getDimSize(1))
    return nullptr;
  auto out = std::make_shared<Tile>(*whole);
  out->type = RankedTensorType::get({cols, rows}, elt);
  out->rowOff = row;
  out->colOff = 0;
  return out;
}

} // namespace mlir::mla::gpulower
