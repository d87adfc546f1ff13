// su3.hpp: colour vectors and 3x3 complex matrices (gauge links) with the products the stencil needs.
// Convention: U.e[row][col]; a link U_mu(x) maps colour vectors at x+mu to x (docs/conventions.md section 2).
// U v and U^dag v take the link in its own precision L and compute in the vector's R, widening each entry where it
// multiplies: the fp32/fp64 operator keeps its fp32 links in fp32 (kernels/views.hpp), 18 registers where an
// SU3<double> takes 36. Each entry of their result is a sum of three products (sum3), summed as one chain of
// multiply-adds except on AMD GPUs (kChainedProducts, kernels/backend/defs.hpp) and in mul<false>.
// Who may call: kernels and host code alike.
#pragma once

#include "kernels/complex.hpp"

namespace emprism {

template <typename R>
struct ColorVec {
  Complex<R> c[3];
};

template <typename R>
struct SU3 {
  Complex<R> e[3][3];
};

template <typename R>
EMPRISM_HD inline ColorVec<R> zero_color() {
  ColorVec<R> v;
  for (int a = 0; a < 3; ++a) v.c[a] = {R(0), R(0)};
  return v;
}

template <typename R>
EMPRISM_HD inline ColorVec<R> operator+(const ColorVec<R>& a, const ColorVec<R>& b) {
  ColorVec<R> r;
  for (int i = 0; i < 3; ++i) r.c[i] = a.c[i] + b.c[i];
  return r;
}
template <typename R>
EMPRISM_HD inline ColorVec<R> operator-(const ColorVec<R>& a, const ColorVec<R>& b) {
  ColorVec<R> r;
  for (int i = 0; i < 3; ++i) r.c[i] = a.c[i] - b.c[i];
  return r;
}
template <typename R>
EMPRISM_HD inline ColorVec<R> operator*(Complex<R> s, const ColorVec<R>& a) {
  ColorVec<R> r;
  for (int i = 0; i < 3; ++i) r.c[i] = s * a.c[i];
  return r;
}
template <typename R>
EMPRISM_HD inline ColorVec<R> times_i(const ColorVec<R>& a) {
  ColorVec<R> r;
  for (int i = 0; i < 3; ++i) r.c[i] = times_i(a.c[i]);
  return r;
}
template <typename R>
EMPRISM_HD inline ColorVec<R> operator-(const ColorVec<R>& a) {
  ColorVec<R> r;
  for (int i = 0; i < 3; ++i) r.c[i] = -a.c[i];
  return r;
}

// z in R (exact when R is the wider type).
template <typename R, typename L>
EMPRISM_HD inline Complex<R> widen(Complex<L> z) {
  return {R(z.re), R(z.im)};
}

// a0 b0 + a1 b1 + a2 b2 (Conj: conj(a0) b0 + ...) in R, each a widened to R where it multiplies: as one chain of
// multiply-adds (kernels/complex.hpp's mul_add) where Chained, else as the sum of the three products; the same up to
// rounding.
template <bool Conj, bool Chained, typename L, typename R>
EMPRISM_HD inline Complex<R> sum3(Complex<L> a0, Complex<R> b0, Complex<L> a1, Complex<R> b1, Complex<L> a2,
                                  Complex<R> b2) {
  if constexpr (Chained && Conj) {
    return conj_mul_add(widen<R>(a2), b2, conj_mul_add(widen<R>(a1), b1, conj_mul(widen<R>(a0), b0)));
  } else if constexpr (Chained) {
    return mul_add(widen<R>(a2), b2, mul_add(widen<R>(a1), b1, widen<R>(a0) * b0));
  } else if constexpr (Conj) {
    return conj_mul(widen<R>(a0), b0) + conj_mul(widen<R>(a1), b1) + conj_mul(widen<R>(a2), b2);
  } else {
    return widen<R>(a0) * b0 + widen<R>(a1) * b1 + widen<R>(a2) * b2;
  }
}

// U v (U in L, v in R: the arithmetic in R); mul<false> sums as separate products where chains cost registers.
template <bool Chained = kChainedProducts, typename L, typename R>
EMPRISM_HD inline ColorVec<R> mul(const SU3<L>& u, const ColorVec<R>& v) {
  ColorVec<R> r;
  for (int i = 0; i < 3; ++i) r.c[i] = sum3<false, Chained>(u.e[i][0], v.c[0], u.e[i][1], v.c[1], u.e[i][2], v.c[2]);
  return r;
}
template <typename L, typename R>
EMPRISM_HD inline ColorVec<R> operator*(const SU3<L>& u, const ColorVec<R>& v) {
  return mul(u, v);
}
// U^dag v (U in L, v in R: the arithmetic in R)
template <typename L, typename R>
EMPRISM_HD inline ColorVec<R> adj_mul(const SU3<L>& u, const ColorVec<R>& v) {
  ColorVec<R> r;
  for (int i = 0; i < 3; ++i)
    r.c[i] = sum3<true, kChainedProducts>(u.e[0][i], v.c[0], u.e[1][i], v.c[1], u.e[2][i], v.c[2]);
  return r;
}

template <typename R>
EMPRISM_HD inline SU3<R> operator*(const SU3<R>& a, const SU3<R>& b) {
  SU3<R> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = a.e[i][0] * b.e[0][j] + a.e[i][1] * b.e[1][j] + a.e[i][2] * b.e[2][j];
  return r;
}
template <typename R>
EMPRISM_HD inline SU3<R> operator+(const SU3<R>& a, const SU3<R>& b) {
  SU3<R> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = a.e[i][j] + b.e[i][j];
  return r;
}
template <typename R>
EMPRISM_HD inline SU3<R> operator-(const SU3<R>& a, const SU3<R>& b) {
  SU3<R> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = a.e[i][j] - b.e[i][j];
  return r;
}
template <typename R>
EMPRISM_HD inline SU3<R> dagger(const SU3<R>& a) {
  SU3<R> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = conj(a.e[j][i]);
  return r;
}
template <typename R>
EMPRISM_HD inline SU3<R> identity_su3() {
  SU3<R> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = {R(i == j), R(0)};
  return r;
}
template <typename R>
EMPRISM_HD inline Complex<R> trace(const SU3<R>& a) {
  return a.e[0][0] + a.e[1][1] + a.e[2][2];
}

}  // namespace emprism
