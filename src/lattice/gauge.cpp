// gauge.cpp: host gauge field, generators and observables (see gauge.hpp).
#include "src/lattice/gauge.hpp"

#include <cmath>
#include <limits>

#include "comm/host_halo.hpp"
#include "kernels/gauge_generate.hpp"
#include "kernels/gauge_observables.hpp"
#include "src/lattice/ordered_sum.hpp"
#include "src/lattice/rng.hpp"

namespace emprism {

HostGauge::HostGauge(const Geometry& g) : HostGauge(g, Uninitialised{}) {
  const std::int64_t n = static_cast<std::int64_t>(links_.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) links_[static_cast<std::size_t>(i)] = SU3<double>{};
}

HostGauge::HostGauge(const Geometry& g, Uninitialised) : geom_(&g) { links_.resize(g.halo_box().sites() * 4); }

namespace {

constexpr int kGaugeHaloTag = 100;  // fill_host_halo: tags 100..113
constexpr int kLinkHaloTag = 300;   // fill_link_halo: tags 300..313

}  // namespace

void HostGauge::fill_halo(const ProcessGrid* grid) {
  fill_host_halo(links_.data(), geom_->halo_box(4 * sizeof(SU3<double>)), grid, kGaugeHaloTag);
}

void HostGauge::fill_link_halo(int mu, const ProcessGrid* grid) {
  HaloBox box = geom_->halo_box(4 * sizeof(SU3<double>));
  box.offset = static_cast<std::size_t>(mu) * sizeof(SU3<double>);
  box.bytes = sizeof(SU3<double>);
  fill_host_halo(links_.data(), box, grid, kLinkHaloTag);
}

HostGauge make_unit_gauge(const Geometry& g) {
  HostGauge u(g, HostGauge::Uninitialised{});  // every link of the box, halo included, set here
  HostGauge::Storage& links = u.storage();
  const std::int64_t n = static_cast<std::int64_t>(links.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) links[static_cast<std::size_t>(i)] = identity_su3<double>();
  return u;
}

namespace {

using C = Complex<double>;

}  // namespace

SU3<double> project_su3(const SU3<double>& m) { return project_to_su3(m); }

SU3<double> haar_su3_from_gaussians(const double gauss[18]) { return haar_from_gaussians(gauss); }

double unitarity_deviation(const SU3<double>& u) {
  for (int i = 0; i < 3; ++i)  // std::fmax below drops NaN: a link with a NaN or Inf is no SU(3) matrix at all
    for (int j = 0; j < 3; ++j)
      if (!std::isfinite(u.e[i][j].re) || !std::isfinite(u.e[i][j].im)) return std::numeric_limits<double>::infinity();
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

double su3_tolerance(int precision_bits) { return precision_bits == 32 ? 1e-5 : 1e-10; }

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
  u.fill_halo();
  return u;
}

double plaquette(const HostGauge& u, Communicator* comm) {
  const Geometry& g = u.geometry();
  const std::int64_t vol = g.local_volume();
  const double sum = ordered_sum(vol, [&](std::int64_t lex) {
    int x[4];
    g.local_coords(lex, x);
    return site_plaquettes(u, x);
  });
  double v[2] = {sum, static_cast<double>(vol)};
  if (comm) comm->sum(v, 2);
  return v[0] / (6.0 * v[1]);
}

double link_trace(const HostGauge& u, Communicator* comm) {
  const Geometry& g = u.geometry();
  const double sum = ordered_sum(g.local_volume(), [&](std::int64_t lex) {
    int x[4];
    g.local_coords(lex, x);
    double t = 0;
    for (int mu = 0; mu < 4; ++mu) t += trace(u.at(x, mu)).re / 3.0;
    return t;
  });
  double v[2] = {sum, static_cast<double>(g.local_volume())};
  if (comm) comm->sum(v, 2);
  return v[0] / (4.0 * v[1]);
}

template <typename R>
void upload_gauge(const HostGauge& host, GaugeField<R>& dev) {
  const Geometry& g = host.geometry();
  std::vector<SU3<R>> h(static_cast<std::size_t>(g.local_volume()) * 4);
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    const std::size_t site = static_cast<std::size_t>(g.parity(x)) * g.half_volume() + g.cb_index(x);
    for (int mu = 0; mu < 4; ++mu)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          h[site * 4 + mu].e[a][b] = {R(host.at(x, mu).e[a][b].re), R(host.at(x, mu).e[a][b].im)};
  }
  dev.upload(h);
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
  u.fill_halo();
}

}  // namespace emprism
