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
}

class MLA_Op<string mnemonic, list<Trait> traits = []>
    : Op<MLA_Dialect, mnemonic, traits>;

#endif // MLA_DIALECT_TD
