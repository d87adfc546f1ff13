// half_checks.hpp: the checks of the half storage (kernels/half.hpp, solver.sloppy = "half") shared by the CPU tests
// (test_half.cpp) and the GPU tests (gpu/test_gpu_half.cpp): every conversion and kernel runs through the launchers,
// so on a GPU build the device code is checked. Each function measures; the tests assert.
// The bounds, derived from the format: a component is rounded to the nearest step of m / 32767 (m: the largest
// |component| of its chiral half), so its error is at most 0.5 m / 32767 plus the fp32 rounding of the scaling (a few
// 2^-24 m): kComponentBound, below 2^-15 of m and so of the site's largest component. Over a chiral half of 12
// reals the 2-norm of the error is at most sqrt(12) times that, and m <= the half's 2-norm: a field stored in half
// differs from its fp32 value by at most sqrt(12) kComponentBound relative (kFieldBound).
// The half operator's A^-1 (kernels/clover_half.hpp) rounds each entry of a 6x6 block to the nearest step of m / 32767
// (m: the block's largest |entry|): an error of at most e = kComponentBound m per real. Over the 6 real diagonal and 30
// complex off-diagonal entries that is a Frobenius norm of at most sqrt(66) e, and |x| = |A (A^-1 x)| <= |A|_F |A^-1
// x|, so A^-1 in 16 bits applied to any x errs by at most eps_C = sqrt(66) kComponentBound max(m(A^-1) |A|_F) relative,
// the max over the blocks (CloverBounds, from the host's double A and A^-1). Through the kernels (first order):
//   eo_clover, eo_clover_dag  A^-1 acc:                  kFieldBound + eps_C
//   oe_clover's v = x + b A^-1 acc (error b dA^-1 acc <= eps_C |v - x| <= eps_C (|v| + |x|)):
//                                                        kFieldBound + eps_C (1 + |x| / |v|)
//   oe_clover's out2 = A^-1 v: dA^-1 v, and A^-1 applied to the error of v, which grows by at most
//   kappa_C = max |A^-1|_F max |A|_F relative:           kFieldBound + eps_C + kappa_C eps_C (1 + |x| / |v|)
//   oe_clover_dag reads no clover term:                  kFieldBound
// each plus kArithmetic.
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

// The bounds of the half operator's A^-1 in 16 bits (above) from the host's double clover term.
struct CloverBounds {
  double eps = 0;    // eps_C: relative error of A^-1 x, any x
  double kappa = 0;  // kappa_C: max |A^-1|_F max |A|_F
};
template <typename R>
double block_max(const CloverBlock<R>& m) {
  double big = 0;
  for (int k = 0; k < 6; ++k) big = std::max(big, std::fabs(double(m.diag[k])));
  for (int k = 0; k < 15; ++k)
    big = std::max({big, std::fabs(double(m.lower[k].re)), std::fabs(double(m.lower[k].im))});
  return big;
}
inline double block_frobenius(const CloverBlock<double>& m) {
  double s = 0;
  for (int k = 0; k < 6; ++k) s += m.diag[k] * m.diag[k];
  for (int k = 0; k < 15; ++k) s += 2 * (m.lower[k].re * m.lower[k].re + m.lower[k].im * m.lower[k].im);
  return std::sqrt(s);
}
inline CloverBounds clover_bounds(const HostClover& c) {
  double eps = 0, inv_f = 0, a_f = 0;
  for (int p = 0; p < 2; ++p)
    for (std::size_t i = 0; i < c.a[p].size(); ++i)
      for (int b = 0; b < 2; ++b) {
        const double f = block_frobenius(c.a[p][i].b[b]);
        eps = std::max(eps, block_max(c.a_inv[p][i].b[b]) * f);
        inv_f = std::max(inv_f, block_frobenius(c.a_inv[p][i].b[b]));
        a_f = std::max(a_f, f);
      }
  return {std::sqrt(66.0) * kComponentBound * eps, inv_f * a_f};
}

// The half operator's A^-1 against the fp32 operator's (both from the same fp64 one): the largest |error| of an entry
// over its block's largest |entry|, both parities; `a_kept` receives the sites of the half operator's A (none kept).
inline double worst_clover_entry(OperatorSetup<double>& s, int& a_kept) {
  WilsonClover<float> f(s.ctx, *s.op);
  WilsonClover<Half> h(s.ctx, *s.op);
  double worst = 0;
  a_kept = h.clover(false)[0].sites() + h.clover(false)[1].sites();
  for (int p = 0; p < 2; ++p) {
    const std::vector<CloverSite<float>> a = f.clover(true)[p].download(), q = h.clover(true)[p].download();
    for (std::size_t i = 0; i < a.size(); ++i)
      for (int b = 0; b < 2; ++b) {
        const CloverBlock<float>& x = a[i].b[b];
        const CloverBlock<float>& y = q[i].b[b];
        double e = 0;
        for (int k = 0; k < 6; ++k) e = std::max(e, std::fabs(double(x.diag[k]) - y.diag[k]));
        for (int k = 0; k < 15; ++k)
          e = std::max(
              {e, std::fabs(double(x.lower[k].re) - y.lower[k].re), std::fabs(double(x.lower[k].im) - y.lower[k].im)});
        const double m = block_max(x);
        worst = std::max(worst, m > 0 ? e / m : e);
      }
  }
  return worst;
}

// |a| of an fp32 field.
inline double field_norm(const ParitySpinor<float>& a) {
  double n = 0;
  for (const Spinor<float>& x : a.download())
    for (int sp = 0; sp < 4; ++sp)
      for (int c = 0; c < 3; ++c)
        n += double(x.s[sp].c[c].re) * x.s[sp].c[c].re + double(x.s[sp].c[c].im) * x.s[sp].c[c].im;
  return std::sqrt(n);
}

// The hot kernels of the half operator against the fp32 operator (both rounded from the same fp64 one) on the same
// input values (fields rounded to half first): each output differs by its own rounding to half and by A^-1 in 16 bits.
// x_over_v: |x| / |v| of oe_clover (its xpay input and fp32 output), for the bounds above.
struct KernelDiffs {
  double eo = 0, eo_dag = 0, oe = 0, oe_out2 = 0, oe_dag = 0, x_over_v = 0;
};
// The bounds above for the differences of kernel_diffs.
inline KernelDiffs kernel_bounds(const CloverBounds& c, double x_over_v) {
  const double e = kFieldBound + kArithmetic, v = c.eps * (1 + x_over_v);
  return {e + c.eps, e + c.eps, e + v, e + c.eps + c.kappa * v, e, x_over_v};
}
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
    return rel_diff(tmp, want);
  };
  for (const bool dag : {false, true}) {
    f.eo_clover(out_f, xo_f, dag);
    h.eo_clover(out_h, xo_h, dag);
    (dag ? d.eo_dag : d.eo) = diff(out_f, out_h, got);
  }
  f.oe_clover(out_f, out2_f, te_f, xo_f);
  h.oe_clover(out_h, out2_h, te_h, xo_h);
  d.x_over_v = field_norm(xo_f) / field_norm(out_f);
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
