// rng.hpp: counter-based random numbers (Random123 Philox4x32-10, Debian librandom123-dev). A draw is a pure
// function of (seed, stream, global site, index), so fields do not depend on how the lattice is split
// over ranks or threads. Streams keep independent uses (gauge links, noise sources) apart.
// Who may call: anyone.
#pragma once

#include <Random123/philox.h>

#include <Random123/uniform.hpp>
#include <cmath>
#include <cstdint>

namespace emprism {

enum class RngStream : std::uint32_t { GaugeLinks = 1, NoiseSource = 2 };

// Four uniforms in (0, 1] for the given counter.
inline void uniform4(std::uint64_t seed, RngStream stream, std::uint64_t site, std::uint32_t index, double out[4]) {
  using Philox = r123::Philox4x32;
  Philox rng;
  Philox::key_type key = {{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  Philox::ctr_type ctr = {{static_cast<std::uint32_t>(site), static_cast<std::uint32_t>(site >> 32),
                           static_cast<std::uint32_t>(stream), index}};
  const Philox::ctr_type r = rng(ctr, key);
  for (int k = 0; k < 4; ++k) out[k] = r123::u01<double>(r[k]);  // (0, 1]
}

// Two pairs of independent standard normal numbers (Box-Muller) for the given counter.
inline void gaussian4(std::uint64_t seed, RngStream stream, std::uint64_t site, std::uint32_t index, double out[4]) {
  double u[4];
  uniform4(seed, stream, site, index, u);
  const double two_pi = 6.283185307179586476925286766559;
  for (int k = 0; k < 2; ++k) {
    const double rad = std::sqrt(-2.0 * std::log(u[2 * k]));
    out[2 * k] = rad * std::cos(two_pi * u[2 * k + 1]);
    out[2 * k + 1] = rad * std::sin(two_pi * u[2 * k + 1]);
  }
}

}  // namespace emprism
