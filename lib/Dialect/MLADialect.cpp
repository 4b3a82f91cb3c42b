//===- MLADialect.cpp - the mla dialect -----------------------------------===//
#include "mla/MLADialect.h"
#include "mla/MLAOps.h"

using namespace mlir;
using namespace mlir::mla;

#include "mla/MLAOpsDialect.cpp.inc"

LogicalResult MLADialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute a = attr.getValue();
  auto fail = [&](const Twine &what) {
    return op->emitError() << "'" << name << "' must be " << what;
  };
  auto strings = [&](ArrayRef<StringRef> allowed) -> LogicalResult {
    auto arr = dyn_cast<ArrayAttr>(a);
    if (!arr || !llvm::all_of(arr, [&](Attribute e) {
          auto s = dyn_cast<StringAttr>(e);
          return s &&
                 (allowed.empty() || llvm::is_contained(allowed, s.getValue()));
        }))
      return fail(
          allowed.empty()
              ? "an array of strings"
              : "an array of grid dimensions (batch, splits, heads, rows, "
                "batch_row_groups, one)");
    return success();
  };
  auto count = [&](int64_t least) -> LogicalResult {
    auto i = dyn_cast<IntegerAttr>(a);
    if (!i || !i.getType().isInteger(64) || i.getInt() < least)
      return fail(least ? "a positive i64" : "a non-negative i64");
    return success();
  };
  if (name == getArgNamesAttrHelper().getName())
    return strings({});
  if (name == getGridAttrHelper().getName())
    return strings(
        {"batch", "splits", "heads", "rows", "batch_row_groups", "one"});
  if (name == getSharedBytesAttrHelper().getName())
    return count(0);
  if (name == getBlockThreadsAttrHelper().getName() ||
      name == getBlockNAttrHelper().getName() ||
      name == getDispatchKvMultipleAttrHelper().getName() ||
      name == getKvLenMultipleOfAttrHelper().getName())
    return count(1);
  if (name == getDependentLaunchAttrHelper().getName())
    return isa<UnitAttr>(a) ? success() : fail("a unit attribute");
  if (name == getVariantAttrHelper().getName()) {
    auto s = dyn_cast<StringAttr>(a);
    return s && (s.getValue() == "masked" || s.getValue() == "mask_free")
               ? success()
               : fail("\"masked\" or \"mask_free\"");
  }
  if (name == getSplitCandidatesAttrHelper().getName())
    return isa<DenseI64ArrayAttr>(a) ? success() : fail("an array<i64>");
  if (name == getKvTensorMapAttrHelper().getName()) {
    auto box = dyn_cast<DenseI64ArrayAttr>(a);
    return box && (box.size() == 2 || box.size() == 3) &&
                   llvm::all_of(box.asArrayRef(),
                                [](int64_t d) { return d >= 1 && d <= 256; })
               ? success()
               : fail("an array<i64> of a box's rows and columns (and the "
                      "boxes a copy takes along a row), each 1 to 256");
  }
  return op->emitError() << "'" << name
                         << "' is not an attribute of the mla dialect";
}

void MLADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mla/MLAOps.cpp.inc"
      >();
}
