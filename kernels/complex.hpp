// complex.hpp: a minimal trivially-copyable complex type usable in host and device code
// (std::complex is not device code). Layout {re, im}, the same as the h5py compound {r, i}.
// Who may call: kernels and host code alike.
#pragma once

#include "kernels/backend/defs.hpp"

namespace emprism {

template <typename R>
struct Complex {
  R re, im;
};

template <typename R>
EMPRISM_HD inline Complex<R> make_complex(R re, R im) {
  return Complex<R>{re, im};
}
template <typename R>
EMPRISM_HD inline Complex<R> operator+(Complex<R> a, Complex<R> b) {
  return {a.re + b.re, a.im + b.im};
}
template <typename R>
EMPRISM_HD inline Complex<R> operator-(Complex<R> a, Complex<R> b) {
  return {a.re - b.re, a.im - b.im};
}
template <typename R>
EMPRISM_HD inline Complex<R> operator-(Complex<R> a) {
  return {-a.re, -a.im};
}
template <typename R>
EMPRISM_HD inline Complex<R> operator*(Complex<R> a, Complex<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <typename R>
EMPRISM_HD inline Complex<R> operator*(R s, Complex<R> a) {
  return {s * a.re, s * a.im};
}
template <typename R>
EMPRISM_HD inline Complex<R>& operator+=(Complex<R>& a, Complex<R> b) {
  a.re += b.re;
  a.im += b.im;
  return a;
}
template <typename R>
EMPRISM_HD inline Complex<R>& operator-=(Complex<R>& a, Complex<R> b) {
  a.re -= b.re;
  a.im -= b.im;
  return a;
}
template <typename R>
EMPRISM_HD inline Complex<R> conj(Complex<R> a) {
  return {a.re, -a.im};
}
// conj(a) * b
template <typename R>
EMPRISM_HD inline Complex<R> conj_mul(Complex<R> a, Complex<R> b) {
  return {a.re * b.re + a.im * b.im, a.re * b.im - a.im * b.re};
}
// acc + a b and acc + conj(a) b, each part a chain of two multiply-adds on acc, which compilers that contract (nvcc,
// hipcc) turn into fused multiply-adds; the same as acc plus the product up to rounding.
template <typename R>
EMPRISM_HD inline Complex<R> mul_add(Complex<R> a, Complex<R> b, Complex<R> acc) {
  acc.re = acc.re + a.re * b.re;
  acc.re = acc.re + (-a.im) * b.im;
  acc.im = acc.im + a.re * b.im;
  acc.im = acc.im + a.im * b.re;
  return acc;
}
template <typename R>
EMPRISM_HD inline Complex<R> conj_mul_add(Complex<R> a, Complex<R> b, Complex<R> acc) {
  acc.re = acc.re + a.re * b.re;
  acc.re = acc.re + a.im * b.im;
  acc.im = acc.im + a.re * b.im;
  acc.im = acc.im + (-a.im) * b.re;
  return acc;
}
// acc + a b (Conj: acc + conj(a) b): where Chained, each part a chain of two multiply-adds on acc (mul_add,
// conj_mul_add), else acc plus the product, whose last addition compilers cannot fuse (three instructions per part
// instead of two); the same up to rounding. The clover blocks' products take it (kernels/clover_block.hpp,
// clover_half.hpp, clover_dynamic.hpp): as chains on an H200 (2026-12-02, BENCHMARKS.md) oe_clover_half with links of
// 12 went from 90.2 to 92.5% of the peak, fp32's eo_clover with links of 8 (the in-kernel LDL^dag) from 89.1 to 89.7%.
template <bool Conj, bool Chained, typename R>
EMPRISM_HD inline Complex<R> add_product(Complex<R> acc, Complex<R> a, Complex<R> b) {
  if constexpr (Chained && Conj)
    return conj_mul_add(a, b, acc);
  else if constexpr (Chained)
    return mul_add(a, b, acc);
  else if constexpr (Conj)
    return acc + conj_mul(a, b);
  else
    return acc + a * b;
}
// i * a
template <typename R>
EMPRISM_HD inline Complex<R> times_i(Complex<R> a) {
  return {-a.im, a.re};
}
template <typename R>
EMPRISM_HD inline R norm2(Complex<R> a) {
  return a.re * a.re + a.im * a.im;
}

}  // namespace emprism
