// link_smearing.hpp: APE and stout smearing of the spatial links of one timeslice (src/physics/smearing.hpp), per
// site, for the host's SourceSmearer and the device's SourceSmearing alike (the same functors, so the CPU backend gives
// the host's bits; a GPU agrees to rounding: contracted multiply-adds, its own sin, cos, acos, pow). The links live in
// kernels/quark_smearing.hpp's slice box (one-site halo, 3 SU3<double> per box site: V_x, V_y, V_z).
//   exp_i_su3            exp(i Q) for a traceless hermitian Q (stout): Cayley-Hamilton of Morningstar and Peardon
//                        (hep-lat/0311018, eqs. 29-34, c0 < 0 through f_j(-c0) = (-1)^j f_j(c0)^*); for small Q
//                        (tr Q^2 / 2 < 0.01) the Taylor series, summed until the terms vanish in double precision
//   project_su3_maxtrace the SU(3) matrix X maximising Re tr(W^dag X): the unitary polar factor of W (scaled Newton
//                        iteration) times the cube root of its inverse determinant that maximises the functional, then
//                        Cabibbo-Marinari sweeps over the three SU(2) subgroups, each maximising the functional
//                        exactly, until the traceless anti-hermitian part of X W^dag is below 1e-14 |W| (at most 200
//                        sweeps); a singular W starts from the identity; project_su3_maxtrace(c U) = U for U in SU(3)
//   ape_link             Proj_SU3[(1 - alpha) v + (alpha / 4) staples]
//   stout_link           C = rho staples, Omega = C v^dag, Q = (i/2)(Omega^dag - Omega) - (i/6) tr(Omega^dag - Omega),
//                        exp(i Q) v
//   LinkSmearStep        thread = one link (3 per interior site of the slice), from the previous step's links (halo
//                        filled)
//   SlicePlaquetteSite   thread = interior site: the sum over i < j of Re tr P_ij / 3 (spatial plaquettes)
//   SliceLinksFromExt    thread = interior site: the spatial links of local timeslice t of a field in the extended
//                        layout (kernels/clover_build.hpp's ExtGaugeView: HostGauge's storage, or its device copy)
// Staples: staple_ij(x) = V_j(x) V_i(x+j) V_j(x+i)^dag + V_j(x-j)^dag V_i(x-j) V_j(x-j+i), summed over j != i.
// Who may call: src/physics/smearing.cpp, src/physics/smearing_device.cpp and the tests.
#pragma once

#include <math.h>

#include "kernels/clover_build.hpp"
#include "kernels/gauge_generate.hpp"
#include "kernels/lattice_arg.hpp"
#include "kernels/quark_smearing.hpp"
#include "kernels/su3.hpp"
#include "kernels/views.hpp"

namespace emprism {

namespace smear_detail {

using C = Complex<double>;
using M3 = SU3<double>;

EMPRISM_HD inline bool finite(double v) { return v - v == 0.0; }  // false for NaN and +-inf
EMPRISM_HD inline M3 zero_m3() {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = {0.0, 0.0};
  return r;
}
EMPRISM_HD inline M3 scale(C s, const M3& a) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = s * a.e[i][j];
  return r;
}
EMPRISM_HD inline M3 scale(double s, const M3& a) { return scale(C{s, 0.0}, a); }
EMPRISM_HD inline M3 add_identity(C s, M3 a) {
  for (int i = 0; i < 3; ++i) a.e[i][i] += s;
  return a;
}
EMPRISM_HD inline double frob2(const M3& a) {
  double n = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) n += norm2(a.e[i][j]);
  return n;
}
EMPRISM_HD inline C det3(const M3& a) {
  return a.e[0][0] * (a.e[1][1] * a.e[2][2] - a.e[1][2] * a.e[2][1]) -
         a.e[0][1] * (a.e[1][0] * a.e[2][2] - a.e[1][2] * a.e[2][0]) +
         a.e[0][2] * (a.e[1][0] * a.e[2][1] - a.e[1][1] * a.e[2][0]);
}
EMPRISM_HD inline C inverse_of(C z) {
  const double n = norm2(z);
  return {z.re / n, -z.im / n};
}
// a^-1 = adj(a) / det(a).
EMPRISM_HD inline M3 inverse3(const M3& a, C det) {
  M3 adj;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
      adj.e[i][j] = a.e[r0][c0] * a.e[r1][c1] - a.e[r0][c1] * a.e[r1][c0];
    }
  return scale(inverse_of(det), adj);
}
// |traceless anti-hermitian part of M|_F.
EMPRISM_HD inline double traceless_antihermitian_norm(const M3& m) {
  const M3 a = scale(0.5, m - dagger(m));
  const C t = trace(a);
  return sqrt(frob2(add_identity(C{-t.re / 3.0, -t.im / 3.0}, a)));
}

