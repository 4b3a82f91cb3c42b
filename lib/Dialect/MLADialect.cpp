//===- MLADialect.cpp - the mla dialect -----------------------------------===//
#include "mla/MLADialect.h"
#include "mla/MLAOps.h"

using namespace mlir;
using namespace mlir::mla;

#include "mla/MLAOpsDialect.cpp.inc"

void MLADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mla/MLAOps.cpp.inc"
      >();
}
