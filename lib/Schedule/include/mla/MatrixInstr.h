//===- MatrixInstr.h - matrix-instruction descriptors -----------*- C++ -*-===//
//
// One descriptor per matrix instruction (AMD MFMA, NVIDIA mma.sync): its
// shape, wave size, element types and, for each operand, which lane holds
// which matrix element. Target lowerings read lane layouts from here and
// never test chip names.
//
// A lane layout is linear (as in Triton's linear layouts): lane index bit j
// contributes `laneBases[j]` to the (row, col) coordinate and operand-vector
// element bit j contributes `elemBases[j]`; contributions add (they never
// overlap). All maps in docs/../shared/notes/matrix-layouts.md have this form.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_MATRIXINSTR_H
#define MLA_MATRIXINSTR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::mla {

/// Element types of matrix operands.
enum class MatrixElem { BF16, F16, F8E4M3FN, F8E4M3FNUZ, F32 };

/// Bits per element.
unsigned bitWidth(MatrixElem e);

struct Coord {
  int64_t row, col;
  bool operator==(const Coord &o) const { return row == o.row && col == o.col; }
};

struct LaneLayout {
  llvm::ArrayRef<Coord> laneBases; ///< one per lane-index bit
  llvm::ArrayRef<Coord> elemBases; ///< one per element-index bit
  int64_t rows, cols;              ///< the operand's matrix shape

  int64_t lanes() const { return int64_t(1) << laneBases.size(); }
  int64_t elemsPerLane() const { return int64_t(1) << elemBases.size(); }
  /// The matrix coordinate of element `elem` of lane `lane`'s vector.
  Coord map(int64_t lane, int64_t elem) const;
};

struct MatrixInstr {
  llvm::StringRef name; ///< the instruction, as the ISA spells it
  int64_t m, n, k;      ///< D (m x n) = A (m x k) * B (k x n) + C
  int64_t waveSize;     ///< lanes that execute one instruction
  MatrixElem abType;    ///< A and B element type
  MatrixElem accType;   ///< C and D element type
  LaneLayout a, b, c;   ///< a: (m, k), b: (k, n), c: (m, n)
  /// A can be loaded from a row-major 16-bit tile in shared memory with one
  /// `ldmatrix.x4` (sm_90): its layout is that of four 8x8 matrices, the
  /// lane's register j holding row l / 4 + 8 (j mod 2), columns
  /// 2 (l mod 4) + {0, 1} + 8 (j / 2).
  bool aByLdmatrix = false;
  /// Warps that issue one instruction together (wgmma: a warpgroup of 4).
  int64_t warpsPerInstr = 1;
  /// Both operands are read from shared memory by the tensor cores through
  /// matrix descriptors (sm_90a wgmma), in the 128-byte swizzle
  /// (smemSwizzledOffset); `a` and `b` are then empty. Such an
  /// instruction runs *transposed*: for a dot C = L R (or L R^T) its own A
  /// is R^T (R), its own B is L^T, its M (64) runs along C's columns and its
  /// N along C's rows, m x n here being one warp's part of C as the
  /// lowering sees it (16 rows of a 16 x N block, 16 of the warpgroup's 64
  /// columns). `c` maps this warp's accumulator registers of one N block of
  /// 16 rows: rows 16 b + ... are registers 8 b + ... of the instruction.
  bool smemOperands = false;
  /// For such an instruction that can also take A from registers (wgmma
  /// with 16-bit operands): one warp's part of A there, the 16 rows (of the
  /// warpgroup's 64) 16 w .. 16 w + 15 of warp w by 16 K (PTX ISA,
  /// "Register fragment: matrix A", m64nNk16: mma.sync m16n8k16's A per
  /// warp). Empty where A comes from shared memory only.
  LaneLayout aRegisters = {{}, {}, 0, 0};
  /// Operand packing: element i sits in 32-bit register i * bits / 32 at
  /// bit (i * bits) % 32 (little endian), for every instruction here.
};

/// The A and B layouts of `steps` consecutive K steps of one instruction
/// (D = C + sum over steps j of A_j B_j), with the contraction index
/// permuted so that each lane's elements of all the steps lie next to each
/// other along K. The permutation is the same for A and B (it depends only
/// on which K bit an element or lane bit carries), so the sum is the plain
/// product of the (m, steps * k) and (steps * k, n) operands. Element
/// j * elemsPerLane + i of a grouped layout is element i of step j.
///
/// mma.sync m16n8k16 over 4 steps: lane t = l mod 4 holds B's K 16t ..
/// 16t + 15, one 16-byte row segment of an fp8 K^T tile instead of eight
/// 2-byte pieces; 16x16x32 MFMA over 2 steps: lane l holds K 16 (l / 16)
/// .. + 15.
/// An instruction with shared-memory operands groups its register A
/// (`aRegisters`) and leaves B's layouts empty: B is read from shared
/// memory column by column of K, in whatever order it is stored.
struct GroupedOperands {
  int64_t steps = 1;
  int64_t m = 0, n = 0, k = 0; ///< k = steps * the instruction's K
  /// Elements of one lane adjacent along K (per operand row / column).
  int64_t kRun = 0;
  std::vector<Coord> aLane, aElem, bLane, bElem;
  /// Where bit i of a logical K index (step * instruction K + the
  /// instruction's own K index) lands in the grouped operands' K index.
  std::vector<int64_t> logicalBitTo;

