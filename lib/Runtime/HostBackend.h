//===- HostBackend.h - the C launcher's backend for CPU execution -*- C++
//-*-===//
#ifndef MLA_RUNTIME_HOSTBACKEND_H
#define MLA_RUNTIME_HOSTBACKEND_H

#include "../Launcher/Backend.h"
#include "mla/HostRunner.h"

#include <memory>

namespace mlir::mla {

/// A backend for chip "host" that runs the kernels of `target` (whose
/// descriptors must outlive it) compiled in `host`.
std::unique_ptr<mla_backend> makeHostBackend(HostModule &host,
                                             const mla_target_desc &target);

} // namespace mlir::mla

#endif // MLA_RUNTIME_HOSTBACKEND_H
