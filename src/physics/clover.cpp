// clover.cpp: clover term construction and block inversion (see clover.hpp).
#include "src/physics/clover.hpp"

#include <cmath>
#include <string>

#include "kernels/clover_build.hpp"
#include "kernels/errors.hpp"

namespace emprism {

namespace {

using Cd = std::complex<double>;
using Mat4 = std::array<std::array<Cd, 4>, 4>;

Mat4 mat4_mul(const Mat4& a, const Mat4& b) {
  Mat4 r{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) r[i][j] += a[i][k] * b[k][j];
  return r;
}

// gamma_mu in the chiral basis of docs/conventions.md section 3.
Mat4 gamma_matrix(int mu) {
  const Cd I(0, 1);
  // Pauli matrices
  const Cd s[3][2][2] = {{{0, 1}, {1, 0}}, {{0, -I}, {I, 0}}, {{1, 0}, {0, -1}}};
  Mat4 g{};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      if (mu < 3) {
        g[i][2 + j] = -I * s[mu][i][j];
        g[2 + i][j] = I * s[mu][i][j];
      } else {
        g[i][2 + j] = (i == j) ? 1.0 : 0.0;
        g[2 + i][j] = (i == j) ? 1.0 : 0.0;
      }
    }
  return g;
}

// sigma_{mu nu} = (i/2) [gamma_mu, gamma_nu]
Mat4 sigma_matrix(int mu, int nu) {
  const Mat4 a = mat4_mul(gamma_matrix(mu), gamma_matrix(nu));
  const Mat4 b = mat4_mul(gamma_matrix(nu), gamma_matrix(mu));
  Mat4 r{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) r[i][j] = Cd(0, 0.5) * (a[i][j] - b[i][j]);
  return r;
}

}  // namespace

SU3<double> field_strength(const HostGauge& u, const int x[4], int mu, int nu) {
  return field_strength_of(u, x, mu, nu);
}

Dense6 unpack_block(const CloverBlock<double>& b) {
  Dense6 m{};
  for (int i = 0; i < 6; ++i) {
    m[i][i] = b.diag[i];
    for (int j = 0; j < i; ++j) {
      const auto& l = b.lower[tri_index(i, j)];
      m[i][j] = Cd(l.re, l.im);
      m[j][i] = Cd(l.re, -l.im);
    }
  }
  return m;
}

CloverBlock<double> pack_block(const Dense6& m) {
  CloverBlock<double> b;
  for (int i = 0; i < 6; ++i) {
    b.diag[i] = m[i][i].real();
    for (int j = 0; j < i; ++j) b.lower[tri_index(i, j)] = {m[i][j].real(), m[i][j].imag()};
  }
  return b;
}

bool invert_block(const CloverBlock<double>& blk, CloverBlock<double>& inv) {
  // A = L D L^dag, L unit lower triangular, D real diagonal (A hermitian).
  const Dense6 a = unpack_block(blk);
  Dense6 l{};
  double d[6];
  double scale = 0;
  for (int i = 0; i < 6; ++i) scale = std::fmax(scale, std::abs(a[i][i]));
  for (int j = 0; j < 6; ++j) {
    double dj = a[j][j].real();
    for (int k = 0; k < j; ++k) dj -= std::norm(l[j][k]) * d[k];
    if (!(std::abs(dj) > 1e-14 * scale)) return false;
    d[j] = dj;
    l[j][j] = 1.0;
    for (int i = j + 1; i < 6; ++i) {
      Cd s = a[i][j];
      for (int k = 0; k < j; ++k) s -= l[i][k] * d[k] * std::conj(l[j][k]);
      l[i][j] = s / dj;
    }
  }
  // Columns of A^-1: solve L y = e, D z = y, L^dag x = z.
  Dense6 r{};
  for (int c = 0; c < 6; ++c) {
    Cd y[6];
    for (int i = 0; i < 6; ++i) {
      Cd s = (i == c) ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) s -= l[i][k] * y[k];
      y[i] = s;
    }
    for (int i = 0; i < 6; ++i) y[i] /= d[i];
    for (int i = 5; i >= 0; --i) {
      Cd s = y[i];
      for (int k = i + 1; k < 6; ++k) s -= std::conj(l[k][i]) * r[k][c];
      r[i][c] = s;
    }
  }
  // Symmetrise away rounding before packing (the inverse of a hermitian matrix is hermitian).
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j <= i; ++j) {
      const Cd v = 0.5 * (r[i][j] + std::conj(r[j][i]));
      r[i][j] = v;
      r[j][i] = std::conj(v);
    }
  inv = pack_block(r);
  return true;
}

