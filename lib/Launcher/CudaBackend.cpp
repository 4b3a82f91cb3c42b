//===- CudaBackend.cpp - the launcher over the CUDA driver API ------------===//
//
// Code for sm_* chips: the device's primary context, cuModuleLoadData /
// cuModuleGetFunction / cuLaunchKernel[Ex], with the packed argument buffer
// (the one the HIP backend passes through `extra`) handed over as
// kernelParams, one pointer per 8-byte parameter. Kernels above 48 KiB of
// dynamic shared memory get their limit raised once, when resolved.
//
//===----------------------------------------------------------------------===//
#include "Backend.h"

#include <cuda.h>

#include <cstring>

namespace {

struct Module {
  CUdevice device;
  CUcontext context;
  CUmodule module;
};

std::string cuMessage(const char *what, CUresult r) {
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  return std::string(what) + " failed: " + (name ? name : "?") + " (" +
         (text ? text : "") + ")";
}

/// Makes `c` current for the scope. Pushes only when another context (or
/// none) is current: a caller such as PyTorch already has the device's
/// primary context current, and a push / pop pair per launch cost host time.
struct ContextScope {
  explicit ContextScope(CUcontext c) {
    CUcontext current = nullptr;
    pushed = cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != c;
    if (pushed)
      cuCtxPushCurrent(c);
  }
  ~ContextScope() {
    if (pushed) {
      CUcontext popped;
      cuCtxPopCurrent(&popped);
    }
  }
  bool pushed;
};

struct CudaBackend final : mla_backend {
  const char *name() const override { return "CUDA"; }
  bool serves(const char *chip) const override {
    return std::strncmp(chip, "sm_", 3) == 0;
  }

  mla_status load(int device, const char *chip, const void *code, size_t,
                  void **out, std::string &msg) const override {
    CUresult r = cuInit(0);
    int count = 0;
    if (r == CUDA_SUCCESS)
      r = cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count == 0) {
      msg = r == CUDA_SUCCESS ? "no CUDA device is present"
                              : cuMessage("cuInit", r);
      return MLA_ERROR_NO_DEVICE;
    }
    if (device >= count) {
      msg = "CUDA device " + std::to_string(device) + " is absent (" +
            std::to_string(count) + " present)";
      return MLA_ERROR_NO_DEVICE;
    }
    CUdevice dev;
    int major = 0, minor = 0;
    if ((r = cuDeviceGet(&dev, device)) != CUDA_SUCCESS ||
        (r = cuDeviceGetAttribute(
             &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)) ||
        (r = cuDeviceGetAttribute(
             &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))) {
      msg = cuMessage("cuDeviceGet", r);
      return MLA_ERROR_DRIVER;
    }
    // A cubin runs on its own major version; sm_90 code on sm_90 parts,
    // and architecture-specific code (sm_90a: wgmma) on exactly that
    // architecture.
    std::string arch = "sm_" + std::to_string(major * 10 + minor);
    std::string want = chip;
    if (!want.empty() && want.back() == 'a')
      want.pop_back();
    if (arch != want) {
      msg = "CUDA device " + std::to_string(device) + " is " + arch +
            ", the code is for " + chip;
      return MLA_ERROR_CHIP_MISMATCH;
    }
    auto *m = new Module{dev, nullptr, nullptr};
    if ((r = cuDevicePrimaryCtxRetain(&m->context, dev)) != CUDA_SUCCESS) {
      delete m;
      msg = cuMessage("cuDevicePrimaryCtxRetain", r);
      return MLA_ERROR_DRIVER;
    }
    {
      ContextScope scope(m->context);
      r = cuModuleLoadData(&m->module, code);
    }
    if (r != CUDA_SUCCESS) {
      cuDevicePrimaryCtxRelease(dev);
      delete m;
      msg = cuMessage("cuModuleLoadData", r);
      return MLA_ERROR_DRIVER;
    }
    *out = m;
    return MLA_SUCCESS;
  }

