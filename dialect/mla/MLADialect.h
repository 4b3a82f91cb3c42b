//===- MLADialect.h - the mla dialect ---------------------------*- C++ -*-===//
#ifndef MLA_MLADIALECT_H
#define MLA_MLADIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "mla/MLAOpsDialect.h.inc"

#endif // MLA_MLADIALECT_H
