//===- MLAExpandDecode.cpp - spec -> stage-1 / stage-2 kernels ------------===//
//
// Builds the two flash-decoding kernels of an `mla.decode` spec in tile ops.
// The kernel ABI written here is the one launchers and the host runner use;
// docs/Design.md ("Kernel ABI") lists it.
//
//===----------------------------------------------------------------------===//
#include "mla/MLAOps.h"
#include "mla/Passes.h"
#include "mla/SplitCostModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>
#include <limits>

namespace mlir::mla {
#define GEN_PASS_DEF_MLAEXPANDDECODE
#include "mla/Passes.h.inc"
} // namespace mlir::mla

using namespace mlir;
using namespace mlir::mla;

namespace {

constexpr double kLog2E = 1.4426950408889634;

struct DecodeShape {
  int64_t heads, qkDim, vDim, blockN;
  Type qType, kvType, outType;
  bool kvScale;
  bool mxfp4;      ///< kv_scale block32_e8m0: packed e2m1 pairs and e8m0 scales
  Type qpType;     ///< what Q and P are rounded to for the matrix products
  int64_t qSeqLen; ///< query tokens per sequence (causal among themselves)
  int64_t blockM;  ///< query rows per stage-1 program: part of one token
                   ///< (divides heads) or whole tokens
  StringRef layout; ///< kv_layout: contiguous, token_indices, block_table
  int64_t pageSize; ///< rows per page (block_table)
  int64_t qpTerms = 1; ///< fp8 terms of Q and P (qp_terms): 1, or 2 stacked

  bool tokenIndices() const { return layout == "token_indices"; }
  bool blockTable() const { return layout == "block_table"; }

  /// Query rows of one sequence, token-major (row = token * heads + head).
  int64_t rows() const { return qSeqLen * heads; }
  /// Stage-1 programs per (sequence, split).
  int64_t groups() const { return rows() / blockM; }
};

/// Types of the global buffers both stages share.
struct Buffers {
  MemRefType q, kv, scale, indptr, partial, lse, out, blockTable;
  MemRefType kvScales; ///< mxfp4: e8m0 bytes [rows, blocks], padded stride

