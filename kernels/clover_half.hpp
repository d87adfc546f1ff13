// clover_half.hpp: the clover term (A^-1) of the half operator (WilsonClover<Half>, solver.sloppy = "half") in 16-bit
// fixed point, its only format, in the style of QUDA's half-precision clover: each hermitian 6x6 chiral block
// (kernels/clover_block.hpp: diag[6], then lower[15] as re, im; 36 reals) is stored as 36 int16 q_k with one float
// norm m = max_k |v_k| (computed in fp32) per block: v_k = q_k m / 32767. Every entry keeps an absolute error of at
// most m / 65534 (+ fp32 rounding): half a step of 2^-15 of the block's largest entry. 2 x (72 + 4) = 152 bytes per
// site against 288 in fp32.
// The kernels multiply with a block as it is stored (CloverBlockQ, block_mul below): the int16 entries are converted
// to fp32 as the mat-vec uses them and each of the six sums is scaled by m / 32767 once at the end, so no fp32 copy of
// the block (36 registers) is built: the packed block holds 18 registers and the scale one (register counts of the
// hot kernels: kernels/register_budgets.txt).
// Why one norm per block scaled to its largest entry (measured on the CPU, 2026-11-24: A_ee^-1 of the fp32 operator
// applied to Gaussian random half spinors, RMS of |A^-1_16 x - A^-1_32 x| / |A^-1_32 x| over 4 x the sites of a
// random SU(3) field 4^3x8 with antiperiodic t; the fp32 blocks have diagonals up to 1.15 (1.36) and off-diagonal
// entries up to 0.14 (0.32) at kappa 0.12, csw 1 (kappa 0.13, csw 1.7)):
//   one norm per block (this format)              3.0e-5 (3.1e-5)
//   one norm per site (both blocks, 4 bytes less)  3.0e-5 (3.2e-5)
//   a power of two per block (exact scaling)       5.7e-5 (5.6e-5): up to a bit of the 15 lost
//   two norms per block, diagonal and the rest     8.5e-6 (9.4e-6), 8 bytes more per site
// and on the unit field (F = 0: A^-1 = 1) every form is exact. The dominant diagonal sets each block's step, so the
// off-diagonal entries keep ~12 of the 15 bits; separate norms would keep them all, but the rounding of the spinors
// themselves (~1.8e-5 RMS relative per store) is of the same size as this format's clover error, and the mixed
// fp64/half CG needs iterations within one of each other to 1e-10 either way (tests/test_half.cpp), so the smaller
// form was kept.
// Non-finite entries: a block with a NaN or infinite entry gets a NaN norm and multiplies to NaN.
// Who may call: kernels and host code alike (through CloverView<Half>, kernels/views.hpp).
#pragma once

#include <cfloat>
#include <cstdint>
#include <limits>

#include "kernels/clover_block.hpp"
#include "kernels/half.hpp"

namespace emprism {

// One chiral block in fixed point: q[k] for k < 6 the diagonal, q[6 + 2 j] and q[7 + 2 j] the re, im of lower[j].
struct CloverBlock16 {
  std::int16_t q[36];
};

// A block as the kernels multiply with it: the stored entries and their scale, norm / 32767.
struct CloverBlockQ {
  CloverBlock16 q;
  float scale;
};

// Real k of a block (0 <= k < 36) in the order of CloverBlock16.
EMPRISM_HD inline float clover_real(const CloverBlock<float>& m, int k) {
  return k < 6 ? m.diag[k] : ((k - 6) % 2 == 0 ? m.lower[(k - 6) / 2].re : m.lower[(k - 6) / 2].im);
}

EMPRISM_HD inline std::int16_t fixed16(float v) { return static_cast<std::int16_t>(v + (v < 0 ? -0.5f : 0.5f)); }

// The fixed-point form of m; norm receives max |entry| (NaN when an entry is not finite).
EMPRISM_HD inline CloverBlock16 quantize_block(const CloverBlock<float>& m, float& norm) {
  float big = 0;
  bool finite = true;
  EMPRISM_UNROLL
  for (int k = 0; k < 36; ++k) {
    const float v = clover_real(m, k), a = v < 0 ? -v : v;
    finite = finite && a <= FLT_MAX;  // false for NaN and infinity
    big = a > big ? a : big;
  }
  const float inv = finite && big > 0 ? kHalfScale / big : 0.0f;
  CloverBlock16 out;
  EMPRISM_UNROLL
  for (int k = 0; k < 36; ++k) out.q[k] = fixed16(finite ? clover_real(m, k) * inv : 0.0f);  // in [-32767, 32767]
  norm = finite ? big : std::numeric_limits<float>::quiet_NaN();
  return out;
}

// The fp32 block a CloverBlockQ stands for (host code and tests; the kernels use block_mul), its int16 converted as
// block_mul converts them (int16_to_float).
EMPRISM_HD inline CloverBlock<float> dequantize_block(const CloverBlockQ& m) {
  float v[36];
  int16_to_float(m.q.q, v);
  CloverBlock<float> out;
  EMPRISM_UNROLL
  for (int k = 0; k < 6; ++k) out.diag[k] = m.scale * v[k];
  EMPRISM_UNROLL
  for (int j = 0; j < 15; ++j) out.lower[j] = {m.scale * v[6 + 2 * j], m.scale * v[7 + 2 * j]};
  return out;
}

// y = M x for a stored block, row by row as block_mul of clover_block.hpp: y_i = scale (sum_j Q_ij x_j), the int16
// entries converted by int16_to_float (kernels/half.hpp).
EMPRISM_HD inline HalfSpinor<float> block_mul(const CloverBlockQ& m, const HalfSpinor<float>& x) {
  float v[36];
  int16_to_float(m.q.q, v);
  const auto lower = [&v](int t) { return Complex<float>{v[6 + 2 * t], v[7 + 2 * t]}; };  // lower[t], unscaled
  HalfSpinor<float> y;
  EMPRISM_UNROLL
  for (int i = 0; i < 6; ++i) {
    Complex<float> acc = v[i] * x.h[i / 3].c[i % 3];
    EMPRISM_UNROLL
    for (int j = 0; j < i; ++j)
      acc = add_product<false, kChainedProducts>(acc, lower(tri_index(i, j)), x.h[j / 3].c[j % 3]);
    EMPRISM_UNROLL
    for (int j = i + 1; j < 6; ++j)
      acc = add_product<true, kChainedProducts>(acc, lower(tri_index(j, i)), x.h[j / 3].c[j % 3]);
    y.h[i / 3].c[i % 3] = m.scale * acc;
  }
  return y;
}

}  // namespace emprism
