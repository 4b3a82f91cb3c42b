//===- MLAOps.h - ops of the mla dialect ------------------------*- C++ -*-===//
#ifndef MLA_MLAOPS_H
#define MLA_MLAOPS_H

#include "mla/MLADialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "mla/MLAOps.h.inc"

namespace mlir::mla {
/// The `mla.decode` spec called `name` in `module`, or its first spec when
/// `name` is empty; null if there is none.
DecodeOp lookupDecodeSpec(ModuleOp module, StringRef name = {});
} // namespace mlir::mla

#endif // MLA_MLAOPS_H
