//===- Backend.h - what the launcher asks of a GPU driver -------*- C++ -*-===//
//
// The launcher core (Context.cpp, Launcher.cpp) validates, plans and packs
// arguments; a backend only opens a device, loads a code object, resolves
// kernels and launches them. HipBackend.cpp and CudaBackend.cpp implement it
// over the HIP module API and the CUDA driver API; the unit tests implement it
// with a recording fake.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_LAUNCHER_BACKEND_H
#define MLA_LAUNCHER_BACKEND_H

#include "mla/launcher.h"

#include <cstddef>
#include <string>

struct mla_backend {
  virtual ~mla_backend() = default;
  /// "HIP", "CUDA".
  virtual const char *name() const = 0;
  /// Whether this backend runs code for `chip` ("gfx950", "sm_90", ...).
  virtual bool serves(const char *chip) const = 0;
  /// Opens `device`, checks that it is `chip` and loads the code object.
  /// On failure returns the status and sets `msg`.
  virtual mla_status load(int device, const char *chip, const void *code,
                          size_t size, void **module,
                          std::string &msg) const = 0;
  /// Resolves a kernel of `numParams` parameters (as packed for launch())
  /// and allows it `sharedBytes` of dynamic shared memory.
  virtual mla_status function(void *module, const char *name, int sharedBytes,
                              int numParams, void **fn,
                              std::string &msg) const = 0;
  /// Launches with the packed argument buffer `args` of `size` bytes: the
  /// kernel's parameters in order, each at its alignment (8 bytes; a tensor
  /// map 64).
  /// `dependent`: the kernel may start while the previous kernel in the
  /// stream finishes (mla_kernel_desc::dependent_launch); a backend without
  /// such launches launches it plainly, which is also correct.
  virtual mla_status launch(void *module, void *fn, unsigned gridX,
                            unsigned gridY, unsigned blockX, unsigned shared,
                            bool dependent, void *stream, void *args,
                            size_t size, std::string &msg) const = 0;
  /// Thread-block clusters (mla_kernel_desc::cluster_programs): how many
  /// clusters of `programs` x (`blockX` threads, `shared` bytes) programs
  /// of `fn` the device holds at once, after allowing `fn` that cluster
  /// size; 0 where the backend or device has no clusters (the default).
  virtual int64_t clustersAtOnce(void * /*module*/, void * /*fn*/,
                                 unsigned /*programs*/, unsigned /*blockX*/,
                                 unsigned /*shared*/) const {
    return 0;
  }
  /// launch() with cluster dims (1, `clusterY`, 1); gridY is a multiple of
  /// clusterY. Only called where clustersAtOnce() was positive.
  virtual mla_status launchClustered(void * /*module*/, void * /*fn*/,
                                     unsigned /*gridX*/, unsigned /*gridY*/,
                                     unsigned /*clusterY*/, unsigned /*blockX*/,
                                     unsigned /*shared*/, void * /*stream*/,
                                     void * /*args*/, size_t /*size*/,
                                     std::string &msg) const {
    msg = std::string(name()) + " launches no thread-block clusters";
    return MLA_ERROR_INVALID_SPEC;
  }
  /// MLA_ARG_TENSOR_MAP: whether this backend builds tensor maps, and the
  /// map (128 bytes into `out`) of the row-major [rows, cols] buffer at
  /// `base` (elements of `eltBytes`), zeros outside the buffer, swizzled
  /// over a box row (boxCols x eltBytes: 128 or 64 bytes). `boxes` 0: a 2-D
  /// map, box {boxRows, boxCols}; else a 3-D map over {boxCols, rows,
  /// cols / boxCols} (a row's boxCols-column pieces as the outer dimension)
  /// whose box takes `boxes` such pieces at once, each piece's
  /// boxRows x boxCols after the previous one in shared memory.
  virtual bool hasTensorMaps() const { return false; }
  virtual mla_status tensorMap(const void * /*base*/, int64_t /*rows*/,
                               int64_t /*cols*/, int /*eltBytes*/,
                               int /*boxRows*/, int /*boxCols*/, int /*boxes*/,
                               void * /*out*/, std::string &msg) const {
    msg = std::string(name()) + " builds no tensor maps";
    return MLA_ERROR_INVALID_SPEC;
  }
  virtual void unload(void *module) const = 0;
};

#endif // MLA_LAUNCHER_BACKEND_H
