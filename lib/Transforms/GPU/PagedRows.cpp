//===- PagedRows.cpp - which source row a paged tile's row is -------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h). A paged
// mla.load (docs/Design.md, "Paged KV") gathers its rows through a page
// table; these map a tile row to its source row, once per tile where the
// tile lies within one page (then it is a contiguous tile) and per copy
// otherwise. LowerLoad.cpp's copies call them.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

PagedRows Lowering::pagedRows(LoadOp op, Value source, Value start, Value bound,
                              Value table, Value offset) {
  PagedRows p;
  p.table = table;
  p.offset = offset;
  p.start = start;
  p.bound = bound;
  p.pageSize = static_cast<int64_t>(*op.getPageSize());
  p.sourceRows = memref::DimOp::create(b, loc(), source, 0);
  int64_t rows = op.getResult().getType().getDimSize(0);
  if (p.pageSize >= rows) {
    // The last row in range: the tile's, or the bound's (start < bound
    // wherever a tile is loaded).
    Value last = addc(start, rows);
    if (bound)
      last = arith::MinSIOp::create(b, loc(), last, bound);
    last = arith::SubIOp::create(b, loc(), last, idx(1));
    p.first = pageEntry(op, start, table, offset);
    p.last = pageEntry(op, last, table, offset);
  }
  return p;
}

bool Lowering::tilesWithinOnePage(LoadOp op) {
  if (!op.isPaged())
    return false;
  int64_t rows = op.getResult().getType().getDimSize(0);
  int64_t page = static_cast<int64_t>(*op.getPageSize());
  // Tiles start at multiples of their rows, which divide the page.
  auto iv = dyn_cast<BlockArgument>(op.getIndices()[0]);
  auto loop =
      iv ? dyn_cast<KvLoopOp>(iv.getOwner()->getParentOp()) : KvLoopOp();
  if (page % rows || !loop || iv.getArgNumber() != 0 ||
      static_cast<int64_t>(loop.getStep()) % rows)
    return false;
  auto range = loop.getLower().getDefiningOp<SplitRangeOp>();
  return range && range.getLo() == loop.getLower() &&
         static_cast<int64_t>(range.getBlockN()) % rows == 0;
}

Value Lowering::pageEntry(LoadOp op, Value start, Value table, Value offset) {
  int64_t page = static_cast<int64_t>(*op.getPageSize());
  Value at = add(offset, arith::DivUIOp::create(b, loc(), start, idx(page)));
  return arith::IndexCastOp::create(
      b, loc(), b.getIndexType(),
      memref::LoadOp::create(b, loc(), table, ValueRange{at}));
}

std::pair<Value, Value> Lowering::onePageRange(LoadOp op, Value source,
                                               Value start, Value bound,
                                               Value e) {
  using P = arith::CmpIPredicate;
  int64_t page = static_cast<int64_t>(*op.getPageSize());
  int64_t rows = op.getResult().getType().getDimSize(0);
  Value first =
      add(mul(e, page), arith::RemUIOp::create(b, loc(), start, idx(page)));
  Value sourceRows = memref::DimOp::create(b, loc(), source, 0);
  Value ok = arith::AndIOp::create(
      b, loc(), arith::CmpIOp::create(b, loc(), P::sge, e, idx(0)),
      arith::CmpIOp::create(b, loc(), P::slt, first, sourceRows));
  Value end = bound ? bound : addc(start, rows);
  Value last = arith::MinSIOp::create(
      b, loc(), add(first, arith::SubIOp::create(b, loc(), end, start)),
      sourceRows);
  return {arith::SelectOp::create(b, loc(), ok, first, idx(0)),
          arith::SelectOp::create(b, loc(), ok, last, idx(0))};
}

std::pair<Value, Value> Lowering::pagedRow(const PagedRows &p, Value r) {
  using P = arith::CmpIPredicate;
  Value x = add(p.start, r);
  Value in;
  if (p.bound)
    in = arith::CmpIOp::create(b, loc(), P::slt, x, p.bound);
  Value page = arith::DivUIOp::create(b, loc(), x, idx(p.pageSize));
  Value e;
  if (p.first) {
    Value firstPage =
        arith::DivUIOp::create(b, loc(), p.start, idx(p.pageSize));
    Value same = arith::CmpIOp::create(b, loc(), P::eq, page, firstPage);
    e = arith::SelectOp::create(b, loc(), same, p.first, p.last);
  } else {
    // Rows past the bound read the first row's entry (which is in range)
    // instead of an entry that may lie past the sequence's table.
    Value at =
        in ? arith::SelectOp::create(
                 b, loc(), in, page,
                 arith::DivUIOp::create(b, loc(), p.start, idx(p.pageSize)))
                 .getResult()
           : page;
    e = arith::IndexCastOp::create(
        b, loc(), b.getIndexType(),
        memref::LoadOp::create(b, loc(), p.table,
                               ValueRange{add(p.offset, at)}));
  }
  Value row = add(mul(e, p.pageSize),
                  arith::RemUIOp::create(b, loc(), x, idx(p.pageSize)));
  Value ok = arith::AndIOp::create(
      b, loc(), arith::CmpIOp::create(b, loc(), P::sge, e, idx(0)),
      arith::CmpIOp::create(b, loc(), P::slt, row, p.sourceRows));
  if (in)
    ok = arith::AndIOp::create(b, loc(), ok, in);
  return {arith::SelectOp::create(b, loc(), ok, row, idx(0)), ok};
}

} // namespace mlir::mla::gpulower
