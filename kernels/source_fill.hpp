// source_fill.hpp: the random (Gaussian or Z2 noise) and plane-wave sources of src/physics/sources.hpp built per site
// by a kernel into the spinor field of one parity, from global coordinates, with the host's draws and operations
// (philox.hpp's philox_gaussian4 / philox_uniform4 on the counter (seed, NoiseSource stream, global lexicographic
// site, k) for components 2k and 2k + 1; the plane wave's phase summed over mu in the host's order), so the source does
// not depend on the decomposition and, on the CPU backend, has make_source's bits. Component n = 3 spin + colour.
// Who may call: src/physics/sources_device.cpp.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/lattice_arg.hpp"
#include "kernels/philox.hpp"
#include "kernels/views.hpp"

namespace emprism {

constexpr std::uint32_t kNoiseSourceStream = 2;  // RngStream::NoiseSource of src/lattice/rng.hpp

// The global lexicographic index of local site x (Geometry::global_lex).
EMPRISM_HD inline std::int64_t global_lex_of(const LatticeArg& lat, const int x[4]) {
  std::int64_t idx = 0;
  for (int mu = 3; mu >= 0; --mu) idx = idx * lat.g[mu] + (lat.origin[mu] + x[mu]);
  return idx;
}

EMPRISM_HD inline void set_component(Spinor<double>& s, int n, Complex<double> v) { s.s[n / 3].c[n % 3] = v; }

// Thread = site cb of `parity`: the noise of sources.hpp (gaussian: re, im ~ N(0, 1/2); z2: +1 or -1, real).
struct NoiseSource {
  LatticeArg lat;
  int parity;
  std::uint64_t seed;
  int z2;  // 0: Gaussian noise, 1: Z2 noise
  SpinorView<double> f;
  EMPRISM_HD void operator()(int cb) const {
    int x[4];
    lat.coords(cb, parity, x);
    const auto site = static_cast<std::uint64_t>(global_lex_of(lat, x));
    Spinor<double> s;
    for (std::uint32_t k = 0; k < 6; ++k) {
      double r[4];
      const int n = 2 * static_cast<int>(k);
      if (!z2) {
        philox_gaussian4(seed, kNoiseSourceStream, site, k, r);
        const double h = sqrt(0.5);
        set_component(s, n, {r[0] * h, r[1] * h});
        set_component(s, n + 1, {r[2] * h, r[3] * h});
      } else {
        philox_uniform4(seed, kNoiseSourceStream, site, k, r);
        set_component(s, n, {r[0] <= 0.5 ? 1.0 : -1.0, 0.0});
        set_component(s, n + 1, {r[1] <= 0.5 ? 1.0 : -1.0, 0.0});
      }
    }
    f.store(cb, s);
  }
};

// Thread = site cb of `parity`: exp(i p.x) eta with p_mu = (2 pi n_mu + theta_mu) / L_mu (global extents).
struct PlaneWaveSource {
  LatticeArg lat;
  int parity;
  double k[4];  // 2 pi n_mu + theta_mu
  Complex<double> eta[12];
  SpinorView<double> f;
  EMPRISM_HD void operator()(int cb) const {
    int x[4];
    lat.coords(cb, parity, x);
    double phase = 0;
    for (int mu = 0; mu < 4; ++mu) phase += k[mu] / lat.g[mu] * (lat.origin[mu] + x[mu]);
    const Complex<double> e{cos(phase), sin(phase)};
    Spinor<double> s;
    for (int n = 0; n < 12; ++n) set_component(s, n, e * eta[n]);
    f.store(cb, s);
  }
};

}  // namespace emprism
