//===- LowerDequant.cpp - block-scaled KV tiles decoded in shared memory
//---===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

// mxfp4: the packed tile and its scales were copied to shared memory as
// bytes by their loads (the data tile by the chip's usual KV copy:
// sm_90's prefetched asynchronous copies, CDNA's bounds-checked buffer),
// so they reach shared memory at 306 bytes a row instead of fp8's 576.
// This pass decodes them into a bf16 tile there, which the dots then read
// as they read bf16 KV. Every thread takes groups of 8 values: one 4-byte
// read, one scale byte (shared by the 4 groups of its block) and one
// 16-byte store, so that a quarter warp's stores cover 128 adjacent bytes
// (no bank conflict). The decode is ScalarCodegen's mxfp4ToBf16, the same
// integer arithmetic as the host lowering's.
LogicalResult Lowering::lowerDequant(DequantOp op) {
  auto data = get(op.getData()), scales = get(op.getScales());
  if (!data || !scales || data->kind != Kind::Smem ||
      scales->kind != Kind::Smem)
    return fail("the GPU lowering decodes shared-memory tiles only");
  auto t = op.getResult().getType();
  int64_t rows = t.getDimSize(0), cols = t.getDimSize(1);
  constexpr int64_t kGroup = 8; // values per item: 4 bytes in, 16 bytes out
  int64_t groups = cols / kGroup, items = rows * groups;
  auto tile = std::make_shared<Tile>();
  tile->kind = Kind::Smem;
  tile->type = t;
  tile->view = allocSmem(rows, cols, t.getElementType());
  barrierBeforeRewrite(); // the previous iteration's dots read the region
  Type i8 = b.getI8Type(), i16 = b.getI16Type(), i32 = b.getI32Type();
  auto item = [&](Value it) {
    Value r = arith::DivUIOp::create(b, loc(), it, idx(groups));
    Value g = arith::RemUIOp::create(b, loc(), it, idx(groups));
    Value bytes = vector::LoadOp::create(
        b, loc(), VectorType::get({kGroup / 2}, i8), data->view,
        ValueRange{addc(r, data->rowOff),
                   addc(mul(g, kGroup / 2), data->colOff)},
        /*nontemporal=*/false, llvm::MaybeAlign(kGroup / 2));
    Value word =
        vector::BitCastOp::create(b, loc(), VectorType::get({1}, i32), bytes);
    word = vector::ExtractOp::create(b, loc(), word, ArrayRef<int64_t>{0});
    Value block = arith::DivUIOp::create(b, loc(), g, idx(32 / kGroup));
    Value scale = memref::LoadOp::create(
        b, loc(), scales->view,
        ValueRange{addc(r, scales->rowOff), addc(block, scales->colOff)});
    scale = arith::ExtUIOp::create(b, loc(), i32, scale);
    SmallVector<Value> out;
    for (int64_t n = 0; n < kGroup; ++n) {
      // Value n of the group: nibble n of the little-endian word.
      Value code = arith::AndIOp::create(
          b, loc(),
          arith::ShRUIOp::create(b, loc(), word, cstI32(b, loc(), 4 * n)),
          cstI32(b, loc(), 0xF));
      out.push_back(mxfp4ToBf16(b, loc(), code, scale));
    }
    Value v = vector::FromElementsOp::create(
        b, loc(), VectorType::get({kGroup}, i16), out);
    vector::StoreOp::create(b, loc(), v, tile->view,
                            ValueRange{r, mul(g, kGroup)},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  };
  bool even = items % threads == 0;
  auto loop =
      even ? scf::ForOp::create(b, loc(), idx(0), idx(items / threads), idx(1))
           : scf::ForOp::create(b, loc(), tid, idx(items), idx(threads));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    item(even ? add(tid, mul(loop.getInductionVar(), threads))
              : loop.getInductionVar());
  }
  // Straight-line on chips that unroll tile loops: the KV loop body keeps
  // a static instruction count (mla-compile's report).
  if (even && target.chip.tuning.unrollTileLoops)
    (void)loopUnrollFull(loop);
  barrier();
  note(op, "decoded into a bf16 tile in shared memory");
  tiles[op] = tile;
  return success();
}

} // namespace mlir::mla::gpulower
