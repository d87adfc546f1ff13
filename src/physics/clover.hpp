// clover.hpp: the clover term A(x) = 1 + i csw kappa sum_{mu<nu} sigma_{mu nu} F_{mu nu}(x) and its inverse,
// built on the host in double from the clover leaves Q_{mu nu} (docs/conventions.md section 4), packed as two hermitian
// 6x6 blocks per site (kernels/clover_block.hpp). The inverse is computed per block from an LDL^dag
// factorisation. csw = 0 gives A = A^-1 = 1 exactly.
// Who may call: anyone on the rank (issue 2: local periodic wrap for the leaves).
#pragma once

#include <array>
#include <complex>
#include <vector>

#include "kernels/clover_block.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/gauge.hpp"

namespace emprism {

struct HostClover {
  double kappa = 0, csw = 0;  // what it was built with (the operator checks them against its own)
  // [parity][cb]
  std::vector<CloverSite<double>> a[2];
  std::vector<CloverSite<double>> a_inv[2];
};

// F_{mu nu}(x) = (Q - Q^dag) / 8 at local coordinates x.
SU3<double> field_strength(const HostGauge& u, const int x[4], int mu, int nu);

// The coefficients i csw kappa sigma_{mu nu}[2b + s][2b + t] of the six planes (mu, nu), mu < nu, in make_clover's
// order and arithmetic (for the device build, src/physics/clover_device.hpp).
void clover_plane_coefficients(double kappa, double csw, int plane[6][2], Complex<double> coef[6][2][2][2]);

// Throws RuntimeFailure naming the site when a block is singular.
HostClover make_clover(const HostGauge& u, double kappa, double csw);

// Dense 6x6 block <-> packed; inverse of a packed block via LDL^dag (returns false when singular).
using Dense6 = std::array<std::array<std::complex<double>, 6>, 6>;
Dense6 unpack_block(const CloverBlock<double>& b);
CloverBlock<double> pack_block(const Dense6& m);
bool invert_block(const CloverBlock<double>& b, CloverBlock<double>& inv);

template <typename R>
void upload_clover(const std::vector<CloverSite<double>>& host, CloverField<R>& dev);

}  // namespace emprism
