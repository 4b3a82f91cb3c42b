//===- Lowering.h - the per-lane GPU lowering's state -*- C++ -*-===//
//
// Part of mla-lower-to-gpu (lib/Transforms/MLALowerToGPU.cpp; its banner
// describes the placements, Placements.h declares them). The Lowering walks
// a kernel and keeps each tile value's placement; its methods are defined
// by op family, one file each (Tiles.cpp, TileOps.cpp, OpWalk.cpp, KvLoop.cpp,
// LowerLoad.cpp, ...): docs/Design.md's table "Where the lowering lives"
// says which file holds what.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TRANSFORMS_GPU_LOWERING_H
#define MLA_TRANSFORMS_GPU_LOWERING_H

#include "Placements.h"

namespace mlir::mla::gpulower {

struct Lowering {
  OpBuilder &b;
  const TargetInfo &target;
  int64_t warps, wave, threads;
  Value tid, lane, warp;
  // Runtime lane offsets of the A, B and C layouts.
  Value aRow, aCol, bRow, bCol, cRow, cCol;
  Value smemBase;
  SharedMemoryPlan smem;      ///< the regions' byte offsets (allocSmem)
  int64_t lastSmemOffset = 0; ///< byte offset of the last allocSmem region
  /// How the kernel's KV loops get their tiles ahead of use (KvLoop.cpp,
  /// KvTileCopy.cpp, KvTileRegisters.cpp, KvTileTensorMap.cpp).
  struct KvTileStream {
    std::optional<Prefetch> prefetch;       ///< the loop being lowered's copy
    std::optional<RegPrefetch> regPrefetch; ///< or its tile in registers
    /// First tiles loaded at the Q load, before their loop (by loop op).
    DenseMap<Operation *, RegPrefetch> regStarted;
    DenseMap<Operation *, Prefetch> started; ///< double buffers set up ahead
    /// Buffers of the KV loop's async tile copy: one tile in flight while
    /// one is computed. H200 (qp16, 8 warps): 3 or 4 buffers fit one program
    /// an SM; 2 or 3 tiles in flight ran 256 x 8192 at 1.95 / 1.87 us a tile
    /// and SM against 1.6 with two programs of one tile in flight each.
    static constexpr int64_t stages = 2;
    bool asyncCopies = false; ///< some KV loop double-buffers its tile
    Value map; ///< the kernel's tensor-map argument, whose box has this many
    int64_t mapRows = 0, mapBoxes = 0; ///< rows and 64-column boxes a copy
  } kvTiles;
  /// The KV loop being lowered (all null outside one), saved and restored
  /// as a whole around a nested one (KvLoop.cpp).
  struct KvLoopFrame {
    Block *body = nullptr; ///< its body
    /// Whether a barrier runs straight in the body before the current
    /// point (see barrierBeforeRewrite).
    bool bodyBarrier = false;
    Value lower, step; ///< its lowered bounds
  } kvLoop;
  gpu::GPUFuncOp func; ///< the kernel function being built
  IRMapping scalars;
  DenseMap<Value, std::shared_ptr<Tile>> tiles;
  /// Elementwise ops a tile load already applied (lowerLoad, foldableChain).
  DenseSet<Operation *> folded;
  Operation *diagOp = nullptr;
  /// The pass's report-placements option: every tile op gets a remark
  /// naming its result's placement and the decisions behind it, so that
  /// lit tests of single ops can check them (mla-lower-to-gpu-*.mlir).
  bool reportPlacements = false;
  /// Decisions an op's lowering took that its placement does not show (the
  /// copy path of a load, the matrix instruction of a dot), for the report.
  DenseMap<Operation *, SmallVector<std::string, 2>> notes;
  void note(Operation *op, const Twine &what) {
    if (reportPlacements)
      notes[op].push_back(what.str());
  }
  /// Emits the remark of `op` (reportPlacements).
  void reportPlacement(Operation *op);

  Lowering(OpBuilder &b, const TargetInfo &t, int64_t warps)
      : b(b), target(t), warps(warps), wave(t.chip.facts.waveSize),
        threads(warps * t.chip.facts.waveSize) {}

  Location loc() { return diagOp ? diagOp->getLoc() : b.getUnknownLoc(); }

  Value idx(int64_t v) { return cstIndex(b, loc(), v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc(), x, y); }
  Value addc(Value x, int64_t c) { return c ? add(x, idx(c)) : x; }
  Value mul(Value x, int64_t c) {
    if (c == 1)
      return x;
    return arith::MulIOp::create(b, loc(), x, idx(c));
  }

  /// sum_j bit_j(lane) * (row or col of base j).
  Value laneOffset(Value laneV, ArrayRef<Coord> bases, bool row);
  void init(Location l);

