// sources.cpp: source construction (see sources.hpp).
#include "src/physics/sources.hpp"

#include <cmath>

#include "src/lattice/rng.hpp"

namespace emprism {

std::vector<std::complex<double>> make_source(const Geometry& g, const SourceParams& solve,
                                              const std::array<double, 4>& theta) {
  std::vector<std::complex<double>> src(static_cast<std::size_t>(g.local_volume()) * 12);
  const double pi = 3.14159265358979323846;
#pragma omp parallel for schedule(static)  // every site is written once; the RNG is counter-based (no state)
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    std::complex<double>* s = &src[static_cast<std::size_t>(lex * 12)];
    switch (solve.kind) {
      case SourceKind::Point: {
        bool here = true;
        for (int mu = 0; mu < 4; ++mu) here = here && (g.origin()[mu] + x[mu] == solve.site[mu]);
        if (here) s[solve.spin * 3 + solve.colour] = 1.0;
        break;
      }
      case SourceKind::Random: {
        const auto site = static_cast<std::uint64_t>(g.global_lex(x));
        for (std::uint32_t k = 0; k < 6; ++k) {
          double r[4];
          if (solve.noise == NoiseKind::Gaussian) {
            gaussian4(solve.seed, RngStream::NoiseSource, site, k, r);
            s[2 * k] = {r[0] * std::sqrt(0.5), r[1] * std::sqrt(0.5)};
            s[2 * k + 1] = {r[2] * std::sqrt(0.5), r[3] * std::sqrt(0.5)};
          } else {
            uniform4(solve.seed, RngStream::NoiseSource, site, k, r);
            s[2 * k] = r[0] <= 0.5 ? 1.0 : -1.0;
            s[2 * k + 1] = r[1] <= 0.5 ? 1.0 : -1.0;
          }
        }
        break;
      }
      case SourceKind::PlaneWave: {
        double phase = 0;
        for (int mu = 0; mu < 4; ++mu)
          phase += (2 * pi * solve.momentum[mu] + theta[mu]) / g.global()[mu] * (g.origin()[mu] + x[mu]);
        const std::complex<double> e(std::cos(phase), std::sin(phase));
        for (int k = 0; k < 12; ++k) s[k] = e * solve.spinor[static_cast<std::size_t>(k)];
        break;
      }
    }
  }
  return src;
}

}  // namespace emprism
