//===- Placements.h - where the GPU lowering keeps a tile --------*- C++
//-*-===//
//
// Part of mla-lower-to-gpu (lib/Transforms/MLALowerToGPU.cpp): a tile
// value's placement (shared memory, a lazy expression, registers in the
// accumulator layout, row statistics, blocked) and the accumulator layout
// of a register tile. The Lowering (Lowering.h) keeps one per tile value.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TRANSFORMS_GPU_PLACEMENTS_H
#define MLA_TRANSFORMS_GPU_PLACEMENTS_H

#include "TargetInfo.h"

namespace mlir::mla::gpulower {

//===----------------------------------------------------------------------===//
// Placements
//===----------------------------------------------------------------------===//

enum class Kind { Smem, Expr, Acc, RowSlice, RowPartial, Blocked };

struct Tile {
  Kind kind;
  RankedTensorType type;
  // Smem: the view holds storage elements of `type`'s element type.
  Value view;
  int64_t rowOff = 0, colOff = 0;
  // Smem fp8 staged in place (Lowering::stagesInPlace): the 16-bit
  // swizzled view of the region whose upper half holds these bytes, which
  // convertedTile converts into.
  Value convertInto;
  // Expr: f32 element = fn(f32 element of src).
  std::shared_ptr<Tile> src;
  std::function<Value(OpBuilder &, Location, Value)> fn;
  // Acc / RowSlice / Blocked: f32 values (rounded to `type`'s element type).
  SmallVector<Value> regs;
  // Blocked: thread t holds runs of blockRun adjacent elements, run k of
  // them at element (t + k * threads) * blockRun (register k * blockRun +
  // j holds element j of run k).
  int64_t blockRun = 1;
  // Acc of a narrow element type made by a cast: the stored form of each
  // register (what ensureShared writes; saves re-rounding).
  SmallVector<Value> stored;
  // Smem holding the A operand of grouped dots in their K order: column L
  // holds the source's column kPerm->physicalK(L), so that the grouped
  // steps' A fragments are the instruction's own layout at column L (read
  // with ldmatrix; see kOrderFor).
  std::shared_ptr<const GroupedOperands> kPerm;
  // Smem fp8 bytes in the 64-byte swizzle whose 16-column groups are
  // stored as pairs (c, c + 8) (ChipTuning::wgmmaRegisterV): stored byte
  // 2 i + h of a group is its column i + 8 h, so that ldmatrix.trans
  // hands a lane both rows of its wgmma A fragment (Lowering::
  // dotRegisterV). Only the columns that dot reads are stored.
  bool pairedColumns = false;
};

/// A rank-2 tile of a rank-2 source with identity layout and a static row
/// length: its rows are contiguous runs of the source.
inline bool contiguousRows(LoadOp op) {
  auto src = cast<MemRefType>(op.getSource().getType());
  return src.getRank() == 2 && src.getLayout().isIdentity() &&
         !src.isDynamicDim(1) && op.getResult().getType().getRank() == 2;
}

//===----------------------------------------------------------------------===//
// KV tiles loaded ahead (Lowering::KvTileStream)
//===----------------------------------------------------------------------===//

/// The KV loop's tile load that is double-buffered with async copies
/// (ChipInfo::asyncTileCopy), set while its loop body is lowered.
struct Prefetch {
  LoadOp load;
  KvLoopOp loop;
  /// Buffers of the tile (Lowering::KvTileStream::stages of them, back to
  /// back): tile t of the loop lands in buffer t % stages.
  SmallVector<int64_t> offsets;
  int64_t bufferBytes = 0;
  MemRefType viewType;
  Value lower, step, upper, iv;
  /// Tensor-map copies (Lowering::tensorMapCopies): the shared byte offset
  /// of one mbarrier per buffer; -1: cp.async.
  int64_t mbarOffset = -1;
  /// One buffer whose next tile is sent as soon as its reader (an e4m3
  /// mla.dequant) is done with it, not at the wait (sendNext pending).
  bool earlySend = false, sendNext = false;
};

/// A paged load's row map (LoadOp::isPaged, Lowering::pagedRows) for the
/// tile from logical row `start`, once per tile. A tile within two pages
/// (page_size >= its rows) reads the entries of its first and last row in
/// range; a smaller page is looked up per chunk (an L1 hit after the
/// first).
struct PagedRows {
  Value table, offset, start, bound, sourceRows;
  int64_t pageSize = 0;
  Value first, last; ///< entries of the first and last page (two pages)
};

/// The KV loop's fp8 tile, or mxfp4 data tile and its scales' (read by
/// one dequant), loaded into registers a tile ahead (KvTileRegisters.cpp):
/// the 16-bit type they become, the source bytes of one atom (64 values),
/// this iteration's chunks (loop-carried; mxfp4: then one scale a chunk)
/// and the next's.
struct RegPrefetch {
  LoadOp load, scales;
  DequantOp dequant;
  Type to;
  int64_t atomBytes = 64;
  SmallVector<Value> cur, next;
  KvLoopOp loop;
  Value iv, upper;
  int64_t warps = 4;
  /// fp8 read by a dot as wgmma's register A (Lowering::registerAGrouping):
  /// the chunks in RegisterTileMap::warpRows order, and that dot converts
  /// them, stores the columns other readers take into `pending` (the 16-bit
  /// tile) and loads the next tile.
  bool kRegisters = false;
  /// `pending` is 16-bit (V converted) or, with ChipTuning::
  /// wgmmaRegisterV, fp8 bytes in paired columns (Tile::pairedColumns).
  std::shared_ptr<Tile> pending;
  /// A paged tile within one page (Lowering::tilesWithinOnePage) where
  /// ChipTuning::pageEntriesAhead: the page entry of the tile after the
  /// one in `cur` (loop-carried, loaded a tile before its bytes, so their
  /// loads need not wait for it), and that of the one after `next`. Null
  /// otherwise (each tile reads its rows' entries with its bytes).
  Value pageAhead, pageAheadNext;
  /// The L2 cache policy of the tile's loads (ChipTuning::
  /// kvEvictFirstTiles), chosen once a program; null: plain loads.
  Value l2Policy;
  /// Where the chunks lie (one 16-byte chunk a thread and round).
  RegisterTileMap map() const {
    LoadOp op = load;
    auto t = op.getResult().getType();
    return {t.getDimSize(0), t.getDimSize(1), atomBytes, warps, 32, kRegisters};
  }
};

/// The accumulator layout of a rows x cols tile over `warps` warps.
/// A register tile of mBlocks x M rows (M = the matrix instruction's) and
/// `cols` columns: every warp holds all rows of its `colsPerWarp` columns
/// as mBlocks x tiles instruction results of `elems` registers each.
/// Register r is element r % elems of instruction tile (r / elems) % tiles
/// of M block r / (tiles * elems): one M block after another, so that the
/// B operand a dot reads for one column tile serves every M block (several
/// query tokens or head tiles per program share each KV fragment).
struct AccLayout {
  const MatrixInstr *mi;
  int64_t cols, colsPerWarp, tiles, elems;
  int64_t mBlocks = 1;
  /// Column order across the warp's instruction tiles (Lowering::accCoord):
  /// interleaved (tile j's column n at n * tiles + j) or natural (at
  /// j * N + n), as Lowering::interleaveAccColumns chose for the kernel.
  bool interleaved = true;
  /// Distinct static row offsets, M block after M block (localGroups each).
  SmallVector<int64_t> rowGroups;
  int64_t localGroups = 0;
  int64_t perBlock() const { return tiles * elems; }
  int64_t size() const { return mBlocks * tiles * elems; }
  int64_t rows() const { return mBlocks * mi->m; }
  /// Register of element i of instruction tile j in M block mb.
  int64_t reg(int64_t mb, int64_t j, int64_t i) const {
    return (mb * tiles + j) * elems + i;
  }
  int64_t elemRow(int64_t i) const { return mi->c.map(0, i).row; }
  int64_t elemCol(int64_t i) const { return mi->c.map(0, i).col; }
  /// The row group of register r.
  int64_t group(int64_t r) const {
    ArrayRef<int64_t> local = ArrayRef(rowGroups).take_front(localGroups);
    return r / perBlock() * localGroups +
           (llvm::find(local, elemRow(r % elems)) - local.begin());
  }
};

} // namespace mlir::mla::gpulower

#endif // MLA_TRANSFORMS_GPU_PLACEMENTS_H