  /// A fresh shared-memory region holding a rows x cols tile of `elt`,
  /// swizzled (below) or row-major with rows padded (paddedRowBytes in
  /// mla/SharedMemoryPlan.h), placed by `smem`. The view's shape is the
  /// padded one; tiles index it in range. `swizzle` forces the swizzle.
  Value allocSmem(int64_t rows, int64_t cols, Type elt, bool swizzle = false);
  /// Every view of shared memory: `shape` of `storage` from byte `offset`
  /// (an index); swizzledViewAt: a rows x cols tile of `elt`, swizzled.
  Value smemViewAt(Value offset, ArrayRef<int64_t> shape, Type storage);
  Value swizzledViewAt(Value offset, int64_t rows, int64_t cols, Type elt);

  /// Whether a rows x cols tile of `elt` is stored swizzled
  /// (smemSwizzledOffset: atoms of 64 columns, a row's 16-byte chunks
  /// permuted) instead of padded rows: where the matrix instruction reads
  /// shared memory (sm_90a's wgmma), every 16-bit tile of whole 8-row
  /// groups and 64-column atoms (128-byte swizzle), and where fp8Operands
  /// every such fp8 tile (64-byte swizzle). View: [cols / 64][rows][64].
  bool swizzled(int64_t rows, int64_t cols, Type elt) const {
    return target.mma->smemOperands &&
           (storedBytes(elt) == 2 || (storedBytes(elt) == 1 && fp8Operands)) &&
           rows % 8 == 0 && cols % 64 == 0;
  }
  /// The indices of element (r, c) of shared-memory view `view` (see
  /// smemIndices). A vector access of up to 8 elements from a column that
  /// is a multiple of its length stays within one 16-byte chunk either way.
  SmallVector<Value> smemAt(Value view, Value r, Value c) {
    return smemIndices(b, loc(), view, r, c);
  }
  /// The element offset of (r, c) in a tile of `rows` rows stored in the
  /// 128-byte swizzle (`swz`, smemSwizzledOffset's place in elements) or in
  /// padded rows of `rowElems` elements.
  Value smemElemOffset(bool swz, Value r, Value c, int64_t rows,
                       int64_t rowElems, int64_t elemBytes = 2);
  /// The 16-bit type of the first dot reading (through slices) a KV
  /// loop's fp8 tile of whole atoms on a chip whose instruction reads
  /// shared memory, where that dot does not read fp8 itself. Loaded a tile
  /// ahead into registers where it can be (registerPrefetchOf); else copied
  /// into the upper half of the converted tile's own region (atoms of 64
  /// bytes) and converted atom by atom into it (convertedTile): no separate
  /// staging buffer (94 KiB, two programs per SM). Null otherwise.
  Type stagesInPlace(LoadOp op);
  /// The bytes allocSmem takes for a rows x cols tile of `elt`.
  int64_t smemTileBytes(int64_t rows, int64_t cols, Type elt) const {
    int64_t bytes = storedBytes(elt);
    return swizzled(rows, cols, elt) ? rows * cols * bytes
                                     : rows * paddedRowBytes(cols * bytes);
  }
  static bool isSwizzledView(Value view) {
    return cast<MemRefType>(view.getType()).getRank() == 3;
  }

  /// A workgroup barrier (after an async-proxy fence where wgmma reads shared
  /// memory, unless not `asyncFence`); with `anyOf` (i1) the target's voting
  /// barrier, whose vote it returns (TargetInfo::barrierAny). OpWalk.cpp.
  Value barrier(Value anyOf = {}, bool asyncFence = true);

  /// The barrier before overwriting a shared-memory region that the
  /// previous execution of the same code may still be reading. Every region
  /// belongs to one op (allocSmem never hands one out twice), so that
  /// previous execution is the previous iteration of the enclosing KV loop,
  /// if any; a barrier already placed straight in the loop body (not under
  /// a condition or in an inner loop) before this point separates the two,
  /// and code outside the loop runs once.
  void barrierBeforeRewrite() {
    if (kvLoop.body && !kvLoop.bodyBarrier)
      barrier();
  }

  LogicalResult fail(const Twine &msg) { return diagOp->emitOpError(msg); }

  //===--------------------------------------------------------------------===//
  // Layouts
  //===--------------------------------------------------------------------===//

  FailureOr<AccLayout> accLayout(RankedTensorType t);

  /// The layout whose rows a RowSlice of `rows` entries follows: that of
  /// any Acc tile with those rows (the row distribution does not depend on
  /// the column count).
  FailureOr<AccLayout> rowLayout(int64_t rows) {
    return accLayout(
        RankedTensorType::get({rows, warps * target.mma->n}, b.getF32Type()));
  }