// The unitary polar factor of a non-singular w by the Newton iteration X <- (g X + X^-dag / g) / 2 with Higham's
// Frobenius-norm scaling g while far from convergence. Returns false for a singular (or non-finite) w.
EMPRISM_HD inline bool polar_unitary(const M3& w, M3& x) {
  x = w;
  bool scaled = true;
  double last = 1.0;
  for (int it = 0; it < 100; ++it) {
    const C d = det3(x);
    if (!(norm2(d) > 1e-280) || !finite(d.re) || !finite(d.im)) return false;
    const M3 xi = inverse3(x, d);
    const double g = scaled ? sqrt(sqrt(frob2(xi) / frob2(x))) : 1.0;
    const M3 next = scale(0.5, scale(g, x) + scale(1.0 / g, dagger(xi)));
    const double diff = sqrt(frob2(next - x));
    x = next;
    if (diff < 1e-2) scaled = false;
    if (diff < 1e-15 || last < 1e-7) break;  // quadratic convergence: one step after 1e-7 reaches rounding
    last = diff;
  }
  return true;
}

// sin(w) / w, by its series for small w (Morningstar-Peardon eq. 33).
EMPRISM_HD inline double xi0(double w) {
  if (fabs(w) < 0.05) {
    const double w2 = w * w;
    return 1.0 - w2 / 6.0 * (1.0 - w2 / 20.0 * (1.0 - w2 / 42.0));
  }
  return sin(w) / w;
}

// X <- A X with A in the SU(2) subgroup (p, q) maximising Re tr(A X W^dag) exactly.
EMPRISM_HD inline void cabibbo_marinari_step(const M3& w, int p, int q, M3& x) {
  const M3 m = x * dagger(w);
  // Re tr(A m) = a . r for A = [[a0 + i a3, a2 + i a1], [-a2 + i a1, a0 - i a3]] on rows/columns p, q.
  const double r[4] = {m.e[p][p].re + m.e[q][q].re, -(m.e[q][p].im + m.e[p][q].im), m.e[q][p].re - m.e[p][q].re,
                       -(m.e[p][p].im - m.e[q][q].im)};
  const double n = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
  if (!(n > 0)) return;
  const double a0 = r[0] / n, a1 = r[1] / n, a2 = r[2] / n, a3 = r[3] / n;
  const C app{a0, a3}, apq{a2, a1}, aqp{-a2, a1}, aqq{a0, -a3};
  for (int j = 0; j < 3; ++j) {
    const C xp = x.e[p][j], xq = x.e[q][j];
    x.e[p][j] = app * xp + apq * xq;
    x.e[q][j] = aqp * xp + aqq * xq;
  }
}

}  // namespace smear_detail

EMPRISM_HD inline SU3<double> exp_i_su3(const SU3<double>& q) {
  using namespace smear_detail;
  const M3 q2 = q * q;
  const double c1 = 0.5 * trace(q2).re;
  if (c1 < 0.01) {
    // |Q|_F = sqrt(2 c1) < 0.15: sum_n (iQ)^n / n! converges to rounding within ~15 terms.
    M3 sum = identity_su3<double>(), term = identity_su3<double>();
    for (int n = 1; n < 40; ++n) {
      term = scale(C{0.0, 1.0 / n}, term * q);
      sum = sum + term;
      if (frob2(term) < 1e-40) break;
    }
    return sum;
  }
  const double c0 = det3(q).re;
  const double c0max = 2.0 * pow(c1 / 3.0, 1.5);
  const double ratio = fmin(fabs(c0) / c0max, 1.0);
  const double theta = acos(ratio);
  const double u = sqrt(c1 / 3.0) * cos(theta / 3.0);
  const double w = sqrt(c1) * sin(theta / 3.0);
  const double u2 = u * u, w2 = w * w, cw = cos(w), xi = xi0(w);
  const C e2iu{cos(2.0 * u), sin(2.0 * u)};
  const C emiu{cos(u), -sin(u)};
  const C h0 = (u2 - w2) * e2iu + emiu * C{8.0 * u2 * cw, 2.0 * u * (3.0 * u2 + w2) * xi};
  const C h1 = 2.0 * u * e2iu - emiu * C{2.0 * u * cw, -(3.0 * u2 - w2) * xi};
  const C h2 = e2iu - emiu * C{cw, 3.0 * u * xi};
  const double inv = 1.0 / (9.0 * u2 - w2);  // >= 2 c1 > 0 for 0 <= theta <= pi / 2
  C f0 = inv * h0, f1 = inv * h1, f2 = inv * h2;
  if (c0 < 0) {  // f_j(-c0) = (-1)^j conj(f_j(c0))
    f0 = conj(f0);
    f1 = -conj(f1);
    f2 = conj(f2);
  }
  return add_identity(f0, scale(f1, q) + scale(f2, q2));
}

