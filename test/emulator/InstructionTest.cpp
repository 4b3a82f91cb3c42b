//===- InstructionTest.cpp - known answers per instruction family ---------===//
//
// Each test assembles a few instructions (llvm-mc), sets registers, runs them
// on the emulator as one wave (or workgroup) and compares with values from
// the ISA guides' pseudo-code, from ../shared/notes/matrix-layouts.md's lane
// maps (MFMA against a plain product) and from lib/Reference's fp8 codecs
// (all 256 codes of each format).
//
//===----------------------------------------------------------------------===//
#include "Assemble.h"
#include "mla/Emulator.h"
#include "mla/EmulatorState.h"
#include "mla/Reference.h"

#include <gtest/gtest.h>
#include <llvm/Support/FormatVariadic.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace mla::emu;

namespace {

/// Assembles `text` for `chip` and runs it with `threads` work-items.
llvm::Error run(const std::string &chip, const std::string &text,
                unsigned threads,
                const std::function<void(WaveState &, unsigned)> &setup,
                const std::function<void(const WaveState &, unsigned)> &inspect,
                Device *device = nullptr, unsigned lds = 0) {
  std::string err;
  std::vector<uint8_t> code = assemble(chip, text, &err);
  if (code.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), err);
  Device local;
  return runRaw(device ? *device : local, chip, code, threads, lds, setup,
                inspect);
}

#define EXPECT_OK(E)                                                           \
  do {                                                                         \
    llvm::Error e_ = (E);                                                      \
    EXPECT_FALSE(bool(e_)) << llvm::toString(std::move(e_));                   \
  } while (0)

//===-- scalar
//-------------------------------------------------------------===//

TEST(EmulatorScalar, CarryChainAndSelect) {
  // 64-bit add through s_add_u32 / s_addc_u32, then SCC-driven selects.
  EXPECT_OK(run(
      "gfx950",
      "s_add_u32 s4, s0, s2\ns_addc_u32 s5, s1, s3\n"
      "s_cmp_lg_u32 s4, 0\ns_cselect_b32 s6, 7, 9\n"
      "s_bfe_u32 s7, s8, 0x40004\ns_brev_b32 s9, 1",
      64,
      [](WaveState &w, unsigned) {
        w.setS64(0, 0x00000001ffffffffull);
        w.setS64(2, 0x0000000000000001ull);
        w.s[8] = 0xABCD;
      },
      [](const WaveState &w, unsigned) {
        EXPECT_EQ(w.s64(4), 0x0000000200000000ull);
        EXPECT_EQ(w.s[6], 9u);   // s4 == 0: SCC = 0
        EXPECT_EQ(w.s[7], 0xCu); // bits 7:4 of 0xABCD
        EXPECT_EQ(w.s[9], 0x80000000u);
      }));
}

TEST(EmulatorScalar, BranchesAndExecMasking) {
  // A lane-divergent if: lanes with v1 < 10 add 100, the others are off.
  EXPECT_OK(run(
      "gfx942",
      "v_cmp_gt_u32_e32 vcc, 10, v0\n"
      "s_and_saveexec_b64 s[2:3], vcc\n"
      "s_cbranch_execz skip\n"
      "v_add_u32_e32 v1, 100, v0\n"
      "skip:\n"
      "s_or_b64 exec, exec, s[2:3]\n"
      "v_add_u32_e32 v2, 1, v1",
      64, [](WaveState &w, unsigned) {},
      [](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          uint32_t v1 = l < 10 ? 100 + l : 0;
          EXPECT_EQ(w.V(1, l), v1) << l;
          EXPECT_EQ(w.V(2, l), v1 + 1) << l;
        }
        EXPECT_EQ(w.exec(), ~0ull);
      }));
}

//===-- vector ALU
//---------------------------------------------------------===//

TEST(EmulatorVector, PermAndCarries) {
  // v_perm_b32: selectors 0-7 pick bytes of {S0, S1} (S1 low), 12 -> 0x00,
  // 13+ -> 0xFF, 8-11 -> sign of bytes 1, 3, 5, 7.
  EXPECT_OK(run(
      "gfx950",
      "v_perm_b32 v3, v1, v2, v4\n"
      "v_add_co_u32_e32 v5, vcc, v1, v2\n"
      "v_addc_co_u32_e32 v6, vcc, 0, v7, vcc",
      64,
      [](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          w.V(1, l) = 0x88776655;
          w.V(2, l) = 0xF4332211;
          w.V(4, l) = l == 0 ? 0x0C0D0704 : 0x0B090003;
          w.V(7, l) = 5;
        }
      },
      [](const WaveState &w, unsigned) {
        EXPECT_EQ(w.V(3, 0), 0x00FF8855u);
        EXPECT_EQ(w.V(3, 1), 0xFFFF11F4u); // 3 -> 0xF4, 0 -> 0x11, 9 and 11 ->
                                           // signs of 0xF4, 0x88
        EXPECT_EQ(w.V(5, 0), 0x7CAA8866u); // 0x88776655 + 0xF4332211, carry out
        EXPECT_EQ(w.V(6, 0), 6u);
      }));
}

/// v_bitop3_b32 (gfx950) as LLVM 22 selects it (llc -mcpu=gfx950):
/// ((a ^ b) & c) | (a & ~c) is "v_bitop3_b32 d, b, a, c bitop3:0x6c" and
/// (a & ~b) | c is "v_bitop3_b32 d, a, c, b bitop3:0xdc"; _b16 the same
/// on the halves op_sel picks, the other half of D kept (the preserving
/// reading of gfx9's 16-bit VOP3 results: code that relied on zeros there
/// would fail here).
TEST(EmulatorVector, Bitop3AsLlvmSelectsIt) {
  std::mt19937 rng(5);
  std::vector<uint32_t> a(64), b(64), c(64);
  for (unsigned l = 0; l < 64; ++l)
    a[l] = rng(), b[l] = rng(), c[l] = rng();
  EXPECT_OK(run(
      "gfx950",
      "v_bitop3_b32 v4, v2, v1, v3 bitop3:0x6c\n"
      "v_bitop3_b32 v5, v1, v3, v2 bitop3:0xdc\n"
      "v_mov_b32_e32 v6, v1\n"
      "v_bitop3_b16 v6, v2, v1, v3 bitop3:0x6c\n"
      "v_mov_b32_e32 v7, v1\n"
      "v_bitop3_b16 v7, v2, v1, v3 bitop3:0x6c op_sel:[1,1,1,1]",
      64,
      [&](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l)
          w.V(1, l) = a[l], w.V(2, l) = b[l], w.V(3, l) = c[l];
      },
      [&](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          EXPECT_EQ(w.V(4, l), ((a[l] ^ b[l]) & c[l]) | (a[l] & ~c[l])) << l;
          EXPECT_EQ(w.V(5, l), (a[l] & ~b[l]) | c[l]) << l;
          // 16-bit: the low (op_sel 0) or high halves; D's other half kept.
          uint32_t f = ((a[l] ^ b[l]) & c[l]) | (a[l] & ~c[l]);
          EXPECT_EQ(w.V(6, l), (a[l] & 0xffff0000u) | (f & 0xffff)) << l;
          EXPECT_EQ(w.V(7, l), (a[l] & 0xffff) | (f & 0xffff0000u)) << l;
        }
      }));
}

