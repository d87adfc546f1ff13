// sources.hpp: the right-hand sides of the solves, built on the local sites in local natural order
// (field_io.hpp) from global coordinates, so a source does not depend on the decomposition:
//   point       1 at (site, spin, colour) (also one spin-colour column of a propagator's point source)
//   random      per global site and component from the counter-based RNG keyed by (seed, global site):
//               gaussian: re, im ~ N(0, 1/2) (E|z|^2 = 1); z2: +1 or -1 (real)
//   plane_wave  exp(i p.x) eta, p_mu = (2 pi n_mu + theta_mu) / L_mu (docs/conventions.md section 5)
// Who may call: anyone on the rank.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

#include "src/lattice/geometry.hpp"

namespace emprism {

enum class SourceKind { Point, Random, PlaneWave };
enum class NoiseKind { Gaussian, Z2 };

struct SourceParams {
  SourceKind kind = SourceKind::Point;
  std::array<int, 4> site{0, 0, 0, 0};  // point: global coordinates
  int spin = 0, colour = 0;             // point
  std::uint64_t seed = 1;               // random
  NoiseKind noise = NoiseKind::Gaussian;
  std::array<int, 4> momentum{0, 0, 0, 0};        // plane wave: n_mu
  std::array<std::complex<double>, 12> spinor{};  // plane wave: eta, index 3 * spin + colour
};

// This rank's block of the source (local volume * 12, local natural order); theta: the boundary phases (radians).
std::vector<std::complex<double>> make_source(const Geometry& g, const SourceParams& source,
                                              const std::array<double, 4>& theta);

}  // namespace emprism
