// link_format.hpp: the storage formats of the operator's links ("reconstruct", the dirac.reconstruct key), each an
// element of Rc reals per link that kernels/views.hpp's GaugeView<R, Rc> stores and unpacks to a full SU3<R> on
// load, so the per-site math never sees the format:
//   18  all 9 complex entries (SU3<R> itself)
//   12  rows 0 and 1 (v[0..11] = re, im of U00 U01 U02 U10 U11 U12); row 2 = conj(row 0 x row 1)
//   8   QUDA's 8-real parametrisation (arXiv:0911.3191), applied like QUDA's to V = {row 1, row 0, -row 2} (det V =
//       det U = 1; its singular point |V00| = |U10| = 1 is far from the unit field, which the plain form divides by
//       zero on), with each phase stored as the tangent of its half angle instead of the angle (no sine or cosine on
//       load, below): v = (tan(arg V00 / 2), tan(arg V20 / 2), V01, V02, V10), re before im; on load |V00| and |V20|
//       follow from the unit norm of row 0 and column 0, V11 V12 from the cofactor identity conj(V) = cof(V) and the
//       orthogonality of the rows (divided by N = |V01|^2 + |V02|^2 = 1 - |V00|^2), V21 V22 from row 2 = conj(row 0 x
//       row 1) as for 12 (8 to 13 fewer instructions per link than the cofactor formula; H200, 2026-11-28: fp32 kernels
//       up to +4 points of the peak, fp64 within 1 point).
// 12 and 8 hold for U in SU(3) only (unitary, det 1): the set-up checks the links first (src/physics/clover_device).
// Boundary phases are not folded into the links (kernels/wilson_clover.hpp multiplies the hop after the link), so
// every format carries the links of any theta unchanged.
// Packing (pack_link) runs in the precision of its argument; the set-up packs the double links and rounds the Rc
// reals to R (round_link), so a field of R and one rounded from another precision's packed field are the same bits.
// Who may call: kernels and host code alike.
#pragma once

#include <math.h>

#include <type_traits>

#include "kernels/su3.hpp"

namespace emprism {

template <typename R, int Rc>
struct PackedLink {
  static_assert(Rc == 12 || Rc == 8, "packed links hold 12 or 8 reals");
  R v[Rc];
};

// The element a GaugeView<R, Rc> stores per link.
template <typename R, int Rc>
using LinkElement = std::conditional_t<Rc == 18, SU3<R>, PackedLink<R, Rc>>;

// sqrt(x) (0 for x <= 1e-36) and 1 / x of an 8-real link's unpacking: in fp32 the GPUs' fast forms (fast_sqrt,
// fast_rcp in kernels/backend/defs.hpp: the special function units' approximations, within 2 ulp, instead of IEEE
// rounding; the IEEE forms' extra instructions and slow paths weighed on the fp32 kernels of links of 8 reals), in
// fp64 refined_sqrt and refined_rcp (the same file: on NVIDIA GPUs the hardware's fp64 approximations refined by
// Newton steps to about 1 ulp, without the slow paths; elsewhere sqrt and division).
EMPRISM_HD inline float link_sqrt(float x) { return fast_sqrt(x); }
EMPRISM_HD inline double link_sqrt(double x) { return refined_sqrt(x); }
EMPRISM_HD inline float link_rcp(float x) { return fast_rcp(x); }
EMPRISM_HD inline double link_rcp(double x) { return refined_rcp(x); }
// The phase of z in one real (kLinkHalfTanMax: below): t = tan(arg(z) / 2), taken as Im z / (|z| + Re z), or as
// (|z| - Re z) / Im z where Re z < 0 (neither cancels), within +-kLinkHalfTanMax (arg z = +-pi: Im z = +-0); 0 for
// z = 0 (a magnitude 0 makes any phase right).
inline constexpr double kLinkHalfTanMax = 1152921504606846976.0;  // 2^60
template <typename R>
EMPRISM_HD inline R link_half_tan(Complex<R> z) {
  const R r = sqrt(norm2(z));
  if (z.re >= R(0)) return r > R(0) ? z.im / (r + z.re) : R(0);
  const R t = (r - z.re) / z.im;
  return t > R(kLinkHalfTanMax) ? R(kLinkHalfTanMax) : t < R(-kLinkHalfTanMax) ? R(-kLinkHalfTanMax) : t;
}
// exp(i a) from t = tan(a / 2): ((1 - t^2), 2 t) / (1 + t^2), rational in t: a reciprocal (link_rcp) and a few
// multiply-adds where sin and cos (or sincospi) cost tens of instructions each in fp64 and the fp32 fast intrinsic is
// off by 2^-21 (both formerly here). Relative rounding of a few ulps in both precisions over every t; |t| <= 2^60
// keeps 1 + t^2 within the range of fp32's fast reciprocal (2^126), the phase then within 2^-59 of -1.
template <typename R>
EMPRISM_HD inline Complex<R> link_phase(R t) {
  const R t2 = t * t;
  const R r = link_rcp(R(1) + t2);
  return {(R(1) - t2) * r, R(2) * t * r};
}

// conj(a1 b2 - a2 b1): one entry of conj(a x b), as chains of multiply-adds (kernels/complex.hpp's mul_add) on every
// backend: on gfx90a the plain difference of products (tried 2026-11-28) gives HaloPack with links of 12 back a wave
// (fp64 5 -> 6, fp32/fp64 6 -> 7), but fp32 exterior kernels with links of 12 lose one (7 -> 6, 6 -> 5)
template <typename R>
EMPRISM_HD inline Complex<R> cross_conj(Complex<R> a1, Complex<R> b2, Complex<R> a2, Complex<R> b1) {
  return conj(mul_add(a1, b2, -(a2 * b1)));
}

template <int Rc, typename R>
EMPRISM_HD inline LinkElement<R, Rc> pack_link(const SU3<R>& u) {
  if constexpr (Rc == 18) {
    return u;
  } else if constexpr (Rc == 12) {
    PackedLink<R, 12> p;
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c) {
        p.v[6 * r + 2 * c] = u.e[r][c].re;
        p.v[6 * r + 2 * c + 1] = u.e[r][c].im;
      }
    return p;
  } else {
    PackedLink<R, 8> p;  // V = {row 1, row 0, -row 2}
    p.v[0] = link_half_tan(u.e[1][0]);
    p.v[1] = link_half_tan(-u.e[2][0]);
    const Complex<R> s[3] = {u.e[1][1], u.e[1][2], u.e[0][0]};  // V01, V02, V10
    for (int k = 0; k < 3; ++k) {
      p.v[2 + 2 * k] = s[k].re;
      p.v[3 + 2 * k] = s[k].im;
    }
    return p;
  }
}