TEST(EmulatorVector, Multiply24BitHighHalf) {
  // v_mul_hi_u32_u24: bits 63:32 of the 48-bit product of the low 24 bits
  // (LLVM divides a paged load's row index by a constant with it);
  // v_mad_i32_i24: signed 24-bit operands, a 32-bit addend.
  EXPECT_OK(run(
      "gfx950",
      "v_mul_hi_u32_u24_e32 v3, 0x71c71d, v1\n"
      "v_mul_hi_u32_u24_e32 v4, v1, v2\n"
      "v_mad_i32_i24 v5, v6, v7, v8",
      64,
      [](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          w.V(1, l) = 0xAB000000u + 9000u * l; // bits 31:24 ignored
          w.V(2, l) = 0xFFFFFFFFu;
          w.V(6, l) = 0x55FFFFFDu; // -3 in 24 bits (bits 31:24 ignored)
          w.V(7, l) = 1000u + l;
          w.V(8, l) = uint32_t(-5);
        }
      },
      [](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          uint64_t x = 9000u * l;
          EXPECT_EQ(w.V(3, l), uint32_t((x * 0x71c71dull) >> 32)) << l;
          EXPECT_EQ(w.V(4, l), uint32_t((x * 0xFFFFFFull) >> 32)) << l;
          EXPECT_EQ(int32_t(w.V(5, l)), -3 * int32_t(1000 + l) - 5) << l;
        }
      }));
}

TEST(EmulatorVector, ThreeOperandIntegerMinMaxMedian) {
  // v_med3_i32 (LLVM's clamp of a signed value to [lo, hi], as the power
  // of two of mla.quant_scale takes it), with its unsigned and max3 / min3
  // siblings: signed and unsigned orders differ for negative operands.
  EXPECT_OK(run(
      "gfx950",
      "v_med3_i32 v4, v1, s0, v2\n"
      "v_med3_u32 v5, v1, v2, v3\n"
      "v_max3_i32 v6, v1, v2, v3\n"
      "v_min3_i32 v7, v1, v2, v3\n"
      "v_max3_u32 v8, v1, v2, v3\n"
      "v_min3_u32 v9, v1, v2, v3",
      64,
      [](WaveState &w, unsigned) {
        w.s[0] = uint32_t(-126);
        for (unsigned l = 0; l < 64; ++l) {
          w.V(1, l) = uint32_t(int32_t(l) * 9 - 300); // -300 .. 267
          w.V(2, l) = 126;
          w.V(3, l) = uint32_t(int32_t(l) - 32);
        }
      },
      [](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          int32_t a = int32_t(l) * 9 - 300, c = int32_t(l) - 32;
          uint32_t ua = uint32_t(a), uc = uint32_t(c);
          EXPECT_EQ(int32_t(w.V(4, l)), std::clamp(a, -126, 126)) << l;
          uint32_t lo = std::min(ua, 126u), hi = std::max(ua, 126u);
          EXPECT_EQ(w.V(5, l), std::max(lo, std::min(hi, uc))) << l;
          EXPECT_EQ(int32_t(w.V(6, l)), std::max({a, 126, c})) << l;
          EXPECT_EQ(int32_t(w.V(7, l)), std::min({a, 126, c})) << l;
          EXPECT_EQ(w.V(8, l), std::max({ua, 126u, uc})) << l;
          EXPECT_EQ(w.V(9, l), std::min({ua, 126u, uc})) << l;
        }
      }));
}

