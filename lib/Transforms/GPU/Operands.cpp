//===- Operands.cpp - matrix operands read from shared memory
//---------------===//
//
// Part of mla-lower-to-gpu: methods of Lowering (Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

namespace mlir::mla::gpulower {

Value Lowering::readF32(const Tile &t, Value r, Value c) {
  if (t.kind == Kind::Expr)
    return t.fn(b, loc(), readF32(*t.src, r, c));
  Value v = memref::LoadOp::create(
      b, loc(), t.view, smemAt(t.view, addc(r, t.rowOff), addc(c, t.colOff)));
  return toF32(b, loc(), v, t.type.getElementType());
}

Value Lowering::readAs(const Tile &t, Value r, Value c, Type op) {
  if (t.kind != Kind::Smem)
    return fromF32(b, loc(), readF32(t, r, c), op);
  Value v = memref::LoadOp::create(
      b, loc(), t.view, smemAt(t.view, addc(r, t.rowOff), addc(c, t.colOff)));
  return storedToOperand(v, t.type.getElementType(), op);
}

std::array<Value, 2> Lowering::pairToOperand(Value pair, Type elt, Type op) {
  if (isFp8(elt))
    if (auto hw = target.fp8PairToOperand(b, loc(), pair, elt, op))
      return {hw->first, hw->second};
  auto one = [&](int64_t i) {
    return storedToOperand(
        vector::ExtractOp::create(b, loc(), pair, ArrayRef<int64_t>{i}), elt,
        op);
  };
  return {one(0), one(1)};
}

Value Lowering::storedToOperand(Value stored, Type elt, Type op) {
  if (elt == op)
    return stored;
  if (isFp8(elt))
    if (auto hw = target.fp8ToOperand(b, loc(), stored, elt, op))
      return *hw;
  Value f = toF32(b, loc(), stored, elt);
  if (!isFp8(elt) || op.isF16())
    return fromF32(b, loc(), f, op);
  Value bits = arith::BitcastOp::create(b, loc(), b.getI32Type(), f);
  bits = arith::ShRUIOp::create(b, loc(), bits, cstI32(b, loc(), 16));
  return arith::TruncIOp::create(b, loc(), b.getI16Type(), bits);
}

SmallVector<Value> Lowering::readRun(const Tile &t, Value r, Value c, int64_t w,
                                     Type op) {
  Type elt = t.type.getElementType();
  Type st = storageType(elt);
  int64_t bytes = storedBytes(elt);
  Value run = vector::LoadOp::create(
      b, loc(), VectorType::get({w}, st), t.view,
      smemAt(t.view, addc(r, t.rowOff), addc(c, t.colOff)),
      /*nontemporal=*/false, llvm::MaybeAlign(w * bytes));
  SmallVector<Value> out;
  for (int64_t j = 0; j < w; j += 2) {
    Value pair = w == 2 ? run
                        : vector::ShuffleOp::create(b, loc(), run, run,
                                                    ArrayRef<int64_t>{j, j + 1})
                              .getResult();
    llvm::append_range(out, pairToOperand(pair, elt, op));
  }
  return out;
}

SmallVector<SmallVector<int64_t>>
Lowering::operandRuns(const Tile &t, const LaneLayout &layout, bool transposed,
                      ArrayRef<int64_t> widths) {
  int64_t n = layout.elemsPerLane();
  int64_t bytes = storedBytes(t.type.getElementType());
  auto along = [&](Coord c) { return transposed ? c.row : c.col; };
  auto step = [&](Coord c, int64_t j) {
    return transposed ? Coord{c.row + j, c.col} : Coord{c.row, c.col + j};
  };
  auto indexOf = [&](Coord c) -> int64_t {
    for (int64_t i = 0; i < n; ++i)
      if (layout.map(0, i) == c)
        return i;
    return -1;
  };
  SmallVector<SmallVector<int64_t>> runs;
  SmallVector<bool> done(n, false);
  for (int64_t i = 0; i < n; ++i) {
    if (done[i])
      continue;
    Coord c = layout.map(0, i);
    SmallVector<int64_t> ids{i};
    for (int64_t w : widths) {
      if (t.kind != Kind::Smem || along(c) % w || t.colOff % w ||
          rowStrideBytes(t) % (w * bytes) ||
          !llvm::all_of(layout.laneBases,
                        [&](Coord base) { return along(base) % w == 0; }))
        continue;
      SmallVector<int64_t> run{i};
      for (int64_t j = 1; j < w; ++j) {
        int64_t e = indexOf(step(c, j));
        if (e < 0 || done[e])
          break;
        run.push_back(e);
      }
      if (static_cast<int64_t>(run.size()) == w) {
        ids = run;
        break;
      }
    }
    for (int64_t e : ids)
      done[e] = true;
    runs.push_back(ids);
  }
  return runs;
}

SmallVector<Value>
Lowering::readOperand(const Tile &t, const LaneLayout &layout, bool transposed,
                      Type op,
                      function_ref<std::pair<Value, Value>(Coord)> at) {
  Type elt = t.type.getElementType();
  SmallVector<int64_t> widths;
  if (elt.isBF16() || elt.isF16() || isFp8(elt))
    for (int64_t w = 16 / storedBytes(elt); w > 1; w /= 2)
      widths.push_back(w);
  SmallVector<Value> out(layout.elemsPerLane());
  for (const SmallVector<int64_t> &run :
       operandRuns(t, layout, transposed, widths)) {
    auto [row, col] = at(layout.map(0, run.front()));
    if (run.size() == 1) {
      out[run.front()] = readAs(t, row, col, op);
      continue;
    }
    for (auto [e, v] : llvm::zip(run, readRun(t, row, col, run.size(), op)))
      out[e] = v;
  }
  return out;
}

SmallVector<Value>
Lowering::readOperandRaw(const Tile &t, const LaneLayout &layout,
                         bool transposed,
                         function_ref<std::pair<Value, Value>(Coord)> at) {
  Type elt = t.type.getElementType();
  Type st = storageType(elt);
  int64_t bytes = storedBytes(elt);
  SmallVector<int64_t> widths;
  for (int64_t w = 16 / bytes; w > 1; w /= 2)
    widths.push_back(w);
  SmallVector<Value> out(layout.elemsPerLane());
  for (const SmallVector<int64_t> &run :
       operandRuns(t, layout, transposed, widths)) {
    auto [row, col] = at(layout.map(0, run.front()));
    if (t.kind != Kind::Smem) {
      out[run.front()] = fromF32(b, loc(), readF32(t, row, col), elt);
      continue;
    }
    Value r = addc(row, t.rowOff), c = addc(col, t.colOff);
    if (run.size() == 1) {
      out[run.front()] =
          memref::LoadOp::create(b, loc(), t.view, smemAt(t.view, r, c));
      continue;
    }
    int64_t w = run.size();
    Value v = vector::LoadOp::create(
        b, loc(), VectorType::get({w}, st), t.view, smemAt(t.view, r, c),
        /*nontemporal=*/false, llvm::MaybeAlign(w * bytes));
    for (auto [j, e] : llvm::enumerate(run))
      out[e] =
          vector::ExtractOp::create(b, loc(), v, ArrayRef<int64_t>{(int64_t)j});
  }
  return out;
}

SmallVector<SmallVector<Value>>
Lowering::transposeBytes(ArrayRef<SmallVector<Value>> loads, int64_t n,
                         int64_t tiles, int64_t w, bool raw, Type elt,
                         Type op) {
  auto extract = [&](Value v, int64_t i) -> Value {
    return vector::ExtractOp::create(b, loc(), v, ArrayRef<int64_t>{i});
  };
  auto perm = [&](Value x, Value y, std::array<int64_t, 4> sel) {
    return target.bytePerm(b, loc(), x, y, sel);
  };
  // An i32 word as a vector of i8 or i16.
  auto split = [&](Value word, Type t) -> Value {
    return bitcastToVector(
        b, loc(), word, VectorType::get({32 / t.getIntOrFloatBitWidth()}, t));
  };
  SmallVector<SmallVector<Value>> words(n); // words[e][c]: bytes 4c .. 4c + 3
  for (int64_t e = 0; e < n; ++e)
    for (Value v : loads[e]) {
      Value ws = vector::BitCastOp::create(
          b, loc(), VectorType::get({w / 4}, b.getI32Type()), v);
      for (int64_t c = 0; c < w / 4; ++c)
        words[e].push_back(extract(ws, c));
    }
  SmallVector<SmallVector<Value>> out(tiles);
  for (int64_t j0 = 0; j0 < tiles; j0 += 4) {
    // lo[e / 2]: rows e, e + 1 interleaved: {tiles j0, j0+1 | j0+2, j0+3}.
    SmallVector<std::array<Value, 2>> lo(n / 2);
    for (int64_t e = 0; e < n; e += 2) {
      Value x = words[e][j0 / 4], y = words[e + 1][j0 / 4];
      lo[e / 2] = {perm(x, y, {0, 4, 1, 5}), perm(x, y, {2, 6, 3, 7})};
    }
    for (int64_t t = 0; t < 4; ++t) {
      SmallVector<Value> &dst = out[j0 + t];
      if (raw && n % 4 == 0) {
        for (int64_t e = 0; e < n; e += 4) {
          Value x = lo[e / 2][t / 2], y = lo[e / 2 + 1][t / 2];
          Value v =
              split(t % 2 ? perm(x, y, {2, 3, 6, 7}) : perm(x, y, {0, 1, 4, 5}),
                    b.getI8Type());
          for (int64_t i = 0; i < 4; ++i)
            dst.push_back(extract(v, i));
        }
        continue;
      }
      for (int64_t e = 0; e < n; e += 2) {
        Value half = extract(split(lo[e / 2][t / 2], b.getI16Type()), t % 2);
        Value pair = bitcastToVector(b, loc(), half,
                                     VectorType::get({2}, b.getI8Type()));
        if (raw)
          dst.append({extract(pair, 0), extract(pair, 1)});
        else
          llvm::append_range(dst, pairToOperand(pair, elt, op));
      }
    }
  }
  return out;
}

SmallVector<Value> Lowering::readAByLdmatrix(const Tile &t, Value kk) {
  Value l8 = arith::AndIOp::create(b, loc(), lane, idx(7));
  Value half = arith::AndIOp::create(
      b, loc(), arith::ShRUIOp::create(b, loc(), lane, idx(3)), idx(1));
  Value row = add(l8, mul(half, 8));
  Value col = add(kk, mul(arith::ShRUIOp::create(b, loc(), lane, idx(4)), 8));
  return target.ldmatrixX4(b, loc(), t.view, addc(row, t.rowOff),
                           addc(col, t.colOff),
                           storageType(t.type.getElementType()));
}

SmallVector<SmallVector<Value>>
Lowering::readAcrossTiles(const Tile &t, const LaneLayout &layout,
                          int64_t tiles, bool raw, Type op,
                          function_ref<std::pair<Value, Value>(Coord)> at) {
  if (t.kind != Kind::Smem || tiles < 2)
    return {};
  Type elt = t.type.getElementType();
  Type st = storageType(elt);
  int64_t bytes = storedBytes(elt);
  int64_t w = 1;
  while (tiles % (2 * w) == 0 && 2 * w * bytes <= 16 &&
         t.colOff % (2 * w) == 0 && rowStrideBytes(t) % (2 * w * bytes) == 0)
    w *= 2;
  if (w == 1)
    return {};
  int64_t n = layout.elemsPerLane();
  // loads[e][s]: element e of tiles s * w ... s * w + w - 1.
  SmallVector<SmallVector<Value>> loads(n);
  for (int64_t e = 0; e < n; ++e) {
    auto [row, col] = at(layout.map(0, e));
    for (int64_t s = 0; s < tiles; s += w)
      loads[e].push_back(vector::LoadOp::create(
          b, loc(), VectorType::get({w}, st), t.view,
          smemAt(t.view, addc(row, t.rowOff), addc(col, t.colOff + s)),
          /*nontemporal=*/false, llvm::MaybeAlign(w * bytes)));
  }
  SmallVector<SmallVector<Value>> out(tiles);
  if (bytes == 1 && w % 4 == 0 && n % 2 == 0 && (raw || isFp8(elt)))
    return transposeBytes(loads, n, tiles, w, raw, elt, op);
  SmallVector<SmallVector<Value>> stored(n);
  for (int64_t e = 0; e < n; ++e)
    for (Value v : loads[e])
      for (int64_t j = 0; j < w; ++j)
        stored[e].push_back(
            vector::ExtractOp::create(b, loc(), v, ArrayRef<int64_t>{j}));
  for (int64_t j = 0; j < tiles; ++j) {
    SmallVector<Value> column;
    for (int64_t e = 0; e < n; ++e)
      column.push_back(stored[e][j]);
    out[j] = storedToOperands(column, elt, op, raw);
  }
  return out;
}

SmallVector<Value> Lowering::storedToOperands(ArrayRef<Value> stored, Type elt,
                                              Type op, bool raw) {
  SmallVector<Value> out;
  for (size_t e = 0; e < stored.size(); ++e) {
    if (raw || elt == op) {
      out.push_back(stored[e]);
    } else if (isFp8(elt) && e + 1 < stored.size()) {
      Value pair = vector::FromElementsOp::create(
          b, loc(), VectorType::get({2}, storageType(elt)),
          ValueRange{stored[e], stored[e + 1]});
      llvm::append_range(out, pairToOperand(pair, elt, op));
      ++e;
    } else {
      out.push_back(storedToOperand(stored[e], elt, op));
    }
  }
  return out;
}

} // namespace mlir::mla::gpulower