  /// The grouped operands' K index of logical K index `logical` (group
  /// periodic: a multiple of k maps to itself).
  int64_t physicalK(int64_t logical) const;

  LaneLayout a() const { return {aLane, aElem, m, k}; }
  LaneLayout b() const { return {bLane, bElem, k, n}; }
};
/// std::nullopt unless `steps` is a power of two and A and B carry K on the
/// same element and lane bits, each basis along K or across it.
std::optional<GroupedOperands> groupKSteps(const MatrixInstr &mi,
                                           int64_t steps);

/// Where each lane of a wave addresses the transposing 8-byte LDS reads
/// (gfx950's ds_read_b64_tr_b8 / _b16) that hand it its elements of
/// operand layout `layout`, the operand's (row, col) being (K, N) of a B
/// operand stored row-major (K rows in memory, N along a row). One read:
/// each group of 16 lanes reads 128 bytes, 8 per lane at the lane's own
/// address; taken lane after lane they are a row-major block of 16 columns
/// of `elemBits`-bit elements (8 rows of bytes, 4 of 16-bit elements), and
/// lane i of the group receives column i, row r in element r.
struct TransposedReads {
  /// Lane bit j adds laneBases[j] to the (K, N) of the first element of
  /// the lane's 8 bytes (as a LaneLayout's lane bases).
  std::vector<Coord> laneBases;
  /// Read r supplies the lane's elements r * perRead .. (r + 1) * perRead
  /// - 1 at its address plus runOffsets[r] (along K).
  std::vector<Coord> runOffsets;
  int64_t perRead = 0; ///< 64 / elemBits elements
};
/// std::nullopt unless the layout is a whole number of such reads: the
/// lane's elements come in runs of 64 / elemBits consecutive K (element
/// bits above a run's move along K only), lane bits 0-3 are N 1, 2, 4, 8,
/// and the higher lane bits move along K only (MFMA 16x16x32 B with 8-bit
/// elements: one read; with 16-bit ones: two; 16x16x16 B with 16-bit: one;
/// f8f6f4 16x16x128 B with 8-bit: four).
std::optional<TransposedReads> transposedReads(const LaneLayout &layout,
                                               unsigned elemBits);

/// The byte offset of element (row, col) in a shared-memory tile of
/// `rows` rows of 16-bit elements stored in wgmma's 128-byte swizzle (the
/// layout CUTLASS calls Swizzle<3,4,3> o K_SW128 atoms): the columns in
/// atoms of 64 (128 bytes a row), atom after atom, each `rows` x 128
/// contiguous bytes; within an atom row r's 16-byte chunk j sits at chunk
/// j xor (r mod 8): (col / 64) * rows * 128 + row * 128 +
/// (((col mod 64) / 8) xor (row mod 8)) * 16 + (col mod 8) * 2. The same
/// bytes are a K-major operand (rows = M or N, columns = K) and an MN-major
/// one (rows = K, columns = M or N), given atoms 1024-byte aligned.
/// With `elemBytes` = 1 (fp8 operands of wgmma's e4m3 form, K-major only):
/// the 64-byte swizzle (CUTLASS's Swizzle<2,4,3> o K_SW64 atoms), atoms
/// of 64 columns, each rows x 64 contiguous bytes, row r's 16-byte chunk j
/// at chunk j xor ((r / 2) mod 4), atoms 512-byte aligned.
int64_t smemSwizzledOffset(int64_t row, int64_t col, int64_t rows,
                           int64_t elemBytes = 2);