  Buffers(MLIRContext *ctx, const DecodeShape &s) {
    int64_t dyn = ShapedType::kDynamic;
    Type f32 = Float32Type::get(ctx);
    q = MemRefType::get({dyn, s.heads, s.qkDim}, s.qType);
    Type i8 = IntegerType::get(ctx, 8);
    // mxfp4 rows are qk_dim / 2 bytes of packed e2m1 pairs.
    kv = s.mxfp4 ? MemRefType::get({dyn, s.qkDim / 2}, i8)
                 : MemRefType::get({dyn, s.qkDim}, s.kvType);
    kvScales = MemRefType::get({dyn, dyn}, i8);
    scale = MemRefType::get({1}, f32);
    indptr = MemRefType::get({dyn}, IntegerType::get(ctx, 32));
    blockTable = MemRefType::get({dyn, dyn}, IntegerType::get(ctx, 32));
    partial = MemRefType::get({dyn, dyn, s.rows(), s.vDim}, f32);
    lse = MemRefType::get({dyn, dyn, s.rows()}, f32);
    out = MemRefType::get({dyn, s.heads, s.vDim}, s.outType);
  }
};

/// `(index) memref.load %indptr[%i]` (sign-extended).
Value loadIndex(OpBuilder &b, Location loc, Value indptr, Value i) {
  Value v = memref::LoadOp::create(b, loc, indptr, ValueRange{i});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate p, Value x,
          Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}

// The indptrs are inputs, and no content of theirs may make a kernel touch
// memory outside its buffers (docs/Reliability.md). Each program checks its
// sequence's entries against the rows its buffers hold (their memref
// descriptors' dim 0, which the launcher sets from the real buffer sizes)
// before it addresses anything with them.

/// Sequence `batch`'s first Q / output row, `qo_indptr[batch]`, and whether
/// its `qSeqLen` rows are rows of every buffer in `buffers`
/// (`0 <= row <= dim(buffer, 0) - qSeqLen`). An invalid row reads row 0
/// and writes nothing.
std::pair<Value, Value> guardedQRow(OpBuilder &b, Location loc, Value qoIndptr,
                                    Value batch, ArrayRef<Value> buffers,
                                    int64_t qSeqLen) {
  using P = arith::CmpIPredicate;
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value row = loadIndex(b, loc, qoIndptr, batch);
  Value ok = cmp(b, loc, P::sge, row, c0);
  for (Value buf : buffers) {
    Value rows = memref::DimOp::create(b, loc, buf, 0);
    if (qSeqLen > 1)
      rows = arith::SubIOp::create(
          b, loc, rows, arith::ConstantIndexOp::create(b, loc, qSeqLen - 1));
    ok = arith::AndIOp::create(b, loc, ok, cmp(b, loc, P::slt, row, rows));
  }
  return {arith::SelectOp::create(b, loc, ok, row, c0), ok};
}

/// Sequence `batch`'s KV range as (first row, length). A range that is not
/// `0 <= kv_indptr[b] <= kv_indptr[b+1] <= dim(kv, 0)` is empty: the
/// sequence's output is that of a zero-length sequence (0, LSE -inf).
std::pair<Value, Value> guardedKvRange(OpBuilder &b, Location loc,
                                       Value kvIndptr, Value batch, Value kv) {
  using P = arith::CmpIPredicate;
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value begin = loadIndex(b, loc, kvIndptr, batch);
  Value next = arith::AddIOp::create(b, loc, batch, c1);
  Value end = loadIndex(b, loc, kvIndptr, next);
  Value rows = memref::DimOp::create(b, loc, kv, 0);
  // (One statement per op: the IR's order must not depend on the C++
  // compiler's argument evaluation order.)
  Value ok = cmp(b, loc, P::sge, begin, c0);
  Value rising = cmp(b, loc, P::sle, begin, end);
  ok = arith::AndIOp::create(b, loc, ok, rising);
  Value inside = cmp(b, loc, P::sle, end, rows);
  ok = arith::AndIOp::create(b, loc, ok, inside);
  Value len = arith::SubIOp::create(b, loc, end, begin);
  Value first = arith::SelectOp::create(b, loc, ok, begin, c0);
  Value length = arith::SelectOp::create(b, loc, ok, len, c0);
  return {first, length};
}

/// Sequence `batch`'s length in a block-table cache, `cache_seqlens[b]`,
/// and its table row's first entry in the flattened table. A length that is
/// negative or more than the table row's pages hold, or a sequence past
/// the table's rows, is 0 (the output of a zero-length sequence): the
/// kernel then reads table entries of its own row only. So is every
/// sequence of a cache with no rows, whose entries all name no row (its
/// output is 0 either way): sm_90a's tensor-map copies need a map, which
/// the launcher cannot build over no rows.
std::pair<Value, Value> guardedTableRange(OpBuilder &b, Location loc,
                                          Value seqlens, Value batch,
                                          Value table, int64_t pageSize,
                                          Value kv) {
  using P = arith::CmpIPredicate;
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value len = loadIndex(b, loc, seqlens, batch);
  Value tableRows = memref::DimOp::create(b, loc, table, 0);
  Value cols = memref::DimOp::create(b, loc, table, c1);
  Value capacity = arith::MulIOp::create(
      b, loc, cols, arith::ConstantIndexOp::create(b, loc, pageSize));
  Value ok = cmp(b, loc, P::sge, len, c0);
  Value fits = cmp(b, loc, P::sle, len, capacity);
  ok = arith::AndIOp::create(b, loc, ok, fits);
  Value hasRow = cmp(b, loc, P::slt, batch, tableRows);
  ok = arith::AndIOp::create(b, loc, ok, hasRow);
  Value cacheRows = memref::DimOp::create(b, loc, kv, c0);
  Value hasCache = cmp(b, loc, P::sgt, cacheRows, c0);
  ok = arith::AndIOp::create(b, loc, ok, hasCache);
  Value length = arith::SelectOp::create(b, loc, ok, len, c0);
  Value first = arith::MulIOp::create(b, loc, batch, cols);
  return {first, length};
}

RankedTensorType tile(ArrayRef<int64_t> shape, Type elt) {
  return RankedTensorType::get(shape, elt);
}

/// The single-launch combine at the end of stage 1 (docs/Design.md, "One
/// launch for small batches"): when the launcher ran the program's splits
/// as one thread-block cluster, the splits combine their partials
/// themselves once all are stored, each split a share of the program's
/// `blockM` rows (stage 2's work, without its launch).
/// `qAt` is where the program's first row goes in `outDst`, `rowDim` the
/// index that counts rows there. Launched otherwise, the condition is false
/// and stage 2 combines.
void buildClusterCombine(OpBuilder &b, Location loc, const DecodeShape &s,
                         int64_t numWarps, Value numSplits, Value partial,
                         Value lse, Value batch, Value split, Value row0,
                         Value qOk, Value outDst, ArrayRef<Value> qAt,
                         unsigned rowDim) {
  auto sync = SplitClusterSyncOp::create(b, loc, b.getI1Type(), numSplits);
  auto all = scf::IfOp::create(b, loc, sync.getAll(), /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(all.thenBlock());
  // Rows r .. r + rows - 1 of the program's block, combined over the
  // splits (at most maxSplits) and stored.
  auto combine = [&](Value r, int64_t rows, int64_t maxSplits) {
    Value combined = SplitKReduceOp::create(
        b, loc, tile({rows, s.vDim}, b.getF32Type()), partial, lse, batch,
        arith::AddIOp::create(b, loc, row0, r), numSplits,
        b.getI64IntegerAttr(maxSplits));
    OpBuilder::InsertionGuard inner(b);
    auto valid = scf::IfOp::create(b, loc, qOk, /*withElseRegion=*/false);
    b.setInsertionPointToStart(valid.thenBlock());
    SmallVector<Value> at(qAt);
    at[rowDim] = arith::AddIOp::create(b, loc, at[rowDim], r);
    StoreOp::create(b, loc, combined, outDst, at, Value());
  };
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  // A power-of-two count that divides the rows: split s takes rows
  // s * rows / n .. as one tile, all n splits' loads in one round (the
  // lowering's width is max_splits = n): one L2 round trip, where the
  // row-pair loop below takes two (16 splits: 2 rounds of 8; 4 splits: 2
  // pairs in turn).
  // Only where a thread combines at most 8 values (2 runs of 4) of its
  // rows (threads: the 32-lane warps of the chips with clusters), so that
  // the combine stays below the KV loop's registers.
  for (int64_t n = 2; n <= kMaxClusterPrograms; n *= 2) {
    if (s.blockM % n)
      break;
    if (s.blockM / n * s.vDim > 8 * numWarps * 32)
      continue;
    Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     numSplits, cst(n));
    auto ifN = scf::IfOp::create(b, loc, is, /*withElseRegion=*/true);
    b.setInsertionPointToStart(ifN.thenBlock());
    int64_t rows = s.blockM / n;
    combine(arith::MulIOp::create(b, loc, split, cst(rows)), rows, n);
    b.setInsertionPointToStart(ifN.elseBlock());
  }
  // Any other count: row pairs (2 x v_dim values are one 16-byte run per
  // thread of 256, split_k_reduce's vector loads), split s taking pairs s,
  // s + n, ...
  int64_t unitRows = s.blockM % 2 == 0 ? 2 : 1;
  auto loop =
      scf::ForOp::create(b, loc, split, cst(s.blockM / unitRows), numSplits);
  b.setInsertionPointToStart(loop.getBody());
  combine(arith::MulIOp::create(b, loc, loop.getInductionVar(), cst(unitRows)),
          unitRows, kMaxClusterPrograms);
}

/// Stage 1: one program per (sequence, split).
void buildStage1(OpBuilder &b, DecodeOp spec, const DecodeShape &s) {
  MLIRContext *ctx = b.getContext();
  Location loc = spec.getLoc();
  Buffers buf(ctx, s);
  Type f32 = b.getF32Type(), idx = b.getIndexType();

  // The KV ranges: kv_indptr (contiguous), kv_indptr into kv_indices
  // (token_indices), or cache_seqlens and block_table (block_table).
  SmallVector<Type> args{buf.q, buf.kv};
  if (s.kvScale)
    args.push_back(buf.scale);
  if (s.mxfp4)
    args.push_back(buf.kvScales);
  args.append({buf.indptr, buf.indptr});
  if (s.tokenIndices())
    args.push_back(buf.indptr);
  if (s.blockTable())
    args.push_back(buf.blockTable);
  args.append({idx, buf.partial, buf.lse, buf.out});
  auto kernel = KernelOp::create(
      b, loc, (spec.getSymName() + "_stage1_masked").str(),
      b.getFunctionType(args, {}),
      ArrayRef<StringRef>{s.groups() == 1 ? "batch" : "batch_row_groups",
                          "splits"},
      spec.getNumWarps());
  kernel.setBlockN(s.blockN);
  kernel.setBlockM(s.blockM);
  kernel.setVariant("masked");
  if (s.qSeqLen > 1)
    kernel.setCausal(true);

  // Facts for mla-elide-masks, and the split counts a launcher may choose.
  std::vector<int64_t> candidates;
  if (auto fixed = spec.getSplits()) {
    candidates = {static_cast<int64_t>(*fixed)};
  } else {
    candidates = defaultSplitCandidates();
  }
  if (spec.getKvLen() || spec.getKvLenMultipleOf()) {
    int64_t divisor = spec.getKnownKVLenDivisor();
    kernel.setKvLenMultipleOf(divisor);
    // With splits = auto, keep only the split counts that keep every tile
    // full, so that the kernel can be compiled mask-free; if none does, the
    // lengths force partial tiles and all candidates stay.
    if (!spec.getSplits()) {
      std::vector<int64_t> exact = splitCandidatesForDivisor(divisor, s.blockN);
      if (!exact.empty())
        candidates = exact;
    }
  }
  kernel.setSplitCandidates(candidates);
  SmallVector<StringRef> names{"q", "kv"};
  if (s.kvScale)
    names.push_back("kv_scale");
  if (s.mxfp4)
    names.push_back("kv_scales");
  names.push_back("qo_indptr");
  if (s.blockTable())
    names.append({"cache_seqlens", "block_table"});
  else
    names.push_back("kv_indptr");
  if (s.tokenIndices())
    names.push_back("kv_indices");
  names.append({"num_splits", "partial", "lse", "out"});
  b.getContext()
      ->getLoadedDialect<MLADialect>()
      ->getArgNamesAttrHelper()
      .setAttr(kernel, b.getStrArrayAttr(names));

  Block *entry = b.createBlock(&kernel.getBody(), {}, args,
                               SmallVector<Location>(args.size(), loc));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  unsigned a = 0;
  Value q = entry->getArgument(a++), kv = entry->getArgument(a++);
  Value scalePtr = s.kvScale ? entry->getArgument(a++) : Value();
  Value kvScales = s.mxfp4 ? entry->getArgument(a++) : Value();
  Value qoIndptr = entry->getArgument(a++);
  // kv_indptr, or cache_seqlens with a block table.
  Value kvRanges = entry->getArgument(a++);
  Value pageTable =
      s.tokenIndices() || s.blockTable() ? entry->getArgument(a++) : Value();
  Value numSplits = entry->getArgument(a++);
  Value partial = entry->getArgument(a++), lse = entry->getArgument(a++);
  Value out = entry->getArgument(a++);

  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  // Grid x: the sequence, or (sequence, row group) with the group fastest,
  // so that the programs reading the same KV tiles run side by side.
  Value pid = ProgramIdOp::create(b, loc, b.getIndexType(), 0);
  Value batch = pid, group = c0;
  if (s.groups() > 1) {
    batch = arith::DivUIOp::create(b, loc, pid, cst(s.groups()));
    group = arith::RemUIOp::create(b, loc, pid, cst(s.groups()));
  }
  Value split = ProgramIdOp::create(b, loc, b.getIndexType(), 1);
  // The group's rows: the sequence's query rows row0 .. row0 + blockM - 1
  // (token-major), from token token0 on. A group within one token reads
  // q[qo_indptr[b] + token0][head0 ..]; one spanning several tokens
  // (blockM > heads) reads q and writes out as [rows x heads, dim] views,
  // from row qo_indptr[b] * heads + row0.
  Value row0 = c0, token0 = c0, head0 = c0;
  if (s.groups() > 1) {
    row0 = arith::MulIOp::create(b, loc, group, cst(s.blockM));
    token0 = arith::DivUIOp::create(b, loc, row0, cst(s.heads));
    if (s.blockM < s.heads)
      head0 = arith::RemUIOp::create(b, loc, row0, cst(s.heads));
  }
  auto [qRow0, qOk] = guardedQRow(b, loc, qoIndptr, batch, {q, out}, s.qSeqLen);
  Value qSrc = q, outDst = out;
  SmallVector<Value> qAt;
  if (s.blockM > s.heads) {
    SmallVector<ReassociationIndices> rowsOfHeads{{0, 1}, {2}};
    qSrc = memref::CollapseShapeOp::create(b, loc, q, rowsOfHeads);
    outDst = memref::CollapseShapeOp::create(b, loc, out, rowsOfHeads);
    qAt = {
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, qRow0, cst(s.heads)), row0),
        c0};
  } else {
    Value qRow =
        s.qSeqLen > 1 ? arith::AddIOp::create(b, loc, qRow0, token0) : qRow0;
    qAt = {qRow, head0, c0};
  }
  // Contiguous: the range's first cache row. Paged: its first entry in the
  // (flattened) page table, whose loads gather the rows.
  Value kvBegin, kvLen;
  if (s.blockTable()) {
    std::tie(kvBegin, kvLen) =
        guardedTableRange(b, loc, kvRanges, batch, pageTable, s.pageSize, kv);
    pageTable = memref::CollapseShapeOp::create(
        b, loc, pageTable, SmallVector<ReassociationIndices>{{0, 1}});
  } else {
    std::tie(kvBegin, kvLen) = guardedKvRange(
        b, loc, kvRanges, batch, s.tokenIndices() ? pageTable : kv);
  }
  // mxfp4: every tile also reads qk_dim / 32 scales of each row. A scale
  // array with fewer columns, or (contiguous) fewer rows than the range
  // needs, makes the sequence empty, as a bad range does; paged loads
  // check each gathered row against both buffers themselves.
  if (s.mxfp4) {
    using P = arith::CmpIPredicate;
    Value ok = cmp(b, loc, P::sge, memref::DimOp::create(b, loc, kvScales, c1),
                   cst(s.qkDim / 32));
    if (!pageTable) {
      Value end = arith::AddIOp::create(b, loc, kvBegin, kvLen);
      Value rows = memref::DimOp::create(b, loc, kvScales, c0);
      ok = arith::AndIOp::create(b, loc, ok, cmp(b, loc, P::sle, end, rows));
    }
    kvLen = arith::SelectOp::create(b, loc, ok, kvLen, c0);
  }
  // Every token's programs split the sequence's whole length alike, so
  // that they walk the same tiles; a token's causal edge then ends its
  // walk early (below).
  auto range = SplitRangeOp::create(b, loc, idx, idx, kvLen, split, numSplits,
                                    static_cast<uint64_t>(s.blockN),
                                    /*exact=*/false);
  Value lo = range.getLo(), hi = range.getHi();
  // Token i sees keys [0, L - q_seq_len + i]: the group's walk ends at its
  // last token's edge, clamp(L - (q_seq_len - 1 - i_last), lo, hi), and
  // the rows of earlier tokens in it are masked at their own edges
  // (edge0 + row / heads). A split wholly past the edge walks no tile; its
  // rows are empty (0, LSE -inf).
  int64_t tokensPerGroup = std::max<int64_t>(1, s.blockM / s.heads);
  Value edge0;
  if (s.qSeqLen > 1) {
    Value back = arith::SubIOp::create(b, loc, cst(s.qSeqLen - 1), token0);
    edge0 = arith::SubIOp::create(b, loc, kvLen, back);
    Value edgeLast =
        arith::AddIOp::create(b, loc, edge0, cst(tokensPerGroup - 1));
    hi = arith::MinSIOp::create(b, loc, hi,
                                arith::MaxSIOp::create(b, loc, edgeLast, lo));
  }

  // Softmax scale, log2(e) and the KV dequantisation scale are one factor.
  double smScaleLog2 = spec.getSoftmaxScale().convertToDouble() * kLog2E;
  Value qkScale = arith::ConstantFloatOp::create(
      b, loc, cast<FloatType>(f32), APFloat(static_cast<float>(smScaleLog2)));
  Value kvScale;
  if (s.kvScale) {
    kvScale = memref::LoadOp::create(b, loc, scalePtr, ValueRange{c0});
    qkScale = arith::MulFOp::create(b, loc, qkScale, kvScale);
  }
  int64_t bm = s.blockM;
  Value qTile = LoadOp::create(b, loc, tile({bm, s.qkDim}, s.qType), qSrc, qAt,
                               Value(), Value(), Value(), IntegerAttr());
  if (!s.qType.isF32())
    qTile = CastOp::create(b, loc, tile({bm, s.qkDim}, f32), qTile);
  // The matrix units take narrow operands. bf16: fold the factor into Q and
  // round the scaled Q once, here, so that every target computes the same
  // scores. fp8 and f16: keep the factor out of Q (scaled by a small KV
  // scale its values would fall among the subnormals: f16's smallest
  // normal is 6.1e-5) and scale the scores instead. f16 rounds Q as
  // given. fp8's range is too narrow for that (e4m3's largest value is
  // 448, its smallest normal 2^-6): the program's Q is first multiplied by
  // the power of two that puts its largest magnitude just below the top of
  // that range (mla.quant_scale), and the scores by its inverse, so no Q
  // saturates and small ones keep their precision; exact, as both are
  // powers of two.
  Type opType = s.qType.isF32() ? f32 : s.qpType;
  bool scaleScores =
      isa<Float8E4M3FNType, Float8E4M3FNUZType, Float16Type>(opType);
  if (!scaleScores)
    qTile = ScaleOp::create(b, loc, qTile.getType(), qTile, qkScale);
  if (isa<Float8E4M3FNType, Float8E4M3FNUZType>(opType)) {
    auto fit = QuantScaleOp::create(b, loc, f32, f32, qTile,
                                    TypeAttr::get(opType));
    qTile = ScaleOp::create(b, loc, qTile.getType(), qTile, fit.getScale());
    qkScale = arith::MulFOp::create(b, loc, qkScale, fit.getInverse());
  }
  // Two terms (qp_terms = 2): Q as hi and lo stacked by rows, which both
  // products read as one operand of 2 x bm rows; the scores' terms are
  // summed each tile, the output's once after the loop (the accumulator
  // keeps both terms' rows, rescaled alike).
  int64_t terms = s.qpTerms;
  if (terms == 2)
    qTile = SplitTermsOp::create(b, loc, tile({2 * bm, s.qkDim}, opType), qTile);
  else if (!opType.isF32())
    qTile = CastOp::create(b, loc, tile({bm, s.qkDim}, opType), qTile);

  float negInf = -std::numeric_limits<float>::infinity();
  auto rowT = tile({bm}, f32);
  auto accT = tile({bm, s.vDim}, f32);
  auto accTermsT = tile({terms * bm, s.vDim}, f32);
  Value m0 = FillOp::create(b, loc, rowT, b.getF32FloatAttr(negInf));
  Value l0 = FillOp::create(b, loc, rowT, b.getF32FloatAttr(0.0f));
  Value acc0 = FillOp::create(b, loc, accTermsT, b.getF32FloatAttr(0.0f));
  Value rowEnd =
      pageTable ? hi : arith::AddIOp::create(b, loc, kvBegin, hi).getResult();

  auto loop =
      KvLoopOp::create(b, loc, TypeRange{rowT, rowT, accTermsT}, lo, hi,
                       b.getI64IntegerAttr(s.blockN), ValueRange{m0, l0, acc0});
  {
    Block *body = b.createBlock(&loop.getBody(), {}, {idx, rowT, rowT, accTermsT},
                                SmallVector<Location>(4, loc));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(body);
    Value n = body->getArgument(0);
    Value m = body->getArgument(1), l = body->getArgument(2);
    Value acc = body->getArgument(3);
    // mxfp4 decodes into bf16, or for fp8 products into e4m3fn against a
    // power of two per row (its exponents), which the online softmax
    // applies to the scores and the probabilities (mla.dequant).
    bool mxfp4Fp8 = s.mxfp4 && isa<Float8E4M3FNType>(opType);
    Type kvElt = !s.mxfp4 ? s.kvType : mxfp4Fp8 ? opType : b.getBF16Type();
    auto kT = tile({s.blockN, s.qkDim}, kvElt);
    auto loadRows = [&](RankedTensorType t, Value src) -> Value {
      if (pageTable) // rows gathered from token n on through the table
        return LoadOp::create(b, loc, t, src, ValueRange{n, c0}, rowEnd,
                              pageTable, kvBegin,
                              b.getI64IntegerAttr(s.pageSize));
      return LoadOp::create(
          b, loc, t, src,
          ValueRange{arith::AddIOp::create(b, loc, kvBegin, n), c0}, rowEnd,
          Value(), Value(), IntegerAttr());
    };
    Value k, kvExp;
    if (s.mxfp4) {
      Type i8 = b.getI8Type();
      Value data = loadRows(tile({s.blockN, s.qkDim / 2}, i8), kv);
      Value scales = loadRows(tile({s.blockN, s.qkDim / 32}, i8), kvScales);
      auto dq = DequantOp::create(
          b, loc, kT,
          mxfp4Fp8 ? Type(tile({s.blockN}, b.getI32Type())) : Type(), data,
          scales, b.getStringAttr("mxfp4"));
      k = dq.getResult();
      kvExp = dq.getExponents();
    } else {
      k = loadRows(kT, kv);
    }
    auto scoresT = tile({bm, s.blockN}, f32);
    Value scores = DotOp::create(b, loc, tile({terms * bm, s.blockN}, f32),
                                 qTile, k, Value(), /*transpose_rhs=*/true);
    if (terms == 2)
      scores = SumTermsOp::create(b, loc, scoresT, scores);
    if (scaleScores)
      scores = ScaleOp::create(b, loc, scoresT, scores, qkScale);
    bool causalRows = s.qSeqLen > 1 && tokensPerGroup > 1;
    scores = MaskOp::create(
        b, loc, scoresT, scores, n, hi, causalRows ? edge0 : Value(),
        causalRows ? b.getI64IntegerAttr(s.heads) : IntegerAttr(),
        b.getI64IntegerAttr(1), b.getF32FloatAttr(negInf));
    auto sm = OnlineSoftmaxOp::create(
        b, loc, TypeRange{scoresT, rowT, rowT, accTermsT}, scores, m, l, acc,
        kvExp);
    Value p = sm.getProbs();
    if (terms == 2)
      p = SplitTermsOp::create(b, loc, tile({2 * bm, s.blockN}, opType), p);
    else if (!opType.isF32())
      p = CastOp::create(b, loc, tile({bm, s.blockN}, opType), p);
    Value v = SliceOp::create(b, loc, tile({s.blockN, s.vDim}, kvElt), k,
                              b.getDenseI64ArrayAttr({0, 0}));
    Value accNew = DotOp::create(b, loc, accTermsT, p, v, sm.getNewAcc(),
                                 /*transpose_rhs=*/false);
    YieldOp::create(b, loc, ValueRange{sm.getNewMax(), sm.getNewSum(), accNew});
  }
  b.setInsertionPointAfter(loop);
  Value accEnd = loop.getResult(2);
  if (terms == 2)
    accEnd = SumTermsOp::create(b, loc, accT, accEnd);
  auto fin = SoftmaxFinalizeOp::create(b, loc, TypeRange{accT, rowT},
                                       accEnd, loop.getResult(0),
                                       loop.getResult(1), kvScale);
  // One split: the partial is the answer, so write the output directly and
  // let the launcher skip stage 2.
  Value single =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, numSplits, c1);
  auto ifOp = scf::IfOp::create(b, loc, single, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto valid = scf::IfOp::create(b, loc, qOk, /*withElseRegion=*/false);
    b.setInsertionPointToStart(valid.thenBlock());
    StoreOp::create(b, loc, fin.getOut(), outDst, qAt, Value());
    b.setInsertionPointToStart(ifOp.elseBlock());
    StoreOp::create(b, loc, fin.getOut(), partial,
                    ValueRange{batch, split, row0, c0}, Value());
    StoreOp::create(b, loc, fin.getLse(), lse, ValueRange{batch, split, row0},
                    Value());
    buildClusterCombine(b, loc, s, spec.getNumWarps(), numSplits, partial, lse,
                        batch, split, row0, qOk, outDst, qAt,
                        s.blockM > s.heads ? 0 : 1);
  }
  ReturnOp::create(b, loc);
}

