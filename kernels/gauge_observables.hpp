// gauge_observables.hpp: the plaquette and the link trace of a gauge field in the host field's extended layout
// (kernels/clover_build.hpp's ExtGaugeView: the local block with its one-site halo, halo filled), per site, and
// the fixed-order block sums that add them as src/lattice/ordered_sum.hpp does on the host:
//   GaugeObservableSites  thread = local natural site: plaq[lex] = sum_{mu < nu} Re tr P_mu_nu(x) / 3 (the products
//                         of site_plaquettes, shared with the host), link_tr[lex] = sum_mu Re tr U_mu(x) / 3
//   OrderedBlockSums      thread = block b: out[b] = the sum of in[b * block ... min(n, (b + 1) block) - 1] in order
//   LinkUnitarity         thread = local natural site: bad[lex] = the first mu whose link is not in SU(3) to tol
//                         (link_deviation > tol, or not finite), -1 if none; dev[lex] = that link's deviation
//   FirstFlagged          thread = block b: out[b] = the first lex of the block with bad[lex] >= 0, -1 if none
// The host adds the block totals in block order, so on the CPU backend the result has plaquette()'s and
// link_trace()'s bits; on a GPU it agrees to rounding (contracted multiply-adds in the products).
// Who may call: src/physics/gauge_device.cpp; site_plaquettes also src/lattice/gauge.cpp.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/clover_build.hpp"

namespace emprism {

// sum_{mu < nu} Re tr P_mu_nu(x) / 3 at site x of any links with at(const int y[4], int mu) reaching x + mu (one halo
// layer): the per-site term of the kernel below and of the host's plaquette() (src/lattice/gauge.cpp), one source.
template <typename Links>
EMPRISM_HD double site_plaquettes(const Links& u, const int x[4]) {
  double s = 0;
  for (int mu = 0; mu < 4; ++mu)
    for (int nu = mu + 1; nu < 4; ++nu) {
      int xm[4] = {x[0], x[1], x[2], x[3]}, xn[4] = {x[0], x[1], x[2], x[3]};
      xm[mu] += 1;
      xn[nu] += 1;
      const SU3<double> p = u.at(x, mu) * u.at(xm, nu) * dagger(u.at(xn, mu)) * dagger(u.at(x, nu));
      s += trace(p).re / 3.0;
    }
  return s;
}

struct GaugeObservableSites {
  int l[4];  // local extents
  ExtGaugeView u;
  double* plaq;
  double* link_tr;
  EMPRISM_HD void operator()(int lex) const {
    int x[4], r = lex;
    for (int mu = 0; mu < 4; ++mu) {
      x[mu] = r % l[mu];
      r /= l[mu];
    }
    plaq[lex] = site_plaquettes(u, x);
    double t = 0;
    for (int mu = 0; mu < 4; ++mu) t += trace(u.at(x, mu)).re / 3.0;
    link_tr[lex] = t;
  }
};

struct OrderedBlockSums {
  const double* in;
  double* out;
  std::int64_t n;
  int block;
  EMPRISM_HD void operator()(int b) const {
    double s = 0;
    const std::int64_t begin = static_cast<std::int64_t>(b) * block;
    const std::int64_t end = begin + block < n ? begin + block : n;
    for (std::int64_t i = begin; i < end; ++i) s += in[i];
    out[b] = s;
  }
};

// max(|U U^dag - 1|, |det U - 1|) elementwise, infinity for a link holding a value that is not finite: the arithmetic
// of src/lattice/gauge.cpp's unitarity_deviation (its bits on the CPU backend).
EMPRISM_HD inline double link_deviation(const SU3<double>& u) {
  for (int i = 0; i < 3; ++i)  // v - v is 0 exactly for finite v, NaN for NaN and Inf
    for (int j = 0; j < 3; ++j)
      if (!(u.e[i][j].re - u.e[i][j].re == 0.0) || !(u.e[i][j].im - u.e[i][j].im == 0.0))
        return static_cast<double>(INFINITY);
  const SU3<double> p = u * dagger(u);
  double dev = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const Complex<double> d = p.e[i][j] - Complex<double>{double(i == j), 0.0};
      dev = fmax(dev, sqrt(norm2(d)));
    }
  const Complex<double> det = u.e[0][0] * (u.e[1][1] * u.e[2][2] - u.e[1][2] * u.e[2][1]) -
                              u.e[0][1] * (u.e[1][0] * u.e[2][2] - u.e[1][2] * u.e[2][0]) +
                              u.e[0][2] * (u.e[1][0] * u.e[2][1] - u.e[1][1] * u.e[2][0]);
  return fmax(dev, sqrt(norm2(det - Complex<double>{1.0, 0.0})));
}

struct LinkUnitarity {
  int l[4];  // local extents
  ExtGaugeView u;
  double tol;
  int* bad;
  double* dev;
  EMPRISM_HD void operator()(int lex) const {
    int x[4], r = lex;
    for (int mu = 0; mu < 4; ++mu) {
      x[mu] = r % l[mu];
      r /= l[mu];
    }
    bad[lex] = -1;
    dev[lex] = 0;
    for (int mu = 0; mu < 4; ++mu) {
      const double d = link_deviation(u.at(x, mu));
      if (!(d <= tol)) {
        bad[lex] = mu;
        dev[lex] = d;
        return;
      }
    }
  }
};

struct FirstFlagged {
  const int* bad;
  std::int64_t* out;
  std::int64_t n;
  int block;
  EMPRISM_HD void operator()(int b) const {
    const std::int64_t begin = static_cast<std::int64_t>(b) * block;
    const std::int64_t end = begin + block < n ? begin + block : n;
    out[b] = -1;
    for (std::int64_t i = begin; i < end; ++i)
      if (bad[i] >= 0) {
        out[b] = i;
        return;
      }
  }
};

}  // namespace emprism
