// clover_build.hpp: the set-up kernels of the operator, run once per gauge field: the links of the operator's
// precision and the clover term A = 1 + i csw kappa sum_{mu<nu} sigma_{mu nu} F_{mu nu} with its inverse, both
// computed per site from the double-precision gauge field of the host as it is stored (the local block with its
// one-site halo, HostGauge's layout, copied to the device as one raw block: no host reorder).
// Convention: docs/conventions.md section 4 (leaves counter-clockwise from x, F = (Q - Q^dag) / 8); the packing of
// kernels/clover_block.hpp. Everything is computed in double in the order of the host reference
// (src/physics/clover.cpp: leaves, block sums, LDL^dag per 6x6 chiral block, columns of the inverse, symmetrised),
// and only the stores round to R, so the CPU backend gives the host reference's bits and a GPU agrees to rounding
// (fused multiply-adds).
// Who may call: src/physics/clover_device.cpp (through kernels/launch.hpp).
#pragma once

#include <cmath>

#include "kernels/blas.hpp"
#include "kernels/lattice_arg.hpp"
#include "kernels/su3.hpp"
#include "kernels/views.hpp"

namespace emprism {

// The double links of the local block plus a one-site halo, [site of the extended box][mu], the extended box
// indexed x fastest with -1 <= x[k] <= l[k] (comm/host_halo.hpp's HaloBox, HostGauge's storage).
struct ExtGaugeView {
  const SU3<double>* u = nullptr;
  int e[4];  // local extents + 2
  EMPRISM_HD const SU3<double>& at(const int x[4], int mu) const {
    const long long i = (((static_cast<long long>(x[3]) + 1) * e[2] + x[2] + 1) * e[1] + x[1] + 1) * e[0] + x[0] + 1;
    return u[i * 4 + mu];
  }
};

// The links of the operator, U_mu(x) packed in double to the format Rc and rounded to R (kernels/link_format.hpp),
// thread i = parity * vh + cb.
template <typename R, int Rc = 18>
struct GaugeFromExtended {
  LatticeArg lat;
  ExtGaugeView in;
  GaugeView<R, Rc> out;
  EMPRISM_HD void operator()(int i) const {
    const int p = i >= lat.vh ? 1 : 0, cb = i - p * lat.vh;
    int x[4];
    lat.coords(cb, p, x);
    for (int mu = 0; mu < 4; ++mu) out.store_packed(p, cb, mu, round_link<R>(pack_link<Rc>(in.at(x, mu))));
  }
};

// F_{mu nu}(x) = (Q - Q^dag) / 8 from the four leaves (docs/conventions.md section 4, counter-clockwise from x), for
// any field U with at(const int y[4], int link) that reaches x +- one step: the device's ExtGaugeView here, the
// host's HostGauge in src/physics/clover.cpp (make_clover), so both build the clover term from the same products.
template <typename U>
EMPRISM_HD inline SU3<double> leaf_link(const U& u, const int x[4], int mu, int smu, int nu, int snu, int link) {
  int y[4] = {x[0], x[1], x[2], x[3]};
  y[mu] += smu;
  y[nu] += snu;
  return u.at(y, link);
}
template <typename U>
EMPRISM_HD inline SU3<double> field_strength_of(const U& u, const int x[4], int mu, int nu) {
  const SU3<double> q1 = leaf_link(u, x, mu, 0, nu, 0, mu) * leaf_link(u, x, mu, 1, nu, 0, nu) *
                         dagger(leaf_link(u, x, mu, 0, nu, 1, mu)) * dagger(leaf_link(u, x, mu, 0, nu, 0, nu));
  const SU3<double> q2 = leaf_link(u, x, mu, 0, nu, 0, nu) * dagger(leaf_link(u, x, mu, -1, nu, 1, mu)) *
                         dagger(leaf_link(u, x, mu, -1, nu, 0, nu)) * leaf_link(u, x, mu, -1, nu, 0, mu);
  const SU3<double> q3 = dagger(leaf_link(u, x, mu, -1, nu, 0, mu)) * dagger(leaf_link(u, x, mu, -1, nu, -1, nu)) *
                         leaf_link(u, x, mu, -1, nu, -1, mu) * leaf_link(u, x, mu, 0, nu, -1, nu);
  const SU3<double> q4 = dagger(leaf_link(u, x, mu, 0, nu, -1, nu)) * leaf_link(u, x, mu, 0, nu, -1, mu) *
                         leaf_link(u, x, mu, 1, nu, -1, nu) * dagger(leaf_link(u, x, mu, 0, nu, 0, mu));
  const SU3<double> q = q1 + q2 + q3 + q4;
  const SU3<double> d = q - dagger(q);
  SU3<double> f;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) f.e[i][j] = 0.125 * d.e[i][j];
  return f;
}

