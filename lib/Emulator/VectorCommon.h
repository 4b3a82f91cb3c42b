//===- VectorCommon.h - what the VALU semantics files share -----*- C++ -*-===//
//
// Source reads (SDWA selects, DPP lane moves, float modifiers) and
// destination writes (SDWA, omod / clamp) of VOP1 / VOP2 / VOP3 / VOPC,
// defined in VectorOps.cpp and used by VectorMiscOps.cpp too.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_EMULATOR_VECTORCOMMON_H
#define MLA_EMULATOR_VECTORCOMMON_H

#include "Machine.h"
#include "Numerics.h"

namespace mla::emu::valu {

using U32 = uint32_t;
using U64 = uint64_t;

/// A lane's source operands (up to three 32-bit values).
struct VArgs {
  U32 a = 0, b = 0, c = 0;
};

/// Reads `n` sources of lane `lane` into `v` (SDWA / DPP applied, float
/// modifiers when `isFloat`); false when the lane reads nothing (DPP bound
/// control with an invalid source lane).
bool readSrcs(Exec &x, const Inst &in, unsigned lane, unsigned n, bool isFloat,
              VArgs &v);
/// Writes result `r` of lane `lane` to the destination (SDWA selects,
/// omod and clamp for float VOP3).
void writeDst(Exec &x, const Inst &in, unsigned lane, U32 r);

} // namespace mla::emu::valu

#endif // MLA_EMULATOR_VECTORCOMMON_H
