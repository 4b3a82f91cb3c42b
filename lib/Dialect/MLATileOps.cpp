//===- MLATileOps.cpp - verifiers of the mla tile ops ---------------------===//
//
// Verifiers of the ops inside an mla.kernel that move and compute tiles:
// loads and stores, casts and terms, slices and masks, dot, the softmax
// statistics and the split-K combine. The spec op, the kernel and its loop
// are in MLAOps.cpp. Every verifier message names the offending value;
// test/Dialect/invalid.mlir triggers each one.
//
//===----------------------------------------------------------------------===//
#include "mla/MLAOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <string>

using namespace mlir;
using namespace mlir::mla;

//===----------------------------------------------------------------------===//
// LoadOp / StoreOp
//===----------------------------------------------------------------------===//

/// Checks that a tile fits the trailing dimensions of a buffer addressed by
/// `numIndices` indices.
static LogicalResult verifyTileAccess(Operation *op, MemRefType buffer,
                                      RankedTensorType tile,
                                      size_t numIndices) {
  int64_t rank = buffer.getRank();
  if (static_cast<int64_t>(numIndices) != rank)
    return op->emitOpError("expected ")
           << rank << " indices for a rank-" << rank << " buffer, got "
           << numIndices;
  int64_t tileRank = tile.getRank();
  if (tileRank > rank)
    return op->emitOpError("tile rank (")
           << tileRank << ") exceeds buffer rank (" << rank << ")";
  for (int64_t d = 0; d < tileRank; ++d) {
    int64_t bd = buffer.getDimSize(rank - tileRank + d);
    if (!ShapedType::isDynamic(bd) && tile.getDimSize(d) > bd)
      return op->emitOpError("tile dimension ")
             << d << " (" << tile.getDimSize(d) << ") exceeds buffer dimension "
             << (rank - tileRank + d) << " (" << bd << ")";
  }
  return success();
}

LogicalResult LoadOp::verify() {
  auto buffer = getSource().getType();
  auto tile = getResult().getType();
  if (failed(verifyTileAccess(*this, buffer, tile, getIndices().size())))
    return failure();
  if (buffer.getElementType() != tile.getElementType())
    return emitOpError("tile element type ")
           << tile.getElementType() << " differs from buffer element type "
           << buffer.getElementType() << " (convert with mla.cast)";
  bool table = static_cast<bool>(getTable());
  if (table != static_cast<bool>(getTableOffset()) ||
      table != getPageSize().has_value())
    return emitOpError("a page table needs all of table, table_offset and "
                       "page_size");
  if (table) {
    if (buffer.getRank() != 2 || tile.getRank() != 2)
      return emitOpError("a paged load gathers rows of a rank-2 buffer into a "
                         "rank-2 tile, got ranks ")
             << buffer.getRank() << " and " << tile.getRank();
    int64_t p = static_cast<int64_t>(*getPageSize());
    if (!llvm::isPowerOf2_64(p) || p > 4096)
      return emitOpError("page_size must be a power of two up to 4096, got ")
             << p;
  }
  return success();
}

LogicalResult DequantOp::verify() {
  if (getFormat() != "mxfp4")
    return emitOpError("format must be \"mxfp4\", got \"")
           << getFormat() << "\"";
  auto data = getData().getType(), scales = getScales().getType();
  auto res = getResult().getType();
  if (data.getRank() != 2 || scales.getRank() != 2 || res.getRank() != 2)
    return emitOpError("data, scales and result must be rank-2 tiles");
  Type elt = res.getElementType();
  if (!elt.isBF16() && !isa<Float8E4M3FNType>(elt))
    return emitOpError("result element type must be bf16 or f8E4M3FN, got ")
           << elt;
  int64_t rows = res.getDimSize(0), cols = res.getDimSize(1);
  if (isa<Float8E4M3FNType>(elt) && !getExponents())
    return emitOpError("an f8E4M3FN result needs the exponents result (one "
                       "i32 per row)");
  if (elt.isBF16() && getExponents())
    return emitOpError("a bf16 result takes no exponents result");
  if (getExponents() && (getExponents().getType().getRank() != 1 ||
                         getExponents().getType().getDimSize(0) != rows))
    return emitOpError() << "exponents must have one entry per row (" << rows
                         << "), got " << getExponents().getType();
  if (data.getDimSize(0) != rows || scales.getDimSize(0) != rows)
    return emitOpError() << "data (" << data.getDimSize(0) << ") and scales ("
                         << scales.getDimSize(0)
                         << ") must have the result's rows (" << rows << ")";
  if (cols % 32)
    return emitOpError() << "result columns (" << cols
                         << ") must be whole blocks of 32";
  if (data.getDimSize(1) * 2 != cols)
    return emitOpError() << "data holds two values per byte: " << cols
                         << " columns need " << cols / 2 << " bytes, got "
                         << data.getDimSize(1);
  if (scales.getDimSize(1) * 32 != cols)
    return emitOpError() << "one scale per block of 32: " << cols
                         << " columns need " << cols / 32 << " scales, got "
                         << scales.getDimSize(1);
  return success();
}

