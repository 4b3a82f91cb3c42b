//===- CudaBackend.cpp - the launcher over the CUDA driver API ------------===//
//
// Code for sm_* chips: the device's primary context, cuModuleLoadData /
// cuModuleGetFunction / cuLaunchKernel[Ex], with the packed argument buffer
// (the one the HIP backend passes through `extra`) handed over as
// kernelParams, one pointer per parameter at the offset the driver reports
// for it (cuFuncGetParamInfo, read once per kernel). Kernels above 48 KiB
// of dynamic shared memory get their limit raised once, when resolved.
// Tensor maps (MLA_ARG_TENSOR_MAP) are encoded per call by
// cuTensorMapEncodeTiled, a host-only call.
//
//===----------------------------------------------------------------------===//
#include "Backend.h"

#include <cuda.h>

#include <cstring>
#include <map>
#include <vector>

namespace {

struct Module {
  CUdevice device;
  CUcontext context;
  CUmodule module;
  /// Per resolved kernel: each parameter's offset and size in the
  /// driver's parameter space.
  std::map<CUfunction, std::vector<std::pair<size_t, size_t>>> params;
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

constexpr size_t kMaxParams = 128;

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

  mla_status function(void *module, const char *kernel, int shared,
                      int numParams, void **fn,
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
    auto &params = m->params[f];
    params.clear();
    if (numParams < 0 || size_t(numParams) > kMaxParams) {
      msg = std::string(kernel) + " has " + std::to_string(numParams) +
            " parameters (at most " + std::to_string(kMaxParams) + ")";
      return MLA_ERROR_INVALID_SPEC;
    }
    size_t offset = 0, size = 0;
    for (int i = 0; i < numParams; ++i) {
      if ((r = cuFuncGetParamInfo(f, i, &offset, &size)) != CUDA_SUCCESS) {
        msg = cuMessage(
            ("parameter " + std::to_string(i) + " of " + std::string(kernel))
                .c_str(),
            r);
        return MLA_ERROR_INVALID_SPEC;
      }
      params.emplace_back(offset, size);
    }
    *fn = reinterpret_cast<void *>(f);
    return MLA_SUCCESS;
  }

  bool hasTensorMaps() const override { return true; }
  mla_status tensorMap(const void *base, int64_t rows, int64_t cols,
                       int eltBytes, int boxRows, int boxCols, int boxes,
                       void *out, std::string &msg) const override {
    static_assert(sizeof(CUtensorMap) == 128, "a tensor map is 128 bytes");
    // 2-D: {cols, rows}. 3-D: {boxCols, rows, pieces}, the pieces' stride
    // (boxCols elements) below the rows' (strides need not grow).
    cuuint64_t rowBytes = cuuint64_t(cols) * eltBytes;
    cuuint64_t dims2[2] = {cuuint64_t(cols), cuuint64_t(rows)};
    cuuint64_t dims3[3] = {cuuint64_t(boxCols), cuuint64_t(rows),
                           cuuint64_t(cols / boxCols)};
    cuuint64_t strides[2] = {rowBytes, cuuint64_t(boxCols) * eltBytes};
    cuuint32_t box[3] = {cuuint32_t(boxCols), cuuint32_t(boxRows),
                         cuuint32_t(boxes)};
    cuuint32_t unit[3] = {1, 1, 1};
    CUresult r = cuTensorMapEncodeTiled(
        static_cast<CUtensorMap *>(out),
        eltBytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                      : CU_TENSOR_MAP_DATA_TYPE_UINT8,
        boxes ? 3 : 2, const_cast<void *>(base), boxes ? dims3 : dims2,
        strides, box, unit,
        CU_TENSOR_MAP_INTERLEAVE_NONE,
        // The swizzle spans a box row: 128 bytes (16-bit tiles) or 64
        // (fp8 wgmma operands), the layouts the kernels read (smemSwizzled-
        // Offset in mla/MatrixInstr.h).
        boxCols * eltBytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                 : CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      msg = cuMessage("cuTensorMapEncodeTiled", r);
      return MLA_ERROR_INVALID_ARGUMENT;
    }
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
    auto *m = static_cast<Module *>(module);
    ContextScope scope(m->context);
    // The packed buffer holds the parameters in order, each at its
    // alignment (8-byte fields: pointers, i64, the fields of a memref
    // descriptor; 128-byte tensor maps at 64; Backend.h): each one's
    // address is passed in kernelParams, which the driver takes faster than
    // the same buffer through CU_LAUNCH_PARAM_BUFFER_POINTER (whose layout
    // would have to be the driver's: it places a 64-byte aligned parameter
    // by the parameter bank's own offset).
    auto it = m->params.find(reinterpret_cast<CUfunction>(fn));
    void *params[kMaxParams];
    size_t at = 0, n = it == m->params.end() ? 0 : it->second.size();
    for (size_t i = 0; i < n; ++i) {
      size_t bytes = it->second[i].second;
      at = (at + (bytes > 8 ? 63 : 7)) & ~size_t(bytes > 8 ? 63 : 7);
      params[i] = static_cast<char *>(args) + at;
      at += bytes;
    }
    if (n == 0 || at != size) {
      msg = "the packed arguments (" + std::to_string(size) +
            " bytes) do not match the kernel's " + std::to_string(n) +
            " parameters (" + std::to_string(at) + " bytes)";
      return MLA_ERROR_INVALID_SPEC;
    }
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