  /// Row and column of register r of an Acc tile in this lane. Columns are
  /// interleaved across a warp's instruction tiles: column n of the instruction
  /// in tile j is the tile's column warpCol + n * tiles + j (not warpCol + j *
  /// N + n). A lane then holds the same instruction column of every tile in
  /// adjacent tile columns, so the B operand of a dot that produces this tile,
  /// read along its columns (V in O += P V), comes in one wide load per row for
  /// all tiles instead of one element per tile (see lowerDot). Rows and row
  /// reductions are unaffected. Where the chip's transposing LDS read supplies
  /// that B operand instead (chooseColumnOrder), columns stay in natural order:
  /// the read needs a tile's 16 columns adjacent.
  std::pair<Value, Value> accCoord(const AccLayout &l, int64_t r) {
    int64_t mb = r / l.perBlock(), j = (r / l.elems) % l.tiles, i = r % l.elems;
    return {addc(cRow, l.elemRow(i) + mb * l.mi->m),
            tileColumn(l, addc(cCol, l.elemCol(i)), j)};
  }

  /// The tile column of this warp's instruction column `n` in tile `j`.
  Value tileColumn(const AccLayout &l, Value n, int64_t j) {
    return tileColumnOf(l, warp, n, j);
  }
  /// The same for warp `w`'s columns.
  /// LowerDot.cpp.
  Value tileColumnOf(const AccLayout &l, Value w, Value n, int64_t j);
  /// The other warp of this warp's pair (2p, 2p + 1).
  Value partnerWarp() { return arith::XOrIOp::create(b, loc(), warp, idx(1)); }

  //===--------------------------------------------------------------------===//
  // Reading tiles
  //===--------------------------------------------------------------------===//

  /// Element (r, c) of a Smem / Expr tile as f32.
  Value readF32(const Tile &t, Value r, Value c);

  /// A stored element of float type `elt` as a stored operand of type
  /// `op` (bf16 or f16; i16): as is when the types agree; fp8 exactly
  /// (every e4m3 value is a bf16 and an f16 value); anything else rounded.
  Value storedToOperand(Value stored, Type elt, Type op);

  /// Element (r, c) as a stored operand of type `op` (i16).
  Value readAs(const Tile &t, Value r, Value c, Type op);

  /// A pair of stored elements of type `elt` (vector<2 x storage>) as two
  /// stored operands of type `op`: fp8 through the chip's pair conversion
  /// where it has one, else element by element.
  std::array<Value, 2> pairToOperand(Value pair, Type elt, Type op);

  /// Bytes between consecutive rows of a stored tile's view.
  static int64_t rowStrideBytes(const Tile &t) {
    auto mt = cast<MemRefType>(t.view.getType());
    return mt.getDimSize(1) * storedBytes(mt.getElementType());
  }

  /// Elements (r, c) … (r, c + w - 1) of a stored tile as stored operands
  /// of type `op`, with one w-element shared-memory load (fp8 pairs through
  /// the chip's pair conversion where it has one). The caller makes sure
  /// the load is aligned: `c` + the tile's column offset a multiple of w,
  /// row starts a multiple of w elements apart.
  SmallVector<Value> readRun(const Tile &t, Value r, Value c, int64_t w,
                             Type op);

  /// The lane's operand elements of one matrix instruction grouped into
  /// runs that one aligned load fetches: element indices whose coordinates
  /// lie next to each other in a stored row (whichever indices hold them),
  /// in row order, of the first of `widths` that fits (else single
  /// elements). `transposed` says that the layout's rows run along the
  /// stored columns. A run needs every lane's start (lane bases, tile
  /// offset, row stride) to be a multiple of its length.
  SmallVector<SmallVector<int64_t>> operandRuns(const Tile &t,
                                                const LaneLayout &layout,
                                                bool transposed,
                                                ArrayRef<int64_t> widths);

  /// The lane's operand elements of one matrix instruction as stored
  /// operands of type `op` (bf16 or f16): element i at `at(i)` (row,
  /// column) of `t`, runs of up to 16 bytes of contiguous stored elements
  /// read with one load.
  SmallVector<Value>
  readOperand(const Tile &t, const LaneLayout &layout, bool transposed, Type op,
              function_ref<std::pair<Value, Value>(Coord)> at);

  /// The lane's operand elements of one matrix instruction as stored
  /// values (no conversion), for instructions that read the tile's own
  /// element type; runs of up to 16 bytes of contiguous stored elements
  /// read with one load.
  SmallVector<Value>
  readOperandRaw(const Tile &t, const LaneLayout &layout, bool transposed,
                 function_ref<std::pair<Value, Value>(Coord)> at);

  /// A lane's stored operand elements (in K order) as the operand: as they
  /// are when `raw` or already of type `op`, fp8 pairs of consecutive
  /// elements through the chip's pair conversion, others one by one
  /// (readAcrossTiles, readTransposedTiles).
  SmallVector<Value> storedToOperands(ArrayRef<Value> stored, Type elt, Type op,
                                      bool raw);