// Complex * real as std::complex<double> * double computes it (both parts scaled).
EMPRISM_HD inline Complex<double> scaled(Complex<double> a, double s) { return {a.re * s, a.im * s}; }

// The inverse of a hermitian 6x6 block m (lower triangle and real diagonal used) by LDL^dag, written to inv
// (symmetrised); false when a pivot is not above 1e-14 of the largest diagonal entry (singular).
EMPRISM_HD inline bool invert_hermitian6(const Complex<double> m[6][6], Complex<double> inv[6][6]) {
  Complex<double> l[6][6];
  double d[6];
  double scale = 0;
  for (int i = 0; i < 6; ++i) scale = fmax(scale, fabs(m[i][i].re));
  for (int j = 0; j < 6; ++j) {
    double dj = m[j][j].re;
    for (int k = 0; k < j; ++k) dj -= norm2(l[j][k]) * d[k];
    if (!(fabs(dj) > 1e-14 * scale)) return false;
    d[j] = dj;
    for (int i = j + 1; i < 6; ++i) {
      Complex<double> s = m[i][j];
      for (int k = 0; k < j; ++k) s -= scaled(l[i][k], d[k]) * conj(l[j][k]);
      l[i][j] = {s.re / dj, s.im / dj};
    }
  }
  for (int c = 0; c < 6; ++c) {  // column c: L y = e_c, D z = y, L^dag x = z
    Complex<double> y[6];
    for (int i = 0; i < 6; ++i) {
      Complex<double> s = {i == c ? 1.0 : 0.0, 0.0};
      for (int k = 0; k < i; ++k) s -= l[i][k] * y[k];
      y[i] = s;
    }
    for (int i = 0; i < 6; ++i) y[i] = {y[i].re / d[i], y[i].im / d[i]};
    for (int i = 5; i >= 0; --i) {
      Complex<double> s = y[i];
      for (int k = i + 1; k < 6; ++k) s -= conj_mul(l[k][i], inv[k][c]);
      inv[i][c] = s;
    }
  }
  return true;
}

template <typename R>
EMPRISM_HD inline CloverBlock<R> pack_rounded(const Complex<double> m[6][6], bool symmetrise) {
  CloverBlock<R> b;
  for (int i = 0; i < 6; ++i) {
    b.diag[i] = R(symmetrise ? 0.5 * (m[i][i].re + m[i][i].re) : m[i][i].re);
    for (int j = 0; j < i; ++j) {
      Complex<double> v = m[i][j];
      if (symmetrise) v = 0.5 * (m[i][j] + conj(m[j][i]));
      b.lower[tri_index(i, j)] = {R(v.re), R(v.im)};
    }
  }
  return b;
}

// A and A^-1 of the sites of one parity: thread i = block * vh + cb builds chiral block `block` of site cb.
// Returns the number of singular blocks (a reduction), so the caller fails the run naming the site.
template <typename R>
struct CloverBuild {
  LatticeArg lat;
  ExtGaugeView u;
  int parity;
  int with_field;                    // 0 when csw = 0: A = A^-1 = 1
  int plane[6][2];                   // (mu, nu), mu < nu
  Complex<double> coef[6][2][2][2];  // [plane][block][s][t]: i csw kappa sigma_{mu nu}[2 block + s][2 block + t]
  CloverView<R> a, a_inv;

