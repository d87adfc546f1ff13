// sources.hpp: the right-hand sides of [[solve]] tables, built on the local sites in local natural order
// (field_io.hpp) from global coordinates, so a source does not depend on the decomposition:
//   point       1 at (site, spin, colour)
//   propagator  the same: one spin-colour column of the point source at site (the caller sets spin, colour)
//   random      per global site and component from the counter-based RNG keyed by (seed, global site):
//               gaussian: re, im ~ N(0, 1/2) (E|z|^2 = 1); z2: +1 or -1 (real)
//   plane_wave  exp(i p.x) eta, p_mu = (2 pi n_mu + theta_mu) / L_mu (docs/conventions.md section 5)
// Who may call: anyone on the rank.
#pragma once

#include <array>
#include <complex>
#include <vector>

#include "src/config.hpp"
#include "src/geometry.hpp"

namespace emprism {

std::vector<std::complex<double>> make_source(const Geometry& g, const SolveConfig& solve,
                                              const std::array<double, 4>& theta);

const char* source_kind_name(SourceKind k);

}  // namespace emprism