EMPRISM_HD inline SU3<double> project_su3_maxtrace(const SU3<double>& w) {
  using namespace smear_detail;
  M3 x = identity_su3<double>();
  M3 polar;
  if (polar_unitary(w, polar)) {
    // polar is the U(3) maximiser; of the three cube roots of conj(det), take the one with the largest functional.
    const C d = det3(polar);
    const double phi = atan2(d.im, d.re);
    const C t = trace(dagger(w) * polar);
    double best = -HUGE_VAL;
    C phase{1.0, 0.0};
    for (int k = 0; k < 3; ++k) {
      const double a = -(phi + 2.0 * 3.14159265358979323846 * k) / 3.0;
      const C p{cos(a), sin(a)};
      const double v = (p * t).re;
      if (v > best) {
        best = v;
        phase = p;
      }
    }
    x = project_to_su3(scale(phase, polar));  // unitarity and det 1 to rounding
  }
  const double tol = 1e-14 * sqrt(frob2(w));
  for (int sweep = 0; sweep < 200; ++sweep) {
    if (traceless_antihermitian_norm(x * dagger(w)) <= tol) break;
    cabibbo_marinari_step(w, 0, 1, x);
    cabibbo_marinari_step(w, 1, 2, x);
    cabibbo_marinari_step(w, 0, 2, x);
  }
  return x;
}

EMPRISM_HD inline SU3<double> ape_link(const SU3<double>& v, const SU3<double>& staples, double alpha) {
  using namespace smear_detail;
  return project_su3_maxtrace(scale(1.0 - alpha, v) + scale(alpha / 4.0, staples));
}

EMPRISM_HD inline SU3<double> stout_link(const SU3<double>& v, const SU3<double>& staples, double rho) {
  using namespace smear_detail;
  const M3 omega = scale(rho, staples) * dagger(v);
  const M3 a = dagger(omega) - omega;  // anti-hermitian
  const C t = trace(a);
  // Q = (i/2) A - (i/6) tr(A)
  const M3 q = add_identity(C{t.im / 6.0, -t.re / 6.0}, scale(C{0.0, 0.5}, a));
  return exp_i_su3(q) * v;
}

struct LinkSmearStep {
  SliceBoxArg box;
  const SU3<double>* in;  // [box site * 3 + i], halo filled
  SU3<double>* out;       // interior sites written
  int ape;                // 1: APE, 0: stout
  double weight;          // alpha or rho

  EMPRISM_HD SU3<double> at(const int x[3], int i) const { return in[box.index(x) * 3 + i]; }
  // k = 3 * (interior site) + i: one link per thread (3 slice volumes of threads).
  EMPRISM_HD void operator()(int k) const {
    const int i = k % 3;
    int x[3];
    box.interior(k / 3, x);
    SU3<double> staples = smear_detail::zero_m3();
    for (int j = 0; j < 3; ++j) {
      if (j == i) continue;
      int xpi[3] = {x[0], x[1], x[2]}, xpj[3] = {x[0], x[1], x[2]}, xmj[3] = {x[0], x[1], x[2]};
      ++xpi[i];
      ++xpj[j];
      --xmj[j];
      int xmjpi[3] = {xmj[0], xmj[1], xmj[2]};
      ++xmjpi[i];
      staples = staples + at(x, j) * at(xpj, i) * dagger(at(xpi, j));
      staples = staples + dagger(at(xmj, j)) * at(xmj, i) * at(xmjpi, j);
    }
    const SU3<double> v = at(x, i);
    out[box.index(x) * 3 + i] = ape ? ape_link(v, staples, weight) : stout_link(v, staples, weight);
  }
};

struct SlicePlaquetteSite {
  SliceBoxArg box;
  const SU3<double>* links;  // [box site * 3 + i], forward halo filled
  double* terms;             // [interior site]

  EMPRISM_HD SU3<double> at(const int x[3], int i) const { return links[box.index(x) * 3 + i]; }
  EMPRISM_HD double term(const int x[3]) const {
    double s = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = i + 1; j < 3; ++j) {
        int xi[3] = {x[0], x[1], x[2]}, xj[3] = {x[0], x[1], x[2]};
        ++xi[i];
        ++xj[j];
        const SU3<double> p = at(x, i) * at(xi, j) * dagger(at(xj, i)) * dagger(at(x, j));
        s += trace(p).re / 3.0;
      }
    return s;
  }
  EMPRISM_HD void operator()(int k) const {
    int x[3];
    box.interior(k, x);
    terms[k] = term(x);
  }
};

struct SliceLinksFromExt {
  ExtGaugeView u;  // the field with its halo (kernels/clover_build.hpp), on the memory the functor runs on
  SliceBoxArg box;
  int t;               // local timeslice
  SU3<double>* links;  // [box site * 3 + i]
  EMPRISM_HD void operator()(int k) const {
    int x[4];
    box.interior(k, x);
    x[3] = t;
    for (int i = 0; i < 3; ++i) links[box.index(x) * 3 + i] = u.at(x, i);
  }
};

}  // namespace emprism
