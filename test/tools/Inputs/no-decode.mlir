// A module without an mla.decode, which the tools refuse by name (mla-run.mlir,
// mla-compile-sm90.mlir).
module {
}
