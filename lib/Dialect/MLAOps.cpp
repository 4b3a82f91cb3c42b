//===- MLAOps.cpp - ops of the mla dialect --------------------------------===//
//
// Verifiers and custom assembly of the mla ops. Every verifier message names
// the offending value; test/Dialect/invalid.mlir triggers each one.
//
//===----------------------------------------------------------------------===//
#include "mla/MLAOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mla;

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

static bool isSupportedWarpCount(int64_t n) {
  return n == 1 || n == 2 || n == 4 || n == 8;
}

static LogicalResult verifyBlockN(Operation *op, uint64_t attr) {
  int64_t blockN = static_cast<int64_t>(attr);
  if (blockN < 16 || blockN > 256 || !llvm::isPowerOf2_64(blockN))
    return op->emitOpError("block_n must be a power of two between 16 and "
                           "256, got ")
           << blockN;
  return success();
}

static LogicalResult verifyNumWarps(Operation *op, uint64_t attr) {
  int64_t n = static_cast<int64_t>(attr);
  if (!isSupportedWarpCount(n))
    return op->emitOpError("num_warps must be 1, 2, 4 or 8, got ") << n;
  return success();
}

//===----------------------------------------------------------------------===//
// DecodeOp
//===----------------------------------------------------------------------===//

DecodeOp mlir::mla::lookupDecodeSpec(ModuleOp module, StringRef name) {
  for (DecodeOp op : module.getOps<DecodeOp>())
    if (name.empty() || op.getSymName() == name)
      return op;
  return {};
}

int64_t DecodeOp::getKnownKVLenDivisor() {
  if (auto len = getKvLen())
    return *len; // 0 is divisible by everything
  if (auto mult = getKvLenMultipleOf())
    return *mult;
  return 1;
}

