//===- LowerDequant.cpp - block-scaled KV tiles decoded in shared memory
//---===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

/// mla.dequant into e4m3fn (docs/Design.md, mxfp4 KV, "the e4m3 route"):
/// the tile and its scales in shared memory, as lowerDequant's. Each row
/// belongs to `per` adjacent lanes (or each lane to rows / threads rows),
/// a lane to every per-th block of it: the lanes take their blocks' scales,
/// the row's reference from a butterfly over the `per` lanes (no division,
/// no extra barrier), and decode a block (16 bytes in, 32 bytes out) at a
/// time. Where all of a lane's blocks have k = scale - ref + 6 >= -5 and no
/// NaN scale (real caches: blocks within 11 binades of their row's
/// largest), each 4-byte word goes through the block's magnitude table
/// (mxfp4E4m3Table, TargetInfo::mxfp4WordToE4m3); otherwise ScalarCodegen's
/// exact decode, the host lowering's.
static LogicalResult lowerDequantToE4m3(Lowering &L, DequantOp op) {
  OpBuilder &b = L.b;
  Location loc = L.loc();
  auto data = L.get(op.getData()), scales = L.get(op.getScales());
  if (!data || !scales || data->kind != Kind::Smem ||
      scales->kind != Kind::Smem)
    return L.fail("the GPU lowering decodes shared-memory tiles only");
  auto t = op.getResult().getType();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  int64_t blocks = cols / 32, threads = L.threads;
  // Lanes per row (per > 1) or rows per lane (rowsEach > 1).
  int64_t per = threads % rows == 0 ? threads / rows : 1;
  int64_t rowsEach = rows % threads == 0 ? rows / threads : 1;
  if ((threads % rows && rows % threads) || !llvm::isPowerOf2_64(per) ||
      per > L.wave || per > blocks)
    return L.fail("decodes rows of " + Twine(blocks) +
                  " blocks into e4m3 with whole rows or a power-of-two "
                  "share of a row's blocks per thread; " +
                  Twine(rows) + " rows do not divide among " + Twine(threads) +
                  " threads that way");
  // Blocks a lane decodes in a row: the last one only where blocks % per
  // leaves it one (`ragged`).
  int64_t mine = llvm::divideCeil(blocks, per);
  bool ragged = blocks % per != 0;
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  auto c32 = [&](int64_t v) { return cstI32(b, loc, v); };
  auto tile = std::make_shared<Tile>();
  tile->kind = Kind::Smem;
  tile->type = t;
  tile->view = L.allocSmem(rows, cols, t.getElementType());
  auto expTile = std::make_shared<Tile>();
  expTile->kind = Kind::Smem;
  expTile->type = op.getExponents().getType();
  expTile->view = L.allocSmem(1, rows, i32);
  L.barrierBeforeRewrite(); // the previous iteration's readers
  // Block `bi` of row `r`: its scale code (i32), its 16 bytes as 4 words,
  // and the store of 16 decoded bytes as half `h` of its 32.
  auto scaleAt = [&](Value r, Value bi) -> Value {
    Value sc = memref::LoadOp::create(
        b, loc, scales->view,
        ValueRange{L.addc(r, scales->rowOff), L.addc(bi, scales->colOff)});
    return arith::ExtUIOp::create(b, loc, i32, sc);
  };
  auto blockWords = [&](Value r, Value bi) -> Value {
    Value v =
        vector::LoadOp::create(b, loc, VectorType::get({16}, i8), data->view,
                               L.smemAt(data->view, L.addc(r, data->rowOff),
                                        L.addc(L.mul(bi, 16), data->colOff)),
                               /*nontemporal=*/false, llvm::MaybeAlign(16));
    return vector::BitCastOp::create(b, loc, VectorType::get({4}, i32), v);
  };
  auto storeHalf = [&](Value r, Value bi, int64_t h, Value bytes16) {
    vector::StoreOp::create(
        b, loc, bytes16, tile->view,
        L.smemAt(tile->view, r, L.addc(L.mul(bi, 32), 16 * h)),
        /*nontemporal=*/false, llvm::MaybeAlign(16));
  };
  Value part = arith::RemUIOp::create(b, loc, L.tid, L.idx(per));
  Value row0 = arith::DivUIOp::create(b, loc, L.tid, L.idx(per));
  for (int64_t rr = 0; rr < rowsEach; ++rr) {
    Value r = L.addc(row0, rr * (threads / per));
    // This lane's blocks part + per * i, their scales, and the row's
    // reference: max(33, the largest code), over the row's lanes.
    SmallVector<Value> blk, scale;
    Value ref = c32(kMxfp4E4m3MinRef);
    for (int64_t i = 0; i < mine; ++i) {
      blk.push_back(L.addc(part, per * i));
      // (A lane with no last block reads its row's last scale instead.)
      if (ragged && i == mine - 1)
        blk.back() =
            arith::MinUIOp::create(b, loc, blk.back(), L.idx(blocks - 1));
      scale.push_back(scaleAt(r, blk.back()));
      ref = arith::MaxSIOp::create(b, loc, ref, scale.back());
    }
    for (int64_t bit = 1; bit < per; bit *= 2)
      ref = arith::MaxSIOp::create(b, loc, ref,
                                   gpu::ShuffleOp::create(b, loc, ref, c32(bit),
                                                          c32(L.wave),
                                                          gpu::ShuffleMode::XOR)
                                       .getShuffleResult());
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, part, L.idx(0));
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
      memref::StoreOp::create(
          b, loc, arith::SubIOp::create(b, loc, ref, c32(kMxfp4E4m3ExpOffset)),
          expTile->view, ValueRange{L.idx(0), r});
    }
    SmallVector<Value> k6s;
    Value allTable;
    for (int64_t i = 0; i < mine; ++i) {
      Value k6 = arith::AddIOp::create(
          b, loc, arith::SubIOp::create(b, loc, scale[i], ref), c32(12));
      k6s.push_back(k6);
      Value ok = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, k6, c32(1)),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, scale[i],
                                c32(255)));
      allTable = allTable
                     ? arith::AndIOp::create(b, loc, allTable, ok).getResult()
                     : ok;
    }
    scf::IfOp::create(
        b, loc, allTable,
        [&](OpBuilder &, Location) {
          for (int64_t i = 0; i < mine; ++i) {
            OpBuilder::InsertionGuard g(b);
            if (ragged && i == mine - 1) {
              auto has = scf::IfOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        L.addc(part, per * i), L.idx(blocks)),
                  /*withElseRegion=*/false);
              b.setInsertionPoint(has.thenBlock()->getTerminator());
            }
            auto [lo, hi] = mxfp4E4m3Table(b, loc, k6s[i]);
            Value w = blockWords(r, blk[i]);
            SmallVector<Value> out;
            for (int64_t j = 0; j < 4; ++j) {
              auto [a, c] = L.target.mxfp4WordToE4m3(
                  b, loc,
                  vector::ExtractOp::create(b, loc, w, ArrayRef<int64_t>{j}),
                  lo, hi);
              out.push_back(a);
              out.push_back(c);
            }
            for (int64_t h = 0; h < 2; ++h) {
              Value v = vector::FromElementsOp::create(
                  b, loc, VectorType::get({4}, i32),
                  ArrayRef(out).slice(4 * h, 4));
              storeHalf(r, blk[i], h,
                        vector::BitCastOp::create(
                            b, loc, VectorType::get({16}, i8), v));
            }
          }
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &, Location) {
          // Rare (blocks 2^12 below their row's largest, NaN scales): one
          // block an iteration, so that the code stays small.
          Value count = arith::DivUIOp::create(
              b, loc,
              arith::SubIOp::create(b, loc, L.idx(blocks + per - 1), part),
              L.idx(per));
          auto loop = scf::ForOp::create(b, loc, L.idx(0), count, L.idx(1));
          {
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToStart(loop.getBody());
            Value bi = L.add(part, L.mul(loop.getInductionVar(), per));
            Value sc = scaleAt(r, bi);
            Value w = blockWords(r, bi);
            for (int64_t h = 0; h < 2; ++h) {
              SmallVector<Value> out;
              for (int64_t n = 0; n < 16; ++n) {
                Value word = vector::ExtractOp::create(
                    b, loc, w, ArrayRef<int64_t>{2 * h + n / 8});
                Value code = arith::AndIOp::create(
                    b, loc,
                    arith::ShRUIOp::create(b, loc, word, c32(4 * (n % 8))),
                    c32(0xF));
                out.push_back(mxfp4ToE4m3(b, loc, code, sc, ref));
              }
              storeHalf(r, bi, h,
                        vector::FromElementsOp::create(
                            b, loc, VectorType::get({16}, i8), out));
            }
          }
          scf::YieldOp::create(b, loc);
        });
  }
  L.barrier();
  L.sendEarlyTile(); // the bytes' buffer is free: the next tile's copy
  L.note(op, "decoded into an e4m3 tile against row exponents in shared "
             "memory");
  L.tiles[op.getResult()] = tile;
  L.tiles[op.getExponents()] = expTile;
  return success();
}

