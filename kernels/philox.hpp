// philox.hpp: the counter-based generator of src/lattice/rng.hpp (Philox4x32-10 of Salmon et al., SC11, as
// Random123 implements it: ten rounds of the multipliers 0xD2511F53, 0xCD9E8D57 with the Weyl key increments
// 0x9E3779B9, 0xBB67AE85; uniforms u01 = r 2^-32 + 2^-33 in (0, 1], exact in double) written as host-and-device
// code, so kernels draw the numbers the host draws. tests/test_gauge_device.cpp checks it against Random123 bit for
// bit. The counter is (site low, site high, stream, index), the key (seed low, seed high), as rng.hpp.
// Who may call: kernels and host code alike.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/backend/defs.hpp"

namespace emprism {

struct Philox4 {
  std::uint32_t v[4];
};

EMPRISM_HD inline Philox4 philox4x32_10(Philox4 c, std::uint32_t k0, std::uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c.v[0], p1 = std::uint64_t{0xCD9E8D57u} * c.v[2];
    const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c = Philox4{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
  }
  return c;
}

// Four uniforms in (0, 1] for the counter (rng.hpp's uniform4).
EMPRISM_HD inline void philox_uniform4(std::uint64_t seed, std::uint32_t stream, std::uint64_t site,
                                       std::uint32_t index, double out[4]) {
  const Philox4 r =
      philox4x32_10(Philox4{{static_cast<std::uint32_t>(site), static_cast<std::uint32_t>(site >> 32), stream, index}},
                    static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  const double factor = 1.0 / 4294967296.0;
  for (int k = 0; k < 4; ++k) out[k] = double(r.v[k]) * factor + 0.5 * factor;
}

// Two pairs of standard normals by Box-Muller (rng.hpp's gaussian4, the same operations).
EMPRISM_HD inline void philox_gaussian4(std::uint64_t seed, std::uint32_t stream, std::uint64_t site,
                                        std::uint32_t index, double out[4]) {
  double u[4];
  philox_uniform4(seed, stream, site, index, u);
  const double two_pi = 6.283185307179586476925286766559;
  for (int k = 0; k < 2; ++k) {
    const double rad = sqrt(-2.0 * log(u[2 * k]));
    out[2 * k] = rad * cos(two_pi * u[2 * k + 1]);
    out[2 * k + 1] = rad * sin(two_pi * u[2 * k + 1]);
  }
}

}  // namespace emprism
