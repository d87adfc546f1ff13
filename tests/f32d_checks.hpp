// f32d_checks.hpp: the checks of the fp32/fp64 sloppy operator (kernels/half.hpp's Fp32Fp64, solver.sloppy =
// "single_fp64") shared by the CPU tests (test_f32d.cpp) and the GPU tests (gpu/test_gpu_f32d.cpp): every conversion
// and kernel runs through the launchers, so on a GPU build the device code is checked. Each function measures; the
// tests assert.
// The reference: the fp64 operator on the fp32 operator's links and clover (widened exactly), applied to inputs that
// are fp32 values, its outputs rounded to fp32. The fp32/fp64 operator computes the same sums in fp64 and rounds the
// same way, so it differs from that only where an fp64 rounding difference (~1e-16 relative, from the order of the
// sums) crosses an fp32 rounding boundary: a few components one fp32 ulp apart at most (kFp64Level, far below the
// fp32 rounding of the outputs themselves). The fp32 operator's arithmetic adds its own rounding (~1e-7 relative).
// Who may call: tests only.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "operator_fixture.hpp"
#include "src/physics/cg.hpp"

namespace emprism::test::f32d {

// 1/64 of the fp32 rounding of a stored output (2^-24 relative): only rare one-ulp flips fit below it.
constexpr double kFp64Level = 1.0 / (1 << 24) / 64;

// |a - b| / |b| of two fp32 fields.
inline double field_rel_diff(const ParitySpinor<float>& a, const ParitySpinor<float>& b) {
  const std::vector<Spinor<float>> x = a.download(), y = b.download();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (int sp = 0; sp < 4; ++sp)
      for (int c = 0; c < 3; ++c) {
        const Complex<float> u = x[i].s[sp].c[c], v = y[i].s[sp].c[c];
        num += std::pow(double(u.re) - v.re, 2) + std::pow(double(u.im) - v.im, 2);
        den += double(v.re) * v.re + double(v.im) * v.im;
      }
  return std::sqrt(num / den);
}

// The hot kernels of an operator on fp32 fields (Ri = float or Fp32Fp64, rounded from s's fp64 operator) against the
// fp64 operator on the same fields, every output rounded to fp32.
struct KernelDiffs {
  double eo = 0, eo_dag = 0, oe = 0, oe_out2 = 0, oe_dag = 0;
  double worst() const { return std::max({eo, eo_dag, oe, oe_out2, oe_dag}); }
};

template <typename Ri>
KernelDiffs kernel_diffs(OperatorSetup<double>& s, unsigned seed) {
  WilsonClover<float> f(s.ctx, *s.op);
  WilsonClover<double> d(s.ctx, f);  // the fp64 operator on fp32 links and clover
  WilsonClover<Ri> op(s.ctx, *s.op);
  const SpinorField<double> src = s.field(ref::random_spinor(s.geom.local(), seed));
  ParitySpinor<float> te_f(s.geom), xo_f(s.geom), want(s.geom), want2(s.geom), got(s.geom), got2(s.geom);
  ParitySpinor<double> te_d(s.geom), xo_d(s.geom), out_d(s.geom), out2_d(s.geom);
  ParitySpinor<Ri> te(s.geom), xo(s.geom), out(s.geom), out2(s.geom);
  blas::convert(s.ctx, te_f, src.even);  // the inputs: fp32 values in every precision
  blas::convert(s.ctx, xo_f, src.odd);
  blas::convert(s.ctx, te_d, te_f);
  blas::convert(s.ctx, xo_d, xo_f);
  blas::convert(s.ctx, te, te_f);
  blas::convert(s.ctx, xo, xo_f);
  auto diff = [&](const ParitySpinor<double>& ref, const ParitySpinor<Ri>& have, ParitySpinor<float>& w,
                  ParitySpinor<float>& g) {
    blas::convert(s.ctx, w, ref);
    blas::convert(s.ctx, g, have);
    return field_rel_diff(g, w);
  };
  KernelDiffs k;
  for (const bool dag : {false, true}) {
    d.eo_clover(out_d, xo_d, dag);
    op.eo_clover(out, xo, dag);
    (dag ? k.eo_dag : k.eo) = diff(out_d, out, want, got);
  }
  d.oe_clover(out_d, out2_d, te_d, xo_d);
  op.oe_clover(out, out2, te, xo);
  k.oe = diff(out_d, out, want, got);
  k.oe_out2 = diff(out2_d, out2, want2, got2);
  d.oe_clover_dag(out_d, te_d, xo_d);
  op.oe_clover_dag(out, te, xo);
  k.oe_dag = diff(out_d, out, want, got);
  return k;
}

// One source solved in double and in mixed precision with fp32/fp64 sloppy fields (tol, stop = Full).
struct Counts {
  CgResult d, m;
  double reference_residual = 0;  // |b - M x_mixed| / |b| by the reference operator
};
inline Counts solve_double_and_f32d(const Extents& lat, const std::vector<Cd>& links, double kappa, double csw,
                                    const std::array<double, 4>& theta, double tol, unsigned seed) {
  OperatorSetup<double> s(lat, links, kappa, csw, theta, {}, 18);
  WilsonClover<Fp32Fp64> inner(s.ctx, *s.op);
  const std::vector<Cd> b_nat = ref::random_spinor(lat, seed);
  const SpinorField<double> b = s.field(b_nat);
  SpinorField<double> x(s.geom);
  CgParams p;
  p.tol = tol;
  p.max_iter = 5000;
  Counts out;
  out.d = solve_eo_cg(*s.op, *s.op, b, x, p);
  out.m = solve_eo_cg(*s.op, inner, b, x, p);
  out.reference_residual = rel_diff(ref::apply_wilson_clover(lat, links, kappa, csw, theta, s.natural(x)), b_nat);
  return out;
}

}  // namespace emprism::test::f32d