  /// readAcrossTiles for 1-byte elements: the byte transpose from "one
  /// vector per element, one byte per tile" to "per tile its elements",
  /// with byte permutes of i32 words (TargetInfo::bytePerm): rows e, e + 1 of
  /// tiles j .. j + 3 interleave into the pairs of tiles j, j + 1 and
  /// j + 2, j + 3; a second level joins pairs of rows e .. e + 3. Pairs go
  /// through the chip's fp8 pair conversion unless `raw`.
  SmallVector<SmallVector<Value>>
  transposeBytes(ArrayRef<SmallVector<Value>> loads, int64_t n, int64_t tiles,
                 int64_t w, bool raw, Type elt, Type op);

  /// The lane's A elements of one 16x16 step (rows 0-15, columns kk ..
  /// kk + 15 of `t`) with one ldmatrix.x4: lane l addresses row
  /// (l mod 8) + 8 ((l / 8) mod 2), column kk + 8 (l / 16), i.e. row l mod 8
  /// of matrix l / 8; register j, half h is A element 2j + h (checked
  /// against the descriptor by MatrixInstrTest.LdmatrixX4MatchesALayout).
  SmallVector<Value> readAByLdmatrix(const Tile &t, Value kk);

  /// The lane's B operand elements of one K step for all `tiles`
  /// instruction tiles of a dot, read along the tile's rows: element e of
  /// tile j sits at `at(coord of e)` + (0, j), so each element is one
  /// w-element load per w tiles (w up to 16 bytes). Returns per tile the
  /// elements as stored (`raw`) or as stored operands of type `op`, fp8
  /// pairs of consecutive elements through the chip's pair conversion;
  /// empty when the tile is not in shared memory or the loads would be
  /// misaligned (the caller then reads tile by tile).
  SmallVector<SmallVector<Value>>
  readAcrossTiles(const Tile &t, const LaneLayout &layout, int64_t tiles,
                  bool raw, Type op,
                  function_ref<std::pair<Value, Value>(Coord)> at);

  /// The shared tile an elementwise chain ending in `v` reads, if nothing
  /// else reads it or any link of the chain: then the chain can be evaluated
  /// in place.
  std::shared_ptr<Tile> soleRoot(Value v);

  /// Evaluates a lazy Smem/Expr tile `v` into shared memory (cooperative,
  /// one element per thread per step): into its root's region when the
  /// root is dead afterwards, else into a new region. With the root's
  /// element type each thread reads and writes the same element, so no
  /// barrier is needed between; with a narrower one (Q rounded to fp8) the
  /// elements move, so every thread reads all of its elements first.
  std::shared_ptr<Tile> materialize(Value v, const std::shared_ptr<Tile> &t);

  /// Makes a register tile readable as a matrix operand: writes it to a
  /// new shared region in its element type.
  FailureOr<std::shared_ptr<Tile>> ensureShared(std::shared_ptr<Tile> t);

  //===--------------------------------------------------------------------===//
  // Reductions over the rows of an Acc tile
  //===--------------------------------------------------------------------===//

  /// Reduces `regs` (Acc layout) per row with `combine`; returns one value
  /// per row group, identical in every lane and warp that holds the row.
  SmallVector<Value> rowReduce(const AccLayout &l, ArrayRef<Value> regs,
                               float identity,
                               function_ref<Value(Value, Value)> combine) {
    return acrossLanesAndWarps(l, laneRowReduce(l, regs, identity, combine),
                               identity, combine);
  }

  /// This lane's share of each row: its own elements of `regs` (Acc
  /// layout) combined per row group.
  SmallVector<Value> laneRowReduce(const AccLayout &l, ArrayRef<Value> regs,
                                   float identity,
                                   function_ref<Value(Value, Value)> combine) {
    SmallVector<Value> part(l.rowGroups.size(), cstF32(b, loc(), identity));
    for (int64_t r = 0; r < l.size(); ++r) {
      int64_t g = l.group(r);
      part[g] = combine(part[g], regs[r]);
    }
    return part;
  }

  /// The larger of two f32 values, NaN ignored (llvm.maxnum: one
  /// instruction on both vendors; arith.maxnumf calls libdevice on NVVM).
  Value maxNum(Value x, Value y);
  /// The maximum of `v` over every thread of the program (NaN ignored).
  Value programMax(Value v);
  /// mla.quant_scale of a tile in shared memory (lowerLoad folds it instead
  /// where it rounds its tile in registers).
  LogicalResult lowerQuantScale(QuantScaleOp op);

  /// Per-lane shares of each row group (`part`) combined over the lanes and
  /// warps that hold the row.
  SmallVector<Value>
  acrossLanesAndWarps(const AccLayout &l, SmallVector<Value> part,
                      float identity,
                      function_ref<Value(Value, Value)> combine);

  //===--------------------------------------------------------------------===//
  // Ops
  //===--------------------------------------------------------------------===//

