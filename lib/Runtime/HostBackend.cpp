//===- HostBackend.cpp - the C launcher's backend for CPU execution -------===//
//
// runDecode (DecodeRunner.cpp) runs the host-compiled kernels through the
// same C launcher as the GPU and emulator runs: this backend serves the
// chip "host". launch() unpacks the launcher's packed arguments (memref
// descriptors and i64 scalars, 8-byte fields, in the kernel descriptor's
// order) into HostArgs and runs the kernel over its grid on the CPU.
//
//===----------------------------------------------------------------------===//
#include "HostBackend.h"

#include <cstring>

using namespace mlir::mla;

namespace {

struct HostBackend final : mla_backend {
  HostModule &host;
  const mla_target_desc &target;
  HostBackend(HostModule &host, const mla_target_desc &target)
      : host(host), target(target) {}

  const char *name() const override { return "host"; }
  bool serves(const char *chip) const override {
    return std::strcmp(chip, "host") == 0;
  }
  mla_status load(int, const char *, const void *, size_t, void **module,
                  std::string &) const override {
    *module = const_cast<HostBackend *>(this);
    return MLA_SUCCESS;
  }
  mla_status function(void *, const char *kernel, int, int, void **fn,
                      std::string &msg) const override {
    for (int i = 0; i < target.num_kernels; ++i)
      if (!std::strcmp(target.kernels[i].name, kernel)) {
        *fn = const_cast<mla_kernel_desc *>(&target.kernels[i]);
        return MLA_SUCCESS;
      }
    msg = std::string("the host module has no kernel ") + kernel;
    return MLA_ERROR_DRIVER;
  }
  mla_status launch(void *, void *fn, unsigned gridX, unsigned gridY, unsigned,
                    unsigned, bool, void *, void *args, size_t size,
                    std::string &msg) const override {
    const auto &k = *static_cast<const mla_kernel_desc *>(fn);
    std::vector<uint64_t> words(size / 8);
    std::memcpy(words.data(), args, words.size() * 8);
    size_t at = 0;
    auto next = [&]() -> uint64_t {
      return at < words.size() ? words[at++] : 0;
    };
    std::vector<HostArg> hostArgs;
    for (int i = 0; i < k.num_args; ++i) {
      const mla_arg_desc &d = k.args[i];
      if (d.kind == MLA_ARG_I64) {
        hostArgs.push_back(HostArg::scalarIndex(int64_t(next())));
        continue;
      }
      // (allocated, aligned, offset, sizes..., strides...): the launcher
      // packs dense row-major buffers at offset 0.
      next();
      void *aligned = reinterpret_cast<void *>(uintptr_t(next()));
      next();
      std::vector<int64_t> sizes;
      for (int r = 0; r < d.rank; ++r)
        sizes.push_back(int64_t(next()));
      for (int r = 0; r < d.rank; ++r)
        next();
      hostArgs.push_back(HostArg::buffer(aligned, std::move(sizes)));
    }
    if (at != words.size()) {
      msg = "the packed arguments of " + std::string(k.name) +
            " do not match its descriptor";
      return MLA_ERROR_INVALID_SPEC;
    }
    if (llvm::Error e =
            host.launch(k.name, {int64_t(gridX), int64_t(gridY)}, hostArgs)) {
      msg = llvm::toString(std::move(e));
      return MLA_ERROR_DRIVER;
    }
    return MLA_SUCCESS;
  }
  void unload(void *) const override {}
};

} // namespace

std::unique_ptr<mla_backend>
mlir::mla::makeHostBackend(HostModule &host, const mla_target_desc &target) {
  return std::make_unique<HostBackend>(host, target);
}
