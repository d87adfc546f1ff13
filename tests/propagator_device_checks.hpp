// propagator_device_checks.hpp: the device propagator pipeline (point source, quark smearing, contractions:
// src/physics/smearing_device.hpp, contraction_device.hpp) against the host code it replaces (sources.cpp,
// smearing.cpp, contractions.cpp, the reference of the existing physics tests), on one rank. Each check returns the
// largest difference relative to the largest host value; tests/test_propagator_device.cpp requires 0 on the CPU
// backend (the same per-site code in the same order), tests/gpu/test_gpu_propagator.cpp a rounding bound on a GPU.
// Who may call: the tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "operator_fixture.hpp"
#include "src/physics/contraction_device.hpp"
#include "src/physics/smearing_device.hpp"
#include "src/physics/sources_device.hpp"

namespace emprism::test {

inline double max_rel_diff(const std::vector<Cd>& dev, const std::vector<Cd>& host) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    d = std::max(d, std::abs(dev[i] - host[i]));
    s = std::max(s, std::abs(host[i]));
  }
  return s > 0 ? d / s : d;
}

// Random columns on the block `g` (seeded per column), host and device alike.
inline Propagator random_propagator(const Geometry& g, unsigned seed) {
  Propagator p;
  for (int k = 0; k < 12; ++k) {
    std::vector<Cd> col = ref::random_spinor(g.local(), seed + static_cast<unsigned>(k));
    p.columns[static_cast<std::size_t>(k)] = std::move(col);
  }
  return p;
}

// All channels at three momenta from source site x0: device vs host, the largest relative difference per correlator.
inline double contraction_difference(const Geometry& g, const std::array<int, 4>& x0, unsigned seed) {
  const Propagator host = random_propagator(g, seed);
  DevicePropagator dev(g);
  for (int k = 0; k < 12; ++k) spinor_from_natural(g, host.columns[static_cast<std::size_t>(k)], dev.column(k));
  const std::vector<std::array<int, 3>> momenta{{0, 0, 0}, {1, 0, 0}, {0, 2, -1}};
  MetricsRegistry metrics;
  const auto want = meson_correlators(g, host, x0, {}, momenta, nullptr);
  const auto got = meson_correlators_device(metrics, g, dev, x0, {}, momenta, nullptr);
  if (got.size() != want.size()) return 1.0;
  double d = 0;
  for (std::size_t c = 0; c < want.size(); ++c) {
    if (got[c].channel != want[c].channel || got[c].momentum != want[c].momentum) return 1.0;
    d = std::max(d, max_rel_diff(got[c].values, want[c].values));
  }
  return d;
}

// Smearing of a random field (every timeslice filled) with the links of u, smeared on the device (SourceSmearing) and
// on the host (SourceSmearer::apply).
inline double smearing_difference(const HostGauge& u, int t0, const SmearingParams& cfg, unsigned seed) {
  const Geometry& g = u.geometry();
  const SourceSmearer s(u, t0, cfg, nullptr, nullptr);
  std::vector<Cd> host = ref::random_spinor(g.local(), seed);
  SpinorField<double> f(g);
  spinor_from_natural(g, host, f);
  s.apply(host);
  MetricsRegistry metrics;
  SourceSmearing(metrics, u, t0, cfg, nullptr, nullptr).apply(f);
  return max_rel_diff(spinor_to_natural(g, f), host);
}

// The smeared slice links and their spatial plaquette: SourceSmearing (device) vs SourceSmearer (host), the largest
// difference of an entry of a link (links are O(1)) over the interior and the halo, and of the plaquette.
struct LinkSmearingDifference {
  double links = 1, plaquette = 1;
};
// dev (optional): the device copy of u, which the device smearing then reads instead of u (the run's random field).
inline LinkSmearingDifference link_smearing_difference(const HostGauge& u, int t0, const SmearingParams& cfg,
                                                       const DeviceGauge* dev = nullptr) {
  const SourceSmearer s(u, t0, cfg, nullptr, nullptr);
  MetricsRegistry metrics;
  const SourceSmearing d = dev ? SourceSmearing(metrics, dev->data(), dev->geometry(), t0, cfg, nullptr, nullptr)
                               : SourceSmearing(metrics, u, t0, cfg, nullptr, nullptr);
  const std::vector<SU3<double>> got = d.download_links();
  LinkSmearingDifference r;
  if (got.size() != s.links().size() || got.empty()) return r;
  r.links = 0;
  for (std::size_t k = 0; k < got.size(); ++k)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        r.links = std::max(r.links, std::abs(Cd(got[k].e[i][j].re, got[k].e[i][j].im) -
                                             Cd(s.links()[k].e[i][j].re, s.links()[k].e[i][j].im)));
  r.plaquette = std::abs(d.spatial_plaquette() - s.spatial_plaquette());
  return r;
}

// The point source built on the device vs make_source (exact: no arithmetic).
inline bool point_source_matches(const Geometry& g, const std::array<int, 4>& site, int spin, int colour) {
  SourceParams p;
  p.site = site;
  p.spin = spin;
  p.colour = colour;
  const std::vector<Cd> host = make_source(g, p, {0, 0, 0, 0});
  SpinorField<double> f(g);
  MetricsRegistry metrics;
  make_point_source_device(metrics, g, site, spin, colour, f);
  return spinor_to_natural(g, f) == host;
}

// A random (Gaussian or Z2) or plane-wave source built on the device vs make_source, relative to the largest value.
inline double source_difference(const Geometry& g, const SourceParams& p, const std::array<double, 4>& theta) {
  const std::vector<Cd> host = make_source(g, p, theta);
  SpinorField<double> f(g);
  MetricsRegistry metrics;
  make_source_device(metrics, g, p, theta, f);
  return max_rel_diff(spinor_to_natural(g, f), host);
}

inline SourceParams noise_source_params(NoiseKind noise, std::uint64_t seed) {
  SourceParams p;
  p.kind = SourceKind::Random;
  p.noise = noise;
  p.seed = seed;
  return p;
}

// exp(i p.x) eta at momentum n with a spinor eta of distinct components.
inline SourceParams plane_wave_params(const std::array<int, 4>& n) {
  SourceParams p;
  p.kind = SourceKind::PlaneWave;
  p.momentum = n;
  for (int k = 0; k < 12; ++k) p.spinor[static_cast<std::size_t>(k)] = {0.1 * (k + 1), -0.05 * k};
  return p;
}

}  // namespace emprism::test