LogicalResult DecodeOp::verify() {
  auto positive = [&](StringRef name, int64_t v) -> LogicalResult {
    if (v <= 0)
      return emitOpError() << "'" << name << "' must be positive, got " << v;
    return success();
  };
  if (failed(positive("num_heads", getNumHeads())) ||
      failed(positive("num_kv_heads", getNumKvHeads())) ||
      failed(positive("qk_dim", getQkDim())) ||
      failed(positive("v_dim", getVDim())) ||
      failed(positive("page_size", getPageSize())) ||
      failed(positive("q_seq_len", getQSeqLen())))
    return failure();
  // I64Attr getters return uint64_t: compare as signed values.
  int64_t ropeDim = static_cast<int64_t>(getRopeDim());
  if (ropeDim < 0)
    return emitOpError("'rope_dim' must be non-negative, got ") << ropeDim;
  if (getQkDim() != getVDim() + getRopeDim())
    return emitOpError() << "qk_dim (" << getQkDim() << ") must equal v_dim ("
                         << getVDim() << ") + rope_dim (" << getRopeDim()
                         << "): values are the latent part of the key rows";
  if (getNumHeads() % getNumKvHeads() != 0)
    return emitOpError() << "num_heads (" << getNumHeads()
                         << ") must be a multiple of num_kv_heads ("
                         << getNumKvHeads() << ")";
  if (getNumKvHeads() != 1)
    return emitOpError("only num_kv_heads = 1 (absorbed MLA) is supported, "
                       "got ")
           << getNumKvHeads();
  if (getNumHeads() % 16 != 0)
    return emitOpError() << "num_heads (" << getNumHeads()
                         << ") must be a multiple of 16, the head-tile height";
  if (getQkDim() % 32 != 0 || getVDim() % 32 != 0)
    return emitOpError() << "qk_dim (" << getQkDim() << ") and v_dim ("
                         << getVDim() << ") must be multiples of 32";
  StringRef layout = getKVLayout();
  if (layout != "contiguous" && layout != "token_indices" &&
      layout != "block_table")
    return emitOpError("kv_layout must be \"contiguous\", \"token_indices\" "
                       "or \"block_table\", got \"")
           << layout << "\"";
  int64_t pageSize = static_cast<int64_t>(getPageSize());
  if (layout == "block_table") {
    if (!llvm::isPowerOf2_64(pageSize) || pageSize > 4096)
      return emitOpError("page_size must be a power of two up to 4096 with a "
                         "block table, got ")
             << pageSize;
  } else if (pageSize != 1) {
    return emitOpError() << "page_size " << pageSize << " needs kv_layout = "
                         << "\"block_table\" (\"" << layout
                         << "\" addresses single tokens)";
  }
  if (getQSeqLen() > 64)
    return emitOpError("q_seq_len must be at most 64, got ") << getQSeqLen();
  if (auto bm = getBlockM()) {
    int64_t m = static_cast<int64_t>(*bm);
    int64_t heads = getNumHeads(), rows = heads * getQSeqLen();
    bool withinToken = heads % m == 0;
    bool wholeTokens = m % heads == 0 && rows % m == 0;
    if (m < 16 || m % 16 != 0 || (!withinToken && !wholeTokens))
      return emitOpError() << "block_m (" << m
                           << ") must be a multiple of 16 that divides "
                              "num_heads ("
                           << heads
                           << ") or a multiple of num_heads that divides "
                              "q_seq_len x num_heads ("
                           << rows
                           << "): a program's rows are whole tokens "
                              "or part of one";
  }

  Type q = getQType(), kv = getKvType(), out = getOutType();
  if (!q.isBF16() && !q.isF32())
    return emitOpError("q_type must be bf16 or f32, got ") << q;
  if (!kv.isBF16() &&
      !isa<Float8E4M3FNType, Float8E4M3FNUZType, Float4E2M1FNType>(kv))
    return emitOpError(
               "kv_type must be bf16, f8E4M3FN, f8E4M3FNUZ or f4E2M1FN, got ")
           << kv;
  if (!out.isBF16() && !out.isF32())
    return emitOpError("out_type must be bf16 or f32, got ") << out;

  if (std::optional<Type> qp = getQpType()) {
    if (!qp->isBF16() && !qp->isF16() &&
        !isa<Float8E4M3FNType, Float8E4M3FNUZType>(*qp))
      return emitOpError("qp_type must be bf16, f16 or the fp8 kv_type, got ")
             << *qp;
    if (qp->isF16() && !isa<Float8E4M3FNType, Float8E4M3FNUZType>(kv))
      return emitOpError("qp_type f16 needs an fp8 kv_type, got ")
             << kv << ": every e4m3 value is an f16 value, a bf16 one is not";
    if (isa<Float4E2M1FNType>(kv) && !qp->isBF16() &&
        !isa<Float8E4M3FNType>(*qp))
      return emitOpError("qp_type ")
             << *qp
             << " with mxfp4 KV must be bf16 or f8E4M3FN: the tile is "
                "decoded per row into e4m3fn for fp8 products";
    if (!qp->isBF16() && !qp->isF16() && *qp != kv &&
        !isa<Float4E2M1FNType>(kv))
      return emitOpError("qp_type ")
             << *qp << " must equal kv_type (" << kv
             << "): both operands of each matrix product share one fp8 format";
  }

  if (std::optional<int64_t> terms = getQpTerms()) {
    if (*terms != 1 && *terms != 2)
      return emitOpError("qp_terms must be 1 or 2, got ") << *terms;
    std::optional<Type> qp = getQpType();
    if (*terms == 2 &&
        (!qp || !isa<Float8E4M3FNType, Float8E4M3FNUZType>(*qp) || *qp != kv))
      return emitOpError("qp_terms = 2 needs fp8 KV and qp_type equal to "
                         "kv_type (two fp8 terms of Q and P), got kv_type ")
             << kv << " and qp_type "
             << (qp ? *qp : Type(BFloat16Type::get(getContext())));
  }

  if (getKvScale() != "none" && getKvScale() != "per_tensor" &&
      getKvScale() != "block32_e8m0")
    return emitOpError("kv_scale must be \"none\", \"per_tensor\" or "
                       "\"block32_e8m0\", got \"")
           << getKvScale() << "\"";
  if (isa<Float8E4M3FNType, Float8E4M3FNUZType>(kv) && !hasKVScale())
    return emitOpError("fp8 KV (") << kv << ") needs kv_scale = \"per_tensor\"";
  if (isa<Float4E2M1FNType>(kv) != isMxfp4KV())
    return emitOpError("kv_scale = \"block32_e8m0\" goes with kv_type = "
                       "f4E2M1FN (mxfp4) and only with it, got kv_type ")
           << kv << " and kv_scale \"" << getKvScale() << "\"";
  // (Every spec's qk_dim and v_dim are multiples of 32, mxfp4's block;
  // mxfp4 runs with bf16 Q and P, or with e4m3fn ones on a tile decoded per
  // row into e4m3fn: mla.dequant's exponents.)

  float scale = getSoftmaxScale().convertToFloat();
  if (!(scale > 0.0f) || !std::isfinite(scale))
    return emitOpError("softmax_scale must be positive and finite, got ")
           << scale;
  if (failed(verifyBlockN(*this, getBlockN())) ||
      failed(verifyNumWarps(*this, getNumWarps())))
    return failure();
  if (auto s = getSplits()) {
    int64_t splits = static_cast<int64_t>(*s);
    if (splits < 1 || splits > 256)
      return emitOpError("splits must be between 1 and 256, got ") << splits;
    // One launch means stage 1 combining a sequence's splits itself: with
    // one split there is nothing to combine, so the request can only be a
    // mistake in the spec.
    if (splits == 1 && getOneLaunch().value_or(false))
      return emitOpError("one_launch = true needs more than one split, but "
                         "splits = 1 (stage 1 then writes the output itself)");
  }
  std::optional<int64_t> len;
  if (auto l = getKvLen())
    len = static_cast<int64_t>(*l);
  if (len && *len < 0)
    return emitOpError("kv_len must be non-negative, got ") << *len;
  if (auto mAttr = getKvLenMultipleOf()) {
    int64_t m = static_cast<int64_t>(*mAttr);
    if (m < 1)
      return emitOpError("kv_len_multiple_of must be positive, got ") << m;
    if (len && *len % m != 0)
      return emitOpError() << "kv_len (" << *len
                           << ") is not a multiple of kv_len_multiple_of (" << m
                           << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                     FunctionType type, ArrayRef<StringRef> grid,
                     int64_t numWarps) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addAttribute(getGridAttrName(state.name),
                     builder.getStrArrayAttr(grid));
  state.addAttribute(getNumWarpsAttrName(state.name),
                     builder.getI64IntegerAttr(numWarps));
  state.addRegion();
}

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void KernelOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult KernelOp::verify() {
  if (!getResultTypes().empty())
    return emitOpError("kernels return no values, got ")
           << getResultTypes().size() << " result(s)";
  ArrayAttr grid = getGrid();
  if (grid.empty() || grid.size() > 3)
    return emitOpError("grid must have 1 to 3 dimensions, got ") << grid.size();
  for (Attribute a : grid) {
    StringRef dim = cast<StringAttr>(a).getValue();
    if (dim != "batch" && dim != "splits" && dim != "heads" && dim != "rows" &&
        dim != "batch_row_groups")
      return emitOpError("unknown grid dimension '")
             << dim
             << "' (expected \"batch\", \"splits\", \"heads\", \"rows\" "
                "or \"batch_row_groups\")";
  }
  if (failed(verifyNumWarps(*this, getNumWarps())))
    return failure();
  if (auto bn = getBlockN(); bn && failed(verifyBlockN(*this, *bn)))
    return failure();
  if (auto v = getVariant(); v && *v != "masked" && *v != "mask_free")
    return emitOpError("variant must be \"masked\" or \"mask_free\", got \"")
           << *v << "\"";
  if (getCausal() && getVariant() != StringRef("masked"))
    return emitOpError("'causal' is only meaningful on a masked variant");
  if (getDispatchKvMultiple() && !isMaskFree())
    return emitOpError(
        "'dispatch_kv_multiple' is only meaningful on a mask_free variant");
  if (auto c = getSplitCandidates()) {
    if (c->empty() || llvm::any_of(*c, [](int64_t s) { return s < 1; }))
      return emitOpError("split_candidates must be non-empty and positive");
  }
  // Entry block arguments against the signature: FunctionOpInterface.
  return success();
}

