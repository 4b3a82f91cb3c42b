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

/// OCP MX fp4 e2m1 (MXFP4's element type): sign, 2 exponent bits (bias 1),
/// 1 mantissa bit; 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives; no NaN,
/// no infinity. `code`'s low 4 bits are the value.
double decodeFp4E2M1(uint8_t code);
/// Round to nearest even, saturating to +-6; NaN gives +0 (e2m1 has none).
uint8_t encodeFp4E2M1(double value);

/// OCP MX e8m0 scale: 2^(code - 127) for codes 0..254, NaN for 0xFF.
double decodeE8M0(uint8_t code);

/// The task's mxfp4 KV cache (../shared/task/amd-mixed-mla.md): `rows` rows
/// of `cols` values; `data` holds cols / 2 bytes per row (the low nibble is
/// the even element), `scales` one e8m0 per block of 32 values of a row at
/// `scaleStride` bytes per row (the quantiser may pad: the stride is the
/// tensor's, never assumed). Returns rows x cols dequantised values,
/// value = fp4 x scale.
std::vector<double> dequantizeMxfp4(const uint8_t *data, const uint8_t *scales,
                                    int64_t rows, int64_t cols,
                                    int64_t scaleStride);

/// Quantises rows x cols values to that layout (scale stride `scaleStride`
/// >= cols / 32; padding bytes 0x7F, 1.0) with the OCP MX rule: per block
/// of 32, scale = 2^(floor(log2(amax)) - 2) (e2m1's largest exponent),
/// elements rounded to nearest even and saturated to +-6 (an all-zero block
/// gets 2^-127). For tests: the task's own quantiser may choose scales
/// differently; the decoder takes any.
void quantizeMxfp4(const std::vector<double> &values, int64_t rows,
                   int64_t cols, int64_t scaleStride,
                   std::vector<uint8_t> &data, std::vector<uint8_t> &scales);

/// One decode problem with page size 1 and one KV head. Sequence b has
/// query tokens qoIndptr[b] .. qoIndptr[b+1] (s_q of them) and KV rows
/// kvIndptr[b] .. kvIndptr[b+1] (L); its token i (0-based) attends
/// causally to keys [0, L - s_q + i] (FlashMLA's causal=True).
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
/// (total_kv x qkDim), in float64. A token that sees no key (a sequence
/// with no KV token, or L < s_q) gets 0.
std::vector<double> referenceDecode(const DecodeProblem &p,
                                    const std::vector<double> &q,
                                    const std::vector<double> &kv);

/// ||a - b||_F / ||b||_F (0 when both are 0).
double relativeFrobeniusError(const std::vector<double> &a,
                              const std::vector<double> &b);

} // namespace mla_ref

#endif // MLA_REFERENCE_H
