//===- EmulatorBackend.cpp - the launcher's backend over the ISA emulator -===//
//
// load() reads the code object into the emulator, function() checks that
// the kernel exists, launch() runs the dispatch to completion. The launcher
// core (Context.cpp, Launcher.cpp) validates, plans and packs exactly as
// for HIP.
//
//===----------------------------------------------------------------------===//
#include "Backend.h"
#include "mla/Emulator.h"
#include "mla/launcher_emulator.h"

#include <cstring>

namespace {

struct Module {
  std::unique_ptr<mla::emu::CodeObject> code;
};

struct EmulatorBackend final : mla_backend {
  mla::emu::Device *device;
  mla_emulator_observer observer;
  void *user;

  EmulatorBackend(mla::emu::Device *d, mla_emulator_observer o, void *u)
      : device(d), observer(o), user(u) {}

  const char *name() const override { return "emulator"; }
  bool serves(const char *chip) const override {
    return !std::strcmp(chip, "gfx950") || !std::strcmp(chip, "gfx942");
  }
  mla_status load(int device, const char *chip, const void *code, size_t size,
                  void **module, std::string &msg) const override {
    if (device != 0) {
      msg = "the emulator has one device (0); device " +
            std::to_string(device) + " was asked for";
      return MLA_ERROR_NO_DEVICE;
    }
    auto co = mla::emu::CodeObject::load(
        llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(code), size));
    if (!co) {
      msg = llvm::toString(co.takeError());
      return MLA_ERROR_DRIVER;
    }
    if ((*co)->chip() != chip) {
      msg = "the code object is for " + (*co)->chip() + ", not " + chip;
      return MLA_ERROR_CHIP_MISMATCH;
    }
    *module = new Module{std::move(*co)};
    return MLA_SUCCESS;
  }
  mla_status function(void *module, const char *name, int, int, void **fn,
                      std::string &msg) const override {
    auto *m = static_cast<Module *>(module);
    const mla::emu::Kernel *k = m->code->kernel(name);
    if (!k) {
      msg = std::string("the code object has no kernel '") + name + "'";
      return MLA_ERROR_DRIVER;
    }
    *fn = const_cast<mla::emu::Kernel *>(k);
    return MLA_SUCCESS;
  }
  mla_status launch(void *module, void *fn, unsigned gridX, unsigned gridY,
                    unsigned blockX, unsigned shared, bool, void *, void *args,
                    size_t size, std::string &msg) const override {
    auto *m = static_cast<Module *>(module);
    auto *k = static_cast<const mla::emu::Kernel *>(fn);
    mla::emu::Counters c;
    if (llvm::Error e =
            device->dispatch(*m->code, k->name, {gridX, gridY, 1},
                             {blockX, 1, 1}, shared, args, size, &c)) {
      msg = llvm::toString(std::move(e));
      return MLA_ERROR_DRIVER;
    }
    if (observer)
      observer(user, k->name.c_str(), c);
    return MLA_SUCCESS;
  }
  void unload(void *module) const override {
    delete static_cast<Module *>(module);
  }
};

} // namespace

const mla_backend *mla_backend_emulator(mla::emu::Device *device,
                                        mla_emulator_observer observer,
                                        void *user) {
  return new EmulatorBackend(device, observer, user);
}

void mla_backend_emulator_destroy(const mla_backend *backend) {
  delete backend;
}
