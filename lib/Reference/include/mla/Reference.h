//===- Reference.h - float64 reference and number codecs --------*- C++ -*-===//
//
// Written independently of the compiler (no MLIR, no APFloat): the CPU
// numerics tests compare the compiled kernels against this.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_REFERENCE_H
#define MLA_REFERENCE_H

#include <cstdint>
#include <vector>

namespace mla_ref {

/// fp8 e4m3 encodings: OCP E4M3FN (bias 7, max 448, NaN 0x7F/0xFF, no inf)
/// and E4M3FNUZ (bias 8, max 240, NaN 0x80 only, no negative zero).
enum class Fp8Format { E4M3FN, E4M3FNUZ };

double decodeFp8(uint8_t code, Fp8Format format);
/// Round to nearest even, saturating to the largest finite value.
uint8_t encodeFp8(double value, Fp8Format format);
/// Largest finite value (448 or 240).
double fp8Max(Fp8Format format);

float bf16ToFloat(uint16_t bits);
/// Round to nearest even (NaN stays NaN).
uint16_t floatToBf16(float value);

/// IEEE binary16.
float f16ToFloat(uint16_t bits);
/// Round to nearest even; beyond 65504 (from 65520 on) infinity;
/// subnormals kept.
uint16_t floatToF16(float value);

/// One decode problem with q_seq_len 1, page size 1, one KV head.
struct DecodeProblem {
  int64_t batch = 1;
  int64_t heads = 16;
  int64_t qkDim = 576;
  int64_t vDim = 512;
  double softmaxScale = 0.0;
  std::vector<int32_t> qoIndptr; ///< batch + 1 entries
  std::vector<int32_t> kvIndptr; ///< batch + 1 entries
};

/// out[t, h, d] for q (total_q x heads x qkDim) and dequantised kv
/// (total_kv x qkDim), in float64. A sequence with no KV token gets 0.
std::vector<double> referenceDecode(const DecodeProblem &p,
                                    const std::vector<double> &q,
                                    const std::vector<double> &kv);

/// ||a - b||_F / ||b||_F (0 when both are 0).
double relativeFrobeniusError(const std::vector<double> &a,
                              const std::vector<double> &b);

} // namespace mla_ref

#endif // MLA_REFERENCE_H