/// How a warpgroup's threads hold a tile of narrow KV values (fp8: 64
/// bytes an atom of 64 values; packed mxfp4: 32) in registers, as 16-byte
/// chunks, on their way into a 16-bit tile in the 128-byte swizzle (sm_90a:
/// the KV bytes a tile ahead, docs/Design.md). A row's atom takes
/// lanesPerRow() lanes; a warp's round is one atom of rowsPerRound() rows,
/// warp w taking row blocks w, w + warps, ...; round r is row block r /
/// atoms(), atom r mod atoms(). So a warp's round reads whole 32-byte
/// sectors of global memory, and the 16-byte pieces a chunk becomes land
/// on rowsPerRound() rows, i.e. in every bank group equally
/// (RegisterTileMapTest.cpp).
///
/// `warpRows`: warp w holds the rows of its own 16-row block, 16 w + l / 4
/// and 16 w + 8 + l / 4 (fp8's 64-byte atoms: 8 rows a round), lane l the
/// bytes 16 (l mod 4) .. + 15 of every atom: the rows and K order of
/// wgmma's register A (MatrixInstr::aRegisters grouped over the 4 K steps
/// of an atom, groupKSteps), so that the converted chunks are S^T's A
/// operand as they are (Lowering::registerAGrouping).
struct RegisterTileMap {
  int64_t rows, rowBytes, atomBytes, warps, wave = 32;
  bool warpRows = false;
  int64_t lanesPerRow() const { return atomBytes / 16; }
  int64_t rowsPerRound() const { return wave / lanesPerRow(); }
  int64_t atoms() const { return rowBytes / atomBytes; }
  int64_t rounds() const { return rows / (rowsPerRound() * warps) * atoms(); }
  /// Rows between a warp's first rows of two row rounds.
  int64_t roundRowStride() const {
    return warpRows ? rowsPerRound() : rowsPerRound() * warps;
  }
  /// Rows between two warps' first rows.
  int64_t warpRowStride() const {
    return warpRows ? rows / warps : rowsPerRound();
  }
  /// 16-bit pieces (16 bytes) one 16-byte chunk converts to.
  int64_t piecesPerChunk() const { return 128 / atomBytes; }
  /// Whether the map covers such a tile (rowsPerRound() a multiple of 8,
  /// the warps' row blocks the tile's rows).
  bool valid() const;
  /// A thread's chunk in round 0, and round r's offset from it.
  int64_t baseRow(int64_t warp, int64_t lane) const {
    return warp * warpRowStride() + lane / lanesPerRow();
  }
  int64_t baseByte(int64_t lane) const { return lane % lanesPerRow() * 16; }
  int64_t roundRow(int64_t r) const { return r / atoms() * roundRowStride(); }
  int64_t roundByte(int64_t r) const { return r % atoms() * atomBytes; }
  /// Byte offset in the swizzled 16-bit tile of piece `p` of the chunk at
  /// (row, source byte): smemSwizzledOffset of its first value.
  int64_t pieceOffset(int64_t row, int64_t byte, int64_t p) const {
    return smemSwizzledOffset(row, byte * 64 / atomBytes + p * 8, rows);
  }
};

/// How the threads transpose an fp8 tile of `rows` tokens x `cols` dims,
/// both in the 64-byte swizzle (smemSwizzledOffset with 1-byte elements),
/// into V^T (cols x rows) for wgmma's e4m3 form, which reads A K-major
/// only (Lowering::transposedTile follows this map; WgmmaLayoutTest,
/// Fp8TransposeMap.* checks it). A half-warp's task is one 64-column atom
/// of 32 token rows in a group of 64: lanes j < 8 take token block
/// `tokenBlock` (16 rows), lanes j >= 8 the other of the pair. Lane j of
/// half-warp h reads its 4 bytes of row rowOf(k) at its k-th read
/// (h = 1 on the other row parity: the other 64 bytes of the banks) and
/// writes V^T row dimOf(i) at its i-th 16-byte write, i xor h xor
/// ((j / 2) mod 4) of its 4 dims: the hardware takes a 16-byte store in
/// quarter-warps, and the 8 lanes of each write 8 different 16-byte bank
/// groups (row parity x the chunk after the swizzle). One wavefront per
/// read, four per write (WgmmaLayoutTest counts them per quarter-warp).
struct Fp8TransposeMap {
  int64_t rows, cols, threads;
  int64_t tasks() const { return cols / 64 * (rows / 64) * 4; }
  int64_t halfWarps() const { return threads / 16; }
  int64_t rounds() const { return (tasks() + halfWarps() - 1) / halfWarps(); }
  /// Task u's atom, token group and token-block pair (0 or 2) and variant.
  int64_t atom(int64_t u) const { return u / 4 % (cols / 64); }
  int64_t group(int64_t u) const { return u / 4 / (cols / 64); }
  int64_t tokenBlock(int64_t u, int64_t j) const {
    return u / 2 % 2 * 2 + ((u % 2) ^ (j / 8));
  }
  /// Token row (of the tile) of a lane's k-th read, k < 16.
  int64_t rowOf(int64_t u, int64_t h, int64_t j, int64_t k) const {
    return group(u) * 64 + tokenBlock(u, j) * 16 + (k ^ h);
  }
  /// The lane's 4 dims start at dim0 (a column of the tile).
  int64_t dim0(int64_t u, int64_t j) const { return atom(u) * 64 + 4 * j; }
  /// Which of its 4 dims a lane writes at its i-th write, i < 4.
  static int64_t writeOrder(int64_t h, int64_t j, int64_t i) {
    return i ^ h ^ (j / 2 % 4);
  }
  /// V^T row of a lane's i-th write; its 16 bytes are tokens
  /// group * 64 + tokenBlock * 16 ...
  int64_t dimOf(int64_t u, int64_t h, int64_t j, int64_t i) const {
    return dim0(u, j) + writeOrder(h, j, i);
  }
};