  std::shared_ptr<Tile> regTile(Kind k, RankedTensorType t,
                                SmallVector<Value> regs) {
    auto tile = std::make_shared<Tile>();
    tile->kind = k;
    tile->type = t;
    tile->regs = std::move(regs);
    return tile;
  }

  std::shared_ptr<Tile> get(Value v) { return tiles.lookup(v); }

  LogicalResult lowerFill(FillOp op);

  /// Row and column (in elements) of 16-byte chunk `chunk` (of `vec`
  /// elements) of a tile with `cols` columns: chunks run row by row.
  std::pair<Value, Value> chunkCoord(Value chunk, int64_t vec, int64_t cols) {
    Value e = mul(chunk, vec);
    return {arith::DivUIOp::create(b, loc(), e, idx(cols)),
            arith::RemUIOp::create(b, loc(), e, idx(cols))};
  }

  /// The elementwise ops that only re-round or scale `op`'s loaded tile:
  /// the longest chain of single-use mla.cast / mla.scale ops from it (with
  /// scale factors already lowered) that ends in an element type of the
  /// loaded one's storage width (bf16 Q -> f32 -> scaled -> bf16, or
  /// -> f16 for qp_type = f16; with `toFp8`, one that ends in fp8 instead:
  /// bf16 Q -> f32 -> fp8). A value may also feed an mla.quant_scale whose
  /// scale the next mla.scale applies (fp8 Q): the chain holds it before
  /// that scale. lowerLoad applies them to the loaded registers.
  SmallVector<Operation *> foldableChain(LoadOp op, bool toFp8 = false);
  LogicalResult lowerLoad(LoadOp op);

  /// A tile-IR index value re-evaluated with the KV loop's induction
  /// variable replaced by `iv`: the arith ops between it and the induction
  /// variable are cloned, values from outside the loop taken as lowered.
  Value rematAt(Value v, KvLoopOp loop, Value iv, IRMapping &m);

  /// Whether the KV loop's tile load `op` can be double-buffered with async
  /// copies: a rank-2 source with identity layout and static rows of whole
  /// 16-byte chunks, indices computed from the induction variable by arith
  /// ops only, chunks a multiple of the threads.
  bool canPrefetch(LoadOp op, KvLoopOp loop, int64_t reserve);
  /// Whether `op`'s indices and bound are arith on the induction variable and
  /// values from outside the loop (computable for another iteration).
  bool computableAhead(LoadOp op, KvLoopOp loop);

  // KvTileRegisters.cpp (sm_90a): the KV loop's fp8 tile, or mxfp4 data and
  // scales, a tile ahead in registers (RegPrefetch).
  std::optional<RegPrefetch> registerPrefetchOf(LoadOp op, KvLoopOp loop);
  /// Where S^T = K Q^T (wgmma, fp8 K) takes K as register A (RegPrefetch::
  /// kRegisters): the K order of an atom, which Q is stored in (kOrderFor).
  std::optional<GroupedOperands> registerAGrouping(DotOp d);
  static constexpr int64_t kMaxRegisterRounds = 20; ///< chunks a thread
  /// The tile(s) at iteration `iv` as 16-byte chunks (+ i32 scales): zeros
  /// (scale 127) where `present` is false or at rows from the bound;
  /// `entry`: a one-page tile's entry loaded ahead (RegPrefetch::pageAhead).
  SmallVector<Value> loadTileToRegisters(const RegPrefetch &p, Value iv,
                                         Value present, Value entry = {});
  void loadNextTileToRegisters(RegPrefetch &p); ///< p.next, if any
  void storeChunkPieces(const Tile &dst, const RegPrefetch &p, Value chunk,
                        ArrayRef<Value> pieces);
  /// Chunk `chunk`'s bytes into `dst` in paired columns (PairedVMap).
  void storeChunkPaired(const Tile &dst, const RegPrefetch &p, int64_t chunk,
                        Value bytes);
  void decodeMxfp4Chunks(const Tile &dst, const RegPrefetch &p);
  /// Loads `loop`'s first tile here (at the Q load or ahead of the loop);
  /// lowerRegisterPrefetched converts one and loads the next in the loop.
  std::optional<RegPrefetch> startRegisterPrefetch(KvLoopOp loop);
  LogicalResult lowerRegisterPrefetched(Operation *op);

  /// Async copies (cp.async, 16 bytes each, bypassing L1) of `op`'s tile
  /// from (row0, col0) into the shared region at byte `dstOffset` (as
  /// allocSmem lays it out); rows from the bound on are zero-filled (size
  /// 0, source clamped to the tile's first chunk). A paged load's `table`
  /// and `tableOffset` are lowered values (null: contiguous). `wholeTiles`:
  /// a paged mask-free tile within one page copies without a per-copy
  /// bound where the page lies wholly in the source (a branch per tile; the
  /// prefetched tiles measured slower with it).
  void emitAsyncTileCopy(LoadOp op, Value row0, Value col0, Value bound,
                         Value dstOffset, Value table = Value(),
                         Value tableOffset = Value(), bool wholeTiles = false);