LogicalResult QuantScaleOp::verify() {
  Type to = getTo();
  if (!isa<Float8E4M3FNType, Float8E4M3FNUZType, Float16Type, BFloat16Type>(
          to))
    return emitOpError("'to' must be f8E4M3FN, f8E4M3FNUZ, f16 or bf16, got ")
           << to;
  return success();
}

int64_t QuantScaleOp::getTopExponent() {
  return llvm::ilogb(
      llvm::APFloat::getLargest(cast<FloatType>(getTo()).getFloatSemantics()));
}

LogicalResult StoreOp::verify() {
  auto buffer = getDest().getType();
  auto tile = getValue().getType();
  if (failed(verifyTileAccess(*this, buffer, tile, getIndices().size())))
    return failure();
  Type bt = buffer.getElementType(), tt = tile.getElementType();
  if (bt != tt && !(tt.isF32() && bt.isBF16()))
    return emitOpError("cannot store a tile of ")
           << tt << " into a buffer of " << bt
           << " (stores may only round f32 to bf16)";
  return success();
}

//===----------------------------------------------------------------------===//
// CastOp / SliceOp / MaskOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  Type from = getSource().getType().getElementType();
  Type to = getResult().getType().getElementType();
  if (to.isF32() ||
      (from.isF32() &&
       isa<BFloat16Type, Float16Type, Float8E4M3FNType, Float8E4M3FNUZType>(
           to)))
    return success();
  return emitOpError("unsupported conversion from ")
         << from << " to " << to
         << " (supported: any float to f32, f32 to bf16, f16, f8E4M3FN or "
            "f8E4M3FNUZ)";
}

/// Two terms of an R x C tile stacked by rows: `stacked` is 2R x C.
/// `stackedRole` names the operand that stacks them ("result", "source").
static LogicalResult verifyStackedTerms(Operation *op, RankedTensorType single,
                                        RankedTensorType stacked,
                                        StringRef stackedRole) {
  if (single.getRank() != 2 || stacked.getRank() != 2)
    return op->emitOpError("terms are stacked by rows of 2-d tiles, got ")
           << single << " and " << stacked;
  if (stacked.getDimSize(0) != 2 * single.getDimSize(0) ||
      stacked.getDimSize(1) != single.getDimSize(1))
    return op->emitOpError("the stacked terms (")
           << stackedRole << ") must be two of " << single << " by rows ("
           << 2 * single.getDimSize(0) << "x" << single.getDimSize(1)
           << "), got " << stacked;
  return success();
}

LogicalResult SplitTermsOp::verify() {
  auto src = getSource().getType(), res = getResult().getType();
  Type to = res.getElementType();
  if (!isa<Float8E4M3FNType, Float8E4M3FNUZType>(to))
    return emitOpError("terms of type ")
           << to << " are not supported (f8E4M3FN or f8E4M3FNUZ)";
  return verifyStackedTerms(*this, src, res, "result");
}

LogicalResult SumTermsOp::verify() {
  return verifyStackedTerms(*this, getResult().getType(),
                            getSource().getType(), "source");
}

LogicalResult SliceOp::verify() {
  auto src = getSource().getType();
  auto res = getResult().getType();
  if (src.getRank() != res.getRank())
    return emitOpError("result rank (")
           << res.getRank() << ") differs from source rank (" << src.getRank()
           << ")";
  if (static_cast<int64_t>(getOffsets().size()) != src.getRank())
    return emitOpError("expected ")
           << src.getRank() << " offsets, got " << getOffsets().size();
  if (src.getElementType() != res.getElementType())
    return emitOpError("result element type ")
           << res.getElementType() << " differs from source element type "
           << src.getElementType();
  for (int64_t d = 0; d < src.getRank(); ++d) {
    int64_t off = getOffsets()[d];
    if (off < 0 || off + res.getDimSize(d) > src.getDimSize(d))
      return emitOpError("slice [")
             << off << ", " << off + res.getDimSize(d) << ") of dimension " << d
             << " exceeds the source size " << src.getDimSize(d);
  }
  return success();
}

