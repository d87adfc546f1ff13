// blas.hpp: per-site BLAS-1 functors on spinor fields of one parity. Reductions return Sums<N> in double
// whatever the field precision (the backend adds them in a fixed order, so results are reproducible).
// Aliasing: y may alias x only where noted. Who may call: the backends through kernels/launch.hpp.
#pragma once

#include "kernels/views.hpp"

namespace emprism {

template <int N>
struct Sums {
  double v[N];
};

template <typename R>
EMPRISM_HD inline double site_norm2(const Spinor<R>& a) {
  double n = 0;
  for (int s = 0; s < 4; ++s)
    for (int c = 0; c < 3; ++c) n += double(a.s[s].c[c].re) * a.s[s].c[c].re + double(a.s[s].c[c].im) * a.s[s].c[c].im;
  return n;
}

// n + |h|^2 of a half spinor, summed as site_norm2 sums: the two chiral halves of a spinor in turn give its bits.
template <typename R>
EMPRISM_HD inline double add_norm2(double n, const HalfSpinor<R>& h) {
  for (int s = 0; s < 2; ++s)
    for (int c = 0; c < 3; ++c) n += double(h.h[s].c[c].re) * h.h[s].c[c].re + double(h.h[s].c[c].im) * h.h[s].c[c].im;
  return n;
}

// <a, b> = sum conj(a) b, in double.
template <typename R>
EMPRISM_HD inline Sums<2> site_dot(const Spinor<R>& a, const Spinor<R>& b) {
  Sums<2> d{{0, 0}};
  for (int s = 0; s < 4; ++s)
    for (int c = 0; c < 3; ++c) {
      const Complex<R> x = a.s[s].c[c], y = b.s[s].c[c];
      d.v[0] += double(x.re) * y.re + double(x.im) * y.im;
      d.v[1] += double(x.re) * y.im - double(x.im) * y.re;
    }
  return d;
}

template <typename R>
struct ZeroFunctor {
  SpinorView<R> y;
  EMPRISM_HD void operator()(int i) const { y.store(i, zero_spinor<real_t<R>>()); }
};

// y = x, with precision conversion (Rin may differ from Rout).
template <typename Rout, typename Rin>
struct ConvertFunctor {
  SpinorView<Rout> y;
  SpinorView<Rin> x;
  EMPRISM_HD void operator()(int i) const {
    using To = real_t<Rout>;
    const Spinor<real_t<Rin>> a = x.load(i);
    Spinor<To> b;
    for (int s = 0; s < 4; ++s)
      for (int c = 0; c < 3; ++c) b.s[s].c[c] = {To(a.s[s].c[c].re), To(a.s[s].c[c].im)};
    y.store(i, b);
  }
};

// y = a x + b y (y may alias x).
template <typename R>
struct AxpbyFunctor {
  SpinorView<R> x, y;
  real_t<R> a, b;
  EMPRISM_HD void operator()(int i) const { y.store(i, a * x.load(i) + b * y.load(i)); }
};

// y = a x + b y with a complex (y may alias x): CG's direction rebuilt after a reliable update.
template <typename R>
struct CaxpbyFunctor {
  SpinorView<R> x, y;
  Complex<real_t<R>> a;
  real_t<R> b;
  EMPRISM_HD void operator()(int i) const {
    const Spinor<real_t<R>> xs = x.load(i);
    Spinor<real_t<R>> ys = b * y.load(i);
    for (int s = 0; s < 4; ++s)
      for (int c = 0; c < 3; ++c) ys.s[s].c[c] += a * xs.s[s].c[c];
    y.store(i, ys);
  }
};

// y += a x, x's reals converted to y's type T first (exact when T is the wider one).
template <typename T, typename X>
EMPRISM_HD inline void add_scaled(Spinor<T>& y, T a, const Spinor<X>& x) {
  for (int s = 0; s < 4; ++s)
    for (int c = 0; c < 3; ++c) {
      y.s[s].c[c].re += a * T(x.s[s].c[c].re);
      y.s[s].c[c].im += a * T(x.s[s].c[c].im);
    }
}

// y += a x, with x of precision Rx (mixed-precision correction updates).
template <typename R, typename Rx>
struct AxpyFunctor {
  using T = real_t<R>;
  SpinorView<Rx> x;
  SpinorView<R> y;
  T a;
  EMPRISM_HD void operator()(int i) const {
    const Spinor<real_t<Rx>> xs = x.load(i);
    Spinor<T> ys = y.load(i);
    add_scaled(ys, a, xs);
    y.store(i, ys);
  }
};

template <typename R>
struct Norm2Functor {
  SpinorView<R> x;
  EMPRISM_HD Sums<1> operator()(int i) const { return Sums<1>{{site_norm2(x.load(i))}}; }
};

// Sum of per-site values written by a kernel's epilogue (e.g. |v|^2 of oe_clover): the same reduction order as
// a norm computed from the field, from 8 bytes per site instead of the whole spinor.
struct SiteSumFunctor {
  const double* v;
  EMPRISM_HD Sums<1> operator()(int i) const { return Sums<1>{{v[i]}}; }
};

template <typename R>
struct DotFunctor {
  SpinorView<R> x, y;
  EMPRISM_HD Sums<2> operator()(int i) const { return site_dot(x.load(i), y.load(i)); }
};

// r = b - r (in place), returns |r|^2 (residual from b and M x held in r).
template <typename R>
struct ResidualFunctor {
  SpinorView<R> b, r;
  EMPRISM_HD Sums<1> operator()(int i) const {
    const Spinor<real_t<R>> v = b.load(i) - r.load(i);
    r.store(i, v);
    return Sums<1>{{site_norm2(v)}};
  }
};

// The CG's residual update: r -= alpha w; returns |r|^2 (of r before it is stored). (The solution's update x += alpha p
// is a separate launch, AxpyFunctor or on one rank CgDirectionFunctor, which the device runs while the host waits for
// this sum: physics/blas.hpp.)
template <typename R>
struct CgUpdateFunctor {
  SpinorView<R> r, w;
  real_t<R> alpha;
  EMPRISM_HD Sums<1> operator()(int i) const {
    const Spinor<real_t<R>> rn = r.load(i) - alpha * w.load(i);
    r.store(i, rn);
    return Sums<1>{{site_norm2(rn)}};
  }
};

// The CG's solution and direction updates in one pass, on one rank (physics/blas.hpp cg_update_direction):
// x += alpha p (as AxpyFunctor), then p_next = a r + beta p (as AxpbyFunctor, a = 1) with beta = *rr / rr_old, where
// *rr is |r|^2 of the residual update just before, read where the device finished its sum (so the launch need not wait
// for the host). p_next must not alias p, r or x.
template <typename R>
struct CgDirectionFunctor {
  using T = real_t<solution_t<R>>;
  SpinorView<R> p, r, p_next;
  SpinorView<solution_t<R>> x;
  T alpha;
  real_t<R> a;  // 1 (a runtime value, as AxpbyFunctor's, so both round alike)
  double rr_old;
  const double* rr;
  EMPRISM_HD void operator()(int i) const {
    const Spinor<real_t<R>> ps = p.load(i);
    Spinor<T> xs = x.load(i);
    add_scaled(xs, alpha, ps);
    x.store(i, xs);
    const real_t<R> beta = real_t<R>(*rr / rr_old);
    p_next.store(i, a * r.load(i) + beta * ps);
  }
};

}  // namespace emprism
