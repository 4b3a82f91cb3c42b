//===- HipBackend.cpp - the launcher over HIP's module API ----------------===//
//
// Code objects for gfx* chips: hipModuleLoadData / hipModuleGetFunction /
// hipModuleLaunchKernel, arguments passed as one packed buffer through
// `extra` (HIP_LAUNCH_PARAM_BUFFER_POINTER; the kernelParams path is not
// implemented in every HIP release, ROCm 5.2's among them).
//
//===----------------------------------------------------------------------===//
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include "Backend.h"

#include <hip/hip_runtime_api.h>

#include <cstring>

namespace {

struct Module {
  int device;
  hipModule_t module;
};

std::string hipMessage(const char *what, hipError_t e) {
  return std::string(what) + " failed: " + hipGetErrorName(e) + " (" +
         hipGetErrorString(e) + ")";
}

struct HipBackend final : mla_backend {
  const char *name() const override { return "HIP"; }
  bool serves(const char *chip) const override {
    return std::strncmp(chip, "gfx", 3) == 0;
  }

  mla_status load(int device, const char *chip, const void *code, size_t,
                  void **out, std::string &msg) const override {
    int count = 0;
    hipError_t e = hipGetDeviceCount(&count);
    if (e != hipSuccess || count == 0) {
      msg =
          "no HIP device is present (" + std::string(hipGetErrorName(e)) + ")";
      return MLA_ERROR_NO_DEVICE;
    }
    if (device >= count) {
      msg = "HIP device " + std::to_string(device) + " is absent (" +
            std::to_string(count) + " present)";
      return MLA_ERROR_NO_DEVICE;
    }
    hipDeviceProp_t prop;
    if ((e = hipGetDeviceProperties(&prop, device)) != hipSuccess) {
      msg = hipMessage("hipGetDeviceProperties", e);
      return MLA_ERROR_DRIVER;
    }
    // gcnArchName reads like "gfx950:sramecc+:xnack-".
    std::string arch = prop.gcnArchName;
    arch = arch.substr(0, arch.find(':'));
    if (arch != chip) {
      msg = "HIP device " + std::to_string(device) + " is " + arch +
            ", the code is for " + chip;
      return MLA_ERROR_CHIP_MISMATCH;
    }
    int previous = 0;
    (void)hipGetDevice(&previous);
    (void)hipSetDevice(device);
    auto *m = new Module{device, nullptr};
    e = hipModuleLoadData(&m->module, code);
    (void)hipSetDevice(previous);
    if (e != hipSuccess) {
      delete m;
      msg = hipMessage("hipModuleLoadData", e);
      return MLA_ERROR_DRIVER;
    }
    *out = m;
    return MLA_SUCCESS;
  }

  mla_status function(void *module, const char *kernel, int, int, void **fn,
                      std::string &msg) const override {
    hipFunction_t f;
    hipError_t e =
        hipModuleGetFunction(&f, static_cast<Module *>(module)->module, kernel);
    if (e != hipSuccess) {
      msg = hipMessage(
          ("hipModuleGetFunction(" + std::string(kernel) + ")").c_str(), e);
      return MLA_ERROR_DRIVER;
    }
    *fn = reinterpret_cast<void *>(f);
    return MLA_SUCCESS;
  }

  mla_status launch(void *module, void *fn, unsigned gx, unsigned gy,
                    unsigned block, unsigned shared, bool, void *stream,
                    void *args, size_t size, std::string &msg) const override {
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, args,
                     HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
    int previous = 0;
    (void)hipGetDevice(&previous);
    (void)hipSetDevice(static_cast<Module *>(module)->device);
    hipError_t e = hipModuleLaunchKernel(
        reinterpret_cast<hipFunction_t>(fn), gx, gy, 1, block, 1, 1, shared,
        static_cast<hipStream_t>(stream), nullptr, extra);
    (void)hipSetDevice(previous);
    if (e != hipSuccess) {
      msg = hipMessage("hipModuleLaunchKernel", e);
      return MLA_ERROR_DRIVER;
    }
    return MLA_SUCCESS;
  }

  void unload(void *module) const override {
    auto *m = static_cast<Module *>(module);
    (void)hipModuleUnload(m->module);
    delete m;
  }
};

} // namespace

extern "C" const mla_backend *mla_backend_hip(void) {
  static const HipBackend backend;
  return &backend;
}
