//===- SharedMemoryPlan.h - byte offsets of a kernel's shared memory ------===//
//
// Where a GPU kernel's shared-memory (LDS) regions lie, as plain byte
// arithmetic (no IR): the row padding of unswizzled tiles and the offsets
// handed out region by region. The lowering (Lowering::allocSmem) asks it
// for each region and builds the views; SharedMemoryPlanTest checks it.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_SCHEDULE_SHAREDMEMORYPLAN_H
#define MLA_SCHEDULE_SHAREDMEMORYPLAN_H

#include <cstdint>
#include <utility>
#include <vector>

namespace mlir::mla {

/// Bytes added to an unswizzled shared-memory tile row: tile rows are
/// mostly a multiple of 128 bytes long (576 fp8, 1 152 bf16), so without it
/// the same column of consecutive rows falls into the same bank, and operand
/// reads that walk rows (K's tokens, Q's and P's heads) conflict 4- to
/// 8-way. 16 bytes keep every row start 16-byte aligned for chunked copies.
constexpr int64_t kRowPadBytes = 16;

/// The bytes between consecutive rows of an unswizzled tile of `rowBytes`
/// a row: padded by kRowPadBytes, except a row of exactly 16 bytes (the
/// cross-warp row reductions of 4 warps, each row read as one 16-byte
/// vector: contiguous, a quarter-warp's 8 rows cover all 32 banks once;
/// padded to 32 bytes, two share each bank, and a column walk conflicts
/// 8-way instead of 4).
constexpr int64_t paddedRowBytes(int64_t rowBytes) {
  return rowBytes == 16 ? rowBytes : rowBytes + kRowPadBytes;
}

/// The regions of one kernel, placed in the order asked for.
class SharedMemoryPlan {
public:
  /// A region of `bytes` at a multiple of `align` (a power of two): in the
  /// first gap an earlier, larger alignment left that holds it when `align`
  /// is at most 16 (on sm_90a the finalize's row sums go between the row
  /// max's array and P's 1024-aligned atoms), else at the end.
  int64_t place(int64_t bytes, int64_t align) {
    if (align <= 16)
      for (auto &[begin, end] : gaps) {
        int64_t at = roundUp(begin, align);
        if (at + bytes <= end) {
          begin = at + bytes;
          return at;
        }
      }
    return append(bytes, align);
  }
  /// A region at the end, never in a gap.
  int64_t append(int64_t bytes, int64_t align) {
    int64_t at = roundUp(end_, align);
    if (at > end_)
      gaps.push_back({end_, at});
    end_ = at + bytes;
    return at;
  }
  /// The bytes a program needs.
  int64_t bytes() const { return end_; }

private:
  static int64_t roundUp(int64_t x, int64_t align) {
    return (x + align - 1) / align * align;
  }
  int64_t end_ = 0;
  std::vector<std::pair<int64_t, int64_t>> gaps; ///< free [begin, end)
};

} // namespace mlir::mla

#endif // MLA_SCHEDULE_SHAREDMEMORYPLAN_H
