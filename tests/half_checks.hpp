// half_checks.hpp: the checks of the half storage (kernels/half.hpp, solver.sloppy = "half") shared by the CPU tests
// (test_half.cpp) and the GPU tests (gpu/test_gpu_half.cpp): every conversion and kernel runs through the launchers,
// so on a GPU build the device code is checked. Each function measures; the tests assert.
// The bounds, derived from the format: a component is rounded to the nearest step of m / 32767 (m: the largest
// |component| of its chiral half), so its error is at most 0.5 m / 32767 plus the fp32 rounding of the scaling (a few
// 2^-24 m): kComponentBound, below 2^-15 of m and so of the site's largest component. Over a chiral half of 12
// reals the 2-norm of the error is at most sqrt(12) times that, and m <= the half's 2-norm: a field stored in half
// differs from its fp32 value by at most sqrt(12) kComponentBound relative (kFieldBound).
// Who may call: tests only.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "operator_fixture.hpp"
#include "src/physics/cg.hpp"

namespace emprism::test::half {

constexpr double kComponentBound = 0.5 / 32767 + 4.0 / (1 << 24);
const double kFieldBound = std::sqrt(12.0) * kComponentBound;
// The fp32 arithmetic of the half and the fp32 operator is the same code on the same values; what rounding the
// compilers' contractions may still add.
constexpr double kArithmetic = 16.0 / (1 << 23);

// A random field whose sites span 40 orders of magnitude (10^-20 .. 10^20), like the CG's fields across a solve.
inline std::vector<Cd> wide_range_spinor(const Extents& lat, unsigned seed) {
  std::vector<Cd> v = ref::random_spinor(lat, seed);
  for (std::size_t s = 0; s < v.size() / 12; ++s) {
    const double scale = std::pow(10.0, static_cast<double>((s * 7919) % 41) - 20);
    for (int k = 0; k < 12; ++k) v[s * 12 + k] *= scale;
  }
  return v;
}

// fp32 -> half -> fp32 on the odd sites: the largest |error| of a component over its site's largest |component|.
inline double worst_round_trip(OperatorSetup<double>& s, unsigned seed) {
  const SpinorField<double> f = s.field(wide_range_spinor(s.geom.local(), seed));
  ParitySpinor<float> in(s.geom), back(s.geom);
  ParitySpinor<Half> h(s.geom);
  blas::convert(s.ctx, in, f.odd);
  blas::convert(s.ctx, h, in);
  blas::convert(s.ctx, back, h);
  const std::vector<Spinor<float>> a = in.download(), b = back.download();
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    double m = 0, e = 0;
    for (int sp = 0; sp < 4; ++sp)
      for (int c = 0; c < 3; ++c) {
        const Complex<float> x = a[i].s[sp].c[c], y = b[i].s[sp].c[c];
        m = std::max({m, std::fabs(double(x.re)), std::fabs(double(x.im))});
        e = std::max({e, std::fabs(double(x.re) - y.re), std::fabs(double(x.im) - y.im)});
      }
    if (m > 0) worst = std::max(worst, e / m);
  }
  return worst;
}

// |a - b| / |a| of two fp32 fields.
inline double field_rel_diff(const ParitySpinor<float>& a, const ParitySpinor<float>& b) {
  const std::vector<Spinor<float>> x = a.download(), y = b.download();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (int sp = 0; sp < 4; ++sp)
      for (int c = 0; c < 3; ++c) {
        const Complex<float> u = x[i].s[sp].c[c], v = y[i].s[sp].c[c];
        num += std::pow(double(u.re) - v.re, 2) + std::pow(double(u.im) - v.im, 2);
        den += double(u.re) * u.re + double(u.im) * u.im;
      }
  return std::sqrt(num / den);
}

// The hot kernels of the half operator against the fp32 operator (both rounded from the same fp64 one) on the same
// input values (fields rounded to half first): each output differs only by its own rounding to half.
struct KernelDiffs {
  double eo = 0, eo_dag = 0, oe = 0, oe_out2 = 0, oe_dag = 0;
};
inline KernelDiffs kernel_diffs(OperatorSetup<double>& s, unsigned seed) {
  WilsonClover<float> f(s.ctx, *s.op);
  WilsonClover<Half> h(s.ctx, *s.op);
  const SpinorField<double> src = s.field(ref::random_spinor(s.geom.local(), seed));
  ParitySpinor<Half> te_h(s.geom), xo_h(s.geom), out_h(s.geom), out2_h(s.geom);
  ParitySpinor<float> te_f(s.geom), xo_f(s.geom), out_f(s.geom), out2_f(s.geom), got(s.geom), got2(s.geom);
  blas::convert(s.ctx, te_h, src.even);
  blas::convert(s.ctx, xo_h, src.odd);
  blas::convert(s.ctx, te_f, te_h);
  blas::convert(s.ctx, xo_f, xo_h);
  KernelDiffs d;
  auto diff = [&](const ParitySpinor<float>& want, const ParitySpinor<Half>& have, ParitySpinor<float>& tmp) {
    blas::convert(s.ctx, tmp, have);
    return field_rel_diff(want, tmp);
  };
  for (const bool dag : {false, true}) {
    f.eo_clover(out_f, xo_f, dag);
    h.eo_clover(out_h, xo_h, dag);
    (dag ? d.eo_dag : d.eo) = diff(out_f, out_h, got);
  }
  f.oe_clover(out_f, out2_f, te_f, xo_f);
  h.oe_clover(out_h, out2_h, te_h, xo_h);
  d.oe = diff(out_f, out_h, got);
  d.oe_out2 = diff(out2_f, out2_h, got2);
  f.oe_clover_dag(out_f, te_f, xo_f);
  h.oe_clover_dag(out_h, te_h, xo_h);
  d.oe_dag = diff(out_f, out_h, got);
  return d;
}

// One source solved by mixed precision with the sloppy fields in fp32, and with them in half.
struct HalfSolve {
  CgResult s, h;
  double reference_residual = 0;  // |b - M x_half| / |b| by the reference operator
};
inline HalfSolve solve_single_and_half(const Extents& lat, const std::vector<Cd>& links, double kappa, double csw,
                                       const std::array<double, 4>& theta, double tol, unsigned seed) {
  OperatorSetup<double> s(lat, links, kappa, csw, theta, {}, 18);
  WilsonClover<float> single(s.ctx, *s.op);
  WilsonClover<Half> inner(s.ctx, *s.op);
  const std::vector<Cd> b_nat = ref::random_spinor(lat, seed);
  const SpinorField<double> b = s.field(b_nat);
  SpinorField<double> x(s.geom);
  CgParams p;
  p.tol = tol;
  p.max_iter = 5000;
  HalfSolve out;
  out.s = solve_eo_cg(*s.op, single, b, x, p);
  out.h = solve_eo_cg(*s.op, inner, b, x, p);
  out.reference_residual = rel_diff(ref::apply_wilson_clover(lat, links, kappa, csw, theta, s.natural(x)), b_nat);
  return out;
}

}  // namespace emprism::test::half