TEST(EmulatorVector, Packed16BitMultiplyMinMaxShift) {
  // The mxfp4 decode's packed 16-bit integer math (LLVM vectorises it):
  // low 16 bits of each half's product, unsigned min / max, arithmetic
  // shift; op_sel picks the high half of a source for the low result.
  EXPECT_OK(run(
      "gfx950",
      "v_pk_mul_lo_u16 v3, v1, v2\n"
      "v_pk_min_u16 v4, v1, v2\n"
      "v_pk_max_u16 v5, v1, v2\n"
      "v_pk_ashrrev_i16 v6, v2, v1\n"
      "v_pk_mul_lo_u16 v7, v1, v2 op_sel:[1,0] op_sel_hi:[1,1]\n"
      "v_pk_mad_u16 v8, v1, 34, v2 op_sel_hi:[1,0,1]\n"
      "v_mad_legacy_u16 v9, v1, 34, v2\n"
      "v_cmp_gt_u16_sdwa s[4:5], v1, v2 src0_sel:BYTE_0 src1_sel:WORD_1\n"
      "v_cmp_lt_i16_e64 s[6:7], v1, v2\n"
      "v_max3_u16 v10, v1, v2, v12\n"
      "v_min3_i16 v11, v1, v2, 7",
      64,
      [](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          w.V(1, l) = (0x8000u + 977u * l) << 16 | (300u + l);
          w.V(2, l) = (l % 16) << 16 | (0x7F80u - l);
          w.V(12, l) = 0xABCD7F00u; // max3 reads the low half
        }
      },
      [](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          uint32_t a0 = 300 + l, a1 = (0x8000u + 977u * l) & 0xFFFF;
          uint32_t b0 = 0x7F80 - l, b1 = l % 16;
          auto pack = [](uint32_t lo, uint32_t hi) {
            return (lo & 0xFFFF) | (hi & 0xFFFF) << 16;
          };
          EXPECT_EQ(w.V(3, l), pack(a0 * b0, a1 * b1)) << l;
          EXPECT_EQ(w.V(4, l), pack(std::min(a0, b0), std::min(a1, b1))) << l;
          EXPECT_EQ(w.V(5, l), pack(std::max(a0, b0), std::max(a1, b1))) << l;
          EXPECT_EQ(w.V(6, l), pack(uint32_t(int16_t(a0) >> (b0 & 15)),
                                    uint32_t(int16_t(a1) >> (b1 & 15))))
              << l;
          EXPECT_EQ(w.V(7, l), pack(a1 * b0, a1 * b1)) << l;
          EXPECT_EQ(w.V(8, l), pack(a0 * 34 + b0, a1 * 34 + b1)) << l;
          EXPECT_EQ(w.V(9, l), (a0 * 34 + b0) & 0xFFFF) << l;
          EXPECT_EQ(w.V(10, l), std::max({a0, b0, 0x7F00u})) << l;
          EXPECT_EQ(w.V(11, l), uint32_t(uint16_t(std::min(
                                    {int16_t(a0), int16_t(b0), int16_t(7)}))))
              << l;
        }
        // The compares: byte 0 of v1 against the high half of v2 (SDWA),
        // and signed low halves.
        uint64_t gt = 0, lt = 0;
        for (unsigned l = 0; l < 64; ++l) {
          if (((300u + l) & 0xFF) > l % 16)
            gt |= uint64_t(1) << l;
          if (int16_t(300 + l) < int16_t(0x7F80 - l))
            lt |= uint64_t(1) << l;
        }
        EXPECT_EQ(uint64_t(w.s[4]) | uint64_t(w.s[5]) << 32, gt);
        EXPECT_EQ(uint64_t(w.s[6]) | uint64_t(w.s[7]) << 32, lt);
      }));
}

TEST(EmulatorVector, FloatModifiersSdwaDppAndPacked) {
  EXPECT_OK(run(
      "gfx950",
      "v_add_f32_e64 v3, -v1, |v2|\n"
      "v_mul_u32_u24_sdwa v4, v5, v6 dst_sel:DWORD dst_unused:UNUSED_PAD "
      "src0_sel:WORD_1 src1_sel:BYTE_0\n"
      "v_mov_b32_dpp v7, v0 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf\n"
      "v_mov_b32_dpp v8, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1\n"
      "v_pk_add_f32 v[10:11], v[12:13], v[14:15] op_sel:[1,0] op_sel_hi:[0,1]\n"
      "v_cndmask_b32_e64 v9, 1.0, 2.0, s[2:3]\n"
      // D is S0 and both halves read S0's low word (a scale broadcast, as
      // LLVM emits it): the sources are read before D is written.
      "v_mov_b64_e32 v[16:17], v[12:13]\n"
      "v_pk_mul_f32 v[16:17], v[16:17], v[14:15] op_sel_hi:[0,1]",
      64,
      [](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          w.setVf(1, l, 1.5f);
          w.setVf(2, l, -2.25f);
          w.V(5, l) = 0x00070000;
          w.V(6, l) = 0x1203;
          w.setVf(12, l, 1.0f);
          w.setVf(13, l, 10.0f);
          w.setVf(14, l, 100.0f);
          w.setVf(15, l, 1000.0f);
        }
        w.setS64(2, 0x5);
      },
      [](const WaveState &w, unsigned) {
        EXPECT_EQ(w.Vf(3, 0), 0.75f);
        EXPECT_EQ(w.V(4, 0), 21u); // 7 * 3
        EXPECT_EQ(w.V(7, 0), 3u);
        EXPECT_EQ(w.V(7, 5), 6u);
        EXPECT_EQ(w.V(8, 0), 0u); // no lane before 0 in the row
        EXPECT_EQ(w.V(8, 17), 16u);
        EXPECT_EQ(w.Vf(10, 0), 110.0f);  // lo: src0.hi + src1.lo
        EXPECT_EQ(w.Vf(11, 0), 1001.0f); // hi: src0.lo + src1.hi
        EXPECT_EQ(w.Vf(9, 0), 2.0f);
        EXPECT_EQ(w.Vf(9, 1), 1.0f);
        EXPECT_EQ(w.Vf(16, 0), 100.0f);  // 1 * 100
        EXPECT_EQ(w.Vf(17, 0), 1000.0f); // 1 * 1000, not 100 * 1000
      }));
}

TEST(EmulatorVector, DivisionSequenceSpecialCases) {
  // LLVM's f32 division: div_scale, rcp, Newton steps, div_fmas, div_fixup
  // (as in the decode's stage 2). The ISA's div_scale gives NaN for a zero
  // numerator; div_fixup must turn 0/x into 0 (an emulator bug once made a
  // combined output NaN where a partial was exactly 0).
  const float num[] = {0.0f, -0.0f, 3.0f, 0.0f, 1.0f, -6.0f, 1.0f, 5.0f};
  const float den[] = {3.0f, 3.0f, 0.0f, 0.0f, 3.0f, 2.0f, INFINITY, -0.5f};
  const int n = sizeof num / sizeof num[0];
  EXPECT_OK(run(
      "gfx950",
      "v_div_scale_f32 v3, s[2:3], v2, v2, v1\n"
      "v_rcp_f32_e32 v4, v3\n"
      "v_fma_f32 v5, -v3, v4, 1.0\n"
      "v_fmac_f32_e32 v4, v5, v4\n"
      "v_div_scale_f32 v5, vcc, v1, v2, v1\n"
      "v_mul_f32_e32 v6, v5, v4\n"
      "v_fma_f32 v7, -v3, v6, v5\n"
      "v_fmac_f32_e32 v6, v7, v4\n"
      "v_fma_f32 v3, -v3, v6, v5\n"
      "v_div_fmas_f32 v3, v3, v4, v6\n"
      "v_div_fixup_f32 v8, v3, v2, v1",
      64,
      [&](WaveState &w, unsigned) {
        for (int l = 0; l < 64; ++l) {
          w.setVf(1, l, num[l % n]);
          w.setVf(2, l, den[l % n]);
        }
      },
      [&](const WaveState &w, unsigned) {
        for (int l = 0; l < n; ++l) {
          float want = num[l] / den[l], got = w.Vf(8, l);
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << num[l] << " / " << den[l];
          } else {
            EXPECT_EQ(want, got) << num[l] << " / " << den[l];
          }
          if (want == 0) {
            EXPECT_EQ(std::signbit(want), std::signbit(got))
                << num[l] << " / " << den[l];
          }
        }
      }));
}