LogicalResult MaskOp::verify() {
  int64_t rank = getSource().getType().getRank();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= rank)
    return emitOpError("dim ")
           << dim << " is out of range for a rank-" << rank << " tile";
  if (static_cast<bool>(getRowEdge()) != getRowPeriod().has_value())
    return emitOpError("a causal edge and its row period come together");
  if (auto p = getRowPeriod()) {
    if (static_cast<int64_t>(*p) < 1)
      return emitOpError("row period must be positive, got ")
             << static_cast<int64_t>(*p);
    if (rank != 2 || dim != 1)
      return emitOpError("a causal edge masks the columns (dim 1) of a "
                         "rank-2 tile");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

LogicalResult DotOp::verify() {
  auto lhs = getLhs().getType(), rhs = getRhs().getType();
  auto res = getResult().getType();
  if (lhs.getRank() != 2 || rhs.getRank() != 2 || res.getRank() != 2)
    return emitOpError("operands and result must be rank-2 tiles");
  int64_t m = lhs.getDimSize(0), k = lhs.getDimSize(1);
  int64_t rk = getTransposeRhs() ? rhs.getDimSize(1) : rhs.getDimSize(0);
  int64_t n = getTransposeRhs() ? rhs.getDimSize(0) : rhs.getDimSize(1);
  if (k != rk)
    return emitOpError("contraction sizes differ: lhs has K = ")
           << k << ", rhs has K = " << rk;
  if (res.getDimSize(0) != m || res.getDimSize(1) != n)
    return emitOpError("result shape ")
           << res.getDimSize(0) << "x" << res.getDimSize(1)
           << " does not match lhs rows x rhs columns (" << m << "x" << n
           << ")";
  if (getAcc() && getAcc().getType() != res)
    return emitOpError("accumulator type ")
           << getAcc().getType() << " differs from the result type " << res;
  return success();
}

//===----------------------------------------------------------------------===//
// OnlineSoftmaxOp / SoftmaxFinalizeOp
//===----------------------------------------------------------------------===//

/// Row-statistics ops take R×N tiles plus rank-1 R-vectors.
/// `other` (the accumulator) has the matrix's rows, or with `stacked` a
/// whole multiple of them (OnlineSoftmaxOp: terms stacked by rows).
static LogicalResult verifyRowStats(Operation *op, RankedTensorType matrix,
                                    StringRef matrixName,
                                    RankedTensorType stats,
                                    RankedTensorType other = {},
                                    bool stacked = false) {
  if (matrix.getRank() != 2)
    return op->emitOpError() << matrixName << " must be a rank-2 tile";
  if (stats.getRank() != 1)
    return op->emitOpError("row max and sum must be rank-1 tiles");
  if (other && other.getRank() != 2)
    return op->emitOpError("accumulator must be a rank-2 tile");
  int64_t rows = matrix.getDimSize(0);
  if (stacked && other && stats.getDimSize(0) == rows && rows > 0 &&
      other.getDimSize(0) != rows) {
    if (other.getDimSize(0) % rows != 0)
      return op->emitOpError("accumulator rows (")
             << other.getDimSize(0) << ") must be a whole multiple of the "
             << matrixName << "' rows (" << rows << ")";
    return success();
  }
  if (stats.getDimSize(0) != rows || (other && other.getDimSize(0) != rows))
    return op->emitOpError("row count mismatch: ")
           << matrixName << " has " << rows << " rows, max has "
           << stats.getDimSize(0)
           << (other
                   ? ", accumulator has " + std::to_string(other.getDimSize(0))
                   : std::string());
  return success();
}

LogicalResult OnlineSoftmaxOp::verify() {
  if (failed(verifyRowStats(*this, getScores().getType(), "scores",
                            getMax().getType(), getAcc().getType(),
                            /*stacked=*/true)))
    return failure();
  int64_t cols = getScores().getType().getDimSize(1);
  if (getColExp() && (getColExp().getType().getRank() != 1 ||
                      getColExp().getType().getDimSize(0) != cols))
    return emitOpError() << "col_exp must have one entry per score column ("
                         << cols << "), got " << getColExp().getType();
  return success();
}

LogicalResult SoftmaxFinalizeOp::verify() {
  return verifyRowStats(*this, getAcc().getType(), "accumulator",
                        getMax().getType());
}

//===----------------------------------------------------------------------===//
// SplitKReduceOp / SplitRangeOp
//===----------------------------------------------------------------------===//

LogicalResult SplitKReduceOp::verify() {
  auto part = getPartial().getType();
  auto lse = getLse().getType();
  auto res = getResult().getType();
  if (part.getRank() != 4)
    return emitOpError("partial must be a rank-4 buffer (batch x splits x "
                       "heads x dim), got rank ")
           << part.getRank();
  if (lse.getRank() != 3)
    return emitOpError("lse must be a rank-3 buffer (batch x splits x heads), "
                       "got rank ")
           << lse.getRank();
  if (!part.getElementType().isF32() || !lse.getElementType().isF32())
    return emitOpError("partial and lse buffers must hold f32");
  if (res.getRank() != 2)
    return emitOpError("result must be a rank-2 tile (heads x dim)");
  int64_t d = part.getDimSize(3);
  if (!ShapedType::isDynamic(d) && res.getDimSize(1) != d)
    return emitOpError("result has ")
           << res.getDimSize(1) << " columns but partial rows have " << d;
  int64_t h = part.getDimSize(2);
  if (!ShapedType::isDynamic(h) && res.getDimSize(0) > h)
    return emitOpError("result has ")
           << res.getDimSize(0) << " heads but the partial buffer only " << h;
  return success();
}

LogicalResult SplitRangeOp::verify() {
  int64_t blockN = static_cast<int64_t>(getBlockN());
  if (blockN <= 0)
    return emitOpError("block_n must be positive, got ") << blockN;
  return success();
}

