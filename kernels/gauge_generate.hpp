// gauge_generate.hpp: the random gauge field of src/lattice/gauge.hpp generated per site by a kernel, straight into
// the host field's storage layout (the local block with its one-site halo, kernels/clover_build.hpp's ExtGaugeView):
// U_mu(x) = H for width 1, else P((1 - w) 1 + w H), H Haar-random from 18 normals of the counter (seed, GaugeLinks,
// global site, 8 mu + k). The halo sites are computed from their global coordinates (periodic wrap), which is what the
// neighbouring rank holds there, so no exchange is needed and the field does not depend on the decomposition.
// UnitGaugeExt: the unit field in the same layout, halo included.
// Also the SU(3) projection the host uses (gauge.cpp calls these), so both run the same operations.
// Who may call: src/physics/gauge_device.cpp and src/lattice/gauge.cpp.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/philox.hpp"
#include "kernels/su3.hpp"

namespace emprism {

constexpr std::uint32_t kGaugeLinksStream = 1;  // RngStream::GaugeLinks of src/lattice/rng.hpp

// Rows 0, 1 orthonormalised (Gram-Schmidt), row 2 = conj(row0 x row1).
EMPRISM_HD inline SU3<double> project_to_su3(const SU3<double>& m) {
  using C = Complex<double>;
  SU3<double> u = m;
  const double n0 = sqrt(norm2(u.e[0][0]) + norm2(u.e[0][1]) + norm2(u.e[0][2]));
  for (int j = 0; j < 3; ++j) u.e[0][j] = (1.0 / n0) * u.e[0][j];
  const C d = conj_mul(u.e[0][0], u.e[1][0]) + conj_mul(u.e[0][1], u.e[1][1]) + conj_mul(u.e[0][2], u.e[1][2]);
  for (int j = 0; j < 3; ++j) u.e[1][j] = u.e[1][j] - d * u.e[0][j];
  const double n1 = sqrt(norm2(u.e[1][0]) + norm2(u.e[1][1]) + norm2(u.e[1][2]));
  for (int j = 0; j < 3; ++j) u.e[1][j] = (1.0 / n1) * u.e[1][j];
  u.e[2][0] = conj(u.e[0][1] * u.e[1][2] - u.e[0][2] * u.e[1][1]);
  u.e[2][1] = conj(u.e[0][2] * u.e[1][0] - u.e[0][0] * u.e[1][2]);
  u.e[2][2] = conj(u.e[0][0] * u.e[1][1] - u.e[0][1] * u.e[1][0]);
  return u;
}

EMPRISM_HD inline SU3<double> haar_from_gaussians(const double gauss[18]) {
  SU3<double> m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m.e[i][j] = {gauss[2 * (3 * i + j)], gauss[2 * (3 * i + j) + 1]};
  return project_to_su3(m);
}

// The random link U_mu at the global lexicographic site.
EMPRISM_HD inline SU3<double> random_link(std::uint64_t seed, double width, std::uint64_t site, int mu) {
  double gauss[20];
  for (std::uint32_t k = 0; k < 5; ++k)
    philox_gaussian4(seed, kGaugeLinksStream, site, 8u * static_cast<std::uint32_t>(mu) + k, gauss + 4 * k);
  const SU3<double> h = haar_from_gaussians(gauss);
  if (width == 1.0) return h;
  SU3<double> m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) m.e[i][j] = width * h.e[i][j] + Complex<double>{(1.0 - width) * (i == j), 0.0};
  return project_to_su3(m);
}

// Thread i = a site of the extended box (x fastest, -1 <= x[k] <= l[k]): its four links.
struct RandomGaugeExt {
  SU3<double>* u;
  int l[4], g[4], origin[4];
  std::uint64_t seed;
  double width;
  EMPRISM_HD void operator()(int i) const {
    int r = i;
    std::int64_t site = 0, stride = 1;
    for (int k = 0; k < 4; ++k) {
      const int e = l[k] + 2, x = r % e - 1;
      r /= e;
      const int gx = ((origin[k] + x) % g[k] + g[k]) % g[k];
      site += stride * gx;
      stride *= g[k];
    }
    for (int mu = 0; mu < 4; ++mu)
      u[static_cast<std::int64_t>(i) * 4 + mu] = random_link(seed, width, static_cast<std::uint64_t>(site), mu);
  }
};

// Thread i = a site of the extended box: its four links set to the unit matrix (the unit field, halo included).
struct UnitGaugeExt {
  SU3<double>* u;
  EMPRISM_HD void operator()(int i) const {
    const SU3<double> one = identity_su3<double>();
    for (int mu = 0; mu < 4; ++mu) u[static_cast<std::int64_t>(i) * 4 + mu] = one;
  }
};

}  // namespace emprism