  mla_status function(void *module, const char *kernel, int shared, void **fn,
                      std::string &msg) const override {
    auto *m = static_cast<Module *>(module);
    ContextScope scope(m->context);
    CUfunction f;
    CUresult r = cuModuleGetFunction(&f, m->module, kernel);
    if (r == CUDA_SUCCESS && shared > 48 * 1024)
      r = cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             shared);
    if (r != CUDA_SUCCESS) {
      msg = cuMessage(("resolving " + std::string(kernel)).c_str(), r);
      return MLA_ERROR_DRIVER;
    }
    *fn = reinterpret_cast<void *>(f);
    return MLA_SUCCESS;
  }

  mla_status launch(void *module, void *fn, unsigned gx, unsigned gy,
                    unsigned block, unsigned shared, bool dependent,
                    void *stream, void *args, size_t size,
                    std::string &msg) const override {
    return launchWith(module, fn, gx, gy, /*clusterY=*/0, block, shared,
                      dependent, stream, args, size, msg);
  }

  int64_t clustersAtOnce(void *module, void *fn, unsigned programs,
                         unsigned block, unsigned shared) const override {
    ContextScope scope(static_cast<Module *>(module)->context);
    auto f = reinterpret_cast<CUfunction>(fn);
    // Clusters of more than 8 programs are sm_90's non-portable sizes.
    if (programs > 8 &&
        cuFuncSetAttribute(f,
                           CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                           1) != CUDA_SUCCESS)
      return 0;
    CUlaunchAttribute attr = clusterAttr(programs);
    CUlaunchConfig cfg = config(1, programs, block, shared, nullptr);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n = 0;
    if (cuOccupancyMaxActiveClusters(&n, f, &cfg) != CUDA_SUCCESS)
      return 0;
    return n;
  }

  mla_status launchClustered(void *module, void *fn, unsigned gx, unsigned gy,
                             unsigned clusterY, unsigned block, unsigned shared,
                             void *stream, void *args, size_t size,
                             std::string &msg) const override {
    return launchWith(module, fn, gx, gy, clusterY, block, shared,
                      /*dependent=*/false, stream, args, size, msg);
  }

  void unload(void *module) const override {
    auto *m = static_cast<Module *>(module);
    {
      ContextScope scope(m->context);
      cuModuleUnload(m->module);
    }
    cuDevicePrimaryCtxRelease(m->device);
    delete m;
  }

private:
  /// clusterY > 0: cluster dims (1, clusterY, 1).
  mla_status launchWith(void *module, void *fn, unsigned gx, unsigned gy,
                        unsigned clusterY, unsigned block, unsigned shared,
                        bool dependent, void *stream, void *args, size_t size,
                        std::string &msg) const {
    ContextScope scope(static_cast<Module *>(module)->context);
    // Every kernel parameter is 8 bytes (pointers, i64, the fields of a
    // memref descriptor), so parameter i is at byte 8 i of the packed
    // buffer: passed as kernelParams, which the driver takes faster than
    // the same buffer through CU_LAUNCH_PARAM_BUFFER_POINTER.
    constexpr size_t kMaxParams = 128;
    if (size % 8 || size / 8 > kMaxParams) {
      msg = "the packed arguments (" + std::to_string(size) +
            " bytes) are not 8-byte fields";
      return MLA_ERROR_INVALID_SPEC;
    }
    void *params[kMaxParams];
    for (size_t i = 0; i < size / 8; ++i)
      params[i] = static_cast<char *>(args) + 8 * i;
    CUresult r;
    if (dependent || clusterY) {
      CUlaunchAttribute attr;
      if (clusterY) {
        attr = clusterAttr(clusterY);
      } else {
        // Programmatic stream serialization: the kernel may be scheduled
        // once the previous kernel's programs have all signalled (or
        // ended); it waits for that kernel's stores itself
        // (griddepcontrol.wait).
        std::memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
      }
      CUlaunchConfig cfg = config(gx, gy, block, shared, stream);
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
      r = cuLaunchKernelEx(&cfg, reinterpret_cast<CUfunction>(fn), params,
                           nullptr);
    } else {
      r = cuLaunchKernel(reinterpret_cast<CUfunction>(fn), gx, gy, 1, block, 1,
                         1, shared, static_cast<CUstream>(stream), params,
                         nullptr);
    }
    if (r != CUDA_SUCCESS) {
      msg = cuMessage(
          clusterY ? "cuLaunchKernelEx (cluster)" : "cuLaunchKernel", r);
      return MLA_ERROR_DRIVER;
    }
    return MLA_SUCCESS;
  }

  static CUlaunchAttribute clusterAttr(unsigned clusterY) {
    CUlaunchAttribute attr;
    std::memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = 1;
    attr.value.clusterDim.y = clusterY;
    attr.value.clusterDim.z = 1;
    return attr;
  }
  static CUlaunchConfig config(unsigned gx, unsigned gy, unsigned block,
                               unsigned shared, void *stream) {
    CUlaunchConfig cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = gx, cfg.gridDimY = gy, cfg.gridDimZ = 1;
    cfg.blockDimX = block, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.sharedMemBytes = shared;
    cfg.hStream = static_cast<CUstream>(stream);
    return cfg;
  }
};

} // namespace

extern "C" const mla_backend *mla_backend_cuda(void) {
  static const CudaBackend backend;
  return &backend;
}
