//===- mla/EmulatorState.h - one wave's architectural state -----*- C++ -*-===//
//
// The registers of one wave64, as the known-answer tests set and read them.
// Scalar registers are indexed by their hardware numbers: s0..s105, then
// VCC (106, 107), M0 (124), EXEC (126, 127).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_EMULATORSTATE_H
#define MLA_EMULATORSTATE_H

#include <cstdint>
#include <cstring>
#include <vector>

namespace mla::emu {

struct WaveState {
  static constexpr unsigned kLanes = 64, kVgprs = 512, kAgprs = 256,
                            kSregs = 128;
  static constexpr unsigned kVcc = 106, kFlatScr = 102, kXnack = 104, kM0 = 124,
                            kExec = 126;
  uint32_t s[kSregs] = {};
  bool scc = false;
  uint64_t pc = 0;
  std::vector<uint32_t> v = std::vector<uint32_t>(kVgprs * kLanes, 0);
  std::vector<uint32_t> a = std::vector<uint32_t>(kAgprs * kLanes, 0);

  uint32_t &V(unsigned reg, unsigned lane) { return v[reg * kLanes + lane]; }
  uint32_t V(unsigned reg, unsigned lane) const {
    return v[reg * kLanes + lane];
  }
  uint32_t &A(unsigned reg, unsigned lane) { return a[reg * kLanes + lane]; }
  uint32_t A(unsigned reg, unsigned lane) const {
    return a[reg * kLanes + lane];
  }
  float Vf(unsigned reg, unsigned lane) const {
    float f;
    uint32_t b = V(reg, lane);
    std::memcpy(&f, &b, 4);
    return f;
  }
  void setVf(unsigned reg, unsigned lane, float f) {
    std::memcpy(&V(reg, lane), &f, 4);
  }
  uint64_t s64(unsigned i) const { return s[i] | uint64_t(s[i + 1]) << 32; }
  void setS64(unsigned i, uint64_t x) {
    s[i] = uint32_t(x);
    s[i + 1] = uint32_t(x >> 32);
  }
  uint64_t exec() const { return s64(kExec); }
  void setExec(uint64_t m) { setS64(kExec, m); }
  uint64_t vcc() const { return s64(kVcc); }
  void setVcc(uint64_t m) { setS64(kVcc, m); }
};

} // namespace mla::emu

#endif // MLA_EMULATORSTATE_H