//===----------------------------------------------------------------------===//
// ProgramIdOp
//===----------------------------------------------------------------------===//

LogicalResult ProgramIdOp::verify() {
  auto kernel = (*this)->getParentOfType<KernelOp>();
  if (!kernel)
    return emitOpError("must be inside an mla.kernel");
  int64_t rank = kernel.getGrid().size();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= rank)
    return emitOpError("dim ") << dim << " is outside the " << rank
                               << "-dimensional grid of the enclosing kernel";
  return success();
}

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

LogicalResult SplitTermsOp::verify() {
  auto src = getSource().getType(), res = getResult().getType();
  Type to = res.getElementType();
  if (!isa<Float8E4M3FNType, Float8E4M3FNUZType>(to))
    return emitOpError("terms of type ")
           << to << " are not supported (f8E4M3FN or f8E4M3FNUZ)";
  if (src.getRank() != 2 || res.getRank() != 2 ||
      res.getDimSize(0) != 2 * src.getDimSize(0) ||
      res.getDimSize(1) != src.getDimSize(1))
    return emitOpError("result must stack two terms of the source by rows (")
           << src << " gives " << 2 * src.getDimSize(0) << "x"
           << (src.getRank() == 2 ? src.getDimSize(1) : 0) << "), got " << res;
  return success();
}