/// How O^T = V^T P^T takes V as wgmma's 16-bit register A (m64nNk16,
/// ChipTuning::wgmmaRegisterV): V's fp8 bytes (tokens x dims) are stored in
/// the 64-byte swizzle (smemSwizzledOffset, 1-byte elements) with each
/// group of 16 dims in pairs: stored byte 2 i + h of a group holds dim
/// i + 8 h. Warp w of a warpgroup reads the 16 dims 16 w .. + 15 of each
/// instruction tile (64 dims) for two K steps (32 tokens) with one
/// ldmatrix.x4.trans of 16-bit words: lane l addresses the group's chunk
/// in token row 16 s + l (matrix l / 8 is tokens 8 (l / 8) .. + 7), and
/// receives from matrix q words (token 2 (l mod 4), pair l / 4) and the
/// next token's, i.e. bytes (t, d), (t, d + 8), (t + 1, d), (t + 1, d + 8)
/// for d = l / 4, t = 2 (l mod 4). One byte permute (fragmentSelector)
/// orders them (t, d), (t + 1, d), (t, d + 8), (t + 1, d + 8): each half
/// is an e4m3 pair whose conversion is the fragment's register for row d
/// (low half) or d + 8 (high half), K columns t, t + 1 of matrix q's 8
/// tokens: registers 2 (q mod 2) and 2 (q mod 2) + 1 of step s + q / 2.
/// WgmmaLayoutTest (PairedV.*) checks every element against the PTX
/// fragment (aRegisters) and counts bank conflicts.
struct PairedVMap {
  /// The stored byte (within its group of 16) of dim c mod 16.
  static int64_t storedByte(int64_t c) { return 2 * (c % 8) + c % 16 / 8; }
  /// Stored word w (0 .. 3) of a 16-byte chunk is the byte permute of
  /// source words sourceLo(w) (bytes 0-3) and sourceLo(w) + 2 (4-7).
  static int64_t sourceLo(int64_t w) { return w / 2; }
  static uint32_t storeSelector(int64_t w) { return w % 2 ? 0x7362u : 0x5140u; }
  /// The permute of one ldmatrix.trans register (with zero as the high
  /// word) into the two fragment registers' e4m3 pairs.
  static constexpr uint32_t fragmentSelector = 0x3120u;
  /// The token row lane l addresses for K steps s, s + 1 (from 16 s).
  static int64_t ldmatrixRow(int64_t lane) { return lane; }
};

/// The 64-bit wgmma matrix descriptor of an operand at shared address
/// `addr` (16-byte aligned) in the 128-byte swizzle: bits 0-13 addr >> 4,
/// 16-29 the leading-dimension byte offset >> 4, 32-45 the stride-dimension
/// byte offset >> 4, 62-63 the swizzle mode (1: 128 bytes). K-major:
/// stride = the next 8 rows along M / N (1024), leading unused (16);
/// MN-major: stride = the next 8 rows along K (1024), leading = the next
/// 64 elements along M / N (PTX ISA, "Matrix Descriptor Format"; CUTLASS's
/// make_gmma_desc, B128). `swizzleBytes` 64 (mode 2) for the fp8 tiles'
/// 64-byte swizzle: K-major stride 512 (8 rows of 64 bytes).
uint64_t wgmmaDescriptor(uint32_t addr, int64_t leadingBytes,
                         int64_t strideBytes, int64_t swizzleBytes = 128);

/// Every instruction the compiler knows, in a stable order.
llvm::ArrayRef<const MatrixInstr *> knownMatrixInstrs();
/// The instruction called `name`, or null.
const MatrixInstr *lookupMatrixInstr(llvm::StringRef name);

/// Test hook (the emulator's wrong-code test, docs/Emulator.md): while on,
/// lookupMatrixInstr hands out AMD descriptors whose B operand has two lane
/// bases swapped, a layout the hardware does not have.
void setMatrixLayoutMutationForTesting(bool on);

} // namespace mlir::mla

#endif // MLA_MATRIXINSTR_H
