// gauge.cpp: host gauge field, generators and observables (see gauge.hpp).
#include "src/gauge.hpp"

#include <cmath>

#include "src/rng.hpp"

namespace emprism {

HostGauge::HostGauge(const Geometry& g) : geom_(&g), links_(static_cast<std::size_t>(g.local_volume()) * 4) {}

std::size_t HostGauge::offset(const int x[4], int mu) const {
  const Extents& l = geom_->local();
  int y[4];
  for (int nu = 0; nu < 4; ++nu) y[nu] = ((x[nu] % l[nu]) + l[nu]) % l[nu];
  const int p = geom_->parity(y);
  return (static_cast<std::size_t>(p) * geom_->half_volume() + geom_->cb_index(y)) * 4 + mu;
}

const SU3<double>& HostGauge::at(const int x[4], int mu) const { return links_[offset(x, mu)]; }
SU3<double>& HostGauge::at(const int x[4], int mu) { return links_[offset(x, mu)]; }

HostGauge make_unit_gauge(const Geometry& g) {
  HostGauge u(g);
  for (auto& l : u.links()) l = identity_su3<double>();
  return u;
}

namespace {

using C = Complex<double>;

double row_norm2(const C* r) { return norm2(r[0]) + norm2(r[1]) + norm2(r[2]); }

}  // namespace

SU3<double> project_su3(const SU3<double>& m) {
  SU3<double> u = m;
  double n0 = std::sqrt(row_norm2(u.e[0]));
  for (int j = 0; j < 3; ++j) u.e[0][j] = (1.0 / n0) * u.e[0][j];
  C d = conj_mul(u.e[0][0], u.e[1][0]) + conj_mul(u.e[0][1], u.e[1][1]) + conj_mul(u.e[0][2], u.e[1][2]);
  for (int j = 0; j < 3; ++j) u.e[1][j] = u.e[1][j] - d * u.e[0][j];
  double n1 = std::sqrt(row_norm2(u.e[1]));
  for (int j = 0; j < 3; ++j) u.e[1][j] = (1.0 / n1) * u.e[1][j];
  u.e[2][0] = conj(u.e[0][1] * u.e[1][2] - u.e[0][2] * u.e[1][1]);
  u.e[2][1] = conj(u.e[0][2] * u.e[1][0] - u.e[0][0] * u.e[1][2]);
  u.e[2][2] = conj(u.e[0][0] * u.e[1][1] - u.e[0][1] * u.e[1][0]);
  return u;
}

SU3<double> haar_su3_from_gaussians(const double gauss[18]) {
  SU3<double> m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m.e[i][j] = {gauss[2 * (3 * i + j)], gauss[2 * (3 * i + j) + 1]};
  return project_su3(m);
}

double unitarity_deviation(const SU3<double>& u) {
  const SU3<double> p = u * dagger(u);
  double dev = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const C d = p.e[i][j] - C{double(i == j), 0.0};
      dev = std::fmax(dev, std::sqrt(norm2(d)));
    }
  const C det = u.e[0][0] * (u.e[1][1] * u.e[2][2] - u.e[1][2] * u.e[2][1]) -
                u.e[0][1] * (u.e[1][0] * u.e[2][2] - u.e[1][2] * u.e[2][0]) +
                u.e[0][2] * (u.e[1][0] * u.e[2][1] - u.e[1][1] * u.e[2][0]);
  return std::fmax(dev, std::sqrt(norm2(det - C{1.0, 0.0})));
}

HostGauge make_random_gauge(const Geometry& g, std::uint64_t seed, double width) {
  HostGauge u(g);
  const std::int64_t vol = g.local_volume();
#pragma omp parallel for schedule(static)
  for (std::int64_t lex = 0; lex < vol; ++lex) {
    int x[4];
    g.local_coords(lex, x);
    const std::uint64_t site = static_cast<std::uint64_t>(g.global_lex(x));
    for (int mu = 0; mu < 4; ++mu) {
      double gauss[20];
      for (std::uint32_t k = 0; k < 5; ++k) gaussian4(seed, RngStream::GaugeLinks, site, 8u * mu + k, gauss + 4 * k);
      const SU3<double> h = haar_su3_from_gaussians(gauss);
      SU3<double> m;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) m.e[i][j] = width * h.e[i][j] + C{(1.0 - width) * (i == j), 0.0};
      u.at(x, mu) = (width == 1.0) ? h : project_su3(m);
    }
  }
  return u;
}

double plaquette(const HostGauge& u) {
  const Geometry& g = u.geometry();
  const std::int64_t vol = g.local_volume();
  double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (std::int64_t lex = 0; lex < vol; ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu)
      for (int nu = mu + 1; nu < 4; ++nu) {
        int xm[4] = {x[0], x[1], x[2], x[3]}, xn[4] = {x[0], x[1], x[2], x[3]};
        xm[mu] += 1;
        xn[nu] += 1;
        const SU3<double> p = u.at(x, mu) * u.at(xm, nu) * dagger(u.at(xn, mu)) * dagger(u.at(x, nu));
        sum += trace(p).re / 3.0;
      }
  }
  return sum / (6.0 * vol);
}

double link_trace(const HostGauge& u) {
  double sum = 0;
  for (const auto& l : u.links()) sum += trace(l).re / 3.0;
  return sum / static_cast<double>(u.links().size());
}

template <typename R>
void upload_gauge(const HostGauge& host, GaugeField<R>& dev) {
  std::vector<SU3<R>> h(host.links().size());
  for (std::size_t i = 0; i < h.size(); ++i)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) h[i].e[a][b] = {R(host.links()[i].e[a][b].re), R(host.links()[i].e[a][b].im)};
  dev.buffer().from_host(h);
}
template void upload_gauge<float>(const HostGauge&, GaugeField<float>&);
template void upload_gauge<double>(const HostGauge&, GaugeField<double>&);

std::vector<std::complex<double>> gauge_to_natural(const HostGauge& u) {
  const Geometry& g = u.geometry();
  std::vector<std::complex<double>> nat(static_cast<std::size_t>(g.local_volume()) * 36);
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          const C v = u.at(x, mu).e[a][b];
          nat[static_cast<std::size_t>(((lex * 4 + mu) * 3 + a) * 3 + b)] = {v.re, v.im};
        }
  }
  return nat;
}

void gauge_from_natural(const std::vector<std::complex<double>>& nat, HostGauge& u) {
  const Geometry& g = u.geometry();
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          const auto v = nat[static_cast<std::size_t>(((lex * 4 + mu) * 3 + a) * 3 + b)];
          u.at(x, mu).e[a][b] = {v.real(), v.imag()};
        }
  }
}

}  // namespace emprism