LogicalResult SumTermsOp::verify() {
  auto src = getSource().getType(), res = getResult().getType();
  if (src.getRank() != 2 || res.getRank() != 2 ||
      src.getDimSize(0) != 2 * res.getDimSize(0) ||
      res.getDimSize(1) != src.getDimSize(1))
    return emitOpError("source must stack two terms of the result by rows (")
           << res << " takes " << 2 * res.getDimSize(0) << "x"
           << (res.getRank() == 2 ? res.getDimSize(1) : 0) << "), got " << src;
  return success();
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

//===----------------------------------------------------------------------===//
// KvLoopOp
//===----------------------------------------------------------------------===//

ParseResult KvLoopOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  OpAsmParser::Argument iv;
  OpAsmParser::UnresolvedOperand lower, upper;
  int64_t step;
  if (parser.parseArgument(iv) || parser.parseEqual() ||
      parser.parseOperand(lower) || parser.parseKeyword("to") ||
      parser.parseOperand(upper) || parser.parseKeyword("step") ||
      parser.parseInteger(step))
    return failure();
  iv.type = b.getIndexType();

  SmallVector<OpAsmParser::Argument> regionArgs{iv};
  SmallVector<OpAsmParser::UnresolvedOperand> inits;
  if (succeeded(parser.parseOptionalKeyword("iter_args"))) {
    if (parser.parseAssignmentList(regionArgs, inits) ||
        parser.parseArrowTypeList(result.types))
      return failure();
  }
  if (regionArgs.size() != result.types.size() + 1)
    return parser.emitError(parser.getNameLoc(),
                            "iter_args and result types differ in number");
  for (auto [arg, type] : llvm::zip(llvm::drop_begin(regionArgs), result.types))
    arg.type = type;

  if (parser.resolveOperand(lower, b.getIndexType(), result.operands) ||
      parser.resolveOperand(upper, b.getIndexType(), result.operands) ||
      parser.resolveOperands(inits, result.types, parser.getNameLoc(),
                             result.operands))
    return failure();
  result.addAttribute(getStepAttrName(result.name), b.getI64IntegerAttr(step));
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, regionArgs) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  return success();
}

void KvLoopOp::print(OpAsmPrinter &p) {
  p << " " << getInductionVar() << " = " << getLower() << " to " << getUpper()
    << " step " << getStep();
  if (!getInits().empty()) {
    p << " iter_args(";
    llvm::interleaveComma(
        llvm::zip(getRegionIterArgs(), getInits()), p,
        [&](auto it) { p << std::get<0>(it) << " = " << std::get<1>(it); });
    p << ") -> (" << getResultTypes() << ")";
  }
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
  p.printOptionalAttrDict((*this)->getAttrs(), {getStepAttrName()});
}

LogicalResult KvLoopOp::verify() {
  int64_t step = static_cast<int64_t>(getStep());
  if (step <= 0)
    return emitOpError("step must be positive, got ") << step;
  Block &body = getBody().front();
  if (body.getNumArguments() != getInits().size() + 1)
    return emitOpError("body must take the induction variable and one "
                       "argument per iter_arg");
  if (!body.getArgument(0).getType().isIndex())
    return emitOpError("induction variable must be an index");
  if (getInits().getTypes() != getResultTypes())
    return emitOpError("iter_args types must equal the result types");
  for (auto [arg, type] : llvm::zip(getRegionIterArgs(), getResultTypes()))
    if (arg.getType() != type)
      return emitOpError("body argument type ")
             << arg.getType() << " differs from iter_arg type " << type;
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end in mla.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("mla.yield operand types must equal the result types");
  return success();
}

#define GET_OP_CLASSES
#include "mla/MLAOps.cpp.inc"