//===-- fp8 / bf16 conversions -------------------------------------------===//

void checkAllFp8Codes(const std::string &chip, mla_ref::Fp8Format fmt) {
  // Lane l converts the code pair (l, l + 64), (l + 128, l + 192).
  EXPECT_OK(run(
      chip,
      "v_cvt_pk_f32_fp8_e32 v[2:3], v1\n"
      "v_cvt_pk_f32_fp8_sdwa v[4:5], v1 src0_sel:WORD_1\n"
      // One code: byte 0, or the byte SDWA's src0_sel names.
      "v_cvt_f32_fp8_e32 v6, v1\n"
      "v_cvt_f32_fp8_sdwa v7, v1 src0_sel:BYTE_1\n"
      "v_cvt_f32_fp8_sdwa v8, v1 src0_sel:BYTE_2\n"
      "v_cvt_f32_fp8_sdwa v9, v1 src0_sel:BYTE_3",
      64,
      [](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l)
          w.V(1, l) = l | (l + 64) << 8 | (l + 128) << 16 | (l + 192) << 24;
      },
      [&](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          unsigned codes[4] = {l, l + 64, l + 128, l + 192};
          float got[8] = {w.Vf(2, l), w.Vf(3, l), w.Vf(4, l), w.Vf(5, l),
                          w.Vf(6, l), w.Vf(7, l), w.Vf(8, l), w.Vf(9, l)};
          for (int i = 0; i < 8; ++i) {
            double want = mla_ref::decodeFp8(uint8_t(codes[i % 4]), fmt);
            if (std::isnan(want))
              EXPECT_TRUE(std::isnan(got[i]))
                  << chip << " code " << codes[i % 4];
            else
              EXPECT_EQ(double(got[i]), want)
                  << chip << " code " << codes[i % 4];
          }
        }
      }));
  // Every finite value encodes back to its code (RNE is exact on them);
  // values between codes round to nearest even like the reference codec.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double mx = mla_ref::fp8Max(fmt);
  std::vector<float> a(64), b(64);
  for (unsigned l = 0; l < 64; ++l) {
    a[l] = float(mla_ref::decodeFp8(uint8_t(l * 2), fmt)); // codes 0..126
    b[l] = float(u(rng) * mx);
  }
  EXPECT_OK(run(
      chip, "v_cvt_pk_fp8_f32 v3, v1, v2", 64,
      [&](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          w.setVf(1, l, a[l]);
          w.setVf(2, l, b[l]);
        }
      },
      [&](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          if (!std::isnan(a[l])) {
            EXPECT_EQ(w.V(3, l) & 0xff, mla_ref::encodeFp8(a[l], fmt)) << l;
          }
          EXPECT_EQ((w.V(3, l) >> 8) & 0xff, mla_ref::encodeFp8(b[l], fmt))
              << b[l];
        }
      }));
}

TEST(EmulatorConvert, Fp8AllCodesGfx950E4M3FN) {
  checkAllFp8Codes("gfx950", mla_ref::Fp8Format::E4M3FN);
}
TEST(EmulatorConvert, Fp8AllCodesGfx942E4M3FNUZ) {
  checkAllFp8Codes("gfx942", mla_ref::Fp8Format::E4M3FNUZ);
}

TEST(EmulatorConvert, ScaledFp8ToBf16AndBf16Pack) {
  EXPECT_OK(run(
      "gfx950",
      "v_cvt_scalef32_pk_bf16_fp8 v3, v1, v2 op_sel:[1,0,0]\n"
      "v_cvt_pk_bf16_f32 v4, v5, v6",
      64,
      [](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          w.V(1, l) = 0x38300000;     // codes 0x30 (0.5), 0x38 (1.0) in word 1
          w.setVf(2, l, 4.0f);        // scale 2^2
          w.setVf(5, l, 1.00390625f); // RNE ties to even: 1.0
          w.V(6, l) = 0x7fc00001;     // NaN stays NaN
        }
      },
      [](const WaveState &w, unsigned) {
        EXPECT_EQ(w.V(3, 0), 0x40804000u); // bf16 2.0, 4.0
        EXPECT_EQ(w.V(4, 0) & 0xffff, 0x3f80u);
        EXPECT_EQ((w.V(4, 0) >> 16) & 0x7fc0, 0x7fc0u);
      }));
}

/// v_cvt_scalef32_pk_f16_fp8 (what mla.split_terms reads its hi terms
/// back with on gfx950): every e4m3 code through both word selects at
/// scale 1 (exact in f16), then RNE ties among f16's subnormals (scale
/// 2^-22: 1.125 and 1.375 times 2^-22 are 4.5 and 5.5 units of 2^-24) and
/// overflow to infinity (448 times 2^8).
TEST(EmulatorConvert, ScaledFp8ToF16) {
  auto f16 = [](uint32_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0    ? std::ldexp(double(m), -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : std::ldexp(double(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
  };
  EXPECT_OK(run(
      "gfx950",
      "v_cvt_scalef32_pk_f16_fp8 v3, v1, v2\n"
      "v_cvt_scalef32_pk_f16_fp8 v4, v1, v2 op_sel:[1,0,0]\n"
      "v_cvt_scalef32_pk_f16_fp8 v6, v5, v7\n"
      "v_cvt_scalef32_pk_f16_fp8 v8, v5, v9",
      64,
      [](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          w.V(1, l) = (4 * l) | (4 * l + 1) << 8 | (4 * l + 2) << 16 |
                      (4 * l + 3) << 24;
          w.setVf(2, l, 1.0f);
          w.setVf(7, l, std::ldexp(1.0f, -22));
          w.V(5, l) = 0x3B39;
          w.setVf(9, l, 256.0f);
        }
      },
      [&](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l)
          for (unsigned i = 0; i < 4; ++i) {
            uint32_t r = i < 2 ? w.V(3, l) : w.V(4, l);
            double got = f16((r >> (16 * (i % 2))) & 0xffff);
            double want = mla_ref::decodeFp8(uint8_t(4 * l + i),
                                             mla_ref::Fp8Format::E4M3FN);
            if (std::isnan(want))
              EXPECT_TRUE(std::isnan(got)) << "code " << 4 * l + i;
            else
              EXPECT_EQ(got, want) << "code " << 4 * l + i;
          }
        EXPECT_EQ(w.V(6, 0), 0x00060004u);
        // 0x39 (1.125) times 2^8 is 288 (0x5C80); 0x3B (1.375): 352 (0x5D80).
        EXPECT_EQ(w.V(8, 0), 0x5D805C80u);
      }));
  EXPECT_OK(run(
      "gfx950", "v_cvt_scalef32_pk_f16_fp8 v3, v1, v2", 64,
      [](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          w.V(1, l) = 0x387E; // 448, 1.0
          w.setVf(2, l, 256.0f);
        }
      },
      [](const WaveState &w, unsigned) {
        EXPECT_EQ(w.V(3, 0), 0x5C007C00u); // inf, 256.0
      }));
}