/// Stage 2: one program per (sequence, query row).
void buildStage2(OpBuilder &b, DecodeOp spec, const DecodeShape &s) {
  MLIRContext *ctx = b.getContext();
  Location loc = spec.getLoc();
  Buffers buf(ctx, s);
  Type idx = b.getIndexType();
  SmallVector<Type> args{buf.partial, buf.lse, idx, buf.indptr, buf.out};
  auto kernel = KernelOp::create(b, loc, (spec.getSymName() + "_stage2").str(),
                                 b.getFunctionType(args, {}),
                                 ArrayRef<StringRef>{"batch", "rows"},
                                 /*numWarps=*/4);
  b.getContext()
      ->getLoadedDialect<MLADialect>()
      ->getArgNamesAttrHelper()
      .setAttr(kernel, b.getStrArrayAttr({"partial", "lse", "num_splits",
                                          "qo_indptr", "out"}));
  Block *entry = b.createBlock(&kernel.getBody(), {}, args,
                               SmallVector<Location>(args.size(), loc));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  Value partial = entry->getArgument(0), lse = entry->getArgument(1);
  Value numSplits = entry->getArgument(2), qoIndptr = entry->getArgument(3);
  Value out = entry->getArgument(4);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value batch = ProgramIdOp::create(b, loc, b.getIndexType(), 0);
  Value row = ProgramIdOp::create(b, loc, b.getIndexType(), 1);
  Value qRow, qOk, head = row;
  // The output row first: qo_indptr is an input, not stage 1's output,
  // so its load need not wait for stage 1 (programmatic dependent launch).
  std::tie(qRow, qOk) = guardedQRow(b, loc, qoIndptr, batch, {out}, s.qSeqLen);
  if (s.qSeqLen > 1) {
    Value heads = arith::ConstantIndexOp::create(b, loc, s.heads);
    qRow = arith::AddIOp::create(b, loc, qRow,
                                 arith::DivUIOp::create(b, loc, row, heads));
    head = arith::RemUIOp::create(b, loc, row, heads);
  }
  Value combined =
      SplitKReduceOp::create(b, loc, tile({1, s.vDim}, b.getF32Type()), partial,
                             lse, batch, row, numSplits, IntegerAttr());
  auto valid = scf::IfOp::create(b, loc, qOk, /*withElseRegion=*/false);
  b.setInsertionPointToStart(valid.thenBlock());
  StoreOp::create(b, loc, combined, out, ValueRange{qRow, head, c0}, Value());
  b.setInsertionPointAfter(valid);
  ReturnOp::create(b, loc);
}

struct MLAExpandDecode
    : public mla::impl::MLAExpandDecodeBase<MLAExpandDecode> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (DecodeOp spec :
         llvm::make_early_inc_range(module.getOps<DecodeOp>())) {
      DecodeShape shape{
          static_cast<int64_t>(spec.getNumHeads()),
          static_cast<int64_t>(spec.getQkDim()),
          static_cast<int64_t>(spec.getVDim()),
          static_cast<int64_t>(spec.getBlockN()),
          spec.getQType(),
          spec.getKvType(),
          spec.getOutType(),
          spec.hasKVScale(),
          spec.isMxfp4KV(),
          spec.getQpType().value_or(BFloat16Type::get(spec.getContext())),
          static_cast<int64_t>(spec.getQSeqLen()),
          spec.getRowsPerProgram(),
          spec.getKVLayout(),
          static_cast<int64_t>(spec.getPageSize())};
      shape.qpTerms = spec.getQpTerms().value_or(1);
      OpBuilder b(spec);
      buildStage1(b, spec, shape);
      b.setInsertionPoint(spec);
      if (spec.getSplits().value_or(0) != 1)
        buildStage2(b, spec, shape);
      spec.erase();
    }
  }
};

} // namespace
