/*===- mla/launcher_emulator.h - the launcher over the AMD emulator -------===*
 *
 * A backend for mla_context_create() that runs gfx942 / gfx950 code objects
 * on the ISA emulator (lib/Emulator, docs/Emulator.md) instead of a GPU:
 * the same launcher, so the same split, variant and argument-packing rules
 * as on a HIP device. Launches run to completion before mla_decode returns.
 * Pointers in mla_decode_args are host pointers; every buffer a kernel may
 * touch must be registered with the emulator's Device first.
 *===----------------------------------------------------------------------===*/
#ifndef MLA_LAUNCHER_EMULATOR_H
#define MLA_LAUNCHER_EMULATOR_H

#include "mla/launcher.h"

namespace mla::emu {
class Device;
struct Counters;
} // namespace mla::emu

/// Called after every dispatch with the kernel's name and its counters.
typedef void (*mla_emulator_observer)(void *user, const char *kernel,
                                      const mla::emu::Counters &counters);

/// A new backend over `device` (not owned); destroy it with
/// mla_backend_emulator_destroy once no context uses it.
const mla_backend *mla_backend_emulator(mla::emu::Device *device,
                                        mla_emulator_observer observer,
                                        void *user);
void mla_backend_emulator_destroy(const mla_backend *backend);

#endif /* MLA_LAUNCHER_EMULATOR_H */