/// v_pk_add_i16 / v_pk_sub_i16 (LLVM's packed index arithmetic): each half
/// wraps like the unsigned forms.
TEST(EmulatorVector, Packed16BitSignedAddSub) {
  EXPECT_OK(run(
      "gfx950", "v_pk_add_i16 v3, v1, v2\nv_pk_sub_i16 v4, v1, v2", 64,
      [](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          w.V(1, l) = (0x7FF0u + l) << 16 | (5u + l);
          w.V(2, l) = 0x0020u << 16 | (10u + 2 * l);
        }
      },
      [](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          uint32_t a0 = 5 + l, a1 = 0x7FF0 + l, b0 = 10 + 2 * l, b1 = 0x20;
          EXPECT_EQ(w.V(3, l), ((a0 + b0) & 0xFFFF) | ((a1 + b1) & 0xFFFF) << 16)
              << l;
          EXPECT_EQ(w.V(4, l), ((a0 - b0) & 0xFFFF) | ((a1 - b1) & 0xFFFF) << 16)
              << l;
        }
      }));
}

/// v_cvt_scalef32_pk_bf16_fp4 / _f32_fp4: every byte (64 lanes x 4 byte
/// selects) against the reference codecs, times scales 2^-125 .. 2^125
/// (the range the mxfp4 decode hands it), with the sign bit of the scale
/// operand ignored.
TEST(EmulatorConvert, ScaledFp4AllCodes) {
  auto scaleCode = [](unsigned l) { return uint8_t(2 + (l * 61) % 251); };
  for (const char *form : {"bf16", "f32"}) {
    std::string text;
    for (unsigned s = 0; s < 4; ++s)
      text += llvm::formatv(
                  "v_cvt_scalef32_pk_{0}_fp4 {1}, v1, v2{2}\n", form,
                  form[0] == 'b'
                      ? llvm::formatv("v{0}", 4 + 2 * s).str()
                      : llvm::formatv("v[{0}:{1}]", 4 + 2 * s, 5 + 2 * s).str(),
                  s ? llvm::formatv(" op_sel:[{0},{1},0]", s & 1, s >> 1).str()
                    : std::string())
                  .str();
    bool bf16 = form[0] == 'b';
    EXPECT_OK(run(
        "gfx950", text, 64,
        [&](WaveState &w, unsigned) {
          for (unsigned l = 0; l < 64; ++l) {
            w.V(1, l) = (4 * l) | (4 * l + 1) << 8 | (4 * l + 2) << 16 |
                        (4 * l + 3) << 24;
            w.V(2, l) = uint32_t(scaleCode(l)) << 23 | (l & 1u) << 31;
          }
        },
        [&](const WaveState &w, unsigned) {
          for (unsigned l = 0; l < 64; ++l)
            for (unsigned s = 0; s < 4; ++s) {
              unsigned byte = 4 * l + s;
              double scale = mla_ref::decodeE8M0(scaleCode(l));
              for (unsigned h = 0; h < 2; ++h) {
                double want =
                    mla_ref::decodeFp4E2M1(uint8_t(byte >> 4 * h)) * scale;
                uint32_t bits = bf16 ? (w.V(4 + 2 * s, l) >> 16 * h) << 16
                                     : w.V(4 + 2 * s + h, l);
                float got;
                std::memcpy(&got, &bits, 4);
                EXPECT_EQ(double(got), want)
                    << form << " byte " << byte << " select " << s << " half "
                    << h << " scale code " << int(scaleCode(l));
              }
            }
        }));
  }
}

//===-- MFMA against a plain product --------------------------------------===//

/// matrix-layouts.md: A m = l % 16, k = KL * (l / 16) + i; B k = KL * (l / 16)
/// + i, n = l % 16 (f8f6f4 FP8: k = 16 (l / 16) + i % 16 + 64 (i / 16));
/// C/D m = 4 (l / 16) + i, n = l % 16.
struct MfmaCase {
  const char *chip, *instr;
  int K, bits;
  bool fp8, interleaved, scaled;
};