void clover_plane_coefficients(double kappa, double csw, int plane[6][2], Complex<double> coef[6][2][2][2]) {
  int k = 0;
  for (int mu = 0; mu < 4; ++mu)
    for (int nu = mu + 1; nu < 4; ++nu, ++k) {
      const Mat4 sig = sigma_matrix(mu, nu);
      plane[k][0] = mu;
      plane[k][1] = nu;
      for (int b = 0; b < 2; ++b)
        for (int s = 0; s < 2; ++s)
          for (int t = 0; t < 2; ++t) {
            const Cd c = Cd(0, csw * kappa) * sig[2 * b + s][2 * b + t];  // as make_clover forms it
            coef[k][b][s][t] = {c.real(), c.imag()};
          }
    }
}

HostClover make_clover(const HostGauge& u, double kappa, double csw) {
  const Geometry& g = u.geometry();
  HostClover out;
  out.kappa = kappa;
  out.csw = csw;
  for (int p = 0; p < 2; ++p) {
    out.a[p].resize(static_cast<std::size_t>(g.half_volume()));
    out.a_inv[p].resize(static_cast<std::size_t>(g.half_volume()));
  }
  Mat4 sig[6];
  int planes[6][2];
  int np = 0;
  for (int mu = 0; mu < 4; ++mu)
    for (int nu = mu + 1; nu < 4; ++nu) {
      sig[np] = sigma_matrix(mu, nu);
      planes[np][0] = mu;
      planes[np][1] = nu;
      ++np;
    }
  const std::int64_t vol = g.local_volume();
  std::int64_t bad_site = -1;
#pragma omp parallel for schedule(static)
  for (std::int64_t lex = 0; lex < vol; ++lex) {
    int x[4];
    g.local_coords(lex, x);
    Dense6 blocks[2]{};
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 6; ++i) blocks[b][i][i] = 1.0;
    if (csw != 0.0) {
      for (int k = 0; k < 6; ++k) {
        const SU3<double> f = field_strength(u, x, planes[k][0], planes[k][1]);
        for (int b = 0; b < 2; ++b)
          for (int s = 0; s < 2; ++s)
            for (int t = 0; t < 2; ++t) {
              const Cd coef = Cd(0, csw * kappa) * sig[k][2 * b + s][2 * b + t];
              if (coef == 0.0) continue;
              for (int c = 0; c < 3; ++c)
                for (int d = 0; d < 3; ++d) blocks[b][3 * s + c][3 * t + d] += coef * Cd(f.e[c][d].re, f.e[c][d].im);
            }
      }
    }
    const int p = g.parity(x);
    const std::size_t cb = static_cast<std::size_t>(g.cb_index(x));
    for (int b = 0; b < 2; ++b) {
      out.a[p][cb].b[b] = pack_block(blocks[b]);
      if (!invert_block(out.a[p][cb].b[b], out.a_inv[p][cb].b[b])) {
#pragma omp critical
        bad_site = lex;
      }
    }
  }
  if (bad_site >= 0) {
    int x[4];
    g.local_coords(bad_site, x);
    throw RuntimeFailure("clover term is singular at site (" + std::to_string(x[0]) + "," + std::to_string(x[1]) + "," +
                         std::to_string(x[2]) + "," + std::to_string(x[3]) + "); reduce dirac.csw or kappa");
  }
  return out;
}

template <typename R>
void upload_clover(const std::vector<CloverSite<double>>& host, CloverField<R>& dev) {
  std::vector<CloverSite<R>> h(host.size());
  for (std::size_t i = 0; i < h.size(); ++i)
    for (int b = 0; b < 2; ++b) {
      for (int k = 0; k < 6; ++k) h[i].b[b].diag[k] = R(host[i].b[b].diag[k]);
      for (int k = 0; k < 15; ++k) h[i].b[b].lower[k] = {R(host[i].b[b].lower[k].re), R(host[i].b[b].lower[k].im)};
    }
  dev.upload(h);
}
template void upload_clover<float>(const std::vector<CloverSite<double>>&, CloverField<float>&);
template void upload_clover<double>(const std::vector<CloverSite<double>>&, CloverField<double>&);

}  // namespace emprism
