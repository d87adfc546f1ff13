// half.hpp: the tags of the sloppy CG's own precisions (Half and Fp32Fp64, below) and the precision traits.
// The "half" storage precision of the sloppy CG (solver.sloppy = "half"): 16-bit fixed point with a norm,
// in the style of QUDA's half precision. A tag type Half names it wherever a precision R names a field type
// (ParitySpinor<Half>, WilsonClover<Half>); the arithmetic is done in real_t<Half> = float. The half operator's
// clover term A^-1 is in 16-bit fixed point too, with a norm per 6x6 chiral block (kernels/clover_half.hpp); its links
// stay fp32. Links in 16-bit fixed point as QUDA's half stores them (round(32767 v), no norm; measured on an H200,
// BENCHMARKS.md 2026-12-02): with links of 12 the half solve 3% faster and the four half kernels from 87-94% to 66-69%
// of the peak in their own bytes (they move a third fewer bytes in 1-4% less time: at about 63% of the issue slots
// with fp32 links, they are held by their instructions as much as by memory); with links of 18 the solve 13% faster
// and the kernels at 75-80%. Not kept: it would take every half kernel below the 90% of the peak we hold them to.
//   A chiral half of a spinor (spins 2b, 2b+1: 12 reals) is stored as 12 int16 q_k with one float norm
//   m = max_k |v_k| (computed in fp32): v_k = q_k m / 32767. Every component keeps an absolute error of at most
//   m / 65534 (+ fp32 rounding): 2^-16 of the half's largest component, independent of the scale of the field.
//   24 int16 + 2 floats = 56 bytes per site against 96 in fp32. Why fixed point and not IEEE fp16 or bf16: the
//   CG's residual and direction fall by many orders of magnitude between reliable updates (and fp16's exponent covers
//   6e-8 .. 65504 only, so they would underflow without a global rescale), and one site holds components of very
//   different size only through the spin-colour structure: with a norm per chiral half, 15 bits of the largest
//   component are kept whatever the scale, against fp16's 11 and bf16's 8 bits of each component.
//   A norm per chiral half (not per site): the epilogues of the hopping kernels store one chiral half at a time
//   (kernels/wilson_clover.hpp), so each half is quantised on its own (and is a little more precise).
//   Non-finite values: a half with a component that is NaN or infinite gets a NaN norm and loads as NaN, so the CG's
//   checks of its sums see it.
// The "fp32/fp64" precision of the sloppy CG (solver.sloppy = "single_fp64"), tag Fp32Fp64: every field (spinors,
//   links in their format, clover) stored in fp32 as in the fp32 operator, every arithmetic in fp64 (the views widen
//   each float they load to double and round each double they store to float: kernels/views.hpp) but for unpacking
//   the links: a 12-real link's third row is computed in fp32, as the fp32 operator's, and the link kept in fp32 is
//   widened entry by entry where it multiplies (kernels/su3.hpp; fewer registers). The same bytes as
//   fp32; the rounding of the stencil's sums is fp64's, so the sloppy A p is the fp64 operator applied to fp32 fields
//   (src/physics/cg.hpp: what makes mixed precision lose iterations is fp32 arithmetic, not fp32 storage).
// Precision traits (PrecisionTraits<R>): real_t<R> the arithmetic type of a precision (R itself for float and
// double), store_t<R> the real in which its links and clover (and its spinors, but for Half's) are stored,
// clover_store_t<R> the type its clover term is stored as (store_t<R>; Half's A^-1 in 16 bits: Half, clover_half.hpp),
// spinor_bytes the bytes of one stored site, epsilon the relative rounding of the storage, name for logs,
// row_suffix for the metrics rows of its kernels,
// solution_t<R> the precision of a sloppy CG's partial solution.
// Who may call: kernels and host code alike.
#pragma once

#include <math.h>

#include <cfloat>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/spinor.hpp"