void checkMfma(const MfmaCase &c) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-3, 3);
  int KL = c.K / 4;
  std::vector<int> A(16 * c.K), B(c.K * 16), C(256);
  for (int &x : A)
    x = small(rng);
  for (int &x : B)
    x = small(rng);
  for (int &x : C)
    x = small(rng);
  int sa[16][4], sb[16][4];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 4; ++j)
      sa[i][j] = 127 + small(rng) % 2, sb[i][j] = 127 + small(rng) % 2;
  auto kOf = [&](int l, int i) {
    return c.interleaved ? 16 * (l / 16) + i % 16 + 64 * (i / 16)
                         : KL * (l / 16) + i;
  };
  auto code = [&](int v) -> uint32_t {
    if (c.fp8) // e4m3: exact small integers
      return mla_ref::encodeFp8(v, std::string(c.chip) == "gfx950"
                                       ? mla_ref::Fp8Format::E4M3FN
                                       : mla_ref::Fp8Format::E4M3FNUZ);
    return mla_ref::floatToBf16(float(v));
  };
  int regs = KL * c.bits / 32;
  std::string text = std::string(c.instr) +
                     " v[0:3], v[4:" + std::to_string(3 + regs) +
                     "], v[20:" + std::to_string(19 + regs) + "], v[0:3]";
  if (c.scaled)
    text += ", v40, v41 op_sel_hi:[0,0,0]";
  EXPECT_OK(run(
      c.chip, text, 64,
      [&](WaveState &w, unsigned) {
        for (int l = 0; l < 64; ++l) {
          for (int r = 0; r < 4; ++r)
            w.setVf(r, l, float(C[(4 * (l / 16) + r) * 16 + l % 16]));
          for (int i = 0; i < KL; ++i) {
            int k = kOf(l, i);
            uint32_t ca = code(A[(l % 16) * c.K + k]),
                     cb = code(B[k * 16 + l % 16]);
            int bit = i * c.bits;
            w.V(4 + bit / 32, l) |= ca << (bit % 32);
            w.V(20 + bit / 32, l) |= cb << (bit % 32);
          }
          w.V(40, l) = sa[l % 16][l / 16];
          w.V(41, l) = sb[l % 16][l / 16];
        }
      },
      [&](const WaveState &w, unsigned) {
        for (int l = 0; l < 64; ++l)
          for (int r = 0; r < 4; ++r) {
            int m = 4 * (l / 16) + r, n = l % 16;
            double want = C[m * 16 + n];
            for (int k = 0; k < c.K; ++k) {
              double p = A[m * c.K + k] * B[k * 16 + n];
              if (c.scaled)
                p *= std::ldexp(1.0, sa[m][k / 32] - 127 + sb[n][k / 32] - 127);
              want += p;
            }
            EXPECT_EQ(double(w.Vf(r, l)), want)
                << c.instr << " m " << m << " n " << n;
          }
      }));
}

TEST(EmulatorMfma, Bf16x32Gfx950) {
  checkMfma(
      {"gfx950", "v_mfma_f32_16x16x32_bf16", 32, 16, false, false, false});
}
TEST(EmulatorMfma, Bf16x16Gfx942) {
  checkMfma(
      {"gfx942", "v_mfma_f32_16x16x16_bf16", 16, 16, false, false, false});
}
TEST(EmulatorMfma, Fp8x32Gfx950) {
  checkMfma(
      {"gfx950", "v_mfma_f32_16x16x32_fp8_fp8", 32, 8, true, false, false});
}
TEST(EmulatorMfma, Fp8x32Gfx942Fnuz) {
  checkMfma(
      {"gfx942", "v_mfma_f32_16x16x32_fp8_fp8", 32, 8, true, false, false});
}
TEST(EmulatorMfma, F8f6f4Fp8Interleaved) {
  checkMfma(
      {"gfx950", "v_mfma_f32_16x16x128_f8f6f4", 128, 8, true, true, false});
}
TEST(EmulatorMfma, F8f6f4Fp8ScaledBlocks) {
  checkMfma({"gfx950", "v_mfma_scale_f32_16x16x128_f8f6f4", 128, 8, true, true,
             true});
}

//===-- LDS
//----------------------------------------------------------------===//

TEST(EmulatorLds, SwizzleBpermuteRead2AndBankConflicts) {
  Device dev;
  Counters c;
  std::string err;
  auto code = assemble("gfx950",
                       "v_lshlrev_b32_e32 v1, 2, v0\n"
                       "ds_write_b32 v1, v0\n"
                       "s_waitcnt lgkmcnt(0)\n"
                       "ds_read2_b32 v[2:3], v1 offset1:1\n"
                       "ds_swizzle_b32 v4, v0 offset:swizzle(SWAP,1)\n"
                       "v_sub_u32_e32 v5, 252, v1\n"
                       "ds_bpermute_b32 v6, v5, v0\n"
                       "v_lshlrev_b32_e32 v7, 8, v0\n"
                       "ds_read_b32 v8, v7\n"
                       "s_waitcnt lgkmcnt(0)",
                       &err);
  ASSERT_FALSE(code.empty()) << err;
  EXPECT_OK(runRaw(
      dev, "gfx950", code, 64, 64 * 256, nullptr,
      [](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 63; ++l) {
          EXPECT_EQ(w.V(2, l), l);
          EXPECT_EQ(w.V(3, l), l + 1);
          EXPECT_EQ(w.V(4, l), l ^ 1);
          EXPECT_EQ(w.V(6, l), 63 - l);
        }
      },
      &c));
  // ds_read_b32 at a 256-byte stride: every lane on bank 0, 64 banks on
  // gfx950 serve 64 lanes in one phase: 63 extra cycles.
  EXPECT_GE(c.ldsBankConflicts, 63u);
  EXPECT_EQ(c.lds, 5u);
}

/// ds_read_b64_tr_b8 / _b16 against the transposing loads' statement: a
/// group of 16 lanes reads an (8 / bytes) x 16 block of `bytes`-byte
/// elements, lane l of the group reading 8 bytes of block row l / (2 bytes)
/// at its own address, and lane i receives column i of the block, row r
/// in element r. The block here is rows 8h.. (b8) or 4h.. (b16) of a matrix
/// with 40-byte rows, group h of the wave, at random bytes. The expected
/// values are read from the matrix, not from the exchange the emulator
/// implements (the concatenation of the lanes' reads).
void checkTransposingRead(unsigned bytes) {
  const unsigned stride = 40, rows = 8 / bytes;
  std::mt19937 rng(2026 + bytes);
  std::vector<uint8_t> lds(2048);
  for (auto &x : lds)
    x = uint8_t(rng());
  // Lane l of group h addresses 8 bytes of row rows * h + i / lanesPerRow
  // (i = l mod 16), a row of the block being lanesPerRow lanes' 8 bytes.
  auto addrOf = [&](unsigned l) {
    unsigned h = l / 16, i = l % 16, lanesPerRow = 16 / rows;
    unsigned row = rows * h + i / lanesPerRow;
    unsigned col = (i % lanesPerRow) * 8; // byte column
    return row * stride + col;
  };
  std::string op = bytes == 1 ? "ds_read_b64_tr_b8" : "ds_read_b64_tr_b16";
  std::string err;
  auto code = assemble("gfx950",
                       "v_lshlrev_b32_e32 v1, 5, v0\n"
                       "ds_write_b128 v1, v[2:5]\n"
                       "ds_write_b128 v1, v[6:9] offset:16\n"
                       "s_waitcnt lgkmcnt(0)\n" +
                           op + " v[10:11], v12\n" + "s_waitcnt lgkmcnt(0)",
                       &err);
  ASSERT_FALSE(code.empty()) << err;
  Device dev;
  Counters c;
  EXPECT_OK(runRaw(
      dev, "gfx950", code, 64, 2048,
      [&](WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          for (unsigned d = 0; d < 8; ++d)
            std::memcpy(&w.V(2 + d, l), &lds[32 * l + 4 * d], 4);
          w.V(12, l) = addrOf(l);
        }
      },
      [&](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          unsigned h = l / 16, i = l % 16;
          uint8_t got[8];
          uint32_t lo = w.V(10, l), hi = w.V(11, l);
          std::memcpy(got, &lo, 4);
          std::memcpy(got + 4, &hi, 4);
          for (unsigned r = 0; r < rows; ++r)
            for (unsigned k = 0; k < bytes; ++k)
              EXPECT_EQ(got[r * bytes + k],
                        lds[(rows * h + r) * stride + i * bytes + k])
                  << op << " lane " << l << " element " << r;
        }
      },
      &c));
}