  /// The L2 policy (ChipTuning::kvEvictFirstTiles; null: none) of the
  /// reads of KV tile `op` in loop `loop`, its lowered bounds `lower` and
  /// `upper`: the register loads' and the tensor-map copies' alike. None
  /// for a paged tile.
  Value kvReadPolicy(LoadOp op, KvLoopOp loop, Value lower, Value upper);

  /// KvTileTensorMap.cpp: KV tiles sent by the tensor memory accelerator
  /// (ChipFacts::bulkTensorCopies), their mbarriers, copies and waits, the
  /// e4m3 single buffer's early sends (earlySends: view, address, mbarrier).
  bool tensorMapCopies(LoadOp op);
  bool earlySendable(LoadOp op);
  void startEarlySend(KvLoopOp loop);
  void sendNextTileEarly(LoadOp op);
  DenseMap<Operation *, std::tuple<Value, Value, Value>> earlySends;
  int64_t tensorMapBarriers(LoadOp op, int64_t count);
  void sendTensorMapTile(LoadOp, Value row0, Value col0, Value dst, Value mbar,
                         Value policy, Value tableOffset = Value());
  Value tensorMapRow(LoadOp op, Value row0, Value tableOffset);
  SmallVector<Value, 3> tensorMapBox(Value row, Value col0);
  void awaitTensorMapTile(LoadOp, Value mbar, Value parity, Value row0,
                          Value bound, Value dst);

  /// Whether tile load `op` in a KV loop is copied by LDS DMA loads
  /// (ChipFacts::ldsDmaLoads16): a contiguous rank-2 source with identity
  /// layout, rows of whole 16-byte chunks, the padded tile a whole number
  /// of wave-loads, stored as loaded (no K order, no cast chain).
  bool ldsDmaCopies(LoadOp op);

  /// The LDS DMA copy of `op`'s tile from source row `row0`, column
  /// `col0` into the padded tile at shared byte `dstOffset`. A wave-load
  /// fills 64 consecutive 16-byte chunks of the padded tile (lane l the
  /// chunk 64 i + l of the tile, its row c / rowChunks, its 16-byte column
  /// c mod rowChunks), so the waves split the tile's wave-loads in
  /// contiguous runs (the first `extra` waves one more). The source is a
  /// buffer over the tile's rows up to `bound` (boundedBuffer): rows past
  /// it and the padding chunks (offset 2^31) load zeros.
  void emitLdsDmaTileCopy(LoadOp op, Value row0, Value col0, Value bound,
                          Value dstOffset);

  /// A paged load's row map for the tile from logical row `start`
  /// (PagedRows, Placements.h).
  PagedRows pagedRows(LoadOp op, Value source, Value start, Value bound,
                      Value table, Value offset);
  /// Whether every tile of paged load `op` lies within one page: pages a
  /// multiple of its rows, and so its start (the KV loop's induction
  /// variable, by whole tiles from a split range's lower end).
  bool tilesWithinOnePage(LoadOp op);
  /// Row `start`'s page entry, table[offset + start / page_size] (index).
  Value pageEntry(LoadOp op, Value start, Value table, Value offset);
  /// Such a tile as a contiguous one, given its page's entry `e`: its first
  /// source row (e x page_size + start % page_size) and a bound keeping its
  /// rows below the old bound and in the source; an entry that names no
  /// row of the source gives row 0 and bound 0 (every row zero).
  std::pair<Value, Value> onePageRange(LoadOp op, Value source, Value start,
                                       Value bound, Value e);
  /// The source row of tile row `r` and whether it is there (below the
  /// bound, and its entry names a row of the source); row 0 where not.
  std::pair<Value, Value> pagedRow(const PagedRows &p, Value r);

  /// `v` as a lowered scalar at the current point: its lowering if it has
  /// one, else a clone of the pure arith ops that compute it from lowered
  /// values (null where that is not possible): code the tile IR places
  /// later starts earlier (startPrefetch). readyAhead: whether `v`, in
  /// `loop`, is arith on its induction variable over such values.
  Value scalarNow(Value v, IRMapping &m);
  bool readyAhead(Value v, KvLoopOp loop, IRMapping &m);

  /// Sets up the double buffer of KV loop `loop`'s tile (if it has one
  /// canPrefetch accepts) and sends the first tile's async copies, at the
  /// current point. `reserve` bytes of shared memory are counted as
  /// allocated already (a tile the caller is about to allocate). Called at
  /// the Q load, the first tile's memory latency overlaps Q's copy; null
  /// if the loop's bounds or the tile's indices cannot be computed yet.
  std::optional<Prefetch> startPrefetch(KvLoopOp loop, int64_t reserve);