namespace emprism {

struct Half {};
struct Fp32Fp64 {};

template <typename R>
struct PrecisionTraits {
  using real = R;
  using store = R;
  using solution = R;
  static constexpr double spinor_bytes = 24.0 * sizeof(R);
  static constexpr double epsilon = sizeof(R) == 4 ? double(FLT_EPSILON) : double(DBL_EPSILON);
  static constexpr const char* name = sizeof(R) == 4 ? "fp32" : "fp64";
  static constexpr const char* row_suffix = "";  // of the metrics rows of its kernels
};
template <>
struct PrecisionTraits<Half> {
  using real = float;
  using store = float;  // of its links and clover
  using solution = float;
  static constexpr double spinor_bytes = 24.0 * 2 + 2 * 4;  // 24 int16, a float norm per chiral half
  static constexpr double epsilon = 1.0 / 32768;            // 2^-15: the step of the fixed point relative to the norm
  static constexpr const char* name = "half";
  static constexpr const char* row_suffix = "_half";  // the half operator's rows apart: "eo_clover_half"
};
template <>
struct PrecisionTraits<Fp32Fp64> {
  using real = double;
  using store = float;
  using solution = Fp32Fp64;  // the updates alpha p summed in fp64, stored in fp32 (as the fp32 CG's)
  static constexpr double spinor_bytes = 24.0 * 4;
  static constexpr double epsilon = double(FLT_EPSILON);
  static constexpr const char* name = "fp32/fp64";
  static constexpr const char* row_suffix = "_f32d";  // "eo_clover_f32d"
};
template <typename R>
using real_t = typename PrecisionTraits<R>::real;
template <typename R>
using store_t = typename PrecisionTraits<R>::store;
template <typename R>
using clover_store_t = std::conditional_t<std::is_same_v<R, Half>, Half, store_t<R>>;
// The precision of the partial solution of a sloppy CG on fields of R: R, and fp32 for Half (summing the updates
// alpha p into 16 bits would lose what the recursion gains between reliable updates), Fp32Fp64 for Fp32Fp64.
template <typename R>
using solution_t = typename PrecisionTraits<R>::solution;

// One chiral half in fixed point: component k = 3 * spin' + colour, re then im (24 bytes: 3 blocks of 8).
struct ChiralHalf16 {
  std::int16_t q[12];
};

constexpr float kHalfScale = 32767.0f;

// The fixed-point form of h; norm receives m = max |component| (NaN when a component is not finite).
// One instruction each on the GPUs (fabsf, fmaxf) where the selects they replaced took two or three: the same values
// (fmaxf skips a NaN as the select did; x * 0 is 0 for finite x, NaN for NaN and infinity, so one sum tells whether
// every component is finite). Rounding: to nearest, ties to even (round_to_int: one F2I on sm_90 where ties away from
// zero took three instructions; H200, 2026-12-02, BENCHMARKS.md: oe_clover_half with links of 12 89.9-90.1 ->
// 90.4-90.9% of the peak, 160 iterations on the unit-gauge problem against 161). Summing the half kernels' fused site
// norms in fp32 as well gave another point but 165 iterations instead of 160 on one source (2026-12-02): not kept.
EMPRISM_HD inline ChiralHalf16 quantize(const HalfSpinor<float>& h, float& norm) {
  float m = 0, probe = 0;
  EMPRISM_UNROLL
  for (int k = 0; k < 6; ++k) {
    const float re = h.h[k / 3].c[k % 3].re, im = h.h[k / 3].c[k % 3].im;
    probe += re * 0.0f + im * 0.0f;
    m = fmaxf(m, fmaxf(fabsf(re), fabsf(im)));
  }
  const bool finite = probe == 0.0f;  // false for NaN and infinity
  const float inv = finite && m > 0 ? kHalfScale / m : 0.0f;
  ChiralHalf16 out;
  EMPRISM_UNROLL
  for (int k = 0; k < 6; ++k) {
    // in [-32767, 32767]; 0 where the half is not finite (its NaN norm marks it; NaN * 0 must not reach the cast)
    const float re = finite ? h.h[k / 3].c[k % 3].re * inv : 0.0f;
    const float im = finite ? h.h[k / 3].c[k % 3].im * inv : 0.0f;
    out.q[2 * k] = static_cast<std::int16_t>(round_to_int(re));
    out.q[2 * k + 1] = static_cast<std::int16_t>(round_to_int(im));
  }
  norm = finite ? m : std::numeric_limits<float>::quiet_NaN();
  return out;
}

// The N int16 of a stored element (N even) as floats, exactly: each pair read as the 32-bit word it lies in (the first
// in the low half: little endian, as every backend's machine), each int16 sign-extended to 32 bits by shifts and
// converted from int32. The same values as converting each int16 directly. On sm_90 nvcc then converts the high int16
// of each word with I2FP.F32.S32 and the low one, whose sign extension it recognises, with I2F.S16, where it converted
// every int16 with I2F.S16 (cuobjdump of the half kernels: 30456 I2F.S16 -> 15228 of each). The half operator's
// kernels convert about 360 int16 per site; split over the two instructions (H200, 2026-11-29, BENCHMARKS.md) with
// links of 12 oe_clover_half went from 83.5 to 86.2-86.9% of the peak and the other three gained up to a point, with
// links of 18 oe_clover_half gained 0.6 and the other three lost 0.7-1.8 (to 93.5-94.6%). Every int16 through I2FP
// lost instead: both shifted to the top of the word, times 2^-16, 5-8 points; the low one sign-extended by PTX prmt
// (selector 0x9910; 30456 I2FP, no I2F.S16, no multiply), 0.6-3.9 points (oe_clover_half with links of 12
// 86.4-86.7 -> 82.8-82.9%).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "int16_to_float reads int16 pairs as little-endian words");
template <int N>
EMPRISM_HD inline void int16_to_float(const std::int16_t (&q)[N], float (&v)[N]) {
  static_assert(N % 2 == 0, "int16 in pairs");
  std::uint32_t w[N / 2];
  __builtin_memcpy(w, q, sizeof(w));
  EMPRISM_UNROLL
  for (int k = 0; k < N / 2; ++k) {
    v[2 * k] = static_cast<float>(static_cast<std::int32_t>(w[k] << 16) >> 16);
    v[2 * k + 1] = static_cast<float>(static_cast<std::int32_t>(w[k]) >> 16);
  }
}

EMPRISM_HD inline HalfSpinor<float> dequantize(const ChiralHalf16& q, float norm) {
  const float s = norm * (1.0f / kHalfScale);
  float v[12];
  int16_to_float(q.q, v);
  HalfSpinor<float> h;
  EMPRISM_UNROLL
  for (int k = 0; k < 6; ++k) h.h[k / 3].c[k % 3] = {s * v[2 * k], s * v[2 * k + 1]};
  return h;
}

}  // namespace emprism