TEST(EmulatorLds, TransposingReadB8) { checkTransposingRead(1); }
TEST(EmulatorLds, TransposingReadB16) { checkTransposingRead(2); }

TEST(EmulatorLds, TransposingReadNeedsEveryLane) {
  std::string err;
  auto code = assemble("gfx950",
                       "v_cmp_gt_u32_e32 vcc, 32, v0\n"
                       "s_and_saveexec_b64 s[2:3], vcc\n"
                       "v_mov_b32_e32 v1, 0\n"
                       "ds_read_b64_tr_b8 v[2:3], v1",
                       &err);
  ASSERT_FALSE(code.empty()) << err;
  Device dev;
  llvm::Error e = runRaw(dev, "gfx950", code, 64, 1024, nullptr, nullptr);
  ASSERT_TRUE(bool(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_NE(msg.find("needs every lane active"), std::string::npos) << msg;
}

TEST(EmulatorLds, OutOfRangeFaults) {
  std::string err;
  auto code =
      assemble("gfx950", "v_mov_b32_e32 v1, 0x400\nds_read_b32 v2, v1", &err);
  Device dev;
  llvm::Error e = runRaw(dev, "gfx950", code, 64, 1024, nullptr, nullptr);
  ASSERT_TRUE(bool(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_NE(msg.find("ds_read_b32 v2, v1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("beyond the workgroup's 1024 bytes"), std::string::npos)
      << msg;
}

//===-- buffers, global memory, the wait model ---------------------------===//

TEST(EmulatorMemory, RawBufferRangeCheck) {
  std::vector<uint32_t> data(64, 0), out(64, 0xdeadbeef);
  for (unsigned i = 0; i < 64; ++i)
    data[i] = 1000 + i;
  Device dev;
  dev.registerBuffer(data.data(), data.size() * 4, "data");
  dev.registerBuffer(out.data(), out.size() * 4, "out");
  // num_records = 40 bytes: dwords 0..9 in range; the rest read 0 and
  // their stores are dropped.
  EXPECT_OK(run(
      "gfx950",
      "v_lshlrev_b32_e32 v1, 2, v0\n"
      "buffer_load_dword v2, v1, s[4:7], 0 offen\n"
      "s_waitcnt vmcnt(0)\n"
      "buffer_store_dword v2, v1, s[8:11], 0 offen\n"
      "s_waitcnt vmcnt(0)",
      64,
      [&](WaveState &w, unsigned) {
        uint64_t a = reinterpret_cast<uint64_t>(data.data());
        uint64_t o = reinterpret_cast<uint64_t>(out.data());
        w.s[4] = uint32_t(a), w.s[5] = uint32_t(a >> 32) & 0xffff, w.s[6] = 40,
        w.s[7] = 0x00027000;
        w.s[8] = uint32_t(o), w.s[9] = uint32_t(o >> 32) & 0xffff, w.s[10] = 32,
        w.s[11] = 0x00027000;
      },
      [&](const WaveState &w, unsigned) {
        EXPECT_EQ(w.V(2, 3), 1003u);
        EXPECT_EQ(w.V(2, 10), 0u);
      },
      &dev));
  EXPECT_EQ(out[7], 1007u);
  EXPECT_EQ(out[8], 0xdeadbeefu); // beyond the store buffer's 32 bytes
}

/// buffer_load_dwordx4 ... lds (gfx950): lane l's 16 bytes land at LDS
/// byte M0 + offset + 16 l, read from the buffer at vaddr + offset; lanes
/// past num_records write zeros; no VGPR changes.
TEST(EmulatorMemory, LdsDmaLoad) {
  std::vector<uint32_t> data(512);
  for (unsigned i = 0; i < data.size(); ++i)
    data[i] = 7000 + i;
  Device dev;
  dev.registerBuffer(data.data(), data.size() * 4, "data");
  auto setup = [&](WaveState &w, unsigned) {
    uint64_t a = reinterpret_cast<uint64_t>(data.data());
    // num_records = 1024 + 16: lanes 0..63 read bytes 16 + 32 l (lane l's
    // vaddr 32 l, offset 16): lanes 0..31 in range, 32..63 past it.
    w.s[4] = uint32_t(a), w.s[5] = uint32_t(a >> 32) & 0xffff,
    w.s[6] = 1024 + 16, w.s[7] = 0x00027000;
    w.s[2] = 256; // M0's value
    for (unsigned l = 0; l < 64; ++l)
      w.V(1, l) = 32 * l, w.V(8, l) = 0x5555;
  };
  const char *prog = "s_mov_b32 m0, s2\n"
                     "buffer_load_dwordx4 v1, s[4:7], 0 offen offset:16 lds\n"
                     "s_waitcnt vmcnt(0)\n"
                     "v_lshlrev_b32_e32 v2, 4, v0\n"
                     "ds_read_b128 v[4:7], v2 offset:272\n"
                     "s_waitcnt lgkmcnt(0)";
  EXPECT_OK(run(
      "gfx950", prog, 64, setup,
      [&](const WaveState &w, unsigned) {
        for (unsigned l = 0; l < 64; ++l) {
          EXPECT_EQ(w.V(1, l), 32 * l) << l; // the address, not data
          for (unsigned d = 0; d < 4; ++d)
            EXPECT_EQ(w.V(4 + d, l), l < 32 ? 7000 + 8 * l + 4 + d : 0u)
                << "lane " << l << " dword " << d;
        }
      },
      &dev, 2048));
}

/// The LDS bytes of an LDS DMA load are claimed until its wave's
/// s_waitcnt vmcnt retires it: a read of them before that, by the wave
/// itself or (after a barrier without the wait) by another wave, is an
/// error naming the load; with the wait before the barrier it is not.
TEST(EmulatorMemory, LdsDmaNeedsItsWait) {
  std::vector<uint32_t> data(1024, 3);
  Device dev;
  dev.registerBuffer(data.data(), data.size() * 4, "data");
  auto setup = [&](WaveState &w, unsigned) {
    uint64_t a = reinterpret_cast<uint64_t>(data.data());
    w.s[4] = uint32_t(a), w.s[5] = uint32_t(a >> 32) & 0xffff, w.s[6] = 4096,
    w.s[7] = 0x00027000;
    for (unsigned l = 0; l < 64; ++l)
      w.V(1, l) = 16 * l, w.V(2, l) = 16 * l;
  };
  auto expectRace = [&](const char *prog, unsigned threads) {
    llvm::Error e = run("gfx950", prog, threads, setup, nullptr, &dev, 2048);
    ASSERT_TRUE(bool(e)) << prog;
    std::string msg = llvm::toString(std::move(e));
    EXPECT_NE(msg.find("may still be writing it"), std::string::npos) << msg;
    EXPECT_NE(msg.find("buffer_load_dwordx4 v1, s[4:7], 0 offen lds"),
              std::string::npos)
        << msg;
  };
  // Wave 0 loads bytes 0..1023; every wave then reads byte 16 l.
  const char *load = "s_mov_b32 m0, 0\n"
                     "v_readfirstlane_b32 s8, v0\n"
                     "s_cmp_eq_u32 s8, 0\n"
                     "s_cbranch_scc0 skip\n"
                     "buffer_load_dwordx4 v1, s[4:7], 0 offen lds\n"
                     "skip:\n";
  expectRace((std::string(load) + "ds_read_b32 v3, v2").c_str(), 64);
  expectRace((std::string(load) + "s_barrier\nds_read_b32 v3, v2").c_str(),
             128);
  EXPECT_OK(run(
      "gfx950",
      std::string(load) + "s_waitcnt vmcnt(0)\ns_barrier\nds_read_b32 v3, v2\n"
                          "s_waitcnt lgkmcnt(0)",
      128, setup,
      [](const WaveState &w, unsigned) { EXPECT_EQ(w.V(3, 5), 3u); }, &dev,
      2048));
}

TEST(EmulatorMemory, GlobalOutsideBuffersFaultsNamingTheInstruction) {
  std::vector<uint32_t> data(16, 0);
  Device dev;
  dev.registerBuffer(data.data(), 64, "data");
  llvm::Error e = run(
      "gfx942",
      "global_load_dword v2, v[4:5], off offset:64\ns_waitcnt vmcnt(0)", 64,
      [&](WaveState &w, unsigned) {
        uint64_t a = reinterpret_cast<uint64_t>(data.data());
        for (unsigned l = 0; l < 64; ++l)
          w.V(4, l) = uint32_t(a), w.V(5, l) = uint32_t(a >> 32);
      },
      nullptr, &dev);
  ASSERT_TRUE(bool(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_NE(msg.find("global_load_dword v2, v[4:5], off offset:64"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("lane 0 reads 4 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("past the end of 'data'"), std::string::npos) << msg;
}

TEST(EmulatorMemory, MissingWaitIsReported) {
  std::vector<uint32_t> data(64, 5);
  Device dev;
  dev.registerBuffer(data.data(), 256, "data");
  auto setup = [&](WaveState &w, unsigned) {
    uint64_t a = reinterpret_cast<uint64_t>(data.data());
    for (unsigned l = 0; l < 64; ++l)
      w.V(4, l) = uint32_t(a + 4 * l), w.V(5, l) = uint32_t(a >> 32);
  };
  EXPECT_OK(run(
      "gfx950",
      "global_load_dword v2, v[4:5], off\ns_waitcnt vmcnt(0)\nv_add_u32_e32 "
      "v3, v2, v2",
      64, setup,
      [](const WaveState &w, unsigned) { EXPECT_EQ(w.V(3, 7), 10u); }, &dev));
  llvm::Error e = run(
      "gfx950", "global_load_dword v2, v[4:5], off\nv_add_u32_e32 v3, v2, v2",
      64, setup, nullptr, &dev);
  ASSERT_TRUE(bool(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_NE(msg.find("reads v2 before an s_waitcnt"), std::string::npos) << msg;
  // In-order vector memory: vmcnt(1) covers the older of two loads only.
  EXPECT_OK(run(
      "gfx950",
      "global_load_dword v2, v[4:5], off\nglobal_load_dword v6, v[4:5], off\n"
      "s_waitcnt vmcnt(1)\nv_mov_b32_e32 v3, v2\ns_waitcnt vmcnt(0)",
      64, setup, nullptr, &dev));
  llvm::Error e2 = run(
      "gfx950",
      "global_load_dword v2, v[4:5], off\nglobal_load_dword v6, v[4:5], off\n"
      "s_waitcnt vmcnt(1)\nv_mov_b32_e32 v3, v6",
      64, setup, nullptr, &dev);
  EXPECT_TRUE(bool(e2));
  llvm::consumeError(std::move(e2));
}

TEST(EmulatorDecode, UnknownInstructionIsAnError) {
  // v_sin_f32 has no semantics here: the error names it and its address.
  llvm::Error e =
      run("gfx950", "v_nop\nv_sin_f32_e32 v1, v2", 64, nullptr, nullptr);
  ASSERT_TRUE(bool(e));
  std::string msg = llvm::toString(std::move(e));
  EXPECT_NE(msg.find("v_sin_f32"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pc 0x4"), std::string::npos) << msg;
}

} // namespace
