//===- MLAOps.td - ops of the mla dialect ------------------*- tablegen -*-===//
#ifndef MLA_OPS_TD
#define MLA_OPS_TD

include "mla/MLADialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"

// A tile is a statically shaped tensor of floats. Where it lives is decided by
// the target lowering.
def MLA_Tile : StaticShapeTensorOf<[AnyFloat]>;
def MLA_F32Tile : StaticShapeTensorOf<[F32]>;
// Bytes of a block-scaled format as stored (mxfp4: packed e2m1 pairs, e8m0
// scales); only `mla.load` makes them and only `mla.dequant` reads them.
def MLA_ByteTile : StaticShapeTensorOf<[I8]>;
def MLA_LoadedTile : StaticShapeTensorOf<[AnyFloat, I8]>;
// Per-row or per-column powers of two (their exponents), as i32.
def MLA_ExpTile : StaticShapeTensorOf<[I32]>;
// A page table: a dynamically sized row of i32 entries.
def MLA_PageTable : Type<
    CPred<"::llvm::isa<::mlir::MemRefType>($_self) && "
          "::llvm::cast<::mlir::MemRefType>($_self).getRank() == 1 && "
          "::llvm::cast<::mlir::MemRefType>($_self).isDynamicDim(0) && "
          "::llvm::cast<::mlir::MemRefType>($_self).getElementType()"
          ".isSignlessInteger(32) && "
          "::llvm::cast<::mlir::MemRefType>($_self).getLayout().isIdentity()">,
    "memref<?xi32>", "::mlir::MemRefType">,
  BuildableType<"::mlir::MemRefType::get({::mlir::ShapedType::kDynamic}, "
                "$_builder.getI32Type())">;

//===----------------------------------------------------------------------===//
// Problem level
//===----------------------------------------------------------------------===//

