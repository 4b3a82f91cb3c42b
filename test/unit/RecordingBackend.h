//===- RecordingBackend.h - a launcher backend that records launches -----===//
//
// What the launcher unit tests and the launcher fuzzer launch on: it
// "loads" any ELF code object, resolves every kernel, and records each
// launch (kernel, grid, block, shared bytes, stream, packed argument words)
// instead of running it. No GPU.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_TEST_RECORDINGBACKEND_H
#define MLA_TEST_RECORDINGBACKEND_H

#include "../../lib/Launcher/Backend.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace mlatest {

struct Launch {
  std::string kernel;
  unsigned gx, gy, block, shared;
  bool dependent;
  void *stream;
  std::vector<uint64_t> words;
  unsigned clusterY = 0; ///< cluster dims (1, clusterY, 1); 0: none
};

struct RecordingBackend : mla_backend {
  std::string prefix = "gfx";
  mla_status loadStatus = MLA_SUCCESS;
  mla_status launchStatus = MLA_SUCCESS;
  mutable std::vector<Launch> launches;
  mutable size_t loadedBytes = 0;
  mutable bool loadedElf = false;   ///< the code object started with \x7fELF
  mutable bool oddArgBytes = false; ///< a launch's argument bytes % 8 != 0
  mutable std::vector<std::string> functions;
  mutable int unloads = 0;
  /// Clusters of any size the device holds at once (0: no clusters).
  int64_t clusters = 0;
  mutable std::vector<unsigned> clusterQueries; ///< sizes asked about

  const char *name() const override { return "recording"; }
  bool serves(const char *chip) const override {
    return std::strncmp(chip, prefix.c_str(), prefix.size()) == 0;
  }
  mla_status load(int, const char *, const void *code, size_t size,
                  void **module, std::string &msg) const override {
    if (loadStatus != MLA_SUCCESS) {
      msg = "recording backend: load refused";
      return loadStatus;
    }
    loadedElf = size >= 4 && std::memcmp(code,
                                         "\x7f"
                                         "ELF",
                                         4) == 0;
    loadedBytes = size;
    *module = const_cast<RecordingBackend *>(this);
    return MLA_SUCCESS;
  }
  mla_status function(void *, const char *kernel, int, int, void **fn,
                      std::string &) const override {
    functions.push_back(kernel);
    *fn = reinterpret_cast<void *>(functions.size()); // 1-based index
    return MLA_SUCCESS;
  }
  mla_status launch(void *, void *fn, unsigned gx, unsigned gy, unsigned block,
                    unsigned shared, bool dependent, void *stream, void *args,
                    size_t size, std::string &msg) const override {
    if (launchStatus != MLA_SUCCESS) {
      msg = "recording backend: launch refused";
      return launchStatus;
    }
    oddArgBytes = oddArgBytes || size % 8 != 0;
    std::vector<uint64_t> words(size / 8);
    std::memcpy(words.data(), args, words.size() * 8);
    launches.push_back({functions[reinterpret_cast<uintptr_t>(fn) - 1], gx, gy,
                        block, shared, dependent, stream, words});
    return MLA_SUCCESS;
  }
  int64_t clustersAtOnce(void *, void *, unsigned programs, unsigned,
                         unsigned) const override {
    clusterQueries.push_back(programs);
    return clusters;
  }
  mla_status launchClustered(void *module, void *fn, unsigned gx, unsigned gy,
                             unsigned clusterY, unsigned block, unsigned shared,
                             void *stream, void *args, size_t size,
                             std::string &msg) const override {
    if (gy % clusterY != 0) {
      msg = "recording backend: grid y is not a multiple of the cluster";
      return MLA_ERROR_DRIVER;
    }
    mla_status s = launch(module, fn, gx, gy, block, shared, false, stream,
                          args, size, msg);
    if (s == MLA_SUCCESS)
      launches.back().clusterY = clusterY;
    return s;
  }
  void unload(void *) const override { ++unloads; }
};

/// Launch arguments over one scratch buffer (q, kv, out and the KV scale
/// all in it: the recording backend reads none of them) and a 256-byte
/// aligned workspace of 64 MiB; the caller adds its indptrs or tables.
struct ScratchArgs {
  alignas(256) unsigned char buf[4096];
  std::vector<unsigned char> ws = std::vector<unsigned char>(64 << 20);
  mla_decode_args args(int64_t batch, int64_t maxKvLen, int64_t kvRows,
                       int64_t splits) {
    mla_decode_args a{};
    a.q = a.kv = a.out = buf;
    a.kv_scale = reinterpret_cast<const float *>(buf);
    a.batch = batch;
    a.max_kv_len = maxKvLen;
    a.kv_rows = kvRows;
    a.num_splits = splits;
    a.workspace = reinterpret_cast<void *>(
        (reinterpret_cast<uintptr_t>(ws.data()) + 255) / 256 * 256);
    a.workspace_bytes = ws.size() - 256;
    return a;
  }
  /// The same with the sequences' query and KV row offsets.
  mla_decode_args args(int64_t batch, int64_t maxKvLen, int64_t kvRows,
                       int64_t splits, const int32_t *qoIndptr,
                       const int32_t *kvIndptr) {
    mla_decode_args a = args(batch, maxKvLen, kvRows, splits);
    a.qo_indptr = qoIndptr;
    a.kv_indptr = kvIndptr;
    return a;
  }
};

} // namespace mlatest

#endif // MLA_TEST_RECORDINGBACKEND_H
