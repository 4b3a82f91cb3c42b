//===- Numerics.h - the hardware's small float formats ----------*- C++ -*-===//
//
// Decoders and encoders for the formats CDNA3 / CDNA4 convert and multiply:
// bf16, f16, fp8 (E4M3 OCP "FN" on gfx950, E4M3 "FNUZ" on gfx942), bf8
// (E5M2 OCP / FNUZ), fp6 (E2M3, E3M2), fp4 (E2M1) and E8M0 scales, written
// from the ISA guides' format tables (not from lib/Reference, which the
// known-answer tests compare against).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_EMULATOR_NUMERICS_H
#define MLA_EMULATOR_NUMERICS_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace mla::emu {

struct MiniFloat {
  int expBits, manBits, bias;
  bool fnuz;       ///< NaN is 0x80 (sign bit alone), no negative zero, no inf
  bool hasInf;     ///< IEEE-like all-ones exponent (E5M2 OCP)
  bool nanAllOnes; ///< E4M3 OCP: S.1111.111 is NaN, no inf
};

constexpr MiniFloat kE4M3FN{4, 3, 7, false, false, true};
constexpr MiniFloat kE4M3FNUZ{4, 3, 8, true, false, false};
constexpr MiniFloat kE5M2{5, 2, 15, false, true, false};
constexpr MiniFloat kE5M2FNUZ{5, 2, 16, true, false, false};
constexpr MiniFloat kE2M3{2, 3, 1, false, false, false};
constexpr MiniFloat kE3M2{3, 2, 3, false, false, false};
constexpr MiniFloat kE2M1{2, 1, 1, false, false, false};

inline double decodeMini(uint32_t code, const MiniFloat &f) {
  int bits = 1 + f.expBits + f.manBits;
  code &= (1u << bits) - 1;
  uint32_t sign = code >> (bits - 1);
  uint32_t e = (code >> f.manBits) & ((1u << f.expBits) - 1);
  uint32_t m = code & ((1u << f.manBits) - 1);
  if (f.fnuz && code == (1u << (bits - 1)))
    return std::numeric_limits<double>::quiet_NaN();
  uint32_t eMax = (1u << f.expBits) - 1;
  if (f.hasInf && e == eMax)
    return m ? std::numeric_limits<double>::quiet_NaN()
             : (sign ? -INFINITY : INFINITY);
  if (f.nanAllOnes && e == eMax && m == (1u << f.manBits) - 1)
    return std::numeric_limits<double>::quiet_NaN();
  double v = e == 0 ? std::ldexp(double(m), 1 - f.bias - f.manBits)
                    : std::ldexp(double(m | (1u << f.manBits)),
                                 int(e) - f.bias - f.manBits);
  return sign ? -v : v;
}

/// Largest finite value of the format.
inline double maxMini(const MiniFloat &f) {
  uint32_t eMax = (1u << f.expBits) - 1;
  uint32_t e = f.hasInf ? eMax - 1 : eMax;
  uint32_t m = f.nanAllOnes ? (1u << f.manBits) - 2 : (1u << f.manBits) - 1;
  return std::ldexp(double(m | (1u << f.manBits)), int(e) - f.bias - f.manBits);
}

/// f32 -> format, round to nearest even. Out of range: saturate to the
/// largest finite value with `saturate` (the clamp bit), else NaN (inf for
/// E5M2 OCP). NaN stays NaN.
inline uint32_t encodeMini(float x, const MiniFloat &f, bool saturate) {
  int bits = 1 + f.expBits + f.manBits;
  uint32_t signBit = 1u << (bits - 1);
  uint32_t nan = f.fnuz     ? signBit
                 : f.hasInf ? (((1u << f.expBits) - 1) << f.manBits) | 1
                            : signBit - 1;
  if (std::isnan(x))
    return f.fnuz ? signBit : (std::signbit(x) ? signBit : 0) | nan;
  uint32_t sign = std::signbit(x) ? signBit : 0;
  double a = std::fabs(double(x));
  double mx = maxMini(f);
  if (std::isinf(x) || a > mx) {
    // RNE may still round down to max: values below max + half an ulp.
    int eMaxExp;
    std::frexp(mx, &eMaxExp);
    double halfUlp = std::ldexp(1.0, eMaxExp - 1 - f.manBits - 1);
    if (!std::isinf(x) && a < mx + halfUlp)
      a = mx;
    else if (saturate)
      a = mx;
    else if (f.hasInf)
      return sign | (((1u << f.expBits) - 1) << f.manBits);
    else
      return f.fnuz ? signBit : sign | nan;
  }
  // Quantise: the spacing at a's binade (subnormal spacing below 2^(1-bias)).
  int e;
  std::frexp(a, &e); // a = frac * 2^e, frac in [0.5, 1)
  int unbiased = e - 1;
  int minNormal = 1 - f.bias;
  int q = (unbiased < minNormal ? minNormal : unbiased) - f.manBits;
  double scaled = std::ldexp(a, -q);
  double r = std::nearbyint(scaled); // default rounding mode: nearest even
  double v = std::ldexp(r, q);
  if (v == 0)
    return f.fnuz ? 0 : sign;
  // encode v exactly
  int ve;
  std::frexp(v, &ve);
  int ue = ve - 1;
  uint32_t code;
  if (ue < minNormal) {
    code = uint32_t(std::ldexp(v, f.bias - 1 + f.manBits));
  } else {
    uint32_t m = uint32_t(std::ldexp(v, f.manBits - ue)) - (1u << f.manBits);
    code = uint32_t(ue + f.bias) << f.manBits | m;
  }
  return sign | code;
}

inline float bf16ToF32(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Round to nearest even; NaN -> quiet NaN of the same sign.
inline uint16_t f32ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f))
    return uint16_t((u >> 16) | 0x40);
  uint32_t lsb = (u >> 16) & 1;
  return uint16_t((u + 0x7fff + lsb) >> 16);
}

/// Round to nearest even, overflow to infinity (|f| >= 65520), subnormals
/// below 2^-14; NaN -> quiet NaN of the same sign.
inline uint16_t f32ToF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  if (std::isnan(f))
    return sign | 0x7e00;
  float a = std::fabs(f);
  if (a >= 65520.0f)
    return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -14)) // units of 2^-24 (1024 of them: 0x400)
    return sign | uint16_t(std::nearbyint(std::ldexp(a, 24)));
  int e;
  float q = std::nearbyint(std::ldexp(std::frexp(a, &e), 11)); // [1024, 2048]
  if (q == 2048.0f) {
    q = 1024.0f;
    ++e;
  }
  uint32_t field = uint32_t(e - 1 + 15);
  if (field >= 31)
    return sign | 0x7c00;
  return sign | uint16_t(field << 10 | (uint32_t(q) - 1024));
}

inline float f16ToF32(uint16_t h) {
  uint32_t s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0    ? std::ldexp(float(m), -24)
            : e == 31 ? (m ? std::numeric_limits<float>::quiet_NaN() : INFINITY)
                      : std::ldexp(float(m | 1024), int(e) - 25);
  return s ? -v : v;
}

/// E8M0 scale: 2^(code - 127); 0xFF is NaN.
inline double e8m0(uint8_t code) {
  return code == 0xFF ? std::numeric_limits<double>::quiet_NaN()
                      : std::ldexp(1.0, int(code) - 127);
}

} // namespace mla::emu

#endif // MLA_EMULATOR_NUMERICS_H