  /// The KV loop's multi-buffered tile load: wait for this tile's copies,
  /// start tile t + kvTiles.stages - 1's into the buffer the previous iteration
  /// read (earlySend: sendEarlyTile, once its reader is done), read this.
  LogicalResult lowerPrefetchedLoad(LoadOp op);
  void sendEarlyTile();

  LogicalResult
  lowerElementwise(Value result, Value source,
                   std::function<Value(OpBuilder &, Location, Value)> fn);

  // The elementwise tile ops, slices and masks (TileOps.cpp); mla.dequant of
  // shared-memory byte tiles into a bf16 tile there (LowerDequant.cpp).
  LogicalResult lowerCast(CastOp op);
  LogicalResult lowerScale(ScaleOp op);
  /// mla.split_terms / mla.sum_terms (LowerTerms.cpp).
  LogicalResult lowerSplitTerms(SplitTermsOp op);
  LogicalResult lowerSumTerms(SumTermsOp op);
  LogicalResult lowerSlice(SliceOp op);
  LogicalResult lowerDequant(DequantOp op);
  LogicalResult lowerMask(MaskOp op);

  /// The grouping of K steps for a dot of `mi` over K = `k` whose B is
  /// stored as `rhsElt` and read along K: as many steps as keep a lane's B
  /// bytes within one 16-byte load and divide K.
  static std::optional<GroupedOperands> groupingFor(const MatrixInstr *mi,
                                                    Type rhsElt, int64_t k) {
    int64_t bBytes = storedBytes(rhsElt);
    for (int64_t steps = 8; steps > 1; steps /= 2) {
      auto g = groupKSteps(*mi, steps);
      if (g && g->kRun * bBytes <= 16 && k % g->k == 0)
        return g;
    }
    return std::nullopt;
  }

  /// The K order a loaded tile is stored in (Tile::kPerm), applied by its
  /// copy (4-byte pieces), where the tile (through element-wise casts /
  /// scales) is only the left operand of grouped dots in a KV loop: sm_90's
  /// A read by one ldmatrix.x4 a step, or (registerAGrouping) sm_90a's Q
  /// against K in registers.
  std::optional<GroupedOperands> kOrderFor(LoadOp ld);

  /// The column a kPerm tile stores source column `col` at: the inverse of
  /// GroupedOperands::physicalK (it only moves bits; the inverse moves back).
  Value storedColumn(const GroupedOperands &g, Value col);

  LogicalResult lowerDot(DotOp op);

  /// mla.dot on warpgroup MMAs that read both operands from shared memory
  /// (MatrixInstr::smemOperands: sm_90a's wgmma), transposed: the dot's
  /// columns are the instruction's M (64 per warpgroup tile), its rows N,
  /// its right operand A (K-major for S = Q K^T, MN-major for O = P V), its
  /// left B (K-major): swizzled tiles of the instruction's type (P is
  /// written to one first).
  LogicalResult dotOnWarpgroups(DotOp op, const AccLayout &l);
  /// Its S^T with K from registers, `init` its accumulator chains: per atom
  /// the chunks converted (stored for V), then its K steps in register form.
  LogicalResult dotRegisterA(DotOp op, const AccLayout &l,
                             const MatrixInstr *mi, const Tile &q, Value bDesc,
                             ArrayRef<Value> init);
  /// Its O^T with V as register A from `v` (PairedVMap), `p` (P^T) as B.
  LogicalResult dotRegisterV(DotOp op, const AccLayout &l,
                             const MatrixInstr *mi, const Tile &p,
                             const Tile &v, Value bDesc, ArrayRef<Value> init);

  /// An fp8 shared tile as a swizzled tile of 16-bit type `to` for wgmma,
  /// converted once (exactly) at its first dot and shared by the later ones
  /// (or, a swizzled fp8 tile, `t`'s columns only). Null where the tile does
  /// not split into 16-byte rounds or other columns were converted.
  std::shared_ptr<Tile> convertedTile(const Tile &t, Type to);
  /// convertedTile's conversions (Fp8Tiles.cpp): into a new swizzled tile, or
  /// in place (Tile::convertInto; a barrier only before unread staged bytes).
  std::shared_ptr<Tile> convertToNewTile(const Tile &t, Type to);
  std::shared_ptr<Tile> convertSwizzledColumns(const Tile &t, Type to);
  std::shared_ptr<Tile> convertInPlace(const Tile &t, Type to);
  /// 16 fp8 bytes (columns c .. c + 15 of row r) stored into `dst` as its
  /// 16-bit type (two 16-byte stores): the conversions' inner step.
  void storeConverted(Value bytes, Type elt, const Tile &dst, Value r, Value c);
  /// An fp8 tile (swizzled, whole atoms) transposed into a new one (V^T, the
  /// e4m3 form's K-major A), once per source; null if it cannot be. Without
  /// `barrierAfter` the caller places the barrier before its use;
  /// `inPlace`: into `t`'s own atoms where it can (vtInPlace).
  std::shared_ptr<Tile> transposedTile(const Tile &t, bool barrierAfter = true,
                                      bool inPlace = false);
  bool vtInPlace(LoadOp ld);
  bool e4m3DoubleBuffered(LoadOp ld);
  /// The two 8-element halves (vector<8 x storage of `to`>) of those.
  SmallVector<Value, 2> convertedPieces(Value bytes, Type elt, Type to);
  /// convertedTile's tiles, by source view and type.
  DenseMap<std::pair<const void *, const void *>, std::shared_ptr<Tile>>
      convertedTiles;

