//===- MLAOps.cpp - ops of the mla dialect --------------------------------===//
//
// The spec op (mla.decode), the kernel, its program ids and KV loop: their
// verifiers and custom assembly. The tile ops' verifiers are in
// MLATileOps.cpp. Every verifier message names the offending value;
// test/Dialect/invalid.mlir triggers each one.
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