template <typename R>
EMPRISM_HD inline SU3<R> unpack_link(const SU3<R>& u) {
  return u;
}

template <typename R>
EMPRISM_HD inline SU3<R> unpack_link(const PackedLink<R, 12>& p) {
  SU3<R> u;
  EMPRISM_UNROLL
  for (int r = 0; r < 2; ++r) EMPRISM_UNROLL
  for (int c = 0; c < 3; ++c) u.e[r][c] = {p.v[6 * r + 2 * c], p.v[6 * r + 2 * c + 1]};
  u.e[2][0] = cross_conj(u.e[0][1], u.e[1][2], u.e[0][2], u.e[1][1]);
  u.e[2][1] = cross_conj(u.e[0][2], u.e[1][0], u.e[0][0], u.e[1][2]);
  u.e[2][2] = cross_conj(u.e[0][0], u.e[1][1], u.e[0][1], u.e[1][0]);
  return u;
}

template <typename R>
EMPRISM_HD inline SU3<R> unpack_link(const PackedLink<R, 8>& p) {
  const Complex<R> v01{p.v[2], p.v[3]}, v02{p.v[4], p.v[5]}, v10{p.v[6], p.v[7]};
  const R n = norm2(v01) + norm2(v02);  // 1 - |V00|^2
  const R m00 = link_sqrt(R(1) - n);
  const Complex<R> v00 = m00 * link_phase(p.v[0]);
  const R c = R(1) - m00 * m00 - norm2(v10);  // |V20|^2
  const Complex<R> v20 = link_sqrt(c) * link_phase(p.v[1]);
  const R inv_n = link_rcp(n);
  const Complex<R> a = conj_mul(v00, v10);  // conj(V00) V10
  SU3<R> u;                                 // U = {V row 1, V row 0, -V row 2}
  u.e[1][0] = v00;
  u.e[1][1] = v01;
  u.e[1][2] = v02;
  u.e[0][0] = v10;
  u.e[0][1] = -inv_n * (conj(v02 * v20) + a * v01);  // V11
  u.e[0][2] = inv_n * (conj(v01 * v20) - a * v02);   // V12
  u.e[2][0] = -v20;
  // -V21 and -V22 from row 2 of V = conj(row 0 x row 1), as for links of 12
  u.e[2][1] = -cross_conj(v02, v10, v00, u.e[0][2]);
  u.e[2][2] = -cross_conj(v00, u.e[0][1], v01, v10);
  return u;
}

// A packed link of precision Ro rounded to R, real by real.
template <typename R, typename Ro>
EMPRISM_HD inline SU3<R> round_link(const SU3<Ro>& u) {
  SU3<R> r;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) r.e[a][b] = {R(u.e[a][b].re), R(u.e[a][b].im)};
  return r;
}
template <typename R, typename Ro, int Rc>
EMPRISM_HD inline PackedLink<R, Rc> round_link(const PackedLink<Ro, Rc>& p) {
  PackedLink<R, Rc> r;
  for (int k = 0; k < Rc; ++k) r.v[k] = R(p.v[k]);
  return r;
}

}  // namespace emprism