def MLA_DecodeOp : MLA_Op<"decode", [Symbol]> {
  let summary = "one MLA decode problem (a kernel spec)";
  let description = [{
    Describes one multi-head latent attention decode problem in the absorbed
    form (`forward_absorb`): every query head attends over the same latent KV
    rows. A key row has `qk_dim` = latent + `rope_dim` elements; the value
    row is the first `v_dim` (= latent) elements of the same row.

    Shape and type attributes: `num_heads`, `num_kv_heads`, `qk_dim`,
    `v_dim`, `rope_dim`, `q_type`, `kv_type`, `out_type`, `kv_scale`
    (`"none"` or `"per_tensor"`: one f32 scale that dequantises every KV
    element; `"block32_e8m0"` for `kv_type = f4E2M1FN`), `page_size`,
    `q_seq_len`, `softmax_scale`.

    mxfp4 KV (`kv_type = f4E2M1FN, kv_scale = "block32_e8m0"`, the OCP MX
    format): a cache row holds `qk_dim / 2` bytes, two e2m1 values per byte
    with the even element in the low nibble, and a scale array of e8m0
    bytes (2^(e - 127), 0xFF = NaN), one per block of 32 consecutive values
    of a row, whose row stride is the array's own (quantisers pad it). A
    value is its e2m1 value times its block's scale. Each KV tile is
    dequantised to bf16 (`mla.dequant`: exact but for results beyond bf16's
    range), so Q and P stay bf16 (`qp_type` bf16).

    Numerics attribute `qp_type` (optional): the element type Q and the
    softmax probabilities P are rounded to before the two matrix products.
    `bf16` (the default) keeps Q's precision; the KV's fp8 type quantises Q
    and P to fp8 so that chips with fp8 matrix instructions (gfx950, gfx942,
    and sm_90a's e4m3 wgmma) feed both products directly, with softmax
    scale, log2 e and the KV scale applied to the scores as one scalar. Q is
    first multiplied by the power of two that puts the program's largest
    |q| just below the top of fp8's range (`mla.quant_scale`), and the
    scalar by its inverse: no Q saturates or sinks among fp8's subnormals,
    whatever its magnitude. `f16` (fp8 KV
    only) rounds Q (unscaled, scores scaled as for fp8) and P to f16: every
    e4m3 value is an f16 value, so K and V reach f16 matrix instructions
    with one conversion per pair and no bf16 repacking (sm_90's
    `cvt.rn.f16x2.e4m3x2` gives f16 directly), and f16 keeps 3 more
    mantissa bits than bf16. Q entries beyond f16's range (|q| > 65504)
    become infinite: a numerics contract of this knob.

    `qp_terms` (optional, 1 or 2; 2 only with an fp8 `qp_type` on fp8 KV):
    with 2, Q (after its power-of-two scale) and P are each rounded to two
    fp8 terms, hi = fp8(x) and lo = fp8(x - hi) (`mla.split_terms`), which
    keep about 8 significant bits (bf16's) where one fp8 term keeps 4. Both
    products then read 2 × block_m rows of fp8 (the terms stacked, one
    instruction's N doubled, the KV operand read once) and add the terms'
    products in f32 (`mla.sum_terms`: the scores each tile, the output at
    the end; the accumulator holds both terms' rows, rescaled alike).

    KV layout `kv_layout` (optional): `"contiguous"` (the default: sequence
    b is cache rows `kv_indptr[b] .. kv_indptr[b+1]`), `"token_indices"`
    (SGLang / AITER: its tokens are the cache rows listed in
    `kv_indices[kv_indptr[b] .. kv_indptr[b+1]]`; `page_size = 1`) or
    `"block_table"` (FlashMLA / vLLM: `cache_seqlens[b]` tokens, token t in
    row `block_table[b][t / page_size] * page_size + t % page_size` of a
    cache of `[num_pages, page_size]` rows; `page_size` a power of two up
    to 4096). A token whose index or page entry does not name a row of the
    cache reads as zeros; no table content makes a kernel read outside it.

    `q_seq_len` query tokens per sequence (multi-token prediction: the
    verified draft tokens) attend causally, as FlashMLA's `causal=True`:
    in a sequence of length L, token i (0-based among `q_seq_len`) sees keys
    `[0, L - q_seq_len + i]`; a token that sees no key (L < q_seq_len) gets
    output 0 and LSE -inf, like a zero-length sequence. Query rows are
    numbered token-major, row = i * num_heads + head, the order of
    `q[qo_indptr[b] + i][head]` in memory.

    Schedule attributes: `block_n` (KV tokens per tile), `block_m` (query
    rows per stage-1 program, default 16 = one head tile; a multiple of 16
    that divides `num_heads` (part of one token) or a multiple of
    `num_heads` that divides `q_seq_len * num_heads` (whole tokens, each
    masked at its own causal edge); programs of the same (sequence, split)
    walk the same KV tiles, which the launch order keeps adjacent so that
    they share them through L2), `num_warps` (warps
    / waves per workgroup), `splits` (KV splits per sequence; absent means
    *auto*: chosen at launch time by the split cost model), `one_launch`
    (default false: where the target's stage 1 combines a sequence's splits
    itself in one thread-block cluster (sm_90, sm_90a), plans launch stage 1
    alone that way whenever the splits fit one cluster and the grid's
    clusters fit the device at once, instead of stage 1 + stage 2; written
    into the manifest, applied by the launcher, overridden per call by
    `MLA_DECODE_ONE_LAUNCH` / `MLA_DECODE_TWO_LAUNCHES`; no effect on chips
    without clusters).

    Facts the compiler may rely on: `kv_len` (every sequence has exactly this
    length) and `kv_len_multiple_of` (every sequence length is a multiple of
    it; like Triton's divisibility hints). They let `mla-elide-masks` prove
    stage-1 masks away.

    `mla-expand-decode` replaces the spec with its stage-1 and stage-2
    `mla.kernel`s.

    Example:

    ```mlir
    mla.decode @deepseek_r1_decode_fp8 {
      num_heads = 16, num_kv_heads = 1, qk_dim = 576, v_dim = 512,
      rope_dim = 64, q_type = bf16, kv_type = f8E4M3FN, out_type = bf16,
      kv_scale = "per_tensor", page_size = 1, q_seq_len = 1,
      softmax_scale = 0.0416666679 : f32, block_n = 64, num_warps = 4}
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    I64Attr:$num_heads,
    I64Attr:$num_kv_heads,
    I64Attr:$qk_dim,
    I64Attr:$v_dim,
    I64Attr:$rope_dim,
    TypeAttr:$q_type,
    TypeAttr:$kv_type,
    TypeAttr:$out_type,
    StrAttr:$kv_scale,
    I64Attr:$page_size,
    I64Attr:$q_seq_len,
    F32Attr:$softmax_scale,
    I64Attr:$block_n,
    I64Attr:$num_warps,
    OptionalAttr<I64Attr>:$block_m,
    OptionalAttr<I64Attr>:$splits,
    OptionalAttr<I64Attr>:$kv_len,
    OptionalAttr<I64Attr>:$kv_len_multiple_of,
    OptionalAttr<TypeAttr>:$qp_type,
    OptionalAttr<I64Attr>:$qp_terms,
    OptionalAttr<StrAttr>:$kv_layout,
    OptionalAttr<BoolAttr>:$one_launch
  );
  let assemblyFormat = "$sym_name attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when KV elements need the per-tensor dequantisation scale.
    bool hasKVScale() { return getKvScale() == "per_tensor"; }
    /// True for mxfp4 KV: packed e2m1 pairs with e8m0 block scales.
    bool isMxfp4KV() { return getKvScale() == "block32_e8m0"; }
    /// The strongest divisor of every sequence length that the spec states
    /// (from `kv_len` or `kv_len_multiple_of`); 1 when it states none.
    int64_t getKnownKVLenDivisor();
    /// `kv_layout`, `"contiguous"` when absent.
    llvm::StringRef getKVLayout() {
      return getKvLayout() ? *getKvLayout() : llvm::StringRef("contiguous");
    }
    /// Query rows per stage-1 program (`block_m`, default one head tile).
    int64_t getRowsPerProgram() {
      return static_cast<int64_t>(getBlockM().value_or(16));
    }
  }];
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

def MLA_KernelOp : MLA_Op<"kernel", [
    FunctionOpInterface, IsolatedFromAbove, AutomaticAllocationScope]> {
  let summary = "a GPU kernel over a launch grid, written in tile ops";
  let description = [{
    A kernel function. Arguments are global buffers (`memref`) and scalars
    (`index`, `f32`); a kernel returns nothing and ends in `mla.return`.
    `grid` names the launch dimensions: `"batch"` (sequences), `"splits"`,
    `"heads"`, `"rows"` (query rows of a sequence: `q_seq_len * heads`),
    `"batch_row_groups"` (sequences times the stage-1 programs of one
    sequence's rows, `q_seq_len * heads / block_m`, the program's row group
    varying fastest); `mla.program_id` reads the position of the running
    program (workgroup / CTA) in it. `num_warps` is the number of warps (waves) per
    program.

    Stage-1 kernels also carry `block_n`, `block_m` (query rows per
    program), `variant` (`"masked"` or
    `"mask_free"`), the facts copied from the spec (`kv_len_multiple_of`,
    `split_candidates`: the split counts a launcher may choose) and, on a
    mask-free variant next to a masked one, `dispatch_kv_multiple`: the
    launcher may take the mask-free variant when every sequence length is a
    multiple of `num_splits * dispatch_kv_multiple`. `causal` marks a
    stage-1 kernel whose programs end their KV range at their query token's
    causal edge (`q_seq_len > 1`): the edge falls inside a tile for any
    length, so `mla-elide-masks` leaves such a kernel masked.

    Example:

    ```mlir
    mla.kernel @k(%buf: memref<?x16xf32>) attributes {grid = ["batch"], num_warps = 4 : i64} {
      %b = mla.program_id 0
      %t = mla.fill 0.0 : tensor<16xf32>
      mla.store %t, %buf[%b, %b] : tensor<16xf32> -> memref<?x16xf32>
      mla.return
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<FunctionType>:$function_type,
    OptionalAttr<DictArrayAttr>:$arg_attrs,
    OptionalAttr<DictArrayAttr>:$res_attrs,
    StrArrayAttr:$grid,
    I64Attr:$num_warps,
    OptionalAttr<I64Attr>:$block_n,
    OptionalAttr<StrAttr>:$variant,
    OptionalAttr<I64Attr>:$kv_len_multiple_of,
    OptionalAttr<DenseI64ArrayAttr>:$split_candidates,
    OptionalAttr<I64Attr>:$dispatch_kv_multiple,
    OptionalAttr<I64Attr>:$block_m,
    UnitAttr:$causal
  );
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "StringRef":$name, "FunctionType":$type,
                                 "ArrayRef<StringRef>":$grid, "int64_t":$numWarps)>];
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ArrayRef<Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ArrayRef<Type> getResultTypes() { return getFunctionType().getResults(); }
    bool isMaskFree() { return getVariant() && *getVariant() == "mask_free"; }
  }];
}

def MLA_ReturnOp : MLA_Op<"return", [Pure, HasParent<"KernelOp">, ReturnLike, Terminator]> {
  let summary = "ends a kernel";
  let description = [{
    ```mlir
    mla.return
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def MLA_ProgramIdOp : MLA_Op<"program_id", [Pure]> {
  let summary = "position of the running program in the kernel's grid";
  let description = [{
    Returns the index of the running program (workgroup / CTA) along grid
    dimension `dim` of the enclosing `mla.kernel`.

    ```mlir
    %split = mla.program_id 1
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tile movement
//===----------------------------------------------------------------------===//

def MLA_LoadOp : MLA_Op<"load", [AttrSizedOperandSegments]> {
  let summary = "loads a tile from a global buffer, optionally masked";
  let description = [{
    Reads a tile whose rank r is at most the buffer's rank; the tile spans the
    buffer's trailing r dimensions starting at `indices` (one per buffer
    dimension). Element types must agree: conversions are explicit
    (`mla.cast`, `mla.dequant` for a block-scaled format's bytes, which load
    as `i8` tiles).

    With `bound`, the load is masked along the tile's first dimension: tile
    row `i` is read only if `indices[rank - r] + i < bound`, and is zero
    otherwise. `mla-elide-masks` removes the bound where it proves every row
    in range.

    With `pages`, the rows are gathered through a page table (paged KV; a
    rank-2 source and tile): the row index `x = indices[0] + i` is a
    logical token, and tile row `i` is source row
    `table[table_offset + x / page_size] * page_size + x % page_size`.
    A row whose entry names no row of the source (negative, or at or past
    its rows) reads as zeros, as does a row at or past `bound`, whose entry
    is not read at all: the table is read only for rows below `bound` (all
    rows without one), which the caller keeps inside it.

    ```mlir
    %k = mla.load %kv[%row, %c0] bound %end : memref<?x576xf8E4M3FN> -> tensor<64x576xf8E4M3FN>
    %p = mla.load %cache[%t, %c0] pages %table[%first] page_size 64 bound %len
        : memref<?x576xf8E4M3FN> -> tensor<64x576xf8E4M3FN>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$source,
                       Variadic<Index>:$indices, Optional<Index>:$bound,
                       Arg<Optional<MLA_PageTable>, "", [MemRead]>:$table,
                       Optional<Index>:$table_offset,
                       OptionalAttr<I64Attr>:$page_size);
  let results = (outs MLA_LoadedTile:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` (`pages` $table^ `[` $table_offset `]` `page_size` $page_size)? (`bound` $bound^)? attr-dict `:` type($source) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// Rows gathered through a page table (`pages`).
    bool isPaged() { return static_cast<bool>(getTable()); }
  }];
  let hasVerifier = 1;
}

def MLA_StoreOp : MLA_Op<"store", [AttrSizedOperandSegments]> {
  let summary = "stores a tile to a global buffer, optionally masked";
  let description = [{
    Writes `value` into the buffer's trailing dimensions at `indices`,
    rounding to the buffer's element type (round to nearest even). With
    `bound`, tile row `i` is written only if `indices[rank - r] + i < bound`.

    ```mlir
    mla.store %o, %out[%row, %c0, %c0] : tensor<16x512xf32> -> memref<?x16x512xbf16>
    ```
  }];
  let arguments = (ins MLA_Tile:$value, Arg<AnyMemRef, "", [MemWrite]>:$dest,
                       Variadic<Index>:$indices, Optional<Index>:$bound);
  let assemblyFormat = [{
    $value `,` $dest `[` $indices `]` (`bound` $bound^)? attr-dict `:` type($value) `->` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise tile ops
//===----------------------------------------------------------------------===//

def MLA_FillOp : MLA_Op<"fill", [Pure]> {
  let summary = "a tile with every element equal to a constant";
  let description = [{
    ```mlir
    %m0 = mla.fill 0xFF800000 : tensor<16xf32>
    ```
  }];
  let arguments = (ins F32Attr:$value);
  let results = (outs MLA_F32Tile:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

def MLA_CastOp : MLA_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "converts tile elements to another float type";
  let description = [{
    Extends any float type to f32 exactly, or rounds f32 to bf16 (round to
    nearest even). Other conversions are rejected.

    ```mlir
    %qf = mla.cast %q : tensor<16x576xbf16> -> tensor<16x576xf32>
    ```
  }];
  let arguments = (ins MLA_Tile:$source);
  let results = (outs MLA_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def MLA_DequantOp : MLA_Op<"dequant", [Pure]> {
  let summary = "values of a block-scaled format from its stored bytes";
  let description = [{
    Decodes a tile of a block-scaled format. `format = "mxfp4"` (OCP MX
    fp4): `data` holds two e2m1 values per byte (element 2j in the low
    nibble of byte j, 2j + 1 in the high one) and `scales` one e8m0 byte
    per block of 32 consecutive elements of a row (scale 2^(e - 127); 0xFF
    is NaN). Element (r, c) is `e2m1(nibble c of row r) * scale(r, c / 32)`,
    rounded to the result type: bf16 holds every such value exactly up to
    its largest finite one; larger ones become infinite (scales of 2^126
    and up with values of 4 and up).

    A row that a masked load read as zeros (both bytes zero) decodes to
    zeros.

    ```mlir
    %d = mla.load %kv[%r, %c0] bound %end : memref<?x288xi8> -> tensor<64x288xi8>
    %s = mla.load %kv_scales[%r, %c0] bound %end : memref<?x?xi8> -> tensor<64x18xi8>
    %k = mla.dequant %d, %s format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xbf16>
    ```

    With an `f8E4M3FN` result the values are decoded against a power of
    two per row, which the second result `exponents` (i32, one per row)
    holds: with `r` = max(33, the row's largest scale code), element
    (r, c) is `e2m1 * 2^(e - r + 6)` rounded to e4m3 (nearest even; exact
    for every block whose code e is at least r - 14, so rounding happens
    only in blocks 2^14 below their row's largest), NaN (0x7F) where e is
    0xFF, and `exponents[r] = r - 133`: the decoded value times
    2^exponents[r] is the format's value. The row's largest block then
    lands in e4m3's top binades (at most 6 * 2^6 = 384), and the clamp at
    33 keeps `exponents` >= -100. The matrix products read the e4m3 tile;
    `mla.online_softmax ... col_exp` applies the powers of two to the
    scores and probabilities.

    ```mlir
    %k8, %e = mla.dequant %d, %s format "mxfp4" : tensor<64x288xi8>, tensor<64x18xi8> -> tensor<64x576xf8E4M3FN>, tensor<64xi32>
    ```
  }];
  let arguments = (ins MLA_ByteTile:$data, MLA_ByteTile:$scales,
                       StrAttr:$format);
  let results = (outs MLA_Tile:$result, Optional<MLA_ExpTile>:$exponents);
  let assemblyFormat = [{
    $data `,` $scales `format` $format attr-dict `:` type($data) `,` type($scales) `->` type($result) (`,` type($exponents)^)?
  }];
  let hasVerifier = 1;
}

def MLA_ScaleOp : MLA_Op<"scale", [Pure, AllTypesMatch<["source", "result"]>]> {
  let summary = "multiplies every tile element by a scalar";
  let description = [{
    ```mlir
    %qs = mla.scale %qf, %qk_scale : tensor<16x576xf32>
    ```
  }];
  let arguments = (ins MLA_F32Tile:$source, F32:$factor);
  let results = (outs MLA_F32Tile:$result);
  let assemblyFormat = "$source `,` $factor attr-dict `:` type($source)";
}

def MLA_QuantScaleOp : MLA_Op<"quant_scale", [Pure]> {
  let summary = "the power of two that fits a tile's magnitudes to a narrow float type";
  let description = [{
    `scale` = 2^k for the tile's largest magnitude `amax` (NaN elements
    ignored) and the narrow float type `to`: with 2^E the largest power of
    two not above `to`'s largest finite value (f8E4M3FN: 448, E = 8;
    f8E4M3FNUZ: 240, E = 7; f16: E = 15; bf16: E = 127),
    `k = E - 1 - floor(log2(amax))`, clamped to [-126, 126], so that
    `amax * scale` lies in [2^(E-1), 2^E): the scaled tile rounds to `to`
    without saturating and keeps its small elements above `to`'s
    subnormals as far as the type allows. `amax` zero or subnormal counts
    as 2^-127 (k = 126 after the clamp); an infinite `amax` gives
    k = E - 129. `inverse` is 2^-k exactly (both are normal f32 values).

    Stage 1 uses it for a program's Q tile when Q is rounded to fp8
    (`qp_type` fp8): Q is multiplied by `scale` before the rounding and the
    scores by `inverse`, so that no Q magnitude saturates or vanishes in
    fp8.

    ```mlir
    %s, %inv = mla.quant_scale %qf to f8E4M3FN : tensor<16x576xf32>
    %qs = mla.scale %qf, %s : tensor<16x576xf32>
    %q8 = mla.cast %qs : tensor<16x576xf32> -> tensor<16x576xf8E4M3FN>
    ```
  }];
  let arguments = (ins MLA_Tile:$source, TypeAttr:$to);
  let results = (outs F32:$scale, F32:$inverse);
  let assemblyFormat = "$source `to` $to attr-dict `:` type($source)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// E: the exponent of the largest power of two not above `to`'s
    /// largest finite value.
    int64_t getTopExponent();
  }];
}

def MLA_SplitTermsOp : MLA_Op<"split_terms", [Pure]> {
  let summary = "a tile as two terms of a narrow float type, stacked by rows";
  let description = [{
    For an R×C f32 `source` and a 2R×C result of a narrow float type T
    (f8E4M3FN or f8E4M3FNUZ), each element x = source[r, c] becomes

    ```
    result[r, c]     = hi = round_T(x)
    result[R + r, c] = lo = round_T(x - hi)
    ```

    rounded as `mla.cast` rounds to T (nearest even, saturating at T's
    largest finite value). hi + lo keeps about twice T's significant bits
    (e4m3: about 8, bf16's) while both terms stay in T, so a matrix
    instruction of T's form can take them: an `mla.dot` of the 2R-row tile
    gives both terms' products in one operation (twice the instruction's N,
    the other operand read once), and `mla.sum_terms` adds them.

    ```mlir
    %q2 = mla.split_terms %qs : tensor<16x576xf32> -> tensor<32x576xf8E4M3FN>
    %s2 = mla.dot %q2, %k {transpose_rhs} : tensor<32x576xf8E4M3FN>, tensor<64x576xf8E4M3FN> -> tensor<32x64xf32>
    %s = mla.sum_terms %s2 : tensor<32x64xf32> -> tensor<16x64xf32>
    ```
  }];
  let arguments = (ins MLA_F32Tile:$source);
  let results = (outs MLA_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def MLA_SumTermsOp : MLA_Op<"sum_terms", [Pure]> {
  let summary = "adds the two halves of a tile stacked by rows";
  let description = [{
    For a 2R×C f32 `source`, `result[r, c] = source[r, c] + source[R + r, c]`
    (R×C): the products of the two terms `mla.split_terms` made, summed in
    f32.

    ```mlir
    %o = mla.sum_terms %acc2 : tensor<32x512xf32> -> tensor<16x512xf32>
    ```
  }];
  let arguments = (ins MLA_F32Tile:$source);
  let results = (outs MLA_F32Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def MLA_SliceOp : MLA_Op<"slice", [Pure]> {
  let summary = "a static sub-tile";
  let description = [{
    The sub-tile of `source` of the result's shape starting at `offsets`.
    MLA uses it to take the value part (the first `v_dim` columns) of a KV
    tile.

    ```mlir
    %v = mla.slice %k [0, 0] : tensor<64x576xf8E4M3FN> -> tensor<64x512xf8E4M3FN>
    ```
  }];
  let arguments = (ins MLA_Tile:$source, DenseI64ArrayAttr:$offsets);
  let results = (outs MLA_Tile:$result);
  let assemblyFormat = "$source $offsets attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def MLA_MaskOp : MLA_Op<"mask", [Pure, AllTypesMatch<["source", "result"]>]> {
  let summary = "replaces out-of-range positions of a tile by a constant";
  let description = [{
    Element `j` along dimension `dim` is replaced by `fill` when
    `offset + j >= bound`. Stage 1 uses it to give out-of-range KV tokens a
    score of -inf.

    With `causal %edge every P` (rank 2, `dim = 1`), element (r, j) is also
    replaced when `offset + j >= edge + r floordiv P`: row r's bound grows by
    one every P rows. Stage 1 uses it when a program's rows span several
    query tokens (rows token-major, P = the head count): each token sees one
    more key than the one before it.

    ```mlir
    %sm = mla.mask %s, %n, %end {dim = 1 : i64, fill = 0xFF800000 : f32} : tensor<16x64xf32>
    %sc = mla.mask %s, %n, %end causal %edge every 16 {dim = 1 : i64, fill = 0xFF800000 : f32} : tensor<32x64xf32>
    ```
  }];
  let arguments = (ins MLA_F32Tile:$source, Index:$offset, Index:$bound,
                       Optional<Index>:$row_edge, OptionalAttr<I64Attr>:$row_period,
                       I64Attr:$dim, F32Attr:$fill);
  let results = (outs MLA_F32Tile:$result);
  let assemblyFormat = [{
    $source `,` $offset `,` $bound (`causal` $row_edge^ `every` $row_period)?
    attr-dict `:` type($source)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def MLA_DotOp : MLA_Op<"dot", [Pure]> {
  let summary = "tile matrix product, f32 accumulation";
  let description = [{
    `result = acc + lhs · rhs` (or `lhs · rhsᵀ` with `transpose_rhs`). lhs is
    M×K, rhs is K×N (N×K when transposed), acc and result are M×N f32.
    Operands may have any float element types; they are taken exactly
    (widened to f32) and products are summed in f32 in an unspecified order.
    Without `acc` the sum starts from zero. Which matrix instruction runs it
    and which conversions feed it is the target lowering's choice.

    ```mlir
    %s = mla.dot %q, %k {transpose_rhs} : tensor<16x576xbf16>, tensor<64x576xf8E4M3FN> -> tensor<16x64xf32>
    %o = mla.dot %p, %v acc(%acc : tensor<16x512xf32>) : tensor<16x64xbf16>, tensor<64x512xf8E4M3FN> -> tensor<16x512xf32>
    ```
  }];
  let arguments = (ins MLA_Tile:$lhs, MLA_Tile:$rhs, Optional<MLA_F32Tile>:$acc,
                       UnitAttr:$transpose_rhs);
  let results = (outs MLA_F32Tile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`acc` `(` $acc^ `:` type($acc) `)`)? attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MLA_OnlineSoftmaxOp : MLA_Op<"online_softmax", [Pure,
    AllTypesMatch<["scores", "probs"]>,
    AllTypesMatch<["max", "sum", "new_max", "new_sum"]>,
    AllTypesMatch<["acc", "new_acc"]>]> {
  let summary = "one online-softmax step over a tile of scores (base 2)";
  let description = [{
    `scores` is R×N in the log2 domain (the softmax scale and log2(e) are
    already folded in); `max` and `sum` are the running row max and row sum
    (R), `acc` the running R×D output. Per row r:

    ```
    new_max[r] = max(max[r], max_j scores[r, j])
    alpha      = exp2(max[r] - new_max[r])
    probs[r,j] = exp2(scores[r, j] - new_max[r])
    new_sum[r] = sum[r] * alpha + sum_j probs[r, j]
    new_acc[r] = acc[r] * alpha
    ```

    A row whose max is still -inf (every score masked) keeps alpha = 1 and
    gets probabilities 0, so no NaN is produced.

    `acc` may have a whole multiple k × R of the scores' rows (the products
    of k terms stacked by rows, `mla.split_terms`): its row i is rescaled
    by alpha of row i mod R.

    A lowering may keep `new_max[r] = max[r]` (alpha = 1) in a step where
    no score of the row exceeds max[r] + 8: the probabilities then reach
    2^8 and the sum grows by the same factor, so `mla.softmax_finalize`'s
    output and LSE are unchanged. The sm_90 lowerings do this
    (ChipTuning::rescaleSlackLog2); the host and CDNA lowerings keep the
    exact maximum.

    ```mlir
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %acc : tensor<16x64xf32>, tensor<16xf32>, tensor<16x512xf32>
    ```

    `col_exp` (N entries, i32, each in [-126, 127]) says that column j of
    the scores and of the values the probabilities will weigh were stored
    divided by 2^col_exp[j] (`mla.dequant` to e4m3 makes it: its
    `exponents`). The step then works on x[r, j] = scores[r, j] *
    2^col_exp[j] + col_exp[j], so that its running max covers the factor
    and the probabilities, which the caller multiplies with the stored
    values, stay at most 1; the row sum takes the true weights:

    ```
    x[r,j]     = scores[r, j] * 2^col_exp[j] + col_exp[j]
    new_max[r] = max(max[r], max_j x[r, j])
    probs[r,j] = exp2(x[r, j] - new_max[r])
    new_sum[r] = sum[r] * alpha + sum_j exp2(x[r, j] - col_exp[j] - new_max[r])
    ```

    `mla.softmax_finalize` then gives the softmax of the true scores
    (scores[r, j] * 2^col_exp[j]) over the true values, and their LSE.

    ```mlir
    %p, %m1, %l1, %a1 = mla.online_softmax %s, %m, %l, %acc col_exp %e : tensor<16x64xf32>, tensor<16xf32>, tensor<16x512xf32>, tensor<64xi32>
    ```
  }];
  let arguments = (ins MLA_F32Tile:$scores, MLA_F32Tile:$max, MLA_F32Tile:$sum,
                       MLA_F32Tile:$acc, Optional<MLA_ExpTile>:$col_exp);
  let results = (outs MLA_F32Tile:$probs, MLA_F32Tile:$new_max,
                      MLA_F32Tile:$new_sum, MLA_F32Tile:$new_acc);
  let assemblyFormat = [{
    $scores `,` $max `,` $sum `,` $acc (`col_exp` $col_exp^)? attr-dict `:` type($scores) `,` type($max) `,` type($acc) (`,` type($col_exp)^)?
  }];
  let hasVerifier = 1;
}

def MLA_SoftmaxFinalizeOp : MLA_Op<"softmax_finalize", [Pure,
    AllTypesMatch<["acc", "out"]>, AllTypesMatch<["max", "sum", "lse"]>]> {
  let summary = "normalises the accumulator and computes the log-sum-exp";
  let description = [{
    `out[r] = acc[r] * scale / sum[r]` and `lse[r] = (max[r] + log2(sum[r])) * ln 2`
    (the natural-log LSE of the row's scores, `max` being in the log2 domain).
    `scale` (default 1) is the V dequantisation scale. A row with `sum = 0`
    (no KV token) gets `out = 0` and `lse = -inf`.

    ```mlir
    %o, %lse = mla.softmax_finalize %acc, %m, %l scale %kv_scale : tensor<16x512xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins MLA_F32Tile:$acc, MLA_F32Tile:$max, MLA_F32Tile:$sum,
                       Optional<F32>:$scale);
  let results = (outs MLA_F32Tile:$out, MLA_F32Tile:$lse);
  let assemblyFormat = [{
    $acc `,` $max `,` $sum (`scale` $scale^)? attr-dict `:` type($acc) `,` type($max)
  }];
  let hasVerifier = 1;
}

def MLA_SplitKReduceOp : MLA_Op<"split_k_reduce"> {
  let summary = "LSE-weighted combine of per-split partial outputs";
  let description = [{
    `partial` is B×S×H×D (f32), `lse` is B×S×H. For batch `batch` and the
    result's R heads starting at `head`, over splits `s < num_splits`:

    ```
    w_s    = exp(lse[batch, s, h] - max_s lse[batch, s, h])
    result = sum_s w_s * partial[batch, s, h, :] / sum_s w_s
    ```

    Splits with lse = -inf (no KV token) weigh 0; if every split is empty the
    result is 0.

    `max_splits`, where given, promises `num_splits <= max_splits` (the
    combine inside one thread-block cluster: at most a cluster's programs),
    so that a lowering need not keep loads for more splits in flight.

    ```mlir
    %o = mla.split_k_reduce %part, %lse[%b, %h] splits %n : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<1x512xf32>
    %p = mla.split_k_reduce %part, %lse[%b, %h] splits %n {max_splits = 16 : i64} : memref<?x?x16x512xf32>, memref<?x?x16xf32> -> tensor<2x512xf32>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$partial,
                       Arg<AnyMemRef, "", [MemRead]>:$lse,
                       Index:$batch, Index:$head, Index:$num_splits,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$max_splits);
  let results = (outs MLA_F32Tile:$result);
  let assemblyFormat = [{
    $partial `,` $lse `[` $batch `,` $head `]` `splits` $num_splits attr-dict `:` type($partial) `,` type($lse) `->` type($result)
  }];
  let hasVerifier = 1;
}

def MLA_SplitClusterSyncOp : MLA_Op<"split_cluster_sync"> {
  let summary = "wait for the program's sibling splits, if they form one cluster";
  let description = [{
    The single-launch combine (docs/Design.md, "One launch for small
    batches"). When the launcher ran this stage-1 program's `num_splits`
    splits (grid y) as one thread-block cluster, every program of the
    cluster waits here until all of them have arrived, their global stores
    before it visible to the loads after it, and the result is true: the
    programs may combine their partial outputs themselves. Launched any
    other way (no cluster, one split, or a cluster that is not all the
    splits), the result is false and nothing waits. Targets without
    clusters (CDNA, the host) lower it to false.

    Every program of the grid must reach it alike (it is a barrier for the
    whole cluster when true): place it outside conditions that differ
    between the programs of a sequence.

    ```mlir
    %all = mla.split_cluster_sync %num_splits
    scf.if %all { ... mla.split_k_reduce ... }
    ```
  }];
  let arguments = (ins Index:$num_splits);
  let results = (outs I1:$all);
  let assemblyFormat = "$num_splits attr-dict";
}

//===----------------------------------------------------------------------===//
// Iteration over KV
//===----------------------------------------------------------------------===//

def MLA_SplitRangeOp : MLA_Op<"split_range", [Pure]> {
  let summary = "the KV token range [lo, hi) of one split";
  let description = [{
    Splits a sequence of `length` tokens into `num_splits` ranges.

    * General form: each split holds `per = roundup(ceildiv(length,
      num_splits), block_n)` tokens; `lo = min(split * per, length)`,
      `hi = min(lo + per, length)`. Only the split that holds the end of the
      sequence sees a partial tile; trailing splits may be empty.
    * `exact`: for lengths with `length % (num_splits * block_n) == 0`
      (the launcher's dispatch rule for mask-free kernels):
      `per = length / num_splits`, `lo = split * per`, `hi = lo + per`, and
      every tile of the range is full. Any other length gives the empty
      range `lo = hi = 0`, so that no length makes full tiles run past the
      sequence's end.

    ```mlir
    %lo, %hi = mla.split_range %len, %s, %n block_n 64
    ```
  }];
  let arguments = (ins Index:$length, Index:$split, Index:$num_splits,
                       I64Attr:$block_n, UnitAttr:$exact);
  let results = (outs Index:$lo, Index:$hi);
  let assemblyFormat = [{
    $length `,` $split `,` $num_splits `block_n` $block_n (`exact` $exact^)? attr-dict
  }];
  let hasVerifier = 1;
}

def MLA_KvLoopOp : MLA_Op<"kv_loop", [RecursiveMemoryEffects]> {
  let summary = "loop over the KV tiles of a range";
  let description = [{
    Runs its body for `%n = lo, lo + step, ...` while `%n < hi`, carrying
    `iter_args` (the running max, sum and accumulator of online softmax).
    Tile `[n, n + step)` may extend past `hi` in the last iteration unless the
    range length is a multiple of `step`; ops inside that touch such a tile
    carry a mask (`bound`) until `mla-elide-masks` proves it away.

    ```mlir
    %r:2 = mla.kv_loop %n = %lo to %hi step 64 iter_args(%m = %m0, %l = %l0) -> (tensor<16xf32>, tensor<16xf32>) {
      mla.yield %m, %l : tensor<16xf32>, tensor<16xf32>
    }
    ```
  }];
  let arguments = (ins Index:$lower, Index:$upper, I64Attr:$step,
                       Variadic<AnyType>:$inits);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    Value getInductionVar() { return getBody().getArgument(0); }
    Block::BlockArgListType getRegionIterArgs() {
      return getBody().getArguments().drop_front();
    }
  }];
}

def MLA_YieldOp : MLA_Op<"yield", [Pure, HasParent<"KvLoopOp">, ReturnLike, Terminator]> {
  let summary = "yields the loop-carried values of an `mla.kv_loop` iteration";
  let description = [{
    ```mlir
    mla.yield %m, %l : tensor<16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ValueRange()); }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // MLA_OPS_TD