// mxfp4: the packed tile and its scales were copied to shared memory as
// bytes by their loads (the data tile by the chip's usual KV copy:
// sm_90's prefetched asynchronous copies, CDNA's bounds-checked buffer),
// so they reach shared memory at 306 bytes a row instead of fp8's 576.
// This pass decodes them into a bf16 tile there, which the dots then read
// as they read bf16 KV. Every thread takes groups of 8 values: one 4-byte
// read, one scale byte (shared by the 4 groups of its block) and one
// 16-byte store, so that a quarter warp's stores cover 128 adjacent bytes
// (no bank conflict). Where every scale of a batch is 2 .. 252 (every
// product then a normal bf16), the chip's decode takes it
// (ChipFacts::mxfp4Decode: CDNA4's pair conversion, one instruction a
// byte; sm_90's and CDNA3's byte tables, about 2.6 and 3.6 operations a
// value), or else ScalarCodegen's mxfp4ToBf16Normal, about 10 integer
// operations a value; other batches take mxfp4ToBf16, the host lowering's
// exact decode (ScalarCodegenTest checks the two agree, the emulator's
// known answers the instruction).
/// Rounds of items decoded under one branch: their scales and codes stay
/// live together (sm_90 with 4 warps spilled with a whole tile's 36).
constexpr int64_t kDequantBatch = 9;

