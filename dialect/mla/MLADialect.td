//===- MLADialect.td - the mla dialect ---------------------*- tablegen -*-===//
#ifndef MLA_DIALECT_TD
#define MLA_DIALECT_TD

include "mlir/IR/OpBase.td"

def MLA_Dialect : Dialect {
  let name = "mla";
  let cppNamespace = "::mlir::mla";
  let summary = "Tiled multi-head latent attention (MLA) decode kernels";
  let description = [{
    The `mla` dialect has two levels.

    * The **problem level** is a single op, `mla.decode`, that describes one
      MLA decode problem (heads, dims, element types, schedule knobs). A user
      writes a kernel spec with it in a few lines.
    * The **tile level** describes the kernels that solve the problem:
      `mla.kernel` functions with a launch grid whose bodies move whole tiles
      (static-shaped `tensor` values) between global buffers (`memref`
      arguments) and compute on them with `mla.dot`, `mla.online_softmax`,
      `mla.softmax_finalize` and `mla.split_k_reduce`, iterating over the KV
      sequence with `mla.kv_loop`.

    Tile values have value semantics; where a tile lives (registers, LDS,
    host memory) and which lane holds which element is decided by the target
    lowering, not by this dialect. See docs/Design.md.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];

  // What the passes leave on other ops for the next stage (the lowered
  // kernel functions carry their launch facts to mla-compile's manifest
  // writer and the host runner); verifyOperationAttribute checks each and
  // refuses any other `mla.` attribute.
  let discardableAttrs = (ins
    // mla.kernel (mla-expand-decode): the launcher's name of each argument.
    "::mlir::ArrayAttr":$arg_names,
    // Lowered kernel functions: the grid in words (batch, splits, heads, rows,
    // batch_row_groups, one).
    "::mlir::ArrayAttr":$grid,
    // gpu.func: dynamic shared memory / LDS bytes per block, threads per block.
    "::mlir::IntegerAttr":$shared_bytes,
    "::mlir::IntegerAttr":$block_threads,
    // gpu.func: may start while the kernel before it finishes (sm_90).
    "::mlir::UnitAttr":$dependent_launch,
    // gpu.func: the mla.kernel's attributes of the same names.
    "::mlir::StringAttr":$variant,
    "::mlir::IntegerAttr":$block_n,
    "::mlir::IntegerAttr":$dispatch_kv_multiple,
    "::mlir::DenseI64ArrayAttr":$split_candidates,
    "::mlir::IntegerAttr":$kv_len_multiple_of,
    // gpu.func / llvm.func (sm_90a): its last argument is a tensor map over
    // the KV cache (128 bytes by value, the launcher's), whose box is
    // [rows, columns] of this many, or [rows, columns, boxes]: that many
    // boxes side by side along a row in one copy (a 3-D map whose boxes
    // land one after another in shared memory); mla-nvvm-grid-constants
    // passes it so.
    "::mlir::DenseI64ArrayAttr":$kv_tensor_map
  );
  let hasOperationAttrVerify = 1;
}

class MLA_Op<string mnemonic, list<Trait> traits = []>
    : Op<MLA_Dialect, mnemonic, traits>;

#endif // MLA_DIALECT_TD
