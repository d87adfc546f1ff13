// f32d_checks.hpp: the checks of the fp32/fp64 sloppy operator (kernels/half.hpp's Fp32Fp64, solver.sloppy =
// "single_fp64") shared by the CPU tests (test_f32d.cpp) and the GPU tests (gpu/test_gpu_f32d.cpp): every conversion
// and kernel runs through the launchers, so on a GPU build the device code is checked. Each function measures; the
// tests assert.
// The reference: the fp64 operator on the fp32 operator's links and clover (widened exactly), applied to inputs that
// are fp32 values, its outputs rounded to fp32. The fp32/fp64 operator computes the same sums in fp64 and rounds the
// same way, so it differs from that only where an fp64 rounding difference (~1e-16 relative, from the order of the
// sums) crosses an fp32 rounding boundary: a few components one fp32 ulp apart at most (kFp64Level, far below the
// fp32 rounding of the outputs themselves). The fp32 operator's arithmetic adds its own rounding (~1e-7 relative).
// Links of 12 reals: the fp32/fp64 operator unpacks them in fp32 (row 2 = conj(row 0 x row 1) computed in fp32, as the
// fp32 operator's: kernels/views.hpp), the fp64 operator in fp64, so on Haar-random links the two differ by the fp32
// rounding of row 2 (measured, CPU: 7.6e-9 .. 3.7e-8, against the fp32 operator's 1.7e-8 .. 1.4e-7), a fixed change
// of the links and not of the arithmetic. Their kernels are compared on links exact in fp32 whose row 2 is exact in
// fp32 arithmetic too (dyadic_su3_links), where the reference is again the same operator.
// Who may call: tests only.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "operator_fixture.hpp"
#include "src/physics/cg.hpp"

namespace emprism::test::f32d {

// 1/64 of the fp32 rounding of a stored output (2^-24 relative): only rare one-ulp flips fit below it.
constexpr double kFp64Level = 1.0 / (1 << 24) / 64;

// SU(3) links, natural order as ref::random_su3_links, each a product of four matrices drawn from generators whose
// entries are 0, +-1, +-i and (+-1 +- i) / 2: i times the unitary (1/2)[[1+i, 1-i], [1-i, 1+i]] in the plane (0,1),
// (1,2) or (0,2) with i in the third diagonal entry (det 1), diag(i, -i, 1), diag(1, i, -i) and the cyclic permutation.
// Every entry is a Gaussian integer over 16 (|numerator| <= 16), every product of two entries one over 256: the links
// and the cross products of their rows are exact in fp32 whatever the order of the operations or FMA contraction.
inline std::vector<Cd> dyadic_su3_links(const Extents& lat, unsigned seed) {
  using M = std::array<Cd, 9>;
  const Cd i(0, 1), p = Cd(1, 1) / 2.0, m = Cd(1, -1) / 2.0;
  std::vector<M> gens;
  for (const auto& [a, b] : {std::pair{0, 1}, std::pair{1, 2}, std::pair{0, 2}}) {
    M h{};
    h[a * 4] = h[b * 4] = i * p;
    h[a * 3 + b] = h[b * 3 + a] = i * m;
    h[(3 - a - b) * 4] = i;
    gens.push_back(h);
  }
  gens.push_back(M{i, 0, 0, 0, -i, 0, 0, 0, 1});
  gens.push_back(M{1, 0, 0, 0, i, 0, 0, 0, -i});
  gens.push_back(M{0, 1, 0, 0, 0, 1, 1, 0, 0});
  std::mt19937 rng(seed);
  const std::size_t links = static_cast<std::size_t>(lat[0]) * lat[1] * lat[2] * lat[3] * 4;
  std::vector<Cd> out(links * 9);
  for (std::size_t k = 0; k < links; ++k) {
    M u{1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int f = 0; f < 4; ++f) {
      const M& g = gens[rng() % gens.size()];
      M v{};
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
          for (int j = 0; j < 3; ++j) v[r * 3 + c] += u[r * 3 + j] * g[j * 3 + c];
      u = v;
    }
    std::copy(u.begin(), u.end(), out.begin() + static_cast<std::ptrdiff_t>(k * 9));
  }
  return out;
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
    return rel_diff(g, w);
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