LogicalResult Lowering::lowerDequant(DequantOp op) {
  if (op.getExponents())
    return lowerDequantToE4m3(*this, op);
  if (kvTiles.regPrefetch && kvTiles.regPrefetch->dequant == op)
    return lowerRegisterPrefetched(op);
  auto data = get(op.getData()), scales = get(op.getScales());
  if (!data || !scales || data->kind != Kind::Smem ||
      scales->kind != Kind::Smem)
    return fail("the GPU lowering decodes shared-memory tiles only");
  auto t = op.getResult().getType();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  constexpr int64_t kGroup = 8; // values per item: 4 bytes in, 16 bytes out
  int64_t groups = cols / kGroup, items = rows * groups;
  if (items % threads)
    return fail("decodes " + Twine(items) + " groups of 8 values, not a " +
                "multiple of the program's " + Twine(threads) + " threads");
  int64_t rounds = items / threads;
  auto tile = std::make_shared<Tile>();
  tile->kind = Kind::Smem;
  tile->type = t;
  tile->view = allocSmem(rows, cols, t.getElementType());
  barrierBeforeRewrite(); // the previous iteration's dots read the region
  Type i8 = b.getI8Type(), i16 = b.getI16Type(), i32 = b.getI32Type();
  auto vecT = VectorType::get({kGroup}, i16);
  // Item it: row r, group g; its 4 bytes and its block's scale.
  // (In 32 bits: a 64-bit index division by 72 costs CDNA about 20
  // instructions an item.)
  auto coords = [&](OpBuilder &nb, Location l, Value it) {
    Value i = arith::IndexCastUIOp::create(nb, l, i32, it);
    auto back = [&](Value v) {
      return arith::IndexCastUIOp::create(nb, l, nb.getIndexType(), v)
          .getResult();
    };
    return std::pair<Value, Value>{
        back(arith::DivUIOp::create(nb, l, i, cstI32(nb, l, groups))),
        back(arith::RemUIOp::create(nb, l, i, cstI32(nb, l, groups)))};
  };
  auto at = [&](OpBuilder &nb, Location l, Value x, int64_t off) -> Value {
    return off ? arith::AddIOp::create(nb, l, x, cstIndex(nb, l, off))
                     .getResult()
               : x;
  };
  auto scaleOf = [&](OpBuilder &nb, Location l, Value it) -> Value {
    auto [r, g] = coords(nb, l, it);
    Value block =
        arith::DivUIOp::create(nb, l, g, cstIndex(nb, l, 32 / kGroup));
    Value s =
        memref::LoadOp::create(nb, l, scales->view,
                               ValueRange{at(nb, l, r, scales->rowOff),
                                          at(nb, l, block, scales->colOff)});
    return arith::ExtUIOp::create(nb, l, i32, s);
  };
  // Decodes item `it`, its 4 bytes (a little-endian i32) through `decode`
  // into 8 bf16 values (vector<8 x i16>), and stores them.
  auto item =
      [&](OpBuilder &nb, Location l, Value it,
          function_ref<Value(OpBuilder &, Location, Value word)> decode) {
        auto [r, g] = coords(nb, l, it);
        Value bytes = vector::LoadOp::create(
            nb, l, VectorType::get({kGroup / 2}, i8), data->view,
            ValueRange{
                at(nb, l, r, data->rowOff),
                at(nb, l,
                   arith::MulIOp::create(nb, l, g, cstIndex(nb, l, kGroup / 2)),
                   data->colOff)},
            /*nontemporal=*/false, llvm::MaybeAlign(kGroup / 2));
        Value word =
            vector::BitCastOp::create(nb, l, VectorType::get({1}, i32), bytes);
        word = vector::ExtractOp::create(nb, l, word, ArrayRef<int64_t>{0});
        vector::StoreOp::create(
            nb, l, decode(nb, l, word), tile->view,
            smemIndices(
                nb, l, tile->view, r,
                arith::MulIOp::create(nb, l, g, cstIndex(nb, l, kGroup))),
            /*nontemporal=*/false, llvm::MaybeAlign(16));
      };
  // Value n of the group is nibble n of the word; `decode` maps its code.
  auto perCode =
      [&](function_ref<Value(OpBuilder &, Location, Value code)> decode) {
        return [=](OpBuilder &nb, Location l, Value word) -> Value {
          SmallVector<Value> out;
          for (int64_t n = 0; n < kGroup; ++n) {
            Value code = arith::AndIOp::create(
                nb, l,
                arith::ShRUIOp::create(nb, l, word, cstI32(nb, l, 4 * n)),
                cstI32(nb, l, 0xF));
            out.push_back(decode(nb, l, code));
          }
          return vector::FromElementsOp::create(nb, l, vecT, out);
        };
      };
  auto itemOf = [&](OpBuilder &nb, Location l, Value round) -> Value {
    return arith::AddIOp::create(
        nb, l, tid,
        arith::MulIOp::create(nb, l, round, cstIndex(nb, l, threads)));
  };
  // One branch per thread and batch of rounds: when every scale of the
  // batch's items is 2 .. 252 (all but the extremes: subnormal or infinite
  // results, NaN), the short normal-only decode in straight-line code,
  // whose items the backend interleaves; otherwise the exact decode in a
  // loop, which real caches never take. (A branch per item, measured on
  // the H200, serialised the items; a whole tile's 36 rounds at once, on
  // sm_90 with 4 warps, spilled registers.)
  int64_t batch = rounds;
  while (batch > kDequantBatch)
    batch = batch % 2 == 0 ? batch / 2 : (batch % 3 == 0 ? batch / 3 : 1);
  auto batches =
      scf::ForOp::create(b, loc(), idx(0), idx(rounds / batch), idx(1));
  {
    OpBuilder::InsertionGuard ig(b);
    b.setInsertionPointToStart(batches.getBody());
    Value first = mul(batches.getInductionVar(), batch);
    SmallVector<Value> scaleVals;
    Value allNormal;
    for (int64_t i = 0; i < batch; ++i) {
      scaleVals.push_back(scaleOf(b, loc(), itemOf(b, loc(), addc(first, i))));
      Value n = mxfp4ScaleIsNormal(b, loc(), scaleVals.back());
      allNormal =
          allNormal ? arith::AndIOp::create(b, loc(), allNormal, n).getResult()
                    : n;
    }
    scf::IfOp::create(
        b, loc(), allNormal,
        [&](OpBuilder &nb, Location l) {
          for (int64_t i = 0; i < batch; ++i) {
            Value it = itemOf(nb, l, at(nb, l, first, i)), s = scaleVals[i];
            if (target.chip.facts.mxfp4Decode != Mxfp4Decode::Software) {
              item(nb, l, it, [&](OpBuilder &wb, Location wl, Value word) {
                return target.mxfp4WordToBf16(wb, wl, word, s);
              });
              continue;
            }
            Value base = mxfp4Base(nb, l, s);
            item(nb, l, it,
                 perCode([&](OpBuilder &cb, Location cl, Value code) -> Value {
                   return arith::TruncIOp::create(
                       cb, cl, i16, mxfp4ToBf16Normal(cb, cl, code, base));
                 }));
          }
          scf::YieldOp::create(nb, l);
        },
        [&](OpBuilder &nb, Location l) {
          auto loop =
              scf::ForOp::create(nb, l, cstIndex(nb, l, 0),
                                 cstIndex(nb, l, batch), cstIndex(nb, l, 1));
          OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
          Value it = itemOf(
              lb, l,
              arith::AddIOp::create(lb, l, first, loop.getInductionVar()));
          Value scale = scaleOf(lb, l, it);
          item(lb, l, it, perCode([&](OpBuilder &cb, Location cl, Value code) {
                 return mxfp4ToBf16(cb, cl, code, scale);
               }));
          scf::YieldOp::create(nb, l);
        });
  }
  // Straight-line on chips that unroll tile loops: the KV loop body keeps
  // a static instruction count (mla-compile's report).
  if (target.chip.tuning.unrollTileLoops)
    (void)loopUnrollFull(batches);
  barrier();
  note(op, "decoded into a bf16 tile in shared memory");
  tiles[op.getResult()] = tile;
  return success();
}

} // namespace mlir::mla::gpulower