  /// The matrix instructions of `op` over one stretch of its contraction
  /// (TargetInfo::kRanges) on accumulators `init`; returns them. Only a
  /// dot of one range (`whole`) may split K across warp pairs; then
  /// `kSplit` becomes 2 and the result also holds the partner's columns
  /// (finishDot).
  FailureOr<SmallVector<Value>> dotOverK(DotOp op, const AccLayout &l,
                                         const Tile &lhs, const Tile &rhs,
                                         const TargetInfo::KRange &range,
                                         bool whole, SmallVector<Value> init,
                                         int64_t &kSplit);

  /// The chip's transposing LDS reads that supply operand layout `layout`
  /// of elements stored as `elt` (1 or 2 bytes), if it has them and the
  /// layout is made of such reads (MatrixInstr.h, transposedReads).
  std::optional<TransposedReads> transposedReadsFor(const LaneLayout &layout,
                                                    Type elt) const;

  /// Accumulator columns interleaved across instruction tiles (accCoord);
  /// chooseLayouts clears it for a kernel whose B operands read along
  /// their rows all come through the chip's transposing read.
  bool interleaveAccColumns = true;
  bool fp8Operands = false; ///< some dot reads fp8 tiles (swizzled)
  /// Sets both before `kernel`'s ops are lowered (one column order a kernel).
  void chooseLayouts(Operation *kernel);

  /// The lane's B operand elements of one K step (rows kk ..) for all
  /// `tiles` instruction tiles of a dot (natural column order), one or more
  /// transposing reads per tile (TargetInfo::transposedRead): as stored
  /// (`raw`) or as stored operands of type `op`, fp8 pairs through the
  /// chip's pair conversion. Empty unless `t` is a shared tile of 1- or
  /// 2-byte elements whose rows and column offset keep every read 8-byte
  /// aligned and `layout` is made of such reads (transposedReads); the
  /// caller then reads tile by tile.
  SmallVector<SmallVector<Value>>
  readTransposedTiles(const Tile &t, const LaneLayout &layout,
                      const AccLayout &l, Value kk, bool raw, Type op);

  /// Unrolls `loop` (static trip count) and returns the values that replace
  /// its results: unrolling replaces them, so they are held through a
  /// placeholder use meanwhile.
  /// LowerDot.cpp.
  SmallVector<Value> unrollFully(scf::ForOp loop);

  /// The dot's result from its accumulators: with K split across warp pairs
  /// (kSplit 2), `results` holds this warp's columns and then its
  /// partner's, and the pair swaps the partner halves through shared
  /// memory: row block w of `slots` holds, lane-major, the partial sums of
  /// warp w's columns computed by its partner.
  void finishDot(DotOp op, const AccLayout &l, int64_t kSplit,
                 SmallVector<Value> results, RankedTensorType resT);

  LogicalResult lowerOnlineSoftmax(OnlineSoftmaxOp op);
  LogicalResult lowerFinalize(SoftmaxFinalizeOp op);

  /// Stage 2: out = sum_s w_s * partial_s / sum_s w_s, w_s = exp(lse_s -
  /// max lse). One pass over the splits with a running max (the online
  /// softmax rescaling), `width` splits per iteration: their loads are
  /// independent, so a thread has that many in flight instead of waiting
  /// for each (a loop over 64 splits with one load at a time took 17.6 us
  /// on the H200). Past the last split the index is clamped to it and its
  /// weight forced to zero: no branches around the loads. All of a thread's
  /// elements share the loop.
  LogicalResult lowerSplitKReduce(SplitKReduceOp op);
  /// True where the program's splits run as one cluster, after the
  /// cluster's barrier; false on chips without clusters.
  LogicalResult lowerSplitClusterSync(SplitClusterSyncOp op);
  LogicalResult lowerStore(StoreOp op);
  LogicalResult lowerKvLoop(KvLoopOp op);
  LogicalResult lowerIf(scf::IfOp op);
  LogicalResult lowerFor(scf::ForOp op); ///< without iter_args
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerOpByKind(Operation *op);
};

} // namespace mlir::mla::gpulower

#endif // MLA_TRANSFORMS_GPU_LOWERING_H