  EMPRISM_HD Sums<1> operator()(int i) const {
    const int b = i >= lat.vh ? 1 : 0, cb = i - b * lat.vh;
    int x[4];
    lat.coords(cb, parity, x);
    Complex<double> m[6][6];
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 6; ++c) m[r][c] = {r == c ? 1.0 : 0.0, 0.0};
    if (with_field) {
      for (int k = 0; k < 6; ++k) {
        const SU3<double> f = field_strength_of(u, x, plane[k][0], plane[k][1]);
        for (int s = 0; s < 2; ++s)
          for (int t = 0; t < 2; ++t) {
            const Complex<double> cf = coef[k][b][s][t];
            if (cf.re == 0.0 && cf.im == 0.0) continue;
            for (int c = 0; c < 3; ++c)
              for (int d = 0; d < 3; ++d) m[3 * s + c][3 * t + d] += cf * f.e[c][d];
          }
      }
    }
    a.store_block(cb, b, pack_rounded<R>(m, false));
    Complex<double> inv[6][6];
    if (!invert_hermitian6(m, inv)) return Sums<1>{{1.0}};
    a_inv.store_block(cb, b, pack_rounded<R>(inv, true));
    return Sums<1>{{0.0}};
  }
};

// The operator's fields of another precision rounded to R (mixed precision: the inner operator from the outer's,
// the same bits as building it from the double links; the links stay in their format Rc, their reals rounded):
// thread i = parity * vh + cb, the links of the site, A and A^-1 of site cb of parity p.
template <typename R, typename Ro, int Rc = 18>
struct ConvertOperatorFields {
  int vh;
  GaugeView<Ro, Rc> gin;
  GaugeView<R, Rc> gout;
  CloverView<Ro> ain[2], ain_inv[2];
  CloverView<R> aout[2], aout_inv[2];
  EMPRISM_HD static CloverSite<R> rounded(const CloverSite<Ro>& c) {
    CloverSite<R> r;
    for (int b = 0; b < 2; ++b) {
      for (int k = 0; k < 6; ++k) r.b[b].diag[k] = R(c.b[b].diag[k]);
      for (int k = 0; k < 15; ++k) r.b[b].lower[k] = {R(c.b[b].lower[k].re), R(c.b[b].lower[k].im)};
    }
    return r;
  }
  EMPRISM_HD void operator()(int i) const {
    const int p = i >= vh ? 1 : 0, cb = i - p * vh;
    for (int mu = 0; mu < 4; ++mu) gout.store_packed(p, cb, mu, round_link<R>(gin.load_packed(p, cb, mu)));
    aout[p].store(cb, rounded(ain[p].load(cb)));
    aout_inv[p].store(cb, rounded(ain_inv[p].load(cb)));
  }
};

// The half operator's fields from an operator of precision Ro (kernels/clover_half.hpp): the links rounded to fp32 in
// their format Rc, A^-1 rounded to fp32 and stored in 16 bits; A, which no kernel of the half operator reads, is not
// converted. Thread i = parity * vh + cb, as ConvertOperatorFields.
template <typename Ro, int Rc = 18>
struct ConvertHalfOperatorFields {
  int vh;
  GaugeView<Ro, Rc> gin;
  GaugeView<float, Rc> gout;
  CloverView<Ro> ain_inv[2];
  CloverView<Half> aout_inv[2];
  EMPRISM_HD void operator()(int i) const {
    const int p = i >= vh ? 1 : 0, cb = i - p * vh;
    for (int mu = 0; mu < 4; ++mu) gout.store_packed(p, cb, mu, round_link<float>(gin.load_packed(p, cb, mu)));
    const CloverSite<float> c = ConvertOperatorFields<float, Ro, Rc>::rounded(ain_inv[p].load(cb));
    for (int b = 0; b < 2; ++b) aout_inv[p].store_block(cb, b, c.b[b]);
  }
};

// The fp32 operator's compressed clover term (kernels/clover_dynamic.hpp) from its A in fp32: thread cb of one parity.
struct CompressClover {
  CloverView<float> a;
  CloverView<CloverDynamic, float> out;
  EMPRISM_HD void operator()(int cb) const {
    const CloverSite<float> s = a.load(cb);
    out.store_compressed(cb, CloverSiteC{{compress_block(s.b[0]), compress_block(s.b[1])}});
  }
};

}  // namespace emprism
