//===- MalformedPageTableTest.cpp - no page table leaves the cache --------===//
//
// Issue #16's memory-safety rule for paged KV (issue #17), on gfx950's
// block-table (64-row pages) and token-list code objects, run on the
// emulator with the cache, the tables and the lengths registered at their
// real sizes: whatever the tables hold (negative entries, entries past the
// cache, INT32 extremes) and whatever the lengths say (negative, more than
// the table row's pages hold), no kernel touches memory outside its
// buffers. A token whose entry names no row of the cache reads as a row of
// zeros (its score is 0, its value 0); a length the table cannot hold runs
// as zero. Every row is checked against the float64 reference over exactly
// those rows.
//
//===----------------------------------------------------------------------===//
#include "EmulatedDecode.h"

#include <climits>

namespace {

using emutest::DecodeCall;
using emutest::DecodeResult;

void expectRow(const DecodeResult &r, int64_t b,
               const std::vector<int64_t> &rows) {
  std::vector<double> got = emutest::outputRow(r, b);
  if (rows.empty()) {
    for (double v : got)
      ASSERT_EQ(v, 0.0) << "sequence " << b << " must give zeros";
    return;
  }
  std::vector<double> want = emutest::referenceGathered(r, b, rows);
  EXPECT_LT(mla_ref::relativeFrobeniusError(got, want), 2e-2)
      << "sequence " << b << ", " << r.stage1 << ", " << r.splits << " splits";
}

TEST(MalformedPageTable, BlockTableStaysInsideTheCache) {
  emutest::Compiled c =
      emutest::load("gfx950", "deepseek_r1_decode_fp8_paged64");
  const int64_t page = 64, pages = 6, cols = 3;
  for (int64_t splits : {1, 4}) {
    DecodeCall call;
    call.kvRows = pages * page;
    call.maxKvLen = 1000;
    call.numSplits = splits;
    call.tableCols = cols;
    //           ok      bad entries   ok(short)  negative  too long  ok
    call.seqlens = {150, 130, 40, -3, 193, 100};
    call.table = {4,         0,  2,         // 0: valid pages
                  5,         -1, INT32_MAX, // 1: page 1 negative, 2 unused
                  pages,     0,  0,         // 2: page 0 past the cache
                  1,         1,  1,         // 3: negative length
                  0,         1,  2,         // 4: 193 > 3 x 64 rows
                  INT32_MIN, 3,  99999};    // 5: first page INT32_MIN
    call.qo = {0, 1, 2, 3, 4, 5, 6};
    call.kv = {0, 0, 0, 0, 0, 0, 0}; // unused with a block table
    DecodeResult r = emutest::decode(c, c.code, call);
    ASSERT_EQ(r.err, "");
    for (int64_t b = 0; b < 6; ++b) {
      int64_t len = call.seqlens[b];
      std::vector<int64_t> rows;
      if (len >= 0 && len <= cols * page)
        for (int64_t t = 0; t < len; ++t) {
          int64_t e = call.table[b * cols + t / page];
          rows.push_back(e >= 0 && e < pages ? e * page + t % page : -1);
        }
      expectRow(r, b, rows);
    }
  }
}

// A cache of no rows (kv_rows 0, the buffer not registered at all) under
// nonzero lengths and entries: every sequence runs as a zero-length one
// (its entries name no row either way), so nothing is read from the cache
// and every output is 0. sm_90a's tensor-map copies rely on it: the
// launcher builds no map over no rows.
TEST(MalformedPageTable, CacheWithNoRowsGivesZeros) {
  emutest::Compiled c =
      emutest::load("gfx950", "deepseek_r1_decode_fp8_paged64");
  for (int64_t splits : {1, 2}) {
    DecodeCall call;
    call.kvRows = 0;
    call.maxKvLen = 128;
    call.numSplits = splits;
    call.tableCols = 2;
    call.seqlens = {100, 64, 128};
    call.table = {0, 1, -1, INT32_MAX, INT32_MIN, 5};
    call.qo = {0, 1, 2, 3};
    call.kv = {0, 0, 0, 0}; // unused with a block table
    DecodeResult r = emutest::decode(c, c.code, call);
    ASSERT_EQ(r.err, "");
    for (int64_t b = 0; b < 3; ++b)
      expectRow(r, b, {});
  }
}

TEST(MalformedPageTable, TokenListStaysInsideTheCache) {
  emutest::Compiled c =
      emutest::load("gfx950", "deepseek_r1_decode_fp8_kvindices");
  const int64_t cacheRows = 300;
  for (int64_t splits : {1, 2}) {
    DecodeCall call;
    call.kvRows = cacheRows;
    call.maxKvLen = 200;
    call.numSplits = splits;
    call.table.resize(420);
    for (size_t i = 0; i < call.table.size(); ++i)
      call.table[i] = int32_t((i * 37) % cacheRows);
    call.table[5] = -1;         // sequence 0
    call.table[70] = cacheRows; // sequence 1
    call.table[71] = INT32_MAX;
    call.table[130] = INT32_MIN;
    //          ok  bad   bad  decr  past the list
    call.kv = {0, 65, 140, 300, 250, 500};
    call.qo = {0, 1, 2, 3, 4, 5};
    DecodeResult r = emutest::decode(c, c.code, call);
    ASSERT_EQ(r.err, "");
    for (int64_t b = 0; b < 5; ++b) {
      int32_t begin = call.kv[b], end = call.kv[b + 1];
      std::vector<int64_t> rows;
      if (begin >= 0 && begin <= end && end <= int32_t(call.table.size()))
        for (int32_t i = begin; i < end; ++i) {
          int64_t e = call.table[i];
          rows.push_back(e >= 0 && e < cacheRows ? e : -1);
        }
      expectRow(r, b, rows);
    }
  }
}

} // namespace
