//===- Context.h - a loaded spec: the launcher's context --------*- C++ -*-===//
//
// Not installed: what Context.cpp (descriptor checks, mla_context_create /
// destroy) builds and Launcher.cpp (planning, packing, launching) reads.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_LAUNCHER_CONTEXT_H
#define MLA_LAUNCHER_CONTEXT_H

#include "Backend.h"
#include "mla/launcher.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace mla_launcher {

/// A kernel of the loaded code object: its descriptor and function handle.
struct Kernel {
  const mla_kernel_desc *desc;
  void *fn;
  /// [n]: clusters of n programs the device holds at once (stage 1 with
  /// cluster_programs; n = 2 .. cluster_programs), else empty.
  std::vector<int64_t> clustersAtOnce;
};

/// Bytes of a kv element a tensor map can describe (0: none: packed mxfp4).
inline int kvElementBytes(const mla_spec_desc &s) {
  const char *t = s.kv_type ? s.kv_type : "";
  if (!std::strcmp(t, "bf16") || !std::strcmp(t, "f16"))
    return 2;
  return std::strncmp(t, "f8", 2) ? 0 : 1;
}

} // namespace mla_launcher

struct mla_context {
  const mla_spec_desc *spec;
  const mla_target_desc *target;
  const mla_backend *backend;
  void *module = nullptr;
  std::vector<mla_launcher::Kernel> stage1Masked, stage1MaskFree, stage2;
  int64_t concurrent = 1; // programs resident at once (split model)
};

#endif // MLA_LAUNCHER_CONTEXT_H
