// gpu_support.hpp: helpers shared by the GPU tests (label gpu): whether a device is present (the tests skip
// cleanly without one) and the restriction of a natural-order field (tests/reference's layout) to one parity.
// Who may call: tests only.
#pragma once

#include <complex>
#include <vector>

#include "kernels/backend/runtime.hpp"
#include "reference/reference.hpp"

namespace emprism::test {

// True on the CPU backend and on a GPU build without a visible device: the GPU tests skip.
inline bool no_gpu() { return backend::device_is_host() || backend::device_count() == 0; }

// Keeps the sites of one parity (x+y+z+t mod 2) of a field on lattice `lat` (12 components per site), zeroes the
// others.
inline std::vector<std::complex<double>> on_parity(const ref::Extents& lat,
                                                   const std::vector<std::complex<double>>& psi, int parity) {
  std::vector<std::complex<double>> out(psi.size());
  for (std::size_t s = 0; s < psi.size() / 12; ++s) {
    const ref::Coords x = ref::site_coords(lat, static_cast<int>(s));
    if (((x[0] + x[1] + x[2] + x[3]) & 1) == parity)
      for (int k = 0; k < 12; ++k) out[s * 12 + k] = psi[s * 12 + k];
  }
  return out;
}

}  // namespace emprism::test
